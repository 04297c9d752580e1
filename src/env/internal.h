/*
 * internal.h - what only the env stage's source files share: the RECORD
 * hash encoding, the lock of a cache directory, a string map and the raw
 * zip central-directory reader
 * (zipscan.c). File-system and digest helpers are core's (core.h).
 *
 * Nothing here is public API; names start with mle_.
 */
#ifndef MLSETUP_ENV_INTERNAL_H
#define MLSETUP_ENV_INTERNAL_H

#include <sys/types.h>

#include "mlsetup/env.h"

/* --- RECORD hash encoding (fsutil.c) ---------------------------------------- */

/* Writes n bytes of d as urlsafe base64 without padding (RECORD's hash
 * encoding, PEP 376 / PEP 427) into dst (dstsz bytes, NUL-terminated).
 * Returns 0 or ML_EFAIL when it does not fit. */
int mle_b64url(char *dst, size_t dstsz, const uint8_t *d, size_t n);

/* --- the lock of a cache directory (fsutil.c) ------------------------------ */

/* Creates dir (mkdir -p, 0755) and takes the exclusive lock lock_path in
 * it, waiting for another process that holds it (ml_fs_lock()); *fd gets
 * the descriptor, released with ml_fs_unlock(). Returns 0 or ML_EIO with
 * err naming the path. */
int mle_lock_in_dir(int *fd, const char *dir, const char *lock_path, ml_err *err);

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
	uint64_t data_offset;  /* where its stored or compressed bytes start */
	uint64_t csize, usize; /* compressed / uncompressed bytes (central) */
	uint32_t crc;          /* CRC-32 of the uncompressed bytes (central) */
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
