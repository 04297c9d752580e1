/*
 * pyfind.c - the CPython interpreters already on this machine, for
 * --python-preference (uv's names): `system` plans with one of them
 * before any download, `managed` falls back to one when the pinned
 * interpreter cannot be fetched for a network reason. Looked for as uv
 * and the test suite do: python3.N and python3 in every PATH directory,
 * then in /usr/local/bin and /usr/bin; each candidate is asked (python
 * -I -c) what it is, and only real CPython 3 installations are kept (not
 * a virtual environment's python, which cannot host another venv), once
 * per executable behind the links.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_FOUND 64

static const char probe_py[] =
        "import os, sys\n"
        "v = sys.version_info\n"
        "print(sys.implementation.name, '%d.%d.%d' % v[:3], int(sys.prefix == sys.base_prefix),\n"
        "      os.path.realpath(sys.executable))\n";

/* Asks one candidate; fills f and returns true for a CPython 3 that is
 * not a virtual environment. */
static bool probe(ml_python_found *f, const char *path)
{
	const char *argv[] = {path, "-I", "-c", probe_py, NULL};
	char *out = NULL;
	int status = 0;
	if (ml_os_run_capture(&out, &status, argv, 8192, 20, NULL) != 0 || status != 0) {
		free(out);
		return false;
	}
	char impl[32], ver[32], exe[4096];
	int base = 0, a = 0, b = 0, c = 0;
	bool ok = sscanf(out, "%31s %31s %d %4095[^\n]", impl, ver, &base, exe) == 4 &&
	          !strcmp(impl, "cpython") && base == 1 &&
	          sscanf(ver, "%d.%d.%d", &a, &b, &c) == 3 && a == 3;
	free(out);
	if (!ok)
		return false;
	ml_strlcpy(f->executable, exe, sizeof(f->executable));
	ml_strlcpy(f->version, ver, sizeof(f->version));
	snprintf(f->xy, sizeof(f->xy), "%d.%d", a, b);
	return true;
}

/* Tries dir/name: adds it when it is a new CPython. */
static void try_path(ml_python_found *found, size_t *n, const char *dir, const char *name)
{
	char path[4200], real[4096];
	struct stat st;
	if (*n >= MAX_FOUND ||
	    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return;
	/* one probe per executable behind the links (a pyenv shim is a
	 * script: its answer names the real one) */
	if (realpath(path, real))
		for (size_t i = 0; i < *n; i++)
			if (!strcmp(found[i].executable, real))
				return;
	ml_python_found f;
	memset(&f, 0, sizeof(f));
	if (!probe(&f, path))
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(found[i].executable, f.executable))
			return;
	found[(*n)++] = f;
}

static void try_dir(ml_python_found *found, size_t *n, const char *dir)
{
	char name[32];
	for (int minor = 19; minor >= 8; minor--) {
		snprintf(name, sizeof(name), "python3.%d", minor);
		try_path(found, n, dir, name);
	}
	try_path(found, n, dir, "python3");
}

int ml_python_find_system(ml_python_found **out, size_t *n_out, ml_err *err)
{
	ml_python_found *found = calloc(MAX_FOUND, sizeof(*found));
	if (!found)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t n = 0;
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "");
	if (!copy) {
		free(found);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (d[0] == '/')
			try_dir(found, &n, d);
	free(copy);
	try_dir(found, &n, "/usr/local/bin");
	try_dir(found, &n, "/usr/bin");
	*out = found;
	*n_out = n;
	return 0;
}
