/*
 * internal.h - what the plan stage's files share and no other folder
 * needs: requirements-file parsing below the manifest API, PEP 508
 * markers, PEP 440 versions and specifiers, PEP 425 tag sets, the TOML
 * reader behind pylock.toml and pyproject.toml, the table of known torch
 * builds, and selection's own entry points. Unit tests and fuzz targets
 * include it to test those pieces directly.
 */
#ifndef MLSETUP_PLAN_INTERNAL_H
#define MLSETUP_PLAN_INTERNAL_H

#include "mlsetup/plan.h"

/* --- used only inside src/plan (moved from mlsetup/plan.h) ----------------- */

/* Adds a target: platform "os-arch" as above and python "X.Y". Returns 0,
 * ML_EUSAGE (unknown platform, bad version, more than 32 targets). */
int ml_lock_add_target(ml_lock *lk, const char *platform, const char *python, ml_err *err);

/* Returns the recorded file info for a sha256 (lower-case hex), or NULL. */
const ml_file_info *ml_manifest_file(const ml_manifest *mf, const char *sha256);

/* Returns true when a wheel with this platform tag installs on a Linux with
 * glibc glibc_major.glibc_minor and CPU arch ("x86_64"/"amd64",
 * "aarch64"/"arm64", or another manylinux arch such as "ppc64le"): PEP 600
 * "manylinux_X_Y_<arch>" needs glibc >= X.Y; the legacy aliases mean
 * manylinux1 = 2.5 (PEP 513), manylinux2010 = 2.12 (PEP 571), manylinux2014
 * = 2.17 (PEP 599). As in packaging, tags older than glibc 2.5 (x86_64,
 * i686) or 2.17 (other arches) never match, and manylinux1/2010 exist only
 * for x86_64 and i686.
 * Any other tag (musllinux, linux_x86_64, win_amd64) returns false. */
bool ml_manylinux_compatible(const char *platform_tag, int glibc_major, int glibc_minor,
                             const char *arch);

/* Checks that marker is valid PEP 508 (same grammar and messages as
 * ml_marker_eval) without evaluating it. Also refuses the ~= and ===
 * comparisons no environment could make valid: without a version-valued
 * variable, or against a right-hand literal that forms no specifier. When
 * this refuses a marker, ml_marker_eval() refuses it in every environment.
 * Returns 0, ML_ENOMEM or ML_EPARSE. */
int ml_marker_check(const char *marker, ml_err *err);

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

/* True when path names a lock file rather than a requirements file: it
 * ends in ".toml" (pylock.toml, pylock.NAME.toml). */
bool ml_pylock_path_like(const char *path);

/* Returns the value of the first `# mlsetup: key = value` header with this
 * key (owned by r), or NULL when there is none or r is NULL. */
const char *ml_requirements_meta(const ml_requirements *r, const char *key);

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

/* Chooses the manifest for machine m with the rules in the embedded
 * selection.json: a manifest fits when (1) every GPU can run its torch
 * build (ml_arch_runs_on over torch_sass + torch_ptx), (2) the driver meets
 * the manifest's minimum for this OS, or is at least the CUDA minor-version
 * floor and new enough for the GPU's architecture (then with a warning),
 * and (3) OS, CPU architecture and Python version are supported. The
 * preference list is tried in order; no NVIDIA GPU selects the no_gpu
 * manifest with GPU checks skipped. With opts->manifest the choice is
 * forced, and rules that fail become loud warnings. Returns 0 and a
 * selection (whose manifest may be NULL: nothing fits, exit 6), or
 * ML_ENOENT / ML_EPARSE (a manifest or the rules could not be read) or
 * ML_ENOMEM. Caller owns *out; free with ml_selection_free(). */
int ml_select(ml_selection **out, const ml_machine *m, const ml_select_opts *opts, ml_err *err);

/* Frees a selection and its manifest; accepts NULL. */
void ml_selection_free(ml_selection *s);

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

/* Returns true when spec is a valid PEP 440 specifier set ("Version
 * specifiers"): comma-separated clauses of ~=, ==, !=, <=, >=, <, >, ===,
 * with "==X.*"/"!=X.*" prefix matching, local labels only after == and !=,
 * and ~= needing at least two release segments. "" (no clauses) is valid
 * and matches every version. */
bool ml_specifier_valid(const char *spec);

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

/* ml_toml_parse()'s nesting bound: no value lies more than this many
 * levels below the document's root table. Bounds the parser's recursion
 * and that of everything that walks the tree (ml_toml_free() included). */
#define ML_TOML_MAX_DEPTH 64

/* Frees a tree from ml_toml_parse(). Accepts NULL. */
void ml_toml_free(ml_toml *t);

/* The string value of key in table, or NULL when missing or not a string. */
const char *ml_toml_get_string(const ml_toml *table, const char *key);

/* "string", "integer", "float", "boolean", "date-time", "array", "table". */
const char *ml_toml_kind_name(ml_toml_kind kind);

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

/* Sets *out (when non-NULL) to the table's builds, oldest version first
 * (per version the default index's, then the variant indexes'), and
 * returns how many there are (0 when the table is broken). Static. */
size_t ml_torch_builds(const ml_torch_build **out);

/* The driver-table row (detect.h, ml_toolkit_driver_find()) whose minimum
 * code built with CUDA toolkit `cuda` needs: its own (*exact true), else
 * the newest older toolkit of the same major, a lower bound (*exact
 * false: a newer toolkit never needs an older driver). NULL when neither
 * is in the table (then the major's minor-version floor is the only
 * bound). The one place ml_torch_build_min_driver() and selection's
 * driver rule take that row from. Static. */
const ml_toolkit_driver *ml_cuda_driver_row(const char *cuda, bool *exact);

/* Returns 0 when the embedded table is present and well-formed (schema
 * "mlsetup.torch-builds/2"; each build with a PEP 440 version, a platform,
 * a backend, an index (default: audited; variant: derived, its backend as
 * local label), a source of one of the three kinds, a dotted or empty cuda,
 * architecture names of the right kind (null only for a derived CUDA
 * build), and for audited builds files with a name and a sha256 that no
 * other file of the table has), else ML_EPARSE with the reason in err;
 * every lookup then answers NULL / 0. */
int ml_torch_builds_check(ml_err *err);

/* Writes the PEP 440 normalized form of v ("Normalization": "V1.0-RC.1" ->
 * "1.0rc1", "1.0-1" -> "1.0.post1", "1!02.0+Ubuntu-1" -> "1!2.0+ubuntu.1";
 * trailing zeros are kept) into dst, dstsz bytes. Returns 0, ML_EPARSE when
 * v is not a valid version, or ML_EFAIL when it does not fit (dst then holds
 * a truncated, NUL-terminated string). */
int ml_version_normalize(char *dst, size_t dstsz, const char *v);

/* Returns true when v is a valid PEP 440 version (PEP 440 Appendix B, the
 * canonical regular expression): optional "v", epoch "N!", release "1.2.3",
 * pre-release (a/alpha, b/beta, rc/c/pre/preview), post-release (.postN,
 * -N, rev, r), dev-release (.devN) and local label "+cu124". Case-insensitive,
 * surrounding whitespace allowed, numbers of any length. NULL is invalid. */
bool ml_version_valid(const char *v);

/* Returns the best (lowest) index in tags[0..n) of any tag the wheel's
 * compressed tag sets expand to (PEP 425 "Compressed Tag Sets": every
 * python x abi x platform combination), or -1 when none is listed, i.e. the
 * wheel does not install on the target the tags came from. */
int ml_wheel_tag_rank(const ml_wheel_name *w, char *const *tags, size_t n);

/* manifest.c: the OS mlsetup was built for, as detect names it
 * (ml_machine.os.name: "linux", "windows" or "darwin"); a static string.
 * Whose shipped manifests a name means, and whose rules the remedies
 * (ml_manifest_covering, ml_shipped_build_range) use. */
const char *ml_plan_build_os(void);

/* One installation a PEP 514 registry key describes
 * (Software\Python\<company>\<tag>), as read from the registry: UTF-8
 * strings the caller owns; a value that is missing is NULL. */
typedef struct ml_python_reg {
	const char *company;         /* "PythonCore", "ContinuumAnalytics", "PyLauncher" */
	const char *tag;             /* "3.12", "3.12-32" */
	const char *executable_path; /* InstallPath\ExecutablePath */
	const char *install_path;    /* InstallPath\(Default), a directory */
} ml_python_reg;

/* pyfind.c: the paths ml_python_find_system() tries, in order, for the
 * PATH value path, appended to *list as NUL-terminated strings. POSIX:
 * python3.19 .. python3.8 and python3 in each absolute PATH directory
 * (split on ':'), then in /usr/local/bin and /usr/bin. windows: python.exe
 * and python3.exe in each absolute PATH directory (split on ';'; a drive
 * path or a UNC path), then the interpreters the registry names (reg[0..
 * n_reg), in the order given: PEP 514 "Backwards Compatibility" and
 * "Sample Code" read HKCU before HKLM), then python.org's install
 * directories <local_appdata>/Programs/Python/Python3NN and
 * <program_files>/Python3NN, joined with backslashes (NN 19 down to 8;
 * either root may be NULL). From the registry (PEP 514 "InstallPath"): a
 * key's ExecutablePath, or when it has none, <install_path>\python.exe;
 * the "PyLauncher" company is skipped (PEP 514: it is not an
 * interpreter), and so is an entry whose path is not absolute. reg is
 * ignored on POSIX and may be NULL when n_reg is 0. Relative entries ("",
 * ".") are never searched. Returns 0 or ML_ENOMEM. */
int ml_python_candidates(ml_buf *list, const char *path, bool windows, const ml_python_reg *reg,
                         size_t n_reg, const char *local_appdata, const char *program_files);

/* --- one pip dry run (src/plan/pip.c): the one builder of its command line */

#define ML_PIP_RUN_MAX_ARGS 200

/* `python -m pip install --dry-run --ignore-installed --no-input
 * --disable-pip-version-check --target DIR/target --report
 * DIR/report.json --only-binary=:all:` in a temporary directory DIR, to
 * which the caller appends its own options (target tags, index options,
 * -r FILE) before running it. Resolution (pip.c) and locking (lock.c)
 * both run pip this way. */
typedef struct ml_pip_run {
	char dir[4096];    /* the temporary directory; "" when none */
	char target[4200]; /* DIR/target (pip installs nothing there) */
	char report[4200]; /* DIR/report.json, pip's installation report */
	char input[4200];  /* DIR/requirements.txt, for input given as text */
	const char *argv[ML_PIP_RUN_MAX_ARGS];
	size_t n;
	bool overflow; /* an argument did not fit */
} ml_pip_run;

/* Makes the temporary directory ($TMPDIR, else %TEMP% on Windows, else
 * /tmp; named "mlsetup-<what>.XXXXXX") and the fixed part of argv, run
 * with python. Returns 0 or ML_EIO (err says which directory). */
int ml_pip_run_begin(ml_pip_run *r, const char *python, const char *what, ml_err *err);

/* Appends one argument (not copied: it must live until the run); one that
 * does not fit makes ml_pip_run_exec() fail. */
void ml_pip_run_arg(ml_pip_run *r, const char *arg);

/* Runs pip (ml_os_run_output(): at most 1 MiB of output kept, 30 minutes):
 * *output (caller frees) and *status as there. Returns 0, ML_EUSAGE (too
 * many arguments), or ml_os_run_output()'s errors. */
int ml_pip_run_exec(ml_pip_run *r, char **output, int *status, ml_err *err);

/* Removes the temporary directory. */
void ml_pip_run_end(ml_pip_run *r);

#endif
