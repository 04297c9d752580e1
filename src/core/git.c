/*
 * git.c - the one place libgit2 is initialized, so that every git
 * operation verifies TLS against the same CA certificates libcurl uses
 * (ml_os_ca_file() / ml_os_ca_dir()), whichever distribution the binary
 * runs on: a libgit2 linked into the release binary knows no CA path of
 * its own.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <git2.h>

#include "mlsetup/core.h"

static pthread_once_t git_once = PTHREAD_ONCE_INIT;
static int git_rc;
static char git_msg[512];

static void git_teardown(void)
{
	git_libgit2_shutdown();
}

static void git_setup(void)
{
	if (git_libgit2_init() < 0) {
		const git_error *e = git_error_last();
		snprintf(git_msg, sizeof(git_msg), "cannot initialize libgit2: %s",
		         e && e->message ? e->message : "unknown error");
		git_rc = ML_EFAIL;
		return;
	}
	atexit(git_teardown); /* frees libgit2's global and per-thread state */
#ifdef _WIN32
	/* libgit2 goes through WinHTTP there, which verifies against the
	 * Windows certificate store and takes no CA file. */
	const char *file = NULL, *dir = NULL;
#else
	const char *file = ml_os_ca_file(), *dir = ml_os_ca_dir();
#endif
	if ((file || dir) && git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, dir) < 0) {
		const git_error *e = git_error_last();
		snprintf(git_msg, sizeof(git_msg), "cannot load CA certificates from '%s': %s",
		         file ? file : dir, e && e->message ? e->message : "unknown error");
		git_rc = ML_EFAIL;
	}
}

int ml_git_init(ml_err *err)
{
	pthread_once(&git_once, git_setup);
	if (git_rc) {
		ml_err_set(err, git_rc, "%s", git_msg);
		ml_err_hint(err, "set SSL_CERT_FILE to a PEM bundle of CA certificates");
	}
	return git_rc;
}
