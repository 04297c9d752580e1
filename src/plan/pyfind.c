/*
 * pyfind.c - the CPython interpreters already on this machine, for
 * --python-preference (uv's names): `system` plans with one of them
 * before any download, `managed` falls back to one when the pinned
 * interpreter cannot be fetched for a network reason. Looked for as uv
 * and the test suite do: python3.N and python3 in every PATH directory,
 * then in /usr/local/bin and /usr/bin (on Windows: python.exe and
 * python3.exe in every PATH directory, then the interpreters registered
 * under HKCU and HKLM\Software\Python as PEP 514 describes, then
 * python.org's per-user and all-users install directories); each
 * candidate is asked (python -I -c) what it is, and only real CPython 3
 * installations are kept (not a virtual environment's python, which
 * cannot host another venv), once per executable behind the links.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

#define MAX_FOUND 64
/* registry entries read, all views together */
#define MAX_REG 64

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

/* A path from the registry that can be run as it is: "C:\..." or
 * "\\server\share\..." (not "\dir" or "/dir", which depend on the
 * current drive, nor a relative one). */
static bool registry_absolute(const char *p)
{
	return p && p[0] != '/' && absolute_dir(p, true);
}

/* Appends the interpreters reg[0..n) name, in order (PEP 514
 * "InstallPath"). */
static void add_registry(ml_buf *list, bool *oom, const ml_python_reg *reg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const ml_python_reg *r = &reg[i];
		/* PEP 514: PyLauncher is py.exe's key, not an interpreter's */
		if (r->company && !strcasecmp(r->company, "PyLauncher"))
			continue;
		if (r->executable_path && r->executable_path[0]) {
			/* a relative one would be looked up from the current
			 * directory: a planted python.exe */
			if (registry_absolute(r->executable_path))
				add_candidate(list, oom, r->executable_path, "", "");
		} else if (registry_absolute(r->install_path)) {
			add_candidate(list, oom, r->install_path, "\\", "python.exe");
		}
	}
}

int ml_python_candidates(ml_buf *list, const char *path, bool windows, const ml_python_reg *reg,
                         size_t n_reg, const char *local_appdata, const char *program_files)
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
	add_registry(list, &oom, reg, n_reg);
	/* Neither on PATH (the installer's default leaves it off) nor
	 * registered (PEP 514; an unpacked embeddable one is not):
	 * python.org's per-user then all-users install directories, newest
	 * first. */
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

#ifdef _WIN32
/* What the registry says of the installed interpreters (PEP 514), as
 * UTF-8 copies this struct owns. */
typedef struct reg_found {
	ml_python_reg v[MAX_REG];
	char *owned[4 * MAX_REG];
	size_t n, n_owned;
} reg_found;

/* A new UTF-8 copy of w kept in r->owned; NULL when out of memory. */
static const char *reg_keep(reg_found *r, const wchar_t *w)
{
	char *s = ml_win_utf8(w);
	if (s)
		r->owned[r->n_owned++] = s;
	return s;
}

/* The REG_SZ value name of key (NULL: its default value) into w, wn
 * characters; false when it is missing, empty or of another type. */
static bool reg_string(wchar_t *w, DWORD wn, HKEY key, const wchar_t *name)
{
	DWORD sz = wn * sizeof(wchar_t);
	return RegGetValueW(key, NULL, name, RRF_RT_REG_SZ, NULL, w, &sz) == ERROR_SUCCESS &&
	       w[0] != 0;
}

/* Reads one tag key (<company>\<tag>, open in key) into r. */
static void reg_read_tag(reg_found *r, HKEY key, const wchar_t *company, const wchar_t *tag,
                         REGSAM view)
{
	wchar_t w[4096]; /* a longer path is no candidate */
	HKEY ip;
	if (RegOpenKeyExW(key, L"InstallPath", 0, KEY_READ | view, &ip) != ERROR_SUCCESS)
		return;
	ml_python_reg *e = &r->v[r->n];
	size_t mark = r->n_owned;
	memset(e, 0, sizeof(*e));
	e->company = reg_keep(r, company);
	e->tag = reg_keep(r, tag);
	if (reg_string(w, sizeof(w) / sizeof(w[0]), ip, L"ExecutablePath"))
		e->executable_path = reg_keep(r, w);
	if (reg_string(w, sizeof(w) / sizeof(w[0]), ip, NULL))
		e->install_path = reg_keep(r, w);
	RegCloseKey(ip);
	if (e->company && e->tag && (e->executable_path || e->install_path))
		r->n++;
	else /* not kept: nor are its strings (r->owned holds 4 per entry) */
		while (r->n_owned > mark)
			free(r->owned[--r->n_owned]);
}

/* Reads root\Software\Python\<company>\<tag> in one registry view
 * (KEY_WOW64_64KEY, KEY_WOW64_32KEY, or 0 for HKCU, which both share)
 * into r, in the order RegEnumKeyExW gives. */
static void reg_read_view(reg_found *r, HKEY root, REGSAM view)
{
	HKEY py, co, tk;
	wchar_t company[256], tag[256];
	if (RegOpenKeyExW(root, L"Software\\Python", 0, KEY_READ | view, &py) != ERROR_SUCCESS)
		return;
	for (DWORD i = 0; r->n < MAX_REG; i++) {
		DWORD len = sizeof(company) / sizeof(company[0]);
		LONG rc = RegEnumKeyExW(py, i, company, &len, NULL, NULL, NULL, NULL);
		if (rc == ERROR_NO_MORE_ITEMS)
			break;
		if (rc != ERROR_SUCCESS ||
		    RegOpenKeyExW(py, company, 0, KEY_READ | view, &co) != ERROR_SUCCESS)
			continue;
		for (DWORD j = 0; r->n < MAX_REG; j++) {
			len = sizeof(tag) / sizeof(tag[0]);
			rc = RegEnumKeyExW(co, j, tag, &len, NULL, NULL, NULL, NULL);
			if (rc == ERROR_NO_MORE_ITEMS)
				break;
			if (rc != ERROR_SUCCESS ||
			    RegOpenKeyExW(co, tag, 0, KEY_READ | view, &tk) != ERROR_SUCCESS)
				continue;
			reg_read_tag(r, tk, company, tag, view);
			RegCloseKey(tk);
		}
		RegCloseKey(co);
	}
	RegCloseKey(py);
}

static void reg_found_release(reg_found *r)
{
	for (size_t i = 0; i < r->n_owned; i++)
		free(r->owned[i]);
}
#endif

int ml_python_find_system(ml_python_found **out, size_t *n_out, ml_err *err)
{
	ml_python_found *found = calloc(MAX_FOUND, sizeof(*found));
	ml_buf list = ML_BUF_INIT;
#ifdef _WIN32
	/* PEP 514: HKCU first, then HKLM in the 64-bit and the 32-bit view */
	reg_found reg = {.n = 0};
	reg_read_view(&reg, HKEY_CURRENT_USER, 0);
	reg_read_view(&reg, HKEY_LOCAL_MACHINE, KEY_WOW64_64KEY);
	reg_read_view(&reg, HKEY_LOCAL_MACHINE, KEY_WOW64_32KEY);
	int rc = ml_python_candidates(&list, getenv("PATH"), true, reg.v, reg.n,
	                              getenv("LOCALAPPDATA"), getenv("ProgramFiles"));
	reg_found_release(&reg);
#else
	int rc = ml_python_candidates(&list, getenv("PATH"), false, NULL, 0, NULL, NULL);
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
