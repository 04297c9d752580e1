/*
 * pyfind.c - the CPython interpreters already on this machine, for
 * --python-preference (uv's names): `system` plans with one of them
 * before any download, `managed` falls back to one when the pinned
 * interpreter cannot be fetched for a network reason. Looked for as uv
 * and the test suite do: python3.N and python3 in every PATH directory,
 * then in /usr/local/bin and /usr/bin (on Windows: python.exe and
 * python3.exe in every PATH directory, then python.org's per-user and
 * all-users install directories); each candidate is asked (python
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

/* Tries path: adds it when it is a new CPython. */
static void try_path(ml_python_found *found, size_t *n, const char *path)
{
	char real[4096];
	struct stat st;
	if (*n >= MAX_FOUND || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    access(path, X_OK) != 0)
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

/* Appends dir/name and a NUL to *list unless it is too long for a path;
 * *oom is set when memory runs out. */
static void add_candidate(ml_buf *list, bool *oom, const char *dir, const char *sep,
                          const char *name)
{
	size_t l = strlen(dir);
	while (l > 1 && (dir[l - 1] == '/' || dir[l - 1] == '\\'))
		l--;
	if (l + strlen(name) + 2 < 4096 &&
	    (ml_buf_printf(list, "%.*s%s%s", (int)l, dir, sep, name) || ml_buf_add(list, "", 1)))
		*oom = true;
}

/* An absolute directory of a PATH entry: "/usr/bin"; on Windows also
 * "C:\Python312" and "\\server\share". */
static bool absolute_dir(const char *d, bool windows)
{
	if (d[0] == '/')
		return true;
	return windows && ((((d[0] | 0x20) >= 'a' && (d[0] | 0x20) <= 'z') && d[1] == ':' &&
	                    (d[2] == '\\' || d[2] == '/')) ||
	                   (d[0] == '\\' && d[1] == '\\'));
}

int ml_python_candidates(ml_buf *list, const char *path, bool windows, const char *local_appdata,
                         const char *program_files)
{
	char *copy = strdup(path ? path : "");
	if (!copy)
		return ML_ENOMEM;
	const char *sep = windows ? "\\" : "/";
	char name[32];
	bool oom = false;
	for (char *save = NULL, *d = strtok_r(copy, windows ? ";" : ":", &save); d;
	     d = strtok_r(NULL, windows ? ";" : ":", &save)) {
		if (!absolute_dir(d, windows))
			continue; /* "" or "." would find a planted python */
		if (windows) {
			/* python.org's installers, the Store's app aliases and
			 * conda all name it python.exe (python3.exe beside) */
			add_candidate(list, &oom, d, sep, "python.exe");
			add_candidate(list, &oom, d, sep, "python3.exe");
			continue;
		}
		for (int minor = 19; minor >= 8; minor--) {
			snprintf(name, sizeof(name), "python3.%d", minor);
			add_candidate(list, &oom, d, sep, name);
		}
		add_candidate(list, &oom, d, sep, "python3");
	}
	free(copy);
	if (!windows) {
		const char *dirs[] = {"/usr/local/bin", "/usr/bin"};
		for (size_t k = 0; k < 2; k++) {
			for (int minor = 19; minor >= 8; minor--) {
				snprintf(name, sizeof(name), "python3.%d", minor);
				add_candidate(list, &oom, dirs[k], sep, name);
			}
			add_candidate(list, &oom, dirs[k], sep, "python3");
		}
		return oom ? ML_ENOMEM : 0;
	}
	/* Not on PATH (the installer's default leaves it off): python.org's
	 * per-user then all-users install directories, newest first. */
	const char *roots[] = {local_appdata, program_files};
	const char *subs[] = {"Programs\\Python\\Python3", "Python3"};
	for (size_t k = 0; k < 2; k++) {
		if (!roots[k] || !absolute_dir(roots[k], true))
			continue;
		for (int minor = 19; minor >= 8; minor--) {
			char dir[4096];
			if (snprintf(dir, sizeof(dir), "%s\\%s%d", roots[k], subs[k], minor) <
			    (int)sizeof(dir))
				add_candidate(list, &oom, dir, sep, "python.exe");
		}
	}
	return oom ? ML_ENOMEM : 0;
}

int ml_python_find_system(ml_python_found **out, size_t *n_out, ml_err *err)
{
	ml_python_found *found = calloc(MAX_FOUND, sizeof(*found));
	ml_buf list = ML_BUF_INIT;
#ifdef _WIN32
	int rc = ml_python_candidates(&list, getenv("PATH"), true, getenv("LOCALAPPDATA"),
	                              getenv("ProgramFiles"));
#else
	int rc = ml_python_candidates(&list, getenv("PATH"), false, NULL, NULL);
#endif
	if (!found || rc) {
		free(found);
		ml_buf_release(&list);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	size_t n = 0;
	for (size_t off = 0; off < list.len; off += strlen(list.data + off) + 1)
		try_path(found, &n, list.data + off);
	ml_buf_release(&list);
	*out = found;
	*n_out = n;
	return 0;
}
