/*
 * test_env.c - specs for atomic environments (src/env/stage.c;
 * docs/reliability.md "Crashes, resources, concurrency"): one install per
 * target (the lock), the staging directory beside the target, a commit
 * that leaves either the old or the new complete environment at the
 * target at every moment, an abort that leaves the old one
 * byte-identical, and the cleanup after crashed runs.
 */
#ifdef _WIN32
#include "win_skip.h"
ML_LINUX_ONLY_PROGRAM("builds environments with a Linux CPython (fork, /bin/sh)")
#else
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/env.h"

typedef struct fx {
	char *tmp;
	int seq;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("env");
	if (!f->tmp)
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

/* A fresh project directory; *target gets <dir>/.venv. */
static void project(fx *f, char *dir, char *target)
{
	pf(dir, "%s/proj-%d", f->tmp, f->seq++);
	assert_int_equal(sh("mkdir -p '%s'", dir), 0);
	pf(target, "%s/.venv", dir);
}

static ml_envlock *lock_ok(const char *target)
{
	ml_envlock *l = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_env_lock(&l, target, true, &err) != 0)
		fail_msg("lock: %s", err.msg);
	return l;
}

/* Builds and commits an environment holding `files` files stamped with
 * `version`, plus files.txt naming them all. */
static void build_env(const char *target, const char *version, int files)
{
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	assert_int_equal(sh("cd '%s' && mkdir -p bin lib && for i in $(seq 1 %d); do echo '%s' > "
	                    "lib/f$i; echo lib/f$i >> files.txt; done && echo '%s' > bin/version",
	                    s->path, files, version, version),
	                 0);
	if (ml_env_stage_commit(s, &err) != 0)
		fail_msg("commit: %s", err.msg);
	ml_env_stage_abort(s);
	ml_env_unlock(l);
}

/* build_env() for a child process that is about to be killed: no cmocka
 * asserts and no helper processes, which would outlive it. */
static void child_build(const char *target, const char *version, int files)
{
	ml_envlock *l = NULL;
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_env_lock(&l, target, true, &err) || ml_env_stage_begin(&s, l, &err))
		_exit(2);
	char path[4096];
	mkdir(pf(path, "%s/lib", s->path), 0755);
	mkdir(pf(path, "%s/bin", s->path), 0755);
	FILE *list = fopen(pf(path, "%s/files.txt", s->path), "w");
	for (int i = 1; list && i <= files; i++) {
		FILE *o = fopen(pf(path, "%s/lib/f%d", s->path, i), "w");
		if (!o)
			_exit(2);
		fprintf(o, "%s\n", version);
		fclose(o);
		fprintf(list, "lib/f%d\n", i);
	}
	if (!list)
		_exit(2);
	fclose(list);
	FILE *v = fopen(pf(path, "%s/bin/version", s->path), "w");
	if (!v)
		_exit(2);
	fprintf(v, "%s\n", version);
	fclose(v);
	if (ml_env_stage_commit(s, &err))
		_exit(2);
	ml_env_stage_abort(s);
	ml_env_unlock(l);
}

static char *leftovers(const char *dir)
{
	return capture(NULL, "ls -A '%s' | grep -v -x -e .venv -e ..venv.mlsetup-lock", dir);
}

static void test_a_second_lock_without_waiting_fails_with_a_clear_error(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096], other[4096];
	project(f, dir, target);
	ml_envlock *a = lock_ok(target);
	ml_envlock *b = NULL;
	ml_err err = ML_ERR_INIT;
	/* The same target spelt differently is the same lock. */
	assert_int_equal(ml_env_lock(&b, pf(other, "%s/./.venv/", dir), false, &err), ML_EFAIL);
	char want[4200];
	sf(want, sizeof want, "another mlsetup (pid %ld) is installing into '%s'", (long)getpid(),
	   ml_env_lock_target(a));
	assert_string_equal(err.msg, want);
	assert_non_null(strstr(err.hint, "--no-wait"));
	ml_env_unlock(a);
	assert_int_equal(ml_env_lock(&b, target, false, &err), 0);
	ml_env_unlock(b);
	ml_env_unlock(NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_a_waiting_lock_blocks_until_the_holder_is_done(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096];
	project(f, dir, target);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		ml_envlock *l = NULL;
		ml_err err = ML_ERR_INIT;
		if (ml_env_lock(&l, target, true, &err) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		usleep(300000);
		ml_env_unlock(l);
		_exit(0);
	}
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	double t0 = now_s();
	ml_envlock *l = lock_ok(target);
	assert_true(now_s() - t0 > 0.2);
	ml_env_unlock(l);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p[0]);
	close(p[1]);
}

static void test_the_lock_makes_the_target_absolute_and_creates_its_parents(void **state)
{
	fx *f = *state;
	char cwd[4096], want[4096], real[4096];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(f->tmp), 0);
	ml_envlock *l = lock_ok("new/deep/.venv");
	assert_int_equal(chdir(cwd), 0);
	assert_non_null(realpath(f->tmp, real));
	assert_string_equal(ml_env_lock_target(l), pf(want, "%s/new/deep/.venv", real));
	assert_true(exists(pf(want, "%s/new/deep/..venv.mlsetup-lock", real)));
	ml_env_unlock(l);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_lock(&l, "/", true, &err), ML_EFAIL);
	assert_int_equal(ml_env_lock(&l, "", true, &err), ML_EFAIL);
}

static void test_commit_puts_a_complete_environment_in_place(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096], path[4096];
	project(f, dir, target);
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	assert_string_equal(s->target, ml_env_lock_target(l));
	pf(path, "%s/..venv.mlsetup-stage-", dir);
	assert_int_equal(strncmp(s->path, path, strlen(path)), 0);
	assert_false(ml_env_is_complete(s->path));
	assert_int_equal(sh("echo hi > '%s/hello'", s->path), 0);
	assert_false(exists(target));
	assert_int_equal(ml_env_stage_commit(s, &err), 0);
	assert_true(s->committed);
	assert_true(ml_env_is_complete(target));
	assert_true(exists(pf(path, "%s/hello", target)));
	assert_false(exists(s->path));
	assert_int_equal(ml_env_stage_commit(s, &err), ML_EFAIL);
	ml_env_stage_abort(s);
	assert_true(exists(pf(path, "%s/hello", target)));
	ml_env_unlock(l);
	char *left = leftovers(dir);
	assert_string_equal(left, "");
	free(left);
}

static void test_commit_over_an_existing_environment_replaces_it(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096], path[4096];
	project(f, dir, target);
	build_env(target, "v1", 50);
	struct stat before;
	assert_int_equal(stat(target, &before), 0);
	build_env(target, "v2", 10);
	char *v = slurp(pf(path, "%s/bin/version", target), NULL);
	assert_string_equal(v, "v2\n");
	free(v);
	assert_false(exists(pf(path, "%s/lib/f11", target)));
	assert_true(ml_env_is_complete(target));
	char *left = leftovers(dir);
	assert_string_equal(left, "");
	free(left);
}

static void test_abort_leaves_the_old_environment_byte_identical(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096];
	project(f, dir, target);
	build_env(target, "v1", 30);
	char *before = tree_listing(target);
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	assert_int_equal(
	        sh("cd '%s' && mkdir -p lib && echo new > lib/f1 && echo x > extra", s->path), 0);
	ml_env_stage_abort(s); /* the install failed */
	ml_env_unlock(l);
	char *after = tree_listing(target);
	assert_string_equal(before, after);
	char *left = leftovers(dir);
	assert_string_equal(left, "");
	free(left);
	free(before);
	free(after);
}

static void test_leftovers_of_crashed_runs_are_cleaned_and_a_moved_target_restored(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096];
	project(f, dir, target);
	build_env(target, "v1", 20);
	char *before = tree_listing(target);
	/* A commit without RENAME_EXCHANGE was killed between its two renames,
	 * and an older run died while staging. */
	assert_int_equal(
	        sh("cd '%s' && mv .venv ..venv.mlsetup-old-dead && mkdir -p "
	           "..venv.mlsetup-stage-dead/lib && touch ..venv.mlsetup-stage-dead/lib/half && "
	           "chmod 0555 ..venv.mlsetup-stage-dead/lib",
	           dir),
	        0);
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	assert_true(s->recovered);
	assert_int_equal(s->n_stale_removed, 1);
	char *after = tree_listing(target);
	assert_string_equal(before, after);
	ml_env_stage_abort(s);
	ml_env_unlock(l);
	char *left = leftovers(dir);
	assert_string_equal(left, "");
	free(left);
	free(before);
	free(after);
}

static void test_a_target_that_is_not_an_environment_is_never_replaced(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096];
	static const struct {
		const char *setup, *says;
	} cases[] = {
	        {"echo precious > '%1$s'", "is not a directory"},
	        {"mkdir -p '%1$s.real' && ln -s \"$(basename '%1$s').real\" '%1$s'",
	         "is not a directory"},
	        {"mkdir -p '%1$s/src' && echo 'my code' > '%1$s/src/main.c'",
	         "is not a Python environment"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		project(f, dir, target);
		assert_int_equal(sh(cases[i].setup, target), 0);
		ml_envlock *l = lock_ok(target);
		char *before =
		        capture(NULL, "ls -lAR '%s' | grep -v -e mlsetup-lock -e '^total'", dir);
		ml_env_stage *s = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_env_stage_begin(&s, l, &err), ML_EFAIL);
		assert_non_null(strstr(err.msg, cases[i].says));
		assert_non_null(strstr(err.hint, "--target"));
		ml_env_unlock(l);
		char *after =
		        capture(NULL, "ls -lAR '%s' | grep -v -e mlsetup-lock -e '^total'", dir);
		assert_string_equal(before, after);
		assert_false(ml_env_is_complete(target));
		free(before);
		free(after);
	}
	/* The same check runs again at commit: something appeared meanwhile. */
	project(f, dir, target);
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	assert_int_equal(sh("mkdir -p '%s' && echo x > '%s/notes.txt'", target, target), 0);
	assert_int_equal(ml_env_stage_commit(s, &err), ML_EFAIL);
	ml_env_stage_abort(s);
	ml_env_unlock(l);
	char path[4096];
	assert_true(exists(pf(path, "%s/notes.txt", target)));
	/* An empty directory and a plain venv may be replaced. */
	assert_int_equal(sh("rm -rf '%s' && mkdir '%s'", target, target), 0);
	build_env(target, "v1", 1);
	assert_int_equal(sh("rm -rf '%s' && mkdir -p '%s/bin' && touch '%s/pyvenv.cfg'", target,
	                    target, target),
	                 0);
	build_env(target, "v2", 1);
	assert_true(ml_env_is_complete(target));
}

static void test_is_complete_needs_a_real_directory_with_the_marker(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096], link[4096];
	project(f, dir, target);
	assert_false(ml_env_is_complete(target));
	assert_int_equal(sh("mkdir '%s'", target), 0);
	assert_false(ml_env_is_complete(target));
	assert_int_equal(sh("mkdir '%s/%s'", target, ML_ENV_MARKER), 0);
	assert_false(ml_env_is_complete(target));
	assert_int_equal(
	        sh("rmdir '%s/%s' && touch '%s/%s'", target, ML_ENV_MARKER, target, ML_ENV_MARKER),
	        0);
	assert_true(ml_env_is_complete(target));
	assert_int_equal(symlink(target, pf(link, "%s/link", dir)), 0);
	assert_false(ml_env_is_complete(link));
}

/* kill -9 at random points of repeated installs: the target is always a
 * complete environment, old or new, with every file it lists. */
static void test_an_install_killed_at_random_points_never_damages_the_target(void **state)
{
	fx *f = *state;
	char dir[4096], target[4096];
	project(f, dir, target);
	build_env(target, "v0", 40);
	srand((unsigned)getpid());
	int newer = 0;
	for (int round = 0; round < 25; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int k = 1;; k++) {
				char v[32];
				sf(v, sizeof v, "v%d-%d", round, k);
				child_build(target, v, 40 + k % 7);
			}
		}
		usleep((useconds_t)(rand() % 40000));
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		assert_true(ml_env_is_complete(target));
		int missing = sh("cd '%s' && while read p; do test -f \"$p\" || exit 1; done < "
		                 "files.txt && test -s bin/version",
		                 target);
		assert_int_equal(missing, 0);
		char path[4096];
		char *v = slurp(pf(path, "%s/bin/version", target), NULL);
		newer += v && strcmp(v, "v0\n") != 0;
		free(v);
	}
	printf("# %d of 25 kills came after at least one commit\n", newer);
	/* The next run cleans up whatever the killed ones left. */
	ml_envlock *l = lock_ok(target);
	ml_env_stage *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_stage_begin(&s, l, &err), 0);
	ml_env_stage_abort(s);
	ml_env_unlock(l);
	char *left = leftovers(dir);
	assert_string_equal(left, "");
	free(left);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_a_second_lock_without_waiting_fails_with_a_clear_error),
	        cmocka_unit_test(test_a_waiting_lock_blocks_until_the_holder_is_done),
	        cmocka_unit_test(test_the_lock_makes_the_target_absolute_and_creates_its_parents),
	        cmocka_unit_test(test_commit_puts_a_complete_environment_in_place),
	        cmocka_unit_test(test_commit_over_an_existing_environment_replaces_it),
	        cmocka_unit_test(test_abort_leaves_the_old_environment_byte_identical),
	        cmocka_unit_test(
	                test_leftovers_of_crashed_runs_are_cleaned_and_a_moved_target_restored),
	        cmocka_unit_test(test_a_target_that_is_not_an_environment_is_never_replaced),
	        cmocka_unit_test(test_is_complete_needs_a_real_directory_with_the_marker),
	        cmocka_unit_test(test_an_install_killed_at_random_points_never_damages_the_target),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
#endif /* _WIN32 */
