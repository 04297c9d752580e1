/*
 * install.h - the pipelines as library calls: the stages strung together.
 *
 *   ml_install()           detect -> plan -> fetch -> audit -> env ->
 *                          verify -> report: a verified environment at
 *                          the target (`mlsetup install`)
 *   ml_install_plan()      install stopped before it changes anything
 *                          (`mlsetup plan`)
 *   ml_install_download()  detect -> plan -> fetch -> a directory of
 *                          verified files with a PEP 503 index.html
 *                          (`mlsetup download`, pip download's analogue)
 *   ml_install_lock()      loose requirements -> pip's resolver per target
 *                          -> the index's hashes -> a pinned, hashed
 *                          manifest (`mlsetup lock`)
 *   ml_install_export()    an environment's lock file as PEP 751 or as a
 *                          hashed requirements file (`mlsetup export`)
 *   ml_install_bundle()    every candidate manifest's plan for a platform
 *                          -> a self-contained directory that installs
 *                          offline, or serves a fleet as a static index
 *                          (`mlsetup bundle`)
 *
 * Each source file under src/install/ holds one part: install.c (the
 * install pipeline and its result), interpreter.c (the pinned
 * interpreter), wheels.c (fetching, auditing and installing the plan's
 * wheels), lockfile.c (the environment's pylock.toml), download.c, lock.c,
 * export.c and bundle.c (the other pipelines).
 *
 * Like the stages, nothing here prints or exits: progress, warnings and
 * details reach the caller as events (ml_install_event) through the
 * on_event callback every options struct carries; results come back as
 * data; failures as an ML_E* code with an ml_err. A front end renders the
 * events (src/cli does it with core/out.c) and decides the exit code with
 * ml_exit_code().
 */
#ifndef MLSETUP_INSTALL_H
#define MLSETUP_INSTALL_H

#include "mlsetup/core.h"
#include "mlsetup/detect.h"
#include "mlsetup/env.h"
#include "mlsetup/fetch.h"
#include "mlsetup/plan.h"
#include "mlsetup/verify.h"

struct cJSON;

/* --- events ------------------------------------------------------------------ */

/* The stages of an install, in order; each is timed (the report's
 * "stages" object, "<name>_s" in seconds). A stage may run in several
 * spans (fetch resolves the index, fetches the interpreter's stage, then
 * the wheels; verify audits before the build and checks after it). */
typedef enum ml_install_stage {
	ML_STAGE_DETECT = 0,
	ML_STAGE_PLAN,
	ML_STAGE_FETCH,
	ML_STAGE_INTERPRETER,
	ML_STAGE_INSTALL,
	ML_STAGE_VERIFY,
	ML_STAGE_COUNT
} ml_install_stage;

/* Returns "detect", "plan", "fetch", "interpreter", "install" or "verify"
 * (static); "?" for anything else. */
const char *ml_install_stage_name(ml_install_stage s);

typedef enum ml_install_event_kind {
	/* A span of a stage begins: stage. */
	ML_EV_STAGE_BEGIN = 0,
	/* That span ends: stage, seconds (of this span), rc (0 or the
	 * failure's ML_E* code). */
	ML_EV_STAGE_END,
	/* The machine is known: machine. */
	ML_EV_MACHINE,
	/* The plan is made: plan, and text = why its manifest was chosen (the
	 * selection's "choice" reason, "" when it has none). */
	ML_EV_PLAN,
	/* A step of work begins, worth a line for people: text ("resolving
	 * m.in for CPython 3.12 on linux-x86_64 with pip"). */
	ML_EV_STEP,
	/* Something people must see: text (a selection warning, a failed
	 * import of a requested module, a GPU --force builds for anyway, a
	 * report that could not be written). */
	ML_EV_WARNING,
	/* Detail for the curious (-v): text (a failed import of a module no
	 * one asked for, staging left by a crashed run cleaned up). */
	ML_EV_DETAIL,
	/* The fetch stage's progress, forwarded as ml_fetch_resolve() and
	 * ml_fetch_all() report it (at most 10 times a second, notes at once,
	 * a final one): fetch. stage says what is fetched: ML_STAGE_FETCH
	 * for the wheels, ML_STAGE_INTERPRETER for the interpreter archive.
	 * May come from the fetch stage's threads, never two at once. */
	ML_EV_FETCH,
	/* One file that could not be fetched: err (its own failure), text
	 * (the file name). Sent for each failed file when several failed;
	 * with one failure the pipeline's own error says it all. */
	ML_EV_FETCH_FAILED,
	/* One wheel was installed into the staged environment (or failed):
	 * wheel, text (its file name), n_done of n_total. Sent from the
	 * installer's worker threads, never two at once. */
	ML_EV_WHEEL,
	/* A check begins: text ("audit before build", "imports", "gpu"). */
	ML_EV_CHECK_BEGIN,
	/* It ended: text, ok; for "gpu" also verification (the verdict, for
	 * the front end to show). */
	ML_EV_CHECK_END,
	/* A step of the "gpu" check begins or ends, as ml_verify_env reports
	 * it (ml_verify_env_opts.on_step): verify_step, and text = its name
	 * ("importing torch", "SAXPY on GPU 0", "fp16 matmul on GPU 0"). */
	ML_EV_VERIFY_STEP,
} ml_install_event_kind;

/* One event. Every pointer is valid only during the callback. */
typedef struct ml_install_event {
	ml_install_event_kind kind;
	ml_install_stage stage; /* the stage the event happens in */
	double seconds;         /* STAGE_END: seconds of the span */
	int rc;                 /* STAGE_END: 0 or the span's ML_E* code */
	const char *text;       /* see each kind; NULL when none */
	const ml_machine *machine;
	const ml_plan *plan;
	const ml_fetch_progress *fetch;
	const ml_err *err;
	const ml_wheel_result *wheel;
	size_t n_done, n_total; /* WHEEL */
	bool ok;                /* CHECK_END */
	const ml_verification *verification;
	const ml_verify_step *verify_step; /* VERIFY_STEP */
} ml_install_event;

/* The callback every pipeline takes; data is the options' event_data. */
typedef void (*ml_install_event_fn)(const ml_install_event *ev, void *data);

/* --- install ----------------------------------------------------------------- */

typedef struct ml_install_opts {
	const char *manifest;      /* NAME|PATH, NULL: chosen for this machine */
	/* Candidates, in preference order (repeated --manifest): with two or
	 * more, the first that fits this machine is chosen as a project's
	 * candidates are (below); NULL / 0: none. */
	const char *const *manifests;
	size_t n_manifests;
	/* --project PATH|GIT_URL: a directory or a git repository (pip's
	 * git+ form and @REV too) whose requirements files are the
	 * candidates (ml_project_candidates(); --manifest options replace
	 * them). The first whose torch build runs on every GPU and whose CUDA
	 * build this driver can start is chosen; torch facts come from the
	 * table of known builds, else from auditing the torch wheel itself,
	 * fetched into the cache (offline: the table and the cache only).
	 * A git project is checked out (ml_git_checkout) into checkout, else
	 * ./<repository name>, by install, and the environment defaults to
	 * <checkout>/.venv; plan's checkouts live in the cache. NULL: none. */
	const char *project;
	const char *checkout; /* --checkout DIR for a git project (install) */
	const char *target;        /* environment directory; NULL: ".venv" */
	const char *python;        /* X.Y (pinned) or PATH (existing); NULL: default */
	const char *python_pins;   /* pins file; NULL: $MLSETUP_PYTHON_PINS, embedded */
	const char *python_mirror; /* replaces the interpreter release host prefix
	                            * (everything up to ".../releases/download");
	                            * NULL: $MLSETUP_PYTHON_MIRROR, else none */
	const char *cache_dir;     /* NULL: ml_cache_dir()'s default */
	const char *sysroot;       /* read /proc, /sys, /etc under it; NULL: live */
	const char *platform;      /* ml_install_plan only: plan for "OS-ARCH" as if this
	                            * machine ran it (ml_plan_set_platform; the GPUs and
	                            * driver stay the detected ones); ml_install refuses
	                            * it (ML_EUSAGE). NULL: this machine's */
	char *const *requirements; /* requirements given as arguments ("torch",
	                            * "numpy<2"), as pip install takes them: planned as a
	                            * requirements file of those lines (src/install/
	                            * args.c); not with manifest or project */
	size_t n_requirements;
	const char *gpus;          /* plan (and install) for these GPUs ("sm_70,sm_120",
	                            * "none"; ml_plan_set_gpus) instead of the detected
	                            * ones: selection, the torch choice and the audit
	                            * judge them; install then runs no GPU check (they
	                            * are not here) and says so. NULL: this machine's */
	const char *driver;        /* and this driver version; NULL: this machine's */
	ml_index_flags index;      /* the command line's index options (borrowed) */
	/* How to fetch: jobs (parallel downloads and, here, wheel installs;
	 * <= 0: the fetch default and one per CPU), retries, timeouts. Its
	 * trusted hosts, CA bundle, offline flag and callbacks are the
	 * pipeline's: from the index configuration and `offline`. */
	ml_fetch_opts fetch;
	bool offline;          /* the cache and local --find-links only */
	bool no_wait;          /* fail at once when another install holds the target */
	bool no_verify;        /* skip the import check and the GPU checks */
	bool require_gpu;      /* no NVIDIA GPU is a failure (ML_EGPU) */
	bool compile_bytecode; /* compileall after installing, even with no_verify */
	bool no_compile_bytecode; /* no compileall even though the install verifies
	                           * (by default an install that verifies compiles
	                           * first: its imports then read bytecode) */
	bool force;            /* build even when the GPUs cannot run the wheels */
	bool reinstall;        /* rebuild even when the target already is the plan */
	bool require_hashes;   /* refuse a manifest that does not pin hashes
	                        * (pip's --require-hashes; PIP_REQUIRE_HASHES too) */
	ml_python_preference python_preference; /* managed (default), system, only-managed,
	                                         * only-system (uv's names) */
	ml_link_method link;                    /* how files are placed from the unpacked cache */
	ml_framework_opts framework;            /* the framework smoke test's sizes */
	/* The lock on target when the caller holds it already (mlsetup's
	 * main takes it for the command); NULL: ml_install takes it
	 * (ml_env_lock, waiting unless no_wait) and releases it. */
	ml_envlock *lock;
	ml_install_event_fn on_event; /* may be NULL */
	void *event_data;
} ml_install_opts;

#define ML_INSTALL_OPTS_INIT                                                                       \
	{                                                                                          \
		.fetch = ML_FETCH_OPTS_INIT, .link = ML_LINK_AUTO,                                 \
		.framework = ML_FRAMEWORK_OPTS_INIT                                                \
	}

/* What an install did, as far as it got. */
typedef struct ml_install_result {
	ml_machine *machine;            /* NULL when detect did not run */
	ml_plan *plan;                  /* NULL when planning did not finish */
	char target[ML_PATH_MAX];       /* absolute target; "" before it was locked */
	ml_python_info python;          /* the interpreter; version "" when not reached */
	bool python_cached;             /* the pinned interpreter was unpacked already */
	char python_source[16];         /* "managed" (pinned, fetched or unpacked before),
	                                 * "system" (found on this machine) or "path"
	                                 * (--python PATH); "" when not reached */
	char python_reason[512];        /* why this interpreter, when not the plain choice
	                                 * (a fallback: the loud warning's text); "" else */
	char resolved_lock[4096];       /* a file without hashes: where pip's resolution was
	                                 * saved as a lock (under the cache); "" else */
	bool up_to_date;                /* the target already was this plan: nothing done */
	bool committed;                 /* a new environment was put in place */
	bool report_written;            /* <target>/mlsetup-report.json is this run's */
	double seconds[ML_STAGE_COUNT]; /* per stage */
	uint64_t n_downloaded;          /* files fetched over the network */
	uint64_t bytes_downloaded;      /* bytes received */
	uint64_t n_from_cache;          /* files the cache already held */
	bool *from_cache;               /* plan->n_files, or NULL before fetching */
	ml_wheel_result *wheels;        /* plan->n_files, or NULL before building */
	ml_audit *audit;                /* the audit before building; NULL: none */
	ml_import_check *imports;       /* NULL when not run */
	ml_verification *gpu;           /* the GPU checks; NULL when not run */
	struct cJSON *report;           /* the "mlsetup.report/1" document of this run
	                                 * (ml_report_build), also for a failed run */
} ml_install_result;

/* Builds a verified environment at opts->target:
 *
 *   detect (ml_detect; with require_gpu no GPU is ML_EGPU) -> plan
 *   (ml_plan_make with opts->python_preference; nothing fits:
 *   ML_EUNSUPPORTED with the reason and remedy) -> the target's lock ->
 *   nothing to do when the target's report matches the plan
 *   (ml_report_matches_plan; unless reinstall) -> index sources
 *   (ml_index_config_for_manifest; a lock file needs none) -> the
 *   interpreter (an existing one, or the pinned archive fetched, verified
 *   and unpacked once; with preference managed, a network failure plans
 *   again with a fitting CPython found on the machine: a WARNING, and
 *   python_source "system" with python_reason) -> the plan completed by
 *   the plan stage through a provider install fills from fetch's and
 *   verify's functions (ml_plan_complete): a file without hashes resolved
 *   by the interpreter's pip (ml_pip_resolve; the resolution saved as a
 *   lock under the cache, resolved_lock, said in a WARNING; a shipped
 *   manifest without hashes, the Windows set, is resolved once: later runs
 *   with the same interpreter take the files from the lock its first run
 *   kept, trusted on first use), files named by hash only looked up on the
 *   indexes (ML_EINTEGRITY when no file has a listed hash), unknown sizes
 *   asked of the servers -> every wheel not yet unpacked in
 *   the cache fetched and verified (ml_fetch_resolve, ml_fetch_all), and
 *   each one, as soon as it is verified and while the rest download, the
 *   audit of a requested binary wheel for this machine's GPUs and then
 *   unpacking into the cache (ml_unpack_queue; a wheel a GPU cannot run
 *   is never extracted: ML_EGPU, unless force; decided by
 *   ml_audit_status) -> a venv built in a staging directory beside the
 *   target, the wheels linked in from the unpacked cache
 *   (ml_wheels_install_all), optional bytecode, the
 *   environment's lock file pylock.toml (ml_pylock_write), and the atomic
 *   swap into place (ml_env_stage_commit) -> the import check
 *   (ml_verify_imports) and, when the plan has torch, the GPU checks
 *   (ml_verify_env; their verdict decides the code:
 *   ml_verification_status) -> the report (ml_report_build), written into
 *   the environment when this run put it in place.
 *
 * A failed run leaves an existing environment untouched. res is filled as
 * far as the run got, on success and on failure alike (a failed run has a
 * report too); release it with ml_install_result_release() in both cases.
 * Returns 0 or the ML_E* code of the first failure (ML_EUNSUPPORTED,
 * ML_EGPU, ML_EINTEGRITY, ML_ENET, ML_ENOENT, ML_EUSAGE, ML_EFAIL, ML_EIO,
 * ML_ENOMEM), with err describing it. */
int ml_install(ml_install_result *res, const ml_install_opts *opts, ml_err *err);

/* Frees what res holds and zeroes it. Accepts NULL. */
void ml_install_result_release(ml_install_result *res);

/* Plans an install without changing anything (`mlsetup plan`): detect and
 * plan as ml_install does (a project's candidates judged one by one, a git
 * project checked out into the cache, never into the working directory),
 * then, unless opts->offline, complete what the
 * manifest does not say itself: the files of requirements named by hash
 * only (from the indexes) and sizes a lock leaves out (from the file
 * servers). Index pages may be stored in the cache; nothing else is
 * written. Fills res->machine and res->plan as far as it got (also when
 * nothing fits: then ML_EUNSUPPORTED with the selection's problem and
 * remedy); release with ml_install_result_release(). Uses opts' manifest,
 * target, python, python_pins, cache_dir, sysroot, platform, index, fetch
 * (retries, timeouts), offline and on_event. Returns 0 or the first failure's ML_E*
 * code (ML_EUNSUPPORTED, ML_EINTEGRITY, ML_ENET, ML_ENOENT, ML_EPARSE,
 * ML_EFAIL, ML_ENOMEM). */
int ml_install_plan(ml_install_result *res, const ml_install_opts *opts, ml_err *err);

/* --- download ---------------------------------------------------------------- */

typedef struct ml_install_download_opts {
	const char *manifest;    /* the pinned, hashed manifest (required) */
	const char *dest;        /* directory the files go to (required) */
	const char *python;      /* plan for this X.Y; NULL: the pins' default */
	const char *platform;    /* plan for "OS-ARCH" (ml_plan_set_platform); NULL */
	const char *python_pins; /* interpreter pins file; NULL: $MLSETUP_PYTHON_PINS,
	                          * embedded */
	const char *cache_dir;   /* NULL: ml_cache_dir()'s default */
	const char *sysroot;     /* NULL: the live system */
	ml_index_flags index;    /* the command line's index options (borrowed) */
	ml_fetch_opts fetch;     /* jobs, retries, timeouts; the rest is the pipeline's
	                          * (as ml_install_opts.fetch) */
	bool offline;            /* the cache and local --find-links only; list what is missing */
	ml_install_event_fn on_event;
	void *event_data;
} ml_install_download_opts;

#define ML_INSTALL_DOWNLOAD_OPTS_INIT                                                              \
	{                                                                                          \
		.fetch = ML_FETCH_OPTS_INIT                                                        \
	}

typedef struct ml_install_download_result {
	ml_machine *machine; /* as planned for (after --platform) */
	ml_plan *plan;
	char cache_dir[4096]; /* the cache used */
	ml_download *items;   /* plan->n_files, in plan order: done, err, ... */
	size_t n_items;
	double seconds; /* the whole run */
} ml_install_download_result;

/* Fetches exactly the files the plan of opts->manifest chooses for this
 * machine (or opts->platform / opts->python) into the shared cache, each
 * proven (size and sha256), and places them in opts->dest
 * (ml_fetch_place), with index.html when every file was fetched. After a
 * partial failure the files that were fetched are placed all the same and
 * every item says what happened to it. res is filled as far as the run got
 * (as with ml_install); release with ml_install_download_result_release().
 * Returns 0; ML_EUNSUPPORTED (the manifest does not fit, or has no wheel
 * for the platform); ML_EUSAGE (bad platform); ML_ENOENT (files missing,
 * manifest missing), ML_EINTEGRITY, ML_ENET, ML_EIO, ML_EFAIL, ML_ENOMEM. */
int ml_install_download(ml_install_download_result *res, const ml_install_download_opts *opts,
                        ml_err *err);

/* Frees what res holds and zeroes it. Accepts NULL. */
void ml_install_download_result_release(ml_install_download_result *res);

/* --- lock -------------------------------------------------------------------- */

typedef struct ml_install_lock_opts {
	const char *input;          /* loose requirements (INPUT.in; required) */
	const char *name;           /* what messages call the input; NULL: input */
	const char *output;         /* the manifest to write (required) */
	const char *resolver;       /* interpreter whose pip resolves; NULL: python3 */
	const char *const *pythons; /* target X.Y versions; none: the input's header */
	size_t n_pythons;
	const char *const *platforms; /* target OS-ARCH; none: the input's header */
	size_t n_platforms;
	ml_index_flags index; /* the command line's index options (borrowed) */
	const char *command;  /* what the manifest's banner says made it; NULL:
	                       * `mlsetup lock INPUT -o OUTPUT` with the targets */
	ml_install_event_fn on_event;
	void *event_data;
} ml_install_lock_opts;

#define ML_INSTALL_LOCK_OPTS_INIT                                                                  \
	{                                                                                          \
		.input = NULL                                                                      \
	}

/* What a lock wrote. */
typedef struct ml_install_lock_result {
	size_t n_packages; /* pinned versions */
	size_t n_files;    /* wheel hashes recorded */
	size_t n_targets;  /* platform x Python targets */
} ml_install_lock_result;

/* Regenerates a pinned, hashed manifest from opts->input and the files
 * it includes with -r / -c (ml_requirements_load_tree; their index
 * options count as the input's): the targets (ml_lock_add_targets),
 * the index sources (ml_index_config_resolve: flags, environment, pip's
 * configuration, the input's own --index-url lines), pip's own resolver
 * once per target (ml_lock_resolve; a STEP event each), the sha256 and
 * size of every wheel of each pinned version from the indexes
 * (ml_fetch_lock_files; yanked files are a WARNING), the rendering
 * (ml_lock_render; the banner names the command as given, never index
 * URLs) and an atomic write of opts->output (ml_fs_write_atomic). A failed
 * run never leaves a half-written manifest. Fills *out on success.
 * Returns 0, or what the steps return (ML_EFAIL when pip fails, ML_ENET,
 * ML_EINTEGRITY, ML_EPARSE, ML_EUSAGE, ML_EIO, ML_ENOMEM). */
int ml_install_lock(ml_install_lock_result *out, const ml_install_lock_opts *opts, ml_err *err);

/* --- export ------------------------------------------------------------------ */

typedef struct ml_install_export_opts {
	const char *target; /* the environment; NULL: ".venv" */
	const char *format; /* "pylock" (NULL: the default) or "requirements" */
	const char *output; /* also write the result here (atomically); NULL: don't */
} ml_install_export_opts;

#define ML_INSTALL_EXPORT_OPTS_INIT                                                                \
	{                                                                                          \
		NULL, NULL, NULL                                                                   \
	}

/* The lock file of the environment at o->target (<target>/pylock.toml,
 * which every install writes) in o->format: "pylock" gives the PEP 751
 * file byte for byte (after checking it parses, ml_pylock_parse),
 * "requirements" a hashed requirements file (ml_pylock_to_requirements).
 * With o->output the result is also written there. *out is a new string
 * (caller frees). Returns 0, ML_EUSAGE (unknown format), ML_ENOENT (no
 * lock file: not an environment mlsetup built, or an older one), ML_EPARSE,
 * ML_EUNSUPPORTED (a package without a wheel), ML_EIO, ML_ENOMEM. */
int ml_install_export(char **out, const ml_install_export_opts *o, ml_err *err);

/* --- bundle ------------------------------------------------------------------ */

typedef struct ml_install_bundle_opts {
	const char *dest; /* the bundle directory (required): must not exist, or be empty */
	/* Candidate manifests (NAME|PATH); none: the project's, else the
	 * shipped ones, every manifest selection.json can choose. */
	const char *const *manifests;
	size_t n_manifests;
	/* A project (--project PATH|GIT_URL[@REV], as ml_install_opts):
	 * its candidates, as install finds them (the manifests above, each
	 * found in the project directory when not as given, else
	 * ml_project_candidates()); a git URL is checked out into the cache
	 * as plan does. NULL: none. */
	const char *project;
	const char *resolver;       /* interpreter whose pip locks a manifest that pins no
	                             * hashes (ml_install_lock); NULL: python3 */
	const char *const *pythons; /* CPython X.Y to bundle for; none: the pins' default */
	size_t n_pythons;
	const char *platform;      /* "OS-ARCH" (ml_plan_set_platform); NULL: this machine's */
	const char *python_pins;   /* pins file; NULL: $MLSETUP_PYTHON_PINS, embedded */
	const char *python_mirror; /* as ml_install_opts; NULL: $MLSETUP_PYTHON_MIRROR */
	const char *self;          /* the mlsetup binary to bundle; NULL: /proc/self/exe */
	const char *cache_dir;     /* NULL: ml_cache_dir()'s default */
	const char *sysroot;       /* NULL: the live system */
	ml_index_flags index;      /* the command line's index options (borrowed) */
	ml_fetch_opts fetch;       /* jobs, retries, timeouts; the rest is the pipeline's
	                            * (as ml_install_opts.fetch) */
	bool offline;              /* the cache and local --find-links only */
	ml_install_event_fn on_event;
	void *event_data;
} ml_install_bundle_opts;

#define ML_INSTALL_BUNDLE_OPTS_INIT                                                                \
	{                                                                                          \
		.fetch = ML_FETCH_OPTS_INIT                                                        \
	}

/* What a bundle holds. */
typedef struct ml_install_bundle_result {
	char dest[ML_PATH_MAX]; /* the bundle, absolute; "" until it is in place */
	char platform[48];      /* "linux-x86_64" */
	size_t n_plans;         /* manifest x Python plans bundled */
	size_t n_skipped;       /* plans left out: no wheels for the platform */
	size_t n_locked;        /* manifests that pinned no hashes, locked with pip */
	size_t n_files;         /* distinct wheel files */
	uint64_t bytes;         /* their bytes */
	size_t n_interpreters;  /* interpreter archives bundled */
	bool release_binary;    /* the bundled mlsetup is a release build */
	double seconds;         /* the whole run */
	struct cJSON *record;   /* DIR/bundle.json's "mlsetup.bundle/1" document;
	                         * NULL until it is made */
} ml_install_bundle_result;

/* Writes a bundle: a directory that installs offline with its own mlsetup
 * (DIR/install.sh [install options]) and that, copied to any static web
 * server, is the index and interpreter mirror a fleet installs from:
 *
 *   DIR/mlsetup            the running binary (opts->self), a WARNING when
 *                          it is not a release build (ml_version_build())
 *   DIR/manifests/NAME     every candidate manifest, as planned: one that
 *                          pins no hashes is locked first by pip for the
 *                          platform and every Python bundled
 *                          (ml_install_lock(), opts->resolver; a STEP
 *                          event; pip failing for it leaves it out with a
 *                          WARNING; --offline leaves it out)
 *   DIR/files/             every wheel the plans need, each proven (size,
 *                          sha256) through the shared cache (one
 *                          ml_install_download() per manifest and Python,
 *                          --platform applied; a plan with no wheels for
 *                          the platform is left out with a WARNING), and
 *                          files/index.html (a --find-links page)
 *   DIR/simple/            a static PEP 503 index of those files
 *                          (ml_fetch_place_simple(); relative links)
 *   DIR/python/            the pins (pins.json) and each plan's pinned
 *                          interpreter archive at the path a
 *                          --python-mirror of DIR/python serves it from;
 *                          an archive that cannot be fetched is a WARNING
 *                          (the target then needs --python PATH)
 *   DIR/install.sh         runs DIR/mlsetup install --offline from the
 *                          bundle only, after checking the sha256 of the
 *                          binary, manifests and pins, with every bundled
 *                          manifest (given or a project's) as a candidate
 *                          in preference order; passes its arguments on
 *                          (packaging/bundle-install.sh)
 *   DIR/bundle.json        the record: the project (url, rev, commit),
 *                          every manifest (locked or not), every plan's
 *                          files with sha256
 *
 * The directory is built beside DIR and renamed into place when complete,
 * so a failed run leaves no DIR. res is filled as far as the run got;
 * release with ml_install_bundle_result_release(). Returns 0;
 * ML_EUSAGE (DIR exists and is not empty, two manifests of one base
 * name, a bad platform, a bad project URL or REV); ML_EUNSUPPORTED (no
 * plan has wheels for the platform); ML_EINTEGRITY (two files of one name
 * and different bytes, or a download that did not match); ML_ENOENT (also
 * a project that is not a directory or has no candidate: err names it and
 * what to add), ML_ENET (also a git URL that cannot be cloned), ML_EIO,
 * ML_EPARSE, ML_EFAIL, ML_ENOMEM. DIR is untouched by a failure. */
int ml_install_bundle(ml_install_bundle_result *res, const ml_install_bundle_opts *opts,
                      ml_err *err);

/* Frees what res holds and zeroes it. Accepts NULL. */
void ml_install_bundle_result_release(ml_install_bundle_result *res);

#endif /* MLSETUP_INSTALL_H */
