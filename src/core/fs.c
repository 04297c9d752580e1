/*
 * fs.c - the one copy of each file-system helper the stages share: mkdir -p,
 * rm -rf that never follows a symbolic link, plain and atomic file writes
 * (fsync of the file and its directory), link-or-copy, syncing and flock
 * locks (paths are formatted with str.c's ml_pathf(), random names come
 * from the platform layer's platform/random.c). Contracts in core.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mlsetup/core.h"

static int rm_dir_contents(int fd)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	int rc = 0;
	struct dirent *de;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno && !rc)
				rc = -errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int r = ml_fs_rm_tree_at(dirfd(d), de->d_name);
		if (r && !rc)
			rc = r;
	}
	closedir(d);
	return rc;
}

int ml_fs_rm_tree_at(int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM && errno != EACCES)
		return -errno;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return -EACCES;
	if ((st.st_mode & 0700) != 0700)
		fchmodat(dfd, name, 0700, 0);
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	int rc = rm_dir_contents(fd);
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !rc)
		rc = -errno;
	return rc;
}

int ml_fs_rm_tree(const char *path)
{
	return ml_fs_rm_tree_at(AT_FDCWD, path);
}

int ml_fs_mktempdir(char *dir, size_t dir_sz, const char *what, ml_err *err)
{
	const char *tmp = getenv("TMPDIR");
#ifdef _WIN32
	if (!tmp || !*tmp)
		tmp = getenv("TEMP");
#endif
	if (!tmp || !*tmp)
		tmp = "/tmp";
	int rc = 0;
	if ((size_t)snprintf(dir, dir_sz, "%s/mlsetup-%s.XXXXXX", tmp, what) >= dir_sz)
		rc = ml_err_set(err, ML_EIO, "temporary directory name too long: '%s'", tmp);
	else if (!mkdtemp(dir))
		rc = ml_err_set(err, ML_EIO, "cannot create a temporary directory in %s: %s", tmp,
		                strerror(errno));
	if (rc && dir_sz)
		dir[0] = '\0';
	return rc;
}

int ml_fs_rm_prefixed(const char *base, const char *prefix)
{
	DIR *d = opendir(base);
	if (!d)
		return 0;
	size_t n = strlen(prefix);
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strncmp(de->d_name, prefix, n) != 0)
			continue;
		if (ml_fs_rm_tree_at(dirfd(d), de->d_name) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int ml_fs_mkdirs(const char *path, unsigned mode)
{
	char p[4096];
	size_t n = strlen(path);
	if (n == 0)
		return -ENOENT;
	if (n >= sizeof p)
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
#ifdef _WIN32
	for (char *c = p; *c; c++) /* both separate there */
		if (*c == '\\')
			*c = '/';
#endif
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	struct stat st;
	if (stat(p, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
			int e = errno;
			*s = '/';
			return -e;
		}
		*s = '/';
	}
	if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST)
		return -errno;
	if (stat(p, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int ml_fs_write_file(const char *path, const void *data, size_t n, unsigned mode, bool excl,
                     bool sync)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (excl ? O_EXCL : O_TRUNC),
	              mode);
	if (fd < 0)
		return -errno;
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		p += w;
		n -= (size_t)w;
	}
	if (fchmod(fd, (mode_t)mode) != 0 || (sync && fsync(fd) != 0)) {
		int e = errno;
		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}

int ml_fs_fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

int ml_fs_sync_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (syncfs(fd) != 0 || fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int ml_fs_split_path(char *dir, size_t dirsz, const char **base, const char *path)
{
	size_t n = strlen(path);
	if (n == 0 || path[n - 1] == '/')
		return ML_EFAIL;
	const char *slash = strrchr(path, '/');
#ifdef _WIN32
	const char *bs = strrchr(path, '\\');
	if (n && path[n - 1] == '\\')
		return ML_EFAIL;
	if (bs && (!slash || bs > slash))
		slash = bs;
	if (!slash && n > 2 && path[1] == ':') /* "C:x" is relative to C:'s directory */
		return ML_EFAIL;
#endif
	if (!slash)
		return (ml_strlcpy(dir, ".", dirsz) >= dirsz) ? ML_EFAIL : (*base = path, 0);
	size_t dn = (size_t)(slash - path);
	if (dn == 0)
		dn = 1; /* "/x" -> "/" */
#ifdef _WIN32
	if (dn == 2 && path[1] == ':')
		dn = 3; /* "C:/x" -> "C:/" */
#endif
	if (dn >= dirsz)
		return ML_EFAIL;
	memcpy(dir, path, dn);
	dir[dn] = '\0';
	*base = slash + 1;
	return 0;
}

static int lock_file(int *fd, const char *path, int op, bool wait)
{
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (f < 0)
		return -errno;
	while (flock(f, op | (wait ? 0 : LOCK_NB)) != 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(f);
		return -e;
	}
	*fd = f;
	return 0;
}

int ml_fs_lock(int *fd, const char *path, bool wait)
{
	return lock_file(fd, path, LOCK_EX, wait);
}

int ml_fs_lock_shared(int *fd, const char *path, bool wait)
{
	return lock_file(fd, path, LOCK_SH, wait);
}

void ml_fs_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* A temporary name beside path: "<dir>/.<base>.tmp-<random>". */
static int tmp_beside(char *tmp, size_t tmpsz, char *dir, size_t dirsz, const char *path)
{
	const char *base;
	if (ml_fs_split_path(dir, dirsz, &base, path) != 0)
		return -ENAMETOOLONG;
	char r[17];
	ml_random_hex(r, 8);
	return ml_pathf(tmp, tmpsz, "%s/.%s.tmp-%s", dir, base, r) ? -ENAMETOOLONG : 0;
}

static int write_atomic(const char *path, const void *data, size_t n, unsigned mode, bool sync)
{
	char tmp[4200], dir[4096];
	int rc = tmp_beside(tmp, sizeof(tmp), dir, sizeof(dir), path);
	if (rc)
		return rc;
	rc = ml_fs_write_file(tmp, data, n, mode, true, sync);
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	return sync ? ml_fs_fsync_path(dir) : 0;
}

int ml_fs_write_atomic(const char *path, const void *data, size_t n, unsigned mode)
{
	return write_atomic(path, data, n, mode, true);
}

int ml_fs_write_atomic_nosync(const char *path, const void *data, size_t n, unsigned mode)
{
	return write_atomic(path, data, n, mode, false);
}

int ml_fs_copy_fd(int dst, int src)
{
	bool plain = false;
	char *buf = NULL;
	int rc = 0;
	for (;;) {
		ssize_t n;
		if (!plain) {
			long long c = ml_os_copy_file_range(src, dst, (size_t)1 << 30);
			if (c < 0)
				errno = (int)-c;
			n = c < 0 ? -1 : (ssize_t)c;
			if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
			              errno == EOPNOTSUPP)) {
				plain = true;
				continue;
			}
		} else {
			if (!buf && !(buf = malloc(1 << 20)))
				return -ENOMEM;
			n = read(src, buf, 1 << 20);
			for (ssize_t done = 0; n > 0 && done < n;) {
				ssize_t w = write(dst, buf + done, (size_t)(n - done));
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					rc = w < 0 ? -errno : -EIO;
					goto out;
				}
				done += w;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
	}
out:
	free(buf);
	return rc;
}

int ml_fs_link_or_copy(const char *src, const char *dst, bool *linked)
{
	struct stat a, b;
	if (stat(src, &a) != 0)
		return -errno;
	if (stat(dst, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		if (linked)
			*linked = true;
		return 0; /* already this very file */
	}
	char tmp[4200], dir[4096];
	int rc = tmp_beside(tmp, sizeof(tmp), dir, sizeof(dir), dst);
	if (rc)
		return rc;
	bool hard = link(src, tmp) == 0;
	if (!hard) {
		int in = open(src, O_RDONLY | O_CLOEXEC);
		int out = in >= 0 ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                         0644)
		                  : -1;
		rc = in < 0 || out < 0 ? -errno : ml_fs_copy_fd(out, in);
		if (!rc && fsync(out) != 0)
			rc = -errno;
		if (in >= 0)
			close(in);
		if (out >= 0 && close(out) != 0 && !rc)
			rc = -errno;
	}
	if (!rc && rename(tmp, dst) != 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	if (linked)
		*linked = hard;
	return 0;
}
