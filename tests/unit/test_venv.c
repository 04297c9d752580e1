/*
 * test_venv.c - specs for PEP 405 environments and interpreters
 * (src/env/venv.c, python.c) with a real CPython >= 3.11 from this machine
 * (tests/fixtures/find_python.sh; MLSETUP_TEST_PYTHON picks one; these
 * tests skip, saying why, where there is none): the venv layout, sys.prefix
 * inside it,
 * the fixture wheels importing and their scripts running, pip seeing the
 * packages as installed by mlsetup (and uninstalling one), the bash
 * activate script, quoting of hostile paths, and unpacking a
 * python-build-standalone style archive once.
 */
#ifdef _WIN32
#include "win_skip.h"
ML_LINUX_ONLY_PROGRAM("builds environments with a Linux CPython (fork, /bin/sh)")
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>

#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/env.h"

/* The interpreter under test (its real executable), or why there is none. */
static char PY[4096];

typedef struct fx {
	char *tmp;
	char wheels[4096], bad[4096], cache[4096];
	bool have_python;
	ml_python_info py;
	char base_prefix[4096]; /* the interpreter's own answers, asked directly */
	char xy[16];
	int seq;
} fx;

/* Asks the interpreter for one value (a Python expression) with a plain
 * `python -c`, independently of ml_python_probe(). */
static void ask_python(char *dst, size_t dstsz, const char *expr)
{
	char *out = capture(NULL, "'%s' -c 'import os, sys; print(%s)'", PY, expr);
	out[strcspn(out, "\n")] = '\0';
	snprintf(dst, dstsz, "%s", out);
	free(out);
}

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("venv");
	if (!f->tmp)
		return -1;
	pf(f->wheels, "%s/wheels", f->tmp);
	pf(f->bad, "%s/bad", f->tmp);
	pf(f->cache, "%s/cache", f->tmp);
	ml_err err = ML_ERR_INIT;
	f->have_python = find_test_python(PY, sizeof PY);
	if (f->have_python && ml_python_probe(&f->py, PY, &err) != 0) {
		snprintf(PY, sizeof PY, "%s", err.msg);
		f->have_python = false;
	}
	if (f->have_python) {
		ask_python(f->xy, sizeof f->xy, "\"%d.%d\" % sys.version_info[:2]");
		ask_python(f->base_prefix, sizeof f->base_prefix,
		           "os.path.realpath(sys.base_prefix)");
		/* The platform wheel is built for this interpreter's tag. */
		if (sh("python3 tests/fixtures/make_wheels.py '%s' --python %s >/dev/null",
		       f->wheels, f->xy) != 0)
			return -1;
	} else {
		printf("# no interpreter, the venv tests skip: %s\n", PY);
		if (!make_fixtures("make_wheels.py", f->wheels))
			return -1;
	}
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

static bool need_python(const fx *f)
{
	if (!f->have_python) {
		printf("# no CPython >= 3.11: %s\n", PY);
		skip();
	}
	return f->have_python;
}

/* Builds a committed venv at <tmp>/<name>/.venv, with the fixture wheels
 * when with_wheels. Writes the target into target. */
static void make_venv(fx *f, const char *name, bool with_wheels, char *target)
{
	char dir[4096];
	pf(dir, "%s/%s", f->tmp, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	pf(target, "%s/.venv", dir);
	ml_envlock *lock = NULL;
	ml_env_stage *stage = NULL;
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_lock(&lock, target, true, &err), 0);
	assert_int_equal(ml_env_stage_begin(&stage, lock, &err), 0);
	assert_int_equal(ml_env_layout_init(&env, stage->path, stage->target, f->py.xy, &err), 0);
	if (ml_venv_create(&env, &f->py, NULL, &err) != 0)
		fail_msg("venv: %s", err.msg);
	if (with_wheels) {
		char path[4096], names[3][4096];
		char *tsv = slurp(pf(path, "%s/wheels.tsv", f->wheels), NULL);
		ml_wheel_job jobs[3];
		memset(jobs, 0, sizeof jobs); /* unpacked: NULL */
		size_t n = 0;
		char shas[3][65];
		for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
			char name_[256], sha[65];
			if (sscanf(line, "%255[^\t]\t%64s", name_, sha) != 2 || n == 3)
				continue;
			if (strncmp(name_, "purepkg-", 8) && strncmp(name_, "platpkg-", 8) &&
			    strncmp(name_, "datapkg-", 8))
				continue;
			pf(names[n], "%s/%s", f->wheels, name_);
			memcpy(shas[n], sha, 65);
			jobs[n].path = names[n];
			jobs[n].sha256 = shas[n];
			jobs[n].filename = strrchr(names[n], '/') + 1;
			jobs[n].requested = strncmp(name_, "purepkg-", 8) == 0;
			n++;
		}
		free(tsv);
		assert_int_equal(n, 3);
		ml_wheels_opts o = ML_WHEELS_OPTS_INIT;
		o.cache_dir = f->cache;
		ml_wheel_result res[3];
		if (ml_wheels_install_all(res, jobs, n, &env, &o, &err) != 0)
			fail_msg("install: %s", err.msg);
	}
	assert_int_equal(ml_env_stage_commit(stage, &err), 0);
	ml_env_stage_abort(stage);
	ml_env_unlock(lock);
}

static void test_probe_reports_version_and_real_executable(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	assert_true(f->py.is_cpython);
	assert_string_equal(f->py.implementation, "cpython");
	assert_int_equal(f->py.major, 3);
	assert_true(f->py.minor >= 11);
	assert_string_equal(f->py.xy, f->xy);
	assert_string_equal(f->py.executable, PY);
	assert_string_equal(f->py.prefix, f->base_prefix);
	ml_python_info info;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_python_probe(&info, "/nonexistent/python3", &err), ML_ENOENT);
	assert_int_equal(ml_python_probe(&info, "/bin/false", &err), ML_EFAIL);
	assert_non_null(strstr(err.hint, "--python"));
}

static void test_python_dir_follows_xdg_data_home(void **state)
{
	char dst[4096];
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *xdg = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME")) : NULL;
	assert_int_equal(ml_python_dir(dst, sizeof dst, "/opt/py"), 0);
	assert_string_equal(dst, "/opt/py");
	setenv("XDG_DATA_HOME", "/xdg", 1);
	assert_int_equal(ml_python_dir(dst, sizeof dst, NULL), 0);
	assert_string_equal(dst, "/xdg/mlsetup/pythons");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/u", 1);
	assert_int_equal(ml_python_dir(dst, sizeof dst, NULL), 0);
	assert_string_equal(dst, "/home/u/.local/share/mlsetup/pythons");
	if (home)
		setenv("HOME", home, 1);
	if (xdg)
		setenv("XDG_DATA_HOME", xdg, 1);
	free(home);
	free(xdg);
}

static void test_venv_has_the_pep405_layout(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	char target[4096], path[4096], link[4096];
	make_venv(f, "layout", false, target);
	char *cfg = slurp(pf(path, "%s/pyvenv.cfg", target), NULL);
	char want[16384], home[4096];
	snprintf(home, sizeof home, "%s", PY);
	*strrchr(home, '/') = '\0';
	sf(want, sizeof want,
	   "home = %s\n"
	   "include-system-site-packages = false\n"
	   "version = %s\n"
	   "executable = %s\n"
	   "command = %s -m venv --without-pip %s\n"
	   "mlsetup = %s\n",
	   home, f->py.version, PY, PY, target, ML_VERSION);
	assert_string_equal(cfg, want);
	free(cfg);
	char pyxy[32];
	sf(pyxy, sizeof pyxy, "bin/python%s", f->xy);
	const struct {
		const char *rel, *to;
	} links[] = {
	        {"bin/python", PY}, {"bin/python3", "python"}, {pyxy, "python"}, {"lib64", "lib"}};
	for (size_t i = 0; i < 4; i++) {
		ssize_t n =
		        readlink(pf(path, "%s/%s", target, links[i].rel), link, sizeof link - 1);
		assert_true(n > 0);
		link[n] = '\0';
		assert_string_equal(link, links[i].to);
	}
	struct stat st;
	assert_int_equal(stat(pf(path, "%s/lib/python%s/site-packages", target, f->xy), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(pf(path, "%s/include", target), &st), 0);
	char *gi = slurp(pf(path, "%s/.gitignore", target), NULL);
	assert_non_null(strstr(gi, "\n*\n"));
	free(gi);
	const char *scripts[] = {"activate", "activate.fish", "activate.csh", "Activate.ps1"};
	for (size_t i = 0; i < 4; i++) {
		char *s = slurp(pf(path, "%s/bin/%s", target, scripts[i]), NULL);
		assert_non_null(s);
		char q[4200];
		sf(q, sizeof q, "'%s'", target);
		if (!strstr(s, q))
			fail_msg("%s does not set VIRTUAL_ENV to %s", scripts[i], q);
		assert_non_null(strstr(s, "(.venv) "));
		assert_null(strstr(s, "mlsetup-stage"));
		free(s);
	}
}

static void test_the_venv_python_reports_the_environment_as_its_prefix(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	char target[4096];
	make_venv(f, "prefix", false, target);
	int st = 0;
	char *out = capture(&st,
	                    "'%s/bin/python' -c 'import sys; print(sys.prefix); "
	                    "print(sys.base_prefix); print(sys.executable)'",
	                    target);
	char want[16384];
	sf(want, sizeof want, "%s\n%s\n%s/bin/python\n", target, f->base_prefix, target);
	assert_int_equal(st, 0);
	assert_string_equal(out, want);
	free(out);
	/* python3 and python3.X are the same environment. */
	out = capture(&st, "'%s/bin/python%s' -c 'import sys; print(sys.prefix)'", target, f->xy);
	sf(want, sizeof want, "%s\n", target);
	assert_string_equal(out, want);
	free(out);
}

static void test_fixture_wheels_import_and_their_scripts_run(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	char target[4096];
	make_venv(f, "venv-wheels", true, target);
	int st = 0;
	char *out = capture(&st,
	                    "cd / && '%s/bin/python' -c 'import purepkg, platpkg, datapkg, "
	                    "datapkg_extra, datapkg_plat; print(purepkg.VALUE, platpkg.VALUE, "
	                    "datapkg.VALUE, datapkg_extra.EXTRA, datapkg_plat.PLAT)' 2>&1",
	                    target);
	assert_string_equal(out, "pure plat data purelib platlib\n");
	assert_int_equal(st, 0);
	free(out);
	out = capture(&st,
	              "cd / && '%s/bin/purepkg-hello' && '%s/bin/purepkg-gui' && "
	              "'%s/bin/datapkg-run' && '%s/bin/datapkg-unbuffered' && '%s/bin/plain.sh'; "
	              "'%s/bin/purepkg-sub'; echo \"exit $?\"",
	              target, target, target, target, target, target);
	assert_string_equal(out, "purepkg-hello ok\npurepkg-gui ok\ndatapkg-run ok data\n"
	                         "unbuffered ok\nplain ok\npurepkg-sub ok\nexit 3\n");
	free(out);
}

static bool have_pip(void)
{
	return sh("'%s' -m pip --version >/dev/null 2>&1", PY) == 0;
}

static void test_pip_sees_the_packages_as_installed_by_mlsetup(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	if (!have_pip()) {
		printf("# no pip for %s: skipped\n", PY);
		skip();
		return;
	}
	char target[4096], path[4096];
	make_venv(f, "pip", true, target);
	int st = 0;
	char *out = capture(&st,
	                    "'%s' -m pip --disable-pip-version-check --python '%s/bin/python' list "
	                    "-v --format=json 2>/dev/null | '%s' -c 'import json, sys\n"
	                    "for p in sorted(json.load(sys.stdin), key=lambda p: p[\"name\"]):\n"
	                    "    print(p[\"name\"], p[\"version\"], p[\"installer\"])'",
	                    PY, target, PY);
	assert_int_equal(st, 0);
	assert_string_equal(out, "datapkg 0.5 mlsetup\nplatpkg 2.0 mlsetup\npurepkg 1.0 mlsetup\n");
	free(out);
	/* pip can uninstall what we installed: RECORD is right. */
	out = capture(&st,
	              "'%s' -m pip --disable-pip-version-check --python '%s/bin/python' uninstall "
	              "-y datapkg 2>&1",
	              PY, target);
	diag(out);
	assert_int_equal(st, 0);
	free(out);
	assert_false(exists(pf(path, "%s/bin/datapkg-run", target)));
	assert_false(exists(pf(path, "%s/include/site/python%s/datapkg/datapkg.h", target, f->xy)));
	assert_false(exists(pf(path, "%s/share/datapkg/readme.txt", target)));
	assert_false(exists(
	        pf(path, "%s/lib/python%s/site-packages/datapkg-0.5.dist-info", target, f->xy)));
	assert_true(exists(pf(path, "%s/bin/purepkg-hello", target)));
}

static void test_bash_activate_enters_and_deactivate_leaves(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	char target[4096];
	make_venv(f, "activate", false, target);
	int st = 0;
	char *out =
	        capture(&st,
	                "env -i PATH=/usr/bin:/bin PYTHONHOME=/bogus bash --norc -c 'PS1=\"\\$ \"\n"
	                ". \"%s/bin/activate\"\n"
	                "echo \"env=$VIRTUAL_ENV\"\n"
	                "echo \"ps1=$PS1\"\n"
	                "echo \"home=${PYTHONHOME-unset}\"\n"
	                "command -v python\n"
	                "python -c \"import sys; print(sys.prefix)\"\n"
	                "deactivate\n"
	                "echo \"after=${VIRTUAL_ENV-unset} $PATH $PYTHONHOME $PS1\"\n"
	                "type deactivate >/dev/null 2>&1 || echo gone\n'",
	                target);
	char want[16384];
	sf(want, sizeof want,
	   "env=%s\nps1=(.venv) $ \nhome=unset\n%s/bin/python\n%s\n"
	   "after=unset /usr/bin:/bin /bogus $ \ngone\n",
	   target, target, target);
	assert_string_equal(out, want);
	assert_int_equal(st, 0);
	free(out);
}

static void test_activate_scripts_quote_hostile_paths(void **state)
{
	fx *f = *state;
	if (!need_python(f))
		return;
	char target[4096], path[4096];
	make_venv(f, "it's $(touch pwned) `x` \"q\" !h", false, target);
	int st = 0;
	char *out;
	/* Source it from inside the directory with the odd name. */
	char dir[4096];
	pf(dir, "%s/it's $(touch pwned) `x` \"q\" !h", f->tmp);
	FILE *script = fopen(pf(path, "%s/t.sh", f->tmp), "w");
	fprintf(script, ". ./.venv/bin/activate && printf '%%s\\n' \"$VIRTUAL_ENV\" && python -c "
	                "'import sys; print(sys.prefix)'\n");
	fclose(script);
	char cmd[8192];
	sf(cmd, sizeof cmd, "%s/t.sh", f->tmp);
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(99);
		int fd = open(pf(path, "%s/out.txt", f->tmp), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		execl("/bin/bash", "bash", "--norc", cmd, (char *)NULL);
		_exit(98);
	}
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	out = slurp(pf(path, "%s/out.txt", f->tmp), NULL);
	char want[8400];
	sf(want, sizeof want, "%s\n%s\n", target, target);
	assert_string_equal(out, want);
	free(out);
	assert_false(exists(pf(path, "%s/pwned", dir)));
	assert_false(exists("pwned"));
	/* The other shells' scripts quote by their own rules. */
	char *fish = slurp(pf(path, "%s/bin/activate.fish", target), NULL);
	assert_non_null(strstr(fish, "it\\'s $(touch pwned) `x` \"q\" !h/.venv'"));
	free(fish);
	char *csh = slurp(pf(path, "%s/bin/activate.csh", target), NULL);
	assert_non_null(strstr(csh, "it'\\''s $(touch pwned) `x` \"q\" \\!h/.venv'"));
	free(csh);
	char *ps1 = slurp(pf(path, "%s/bin/Activate.ps1", target), NULL);
	assert_non_null(strstr(ps1, "it''s $(touch pwned) `x` \"q\" !h/.venv'"));
	free(ps1);
}

static void test_venv_refuses_mismatched_or_non_cpython_interpreters(void **state)
{
	fx *f = *state;
	ml_python_info py;
	memset(&py, 0, sizeof py);
	strcpy(py.implementation, "pypy");
	strcpy(py.xy, "3.11");
	strcpy(py.executable, "/usr/bin/pypy3");
	py.major = 3;
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	char root[4096];
	pf(root, "%s/refuse", f->tmp);
	assert_int_equal(ml_env_layout_init(&env, root, root, "3.11", &err), 0);
	assert_int_equal(ml_venv_create(&env, &py, NULL, &err), ML_EFAIL);
	py.is_cpython = true;
	strcpy(py.xy, "3.12");
	assert_int_equal(ml_venv_create(&env, &py, NULL, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "3.12"));
	assert_false(exists(root));
}

/* --- python-build-standalone style archives ------------------------------------------ */

static char *sha_of(const char *path)
{
	return capture(NULL, "sha256sum '%s' | cut -c1-64 | tr -d '\\n'", path);
}

static void test_python_unpack_installs_an_interpreter_once(void **state)
{
	fx *f = *state;
	char archive[4096], root[4096], out[4096], again[4096], path[4096];
	pf(archive, "%s/tar-good.tar.gz", f->bad);
	pf(root, "%s/pythons", f->tmp);
	char *sha = sha_of(archive);
	ml_err err = ML_ERR_INIT;
	if (ml_python_unpack(out, sizeof out, archive, sha, root, "cpython-3.11-test", &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(out, pf(path, "%s/cpython-3.11-test/python/bin/python3", root));
	char *run = capture(NULL, "'%s'", out);
	assert_string_equal(run, "fake python\n");
	free(run);
	assert_true(exists(pf(path, "%s/cpython-3.11-test/%s", root, ML_ENV_MARKER)));
	/* Again: reused without reading the archive. */
	assert_int_equal(ml_python_unpack(again, sizeof again, "/nonexistent.tar.gz", sha, root,
	                                  "cpython-3.11-test", &err),
	                 0);
	assert_string_equal(again, out);
	char *ls = capture(NULL, "ls -A '%s'", root);
	assert_string_equal(ls, ".cpython-3.11-test.lock\ncpython-3.11-test\n");
	free(ls);
	free(sha);
}

static void test_python_unpack_refuses_bad_archives_and_leaves_nothing(void **state)
{
	fx *f = *state;
	static const struct {
		const char *file;
		int rc;
		const char *says;
		bool wrong_sha;
	} cases[] = {
	        {"tar-symlink-chain.tar.gz", ML_EINTEGRITY, "leaves the tree", false},
	        {"tar-symlink-out.tar.gz", ML_EINTEGRITY, "leaves the tree", false},
	        {"tar-trailing.tar.gz", ML_EINTEGRITY, "trailing data", false},
	        {"tar-setuid.tar.gz", ML_EINTEGRITY, "no python/bin/python3", false},
	        {"tar-good.tar.gz", ML_EINTEGRITY, "expected", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char archive[4096], root[4096], out[4096];
		pf(archive, "%s/%s", f->bad, cases[i].file);
		pf(root, "%s/pythons-bad-%zu", f->tmp, i);
		char *sha = sha_of(archive);
		if (cases[i].wrong_sha)
			sha[0] = sha[0] == '0' ? '1' : '0';
		ml_err err = ML_ERR_INIT;
		int rc = ml_python_unpack(out, sizeof out, archive, sha, root, "cpython-bad", &err);
		if (rc != cases[i].rc || !strstr(err.msg, cases[i].says))
			fail_msg("%s: rc %d '%s'", cases[i].file, rc, err.msg);
		char *ls = capture(NULL, "ls -A '%s'", root);
		assert_string_equal(ls, ".cpython-bad.lock\n");
		free(ls);
		free(sha);
	}
	char out[4096];
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_python_unpack(out, sizeof out, "x", NULL, f->tmp, "../x", &err),
	                 ML_EFAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_probe_reports_version_and_real_executable),
	        cmocka_unit_test(test_python_dir_follows_xdg_data_home),
	        cmocka_unit_test(test_venv_has_the_pep405_layout),
	        cmocka_unit_test(test_the_venv_python_reports_the_environment_as_its_prefix),
	        cmocka_unit_test(test_fixture_wheels_import_and_their_scripts_run),
	        cmocka_unit_test(test_pip_sees_the_packages_as_installed_by_mlsetup),
	        cmocka_unit_test(test_bash_activate_enters_and_deactivate_leaves),
	        cmocka_unit_test(test_activate_scripts_quote_hostile_paths),
	        cmocka_unit_test(test_venv_refuses_mismatched_or_non_cpython_interpreters),
	        cmocka_unit_test(test_python_unpack_installs_an_interpreter_once),
	        cmocka_unit_test(test_python_unpack_refuses_bad_archives_and_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
#endif /* _WIN32 */
