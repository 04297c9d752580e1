/*
 * complete.c - completes a plan the manifest does not fully describe,
 * before anything is fetched: requirements named by hash only (a hashed
 * requirements file without `# mlsetup-file:` lines, as pip-compile and
 * uv write them) learn their files from the indexes, files of unknown
 * size (a lock without sizes) are sized by their servers, and the plan
 * chooses its files again (ml_plan_refile).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const ml_requirement *req_at_line(const ml_manifest *mf, int line)
{
	for (size_t i = 0; i < mf->reqs->n_reqs; i++)
		if (mf->reqs->reqs[i].line == line)
			return &mf->reqs->reqs[i];
	return NULL;
}

/* The failure for a requirement no source has a listed file of. */
static int not_found(const ml_manifest *mf, const ml_artifact *a, const ml_requirement *q,
                     const ml_pin_lookup *l, bool offline, ml_err *err)
{
	if (l->rc && !l->n_found) {
		*err = l->err;
		return l->rc;
	}
	if (!l->project_seen) {
		ml_err_set(err, ML_ENOENT, "manifest '%s' line %d: %s is on none of the %s",
		           mf->name, a->line, q->name,
		           offline ? "local --find-links locations (--offline)"
		                   : "indexes or --find-links locations");
		ml_err_hint(err,
		            offline ? "run without --offline, or add a --find-links directory "
		                      "that holds it"
		                    : "check the index options (--index-url, --extra-index-url, "
		                      "--find-links)");
		return ML_ENOENT;
	}
	ml_buf b = ML_BUF_INIT;
	for (size_t i = 0; i < q->n_hashes; i++)
		ml_buf_printf(&b, "%s%s", i ? ", " : "", q->sha256[i]);
	ml_buf_puts(&b, "); the indexes offer ");
	for (size_t i = 0; i < l->n_offered && i < 8; i++)
		ml_buf_printf(&b, "%s%s (sha256 %s)", i ? ", " : "", l->offered[i].filename,
		              l->offered[i].sha256 ? l->offered[i].sha256 : "not given");
	if (l->n_offered > 8)
		ml_buf_printf(&b, " and %zu more", l->n_offered - 8);
	if (!l->n_offered)
		ml_buf_printf(&b, "no file of %s %s", q->name, a->version);
	ml_err_set(err, ML_EINTEGRITY,
	           "manifest '%s' line %d: no file of %s %s has one of the %zu hash%s the "
	           "requirement lists (%s",
	           mf->name, a->line, q->name, a->version, q->n_hashes,
	           q->n_hashes == 1 ? "" : "es", ml_buf_cstr(&b));
	ml_buf_release(&b);
	ml_err_hint(err, "the files changed after the requirements were hashed, or this is not the "
	                 "index they were made for; hash them again only if you trust the new "
	                 "files");
	return ML_EINTEGRITY;
}

/* What completing a plan works with. */
typedef struct completer {
	ml_plan *p;
	const ml_index_config *cfg;
	ml_cache *cache;
	const ml_fetch_opts *fo;
	mli_events *ev;
} completer;

/* Files named by hash only: the indexes say which file has each hash. */
static int lookup_hashes(completer *r, ml_plan *p, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	ml_pin_lookup *q = calloc(p->n_unknown, sizeof(*q));
	const ml_artifact **arts = calloc(p->n_unknown, sizeof(*arts));
	const ml_requirement **reqs = calloc(p->n_unknown, sizeof(*reqs));
	size_t n = 0;
	int rc = q && arts && reqs ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		const ml_requirement *rq = a->filename ? NULL : req_at_line(mf, a->line);
		if (!rq || n >= p->n_unknown)
			continue;
		q[n] = (ml_pin_lookup){.name = a->name,
		                       .version = a->version,
		                       .sha256 = rq->sha256,
		                       .n_sha256 = rq->n_hashes};
		arts[n] = a;
		reqs[n++] = rq;
	}
	if (!rc) {
		mli_say(r->ev, ML_EV_STEP,
		        "asking the indexes which files the %zu hashed requirement%s name%s", n,
		        n == 1 ? "" : "s", n == 1 ? "s" : "");
		ml_fetch_opts fo = *r->fo;
		fo.on_progress = NULL;
		rc = ml_fetch_pin_files(q, n, r->cfg, r->cache, &fo, err);
	}
	for (size_t i = 0; !rc && i < n; i++) {
		for (size_t k = 0; !rc && k < q[i].n_found; k++)
			rc = ml_manifest_add_file(mf, q[i].found[k].sha256, q[i].found[k].size,
			                          q[i].found[k].filename, q[i].found[k].url, err);
		if (!rc && !q[i].n_found)
			rc = not_found(mf, arts[i], reqs[i], &q[i], r->fo->offline, err);
	}
	for (size_t i = 0; q && i < n; i++)
		ml_pin_lookup_release(&q[i]);
	free(q);
	free(arts);
	free(reqs);
	return rc;
}

/* Files named with a URL but no size (a lock without sizes): HEAD. */
static int size_files(completer *r, ml_plan *p, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	for (size_t i = 0; i < p->n_files; i++) {
		ml_artifact *a = &p->files[i];
		if (!a->filename || a->size >= 0)
			continue;
		if (!a->url) {
			ml_err_set(err, ML_EFAIL,
			           "manifest '%s' line %d: the size of %s is unknown", mf->name,
			           a->line, a->filename);
			ml_err_hint(err, "give the file's size, or its URL");
			return ML_EFAIL;
		}
		if (r->fo->offline && strncmp(a->url, "file:", 5) != 0) {
			ml_err_set(err, ML_ENOENT,
			           "the size of '%s' is unknown and --offline forbids asking its "
			           "server",
			           a->filename);
			ml_err_hint(err,
			            "run without --offline once, or use a lock that gives sizes");
			return ML_ENOENT;
		}
		char *u[1] = {a->url};
		int64_t size = -1;
		int rc = ml_http_sizes(&size, u, 1, r->cfg ? r->cfg->trusted_hosts : NULL,
		                       r->cfg ? r->cfg->n_trusted : 0, r->cfg ? r->cfg->cert : NULL,
		                       err);
		if (!rc && size < 0)
			rc = ml_err_set(err, ML_ENET, "the server of '%s' gave no size",
			                a->filename);
		if (!rc)
			rc = ml_manifest_add_file(mf, a->sha256, size, a->filename, a->url, err);
		if (rc)
			return rc;
	}
	return 0;
}

bool mli_plan_complete(const ml_plan *p)
{
	return p->n_unknown == 0 && p->n_unsized == 0;
}

int mli_complete_plan(ml_plan *p, const ml_machine *m, const ml_index_config *cfg, ml_cache *c,
                      const ml_fetch_opts *fo, mli_events *ev, ml_err *err)
{
	completer r = {p, cfg, c, fo, ev};
	int rc = 0;
	if (p->n_unknown)
		rc = lookup_hashes(&r, p, err);
	if (!rc && p->n_unsized)
		rc = size_files(&r, p, err);
	if (!rc)
		rc = ml_plan_refile(p, m, err);
	return rc;
}

int mli_complete_run(mli_run *r, ml_err *err)
{
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	return mli_complete_plan(r->res->plan, r->res->machine, r->cfg, r->cache, &fo, &r->ev, err);
}
