/*
 * internal.h - what only the install pipeline's source files share: the
 * state of one install in progress, the helpers every step uses (run.c:
 * events, stage timing, options), and the steps the pipelines call, each
 * under the name of its file. Nothing here is public API; names start
 * with mli_.
 */
#ifndef MLSETUP_INSTALL_INTERNAL_H
#define MLSETUP_INSTALL_INTERNAL_H

#include "mlsetup/install.h"

/* Sends events to a pipeline's on_event callback, stamped with the stage
 * the pipeline is in. */
typedef struct mli_events {
	ml_install_event_fn fn; /* may be NULL */
	void *data;
	ml_install_stage stage; /* the stage now running */
	double t0;              /* when its span began (monotonic seconds) */
} mli_events;

/* interpreter.c: the groundwork laid while the wheels download. */
typedef struct mli_prep mli_prep;

/* One install in progress. */
typedef struct mli_run {
	const ml_install_opts *o;
	ml_install_result *res;
	mli_events ev;
	ml_envlock *lock; /* the lock on the target (o->lock, or own_lock) */
	ml_envlock *own_lock;
	ml_cache *cache;
	ml_index_config *cfg;
	ml_env_stage *stage;
	ml_download *items; /* n_items (plan->n_files), the wheels as fetched */
	size_t n_items;
	/* Unpacked while the rest downloaded (ml_unpack_queue), per plan file:
	 * early_ok[i] says early[i] holds the result. audits[i]: the GPU
	 * audit of file i made before it was unpacked, or NULL. */
	ml_unpacked *early;
	bool *early_ok;
	ml_audit **audits;
	size_t n_wheels_done;
	/* The early audit refused a wheel (ML_EGPU, no --force): the fetch
	 * stopped there, and files it did not fetch are not audited. */
	bool refused;
	char interpreter[4096]; /* the path the environment's python runs */
	/* The pinned interpreter unpacked and the venv skeleton made while
	 * the wheels download (mli_prep_*); env_ready: r->stage holds the
	 * skeleton and env describes it. */
	mli_prep *prep;
	ml_env_layout env;
	bool env_ready;
	bool planning;          /* ml_install_plan: change nothing outside the cache */
	bool warnings_deferred; /* mli_select left the selection's warnings to
	                         * mli_resolve: the file is resolved (and its torch
	                         * build perhaps chosen) first, which may change them */
	/* A project (o->project or several o->manifests): o points at proj_opts,
	 * the caller's options with the target (and, once chosen, the manifest)
	 * filled in. */
	ml_install_opts proj_opts;
	char proj_dir[4096];    /* where its candidates are read */
	char proj_target[4096]; /* <checkout>/.venv */
	char **cands;           /* candidate paths, in preference order */
	size_t n_cands;
	ml_project_info *project;
} mli_run;

/* --- run.c: what every step shares ----------------------------------------- */

/* Monotonic time in seconds. */
double mli_now(void);

/* Sends ev (kind and payload set by the caller) with ev->stage filled. */
void mli_emit(mli_events *e, ml_install_event *ev);

/* Sends a WARNING, DETAIL or STEP event with printf-style text. */
void mli_say(mli_events *e, ml_install_event_kind kind, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Begins a span of stage st (STAGE_BEGIN). */
void mli_stage_begin(mli_events *e, ml_install_stage st);

/* Ends the span (STAGE_END with its seconds and rc), adds its seconds to
 * *total when non-NULL, and returns rc. */
int mli_stage_end(mli_events *e, double *total, int rc);

/* Runs call as a span of stage st of run r: rc = the call's result. */
#define MLI_STAGE(r, st, call)                                                                     \
	(mli_stage_begin(&(r)->ev, (st)), mli_stage_end(&(r)->ev, &(r)->res->seconds[(st)], (call)))

/* The fetch options of a pipeline run (install, download, bundle): the
 * caller's jobs, retries and timeouts (opts, the commands' nested
 * ml_fetch_opts), the index configuration's trusted hosts and CA bundle
 * (cfg, may be NULL), offline, and progress forwarded as FETCH events to
 * ev (NULL: none); no on_file or stop callback. */
void mli_fetch_opts_for(ml_fetch_opts *fo, const ml_fetch_opts *opts, const ml_index_config *cfg,
                        bool offline, mli_events *ev);

/* mli_fetch_opts_for() for an install: its options, configuration and
 * events. */
void mli_fetch_opts(ml_fetch_opts *fo, mli_run *r);

/* The forwarding callback for ml_fetch_opts.on_progress; data is an
 * mli_events. */
void mli_forward_fetch(const ml_fetch_progress *p, void *data);

/* The plan options of an install's options. */
void mli_plan_opts(ml_plan_opts *po, const ml_install_opts *o);

/* True when o names a project (--project, or several --manifest options):
 * its candidates are checked out or listed, and one is chosen. */
bool mli_is_project(const ml_install_opts *o);

/* The interpreter the plan has on this machine without fetching anything:
 * the one it names (pp->path), else the pinned one when it is unpacked
 * already (its path written into buf, sz bytes); NULL when neither. The
 * result is pp's or buf's, valid while they are. */
const char *mli_plan_python(const ml_python_plan *pp, char *buf, size_t sz);

/* r->cfg for the plan's manifest (ml_index_config_for_manifest; a lock
 * file needs no index; pip's default asked of r->interpreter, else of
 * mli_plan_python()). */
int mli_index_config(mli_run *r, ml_err *err);

/* --- select.c: the machine, and what to install on it ---------------------------- */

/* Detects the machine (a detect span; --platform for planning only; with
 * require_gpu, no GPU is ML_EGPU) and sends the MACHINE event. */
int mli_detect(mli_run *r, ml_err *err);

/* Plans the manifest (a plan span), or chooses a project's candidate
 * (mli_project_choose); nothing fits is ML_EUNSUPPORTED with the reason
 * and remedy. Sends the PLAN event and the selection's warnings, and the
 * plan's when it is complete (else mli_resolve() says them). */
int mli_select(mli_run *r, ml_err *err);

/* Says the selection's warnings mli_select() deferred (warnings_deferred),
 * once; nothing when none were. */
void mli_say_deferred(mli_run *r);

/* project.c: finds the project src names (ml_project_source_parse) and
 * puts the directory its candidates are read from into dir (dir_sz
 * bytes): a local directory as it is (its commit recorded when it is a
 * git checkout), or a git URL checked out (ml_git_checkout, under http's
 * proxy, CA and credential rules; may be NULL) at checkout, never
 * overwriting what is there, or, when checkout is NULL, into the
 * cache (<cache_dir>/projects/<16 hex of the URL>-<name>, replaced there
 * when it is not a clean checkout at REV: install and plan share it).
 * STEP events on ev say what is checked out or reused. *out is a new
 * record of the project (url, rev, commit, path; caller frees with
 * ml_project_info_free()); NULL on failure. Returns 0, ML_ENOENT (no
 * such directory), what ml_git_checkout() returns (ML_EUSAGE, ML_ENET,
 * ML_EFAIL, ...), ML_EFAIL (no cache directory, a path too long) or
 * ML_ENOMEM. */
int mli_project_locate(ml_project_info **out, char *dir, size_t dir_sz,
                       const ml_project_source *src, const char *checkout, const char *cache_dir,
                       const ml_http_opts *http, mli_events *ev, ml_err *err);

/* project.c: a project's candidates, in preference order: manifests
 * (--manifest values, n_manifests > 0), each as given when that path
 * exists, else found in dir ("" or NULL: no project directory); with no
 * manifests, the project's own (ml_project_candidates() of dir, which sets
 * *no_torch). *out is a new array of new strings (caller frees each and
 * the array). Returns 0, what ml_project_candidates() returns (ML_ENOENT
 * naming the directory and what was looked for, ML_EPARSE, ML_EIO), or
 * ML_ENOMEM. */
int mli_project_list(char ***out, size_t *n_out, bool *no_torch, const char *dir,
                     const char *const *manifests, size_t n_manifests, ml_err *err);

/* project.c: for a project or several --manifest options, before detect:
 * the project checked out (a git URL) or found (a directory), its
 * candidates listed, and r->o pointed at r->proj_opts with the target
 * defaulting to <project>/.venv. */
int mli_project_open(mli_run *r, ml_err *err);

/* project.c: after detect: each candidate planned, its torch build learnt
 * (the table, else its torch wheel fetched into the cache and audited)
 * and judged by the selection rules until one fits; res->plan is that
 * candidate's plan with every candidate's verdict and the project, or,
 * when none fits, a plan whose selection names none (problem, remedy). */
int mli_project_choose(mli_run *r, ml_err *err);

/* project.c: frees what mli_project_open() left in r. */
void mli_project_release(mli_run *r);

/* --- resolve.c: the plan completed through a provider ----------------------------- */

/* The provider install gives the plan (ml_plan_provider): fetch's lookups
 * (ml_fetch_list_projects), sizes (ml_http_sizes) and resolver
 * (ml_fetch_resolve_requirements), one file fetched (ml_fetch_resolve,
 * ml_fetch_all: timed as fetch spans into seconds when it is non-NULL),
 * verify's audit of a torch wheel (ml_torch_build_from_wheel), and notes
 * sent to ev as STEP and WARNING events. mli_provider_init() fills pv
 * and x (pv's data); both must outlive pv's use. */
/* uv for a provider's resolutions, looked for once (uvtool.c). */
typedef struct mli_uv {
	bool tried;         /* looked for already */
	ml_uv_tool tool;    /* tool.path NULL: pip resolves */
	char path[4608];    /* the executable */
	char version[32];   /* "0.13.9" */
	char cache_dir[4200]; /* <cache>/uv */
} mli_uv;

typedef struct mli_provider {
	const ml_index_config *cfg; /* may be NULL: no sources */
	ml_cache *cache;
	ml_fetch_opts fo;
	mli_events *ev;
	double *seconds; /* a run's stage seconds, or NULL */
	mli_uv uv;       /* the resolver, found on the first resolution */
} mli_provider;

void mli_provider_init(ml_plan_provider *pv, mli_provider *x, const ml_index_config *cfg,
                       ml_cache *c, const ml_fetch_opts *fo, mli_events *ev, double *seconds);

/* uv for x's resolutions (uvtool.c), looked for on the first call only:
 * MLSETUP_RESOLVER=pip: none; MLSETUP_UV=PATH: that uv (its --version
 * asked); else the wheel pinned in resolver.json for this platform,
 * unpacked in x's cache, fetched there first by python's pip from x's
 * indexes when it is not there yet (said as a STEP), checked by size,
 * sha256 and RECORD. NULL, with a STEP said once, when uv cannot be
 * had (offline, no cache, no pin, the download or check failed): pip
 * resolves. The tool lives in x. */
const ml_uv_tool *mli_uv_tool(mli_provider *x, const char *python);

/* mli_provider_init() for run r: its configuration, cache, fetch
 * options, events and stage seconds. */
void mli_provider_for(ml_plan_provider *pv, mli_provider *x, mli_run *r);

/* The resolve step's work, for an install or plan run: the plan completed
 * (ml_plan_complete) with python's resolver when the manifest pins no
 * hashes (python NULL: only a warning that it waits for the interpreter),
 * a shipped manifest's first lock taken again (r->res->resolved_lock),
 * the plan's warnings said, and a new resolution saved as a lock in the
 * cache (mli_save_resolution), said loudly. */
int mli_resolve(mli_run *r, const char *python, ml_err *err);

/* interpreter.c: the environment's interpreter, probed into r->res->python:
 * --python PATH as is, or the pinned archive fetched, verified and
 * unpacked once into the shared interpreter directory. */
int mli_interpreter(mli_run *r, ml_err *err);

/* interpreter.c: for a complete plan whose pinned interpreter is not
 * unpacked yet (and not --offline): prepares its archive's download to go
 * with the wheels' (mli_prep_download) and returns 1; mli_prep_finish()
 * then takes the place of mli_interpreter(). Returns 0 when the
 * interpreter is found as before (mli_interpreter()), or an error. */
int mli_interpreter_defer(mli_run *r, ml_err *err);

/* interpreter.c: the pinned archive's download to fetch with the wheels
 * (the last item), or NULL; owned by r. */
ml_download *mli_prep_download(mli_run *r);

/* interpreter.c: starts the worker thread that unpacks and probes the
 * fetched interpreter (when deferred: archive is the verified archive's
 * path in the cache; NULL otherwise) and then begins the staging
 * directory and creates the venv skeleton (r->stage, r->env,
 * r->env_ready). Called when the archive is verified, or at the start of
 * the fetch when nothing is deferred; at most one worker runs. A worker
 * that cannot start leaves the work to mli_prep_finish / mli_build_env. */
void mli_prep_start(mli_run *r, const char *archive);

/* interpreter.c: moves the fetched archive's download *d back into r's
 * groundwork (releases it when there is none) and zeroes *d. */
void mli_prep_fetched(mli_run *r, ml_download *d);

/* interpreter.c: waits for the worker; when the interpreter was deferred,
 * its result as mli_interpreter() gives it (r->interpreter, res->python;
 * a network failure falls back to a CPython of this machine and plans
 * again, as there). Returns 0 or an error. */
int mli_prep_finish(mli_run *r, ml_err *err);

/* interpreter.c: waits for the worker if it still runs and frees the
 * groundwork's state (not r->stage). */
void mli_prep_release(mli_run *r);

/* wheels.c: every wheel not yet unpacked in the cache, fetched and
 * verified into r->items; each one, as it arrives, audited (a requested
 * binary wheel, when the machine has GPUs: r->audits) and unpacked into
 * the cache (r->early, r->early_ok) while the rest download. A wheel a GPU
 * cannot run stops all unpacking before it is extracted. */
int mli_fetch_wheels(mli_run *r, ml_err *err);

/* wheels.c: frees what mli_fetch_wheels() left in r (items, early
 * results, audits; not res->from_cache) and zeroes it. */
void mli_fetch_forget(mli_run *r);

/* wheels.c: the audit of the requested packages' binary wheels for the
 * machine's GPUs (those audited while downloading and the rest), merged
 * into r->res->audit, before anything is installed. */
int mli_audit_before_build(mli_run *r, ml_err *err);

/* wheels.c: the venv in a staging directory, every wheel installed, the
 * optional bytecode, the lock file, and the atomic swap into place. */
int mli_build_env(mli_run *r, ml_err *err);

/* lockfile.c: writes <dir>/pylock.toml for the plan as installed (each
 * wheel's URL from the manifest, this run's download or the cache's
 * record), warning about wheels whose URL is unknown. */
int mli_write_pylock(mli_run *r, const char *dir, ml_err *err);

/* report.c: the run's report as far as it got (ml_report_build), with
 * status rc (0 or ML_E*, err its failure) or, unverified, "unverified".
 * Returns a new document (cJSON_Delete) or NULL when out of memory. */
struct cJSON *mli_report_build(mli_run *r, int rc, const ml_err *err, bool unverified);

/* Writes the run's report so far into dir (the staging tree), with status
 * "unverified": an environment is never committed without a report, and a
 * run killed while it verifies leaves one that says it did not finish (a
 * later install does not take that environment as up to date). The final
 * report replaces it. Returns 0, ML_ENOMEM, ML_EIO. */
int mli_write_report_unverified(mli_run *r, const char *dir, ml_err *err);

/* lockfile.c: where the resolution of r's manifest (one that pins no
 * hashes) is kept, into path (sz bytes): <cache>/resolved/<name>-<12
 * hex>.pylock.toml, the hex naming the file (a shipped manifest: its
 * embedded name and the sha256 of its text, so a new mlsetup with other
 * pins resolves again), the interpreter (r->res->python) and the
 * platform. Returns 0, ML_ENOMEM or ML_EFAIL (too long). */
int mli_resolution_lock(char *path, size_t sz, mli_run *r, ml_err *err);

/* lockfile.c: saves the plan's resolution (by pi's pip) as that lock
 * (r->res->resolved_lock; "" when it could not be written) and says so in
 * a WARNING. Returns 0, or what rendering or writing it failed with. */
int mli_save_resolution(mli_run *r, const ml_pip_info *pi, ml_err *err);

/* --- requirements given as arguments (args.c) ------------------------------- */

/* Runs run(res, o, err), or, when o names requirements as arguments, run
 * with a copy of o whose manifest is a requirements file of them: each is
 * checked (one PEP 508 requirement; ML_EUSAGE naming it otherwise, or
 * when --manifest or --project is given too) and written into a new
 * temporary directory, removed when run returns. Returns what run
 * returns, or ML_EUSAGE, ML_EIO, ML_ENOMEM (*res zeroed, nothing run). */
int mli_args_run(ml_install_result *res, const ml_install_opts *o,
                 int (*run)(ml_install_result *, const ml_install_opts *, ml_err *), ml_err *err);

#endif
