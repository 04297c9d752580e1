/*
 * launcher.c - the Windows launcher for a Python environment's console and
 * GUI scripts (foo.exe in Scripts\).
 *
 * A Windows program, not part of the mlsetup library: the Makefile builds
 * it with zig for x86_64-windows-gnu, twice, as launcher-console.exe
 * (console subsystem) and launcher-gui.exe (-DML_LAUNCHER_GUI, Windows
 * subsystem), without the C runtime (kernel32 only, user32 for the GUI's
 * error box; a few KiB). mlsetup embeds both and makes a script's .exe by
 * appending a payload to one (src/env/winlauncher.c writes it; the format
 * is described there and in src/env/internal.h):
 *
 *   launcher exe | interpreter path (UTF-8) | footer (16 bytes) | zip
 *
 * The zip holds __main__.py and ends the file, so Python can run the .exe
 * itself: python runs a zip file given as the script, whatever precedes
 * it. The launcher reads its own file from the end: the zip's end of
 * central directory record gives where the zip starts, the footer just
 * before it the interpreter path. A relative path is relative to the
 * directory of the .exe (a venv's Scripts\python.exe is "python.exe").
 *
 * It then runs   "<interpreter>" "<path of this .exe>" <arguments>
 * where <arguments> is the rest of its own command line, verbatim: the
 * program name is skipped with CommandLineToArgvW's rule for it, then the
 * blanks after it, so whatever quoting the caller used reaches Python's
 * own command-line parser unchanged. sys.argv[0] is the .exe's path (the
 * script in __main__.py trims ".exe", as pip's scripts do).
 *
 * The interpreter runs in a job object that kills it when the launcher
 * goes away (a killed launcher leaves no orphan); the job allows silent
 * breakaway, so processes the script starts are not tied to it. The
 * launcher ignores Ctrl-C and Ctrl-Break: they reach the interpreter,
 * which shares the console, and the launcher waits for it to finish and
 * exits with its exit code. On a failure before the interpreter runs it
 * says why on stderr (the GUI variant: a message box) and exits 101.
 */
#include <windows.h>

#define LAUNCHER_FAIL 101

/* The footer before the zip: path length (little-endian), reserved zero,
 * magic. Must match src/env/winlauncher.c. */
#define FOOTER_SIZE   16
#define FOOTER_MAGIC  "mlsetupL"
#define EOCD_SIZE     22
#define MAX_PATH_UTF8 (3 * 32768)

/* The compiler may turn struct copies, zeroing and string loops into calls
 * to these; there is no C runtime to provide them. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
size_t wcslen(const wchar_t *s);

void *memset(void *dst, int c, size_t n)
{
	volatile unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

size_t wcslen(const wchar_t *s)
{
	const volatile wchar_t *p = s;
	size_t n = 0;

	while (p[n])
		n++;
	return n;
}

static void *alloc(size_t n)
{
	return HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, n);
}

/* Appends s to the buffer at *p. */
static void put(wchar_t **p, const wchar_t *s)
{
	while (*s)
		*(*p)++ = *s++;
}

static void put_num(wchar_t **p, unsigned long v)
{
	wchar_t tmp[16];
	int n = 0;

	do {
		tmp[n++] = (wchar_t)(L'0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*(*p)++ = tmp[--n];
}

/* Appends at most max characters of s. */
static void put_max(wchar_t **p, const wchar_t *s, size_t max)
{
	while (*s && max--)
		*(*p)++ = *s++;
}

/* Says what failed (and GetLastError() when err is not 0) and exits. The
 * buffers are static: a stack frame over 4 KiB would need the C runtime's
 * stack probe. */
static __attribute__((noreturn)) void die(const wchar_t *what, const wchar_t *detail, DWORD err)
{
	static wchar_t msg[1024];
	wchar_t *p = msg;

	put(&p, L"launcher: ");
	put_max(&p, what, 200);
	if (detail) {
		put(&p, L": ");
		put_max(&p, detail, 700);
	}
	if (err) {
		put(&p, L" (error ");
		put_num(&p, err);
		put(&p, L")");
	}
#ifdef ML_LAUNCHER_GUI
	*p = 0;
	MessageBoxW(NULL, msg, L"launcher", MB_OK | MB_ICONERROR);
#else
	{
		static char out[3 * sizeof msg / sizeof msg[0]];
		HANDLE h = GetStdHandle(STD_ERROR_HANDLE);
		DWORD done;
		int n;

		*p++ = L'\r';
		*p++ = L'\n';
		n = WideCharToMultiByte(CP_UTF8, 0, msg, (int)(p - msg), out, sizeof out, NULL,
		                        NULL);
		if (h && h != INVALID_HANDLE_VALUE && n > 0)
			WriteFile(h, out, (DWORD)n, &done, NULL);
	}
#endif
	ExitProcess(LAUNCHER_FAIL);
}

/* The full path of this .exe, in a heap buffer. */
static wchar_t *self_path(void)
{
	for (DWORD cap = 512; cap <= 65536; cap *= 2) {
		wchar_t *buf = alloc(cap * sizeof(wchar_t));
		DWORD n;

		if (!buf)
			die(L"out of memory", NULL, 0);
		n = GetModuleFileNameW(NULL, buf, cap);
		if (n == 0)
			die(L"cannot find the path of the launcher", NULL, GetLastError());
		if (n < cap)
			return buf;
		HeapFree(GetProcessHeap(), 0, buf);
	}
	die(L"the launcher's path is too long", NULL, 0);
}

static void read_at(HANDLE f, const wchar_t *path, unsigned long long off, void *buf, DWORD n)
{
	LARGE_INTEGER pos;
	DWORD got = 0;

	pos.QuadPart = (LONGLONG)off;
	if (!SetFilePointerEx(f, pos, NULL, FILE_BEGIN) || !ReadFile(f, buf, n, &got, NULL) ||
	    got != n)
		die(L"cannot read", path, GetLastError());
}

static unsigned long le32(const unsigned char *p)
{
	return (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 |
	       (unsigned long)p[3] << 24;
}

/* Reads the interpreter path from the payload appended to the file at
 * path; returns it as UTF-16 in a heap buffer. */
static wchar_t *read_interpreter(const wchar_t *path)
{
	HANDLE f = CreateFileW(path, GENERIC_READ,
	                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                       OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	unsigned char eocd[EOCD_SIZE], footer[FOOTER_SIZE];
	unsigned long long size, zip_start, cd_size, cd_off, n;
	LARGE_INTEGER li;
	char *utf8;
	wchar_t *w;
	int wn;

	if (f == INVALID_HANDLE_VALUE)
		die(L"cannot open", path, GetLastError());
	if (!GetFileSizeEx(f, &li))
		die(L"cannot read", path, GetLastError());
	size = (unsigned long long)li.QuadPart;
	if (size < EOCD_SIZE + FOOTER_SIZE)
		die(L"no script is attached to", path, 0);
	/* The zip ends the file with an end of central directory record
	 * without a comment (src/env/winlauncher.c writes it so). */
	read_at(f, path, size - EOCD_SIZE, eocd, EOCD_SIZE);
	if (le32(eocd) != 0x06054b50ul || eocd[20] != 0 || eocd[21] != 0)
		die(L"no script is attached to", path, 0);
	cd_size = le32(eocd + 12);
	cd_off = le32(eocd + 16);
	if (cd_size + cd_off + EOCD_SIZE + FOOTER_SIZE > size)
		die(L"the script attached is damaged in", path, 0);
	zip_start = size - EOCD_SIZE - cd_size - cd_off;
	read_at(f, path, zip_start - FOOTER_SIZE, footer, FOOTER_SIZE);
	for (int i = 0; i < 8; i++) {
		if (footer[8 + i] != (unsigned char)FOOTER_MAGIC[i])
			die(L"no interpreter is named in", path, 0);
	}
	n = le32(footer);
	if (n == 0 || n > MAX_PATH_UTF8 || n > zip_start - FOOTER_SIZE)
		die(L"the interpreter named is damaged in", path, 0);
	utf8 = alloc((size_t)n);
	w = alloc(((size_t)n + 1) * sizeof(wchar_t));
	if (!utf8 || !w)
		die(L"out of memory", NULL, 0);
	read_at(f, path, zip_start - FOOTER_SIZE - n, utf8, (DWORD)n);
	CloseHandle(f);
	wn = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, (int)n, w, (int)n);
	if (wn <= 0)
		die(L"the interpreter path is not UTF-8 in", path, 0);
	w[wn] = 0;
	HeapFree(GetProcessHeap(), 0, utf8);
	return w;
}

static int is_slash(wchar_t c)
{
	return c == L'\\' || c == L'/';
}

/* "C:\..." or "\\server\..." (and the "//" and "C:/" spellings). */
static int is_absolute(const wchar_t *p)
{
	if (is_slash(p[0]) && is_slash(p[1]))
		return 1;
	return ((p[0] >= L'A' && p[0] <= L'Z') || (p[0] >= L'a' && p[0] <= L'z')) && p[1] == L':' &&
	       is_slash(p[2]);
}

/* The interpreter's full path: interp itself when absolute, else interp
 * in the directory of self. */
static wchar_t *resolve(const wchar_t *self, wchar_t *interp)
{
	size_t dir = 0, n;
	wchar_t *out, *p;

	if (is_absolute(interp))
		return interp;
	for (size_t i = 0; self[i]; i++) {
		if (is_slash(self[i]))
			dir = i + 1;
	}
	n = dir + wcslen(interp) + 1;
	out = alloc(n * sizeof(wchar_t));
	if (!out)
		die(L"out of memory", NULL, 0);
	p = out;
	for (size_t i = 0; i < dir; i++)
		*p++ = self[i];
	put(&p, interp);
	*p = 0;
	return out;
}

/* The arguments part of the command line: after the program name as
 * CommandLineToArgvW reads it (up to the closing quote when it starts with
 * one, else up to the first space or tab) and the blanks after it. */
static const wchar_t *arguments(const wchar_t *cl)
{
	if (*cl == L'"') {
		cl++;
		while (*cl && *cl != L'"')
			cl++;
		if (*cl)
			cl++;
	} else {
		while (*cl && *cl != L' ' && *cl != L'\t')
			cl++;
	}
	while (*cl == L' ' || *cl == L'\t')
		cl++;
	return cl;
}

/* The launcher ignores Ctrl-C, Ctrl-Break and closing: the interpreter
 * gets them and decides. A handler, not SetConsoleCtrlHandler(NULL, TRUE):
 * that flag would be inherited and make the interpreter ignore Ctrl-C
 * too. */
static BOOL WINAPI ignore_ctrl(DWORD type)
{
	(void)type;
	return TRUE;
}

/* Makes a standard handle inheritable, so the interpreter gets it too. */
static HANDLE std_handle(DWORD which)
{
	HANDLE h = GetStdHandle(which);

	if (h && h != INVALID_HANDLE_VALUE)
		SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
	return h;
}

void __stdcall launcher_main(void);

void __stdcall launcher_main(void)
{
	wchar_t *self = self_path();
	wchar_t *interp = resolve(self, read_interpreter(self));
	const wchar_t *args = arguments(GetCommandLineW());
	size_t n = wcslen(interp) + wcslen(self) + wcslen(args) + 8;
	wchar_t *cmd, *p;
	STARTUPINFOW own, si;
	PROCESS_INFORMATION pi;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION limit;
	HANDLE job;
	DWORD code = LAUNCHER_FAIL;

	if (n > 32767)
		die(L"the command line is too long for", interp, 0);
	cmd = alloc(n * sizeof(wchar_t));
	if (!cmd)
		die(L"out of memory", NULL, 0);
	/* Windows paths cannot hold '"' and these never end in '\', so plain
	 * quotes round-trip through every command-line parser. */
	p = cmd;
	put(&p, L"\"");
	put(&p, interp);
	put(&p, L"\" \"");
	put(&p, self);
	put(&p, L"\"");
	if (*args) {
		put(&p, L" ");
		put(&p, args);
	}
	*p = 0;

	memset(&own, 0, sizeof own);
	own.cb = sizeof own;
	GetStartupInfoW(&own);
	memset(&si, 0, sizeof si);
	si.cb = sizeof si;
	si.dwFlags = STARTF_USESTDHANDLES | (own.dwFlags & STARTF_USESHOWWINDOW);
	si.wShowWindow = own.wShowWindow;
	si.hStdInput = std_handle(STD_INPUT_HANDLE);
	si.hStdOutput = std_handle(STD_OUTPUT_HANDLE);
	si.hStdError = std_handle(STD_ERROR_HANDLE);

	job = CreateJobObjectW(NULL, NULL);
	if (job) {
		memset(&limit, 0, sizeof limit);
		limit.BasicLimitInformation.LimitFlags =
		        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK;
		if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limit,
		                             sizeof limit)) {
			CloseHandle(job);
			job = NULL;
		}
	}
	SetConsoleCtrlHandler(ignore_ctrl, TRUE);

	memset(&pi, 0, sizeof pi);
	if (!CreateProcessW(interp, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi))
		die(L"cannot run", interp, GetLastError());
	/* Suspended until it is in the job, so nothing it starts escapes.
	 * Without a job (the launcher's own job refuses nesting on old
	 * Windows) it still runs. */
	if (job)
		AssignProcessToJobObject(job, pi.hProcess);
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);
	WaitForSingleObject(pi.hProcess, INFINITE);
	if (!GetExitCodeProcess(pi.hProcess, &code))
		code = LAUNCHER_FAIL;
	ExitProcess(code);
}
