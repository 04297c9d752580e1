/*
 * env_testutil.h - helpers the env-stage specs share (test_extract.c,
 * test_wheel.c, test_venv.c, test_env.c): temporary directories, running
 * the fixture generators in tests/fixtures/, finding a CPython >= 3.11,
 * running shell commands and capturing their output, reading files, and a
 * listing of a directory tree (paths, types, modes, sizes, link targets,
 * sha256 of contents) to prove that something stayed byte-identical.
 *
 * Tests run from the repository root (tests/run-tests.sh does that).
 * Everything here is static: include it once per test program.
 */
#ifndef MLSETUP_BUILD_TESTUTIL_H
#define MLSETUP_BUILD_TESTUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
/* The Windows build (make check-windows): system() and pclose() return the
 * command's exit status itself; trees are removed without a shell. */
#include "mlsetup/core.h"
#define WIFEXITED(st)   1
#define WEXITSTATUS(st) (st)
#else
#include <sys/wait.h>
#endif

/* Formats a path into dst, which must hold 4096 bytes; returns dst. */
static __attribute__((format(printf, 2, 3), unused)) char *pf(char *dst, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, 4096, fmt, ap);
	va_end(ap);
	return dst;
}

/* snprintf without the compiler's truncation guesses (tests size their
 * buffers generously). Returns dst. */
static __attribute__((format(printf, 3, 4), unused)) char *sf(char *dst, size_t sz, const char *fmt,
                                                              ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, sz, fmt, ap);
	va_end(ap);
	return dst;
}

/* Formats a command and runs it with /bin/sh; returns its exit status
 * (-1 when it could not run or was killed). */
static __attribute__((format(printf, 1, 2), unused)) int sh(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	fflush(stdout);
	int st = system(cmd);
	return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

/* Runs a formatted command and returns its standard output (malloc'd,
 * never NULL); *status (may be NULL) gets the exit status. */
static __attribute__((format(printf, 2, 3), unused)) char *capture(int *status, const char *fmt,
                                                                   ...)
{
	char cmd[16384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	fflush(stdout);
	FILE *p = popen(cmd, "r");
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	buf[0] = '\0';
	if (!p) {
		if (status)
			*status = -1;
		return buf;
	}
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	buf[len] = '\0';
	int st = pclose(p);
	if (status)
		*status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* Prints text as TAP diagnostics: every line prefixed with "# ", so no
 * line of it can read as a test result. */
static __attribute__((unused)) void diag(const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("# %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* A new empty directory under $TMPDIR or /tmp (caller frees the string). */
static __attribute__((unused)) char *tmpdir_new(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p = malloc(4096);
	snprintf(p, 4096, "%s/mlsetup-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static __attribute__((unused)) void rm_rf(const char *path)
{
#ifdef _WIN32
	if (path && *path)
		ml_fs_rm_tree(path);
#else
	if (path && *path)
		sh("chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", path, path);
#endif
}

/* Whole file as a string (NULL when unreadable); *len gets its size. */
static __attribute__((unused)) char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, r;
	char *buf = malloc(cap);
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static __attribute__((unused)) bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Runs tests/fixtures/<script> OUTDIR; returns true when it worked. */
static __attribute__((unused)) bool make_fixtures(const char *script, const char *outdir)
{
	char path[512];
	snprintf(path, sizeof path, "tests/fixtures/%s", script);
	if (!exists(path)) {
		fprintf(stderr, "# %s not found: run the tests from the repository root\n", path);
		return false;
	}
	return sh("python3 '%s' '%s'", path, outdir) == 0;
}

/* Finds the CPython >= 3.11 the tests build environments with
 * (tests/fixtures/find_python.sh: $MLSETUP_TEST_PYTHON when set, else
 * /usr/bin, /usr/local/bin, PATH; shims and virtualenvs resolved to the
 * real executable, which must have its own prefix). Returns true with its
 * path in dst (dstsz bytes), or false with the reason there. */
static __attribute__((unused)) bool find_test_python(char *dst, size_t dstsz)
{
	int st = -1;
	char *out = capture(&st, "sh tests/fixtures/find_python.sh 2>&1");
	out[strcspn(out, "\n")] = '\0';
	snprintf(dst, dstsz, "%s", *out ? out : "tests/fixtures/find_python.sh did not run");
	free(out);
	return st == 0 && dst[0] == '/';
}

/* A listing of every path under dir with type, mode, size, link target
 * and the sha256 of regular files: equal listings mean byte-identical
 * trees. Caller frees. */
static __attribute__((unused)) char *tree_listing(const char *dir)
{
	return capture(NULL,
	               "cd '%s' && find . -printf '%%P|%%y|%%m|%%s|%%l|%%i\\n' | LC_ALL=C sort && "
	               "find . -type f -exec sha256sum {} + | LC_ALL=C sort",
	               dir);
}

#endif /* MLSETUP_BUILD_TESTUTIL_H */
