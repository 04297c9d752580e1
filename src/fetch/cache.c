/*
 * cache.c - the content-addressed cache that every mlsetup process of a
 * user shares: verified blobs under blobs/sha256/, downloads in progress
 * under tmp/, index pages with their validators under index/, per-blob
 * download locks under locks/, and the cache-wide lock that lets clean and
 * prune run alone.
 *
 * Safety with several processes rests on three rules: an entry appears only
 * by rename(2) of a complete file (not flushed: what a power loss tears is
 * caught by the next rule); a blob is never trusted without hashing it again; and
 * whoever deletes something either holds the cache exclusively or checks
 * that the path still names the inode it judged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define STALE_PART_S   60 /* an unlocked .part untouched this long is abandoned */
#define PAGE_MAX_BYTES (256u << 20)
#define META_MAX_BYTES 8192u

struct ml_cache {
	char root[PATH_MAX];
	int lock_fd;
	ml_cache_mode mode;
};

struct ml_cache_lock {
	int fd;
};

/* --- small helpers ------------------------------------------------------------ */

static int join(char *dst, size_t sz, const char *a, const char *b)
{
	int n = snprintf(dst, sz, "%s/%s", a, b);
	return (n < 0 || (size_t)n >= sz) ? -1 : 0;
}

/* SHA-256 hex of "a\nb" (the key of an index page). Returns 0 or ML_ENOMEM. */
static int hash_key(char hex[65], const char *a, const char *b)
{
	char *s = ml_asprintf("%s\n%s", a, b);
	int rc = s ? ml_sha256_hex_buf(hex, s, strlen(s)) : ML_ENOMEM;
	free(s);
	return rc;
}

/* Removes path only if it still names the inode (dev, ino). */
static void unlink_if_same(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;
	if (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		unlink(path);
}

/* --- open / close ------------------------------------------------------------- */

/* Removes the .part files under tmp/ whose writer is gone: lockable and unchanged
 * for STALE_PART_S seconds (all of them when exclusive). */
static void sweep_parts(const ml_cache *c, bool all, ml_cache_stats *removed)
{
	char dir[PATH_MAX];
	if (join(dir, sizeof(dir), c->root, "tmp"))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[PATH_MAX];
		if (join(path, sizeof(path), dir, e->d_name))
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    (all || now - st.st_mtime > STALE_PART_S)) {
			unlink_if_same(path, st.st_dev, st.st_ino);
			if (removed) {
				removed->parts++;
				removed->part_bytes += (uint64_t)st.st_size;
			}
		}
		close(fd);
	}
	closedir(d);
}

int ml_cache_open(ml_cache **out, const char *dir, ml_cache_mode mode, ml_err *err)
{
	if (!dir || !dir[0])
		return ml_err_set(err, ML_EFAIL, "no cache directory given");
	ml_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	c->lock_fd = -1;
	c->mode = mode;
	int rc = 0;
	char path[PATH_MAX];
	if (ml_strlcpy(c->root, dir, sizeof(c->root)) >= sizeof(c->root)) {
		rc = ml_err_set(err, ML_EIO, "cache directory '%s' is too long", dir);
		goto fail;
	}
	static const char *const subdirs[] = {"blobs/sha256", "tmp", "index", "locks"};
	int e = ml_fs_mkdirs(c->root, 0755);
	if (e) {
		rc = ml_err_set(err, ML_EIO, "cannot create cache directory '%s': %s", c->root,
		                strerror(-e));
		ml_err_hint(err, "choose another place with --cache-dir or MLSETUP_CACHE_DIR");
		goto fail;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		e = join(path, sizeof(path), c->root, subdirs[i]) ? -ENAMETOOLONG
		                                                  : ml_fs_mkdirs(path, 0755);
		if (e) {
			rc = ml_err_set(err, ML_EIO, "cannot create '%s/%s': %s", c->root,
			                subdirs[i], strerror(-e));
			ml_err_hint(err, "check the permissions of the cache directory, or choose "
			                 "another with --cache-dir");
			goto fail;
		}
	}
	/* clean and prune hold it exclusively and never wait; the others
	 * share it, waiting for a clean or prune to finish */
	e = join(path, sizeof(path), c->root, ".lock") ? -ENAMETOOLONG
	    : mode == ML_CACHE_EXCLUSIVE               ? ml_fs_lock(&c->lock_fd, path, false)
	                                               : ml_fs_lock_shared(&c->lock_fd, path, true);
	if (e == -EWOULDBLOCK) {
		rc = ml_err_set(err, ML_EFAIL, "cache '%s' is in use by another mlsetup process",
		                c->root);
		ml_err_hint(err, "wait for it to finish, then run this again");
		goto fail;
	}
	if (e) {
		rc = ml_err_set(err, ML_EIO, "cannot lock cache '%s' ('%s/.lock'): %s", c->root,
		                c->root, strerror(-e));
		goto fail;
	}
	sweep_parts(c, false, NULL);
	*out = c;
	return 0;
fail:
	ml_cache_close(c);
	return rc;
}

void ml_cache_close(ml_cache *c)
{
	if (!c)
		return;
	ml_fs_unlock(c->lock_fd);
	free(c);
}

const char *ml_cache_root(const ml_cache *c)
{
	return c ? c->root : "";
}

/* --- blobs --------------------------------------------------------------------- */

int ml_cache_blob_get(char *path, size_t pathsz, ml_cache *c, const char *sha256, int64_t size,
                      bool *corrupted, ml_err *err)
{
	if (corrupted)
		*corrupted = false;
	if (!ml_is_sha256_hex(sha256))
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 digest",
		                  sha256 ? sha256 : "");
	char p[PATH_MAX];
	if (ml_cache_blob_path(p, sizeof(p), c->root, sha256) != 0)
		return ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return ml_err_set(err, ML_ENOENT, "'%s' is not in the cache", sha256);
		return ml_err_set(err, ML_EIO, "cannot open cached file '%s': %s", p,
		                  strerror(errno));
	}
	struct stat st;
	char actual[65] = "";
	uint64_t got = 0;
	int rc = 0;
	if (fstat(fd, &st) != 0) {
		rc = ml_err_set(err, ML_EIO, "cannot stat cached file '%s': %s", p,
		                strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (size >= 0 && st.st_size != size)) {
		ml_err_set(err, ML_ENOENT,
		           "cached file '%s' has %lld bytes, expected %lld; removed it", p,
		           (long long)st.st_size, (long long)size);
		goto corrupt;
	}
	if ((rc = ml_sha256_fd(actual, &got, fd, p, err)) != 0)
		goto out;
	if (strcmp(actual, sha256) != 0 || (size >= 0 && got != (uint64_t)size)) {
		ml_err_set(err, ML_ENOENT,
		           "cached file '%s' is corrupted (sha256 %s, expected %s); removed it", p,
		           actual, sha256);
		goto corrupt;
	}
	futimens(fd, NULL); /* "last used": what prune reads; best effort */
	if (ml_strlcpy(path, p, pathsz) >= pathsz)
		rc = ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
	goto out;
corrupt:
	unlink_if_same(p, st.st_dev, st.st_ino);
	if (corrupted)
		*corrupted = true;
	rc = ML_ENOENT;
out:
	close(fd);
	return rc;
}

int ml_cache_blob_lock(ml_cache_lock **out, ml_cache *c, const char *sha256, bool wait, ml_err *err)
{
	char name[80], p[PATH_MAX];
	if (!ml_is_sha256_hex(sha256))
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 digest",
		                  sha256 ? sha256 : "");
	snprintf(name, sizeof(name), "locks/%s.lock", sha256);
	if (join(p, sizeof(p), c->root, name))
		return ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
	int fd = -1;
	int e = ml_fs_lock(&fd, p, wait);
	if (e == -EWOULDBLOCK && !wait) {
		*out = NULL;
		return 0;
	}
	if (e)
		return ml_err_set(err, ML_EIO, "cannot lock '%s': %s", p, strerror(-e));
	ml_cache_lock *l = malloc(sizeof(*l));
	if (!l) {
		ml_fs_unlock(fd);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	l->fd = fd;
	*out = l;
	return 0;
}

void ml_cache_unlock(ml_cache_lock *l)
{
	if (!l)
		return;
	ml_fs_unlock(l->fd);
	free(l);
}

int ml_cache_tmp_create(int *fd, char *path, size_t pathsz, ml_cache *c, ml_err *err)
{
	for (int tries = 0; tries < 16; tries++) {
		char name[40], p[PATH_MAX];
		char rnd[17];
		ml_random_hex(rnd, 8);
		snprintf(name, sizeof(name), "tmp/%s.part", rnd);
		if (join(p, sizeof(p), c->root, name) || strlen(p) >= pathsz)
			return ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
		int f = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (f < 0 && errno == EEXIST)
			continue;
		if (f < 0)
			return ml_err_set(err, ML_EIO, "cannot create '%s': %s", p,
			                  strerror(errno));
		flock(f, LOCK_EX | LOCK_NB); /* marks it alive for sweep_parts() */
		ml_strlcpy(path, p, pathsz);
		*fd = f;
		return 0;
	}
	return ml_err_set(err, ML_EIO, "cannot create a temporary file in '%s/tmp'", c->root);
}

void ml_cache_tmp_discard(int fd, const char *path)
{
	if (path && path[0])
		unlink(path);
	if (fd >= 0)
		close(fd);
}

int ml_cache_blob_commit(char *blob_path, size_t pathsz, ml_cache *c, int fd, const char *part_path,
                         const char *sha256, ml_err *err)
{
	char p[PATH_MAX], dir[PATH_MAX];
	if (!ml_is_sha256_hex(sha256))
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 digest",
		                  sha256 ? sha256 : "");
	if (ml_cache_blob_path(p, sizeof(p), c->root, sha256) != 0 || strlen(p) >= pathsz)
		return ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
	ml_strlcpy(dir, p, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	/* No fsync, of the file or the directory: every use of a blob
	 * checks its size and sha256 (ml_cache_blob_get), so one a power
	 * loss truncated is fetched again, and an environment built from it
	 * is made durable as a whole by ml_env_stage_commit(). A flush per
	 * blob stalled the download loop (13 ms each, 5 per small wheel). */
	if (fd >= 0 && fchmod(fd, 0444) != 0)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", part_path, strerror(errno));
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	struct stat st;
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* another process committed the same content first; both are
		 * verified copies, and keeping the existing one keeps its
		 * inode stable for anyone who has linked it */
		unlink(part_path);
		ml_strlcpy(blob_path, p, pathsz);
		return 0;
	}
	if (rename(part_path, p) != 0)
		return ml_err_set(err, ML_EIO, "cannot move '%s' into the cache as '%s': %s",
		                  part_path, p, strerror(errno));
	ml_strlcpy(blob_path, p, pathsz);
	return 0;
}

/* --- where blobs came from ---------------------------------------------------- */

static int origin_path(char *dst, size_t sz, const ml_cache *c, const char *sha256)
{
	if (!ml_is_sha256_hex(sha256))
		return ML_EFAIL;
	int n = snprintf(dst, sz, "%s/origins/%.2s/%s", c->root, sha256, sha256);
	return n < 0 || (size_t)n >= sz ? ML_EFAIL : 0;
}

int ml_cache_origin_put(ml_cache *c, const char *sha256, const char *url, ml_err *err)
{
	char p[PATH_MAX], dir[PATH_MAX], clean[4096];
	if (origin_path(p, sizeof(p), c, sha256) != 0)
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 digest",
		                  sha256 ? sha256 : "");
	ml_url_strip_userinfo(clean, sizeof(clean), url);
	ml_strlcpy(dir, p, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	int e = ml_fs_mkdirs(dir, 0755);
	if (!e)
		e = ml_fs_write_atomic_nosync(p, clean, strlen(clean), 0644);
	return e ? ml_err_set(err, ML_EIO, "cannot write '%s': %s", p, strerror(-e)) : 0;
}

int ml_cache_origin_get(char *url, size_t sz, ml_cache *c, const char *sha256)
{
	char p[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	if (origin_path(p, sizeof(p), c, sha256) != 0 ||
	    ml_os_read_file(&text, &len, NULL, p, 16384, NULL) != 0)
		return ML_ENOENT;
	int rc = len && len < sz && !memchr(text, '\n', len) ? 0 : ML_ENOENT;
	if (!rc)
		memcpy(url, text, len + 1);
	free(text);
	return rc;
}

/* Removes origin records: all of them, or those whose blob is gone. */
static void sweep_origins(const ml_cache *c, bool all)
{
	char top[PATH_MAX];
	if (join(top, sizeof(top), c->root, "origins"))
		return;
	if (all) {
		ml_fs_rm_tree(top);
		return;
	}
	DIR *d = opendir(top);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char sub[PATH_MAX];
		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", top, e->d_name) >= (int)sizeof(sub))
			continue;
		DIR *d2 = opendir(sub);
		struct dirent *f;
		while (d2 && (f = readdir(d2)) != NULL) {
			char blob[PATH_MAX], rec[PATH_MAX];
			struct stat st;
			if (!ml_is_sha256_hex(f->d_name) ||
			    ml_cache_blob_path(blob, sizeof(blob), c->root, f->d_name) != 0 ||
			    snprintf(rec, sizeof(rec), "%s/%s", sub, f->d_name) >= (int)sizeof(rec))
				continue;
			if (stat(blob, &st) != 0)
				unlink(rec);
		}
		if (d2)
			closedir(d2);
		rmdir(sub); /* only when empty */
	}
	if (d)
		closedir(d);
}

/* --- index pages ----------------------------------------------------------------- */

/* <cache>/index/<2>/<64> (no suffix) for (url, accept). Returns 0,
 * ML_ENOMEM or ML_EFAIL (too long). */
static int page_base(char *dst, size_t sz, const ml_cache *c, const char *url, const char *accept)
{
	char key[65];
	if (hash_key(key, accept, url))
		return ML_ENOMEM;
	return ml_pathf(dst, sz, "%s/index/%.2s/%s", c->root, key, key);
}

/* Value of "name: value" line in the meta text, or NULL (caller frees). */
static char *meta_value(const char *text, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, nl) == 0 && p[nl] == ':' && p[nl + 1] == ' ') {
			const char *v = p + nl + 2;
			return strndup(v, strcspn(v, "\n"));
		}
	}
	return NULL;
}

int ml_cache_page_get(ml_http_response *out, ml_cache *c, const char *url, const char *accept,
                      ml_err *err)
{
	char base[PATH_MAX], path[PATH_MAX + 8];
	if (page_base(base, sizeof(base), c, url, accept ? accept : ""))
		return ml_err_set(err, ML_ENOENT, "no stored page");
	char *meta = NULL, *body = NULL;
	size_t meta_len = 0, body_len = 0;
	ml_http_response r = {0};
	int rc = ML_ENOENT;
	snprintf(path, sizeof(path), "%s.meta", base);
	if (ml_os_read_file(&meta, &meta_len, NULL, path, META_MAX_BYTES, NULL) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s.body", base);
	if (ml_os_read_file(&body, &body_len, NULL, path, PAGE_MAX_BYTES, NULL) != 0)
		goto out;
	char *want = meta_value(meta, "body-sha256");
	char got[65];
	char *bl = meta_value(meta, "body-length");
	bool ok = want && bl && strtoull(bl, NULL, 10) == body_len;
	if (ok)
		ok = ml_sha256_hex_buf(got, body, body_len) == 0 && strcmp(got, want) == 0;
	free(want);
	free(bl);
	if (!ok)
		goto out;
	r.status = 200;
	r.content_type = meta_value(meta, "content-type");
	r.etag = meta_value(meta, "etag");
	r.last_modified = meta_value(meta, "last-modified");
	r.effective_url = strdup(url);
	if (!r.effective_url || ml_buf_add(&r.body, body, body_len)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	utimensat(AT_FDCWD, path, NULL, 0); /* last used, for prune */
	*out = r;
	memset(&r, 0, sizeof(r));
	rc = 0;
out:
	if (rc == ML_ENOENT)
		ml_err_set(err, ML_ENOENT, "no stored page");
	ml_http_response_release(&r);
	free(meta);
	free(body);
	return rc;
}

/* A header value fit for one meta line (no CR/LF), or "". */
static const char *meta_safe(const char *v)
{
	return v && !strpbrk(v, "\r\n") ? v : "";
}

int ml_cache_page_put(ml_cache *c, const char *url, const char *accept, const ml_http_response *r,
                      ml_err *err)
{
	if (!r || (!r->etag && !r->last_modified))
		return 0;
	char base[PATH_MAX], path[PATH_MAX + 8], dir[PATH_MAX];
	int rc = page_base(base, sizeof(base), c, url, accept ? accept : "");
	if (rc == ML_ENOMEM)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (rc)
		return ml_err_set(err, ML_EIO, "cache path too long under '%s'", c->root);
	ml_strlcpy(dir, base, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	char hex[65];
	if (ml_sha256_hex_buf(hex, ml_buf_cstr(&r->body), r->body.len))
		return ml_err_set(err, ML_EIO, "cannot hash an index page");
	ml_buf meta = ML_BUF_INIT;
	if (ml_buf_printf(&meta,
	                  "content-type: %s\netag: %s\nlast-modified: %s\nbody-sha256: %s\n"
	                  "body-length: %zu\n",
	                  meta_safe(r->content_type), meta_safe(r->etag),
	                  meta_safe(r->last_modified), hex, r->body.len)) {
		ml_buf_release(&meta);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	/* body first, then the meta that vouches for it: a reader that sees
	 * a meta for another body rejects the pair. Atomic but not fsynced: a
	 * page is checked against its meta's sha256 and length on every read,
	 * so one torn by a crash is fetched again, and fsync per page cost
	 * ~12 ms each on a cold install */
	snprintf(path, sizeof(path), "%s.body", base);
	if ((e = ml_fs_write_atomic_nosync(path, ml_buf_cstr(&r->body), r->body.len, 0644)) != 0)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	snprintf(path, sizeof(path), "%s.meta", base);
	if (!rc && (e = ml_fs_write_atomic_nosync(path, ml_buf_cstr(&meta), meta.len, 0644)) != 0)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	ml_buf_release(&meta);
	return rc;
}

/* --- walking, stats, clean, prune, verify --------------------------------------- */

/* What to do with each file of a walk. */
typedef enum walk_kind { WALK_BLOB, WALK_PAGE, WALK_PART, WALK_LOCK } walk_kind;

typedef struct walk {
	ml_cache *c;
	int (*fn)(struct walk *w, walk_kind kind, const char *path, const char *name,
	          const struct stat *st);
	ml_cache_stats *a, *b;
	time_t cutoff;
	ml_err *err;
} walk;

static void count(ml_cache_stats *s, walk_kind kind, const struct stat *st)
{
	if (!s)
		return;
	uint64_t n = (uint64_t)st->st_size;
	switch (kind) {
	case WALK_BLOB:
		s->blobs++;
		s->blob_bytes += n;
		break;
	case WALK_PAGE:
		s->page_bytes += n;
		break;
	case WALK_PART:
		s->parts++;
		s->part_bytes += n;
		break;
	case WALK_LOCK:
		break;
	}
}

/* Calls w->fn for every regular file in dir, and in its subdirectories
 * when depth > 0. Returns 0 or what fn returned. */
static int walk_dir(walk *w, walk_kind kind, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0
		                       : ml_err_set(w->err, ML_EIO, "cannot list '%s': %s", dir,
		                                    strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char path[PATH_MAX];
		struct stat st;
		if (join(path, sizeof(path), dir, e->d_name) || lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth > 0)
				rc = walk_dir(w, kind, path, depth - 1);
		} else if (S_ISREG(st.st_mode)) {
			rc = w->fn(w, kind, path, e->d_name, &st);
		}
	}
	closedir(d);
	return rc;
}

/* --- unpacked wheel trees (made by src/env, judged here) ------------------ */

/* Sums the regular files under path (bytes), not following links. */
static uint64_t tree_bytes(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	DIR *d = opendir(path);
	if (!d)
		return 0;
	uint64_t sum = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !join(p, sizeof(p), path, e->d_name))
			sum += tree_bytes(p);
	}
	closedir(d);
	return sum;
}

/* Calls fn for each entry of <cache>/unpacked/sha256 (trees, their lock
 * files and any leftovers). */
static int walk_unpacked(walk *w, bool remove_all)
{
	char dir[PATH_MAX];
	if (join(dir, sizeof(dir), w->c->root, "unpacked/sha256"))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int rc = 0;
	time_t cutoff = w->cutoff;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char p[PATH_MAX], blob[PATH_MAX];
		struct stat st, bs;
		if (join(p, sizeof(p), dir, e->d_name) || lstat(p, &st) != 0)
			continue;
		bool tree = S_ISDIR(st.st_mode) && ml_is_sha256_hex(e->d_name);
		uint64_t bytes = tree ? tree_bytes(p) : (uint64_t)st.st_size;
		bool go = remove_all;
		if (!go && w->fn == NULL && tree) /* prune */
			go = st.st_mtime < cutoff &&
			     ml_cache_blob_path(blob, sizeof(blob), w->c->root, e->d_name) == 0 &&
			     stat(blob, &bs) != 0;
		int r = go ? ml_fs_rm_tree(p) : 0;
		if (r)
			rc = ml_err_set(w->err, ML_EIO, "cannot remove '%s': %s", p, strerror(-r));
		ml_cache_stats *s = go ? w->a : (w->fn == NULL || remove_all ? NULL : w->a);
		if (s && tree) {
			s->unpacked++;
			s->unpacked_bytes += bytes;
		}
	}
	closedir(d);
	if (remove_all) {
		char up[PATH_MAX];
		if (!join(up, sizeof(up), w->c->root, "unpacked"))
			ml_fs_rm_tree(up);
	}
	return rc;
}

static int walk_cache(walk *w)
{
	static const struct {
		const char *dir;
		walk_kind kind;
		int depth;
	} parts[] = {
	        {"blobs/sha256", WALK_BLOB, 1},
	        {"index", WALK_PAGE, 1},
	        {"tmp", WALK_PART, 0},
	        {"locks", WALK_LOCK, 0},
	};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char dir[PATH_MAX];
		if (join(dir, sizeof(dir), w->c->root, parts[i].dir))
			return ml_err_set(w->err, ML_EIO, "cache path too long");
		int rc = walk_dir(w, parts[i].kind, dir, parts[i].depth);
		if (rc)
			return rc;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int stat_fn(walk *w, walk_kind kind, const char *path, const char *name,
                   const struct stat *st)
{
	(void)path;
	if (kind == WALK_BLOB && !ml_is_sha256_hex(name))
		return 0;
	if (kind == WALK_PAGE && ends_with(name, ".meta"))
		w->a->pages++;
	count(w->a, kind, st);
	return 0;
}

int ml_cache_stats_get(ml_cache_stats *out, ml_cache *c, ml_err *err)
{
	ml_cache_stats s = {0};
	walk w = {c, stat_fn, &s, NULL, 0, err};
	int rc = walk_cache(&w);
	if (!rc)
		rc = walk_unpacked(&w, false);
	if (!rc)
		*out = s;
	return rc;
}

static int need_exclusive(const ml_cache *c, const char *what, ml_err *err)
{
	if (c->mode == ML_CACHE_EXCLUSIVE)
		return 0;
	return ml_err_set(err, ML_EFAIL, "cache %s needs the cache opened exclusively", what);
}

static int remove_fn(walk *w, walk_kind kind, const char *path, const char *name,
                     const struct stat *st)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return ml_err_set(w->err, ML_EIO, "cannot remove '%s': %s", path, strerror(errno));
	if (kind == WALK_PAGE && ends_with(name, ".meta") && w->a)
		w->a->pages++;
	count(w->a, kind, st);
	return 0;
}

/* Removes the now empty two-hex-digit directories under <root>/<sub>. */
static void remove_empty_dirs(const ml_cache *c, const char *sub)
{
	char dir[PATH_MAX];
	if (join(dir, sizeof(dir), c->root, sub))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		if (e->d_name[0] != '.' && !join(p, sizeof(p), dir, e->d_name))
			rmdir(p); /* fails, harmlessly, when not empty */
	}
	closedir(d);
}

int ml_cache_clean(ml_cache *c, ml_cache_stats *removed, ml_err *err)
{
	int rc = need_exclusive(c, "clean", err);
	if (rc)
		return rc;
	ml_cache_stats s = {0};
	walk w = {c, remove_fn, &s, NULL, 0, err};
	rc = walk_cache(&w);
	if (!rc)
		rc = walk_unpacked(&w, true);
	remove_empty_dirs(c, "blobs/sha256");
	remove_empty_dirs(c, "index");
	sweep_origins(c, true);
	if (removed)
		*removed = s;
	return rc;
}

static int prune_fn(walk *w, walk_kind kind, const char *path, const char *name,
                    const struct stat *st)
{
	if (kind == WALK_PART)
		return 0; /* only stale ones, by sweep_parts() */
	if (kind == WALK_LOCK) {
		/* locks/<sha>.lock of a blob that is gone */
		char sha[65], blob[PATH_MAX];
		if (strlen(name) != 69 || !ends_with(name, ".lock"))
			return 0;
		memcpy(sha, name, 64);
		sha[64] = '\0';
		struct stat bs;
		if (ml_cache_blob_path(blob, sizeof(blob), w->c->root, sha) == 0 &&
		    stat(blob, &bs) != 0)
			unlink(path);
		return 0;
	}
	if (kind == WALK_PAGE && ends_with(name, ".meta"))
		return 0; /* judged with its .body, which carries the last-use time */
	if (st->st_mtime >= w->cutoff)
		return 0;
	int rc = remove_fn(w, kind, path, name, st);
	if (!rc && kind == WALK_PAGE && ends_with(name, ".body")) {
		char meta[PATH_MAX];
		struct stat mst;
		size_t n = strlen(path);
		if (n < sizeof(meta)) {
			memcpy(meta, path, n - 5);
			strcpy(meta + n - 5, ".meta");
			if (lstat(meta, &mst) == 0 && unlink(meta) == 0) {
				count(w->a, kind, &mst);
				w->a->pages++;
			}
		}
	}
	return rc;
}

int ml_cache_prune(ml_cache *c, unsigned days, ml_cache_stats *removed, ml_err *err)
{
	int rc = need_exclusive(c, "prune", err);
	if (rc)
		return rc;
	ml_cache_stats s = {0};
	walk w = {c, prune_fn, &s, NULL, time(NULL) - (time_t)days * 86400, err};
	rc = walk_cache(&w);
	if (!rc) {
		/* after the blobs: a tree goes only when its wheel is gone */
		walk u = {c, NULL, &s, NULL, w.cutoff, err};
		rc = walk_unpacked(&u, false);
	}
	sweep_parts(c, false, &s);
	remove_empty_dirs(c, "blobs/sha256");
	remove_empty_dirs(c, "index");
	sweep_origins(c, false);
	if (removed)
		*removed = s;
	return rc;
}

static int verify_fn(walk *w, walk_kind kind, const char *path, const char *name,
                     const struct stat *st)
{
	if (kind != WALK_BLOB || !ml_is_sha256_hex(name))
		return 0;
	count(w->a, kind, st);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0; /* removed meanwhile */
	char actual[65];
	uint64_t size = 0;
	int rc = ml_sha256_fd(actual, &size, fd, path, w->err);
	if (rc == 0 && strcmp(actual, name) != 0) {
		unlink_if_same(path, st->st_dev, st->st_ino);
		count(w->b, kind, st);
	}
	close(fd);
	return rc;
}

int ml_cache_verify(ml_cache *c, ml_cache_stats *checked, ml_cache_stats *removed, ml_err *err)
{
	ml_cache_stats a = {0}, b = {0};
	walk w = {c, verify_fn, &a, &b, 0, err};
	char dir[PATH_MAX];
	if (join(dir, sizeof(dir), c->root, "blobs/sha256"))
		return ml_err_set(err, ML_EIO, "cache path too long");
	int rc = walk_dir(&w, WALK_BLOB, dir, 1);
	if (checked)
		*checked = a;
	if (removed)
		*removed = b;
	return rc;
}
