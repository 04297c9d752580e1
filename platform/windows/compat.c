/*
 * compat.c (Windows) - the POSIX functions compat.h declares, over the
 * wide (UTF-16) Win32 API: UTF-8 paths, "\\?\" long paths, directory
 * descriptors as paths, LockFileEx for flock, ReadFile/WriteFile at an
 * offset for pread/pwrite, file mappings for mmap.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <ctype.h>

#include "mlsetup/core.h"

/* compat.h renamed these; the C runtime's own are wanted below. */
#undef close
#undef dup
#undef fopen
#undef getcwd
#undef getenv

/* --- errno from Win32 errors ------------------------------------------------ */

int ml_win_errno(unsigned long w)
{
	int e;
	switch (w) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_DRIVE:
	case ERROR_BAD_NETPATH:
	case ERROR_BAD_NET_NAME:
	case ERROR_MOD_NOT_FOUND:
		e = ENOENT;
		break;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
	case ERROR_LOCK_VIOLATION:
	case ERROR_PRIVILEGE_NOT_HELD:
		e = EACCES;
		break;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		e = EEXIST;
		break;
	case ERROR_DIR_NOT_EMPTY:
		e = ENOTEMPTY;
		break;
	case ERROR_DIRECTORY:
		e = ENOTDIR;
		break;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		e = ENOMEM;
		break;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		e = ENOSPC;
		break;
	case ERROR_NOT_SAME_DEVICE:
		e = EXDEV;
		break;
	case ERROR_FILENAME_EXCED_RANGE:
	case ERROR_BUFFER_OVERFLOW:
		e = ENAMETOOLONG;
		break;
	case ERROR_INVALID_HANDLE:
		e = EBADF;
		break;
	case ERROR_TOO_MANY_LINKS:
		e = EMLINK;
		break;
	case ERROR_NOT_SUPPORTED:
	case ERROR_INVALID_FUNCTION:
		e = EOPNOTSUPP;
		break;
	case ERROR_CANT_RESOLVE_FILENAME:
		e = ELOOP;
		break;
	case ERROR_IO_PENDING:
		e = EWOULDBLOCK;
		break;
	default:
		e = EIO;
		break;
	}
	errno = e;
	return -1;
}

/* --- UTF-8 <-> UTF-16 ------------------------------------------------------ */

char *ml_win_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	if (n <= 0) {
		errno = EINVAL;
		return NULL;
	}
	char *s = malloc((size_t)n);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
	return s;
}

static wchar_t *widen(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	if (n <= 0) {
		errno = EINVAL;
		return NULL;
	}
	wchar_t *w = malloc((size_t)n * sizeof(wchar_t));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
	return w;
}

wchar_t *ml_win_wpath(const char *utf8)
{
	if (!utf8 || !*utf8) {
		errno = ENOENT;
		return NULL;
	}
	wchar_t *w = widen(utf8);
	if (!w)
		return NULL;
	for (wchar_t *p = w; *p; p++)
		if (*p == L'/')
			*p = L'\\';
	size_t len = wcslen(w);
	if (len < MAX_PATH - 12 || wcsncmp(w, L"\\\\?\\", 4) == 0)
		return w;
	/* Long: absolute, normalized ("." and ".." resolved, as "\\?\" needs)
	 * and prefixed. */
	DWORD n = GetFullPathNameW(w, 0, NULL, NULL);
	wchar_t *full = n ? malloc(((size_t)n + 8) * sizeof(wchar_t)) : NULL;
	if (!full) {
		free(w);
		errno = n ? ENOMEM : ENAMETOOLONG;
		return NULL;
	}
	bool unc = false;
	DWORD m = GetFullPathNameW(w, n, full + 8, NULL);
	free(w);
	if (!m || m >= n) {
		free(full);
		errno = ENAMETOOLONG;
		return NULL;
	}
	wchar_t *body = full + 8;
	if (body[0] == L'\\' && body[1] == L'\\') {
		unc = true;
		body += 2; /* "\\server\share" -> "\\?\UNC\server\share" */
	}
	const wchar_t *prefix = unc ? L"\\\\?\\UNC\\" : L"\\\\?\\";
	size_t pl = wcslen(prefix);
	wchar_t *start = body - pl;
	memcpy(start, prefix, pl * sizeof(wchar_t));
	memmove(full, start, (wcslen(start) + 1) * sizeof(wchar_t));
	return full;
}

/* --- directory descriptors -------------------------------------------------- */

/* A directory descriptor is DIRFD_BASE + a slot holding the directory's
 * path (UTF-8). The C runtime's descriptors stay far below. */
#define DIRFD_BASE 0x10000000
#define DIRFD_SLOTS 1024

static SRWLOCK g_dirfd_lock = SRWLOCK_INIT;
static char *g_dirfd[DIRFD_SLOTS];

static bool is_dirfd(int fd)
{
	return fd >= DIRFD_BASE && fd < DIRFD_BASE + DIRFD_SLOTS;
}

static int dirfd_new(const char *path)
{
	char *copy = strdup(path);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	AcquireSRWLockExclusive(&g_dirfd_lock);
	for (int i = 0; i < DIRFD_SLOTS; i++)
		if (!g_dirfd[i]) {
			g_dirfd[i] = copy;
			ReleaseSRWLockExclusive(&g_dirfd_lock);
			return DIRFD_BASE + i;
		}
	ReleaseSRWLockExclusive(&g_dirfd_lock);
	free(copy);
	errno = EMFILE;
	return -1;
}

/* A new copy of the path of directory descriptor fd, or NULL (EBADF). */
static char *dirfd_path(int fd)
{
	char *p = NULL;
	AcquireSRWLockShared(&g_dirfd_lock);
	if (is_dirfd(fd) && g_dirfd[fd - DIRFD_BASE])
		p = strdup(g_dirfd[fd - DIRFD_BASE]);
	ReleaseSRWLockShared(&g_dirfd_lock);
	if (!p)
		errno = EBADF;
	return p;
}

static bool is_absolute(const char *p)
{
	return p[0] == '/' || p[0] == '\\' || (isalpha((unsigned char)p[0]) && p[1] == ':');
}

/* The path dfd + name names (new string), or NULL with errno set. */
static char *at_path(int dfd, const char *name)
{
	if (!name) {
		errno = EFAULT;
		return NULL;
	}
	if (dfd == AT_FDCWD || is_absolute(name)) {
		char *p = strdup(name);
		if (!p)
			errno = ENOMEM;
		return p;
	}
	char *dir = dirfd_path(dfd);
	if (!dir)
		return NULL;
	char *p = ml_asprintf("%s/%s", dir, name);
	free(dir);
	if (!p)
		errno = ENOMEM;
	return p;
}

/* --- stat ----------------------------------------------------------------- */

static time_t filetime_to_time(FILETIME ft)
{
	uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
	if (t < 116444736000000000ULL)
		return 0;
	return (time_t)((t - 116444736000000000ULL) / 10000000ULL);
}

static int stat_handle(HANDLE h, struct ml_win_stat *st, bool nofollow)
{
	BY_HANDLE_FILE_INFORMATION fi;
	if (!GetFileInformationByHandle(h, &fi))
		return ml_win_errno(GetLastError());
	memset(st, 0, sizeof *st);
	st->st_dev = fi.dwVolumeSerialNumber;
	st->st_ino = ((uint64_t)fi.nFileIndexHigh << 32) | fi.nFileIndexLow;
	st->st_nlink = fi.nNumberOfLinks;
	st->st_size = (int64_t)(((uint64_t)fi.nFileSizeHigh << 32) | fi.nFileSizeLow);
	st->st_atime = filetime_to_time(fi.ftLastAccessTime);
	st->st_mtime = filetime_to_time(fi.ftLastWriteTime);
	st->st_ctime = filetime_to_time(fi.ftCreationTime);
	DWORD a = fi.dwFileAttributes;
	if (nofollow && (a & FILE_ATTRIBUTE_REPARSE_POINT))
		st->st_mode = S_IFLNK | 0777;
	else if (a & FILE_ATTRIBUTE_DIRECTORY)
		st->st_mode = S_IFDIR | 0755;
	else
		st->st_mode = S_IFREG | ((a & FILE_ATTRIBUTE_READONLY) ? 0444 : 0644);
	return 0;
}

static int stat_path(const char *path, struct ml_win_stat *st, bool nofollow)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (nofollow ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
	                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                       OPEN_EXISTING, flags, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return ml_win_errno(GetLastError());
	int rc = stat_handle(h, st, nofollow);
	CloseHandle(h);
	return rc;
}

int ml_win_stat(const char *path, struct ml_win_stat *st)
{
	return stat_path(path, st, false);
}

int ml_win_lstat(const char *path, struct ml_win_stat *st)
{
	return stat_path(path, st, true);
}

int ml_win_fstat(int fd, struct ml_win_stat *st)
{
	if (is_dirfd(fd)) {
		char *p = dirfd_path(fd);
		if (!p)
			return -1;
		int rc = stat_path(p, st, false);
		free(p);
		return rc;
	}
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	DWORD type = GetFileType(h);
	if (type != FILE_TYPE_DISK) {
		memset(st, 0, sizeof *st);
		st->st_mode = type == FILE_TYPE_CHAR ? S_IFCHR | 0666 : S_IFIFO | 0600;
		return 0;
	}
	return stat_handle(h, st, false);
}

int ml_win_fstatat(int dfd, const char *name, struct ml_win_stat *st, int flags)
{
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int rc = stat_path(p, st, (flags & AT_SYMLINK_NOFOLLOW) != 0);
	free(p);
	return rc;
}

/* --- open ----------------------------------------------------------------- */

static DWORD attributes(const char *path)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return INVALID_FILE_ATTRIBUTES;
	DWORD a = GetFileAttributesW(w);
	free(w);
	return a;
}

static int open_path(const char *path, int flags)
{
	int acc = flags & (O_RDONLY | O_WRONLY | O_RDWR);
	if (flags & O_DIRECTORY || acc == O_RDONLY) {
		DWORD a = attributes(path);
		if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
			if ((flags & O_NOFOLLOW) && (a & FILE_ATTRIBUTE_REPARSE_POINT)) {
				errno = ELOOP;
				return -1;
			}
			return dirfd_new(path);
		}
		if (flags & O_DIRECTORY) {
			if (a == INVALID_FILE_ATTRIBUTES)
				return ml_win_errno(GetLastError());
			errno = ENOTDIR;
			return -1;
		}
	}
	DWORD access = acc == O_WRONLY ? GENERIC_WRITE
	               : acc == O_RDWR ? GENERIC_READ | GENERIC_WRITE
	                               : GENERIC_READ;
	if (flags & O_APPEND)
		access = (access & ~(DWORD)GENERIC_WRITE) | FILE_APPEND_DATA | FILE_WRITE_ATTRIBUTES;
	/* fstat() and fchmod() read the attributes through the handle;
	 * GENERIC_WRITE alone does not include that right. */
	access |= FILE_READ_ATTRIBUTES;
	DWORD disp;
	if ((flags & O_CREAT) && (flags & O_EXCL))
		disp = CREATE_NEW;
	else if ((flags & O_CREAT) && (flags & O_TRUNC))
		disp = CREATE_ALWAYS;
	else if (flags & O_CREAT)
		disp = OPEN_ALWAYS;
	else if (flags & O_TRUNC)
		disp = TRUNCATE_EXISTING;
	else
		disp = OPEN_EXISTING;
	DWORD fl = FILE_ATTRIBUTE_NORMAL | ((flags & O_NOFOLLOW) ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	SECURITY_ATTRIBUTES sa = {
	    .nLength = sizeof sa, .lpSecurityDescriptor = NULL, .bInheritHandle = FALSE};
	HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
	                       &sa, disp, fl, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD e = GetLastError();
		if (e == ERROR_ACCESS_DENIED) {
			DWORD a = attributes(path);
			if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
				errno = EISDIR;
				return -1;
			}
		}
		return ml_win_errno(e);
	}
	if ((flags & O_NOFOLLOW)) {
		BY_HANDLE_FILE_INFORMATION fi;
		if (GetFileInformationByHandle(h, &fi) &&
		    (fi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
			CloseHandle(h);
			errno = ELOOP;
			return -1;
		}
	}
	int cflags = _O_BINARY | (flags & (O_APPEND | O_RDONLY | O_WRONLY | O_RDWR));
	int fd = _open_osfhandle((intptr_t)h, cflags);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
	}
	return fd;
}

int ml_win_open(const char *path, int flags, ...)
{
	return open_path(path, flags);
}

int ml_win_openat(int dfd, const char *name, int flags, ...)
{
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int fd = open_path(p, flags);
	free(p);
	return fd;
}

int ml_win_close(int fd)
{
	if (is_dirfd(fd)) {
		AcquireSRWLockExclusive(&g_dirfd_lock);
		char *p = g_dirfd[fd - DIRFD_BASE];
		g_dirfd[fd - DIRFD_BASE] = NULL;
		ReleaseSRWLockExclusive(&g_dirfd_lock);
		if (!p) {
			errno = EBADF;
			return -1;
		}
		free(p);
		return 0;
	}
	return _close(fd);
}

int ml_win_dup(int fd)
{
	if (is_dirfd(fd)) {
		char *p = dirfd_path(fd);
		if (!p)
			return -1;
		int r = dirfd_new(p);
		free(p);
		return r;
	}
	return _dup(fd);
}

int ml_win_fsync(int fd)
{
	if (is_dirfd(fd))
		return 0; /* NTFS orders directory changes itself; nothing to flush */
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	if (!FlushFileBuffers(h)) {
		DWORD e = GetLastError();
		if (e == ERROR_INVALID_HANDLE || e == ERROR_ACCESS_DENIED)
			return 0; /* read-only handle: nothing of ours to flush */
		return ml_win_errno(e);
	}
	return 0;
}

/* FlushFileBuffers on every regular file under path (UTF-16, no "\*"). */
static int flush_tree(const wchar_t *dir)
{
	size_t dn = wcslen(dir);
	wchar_t *pat = malloc((dn + 3) * sizeof(wchar_t));
	if (!pat) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(pat, dir, dn * sizeof(wchar_t));
	memcpy(pat + dn, L"\\*", 3 * sizeof(wchar_t));
	WIN32_FIND_DATAW fd;
	HANDLE f = FindFirstFileExW(pat, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL, 0);
	free(pat);
	if (f == INVALID_HANDLE_VALUE)
		return ml_win_errno(GetLastError());
	int rc = 0;
	do {
		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0 ||
		    (fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT))
			continue;
		size_t n = wcslen(fd.cFileName);
		wchar_t *p = malloc((dn + n + 2) * sizeof(wchar_t));
		if (!p) {
			errno = ENOMEM;
			rc = -1;
			break;
		}
		memcpy(p, dir, dn * sizeof(wchar_t));
		p[dn] = L'\\';
		memcpy(p + dn + 1, fd.cFileName, (n + 1) * sizeof(wchar_t));
		if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
			if (flush_tree(p) && !rc)
				rc = -1;
		} else if (!(fd.dwFileAttributes & FILE_ATTRIBUTE_READONLY)) {
			/* read-only files are the cache's, made durable there */
			HANDLE h = CreateFileW(p, GENERIC_WRITE,
			                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			                       NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
			if (h != INVALID_HANDLE_VALUE) {
				if (!FlushFileBuffers(h) && !rc)
					rc = ml_win_errno(GetLastError());
				CloseHandle(h);
			}
		}
		free(p);
	} while (FindNextFileW(f, &fd));
	FindClose(f);
	return rc;
}

int ml_win_syncfs(int fd)
{
	/* Flushing a whole volume needs administrator rights on Windows:
	 * every file under the directory is flushed instead (what callers
	 * want: ml_fs_sync_tree() makes a tree durable). */
	if (!is_dirfd(fd))
		return ml_win_fsync(fd);
	char *path = dirfd_path(fd);
	wchar_t *w = path ? ml_win_wpath(path) : NULL;
	free(path);
	if (!w)
		return -1;
	int rc = flush_tree(w);
	free(w);
	return rc;
}

/* --- names ---------------------------------------------------------------- */

int ml_win_mkdir(const char *path, unsigned mode)
{
	(void)mode;
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	BOOL ok = CreateDirectoryW(w, NULL);
	DWORD e = ok ? 0 : GetLastError();
	if (!ok) {
		/* "C:" and "\\server\share" cannot be created but exist. */
		DWORD a = GetFileAttributesW(w);
		if (a != INVALID_FILE_ATTRIBUTES) {
			free(w);
			errno = EEXIST;
			return -1;
		}
		/* POSIX says ENOTDIR when the parent is a file ("file/below"),
		 * where Windows says the path was not found. */
		wchar_t *sep = e == ERROR_PATH_NOT_FOUND ? wcsrchr(w, L'\\') : NULL;
		if (sep) {
			*sep = L'\0';
			a = GetFileAttributesW(w);
			if (a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY)) {
				free(w);
				errno = ENOTDIR;
				return -1;
			}
		}
		free(w);
		return ml_win_errno(e);
	}
	free(w);
	return 0;
}

int ml_win_mkdirat(int dfd, const char *name, unsigned mode)
{
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int rc = ml_win_mkdir(p, mode);
	free(p);
	return rc;
}

int ml_win_rmdir(const char *path)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	BOOL ok = RemoveDirectoryW(w);
	DWORD e = ok ? 0 : GetLastError();
	if (!ok && e == ERROR_ACCESS_DENIED) {
		SetFileAttributesW(w, FILE_ATTRIBUTE_NORMAL);
		ok = RemoveDirectoryW(w);
		e = ok ? 0 : GetLastError();
	}
	free(w);
	return ok ? 0 : ml_win_errno(e);
}

int ml_win_unlink(const char *path)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	BOOL ok = DeleteFileW(w);
	DWORD e = ok ? 0 : GetLastError();
	if (!ok && e == ERROR_ACCESS_DENIED) {
		DWORD a = GetFileAttributesW(w);
		if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) &&
		    !(a & FILE_ATTRIBUTE_REPARSE_POINT)) {
			free(w);
			errno = EISDIR;
			return -1;
		}
		if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_READONLY)) {
			/* POSIX unlinks read-only files; Windows wants the
			 * attribute cleared first. */
			SetFileAttributesW(w, a & ~(DWORD)FILE_ATTRIBUTE_READONLY);
			ok = DeleteFileW(w);
			e = ok ? 0 : GetLastError();
		} else if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
			ok = RemoveDirectoryW(w); /* a directory symbolic link */
			e = ok ? 0 : GetLastError();
		}
	}
	free(w);
	return ok ? 0 : ml_win_errno(e);
}

int ml_win_unlinkat(int dfd, const char *name, int flags)
{
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int rc = (flags & AT_REMOVEDIR) ? ml_win_rmdir(p) : ml_win_unlink(p);
	free(p);
	return rc;
}

static int move(const char *from, const char *to, DWORD flags)
{
	wchar_t *a = ml_win_wpath(from), *b = a ? ml_win_wpath(to) : NULL;
	if (!b) {
		free(a);
		return -1;
	}
	BOOL ok = MoveFileExW(a, b, flags);
	DWORD e = ok ? 0 : GetLastError();
	if (!ok && e == ERROR_ACCESS_DENIED && (flags & MOVEFILE_REPLACE_EXISTING)) {
		/* POSIX replaces a read-only file; Windows wants the attribute
		 * off first (it is the file's: other links of it lose it too). */
		DWORD at = GetFileAttributesW(b);
		if (at != INVALID_FILE_ATTRIBUTES && (at & FILE_ATTRIBUTE_READONLY) &&
		    !(at & FILE_ATTRIBUTE_DIRECTORY) &&
		    SetFileAttributesW(b, at & ~(DWORD)FILE_ATTRIBUTE_READONLY)) {
			ok = MoveFileExW(a, b, flags);
			e = ok ? 0 : GetLastError();
			if (!ok)
				SetFileAttributesW(b, at);
		}
	}
	free(a);
	free(b);
	return ok ? 0 : ml_win_errno(e);
}

int ml_win_rename(const char *from, const char *to)
{
	/* POSIX rename() replaces an existing file atomically. */
	return move(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
}

int ml_win_renameat(int fromdfd, const char *from, int todfd, const char *to)
{
	char *a = at_path(fromdfd, from), *b = a ? at_path(todfd, to) : NULL;
	int rc = b ? ml_win_rename(a, b) : -1;
	free(a);
	free(b);
	return rc;
}

int ml_win_renameat2(int fromdfd, const char *from, int todfd, const char *to, unsigned flags)
{
	if (flags != 1 /* RENAME_NOREPLACE */) {
		errno = ENOSYS; /* RENAME_EXCHANGE has no Win32 equivalent */
		return -1;
	}
	char *a = at_path(fromdfd, from), *b = a ? at_path(todfd, to) : NULL;
	/* Without MOVEFILE_REPLACE_EXISTING, MoveFileExW fails when the
	 * destination exists. */
	int rc = b ? move(a, b, MOVEFILE_WRITE_THROUGH) : -1;
	free(a);
	free(b);
	return rc;
}

int ml_win_link(const char *from, const char *to)
{
	wchar_t *a = ml_win_wpath(from), *b = a ? ml_win_wpath(to) : NULL;
	if (!b) {
		free(a);
		return -1;
	}
	BOOL ok = CreateHardLinkW(b, a, NULL);
	DWORD e = ok ? 0 : GetLastError();
	free(a);
	free(b);
	if (!ok && (e == ERROR_INVALID_FUNCTION || e == ERROR_NOT_SUPPORTED)) {
		errno = EPERM; /* FAT, or a file system without links */
		return -1;
	}
	return ok ? 0 : ml_win_errno(e);
}

int ml_win_linkat(int fromdfd, const char *from, int todfd, const char *to, int flags)
{
	(void)flags;
	char *a = at_path(fromdfd, from), *b = a ? at_path(todfd, to) : NULL;
	int rc = b ? ml_win_link(a, b) : -1;
	free(a);
	free(b);
	return rc;
}

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

int ml_win_symlink(const char *target, const char *path)
{
	/* Needs developer mode or the privilege; EPERM otherwise. */
	wchar_t *t = widen(target), *p = t ? ml_win_wpath(path) : NULL;
	if (!p) {
		free(t);
		return -1;
	}
	for (wchar_t *c = t; *c; c++)
		if (*c == L'/')
			*c = L'\\';
	BOOL ok = CreateSymbolicLinkW(p, t, SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE);
	DWORD e = ok ? 0 : GetLastError();
	free(t);
	free(p);
	if (!ok && e == ERROR_PRIVILEGE_NOT_HELD) {
		errno = EPERM;
		return -1;
	}
	return ok ? 0 : ml_win_errno(e);
}

int ml_win_symlinkat(const char *target, int dfd, const char *name)
{
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int rc = ml_win_symlink(target, p);
	free(p);
	return rc;
}

ssize_t ml_win_readlink(const char *path, char *buf, size_t n)
{
	/* Only sysfs readers call this (Linux paths). */
	(void)path;
	(void)buf;
	(void)n;
	errno = EINVAL;
	return -1;
}

char *ml_win_realpath(const char *path, char *resolved)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return NULL;
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
	                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		ml_win_errno(GetLastError());
		return NULL;
	}
	wchar_t small[1];
	DWORD n = GetFinalPathNameByHandleW(h, small, 1, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	wchar_t *full = n ? malloc(((size_t)n + 1) * sizeof(wchar_t)) : NULL;
	DWORD m = full ? GetFinalPathNameByHandleW(h, full, n + 1,
	                                           FILE_NAME_NORMALIZED | VOLUME_NAME_DOS)
	               : 0;
	CloseHandle(h);
	if (!m || m > n) {
		/* wine answers ERROR_MORE_DATA for paths past MAX_PATH: the
		 * path made absolute and normalized, links not resolved. */
		free(full);
		wchar_t *w2 = ml_win_wpath(path);
		n = w2 ? GetFullPathNameW(w2, 0, NULL, NULL) : 0;
		full = n ? malloc(((size_t)n + 1) * sizeof(wchar_t)) : NULL;
		m = full ? GetFullPathNameW(w2, n + 1, full, NULL) : 0;
		free(w2);
		if (!m || m > n) {
			free(full);
			errno = ENAMETOOLONG;
			return NULL;
		}
	}
	/* "\\?\C:\x" -> "C:/x"; "\\?\UNC\s\x" -> "//s/x". */
	wchar_t *p = full;
	if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) {
		p += 6;
		p[0] = L'\\';
	} else if (wcsncmp(p, L"\\\\?\\", 4) == 0) {
		p += 4;
	}
	char *u = ml_win_utf8(p);
	free(full);
	if (!u)
		return NULL;
	for (char *c = u; *c; c++)
		if (*c == '\\')
			*c = '/';
	if (!resolved)
		return u;
	if (strlen(u) >= PATH_MAX) {
		free(u);
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(resolved, u);
	free(u);
	return resolved;
}

int ml_win_access(const char *path, int mode)
{
	DWORD a = attributes(path);
	if (a == INVALID_FILE_ATTRIBUTES)
		return ml_win_errno(GetLastError());
	if ((mode & W_OK) && (a & FILE_ATTRIBUTE_READONLY) && !(a & FILE_ATTRIBUTE_DIRECTORY)) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

/* Read-only attribute from the owner's write bit; directories keep
 * theirs (on Windows it does not stop changes inside a directory). */
static int set_mode(const wchar_t *w, unsigned mode)
{
	DWORD a = GetFileAttributesW(w);
	if (a == INVALID_FILE_ATTRIBUTES)
		return ml_win_errno(GetLastError());
	if (a & FILE_ATTRIBUTE_DIRECTORY)
		return 0;
	DWORD b = (mode & 0200) ? a & ~(DWORD)FILE_ATTRIBUTE_READONLY : a | FILE_ATTRIBUTE_READONLY;
	if (b != a && !SetFileAttributesW(w, b))
		return ml_win_errno(GetLastError());
	return 0;
}

int ml_win_chmod(const char *path, unsigned mode)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	int rc = set_mode(w, mode);
	free(w);
	return rc;
}

int ml_win_fchmod(int fd, unsigned mode)
{
	if (is_dirfd(fd))
		return 0;
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	/* Through the handle, so the file need not be named again. */
	FILE_BASIC_INFO bi;
	if (!GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof bi))
		return 0; /* a handle without FILE_READ_ATTRIBUTES: leave it */
	DWORD a = bi.FileAttributes;
	DWORD b = (mode & 0200) ? a & ~(DWORD)FILE_ATTRIBUTE_READONLY : a | FILE_ATTRIBUTE_READONLY;
	if (b == a)
		return 0;
	bi.FileAttributes = b;
	memset(&bi.CreationTime, 0, sizeof bi.CreationTime);
	memset(&bi.LastAccessTime, 0, sizeof bi.LastAccessTime);
	memset(&bi.LastWriteTime, 0, sizeof bi.LastWriteTime);
	memset(&bi.ChangeTime, 0, sizeof bi.ChangeTime);
	if (!SetFileInformationByHandle(h, FileBasicInfo, &bi, sizeof bi))
		return 0; /* opened without FILE_WRITE_ATTRIBUTES */
	return 0;
}

int ml_win_fchmodat(int dfd, const char *name, unsigned mode, int flags)
{
	(void)flags;
	char *p = at_path(dfd, name);
	if (!p)
		return -1;
	int rc = ml_win_chmod(p, mode);
	free(p);
	return rc;
}

int ml_win_chdir(const char *path)
{
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return -1;
	BOOL ok = SetCurrentDirectoryW(w);
	DWORD e = ok ? 0 : GetLastError();
	free(w);
	return ok ? 0 : ml_win_errno(e);
}

char *ml_win_getcwd(char *buf, size_t n)
{
	DWORD len = GetCurrentDirectoryW(0, NULL);
	wchar_t *w = len ? malloc((size_t)len * sizeof(wchar_t)) : NULL;
	if (!w || !GetCurrentDirectoryW(len, w)) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	char *u = ml_win_utf8(w);
	free(w);
	if (!u)
		return NULL;
	for (char *c = u; *c; c++)
		if (*c == '\\')
			*c = '/';
	if (!buf) {
		return u;
	}
	if (strlen(u) >= n) {
		free(u);
		errno = ERANGE;
		return NULL;
	}
	strcpy(buf, u);
	free(u);
	return buf;
}

FILE *ml_win_fopen(const char *path, const char *mode)
{
	/* Binary always: mlsetup writes the bytes it means. */
	wchar_t *w = ml_win_wpath(path);
	if (!w)
		return NULL;
	wchar_t wm[16];
	size_t i = 0;
	bool has_b = false;
	for (const char *m = mode; *m && i < 12; m++) {
		if (*m == 'e')
			continue; /* glibc's O_CLOEXEC flag */
		if (*m == 'b')
			has_b = true;
		wm[i++] = (wchar_t)(unsigned char)*m;
	}
	if (!has_b)
		wm[i++] = L'b';
	wm[i++] = L'N'; /* not inherited */
	wm[i] = 0;
	FILE *f = _wfopen(w, wm);
	free(w);
	return f;
}

int ml_win_remove(const char *path)
{
	DWORD a = attributes(path);
	if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY))
		return ml_win_rmdir(path);
	return ml_win_unlink(path);
}

char *ml_win_mkdtemp(char *tmpl)
{
	size_t n = strlen(tmpl);
	if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return NULL;
	}
	for (int tries = 0; tries < 100; tries++) {
		char hex[13];
		ml_random_hex(hex, 3);
		memcpy(tmpl + n - 6, hex, 6);
		if (ml_win_mkdir(tmpl, 0700) == 0)
			return tmpl;
		if (errno != EEXIST)
			return NULL;
	}
	return NULL;
}

int ml_win_mkstemp(char *tmpl)
{
	size_t n = strlen(tmpl);
	if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return -1;
	}
	for (int tries = 0; tries < 100; tries++) {
		char hex[13];
		ml_random_hex(hex, 3);
		memcpy(tmpl + n - 6, hex, 6);
		int fd = open_path(tmpl, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* --- positioned I/O -------------------------------------------------------- */

static HANDLE fd_handle(int fd)
{
	HANDLE h = is_dirfd(fd) ? INVALID_HANDLE_VALUE : (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE)
		errno = is_dirfd(fd) ? EISDIR : EBADF;
	return h;
}

/* ReadFile/WriteFile with an offset in OVERLAPPED; unlike POSIX pread/
 * pwrite they move the handle's file pointer: callers that mix them with
 * read/write on one descriptor must not rely on the offset. */
ssize_t ml_win_pread(int fd, void *buf, size_t n, off_t off)
{
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	OVERLAPPED ov = {.Offset = (DWORD)((uint64_t)off & 0xffffffffu),
	                 .OffsetHigh = (DWORD)((uint64_t)off >> 32)};
	DWORD got = 0;
	DWORD want = n > 0x40000000u ? 0x40000000u : (DWORD)n;
	if (!ReadFile(h, buf, want, &got, &ov)) {
		DWORD e = GetLastError();
		if (e == ERROR_HANDLE_EOF)
			return 0;
		return ml_win_errno(e);
	}
	return (ssize_t)got;
}

ssize_t ml_win_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	OVERLAPPED ov = {.Offset = (DWORD)((uint64_t)off & 0xffffffffu),
	                 .OffsetHigh = (DWORD)((uint64_t)off >> 32)};
	DWORD put = 0;
	DWORD want = n > 0x40000000u ? 0x40000000u : (DWORD)n;
	if (!WriteFile(h, buf, want, &put, &ov))
		return ml_win_errno(GetLastError());
	return (ssize_t)put;
}

int ml_win_ftruncate(int fd, off_t len)
{
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	FILE_END_OF_FILE_INFO eof = {.EndOfFile = {.QuadPart = (LONGLONG)len}};
	if (!SetFileInformationByHandle(h, FileEndOfFileInfo, &eof, sizeof eof))
		return ml_win_errno(GetLastError());
	return 0;
}

static FILETIME timespec_filetime(const struct timespec *ts)
{
	FILETIME ft;
	uint64_t t;
	if (!ts) {
		GetSystemTimeAsFileTime(&ft);
		return ft;
	}
	t = (uint64_t)ts->tv_sec * 10000000ULL + (uint64_t)ts->tv_nsec / 100 +
	    116444736000000000ULL;
	ft.dwLowDateTime = (DWORD)t;
	ft.dwHighDateTime = (DWORD)(t >> 32);
	return ft;
}

static int set_times(HANDLE h, const struct timespec ts[2])
{
	FILETIME a = timespec_filetime(ts ? &ts[0] : NULL);
	FILETIME m = timespec_filetime(ts ? &ts[1] : NULL);
	if (!SetFileTime(h, NULL, &a, &m))
		return ml_win_errno(GetLastError());
	return 0;
}

int ml_win_utimensat(int dfd, const char *name, const struct timespec ts[2], int flags)
{
	char *p = at_path(dfd, name);
	wchar_t *w = p ? ml_win_wpath(p) : NULL;
	free(p);
	if (!w)
		return -1;
	DWORD fl = FILE_FLAG_BACKUP_SEMANTICS |
	           ((flags & AT_SYMLINK_NOFOLLOW) ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
	HANDLE h = CreateFileW(w, FILE_WRITE_ATTRIBUTES,
	                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                       OPEN_EXISTING, fl, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return ml_win_errno(GetLastError());
	int rc = set_times(h, ts);
	CloseHandle(h);
	return rc;
}

int ml_win_futimens(int fd, const struct timespec ts[2])
{
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	return set_times(h, ts);
}

/* --- directories ----------------------------------------------------------- */

struct ml_win_dir {
	HANDLE find;
	WIN32_FIND_DATAW data;
	bool first; /* data holds an entry not returned yet */
	int fd;     /* the directory descriptor dirfd() returns; owned */
	struct ml_win_dirent ent;
};

ml_win_DIR *ml_win_opendir(const char *path)
{
	int fd = dirfd_new(path);
	if (fd < 0)
		return NULL;
	ml_win_DIR *d = ml_win_fdopendir(fd);
	if (!d) {
		int e = errno;
		ml_win_close(fd);
		errno = e;
	}
	return d;
}

ml_win_DIR *ml_win_fdopendir(int fd)
{
	char *path = dirfd_path(fd);
	if (!path)
		return NULL;
	char *pattern = ml_asprintf("%s/*", path);
	free(path);
	wchar_t *w = pattern ? ml_win_wpath(pattern) : NULL;
	free(pattern);
	ml_win_DIR *d = w ? calloc(1, sizeof *d) : NULL;
	if (!d) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	d->find = FindFirstFileExW(w, FindExInfoBasic, &d->data, FindExSearchNameMatch, NULL, 0);
	free(w);
	if (d->find == INVALID_HANDLE_VALUE) {
		DWORD e = GetLastError();
		free(d);
		if (e == ERROR_DIRECTORY) {
			errno = ENOTDIR;
			return NULL;
		}
		ml_win_errno(e);
		return NULL;
	}
	d->first = true;
	d->fd = fd;
	return d;
}

struct ml_win_dirent *ml_win_readdir(ml_win_DIR *d)
{
	for (;;) {
		if (!d->first) {
			if (!FindNextFileW(d->find, &d->data)) {
				DWORD e = GetLastError();
				if (e != ERROR_NO_MORE_FILES)
					ml_win_errno(e);
				return NULL;
			}
		}
		d->first = false;
		int n = WideCharToMultiByte(CP_UTF8, 0, d->data.cFileName, -1, d->ent.d_name,
		                            (int)sizeof d->ent.d_name, NULL, NULL);
		if (n > 0)
			return &d->ent;
		/* not representable (cannot happen for valid UTF-16): skip */
	}
}

int ml_win_closedir(ml_win_DIR *d)
{
	if (!d) {
		errno = EBADF;
		return -1;
	}
	FindClose(d->find);
	ml_win_close(d->fd);
	free(d);
	return 0;
}

int ml_win_dirfd(ml_win_DIR *d)
{
	return d->fd;
}

int ml_win_alphasort(const struct ml_win_dirent **a, const struct ml_win_dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int (*g_scandir_cmp)(const struct ml_win_dirent **, const struct ml_win_dirent **);

static int scandir_cmp(const void *a, const void *b)
{
	return g_scandir_cmp((const struct ml_win_dirent **)(uintptr_t)a,
	                     (const struct ml_win_dirent **)(uintptr_t)b);
}

int ml_win_scandir(const char *dir, struct ml_win_dirent ***list,
                   int (*filter)(const struct ml_win_dirent *),
                   int (*cmp)(const struct ml_win_dirent **, const struct ml_win_dirent **))
{
	ml_win_DIR *d = ml_win_opendir(dir);
	if (!d)
		return -1;
	struct ml_win_dirent **v = NULL;
	size_t n = 0, cap = 0;
	struct ml_win_dirent *e;
	while ((e = ml_win_readdir(d)) != NULL) {
		if (filter && !filter(e))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct ml_win_dirent **nv = realloc(v, cap * sizeof *v);
			if (!nv)
				goto nomem;
			v = nv;
		}
		if (!(v[n] = malloc(sizeof **v)))
			goto nomem;
		memcpy(v[n++], e, sizeof *e);
	}
	ml_win_closedir(d);
	if (cmp && n > 1) {
		/* scandir() is not called from several threads at once. */
		g_scandir_cmp = cmp;
		qsort(v, n, sizeof *v, scandir_cmp);
	}
	*list = v;
	return (int)n;
nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	ml_win_closedir(d);
	errno = ENOMEM;
	return -1;
}

/* --- locks ---------------------------------------------------------------- */

int ml_win_flock(int fd, int op)
{
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	/* Windows byte-range locks are mandatory: reads and writes of a
	 * locked range fail for every other handle. flock() locks advise
	 * only, so the lock covers one byte far past any real data: holders
	 * exclude each other, I/O is never blocked. */
	OVERLAPPED ov = {.Offset = 0xfffffffeu, .OffsetHigh = 0x7fffffffu};
	if (op & LOCK_UN) {
		if (!UnlockFileEx(h, 0, 1, 0, &ov))
			return ml_win_errno(GetLastError());
		return 0;
	}
	DWORD fl = ((op & LOCK_EX) ? LOCKFILE_EXCLUSIVE_LOCK : 0) |
	           ((op & LOCK_NB) ? LOCKFILE_FAIL_IMMEDIATELY : 0);
	if (!LockFileEx(h, fl, 0, 1, 0, &ov)) {
		DWORD e = GetLastError();
		if (e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING) {
			errno = EWOULDBLOCK;
			return -1;
		}
		return ml_win_errno(e);
	}
	return 0;
}

/* --- memory maps ----------------------------------------------------------- */

void *ml_win_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	(void)addr;
	HANDLE h = fd_handle(fd);
	if (h == INVALID_HANDLE_VALUE || len == 0) {
		if (len == 0)
			errno = EINVAL;
		return MAP_FAILED;
	}
	bool write = (prot & PROT_WRITE) != 0;
	DWORD page = write ? ((flags & MAP_PRIVATE) ? PAGE_WRITECOPY : PAGE_READWRITE)
	                   : PAGE_READONLY;
	uint64_t end = (uint64_t)off + len;
	HANDLE m = CreateFileMappingW(h, NULL, page, (DWORD)(end >> 32), (DWORD)end, NULL);
	if (!m) {
		ml_win_errno(GetLastError());
		return MAP_FAILED;
	}
	DWORD access = write ? ((flags & MAP_PRIVATE) ? FILE_MAP_COPY : FILE_MAP_WRITE)
	                     : FILE_MAP_READ;
	void *p = MapViewOfFile(m, access, (DWORD)((uint64_t)off >> 32), (DWORD)off, len);
	DWORD e = p ? 0 : GetLastError();
	CloseHandle(m); /* the view keeps the mapping */
	if (!p) {
		ml_win_errno(e);
		return MAP_FAILED;
	}
	return p;
}

int ml_win_munmap(void *addr, size_t len)
{
	(void)len;
	if (!UnmapViewOfFile(addr))
		return ml_win_errno(GetLastError());
	return 0;
}

int ml_win_madvise(void *addr, size_t len, int advice)
{
	(void)addr;
	(void)len;
	(void)advice;
	return 0; /* advice only */
}

int ml_win_fallocate(int fd, int mode, off_t off, off_t len)
{
	(void)fd;
	(void)mode;
	(void)off;
	(void)len;
	errno = ENOSYS; /* callers fall back to writing */
	return -1;
}

/* --- terminal ------------------------------------------------------------- */

int ml_win_ioctl(int fd, unsigned long req, ...)
{
	if (req != TIOCGWINSZ) {
		errno = EOPNOTSUPP;
		return -1;
	}
	va_list ap;
	va_start(ap, req);
	struct winsize *ws = va_arg(ap, struct winsize *);
	va_end(ap);
	HANDLE h = fd_handle(fd);
	CONSOLE_SCREEN_BUFFER_INFO ci;
	if (h == INVALID_HANDLE_VALUE || !GetConsoleScreenBufferInfo(h, &ci)) {
		errno = ENOTTY;
		return -1;
	}
	memset(ws, 0, sizeof *ws);
	ws->ws_col = (unsigned short)(ci.srWindow.Right - ci.srWindow.Left + 1);
	ws->ws_row = (unsigned short)(ci.srWindow.Bottom - ci.srWindow.Top + 1);
	return 0;
}

/* --- the rest -------------------------------------------------------------- */

int ml_win_fnmatch(const char *p, const char *s, int flags)
{
	const char *start = s;
	for (; *p; p++, s++) {
		if (*p == '*') {
			if ((flags & FNM_PERIOD) && s == start && *s == '.')
				return FNM_NOMATCH;
			while (p[1] == '*')
				p++;
			if (!p[1])
				return 0;
			for (; *s; s++)
				if (ml_win_fnmatch(p + 1, s, flags & ~FNM_PERIOD) == 0)
					return 0;
			return FNM_NOMATCH;
		}
		if (!*s)
			return FNM_NOMATCH;
		if (*p == '?') {
			if ((flags & FNM_PERIOD) && s == start && *s == '.')
				return FNM_NOMATCH;
			continue;
		}
		if (*p == '[') {
			const char *q = p + 1;
			bool neg = *q == '!' || *q == '^', hit = false;
			if (neg)
				q++;
			for (; *q && (*q != ']' || q == p + 1 + neg); q++) {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hit |= *s >= q[0] && *s <= q[2];
					q += 2;
				} else {
					hit |= *s == *q;
				}
			}
			if (!*q || hit == neg)
				return FNM_NOMATCH;
			p = q;
			continue;
		}
		if (*p == '\\' && !(flags & FNM_NOESCAPE) && p[1])
			p++;
		if (*p != *s)
			return FNM_NOMATCH;
	}
	return *s ? FNM_NOMATCH : 0;
}

struct qsort_ctx {
	int (*cmp)(const void *, const void *, void *);
	void *arg;
};

static int qsort_tramp(void *ctx, const void *a, const void *b)
{
	struct qsort_ctx *c = ctx;
	return c->cmp(a, b, c->arg);
}

void ml_win_qsort_r(void *base, size_t n, size_t size,
                    int (*cmp)(const void *, const void *, void *), void *arg)
{
	struct qsort_ctx c = {.cmp = cmp, .arg = arg};
	qsort_s(base, n, size, qsort_tramp, &c);
}

char *ml_win_strcasestr(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (_strnicmp(hay, needle, n) == 0)
			return (char *)hay;
	return n ? NULL : (char *)hay;
}

/* Every value getenv() returned, kept: callers hold on to them. */
static SRWLOCK g_env_lock = SRWLOCK_INIT;
static char **g_env_seen;
static size_t g_env_n, g_env_cap;

char *ml_win_getenv(const char *name)
{
	wchar_t *wn = widen(name);
	if (!wn)
		return NULL;
	const wchar_t *wv = _wgetenv(wn);
	free(wn);
	if (!wv)
		return NULL;
	char *v = ml_win_utf8(wv);
	if (!v)
		return NULL;
	char *found = NULL;
	AcquireSRWLockExclusive(&g_env_lock);
	for (size_t i = 0; i < g_env_n && !found; i++)
		if (strcmp(g_env_seen[i], v) == 0)
			found = g_env_seen[i];
	if (!found) {
		if (g_env_n == g_env_cap) {
			size_t cap = g_env_cap ? g_env_cap * 2 : 32;
			char **nv = realloc(g_env_seen, cap * sizeof *nv);
			if (nv) {
				g_env_seen = nv;
				g_env_cap = cap;
			}
		}
		if (g_env_n < g_env_cap) {
			g_env_seen[g_env_n++] = v;
			found = v;
			v = NULL;
		}
	}
	ReleaseSRWLockExclusive(&g_env_lock);
	free(v);
	return found;
}

static int put_env(const char *name, const char *value)
{
	wchar_t *wn = widen(name), *wv = wn ? widen(value) : NULL;
	int rc = wv && _wputenv_s(wn, wv) == 0 ? 0 : -1;
	free(wn);
	free(wv);
	if (rc)
		errno = EINVAL;
	return rc;
}

int ml_win_setenv(const char *name, const char *value, int overwrite)
{
	if (!overwrite && ml_win_getenv(name))
		return 0;
	return put_env(name, value);
}

int ml_win_unsetenv(const char *name)
{
	return put_env(name, ""); /* an empty value removes the variable */
}
