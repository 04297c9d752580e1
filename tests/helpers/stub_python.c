/*
 * stub_python.c - a simulated Windows Python interpreter for the launcher
 * test (tests/cli/t0921-windows-launcher.sh): built with zig as
 * python.exe / pythonw.exe, it runs nothing and reports how it was started,
 * one bracketed line each, to stdout, or to the file named by
 * STUB_PYTHON_LOG when that is set (the GUI variant has no console):
 *
 *   exe=[<its own path, GetModuleFileNameW>]
 *   cmdline=[<GetCommandLineW(), raw>]
 *   argc=<n>
 *   argv[i]=[<the C runtime's argv[i]>]          for each i
 *   wargv[i]=[<CommandLineToArgvW's argv[i]>]    for each i
 *
 * then, when STUB_PYTHON_HOLD names a file, opens it without sharing (as
 * a running program holds its own .exe or a loaded .pyd), then sleeps
 * STUB_PYTHON_SLEEP milliseconds (default 0) and exits with
 * the number in STUB_PYTHON_EXIT (default 0). Text is written as UTF-8.
 *
 * One exception, for the Windows install test (t0931): started as
 * `python.exe -I -c <source>` with mlsetup's interpreter probe
 * (src/env/python.c, the source that prints sys.base_prefix), it answers
 * as CPython STUB_PYTHON_VERSION (default 3.12.8) would, one value per
 * line in text mode (CR LF, as CPython's print() on Windows): "cpython",
 * major, minor, micro, its own path, sys.prefix, sys.base_prefix. A copy
 * in a venv's Scripts\ (a pyvenv.cfg one folder up) has the venv as
 * prefix and pyvenv.cfg's "home" as base prefix, as CPython's venv
 * launcher arranges; any other copy has its own folder as both.
 *
 * Two more, for the registry test (t0932), which plans with the stub as
 * a system interpreter; both SIMULATE CPython STUB_PYTHON_VERSION's
 * answers, recognised by the source text given to -c:
 *  - `-I -c <source>` with the probe of mlsetup's search for the
 *    machine's interpreters (src/plan/pyfind.c, the source that compares
 *    sys.prefix == sys.base_prefix): one line, "cpython 3.12.8 <1, or 0
 *    for a copy in a venv as above> <its own path>";
 *  - `-c <source>` with plan's version question (src/plan/plan.c
 *    choose_python, the source that prints sys.version_info[:3]): "3.12.8".
 *
 * And for t0931's shipped-manifest run: `-c <source>` asking pip's
 * built-in index (src/fetch/index_sources.c, the source that prints
 * PyPI.simple_url) prints STUB_PIP_INDEX_URL, or fails when it is unset.
 * There is no pip: anything else runs nothing, as above.
 */
#include <windows.h>

#include <shellapi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(FILE *f, const char *key, const wchar_t *w)
{
	char buf[32768];
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, sizeof buf, NULL, NULL);

	fprintf(f, "%s=[%s]\n", key, n > 0 ? buf : "?");
}

/* The folder part of path (cut at its last '\\' or '/'), in place. */
static void cut_dir(char *path)
{
	char *a = strrchr(path, '\\'), *b = strrchr(path, '/');
	char *e = a > b ? a : b;
	if (e)
		*e = '\0';
}

/* Answers plan's version question (see the top of this file). */
static int answer_version(void)
{
	const char *ver = getenv("STUB_PYTHON_VERSION");
	int major = 3, minor = 12, micro = 8;

	if (ver && sscanf(ver, "%d.%d.%d", &major, &minor, &micro) != 3)
		return 121;
	printf("%d.%d.%d\n", major, minor, micro);
	return 0;
}

/* Answers mlsetup's interpreter probe, or with one_line pyfind.c's (see
 * the top of this file). */
static int answer_probe(bool one_line)
{
	static wchar_t wself[32768];
	static char self[32768], prefix[32768], base[32768], cfg[32800], line[32768];
	const char *ver = getenv("STUB_PYTHON_VERSION");
	int major = 3, minor = 12, micro = 8;

	if (ver && sscanf(ver, "%d.%d.%d", &major, &minor, &micro) != 3)
		return 121;
	GetModuleFileNameW(NULL, wself, sizeof wself / sizeof wself[0]);
	if (WideCharToMultiByte(CP_UTF8, 0, wself, -1, self, sizeof self, NULL, NULL) <= 0)
		return 122;
	snprintf(prefix, sizeof prefix, "%s", self);
	cut_dir(prefix); /* ...\Scripts, or the interpreter's own folder */
	snprintf(base, sizeof base, "%s", prefix);
	snprintf(cfg, sizeof cfg, "%s", prefix);
	cut_dir(cfg);
	size_t n = strlen(cfg);
	snprintf(cfg + n, sizeof cfg - n, "\\pyvenv.cfg");
	FILE *f = fopen(cfg, "r");
	if (f) {
		cut_dir(prefix); /* the venv */
		while (fgets(line, sizeof line, f))
			if (strncmp(line, "home = ", 7) == 0) {
				line[strcspn(line, "\r\n")] = '\0';
				snprintf(base, sizeof base, "%s", line + 7);
			}
		fclose(f);
	}
	if (one_line)
		printf("cpython %d.%d.%d %d %s\n", major, minor, micro, strcmp(prefix, base) == 0,
		       self);
	else
		printf("cpython\n%d\n%d\n%d\n%s\n%s\n%s\n", major, minor, micro, self, prefix,
		       base);
	return 0;
}

int main(int argc, char **argv)
{
	const char *log = getenv("STUB_PYTHON_LOG");
	const char *code = getenv("STUB_PYTHON_EXIT");
	const char *sleep_ms = getenv("STUB_PYTHON_SLEEP");
	FILE *f = log && *log ? fopen(log, "wb") : stdout;
	static wchar_t self[32768];
	wchar_t **wargv;
	int wargc = 0;
	char key[32];

	if (argc == 4 && strcmp(argv[1], "-I") == 0 && strcmp(argv[2], "-c") == 0 &&
	    strstr(argv[3], "sys.prefix == sys.base_prefix"))
		return answer_probe(true);
	if (argc == 4 && strcmp(argv[1], "-I") == 0 && strcmp(argv[2], "-c") == 0 &&
	    strstr(argv[3], "base_prefix"))
		return answer_probe(false);
	if (argc == 3 && strcmp(argv[1], "-c") == 0 && strstr(argv[2], "sys.version_info[:3]"))
		return answer_version();
	if (argc == 3 && strcmp(argv[1], "-c") == 0 && strstr(argv[2], "PyPI.simple_url")) {
		/* pip's built-in index, as the test names it */
		const char *url = getenv("STUB_PIP_INDEX_URL");
		if (!url || !*url)
			return 1;
		printf("%s\n", url);
		return 0;
	}
	const char *hold = getenv("STUB_PYTHON_HOLD");
	HANDLE held = INVALID_HANDLE_VALUE;
	if (!f)
		return 120;
	if (hold && *hold) {
		held = CreateFileA(hold, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
		if (held == INVALID_HANDLE_VALUE)
			return 123;
	}
	GetModuleFileNameW(NULL, self, sizeof self / sizeof self[0]);
	put(f, "exe", self);
	put(f, "cmdline", GetCommandLineW());
	fprintf(f, "argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		fprintf(f, "argv[%d]=[%s]\n", i, argv[i]);
	wargv = CommandLineToArgvW(GetCommandLineW(), &wargc);
	for (int i = 0; wargv && i < wargc; i++) {
		snprintf(key, sizeof key, "wargv[%d]", i);
		put(f, key, wargv[i]);
	}
	fflush(f);
	if (f != stdout)
		fclose(f);
	if (sleep_ms)
		Sleep((DWORD)atoi(sleep_ms));
	if (held != INVALID_HANDLE_VALUE)
		CloseHandle(held);
	return code ? atoi(code) : 0;
}
