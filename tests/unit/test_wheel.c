/*
 * test_wheel.c - specs for installing wheels (src/env/wheel.c, pool.c,
 * record.c; PEP 427, PEP 376): the RECORD / WHEEL / entry_points.txt
 * readers, unpacking once into the cache with RECORD verified, spreading
 * the .data schemes, "#!python" rewriting, console and gui launchers,
 * INSTALLER / REQUESTED / RECORD, link methods, and the parallel
 * installer's warm path. Wheels come from tests/fixtures/make_wheels.py.
 */
#ifdef _WIN32
#include "win_skip.h"
ML_LINUX_ONLY_PROGRAM("its wheels come from a python3 script run by /bin/sh")
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/env.h"
#include "../../src/env/internal.h"

typedef struct fx {
	char *tmp;
	char wheels[4096], bad[4096], hostile[4096];
	char names[48][128], shas[48][65];
	size_t n;
	int env_seq;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("wheel");
	if (!f->tmp)
		return -1;
	pf(f->wheels, "%s/wheels", f->tmp);
	pf(f->bad, "%s/bad", f->tmp);
	pf(f->hostile, "%s/hostile", f->tmp);
	if (!make_fixtures("make_wheels.py", f->wheels) ||
	    !make_fixtures("make_bad_archives.py", f->bad) ||
	    !make_fixtures("make_hostile_wheels.py", f->hostile))
		return -1;
	/* Both tables: "filename<TAB>sha256[<TAB>...]"; the hostile wheels
	 * are copied beside the good ones. */
	const char *dirs[] = {f->wheels, f->hostile};
	for (size_t d = 0; d < 2; d++) {
		char path[4096];
		char *tsv = slurp(pf(path, "%s/wheels.tsv", dirs[d]), NULL);
		if (!tsv)
			return -1;
		for (char *line = strtok(tsv, "\n"); line && f->n < 48; line = strtok(NULL, "\n"))
			if (sscanf(line, "%127[^\t]\t%64s", f->names[f->n], f->shas[f->n]) == 2)
				f->n++;
		free(tsv);
	}
	if (sh("cp '%s'/*.whl '%s/'", f->hostile, f->wheels) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	rm_rf(f->tmp);
	free(f->tmp);
	free(f);
	return 0;
}

/* The fixture wheel whose file name starts with "<project>-". */
static ml_wheel_job job(const fx *f, const char *project, char *path)
{
	size_t n = strlen(project);
	for (size_t i = 0; i < f->n; i++)
		if (strncmp(f->names[i], project, n) == 0 && f->names[i][n] == '-') {
			pf(path, "%s/%s", f->wheels, f->names[i]);
			ml_wheel_job j = {path, f->shas[i], f->names[i], false, NULL, false};
			return j;
		}
	fail_msg("no fixture wheel for %s", project);
	ml_wheel_job none = {0};
	return none;
}

static void new_cache(fx *f, char *cache)
{
	pf(cache, "%s/cache-%d", f->tmp, f->env_seq++);
}

/* A layout staged at <tmp>/env-N for the final path final_root (NULL:
 * the same directory). */
static ml_env_layout new_env(fx *f, const char *final_root)
{
	char root[4096];
	pf(root, "%s/env-%d", f->tmp, f->env_seq++);
	assert_int_equal(sh("mkdir -p '%s'", root), 0);
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	if (ml_env_layout_init(&env, root, final_root ? final_root : root, "3.11", &err) != 0)
		fail_msg("%s", err.msg);
	return env;
}

static ml_unpacked unpack(const char *cache, const ml_wheel_job *j)
{
	ml_unpack_opts o = ML_UNPACK_OPTS_INIT;
	o.filename = j->filename;
	ml_unpacked u;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_unpack(&u, cache, j->path, j->sha256, &o, &err) != 0)
		fail_msg("unpack %s: %s", j->filename, err.msg);
	return u;
}

static ml_wheel_result install(const char *cache, const ml_wheel_job *j, const ml_env_layout *env,
                               ml_link_method link)
{
	ml_unpacked u = unpack(cache, j);
	ml_wheel_install_opts o = ML_WHEEL_INSTALL_OPTS_INIT;
	o.requested = j->requested;
	o.link = link;
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_install_unpacked(&r, u.dir, env, &o, &err) != 0)
		fail_msg("install %s: %s", j->filename, err.msg);
	return r;
}

static char *file_in(const ml_env_layout *env, const char *rel)
{
	char path[4096];
	char *s = slurp(pf(path, "%s/%s", env->root, rel), NULL);
	if (!s)
		fail_msg("missing %s", path);
	return s;
}

/* --- RECORD, WHEEL, entry_points.txt ------------------------------------------------ */

static void test_record_parse_reads_csv_as_python_writes_it(void **state)
{
	static const char text[] = "pkg/a.py,sha256=abc,12\r\n"
	                           "\"we,ird \"\"q\"\".py\",sha256=x,3\n"
	                           "\"multi\nline\",,\n"
	                           "\n"
	                           "pkg-1.0.dist-info/RECORD,,";
	ml_record *r = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_record_parse(&r, text, sizeof text - 1, &err), 0);
	assert_int_equal(r->n, 4);
	assert_string_equal(r->rows[0].path, "pkg/a.py");
	assert_string_equal(r->rows[0].hash, "sha256=abc");
	assert_int_equal(r->rows[0].size, 12);
	assert_string_equal(r->rows[1].path, "we,ird \"q\".py");
	assert_string_equal(r->rows[2].path, "multi\nline");
	assert_int_equal(r->rows[2].size, -1);
	assert_string_equal(r->rows[3].path, "pkg-1.0.dist-info/RECORD");
	assert_string_equal(r->rows[3].hash, "");
	ml_record_free(r);
}

static void test_record_parse_refuses_malformed_rows(void **state)
{
	static const char *bad[] = {
	        "a,b\n",     "a,b,c,d\n",    ",sha256=x,1\n", "a,sha256=x,1x\n",
	        "\"a,h,1\n", "\"a\"x,h,1\n", "a,h,-1\n",      "a,h,99999999999999999999\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ml_record *r = NULL;
		ml_err err = ML_ERR_INIT;
		if (ml_record_parse(&r, bad[i], strlen(bad[i]), &err) != ML_EPARSE)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err.msg, "RECORD"));
	}
	ml_record *r = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_record_parse(&r, "a\0,h,1\n", 7, &err), ML_EPARSE);
}

static void test_record_format_round_trips(void **state)
{
	ml_record_row rows[] = {{"pkg/a.py", "sha256=abc", 12},
	                        {"odd,name \"x\".py", "sha256=def", 0},
	                        {"../../../bin/tool", "sha256=ghi", 7},
	                        {"pkg-1.0.dist-info/RECORD", "", -1}};
	ml_record rec = {rows, 4};
	ml_buf b = ML_BUF_INIT;
	assert_int_equal(ml_record_format(&b, &rec), 0);
	assert_string_equal(ml_buf_cstr(&b), "pkg/a.py,sha256=abc,12\n"
	                                     "\"odd,name \"\"x\"\".py\",sha256=def,0\n"
	                                     "../../../bin/tool,sha256=ghi,7\n"
	                                     "pkg-1.0.dist-info/RECORD,,\n");
	ml_record *r = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_record_parse(&r, b.data, b.len, &err), 0);
	assert_int_equal(r->n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(r->rows[i].path, rows[i].path);
		assert_string_equal(r->rows[i].hash, rows[i].hash);
		assert_int_equal(r->rows[i].size, rows[i].size);
	}
	ml_record_free(r);
	ml_buf_release(&b);
}

static void test_wheel_meta_parse_reads_version_and_purelib(void **state)
{
	ml_wheel_meta m;
	ml_err err = ML_ERR_INIT;
	static const char a[] = "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.42.0)\n"
	                        "Root-Is-Purelib: true\nTag: py3-none-any\n";
	assert_int_equal(ml_wheel_meta_parse(&m, a, sizeof a - 1, &err), 0);
	assert_int_equal(m.version_major, 1);
	assert_int_equal(m.version_minor, 0);
	assert_true(m.root_is_purelib);
	assert_string_equal(m.generator, "bdist_wheel (0.42.0)");
	static const char b[] = "wheel-version: 2.10\r\nroot-is-purelib: False\r\n";
	assert_int_equal(ml_wheel_meta_parse(&m, b, sizeof b - 1, &err), 0);
	assert_int_equal(m.version_major, 2);
	assert_int_equal(m.version_minor, 10);
	assert_false(m.root_is_purelib);
	static const char c[] = "Root-Is-Purelib: true\n";
	assert_int_equal(ml_wheel_meta_parse(&m, c, sizeof c - 1, &err), ML_EPARSE);
	static const char d[] = "Wheel-Version: one\n";
	assert_int_equal(ml_wheel_meta_parse(&m, d, sizeof d - 1, &err), ML_EPARSE);
	static const char e[] = "just text\n";
	assert_int_equal(ml_wheel_meta_parse(&m, e, sizeof e - 1, &err), ML_EPARSE);
}

static void test_entry_points_parse_ini_and_split_module_attr(void **state)
{
	static const char text[] = "; comment\n[console_scripts]\n  tool = pkg.cli:main  \n"
	                           "other=pkg:App.run [gpu, extra]\n\n# c\n[gui_scripts]\n"
	                           "gui = pkg : gui\n[pytest11]\nplugin = pkg.plugin\n";
	ml_entry_points *ep = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_entry_points_parse(&ep, text, sizeof text - 1, &err), 0);
	assert_int_equal(ep->n, 4);
	assert_string_equal(ep->v[0].group, "console_scripts");
	assert_string_equal(ep->v[0].name, "tool");
	assert_string_equal(ep->v[0].value, "pkg.cli:main");
	assert_string_equal(ep->v[3].group, "pytest11");
	char mod[128], attr[128];
	assert_int_equal(
	        ml_entry_point_split(mod, sizeof mod, attr, sizeof attr, ep->v[1].value, &err), 0);
	assert_string_equal(mod, "pkg");
	assert_string_equal(attr, "App.run");
	assert_int_equal(
	        ml_entry_point_split(mod, sizeof mod, attr, sizeof attr, ep->v[2].value, &err), 0);
	assert_string_equal(mod, "pkg");
	assert_string_equal(attr, "gui");
	ml_entry_points_free(ep);

	static const char *bad[] = {"os; import shutil:rmtree",
	                            "pkg",
	                            "pkg:",
	                            ":main",
	                            "pkg:main()",
	                            "pkg:main [x",
	                            "1pkg:main",
	                            "pkg:main\nimport os",
	                            "pkg..a:b",
	                            "pkg:a b",
	                            "pkg:main [x] y"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (ml_entry_point_split(mod, sizeof mod, attr, sizeof attr, bad[i], &err) !=
		    ML_EPARSE)
			fail_msg("'%s' was accepted", bad[i]);
	static const char orphan[] = "tool = pkg:main\n";
	assert_int_equal(ml_entry_points_parse(&ep, orphan, sizeof orphan - 1, &err), ML_EPARSE);
	static const char noeq[] = "[console_scripts]\ntool\n";
	assert_int_equal(ml_entry_points_parse(&ep, noeq, sizeof noeq - 1, &err), ML_EPARSE);
}

/* --- unpacking into the cache --------------------------------------------------------- */

static void test_unpack_verifies_record_and_makes_the_cache_read_only(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "purepkg", wp);
	ml_unpacked u = unpack(cache, &j);
	assert_false(u.cache_hit);
	assert_true(u.bytes_extracted > 0);
	assert_int_equal(u.n_files, 6);
	assert_string_equal(u.name, "purepkg");
	assert_string_equal(u.version, "1.0");
	assert_string_equal(u.dist_info, "purepkg-1.0.dist-info");
	assert_true(u.root_is_purelib);
	assert_string_equal(u.dir, pf(path, "%s/unpacked/sha256/%s", cache, j.sha256));
	struct stat st;
	assert_int_equal(lstat(pf(path, "%s/tree/purepkg/__init__.py", u.dir), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	assert_true(exists(pf(path, "%s/unpacked.json", u.dir)));
	/* Only the finished directory and its lock file are left. */
	char *ls = capture(NULL, "ls -A '%s/unpacked/sha256'", cache);
	char want[256];
	sf(want, sizeof want, "%s\n%s.lock\n", j.sha256, j.sha256);
	assert_string_equal(ls, want);
	free(ls);
}

static void test_unpack_twice_is_a_cache_hit_that_reads_nothing(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "platpkg", wp);
	ml_unpacked first = unpack(cache, &j);
	assert_false(first.cache_hit);
	assert_false(first.root_is_purelib);
	j.path = "/nonexistent/wheel.whl"; /* a hit must not even open it */
	ml_unpacked again = unpack(cache, &j);
	assert_true(again.cache_hit);
	assert_int_equal(again.bytes_extracted, 0);
	assert_string_equal(again.dir, first.dir);
	assert_string_equal(again.dist_info, "platpkg-2.0.dist-info");
}

static void test_unpack_refuses_broken_wheels_and_caches_nothing(void **state)
{
	fx *f = *state;
	static const struct {
		const char *project;
		int rc;
		const char *says;
	} cases[] = {
	        {"badrecord", ML_EINTEGRITY, "does not match its RECORD hash"},
	        {"unlisted", ML_EINTEGRITY, "is not listed in its RECORD"},
	        {"badsize", ML_EINTEGRITY, "RECORD says 11"},
	        {"md5record", ML_EINTEGRITY, "md5"},
	        {"ghost", ML_EINTEGRITY, "which the wheel does not hold"},
	        {"wheelv2", ML_EUNSUPPORTED, "Wheel-Version 2.0"},
	        {"misnamed", ML_EINTEGRITY, "does not match the file name"},
	        {"baddata", ML_EINTEGRITY, "known .data scheme"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cache[4096], wp[4096];
		new_cache(f, cache);
		ml_wheel_job j = job(f, cases[i].project, wp);
		ml_unpack_opts o = ML_UNPACK_OPTS_INIT;
		o.filename = j.filename;
		ml_unpacked u;
		ml_err err = ML_ERR_INIT;
		int rc = ml_wheel_unpack(&u, cache, j.path, j.sha256, &o, &err);
		if (rc != cases[i].rc || !strstr(err.msg, cases[i].says))
			fail_msg("%s: rc %d, '%s'", cases[i].project, rc, err.msg);
		printf("# %s: %s\n", cases[i].project, err.msg);
		char *ls = capture(NULL, "ls -A '%s/unpacked/sha256'", cache);
		char want[256];
		sf(want, sizeof want, "%s.lock\n", j.sha256);
		assert_string_equal(ls, want);
		free(ls);
	}
}

static void test_unpack_refuses_a_wheel_that_is_not_the_pinned_one_unless_told(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], other[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "purepkg", wp);
	ml_wheel_job k = job(f, "platpkg", other);
	ml_unpack_opts o = ML_UNPACK_OPTS_INIT;
	o.filename = j.filename;
	ml_unpacked u;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_wheel_unpack(&u, cache, j.path, k.sha256, &o, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "expected"));
	assert_false(exists(pf(other, "%s/unpacked/sha256/%s", cache, k.sha256)));
	assert_int_equal(ml_wheel_unpack(&u, cache, j.path, "abc", &o, &err), ML_EFAIL);
	/* sha256_checked hands the check to the caller (the fetch that just
	 * hashed the file), so the file is not read twice: the same mismatch
	 * is then taken on the caller's word, which shows no second hash. */
	o.sha256_checked = true;
	ml_err_clear(&err);
	assert_int_equal(ml_wheel_unpack(&u, cache, j.path, k.sha256, &o, &err), 0);
	assert_false(u.cache_hit);
	assert_true(exists(pf(other, "%s/unpacked/sha256/%s/tree", cache, k.sha256)));
}

static void test_unpack_refuses_hostile_archives_posing_as_wheels(void **state)
{
	fx *f = *state;
	static const char *files[] = {"zip-symlink.whl", "zip-is-tar.whl", "zip-dotdot.whl",
	                              "zip-trailing.whl"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char cache[4096], path[4096];
		new_cache(f, cache);
		pf(path, "%s/%s", f->bad, files[i]);
		char *sha = capture(NULL, "sha256sum '%s' | cut -c1-64 | tr -d '\\n'", path);
		ml_unpack_opts o = ML_UNPACK_OPTS_INIT;
		o.filename = "evil-1.0-py3-none-any.whl";
		ml_unpacked u;
		ml_err err = ML_ERR_INIT;
		int rc = ml_wheel_unpack(&u, cache, path, sha, &o, &err);
		if (rc != ML_EINTEGRITY)
			fail_msg("%s: rc %d %s", files[i], rc, err.msg);
		char *ls = capture(NULL, "ls -A '%s/unpacked/sha256'", cache);
		char want[256];
		sf(want, sizeof want, "%s.lock\n", sha);
		assert_string_equal(ls, want);
		free(ls);
		free(sha);
	}
}

static void test_unpack_cleans_up_after_a_crashed_run(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "datapkg", wp);
	/* A half-written temp dir and a final dir without its marker. */
	assert_int_equal(
	        sh("mkdir -p '%s/unpacked/sha256/%s.tmp-dead/tree' '%s/unpacked/sha256/%s/tree' && "
	           "touch '%s/unpacked/sha256/%s/tree/junk'",
	           cache, j.sha256, cache, j.sha256, cache, j.sha256),
	        0);
	ml_unpacked u = unpack(cache, &j);
	assert_false(u.cache_hit);
	assert_false(exists(pf(path, "%s/unpacked/sha256/%s.tmp-dead", cache, j.sha256)));
	assert_false(exists(pf(path, "%s/tree/junk", u.dir)));
	assert_true(exists(pf(path, "%s/unpacked.json", u.dir)));
}

/* The hostile-wheel rows about what is installed (issue 13): a member
 * inflating past its declared size and a data descriptor that disagrees
 * with the central directory are refused, as are two names that are one
 * after NFC, a dropped .pyc that does not match RECORD and Info-ZIP
 * Unicode Path fields naming other files; nothing is cached. */
static void test_unpack_refuses_the_hostile_wheels(void **state)
{
	fx *f = *state;
	static const struct {
		const char *project, *says;
	} cases[] = {
	        {"overlong", "expands past its declared size of 24 bytes"},
	        {"descmismatch", "data descriptor that disagrees with the central directory"},
	        {"nfcpkg", "one name after Unicode NFC normalization"},
	        {"pycbad", "does not match its RECORD hash"},
	        {"upathevil", "entry 'upathevil/__init__.py' has an Info-ZIP Unicode Path extra "
	                      "field (0x7075) in its central header that names "
	                      "'../../../../tmp/evil.py'"},
	        {"upathother", "in its local header that names 'upathother/other.py'"},
	        {"upathstale", "in its central header that names 'upathstale/stale.py'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cache[4096], wp[4096];
		new_cache(f, cache);
		ml_wheel_job j = job(f, cases[i].project, wp);
		ml_unpack_opts o = ML_UNPACK_OPTS_INIT;
		o.filename = j.filename;
		ml_unpacked u;
		ml_err err = ML_ERR_INIT;
		int rc = ml_wheel_unpack(&u, cache, j.path, j.sha256, &o, &err);
		if (rc != ML_EINTEGRITY || !strstr(err.msg, cases[i].says))
			fail_msg("%s: rc %d, '%s'", cases[i].project, rc, err.msg);
		printf("# %s: %s\n", cases[i].project, err.msg);
		char *ls = capture(NULL, "ls -A '%s/unpacked/sha256'", cache);
		char want[256];
		sf(want, sizeof want, "%s.lock\n", j.sha256);
		assert_string_equal(ls, want);
		free(ls);
	}
}

/* A wheel's own __pycache__ .pyc is checked against RECORD but neither
 * unpacked nor installed, and its rows leave the installed RECORD: what
 * runs is the installed source (the CLI test t0615 imports it). */
static void test_the_wheels_own_bytecode_is_dropped(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_job j = job(f, "pycpkg", wp);
	ml_unpacked u = unpack(cache, &j);
	assert_int_equal(u.n_files, 4); /* __init__.py, METADATA, WHEEL, RECORD */
	assert_false(exists(pf(path, "%s/tree/pycpkg/__pycache__", u.dir)));
	ml_wheel_result r = install(cache, &j, &env, ML_LINK_AUTO);
	assert_false(
	        exists(pf(path, "%s/lib/python3.11/site-packages/pycpkg/__pycache__", env.root)));
	char *rec = file_in(&env, "lib/python3.11/site-packages/pycpkg-1.0.dist-info/RECORD");
	assert_null(strstr(rec, ".pyc"));
	assert_non_null(strstr(rec, "pycpkg/__init__.py,sha256="));
	free(rec);
	assert_int_equal(r.n_linked, 4 - 1); /* RECORD is written, not linked */

	/* A tree unpacked before bytecode was dropped still holds it: the
	 * install leaves it out all the same. */
	assert_int_equal(sh("cd '%s/tree' && chmod u+w pycpkg && mkdir pycpkg/__pycache__ && "
	                    "python3 -c \"import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); "
	                    "[open(n, 'wb').write(z.read(n)) for n in z.namelist() "
	                    "if n.endswith('.pyc')]\" '%s'",
	                    u.dir, j.path),
	                 0);
	ml_env_layout env2 = new_env(f, NULL);
	install(cache, &j, &env2, ML_LINK_AUTO);
	assert_false(
	        exists(pf(path, "%s/lib/python3.11/site-packages/pycpkg/__pycache__", env2.root)));
	rec = file_in(&env2, "lib/python3.11/site-packages/pycpkg-1.0.dist-info/RECORD");
	assert_null(strstr(rec, ".pyc"));
	free(rec);
}

/* A decomposed (NFD) file name is a plain name: unpacked and installed
 * byte for byte, listed in the installed RECORD. */
static void test_nfd_names_install_as_written(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_job j = job(f, "nfdpkg", wp);
	install(cache, &j, &env, ML_LINK_AUTO);
	assert_true(exists(
	        pf(path, "%s/lib/python3.11/site-packages/nfdpkg/cafe\xcc\x81.py", env.root)));
	assert_false(exists(
	        pf(path, "%s/lib/python3.11/site-packages/nfdpkg/caf\xc3\xa9.py", env.root)));
	char *rec = file_in(&env, "lib/python3.11/site-packages/nfdpkg-1.0.dist-info/RECORD");
	assert_non_null(strstr(rec, "nfdpkg/cafe\xcc\x81.py,sha256="));
	free(rec);
}

/* Unicode Path fields that name each entry's own name are fine. */
static void test_agreeing_unicode_path_fields_install(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_job j = job(f, "upathok", wp);
	install(cache, &j, &env, ML_LINK_AUTO);
	assert_true(
	        exists(pf(path, "%s/lib/python3.11/site-packages/upathok/__init__.py", env.root)));
}

/* The hostile wheels with names Windows cannot create unpack here (a
 * Linux build's cache takes them) and install into a POSIX environment,
 * but installing them into a Windows one is refused with the entry named
 * and nothing written; their twin installs into both. */
static void test_windows_layouts_refuse_the_windows_hostile_wheels(void **state)
{
	fx *f = *state;
	static unsigned char base[64] = {'M', 'Z'};
	ml_winlauncher_set_base(ML_WINLAUNCHER_CONSOLE, base, sizeof base);
	ml_winlauncher_set_base(ML_WINLAUNCHER_GUI, base, sizeof base);
	static const struct {
		const char *project, *says;
	} cases[] = {
	        {"winconpkg", "entry 'winconpkg/CON.py' refused on Windows: 'CON.py' is the "
	                      "device CON"},
	        {"windotpkg", "entry 'windotpkg/mod.py.' refused on Windows: 'mod.py.' ends in "
	                      "a dot"},
	        {"winadspkg", "entry 'winadspkg/x.py:ads' refused on Windows: 'x.py:ads' has a "
	                      "':'"},
	        {"winauxpkg", "console_scripts entry point 'aux' refused on Windows: 'aux' is "
	                      "the device AUX"},
	        {"casepkg", "entries 'casepkg/Foo.py' and 'casepkg/foo.py' are one name after "
	                    "Unicode NFC normalization and case folding (Windows folds case)"},
	        {"winokpkg", NULL},
	};
	char cache[4096], wp[4096], root[4096], path[4096];
	new_cache(f, cache);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ml_wheel_job j = job(f, cases[i].project, wp);
		ml_unpacked u = unpack(cache, &j);
		pf(root, "%s/winenv-%d", f->tmp, f->env_seq++);
		assert_int_equal(sh("mkdir -p '%s'", root), 0);
		ml_env_layout env;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_env_layout_init_os(&env, root, "C:/envs/x", "3.11",
		                                       ML_ENV_WINDOWS, &err),
		                 0);
		ml_wheel_result r;
		int rc = ml_wheel_install_unpacked(&r, u.dir, &env, NULL, &err);
		if (!cases[i].says) {
			if (rc != 0)
				fail_msg("%s: %s", cases[i].project, err.msg);
			assert_true(exists(pf(path, "%s/Scripts/auxiliary.exe", root)));
			assert_true(
			        exists(pf(path, "%s/Lib/site-packages/winokpkg/console.py", root)));
		} else {
			if (rc != ML_EINTEGRITY || !strstr(err.msg, cases[i].says))
				fail_msg("%s: rc %d: %s", cases[i].project, rc, err.msg);
			char *ls = capture(NULL, "ls -A '%s'", root);
			assert_string_equal(ls, "");
			free(ls);
			printf("# %s: %s\n", cases[i].project, err.msg);
		}
		ml_env_layout posix = new_env(f, NULL);
		install(cache, &j, &posix, ML_LINK_AUTO);
	}
	ml_winlauncher_set_base(ML_WINLAUNCHER_CONSOLE, NULL, 0);
	ml_winlauncher_set_base(ML_WINLAUNCHER_GUI, NULL, 0);
}

/* --- installing into an environment ----------------------------------------------------- */

static void test_layout_init_takes_absolute_paths_and_a_python_3_version(void **state)
{
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_layout_init(&env, "/s/.venv.stage", "/w/.venv/", "3.12", &err), 0);
	assert_string_equal(env.final_root, "/w/.venv");
	assert_string_equal(env.site_packages, "lib/python3.12/site-packages");
	assert_int_equal(ml_env_layout_init(&env, "rel", "/w", "3.12", &err), ML_EFAIL);
	assert_int_equal(ml_env_layout_init(&env, "/s", "/w", "2.7", &err), ML_EFAIL);
	assert_int_equal(ml_env_layout_init(&env, "/s", "/w", "3.x", &err), ML_EFAIL);
	assert_int_equal(ml_env_layout_init(&env, "/s", "/w\n", "3.12", &err), ML_EFAIL);
}

static void test_install_spreads_every_data_scheme(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, "/srv/mlsetup-final/env");
	ml_wheel_job j = job(f, "datapkg", wp);
	ml_wheel_result r = install(cache, &j, &env, ML_LINK_AUTO);
	assert_string_equal(r.name, "datapkg");
	const char *sp = "lib/python3.11/site-packages";
	assert_true(exists(pf(path, "%s/%s/datapkg/__init__.py", env.root, sp)));
	assert_true(exists(pf(path, "%s/%s/datapkg_extra.py", env.root, sp)));
	assert_true(exists(pf(path, "%s/%s/datapkg_plat.py", env.root, sp)));
	assert_true(exists(pf(path, "%s/include/site/python3.11/datapkg/datapkg.h", env.root)));
	assert_true(exists(pf(path, "%s/share/datapkg/readme.txt", env.root)));
	assert_false(exists(pf(path, "%s/%s/datapkg-0.5.data", env.root, sp)));

	char *run = file_in(&env, "bin/datapkg-run");
	assert_string_equal(run, "#!/srv/mlsetup-final/env/bin/python\nimport datapkg\n"
	                         "print('datapkg-run ok', datapkg.VALUE)\n");
	free(run);
	char *unbuf = file_in(&env, "bin/datapkg-unbuffered");
	assert_string_equal(unbuf, "#!/srv/mlsetup-final/env/bin/python -u\n"
	                           "print('unbuffered ok')\n");
	free(unbuf);
	char *plain = file_in(&env, "bin/plain.sh");
	assert_string_equal(plain, "#!/bin/sh\necho plain ok\n");
	free(plain);
	/* Scripts are real files, never links into the cache. */
	const char *scripts[] = {"bin/datapkg-run", "bin/plain.sh", "bin/datapkg-unbuffered"};
	for (size_t i = 0; i < 3; i++) {
		struct stat st;
		assert_int_equal(lstat(pf(path, "%s/%s", env.root, scripts[i]), &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_nlink, 1);
		assert_int_equal(st.st_mode & 07777, 0755);
	}
}

static void test_install_writes_console_and_gui_launchers(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, "/opt/env");
	ml_wheel_job j = job(f, "purepkg", wp);
	install(cache, &j, &env, ML_LINK_AUTO);
	char *hello = file_in(&env, "bin/purepkg-hello");
	assert_string_equal(
	        hello,
	        "#!/opt/env/bin/python\n"
	        "# -*- coding: utf-8 -*-\n"
	        "import re\n"
	        "import sys\n"
	        "from purepkg import main\n"
	        "if __name__ == \"__main__\":\n"
	        "    sys.argv[0] = re.sub(r\"(-script\\.pyw|\\.exe)?$\", \"\", sys.argv[0])\n"
	        "    sys.exit(main())\n");
	free(hello);
	char *sub = file_in(&env, "bin/purepkg-sub");
	assert_non_null(strstr(sub, "from purepkg.cli import app\n"));
	assert_non_null(strstr(sub, "    sys.exit(app.run())\n"));
	free(sub);
	char *gui = file_in(&env, "bin/purepkg-gui");
	assert_non_null(strstr(gui, "from purepkg import gui\n"));
	free(gui);
	assert_false(exists(pf(path, "%s/bin/not-a-script", env.root)));
	struct stat st;
	assert_int_equal(lstat(pf(path, "%s/bin/purepkg-hello", env.root), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
}

/* Launchers and rewritten scripts must run where the python path has a
 * space (and where it is long): the /bin/sh exec form. */
static void test_launchers_use_the_sh_exec_form_for_spaced_or_long_paths(void **state)
{
	fx *f = *state;
	if (!exists("/usr/bin/python3")) {
		printf("# /usr/bin/python3 is missing: the launchers cannot run\n");
		skip();
		return;
	}
	char cache[4096], wp[4096], root[4096], longroot[4096];
	new_cache(f, cache);
	pf(root, "%s/with space/env", f->tmp);
	char filler[200];
	memset(filler, 'd', 150);
	filler[150] = '\0';
	pf(longroot, "%s/%s/env", f->tmp, filler);
	const char *roots[] = {root, longroot};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(sh("mkdir -p '%s/bin' && ln -s /usr/bin/python3 '%s/bin/python'",
		                    roots[i], roots[i]),
		                 0);
		ml_env_layout env;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_env_layout_init(&env, roots[i], roots[i], "3.11", &err), 0);
		ml_wheel_job j = job(f, "purepkg", wp);
		install(cache, &j, &env, ML_LINK_AUTO);
		ml_wheel_job d = job(f, "datapkg", wp);
		install(cache, &d, &env, ML_LINK_AUTO);
		char *hello = file_in(&env, "bin/purepkg-hello");
		char want[4096];
		sf(want, sizeof want,
		   "#!/bin/sh\n'''exec' '%s/bin/python' \"$0\" \"$@\"\n' '''\n# -*- coding",
		   roots[i]);
		assert_int_equal(strncmp(hello, want, strlen(want)), 0);
		free(hello);
		int st = 0;
		char *out = capture(
		        &st,
		        "PYTHONPATH='%s/lib/python3.11/site-packages' '%s/bin/purepkg-hello' && "
		        "PYTHONPATH='%s/lib/python3.11/site-packages' '%s/bin/datapkg-run'; "
		        "'%s/bin/purepkg-sub' 2>/dev/null; echo \"sub=$?\"",
		        roots[i], roots[i], roots[i], roots[i], roots[i]);
		assert_non_null(strstr(out, "purepkg-hello ok\n"));
		assert_non_null(strstr(out, "datapkg-run ok data\n"));
		assert_non_null(strstr(out, "sub=1")); /* no PYTHONPATH: the import fails */
		free(out);
	}
}

static void test_install_record_lists_every_installed_path_with_its_hash(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], wp2[4096];
	new_cache(f, cache);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_job p = job(f, "purepkg", wp);
	p.requested = true;
	install(cache, &p, &env, ML_LINK_AUTO);
	ml_wheel_job d = job(f, "datapkg", wp2);
	install(cache, &d, &env, ML_LINK_AUTO);

	/* Python's csv module and hashlib check every row of both RECORDs. */
	int st = 0;
	char *out =
	        capture(&st,
	                "cd '%s/lib/python3.11/site-packages' && python3 -c '\n"
	                "import base64, csv, hashlib, os, sys\n"
	                "for di in sys.argv[1:]:\n"
	                "    rows = list(csv.reader(open(di + \"/RECORD\", newline=\"\")))\n"
	                "    for path, h, size in rows:\n"
	                "        if not h:\n"
	                "            print(\"nohash\", path); continue\n"
	                "        data = open(path, \"rb\").read()\n"
	                "        d = "
	                "base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b\"=\")\n"
	                "        assert h == \"sha256=\" + d.decode(), path\n"
	                "        assert int(size) == len(data), path\n"
	                "        print(\"ok\", path)\n"
	                "' purepkg-1.0.dist-info datapkg-0.5.dist-info",
	                env.root);
	diag(out);
	assert_int_equal(st, 0);
	static const char *want[] = {"ok purepkg/__init__.py\n",
	                             "ok ../../../bin/purepkg-hello\n",
	                             "ok ../../../bin/purepkg-gui\n",
	                             "ok purepkg-1.0.dist-info/INSTALLER\n",
	                             "ok purepkg-1.0.dist-info/REQUESTED\n",
	                             "nohash purepkg-1.0.dist-info/RECORD\n",
	                             "ok ../../../bin/datapkg-run\n",
	                             "ok ../../../include/site/python3.11/datapkg/datapkg.h\n",
	                             "ok ../../../share/datapkg/readme.txt\n",
	                             "ok datapkg_extra.py\n",
	                             "ok datapkg-0.5.dist-info/INSTALLER\n",
	                             "nohash datapkg-0.5.dist-info/RECORD\n"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(out, want[i]))
			fail_msg("RECORD check lacks '%s'", want[i]);
	assert_null(strstr(out, "datapkg-0.5.dist-info/REQUESTED"));
	free(out);
	char *inst = file_in(&env, "lib/python3.11/site-packages/purepkg-1.0.dist-info/INSTALLER");
	assert_string_equal(inst, "mlsetup\n");
	free(inst);
}

static void test_install_links_by_the_requested_method(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096], cpath[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "platpkg", wp);
	ml_unpacked u = unpack(cache, &j);
	const char *so = "platpkg/_native.cpython-311-x86_64-linux-gnu.so";
	struct stat c, e;
	assert_int_equal(lstat(pf(cpath, "%s/tree/%s", u.dir, so), &c), 0);
	assert_int_equal(c.st_mode & 07777, 0555);

	ml_env_layout hard = new_env(f, NULL);
	ml_wheel_result r = install(cache, &j, &hard, ML_LINK_HARDLINK);
	assert_int_equal(r.method, ML_LINK_HARDLINK);
	assert_int_equal(r.n_hardlinked, r.n_linked);
	assert_int_equal(r.n_linked, 4); /* __init__.py, .so, METADATA, WHEEL */
	assert_int_equal(lstat(pf(path, "%s/lib/python3.11/site-packages/%s", hard.root, so), &e),
	                 0);
	assert_int_equal(e.st_ino, c.st_ino);

	ml_env_layout copy = new_env(f, NULL);
	r = install(cache, &j, &copy, ML_LINK_COPY);
	assert_int_equal(r.method, ML_LINK_COPY);
	assert_int_equal(r.n_copied, 4);
	assert_int_equal(lstat(pf(path, "%s/lib/python3.11/site-packages/%s", copy.root, so), &e),
	                 0);
	assert_true(e.st_ino != c.st_ino);
	assert_int_equal(e.st_mode & 07777, 0755);

	ml_env_layout autoenv = new_env(f, NULL);
	r = install(cache, &j, &autoenv, ML_LINK_AUTO);
	assert_int_equal(r.n_reflinked + r.n_hardlinked + r.n_copied, r.n_linked);
	printf("# auto link method here: %s (%llu reflinked, %llu hardlinked, %llu copied)\n",
	       ml_link_method_name(r.method), (unsigned long long)r.n_reflinked,
	       (unsigned long long)r.n_hardlinked, (unsigned long long)r.n_copied);
	assert_true(r.method != ML_LINK_AUTO);
}

static void test_reinstalling_never_writes_into_the_cache(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "purepkg", wp);
	ml_unpacked u = unpack(cache, &j);
	char *before = tree_listing(u.dir);
	ml_env_layout env = new_env(f, NULL);
	install(cache, &j, &env, ML_LINK_HARDLINK);
	ml_wheel_result again = install(cache, &j, &env, ML_LINK_HARDLINK);
	assert_true(again.n_overwritten >= again.n_linked);
	char *after = tree_listing(u.dir);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

static void test_a_tampered_cache_is_detected_on_install(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "purepkg", wp);
	ml_unpacked u = unpack(cache, &j);
	pf(path, "%s/tree/purepkg/cli.py", u.dir);
	assert_int_equal(sh("chmod u+w '%s' && echo 'import os' >> '%s'", path, path), 0);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_wheel_install_unpacked(&r, u.dir, &env, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "changed in the cache"));
	assert_non_null(strstr(err.hint, u.dir));
}

static void test_install_refuses_an_entry_point_that_is_code(void **state)
{
	fx *f = *state;
	char cache[4096], wp[4096], path[4096];
	new_cache(f, cache);
	ml_wheel_job j = job(f, "badentry", wp);
	ml_unpacked u = unpack(cache, &j);
	ml_env_layout env = new_env(f, NULL);
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_wheel_install_unpacked(&r, u.dir, &env, NULL, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "module:attribute"));
	assert_false(exists(pf(path, "%s/bin/evil", env.root)));
}

/* --- many wheels ---------------------------------------------------------------------------- */

static size_t done_calls;

static void on_done(void *ctx, size_t index, const ml_wheel_result *r)
{
	(void)ctx;
	(void)index;
	(void)r;
	done_calls++;
}

static void test_install_all_runs_in_parallel_and_a_second_env_decompresses_nothing(void **state)
{
	fx *f = *state;
	char cache[4096], p1[4096], p2[4096], p3[4096];
	new_cache(f, cache);
	ml_wheel_job jobs[3] = {job(f, "purepkg", p1), job(f, "platpkg", p2),
	                        job(f, "datapkg", p3)};
	jobs[0].requested = true;
	ml_wheels_opts o = ML_WHEELS_OPTS_INIT;
	o.cache_dir = cache;
	o.jobs = 2;
	o.on_done = on_done;
	ml_wheel_result res[3];
	for (int round = 0; round < 2; round++) {
		ml_env_layout env = new_env(f, NULL);
		ml_err err = ML_ERR_INIT;
		done_calls = 0;
		if (ml_wheels_install_all(res, jobs, 3, &env, &o, &err) != 0)
			fail_msg("%s", err.msg);
		assert_int_equal(done_calls, 3);
		uint64_t bytes = 0;
		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(res[i].rc, 0);
			assert_false(res[i].skipped);
			assert_true(res[i].n_linked > 0);
			assert_int_equal(res[i].cache_hit, round == 1);
			bytes += res[i].bytes_extracted;
		}
		if (round == 0)
			assert_true(bytes > 0);
		else
			assert_int_equal(bytes, 0);
		char path[4096];
		assert_true(exists(pf(path, "%s/bin/purepkg-hello", env.root)));
		assert_true(exists(
		        pf(path, "%s/lib/python3.11/site-packages/purepkg-1.0.dist-info/REQUESTED",
		           env.root)));
	}
}

static void test_install_all_stops_at_the_first_failure_and_names_the_wheel(void **state)
{
	fx *f = *state;
	char cache[4096], p[4][4096];
	new_cache(f, cache);
	ml_wheel_job jobs[4] = {job(f, "purepkg", p[0]), job(f, "badrecord", p[1]),
	                        job(f, "platpkg", p[2]), job(f, "datapkg", p[3])};
	ml_wheels_opts o = ML_WHEELS_OPTS_INIT;
	o.cache_dir = cache;
	o.jobs = 1;
	ml_wheel_result res[4];
	ml_env_layout env = new_env(f, NULL);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_wheels_install_all(res, jobs, 4, &env, &o, &err), ML_EINTEGRITY);
	assert_int_equal(strncmp(err.msg, "badrecord-1.0-py3-none-any.whl: ", 32), 0);
	assert_int_equal(res[0].rc, 0);
	assert_int_equal(res[1].rc, ML_EINTEGRITY);
	assert_false(res[1].skipped);
	assert_true(res[2].skipped);
	assert_true(res[3].skipped);
}

/* --- the unpack queue (unpacking while the rest downloads) -------------------------- */

typedef struct checks {
	int calls;
	size_t refuse; /* index refused, or SIZE_MAX */
} checks;

static int check_refusing(void *ctx, size_t index, const char *path)
{
	checks *c = ctx;
	assert_non_null(path);
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_SEQ_CST);
	return index == c->refuse ? ML_EGPU : 0;
}

/* The three good fixture wheels, a new cache, and opts with `jobs` threads. */
static ml_wheels_opts three_wheels(fx *f, char *cache, char p[3][4096], ml_wheel_job *jobs,
                                   int threads)
{
	new_cache(f, cache);
	jobs[0] = job(f, "purepkg", p[0]);
	jobs[1] = job(f, "platpkg", p[1]);
	jobs[2] = job(f, "datapkg", p[2]);
	ml_wheels_opts o = ML_WHEELS_OPTS_INIT;
	o.cache_dir = cache;
	o.jobs = threads;
	return o;
}

static void test_unpack_queue_unpacks_as_wheels_arrive_and_install_reuses_it(void **state)
{
	fx *f = *state;
	char cache[4096], p[3][4096];
	ml_wheel_job jobs[3];
	ml_wheels_opts o = three_wheels(f, cache, p, jobs, 2);
	checks c = {0, SIZE_MAX};
	ml_unpack_queue *q = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_unpack_queue_start(&q, 3, &o, check_refusing, &c, &err), 0);
	/* out of order, as downloads finish */
	assert_int_equal(ml_unpack_queue_add(q, 2, &jobs[2], &err), 0);
	assert_int_equal(ml_unpack_queue_add(q, 0, &jobs[0], &err), 0);
	assert_int_equal(ml_unpack_queue_add(q, 7, &jobs[1], &err), ML_EFAIL);
	assert_int_equal(ml_unpack_queue_add(q, 1, &jobs[1], &err), 0);
	ml_unpacked u[3];
	bool ok[3];
	assert_int_equal(ml_unpack_queue_finish(q, false, u, ok), 0);
	assert_int_equal(c.calls, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(ok[i]);
		assert_false(u[i].cache_hit);
		assert_true(u[i].bytes_extracted > 0);
		assert_true(ml_wheel_unpacked_ready(cache, jobs[i].sha256));
		jobs[i].unpacked = &u[i];
	}
	/* the install reports the queue's extraction, not a cache hit */
	ml_wheel_result res[3];
	ml_env_layout env = new_env(f, NULL);
	assert_int_equal(ml_wheels_install_all(res, jobs, 3, &env, &o, &err), 0);
	for (size_t i = 0; i < 3; i++) {
		assert_false(res[i].cache_hit);
		assert_int_equal(res[i].bytes_extracted, u[i].bytes_extracted);
		assert_true(res[i].n_linked > 0);
	}
}

static void test_unpack_queue_stops_when_the_check_refuses_a_wheel(void **state)
{
	fx *f = *state;
	char cache[4096], p[3][4096];
	ml_wheel_job jobs[3];
	ml_wheels_opts o = three_wheels(f, cache, p, jobs, 1); /* the order added */
	checks c = {0, 1};
	ml_unpack_queue *q = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_unpack_queue_start(&q, 3, &o, check_refusing, &c, &err), 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ml_unpack_queue_add(q, i, &jobs[i], &err), 0);
	bool ok[3];
	assert_int_equal(ml_unpack_queue_finish(q, false, NULL, ok), ML_EGPU);
	assert_false(ok[1]); /* refused: never extracted */
	assert_false(ml_wheel_unpacked_ready(cache, jobs[1].sha256));
	assert_false(ok[2]); /* after the refusal nothing more */
	assert_false(ml_wheel_unpacked_ready(cache, jobs[2].sha256));
	assert_true(ok[0] == ml_wheel_unpacked_ready(cache, jobs[0].sha256));
}

static void test_unpack_queue_finish_with_stop_drops_what_has_not_started(void **state)
{
	fx *f = *state;
	char cache[4096];
	new_cache(f, cache);
	ml_wheels_opts o = ML_WHEELS_OPTS_INIT;
	o.cache_dir = cache;
	ml_unpack_queue *q = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_unpack_queue_start(&q, 2, &o, NULL, NULL, &err), 0);
	bool ok[2] = {true, true};
	assert_int_equal(ml_unpack_queue_finish(q, true, NULL, ok), 0);
	assert_false(ok[0]);
	assert_false(ok[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_record_parse_reads_csv_as_python_writes_it),
	        cmocka_unit_test(test_record_parse_refuses_malformed_rows),
	        cmocka_unit_test(test_record_format_round_trips),
	        cmocka_unit_test(test_wheel_meta_parse_reads_version_and_purelib),
	        cmocka_unit_test(test_entry_points_parse_ini_and_split_module_attr),
	        cmocka_unit_test(test_unpack_verifies_record_and_makes_the_cache_read_only),
	        cmocka_unit_test(test_unpack_twice_is_a_cache_hit_that_reads_nothing),
	        cmocka_unit_test(test_unpack_refuses_broken_wheels_and_caches_nothing),
	        cmocka_unit_test(test_unpack_refuses_a_wheel_that_is_not_the_pinned_one_unless_told),
	        cmocka_unit_test(test_unpack_refuses_hostile_archives_posing_as_wheels),
	        cmocka_unit_test(test_unpack_cleans_up_after_a_crashed_run),
	        cmocka_unit_test(test_unpack_refuses_the_hostile_wheels),
	        cmocka_unit_test(test_agreeing_unicode_path_fields_install),
	        cmocka_unit_test(test_windows_layouts_refuse_the_windows_hostile_wheels),
	        cmocka_unit_test(test_the_wheels_own_bytecode_is_dropped),
	        cmocka_unit_test(test_nfd_names_install_as_written),
	        cmocka_unit_test(test_layout_init_takes_absolute_paths_and_a_python_3_version),
	        cmocka_unit_test(test_install_spreads_every_data_scheme),
	        cmocka_unit_test(test_install_writes_console_and_gui_launchers),
	        cmocka_unit_test(test_launchers_use_the_sh_exec_form_for_spaced_or_long_paths),
	        cmocka_unit_test(test_install_record_lists_every_installed_path_with_its_hash),
	        cmocka_unit_test(test_install_links_by_the_requested_method),
	        cmocka_unit_test(test_reinstalling_never_writes_into_the_cache),
	        cmocka_unit_test(test_a_tampered_cache_is_detected_on_install),
	        cmocka_unit_test(test_install_refuses_an_entry_point_that_is_code),
	        cmocka_unit_test(
	                test_install_all_runs_in_parallel_and_a_second_env_decompresses_nothing),
	        cmocka_unit_test(test_install_all_stops_at_the_first_failure_and_names_the_wheel),
	        cmocka_unit_test(test_unpack_queue_unpacks_as_wheels_arrive_and_install_reuses_it),
	        cmocka_unit_test(test_unpack_queue_stops_when_the_check_refuses_a_wheel),
	        cmocka_unit_test(test_unpack_queue_finish_with_stop_drops_what_has_not_started),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
#endif /* _WIN32 */
