/*
 * internal.h - what the env stage's source files share: sha256 and the
 * RECORD hash encoding, random names, descriptor-relative file system
 * helpers (remove a tree without following links, create directories,
 * write small files, sync a tree), a string map, flock locks, and the raw
 * zip central-directory reader (zipscan.c).
 *
 * Nothing here is public API; names start with mle_.
 */
#ifndef MLSETUP_ENV_INTERNAL_H
#define MLSETUP_ENV_INTERNAL_H

#include <sys/types.h>

#include "mlsetup/env.h"

/* --- hashing (fsutil.c) ---------------------------------------------------- */

/* Writes the 64 lower-case hex digits of d (32 bytes) and a NUL into dst. */
void mle_hex(char dst[65], const uint8_t d[32]);

/* Writes n bytes of d as urlsafe base64 without padding (RECORD's hash
 * encoding, PEP 376 / PEP 427) into dst (dstsz bytes, NUL-terminated).
 * Returns 0 or ML_EFAIL when it does not fit. */
int mle_b64url(char *dst, size_t dstsz, const uint8_t *d, size_t n);

/* Hashes the file at path (or the open descriptor fd >= 0 from its
 * current offset, path then only names it in messages) with the OpenSSL
 * digest md_name ("sha256", "sha384", "sha512") into digest (up to 64
 * bytes, *digest_len set) and *size (bytes). Returns 0, ML_ENOENT, ML_EIO
 * or ML_EFAIL (unknown digest). */
int mle_digest_file(uint8_t *digest, unsigned *digest_len, uint64_t *size, int fd, const char *path,
                    const char *md_name, ml_err *err);

/* True when s is 64 lower-case hex digits. */
bool mle_is_sha256_hex(const char *s);

/* Fills dst with 2*nbytes random lower-case hex digits and a NUL
 * (getrandom). nbytes <= 16. */
void mle_random_hex(char *dst, size_t nbytes);

/* --- file system (fsutil.c) -------------------------------------------------- */

/* Removes name (file, link or directory tree) relative to dirfd
 * (AT_FDCWD for a path), never following symbolic links. A missing name is
 * not an error. Directories without write permission are made writable
 * first. Returns 0 or -errno of the first failure. */
int mle_rm_tree_at(int dirfd, const char *name);
int mle_rm_tree(const char *path);

/* Removes every entry of directory base whose name starts with prefix
 * (leftovers of crashed runs), as mle_rm_tree_at() does. */
void mle_rm_prefixed(const char *base, const char *prefix);

/* mkdir -p with mode for the directories it creates. Returns 0 or -errno. */
int mle_mkdirs(const char *path, mode_t mode);

/* Creates path (O_EXCL when excl, else truncating) with mode, writes n
 * bytes of data, optionally fsyncs. Returns 0 or -errno. */
int mle_write_file(const char *path, const void *data, size_t n, mode_t mode, bool excl, bool sync);

/* snprintf for paths: formats into dst (dstsz bytes). Returns 0, or
 * ML_EFAIL when the result does not fit (dst then holds a truncated
 * string that must not be used). */
int mle_pathf(char *dst, size_t dstsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fsync of a directory (or file) by path. Returns 0 or -errno. */
int mle_fsync_path(const char *path);

/* Makes everything under path durable: syncfs() on its file system, then
 * fsync() of path itself. Returns 0 or -errno. */
int mle_sync_tree(const char *path);

/* Splits path into its directory and last component, in dir (dirsz
 * bytes) and *base (pointing into path). "/a/b" -> "/a", "b";
 * "b" -> ".", "b". Returns 0 or ML_EFAIL (does not fit, or path ends in
 * '/'). */
int mle_split_path(char *dir, size_t dirsz, const char **base, const char *path);

/* An exclusive flock on path (created 0644 when missing). With wait false
 * returns -EWOULDBLOCK when held elsewhere. *fd gets the descriptor;
 * close it to unlock. Returns 0 or -errno. */
int mle_flock_path(int *fd, const char *path, bool wait);

/* --- string map (fsutil.c) ----------------------------------------------------- */

/* A hash map from NUL-terminated strings (copied) to size_t values. */
typedef struct mle_map {
	char **keys;
	size_t *vals;
	size_t cap; /* slots, a power of two, or 0 */
	size_t n;
} mle_map;

#define MLE_MAP_INIT                                                                               \
	{                                                                                          \
		NULL, NULL, 0, 0                                                                   \
	}

/* Inserts key -> val. Returns 1 when inserted, 0 when the key was already
 * there (value unchanged, *old set when old is non-NULL), ML_ENOMEM. */
int mle_map_put(mle_map *m, const char *key, size_t val, size_t *old);

/* Looks key up. Returns true and sets *val (when non-NULL) if present. */
bool mle_map_get(const mle_map *m, const char *key, size_t *val);

/* Frees the map's storage; accepts NULL. */
void mle_map_release(mle_map *m);

/* --- zip central directory (zipscan.c) ----------------------------------------- */

typedef struct mle_zip_entry {
	char *name;      /* raw name bytes + NUL; may contain NULs */
	size_t name_len; /* bytes, without the added NUL */
	uint64_t local_offset;
	uint64_t csize, usize; /* compressed / uncompressed bytes (central) */
	uint32_t ext_attr;
	uint16_t made_by; /* "version made by": high byte is the host */
	uint16_t flags;
	uint16_t method;
} mle_zip_entry;

typedef struct mle_zip {
	mle_zip_entry *v; /* in central-directory order */
	size_t n;
	uint64_t total_usize; /* sum of declared uncompressed sizes */
} mle_zip;

/* Reads and checks the zip structure of the open file fd (size bytes),
 * `what` naming it in messages: see ml_archive_extract() for the rules.
 * At most max_entries entries. Fills *out (release with
 * mle_zip_release()). Returns 0, ML_EINTEGRITY, ML_EIO or ML_ENOMEM. */
int mle_zip_scan(mle_zip *out, int fd, uint64_t size, uint64_t max_entries, const char *what,
                 ml_err *err);

void mle_zip_release(mle_zip *z);

/* Unix mode of a zip entry when made on Unix (host 3) with a mode, else 0. */
unsigned mle_zip_unix_mode(const mle_zip_entry *e);

#endif /* MLSETUP_ENV_INTERNAL_H */
