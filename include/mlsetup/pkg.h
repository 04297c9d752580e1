/*
 * pkg.h - the packaging standards: how Python packages name, version,
 * require and lock themselves, read exactly as pip and packaging read them.
 *
 * Each standard is one source file under src/pkg/:
 *
 *   version.c       PEP 440 versions and version specifiers
 *   marker.c        PEP 508 environment markers
 *   requirements.c  pip's requirements-file format (the manifests), with
 *                   PEP 508 requirements and PEP 503 name normalization
 *   toml.c          TOML 1.0, for pylock.toml and pyproject.toml
 *   tags.c          PEP 425 compatibility tags, PEP 427 wheel file names,
 *                   PEP 600 manylinux
 *   pylock.c        PEP 751 lock files (reading; report writes them)
 *
 * This stage sits below every other one but core: plan, fetch, env, verify
 * and report read versions, names, markers and files through it, and it
 * knows nothing of manifests' selection, torch builds or machines. None of
 * these functions print, touch the network or keep global state; all are
 * safe to call from several threads at once.
 */
#ifndef MLSETUP_PKG_H
#define MLSETUP_PKG_H

#include "mlsetup/core.h"

/* --- PEP 440 versions and specifiers (src/pkg/version.c) ---------------- */

/* Compares two versions with the PEP 440 ordering ("Summary of permitted
 * suffixes and relative ordering"): epoch first, then the release with
 * trailing zeros ignored ("1.0" == "1.0.0"), then dev < pre (a < b < rc) <
 * final < post, then the local label ("2.6.0" < "2.6.0+cu124"; numeric local
 * segments sort after alphanumeric ones). Returns -1, 0 or 1 like strcmp.
 * Total order for any two strings: an invalid version (or NULL) sorts before
 * every valid one, and two invalid ones compare with strcmp. */
int ml_version_cmp(const char *a, const char *b);

/* Sets *out to whether version satisfies every clause of spec (PEP 440
 * "Version specifiers"; ">=3.9,<3.14", "==2.6.0", "==3.12.*", "~=2.6"), for
 * checking requires-python. Pre-releases are treated like any version (as
 * packaging's contains(..., prereleases=True) and PEP 508 markers do), so
 * only the clauses decide. Exclusive < and > follow PEP 440: "<3.13" does not
 * admit "3.13.0rc1", ">3.12" does not admit "3.12.post1" or "3.12+local".
 * Returns 0, or ML_EPARSE (err says which) when spec is not a valid
 * specifier set or version is not a valid version; "===" clauses compare the
 * raw strings case-insensitively, so they alone accept any version string. */
int ml_specifier_match(bool *out, const char *spec, const char *version, ml_err *err);

/* Returns true when v is a valid PEP 440 version (PEP 440 Appendix B, the
 * canonical regular expression): optional "v", epoch "N!", release "1.2.3",
 * pre-release (a/alpha, b/beta, rc/c/pre/preview), post-release (.postN,
 * -N, rev, r), dev-release (.devN) and local label "+cu124". Case-insensitive,
 * surrounding whitespace allowed, numbers of any length. NULL is invalid. */
bool ml_version_valid(const char *v);

/* --- PEP 508 environment markers (src/pkg/marker.c) --------------------- */

/* The values a PEP 508 marker can test ("Environment Markers"). A NULL
 * field reads as "". `extra` is the extra being installed, NULL when none;
 * it is compared after PEP 685 normalization. */
typedef struct ml_marker_env {
	const char *os_name;                        /* "posix", "nt" */
	const char *sys_platform;                   /* "linux", "win32", "darwin" */
	const char *platform_machine;               /* "x86_64", "AMD64", "arm64" */
	const char *platform_python_implementation; /* "CPython" */
	const char *platform_release;               /* uname release, kernel */
	const char *platform_system;                /* "Linux", "Windows", "Darwin" */
	const char *platform_version;               /* uname version */
	const char *python_version;                 /* "3.12" */
	const char *python_full_version;            /* "3.12.0" */
	const char *implementation_name;            /* "cpython" */
	const char *implementation_version;         /* "3.12.0" */
	const char *extra;                          /* "gpu", or NULL */
} ml_marker_env;

/* Fills *out with the marker environment of CPython py_major.py_minor on
 * os ("linux", "windows", "darwin") and arch ("x86_64"/"amd64",
 * "aarch64"/"arm64"), with the values CPython itself reports there:
 *
 *   linux  x86_64:  posix  linux   x86_64  Linux
 *   linux  aarch64: posix  linux   aarch64 Linux
 *   windows x86_64: nt     win32   AMD64   Windows
 *   windows aarch64: nt    win32   ARM64   Windows
 *   darwin x86_64:  posix  darwin  x86_64  Darwin
 *   darwin aarch64: posix  darwin  arm64   Darwin
 *
 * python_version is "X.Y"; python_full_version and implementation_version
 * are "X.Y.0": the plan picks a minor version and the lowest release of it
 * is the one every later release also satisfies in ">=" markers. A caller
 * that knows the exact interpreter (3.12.7) or kernel may point those fields
 * at its own strings after this call. platform_release, platform_version and
 * extra are left "" / NULL: they are not known before the machine is.
 * Every string is a static constant, so a filled env may be copied freely.
 * Returns 0, or ML_EUNSUPPORTED for another os or arch, or a Python outside
 * 2.7 and 3.0 .. 3.49 (*out untouched then). */
int ml_marker_env_for(ml_marker_env *out, const char *os, const char *arch, int py_major,
                      int py_minor);

/* Evaluates a PEP 508 marker ("python_version >= '3.10' and sys_platform
 * == 'linux'") against env and sets *out to the result. Implements the full
 * PEP 508 marker grammar: `and` binds tighter than `or`, parentheses,
 * strings in ' or ", the operators <, <=, ==, !=, >=, >, ~=, ===, in and
 * not in. When one side is a version-valued variable (python_version,
 * python_full_version, implementation_version, platform_release, as in
 * packaging) and the operator and right-hand side form a valid PEP 440
 * specifier, the comparison follows PEP 440 ("python_version < '3.10'" is
 * 3.9 < 3.10, "== '3.*'" matches a prefix), and a left-hand side that is
 * not a valid version (a kernel "5.15.0-91-generic") matches nothing, as
 * packaging and so pip evaluate it. Other values compare under the rule of the
 * PyPA "Dependency specifiers" specification (PEP 508's living version, as
 * amended in 2026 and implemented by packaging 26 and uv): == and != test
 * equality, <= and >= mean ==, < and > are false (no ordering is assumed),
 * `in` / `not in` test substring containment. Note this differs from PEP
 * 508's original "Python string comparison" only for <, <=, >, >= on
 * strings. `extra` is compared after PEP 685 normalization
 * of both sides. Like packaging, the legacy names os.name, sys.platform,
 * platform.version, platform.machine, platform.python_implementation and
 * python_implementation are accepted. Every comparison is evaluated (no
 * short-circuit), so a bad comparison is reported wherever it sits.
 * Returns 0; ML_ENOMEM; or ML_EPARSE for a syntax error or unknown
 * variable, with a message naming the 1-based column ("invalid marker
 * 'os_nme == \"nt\"': unknown variable 'os_nme' at column 1"), and for ~=
 * or === where the string fallback would be needed (PEP 508: no defined
 * behaviour is an error). */
int ml_marker_eval(bool *out, const char *marker, const ml_marker_env *env, ml_err *err);

/* --- requirements files / manifests (src/pkg/requirements.c) ----------- */

/* Writes the PEP 503 normalized form of a project name into dst (dstsz
 * bytes): lower case, every run of '-', '_' and '.' replaced by one '-'
 * ("Foo__Bar.baz" -> "foo-bar-baz"). Returns 0, or ML_EFAIL when it does not
 * fit (dst then holds a truncated, NUL-terminated string). */
int ml_name_normalize(char *dst, size_t dstsz, const char *name);

/* One `# mlsetup: key = value` header line of a manifest. */
typedef struct ml_kv {
	char *key;   /* as written ("cuda"); keys are case-sensitive */
	char *value; /* trimmed, may be "" */
	int line;    /* 1-based physical line */
} ml_kv;

/* One requirement line (PEP 508 "name[extras] specifier ; marker" or
 * "name[extras] @ url ; marker") with its --hash options. Strings are owned
 * by the ml_requirements that holds the requirement. */
typedef struct ml_requirement {
	char *name;       /* as written ("Torch_Audio") */
	char *normalized; /* PEP 503 ("torch-audio") */
	char **extras;    /* PEP 685 normalized, in order written */
	size_t n_extras;
	char *specifier; /* whole specifier set, whitespace removed (">=1.0,<2"),
	                  * "" when none */
	char *version;   /* the version of an exact "==V" pin, as written
	                  * ("2.6.0+cu124"); NULL when not pinned that way */
	char *url;       /* direct reference "name @ url", else NULL */
	char *marker;    /* PEP 508 marker text after ';', trimmed, or NULL */
	char **sha256;   /* 64 lower-case hex digits each, no duplicates */
	size_t n_hashes;
	int line; /* 1-based first physical line of the requirement */
} ml_requirement;

/* A -r / -c line (with ML_REQ_INCLUDES). */
typedef struct ml_include {
	char *path;      /* as written */
	bool constraint; /* -c: constrains, names no requirement */
	int line;
} ml_include;

/* A parsed requirements file. Options follow pip's requirements-file
 * format; where pip keeps the last of a repeated --index-url, so does this. */
typedef struct ml_requirements {
	char *path;           /* path_for_messages, or NULL */
	ml_requirement *reqs; /* in file order */
	size_t n_reqs;
	char *index_url;         /* --index-url / -i, NULL when absent */
	char **extra_index_urls; /* --extra-index-url, in order */
	size_t n_extra;
	char **find_links; /* --find-links / -f, in order */
	size_t n_find_links;
	bool no_index;        /* --no-index */
	char **trusted_hosts; /* --trusted-host, in order */
	size_t n_trusted;
	bool require_hashes; /* --require-hashes was written (hash mode
	                      * checks come from ML_REQ_HASH_MODE) */
	bool prefer_binary;  /* --prefer-binary: recorded; mlsetup installs
	                      * wheels only, so it changes nothing */
	bool pre;            /* --pre */
	char **only_binary;  /* --only-binary values (":all:", names); recorded,
	                      * wheels are all mlsetup installs anyway */
	size_t n_only_binary;
	ml_kv *meta; /* `# mlsetup: key = value` headers, in order */
	size_t n_meta;
	ml_include *includes; /* -r / -c lines, with ML_REQ_INCLUDES only */
	size_t n_includes;
} ml_requirements;

/* Flags for ml_requirements_parse(). */
enum {
	/* What mlsetup manifests use (pip's --require-hashes and more): every
	 * requirement pinned with exactly `==` to a full version (no wildcard,
	 * no ===, no URL), at least one --hash=sha256:, and no requirement
	 * listed twice with the same normalized name and marker. */
	ML_REQ_HASH_MODE = 1u << 0,
	/* Accept -r/--requirement and -c/--constraint lines and record them
	 * in includes (for files pip resolves; ml_requirements_load_tree
	 * reads them). Without it they are refused. */
	ML_REQ_INCLUDES = 1u << 1,
};

/* Reads the file at path (at most 16 MiB) and parses it with
 * ml_requirements_parse(). Caller owns *out; free with
 * ml_requirements_free(). Returns 0, ML_ENOENT, ML_EIO, ML_EPARSE or
 * ML_ENOMEM. */
int ml_requirements_load(ml_requirements **out, const char *path, unsigned flags, ml_err *err);

/* Loads a requirements file as pip reads it with -r (manifests that pin
 * no hashes, `mlsetup lock`'s input): the file at path
 * (ml_requirements_load with ML_REQ_INCLUDES), then every file it
 * includes with -r or -c, recursively (at most 10 deep; a path is taken
 * from the including file's directory; a file included twice is read
 * once; -r URL is refused). The included files' options join the top's
 * (an --index-url only when the top names none; extra indexes,
 * --find-links, made relative to their own file, and trusted hosts
 * appended), and the requirements of -r files, not of -c files, follow
 * the top's. Errors name the file and line where they are. Caller owns
 * *out (ml_requirements_free()). Returns 0, ML_ENOENT, ML_EIO, ML_EPARSE
 * or ML_ENOMEM. */
int ml_requirements_load_tree(ml_requirements **out, const char *path, unsigned flags, ml_err *err);

/* Frees r and everything it owns. Accepts NULL. */
void ml_requirements_free(ml_requirements *r);

/* Parses a requirements file held in text (len bytes; need not be
 * NUL-terminated; a UTF-8 byte order mark is skipped) in pip's format
 * (pip "Requirements File Format"):
 *
 *   - `#` starts a comment at the start of a line or after whitespace;
 *   - a line ending in `\` continues on the next one; the joined logical
 *     line keeps the number of its FIRST physical line; a comment ends the
 *     continuation, as in pip;
 *   - options: --index-url/-i URL, --extra-index-url URL, --find-links/-f
 *     URL, --no-index, --trusted-host HOST, --require-hashes, --pre,
 *     --prefer-binary, --only-binary VALUE (both as `--opt VALUE` and
 *     `--opt=VALUE`); after a requirement, --hash=sha256:HEX or --hash
 *     sha256:HEX, repeatable; -r/-c FILE with ML_REQ_INCLUDES. Anything
 *     else (-e, --no-binary, unknown options) is refused;
 *   - mlsetup installs wheels only: a line that is a local path or URL
 *     (pip's "./pkg", "dist/x.whl", "https://h/x.whl"), a VCS reference
 *     ("name @ git+https://...") and a direct reference to anything but an
 *     http(s) .whl URL are refused, the hint saying how to get a wheel
 *     (pip wheel) and use it (--find-links). Environment variables (${VAR}) are not
 *     expanded: a manifest means the same on every machine;
 *   - header lines `# mlsetup: key = value` are collected into meta
 *     ANYWHERE in the file (not only above the first requirement), from
 *     whole-line comments only; a malformed or repeated header is refused.
 *
 * Hash algorithms other than sha256 are refused in every mode ("md5 hashes
 * are refused"), and hex digits must number exactly 64 (stored lower case).
 * Markers are checked with ml_marker_check(). flags: ML_REQ_HASH_MODE.
 * Every error message names the file and line, git style:
 * "manifest 'x.txt' line 12: 'numpy' is not pinned with ==", with the
 * remedy in err->hint ("pin an exact version (numpy==1.26.4)").
 * path_for_messages (may be NULL) is copied into (*out)->path.
 * Caller owns *out; free with ml_requirements_free(). Returns 0, ML_EPARSE
 * or ML_ENOMEM. */
int ml_requirements_parse(ml_requirements **out, const char *path_for_messages, const char *text,
                          size_t len, unsigned flags, ml_err *err);

/* Returns the value of the first `# mlsetup: key = value` header with this
 * key (owned by r), or NULL when there is none or r is NULL. */
const char *ml_requirements_meta(const ml_requirements *r, const char *key);

/* --- TOML 1.0 (src/pkg/toml.c) ------------------------------------------ */

/* What a TOML value is. Dates and times are kept as their text. */
typedef enum ml_toml_kind {
	ML_TOML_STRING = 0,
	ML_TOML_INTEGER,
	ML_TOML_FLOAT,
	ML_TOML_BOOL,
	ML_TOML_DATETIME, /* offset/local date-time, local date or time, as written */
	ML_TOML_ARRAY,
	ML_TOML_TABLE,
} ml_toml_kind;

/* One value of a parsed document; read-only for callers. Tables keep
 * their keys in document order (keys may hold NUL bytes: key_lens). */
typedef struct ml_toml {
	ml_toml_kind kind;
	int line;  /* 1-based line where the value (or the table's header) starts */
	char *str; /* STRING: UTF-8 value; DATETIME and FLOAT: the text as written
	            * (underscores removed); NUL-terminated, len bytes */
	size_t len;
	int64_t i;              /* INTEGER */
	double f;               /* FLOAT */
	bool b;                 /* BOOL */
	struct ml_toml **items; /* ARRAY: the values; TABLE: the values of keys[] */
	char **keys;            /* TABLE: the keys, NUL-terminated */
	size_t *key_lens;       /* TABLE: their lengths in bytes */
	size_t n, cap;
	unsigned flags; /* private to the parser */
} ml_toml;

/* The value of key in table (a key without NUL bytes), or NULL when
 * table is NULL, not a table, or has no such key. */
const ml_toml *ml_toml_get(const ml_toml *table, const char *key);

/* ml_toml_parse()'s nesting bound: no value lies more than this many
 * levels below the document's root table. Bounds the parser's recursion
 * and that of everything that walks the tree (ml_toml_free() included). */
#define ML_TOML_MAX_DEPTH 64

/* Parses a TOML 1.0 document (text, len bytes, UTF-8; a leading byte
 * order mark and CRLF line ends are accepted) into a tree whose root is a
 * table. Follows the TOML 1.0.0 specification as Python's tomllib reads
 * it: basic and literal strings, single- and multi-line (line-ending
 * backslashes, the first newline trimmed, \uXXXX / \UXXXXXXXX escapes
 * of Unicode scalar values only), integers (decimal, 0x, 0o, 0b, with
 * underscores; 64-bit: larger ones are refused), floats (with inf, nan),
 * booleans, dates and times (validated, kept as text), arrays (multi-line,
 * comments, trailing commas), inline tables (frozen), [tables],
 * [[arrays of tables]], dotted keys and quoted keys. Refuses duplicate
 * keys, tables defined twice, extending inline tables or static arrays,
 * control characters, invalid UTF-8 and anything malformed, with a message
 * "'NAME' line N: ..." (NAME is name_for_messages). The tree is at most
 * ML_TOML_MAX_DEPTH levels deep: every table, array and inline table, every
 * part of a dotted key or a table header, and an array of tables (its
 * array and its table, two) is one level below the one holding it (`a.b.c
 * = [{d = 1}]` puts the 1 six levels below the root); a deeper document
 * (valid TOML, but hostile: pyproject.toml comes from cloned projects) is
 * refused with "'NAME' line N: nested more than 64 levels deep", before
 * anything that deep is built. Caller owns *out; free with
 * ml_toml_free(). Returns 0, ML_EPARSE or ML_ENOMEM. */
int ml_toml_parse(ml_toml **out, const char *name_for_messages, const char *text, size_t len,
                  ml_err *err);

/* Frees a tree from ml_toml_parse(). Accepts NULL. */
void ml_toml_free(ml_toml *t);

/* --- PEP 425 tags, PEP 427 wheel names, PEP 600 (src/pkg/tags.c) ------- */

/* The interpreter and platform to list tags for. */
typedef struct ml_tag_target {
	const char *os;             /* "linux", "windows", "darwin" */
	const char *arch;           /* "x86_64"/"amd64", "aarch64"/"arm64" */
	const char *libc_kind;      /* linux: "glibc" or "musl"; NULL or "" when
	                             * unknown (then only linux_<arch> is listed) */
	int libc_major, libc_minor; /* linux: glibc 2.35 / musl 1.2;
	                             * darwin: the macOS version (14, 0); 0.0 there
	                             * means unknown and lists 11.0 on arm64, 10.9
	                             * on x86_64 (python.org's minimums) */
	int py_major, py_minor;     /* CPython version, 3.x */
} ml_tag_target;

/* A PEP 427 wheel file name, split up. Tag fields keep the compressed tag
 * sets ("py2.py3", "manylinux_2_17_x86_64.manylinux2014_x86_64"), lower
 * case, as packaging.utils.parse_wheel_filename() reads them. */
typedef struct ml_wheel_name {
	char name[256];         /* distribution as written ("torch", "typing_extensions") */
	char normalized[256];   /* PEP 503 ("typing-extensions") */
	char version[128];      /* as written ("2.6.0+cu124") */
	char build[64];         /* build tag ("1", "2abc"), "" when absent */
	char python_tag[128];   /* "cp312", "py2.py3" */
	char abi_tag[128];      /* "cp312", "abi3", "none" */
	char platform_tag[512]; /* "manylinux_2_17_x86_64.manylinux2014_x86_64" */
} ml_wheel_name;

/* Splits a wheel file name "{name}-{version}(-{build})?-{python}-{abi}-
 * {platform}.whl" (PEP 427 "File name convention"; no directory part).
 * Checks the name characters, that the version is valid PEP 440, that a
 * build tag starts with a digit, and that no tag or dotted tag component is
 * empty. Returns 0, or ML_EPARSE (err names the file and the problem) for
 * anything else, including fields too long for ml_wheel_name. */
int ml_wheel_filename_parse(ml_wheel_name *out, const char *filename, ml_err *err);

/* Sets *out to a new array of the tags the CPython described by t supports,
 * best first, and *n_out to their count: the order packaging.tags.sys_tags()
 * (and so pip) produces for a default (not free-threaded, not debug) CPython
 * build, PEP 425 "Use": cp3X-cp3X-PLAT, cp3X-abi3-PLAT, cp3X-none-PLAT, then
 * cp3W-abi3-PLAT for every older 3.W down to 3.2, then py3X-none-PLAT,
 * py3-none-PLAT, py3W-none-PLAT, then cp3X-none-any, py3X-none-any,
 * py3-none-any, py3W-none-any; each PLAT in turn in platform order:
 *
 *   glibc: manylinux_<glibc>_<arch> down to manylinux_2_5 (x86_64) or
 *          manylinux_2_17 (other arches), with manylinux2014 after 2_17,
 *          manylinux2010 after 2_12 and manylinux1 after 2_5 (PEP 600, PEP
 *          599, PEP 571, PEP 513), then linux_<arch>;
 *   musl:  musllinux_1_<minor> down to musllinux_1_0 (PEP 656), then
 *          linux_<arch>;
 *   windows: win_amd64 / win_arm64;
 *   darwin: macosx_<ver>_<fmt> from the macOS version down, as
 *          packaging.tags.mac_platforms() lists them.
 *
 * Caller owns the array and its strings; free with ml_tags_free(). Returns
 * 0, ML_EUNSUPPORTED (err says which: os, arch, libc kind, Python other than
 * 3.x) or ML_ENOMEM. */
int ml_tags_for(char ***out, size_t *n_out, const ml_tag_target *t, ml_err *err);

/* Frees a tag array from ml_tags_for(). Accepts NULL. */
void ml_tags_free(char **tags, size_t n);

/* Returns the best (lowest) index in tags[0..n) of any tag the wheel's
 * compressed tag sets expand to (PEP 425 "Compressed Tag Sets": every
 * python x abi x platform combination), or -1 when none is listed, i.e. the
 * wheel does not install on the target the tags came from. */
int ml_wheel_tag_rank(const ml_wheel_name *w, char *const *tags, size_t n);

/* --- PEP 751 lock files (src/pkg/pylock.c) ------------------------------ */

/* One wheel of a locked package ([[packages.wheels]]). */
typedef struct ml_pylock_wheel {
	char *filename;  /* `name`, else the last segment of url/path, percent-decoded */
	char *url;       /* `url`, or `path` as a file:// URL (a relative path taken
	                  * from the lock file's directory, as PEP 751 says) */
	char sha256[65]; /* hashes.sha256, lower case */
	int64_t size;    /* bytes; -1 when the lock gives none (pip lock) */
	int line;
} ml_pylock_wheel;

/* One [[packages]] entry. */
typedef struct ml_pylock_package {
	char *name;       /* as written */
	char *normalized; /* PEP 503 */
	char *version;    /* NULL when the lock gives none (only for non-wheels) */
	char *marker;     /* PEP 508 marker, checked; NULL when none */
	char *requires_python;
	char *index; /* the index it came from, or NULL */
	ml_pylock_wheel *wheels;
	size_t n_wheels;
	/* With no wheels: what the package has instead ("sdist", "archive",
	 * "vcs", "directory" or "nothing"); NULL when it has wheels. */
	const char *source_kind;
	int line;
} ml_pylock_package;

/* A parsed lock file. Strings without their own allocation point into doc. */
typedef struct ml_pylock {
	char *path;
	const char *lock_version;    /* "1.0" */
	const char *created_by;      /* "pip", "uv", "mlsetup", or NULL */
	const char *requires_python; /* specifier, or NULL */
	char **environments;         /* PEP 508 markers, checked */
	size_t n_environments;
	ml_pylock_package *pkgs; /* in file order */
	size_t n_pkgs;
	ml_toml *doc; /* the whole document ([tool] tables), owned */
} ml_pylock;

/* Parses a PEP 751 lock file (text, len bytes) with ml_toml_parse():
 * lock-version must be 1.x; requires-python a specifier; environments
 * markers; every package a name, a valid version when it has wheels, a
 * marker that ml_marker_check() accepts; every wheel a url or path, a
 * file name, a non-negative size when given, and hashes.sha256 (64 hex
 * digits; other algorithms alone are refused: every byte is checked by
 * sha256). base_dir is the lock file's directory, for relative `path`s
 * (NULL: "."). Errors name the file and line ("lock file 'x.toml' line 12:
 * ..."). Caller owns *out; free with ml_pylock_free(). Returns 0,
 * ML_EPARSE or ML_ENOMEM. */
int ml_pylock_parse(ml_pylock **out, const char *path_for_messages, const char *base_dir,
                    const char *text, size_t len, ml_err *err);

/* Frees a lock; accepts NULL. */
void ml_pylock_free(ml_pylock *pl);

/* True when path names a lock file rather than a requirements file: it
 * ends in ".toml" (pylock.toml, pylock.NAME.toml). */
bool ml_pylock_path_like(const char *path);

#endif
