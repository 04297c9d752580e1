/*
 * select.c - the first steps of install and plan, after a project's
 * checkout: detect the machine (said as a MACHINE event), then select
 * what to install on it - a manifest planned by the plan stage, or the
 * first candidate of a project that fits (project.c) - said as a PLAN
 * event with the reason of the choice and its warnings. Nothing fitting
 * is ML_EUNSUPPORTED with the selection's problem and remedy.
 */
#include <string.h>

#include "internal.h"

int mli_detect(mli_run *r, ml_err *err)
{
	const ml_install_opts *o = r->o;
	ml_install_result *res = r->res;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = o->sysroot;
	d.target_dir = o->target ? o->target : ".venv";
	int rc = MLI_STAGE(r, ML_STAGE_DETECT, ml_detect(&res->machine, &d, err));
	if (!rc && o->platform && !r->planning)
		rc = ml_err_set(err, ML_EUSAGE,
		                "install builds for this machine: --platform "
		                "is for planning only");
	if (!rc && o->platform)
		rc = ml_plan_set_platform(res->machine, o->platform, err);
	if (!rc && (o->gpus || o->driver))
		rc = ml_plan_set_gpus(res->machine, o->gpus, o->driver, err);
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
	return 0;
}

/* The selection's "choice" reason: why this manifest. */
static const char *choice_reason(const ml_selection *s)
{
	for (size_t i = 0; i < s->n_reasons; i++)
		if (strcmp(s->reasons[i].rule, "choice") == 0)
			return s->reasons[i].detail;
	return "";
}

int mli_select(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	ml_plan_opts po;
	mli_plan_opts(&po, r->o);
	int rc = mli_is_project(r->o) ? mli_project_choose(r, err)
	                              : MLI_STAGE(r, ML_STAGE_PLAN,
	                                          ml_plan_make(&res->plan, res->machine, &po, err));
	if (rc)
		return rc;
	const ml_selection *s = res->plan->selection;
	if (!s->manifest) {
		ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s", s->problem);
		ml_err_hint(err, "%s", s->remedy);
		return ML_EUNSUPPORTED;
	}
	ml_install_event ev = {.kind = ML_EV_PLAN, .plan = res->plan, .text = choice_reason(s)};
	mli_emit(&r->ev, &ev);
	/* a file still to be resolved may learn its torch build first: its
	 * selection is judged again then, and says its warnings (resolve.c) */
	r->warnings_deferred = res->plan->needs_resolution && !s->manifest->embedded;
	for (size_t i = 0; !r->warnings_deferred && i < s->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", s->warnings[i]);
	/* a plan to be completed says its warnings once it is (resolve.c) */
	for (size_t i = 0; ml_plan_is_complete(res->plan) && i < res->plan->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", res->plan->warnings[i]);
	return 0;
}
