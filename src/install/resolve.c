/*
 * resolve.c - the resolve step: a plan the manifest does not fully
 * describe is completed by the plan stage (ml_plan_complete) through the
 * provider this file fills in. fetch and verify are peers above plan and
 * fetch calls nothing of verify, so install composes the provider: the
 * fetch stage's lookups, sizes, pip resolution and downloads (one file,
 * timed as fetch spans), and verify's reading of a torch wheel, bound to
 * one run's index configuration, cache and options; plan's notes become
 * STEP and WARNING events. Then the plan's warnings are said, and a
 * resolution by pip is kept as a lock in the cache (lockfile.c).
 */
#include <string.h>

#include "internal.h"

static int list_files(ml_project_listing *q, size_t n, void *data, ml_err *err)
{
	mli_provider *x = data;
	return ml_fetch_list_projects(q, n, x->cfg, x->cache, &x->fo, err);
}

static int file_sizes(int64_t *sizes, char *const *urls, size_t n, void *data, ml_err *err)
{
	mli_provider *x = data;
	ml_fetch_opts fo = x->fo;
	ml_fetch_opts_use_index(&fo, x->cfg);
	return ml_http_sizes(sizes, urls, n, &fo, err);
}

static int resolve(ml_resolution *out, const ml_resolve_request *rq, void *data, ml_err *err)
{
	mli_provider *x = data;
	return ml_fetch_resolve_requirements(out, rq, x->cfg, mli_uv_tool(x, rq->python), err);
}

/* Begins a span of the fetch stage, when x times them. */
static void span_begin(mli_provider *x)
{
	if (x->seconds)
		mli_stage_begin(x->ev, ML_STAGE_FETCH);
}

/* Ends the span begun by span_begin() with rc; returns rc. */
static int span_end(mli_provider *x, int rc)
{
	return x->seconds ? mli_stage_end(x->ev, &x->seconds[ML_STAGE_FETCH], rc) : rc;
}

static int fetch_file(char *path, size_t path_sz, const ml_artifact *a, void *data, ml_err *err)
{
	mli_provider *x = data;
	ml_download item;
	memset(&item, 0, sizeof(item));
	ml_plan part; /* a plan of that one file */
	memset(&part, 0, sizeof(part));
	part.files = (ml_artifact *)a;
	part.n_files = 1;
	span_begin(x);
	int rc = span_end(x, ml_fetch_resolve(&item, &part, x->cfg, x->cache, &x->fo, err));
	if (!rc && !item.done) {
		span_begin(x);
		rc = span_end(x, ml_fetch_all(&item, 1, x->cache, &x->fo, err));
	}
	if (!rc && ml_strlcpy(path, item.path, path_sz) >= path_sz)
		rc = ml_err_set(err, ML_EFAIL, "cache path too long");
	ml_download_release(&item);
	return rc;
}

static int audit_wheel(ml_torch_build *out, const char *path, void *data, ml_err *err)
{
	(void)data;
	return ml_torch_build_from_wheel(out, path, err);
}

static void note(ml_plan_note_kind kind, const char *text, void *data)
{
	mli_provider *x = data;
	mli_say(x->ev, kind == ML_PLAN_NOTE_WARNING ? ML_EV_WARNING : ML_EV_STEP, "%s", text);
}

void mli_provider_init(ml_plan_provider *pv, mli_provider *x, const ml_index_config *cfg,
                       ml_cache *c, const ml_fetch_opts *fo, mli_events *ev, double *seconds)
{
	memset(x, 0, sizeof(*x));
	x->cfg = cfg;
	x->cache = c;
	x->fo = *fo;
	x->ev = ev;
	x->seconds = seconds;
	*pv = (ml_plan_provider){.list_files = list_files,
	                         .file_sizes = file_sizes,
	                         .resolve = resolve,
	                         .fetch_file = fetch_file,
	                         .audit_wheel = audit_wheel,
	                         .note = note,
	                         .note_data = x,
	                         .offline = fo->offline,
	                         .data = x};
}

void mli_provider_for(ml_plan_provider *pv, mli_provider *x, mli_run *r)
{
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	mli_provider_init(pv, x, r->cfg, r->cache, &fo, &r->ev, r->res->seconds);
}

int mli_resolve(mli_run *r, const char *python, ml_err *err)
{
	ml_install_result *res = r->res;
	ml_plan *p = res->plan;
	char lock[sizeof(res->resolved_lock)];
	ml_plan_complete_opts co = {.python = python,
	                            .python_version = res->python.version,
	                            .torch_index_url = r->o->index.torch_index_url,
	                            .torch_backend = r->o->index.torch_backend};
	/* a shipped manifest without hashes is resolved once: the lock of its
	 * first install is taken again */
	if (python && p->needs_resolution && p->selection->manifest->embedded && r->cache) {
		res->resolved_lock[0] = '\0'; /* set again when it is taken */
		int rc = mli_resolution_lock(lock, sizeof(lock), r, err);
		if (rc)
			return rc;
		co.resolved_lock = lock;
	}
	ml_plan_provider pv;
	mli_provider x;
	mli_provider_for(&pv, &x, r);
	ml_plan_completion done;
	int rc = ml_plan_complete(p, res->machine, &pv, &co, &done, err);
	if (!rc)
		mli_say_deferred(r);
	if (rc || done.unresolved)
		return rc;
	if (done.lock_reused)
		ml_strlcpy(res->resolved_lock, lock, sizeof(res->resolved_lock));
	for (size_t i = 0; i < p->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", p->warnings[i]);
	if (!done.lock_reused && p->selection->manifest->resolved)
		rc = mli_save_resolution(r, &done.resolver, err);
	return rc;
}
