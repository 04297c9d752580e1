/*
 * install.c - the install pipeline as one library call, one straight
 * sequence of steps: the project's checkout -> detect -> select -> the
 * target locked -> interpreter -> resolve -> fetch -> audit -> env ->
 * verify -> report. Each step is a function that skips, inside itself,
 * what it need not do (and says why: once the environment is found up to
 * date, every step after it has nothing to do); their work lives in the
 * steps' files (project.c, select.c, interpreter.c, resolve.c, wheels.c)
 * and the helpers they share in run.c, none of which calls back into this
 * file. Times each stage, reports progress as events, and builds the
 * report of the run, written into the environment when this run put it
 * in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/report.h"

/* True when the target is a complete environment whose report shows this
 * very plan: then there is nothing to do. */
static bool already_up_to_date(const mli_run *r)
{
	if (!ml_env_is_complete(r->res->target))
		return false;
	ml_report *rep = NULL;
	if (ml_report_read(&rep, r->res->target, NULL) != 0)
		return false;
	bool same = ml_report_matches_plan(rep, r->res->plan);
	ml_report_free(rep);
	return same;
}

static bool plan_has(const ml_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, name) == 0)
			return true;
	return false;
}

/* Starts the import check of every top-level module of the installed
 * distributions (ml_verify_imports_start): its interpreters run while the
 * GPU checks do. With gpu_checks, the modules that need torch are kept
 * back for the torch smoke test to import after its checks. */
static int start_imports(mli_run *r, ml_import_run **run, bool gpu_checks, ml_err *err)
{
	ml_install_result *res = r->res;
	const ml_plan *p = res->plan;
	ml_import_dist *dists = calloc(p->n_files ? p->n_files : 1, sizeof(*dists));
	if (!dists)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_files; i++)
		dists[i] = (ml_import_dist){res->wheels[i].name, res->wheels[i].dist_info,
		                            p->files[i].requested};
	/* one core is the GPU checks' while the imports run */
	int cores = ml_os_cpu_count();
	unsigned jobs = gpu_checks && cores > 1 ? (unsigned)cores - 1 : 0;
	int rc = ml_verify_imports_start(run, res->target, res->python.xy, dists, p->n_files, jobs,
	                                 gpu_checks, err);
	free(dists);
	return rc;
}

/* Every top-level module of the installed distributions imports: waits
 * for the check start_imports() began and says what failed. */
static int check_imports(mli_run *r, ml_import_run *run, ml_err *err)
{
	ml_install_result *res = r->res;
	ml_install_event ev = {.kind = ML_EV_CHECK_BEGIN, .text = "imports"};
	mli_emit(&r->ev, &ev);
	int rc = ml_verify_imports_finish(&res->imports, run, err);
	if (rc)
		return rc;
	const ml_import_check *c = res->imports;
	for (size_t i = 0; !c->run_rc && i < c->n_modules; i++) {
		const ml_import_result *m = &c->modules[i];
		if (!m->ok)
			mli_say(&r->ev, m->requested ? ML_EV_WARNING : ML_EV_DETAIL,
			        "'import %s' (%s) failed: %s", m->module, m->distribution,
			        m->error);
	}
	rc = ml_import_check_status(c, err);
	if (rc && !c->run_rc)
		ml_err_hint(err, "see the warnings above; the environment is in place at '%s'",
		            res->target);
	ev = (ml_install_event){.kind = ML_EV_CHECK_END, .text = "imports", .ok = rc == 0};
	mli_emit(&r->ev, &ev);
	return rc;
}

/* Forwards ml_verify_env's steps as VERIFY_STEP events. */
static void forward_step(const ml_verify_step *step, void *data)
{
	ml_install_event ev = {.kind = ML_EV_VERIFY_STEP, .verify_step = step, .text = step->name};
	mli_emit(data, &ev);
}

/* The GPU checks of the new environment; their verdict decides. The
 * torch smoke test imports the import check's share that needs torch
 * after its checks (ml_verify_imports_held): torch loads once. */
static int check_gpu(mli_run *r, ml_import_run *run, ml_err *err)
{
	ml_install_result *res = r->res;
	ml_install_event ev = {.kind = ML_EV_CHECK_BEGIN, .text = "gpu"};
	mli_emit(&r->ev, &ev);
	ml_verify_env_opts vo = ML_VERIFY_ENV_OPTS_INIT;
	vo.target = res->target;
	vo.manifest = res->plan->selection->manifest->name;
	vo.root = r->o->sysroot;
	vo.require_gpu = r->o->require_gpu;
	vo.framework = r->o->framework;
	vo.on_step = forward_step;
	vo.step_data = &r->ev;
	vo.framework.n_imports =
	        ml_verify_imports_held(run, &vo.framework.imports, &vo.framework.import_claims);
	int rc = ml_verify_env(&res->gpu, res->machine, &vo, err);
	if (res->gpu && res->gpu->framework_ran &&
	    ml_verify_imports_answer(run, res->gpu->framework.imports) && !rc)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc)
		rc = ml_verification_status(res->gpu, err);
	ev = (ml_install_event){
	        .kind = ML_EV_CHECK_END, .text = "gpu", .ok = rc == 0, .verification = res->gpu};
	mli_emit(&r->ev, &ev);
	return rc;
}


/* The checks of the new environment, one span of the verify stage: every
 * package imports and, when the plan has torch, the GPU checks. The
 * import check's interpreters start first and run while the GPU checks
 * do (both mostly load libraries: every core is used); an import failure
 * is still the answer when both fail, as when they ran one after the
 * other. */
static int check_env(mli_run *r, ml_err *err)
{
	bool torch = plan_has(r->res->plan, "torch");
	ml_import_run *run = NULL;
	int rc = start_imports(r, &run, torch && !r->o->gpus, err);
	if (rc)
		return rc;
	int gpu_rc = 0;
	ml_err gpu_err = ML_ERR_INIT;
	if (torch && !r->o->gpus)
		gpu_rc = check_gpu(r, run, &gpu_err);
	rc = check_imports(r, run, err);
	if (!rc && torch && r->o->gpus)
		mli_say(&r->ev, ML_EV_WARNING,
		        "the GPU checks are for the GPUs given with --gpu (%s), which are not "
		        "this machine's: run 'mlsetup verify --target %s' where they are",
		        r->o->gpus, r->res->target);
	if (!rc && gpu_rc) {
		*err = gpu_err;
		rc = gpu_rc;
	}
	return rc;
}

/* Builds the report of the run; writes it into the environment when this
 * run put the environment in place (a failed run leaves an existing one
 * untouched, its report included). */
static void report(mli_run *r, int rc, const ml_err *err)
{
	ml_install_result *res = r->res;
	res->committed = r->stage && r->stage->committed;
	res->report = mli_report_build(r, rc, err, false);
	if (!res->committed || !res->report)
		return;
	ml_err werr = ML_ERR_INIT;
	if (ml_report_write(res->target, res->report, &werr) == 0)
		res->report_written = true;
	else
		mli_say(&r->ev, ML_EV_WARNING, "%s", werr.msg);
}

/* Sets res->up_to_date when the target already is this plan's
 * environment (and no --reinstall): every later step then skips. */
static void check_up_to_date(mli_run *r)
{
	if (!r->o->reinstall && already_up_to_date(r))
		r->res->up_to_date = true;
}

/* --- the steps ------------------------------------------------------------------ */

/* The target locked for the rest of the run (o->lock, or a lock of this
 * run's). A complete plan is checked against the environment there at
 * once: up to date, not even the interpreter is fetched. */
static int lock_target(mli_run *r, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	int rc;
	r->lock = r->o->lock;
	if (!r->lock && (rc = ml_env_lock(&r->own_lock, p->target, !r->o->no_wait, err)) != 0)
		return rc;
	if (!r->lock)
		r->lock = r->own_lock;
	ml_strlcpy(r->res->target, ml_env_lock_target(r->lock), sizeof(r->res->target));
	if (ml_plan_is_complete(p) && p->python.version[0])
		check_up_to_date(r);
	return 0;
}

/* The interpreter is of the version the plan is for. */
static int interpreter_fits(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	if (strcmp(res->python.xy, res->plan->python.xy) != 0)
		return ml_err_set(err, ML_EFAIL,
		                  "interpreter '%s' is Python %s, the plan wanted %s",
		                  r->interpreter, res->python.xy, res->plan->python.xy);
	return 0;
}

/* The cache and the index configuration opened, then the environment's
 * interpreter: an existing one, the pinned one unpacked already, or the
 * pinned archive fetched and unpacked. A complete plan needs no
 * interpreter to be resolved: its pinned archive is left to come with
 * the wheels (fetch()) and is unpacked by a worker while they download. */
static int interpreter(mli_run *r, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	if (r->res->up_to_date)
		return 0; /* the environment is up to date */
	int rc = ml_cache_open(&r->cache, p->cache_dir, ML_CACHE_SHARED, err);
	if (rc)
		return rc;
	rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_index_config(r, err));
	/* No index named, and nothing here to tell pip's default: no python3
	 * on PATH (Windows; a slim container a cloud script runs in). The
	 * pinned interpreter, which ships pip, then comes first and is asked. */
	bool index_waits = rc == ML_ENOENT && !p->python.path;
	if (index_waits) {
		ml_err_clear(err);
		rc = 0;
	}
	if (!rc && !index_waits && ml_plan_is_complete(p) &&
	    (rc = mli_interpreter_defer(r, err)) != 0)
		return rc < 0 ? rc : 0; /* 1: fetched with the wheels */
	if (!rc)
		rc = MLI_STAGE(r, ML_STAGE_INTERPRETER, mli_interpreter(r, err));
	if (!rc && index_waits)
		rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_index_config(r, err));
	return rc ? rc : interpreter_fits(r, err);
}

/* The plan completed where the manifest does not describe it (resolved
 * by the interpreter's pip, files looked up, sizes asked: resolve.c),
 * then checked against the environment in the target. */
static int resolve(mli_run *r, ml_err *err)
{
	if (r->res->up_to_date)
		return 0; /* the environment is up to date */
	int rc = 0;
	if (!ml_plan_is_complete(r->res->plan)) /* else nothing to resolve */
		rc = MLI_STAGE(r, ML_STAGE_PLAN, mli_resolve(r, r->interpreter, err));
	if (!rc)
		check_up_to_date(r);
	return rc;
}

/* Every wheel not unpacked in the cache yet fetched, each unpacked while
 * the rest download (wheels.c), with the pinned interpreter when it was
 * left to come with them. When that interpreter cannot be had and one
 * found on this machine takes its place, the plan was made anew for it:
 * what was fetched is let go, and the new plan resolved and fetched. */
static int fetch(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	if (res->up_to_date)
		return 0; /* the environment is up to date */
	const ml_plan *planned = res->plan;
	bool with_interpreter = mli_prep_download(r) != NULL;
	int rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_fetch_wheels(r, err));
	if (!with_interpreter)
		return rc;
	ml_err perr = ML_ERR_INIT;
	int prc = MLI_STAGE(r, ML_STAGE_INTERPRETER, mli_prep_finish(r, rc ? &perr : err));
	if (rc || (prc && !r->refused)) /* a refusal: the audit says why */
		return rc ? rc : prc;
	if (r->refused || res->plan == planned)
		return 0;
	mli_fetch_forget(r);
	free(res->from_cache);
	res->from_cache = NULL;
	if ((rc = interpreter_fits(r, err)) != 0 || (rc = resolve(r, err)) != 0 || res->up_to_date)
		return rc;
	return MLI_STAGE(r, ML_STAGE_FETCH, mli_fetch_wheels(r, err));
}

/* The requested packages' binary wheels audited for this machine's GPUs
 * before anything is installed (wheels.c). */
static int audit(mli_run *r, ml_err *err)
{
	if (r->res->up_to_date)
		return 0; /* the environment is up to date */
	return MLI_STAGE(r, ML_STAGE_VERIFY, mli_audit_before_build(r, err));
}

/* The environment built beside the target and swapped into place
 * (wheels.c). */
static int build_env(mli_run *r, ml_err *err)
{
	if (r->res->up_to_date)
		return 0; /* the environment is up to date */
	return MLI_STAGE(r, ML_STAGE_INSTALL, mli_build_env(r, err));
}

/* The checks of the new environment. */
static int verify(mli_run *r, ml_err *err)
{
	if (r->res->up_to_date)
		return 0; /* the environment is up to date: checked when it was built */
	if (r->o->no_verify)
		return 0; /* --no-verify */
	return MLI_STAGE(r, ML_STAGE_VERIFY, check_env(r, err));
}

/* The install, step by step; the report of the run is built whatever
 * step it ended at. */
static int pipeline(mli_run *r, ml_err *err)
{
	int rc = mli_project_open(r, err);
	if (!rc)
		rc = mli_detect(r, err);
	if (!rc)
		rc = mli_select(r, err);
	if (!rc)
		rc = lock_target(r, err);
	if (!rc)
		rc = interpreter(r, err);
	if (!rc)
		rc = resolve(r, err);
	if (!rc)
		rc = fetch(r, err);
	if (!rc)
		rc = audit(r, err);
	if (!rc)
		rc = build_env(r, err);
	if (!rc)
		rc = verify(r, err);
	report(r, rc, err);
	return rc;
}

static int install_run(ml_install_result *res, const ml_install_opts *opts, ml_err *err)
{
	memset(res, 0, sizeof(*res));
	mli_run r;
	memset(&r, 0, sizeof(r));
	r.o = opts;
	r.res = res;
	r.ev.fn = opts->on_event;
	r.ev.data = opts->event_data;
	int rc = pipeline(&r, err);
	mli_prep_release(&r);
	mli_fetch_forget(&r);
	ml_env_stage_abort(r.stage);
	ml_env_unlock(r.own_lock);
	ml_cache_close(r.cache);
	ml_index_config_free(r.cfg);
	mli_project_release(&r);
	return rc;
}

void ml_install_result_release(ml_install_result *res)
{
	if (!res)
		return;
	ml_machine_free(res->machine);
	ml_plan_free(res->plan);
	free(res->from_cache);
	free(res->wheels);
	ml_audit_free(res->audit);
	ml_import_check_free(res->imports);
	ml_verification_free(res->gpu);
	cJSON_Delete(res->report);
	memset(res, 0, sizeof(*res));
}

int ml_install(ml_install_result *res, const ml_install_opts *opts, ml_err *err)
{
	return mli_args_run(res, opts, install_run, err);
}
