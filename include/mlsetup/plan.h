/*
 * plan.h - the plan stage: what exactly should be installed here, and why?
 *
 * The plan is built from the packaging standards (mlsetup/pkg.h: PEP 440
 * versions, PEP 508 markers, requirements files, TOML, PEP 425 tags, PEP
 * 751 lock files), which its API uses, and from its own rules, each in a
 * source file under src/plan/: arch.c, the one "will it run?" rule for
 * CUDA code (compute capability, SASS, PTX); torch.c, the known torch
 * builds; manifest.c and select.c, manifests and which one fits; plan.c,
 * the plan itself; and the files named in the sections below.
 *
 * None of these functions print.
 */
#ifndef MLSETUP_PLAN_H
#define MLSETUP_PLAN_H

#include "mlsetup/core.h"
#include "mlsetup/detect.h"
#include "mlsetup/pkg.h"

/* --- CUDA code and devices: "will it run?" (src/plan/arch.c) ------------ */

/* One CUDA code object in a binary: SASS ("sm_90"), arch-specific SASS
 * ("sm_90a"), family SASS ("sm_100f") or PTX ("compute_90"). Compute
 * capability major.minor: "sm_86" is 8.6, "sm_120" is 12.0. */
typedef struct ml_cuda_arch {
	int major, minor;
	char variant; /* 0, 'a' (arch-specific) or 'f' (family-specific) */
	bool ptx;     /* compute_XY (PTX) rather than sm_XY (SASS) */
	int isa;      /* PTX only: the PTX ISA version of its module (the
	               * `.version` directive), 10 * major + minor (87 for 8.7);
	               * for an architecture several modules share, the newest;
	               * 0 when unknown. Names, parsing and ordering ignore it. */
} ml_cuda_arch;

/* Parses "sm_90", "sm_90a", "sm_100f", "compute_120", "compute_90a": the
 * last digit is the minor, the digits before it the major (sm_121 = 12.1,
 * sm_86 = 8.6), as nvcc's -arch/-code names them. Lower case only; two to
 * four digits, no leading zero. Returns 0 or ML_EPARSE (*out untouched). */
int ml_cuda_arch_parse(ml_cuda_arch *out, const char *s);

/* Parses a device's compute capability as people name it: "sm_120" (a
 * SASS name without variant) or "12.0" (one to three digits without a
 * leading zero, a dot, one digit), into out (variant 0, not PTX). Returns
 * 0 or ML_EPARSE (*out untouched). */
int ml_cuda_device_parse(ml_cuda_arch *out, const char *s);

/* Writes the nvcc name of a ("sm_100f", "compute_120") into dst, sz bytes.
 * Returns 0, or ML_EFAIL when a has no such name (major < 1, minor outside
 * 0..9, unknown variant) or the name does not fit. */
int ml_cuda_arch_format(char *dst, size_t sz, const ml_cuda_arch *a);

/* Whose rules ml_arch_judge() applies. */
typedef enum ml_arch_rules {
	/* NVIDIA's: whether the code runs (CUDA C++ Programming Guide, "Binary
	 * Compatibility", "PTX Compatibility", arch- and family-specific
	 * features). What every verdict of mlsetup rests on. */
	ML_ARCH_NVIDIA = 0,
	/* torch's own judgement of torch's own CUDA library: the table
	 * DEVICE_REQUIREMENT in torch/cuda/__init__.py (torch 2.15), from which
	 * torch warns at start-up. Stricter than NVIDIA's for integrated parts
	 * (5.3, 6.2, 7.2 and 8.7 need code of their own; from a CUDA 13.2 build
	 * on, 7.0, 8.0 and 8.6 code runs on 7.2 and 8.7), more lenient for
	 * Thor, which CUDA 13 renumbered from 10.1 to 11.0 (code for either
	 * runs on both). The variant suffix is ignored, as torch ignores it.
	 * Shown beside NVIDIA's answer; it never fails another library. */
	ML_ARCH_TORCH = 1,
} ml_arch_rules;

/* One question to ml_arch_judge(): a device and what is known around it. */
typedef struct ml_arch_query {
	int dev_major, dev_minor; /* the device's compute capability */
	int driver_cuda;          /* the highest CUDA version the driver supports, 1000 *
	                           * major + 10 * minor (cuDriverGetVersion's
	                           * spelling; detect's ml_driver.cuda_version); 0 when
	                           * unknown: PTX then runs on the condition that the
	                           * driver can JIT its ISA, said in why */
	ml_arch_rules rules;
	int torch_cuda; /* ML_ARCH_TORCH: the CUDA version torch was built
	                 * with, same spelling (13.2 relaxes integrated
	                 * parts); 0 when unknown */
} ml_arch_query;

#define ML_ARCH_QUERY_INIT                                                                         \
	{                                                                                          \
		-1, -1, 0, ML_ARCH_NVIDIA, 0                                                       \
	}

/* The answer to one ml_arch_query. */
typedef struct ml_arch_verdict {
	bool runs;
	ml_cuda_arch by;  /* runs: the entry that makes it run (SASS before
	                   * PTX, then the closest) */
	int ptx_cuda;     /* by is PTX: the CUDA version the driver needs to
	                   * JIT its ISA (ml_ptx_isa_cuda()); 0 when the ISA is
	                   * unknown or by is SASS */
	bool conditional; /* runs only if the driver, unknown here, supports
	                   * ptx_cuda: by is PTX and driver_cuda was 0 */
	char why[400];    /* "SASS sm_80 runs on 8.6"; "PTX compute_52 (ISA 8.7)
	                   * can be JIT-compiled for 7.0 by a driver for CUDA ≥
	                   * 12.8"; "sm_120: no SASS for major 12, no PTX ≤
	                   * 12.0"; for ML_ARCH_TORCH the same, in torch's terms */
} ml_arch_verdict;

/* THE rule for whether CUDA code built for code[0..n) runs on a device of
 * compute capability q->dev_major.dev_minor; plan, audit and verify all
 * call it (directly or through ml_arch_runs_on()). With ML_ARCH_NVIDIA:
 *
 *   SASS sm_AB    runs on a device of the same major A with minor >= B;
 *   SASS sm_ABa   runs only on exactly A.B;
 *   SASS sm_ABf   runs on the same major (family) with minor >= B;
 *   PTX compute_AB  can be JIT-compiled for any device >= A.B, by a driver
 *                 whose CUDA version knows the PTX's ISA (isa, through
 *                 ml_ptx_isa_cuda(); minor-version compatibility does not
 *                 extend to JIT): with q->driver_cuda known, PTX whose ISA
 *                 needs a newer CUDA does not count; unknown, it counts on
 *                 that condition (out->conditional) and why names it;
 *                 PTX of unknown ISA counts (nothing to check it by);
 *   PTX compute_ABa only for exactly A.B; compute_ABf within the family.
 *
 * With ML_ARCH_TORCH: torch's table instead (see ml_arch_rules), SASS and
 * PTX alike, no driver check. A device of unknown capability (< 0) runs
 * nothing. Fills *out and returns out->runs. Never fails. */
bool ml_arch_judge(ml_arch_verdict *out, const ml_cuda_arch *code, size_t n,
                   const ml_arch_query *q);

/* ml_arch_judge() with NVIDIA's rules and no driver known: true when some
 * entry fits; why (when non-NULL, why_sz bytes, truncated) as there. For
 * lists whose PTX ISA is unknown (a manifest's torch_ptx header) this is
 * the whole rule; where the driver is known, call ml_arch_judge(). */
bool ml_arch_runs_on(const ml_cuda_arch *code, size_t n, int dev_major, int dev_minor, char *why,
                     size_t why_sz);

/* --- pip's resolver for files without hashes (src/plan/pip.c) ----------- */

/* What an interpreter offers for resolving. */
typedef struct ml_pip_info {
	char tool[8]; /* the resolver that answered: "pip", or "uv" (src/plan/uv.c);
	               * "" reads as "pip" */
	bool has_pip;
	char version[64];        /* pip's version, "" without pip */
	bool externally_managed; /* PEP 668: EXTERNALLY-MANAGED in its stdlib */
} ml_pip_info;

/* Asks python (at most 60 s) for its pip and whether it is externally
 * managed. Returns 0; ML_ENOENT without pip (err says how to get one:
 * ensurepip, the distribution's python3-pip, another --python); ML_EFAIL
 * when it does not run; ML_ENOMEM. *out is filled in every case it ran. */
int ml_pip_probe(ml_pip_info *out, const char *python, ml_err *err);

/* One package of pip's resolution (pip "Installation Report", version 1). */
typedef struct ml_pip_pick {
	char *name;      /* as pip reports it */
	char *version;   /* as pip reports it (local versions kept: "2.8.0+cu128") */
	char *url;       /* download_info.url: the exact file */
	char sha256[65]; /* archive_info's sha256, "" when pip gives none */
	int64_t size;    /* bytes, where the resolver gives them (uv's lock); 0:
	                  * unknown (pip), asked of the server later */
	bool requested;  /* named by the requirements file (or its -r includes) */
} ml_pip_pick;

typedef struct ml_pip_resolve_opts {
	const char *python;      /* the environment's interpreter: its pip resolves */
	const char *input_path;  /* the requirements file, read by pip with -r */
	const char *input_text;  /* NULL, or the file's text (a shipped manifest, which
	                          * has no file): written into the temporary directory
	                          * for pip to read; input_path then only names it */
	char *const *index_args; /* --index-url URL ... (ml_index_config_pip_args) */
	size_t n_index_args;
	bool break_system_packages; /* PEP 668 interpreter: allowed for the dry run */
	const char *target_desc;    /* "CPython 3.12.8 on linux-x86_64", for messages */
} ml_pip_resolve_opts;

/* Resolves o->input_path with pip's own resolver for the interpreter that
 * runs it: `python -m pip install --dry-run --ignore-installed --target
 * TMP --report FILE --only-binary=:all: [--break-system-packages] [index
 * args] -r INPUT` in a temporary directory it removes, then reads every
 * package of the report into *out (*n_out of them; caller frees with
 * ml_pip_picks_free()). Returns 0; ML_EFAIL when pip fails (err holds the
 * end of pip's output: a conflict's "The conflict is caused by" lines
 * name the packages); ML_EPARSE (unreadable report); ML_EIO; ML_ENOMEM. */
int ml_pip_resolve(ml_pip_pick **out, size_t *n_out, const ml_pip_resolve_opts *o, ml_err *err);

/* Frees picks[0..n). Accepts NULL. */
void ml_pip_picks_free(ml_pip_pick *picks, size_t n);

/* --- uv's resolver, preferred where it can be had (src/plan/uv.c) ------- */

typedef struct ml_uv_resolve_opts {
	const char *uv;          /* the uv executable */
	const char *cache_dir;   /* uv's cache (--cache-dir), or NULL: uv's own */
	const char *python;      /* the environment's interpreter: resolved for its
	                          * markers and tags (uv's --python) */
	const char *input_path;  /* as ml_pip_resolve_opts */
	const char *input_text;  /* as ml_pip_resolve_opts */
	char *const *index_args; /* pip's index options (ml_index_config_pip_args),
	                          * then extra arguments as ml_resolve_request's
	                          * extra_args: options with their values, and
	                          * requirements ("torch==2.10.0+cu126") */
	size_t n_index_args;
	char *const *tags; /* the interpreter's PEP 425 tags, best first (ml_tags_for):
	                    * each package's wheel is the best one of these */
	size_t n_tags;
	const char *target_desc; /* "CPython 3.12.8 on linux-x86_64", for messages */
} ml_uv_resolve_opts;

/* Resolves o->input_path (and the extra requirements) with uv's resolver
 * for o->python, wheels only, the way pip's would: `uv pip compile
 * --no-config --no-python-downloads --python PY --only-binary :all:
 * --index-strategy unsafe-best-match --format pylock.toml` (PEP 751) in
 * a temporary directory it removes; pip's --trusted-host becomes uv's
 * --allow-insecure-host. The lock is read with ml_pylock_parse(), and each
 * package's pick is its wheel with the best rank in o->tags
 * (ml_wheel_tag_rank), with the lock's sha256; requested is set for the
 * names the input files list (ml_requirements_load_tree, -r included).
 * Fills *out (*n_out picks; free with ml_pip_picks_free()). Returns 0;
 * ML_EUNSUPPORTED for an option uv is not given here (--cert: pip
 * resolves instead); ML_EFAIL when uv fails (err holds the end of its
 * output) or a package has no wheel for these tags; ML_EPARSE; ML_EIO;
 * ML_ENOMEM. */
int ml_uv_resolve(ml_pip_pick **out, size_t *n_out, const ml_uv_resolve_opts *o, ml_err *err);

/* --- known torch builds (src/plan/torch.c) --------------------------------- */

/* The torch-build table, manifests/torch-builds.json (embedded; generated by
 * `make torch-builds`, manifests/make_torch_builds.py). A torch build is
 * (version, backend, platform) on an index: the backend is its flavour
 * ("cpu", "cu126", "cu130", ...; a default-index CUDA 13.0 build is
 * "cu130"), the index the package index (its builds carry no local label)
 * or one of PyTorch's per-backend variant indexes (local label
 * "+<backend>"). Each entry holds the build's CUDA toolkit, the CUDA code of
 * torch's own CUDA library and where those facts come from:
 * - audited: every Linux x86_64 build the package index serves from 2.6 on,
 *   read by `mlsetup audit` from one wheel per build (libtorch_cuda.so:
 *   what torch.cuda.get_arch_list() reports; its real SASS, `a`/`f`
 *   variants included; CUDA toolkit from torch/version.py), with the
 *   sha256 of every wheel file of the build as the index lists them (the
 *   Python versions share the CUDA code), so a wheel is looked up by its
 *   hash;
 * - derived (not audited, no files): the variant indexes' builds of the
 *   same releases, from the release's own arch table
 *   (PYTORCH_RELEASES_CODE_CC in torch/cuda/__init__.py, 2.11 on) or from
 *   PyTorch's release notes (2.6 - 2.10); their SASS is the table's
 *   compute capabilities as plain sm_XY, or unknown where the source names
 *   none (code_unknown: audit the wheel before trusting the build).
 * Minimum drivers are not stored: they come from the one CUDA -> driver
 * table (ml_toolkit_min_driver()) when asked. */

/* Most architectures a build lists, SASS and PTX each. */
#define ML_TORCH_MAX_CODE 48

/* One wheel file of a build in the table. Static strings. */
typedef struct ml_torch_file {
	const char *filename; /* "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl" */
	const char *sha256;   /* 64 lower-case hex digits */
} ml_torch_file;

/* The index a build is served from. */
typedef enum ml_torch_index {
	ML_TORCH_INDEX_UNKNOWN = 0, /* a build learnt from a wheel; in lookups: any index */
	ML_TORCH_INDEX_DEFAULT,     /* the package index ("default" in the table) */
	ML_TORCH_INDEX_VARIANT,     /* PyTorch's <base>/<backend>/ indexes ("variant") */
} ml_torch_index;

/* Where a build's facts come from. */
typedef enum ml_torch_source {
	ML_TORCH_SOURCE_WHEEL = 0,     /* not the table's: audited from a wheel now */
	ML_TORCH_SOURCE_AUDITED,       /* the table's "audited <file> <sha256>" */
	ML_TORCH_SOURCE_RELEASE_TABLE, /* "release table torch X torch/cuda/__init__.py
	                                * PYTORCH_RELEASES_CODE_CC" */
	ML_TORCH_SOURCE_RELEASE_NOTES, /* "release notes" */
} ml_torch_source;

/* One torch build: from the table, or derived from a wheel by the audit
 * (verify.h, ml_torch_build_from_wheel()). */
typedef struct ml_torch_build {
	char version[64];   /* public version, "2.8.0" */
	char local[32];     /* local label, "cu128"; "" when none (the package index's) */
	char build_tag[16]; /* PEP 427 build tag, "3"; "" when none */
	char platform[32];  /* "linux-x86_64", "linux-aarch64", "windows-x86_64",
	                     * "darwin-aarch64"; "any" or "" when unknown */
	char backend[32];   /* flavour, ml_torch_backend(): "cpu", "cu126", "rocm6.2.4";
	                     * "" when unknown (a CUDA major without its minor) */
	ml_torch_index index;
	ml_torch_source source_kind;
	const char *source; /* the table's source text (static); NULL for a wheel's */
	const char *note;   /* the table's note (static): a build tag's history, a
	                     * source that is partial or disagrees; NULL when none */
	char cuda[16];      /* CUDA toolkit, "12.8"; "" for a CPU-only build */
	bool code_unknown;  /* a derived entry whose source names no code: sass and
	                     * ptx are empty but say nothing; audit its wheel */
	ml_cuda_arch sass[ML_TORCH_MAX_CODE]; /* SASS of torch's own CUDA library */
	size_t n_sass;
	ml_cuda_arch ptx[ML_TORCH_MAX_CODE]; /* PTX of torch's own CUDA library */
	size_t n_ptx;
	const ml_torch_file *files; /* table entries: every wheel file of the build
	                             * (static; none for derived entries); NULL
	                             * otherwise */
	size_t n_files;
} ml_torch_build;

/* Writes the backend (flavour) of a build with local label `local` ("" or
 * NULL when none) and CUDA toolkit `cuda` ("" or NULL: CPU-only) into dst
 * (sz bytes): the local label when it names a flavour ("cpu", "xpu",
 * "cuXYZ", "rocmX.Y..."), else "cu" and the toolkit's major and minor digits
 * ("13.0" -> "cu130", "12.8.1" -> "cu128"), "cpu" without a toolkit, and ""
 * for a toolkit known by its major only ("12"). As make_torch_builds.py
 * names the table's backends. Returns dst. */
char *ml_torch_backend(char *dst, size_t sz, const char *local, const char *cuda);

/* The audited build one of whose wheel files has this sha256 (hex, either
 * case), or NULL when the table has none. Static. */
const ml_torch_build *ml_torch_build_lookup(const char *sha256);

/* The audited build of version ("2.8.0", "2.8.0+cu128": the local label must
 * match too) for platform ("linux-x86_64"), the highest build tag winning as
 * pip picks it (PEP 427), or NULL. Derived entries are never answered here
 * (ml_torch_build_get() gives them). For pins without hashes. Static. */
const ml_torch_build *ml_torch_build_find(const char *version, const char *platform);

/* The build (version, backend, platform) served by index: version a public
 * version ("2.15.0"; one with a local label answers NULL), backend as
 * ml_torch_backend() names it ("cu126", "cpu"), platform "linux-x86_64";
 * index ML_TORCH_INDEX_UNKNOWN for either, the default index's build then
 * winning. Among builds of one index the highest build tag wins (PEP 427).
 * NULL when the table has none (or an argument is NULL). Static. */
const ml_torch_build *ml_torch_build_get(const char *version, const char *backend,
                                         const char *platform, ml_torch_index index);

/* The builds of version ("2.15.0") for platform (NULL: every platform), in
 * the table's order: the default index's first, then the variant indexes'
 * by platform and backend (cpu, then the CUDA backends oldest first).
 * Writes the first max of them to out[] (out may be NULL when max is 0)
 * and returns how many there are, which may be more than max. Static
 * pointers. */
size_t ml_torch_builds_of(const char *version, const char *platform, const ml_torch_build **out,
                          size_t max);

/* "default", "variant", or NULL for ML_TORCH_INDEX_UNKNOWN. Static. */
const char *ml_torch_index_name(ml_torch_index index);

/* The minimum driver a build needs on Linux or Windows: that of its CUDA
 * toolkit in the driver table (ml_toolkit_min_driver()); for a toolkit the
 * table does not list, that of the newest listed toolkit of the same major
 * that is older, else the major's minor-version compatibility floor ("12"
 * from nvidia-*-cu12 names alone): a lower bound, *at_least set to true
 * (when non-NULL).
 * NULL for a CPU-only build, or when no such toolkit or no minimum for that
 * OS is recorded. Static. */
const char *ml_torch_build_min_driver(const ml_torch_build *b, bool windows, bool *at_least);

/* Builds the JSON object of a build: version, local, build_tag, platform,
 * backend (null when unknown), index ("default", "variant"; null for a
 * wheel's), source (the table's text; null for a wheel's), cuda (null when
 * CPU-only), sass[], ptx[] (both null when code_unknown), min_driver
 * {linux, windows, at_least} (null values when unknown) and, for audited
 * table entries, files (how many). Returns a new cJSON object or NULL
 * when out of memory. */
struct cJSON *ml_torch_build_to_json(const ml_torch_build *b);

/* --- manifests and selection (src/plan/manifest.c, select.c) ----------- */

/* What is known about one wheel file of a manifest: from a `# mlsetup-file:
 * <sha256> <size> <filename>` comment line (pip ignores it; `mlsetup
 * lock` writes them so plans can name files and sizes without asking an
 * index), from a lock file's [[packages.wheels]], or learnt from an index
 * (ml_manifest_add_file). */
typedef struct ml_file_info {
	char sha256[65];
	int64_t size; /* bytes; -1 when unknown (a lock file without sizes) */
	char *filename;
	char *url; /* where it is served, or NULL (comment lines name none) */
} ml_file_info;

/* A manifest: a pinned, hashed requirements file plus the `# mlsetup:`
 * header selection needs. */
typedef struct ml_manifest {
	char *name;    /* "requirements.txt", or the path as given; a shipped
	                * manifest reads the same on every OS */
	bool embedded; /* shipped inside the binary */
	/* A shipped manifest's embedded name (ml_embedded_find()): name, or
	 * "windows/requirements.txt" for the set of an OS with its own
	 * (manifests/<os>/); NULL for a file. Static. */
	const char *embedded_name;
	ml_requirements *reqs;
	const char *summary, *torch, *cuda; /* header values or NULL; owned by reqs */
	/* Minimum drivers: the min_driver_linux / min_driver_windows header
	 * when the manifest names one (a user's override), else the `cuda`
	 * toolkit's minimum from the driver table (ml_toolkit_min_driver());
	 * NULL when neither is known. Static or owned by reqs. */
	const char *min_driver_linux, *min_driver_windows;
	ml_cuda_arch *code; /* torch_sass then torch_ptx entries */
	size_t n_code;
	bool has_gpu_header; /* torch_sass/torch_ptx present: GPU fit can be judged */
	char **pythons;      /* supported "X.Y" versions, empty = any */
	size_t n_pythons;
	char **platforms; /* "linux-x86_64", empty = any */
	size_t n_platforms;
	ml_file_info *files; /* from # mlsetup-file lines, a lock's wheels, or an index */
	size_t n_files;
	/* A PEP 751 lock file (a path ending in .toml): its requires-python
	 * and environments (NULL / 0 when it gives none), and the lock
	 * itself; all NULL for requirements files. */
	const char *requires_python;
	char *const *environments;
	size_t n_environments;
	struct ml_pylock *lock;
	/* A requirements file that does not pin hashes (pinned without them,
	 * or loose): pip resolves it for the environment's interpreter
	 * (ml_pip_resolve) and ml_manifest_set_resolution() pins the result;
	 * until then reqs holds the file's own requirements and its options. */
	bool resolve;
	bool resolved; /* pinned by pip's resolution, not by the file */
	/* The torch build its torch wheel was audited as
	 * (ml_manifest_set_torch_build), owned; NULL when the facts come from
	 * the header or the table. torch_label ("2.8.0+cu128") is owned. */
	struct ml_torch_build *torch_build;
	char *torch_label;
} ml_manifest;

/* Flags for ml_manifest_open_os(). */
enum {
	/* pip's --require-hashes: a file that does not pin hashes is
	 * refused (file:line) instead of resolved. PIP_REQUIRE_HASHES in the
	 * environment (1, true, yes, on) means the same. */
	ML_MANIFEST_REQUIRE_HASHES = 1u << 0,
};

/* Opens a manifest by embedded name ("requirements.txt",
 * "requirements_blackwell.txt", also without ".txt") or by path (anything
 * containing '/' or naming an existing file). A name means this OS's
 * shipped manifest (ml_manifest_open_os() with the OS mlsetup was built
 * for). Parses it in hash mode (ML_REQ_HASH_MODE; a path ending in
 * .toml as a PEP 751 lock file) and checks the header: torch_sass/torch_ptx must be architecture
 * names or "none", min_driver_* (optional) dotted versions, python X.Y
 * versions, platforms os-arch pairs; errors name the file and line.
 * Without torch_sass/torch_ptx, the torch facts come from the torch-build
 * table by the torch wheel hashes (ml_manifest_torch_facts()).
 * Caller owns *out; free with ml_manifest_free(). Returns 0, ML_ENOENT,
 * ML_EPARSE or ML_ENOMEM. */
int ml_manifest_open(ml_manifest **out, const char *name_or_path, ml_err *err);

/* ml_manifest_open() with the shipped manifests of OS os ("linux",
 * "windows", "darwin" as ml_machine.os.name): a name is looked up as
 * "<os>/<name>" when the build ships a set for that OS (manifests/<os>/,
 * embedded with the folder), else as the name itself (the default set,
 * Linux's). The manifest's name is the same either way.
 *
 * A user's own file may be any requirements file pip reads: one with a
 * --hash (or --require-hashes, or flags ML_MANIFEST_REQUIRE_HASHES, or
 * PIP_REQUIRE_HASHES in the environment) is read in hash mode; any other
 * is read with its -r/-c includes (ml_requirements_load_tree), checked
 * (wheels only: no -e, paths, VCS) and marked resolve. A shipped manifest
 * is hash mode, unless it pins no hashes at all (manifests/windows/): then
 * it is marked resolve (pip resolves it at install, which locks what it
 * chose); ML_MANIFEST_REQUIRE_HASHES refuses it too. Same returns as
 * ml_manifest_open(). */
int ml_manifest_open_os(ml_manifest **out, const char *name_or_path, const char *os, unsigned flags,
                        ml_err *err);

/* Frees a manifest; accepts NULL. */
void ml_manifest_free(ml_manifest *mf);

/* Pins a manifest marked resolve to pip's resolution picks[0..n): its
 * requirements become name==version with the sha256 of the file pip
 * chose (each file recorded with its URL, size unknown until asked), and
 * a `requested` header names what pip marks requested unless the file has
 * one. Every pick must have a sha256 (ML_EINTEGRITY otherwise, naming it).
 * Returns 0, ML_EINTEGRITY or ML_ENOMEM. */
int ml_manifest_set_resolution(ml_manifest *mf, const ml_pip_pick *picks, size_t n, ml_err *err);

/* Records one more wheel file of mf (learnt from an index): sha256 (64
 * hex digits), size in bytes (-1 unknown), file name, URL (may be NULL).
 * A sha256 already recorded keeps its entry, which gains the size and URL
 * it lacked. Returns 0, ML_EFAIL (not a sha256) or ML_ENOMEM. */
int ml_manifest_add_file(ml_manifest *mf, const char *sha256, int64_t size, const char *filename,
                         const char *url, ml_err *err);

/* Fills a manifest's torch facts from the torch-build table (src/plan/
 * torch.c) when its header has no torch_sass/torch_ptx (which, when
 * present, win: a user's override): the code of the builds its torch
 * requirement's hashes name (ml_torch_build_lookup(); CUDA builds win over
 * CPU-only ones, and the code of several CUDA builds is what they share),
 * has_gpu_header, and - when the header names no cuda - the CUDA version
 * (the newest of those builds) with its minimum drivers. A manifest whose
 * torch hashes the table does not know is left as it is. Called by
 * ml_manifest_open(). Returns 0 or ML_ENOMEM. */
int ml_manifest_torch_facts(ml_manifest *mf, ml_err *err);

/* Sets a manifest's torch facts from a build learnt by auditing its torch
 * wheel (verify.h, ml_torch_build_from_wheel()), for a manifest whose
 * header and the table say nothing: the code (SASS then PTX),
 * has_gpu_header, torch ("2.8.0+cu128"), cuda (NULL for a CPU-only build)
 * and, unless the header names them, the minimum drivers of that toolkit
 * (ml_torch_build_min_driver()). b is copied. Returns 0 or ML_ENOMEM. */
int ml_manifest_set_torch_build(ml_manifest *mf, const struct ml_torch_build *b, ml_err *err);

/* The shipped manifest that covers a GPU of compute capability
 * major.minor: the first of selection.json's preference order whose torch
 * build runs on it (its torch_sass/torch_ptx header, ml_arch_runs_on()),
 * passing over the one named `except` (a name or a path; may be NULL),
 * e.g. the manifest that just failed. Used for remedies ("install with
 * --manifest X"). Caller owns *out (ml_manifest_free()); *out is NULL when
 * no shipped manifest covers the GPU. Returns 0, or ML_EPARSE / ML_ENOENT
 * / ML_ENOMEM when the embedded rules or manifests are broken. */
int ml_manifest_covering(ml_manifest **out, int major, int minor, const char *except, ml_err *err);

/* Where a GPU stands against the torch builds of the shipped manifests. */
typedef enum ml_build_fit {
	ML_BUILDS_COVER = 0, /* some shipped build runs on it */
	ML_BUILDS_NEWER = 1, /* newer than the newest code of every shipped build */
	ML_BUILDS_OLDER = 2, /* older than the oldest code of every shipped build */
	ML_BUILDS_GAP = 3,   /* in between, yet no shipped build has code for it */
} ml_build_fit;

typedef struct ml_build_range {
	ml_build_fit fit;
	char newest[64];       /* the shipped manifest with the newest code */
	char newest_torch[32]; /* its torch version, "2.8.0" ("" when unnamed) */
	char newest_cuda[16];  /* its CUDA version, "12.8" ("" when unnamed) */
	char newest_sass[16];  /* its newest SASS, "sm_120" ("" when none) */
	char newest_ptx[16];   /* its newest PTX, "compute_120" ("" when none) */
	char oldest[64];       /* the shipped manifest with the oldest code */
	char oldest_code[16];  /* that code, "sm_50" */
} ml_build_range;

/* Compares compute capability major.minor with the torch builds of the
 * shipped manifests (selection.json's preference order; their
 * torch_sass/torch_ptx headers and ml_arch_runs_on()), so a remedy can say
 * whether a GPU no build covers is too new for them (a newer CUDA toolkit
 * would cover it) or dropped by them. Fills *out; returns 0, or ML_EPARSE /
 * ML_ENOENT / ML_ENOMEM when the embedded rules or manifests are broken. */
int ml_shipped_build_range(ml_build_range *out, int major, int minor, ml_err *err);

/* Outcome of one selection rule for one manifest. */
typedef enum ml_verdict_kind {
	ML_RULE_OK = 0,   /* the rule holds */
	ML_RULE_WARN = 1, /* holds with a caveat (minor-version compatibility) */
	ML_RULE_FAIL = 2, /* does not hold: the manifest does not fit */
	ML_RULE_INFO = 3, /* a note (override, skipped GPU checks, the choice) */
} ml_verdict_kind;

typedef struct ml_reason {
	char manifest[64]; /* manifest the rule was evaluated for */
	char rule[16];     /* "gpu", "driver", "platform", "python", "choice" */
	ml_verdict_kind verdict;
	char detail[512];
} ml_reason;

typedef struct ml_select_opts {
	const char *manifest;       /* --manifest NAME|PATH, NULL to choose */
	const char *python_version; /* "3.12": the interpreter's X.Y */
	const char *python_full;    /* "3.12.8" when known (a lock's requires-python), or NULL */
	bool require_hashes;        /* --require-hashes: ML_MANIFEST_REQUIRE_HASHES */
} ml_select_opts;

#define ML_SELECT_OPTS_INIT                                                                        \
	{                                                                                          \
		NULL, NULL, NULL, false                                                            \
	}

/* The result of manifest selection. `manifest` is NULL when nothing fits;
 * then `problem` says why and `remedy` what to do. */
typedef struct ml_selection {
	ml_manifest *manifest;   /* the chosen one, owned */
	bool overridden;         /* chosen by --manifest */
	bool gpu_checks_skipped; /* no NVIDIA GPU: torch's GPU code not judged */
	ml_reason *reasons;      /* every rule evaluated, in order */
	size_t n_reasons;
	char **warnings; /* what a user must see (loud override, old driver) */
	size_t n_warnings;
	char problem[512];
	char remedy[512];
} ml_selection;

/* Judges the manifest s->manifest holds (a project's candidate, its torch
 * facts known or learnt) by the rules ml_select applies to the shipped
 * candidates: gpu and driver (when m has NVIDIA GPUs), platform and
 * python. Replaces s's reasons and warnings with this manifest's, clears
 * overridden, sets gpu_checks_skipped when m has no GPU, and sets *fits.
 * When it fits, a "choice" reason with the text `choice` is added and the
 * warnings a user must see are collected. Returns 0 or ML_ENOMEM. */
int ml_select_judge(ml_selection *s, const ml_machine *m, const ml_select_opts *o,
                    const char *choice, bool *fits, ml_err *err);

/* --- the plan: what exactly to install here (src/plan/plan.c) ------------- */

/* One wheel (or the interpreter archive) the plan will fetch. */
typedef struct ml_artifact {
	char *name; /* PEP 503 normalized project name */
	char *version;
	char *filename;  /* the wheel chosen for this platform; NULL when unknown */
	char sha256[65]; /* lower-case hex; "" when unknown */
	int64_t size;    /* bytes; -1 when unknown */
	int tag_rank;    /* PEP 425 priority of the chosen file (0 best), -1 unknown */
	bool requested;  /* named in the manifest's `requested` header, or every requirement
	                  * when it has none, as pip marks a -r file's (REQUESTED, PEP 376) */
	bool cached;     /* already in the cache, size verified */
	int line;        /* manifest line of the requirement */
	char *url;       /* where the file is served when the manifest says (a lock
	                  * file, an index lookup, pip's resolution); NULL else */
} ml_artifact;

/* The interpreter the environment will use. */
typedef struct ml_python_plan {
	char version[16]; /* "3.12.8" */
	char xy[8];       /* "3.12" */
	char *path;       /* --python PATH: an existing interpreter, else NULL */
	char *pin_name;   /* "cpython-3.12.8-linux-x86_64-gnu" from python.json */
	char *url;        /* its archive URL */
	char sha256[65];
	int64_t size;    /* archive bytes from the pins, -1 when not pinned */
	char source[16]; /* "managed" (a pin: unpacked already or to fetch),
	                  * "system" (found on this machine, --python-preference),
	                  * "path" (--python PATH) */
} ml_python_plan;

/* A CPython installation found on this machine. */
typedef struct ml_python_found {
	char executable[4096]; /* the real executable (links followed) */
	char version[32];      /* "3.11.2" */
	char xy[16];           /* "3.11" */
} ml_python_found;

/* Looks for the CPython 3 interpreters on this machine (src/plan/pyfind.c):
 * python3.19 .. python3.8 and python3 in every absolute PATH directory,
 * then /usr/local/bin and /usr/bin (Windows: python.exe and python3.exe in
 * every absolute PATH directory, then the interpreters registered under
 * HKCU, then HKLM (64-bit, then 32-bit view) \Software\Python as PEP 514
 * describes, then python.org's install directories); each is asked
 * (python -I -c, 20 s) and kept when it is CPython 3 and not a virtual
 * environment, once per real executable, in the order found. Caller frees *out with free().
 * Returns 0 (also when none is found: *n_out 0) or ML_ENOMEM. */
int ml_python_find_system(ml_python_found **out, size_t *n_out, ml_err *err);

/* Where the interpreter may come from (uv's python-preference). */
typedef enum ml_python_preference {
	/* an installed managed (pinned) interpreter that fits, else the
	 * pinned download; the install falls back to a fitting CPython on
	 * the machine only when that download fails for a network reason */
	ML_PYTHON_MANAGED = 0,
	ML_PYTHON_SYSTEM,       /* a fitting CPython on the machine first, then managed */
	ML_PYTHON_ONLY_MANAGED, /* managed only, never the machine's */
	ML_PYTHON_ONLY_SYSTEM,  /* the machine's only, never a download */
} ml_python_preference;

/* Parses one of those names. Returns 0 or ML_EUSAGE (err says the names). */
int ml_python_preference_parse(ml_python_preference *out, const char *s, ml_err *err);

typedef struct ml_plan_opts {
	const char *manifest;    /* --manifest NAME|PATH, NULL to choose */
	const char *python;      /* --python X.Y or PATH, NULL for python.json's default */
	const char *target;      /* --target DIR, NULL for ./.venv */
	const char *cache_dir;   /* --cache-dir, NULL for ml_cache_dir()'s default */
	bool offline;            /* --offline: contact no index */
	const char *python_pins; /* --python-pins FILE: interpreter pins in the
	                          * format of manifests/python.json; NULL:
	                          * $MLSETUP_PYTHON_PINS, else the embedded file */
	bool require_hashes;     /* --require-hashes (ML_MANIFEST_REQUIRE_HASHES) */
	ml_python_preference python_preference; /* where the interpreter comes from */
} ml_plan_opts;

#define ML_PLAN_OPTS_INIT                                                                          \
	{                                                                                          \
		NULL, NULL, NULL, NULL, false, NULL, false, ML_PYTHON_MANAGED                      \
	}

typedef struct ml_plan {
	ml_selection *selection; /* owned; selection->manifest NULL: nothing fits */
	ml_python_plan python;
	char target[4096];
	char cache_dir[4096];
	ml_artifact *files; /* one per requirement whose marker holds here */
	size_t n_files;
	size_t n_not_here;          /* requirements whose marker excludes this platform */
	size_t n_unknown;           /* requirements whose file the manifest does not
	                             * name (hashes without `# mlsetup-file:` lines):
	                             * filename NULL, to be looked up on an index */
	size_t n_unsized;           /* files named but of unknown size (size -1) */
	bool needs_resolution;      /* the manifest pins no hashes: pip resolves it for
	                             * the interpreter (files empty until then) */
	ml_pip_info resolver;       /* who resolved it (tool "" until then): uv or pip */
	uint64_t total_bytes;       /* size of all known files */
	uint64_t download_bytes;    /* of those, not yet in the cache */
	uint64_t disk_needed_bytes; /* estimate: downloads + unpacked environment */
	char **warnings;
	size_t n_warnings;
	/* A plan for a project (--project) or several --manifest options: the
	 * project (NULL without --project) and every candidate, in preference
	 * order, with why it was taken or passed over. Owned. */
	struct ml_project_info *project;
	struct ml_candidate *candidates;
	size_t n_candidates;
	/* The torch build chosen for a file that leaves torch open
	 * (ml_plan_complete()); NULL when none was chosen. Owned. */
	struct ml_torch_choice *torch_choice;
} ml_plan;

/* Plans an install on machine m: picks the interpreter (opts->python as
 * X.Y from manifests/python.json, or an existing interpreter at a path,
 * whose version is asked from it; without --python, by
 * opts->python_preference: managed tries the pinned versions unpacked
 * already (newest first), then the pins' default, then the other pins;
 * system first tries the CPython interpreters on this machine
 * (ml_python_find_system), only-system only those; the first whose
 * version the manifest supports wins, python.source says which kind it
 * is), selects the manifest (ml_select), and
 * for each requirement whose PEP 508 marker holds here chooses the wheel
 * file with the best PEP 425 tag priority for this OS, CPU, libc (PEP 600
 * manylinux rule) and Python, from the manifest's recorded files. Sizes
 * files, checks the cache and estimates the disk needed (downloads plus
 * an unpacked size of 2x the wheels) against free space. Changes nothing.
 * Returns 0 with *out set even when no manifest fits (then
 * (*out)->selection->manifest is NULL: exit 6); ML_EUNSUPPORTED when the
 * chosen manifest has no wheel for this platform (err names the package);
 * ML_ENOENT / ML_EPARSE / ML_EFAIL for a missing or broken manifest or
 * interpreter; ML_ENOMEM. Caller owns *out; free with ml_plan_free(). */
int ml_plan_make(ml_plan **out, const ml_machine *m, const ml_plan_opts *opts, ml_err *err);

/* Frees a plan; accepts NULL. */
void ml_plan_free(ml_plan *p);

/* Chooses the files again after the manifest learnt more about them
 * (ml_manifest_add_file on p->selection->manifest: files found on an
 * index, sizes): the same choice as ml_plan_make's, with n_unknown,
 * n_unsized, sizes, cache state, disk estimate and the plan's warnings
 * recomputed. Returns what ml_plan_make returns for the files. */
int ml_plan_refile(ml_plan *p, const ml_machine *m, ml_err *err);

/* Builds the "mlsetup.plan/1" JSON document: machine summary, manifest
 * {name, summary, embedded, overridden}, reasons[], python, files[],
 * sizes, warnings[], and the problem/remedy when nothing fits. Returns a
 * new cJSON object (caller frees with cJSON_Delete) or NULL (no memory). */
struct cJSON *ml_plan_to_json(const ml_plan *p, const ml_machine *m);

/* --- lock: regenerate a manifest from loose requirements (src/plan/lock.c) */

/* One platform/Python the manifest must install on. */
typedef struct ml_lock_target {
	char platform[32]; /* "linux-x86_64", "linux-aarch64", "windows-x86_64", "darwin-aarch64" */
	int py_major, py_minor;
} ml_lock_target;

/* One wheel file of a pinned version, as the index lists it. */
typedef struct ml_lock_file {
	char *filename;
	char *url; /* where the index serves it (not written to the manifest) */
	char sha256[65];
	int64_t size; /* bytes, -1 unknown */
} ml_lock_file;

/* One pinned (name, version) of the merged closure. */
typedef struct ml_lock_pkg {
	char *name;       /* as pip reports it ("PyYAML") */
	char *normalized; /* PEP 503 ("pyyaml") */
	char *version;
	bool requested;   /* named in the input */
	uint32_t targets; /* bit i: in the closure of target i */
	char **chosen;    /* sha256 of each file pip picked, for checking */
	size_t n_chosen;
	ml_lock_file *files; /* every wheel of this version (from the index) */
	size_t n_files;
} ml_lock_pkg;

typedef struct ml_lock {
	ml_lock_target targets[32];
	size_t n_targets;
	ml_lock_pkg *pkgs;
	size_t n_pkgs;
} ml_lock;

#define ML_LOCK_INIT                                                                               \
	{                                                                                          \
		{{{0}, 0, 0}}, 0, NULL, 0                                                          \
	}

typedef struct ml_lock_pip_opts {
	const char *python;      /* interpreter that runs pip ("python3") */
	const char *input_path;  /* the loose requirements (INPUT.in) */
	char *const *index_args; /* extra pip arguments: --index-url URL ... */
	size_t n_index_args;
	const char *name; /* what messages call the input; NULL: input_path */
} ml_lock_pip_opts;

/* Resolves the input for target t with pip's own resolver: `python -m pip
 * install --dry-run --ignore-installed --report FILE --only-binary=:all:
 * --implementation cp --python-version X.Y --abi cpXY --platform ...`
 * (every manylinux_2_Y tag of the target's baseline, glibc 2.28, down to
 * the legacy aliases), then adds every package of pip's installation
 * report (pip "Installation Report", version 1) to lk with target bit t and
 * the sha256 of the file pip chose. Runs pip in a temporary directory it
 * removes. Returns 0, ML_EFAIL (pip failed: err holds the end of its
 * output), ML_EPARSE (unreadable report) or ML_ENOMEM. */
int ml_lock_resolve(ml_lock *lk, size_t t, const ml_lock_pip_opts *o, ml_err *err);

/* Returns true when a wheel with these platform tags (the compressed set,
 * "manylinux_2_17_x86_64.manylinux2014_x86_64") installs on at least one
 * of lk's target platforms; lock records only such files ("every wheel
 * mlsetup may install"). PEP 425 compressed tag sets, PEP 600/656. */
bool ml_lock_wheel_fits(const ml_lock *lk, const char *platform_tags);

/* Records one wheel file of pkg (from the index; url may be NULL).
 * Returns 0 or ML_ENOMEM. */
int ml_lock_pkg_add_file(ml_lock_pkg *pkg, const char *filename, const char *url,
                         const char *sha256, int64_t size);

/* Renders the manifest: a generated-file banner naming `command`, the
 * input's `# mlsetup:` header lines (plus `requested = ...`), its index
 * options, then every package pinned with == and PEP 508 markers where the
 * closures of the targets differ, each followed by --hash=sha256: for every
 * wheel file recorded, and a closing block of `# mlsetup-file:` lines.
 * Checks that each file pip chose is among the recorded hashes (else
 * ML_EINTEGRITY naming the package) and that every package has at least one
 * file (else ML_EFAIL) and every file a size (else ML_EFAIL: the caller
 * learns missing sizes with ml_http_sizes()). *out is a new string (caller frees). Returns 0,
 * ML_EINTEGRITY, ML_EFAIL or ML_ENOMEM. */
int ml_lock_render(char **out, const ml_lock *lk, const ml_requirements *input, const char *command,
                   ml_err *err);

/* Adds the targets of a lock: every platform of platforms[0..n_platforms)
 * with every Python of pythons[0..n_pythons); an empty list takes the
 * input's `# mlsetup: platforms` / `python` header (space or comma
 * separated), else linux-x86_64 / 3.12. Returns 0 or what
 * ml_lock_add_target() returns. */
int ml_lock_add_targets(ml_lock *lk, const char *const *pythons, size_t n_pythons,
                        const char *const *platforms, size_t n_platforms,
                        const ml_requirements *input, ml_err *err);

/* Frees everything lk holds and resets it; accepts NULL. */
void ml_lock_release(ml_lock *lk);

/* --- planning for another platform (src/plan/platform.c) ------------------ */

/* Makes the machine m describe another platform, "OS-ARCH" (os linux,
 * windows or darwin; arch x86_64 or aarch64, also amd64 / arm64), so that
 * a plan made for it picks that platform's wheels (`download --platform`).
 * The same OS and CPU keep the detected libc; anything else is planned for
 * glibc 2.28 (the manylinux_2_28 baseline) on Linux and no libc elsewhere.
 * Returns 0, or ML_EUSAGE for anything else (m unchanged). */
int ml_plan_set_platform(ml_machine *m, const char *platform, ml_err *err);

/* Makes machine m describe other NVIDIA GPUs and driver, for a plan made
 * for another machine (`plan --gpu sm_70,sm_120 --driver 550.54.15`):
 * gpus, when not NULL, replaces m's GPUs by the compute capabilities it
 * lists (comma-separated "sm_XY" or "X.Y", ml_cuda_device_parse(); "none"
 * for no GPU), each named "GPU given with --gpu"; driver, when not NULL,
 * replaces the driver version, and its CUDA version is the driver table's
 * for its branch (ml_driver_cuda_version()). Returns 0, ML_EUSAGE for a
 * list or version it cannot read (m unchanged), or ML_ENOMEM. */
int ml_plan_set_gpus(ml_machine *m, const char *gpus, const char *driver, ml_err *err);

/* --- projects: a directory or git repository with candidates (src/plan/project.c) */

/* Where a project comes from: --project PATH|GIT_URL. */
typedef struct ml_project_source {
	bool git;   /* a git URL, else a local directory */
	char *path; /* the directory (as given); NULL for git */
	char *url;  /* clone URL: scheme://host/path, no credentials, no
	             * "git+", no @REV; also what messages and records show */
	char *user; /* credentials the URL carried (user[:password]@), or NULL;
	             * never printed or written */
	char *password;
	char *rev;      /* the text after the last '@' of the URL's path, or NULL */
	char *name;     /* the repository name: the path's last segment without
	                 * ".git" ("thesis" for .../thesis.git@v1) */
	char scheme[8]; /* "https", "http", "file" or "ssh" */
} ml_project_source;

/* Parses --project's value. A value with "://" (after an optional "git+",
 * pip's VCS form) is a git URL: schemes https, http, file and ssh; @REV is
 * the text after the last '@' of the URL's path (after the host), for every
 * scheme, so "https://tok@host/r.git@v1" has credentials "tok" and REV
 * "v1"; the password and user are taken out of the URL. Anything else is
 * a local directory. Errors (ML_EUSAGE) name the problem: an unknown
 * scheme, an empty REV, no repository name, a URL with nothing after the
 * host. Caller releases *out with ml_project_source_release(). Returns 0,
 * ML_EUSAGE or ML_ENOMEM. */
int ml_project_source_parse(ml_project_source *out, const char *spec, ml_err *err);

/* Frees what src holds and zeroes it; accepts NULL. */
void ml_project_source_release(ml_project_source *src);

/* The candidate requirements files of the project in directory dir, in
 * preference order, as paths "dir/NAME": `[tool.mlsetup] manifests = [...]`
 * of dir/pyproject.toml when it has one (each a file relative to dir that
 * must exist; errors name pyproject.toml and the line), else
 * requirements.txt, then every other requirements*.txt directly in dir
 * that requires torch after following its -r includes
 * (ml_requirements_load_tree), sorted bytewise. *no_torch is set when no
 * candidate requires torch (then the list is requirements.txt alone: GPU
 * checks do not apply). Caller frees each path and the array. Returns 0,
 * ML_ENOENT (no candidate: err says what was looked for), ML_EPARSE (a
 * broken pyproject.toml or requirements file, named), ML_EIO, ML_ENOMEM. */
int ml_project_candidates(char ***out, size_t *n_out, bool *no_torch, const char *dir, ml_err *err);

/* What a plan records about its project. */
typedef struct ml_project_info {
	char *url;            /* the git URL without credentials, or the directory as given */
	char *rev;            /* REV as given, NULL when none */
	char commit[41];      /* the commit checked out ("" for a directory that is no
	                       * git checkout) */
	char *path;           /* the directory the candidates were read from */
	bool checkout_reused; /* an existing checkout there was reused */
} ml_project_info;

/* One candidate of a project, with the facts of its torch build. */
typedef struct ml_candidate {
	char *name; /* "requirements_blackwell.txt" */
	char *path; /* as opened */
	bool chosen;
	char *reason;   /* why it was taken or passed over */
	bool has_torch; /* its torch build is known (the fields below) */
	char torch_version[96];
	char *torch_file; /* the wheel the facts come from, or NULL */
	char torch_sha256[65];
	char *sass;      /* "sm_75 sm_80" */
	char *ptx;       /* "compute_90" or "" */
	char cuda[16];   /* "" for a CPU-only build */
	char source[16]; /* "table", "audit", "header", "" */
	bool broken;     /* learning its torch build failed (pip could not resolve
	                  * it, its wheel could not be fetched or read): passed
	                  * over; an unknown build that did not fail (offline, no
	                  * interpreter to resolve with) is only a fallback */
} ml_candidate;

/* Frees what c holds. */
void ml_candidate_release(ml_candidate *c);

/* Frees a project record; accepts NULL. */
void ml_project_info_free(ml_project_info *p);

struct cJSON;

/* Adds p to the JSON object obj as key: {url, rev (null when none),
 * commit (null when the directory is no git checkout), path}, the shape
 * plan's and bundle's documents share. Copies the strings; a failed
 * allocation leaves the key out (cJSON's own behaviour). */
void ml_project_info_add_json(struct cJSON *obj, const char *key, const ml_project_info *p);

/* --- completing a plan through a provider (src/plan/complete.c) ------------ */

/* A plan the manifest does not fully describe is completed by plan itself,
 * which asks a provider for what only the package indexes, the file
 * servers and a resolver know: pip's resolver hands its resolution a
 * PackageFinder, uv a ResolverProvider. The provider is a struct of
 * callbacks and one data pointer, as libgit2's callback structs are: plan
 * calls them on the calling thread, one at a time, and passes `data` back
 * to each; a callback returns 0 or a negative ML_E* code with err set,
 * and that code is returned as the caller's error. Plan never reaches the
 * network or the cache on its own, so a provider written in a test plans
 * without either. The install pipeline fills one from the fetch stage's
 * lookups, sizes, resolver and downloads (src/fetch/provider.c) and the
 * audit's reading of a torch wheel (verify.h), bound to one run's
 * sources and cache (src/install/resolve.c). */

/* One file a source lists for a project (a PEP 503 anchor or PEP 691
 * "files" entry), as a provider reports it. Strings are allocated with
 * malloc() by the provider and freed by ml_project_listing_release(). */
typedef struct ml_listed_file {
	char *filename; /* "torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64.whl" */
	char *url;      /* absolute; NULL when the source gives none */
	char *sha256;   /* 64 lower-case hex digits, or NULL when not given */
	int64_t size;   /* bytes, -1 when the source does not say (PEP 700) */
} ml_listed_file;

/* One project asked of every source (ml_plan_provider.list_files). */
typedef struct ml_project_listing {
	const char *name;      /* in: PEP 503 normalized project name (borrowed) */
	const char *index_url; /* in: NULL to ask every source of the run; else only
	                        * this PEP 503 index (borrowed), whose 404 for the
	                        * project is no failure */
	ml_listed_file *files; /* out: every file of every source that knows the
	                        * project, sources in the order they are asked */
	size_t n_files;
	bool project_seen; /* out: some source knows the project */
	int rc;            /* out: 0, or the first source that failed (others may
	                    * still have answered) */
	ml_err err;        /* out: why that source failed */
} ml_project_listing;

/* Frees what a listing's out fields hold and zeroes them (name is kept).
 * Accepts NULL. */
void ml_project_listing_release(ml_project_listing *l);

/* What a note of plan (or of a provider's resolver) is. */
typedef enum ml_plan_note_kind {
	ML_PLAN_NOTE_STEP,    /* what is being done now ("asking the indexes ...") */
	ML_PLAN_NOTE_WARNING, /* something people should know (no hashes pinned, ...) */
} ml_plan_note_kind;

/* A progress callback: text (valid during the call only) of kind. */
typedef void (*ml_plan_note_fn)(ml_plan_note_kind kind, const char *text, void *data);

/* What plan asks a resolver (ml_plan_provider.resolve). Borrowed. */
typedef struct ml_resolve_request {
	const char *manifest;    /* the requirements file's name, for messages */
	const char *python;      /* the environment's interpreter: the resolution is for
	                          * it (pip today: its own pip resolves) */
	const char *input_path;  /* the requirements file (ml_pip_resolve_opts.input_path) */
	const char *input_text;  /* NULL, or its text (a shipped manifest has no file) */
	const char *target_desc; /* "CPython 3.12.8 on linux-x86_64", for messages */
	ml_plan_note_fn note;    /* says which resolver runs, before it runs; may be NULL */
	void *note_data;
	/* More for the resolver, after the sources' options: requirements
	 * ("torch==2.10.0+cu126") and index options ("--extra-index-url",
	 * URL), as pip's command line takes them (the torch build chosen,
	 * ml_plan_torch_resolve_args()). */
	char *const *extra_args;
	size_t n_extra_args;
	/* The interpreter and platform resolved for, for a resolver that
	 * lists several wheels per package (uv): each pick is the best for
	 * these PEP 425 tags (ml_tags_for). */
	ml_tag_target target;
} ml_resolve_request;

/* A resolver's answer. */
typedef struct ml_resolution {
	ml_pip_pick *picks; /* every distribution chosen, each with the exact file and,
	                     * where it can be had, its sha256; freed by the caller
	                     * with ml_pip_picks_free() */
	size_t n_picks;
	ml_pip_info resolver; /* the resolver that answered (pip's version, PEP 668) */
} ml_resolution;

typedef struct ml_plan_provider {
	/* Lists, for each q[i] of q[0..n), every file every source lists for
	 * project q[i].name (ml_project_listing): all of them at once, so an
	 * implementation may ask for several projects concurrently. A source
	 * that fails is recorded in q[i].rc and q[i].err, not returned. Fills
	 * the out fields of every q[i]; plan releases them. Returns 0, or
	 * ML_ENOMEM. */
	int (*list_files)(ml_project_listing *q, size_t n, void *data, ml_err *err);

	/* Learns sizes[i], in bytes, of the file at urls[i] for i < n (n > 0),
	 * -1 where the server does not tell (the download then learns it).
	 * Plan asks for no remote URL when the provider is offline. Returns 0,
	 * or ML_ENET / ML_ENOENT / ML_EFAIL / ML_ENOMEM for a request that
	 * failed (err names the URL, redacted). */
	int (*file_sizes)(int64_t *sizes, char *const *urls, size_t n, void *data, ml_err *err);

	/* Resolves a requirements file that pins no hashes for rq->python
	 * (ml_resolve_request) into *out (zeroed by plan; the picks are the
	 * caller's). Returns 0; ML_ENOENT (no resolver for that interpreter:
	 * err says how to get one); ML_EFAIL (the resolver failed: err holds
	 * why); ML_EPARSE; ML_EIO; ML_ENOMEM. */
	int (*resolve)(ml_resolution *out, const ml_resolve_request *rq, void *data, ml_err *err);

	/* Fetches the file of plan artifact a (named, hashed; size -1 when
	 * unknown) into verified storage and writes the path of the verified
	 * copy into path (path_sz bytes), which stays valid after the call.
	 * Returns 0, or what the download failed with (ML_ENET, ML_ENOENT,
	 * ML_EINTEGRITY, ML_EIO, ...). */
	int (*fetch_file)(char *path, size_t path_sz, const ml_artifact *a, void *data,
	                  ml_err *err);

	/* Learns the torch build the torch wheel at path (verified) carries,
	 * from the CUDA code its own library holds (verify.h,
	 * ml_torch_build_from_wheel()). Returns 0, or ML_EPARSE / ML_EIO /
	 * ML_ENOMEM. */
	int (*audit_wheel)(ml_torch_build *out, const char *path, void *data, ml_err *err);

	/* Progress for people; may be NULL. Called with note_data. */
	ml_plan_note_fn note;
	void *note_data;

	/* The sources are the cache and local locations only (--offline):
	 * plan words its messages so, and asks no server for a size. */
	bool offline;

	/* Passed to every callback above but note. */
	void *data;
} ml_plan_provider;

/* True when plan p names, hashes and sizes every file it installs (no
 * resolution, lookup or size is still to be had). */
bool ml_plan_is_complete(const ml_plan *p);

/* How to complete a plan; zero-initialize (or pass NULL) for a plan whose
 * manifest pins hashes. Borrowed pointers. */
typedef struct ml_plan_complete_opts {
	/* The environment's interpreter, whose resolver resolves a manifest
	 * that pins no hashes; NULL while it is not known yet (such a plan is
	 * then left as it is, with a warning). */
	const char *python;
	const char *python_version; /* its version ("3.12.8"), for messages */
	/* A lock kept from the first resolution of a shipped manifest that
	 * pins no hashes (a PEP 751 file, as ml_manifest_open() reads it):
	 * when it is there and reads, its files pin the manifest instead of a
	 * resolution (each still checked against the hashes it records). NULL:
	 * none. */
	const char *resolved_lock;
	/* Choosing a torch build for a file that leaves torch open
	 * (src/plan/torch_plan.c): the base of PyTorch's per-backend indexes
	 * (NULL: $MLSETUP_TORCH_INDEX_URL, else manifests/torch-index.json's;
	 * "none": the run's own indexes only), and the backend to take ("cu126", "cpu"; NULL or "auto":
	 * the build that runs here). */
	const char *torch_index_url;
	const char *torch_backend;
} ml_plan_complete_opts;

/* What ml_plan_complete() did. */
typedef struct ml_plan_completion {
	bool unresolved;      /* the manifest pins no hashes and no interpreter was
	                       * given: nothing was done but warn */
	bool lock_reused;     /* opts->resolved_lock pinned the manifest */
	bool resolved;        /* the resolver pinned it (resolver says which) */
	ml_pip_info resolver; /* valid when resolved */
} ml_plan_completion;

/* Completes plan p for machine m through provider pv, in order:
 *   0. a file that pins no hashes and leaves torch open (no hash, local
 *      label, URL or index of its own; not a shipped manifest): the torch
 *      build that runs on m's GPUs is chosen among the builds the run's
 *      indexes and PyTorch's per-backend indexes list (p->torch_choice;
 *      ML_EUNSUPPORTED when none runs or the named backend's does not,
 *      err saying why and the nearest option), and pins step 1's
 *      resolution;
 *   1. a manifest that pins no hashes (p->needs_resolution): with no
 *      interpreter, a WARNING note and nothing else (out->unresolved);
 *      else pinned from opts->resolved_lock when that lock is there and
 *      reads (a STEP note says so; one that does not read is a WARNING
 *      and is resolved again), else resolved by pv->resolve (a file pip
 *      gives no sha256 for is refused by ml_manifest_set_resolution());
 *   2. requirements named by hash only (p->n_unknown): every file the
 *      sources list for their projects (pv->list_files, after a STEP
 *      note); a file is taken when it has one of the requirement's
 *      hashes and a URL (the first source's), and sized by pv->file_sizes
 *      when its source gave no size (offline, a remote one is ML_ENOENT);
 *      none found is ML_ENOENT (no source knows the project, or the first
 *      source's failure) or ML_EINTEGRITY (naming the hashes and up to 8
 *      files the sources offer of that version);
 *   3. files named with a URL but of unknown size (p->n_unsized):
 *      pv->file_sizes (a file without URL is ML_EFAIL; offline, a remote
 *      one is ML_ENOENT);
 *   4. the files chosen again (ml_plan_refile()).
 * What was learnt is recorded in the manifest (ml_manifest_add_file,
 * ml_manifest_set_resolution); p's warnings are recomputed, not noted.
 * opts may be NULL. *out (may be NULL) says what was done. Returns 0, what
 * a callback returns, or what ml_plan_refile() returns. */
int ml_plan_complete(ml_plan *p, const ml_machine *m, const ml_plan_provider *pv,
                     const ml_plan_complete_opts *opts, ml_plan_completion *out, ml_err *err);

/* Sets c->reason to reason (one line: newlines joined with spaces) for a
 * candidate whose torch build could not be judged; broken marks it as
 * failed (passed over, never a fallback). Returns 0 or ML_ENOMEM. */
int ml_candidate_unjudged(ml_candidate *c, bool broken, const char *reason);

/* The torch wheel of candidate plan p an audit would read: the plan's
 * torch file when it is named and hashed and, offline, sized; else NULL
 * with *why saying what is missing (static text). */
const ml_artifact *ml_plan_torch_wheel(const ml_plan *p, bool offline, const char **why);

/* Learns candidate c's torch build (of plan p, whose torch wheel is a,
 * ml_plan_torch_wheel()) from the wheel itself: a STEP note, then
 * pv->fetch_file and pv->audit_wheel; sets c->source to "audit" and the
 * manifest's torch facts (ml_manifest_set_torch_build()). A wheel that
 * cannot be fetched or audited marks c broken with the reason
 * (ml_candidate_unjudged()) and returns 0. Returns 0, or ML_ENOMEM. */
int ml_candidate_audit_torch(ml_candidate *c, ml_plan *p, const ml_artifact *a,
                             const ml_plan_provider *pv, ml_err *err);

/* --- choosing a torch build for this machine (src/plan/torch_choice.c) --- */

/* When a requirement leaves torch open (a bare name, a range, `==X.Y.Z`
 * without a local label or index), the build to install is chosen among
 * the builds on offer: the newest version whose CUDA code runs on every
 * GPU of the machine with its driver (ml_arch_judge(): SASS, then PTX the
 * driver can JIT; the build's CUDA toolkit minimum driver, or CUDA
 * minor-version compatibility above the major's floor when no GPU needs
 * PTX); on equal versions the default index's build, then the highest
 * CUDA. A machine without an NVIDIA GPU gets a CPU build; a GPU machine
 * never gets one. Pure: nothing is fetched or asked of an index. */

/* One build on offer: a version an index lists for the target, and its
 * facts when they are known. Borrowed. */
typedef struct ml_torch_offer {
	const char *version;         /* public version, "2.15.0" */
	const char *local;           /* local label, "cu126"; "" or NULL when none */
	ml_torch_index index;        /* the default index (the user's) or a variant one */
	const char *index_url;       /* the index that serves it: the user's index for
	                              * the default index's builds, "<base>/<backend>/"
	                              * for a variant's; NULL when not known */
	const ml_torch_build *build; /* its facts (the table's, or a wheel's audit);
	                              * NULL: not known until ml_torch_choose_opts.learn
	                              * gives them */
	void *data;                  /* the caller's (e.g. the listed file), for learn */
} ml_torch_offer;

/* A build passed over, and why. */
typedef struct ml_torch_rejection {
	char version[96]; /* the wheel's version, local part included: "2.15.0", "2.10.0+cu126" */
	char backend[32]; /* "cu132", "cpu" */
	char index[16];   /* "default", "variant" */
	char reason[512]; /* "no code for Tesla V100 (sm_70): sm_70: no SASS for major 7, ..." */
} ml_torch_rejection;

/* The choice. */
typedef struct ml_torch_choice {
	bool chosen;         /* false when none runs and no backend was named */
	ml_torch_build build; /* the chosen build's facts (a copy) */
	bool runs;                   /* build runs here (false: a named backend's build
	                              * that does not; install then stops) */
	bool compat;                 /* runs under CUDA minor-version compatibility */
	ml_torch_index index;        /* the kind of index that serves it */
	char version[96];            /* as ml_torch_rejection.version */
	char backend[32];
	char index_url[1024]; /* "" when the offer named none */
	char reason[768];     /* "torch 2.10.0+cu126 from <url>: newest build that runs here:
	                       * CUDA 12.6 build with code for every GPU here, ..." */
	char nearest[512];    /* no build runs: the nearest option (a newer driver,
	                       * another backend, an audit); "" otherwise */
	ml_torch_rejection *rejected; /* every offer ranked above the choice (all of
	                               * them when none runs), best first */
	size_t n_rejected;
} ml_torch_choice;

typedef struct ml_torch_choose_opts {
	/* NULL or "auto": every backend on offer; else only this backend's
	 * builds ("cu126", "cpu"), whose newest is taken even when it does not
	 * run here (runs false, reason says why). */
	const char *backend;
	/* Learns the facts of an offer without them, when its turn comes (in
	 * rank order, so only what is needed): sets *out (valid until
	 * ml_torch_choose() returns: the choice keeps a copy) or leaves it
	 * NULL. A nonzero return
	 * rejects the offer with err's message as its reason (ML_ENOMEM stops
	 * the choice). NULL: such offers are passed over as not recorded. */
	int (*learn)(const ml_torch_build **out, const ml_torch_offer *o, void *data, ml_err *err);
	void *learn_data;
} ml_torch_choose_opts;

/* Chooses among offers[0..n) (any order) for machine m (its GPUs' compute capabilities, its driver
 * version and OS) into *out, which the caller releases with
 * ml_torch_choice_release(). A build whose code is not recorded
 * (code_unknown, or no facts and no learn) is passed over with that
 * reason. No build that runs is not an error: out->chosen is false (or a
 * named backend's build is chosen with runs false) and out->nearest says
 * what would help. opts may be NULL.
 * Returns 0 or ML_ENOMEM. */
int ml_torch_choose(ml_torch_choice *out, const ml_torch_offer *offers, size_t n,
                    const ml_machine *m, const ml_torch_choose_opts *opts, ml_err *err);

/* Frees what *c holds and zeroes it. Accepts NULL. */
void ml_torch_choice_release(ml_torch_choice *c);

/* The `torch_choice` object of `plan --json`: version, backend, index_url
 * (null when unknown), cuda, runs, minor_version_compat, reason (the
 * choice's, or the nearest option's when nothing was chosen), rejected
 * [{version, backend, index, reason}], nearest (only when nothing runs).
 * version and backend are null when nothing was chosen. Returns a new
 * object, or NULL when out of memory. */
struct cJSON *ml_torch_choice_to_json(const ml_torch_choice *c);

/* Offers built from the torch-build table. */
typedef struct ml_torch_offers {
	ml_torch_offer *offers;
	size_t n;
	char **urls; /* the variant index URLs the offers point at (owned) */
} ml_torch_offers;

/* The base URL of PyTorch's per-backend indexes ("<base>/<backend>/" are
 * PEP 503 indexes) and the backends worth asking, from the embedded
 * manifests/torch-index.json: *backends (static) gets the list, *n its
 * length. Returns the base (static), or NULL when the embedded file does
 * not read (never, in a built mlsetup: a unit test reads it). */
const char *ml_torch_index_default(const char *const **backends, size_t *n);

/* Every build of the table for platform ("linux-x86_64") whose version
 * matches specifier (PEP 440; NULL or "" for any): the default index's,
 * served by default_index (borrowed; may be NULL), and, when torch_index
 * (the base under which "<backend>/" are PEP 503 indexes) is not NULL,
 * the variant indexes' with their URLs. Fills *out (released with
 * ml_torch_offers_release()). Returns 0, ML_EPARSE for a bad specifier
 * (err says so), or ML_ENOMEM. */
int ml_torch_table_offers(ml_torch_offers *out, const char *platform, const char *specifier,
                          const char *default_index, const char *torch_index, ml_err *err);

/* Frees what *o holds and zeroes it. Accepts NULL. */
void ml_torch_offers_release(ml_torch_offers *o);

#endif /* MLSETUP_PLAN_H */
