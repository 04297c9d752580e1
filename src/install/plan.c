/*
 * plan.c - `mlsetup plan` as a library call: install stopped before it
 * changes anything. Detects, plans, and completes what the manifest does
 * not say itself (the files of hash-only requirements from the indexes,
 * unknown sizes from the file servers), so the plan shows the exact file
 * install would fetch. It may write into the cache (index pages); it never
 * touches an environment or the interpreter directory.
 */
#include <string.h>

#include "internal.h"

static int plan_run(ml_install_result *res, const ml_install_opts *opts, ml_err *err)
{
	memset(res, 0, sizeof(*res));
	mli_run r;
	memset(&r, 0, sizeof(r));
	r.o = opts;
	r.res = res;
	r.ev.fn = opts->on_event;
	r.ev.data = opts->event_data;
	r.planning = true;
	int rc = mli_project_open(&r, err);
	if (!rc)
		rc = mli_detect(&r, err);
	if (!rc)
		rc = mli_select(&r, err);
	const ml_plan *p = res->plan;
	/* pip resolves a file without hashes: with the interpreter the plan
	 * names, or the pinned one once it is unpacked (plan fetches none) */
	char managed[4096];
	const char *python = NULL;
	if (!rc && p->needs_resolution)
		python = mli_plan_python(&p->python, managed, sizeof(managed));
	if (python && (rc = ml_python_probe(&res->python, python, err)) == 0)
		ml_strlcpy(res->python_source, p->python.path ? "path" : "managed",
		           sizeof(res->python_source));
	if (!rc && !ml_plan_is_complete(p) && !opts->offline) {
		rc = ml_cache_open(&r.cache, p->cache_dir, ML_CACHE_SHARED, err);
		if (!rc)
			rc = MLI_STAGE(&r, ML_STAGE_FETCH, mli_index_config(&r, err));
		if (!rc)
			rc = MLI_STAGE(&r, ML_STAGE_PLAN, mli_resolve(&r, python, err));
	}
	if (!rc)
		mli_say_deferred(&r); /* offline, or nothing to resolve: said now */
	ml_cache_close(r.cache);
	ml_index_config_free(r.cfg);
	mli_project_release(&r);
	return rc;
}

int ml_install_plan(ml_install_result *res, const ml_install_opts *opts, ml_err *err)
{
	return mli_args_run(res, opts, plan_run, err);
}
