/*
 * fsutil.c - the small tools only the env stage's files share: RECORD's
 * base64 encoding, the lock of a cache directory, opening a directory under
 * a root without following links (the archive writers' extract.c and
 * unzip.c) and a string hash map. The file-system and digest
 * helpers every stage uses live in src/core (fs.c, digest.c). See
 * internal.h for the contracts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* --- the lock of a cache directory ---------------------------------------------- */

int mle_lock_in_dir(int *fd, const char *dir, const char *lock_path, ml_err *err)
{
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	if ((e = ml_fs_lock(fd, lock_path, true)))
		return ml_err_set(err, ML_EIO, "cannot lock '%s': %s", lock_path, strerror(-e));
	return 0;
}

/* --- a directory under a root, never through a link ---------------------------- */

int mle_open_dir(int rootfd, const char *dir)
{
	int fd = dup(rootfd);
	if (fd < 0)
		return -errno;
	const char *p = dir;
	char comp[256];
	while (*p) {
		const char *s = strchr(p, '/');
		size_t c = s ? (size_t)(s - p) : strlen(p);
		if (c >= sizeof comp) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, c);
		comp[c] = '\0';
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(fd, comp, 0700) != 0 && errno != EEXIST) {
				int e = errno;
				close(fd);
				return -e;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd >= 0)
				fchmod(nfd, 0755);
		}
		if (nfd < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		close(fd);
		fd = nfd;
		p += c;
		if (*p == '/')
			p++;
	}
	return fd;
}

/* --- base64 for RECORD hashes ------------------------------------------------- */

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
