/*
 * run.c - what every step of the pipelines shares, and nothing that calls
 * a step: events stamped with the stage that runs and the timing of each
 * span of a stage, the fetch and plan options of a run, the index
 * configuration of its manifest, and the interpreter a plan already has
 * on this machine. The files of src/install form a tree: the pipelines
 * (install.c, plan.c, download.c, bundle.c, lock.c, export.c) call the
 * steps (select.c, project.c, interpreter.c, resolve.c, wheels.c,
 * lockfile.c), and every one of them calls this file, which calls none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "internal.h"

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

/* --- the options of a run ------------------------------------------------------- */

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

bool mli_is_project(const ml_install_opts *o)
{
	return o->project || o->n_manifests > 1;
}

/* --- the interpreter a plan has, and the index configuration ------------------------ */

/* Writes the path of the plan's pinned interpreter into path when it is
 * unpacked already; false when it is not (or the plan names an existing
 * interpreter). */
static bool managed_installed(const ml_python_plan *pp, char *path, size_t sz)
{
	char dir[4096], marker[4400];
	struct stat st;
	return !pp->path && pp->pin_name && ml_python_dir(dir, sizeof(dir), NULL) == 0 &&
	       ml_pathf(marker, sizeof(marker), "%s/%s/%s", dir, pp->pin_name, ML_ENV_MARKER) ==
	               0 &&
	       ml_pathf(path, sz, "%s/%s/" ML_PYTHON_ARCHIVE_EXE, dir, pp->pin_name) == 0 &&
	       stat(marker, &st) == 0 && stat(path, &st) == 0;
}

const char *mli_plan_python(const ml_python_plan *pp, char *buf, size_t sz)
{
	return pp->path ? pp->path : managed_installed(pp, buf, sz) ? buf : NULL;
}

int mli_index_config(mli_run *r, ml_err *err)
{
	const ml_manifest *mf = r->res->plan->selection->manifest;
	/* When nothing names an index, pip's default is asked of the
	 * environment's interpreter as soon as it is known. */
	char managed[4096];
	const char *python = r->interpreter[0] ? r->interpreter
	                                       : mli_plan_python(&r->res->plan->python, managed,
	                                                         sizeof(managed));
	ml_index_config_free(r->cfg);
	r->cfg = NULL;
	/* a lock file names every URL: it needs no index */
	return ml_index_config_for_manifest(&r->cfg, &r->o->index, mf->reqs,
	                                    mf->embedded ? NULL : mf->name,
	                                    r->o->offline || mf->lock, python, err);
}

void mli_say_deferred(mli_run *r)
{
	const ml_selection *s = r->res->plan ? r->res->plan->selection : NULL;
	for (size_t i = 0; s && r->warnings_deferred && i < s->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", s->warnings[i]);
	r->warnings_deferred = false;
}
