/*
 * install.c - the install pipeline as one library call: detect -> plan ->
 * fetch -> audit -> env -> verify -> report. Strings the stages together
 * (interpreter.c and wheels.c hold the longer steps), times each stage,
 * reports progress as events, and builds the report of the run, written
 * into the environment when this run put it in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/report.h"

static const char *const stage_names[ML_STAGE_COUNT] = {"detect",      "plan",    "fetch",
                                                        "interpreter", "install", "verify"};

const char *ml_install_stage_name(ml_install_stage s)
{
	return (unsigned)s < ML_STAGE_COUNT ? stage_names[s] : "?";
}

/* --- events and timing ------------------------------------------------------- */

double mli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mli_emit(mli_events *e, ml_install_event *ev)
{
	ev->stage = e->stage;
	if (e->fn)
		e->fn(ev, e->data);
}

void mli_say(mli_events *e, ml_install_event_kind kind, const char *fmt, ...)
{
	char text[1400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ml_install_event ev = {.kind = kind, .text = text};
	mli_emit(e, &ev);
}

void mli_stage_begin(mli_events *e, ml_install_stage st)
{
	e->stage = st;
	e->t0 = mli_now();
	ml_install_event ev = {.kind = ML_EV_STAGE_BEGIN};
	mli_emit(e, &ev);
}

int mli_stage_end(mli_events *e, double *total, int rc)
{
	double secs = mli_now() - e->t0;
	if (total)
		*total += secs;
	ml_install_event ev = {.kind = ML_EV_STAGE_END, .seconds = secs, .rc = rc};
	mli_emit(e, &ev);
	return rc;
}

void mli_forward_fetch(const ml_fetch_progress *p, void *data)
{
	ml_install_event ev = {.kind = ML_EV_FETCH, .fetch = p};
	mli_emit(data, &ev);
}

void mli_fetch_opts_for(ml_fetch_opts *fo, const ml_fetch_opts *opts, const ml_index_config *cfg,
                        bool offline, mli_events *ev)
{
	ml_fetch_opts d = ML_FETCH_OPTS_INIT;
	*fo = d;
	if (opts) {
		fo->jobs = opts->jobs;
		fo->retries = opts->retries;
		fo->http.connect_timeout_s = opts->http.connect_timeout_s;
		fo->http.low_speed_time_s = opts->http.low_speed_time_s;
	}
	ml_fetch_opts_use_index(fo, cfg);
	fo->offline = offline;
	fo->on_progress = ev ? mli_forward_fetch : NULL;
	fo->progress_data = ev;
}

void mli_fetch_opts(ml_fetch_opts *fo, mli_run *r)
{
	mli_fetch_opts_for(fo, &r->o->fetch, r->cfg, r->o->offline, &r->ev);
}

/* --- steps --------------------------------------------------------------------- */

/* The selection's "choice" reason: why this manifest. */
static const char *choice_reason(const ml_selection *s)
{
	for (size_t i = 0; i < s->n_reasons; i++)
		if (strcmp(s->reasons[i].rule, "choice") == 0)
			return s->reasons[i].detail;
	return "";
}

void mli_plan_opts(ml_plan_opts *po, const ml_install_opts *o)
{
	ml_plan_opts d = ML_PLAN_OPTS_INIT;
	*po = d;
	po->manifest = o->manifest;
	po->python = o->python;
	po->target = o->target;
	po->cache_dir = o->cache_dir;
	po->offline = o->offline;
	po->python_pins = o->python_pins;
	po->require_hashes = o->require_hashes;
	po->python_preference = o->python_preference;
}

int mli_detect_and_plan(mli_run *r, ml_err *err)
{
	bool project = r->o->project || r->o->n_manifests > 1;
	int rc;
	if (project && (rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_project_open(r, err))) != 0)
		return rc;
	const ml_install_opts *o = r->o;
	ml_install_result *res = r->res;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = o->sysroot;
	d.target_dir = o->target ? o->target : ".venv";
	rc = MLI_STAGE(r, ML_STAGE_DETECT, ml_detect(&res->machine, &d, err));
	if (!rc && o->platform && !r->planning)
		rc = ml_err_set(err, ML_EUSAGE, "install builds for this machine: --platform "
		                                "is for planning only");
	if (!rc && o->platform)
		rc = ml_plan_set_platform(res->machine, o->platform, err);
	if (rc)
		return rc;
	ml_install_event ev = {.kind = ML_EV_MACHINE, .machine = res->machine};
	mli_emit(&r->ev, &ev);
	if (o->require_gpu && res->machine->n_gpus == 0) {
		ml_err_set(err, ML_EGPU, "no NVIDIA GPU found, and --require-gpu was given");
		ml_err_hint(err,
		            "see 'mlsetup detect' for what each probe found; drop --require-gpu "
		            "to build an environment that runs on the CPU");
		return ML_EGPU;
	}
	ml_plan_opts po;
	mli_plan_opts(&po, o);
	rc = project ? mli_project_choose(r, err)
	             : MLI_STAGE(r, ML_STAGE_PLAN, ml_plan_make(&res->plan, res->machine, &po, err));
	if (rc)
		return rc;
	const ml_selection *s = res->plan->selection;
	if (!s->manifest) {
		ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s", s->problem);
		ml_err_hint(err, "%s", s->remedy);
		return ML_EUNSUPPORTED;
	}
	ev = (ml_install_event){.kind = ML_EV_PLAN, .plan = res->plan, .text = choice_reason(s)};
	mli_emit(&r->ev, &ev);
	for (size_t i = 0; i < s->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", s->warnings[i]);
	/* a plan to be completed says its warnings once it is (resolve.c) */
	for (size_t i = 0; ml_plan_is_complete(res->plan) && i < res->plan->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", res->plan->warnings[i]);
	return 0;
}

int mli_index_config(mli_run *r, ml_err *err)
{
	const ml_manifest *mf = r->res->plan->selection->manifest;
	/* When nothing names an index, pip's default is asked of the
	 * environment's interpreter as soon as it is known. */
	char managed[4096];
	const char *python = r->interpreter[0]
	                             ? r->interpreter
	                             : mli_plan_python(&r->res->plan->python, managed, sizeof(managed));
	ml_index_config_free(r->cfg);
	r->cfg = NULL;
	/* a lock file names every URL: it needs no index */
	return ml_index_config_for_manifest(&r->cfg, &r->o->index, mf->reqs,
	                                    mf->embedded ? NULL : mf->name,
	                                    r->o->offline || mf->lock, python, err);
}

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

/* Every top-level module of the installed distributions imports. */
static int check_imports(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	const ml_plan *p = res->plan;
	ml_install_event ev = {.kind = ML_EV_CHECK_BEGIN, .text = "imports"};
	mli_emit(&r->ev, &ev);
	ml_import_dist *dists = calloc(p->n_files ? p->n_files : 1, sizeof(*dists));
	if (!dists)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_files; i++)
		dists[i] = (ml_import_dist){res->wheels[i].name, res->wheels[i].dist_info,
		                            p->files[i].requested};
	int rc = ml_verify_imports(&res->imports, res->target, res->python.xy, dists, p->n_files,
	                           err);
	free(dists);
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

/* The GPU checks of the new environment; their verdict decides. */
static int check_gpu(mli_run *r, ml_err *err)
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
	int rc = ml_verify_env(&res->gpu, res->machine, &vo, err);
	if (!rc)
		rc = ml_verification_status(res->gpu, err);
	ev = (ml_install_event){
	        .kind = ML_EV_CHECK_END, .text = "gpu", .ok = rc == 0, .verification = res->gpu};
	mli_emit(&r->ev, &ev);
	return rc;
}

static bool plan_has(const ml_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, name) == 0)
			return true;
	return false;
}

/* The checks of the new environment, one span of the verify stage: every
 * package imports, then, when the plan has torch, the GPU checks. */
static int check_env(mli_run *r, ml_err *err)
{
	int rc = check_imports(r, err);
	if (!rc && plan_has(r->res->plan, "torch"))
		rc = check_gpu(r, err);
	return rc;
}

static int pipeline(mli_run *r, ml_err *err)
{
	const ml_install_opts *o = r->o;
	ml_install_result *res = r->res;
	int rc = mli_detect_and_plan(r, err);
	if (rc)
		return rc;
	const ml_plan *p = res->plan;
	r->lock = o->lock;
	if (!r->lock && (rc = ml_env_lock(&r->own_lock, p->target, !o->no_wait, err)) != 0)
		return rc;
	if (!r->lock)
		r->lock = r->own_lock;
	ml_strlcpy(res->target, ml_env_lock_target(r->lock), sizeof(res->target));
	bool complete = ml_plan_is_complete(p);
	if (complete && !o->reinstall && p->python.version[0] && already_up_to_date(r)) {
		res->up_to_date = true;
		return 0;
	}
	if ((rc = ml_cache_open(&r->cache, p->cache_dir, ML_CACHE_SHARED, err)) != 0)
		return rc;
	rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_index_config(r, err));
	/* No index named, and nothing here to tell pip's default: no python3
	 * on PATH (Windows; a slim container a cloud script runs in). The
	 * pinned interpreter, which ships pip, then comes first and is asked. */
	bool index_later = rc == ML_ENOENT && !p->python.path;
	if (index_later) {
		ml_err_clear(err);
		rc = 0;
	}
	/* A complete plan fetches its pinned interpreter with the wheels and
	 * unpacks it meanwhile; otherwise the interpreter comes first (its pip
	 * resolves an incomplete plan, or names the index). */
	int deferred = rc || !complete || index_later ? rc : mli_interpreter_defer(r, err);
	if (deferred < 0)
		return deferred;
	if (deferred) {
		rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_fetch_wheels(r, err));
		ml_err perr = ML_ERR_INIT;
		int prc = MLI_STAGE(r, ML_STAGE_INTERPRETER, mli_prep_finish(r, rc ? &perr : err));
		if (rc || (prc && !r->refused)) /* a refusal: the audit says why */
			return rc ? rc : prc;
		if (r->refused)
			goto fetched;
		if (res->plan == p)
			goto fetched;
		/* planned again for a fallback interpreter: what was fetched was
		 * for the pinned one */
		mli_fetch_forget(r);
		free(res->from_cache);
		res->from_cache = NULL;
	} else if ((rc = MLI_STAGE(r, ML_STAGE_INTERPRETER, mli_interpreter(r, err))) != 0) {
		return rc;
	}
	bool replanned = res->plan != p; /* planned again for a fallback interpreter */
	p = res->plan;
	if (index_later && (rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_index_config(r, err))) != 0)
		return rc;
	if (strcmp(res->python.xy, p->python.xy) != 0)
		return ml_err_set(err, ML_EFAIL,
		                  "interpreter '%s' is Python %s, the plan wanted %s",
		                  r->interpreter, res->python.xy, p->python.xy);
	if (!complete || replanned) {
		if (!ml_plan_is_complete(p) &&
		    (rc = MLI_STAGE(r, ML_STAGE_PLAN, mli_resolve(r, r->interpreter, err))) !=
		            0)
			return rc;
		if (!o->reinstall && already_up_to_date(r)) {
			res->up_to_date = true;
			return 0;
		}
	}
	if ((rc = MLI_STAGE(r, ML_STAGE_FETCH, mli_fetch_wheels(r, err))) != 0)
		return rc;
fetched:
	if ((rc = MLI_STAGE(r, ML_STAGE_VERIFY, mli_audit_before_build(r, err))) != 0 ||
	    (rc = MLI_STAGE(r, ML_STAGE_INSTALL, mli_build_env(r, err))) != 0)
		return rc;
	if (o->no_verify)
		return 0;
	return MLI_STAGE(r, ML_STAGE_VERIFY, check_env(r, err));
}

/* Builds the report of the run; writes it into the environment when this
 * run put the environment in place (a failed run leaves an existing one
 * untouched, its report included). */
static void finish_report(mli_run *r, int rc, const ml_err *err)
{
	ml_install_result *res = r->res;
	cJSON *verification = res->imports ? ml_import_check_to_json(res->imports) : NULL;
	ml_report_input in = ML_REPORT_INPUT_INIT;
	in.status = rc;
	in.err = err;
	in.target = res->target;
	in.machine = res->machine;
	in.plan = res->plan;
	in.python = &res->python;
	in.python_already_unpacked = res->python_cached;
	in.python_source = res->python_source;
	in.python_reason = res->python_reason;
	in.wheels = res->wheels;
	in.from_cache = res->from_cache;
	in.stage_names = stage_names;
	in.stage_seconds = res->seconds;
	in.n_stages = ML_STAGE_COUNT;
	in.downloaded_files = res->n_downloaded;
	in.downloaded_bytes = res->bytes_downloaded;
	in.files_from_cache = res->n_from_cache;
	in.verification = verification;
	in.audit_before_build = res->audit;
	in.gpu = res->gpu;
	/* where the manifest came from (the plan holds it once chosen) */
	in.project = res->plan && res->plan->project ? res->plan->project : r->project;
	res->report = ml_report_build(&in);
	cJSON_Delete(verification);
	if (!res->committed || !res->report)
		return;
	ml_err werr = ML_ERR_INIT;
	if (ml_report_write(res->target, res->report, &werr) == 0)
		res->report_written = true;
	else
		mli_say(&r->ev, ML_EV_WARNING, "%s", werr.msg);
}

int ml_install(ml_install_result *res, const ml_install_opts *opts, ml_err *err)
{
	memset(res, 0, sizeof(*res));
	mli_run r;
	memset(&r, 0, sizeof(r));
	r.o = opts;
	r.res = res;
	r.ev.fn = opts->on_event;
	r.ev.data = opts->event_data;
	int rc = pipeline(&r, err);
	res->committed = r.stage && r.stage->committed;
	finish_report(&r, rc, err);
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
