/*
 * test_extract.c - specs for checked archive extraction (src/env/
 * entry.c, extract.c, zipscan.c; docs/reliability.md "Archives"): the pure entry
 * checker, then every hostile archive tests/fixtures/make_bad_archives.py writes,
 * walked from its cases.tsv table; names that zip readers read two ways
 * (Info-ZIP Unicode Path fields) and the Windows name rules. A refused archive must come back as
 * ML_EINTEGRITY with nothing created - the destination gone, a sentinel
 * beside it and the whole working directory unchanged, nothing escaped.
 */
#ifdef _WIN32
#include "win_skip.h"
ML_LINUX_ONLY_PROGRAM("its archives come from a python3 script; it uses setrlimit")
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/env.h"
#include "../../src/env/internal.h"

typedef struct fx {
	char *tmp;
	char bad[4096];
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("extract");
	if (!f->tmp)
		return -1;
	snprintf(f->bad, sizeof f->bad, "%s/bad", f->tmp);
	if (!make_fixtures("make_bad_archives.py", f->bad))
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

/* --- ml_entry_check: the pure per-entry rules ------------------------------- */

typedef struct name_case {
	const char *name;
	size_t len; /* 0: strlen */
	ml_entry_type type;
	const char *link;
	unsigned flags;
} name_case;

static int check(const name_case *c, char *norm, size_t normsz, ml_err *err)
{
	size_t len = c->len ? c->len : strlen(c->name);
	return ml_entry_check(norm, normsz, c->name, len, c->type, c->link,
	                      c->link ? strlen(c->link) : 0, c->flags, err);
}

static void test_entry_check_refuses_every_hostile_name(void **state)
{
	static const name_case bad[] = {
	        {"", 0, ML_ENTRY_FILE, NULL, 0},
	        {"../../x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a/../../x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a/..", 0, ML_ENTRY_DIR, NULL, 0},
	        {"/x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"//x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"..\\x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a\\b", 0, ML_ENTRY_FILE, NULL, 0},
	        {"C:\\x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"C:x", 0, ML_ENTRY_FILE, NULL, 0},
	        {"\\\\host\\share", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a\0/../../x", 10, ML_ENTRY_FILE, NULL, 0},
	        {"a\x01", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a\nb", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a\x7f", 0, ML_ENTRY_FILE, NULL, 0},
	        {"\xff\xfe", 0, ML_ENTRY_FILE, NULL, 0},
	        {"\xc0\xaf", 0, ML_ENTRY_FILE, NULL, 0}, /* overlong '/' */
	        {"a//b", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a/./b", 0, ML_ENTRY_FILE, NULL, 0},
	        {"a/", 0, ML_ENTRY_FILE, NULL, 0},
	        {".", 0, ML_ENTRY_FILE, NULL, 0},
	        {"dev/null", 0, ML_ENTRY_OTHER, NULL, 0},
	        {"link", 0, ML_ENTRY_SYMLINK, "target", 0},
	        {"hard", 0, ML_ENTRY_HARDLINK, "file", 0},
	        {"python/l", 0, ML_ENTRY_SYMLINK, "../../etc", ML_ENTRY_ALLOW_LINKS},
	        {"l", 0, ML_ENTRY_SYMLINK, "..", ML_ENTRY_ALLOW_LINKS},
	        {"l", 0, ML_ENTRY_SYMLINK, "/etc/passwd", ML_ENTRY_ALLOW_LINKS},
	        {"l", 0, ML_ENTRY_SYMLINK, "", ML_ENTRY_ALLOW_LINKS},
	        {"l", 0, ML_ENTRY_SYMLINK, "a\\..\\..", ML_ENTRY_ALLOW_LINKS},
	        {"a/l", 0, ML_ENTRY_SYMLINK, "x/../../..", ML_ENTRY_ALLOW_LINKS},
	        {"h", 0, ML_ENTRY_HARDLINK, "../x", ML_ENTRY_ALLOW_LINKS},
	        {"h", 0, ML_ENTRY_HARDLINK, "/etc/passwd", ML_ENTRY_ALLOW_LINKS},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ml_err err = ML_ERR_INIT;
		char norm[4096];
		int rc = check(&bad[i], norm, sizeof norm, &err);
		if (rc != ML_EINTEGRITY)
			fail_msg("case %zu ('%s') was not refused: rc %d", i, bad[i].name, rc);
		assert_non_null(strstr(err.msg, "refused"));
	}
	/* A name longer than the system takes. */
	char longname[5000];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_entry_check(NULL, 0, longname, strlen(longname), ML_ENTRY_FILE, NULL, 0,
	                                0, &err),
	                 ML_EINTEGRITY);
	longname[300] = '\0';
	assert_int_equal(ml_entry_check(NULL, 0, longname, 300, ML_ENTRY_FILE, NULL, 0, 0, &err),
	                 ML_EINTEGRITY);
}

static void test_entry_check_accepts_and_normalizes_plain_names(void **state)
{
	static const struct {
		name_case c;
		const char *norm;
	} good[] = {
	        {{"pkg/__init__.py", 0, ML_ENTRY_FILE, NULL, 0}, "pkg/__init__.py"},
	        {{"./python/bin/python3", 0, ML_ENTRY_FILE, NULL, 0}, "python/bin/python3"},
	        {{"pkg/sub/", 0, ML_ENTRY_DIR, NULL, 0}, "pkg/sub"},
	        {{"./", 0, ML_ENTRY_DIR, NULL, 0}, ""},
	        {{"caf\xc3\xa9/x", 0, ML_ENTRY_FILE, NULL, 0}, "caf\xc3\xa9/x"},
	        {{"a..b/..c", 0, ML_ENTRY_FILE, NULL, 0}, "a..b/..c"},
	        {{"python/bin/python3", 0, ML_ENTRY_SYMLINK, "python3.11", ML_ENTRY_ALLOW_LINKS},
	         "python/bin/python3"},
	        {{"python/lib/up", 0, ML_ENTRY_SYMLINK, "..", ML_ENTRY_ALLOW_LINKS},
	         "python/lib/up"},
	        {{"a/b/l", 0, ML_ENTRY_SYMLINK, "../../c/./d", ML_ENTRY_ALLOW_LINKS}, "a/b/l"},
	        {{"python/h", 0, ML_ENTRY_HARDLINK, "./python/x", ML_ENTRY_ALLOW_LINKS},
	         "python/h"},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		ml_err err = ML_ERR_INIT;
		char norm[4096];
		int rc = check(&good[i].c, norm, sizeof norm, &err);
		if (rc != 0)
			fail_msg("case %zu ('%s') refused: %s", i, good[i].c.name, err.msg);
		assert_string_equal(norm, good[i].norm);
	}
}

static void test_entry_check_names_the_entry_and_escapes_control_bytes(void **state)
{
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_entry_check(NULL, 0, "a\x1b[31m", 6, ML_ENTRY_FILE, NULL, 0, 0, &err),
	                 ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "a\\x1b[31m"));
	assert_non_null(strstr(err.msg, "control character"));
	assert_int_equal(ml_entry_check(NULL, 0, "../x", 4, ML_ENTRY_FILE, NULL, 0, 0, &err),
	                 ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "'..'"));
}

/* --- the hostile archives table ----------------------------------------------------- */

typedef struct row {
	char file[256], kind[32], expect[32], what[512];
	unsigned long long max_bytes, max_entries;
} row;

static size_t read_cases(row *rows, size_t max, const char *dir)
{
	char path[4096];
	pf(path, "%s/cases.tsv", dir);
	char *txt = slurp(path, NULL);
	assert_non_null(txt);
	size_t n = 0;
	for (char *line = strtok(txt, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		row *r = &rows[n];
		if (sscanf(line, "%255[^\t]\t%31[^\t]\t%llu\t%llu\t%31[^\t]\t%511[^\n]", r->file,
		           r->kind, &r->max_bytes, &r->max_entries, r->expect, r->what) == 6)
			n++;
	}
	free(txt);
	return n;
}

static ml_extract_opts opts_for(const row *r)
{
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = strcmp(r->kind, "wheel") == 0 ? ML_ARCHIVE_WHEEL : ML_ARCHIVE_INTERPRETER;
	o.max_bytes = r->max_bytes;
	o.max_entries = r->max_entries;
	o.list_files = true;
	return o;
}

static void test_every_hostile_archive_is_refused_and_leaves_nothing(void **state)
{
	fx *f = *state;
	row rows[128];
	size_t n = read_cases(rows, 128, f->bad), refused = 0;
	assert_true(n > 40);
	assert_false(exists("/tmp/mlsetup-evil"));
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
		if (strcmp(r->expect, "refused") != 0)
			continue;
		char work[4096], dest[4096], archive[4096], sentinel[4096];
		pf(work, "%s/work-%zu", f->tmp, i);
		pf(dest, "%s/a/b/dest", work);
		pf(archive, "%s/%s", f->bad, r->file);
		pf(sentinel, "%s/sentinel", work);
		assert_int_equal(sh("mkdir -p '%s/a/b' && echo keep > '%s'", work, sentinel), 0);
		char *before = tree_listing(work);

		ml_extract_opts o = opts_for(r);
		ml_extract_result res;
		ml_err err = ML_ERR_INIT;
		int rc = ml_archive_extract(&res, archive, dest, &o, &err);
		if (rc != ML_EINTEGRITY)
			fail_msg("%s (%s): expected ML_EINTEGRITY, got %d: %s", r->file, r->what,
			         rc, err.msg);
		char *after = tree_listing(work);
		if (strcmp(before, after) != 0)
			fail_msg("%s (%s): the working directory changed:\n%s\n---\n%s", r->file,
			         r->what, before, after);
		assert_false(exists(dest));
		assert_false(exists("/tmp/mlsetup-evil"));
		assert_true(err.msg[0] != '\0');
		printf("# refused %-32s %-40s %s\n", r->file, r->what, err.msg);
		free(before);
		free(after);
		refused++;
	}
	assert_true(refused >= 40);
}

/* Every archive the generator marks "ok" extracts, and every file it
 * lists has the size and sha256 of what is on disk. */
static void test_every_ok_archive_extracts(void **state)
{
	fx *f = *state;
	row rows[128];
	size_t n = read_cases(rows, 128, f->bad), seen = 0;
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
		if (strcmp(r->expect, "ok") != 0)
			continue;
		char dest[4096], archive[4096];
		pf(dest, "%s/ok-%zu", f->tmp, i);
		pf(archive, "%s/%s", f->bad, r->file);
		ml_extract_opts o = opts_for(r);
		ml_extract_result res;
		ml_err err = ML_ERR_INIT;
		if (ml_archive_extract(&res, archive, dest, &o, &err) != 0)
			fail_msg("%s (%s): %s", r->file, r->what, err.msg);
		for (size_t k = 0; k < res.n_listed; k++) {
			char hex[65], *want;
			for (int b = 0; b < 32; b++)
				snprintf(hex + 2 * b, 3, "%02x", res.files[k].sha256[b]);
			want = capture(NULL,
			               "cd '%s' && sha256sum < '%s' | cut -c1-64 | tr -d '\\n'",
			               dest, res.files[k].path);
			if (strcmp(hex, want) != 0)
				fail_msg("%s: '%s' listed with sha256 %s, has %s", r->file,
				         res.files[k].path, hex, want);
			free(want);
		}
		printf("# ok %-32s %s: %zu files\n", r->file, r->what, (size_t)res.n_listed);
		ml_extract_result_release(&res);
		seen++;
	}
	assert_true(seen >= 4);
}

/* Extracts the fixture `file` with threads; fails the test unless it
 * extracts. */
static ml_extract_result extract_ok(fx *f, const char *file, const char *dest, int threads)
{
	char archive[4096];
	pf(archive, "%s/%s", f->bad, file);
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.list_files = true;
	o.threads = threads;
	ml_extract_result res;
	ml_err err = ML_ERR_INIT;
	if (ml_archive_extract(&res, archive, dest, &o, &err) != 0)
		fail_msg("%s: %s", file, err.msg);
	return res;
}

/* A deflate stream that goes on past its member's declared size is
 * refused where it passes it: with the file size limit at the declared
 * size, writing one byte more would fail with EFBIG instead. Both the
 * buffered (24 bytes declared, 8 MiB in the stream) and the mapped path
 * (2 MiB declared, 64 MiB in the stream) are checked. */
static void test_inflation_stops_at_the_declared_size(void **state)
{
	fx *f = *state;
	static const struct {
		const char *file;
		rlim_t declared;
	} cases[] = {{"zip-overlong-small.whl", 24}, {"zip-overlong-big.whl", 2 << 20}};
	for (size_t i = 0; i < 2; i++) {
		char dest[4096], archive[4096];
		pf(dest, "%s/overlong-%zu", f->tmp, i);
		pf(archive, "%s/%s", f->bad, cases[i].file);
		ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
		o.list_files = true;
		ml_err err = ML_ERR_INIT;
		struct rlimit old, lim;
		assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
		lim = old;
		lim.rlim_cur = cases[i].declared;
		fflush(stdout);
		fflush(stderr);
		void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
		int rc = ml_archive_extract(NULL, archive, dest, &o, &err);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
		signal(SIGXFSZ, prev);
		if (rc != ML_EINTEGRITY || !strstr(err.msg, "expands past its declared size"))
			fail_msg("%s: rc %d: %s", cases[i].file, rc, err.msg);
		assert_false(exists(dest));
		printf("# %s: %s\n", cases[i].file, err.msg);
	}
}

/* A decomposed (NFD) name is kept byte for byte, and nothing else is
 * made of it; names that differ only in case are two files where the file
 * system keeps case and are refused where it folds case. */
static void test_unicode_and_case_names_are_kept_as_written(void **state)
{
	fx *f = *state;
	char dest[4096], path[4096];
	pf(dest, "%s/nfd", f->tmp);
	ml_extract_result res = extract_ok(f, "zip-nfd-name.whl", dest, 1);
	pf(path, "%s/pkg/cafe\xcc\x81.py", dest);
	assert_true(exists(path));
	pf(path, "%s/pkg/caf\xc3\xa9.py", dest);
	assert_false(exists(path));
	ml_extract_result_release(&res);

	char probe[4096], upper[4096];
	pf(probe, "%s/case-probe", f->tmp);
	pf(upper, "%s/CASE-PROBE", f->tmp);
	assert_int_equal(sh("touch '%s'", probe), 0);
	bool folds = exists(upper);
	unlink(probe);
	pf(dest, "%s/case", f->tmp);
	char archive[4096];
	pf(archive, "%s/zip-case-only.whl", f->bad);
	ml_err err = ML_ERR_INIT;
	int rc = ml_archive_extract(&res, archive, dest, NULL, &err);
	if (folds) {
		assert_int_equal(rc, ML_EINTEGRITY);
		assert_non_null(strstr(err.msg, "case folding"));
		printf("# this file system folds case: %s\n", err.msg);
		return;
	}
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.n_files, 2);
	pf(path, "%s/pkg/Foo.py", dest);
	assert_true(exists(path));
	pf(path, "%s/pkg/foo.py", dest);
	assert_true(exists(path));
	/* The case probe left nothing behind. */
	char *left = capture(NULL, "ls -A '%s' | grep -c mlsetup-case || true", dest);
	assert_string_equal(left, "0\n");
	free(left);
	ml_extract_result_release(&res);
}

static void test_entry_names_check_compares_nfc_and_folded_names(void **state)
{
	static const struct {
		const char *a, *b;
		bool fold, refused;
	} cases[] = {
	        {"pkg/caf\xc3\xa9.py", "pkg/cafe\xcc\x81.py", false, true},
	        {"pkg/caf\xc3\xa9/a", "pkg/cafe\xcc\x81/b", false, true},
	        {"pkg/K", "pkg/\xe2\x84\xaa", false, true}, /* U+212A KELVIN SIGN */
	        {"pkg/cafe\xcc\x81.py", "pkg/other.py", false, false},
	        {"pkg/Foo.py", "pkg/foo.py", false, false},
	        {"pkg/Foo.py", "pkg/foo.py", true, true},
	        {"Pkg/a.py", "pkg/b.py", true, true},
	        {"pkg/stra\xc3\x9f"
	         "e",
	         "pkg/STRASSE", true, true}, /* full folding */
	        {"pkg/CAF\xc3\x89", "pkg/cafe\xcc\x81", true, true},
	        {"pkg/a.py", "pkg/b.py", true, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *v[] = {"pkg/x.py", cases[i].a, cases[i].b};
		ml_err err = ML_ERR_INIT;
		int rc = ml_entry_names_check(v, 3, cases[i].fold, &err);
		if (rc != (cases[i].refused ? ML_EINTEGRITY : 0))
			fail_msg("case %zu ('%s', '%s', fold %d): rc %d %s", i, cases[i].a,
			         cases[i].b, cases[i].fold, rc, err.msg);
		if (rc)
			assert_non_null(strstr(err.msg, "are one name after"));
	}
	const char *one[] = {"pkg/cafe\xcc\x81.py"};
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_entry_names_check(one, 1, true, &err), 0);
	const char *shown[] = {"pkg/caf\xc3\xa9", "pkg/cafe\xcc\x81"};
	assert_int_equal(ml_entry_names_check(shown, 2, false, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "'pkg/caf\\u00E9' and 'pkg/cafe\\u0301'"));
}

/* --- names read two ways: Info-ZIP Unicode Path fields (0x7075) ------------------ */

/* Extracts the fixture `file`, which must be refused: returns the message. */
static void refused_with(fx *f, const char *file, const ml_extract_opts *o, ml_err *err)
{
	char dest[4096], archive[4096];
	pf(dest, "%s/refused-%s", f->tmp, file);
	pf(archive, "%s/%s", f->bad, file);
	int rc = ml_archive_extract(NULL, archive, dest, o, err);
	if (rc != ML_EINTEGRITY)
		fail_msg("%s: expected ML_EINTEGRITY, got %d: %s", file, rc, err->msg);
	assert_false(exists(dest));
	printf("# %s: %s\n", file, err->msg);
}

/* An entry whose Unicode Path field names another file is refused with
 * the entry and the other name (escaped) in the message, from either
 * header, whatever the field's CRC-32 says; the local/central name
 * mismatch names both names too. Agreeing fields are accepted (the "ok"
 * table row zip-upath-agree.whl). */
static void test_unicode_path_fields_naming_another_file_are_refused(void **state)
{
	fx *f = *state;
	static const struct {
		const char *file, *header, *other;
	} cases[] = {
	        {"zip-upath-evil.whl", "central header", "'../../../../tmp/mlsetup-evil'"},
	        {"zip-upath-central.whl", "central header", "'pkg/other.py'"},
	        {"zip-upath-local.whl", "local header", "'pkg/other.py'"},
	        {"zip-upath-stale.whl", "central header", "'pkg/other.py'"},
	        {"zip-upath-control.whl", "central header", "'../../\\x1b[2J\\u202Emlsetup-evil'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ml_err err = ML_ERR_INIT;
		refused_with(f, cases[i].file, NULL, &err);
		if (!strstr(err.msg, "entry 'pkg/ok.py' has an Info-ZIP Unicode Path extra field "
		                     "(0x7075)") ||
		    !strstr(err.msg, cases[i].header) || !strstr(err.msg, cases[i].other))
			fail_msg("%s: %s", cases[i].file, err.msg);
		assert_null(strchr(err.msg, '\x1b'));
	}
	ml_err err = ML_ERR_INIT;
	refused_with(f, "zip-upath-version.whl", NULL, &err);
	assert_non_null(strstr(err.msg, "(0x7075) of version 2 in its central header"));
	refused_with(f, "zip-upath-short.whl", NULL, &err);
	assert_non_null(strstr(err.msg, "malformed Info-ZIP Unicode Path extra field"));
	refused_with(f, "zip-extra-overrun.whl", NULL, &err);
	assert_non_null(strstr(err.msg, "malformed extra field in its local header"));
	refused_with(f, "zip-name-mismatch.whl", NULL, &err);
	assert_non_null(strstr(err.msg, "entry 'pkg/ok.py' has another name in its local "
	                                "header: '../mlsetup-evil'"));

	char dest[4096];
	pf(dest, "%s/upath-agree", f->tmp);
	ml_extract_result res = extract_ok(f, "zip-upath-agree.whl", dest, 1);
	assert_int_equal(res.n_files, 2);
	ml_extract_result_release(&res);
}

static void test_printable_escapes_what_a_terminal_would_act_on(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
	        {"pkg/caf\xc3\xa9.py", 0, "pkg/caf\xc3\xa9.py"},
	        {"a\x1b[31mb", 0, "a\\x1b[31mb"},
	        {"a\x7f\xc2\x9b"
	         "b",
	         0, "a\\x7f\\u009Bb"},                             /* DEL, C1 CSI */
	        {"x\xe2\x80\xaeyp.exe", 0, "x\\u202Eyp.exe"},      /* RLO */
	        {"x\xe2\x81\xa6y", 0, "x\\u2066y"},                /* LRI */
	        {"\xff\xfe/\xc0\xaf", 0, "\\xff\\xfe/\\xc0\\xaf"}, /* not UTF-8 */
	        {"a\0b", 3, "a\\x00b"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[256];
		size_t n = cases[i].len ? cases[i].len : strlen(cases[i].in);
		mle_printable(out, sizeof out, cases[i].in, n);
		if (strcmp(out, cases[i].out) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, out, cases[i].out);
	}
	char longname[1000], out[64];
	memset(longname, 'a', sizeof longname);
	mle_printable(out, sizeof out, longname, sizeof longname);
	assert_int_equal(strlen(out), sizeof out - 1);
	assert_string_equal(out + sizeof out - 4, "...");
	/* An escape is never cut in half. */
	memset(longname, '\x1b', sizeof longname);
	mle_printable(out, sizeof out, longname, sizeof longname);
	assert_string_equal(out + strlen(out) - 7, "\\x1b...");
}

/* --- Windows name rules ---------------------------------------------------------------- */

/* The rules of ml_entry_windows_check() as a table of refused names and
 * their accepted twins; they hold on every host (Microsoft, "Naming
 * Files, Paths, and Namespaces": COM0 and LPT0 are not reserved). */
static void test_windows_name_rules(void **state)
{
	/* clang-format off */
	static const char *const refused[] = {
	        /* device names, in any case and directory, with any extension */
	        "CON.py", "con.py", "pkg/CON.py", "aux.txt", "nul", "NUL", "prn.x.y",
	        "com1.tar.gz", "COM9", "lpt1", "lpt9", "LpT5.txt", "conin$", "CONOUT$.txt",
	        "com\xc2\xb9", "COM\xc2\xb2.py", "lpt\xc2\xb3", /* superscript 1, 2, 3 */
	        "CON .txt", "aux/x.py", "pkg/Aux/__init__.py",
	        /* a trailing dot or space, an empty component */
	        "mod.py.", "pkg/mod.py.", "dir /x.py", "x.py ", "con  ", "pkg/.", "a//b", "",
	        /* ':' (streams, drives) and the other characters Windows refuses */
	        "x.py:ads", "pkg/x.py:ads:$DATA", "C:x", "a:b/c", "a*b", "a?b", "a<b", "a>b",
	        "a|b", "a\"b", "a\\b", "a\x01",
	};
	static const char *const accepted[] = {
	        "cone.py", "icon.py", "console.py", "con_.py", "pkg/cons/x", "auxiliary",
	        "nul-x.py", "com.py", "comx", "COM10", "lpt10.py",
	        "COM0", "LPT0.txt", /* not reserved: the page listed them for a while */
	        "CON\xc2\xb9", "COM\xc2\xb4", /* superscript 1 after CON; an acute accent */
	        ".hidden", "a.b.c", "x.py.orig", "pkg/__init__.py", "caf\xc3\xa9.py",
	        "pkg/sub dir/x.py",
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ml_err err = ML_ERR_INIT;
		int rc = ml_entry_windows_check(refused[i], strlen(refused[i]), NULL, &err);
		if (rc != ML_EINTEGRITY)
			fail_msg("'%s' was not refused: rc %d", refused[i], rc);
		assert_non_null(strstr(err.msg, "refused on Windows"));
	}
	for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
		ml_err err = ML_ERR_INIT;
		if (ml_entry_windows_check(accepted[i], strlen(accepted[i]), NULL, &err) != 0)
			fail_msg("'%s' was refused: %s", accepted[i], err.msg);
	}
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_entry_windows_check("pkg/CON.py", 10, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "entry 'pkg/CON.py' refused on Windows: 'CON.py' is "
	                                "the device CON"));
	assert_int_equal(ml_entry_windows_check("aux", 3, "console_scripts entry point", &err),
	                 ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "console_scripts entry point 'aux' refused on Windows"));
	assert_int_equal(ml_entry_windows_check("mod.py.", 7, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "ends in a dot"));
	assert_int_equal(ml_entry_windows_check("x.py:ads", 8, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "alternate data stream"));
	assert_int_equal(ml_entry_windows_check("com\xc2\xb9", 5, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "the device COM\xc2\xb9"));
	/* The name is escaped like every other. */
	assert_int_equal(ml_entry_windows_check("\x1b[2J:x", 6, NULL, &err), ML_EINTEGRITY);
	assert_null(strchr(err.msg, '\x1b'));
}

/* With windows_names every "windows" row of the table is refused with
 * nothing written (the case-only pair too, whatever this file system
 * does), while without it they extract; every "ok" wheel extracts with
 * the rules as well. */
static void test_windows_names_refuse_before_anything_is_written(void **state)
{
	fx *f = *state;
	row rows[160];
	size_t n = read_cases(rows, 160, f->bad), windows = 0, ok = 0;
	char probe[4096], upper[4096];
	pf(probe, "%s/case-probe-w", f->tmp);
	pf(upper, "%s/CASE-PROBE-W", f->tmp);
	assert_int_equal(sh("touch '%s'", probe), 0);
	bool folds = exists(upper);
	unlink(probe);
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
		bool win = strcmp(r->expect, "windows") == 0;
		if (strcmp(r->kind, "wheel") != 0 || (!win && strcmp(r->expect, "ok") != 0))
			continue;
		char work[4096], dest[4096], archive[4096];
		pf(work, "%s/win-%zu", f->tmp, i);
		pf(dest, "%s/dest", work);
		pf(archive, "%s/%s", f->bad, r->file);
		assert_int_equal(sh("mkdir -p '%s' && echo keep > '%s/sentinel'", work, work), 0);
		char *before = tree_listing(work);
		ml_extract_opts o = opts_for(r);
		o.windows_names = true;
		ml_err err = ML_ERR_INIT;
		int rc = ml_archive_extract(NULL, archive, dest, &o, &err);
		if (!win) {
			if (rc != 0)
				fail_msg("%s (%s) refused with windows_names: %s", r->file, r->what,
				         err.msg);
			ml_fs_rm_tree(dest);
			free(before);
			ok++;
			continue;
		}
		if (rc != ML_EINTEGRITY)
			fail_msg("%s (%s): expected ML_EINTEGRITY, got %d: %s", r->file, r->what,
			         rc, err.msg);
		if (!strstr(err.msg, "refused on Windows") &&
		    !strstr(err.msg, "case folding (Windows folds case)"))
			fail_msg("%s: %s", r->file, err.msg);
		char *after = tree_listing(work);
		if (strcmp(before, after) != 0)
			fail_msg("%s (%s): the working directory changed:\n%s\n---\n%s", r->file,
			         r->what, before, after);
		free(before);
		free(after);
		printf("# windows: %-28s %s\n", r->file, err.msg);
		/* Without the rules (a POSIX environment) it extracts. */
		o.windows_names = false;
		rc = ml_archive_extract(NULL, archive, dest, &o, &err);
		if (folds && strstr(r->file, "case"))
			assert_int_equal(rc, ML_EINTEGRITY);
		else if (rc != 0)
			fail_msg("%s (%s) refused without windows_names: %s", r->file, r->what,
			         err.msg);
		ml_fs_rm_tree(dest);
		windows++;
	}
	assert_true(windows >= 12);
	assert_true(ok >= 6);
}

/* The members of a large wheel are shared among threads; the result is
 * the same files with the same hashes as on one thread. */
static void test_large_wheels_inflate_on_several_threads(void **state)
{
	fx *f = *state;
	char one[4096], many[4096];
	pf(one, "%s/threads-1", f->tmp);
	pf(many, "%s/threads-4", f->tmp);
	ml_extract_result a = extract_ok(f, "zip-many-large.whl", one, 1);
	ml_extract_result b = extract_ok(f, "zip-many-large.whl", many, 4);
	assert_int_equal(a.n_threads, 1);
	assert_true(b.n_threads >= 2);
	printf("# %llu threads inflated members\n", (unsigned long long)b.n_threads);
	assert_int_equal(a.n_listed, b.n_listed);
	assert_int_equal(a.bytes, b.bytes);
	assert_true(a.bytes > (32u << 20));
	for (size_t i = 0; i < a.n_listed; i++) {
		assert_string_equal(a.files[i].path, b.files[i].path);
		assert_int_equal(a.files[i].size, b.files[i].size);
		assert_memory_equal(a.files[i].sha256, b.files[i].sha256, 32);
	}
	assert_int_equal(sh("diff -r '%s' '%s'", one, many), 0);
	ml_extract_result_release(&a);
	ml_extract_result_release(&b);
}

static void test_setuid_setgid_and_sticky_bits_are_cleared(void **state)
{
	fx *f = *state;
	row rows[128];
	size_t n = read_cases(rows, 128, f->bad), seen = 0;
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
		if (strcmp(r->expect, "cleared") != 0)
			continue;
		char dest[4096], archive[4096];
		pf(dest, "%s/cleared-%zu", f->tmp, i);
		pf(archive, "%s/%s", f->bad, r->file);
		ml_extract_opts o = opts_for(r);
		ml_extract_result res;
		ml_err err = ML_ERR_INIT;
		if (ml_archive_extract(&res, archive, dest, &o, &err) != 0)
			fail_msg("%s: %s", r->file, err.msg);
		assert_int_equal(res.n_modes_cleared, 2);
		char *special = capture(NULL, "find '%s' -perm /7000", dest);
		assert_string_equal(special, "");
		free(special);
		char *modes = capture(NULL, "cd '%s' && find . -type f -printf '%%P %%m\\n' | sort",
		                      dest);
		for (char *c = modes; *c; c++)
			if (*c == '\n')
				*c = ' ';
		printf("# %s: %s\n", r->file, modes);
		assert_non_null(strstr(modes, "suid 755"));
		free(modes);
		ml_extract_result_release(&res);
		seen++;
	}
	assert_int_equal(seen, 2);
}

static void test_good_wheel_extracts_with_modes_and_hashes(void **state)
{
	fx *f = *state;
	char dest[4096], archive[4096], path[4096];
	pf(dest, "%s/good-wheel", f->tmp);
	pf(archive, "%s/zip-good.whl", f->bad);
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.list_files = true;
	o.read_only = true;
	ml_extract_result res;
	ml_err err = ML_ERR_INIT;
	if (ml_archive_extract(&res, archive, dest, &o, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.n_files, 3);
	assert_int_equal(res.n_dirs, 1);
	assert_int_equal(res.n_listed, 3);
	assert_int_equal(res.bytes, 3 + 10 + 1);
	assert_string_equal(res.files[0].path, "pkg/ok.py");
	/* sha256("ok\n") */
	char hex[65];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", res.files[0].sha256[i]);
	char *want = capture(NULL, "printf 'ok\\n' | sha256sum | cut -c1-64 | tr -d '\\n'");
	assert_string_equal(hex, want);
	free(want);
	struct stat st;
	pf(path, "%s/pkg/run", dest);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	assert_true(res.files[1].executable);
	pf(path, "%s/pkg/ok.py", dest);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	pf(path, "%s/pkg/caf\xc3\xa9.txt", dest);
	assert_true(exists(path));
	ml_extract_result_release(&res);
}

static void check_good_interpreter(const char *dest)
{
	char path[4096], link[4096], real[4096], rdest[4096];
	pf(path, "%s/python/bin/python3", dest);
	ssize_t n = readlink(path, link, sizeof link - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "python3.11");
	struct stat a, b;
	pf(path, "%s/python/bin/python3.11", dest);
	assert_int_equal(lstat(path, &a), 0);
	assert_int_equal(a.st_mode & 07777, 0755);
	pf(path, "%s/python/bin/python3.11-hard", dest);
	assert_int_equal(lstat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	/* The chain resolves inside the tree. */
	pf(path, "%s/python/lib/chain1", dest);
	assert_non_null(realpath(path, real));
	assert_non_null(realpath(dest, rdest));
	assert_int_equal(strncmp(real, rdest, strlen(rdest)), 0);
	assert_non_null(strstr(real, "python/bin/python3.11"));
	pf(path, "%s/python/lib/libpython3.11.so", dest);
	assert_true(exists(path));
	pf(path, "%s/python/share/caf\xc3\xa9.txt", dest);
	assert_true(exists(path));
}

static void test_interpreter_archives_keep_in_tree_links(void **state)
{
	fx *f = *state;
	const char *files[] = {"tar-good.tar.gz", "tar-good.tar.zst"};
	for (size_t i = 0; i < 2; i++) {
		char dest[4096], archive[4096];
		pf(archive, "%s/%s", f->bad, files[i]);
		if (!exists(archive)) {
			printf("# skipped %s: no zstd program to make it\n", files[i]);
			continue;
		}
		pf(dest, "%s/interp-%zu", f->tmp, i);
		ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
		o.kind = ML_ARCHIVE_INTERPRETER;
		ml_extract_result res;
		ml_err err = ML_ERR_INIT;
		if (ml_archive_extract(&res, archive, dest, &o, &err) != 0)
			fail_msg("%s: %s", files[i], err.msg);
		assert_int_equal(res.n_symlinks, 6);
		assert_int_equal(res.n_hardlinks, 1);
		check_good_interpreter(dest);
		ml_extract_result_release(&res);
	}
}

static void test_wheels_refuse_interpreter_archives_and_the_reverse(void **state)
{
	fx *f = *state;
	char dest[4096], archive[4096];
	ml_err err = ML_ERR_INIT;
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = ML_ARCHIVE_WHEEL;
	pf(archive, "%s/tar-good.tar.gz", f->bad);
	pf(dest, "%s/cross-1", f->tmp);
	assert_int_equal(ml_archive_extract(NULL, archive, dest, &o, &err), ML_EINTEGRITY);
	assert_false(exists(dest));
	o.kind = ML_ARCHIVE_INTERPRETER;
	pf(archive, "%s/zip-good.whl", f->bad);
	assert_int_equal(ml_archive_extract(NULL, archive, dest, &o, &err), ML_EINTEGRITY);
	assert_false(exists(dest));
}

static void test_extraction_only_goes_into_a_fresh_directory(void **state)
{
	fx *f = *state;
	char dest[4096], archive[4096];
	pf(dest, "%s/existing", f->tmp);
	pf(archive, "%s/zip-good.whl", f->bad);
	assert_int_equal(sh("mkdir -p '%s' && echo mine > '%s/keep'", dest, dest), 0);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_archive_extract(NULL, archive, dest, NULL, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "fresh directory"));
	char keep[4096];
	pf(keep, "%s/keep", dest);
	assert_true(exists(keep));
	/* A symlink in the destination's place is not followed either. */
	char link[4096];
	pf(link, "%s/dangling", f->tmp);
	assert_int_equal(symlink("/tmp/mlsetup-evil-dir", link), 0);
	assert_int_equal(ml_archive_extract(NULL, archive, link, NULL, &err), ML_EFAIL);
	assert_false(exists("/tmp/mlsetup-evil-dir"));
	/* A missing archive is reported as such. */
	pf(archive, "%s/nothere.whl", f->tmp);
	pf(dest, "%s/fresh", f->tmp);
	assert_int_equal(ml_archive_extract(NULL, archive, dest, NULL, &err), ML_ENOENT);
	assert_false(exists(dest));
}

/* fuzz_entry_check's finding (tests/fuzz/corpus/fuzz_entry_check/
 * tar_hardlink_self): an interpreter archive whose only entry is a hard
 * link naming itself. Its own node was taken for the "earlier entry" it
 * links to, and linkat() failed with ENOENT, reported as an I/O error
 * (ML_EIO, "cannot write ...: No such file or directory"). The archive is
 * broken by its own names: an integrity refusal that names the entry. The
 * archive is written as the harness writes it (libarchive, pax, gzip). */
static void test_hard_link_to_itself_is_an_integrity_refusal(void **state)
{
	fx *f = *state;
	char name[47], archive[4096], dest[4096];
	memset(name, 'C', 46);
	name[46] = '\0';
	pf(archive, "%s/hardlink-self.tar.gz", f->tmp);
	pf(dest, "%s/hardlink-self", f->tmp);
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_gzip(a);
	assert_int_equal(archive_write_open_filename(a, archive), ARCHIVE_OK);
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_hardlink(e, name);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	archive_entry_free(e);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);

	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = ML_ARCHIVE_INTERPRETER;
	ml_err err = ML_ERR_INIT;
	int rc = ml_archive_extract(NULL, archive, dest, &o, &err);
	if (rc != ML_EINTEGRITY || !strstr(err.msg, name) || !strstr(err.msg, "earlier"))
		fail_msg("rc %d: %s", rc, err.msg);
	assert_false(exists(dest));
}

/* A real write error while extracting an interpreter archive stays an I/O
 * error (ML_EIO): only what the archive's own names cause is an integrity
 * refusal. Here the file size limit makes every write fail with EFBIG,
 * as a full disk would fail with ENOSPC. */
static void test_interpreter_write_errors_stay_io_errors(void **state)
{
	fx *f = *state;
	char dest[4096], archive[4096];
	pf(archive, "%s/tar-good.tar.gz", f->bad);
	pf(dest, "%s/efbig", f->tmp);
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = ML_ARCHIVE_INTERPRETER;
	ml_err err = ML_ERR_INIT;
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 1;
	fflush(stdout);
	fflush(stderr);
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int rc = ml_archive_extract(NULL, archive, dest, &o, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	if (rc != ML_EIO || !strstr(err.msg, "cannot write"))
		fail_msg("rc %d: %s", rc, err.msg);
	assert_false(exists(dest));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_entry_check_refuses_every_hostile_name),
	        cmocka_unit_test(test_entry_check_accepts_and_normalizes_plain_names),
	        cmocka_unit_test(test_entry_check_names_the_entry_and_escapes_control_bytes),
	        cmocka_unit_test(test_every_hostile_archive_is_refused_and_leaves_nothing),
	        cmocka_unit_test(test_every_ok_archive_extracts),
	        cmocka_unit_test(test_inflation_stops_at_the_declared_size),
	        cmocka_unit_test(test_unicode_and_case_names_are_kept_as_written),
	        cmocka_unit_test(test_entry_names_check_compares_nfc_and_folded_names),
	        cmocka_unit_test(test_unicode_path_fields_naming_another_file_are_refused),
	        cmocka_unit_test(test_printable_escapes_what_a_terminal_would_act_on),
	        cmocka_unit_test(test_windows_name_rules),
	        cmocka_unit_test(test_windows_names_refuse_before_anything_is_written),
	        cmocka_unit_test(test_large_wheels_inflate_on_several_threads),
	        cmocka_unit_test(test_setuid_setgid_and_sticky_bits_are_cleared),
	        cmocka_unit_test(test_good_wheel_extracts_with_modes_and_hashes),
	        cmocka_unit_test(test_interpreter_archives_keep_in_tree_links),
	        cmocka_unit_test(test_wheels_refuse_interpreter_archives_and_the_reverse),
	        cmocka_unit_test(test_extraction_only_goes_into_a_fresh_directory),
	        cmocka_unit_test(test_hard_link_to_itself_is_an_integrity_refusal),
	        cmocka_unit_test(test_interpreter_write_errors_stay_io_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
#endif /* _WIN32 */
