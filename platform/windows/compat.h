/*
 * compat.h (Windows) - the POSIX functions src/ calls, for the Windows
 * build. The Makefile force-includes this header into every translation
 * unit of the x86_64-windows-gnu target (-include platform/windows/compat.h)
 * and puts platform/windows/include/ (empty stand-ins for <sys/mman.h>,
 * <sys/file.h>, <pwd.h>, ...) on the include path, so the stages' sources
 * stay the POSIX code they are. Implemented in platform/windows/compat.c.
 *
 * Paths are UTF-8 everywhere in mlsetup. The C runtime's open(), stat(),
 * fopen(), mkdir(), rename(), opendir() take the ANSI code page's bytes,
 * so every call that takes a path is redirected here to a wrapper that
 * converts UTF-8 to UTF-16 and calls the wide Win32 function, with the
 * "\\?\" prefix for paths past MAX_PATH. '/' and '\' both separate.
 *
 * Directory descriptors (open(dir, O_DIRECTORY), openat(), fdopendir(),
 * dirfd()) are emulated: such a descriptor names the directory's path
 * (a table in compat.c), and the *at() functions join that path and the
 * name. That keeps the code's shape but not the POSIX guarantee that a
 * renamed or replaced parent does not redirect later calls.
 *
 * Functions follow their POSIX contracts (return values, errno) unless a
 * comment says otherwise. Permission bits are not Windows' model: chmod()
 * and friends set or clear only the read-only attribute, and a file is
 * created without it whatever mode says.
 */
#ifndef MLSETUP_WIN_COMPAT_H
#define MLSETUP_WIN_COMPAT_H

#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

/* The C runtime's headers first, so that the macros below rename only the
 * uses in mlsetup's own code. */
#include <direct.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <limits.h>
#include <process.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/* mingw's 260 is Windows' short-path limit; mlsetup's buffers are sized
 * for the long paths the wrappers reach through "\\?\". */
#undef PATH_MAX
#define PATH_MAX 4096

/* --- open() flags the C runtime lacks --------------------------------------- */
#ifndef O_CLOEXEC
#define O_CLOEXEC _O_NOINHERIT
#endif
#define O_DIRECTORY 0x00200000
#define O_NOFOLLOW 0x00400000
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif

#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR 0x200

#ifndef S_IFLNK
#define S_IFLNK 0xA000
#endif
#ifndef S_ISLNK
#define S_ISLNK(m) (((m) & S_IFMT) == S_IFLNK)
#endif
#ifndef S_IRWXG
#define S_IRWXG 0070
#define S_IRGRP 0040
#define S_IWGRP 0020
#define S_IXGRP 0010
#define S_IRWXO 0007
#define S_IROTH 0004
#define S_IWOTH 0002
#define S_IXOTH 0001
#endif
#ifndef ELOOP
#define ELOOP 114
#endif

/* --- stat ----------------------------------------------------------------- */

/* struct stat with a 64-bit inode (the file index) and device (the volume
 * serial number), so that "same file" checks work. */
struct ml_win_stat {
	uint64_t st_dev;
	uint64_t st_ino;
	unsigned st_mode;
	unsigned st_nlink;
	int st_uid;
	int st_gid;
	int64_t st_size;
	time_t st_atime;
	time_t st_mtime;
	time_t st_ctime;
};
/* mingw's ino_t is 16 bits and its dev_t 32: code that keeps a stat's
 * st_ino / st_dev in them (the cache's "still the same file" checks) must
 * get all 64 bits, or a different file matches and the same one does not. */
#define ino_t uint64_t
#define dev_t uint64_t
int ml_win_stat(const char *path, struct ml_win_stat *st);
int ml_win_lstat(const char *path, struct ml_win_stat *st);
int ml_win_fstat(int fd, struct ml_win_stat *st);
int ml_win_fstatat(int dfd, const char *name, struct ml_win_stat *st, int flags);
/* The struct and the function share the name, as in POSIX. */
#define stat ml_win_stat
#define lstat ml_win_lstat
#define fstat ml_win_fstat
#define fstatat ml_win_fstatat

/* --- descriptors and paths ------------------------------------------------ */
int ml_win_open(const char *path, int flags, ...);
int ml_win_openat(int dfd, const char *name, int flags, ...);
int ml_win_close(int fd);
int ml_win_dup(int fd);
int ml_win_fsync(int fd);
int ml_win_syncfs(int fd);
int ml_win_mkdir(const char *path, unsigned mode);
int ml_win_mkdirat(int dfd, const char *name, unsigned mode);
int ml_win_rmdir(const char *path);
int ml_win_unlink(const char *path);
int ml_win_unlinkat(int dfd, const char *name, int flags);
int ml_win_rename(const char *from, const char *to);
int ml_win_renameat(int fromdfd, const char *from, int todfd, const char *to);
int ml_win_link(const char *from, const char *to);
int ml_win_linkat(int fromdfd, const char *from, int todfd, const char *to, int flags);
int ml_win_symlink(const char *target, const char *path);
int ml_win_symlinkat(const char *target, int dfd, const char *name);
ssize_t ml_win_readlink(const char *path, char *buf, size_t n);
char *ml_win_realpath(const char *path, char *resolved);
int ml_win_access(const char *path, int mode);
int ml_win_chmod(const char *path, unsigned mode);
int ml_win_fchmod(int fd, unsigned mode);
int ml_win_fchmodat(int dfd, const char *name, unsigned mode, int flags);
int ml_win_chdir(const char *path);
char *ml_win_getcwd(char *buf, size_t n);
FILE *ml_win_fopen(const char *path, const char *mode);
int ml_win_remove(const char *path);
ssize_t ml_win_pread(int fd, void *buf, size_t n, off_t off);
ssize_t ml_win_pwrite(int fd, const void *buf, size_t n, off_t off);
int ml_win_ftruncate(int fd, off_t len);
int ml_win_utimensat(int dfd, const char *name, const struct timespec ts[2], int flags);
int ml_win_futimens(int fd, const struct timespec ts[2]);
char *ml_win_mkdtemp(char *tmpl);
int ml_win_mkstemp(char *tmpl);

#define open(...) ml_win_open(__VA_ARGS__)
#define openat(...) ml_win_openat(__VA_ARGS__)
#define close(fd) ml_win_close(fd)
#define dup(fd) ml_win_dup(fd)
#define fsync(fd) ml_win_fsync(fd)
#define fdatasync(fd) ml_win_fsync(fd)
#define syncfs(fd) ml_win_syncfs(fd)
#define mkdir(p, m) ml_win_mkdir(p, m)
#define mkdirat(d, p, m) ml_win_mkdirat(d, p, m)
#define rmdir(p) ml_win_rmdir(p)
#define unlink(p) ml_win_unlink(p)
#define unlinkat(d, p, f) ml_win_unlinkat(d, p, f)
#define rename(a, b) ml_win_rename(a, b)
#define renameat(a, b, c, d) ml_win_renameat(a, b, c, d)
/* renameat2(): RENAME_NOREPLACE (1) through MoveFileExW without
 * MOVEFILE_REPLACE_EXISTING; any other flag fails with ENOSYS (Windows has
 * no atomic exchange of two names). */
int ml_win_renameat2(int fromdfd, const char *from, int todfd, const char *to, unsigned flags);
#define link(a, b) ml_win_link(a, b)
#define linkat(a, b, c, d, e) ml_win_linkat(a, b, c, d, e)
#define symlink(a, b) ml_win_symlink(a, b)
#define symlinkat(a, b, c) ml_win_symlinkat(a, b, c)
#define readlink(a, b, c) ml_win_readlink(a, b, c)
#define realpath(a, b) ml_win_realpath(a, b)
#define access(a, b) ml_win_access(a, b)
#define chmod(a, b) ml_win_chmod(a, b)
#define fchmod(a, b) ml_win_fchmod(a, b)
#define fchmodat(a, b, c, d) ml_win_fchmodat(a, b, c, d)
#define chdir(a) ml_win_chdir(a)
#define getcwd(a, b) ml_win_getcwd(a, b)
#define fopen(a, b) ml_win_fopen(a, b)
#define remove(a) ml_win_remove(a)
#define pread(a, b, c, d) ml_win_pread(a, b, c, d)
#define pwrite(a, b, c, d) ml_win_pwrite(a, b, c, d)
#define ftruncate(a, b) ml_win_ftruncate(a, b)
#define utimensat(a, b, c, d) ml_win_utimensat(a, b, c, d)
#define futimens(a, b) ml_win_futimens(a, b)
#define mkdtemp(a) ml_win_mkdtemp(a)
#define mkstemp(a) ml_win_mkstemp(a)

/* --- directories (FindFirstFileW underneath) --------------------------------- */
struct ml_win_dirent {
	char d_name[1024]; /* UTF-8 */
};
typedef struct ml_win_dir ml_win_DIR;
ml_win_DIR *ml_win_opendir(const char *path);
ml_win_DIR *ml_win_fdopendir(int fd); /* takes fd: closedir() closes it */
struct ml_win_dirent *ml_win_readdir(ml_win_DIR *d);
int ml_win_closedir(ml_win_DIR *d);
int ml_win_dirfd(ml_win_DIR *d);
int ml_win_scandir(const char *dir, struct ml_win_dirent ***list,
                   int (*filter)(const struct ml_win_dirent *),
                   int (*cmp)(const struct ml_win_dirent **, const struct ml_win_dirent **));
int ml_win_alphasort(const struct ml_win_dirent **a, const struct ml_win_dirent **b);
#define DIR ml_win_DIR
#define dirent ml_win_dirent
#define opendir(p) ml_win_opendir(p)
#define fdopendir(fd) ml_win_fdopendir(fd)
#define readdir(d) ml_win_readdir(d)
#define closedir(d) ml_win_closedir(d)
#define dirfd(d) ml_win_dirfd(d)
#define scandir(a, b, c, d) ml_win_scandir(a, b, c, d)
#define alphasort ml_win_alphasort

/* --- locks (LockFileEx on the whole file) ------------------------------------ */
#define LOCK_SH 1
#define LOCK_EX 2
#define LOCK_NB 4
#define LOCK_UN 8
int ml_win_flock(int fd, int op);
#define flock(fd, op) ml_win_flock(fd, op)

/* --- memory maps (CreateFileMapping / MapViewOfFile) ------------------------- */
#define PROT_NONE 0
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_SHARED 1
#define MAP_PRIVATE 2
#define MAP_FAILED ((void *)-1)
void *ml_win_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int ml_win_munmap(void *addr, size_t len);
#define mmap(a, b, c, d, e, f) ml_win_mmap(a, b, c, d, e, f)
#define munmap(a, b) ml_win_munmap(a, b)
/* madvise() is advice: a no-op returning 0. fallocate() fails with ENOSYS
 * (callers then write the file instead of mapping it). */
#define MADV_DONTNEED 4
int ml_win_madvise(void *addr, size_t len, int advice);
int ml_win_fallocate(int fd, int mode, off_t off, off_t len);
#define madvise(a, b, c) ml_win_madvise(a, b, c)
#define fallocate(a, b, c, d) ml_win_fallocate(a, b, c, d)

/* --- terminal ------------------------------------------------------------- */
struct winsize {
	unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel;
};
#define TIOCGWINSZ 0x5413
#define FICLONE 0x40049409 /* no reflinks here: ioctl() fails, EOPNOTSUPP */
/* Only TIOCGWINSZ (the console's width and height); else -1, ENOTTY. */
int ml_win_ioctl(int fd, unsigned long req, ...);
#define ioctl(...) ml_win_ioctl(__VA_ARGS__)

/* --- the rest -------------------------------------------------------------- */
#define FNM_NOMATCH 1
#define FNM_NOESCAPE 0x01
#define FNM_PATHNAME 0x02
#define FNM_PERIOD 0x04
int ml_win_fnmatch(const char *pattern, const char *s, int flags);
#define fnmatch(a, b, c) ml_win_fnmatch(a, b, c)

void ml_win_qsort_r(void *base, size_t n, size_t size,
                    int (*cmp)(const void *, const void *, void *), void *arg);
#define qsort_r(a, b, c, d, e) ml_win_qsort_r(a, b, c, d, e)

char *ml_win_strcasestr(const char *hay, const char *needle);
#define strcasestr(a, b) ml_win_strcasestr(a, b)


/* getenv() in UTF-8 (the C runtime's is in the ANSI code page): the
 * returned string stays valid for the life of the process. */
char *ml_win_getenv(const char *name);
#define getenv(a) ml_win_getenv(a)

/* setenv()/unsetenv() over _wputenv_s(), in UTF-8. */
int ml_win_setenv(const char *name, const char *value, int overwrite);
int ml_win_unsetenv(const char *name);
#define setenv(a, b, c) ml_win_setenv(a, b, c)
#define unsetenv(a) ml_win_unsetenv(a)

/* Converts a UTF-8 path to a new UTF-16 string for the wide Win32 calls:
 * '/' becomes '\', and a path longer than MAX_PATH - 12 is made absolute
 * and given the "\\?\" (or "\\?\UNC\") prefix. NULL (errno set: ENOMEM,
 * EINVAL for invalid UTF-8, ENAMETOOLONG) on failure; caller frees. */
wchar_t *ml_win_wpath(const char *utf8);
/* UTF-16 -> new UTF-8 string (caller frees); NULL on failure. */
char *ml_win_utf8(const wchar_t *w);
/* Sets errno from a GetLastError() code; returns -1. */
int ml_win_errno(unsigned long winerr);

#endif /* MLSETUP_WIN_COMPAT_H */
