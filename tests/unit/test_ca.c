/*
 * test_ca.c - specs for finding CA certificates (platform/linux/os.c
 * ml_os_ca_file / ml_os_ca_dir) and for handing them to libgit2
 * (src/core/git.c ml_git_init): the environment wins, a directory alone
 * is honoured, and otherwise a distribution's bundle is found.
 */
#ifdef _WIN32
#include "win_skip.h"
ML_LINUX_ONLY_PROGRAM("CA bundle files; Windows' TLS (Schannel, WinHTTP) uses the system store")
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlsetup/core.h"

static int clear_env(void **state)
{
	(void)state;
	unsetenv("SSL_CERT_FILE");
	unsetenv("SSL_CERT_DIR");
	return 0;
}

static void test_ssl_cert_file_wins(void **state)
{
	(void)state;
	setenv("SSL_CERT_FILE", "/some/bundle.pem", 1);
	assert_string_equal(ml_os_ca_file(), "/some/bundle.pem");
	assert_null(ml_os_ca_dir());
	setenv("SSL_CERT_DIR", "/some/dir", 1);
	assert_string_equal(ml_os_ca_file(), "/some/bundle.pem");
	assert_string_equal(ml_os_ca_dir(), "/some/dir");
}

static void test_ssl_cert_dir_alone_is_honoured(void **state)
{
	(void)state;
	setenv("SSL_CERT_DIR", "/some/dir", 1);
	assert_null(ml_os_ca_file());
	assert_string_equal(ml_os_ca_dir(), "/some/dir");
}

static void test_empty_variables_count_as_unset(void **state)
{
	(void)state;
	setenv("SSL_CERT_FILE", "", 1);
	setenv("SSL_CERT_DIR", "", 1);
	const char *f = ml_os_ca_file();
	assert_true(f == NULL || f[0] == '/');
}

static void test_without_environment_a_distribution_bundle_is_found(void **state)
{
	(void)state;
	const char *f = ml_os_ca_file(), *d = ml_os_ca_dir();
	struct stat st;
	if (!f && !d)
		skip(); /* a machine with no CA certificates installed */
	if (f) {
		assert_int_equal(stat(f, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_null(d); /* the bundle is enough */
	} else {
		assert_int_equal(stat(d, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
}

/* Runs ml_git_init() in a child (it initializes once per process) with
 * SSL_CERT_FILE set to file; returns its result. */
static int git_init_with(const char *file)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("SSL_CERT_FILE", file, 1);
		ml_err err = ML_ERR_INIT;
		int rc = ml_git_init(&err);
		_exit(rc == 0 ? 0 : strstr(err.msg, file) ? 1 : 2);
	}
	int ws = 0;
	waitpid(pid, &ws, 0);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void test_git_init_loads_the_ca_bundle(void **state)
{
	(void)state;
	setenv("SSL_CERT_FILE", "", 1);
	const char *bundle = ml_os_ca_file();
	if (!bundle)
		skip();
	char copy[4096];
	ml_strlcpy(copy, bundle, sizeof(copy));
	assert_int_equal(git_init_with(copy), 0);
}

static void test_git_init_names_a_ca_bundle_it_cannot_load(void **state)
{
	(void)state;
	assert_int_equal(git_init_with("/nonexistent/mlsetup-ca.pem"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup(test_ssl_cert_file_wins, clear_env),
	        cmocka_unit_test_setup(test_ssl_cert_dir_alone_is_honoured, clear_env),
	        cmocka_unit_test_setup(test_empty_variables_count_as_unset, clear_env),
	        cmocka_unit_test_setup(test_without_environment_a_distribution_bundle_is_found,
	                               clear_env),
	        cmocka_unit_test_setup(test_git_init_loads_the_ca_bundle, clear_env),
	        cmocka_unit_test_setup(test_git_init_names_a_ca_bundle_it_cannot_load, clear_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif /* _WIN32 */
