/*
 * env.h - the env stage (the environment builder): make the environment
 * from verified files.
 *
 * Cached files in, a working environment out, atomically. Each part lives
 * in its own source file under src/env/:
 *
 *   extract.c   checked archive extraction (wheels: zip; interpreters:
 *               tar.gz / tar.zst)
 *   entry.c     the pure per-entry checker: one name's portable rules and
 *               Windows' rules
 *   zipscan.c   our own reading of a zip's central directory (trailing
 *               data, hybrids, overlaps, local headers and data
 *               descriptors that disagree with it)
 *   unzip.c     wheel extraction: every member inflated whole (libdeflate),
 *               CRC-32 and RECORD hash in the same pass, large wheels'
 *               members on several threads
 *   names.c     names across entries: Unicode NFC and case-fold
 *               collisions, a wheel's own bytecode
 *   record.c    the wheel's text files: RECORD (PEP 376 CSV), WHEEL
 *               (PEP 427) and entry_points.txt
 *   wheel.c     PEP 427 installation: unpack once into the cache, then link
 *               into environments; scripts and console launchers
 *   pool.c      installing many wheels in parallel
 *   slots.c     the thread budget the pool's workers and a large wheel's
 *               extraction share
 *   venv.c      PEP 405 virtual environments and their activate scripts
 *   winlauncher.c  Windows scripts' .exe files: a launcher program
 *               (platform/windows/launcher/launcher.c, a program of its
 *               own, built with zig, embedded in the Windows build) with
 *               the interpreter and script appended
 *   python.c    python-build-standalone interpreter archives; probing an
 *               interpreter
 *   stage.c     the environment's lock, staging directory, atomic commit
 *
 * An install runs, in order (the install pipeline, src/install/, strings it):
 *
 *   ml_env_lock(&lock, target, wait)             one install per target
 *   ml_python_unpack(...) or an existing python  the interpreter
 *   ml_python_probe(&py, python)                 its version and real path
 *   ml_env_stage_begin(&stage, lock)             fresh dir beside target
 *   ml_env_layout_init(&env, stage->path, stage->target, py.xy)
 *   ml_venv_create(&env, &py, NULL)              pyvenv.cfg, bin/, lib/
 *                                                (Windows: Scripts\, Lib\)
 *   ml_wheels_install_all(results, jobs, n, &env, &opts)
 *   ml_env_stage_commit(stage)                   swap into place
 *   ml_env_stage_abort(stage)                    (frees; removes if needed)
 *   ml_env_unlock(lock)
 *
 * Paths: every function that writes an environment takes an ml_env_layout
 * holding two roots. Files are written under `root` (the staging
 * directory); everything written INTO files - pyvenv.cfg, shebangs,
 * activate scripts' VIRTUAL_ENV, RECORD - names `final_root` (the target),
 * so the environment is correct once renamed into place.
 *
 * Nothing here prints; failures come back as ML_E* codes with an ml_err.
 * A refused archive, a wheel whose files don't match its RECORD and a
 * hash mismatch are ML_EINTEGRITY (exit 3). All functions are safe to call
 * from several threads at once, on different targets and wheels.
 */
#ifndef MLSETUP_ENV_H
#define MLSETUP_ENV_H

#include "mlsetup/core.h"

/* Longest path the env stage handles, in bytes including the NUL. */
#define ML_PATH_MAX 4096

/* --- checked extraction (src/env/extract.c) ------------------------------ */

/* What an archive entry is. */
typedef enum ml_entry_type {
	ML_ENTRY_FILE = 0,     /* regular file */
	ML_ENTRY_DIR = 1,      /* directory */
	ML_ENTRY_SYMLINK = 2,  /* symbolic link; link = its target */
	ML_ENTRY_HARDLINK = 3, /* hard link; link = the archive path it repeats */
	ML_ENTRY_OTHER = 4,    /* character/block device, FIFO, socket */
} ml_entry_type;

/* Flags for ml_entry_check(). */
enum {
	/* Interpreter archives: allow symbolic links with a relative target
	 * that stays inside the tree, and hard links to another entry.
	 * Without it (wheels) every link is refused: wheels never need one. */
	ML_ENTRY_ALLOW_LINKS = 1u << 0,
};

/* Which archives ml_archive_extract() accepts. */
typedef enum ml_archive_kind {
	/* A wheel: a zip file (our own reader: stored and deflate members
	 * only), no links of any kind. */
	ML_ARCHIVE_WHEEL = 1,
	/* An interpreter: a gzip- or zstd-compressed tar (libarchive's tar
	 * reader with the gzip and zstd filters only); in-tree relative
	 * symlinks and hard links to earlier entries are kept. */
	ML_ARCHIVE_INTERPRETER = 2,
} ml_archive_kind;

/* Default caps (bytes after expansion, entries). */
#define ML_WHEEL_MAX_BYTES         ((uint64_t)16 << 30)
#define ML_WHEEL_MAX_ENTRIES       200000u
#define ML_INTERPRETER_MAX_BYTES   ((uint64_t)4 << 30)
#define ML_INTERPRETER_MAX_ENTRIES 200000u

typedef struct ml_extract_opts {
	ml_archive_kind kind;
	uint64_t max_bytes;   /* cap on expanded size in bytes; 0: the kind's default */
	uint64_t max_entries; /* cap on entries; 0: the kind's default */
	bool read_only;       /* files 0444/0555 instead of 0644/0755 */
	bool list_files;      /* fill ml_extract_result.files (with sha256) */
	/* Wheels: a wheel's own bytecode (__pycache__/<name>.pyc) is
	 * decoded and checked like every member (CRC-32; sha256 listed)
	 * but not written, so what runs is the installed source or bytecode
	 * compiled from it (listed with dropped set; n_dropped). */
	bool drop_pycache;
	/* Wheels: at most this many threads inflate members, the calling
	 * one included; 0 or 1: the calling thread only. Helpers are only
	 * started while enough bytes remain to share out. */
	int threads;
	/* Wheels: the environment is a Windows one (set by ml_wheel_unpack()
	 * in a Windows build, whose cache is on a Windows file system): every
	 * name must also pass ml_entry_windows_check() (device names such as
	 * CON.py, a trailing dot or space, ':' and the other characters
	 * Windows refuses), and names that are one after case folding are
	 * refused whatever the destination's file system does, before
	 * anything is written. */
	bool windows_names;
} ml_extract_opts;

#define ML_EXTRACT_OPTS_INIT                                                                       \
	{                                                                                          \
		ML_ARCHIVE_WHEEL, 0, 0, false, false, false, 0, false                              \
	}

/* One regular file created by an extraction (list_files). */
typedef struct ml_extracted_file {
	char *path;         /* normalized archive path, '/'-separated */
	uint64_t size;      /* bytes */
	uint8_t sha256[32]; /* digest of the bytes written */
	bool executable;    /* written 0755 (0555) */
	bool dropped;       /* drop_pycache: checked and hashed, not written */
} ml_extracted_file;

typedef struct ml_extract_result {
	uint64_t bytes;     /* bytes of file data written */
	uint64_t n_entries; /* entries read */
	uint64_t n_files, n_dirs, n_symlinks, n_hardlinks;
	uint64_t n_modes_cleared; /* files whose setuid/setgid/sticky bits were dropped */
	uint64_t n_dropped;       /* drop_pycache: bytecode files not written */
	uint64_t n_threads;       /* wheels: most threads that inflated members at once */
	ml_extracted_file *files; /* list_files: every regular file, archive order
	                           * (wheels: central-directory order) */
	size_t n_listed;
} ml_extract_result;

/* --- wheel metadata files (src/env/record.c) ------------------------------- */

/* One row of a RECORD file (PEP 376 "RECORD"; PEP 427 "The .dist-info
 * directory"): path, hash "algo=urlsafe-base64-nopad" ("" when empty), and
 * size in bytes (-1 when empty). */
typedef struct ml_record_row {
	char *path;
	char *hash;
	int64_t size;
} ml_record_row;

typedef struct ml_record {
	ml_record_row *rows;
	size_t n;
} ml_record;

/* What the WHEEL file says (PEP 427 "The .dist-info directory"). */
typedef struct ml_wheel_meta {
	int version_major, version_minor; /* Wheel-Version */
	bool root_is_purelib;             /* Root-Is-Purelib: true */
	char generator[128];              /* Generator, "" when absent */
} ml_wheel_meta;

/* One entry point ("name = value" in section [group]). */
typedef struct ml_entry_point {
	char *group; /* "console_scripts" */
	char *name;  /* "black" */
	char *value; /* "black:patched_main [d]", as written (trimmed) */
} ml_entry_point;

typedef struct ml_entry_points {
	ml_entry_point *v;
	size_t n;
} ml_entry_points;

/* --- environments: layout (src/env/wheel.c) --------------------------------- */

/* Which venv layout an environment has: CPython's own, per OS. */
typedef enum ml_env_os {
	/* sysconfig "posix_venv": bin/, lib/pythonX.Y/site-packages, links
	 * to the interpreter, scripts with a "#!" line. */
	ML_ENV_POSIX = 1,
	/* sysconfig "nt" (venv on Windows): Scripts/, Lib/site-packages,
	 * python.exe copied in, scripts as .exe launchers. */
	ML_ENV_WINDOWS = 2,
} ml_env_os;

/* The layout of the OS this mlsetup is built for. */
#ifdef _WIN32
#define ML_ENV_OS_NATIVE ML_ENV_WINDOWS
#else
#define ML_ENV_OS_NATIVE ML_ENV_POSIX
#endif

/* Where an environment's files go. See "Paths" at the top of this file.
 * Relative directories use '/' on every OS (Windows accepts it). */
typedef struct ml_env_layout {
	char root[ML_PATH_MAX];       /* where files are written now (staging dir) */
	char final_root[ML_PATH_MAX]; /* where the environment will live */
	char python_xy[16];           /* "3.11" */
	ml_env_os os;                 /* which layout */
	/* "lib/python3.11/site-packages" (POSIX) or "Lib/site-packages"
	 * (Windows), under root: purelib and platlib */
	char site_packages[64];
	char scripts[16]; /* "bin" (POSIX) or "Scripts" (Windows), under root */
	/* The environment's interpreter, relative to root: "bin/python" or
	 * "Scripts/python.exe". */
	char python[32];
} ml_env_layout;

/* ml_env_layout_init_os() for the layout of the OS this mlsetup is built
 * for (ML_ENV_OS_NATIVE). */
int ml_env_layout_init(ml_env_layout *out, const char *root, const char *final_root,
                       const char *python_xy, ml_err *err);

/* Fills *out for a venv of CPython python_xy ("3.11") in layout os, staged
 * at root and living at final_root (both absolute; the same path when
 * there is no staging; a Windows layout also takes "C:/..." or "C:\..."
 * paths). Directories as CPython's sysconfig schemes name them: POSIX
 * "posix_venv" (bin, lib/pythonX.Y/site-packages), Windows "nt" (Scripts,
 * Lib/site-packages; data = the root). Returns 0, or ML_EFAIL (a path is
 * not absolute or too long, python_xy is not "3.N", os unknown). */
int ml_env_layout_init_os(ml_env_layout *out, const char *root, const char *final_root,
                          const char *python_xy, ml_env_os os, ml_err *err);

/* --- wheels: unpack once, link into environments (src/env/wheel.c) ------ */

/* How a file from the unpacked cache was placed in an environment. Order
 * matters: a larger value is a slower, more space-hungry method. */
typedef enum ml_link_method {
	ML_LINK_AUTO = 0,     /* choose: reflink, else hardlink, else copy */
	ML_LINK_REFLINK = 1,  /* FICLONE ioctl: shared extents, own inode */
	ML_LINK_HARDLINK = 2, /* link(2): the cache's read-only inode */
	ML_LINK_COPY = 3,     /* copy_file_range / read-write copy */
} ml_link_method;

/* Returns "reflink", "hardlink", "copy", or "auto". */
const char *ml_link_method_name(ml_link_method m);

typedef struct ml_unpack_opts {
	const char *filename; /* the PEP 427 file name; NULL: basename of the path
	                       * (cache blobs have no name, so pass it) */
	uint64_t max_bytes;   /* expanded-size cap; 0: ML_WHEEL_MAX_BYTES */
	uint64_t max_entries; /* 0: ML_WHEEL_MAX_ENTRIES */
	int threads;          /* threads inflating members (ml_extract_opts); 0: 1 */
	bool sha256_checked;  /* the caller hashed this very file against sha256 moments
	                       * ago (ml_fetch_all: the download that wrote it, or the
	                       * cache lookup that found it): it is not read and
	                       * hashed a second time before extraction */
} ml_unpack_opts;

#define ML_UNPACK_OPTS_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0, 0, false                                                               \
	}

/* A wheel unpacked in the cache. */
typedef struct ml_unpacked {
	char dir[ML_PATH_MAX];    /* <cache>/unpacked/sha256/<hash> */
	bool cache_hit;           /* it was already there: nothing was read */
	uint64_t bytes_extracted; /* 0 on a cache hit */
	uint64_t n_files;
	char name[256]; /* distribution name from the .dist-info dir */
	char version[128];
	char dist_info[384]; /* "torch-2.6.0+cu124.dist-info" */
	bool root_is_purelib;
} ml_unpacked;

/* Unpacks a wheel once into the cache (PEP 427 "Installing a wheel",
 * step "Unpack"), at <cache_dir>/unpacked/sha256/<sha256>/ holding tree/
 * (the wheel's files) and unpacked.json (the completion marker, written
 * last). When the marker is there already this is a cache hit and the
 * wheel file is not even opened.
 *
 * Otherwise, under an flock on <hash>.lock (a second process or thread
 * waits, then finds the finished directory and uses it): stale
 * <hash>.tmp-* directories of crashed runs are removed; the wheel's sha256
 * is checked (ML_EINTEGRITY on mismatch: bytes are verified before any
 * parser sees them), unless opts->sha256_checked says the caller just
 * did; it is extracted with ml_archive_extract (kind ML_ARCHIVE_WHEEL,
 * read-only files 0444/0555 so that a hardlinked environment cannot edit
 * the cache in place) into <hash>.tmp-<random>/;
 * then checked: exactly one top-level <name>-<version>.dist-info whose
 * name and version match the file name (PEP 503 / PEP 440 comparison);
 * WHEEL with Wheel-Version 1.x (2.0 and later: ML_EUNSUPPORTED, PEP 427
 * "installers must fail"); only purelib, platlib, scripts, headers and
 * data under <name>-<version>.data/; RECORD listing every file but itself
 * (and RECORD.jws / RECORD.p7s) with a sha256/sha384/sha512 hash and a
 * size that match what was extracted (ML_EINTEGRITY otherwise; md5 and
 * sha1 are refused); a listed file with a hash that is not in the wheel is
 * refused too, while hash-less rows of absent files (.pyc lists) are
 * ignored. The wheel's own bytecode (__pycache__/<name>.pyc) is checked
 * like every file (CRC-32, RECORD hash and size) but not unpacked: Python
 * would run it instead of the installed source, whatever that source
 * says (an unchecked-hash .pyc, PEP 552, is never compared with it).
 * Then the marker is written and the directory renamed into place; no
 * flush (ml_env_stage_commit makes an environment durable as a whole; a
 * torn marker reads as no marker, a torn file fails the RECORD size check
 * on use).
 *
 * opts may be NULL. Returns 0 and fills *out; ML_EINTEGRITY,
 * ML_EUNSUPPORTED, ML_EPARSE (broken WHEEL or RECORD text), ML_ENOENT
 * (wheel missing), ML_EIO, ML_ENOMEM. Nothing is left behind on failure. */
int ml_wheel_unpack(ml_unpacked *out, const char *cache_dir, const char *wheel_path,
                    const char *sha256, const ml_unpack_opts *opts, ml_err *err);

/* Returns true when the wheel with this sha256 is already unpacked in the
 * cache at cache_dir (its completion marker exists), so ml_wheel_unpack()
 * would not open the wheel file at all: callers can skip fetching and
 * verifying the wheel itself. The unpacked tree is still checked against
 * its RECORD when it is installed. */
bool ml_wheel_unpacked_ready(const char *cache_dir, const char *sha256);

/* Writes the path of the unpacked tree of the wheel with this sha256 (the
 * wheel's own files, <cache_dir>/unpacked/sha256/<sha256>/tree) into dst
 * (dstsz bytes), whether or not it exists yet: for callers that read an
 * unpacked wheel in place (the audit before building). Returns 0, or
 * ML_EFAIL when sha256 is not 64 hex digits or the path does not fit. */
int ml_wheel_unpacked_tree(char *dst, size_t dstsz, const char *cache_dir, const char *sha256);

typedef struct ml_wheel_install_opts {
	bool requested;      /* write REQUESTED (PEP 376): named in the manifest */
	ml_link_method link; /* ML_LINK_AUTO, or force one method (tests) */
} ml_wheel_install_opts;

#define ML_WHEEL_INSTALL_OPTS_INIT                                                                 \
	{                                                                                          \
		false, ML_LINK_AUTO                                                                \
	}

/* What installing one wheel did. */
typedef struct ml_wheel_result {
	char name[256];
	char version[128];
	char dist_info[384];
	bool cache_hit;           /* unpacked cache already held it */
	uint64_t bytes_extracted; /* decompressed for this install; 0 on a hit */
	uint64_t n_linked;        /* files placed from the unpacked cache */
	uint64_t n_reflinked, n_hardlinked, n_copied; /* n_linked by method */
	uint64_t n_written;                           /* files written new: scripts, launchers,
	                                               * INSTALLER, REQUESTED, RECORD */
	uint64_t n_overwritten;                       /* paths another wheel had placed already
	                                               * (replaced, as pip does) */
	ml_link_method method;                        /* the slowest method used; AUTO when none */
	int hardlink_errno; /* with ML_LINK_AUTO: the errno (positive) of the hard link
	                     * from the unpacked cache that failed, after which this
	                     * wheel's files were copied (EXDEV: the cache and the
	                     * environment are on different file systems); 0 when
	                     * none failed */
	int rc;                                       /* ml_wheels_install_all: 0 or ML_E* */
	bool skipped;                                 /* ml_wheels_install_all: not attempted */
	ml_err err;                                   /* ml_wheels_install_all: why it failed */
} ml_wheel_result;

/* --- many wheels in parallel (src/env/pool.c) ------------------------------ */

/* One wheel to install. Borrowed pointers. */
typedef struct ml_wheel_job {
	const char *path;     /* the verified wheel file (cache blob) */
	const char *sha256;   /* 64 lower-case hex digits */
	const char *filename; /* PEP 427 file name */
	bool requested;       /* named in the manifest: REQUESTED */
	const ml_unpacked *unpacked; /* NULL, or this run unpacked it already
	                              * (ml_unpack_queue): not unpacked again, and
	                              * its cache_hit and bytes_extracted are the
	                              * ones reported */
	bool sha256_checked;         /* path's bytes were hashed against sha256 by
	                              * this run (ml_unpack_opts.sha256_checked) */
} ml_wheel_job;

typedef struct ml_wheels_opts {
	const char *cache_dir; /* holds unpacked/ */
	int jobs;              /* threads in all, 0: ml_os_cpu_count(): wheel workers,
	                        * and helpers inflating the members of large
	                        * wheels on the slots of workers left idle */
	uint64_t max_bytes;    /* per-wheel expanded-size cap; 0: default */
	uint64_t max_entries;  /* per-wheel entry cap; 0: default */
	ml_link_method link;   /* ML_LINK_AUTO unless forcing one */
	/* Called after each wheel (success or failure), from worker
	 * threads but never two at once; may be NULL. */
	void (*on_done)(void *ctx, size_t index, const ml_wheel_result *r);
	void *ctx;
} ml_wheels_opts;

#define ML_WHEELS_OPTS_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0, 0, ML_LINK_AUTO, NULL, NULL                                            \
	}

/* Unpacks (ml_wheel_unpack) and installs (ml_wheel_install_unpacked) n
 * wheels into env with a pool of opts->jobs threads. out must hold n
 * results; every one is filled (rc, err, skipped per wheel). The first
 * failure stops new work (wheels not started are marked skipped) and is
 * returned, its message prefixed with the wheel's file name. Returns 0 or
 * that wheel's ML_E* code; ML_ENOMEM / ML_EFAIL when threads cannot
 * start. */
int ml_wheels_install_all(ml_wheel_result *out, const ml_wheel_job *jobs, size_t n,
                          const ml_env_layout *env, const ml_wheels_opts *opts, ml_err *err);

/* --- unpacking while the rest downloads (src/env/pool.c) ------------------- */

/* A queue of wheels to unpack into the cache (ml_wheel_unpack), fed one at a
 * time while the caller is still fetching the others. Its threads share
 * one budget like ml_wheels_install_all's: a worker holds a slot while it
 * unpacks, and a large wheel's members are inflated on the slots of idle
 * workers. */
typedef struct ml_unpack_queue ml_unpack_queue;

/* Called on a worker thread before a wheel is unpacked (the GPU audit of
 * the wheel); returns 0 to unpack it, anything else to stop the queue:
 * that wheel and every one not yet started are left alone. Calls can run
 * on several workers at once. */
typedef int (*ml_unpack_check_fn)(void *ctx, size_t index, const char *wheel_path);

/* Starts a queue for wheels numbered 0..n-1 with opts->jobs threads (0:
 * ml_os_cpu_count()), opts->cache_dir, max_bytes and max_entries (link,
 * on_done and ctx are not used). check may be NULL; ctx is passed to it.
 * opts is copied; cache_dir is borrowed until ml_unpack_queue_finish().
 * Returns 0 and *out; ML_ENOMEM, or ML_EFAIL when no thread can start. */
int ml_unpack_queue_start(ml_unpack_queue **out, size_t n, const ml_wheels_opts *opts,
                          ml_unpack_check_fn check, void *ctx, ml_err *err);

/* Queues wheel index (< n; each at most once) for unpacking; job (its
 * strings borrowed until ml_unpack_queue_finish()) names the verified
 * wheel. Does nothing once the queue has stopped. Never blocks on
 * unpacking. Returns 0, ML_EFAIL (bad index) or ML_ENOMEM. */
int ml_unpack_queue_add(ml_unpack_queue *q, size_t index, const ml_wheel_job *job, ml_err *err);

/* The check's result that stopped the queue (the first non-zero one), or
 * 0 while no check refused; safe to call from any thread while the queue
 * runs. */
int ml_unpack_queue_refusal(ml_unpack_queue *q);

/* Tells the queue that nothing more comes; with stop, wheels not yet
 * started are dropped. Waits for the workers, then fills out[0..n) (may be
 * NULL) and ok[0..n): ok[i] is true when wheel i was unpacked (out[i] then
 * says how). Frees the queue. Returns 0; or the check's non-zero result
 * when it stopped the queue (first one, err from check is the caller's to
 * keep); an unpacking failure is not returned: that wheel's ok is false
 * and installing it later reports why. */
int ml_unpack_queue_finish(ml_unpack_queue *q, bool stop, ml_unpacked *out, bool *ok);

/* --- interpreters (src/env/python.c) --------------------------------------- */

/* What an interpreter says about itself. */
typedef struct ml_python_info {
	char implementation[32]; /* sys.implementation.name ("cpython") */
	bool is_cpython;
	char version[32]; /* "3.11.7" (major.minor.micro) */
	int major, minor, micro;
	char xy[16];                   /* "3.11" */
	char executable[ML_PATH_MAX];  /* realpath of sys.executable */
	char prefix[ML_PATH_MAX];      /* sys.prefix */
	char base_prefix[ML_PATH_MAX]; /* sys.base_prefix */
} ml_python_info;

/* Where a python-build-standalone install_only archive keeps its
 * interpreter, relative to the directory it is unpacked in: POSIX
 * "python/bin/python3", Windows "python/python.exe" (docs/nvidia-and-python-facts.md, "Python
 * packaging"). */
#ifdef _WIN32
#define ML_PYTHON_ARCHIVE_EXE "python/python.exe"
#else
#define ML_PYTHON_ARCHIVE_EXE "python/bin/python3"
#endif

/* Runs `python -I -c <probe>` (at most 30 s) and fills *out. Returns 0;
 * ML_ENOENT when it cannot be started; ML_EFAIL when it fails, times out
 * or answers something unreadable (err has its output). */
int ml_python_probe(ml_python_info *out, const char *python, ml_err *err);

/* Writes the directory interpreters are unpacked into: override when
 * non-NULL, else $XDG_DATA_HOME/mlsetup/pythons, else
 * ~/.local/share/mlsetup/pythons (Windows: %LOCALAPPDATA%/mlsetup/pythons
 * first, with '/' as separator). Does not create it. Returns 0 or
 * ML_EFAIL (no home directory, does not fit). */
int ml_python_dir(char *dst, size_t dstsz, const char *override);

/* Unpacks a python-build-standalone "install_only" / "install_only_stripped"
 * archive (tar.gz or tar.zst whose root directory is python/) to
 * <dest_root>/<name>/ and writes its interpreter path,
 * <dest_root>/<name>/ML_PYTHON_ARCHIVE_EXE, into out (out_sz bytes).
 * Idempotent: when <dest_root>/<name>/.mlsetup-complete exists it is reused
 * without reading the archive. Otherwise, under an flock on
 * <dest_root>/.<name>.lock: the archive's sha256 is checked (ML_EINTEGRITY;
 * sha256 NULL skips this, for callers that verified it themselves), it is
 * extracted with ml_archive_extract (kind ML_ARCHIVE_INTERPRETER: in-tree
 * relative links only, chains resolved) into <dest_root>/.<name>.stage-<random>,
 * ML_PYTHON_ARCHIVE_EXE must exist (and be executable, on POSIX), the
 * tree is synced, the marker written and the directory renamed into place. dest_root is created when missing;
 * name must be a single path component. Returns 0, ML_EINTEGRITY,
 * ML_ENOENT, ML_EIO, ML_EFAIL (name not a plain name; a directory without
 * marker is in the way and cannot be moved aside), ML_ENOMEM. */
int ml_python_unpack(char *out, size_t out_sz, const char *archive_path, const char *sha256,
                     const char *dest_root, const char *name, ml_err *err);

/* --- PEP 405 virtual environments (src/env/venv.c) ------------------------- */

typedef struct ml_venv_opts {
	const char *prompt; /* shown as "(prompt) "; NULL: basename of final_root */
} ml_venv_opts;

/* Creates a virtual environment (PEP 405) in env->root, which must exist
 * (the stage) and be empty, for the interpreter py (ml_python_probe):
 *   pyvenv.cfg   home = dirname(py->executable), include-system-site-packages
 *                = false, version = py->version, executable =
 *                py->executable, command = the equivalent `python -m venv`
 *                command for final_root, mlsetup = version;
 *   bin/python   absolute symlink to py->executable (its real path);
 *   bin/python3, bin/python3.X   symlinks to "python";
 *   lib/pythonX.Y/site-packages/, include/, lib64 -> lib;
 *   bin/activate (bash, zsh), bin/activate.fish, bin/activate.csh,
 *   bin/Activate.ps1: VIRTUAL_ENV = final_root, bin/ first on PATH,
 *   PYTHONHOME unset, prompt "(prompt) ", `deactivate` undoes it all;
 *   .gitignore holding "*".
 * A Windows layout (env->os ML_ENV_WINDOWS; CPython's venv on Windows)
 * instead has: pyvenv.cfg as above with '\' separators; Scripts\python.exe
 * and Scripts\pythonw.exe copied from the base interpreter's
 * Lib\venv\scripts\nt\ (venvlauncher.exe / venvwlauncher.exe, 3.13 on;
 * python.exe / pythonw.exe, 3.7.2 - 3.12), else its own python.exe,
 * pythonw.exe and the *.dll files beside them; Lib\site-packages\,
 * Include\; Scripts\activate.bat, Scripts\deactivate.bat (cmd.exe) and
 * Scripts\Activate.ps1; .gitignore. py->executable may then be "C:\..."
 * or "C:/...", and the base interpreter is read from py->base_prefix (its
 * directory when empty).
 * py->xy must equal env->python_xy. opts may be NULL. Returns 0, ML_EFAIL
 * (not CPython 3, mismatched versions, a path a shell cannot quote: one
 * with a control character, or in a Windows layout a '"'), ML_ENOENT (a
 * Windows layout: the interpreter's python.exe is missing), ML_EIO. */
int ml_venv_create(const ml_env_layout *env, const ml_python_info *py, const ml_venv_opts *opts,
                   ml_err *err);

/* --- bytecode (src/env/bytecode.c) ------------------------------------------ */

/* The number of interpreters ml_env_compile_bytecode() runs: one per
 * core (ml_os_cpu_count), at least 1, at most 64. */
int ml_env_bytecode_workers(void);

/* Compiles every .py file under env's site-packages to .pyc with the
 * environment's own interpreter (<root>/<python>): one process per core
 * (ml_env_bytecode_workers), each compiling every n-th file of the
 * tree in sorted order with py_compile, as compileall does, recording the
 * final_root paths in the .pyc files rather than the staging ones. A file
 * that does not compile is no error (it runs from source, as with pip and
 * uv): *n_failed counts them and first_failure (first_sz bytes) names the
 * first ("pkg/x.py: SyntaxError: ..."); both may be NULL. At most 30
 * minutes. Returns 0, ML_ENOENT (the interpreter cannot be started),
 * ML_EFAIL (an interpreter failed or ran out of time: err says how),
 * ML_ENOMEM. */
int ml_env_compile_bytecode(const ml_env_layout *env, size_t *n_failed, char *first_failure,
                            size_t first_sz, ml_err *err);

/* --- atomic environments (src/env/stage.c) ----------------------------------- */

/* The lock on one target (an flock on <parent>/.<basename>.mlsetup-lock). */
typedef struct ml_envlock ml_envlock;

/* Takes the lock for installing into target (made absolute; its parent
 * directories are created). With wait, blocks until a concurrent install
 * finishes; without, fails at once. The lock file records the holder's
 * pid for the message. Caller owns *out; release with ml_env_unlock().
 * Returns 0; ML_EFAIL when target is busy and !wait ("another mlsetup
 * (pid N) is installing into '<target>'", hint: wait or drop --no-wait),
 * or cannot be locked; ML_EIO. */
int ml_env_lock(ml_envlock **out, const char *target, bool wait, ml_err *err);

/* Returns the absolute target a lock is for (owned by the lock). */
const char *ml_env_lock_target(const ml_envlock *lock);

/* Releases the lock and frees it. Accepts NULL. */
void ml_env_unlock(ml_envlock *lock);

/* A staging directory beside the target. */
typedef struct ml_env_stage {
	char target[ML_PATH_MAX]; /* absolute final path: write THIS into files */
	char path[ML_PATH_MAX];   /* <parent>/.<basename>.mlsetup-stage-<random>:
	                           * create files HERE */
	bool committed;
	int n_stale_removed; /* leftovers of crashed runs removed */
	bool recovered;      /* a target moved aside by a crashed commit
	                      * was put back */
} ml_env_stage;

/* Begins building a new environment for the locked target: first cleans up
 * after crashed runs (removes every .<basename>.mlsetup-stage-* and
 * .<basename>.mlsetup-old-* beside it; when the target itself is missing
 * and a complete .mlsetup-old-* exists, puts that back first), then creates
 * a fresh, empty staging directory (0755). Fails early (ML_EFAIL) when the
 * target could never be replaced: it exists and is not a directory, or is
 * a non-empty directory that is neither an mlsetup environment (marker)
 * nor a venv (pyvenv.cfg) - a project directory passed as --target by
 * mistake is never deleted. Caller owns *out; end it with
 * ml_env_stage_abort() whether or not it was committed. Returns 0,
 * ML_EFAIL, ML_EIO, ML_ENOMEM. */
int ml_env_stage_begin(ml_env_stage **out, const ml_envlock *lock, ml_err *err);

/* Puts the staged environment in place: syncs the staging tree (syncfs)
 * and its directory, writes the completion marker <stage>/.mlsetup-complete
 * last and syncs it, then renames the stage to the target - when a
 * target exists, swapping the two atomically with renameat2
 * (RENAME_EXCHANGE), so the target path always holds a complete
 * environment; where the file system cannot exchange, the old target is
 * renamed to .<basename>.mlsetup-old-<random> first and put back if the
 * second rename fails. The old environment is then deleted. The marker is
 * part of the tree before it appears at the target, so a crash at any point
 * leaves either the old or the new complete environment at the target
 * (the next ml_env_stage_begin() cleans the rest). Checks the target
 * again as ml_env_stage_begin() does (a file, a symlink or a foreign
 * non-empty directory is refused). Returns 0, ML_EFAIL (target in the
 * way, stage already committed), ML_EIO. On failure the target is as it
 * was. */
int ml_env_stage_commit(ml_env_stage *stage, ml_err *err);

/* Ends a stage: removes the staging directory unless it was committed (the
 * abort), then frees the handle. Call it once for every begun stage.
 * Accepts NULL. */
void ml_env_stage_abort(ml_env_stage *stage);

/* Returns true when target holds a complete environment: a directory (not
 * a symlink) with the regular file .mlsetup-complete. */
bool ml_env_is_complete(const char *target);

/* Name of the completion marker inside an environment. */
#define ML_ENV_MARKER ".mlsetup-complete"

#endif /* MLSETUP_ENV_H */
