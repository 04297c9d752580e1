/*
 * fsutil.c - the small tools the env stage's files share: digests and
 * RECORD's base64 encoding, random names, removing trees without ever
 * following a symbolic link, mkdir -p, writing and syncing files, flock
 * locks, and a string hash map. See internal.h for the contracts.
 */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "internal.h"

/* --- hashing ------------------------------------------------------------------ */

void mle_hex(char dst[65], const uint8_t d[32])
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < 32; i++) {
		dst[2 * i] = hx[d[i] >> 4];
		dst[2 * i + 1] = hx[d[i] & 15];
	}
	dst[64] = '\0';
}

int mle_b64url(char *dst, size_t dstsz, const uint8_t *d, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t need = n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0) + 1;
	if (need > dstsz)
		return ML_EFAIL;
	size_t j = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		dst[j++] = al[v >> 18 & 63];
		dst[j++] = al[v >> 12 & 63];
		dst[j++] = al[v >> 6 & 63];
		dst[j++] = al[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)d[i] << 16;
		dst[j++] = al[v >> 18 & 63];
		dst[j++] = al[v >> 12 & 63];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8;
		dst[j++] = al[v >> 18 & 63];
		dst[j++] = al[v >> 12 & 63];
		dst[j++] = al[v >> 6 & 63];
	}
	dst[j] = '\0';
	return 0;
}

int mle_digest_file(uint8_t *digest, unsigned *digest_len, uint64_t *size, int fd, const char *path,
                    const char *md_name, ml_err *err)
{
	const EVP_MD *md = EVP_get_digestbyname(md_name);
	if (!md)
		return ml_err_set(err, ML_EFAIL, "unknown digest '%s'", md_name);
	int own = -1;
	if (fd < 0) {
		own = fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ml_err_set(err, errno == ENOENT ? ML_ENOENT : ML_EIO,
			                  "cannot open '%s': %s", path, strerror(errno));
	}
	int rc = 0;
	uint64_t total = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char *buf = malloc(1 << 20);
	if (!ctx || !buf || EVP_DigestInit_ex(ctx, md, NULL) != 1) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ml_err_set(err, ML_EIO, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
			rc = ml_err_set(err, ML_EFAIL, "digest failed");
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, digest, digest_len) != 1) {
		rc = ml_err_set(err, ML_EFAIL, "digest failed");
		goto out;
	}
	if (size)
		*size = total;
out:
	free(buf);
	EVP_MD_CTX_free(ctx);
	if (own >= 0)
		close(own);
	return rc;
}

bool mle_is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

void mle_random_hex(char *dst, size_t nbytes)
{
	static const char hx[] = "0123456789abcdef";
	uint8_t r[16];
	if (nbytes > sizeof r)
		nbytes = sizeof r;
	size_t got = 0;
	while (got < nbytes) {
		ssize_t n = getrandom(r + got, nbytes - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < nbytes) { /* no getrandom: time and pid are enough for names */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		             ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)dst;
		for (size_t i = got; i < nbytes; i++, x = x * 6364136223846793005u + 1)
			r[i] = (uint8_t)(x >> 56);
	}
	for (size_t i = 0; i < nbytes; i++) {
		dst[2 * i] = hx[r[i] >> 4];
		dst[2 * i + 1] = hx[r[i] & 15];
	}
	dst[2 * nbytes] = '\0';
}

/* --- file system ------------------------------------------------------------------ */

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
		int r = mle_rm_tree_at(dirfd(d), de->d_name);
		if (r && !rc)
			rc = r;
	}
	closedir(d);
	return rc;
}

int mle_rm_tree_at(int dfd, const char *name)
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

int mle_rm_tree(const char *path)
{
	return mle_rm_tree_at(AT_FDCWD, path);
}

void mle_rm_prefixed(const char *base, const char *prefix)
{
	DIR *d = opendir(base);
	if (!d)
		return;
	size_t n = strlen(prefix);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, prefix, n) == 0)
			mle_rm_tree_at(dirfd(d), de->d_name);
	closedir(d);
}

int mle_mkdirs(const char *path, mode_t mode)
{
	char p[ML_PATH_MAX];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof p)
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	struct stat st;
	if (stat(p, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			int e = errno;
			*s = '/';
			return -e;
		}
		*s = '/';
	}
	if (mkdir(p, mode) != 0 && errno != EEXIST)
		return -errno;
	if (stat(p, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mle_write_file(const char *path, const void *data, size_t n, mode_t mode, bool excl, bool sync)
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
	if (fchmod(fd, mode) != 0 || (sync && fsync(fd) != 0)) {
		int e = errno;
		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}

int mle_pathf(char *dst, size_t dstsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(dst, dstsz, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= dstsz) ? ML_EFAIL : 0;
}

int mle_fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

int mle_sync_tree(const char *path)
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

int mle_split_path(char *dir, size_t dirsz, const char **base, const char *path)
{
	size_t n = strlen(path);
	if (n == 0 || path[n - 1] == '/')
		return ML_EFAIL;
	const char *slash = strrchr(path, '/');
	if (!slash)
		return (ml_strlcpy(dir, ".", dirsz) >= dirsz) ? ML_EFAIL : (*base = path, 0);
	size_t dn = (size_t)(slash - path);
	if (dn == 0)
		dn = 1; /* "/x" -> "/" */
	if (dn >= dirsz)
		return ML_EFAIL;
	memcpy(dir, path, dn);
	dir[dn] = '\0';
	*base = slash + 1;
	return 0;
}

int mle_flock_path(int *fd, const char *path, bool wait)
{
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (f < 0)
		return -errno;
	while (flock(f, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(f);
		return -e;
	}
	*fd = f;
	return 0;
}

/* --- string map ------------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211u;
	}
	return h;
}

static size_t map_slot(const mle_map *m, const char *key)
{
	size_t i = (size_t)hash_str(key) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int map_grow(mle_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	mle_map g = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(size_t)), cap, m->n};
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return ML_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = map_slot(&g, m->keys[i]);
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

int mle_map_put(mle_map *m, const char *key, size_t val, size_t *old)
{
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return ML_ENOMEM;
	size_t i = map_slot(m, key);
	if (m->keys[i]) {
		if (old)
			*old = m->vals[i];
		return 0;
	}
	if (!(m->keys[i] = strdup(key)))
		return ML_ENOMEM;
	m->vals[i] = val;
	m->n++;
	return 1;
}

bool mle_map_get(const mle_map *m, const char *key, size_t *val)
{
	if (!m->cap)
		return false;
	size_t i = map_slot(m, key);
	if (!m->keys[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

void mle_map_release(mle_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}
