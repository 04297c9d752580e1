/*
 * internal.h - what only the env stage's source files share: the RECORD
 * hash encoding, the lock of a cache directory, a string map, the raw
 * zip central-directory reader (zipscan.c), the wheel extractor
 * (unzip.c), the rules about names across entries (names.c) and the
 * threads extraction may borrow (pool.c). File-system and digest helpers
 * are core's (core.h).
 *
 * Nothing here is public API; names start with mle_.
 */
#ifndef MLSETUP_ENV_INTERNAL_H
#define MLSETUP_ENV_INTERNAL_H

#include <pthread.h>
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

/* --- threads extraction may borrow (pool.c) ------------------------------------ */

/* A budget of threads shared by everything one caller runs at once: the
 * pool's wheel workers hold one slot each while they work, and the
 * extraction of a large wheel borrows free slots for helper threads that
 * inflate its members, so the threads running never exceed the budget
 * (about one per core). */
typedef struct mle_slots {
	pthread_mutex_t mu;
	int free; /* slots nobody holds */
} mle_slots;

/* Sets up a budget with `free` slots free. Returns 0 or ML_EFAIL. */
int mle_slots_init(mle_slots *s, int free);
void mle_slots_release(mle_slots *s);

/* Takes at most want free slots; returns how many it took (0..want).
 * Never blocks for long. */
int mle_slots_take(mle_slots *s, int want);

/* Gives n slots back. */
void mle_slots_give(mle_slots *s, int n);

/* --- names across entries (names.c) -------------------------------------------- */

/* True when the directory dirfd is on a file system (or has the per-directory
 * attribute) that folds case: a probe file created there can be found
 * under its upper-case name. The probe is removed again. */
bool mle_dir_folds_case(int dirfd);

/* True for a wheel's own bytecode: a path ending in ".pyc" whose parent
 * directory is "__pycache__" (PEP 3147). Installers drop these so that
 * what runs is the installed source or bytecode compiled from it. */
bool mle_is_own_bytecode(const char *path);

/* --- checked extraction internals (extract.c, unzip.c) ----------------------------- */

/* Opens directory dir (normalized, relative to rootfd; "" is rootfd
 * itself), creating missing components 0755, never following a symbolic
 * link. Returns a new descriptor, or -errno (-ELOOP / -ENOTDIR: a
 * component is a symbolic link or a file). */
int mle_open_dir(int rootfd, const char *dir);

/* ml_archive_extract() drawing helper threads from slots (NULL: only the
 * calling thread, whatever opts->threads says). */
int mle_archive_extract(ml_extract_result *out, const char *archive_path, const char *dest,
                        const ml_extract_opts *opts, mle_slots *slots, ml_err *err);

/* Extracts the zip file fd (size bytes; `what` names it in messages) into
 * the fresh directory rootfd, adding to *res: our own reading of the
 * central directory (mle_zip_scan), every name checked, then every member
 * decoded whole and checked (see ml_archive_extract), on the calling
 * thread and on helper threads taken from slots (may be NULL). Returns 0,
 * ML_EINTEGRITY, ML_EIO, ML_ENOMEM. */
int mle_unzip(ml_extract_result *res, int fd, uint64_t size, int rootfd, const ml_extract_opts *o,
              uint64_t max_bytes, uint64_t max_entries, mle_slots *slots, const char *what,
              ml_err *err);

/* ml_wheel_unpack() drawing extraction helpers from slots (may be NULL). */
int mle_wheel_unpack(ml_unpacked *out, const char *cache_dir, const char *wheel_path,
                     const char *sha256, const ml_unpack_opts *opts, mle_slots *slots, ml_err *err);

#endif /* MLSETUP_ENV_INTERNAL_H */
