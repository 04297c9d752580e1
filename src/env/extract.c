/*
 * extract.c - checked archive extraction (docs/reliability.md, "Archives"):
 * interpreter archives (tar.gz / tar.zst) are read with libarchive,
 * restricted to the tar reader and the gzip and zstd filters; wheels (zip)
 * with our own reader (zipscan.c, unzip.c). Every entry is checked by
 * ml_entry_check() before anything is created for it, and a wheel for a
 * Windows environment by ml_entry_windows_check() too (the names Windows
 * cannot create as named: device names, trailing dots and spaces, ':';
 * both in entry.c).
 *
 * Files are written by our own descriptor-relative writer: each path is
 * opened one component at a time under a directory descriptor of the fresh
 * destination, with O_NOFOLLOW, and files are created with O_EXCL. No
 * entry can therefore write through a symbolic link, outside the
 * destination, or over another entry. After the last entry every symbolic
 * link is resolved again through the whole tree (chains included) and the
 * archive is refused when one leaves it. Caps on entries and on expanded
 * bytes stop archive bombs while they expand.
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "internal.h"

/* --- the writer ----------------------------------------------------------------------- */

typedef struct xnode {
	ml_entry_type type;
	char *link; /* symlink target as written; hardlink: normalized path */
} xnode;

typedef struct xctx {
	const char *what; /* archive path, for messages */
	const ml_extract_opts *o;
	uint64_t max_bytes, max_entries;
	int rootfd;
	char parent[ML_PATH_MAX]; /* cached parent directory ("" = root) */
	int parent_fd;
	mle_map names; /* normalized path -> index in nodes */
	xnode *nodes;
	size_t n_nodes, cap_nodes;
	ml_extract_result res;
	size_t cap_listed;
	ml_sha256 *md; /* RECORD digests of the listed files */
	ml_err *err;
} xctx;

static int xfail(xctx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets err to "archive '<what>': <message>" (with the refusal hint for
 * ML_EINTEGRITY) and returns code. */
static int xfail(xctx *x, int code, const char *fmt, ...)
{
	char m[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	ml_err_set(x->err, code, "archive '%s': %s", x->what, m);
	if (code == ML_EINTEGRITY)
		ml_err_hint(x->err, "the archive is refused and nothing from it is installed; "
		                    "report it to whoever published it");
	return code;
}

static int xnomem(xctx *x)
{
	return ml_err_set(x->err, ML_ENOMEM, "out of memory");
}

static int xio(xctx *x, const char *path, int e)
{
	return xfail(x, ML_EIO, "cannot write '%s': %s", path, strerror(e));
}

/* mle_open_dir() with the archive's error messages. Returns a new
 * descriptor (caller closes) or a negative ML_E* code. */
static int open_dir(xctx *x, const char *dir)
{
	int fd = mle_open_dir(x->rootfd, dir);
	if (fd >= 0)
		return fd;
	if (fd == -ELOOP || fd == -ENOTDIR)
		return xfail(x, ML_EINTEGRITY,
		             "entry path '%s' passes through a symbolic link or a file", dir);
	return xio(x, dir, -fd);
}

/* Returns a descriptor for the parent of `path` (cached; do not close)
 * and points *leaf at its last component. */
static int parent_of(xctx *x, const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	size_t dn = slash ? (size_t)(slash - path) : 0;
	*leaf = slash ? slash + 1 : path;
	if (x->parent_fd >= 0 && strlen(x->parent) == dn && memcmp(x->parent, path, dn) == 0)
		return x->parent_fd;
	char dir[ML_PATH_MAX];
	memcpy(dir, path, dn);
	dir[dn] = '\0';
	int fd = open_dir(x, dir);
	if (fd < 0)
		return fd;
	if (x->parent_fd >= 0)
		close(x->parent_fd);
	x->parent_fd = fd;
	memcpy(x->parent, dir, dn + 1);
	return fd;
}

/* Records a new entry name; refuses duplicates. */
static int add_node(xctx *x, const char *path, ml_entry_type type, const char *link)
{
	if (x->n_nodes == x->cap_nodes) {
		size_t cap = x->cap_nodes ? x->cap_nodes * 2 : 256;
		xnode *v = realloc(x->nodes, cap * sizeof *v);
		if (!v)
			return xnomem(x);
		x->nodes = v;
		x->cap_nodes = cap;
	}
	int r = mle_map_put(&x->names, path, x->n_nodes, NULL);
	if (r < 0)
		return xnomem(x);
	if (r == 0)
		return xfail(x, ML_EINTEGRITY, "duplicate entry '%s'", path);
	xnode *nd = &x->nodes[x->n_nodes++];
	nd->type = type;
	nd->link = NULL;
	if (link && !(nd->link = strdup(link)))
		return xnomem(x);
	return 0;
}

static int list_file(xctx *x, const char *path, uint64_t size, const uint8_t *digest, bool exec)
{
	if (x->res.n_listed == x->cap_listed) {
		size_t cap = x->cap_listed ? x->cap_listed * 2 : 256;
		ml_extracted_file *v = realloc(x->res.files, cap * sizeof *v);
		if (!v)
			return xnomem(x);
		x->res.files = v;
		x->cap_listed = cap;
	}
	ml_extracted_file *f = &x->res.files[x->res.n_listed];
	if (!(f->path = strdup(path)))
		return xnomem(x);
	f->size = size;
	memcpy(f->sha256, digest, 32);
	f->executable = exec;
	x->res.n_listed++;
	return 0;
}

static int bomb(xctx *x)
{
	char cap[64];
	snprintf(cap, sizeof cap, "%llu", (unsigned long long)x->max_bytes);
	return xfail(x, ML_EINTEGRITY, "expands past the cap of %s bytes (an archive bomb?)", cap);
}

static int write_file(xctx *x, struct archive *a, struct archive_entry *e, const char *path)
{
	const char *leaf;
	int pfd = parent_of(x, path, &leaf);
	if (pfd < 0)
		return pfd;
	unsigned amode = (unsigned)archive_entry_mode(e);
	bool exec = (amode & 0111) != 0;
	if (amode & 07000)
		x->res.n_modes_cleared++;
	mode_t mode = x->o->read_only ? (exec ? 0555 : 0444) : (exec ? 0755 : 0644);
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
	    (uint64_t)archive_entry_size(e) > x->max_bytes - x->res.bytes)
		return bomb(x);

	int fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return xfail(x, ML_EINTEGRITY, "entry '%s' collides with an earlier entry",
			             path);
		return xio(x, path, errno);
	}
	int rc = 0;
	uint64_t pos = 0; /* bytes hashed so far */
	if (x->o->list_files && ml_sha256_reset(x->md) != 0) {
		rc = xnomem(x);
		goto out;
	}
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t off;
		int r = archive_read_data_block(a, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rc = xfail(x, ML_EINTEGRITY, "cannot read entry '%s': %s", path,
			           archive_error_string(a) ? archive_error_string(a) : "error");
			goto out;
		}
		if (off < 0 || (uint64_t)off < pos) {
			rc = xfail(x, ML_EINTEGRITY, "entry '%s' has overlapping data blocks",
			           path);
			goto out;
		}
		uint64_t end = (uint64_t)off + size;
		if (end - pos > x->max_bytes - x->res.bytes) {
			rc = bomb(x);
			goto out;
		}
		if (x->o->list_files) {
			static const uint8_t zeros[4096];
			for (uint64_t h = pos; h < (uint64_t)off;) {
				size_t k = (uint64_t)off - h > sizeof zeros
				                   ? sizeof zeros
				                   : (size_t)((uint64_t)off - h);
				ml_sha256_update(x->md, zeros, k);
				h += k;
			}
			ml_sha256_update(x->md, buf, size);
		}
		for (size_t done = 0; done < size;) {
			ssize_t w = pwrite(fd, (const char *)buf + done, size - done,
			                   (off_t)((uint64_t)off + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = xio(x, path, w < 0 ? errno : EIO);
				goto out;
			}
			done += (size_t)w;
		}
		x->res.bytes += end - pos;
		pos = end;
	}
	/* A sparse file may end in a hole. */
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
	    (uint64_t)archive_entry_size(e) > pos) {
		uint64_t want = (uint64_t)archive_entry_size(e);
		if (want - pos > x->max_bytes - x->res.bytes) {
			rc = bomb(x);
			goto out;
		}
		if (ftruncate(fd, (off_t)want) != 0) {
			rc = xio(x, path, errno);
			goto out;
		}
		if (x->o->list_files) {
			static const uint8_t zeros[4096];
			for (uint64_t h = pos; h < want;) {
				size_t k =
				        want - h > sizeof zeros ? sizeof zeros : (size_t)(want - h);
				ml_sha256_update(x->md, zeros, k);
				h += k;
			}
		}
		x->res.bytes += want - pos;
		pos = want;
	}
	if (fchmod(fd, mode) != 0) {
		rc = xio(x, path, errno);
		goto out;
	}
	if (x->o->list_files) {
		uint8_t d[32];
		rc = ml_sha256_final(x->md, d) ? xnomem(x) : list_file(x, path, pos, d, exec);
	}
	x->res.n_files++;
out:
	if (close(fd) != 0 && !rc)
		rc = xio(x, path, errno);
	return rc;
}

static int make_dir(xctx *x, const char *path)
{
	if (!*path)
		return 0; /* the root itself */
	const char *leaf;
	int pfd = parent_of(x, path, &leaf);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, leaf, 0700) != 0 && errno != EEXIST)
		return xio(x, path, errno);
	int fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return xfail(x, ML_EINTEGRITY,
		             "directory entry '%s' collides with an earlier entry", path);
	fchmod(fd, 0755);
	close(fd);
	x->res.n_dirs++;
	return 0;
}

static int make_symlink(xctx *x, const char *path, const char *target)
{
	const char *leaf;
	int pfd = parent_of(x, path, &leaf);
	if (pfd < 0)
		return pfd;
	if (symlinkat(target, pfd, leaf) != 0) {
		if (errno == EEXIST)
			return xfail(x, ML_EINTEGRITY, "entry '%s' collides with an earlier entry",
			             path);
		return xio(x, path, errno);
	}
	x->res.n_symlinks++;
	return 0;
}

/* Links `path` (the node just added, the last one) to the earlier file
 * entry `target`. The target must be an earlier node: the link's own node
 * is already in the map, so a link naming itself would otherwise pass as
 * "earlier" and fail in linkat() as an I/O error. */
static int make_hardlink(xctx *x, const char *path, const char *target)
{
	size_t idx;
	if (!mle_map_get(&x->names, target, &idx) || idx + 1 >= x->n_nodes ||
	    (x->nodes[idx].type != ML_ENTRY_FILE && x->nodes[idx].type != ML_ENTRY_HARDLINK))
		return xfail(x, ML_EINTEGRITY,
		             "hard link '%s' does not name an earlier file entry ('%s')", path,
		             target);
	const char *tslash = strrchr(target, '/');
	char tdir[ML_PATH_MAX];
	size_t tn = tslash ? (size_t)(tslash - target) : 0;
	memcpy(tdir, target, tn);
	tdir[tn] = '\0';
	int tfd = open_dir(x, tdir);
	if (tfd < 0)
		return tfd;
	const char *leaf;
	int pfd = parent_of(x, path, &leaf);
	if (pfd < 0) {
		close(tfd);
		return pfd;
	}
	int rc = 0;
	if (linkat(tfd, tslash ? tslash + 1 : target, pfd, leaf, 0) != 0)
		rc = errno == EEXIST ? xfail(x, ML_EINTEGRITY,
		                             "entry '%s' collides with an earlier entry", path)
		                     : xio(x, path, errno);
	close(tfd);
	if (!rc)
		x->res.n_hardlinks++;
	return rc;
}

/* Resolves the symlink at `path` through the extracted tree, following
 * chains, the way the kernel would: refused when any ".." climbs above
 * the root or after 40 links. */
static int resolve_link(xctx *x, const char *path, const char *target)
{
	enum { PENDING_MAX = 4 * ML_PATH_MAX };
	char *resolved = malloc(ML_PATH_MAX), *pending = malloc(PENDING_MAX);
	char *cand = malloc(ML_PATH_MAX), *tmp = malloc(PENDING_MAX);
	int rc = 0;
	if (!resolved || !pending || !cand || !tmp) {
		rc = xnomem(x);
		goto out;
	}
	const char *slash = strrchr(path, '/');
	size_t rn = slash ? (size_t)(slash - path) : 0;
	memcpy(resolved, path, rn);
	resolved[rn] = '\0';
	ml_strlcpy(pending, target, PENDING_MAX);
	int hops = 1;
	size_t pi = 0;
	while (pending[pi]) {
		const char *s = strchr(pending + pi, '/');
		size_t c = s ? (size_t)(s - (pending + pi)) : strlen(pending + pi);
		const char *comp = pending + pi;
		size_t next = pi + c + (s ? 1 : 0);
		if (c == 0 || (c == 1 && comp[0] == '.')) {
			pi = next;
			continue;
		}
		if (c == 2 && comp[0] == '.' && comp[1] == '.') {
			if (rn == 0) {
				rc = xfail(x, ML_EINTEGRITY,
				           "symbolic link '%s' leaves the tree through a chain of "
				           "links ('%s')",
				           path, target);
				goto out;
			}
			char *ls = strrchr(resolved, '/');
			rn = ls ? (size_t)(ls - resolved) : 0;
			resolved[rn] = '\0';
			pi = next;
			continue;
		}
		if (rn + 1 + c >= ML_PATH_MAX) {
			rc = xfail(x, ML_EINTEGRITY,
			           "symbolic link '%s' resolves to a path too long", path);
			goto out;
		}
		size_t cn = 0;
		if (rn) {
			memcpy(cand, resolved, rn);
			cand[rn] = '/';
			cn = rn + 1;
		}
		memcpy(cand + cn, comp, c);
		cand[cn + c] = '\0';
		size_t idx;
		if (mle_map_get(&x->names, cand, &idx) && x->nodes[idx].type == ML_ENTRY_SYMLINK) {
			if (++hops > 40) {
				rc = xfail(x, ML_EINTEGRITY,
				           "symbolic link '%s': too many levels of links (a loop?)",
				           path);
				goto out;
			}
			/* Replace the component by the link's target. */
			int w = snprintf(tmp, PENDING_MAX, "%s/%s", x->nodes[idx].link,
			                 pending + next);
			if (w < 0 || w >= PENDING_MAX) {
				rc = xfail(x, ML_EINTEGRITY,
				           "symbolic link '%s' resolves to a path too long", path);
				goto out;
			}
			memcpy(pending, tmp, (size_t)w + 1);
			pi = 0;
			continue;
		}
		memcpy(resolved, cand, cn + c + 1);
		rn = cn + c;
		pi = next;
	}
out:
	free(resolved);
	free(pending);
	free(cand);
	free(tmp);
	return rc;
}

static int check_links(xctx *x)
{
	for (size_t i = 0; i < x->names.cap; i++) {
		if (!x->names.keys[i])
			continue;
		const xnode *nd = &x->nodes[x->names.vals[i]];
		if (nd->type != ML_ENTRY_SYMLINK)
			continue;
		int rc = resolve_link(x, x->names.keys[i], nd->link);
		if (rc)
			return rc;
	}
	return 0;
}

static ml_entry_type entry_type(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return ML_ENTRY_HARDLINK;
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return ML_ENTRY_FILE;
	case AE_IFDIR:
		return ML_ENTRY_DIR;
	case AE_IFLNK:
		return ML_ENTRY_SYMLINK;
	default:
		return ML_ENTRY_OTHER;
	}
}

static const char *utf8_or_raw(const char *u, const char *raw)
{
	return u ? u : raw;
}

/* Checks and writes one entry libarchive has just read. */
static int do_entry(xctx *x, struct archive *a, struct archive_entry *e, char *norm)
{
	unsigned flags = x->o->kind == ML_ARCHIVE_INTERPRETER ? ML_ENTRY_ALLOW_LINKS : 0;
	const char *name = utf8_or_raw(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
	if (!name)
		return xfail(x, ML_EINTEGRITY, "an entry has no readable name");
	ml_entry_type type = entry_type(e);
	const char *link = NULL;
	if (type == ML_ENTRY_SYMLINK)
		link = utf8_or_raw(archive_entry_symlink_utf8(e), archive_entry_symlink(e));
	else if (type == ML_ENTRY_HARDLINK)
		link = utf8_or_raw(archive_entry_hardlink_utf8(e), archive_entry_hardlink(e));
	ml_err sub = ML_ERR_INIT;
	int rc = ml_entry_check(norm, ML_PATH_MAX, name, strlen(name), type, link,
	                        link ? strlen(link) : 0, flags, &sub);
	if (rc) {
		ml_err_set(x->err, rc, "archive '%s': %s", x->what, sub.msg);
		ml_err_hint(x->err, "the archive is refused and nothing from it is installed; "
		                    "report it to whoever published it");
		return rc;
	}
	char tnorm[ML_PATH_MAX];
	if (type == ML_ENTRY_HARDLINK && ml_entry_check(tnorm, sizeof tnorm, link, strlen(link),
	                                                ML_ENTRY_FILE, NULL, 0, 0, &sub) != 0)
		return xfail(x, ML_EINTEGRITY, "hard link '%s' has a refused target", norm);
	if (*norm || type != ML_ENTRY_DIR) {
		rc = add_node(x, norm, type, type == ML_ENTRY_HARDLINK ? tnorm : link);
		if (rc)
			return rc;
	}
	switch (type) {
	case ML_ENTRY_FILE:
		return write_file(x, a, e, norm);
	case ML_ENTRY_DIR:
		return make_dir(x, norm);
	case ML_ENTRY_SYMLINK:
		return make_symlink(x, norm, link);
	case ML_ENTRY_HARDLINK:
		return make_hardlink(x, norm, tnorm);
	default:
		return xfail(x, ML_EINTEGRITY, "entry '%s': unsupported type", norm);
	}
}

static int count_entry(xctx *x)
{
	if (++x->res.n_entries > x->max_entries) {
		char cap[64];
		snprintf(cap, sizeof cap, "%llu", (unsigned long long)x->max_entries);
		return xfail(x, ML_EINTEGRITY, "more entries than the cap of %s", cap);
	}
	return 0;
}

static int header_error(xctx *x, struct archive *a)
{
	const char *m = archive_error_string(a);
	return xfail(x, ML_EINTEGRITY, "unreadable archive: %s", m ? m : "format error");
}

/* --- zip (wheels) ------------------------------------------------------------------- */

static int extract_zip(xctx *x, int fd, uint64_t size, mle_slots *slots)
{
	return mle_unzip(&x->res, fd, size, x->rootfd, x->o, x->max_bytes, x->max_entries, slots,
	                 x->what, x->err);
}

/* --- tar.gz / tar.zst (interpreters) ---------------------------------------------- */

static struct archive *open_compressed(xctx *x, int fd, bool raw, int *rc)
{
	struct archive *a = archive_read_new();
	if (!a) {
		*rc = xnomem(x);
		return NULL;
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	if (raw)
		archive_read_support_format_raw(a);
	else
		archive_read_support_format_tar(a);
	if (lseek(fd, 0, SEEK_SET) != 0 || archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		*rc = header_error(x, a);
		archive_read_free(a);
		return NULL;
	}
	int code = archive_filter_code(a, 0);
	if (code != ARCHIVE_FILTER_GZIP && code != ARCHIVE_FILTER_ZSTD) {
		*rc = xfail(x, ML_EINTEGRITY, "not a gzip- or zstd-compressed tar");
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* After the tar reader stopped at tar_end bytes of the decompressed
 * stream: the stream may hold only zero padding after that (at most 1 MiB),
 * and the compressed stream must end exactly at the end of the file. */
static int check_tar_tail(xctx *x, int fd, uint64_t size, uint64_t tar_end)
{
	int rc = 0;
	struct archive *a = open_compressed(x, fd, true, &rc);
	if (!a)
		return rc;
	struct archive_entry *e;
	char *buf = malloc(1 << 16);
	if (!buf) {
		rc = xnomem(x);
		goto out;
	}
	if (archive_read_next_header(a, &e) != ARCHIVE_OK) {
		rc = header_error(x, a);
		goto out;
	}
	uint64_t total = 0;
	bool nonzero_after = false;
	for (;;) {
		la_ssize_t n = archive_read_data(a, buf, 1 << 16);
		if (n == 0)
			break;
		if (n < 0) {
			rc = header_error(x, a);
			goto out;
		}
		for (la_ssize_t i = 0; i < n && !nonzero_after; i++)
			if (buf[i] && total + (uint64_t)i >= tar_end)
				nonzero_after = true;
		total += (uint64_t)n;
		if (nonzero_after || total > tar_end + ((uint64_t)1 << 20)) {
			nonzero_after = true;
			break;
		}
	}
	if (nonzero_after) {
		rc = xfail(x, ML_EINTEGRITY,
		           "data after the end of the tar archive (trailing data or a hybrid)");
		goto out;
	}
	if ((uint64_t)archive_filter_bytes(a, -1) != size)
		rc = xfail(
		        x, ML_EINTEGRITY,
		        "data after the end of the compressed stream (trailing data or a hybrid)");
out:
	free(buf);
	archive_read_free(a);
	return rc;
}

static int extract_tar(xctx *x, int fd, uint64_t size)
{
	uint8_t magic[4] = {0};
	if (pread(fd, magic, 4, 0) != 4 ||
	    !((magic[0] == 0x1f && magic[1] == 0x8b) ||
	      (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)))
		return xfail(x, ML_EINTEGRITY, "not a gzip- or zstd-compressed tar");
	int rc = 0;
	struct archive *a = open_compressed(x, fd, false, &rc);
	if (!a)
		return rc;
	char *norm = malloc(ML_PATH_MAX);
	if (!norm) {
		rc = xnomem(x);
		goto out;
	}
	for (;;) {
		struct archive_entry *e;
		int r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rc = header_error(x, a);
			goto out;
		}
		if ((rc = count_entry(x)) || (rc = do_entry(x, a, e, norm)))
			goto out;
	}
	if (archive_format(a) != 0 &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR) {
		rc = xfail(x, ML_EINTEGRITY, "not a tar archive");
		goto out;
	}
	rc = check_tar_tail(x, fd, size, (uint64_t)archive_filter_bytes(a, 0));
out:
	free(norm);
	archive_read_free(a);
	return rc;
}

/* --- the entry point ------------------------------------------------------------------ */

int ml_archive_extract(ml_extract_result *out, const char *archive_path, const char *dest,
                       const ml_extract_opts *opts, ml_err *err)
{
	int threads = opts && opts->threads > 1 ? opts->threads : 1;
	mle_slots slots;
	if (mle_slots_init(&slots, threads - 1) != 0)
		return ml_err_set(err, ML_EFAIL, "cannot create a mutex");
	int rc = mle_archive_extract(out, archive_path, dest, opts, &slots, err);
	mle_slots_release(&slots);
	return rc;
}

int mle_archive_extract(ml_extract_result *out, const char *archive_path, const char *dest,
                        const ml_extract_opts *opts, mle_slots *slots, ml_err *err)
{
	ml_extract_opts o = opts ? *opts : (ml_extract_opts)ML_EXTRACT_OPTS_INIT;
	if (o.kind != ML_ARCHIVE_WHEEL && o.kind != ML_ARCHIVE_INTERPRETER)
		return ml_err_set(err, ML_EFAIL, "unknown archive kind %d", (int)o.kind);
	xctx x = {0};
	x.what = archive_path;
	x.o = &o;
	x.err = err;
	x.rootfd = x.parent_fd = -1;
	x.max_bytes = o.max_bytes ? o.max_bytes
	                          : (o.kind == ML_ARCHIVE_WHEEL ? ML_WHEEL_MAX_BYTES
	                                                        : ML_INTERPRETER_MAX_BYTES);
	x.max_entries = o.max_entries ? o.max_entries
	                              : (o.kind == ML_ARCHIVE_WHEEL ? ML_WHEEL_MAX_ENTRIES
	                                                            : ML_INTERPRETER_MAX_ENTRIES);

	int fd = open(archive_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ml_err_set(err, errno == ENOENT ? ML_ENOENT : ML_EIO, "cannot open '%s': %s",
		                  archive_path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ml_err_set(err, ML_EIO, "'%s' is not a regular file", archive_path);
	}
	if (mkdir(dest, 0700) != 0) {
		int e = errno;
		close(fd);
		if (e == EEXIST)
			return ml_err_set(err, ML_EFAIL,
			                  "cannot extract into '%s': it exists (extraction only "
			                  "goes into a fresh directory)",
			                  dest);
		return ml_err_set(err, e == ENOENT ? ML_ENOENT : ML_EIO, "cannot create '%s': %s",
		                  dest, strerror(e));
	}
	int rc = 0;
#ifndef _WIN32
	locale_t loc = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	locale_t old = loc ? uselocale(loc) : (locale_t)0;
#endif
	x.rootfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x.rootfd < 0 || fchmod(x.rootfd, 0755) != 0) {
		rc = ml_err_set(err, ML_EIO, "cannot open '%s': %s", dest, strerror(errno));
		goto out;
	}
	if (!(x.md = ml_sha256_new())) {
		rc = xnomem(&x);
		goto out;
	}
	rc = o.kind == ML_ARCHIVE_WHEEL ? extract_zip(&x, fd, (uint64_t)st.st_size, slots)
	                                : extract_tar(&x, fd, (uint64_t)st.st_size);
	if (!rc)
		rc = check_links(&x);
out:
#ifndef _WIN32
	if (loc) {
		uselocale(old);
		freelocale(loc);
	}
#endif
	ml_sha256_free(x.md);
	if (x.parent_fd >= 0)
		close(x.parent_fd);
	if (x.rootfd >= 0)
		close(x.rootfd);
	close(fd);
	for (size_t i = 0; i < x.n_nodes; i++)
		free(x.nodes[i].link);
	free(x.nodes);
	mle_map_release(&x.names);
	if (rc) {
		ml_fs_rm_tree(dest);
		ml_extract_result_release(&x.res);
		return rc;
	}
	if (out)
		*out = x.res;
	else
		ml_extract_result_release(&x.res);
	return 0;
}

void ml_extract_result_release(ml_extract_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_listed; i++)
		free(r->files[i].path);
	free(r->files);
	memset(r, 0, sizeof *r);
}
