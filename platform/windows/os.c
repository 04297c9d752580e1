/*
 * os.c (Windows) - the operating-system interface core.h declares, over
 * Win32: reading files under a root directory, loading NVIDIA's DLLs by
 * full path only, running a program with a timeout and captured output
 * (CreateProcessW), free disk space, CPU count and the console set-up
 * (random bytes: platform/random.c, under compat.c, which needs them).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <shellapi.h>

#include "mlsetup/core.h"
#include "../os_common.h"

/* compat.h renamed these; the C runtime's are wanted for descriptors. */
#undef close

/* --- loading DLLs ----------------------------------------------------------- */

/* The message of a Win32 error code, UTF-8, without the final newline. */
static void win_message(char *dst, size_t dstsz, DWORD code)
{
	wchar_t w[512];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
	                         code, 0, w, (DWORD)(sizeof w / sizeof w[0]), NULL);
	while (n > 0 && (w[n - 1] == L'\n' || w[n - 1] == L'\r' || w[n - 1] == L' ' ||
	                 w[n - 1] == L'.'))
		w[--n] = 0;
	char *u = n ? ml_win_utf8(w) : NULL;
	if (u && *u)
		snprintf(dst, dstsz, "%s (error %lu)", u, (unsigned long)code);
	else
		snprintf(dst, dstsz, "Windows error %lu", (unsigned long)code);
	free(u);
}

/* Windows' System32 directory in UTF-8 with '/' separators ("C:/Windows/
 * System32"), or "" when it cannot be had. */
static void system32(char *dst, size_t dstsz)
{
	wchar_t w[MAX_PATH];
	UINT n = GetSystemDirectoryW(w, MAX_PATH);
	char *u = n && n < MAX_PATH ? ml_win_utf8(w) : NULL;
	ml_strlcpy(dst, u ? u : "", dstsz);
	free(u);
	for (char *c = dst; *c; c++)
		if (*c == '\\')
			*c = '/';
}

static bool absolute(const char *p)
{
	return (((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') && p[1] == ':' &&
	        (p[2] == '/' || p[2] == '\\')) ||
	       ((p[0] == '/' || p[0] == '\\') && (p[1] == '/' || p[1] == '\\'));
}

/* Never the current directory or PATH (DLL planting): a bare file name
 * is taken from System32, an absolute path as it is, and the DLL's own
 * imports resolve from its directory and System32 only. */
void *ml_os_dlopen(const char *const *names, char *loaded_name, size_t loaded_sz, ml_err *err)
{
	char first[600] = "no library names given";
	char sys[MAX_PATH * 3];
	system32(sys, sizeof sys);
	for (size_t i = 0; names[i]; i++) {
		char path[PATH_MAX];
		if (absolute(names[i])) {
			ml_strlcpy(path, names[i], sizeof path);
		} else if (strchr(names[i], '/') || strchr(names[i], '\\') || !sys[0]) {
			if (i == 0)
				snprintf(first, sizeof first, "'%s': not a full path", names[i]);
			continue;
		} else if (ml_pathf(path, sizeof path, "%s/%s", sys, names[i])) {
			continue;
		}
		wchar_t *w = ml_win_wpath(path);
		if (!w)
			continue;
		UINT mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
		HMODULE h = LoadLibraryExW(w, NULL,
		                           LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
		                                   LOAD_LIBRARY_SEARCH_SYSTEM32);
		DWORD e = h ? 0 : GetLastError();
		SetErrorMode(mode);
		free(w);
		if (h) {
			if (loaded_name)
				ml_strlcpy(loaded_name, path, loaded_sz);
			return (void *)h;
		}
		if (i == 0) {
			char msg[400];
			win_message(msg, sizeof msg, e);
			snprintf(first, sizeof first, "%s: %s", path, msg);
		}
	}
	ml_err_set(err, ML_ENOENT, "%s", first);
	return NULL;
}

void *ml_os_dlsym(void *handle, const char *symbol)
{
	return handle ? (void *)GetProcAddress((HMODULE)handle, symbol) : NULL;
}

void ml_os_dlclose(void *handle)
{
	if (handle)
		FreeLibrary((HMODULE)handle);
}

/* --- running programs ------------------------------------------------------- */

/* Appends arg to cmd quoted as CommandLineToArgvW and the C runtime
 * split it again: backslashes are literal except before a '"', where
 * they and the quote are escaped. */
static int quote_arg(ml_buf *cmd, const char *arg)
{
	if (cmd->len && ml_buf_puts(cmd, " "))
		return ML_ENOMEM;
	if (*arg && !strpbrk(arg, " \t\n\v\""))
		return ml_buf_puts(cmd, arg);
	if (ml_buf_puts(cmd, "\""))
		return ML_ENOMEM;
	for (const char *p = arg;; p++) {
		size_t bs = 0;
		while (*p == '\\') {
			bs++;
			p++;
		}
		if (!*p) {
			for (size_t i = 0; i < bs * 2; i++) /* before the closing quote */
				if (ml_buf_puts(cmd, "\\"))
					return ML_ENOMEM;
			break;
		}
		size_t n = *p == '"' ? bs * 2 + 1 : bs;
		for (size_t i = 0; i < n; i++)
			if (ml_buf_puts(cmd, "\\"))
				return ML_ENOMEM;
		if (ml_buf_add(cmd, p, 1))
			return ML_ENOMEM;
	}
	return ml_buf_puts(cmd, "\"");
}

static bool is_file(const char *path)
{
	wchar_t *w = ml_win_wpath(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
	free(w);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* The program argv[0] names: as given when it has a directory part, else
 * the first of NAME, NAME.exe in a directory of PATH (never the current
 * directory, which CreateProcessW would search first). */
static int find_program(char *dst, size_t dstsz, const char *name)
{
	bool has_ext = strrchr(name, '.') > strrchr(name, '/') &&
	               strrchr(name, '.') > strrchr(name, '\\');
	if (strchr(name, '/') || strchr(name, '\\') || absolute(name)) {
		if (is_file(name))
			return ml_strlcpy(dst, name, dstsz) < dstsz ? 0 : -1;
		if (!has_ext && ml_pathf(dst, dstsz, "%s.exe", name) == 0 && is_file(dst))
			return 0;
		return -1;
	}
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n && !(n == 1 && p[0] == '.')) {
			if (ml_pathf(dst, dstsz, "%.*s/%s", (int)n, p, name) == 0 && is_file(dst))
				return 0;
			if (!has_ext && ml_pathf(dst, dstsz, "%.*s/%s.exe", (int)n, p, name) == 0 &&
			    is_file(dst))
				return 0;
		}
		p = end ? end + 1 : p + n;
	}
	return -1;
}

/* Reads "\r\n" as "\n" in place (universal newlines): a Windows
 * program's text mode - CPython's print() among them - ends its lines
 * with CR LF, and every caller parses lines. */
static void crlf_to_lf(char *s)
{
	char *w = s;
	for (const char *r = s; *r; r++)
		if (!(r[0] == '\r' && r[1] == '\n'))
			*w++ = *r;
	*w = '\0';
}

static int run_child(char **out, int *status, const char *const *argv, size_t max_bytes,
                     int timeout_s, bool with_stderr, struct ml_os_lines *lines, ml_err *err)
{
	char prog[PATH_MAX];
	if (find_program(prog, sizeof prog, argv[0]))
		return ml_err_set(err, ML_ENOENT, "cannot run '%s': %s", argv[0], strerror(ENOENT));
	ml_buf cmd = ML_BUF_INIT;
	for (size_t i = 0; argv[i]; i++)
		if (quote_arg(&cmd, argv[i])) {
			ml_buf_release(&cmd);
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	wchar_t *wprog = ml_win_wpath(prog);
	int wn = MultiByteToWideChar(CP_UTF8, 0, ml_buf_cstr(&cmd), -1, NULL, 0);
	wchar_t *wcmd = wn > 0 ? malloc((size_t)wn * sizeof(wchar_t)) : NULL;
	if (wcmd)
		MultiByteToWideChar(CP_UTF8, 0, ml_buf_cstr(&cmd), -1, wcmd, wn);
	ml_buf_release(&cmd);
	if (!wprog || !wcmd) {
		free(wprog);
		free(wcmd);
		return ml_err_set(err, ML_EFAIL, "cannot run '%s': bad program name", argv[0]);
	}

	SECURITY_ATTRIBUTES sa = {.nLength = sizeof sa, .bInheritHandle = TRUE};
	HANDLE rd = NULL, wr = NULL;
	HANDLE nul = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE,
	                         FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
	if (nul == INVALID_HANDLE_VALUE || !CreatePipe(&rd, &wr, &sa, 0)) {
		if (nul != INVALID_HANDLE_VALUE)
			CloseHandle(nul);
		free(wprog);
		free(wcmd);
		return ml_err_set(err, ML_EIO, "cannot create a pipe for '%s'", argv[0]);
	}
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);

	/* Only these handles are inherited, not every inheritable one. */
	HANDLE inherit[2] = {wr, nul};
	SIZE_T asz = 0;
	InitializeProcThreadAttributeList(NULL, 1, 0, &asz);
	LPPROC_THREAD_ATTRIBUTE_LIST al = asz ? malloc(asz) : NULL;
	if (al && (!InitializeProcThreadAttributeList(al, 1, 0, &asz) ||
	           !UpdateProcThreadAttribute(al, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit,
	                                      sizeof inherit, NULL, NULL))) {
		free(al);
		al = NULL;
	}
	STARTUPINFOEXW si;
	memset(&si, 0, sizeof si);
	si.StartupInfo.cb = al ? sizeof si : sizeof si.StartupInfo;
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = nul;
	si.StartupInfo.hStdOutput = wr;
	si.StartupInfo.hStdError = with_stderr ? wr : nul;
	si.lpAttributeList = al;
	PROCESS_INFORMATION pi;
	memset(&pi, 0, sizeof pi);
	BOOL ok = CreateProcessW(wprog, wcmd, NULL, NULL, TRUE,
	                         CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT |
	                                 (al ? EXTENDED_STARTUPINFO_PRESENT : 0),
	                         NULL, NULL, &si.StartupInfo, &pi);
	DWORD cerr = ok ? 0 : GetLastError();
	if (al) {
		DeleteProcThreadAttributeList(al);
		free(al);
	}
	free(wprog);
	free(wcmd);
	CloseHandle(wr);
	CloseHandle(nul);
	if (!ok) {
		CloseHandle(rd);
		char msg[400];
		win_message(msg, sizeof msg, cerr);
		return ml_err_set(err, ML_ENOENT, "cannot run '%s': %s", argv[0], msg);
	}
	CloseHandle(pi.hThread);

	ml_buf b = ML_BUF_INIT;
	ULONGLONG deadline = GetTickCount64() + (ULONGLONG)timeout_s * 1000;
	int rc = 0;
	for (;;) {
		if (GetTickCount64() >= deadline) {
			rc = ml_err_set(err, ML_EFAIL, "'%s' did not finish within %d s", argv[0],
			                timeout_s);
			TerminateProcess(pi.hProcess, 1);
			break;
		}
		DWORD avail = 0;
		if (!PeekNamedPipe(rd, NULL, 0, NULL, &avail, NULL))
			break; /* ERROR_BROKEN_PIPE: every writer is gone */
		if (!avail) {
			Sleep(10);
			continue;
		}
		char chunk[4096];
		DWORD n = 0;
		if (!ReadFile(rd, chunk, avail < sizeof chunk ? avail : (DWORD)sizeof chunk, &n,
		              NULL) ||
		    n == 0)
			break;
		if (lines)
			ml_os_lines_feed(lines, chunk, (size_t)n);
		if (lines && lines->restart_s) { /* a new phase with its own limit */
			timeout_s = lines->restart_s;
			deadline = GetTickCount64() + (ULONGLONG)timeout_s * 1000;
			lines->restart_s = 0;
		}
		size_t keep = b.len >= max_bytes ? 0 : (size_t)n;
		if (keep > max_bytes - b.len)
			keep = max_bytes - b.len;
		if (keep && ml_buf_add(&b, chunk, keep)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			TerminateProcess(pi.hProcess, 1);
			break;
		}
	}
	CloseHandle(rd);
	if (lines && lines->len && !rc)
		ml_os_lines_feed(lines, "\n", 1);
	WaitForSingleObject(pi.hProcess, rc ? 5000 : INFINITE);
	DWORD code = 0;
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	if (rc) {
		ml_buf_release(&b);
		return rc;
	}
	*status = (int)code;
	*out = ml_buf_detach(&b);
	if (!*out)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	crlf_to_lf(*out);
	return 0;
}

int ml_os_run_lines(char **out, int *status, const char *const *argv, size_t max_bytes,
                    int timeout_s, ml_os_line_fn on_line, void *data, ml_err *err)
{
	struct ml_os_lines l = {.fn = on_line, .data = data, .line = "", .len = 0};
	return run_child(out, status, argv, max_bytes, timeout_s, true, &l, err);
}

int ml_os_run_capture(char **out, int *status, const char *const *argv, size_t max_bytes,
                      int timeout_s, ml_err *err)
{
	return run_child(out, status, argv, max_bytes, timeout_s, false, NULL, err);
}

int ml_os_run_output(char **out, int *status, const char *const *argv, size_t max_bytes,
                     int timeout_s, ml_err *err)
{
	return run_child(out, status, argv, max_bytes, timeout_s, true, NULL, err);
}

/* --- the machine -------------------------------------------------------------- */

/* ml_os_in_use() below dir (wide, no trailing separator), rel its
 * path from the top ('/'-separated, UTF-8). */
static bool in_use_below(char *which, size_t which_sz, const wchar_t *dir, const char *rel,
                         int depth)
{
	size_t dn = wcslen(dir);
	wchar_t *pat = malloc((dn + 3) * sizeof(wchar_t));
	if (!pat)
		return false;
	memcpy(pat, dir, dn * sizeof(wchar_t));
	wcscpy(pat + dn, L"\\*");
	WIN32_FIND_DATAW fd;
	HANDLE h = FindFirstFileExW(pat, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL, 0);
	free(pat);
	if (h == INVALID_HANDLE_VALUE)
		return false;
	bool found = false;
	do {
		const wchar_t *n = fd.cFileName;
		if (!wcscmp(n, L".") || !wcscmp(n, L"..") ||
		    (fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT))
			continue;
		bool is_dir = (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
		size_t nl = wcslen(n);
		const wchar_t *ext = nl > 4 ? n + nl - 4 : L"";
		if (!is_dir && _wcsicmp(ext, L".exe") && _wcsicmp(ext, L".dll") &&
		    _wcsicmp(ext, L".pyd"))
			continue;
		if (is_dir && depth >= 16)
			continue;
		wchar_t *path = malloc((dn + nl + 2) * sizeof(wchar_t));
		char *name = ml_win_utf8(n);
		char sub[PATH_MAX];
		bool ok = path && name &&
		          snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", name) <
		                  (int)sizeof sub;
		if (ok) {
			memcpy(path, dir, dn * sizeof(wchar_t));
			path[dn] = L'\\';
			wcscpy(path + dn + 1, n);
			if (is_dir) {
				found = in_use_below(which, which_sz, path, sub, depth + 1);
			} else {
				HANDLE f = CreateFileW(path, GENERIC_READ, 0, NULL, OPEN_EXISTING,
				                       FILE_ATTRIBUTE_NORMAL, NULL);
				DWORD e = f == INVALID_HANDLE_VALUE ? GetLastError() : 0;
				if (f != INVALID_HANDLE_VALUE)
					CloseHandle(f);
				if (e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION) {
					ml_strlcpy(which, sub, which_sz);
					found = true;
				}
			}
		}
		free(path);
		free(name);
	} while (!found && FindNextFileW(h, &fd));
	FindClose(h);
	return found;
}

bool ml_os_in_use(char *which, size_t which_sz, const char *dir)
{
	wchar_t *w = ml_win_wpath(dir);
	if (!w)
		return false;
	size_t n = wcslen(w);
	while (n > 1 && (w[n - 1] == L'\\' || w[n - 1] == L'/'))
		w[--n] = L'\0';
	bool found = in_use_below(which, which_sz, w, "", 0);
	free(w);
	return found;
}

int ml_os_disk_free_mib(uint64_t *out, const char *path, ml_err *err)
{
	char p[PATH_MAX];
	ml_strlcpy(p, path && *path ? path : ".", sizeof(p));
	for (;;) {
		wchar_t *w = ml_win_wpath(p);
		ULARGE_INTEGER avail;
		BOOL ok = w && GetDiskFreeSpaceExW(w, &avail, NULL, NULL);
		DWORD e = ok ? 0 : GetLastError();
		free(w);
		if (ok) {
			*out = avail.QuadPart / (1024 * 1024);
			return 0;
		}
		if (e != ERROR_FILE_NOT_FOUND && e != ERROR_PATH_NOT_FOUND &&
		    e != ERROR_INVALID_NAME && e != ERROR_DIRECTORY) {
			char msg[400];
			win_message(msg, sizeof msg, e);
			return ml_err_set(err, ML_EIO, "cannot stat filesystem of '%s': %s", p,
			                  msg);
		}
		char *a = strrchr(p, '/'), *b = strrchr(p, '\\');
		char *slash = a > b ? a : b;
		if (!slash || strcmp(p, ".") == 0) {
			if (strcmp(p, ".") == 0)
				return ml_err_set(err, ML_EIO, "cannot stat filesystem of '.'");
			ml_strlcpy(p, ".", sizeof(p));
		} else if (slash == p || (slash == p + 2 && p[1] == ':')) {
			slash[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
}

int ml_os_cpu_count(void)
{
	DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	return n > 0 ? (int)n : 1;
}

long long ml_os_copy_file_range(int in_fd, int out_fd, size_t n)
{
	(void)in_fd, (void)out_fd, (void)n;
	return -ENOSYS; /* callers copy through a buffer */
}

/* TLS goes through Schannel and the Windows certificate store (curl and
 * libgit2's WinHTTP); a PEM bundle is used only when $SSL_CERT_FILE names
 * one. Schannel takes no hashed directory (curl answers CURLOPT_CAPATH
 * with CURLE_NOT_BUILT_IN), so $SSL_CERT_DIR is not used. */
const char *ml_os_ca_file(void)
{
	const char *v = getenv("SSL_CERT_FILE");
	return v && v[0] ? v : NULL;
}

const char *ml_os_ca_dir(void)
{
	return NULL;
}

/* --- process set-up ------------------------------------------------------------ */

#ifndef ENABLE_VIRTUAL_TERMINAL_PROCESSING
#define ENABLE_VIRTUAL_TERMINAL_PROCESSING 0x0004
#endif

/* The C runtime calls this for a bad argument (a descriptor that is not
 * open, ...) where POSIX returns EBADF/EINVAL; the default handler ends
 * the process. Returning makes the call fail with errno set. */
static void ignore_invalid_parameter(const wchar_t *expr, const wchar_t *fn, const wchar_t *file,
                                     unsigned line, uintptr_t reserved)
{
	(void)expr, (void)fn, (void)file, (void)line, (void)reserved;
}

int ml_os_init(int *argc, char ***argv)
{
	_set_invalid_parameter_handler(ignore_invalid_parameter);
	SetConsoleOutputCP(CP_UTF8);
	SetConsoleCP(CP_UTF8);
	const DWORD handles[] = {STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
	for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++) {
		HANDLE h = GetStdHandle(handles[i]);
		DWORD mode;
		if (h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode))
			SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
	}
	/* "\n" stays "\n" in files and pipes (JSON, manifests). */
	_setmode(0, _O_BINARY);
	_setmode(1, _O_BINARY);
	_setmode(2, _O_BINARY);

	int n = 0;
	wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
	if (!w || n < 1)
		return 0; /* keep the C runtime's */
	char **v = calloc((size_t)n + 1, sizeof *v);
	for (int i = 0; v && i < n; i++)
		if (!(v[i] = ml_win_utf8(w[i]))) {
			for (int j = 0; j < i; j++)
				free(v[j]);
			free(v);
			v = NULL;
		}
	LocalFree(w);
	if (!v)
		return ML_ENOMEM;
	*argc = n;
	*argv = v;
	return 0;
}
