/*
 * provider.c - the fetch stage's answers to what the plan asks while it
 * completes a plan (ml_plan_provider, plan.h): every file each source
 * lists for a project (the primary index, the extra indexes, then the
 * --find-links locations; several projects at a time, with the lookups'
 * retries and the page cache), and the resolution of a requirements file
 * that pins no hashes by the interpreter's own pip, told the sources
 * (ml_index_config_pip_args) and handed the sha256 of a local file it
 * gives none for. Sizes (sizes.c) and downloads (resolve.c, download.c)
 * answer the rest. Fetch decides nothing about the plan: which file has
 * the hash, what a missing file means, is plan's (src/plan/complete.c);
 * the install pipeline binds these functions to one run's sources and
 * cache (src/install/resolve.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlsetup/plan.h"

/* --- what the sources list -------------------------------------------------------- */

typedef struct list_run {
	ml_project_listing *q;
	const ml_index_config *cfg;
	ml_cache *cache;
	const ml_fetch_opts *o;
	mlf_source *sources;
	size_t n_sources;
} list_run;

/* Appends a copy of f to l's files. */
static int push_file(ml_project_listing *l, const ml_index_file *f)
{
	ml_listed_file *v = realloc(l->files, (l->n_files + 1) * sizeof(*v));
	if (!v)
		return ML_ENOMEM;
	l->files = v;
	ml_listed_file *c = &v[l->n_files++];
	c->size = f->size;
	c->filename = strdup(f->filename);
	c->url = f->url ? strdup(f->url) : NULL;
	c->sha256 = f->sha256 ? strdup(f->sha256) : NULL;
	return !c->filename || (f->url && !c->url) || (f->sha256 && !c->sha256) ? ML_ENOMEM : 0;
}

static void list_one(list_run *r, ml_project_listing *q)
{
	/* one named index instead of the run's sources */
	mlf_source only = {q->index_url, false};
	const mlf_source *sources = q->index_url ? &only : r->sources;
	size_t n_sources = q->index_url ? 1 : r->n_sources;
	for (size_t s = 0; s < n_sources; s++) {
		ml_project *proj = NULL;
		ml_err e = ML_ERR_INIT;
		int rc = mlf_lookup(&proj, sources[s].url, sources[s].find_links, q->name, r->cfg,
		                    r->cache, r->o, NULL, NULL, &e);
		if (rc == ML_ENOENT)
			continue;
		if (rc) {
			if (!q->rc) {
				q->rc = rc;
				q->err = e;
			}
			continue;
		}
		q->project_seen = true;
		for (size_t k = 0; k < proj->n_files && !rc; k++)
			rc = push_file(q, &proj->files[k]);
		ml_project_free(proj);
		if (rc && !q->rc) {
			q->rc = rc;
			ml_err_set(&q->err, rc, "out of memory");
		}
	}
}

static void list_job(void *data, size_t i)
{
	list_run *r = data;
	list_one(r, &r->q[i]);
}

int ml_fetch_list_projects(ml_project_listing *q, size_t n, const ml_index_config *cfg, ml_cache *c,
                           const ml_fetch_opts *o, ml_err *err)
{
	ml_fetch_opts defaults = ML_FETCH_OPTS_INIT;
	list_run r = {0};
	r.q = q;
	r.cfg = cfg;
	r.cache = c;
	r.o = o ? o : &defaults;
	if (mlf_sources(&r.sources, &r.n_sources, cfg, r.o->offline))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	bool named = false; /* a listing of one named index needs no source of the run */
	for (size_t i = 0; i < n; i++)
		named |= q[i].index_url != NULL;
	if (r.n_sources || named)
		mlf_each_parallel(n, list_job, &r);
	free(r.sources);
	return 0;
}

/* --- pip's resolution ------------------------------------------------------------- */

/* A pick pip gives no hash for, from a local file (a --find-links
 * directory): its sha256 is computed here. */
static void hash_local(ml_pip_pick *p)
{
	if (p->sha256[0] || strncmp(p->url, "file://", 7) != 0)
		return;
	char path[4096];
	size_t k = 0;
	for (const char *c = p->url + 7; *c && *c != '#' && k < sizeof(path) - 1; c++) {
		unsigned hi, lo;
		if (*c == '%' && sscanf(c + 1, "%1x%1x", &hi, &lo) == 2) {
			path[k++] = (char)(hi * 16 + lo);
			c += 2;
		} else {
			path[k++] = *c;
		}
	}
	path[k] = '\0';
	if (ml_sha256_file(p->sha256, NULL, path, NULL) != 0)
		p->sha256[0] = '\0';
}

/* uv's resolution of rq (ml_uv_resolve), said first. */
static int resolve_uv(ml_resolution *out, const ml_resolve_request *rq, const ml_uv_tool *uv,
                      char *const *args, size_t n_args, ml_err *err)
{
	char **tags = NULL;
	size_t n_tags = 0;
	int rc = ml_tags_for(&tags, &n_tags, &rq->target, err);
	if (rc)
		return rc;
	if (rq->note) {
		char text[1400];
		snprintf(text, sizeof(text), "resolving '%s' with uv %s for %s", rq->manifest,
		         uv->version, rq->target_desc);
		rq->note(ML_PLAN_NOTE_STEP, text, rq->note_data);
	}
	ml_uv_resolve_opts uo = {.uv = uv->path,
	                         .cache_dir = uv->cache_dir,
	                         .python = rq->python,
	                         .input_path = rq->input_path,
	                         .input_text = rq->input_text,
	                         .index_args = args,
	                         .n_index_args = n_args,
	                         .tags = tags,
	                         .n_tags = n_tags,
	                         .target_desc = rq->target_desc};
	rc = ml_uv_resolve(&out->picks, &out->n_picks, &uo, err);
	ml_tags_free(tags, n_tags);
	if (!rc) {
		ml_strlcpy(out->resolver.tool, "uv", sizeof(out->resolver.tool));
		ml_strlcpy(out->resolver.version, uv->version, sizeof(out->resolver.version));
	}
	return rc;
}

int ml_fetch_resolve_requirements(ml_resolution *out, const ml_resolve_request *rq,
                                  const ml_index_config *cfg, const ml_uv_tool *uv,
                                  ml_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 8 + 2 * (cfg ? cfg->n_extra + cfg->n_find_links + cfg->n_trusted : 0) +
	             rq->n_extra_args;
	char **args = calloc(cap, sizeof(*args));
	if (!args)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t n_args = cfg ? ml_index_config_pip_args(args, cap, cfg) : 0;
	for (size_t i = 0; i < rq->n_extra_args && n_args < cap; i++)
		args[n_args++] = rq->extra_args[i];
	int rc = 0;
	if (uv && uv->path) {
		ml_err ue = ML_ERR_INIT;
		rc = resolve_uv(out, rq, uv, args, n_args, &ue);
		if (!rc) {
			free(args);
			return 0;
		}
		if (rc == ML_ENOMEM) {
			free(args);
			*err = ue;
			return rc;
		}
		if (rq->note) {
			char text[2000];
			snprintf(text, sizeof(text), "uv %s did not resolve '%s' (%s): pip resolves it",
			         uv->version, rq->manifest, ue.msg);
			rq->note(ML_PLAN_NOTE_STEP, text, rq->note_data);
		}
		memset(out, 0, sizeof(*out));
	}
	ml_pip_info pi;
	rc = ml_pip_probe(&pi, rq->python, err);
	if (rc) {
		free(args);
		return rc;
	}
	ml_strlcpy(pi.tool, "pip", sizeof(pi.tool));
	if (rq->note) {
		char text[1400];
		snprintf(text, sizeof(text), "resolving '%s' with pip %s for %s%s", rq->manifest,
		         pi.version, rq->target_desc,
		         pi.externally_managed ? " (an externally managed Python: the dry run "
		                                 "passes --break-system-packages)"
		                               : "");
		rq->note(ML_PLAN_NOTE_STEP, text, rq->note_data);
	}
	ml_pip_resolve_opts po = {.python = rq->python,
	                          .input_path = rq->input_path,
	                          .input_text = rq->input_text,
	                          .index_args = args,
	                          .n_index_args = n_args,
	                          .break_system_packages = pi.externally_managed,
	                          .target_desc = rq->target_desc};
	ml_pip_pick *picks = NULL;
	size_t n = 0;
	rc = ml_pip_resolve(&picks, &n, &po, err);
	free(args);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		hash_local(&picks[i]);
	out->picks = picks;
	out->n_picks = n;
	out->resolver = pi;
	return 0;
}
