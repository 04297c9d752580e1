/*
 * resolve.c - turns a plan's files into download items: for every wheel
 * the plan chose, either the verified copy already in the cache, or the
 * URLs that serve it, found by asking each index and --find-links location
 * for the project's files and matching them by sha256 (the plan's pin),
 * in source order: primary index, extra indexes, find-links.
 *
 * Projects are looked up several at a time (mlf_each_parallel(), at most
 * MLF_LOOKUP_THREADS at once); each lookup touches only its own project's
 * items.
 * Index pages go through the page cache, so a re-run revalidates them with
 * conditional requests instead of downloading them again.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "internal.h"
#include "mlsetup/plan.h"

/* One project to look up, and what came of it. */
typedef struct project_job {
	const char *name; /* normalized, borrowed from the plan */
	int rc;           /* first hard failure (not "not on this index"), or 0 */
	ml_err err;
} project_job;

typedef struct resolver {
	ml_download *items;
	const ml_plan *plan;
	const ml_index_config *cfg;
	ml_cache *cache;
	const ml_fetch_opts *o;
	mlf_source *sources;
	size_t n_sources;
	project_job *projects;
	size_t n_projects;
	pthread_mutex_t mu; /* serializes progress notes */
} resolver;

static void note(resolver *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(resolver *r, const char *fmt, ...)
{
	if (!r->o->on_progress)
		return;
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ml_fetch_progress p = {0};
	p.note = buf;
	pthread_mutex_lock(&r->mu);
	r->o->on_progress(&p, r->o->progress_data);
	pthread_mutex_unlock(&r->mu);
}

static void note_fn(void *data, const char *text)
{
	note(data, "%s", text);
}

/* Asks one source for project name, retrying retryable failures. */
static int lookup(resolver *r, const mlf_source *s, const char *name, ml_project **out, ml_err *err)
{
	return mlf_lookup(out, s->url, s->find_links, name, r->cfg, r->cache, r->o, note_fn, r,
	                  err);
}

/* Adds the URLs of every file of proj that is one of the plan's files. */
static int match_files(resolver *r, const ml_project *proj, const char *name, ml_err *err)
{
	for (size_t i = 0; i < r->plan->n_files; i++) {
		ml_download *d = &r->items[i];
		if (d->done || strcmp(r->plan->files[i].name, name) != 0)
			continue;
		for (size_t k = 0; k < proj->n_files; k++) {
			const ml_index_file *f = &proj->files[k];
			bool same = f->sha256 ? strcmp(f->sha256, d->sha256) == 0
			                      : strcmp(f->filename, d->name) == 0;
			if (!same && f->sha256 && f->url && strcmp(f->filename, d->name) == 0 &&
			    !d->result) {
				/* the right name with another hash: remember it, it
				 * explains why the file is found nowhere */
				char shown[1024];
				ml_url_redact(shown, sizeof(shown), f->url);
				d->result = ML_EINTEGRITY;
				ml_err_set(
				        &d->err, ML_EINTEGRITY,
				        "hash mismatch for '%s': '%s' lists it with sha256 %s, the "
				        "manifest pins %s",
				        d->name, shown, f->sha256, d->sha256);
				ml_err_hint(&d->err,
				            "the file changed after the manifest was locked, or "
				            "this is not the index the manifest was made for; "
				            "re-lock only if you trust the new file");
			}
			if (!same || !f->url)
				continue;
			int rc = ml_download_add_url(d, f->url, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static void resolve_project(resolver *r, project_job *pj)
{
	for (size_t s = 0; s < r->n_sources; s++) {
		ml_project *proj = NULL;
		ml_err e = ML_ERR_INIT;
		int rc = lookup(r, &r->sources[s], pj->name, &proj, &e);
		if (rc == ML_ENOENT)
			continue; /* not on this index or location */
		if (rc) {
			if (!pj->rc) {
				pj->rc = rc;
				pj->err = e;
			}
			continue;
		}
		rc = match_files(r, proj, pj->name, &e);
		ml_project_free(proj);
		if (rc && !pj->rc) {
			pj->rc = rc;
			pj->err = e;
		}
	}
}

static void project_job_run(void *data, size_t i)
{
	resolver *r = data;
	resolve_project(r, &r->projects[i]);
}

/* Lists the projects of the items that still need a source. */
static int collect_projects(resolver *r)
{
	r->projects = calloc(r->plan->n_files ? r->plan->n_files : 1, sizeof(*r->projects));
	if (!r->projects)
		return ML_ENOMEM;
	for (size_t i = 0; i < r->plan->n_files; i++) {
		if (r->items[i].done || r->items[i].n_urls > 0)
			continue;
		const char *name = r->plan->files[i].name;
		bool seen = false;
		for (size_t k = 0; k < r->n_projects && !seen; k++)
			seen = strcmp(r->projects[k].name, name) == 0;
		if (!seen)
			r->projects[r->n_projects++].name = name;
	}
	return 0;
}

static void run_lookups(resolver *r)
{
	if (r->n_sources)
		mlf_each_parallel(r->n_projects, project_job_run, r);
}

int ml_fetch_resolve(ml_download *items, const ml_plan *plan, const ml_index_config *cfg,
                     ml_cache *c, const ml_fetch_opts *o, ml_err *err)
{
	ml_fetch_opts defaults = ML_FETCH_OPTS_INIT;
	resolver r = {0};
	r.items = items;
	r.plan = plan;
	r.cfg = cfg;
	r.cache = c;
	r.o = o ? o : &defaults;
	pthread_mutex_init(&r.mu, NULL);
	int rc = 0;

	/* 1. every file must be named and hashed by the plan (a size no
	 * server told, -1, is learned by the download) */
	for (size_t i = 0; i < plan->n_files; i++) {
		const ml_artifact *a = &plan->files[i];
		if (!a->filename || strlen(a->sha256) != 64) {
			rc = ml_err_set(err, ML_EFAIL,
			                "manifest line %d: no wheel file is recorded for %s %s",
			                a->line, a->name, a->version ? a->version : "");
			ml_err_hint(err, "regenerate the manifest with mlsetup lock: it writes the "
			                 "'# mlsetup-file:' lines that name each wheel");
			goto out;
		}
		if ((rc = ml_download_init(&items[i], a->filename, a->sha256, a->size, err)) != 0)
			goto out;
		/* a file the manifest names the URL of (a lock file, pip's
		 * resolution) is fetched from there: no index is asked */
		if (a->url && (!r.o->offline || !mlf_is_remote(a->url)) &&
		    (rc = ml_download_add_url(&items[i], a->url, err)) != 0)
			goto out;
	}

	/* 2. what the cache already holds, proven */
	for (size_t i = 0; i < plan->n_files; i++) {
		ml_download *d = &items[i];
		bool corrupted = false;
		ml_err e = ML_ERR_INIT;
		int grc = ml_cache_blob_get(d->path, sizeof(d->path), c, d->sha256, d->size,
		                            &corrupted, &e);
		struct stat st;
		if (grc == 0) {
			d->done = d->from_cache = true;
			if (d->size < 0 && stat(d->path, &st) == 0)
				d->size = (int64_t)st.st_size; /* the blob its hash proved */
		} else if (corrupted) {
			d->repaired = true;
			note(&r, "%s; fetching it again", e.msg);
		} else if (grc != ML_ENOENT) {
			*err = e;
			rc = grc;
			goto out;
		}
	}

	/* 3. sources for the rest */
	if (mlf_sources(&r.sources, &r.n_sources, cfg, r.o->offline) || collect_projects(&r)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	run_lookups(&r);

	for (size_t i = 0; i < plan->n_files; i++)
		if (items[i].n_urls > 0 && items[i].result == ML_EINTEGRITY) {
			items[i].result = 0; /* another source has the pinned file */
			ml_err_clear(&items[i].err);
		}

	/* 4. anything found nowhere */
	size_t n_missing = 0;
	int hard = 0;
	const ml_err *hard_err = NULL;
	ml_buf list = ML_BUF_INIT;
	for (size_t i = 0; i < plan->n_files; i++) {
		ml_download *d = &items[i];
		const ml_artifact *a = &plan->files[i];
		if (d->done || d->n_urls > 0)
			continue;
		if (d->result == ML_EINTEGRITY) {
			if (hard != ML_EINTEGRITY) {
				hard = ML_EINTEGRITY;
				hard_err = &d->err;
			}
			continue;
		}
		const project_job *pj = NULL;
		for (size_t k = 0; k < r.n_projects && !pj; k++)
			if (strcmp(r.projects[k].name, a->name) == 0)
				pj = &r.projects[k];
		if (pj && pj->rc) {
			d->result = pj->rc;
			d->err = pj->err;
			if (!hard) {
				hard = pj->rc;
				hard_err = &pj->err;
			}
			continue;
		}
		n_missing++;
		d->result = ML_ENOENT;
		ml_err_set(&d->err, ML_ENOENT, "%s %s ('%s', sha256 %s) is %s", a->name,
		           a->version ? a->version : "", d->name, d->sha256,
		           r.o->offline
		                   ? "neither in the cache nor in a local --find-links location"
		                   : "on none of the indexes or --find-links locations");
		ml_err_hint(&d->err, r.o->offline ? "run without --offline, or add a --find-links "
		                                    "directory that holds it"
		                                  : "check the index options, or add the index or "
		                                    "directory that has it");
		ml_buf_printf(&list, "%s%s", n_missing > 1 ? ", " : "", d->name);
	}
	if (hard) {
		*err = *hard_err;
		rc = hard;
	} else if (n_missing) {
		ml_err_set(
		        err, ML_ENOENT, "%zu file%s %s: %s", n_missing, n_missing == 1 ? "" : "s",
		        r.o->offline
		                ? (n_missing == 1 ? "is neither in the cache nor in --find-links"
		                                  : "are neither in the cache nor in --find-links")
		                : (n_missing == 1 ? "was found on no index or --find-links "
		                                    "location"
		                                  : "were found on no index or --find-links "
		                                    "location"),
		        ml_buf_cstr(&list));
		ml_err_hint(err, r.o->offline
		                         ? (n_missing == 1 ? "run without --offline, or add a "
		                                             "--find-links directory that holds it"
		                                           : "run without --offline, or add a "
		                                             "--find-links directory that holds "
		                                             "them")
		                         : "check the index options (--index-url, "
		                           "--extra-index-url, --find-links)");
		rc = ML_ENOENT;
	}
	ml_buf_release(&list);
out:
	free(r.sources);
	free(r.projects);
	pthread_mutex_destroy(&r.mu);
	return rc;
}
