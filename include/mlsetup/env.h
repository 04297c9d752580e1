/*
 * env.h - the env stage (the environment builder): make the environment
 * from verified files.
 *
 * Cached files in, a working environment out, atomically. Each part lives
 * in its own source file under src/env/:
 *
 *   extract.c   checked archive extraction (wheels: zip; interpreters:
 *               tar.gz / tar.zst) and the pure per-entry checker
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
 *   venv.c      PEP 405 virtual environments and their activate scripts
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

/* Checks one archive entry, before anything is created for it. name is
 * name_len bytes (it may hold a NUL: zip names can); link is the symlink
 * target or hard-link path (link_len bytes; NULL/0 for other types).
 * Refused (ML_EINTEGRITY, err names the entry and the reason):
 *   - empty names, names longer than 4095 bytes or with a component longer
 *     than 255 bytes;
 *   - NUL, control characters (0x01-0x1f, 0x7f), invalid UTF-8;
 *   - absolute paths ("/x"), backslashes anywhere ("..\x", "\\host\share"),
 *     drive letters ("C:x", "C:\x");
 *   - ".." components, and "." or empty components other than a leading
 *     "./" and a trailing "/";
 *   - device files, FIFOs and sockets (ML_ENTRY_OTHER);
 *   - without ML_ENTRY_ALLOW_LINKS, any symlink or hard link;
 *   - with it, a symlink whose target is empty, absolute, has a backslash
 *     or control character, or whose ".." components climb above the root
 *     of the tree when resolved from the link's own directory ("a/l ->
 *     ../x" is fine, "l -> ../x" is not); a hard link whose path fails the
 *     name rules above.
 * Chains (a link through another link) need the whole tree; the extractor
 * resolves every link again after the last entry (ml_archive_extract).
 * When out is non-NULL it receives the normalized name (leading "./" and
 * trailing "/" removed; "" for the root directory itself, which only a
 * directory may be) - out_sz bytes. Pure: no file system access.
 * Returns 0 or ML_EINTEGRITY (ML_EFAIL when out is too small). */
int ml_entry_check(char *out, size_t out_sz, const char *name, size_t name_len, ml_entry_type type,
                   const char *link, size_t link_len, unsigned flags, ml_err *err);

/* Checks names across entries: that no two of the n normalized archive
 * paths (as ml_entry_check() writes them), nor the directories they imply,
 * are one name after Unicode NFC normalization (UAX #15; "caf\u00e9" and
 * "cafe\u0301", "K" and U+212A KELVIN SIGN) or, with fold_case, after NFC
 * and Unicode full case folding ("Foo" and "foo"), as on a file system
 * that folds case. A single decomposed name is fine; identical paths are
 * the caller's to refuse as duplicates. Pure. Returns 0; ML_EINTEGRITY
 * with err naming both paths, code points past ASCII written \uXXXX;
 * ML_ENOMEM. */
int ml_entry_names_check(const char *const *paths, size_t n, bool fold_case, ml_err *err);

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
} ml_extract_opts;

#define ML_EXTRACT_OPTS_INIT                                                                       \
	{                                                                                          \
		ML_ARCHIVE_WHEEL, 0, 0, false, false, false, 0                                     \
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

/* Extracts archive_path into dest, a directory this call creates (its
 * parent must exist; dest must not: extraction only ever goes into a fresh
 * directory). Bytes should already be verified (size + sha256).
 *
 * Reading wheels (zip; PKWARE APPNOTE 6.3): our own reader, libarchive is
 * not involved. The central directory is read and checked first
 * (zipscan.c): the file must start with a local header, end exactly at the
 * end-of-central-directory record (no trailing data, which also refuses
 * zip/tar hybrids), and every entry must be consistent between central
 * and local headers (name, method, flags, and CRC-32 and sizes unless a
 * data descriptor follows the data, which must then carry the central
 * CRC-32 and sizes), unencrypted, and not overlap another; a non-ASCII
 * name must carry the zip UTF-8 flag (else its encoding is ambiguous:
 * Python would read it as CP437). Every name is checked before anything
 * is written: ml_entry_check(), duplicates, a path that is a file and also
 * the directory of another entry, and names that are one after Unicode
 * NFC normalization (a single decomposed "cafe\u0301.py" is a plain name;
 * it next to "caf\u00e9.py" is refused) or, where dest folds case (probed
 * in dest itself), after case folding. Then every member is decoded whole
 * from the mapped file, sizes taken from the central directory: stored
 * (its sizes must be equal) or deflate (libdeflate); other methods are
 * refused. A deflate stream must fill exactly the declared size and end
 * exactly at the member's compressed size: inflation stops at the declared
 * size, so nothing is ever written past it ("expands past its declared
 * size" is refused, as is a stream that ends early or is followed by
 * other bytes). The CRC-32 of the bytes is checked against the central
 * directory and their sha256 (list_files) is computed in the same pass,
 * before the file is complete. Members up to 1 MiB inflate into a buffer
 * and are written; larger ones inflate straight into the output file,
 * allocated (fallocate) to its declared size and mapped, whose pages are
 * dropped from this process every few milliseconds while it fills (memory
 * stays bounded; the page cache keeps the bytes); where a file cannot be
 * allocated or mapped, the member is inflated with zlib in 1 MiB windows
 * that stop at the declared size. With opts->threads > 1 large wheels'
 * members are shared among threads, the largest first; the first failure
 * in that order is the one reported. The wheel is mapped read-only: it
 * must not be truncated while it is read (a verified cache blob never is).
 *
 * Reading interpreter archives: libarchive with only the tar reader and
 * the gzip and zstd filters. Tar files must be gzip or zstd compressed (a
 * plain tar is refused) with nothing after the compressed stream and
 * nothing but zero padding after the tar end marker. Names are read as
 * UTF-8 whatever the process locale (uselocale C.UTF-8 on the calling
 * thread only). Every entry goes through ml_entry_check(); duplicate
 * names (after normalization) are refused.
 *
 * Writing, for both kinds: Writing: each path is opened component by
 * component relative to a directory descriptor with O_NOFOLLOW (existing
 * symlinks are never followed, so no entry can write through a link) and
 * files are created with O_EXCL. Files get mode 0644, or 0755 when the
 * archive gives any execute bit (0444/0555 with read_only); setuid,
 * setgid and sticky bits are never written (counted in n_modes_cleared);
 * directories 0755. After the last entry every symlink is resolved through
 * the tree, following chains, and refused when it leaves the tree.
 * Extraction stops as soon as the expanded size passes max_bytes or the
 * entry count passes max_entries ("zip bomb": stopped at the cap).
 *
 * We do not use archive_write_disk: it resolves paths against the process
 * working directory (chdir is not thread-safe) and does not check symlink
 * targets; the descriptor-relative writer above gives what its
 * ARCHIVE_EXTRACT_SECURE_NODOTDOT / _SECURE_SYMLINKS /
 * _SECURE_NOABSOLUTEPATHS flags give, and more.
 *
 * On failure dest is removed again; nothing outside dest is ever created.
 * Files are not fsynced (callers sync the tree once). out may be NULL;
 * release it with ml_extract_result_release(). Returns 0; ML_EINTEGRITY
 * for a refused archive (err names the entry and the rule); ML_EFAIL when
 * dest exists; ML_ENOENT, ML_EIO, ML_ENOMEM. */
int ml_archive_extract(ml_extract_result *out, const char *archive_path, const char *dest,
                       const ml_extract_opts *opts, ml_err *err);

/* Frees the file list of r and zeroes it. Accepts NULL. */
void ml_extract_result_release(ml_extract_result *r);

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

/* Parses RECORD text (len bytes) as Python's csv module reads it (the
 * "excel" dialect: comma-separated, fields optionally in double quotes
 * with "" for a quote, CRLF or LF line ends, quoted fields may span
 * lines). Each row needs 3 fields (a 4th or more refused), a non-empty
 * path, and a size of decimal digits or empty. Blank lines are skipped.
 * Caller owns *out; free with ml_record_free(). Returns 0, ML_EPARSE (err
 * names the line) or ML_ENOMEM. */
int ml_record_parse(ml_record **out, const char *text, size_t len, ml_err *err);

/* Appends r to b in the form csv.writer writes it (QUOTE_MINIMAL, LF line
 * ends here, as installer and bdist_wheel write RECORD files): fields containing
 * ',', '"', CR or LF are quoted. An empty hash and a size of -1 are
 * written as empty fields. Returns 0 or ML_ENOMEM. */
int ml_record_format(ml_buf *b, const ml_record *r);

/* Frees a RECORD; accepts NULL. */
void ml_record_free(ml_record *r);

/* What the WHEEL file says (PEP 427 "The .dist-info directory"). */
typedef struct ml_wheel_meta {
	int version_major, version_minor; /* Wheel-Version */
	bool root_is_purelib;             /* Root-Is-Purelib: true */
	char generator[128];              /* Generator, "" when absent */
} ml_wheel_meta;

/* Parses a WHEEL file ("Key: value" lines, RFC 822 style; keys compared
 * case-insensitively). Wheel-Version must be present as "M.N"; a missing
 * Root-Is-Purelib reads as false, as pip reads it. Returns 0, or ML_EPARSE
 * for a missing or malformed Wheel-Version. The version check (major 1
 * only) is the caller's: ml_wheel_unpack() refuses 2.0 and later. */
int ml_wheel_meta_parse(ml_wheel_meta *out, const char *text, size_t len, ml_err *err);

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

/* Parses entry_points.txt (PyPA "Entry points specification", file
 * format: INI sections, "name = value" split at the first '=', comments
 * starting with '#' or ';', surrounding whitespace trimmed). Caller owns
 * *out; free with ml_entry_points_free(). Returns 0, ML_EPARSE (a line
 * that is neither a section, a comment nor a name = value pair, or an
 * entry before any section; err names the line) or ML_ENOMEM. */
int ml_entry_points_parse(ml_entry_points **out, const char *text, size_t len, ml_err *err);

/* Frees entry points; accepts NULL. */
void ml_entry_points_free(ml_entry_points *e);

/* Splits an entry point value "module.sub:attr.sub [extra1, extra2]" into
 * the module ("module.sub") and the attribute path ("attr.sub"), each a
 * dotted sequence of Python identifiers; extras are ignored. Both parts are
 * required (a launcher needs something to call). Writes into the given
 * buffers (each *_sz bytes). Returns 0 or ML_EPARSE: anything else would
 * end up as Python source in a launcher. */
int ml_entry_point_split(char *module, size_t module_sz, char *attr, size_t attr_sz,
                         const char *value, ml_err *err);

/* --- environments: layout (src/env/wheel.c) --------------------------------- */

/* Where an environment's files go. See "Paths" at the top of this file. */
typedef struct ml_env_layout {
	char root[ML_PATH_MAX];       /* where files are written now (staging dir) */
	char final_root[ML_PATH_MAX]; /* where the environment will live */
	char python_xy[16];           /* "3.11" */
	char site_packages[64];       /* "lib/python3.11/site-packages", under root */
} ml_env_layout;

/* Fills *out for a POSIX venv of CPython python_xy ("3.11") staged at root
 * and living at final_root (both absolute; the same path when there is no
 * staging). Returns 0, or ML_EFAIL (a path is not absolute or too long,
 * python_xy is not "3.N"). */
int ml_env_layout_init(ml_env_layout *out, const char *root, const char *final_root,
                       const char *python_xy, ml_err *err);

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
} ml_unpack_opts;

#define ML_UNPACK_OPTS_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0, 0                                                                      \
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
 * parser sees them); it is extracted with ml_archive_extract (kind
 * ML_ARCHIVE_WHEEL, read-only files 0444/0555 so that a hardlinked
 * environment cannot edit the cache in place) into <hash>.tmp-<random>/;
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
 * Then the tree is synced, the marker written and synced, and the
 * directory renamed into place.
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
	int rc;                                       /* ml_wheels_install_all: 0 or ML_E* */
	bool skipped;                                 /* ml_wheels_install_all: not attempted */
	ml_err err;                                   /* ml_wheels_install_all: why it failed */
} ml_wheel_result;

/* Installs a wheel unpacked by ml_wheel_unpack() into the environment env
 * (PEP 427 "Installing a wheel", step "Spread"; packaging.python.org
 * "Binary distribution format"). Every file is linked (reflink, else
 * hardlink, else copy; opts->link can force one) into:
 *   - the wheel root and .data/purelib, .data/platlib: site-packages;
 *   - .data/headers: include/site/pythonX.Y/<name>/;
 *   - .data/data: the environment root;
 *   - .data/scripts: bin/, as REAL files 0755, a first line "#!python" or
 *     "#!pythonw" rewritten to the environment's python (final_root);
 * and console_scripts / gui_scripts from entry_points.txt become launchers
 * in bin/ (real files 0755): "#!<final_root>/bin/python" or, when that path
 * has a space or is longer than 127 bytes, the "/bin/sh" exec form. The
 * .dist-info gets INSTALLER ("mlsetup"), REQUESTED when opts->requested,
 * and a new RECORD listing every installed path relative to site-packages
 * ("../../../bin/x" for scripts) with sha256 and size, and RECORD itself
 * without; the wheel's own bytecode (__pycache__/<name>.pyc, which
 * unpacking drops; trees unpacked before may hold it) is neither installed
 * nor listed. Directories are created 0755; a path another wheel placed is
 * replaced (n_overwritten). The unpacked tree's files are checked for type
 * and size against its RECORD (ML_EINTEGRITY when the cache was tampered
 * with: remove the directory and unpack again).
 * opts may be NULL. Fills *out (cache_hit / bytes_extracted left 0).
 * Returns 0, ML_EINTEGRITY, ML_EPARSE (bad entry point), ML_EIO, ML_ENOMEM. */
int ml_wheel_install_unpacked(ml_wheel_result *out, const char *unpacked_dir,
                              const ml_env_layout *env, const ml_wheel_install_opts *opts,
                              ml_err *err);

/* --- many wheels in parallel (src/env/pool.c) ------------------------------ */

/* One wheel to install. Borrowed pointers. */
typedef struct ml_wheel_job {
	const char *path;     /* the verified wheel file (cache blob) */
	const char *sha256;   /* 64 lower-case hex digits */
	const char *filename; /* PEP 427 file name */
	bool requested;       /* named in the manifest: REQUESTED */
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

/* Runs `python -I -c <probe>` (at most 30 s) and fills *out. Returns 0;
 * ML_ENOENT when it cannot be started; ML_EFAIL when it fails, times out
 * or answers something unreadable (err has its output). */
int ml_python_probe(ml_python_info *out, const char *python, ml_err *err);

/* Writes the directory interpreters are unpacked into: override when
 * non-NULL, else $XDG_DATA_HOME/mlsetup/pythons, else
 * ~/.local/share/mlsetup/pythons. Does not create it. Returns 0 or
 * ML_EFAIL (no home directory, does not fit). */
int ml_python_dir(char *dst, size_t dstsz, const char *override);

/* Unpacks a python-build-standalone "install_only" / "install_only_stripped"
 * archive (tar.gz or tar.zst whose root directory is python/) to
 * <dest_root>/<name>/ and writes its interpreter path,
 * <dest_root>/<name>/python/bin/python3, into out (out_sz bytes).
 * Idempotent: when <dest_root>/<name>/.mlsetup-complete exists it is reused
 * without reading the archive. Otherwise, under an flock on
 * <dest_root>/.<name>.lock: the archive's sha256 is checked (ML_EINTEGRITY;
 * sha256 NULL skips this, for callers that verified it themselves), it is
 * extracted with ml_archive_extract (kind ML_ARCHIVE_INTERPRETER: in-tree
 * relative links only, chains resolved) into <dest_root>/.<name>.stage-<random>,
 * python/bin/python3 must exist, the tree is synced, the marker written
 * and the directory renamed into place. dest_root is created when missing;
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
 * py->xy must equal env->python_xy. opts may be NULL. Returns 0, ML_EFAIL
 * (not CPython 3, mismatched versions, a path a shell cannot quote: one
 * with a control character), ML_EIO. */
int ml_venv_create(const ml_env_layout *env, const ml_python_info *py, const ml_venv_opts *opts,
                   ml_err *err);

/* --- bytecode (src/env/bytecode.c) ------------------------------------------ */

/* Compiles every .py file under env's site-packages to .pyc with the
 * environment's own interpreter (<root>/bin/python -m compileall -q -j 0),
 * recording the final_root paths in the .pyc files rather than the staging
 * ones (-s root -p final_root). At most 30 minutes. Returns 0, ML_ENOENT
 * (the interpreter cannot be started), ML_EFAIL (compileall failed: err
 * holds the start of its output), ML_ENOMEM. */
int ml_env_compile_bytecode(const ml_env_layout *env, ml_err *err);

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
