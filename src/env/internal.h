/*
 * internal.h - what only the env stage's source files share: the RECORD
 * hash encoding, the lock of a cache directory, a string map, the raw
 * zip central-directory reader (zipscan.c), the wheel extractor
 * (unzip.c), the rules about one entry's name (entry.c) and about names
 * across entries (names.c), and the threads extraction may borrow
 * (slots.c). File-system and digest helpers are core's (core.h).
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

/* True when p is an absolute path: "/..." anywhere; "X:/..." or "X:\\..."
 * in a Windows layout too (src/env/wheel.c). */
bool mle_is_absolute(const char *p, ml_env_os os);

/* --- the lock of a cache directory (fsutil.c) ------------------------------ */

/* Creates dir (mkdir -p, 0755) and takes the exclusive lock lock_path in
 * it, waiting for another process that holds it (ml_fs_lock()); *fd gets
 * the descriptor, released with ml_fs_unlock(). Returns 0 or ML_EIO with
 * err naming the path. */
int mle_lock_in_dir(int *fd, const char *dir, const char *lock_path, ml_err *err);

/* --- a directory under a root (fsutil.c) ---------------------------------- */

/* Opens directory dir (normalized, relative to rootfd; "" is rootfd
 * itself), creating missing components 0755, never following a symbolic
 * link. Returns a new descriptor, or -errno (-ELOOP / -ENOTDIR: a
 * component is a symbolic link or a file). */
int mle_open_dir(int rootfd, const char *dir);

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

/* --- threads extraction may borrow (slots.c) ----------------------------------- */

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

/* --- one entry's name (entry.c) -------------------------------------------- */

/* Writes the n bytes of s (an archive name: hostile) into dst (sz bytes,
 * always NUL-terminated) for a message: valid UTF-8 as it is, but C0 and
 * C1 control characters and DEL as \xNN / \uXXXX, the bidirectional
 * formatting characters (UAX #9) as \uXXXX, and bytes that are not UTF-8
 * (RFC 3629) as \xNN; cut with "..." where it does not fit. Pure. */
void mle_printable(char *dst, size_t sz, const char *s, size_t n);

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

/* Checks one name for what Windows cannot create as it is named (the
 * rules of Microsoft's "Naming Files, Paths, and Namespaces"), in every
 * '/'-separated component of name (name_len bytes: a normalized archive
 * path as ml_entry_check() writes it, an entry point's name, a script's
 * .exe name). Refused (ML_EINTEGRITY, err: "<noun> '<name>' refused on
 * Windows: <why>", noun NULL meaning "entry", the name escaped with
 * mle_printable()):
 *   - a DOS device name as a component, in any case, with any extension,
 *     spaces before the extension too: CON, PRN, AUX, NUL, CONIN$,
 *     CONOUT$, COM1-COM9, LPT1-LPT9, COM and LPT with the superscript
 *     digits U+00B9, U+00B2, U+00B3 ("CON.py", "aux.txt", "nul",
 *     "com1.tar.gz", "lpt9"; not "cone.py", "icon.py", "console.py",
 *     "COM0", "COM10");
 *   - a component that ends in a dot or a space ("mod.py.", "dir /x.py"),
 *     which Windows drops, so that it names another file, and an empty
 *     component;
 *   - ':' anywhere (an NTFS alternate data stream "x.py:ads", or a
 *     drive), and the other characters Windows does not allow in a name:
 *     control characters, < > " | ? * and backslash.
 * Names that are one after case folding are ml_entry_names_check()'s,
 * with fold_case. Pure: the rules hold on every host; callers apply them
 * when the environment is a Windows one. Returns 0 or ML_EINTEGRITY. */
int ml_entry_windows_check(const char *name, size_t name_len, const char *noun, ml_err *err);

/* --- checked extraction internals (extract.c, unzip.c) ----------------------------- */

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

/* --- used only inside src/env (moved from mlsetup/env.h) ------------------- */

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
 * CRC-32 and sizes), unencrypted, and not overlap another; an Info-ZIP
 * Unicode Path extra field (0x7075) in either header must hold exactly
 * the header's name, whatever its CRC-32 says (else readers that honour
 * it see another name); a non-ASCII
 * name must carry the zip UTF-8 flag (else its encoding is ambiguous:
 * Python would read it as CP437). Every name is checked before anything
 * is written: ml_entry_check(), duplicates, a path that is a file and also
 * the directory of another entry, and names that are one after Unicode
 * NFC normalization (a single decomposed "cafe\u0301.py" is a plain name;
 * it next to "caf\u00e9.py" is refused) or, where dest folds case (probed
 * in dest itself) or opts->windows_names is set, after case folding; with
 * windows_names every name also passes ml_entry_windows_check(). Then
 * every member is decoded whole
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

/* Splits an entry point value "module.sub:attr.sub [extra1, extra2]" into
 * the module ("module.sub") and the attribute path ("attr.sub"), each a
 * dotted sequence of Python identifiers; extras are ignored. Both parts are
 * required (a launcher needs something to call). Writes into the given
 * buffers (each *_sz bytes). Returns 0 or ML_EPARSE: anything else would
 * end up as Python source in a launcher. */
int ml_entry_point_split(char *module, size_t module_sz, char *attr, size_t attr_sz,
                         const char *value, ml_err *err);

/* Frees entry points; accepts NULL. */
void ml_entry_points_free(ml_entry_points *e);

/* Parses entry_points.txt (PyPA "Entry points specification", file
 * format: INI sections, "name = value" split at the first '=', comments
 * starting with '#' or ';', surrounding whitespace trimmed). Caller owns
 * *out; free with ml_entry_points_free(). Returns 0, ML_EPARSE (a line
 * that is neither a section, a comment nor a name = value pair, or an
 * entry before any section; err names the line) or ML_ENOMEM. */
int ml_entry_points_parse(ml_entry_points **out, const char *text, size_t len, ml_err *err);

/* Frees the file list of r and zeroes it. Accepts NULL. */
void ml_extract_result_release(ml_extract_result *r);

/* Appends r to b in the form csv.writer writes it (QUOTE_MINIMAL, LF line
 * ends here, as installer and bdist_wheel write RECORD files): fields containing
 * ',', '"', CR or LF are quoted. An empty hash and a size of -1 are
 * written as empty fields. Returns 0 or ML_ENOMEM. */
int ml_record_format(ml_buf *b, const ml_record *r);

/* Frees a RECORD; accepts NULL. */
void ml_record_free(ml_record *r);

/* Parses RECORD text (len bytes) as Python's csv module reads it (the
 * "excel" dialect: comma-separated, fields optionally in double quotes
 * with "" for a quote, CRLF or LF line ends, quoted fields may span
 * lines). Each row needs 3 fields (a 4th or more refused), a non-empty
 * path, and a size of decimal digits or empty. Blank lines are skipped.
 * Caller owns *out; free with ml_record_free(). Returns 0, ML_EPARSE (err
 * names the line) or ML_ENOMEM. */
int ml_record_parse(ml_record **out, const char *text, size_t len, ml_err *err);

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
 * without. A Windows layout (env->os ML_ENV_WINDOWS) puts scripts in
 * Scripts/ instead, as pip does on Windows: a .data/scripts file whose
 * first line is "#!python" ("#!pythonw") becomes <name>.exe (".py"-style
 * extension dropped), a console (GUI) launcher from winlauncher.c running
 * python.exe (pythonw.exe) named relative to the .exe's directory, and
 * entry points become <name>.exe launchers the same way (gui_scripts:
 * GUI, pythonw.exe); other scripts are copied as they are; RECORD lists
 * the .exe files ("../../Scripts/x.exe") with their sha256 and size; a
 * build without launcher programs fails with ML_ENOENT. In a Windows
 * layout every name the install creates is checked first, before anything
 * is written: each file's path in the wheel, each entry point's name and
 * .exe, each "#!python" script's .exe must pass ml_entry_windows_check(),
 * and names that are one after case folding (NTFS folds case) are refused
 * among the wheel's paths and among what Scripts/ gets (ML_EINTEGRITY).
 * The wheel's own bytecode (__pycache__/<name>.pyc, which unpacking
 * drops; trees unpacked before may hold it) is neither installed nor
 * listed. Directories are created 0755; a path another wheel placed is
 * replaced (n_overwritten). The unpacked tree's files are checked for type
 * and size against its RECORD (ML_EINTEGRITY when the cache was tampered
 * with: remove the directory and unpack again). opts may be NULL. Fills
 * *out (cache_hit / bytes_extracted left 0). Returns 0, ML_EINTEGRITY,
 * ML_EPARSE (bad entry point), ML_EIO, ML_ENOMEM, ML_ENOENT (see above). */
int ml_wheel_install_unpacked(ml_wheel_result *out, const char *unpacked_dir,
                              const ml_env_layout *env, const ml_wheel_install_opts *opts,
                              ml_err *err);

/* Parses a WHEEL file ("Key: value" lines, RFC 822 style; keys compared
 * case-insensitively). Wheel-Version must be present as "M.N"; a missing
 * Root-Is-Purelib reads as false, as pip reads it. Returns 0, or ML_EPARSE
 * for a missing or malformed Wheel-Version. The version check (major 1
 * only) is the caller's: ml_wheel_unpack() refuses 2.0 and later. */
int ml_wheel_meta_parse(ml_wheel_meta *out, const char *text, size_t len, ml_err *err);

/* --- Windows script launchers (src/env/winlauncher.c) ---------------------------------- */

/* Which launcher program a script's .exe starts with: the console one
 * (console_scripts, "#!python"; runs python.exe) or the GUI one
 * (gui_scripts, "#!pythonw"; Windows subsystem, runs pythonw.exe). */
typedef enum ml_winlauncher_kind {
	ML_WINLAUNCHER_CONSOLE = 0,
	ML_WINLAUNCHER_GUI = 1,
} ml_winlauncher_kind;

/* Finds the launcher program for kind among the embedded files
 * ("launcher-console.exe", "launcher-gui.exe":
 * platform/windows/launcher/launcher.c built by the Makefile with zig;
 * only the Windows build embeds them).
 * Sets *data (static, never freed) and *len. Returns 0, ML_ENOENT (this
 * build has none; err says so) or ML_EFAIL (bad kind). */
int ml_winlauncher_base(const unsigned char **data, size_t *len, ml_winlauncher_kind kind,
                        ml_err *err);

/* Tests only: makes ml_winlauncher_base() return data (len bytes, kept
 * by the caller until it is reset) for kind instead of the embedded
 * program, so a build without them (Linux) can write a Windows layout;
 * data NULL goes back to the embedded one. Not thread-safe: call it while
 * no environment is being written. */
void ml_winlauncher_set_base(ml_winlauncher_kind kind, const void *data, size_t len);

/* Builds a script's .exe into out (its contents are replaced, only on
 * success): the launcher program base (base_len bytes, a Windows
 * executable), then the interpreter path (UTF-8; absolute, or relative to
 * the .exe's directory, e.g. "python.exe" for a venv's Scripts\), a
 * 16-byte footer and a zip holding script as __main__.py (layout:
 * winlauncher.c). Run as `foo.exe ARGS`, the launcher runs
 * `"<interpreter>" "<foo.exe>" ARGS` with ARGS verbatim, and exits with its
 * exit code. Pure; the same inputs give the same bytes. Returns 0,
 * ML_EFAIL (base is not an executable; the interpreter path is empty, too
 * long, names a directory or holds a '"' or a control character; the
 * script is over 2 GiB: err says which) or ML_ENOMEM. */
int ml_winlauncher_build(ml_buf *out, const void *base, size_t base_len, const char *interpreter,
                         const void *script, size_t script_len, ml_err *err);

/* ml_winlauncher_build() for an entry point "module:attr" (console_scripts
 * or gui_scripts, split by ml_entry_point_split(); PyPA "Entry points
 * specification"): __main__.py is the script pip writes (imports module,
 * calls attr, exits with its result; sys.argv[0] without ".exe"), the
 * same text as the Linux launchers' in wheel.c. The caller picks base and
 * interpreter (python.exe for console, pythonw.exe for GUI entry points).
 * Returns as ml_winlauncher_build(), or ML_EPARSE when module or attr is
 * empty or holds anything but letters, digits, '_', '.' and non-ASCII
 * bytes. */
int ml_winlauncher_entry_point(ml_buf *out, const void *base, size_t base_len,
                               const char *interpreter, const char *module, const char *attr,
                               ml_err *err);

/* True when the n bytes of data (a wheel's .data/scripts file) start with
 * the placeholder line "#!python" or "#!pythonw" (followed by a blank or
 * the line end), which PEP 427 installers replace with the environment's
 * interpreter; on Windows such a script becomes a launcher .exe, GUI for
 * "#!pythonw" (*kind, may be NULL). False for any other file, which is
 * installed as it is. Pure. */
bool ml_winlauncher_script_kind(const void *data, size_t n, ml_winlauncher_kind *kind);

/* ml_winlauncher_build() for a "#!python" script: __main__.py is the script
 * unchanged (its first line is a comment to Python). Returns as
 * ml_winlauncher_build(), or ML_EFAIL when the script has no "#!python"
 * line (ml_winlauncher_script_kind()). */
int ml_winlauncher_script(ml_buf *out, const void *base, size_t base_len, const char *interpreter,
                          const void *script, size_t script_len, ml_err *err);

/* The .exe name of a script or entry point called name, as pip names it:
 * a ".py" / ".pyw"-style extension is dropped, ".exe" added ("foo.py" ->
 * "foo.exe", "foo" -> "foo.exe"). Writes it into out (out_sz bytes).
 * Returns 0 or ML_EFAIL (empty name, or out too small). */
int ml_winlauncher_exe_name(char *out, size_t out_sz, const char *name, ml_err *err);

#endif /* MLSETUP_ENV_INTERNAL_H */
