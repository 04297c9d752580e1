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
 * then sleeps STUB_PYTHON_SLEEP milliseconds (default 0) and exits with
 * the number in STUB_PYTHON_EXIT (default 0). Text is written as UTF-8.
 */
#include <windows.h>

#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>

static void put(FILE *f, const char *key, const wchar_t *w)
{
	char buf[32768];
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, sizeof buf, NULL, NULL);

	fprintf(f, "%s=[%s]\n", key, n > 0 ? buf : "?");
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

	if (!f)
		return 120;
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
	return code ? atoi(code) : 0;
}
