/*
 * lockfile.c - the environment's lock file: <env>/pylock.toml (PEP 751),
 * written into the staged environment before it is swapped into place,
 * so an environment never appears without it. Each wheel's URL comes from
 * the manifest (a lock file, pip's resolution, an index lookup), else
 * from the source that served it in this run, else from the cache's
 * record of where the blob was fetched.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlsetup/report.h"

int mli_write_pylock(mli_run *r, const char *dir, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	size_t n = p->n_files;
	const char **urls = calloc(n ? n : 1, sizeof(*urls));
	char *origins = calloc(n ? n : 1, 4096);
	if (!urls || !origins) {
		free(urls);
		free(origins);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const ml_download *d = r->items ? &r->items[i] : NULL;
		char *origin = origins + i * 4096;
		if (p->files[i].url)
			urls[i] = p->files[i].url;
		else if (d && d->url_used >= 0 && (size_t)d->url_used < d->n_urls)
			urls[i] = d->urls[d->url_used];
		else if (r->cache &&
		         ml_cache_origin_get(origin, 4096, r->cache, p->files[i].sha256) == 0)
			urls[i] = origin;
		else if (d && d->n_urls)
			urls[i] = d->urls[0];
	}
	const ml_manifest *mf = p->selection->manifest;
	char commit[41];
	ml_pylock_input in = ML_PYLOCK_INPUT_INIT;
	in.plan = p;
	in.urls = urls;
	in.python = &r->res->python;
	in.python_source = r->res->python_source;
	in.python_reason = r->res->python_reason;
	in.machine = r->res->machine;
	in.commit = !mf->embedded && ml_project_commit(commit, mf->name) == 0 ? commit : NULL;
	size_t missing = 0;
	int rc = ml_pylock_write(dir, &in, &missing, err);
	if (!rc && missing)
		mli_say(&r->ev, ML_EV_WARNING,
		        "%zu wheel%s in %s/" ML_PYLOCK_FILE " without a URL: the cache does not "
		        "record where %s fetched from; that lock file cannot rebuild the "
		        "environment elsewhere",
		        missing, missing == 1 ? "" : "s", r->res->target,
		        missing == 1 ? "it was" : "they were");
	free(urls);
	free(origins);
	return rc;
}
