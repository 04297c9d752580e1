/*
 * core.h - what every stage of mlsetup shares: error codes and the ml_err
 * carrier, the exit-code table, growable strings, and the small operating
 * system interface (dlopen, file reading under a root directory, process
 * spawning) that platform/<os>/ implements.
 *
 * Conventions (docs/ARCHITECTURE.md): functions return 0 or a negative ML_E* code
 * and describe the failure in the ml_err the caller passes; output
 * parameters come first, are named `out`, and are set only on success;
 * *_free() functions accept NULL and cannot fail.
 */
#ifndef MLSETUP_CORE_H
#define MLSETUP_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ML_VERSION "0.1.0"

/* An environment's interpreter, relative to its root, in the venv layout
 * of the OS this mlsetup is built for (ml_env_layout.python in env.h). */
#ifdef _WIN32
#define ML_ENV_PYTHON_NATIVE "Scripts/python.exe"
#else
#define ML_ENV_PYTHON_NATIVE "bin/python"
#endif

/* Error codes. Few, only those a caller branches on; each maps to one
 * process exit code through ml_exit_code(). */
enum {
	ML_OK = 0,
	ML_EFAIL = -1,        /* generic failure                  -> exit 1 */
	ML_EUSAGE = -2,       /* bad command line                 -> exit 2 */
	ML_EINTEGRITY = -3,   /* hash/size mismatch, bad archive  -> exit 3 */
	ML_ENET = -4,         /* network failure                  -> exit 4 */
	ML_EGPU = -5,         /* a GPU check failed               -> exit 5 */
	ML_EUNSUPPORTED = -6, /* driver too old, no manifest fits -> exit 6 */
	ML_ENOENT = -7,       /* file/library/symbol not found    -> exit 1 */
	ML_ENOMEM = -8,       /* out of memory                    -> exit 1 */
	ML_EIO = -9,          /* read/write error                 -> exit 1 */
	ML_EPARSE = -10,      /* malformed input file             -> exit 1 */
};

/* Process exit codes (README.md, "Exit codes"). */
enum {
	ML_EXIT_OK = 0,
	ML_EXIT_FAILED = 1,
	ML_EXIT_USAGE = 2,
	ML_EXIT_INTEGRITY = 3,
	ML_EXIT_NETWORK = 4,
	ML_EXIT_GPU = 5,
	ML_EXIT_UNSUPPORTED = 6,
};

/* Returns the process exit code for an ML_E* code (0 for ML_OK). The one
 * table from error code to exit code lives in src/core/err.c. */
int ml_exit_code(int code);

/* Returns a static, lower-case name for an ML_E* code ("integrity"). */
const char *ml_strerror(int code);

/* Failure details. `msg` is a lower-case sentence without a final period
 * naming the thing that failed; `hint` (may be empty) says what to do. */
typedef struct ml_err {
	int code;
	char msg[1024];
	char hint[512];
} ml_err;

#define ML_ERR_INIT                                                                                \
	{                                                                                          \
		0, {0},                                                                            \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}

/* Records code and a printf-style message in err (err may be NULL).
 * Returns code, so callers can write `return ml_err_set(err, ...)`. */
int ml_err_set(ml_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets err->hint (the remedy) with a printf-style message; err may be NULL. */
void ml_err_hint(ml_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err back to ML_ERR_INIT. */
void ml_err_clear(ml_err *err);

/* --- growable strings ---------------------------------------------------- */

/* A NUL-terminated byte buffer. `data` is NULL until the first append;
 * ml_buf_cstr() never returns NULL. Release with ml_buf_release(). */
typedef struct ml_buf {
	char *data;
	size_t len; /* bytes, excluding the terminating NUL */
	size_t cap; /* bytes allocated */
} ml_buf;

#define ML_BUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends n bytes / a C string / formatted text. Return 0 or ML_ENOMEM. */
int ml_buf_add(ml_buf *b, const void *data, size_t n);
int ml_buf_puts(ml_buf *b, const char *s);
int ml_buf_printf(ml_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the contents, "" when empty; owned by b. */
const char *ml_buf_cstr(const ml_buf *b);
/* Takes ownership of the contents (caller frees with free()); b is reset.
 * Returns NULL only when allocation of an empty string fails. */
char *ml_buf_detach(ml_buf *b);
/* Frees the contents and resets b. Accepts NULL. */
void ml_buf_release(ml_buf *b);

/* --- small string helpers -------------------------------------------------- */

/* Copies src into dst of size dstsz, always NUL-terminating (truncates).
 * Returns strlen(src) like BSD strlcpy. */
size_t ml_strlcpy(char *dst, const char *src, size_t dstsz);
/* Trims ASCII whitespace at both ends in place; returns s. */
char *ml_strtrim(char *s);
/* Returns true when s begins with prefix. */
bool ml_startswith(const char *s, const char *prefix);
/* Returns a new string (caller frees) holding the PEP 503 normalized form
 * of the name s[0..n): lower case, every run of '-', '_' and '.' replaced
 * by one '-' ("Foo__Bar.baz" -> "foo-bar-baz"); also PEP 685 for extras.
 * NULL on allocation failure. The one normalizer every stage uses. */
char *ml_pep503_normalize(const char *s, size_t n);

/* Returns a malloc'd printf-style string, or NULL on allocation failure. */
char *ml_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* snprintf for paths: formats into dst (dstsz bytes). Returns 0, or
 * ML_EFAIL when the result does not fit (dst then holds a truncated string
 * that must not be used). */
int ml_pathf(char *dst, size_t dstsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --- file system (src/core/fs.c) -------------------------------------------- */

/* The one copy of each file-system helper every stage uses. These are
 * thin layers over POSIX calls and return 0 or -errno (never an ML_E*
 * code), so callers word the message for their own context
 * ("cannot create '%s': %s", strerror(-rc)). None follows a symbolic link
 * it did not have to (see each). Safe to call from several threads. */

/* mkdir -p: creates path and every missing parent with mode (the umask
 * applies). An existing directory is fine; an existing non-directory is
 * -ENOTDIR. Returns 0 or -errno (-ENOENT for "", as mkdir(2) says;
 * -ENAMETOOLONG past 4095 bytes). */
int ml_fs_mkdirs(const char *path, unsigned mode);

/* rm -rf of name relative to the directory descriptor dirfd (AT_FDCWD for
 * a path): files, links and whole trees, never following a symbolic link
 * (a link is removed, not its target). A missing name is not an error.
 * Directories without write permission are made writable first (the
 * unpacked cache is read-only). Returns 0 or -errno of the first failure
 * (and goes on removing what it can). */
int ml_fs_rm_tree_at(int dirfd, const char *name);
int ml_fs_rm_tree(const char *path);

/* Makes a new private temporary directory "mlsetup-<what>.XXXXXX" in
 * $TMPDIR, else %TEMP% on Windows (GetTempPath's first choice), else /tmp
 * (mkdtemp(3)) and writes its path into dir (dir_sz bytes). Returns 0, or
 * ML_EIO (err names the parent directory and why); dir is "" then. The
 * caller removes it (ml_fs_rm_tree). */
int ml_fs_mktempdir(char *dir, size_t dir_sz, const char *what, ml_err *err);

/* Removes, as ml_fs_rm_tree_at() does, every entry of directory dir whose
 * name starts with prefix (the leftovers of crashed runs); "." and ".."
 * never match. Returns how many entries it removed completely; a missing
 * dir is not an error (0). */
int ml_fs_rm_prefixed(const char *dir, const char *prefix);

/* Creates path with mode (O_EXCL when excl, else truncating; never through
 * a symbolic link), writes n bytes of data and, with sync, fsyncs the file.
 * Not atomic: see ml_fs_write_atomic(). Returns 0 or -errno. */
int ml_fs_write_file(const char *path, const void *data, size_t n, unsigned mode, bool excl,
                     bool sync);

/* Replaces path atomically with n bytes of data and mode: writes a
 * temporary file beside it (".<name>.tmp-<random>"), fsyncs it, renames
 * it over path and fsyncs the directory, so after a crash path holds the
 * old or the new contents, never a mix, and the new contents are durable
 * when this returns 0. The temporary file is removed on failure. Returns 0
 * or -errno. */
int ml_fs_write_atomic(const char *path, const void *data, size_t n, unsigned mode);

/* As ml_fs_write_atomic() but without any fsync: no reader ever sees a
 * mix of old and new contents, but after a machine crash path may hold
 * the old contents, the new ones or (on some file systems) an empty file.
 * For files that are made durable later in bulk (an environment's stage
 * is synced once, at commit) on paths where an fsync per file would cost
 * more than the work itself. Returns 0 or -errno. */
int ml_fs_write_atomic_nosync(const char *path, const void *data, size_t n, unsigned mode);

/* Puts a copy of the regular file src at dst, atomically: a hard link when
 * both are on one file system and links are allowed, else a byte copy that
 * is fsynced; either way through a temporary name beside dst and a rename,
 * so dst never holds a partial file. When dst already is src (same inode)
 * nothing is done. *linked (may be NULL) says whether dst shares src's
 * inode. Returns 0 or -errno. */
int ml_fs_link_or_copy(const char *src, const char *dst, bool *linked);

/* Copies the bytes of the open file src, from its offset to its end, to
 * the open file dst at its offset: copy_file_range(2) through
 * ml_os_copy_file_range() (which may share extents or copy in the
 * kernel), falling back to read/write where the file systems cannot.
 * Syncs nothing. Returns 0 or -errno. */
int ml_fs_copy_fd(int dst, int src);

/* fsync() of path (a file or a directory). Returns 0 or -errno. */
int ml_fs_fsync_path(const char *path);

/* Makes everything under the directory path durable: syncfs() on its file
 * system, then fsync() of path itself. Returns 0 or -errno. */
int ml_fs_sync_tree(const char *path);

/* Splits path into its directory (written into dir, dirsz bytes) and last
 * component (*base, pointing into path): "/a/b" -> "/a", "b"; "/x" -> "/",
 * "x"; "b" -> ".", "b". Returns 0, or ML_EFAIL when it does not fit or
 * path is empty or ends in '/'. */
int ml_fs_split_path(char *dir, size_t dirsz, const char **base, const char *path);

/* Takes an exclusive flock on path (created 0644 when missing, never
 * through a symbolic link). With wait, blocks until it is free; without,
 * returns -EWOULDBLOCK while another process or descriptor holds it. *fd
 * gets the descriptor; release with ml_fs_unlock(). Returns 0 or -errno. */
int ml_fs_lock(int *fd, const char *path, bool wait);

/* As ml_fs_lock(), but a shared flock: any number of shared holders at
 * once, none while an exclusive one is held (readers of a cache that
 * clean and prune, holding it exclusively, must wait for). Non-waiting,
 * -EWOULDBLOCK while an exclusive lock is held. Returns 0 or -errno. */
int ml_fs_lock_shared(int *fd, const char *path, bool wait);

/* Releases a lock taken with ml_fs_lock() or ml_fs_lock_shared() (closes
 * fd). Accepts -1. */
void ml_fs_unlock(int fd);

/* --- digests (src/core/digest.c) ---------------------------------------------- */

/* SHA-256 (FIPS 180-4) and its hex form, the one implementation every
 * stage uses (OpenSSL EVP underneath; no OpenSSL type in this header). */

/* Writes the 2*n lower-case hex digits of d[0..n) and a NUL into dst
 * (2*n+1 bytes). */
void ml_hex_encode(char *dst, const uint8_t *d, size_t n);

/* True when s is exactly 64 lower-case hex digits (a sha256 as manifests,
 * indexes and the cache write it). */
bool ml_is_sha256_hex(const char *s);

/* Writes the lower-case form of s and a NUL into out (65 bytes) when s is
 * exactly 64 hex digits in either case (what pip's --hash, index pages
 * and PEP 691 JSON may hold; the cache and manifests use lower case).
 * Returns 0, or ML_EFAIL (out untouched) when s is NULL or not such a
 * string. */
int ml_sha256_hex_normalize(char out[65], const char *s);

/* SHA-256 of n bytes of data into out (32 bytes). Returns 0, or ML_ENOMEM
 * when the digest context cannot be made. */
int ml_sha256_buf(uint8_t out[32], const void *data, size_t n);

/* SHA-256 of n bytes of data as 64 hex digits and a NUL in hex. Returns 0
 * or ML_ENOMEM. */
int ml_sha256_hex_buf(char hex[65], const void *data, size_t n);

/* Hashes the file at path (or, when fd >= 0, the open descriptor from its
 * current offset to its end; path then only names it in messages) with
 * the digest md_name ("sha256", "sha384", "sha512") into digest (at most
 * 64 bytes; *digest_len set) and *size (bytes read; size may be NULL).
 * Returns 0, ML_ENOENT (no such file), ML_EIO (unreadable), ML_EFAIL
 * (unknown digest) or ML_ENOMEM, with err (may be NULL) naming the file. */
int ml_digest_file(uint8_t *digest, unsigned *digest_len, uint64_t *size, int fd, const char *path,
                   const char *md_name, ml_err *err);

/* SHA-256 of the file at path as 64 hex digits and a NUL in hex; *size
 * (may be NULL) gets its length in bytes. Errors as ml_digest_file(). */
int ml_sha256_file(char hex[65], uint64_t *size, const char *path, ml_err *err);

/* As ml_sha256_file(), but of the open descriptor fd from its current
 * offset to its end (the file a caller opened and judged; path only names
 * it in messages). fd stays open. */
int ml_sha256_fd(char hex[65], uint64_t *size, int fd, const char *path, ml_err *err);

/* A streaming SHA-256, for bytes that arrive in pieces (downloads, archive
 * members). Opaque; made by ml_sha256_new() (NULL when out of memory),
 * freed by ml_sha256_free() (accepts NULL). One hasher per thread. */
typedef struct ml_sha256 ml_sha256;
ml_sha256 *ml_sha256_new(void);
/* Starts over (a resumed download that restarts from zero). Returns 0 or
 * ML_EFAIL. */
int ml_sha256_reset(ml_sha256 *h);
/* Adds n bytes. Returns 0 or ML_EFAIL. */
int ml_sha256_update(ml_sha256 *h, const void *data, size_t n);
/* Writes the digest of everything added since the last reset into out (32
 * bytes) and resets h. Returns 0 or ML_EFAIL. */
int ml_sha256_final(ml_sha256 *h, uint8_t out[32]);
void ml_sha256_free(ml_sha256 *h);

/* --- embedded data (src/core/embedded.c) ------------------------------------ */

/* A data file compiled into the binary at build time (manifests/embed.sh):
 * the shipped manifests, interpreter pins, selection rules and the other
 * tables every stage reads, so one downloaded binary is enough. */
typedef struct ml_embedded_file {
	const char *name; /* base name: "requirements.txt", "python.json", "selection.json";
	                   * one OS's manifests keep their folder of manifests/:
	                   * "windows/requirements.txt" */
	const char *data; /* size bytes, followed by a NUL */
	size_t size;      /* bytes */
} ml_embedded_file;

/* The embedded files, terminated by an entry whose name is NULL (generated). */
extern const ml_embedded_file ml_embedded_files[];

/* Returns the embedded file with this name (as ml_embedded_file.name;
 * static data, never freed), or NULL when the build has none. */
const ml_embedded_file *ml_embedded_find(const char *name);

/* Returns the embedded file with this base name, one that every build
 * embeds (EMBED_FILES in the Makefile): its absence is a broken build,
 * said on stderr before abort(), never a NULL for the caller to trip over. */
const ml_embedded_file *ml_embedded_require(const char *name);

/* --- platform interface (platform/<os>/os.c) ------------------------------ */

/* Prepares the process before anything else runs; main() calls it first.
 * Linux: nothing. Windows: the console takes UTF-8 output and ANSI escape
 * sequences (the progress display), standard streams are binary, and
 * *argv is replaced by the UTF-8 form of the wide command line (the C
 * runtime's argv is in the ANSI code page); the new array lives until
 * exit. Returns 0, or ML_ENOMEM (argv then untouched). */
int ml_os_init(int *argc, char ***argv);

/* Reads at most max_bytes of the file `path` into a new NUL-terminated
 * buffer (*out, caller frees with free(); *out_len set when non-NULL).
 * When root is non-NULL and not "/", the path is resolved under root
 * (root "/tmp/fx" + "/proc/x" -> "/tmp/fx/proc/x"): this is how /proc,
 * /sys and /etc readers are pointed at fixture trees or captured bundles.
 * Returns 0, ML_ENOENT (missing), ML_EIO (unreadable) or ML_ENOMEM. */
int ml_os_read_file(char **out, size_t *out_len, const char *root, const char *path,
                    size_t max_bytes, ml_err *err);

/* Writes root-prefixed path into dst (size dstsz bytes). Returns 0 or
 * ML_EFAIL when it does not fit. */
int ml_os_rooted(char *dst, size_t dstsz, const char *root, const char *path);

/* Opens the first shared library of `names` (NULL-terminated list of file
 * names or absolute paths) that dlopen accepts. On Windows (LoadLibraryExW)
 * a bare file name is loaded from the System32 directory only and an
 * absolute path as given: never from the current directory or PATH, and
 * the DLL's own imports resolve from its directory and System32. Returns a handle or NULL;
 * on NULL, err (may be NULL) holds the last loader message. Close with
 * ml_os_dlclose(), which accepts NULL. */
void *ml_os_dlopen(const char *const *names, char *loaded_name, size_t loaded_sz, ml_err *err);
void *ml_os_dlsym(void *handle, const char *symbol);
void ml_os_dlclose(void *handle);

/* Runs argv (argv[0] looked up on PATH; on Windows only there, never in the
 * current directory, NAME or NAME.exe, through CreateProcessW with the
 * arguments quoted for CommandLineToArgvW) with stdin from /dev/null, capturing
 * at most max_bytes of stdout into *out (caller frees). Stops waiting after
 * timeout_s seconds and kills the child. *status gets the exit status, or
 * -1 when killed/signalled. On Windows, CR LF line ends in *out are read
 * as LF (text mode's line ends; universal newlines). Returns 0 when the
 * program ran (whatever its status), ML_ENOENT when it could not be
 * started, ML_EFAIL on timeout. */
int ml_os_run_capture(char **out, int *status, const char *const *argv, size_t max_bytes,
                      int timeout_s, ml_err *err);

/* Like ml_os_run_capture(), but standard error is captured too, interleaved
 * with standard output (for showing a failing tool's own messages). */
int ml_os_run_output(char **out, int *status, const char *const *argv, size_t max_bytes,
                     int timeout_s, ml_err *err);

/* Called for each line of a child's output as it arrives: the line without
 * its newline, NUL-terminated, cut to 1023 bytes (valid during the call).
 * Returns 0 to go on, or N > 0 to restart the child's deadline: it must then
 * finish within N seconds from now (a program whose phases have limits of
 * their own, such as the torch smoke test and the imports after it). */
typedef int (*ml_os_line_fn)(const char *line, void *data);

/* Like ml_os_run_output(), and also calls on_line(line, data) from the
 * calling thread for every line the child writes, as soon as it is read
 * (a last line without a newline when the child exits), so a caller can
 * follow a long-running program's progress. */
int ml_os_run_lines(char **out, int *status, const char *const *argv, size_t max_bytes,
                    int timeout_s, ml_os_line_fn on_line, void *data, ml_err *err);

/* Looks under dir (at most 16 levels deep, not through links) for a
 * program, library or extension module (*.exe, *.dll, *.pyd) that a
 * running process holds open: Windows refuses to move a directory that
 * holds one, and to replace the file. A file counts as held when opening
 * it with no sharing at all fails with a sharing violation (CreateFileW,
 * dwShareMode 0). On success writes its path relative to dir ('/'
 * separators) into which (which_sz bytes) and returns true. Returns false
 * when none is found or dir cannot be read; always false on Linux, which
 * moves and replaces files in use. */
bool ml_os_in_use(char *which, size_t which_sz, const char *dir);

/* Free space available to unprivileged users at path, in MiB. Walks up to
 * the nearest existing parent when path does not exist yet. Returns 0 or
 * ML_EIO. */
int ml_os_disk_free_mib(uint64_t *out, const char *path, ml_err *err);

/* Number of online CPU cores (at least 1). */
int ml_os_cpu_count(void);

/* The CA certificates TLS connections are verified against, the same for
 * libcurl and libgit2, so that one binary works on any distribution
 * whatever it was built on. ml_os_ca_file() returns a PEM bundle:
 * $SSL_CERT_FILE when set, else (unless only $SSL_CERT_DIR is set) the
 * first that exists of the bundles Debian/Ubuntu, RHEL/Fedora/Amazon
 * Linux, SUSE, Arch and Alpine keep (the table is in platform/linux/os.c).
 * ml_os_ca_dir() returns a hashed certificate directory: $SSL_CERT_DIR when
 * set, else, only when no bundle was found, the first that exists of the
 * distributions' directories. Either returns NULL when there is none; the
 * string is static or the environment's, valid until the environment
 * changes. Thread-safe as getenv() is. Windows: ml_os_ca_file() is
 * $SSL_CERT_FILE or NULL (the system store), ml_os_ca_dir() always NULL
 * (Schannel takes no directory). */
const char *ml_os_ca_file(void);
const char *ml_os_ca_dir(void);

/* Fills buf with n random bytes from the kernel (getrandom(2), made as a
 * raw system call so that binaries built for glibc < 2.25 have it too;
 * /dev/urandom on kernels older than 3.17; Windows: BCryptGenRandom, in
 * platform/random.c). Returns 0, or -errno when neither gives all n
 * bytes. */
int ml_os_random(void *buf, size_t n);

/* Fills dst with 2*nbytes random lower-case hex digits and a NUL, for
 * unique temporary names (ml_os_random(); time and pid when it fails). nbytes
 * is at most 16. In platform/random.c, for every platform: the Windows
 * compatibility layer under the stages names its temporary files with it
 * too. */
void ml_random_hex(char *dst, size_t nbytes);

/* Copies up to n bytes from the open file in_fd to out_fd at their current
 * offsets inside the kernel (copy_file_range(2), made as a raw system call
 * so that binaries built for glibc < 2.27 have it too). Returns the number
 * of bytes copied (0 at end of file), or -errno: -ENOSYS on kernels older
 * than 4.5, -EXDEV / -EINVAL / -EOPNOTSUPP where the file systems cannot;
 * callers then copy through a buffer. */
long long ml_os_copy_file_range(int in_fd, int out_fd, size_t n);

/* --- libgit2 (src/core/git.c) ----------------------------------------------- */

/* Initializes libgit2 once per process and points its TLS at the CA
 * certificates ml_os_ca_file() / ml_os_ca_dir() find (read at the first
 * call). Every libgit2 user calls this before any other git_* function.
 * Returns 0, or ML_EFAIL (the same on every later call) when libgit2
 * cannot start or the CA certificates named cannot be loaded. */
int ml_git_init(ml_err *err);

/* --- well-known directories (src/core/paths.c) ---------------------------- */

/* Writes mlsetup's cache directory into dst (dstsz bytes): `override` when
 * non-NULL (--cache-dir), else $MLSETUP_CACHE_DIR, else
 * $XDG_CACHE_HOME/mlsetup, else ~/.cache/mlsetup (Windows: instead of the
 * last two, %LOCALAPPDATA%/mlsetup/Cache, with '/' as separator). Does not
 * create it. Returns 0, or ML_EFAIL when no home directory is known or the
 * path does not fit. */
int ml_cache_dir(char *dst, size_t dstsz, const char *override);

/* Writes the content-addressed path of a blob, <cache>/blobs/sha256/<2 hex>/
 * <64 hex>, into dst. Returns 0, or ML_EFAIL when it does not fit or
 * sha256 is not 64 lower-case hex digits (ml_is_sha256_hex()). */
int ml_cache_blob_path(char *dst, size_t dstsz, const char *cache_dir, const char *sha256);

#endif /* MLSETUP_CORE_H */
