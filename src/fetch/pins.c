/*
 * pins.c - the files of pinned versions known only by their hashes: a
 * hashed requirements file without mlsetup's `# mlsetup-file:` lines (as
 * pip-compile and uv write them) names each file by sha256 alone, and the
 * indexes say which file has each hash. Every source is asked (primary
 * index, extra indexes, --find-links), several projects at a time; sizes
 * the pages do not give are asked of the file servers, all at once
 * (ml_http_sizes), and one no server tells is learned by the download.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "mlsetup/plan.h"

typedef struct pins_run {
	ml_pin_lookup *q;
	size_t n;
	const ml_index_config *cfg;
	ml_cache *cache;
	const ml_fetch_opts *o;
	mlf_source *sources;
	size_t n_sources;
} pins_run;

void ml_pin_lookup_release(ml_pin_lookup *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n_found; i++)
		mlf_index_file_release(&q->found[i]);
	free(q->found);
	for (size_t i = 0; i < q->n_offered; i++)
		mlf_index_file_release(&q->offered[i]);
	free(q->offered);
	q->found = q->offered = NULL;
	q->n_found = q->n_offered = 0;
}

static int push_file(ml_index_file **arr, size_t *n, const ml_index_file *f)
{
	ml_index_file *p = realloc(*arr, (*n + 1) * sizeof(*p));
	if (!p)
		return ML_ENOMEM;
	*arr = p;
	ml_index_file *c = &p[*n];
	memset(c, 0, sizeof(*c));
	c->size = f->size;
	c->yanked = f->yanked;
	c->filename = strdup(f->filename);
	c->url = f->url ? strdup(f->url) : NULL;
	c->sha256 = f->sha256 ? strdup(f->sha256) : NULL;
	(*n)++;
	if (!c->filename || (f->url && !c->url) || (f->sha256 && !c->sha256))
		return ML_ENOMEM;
	return 0;
}

/* True when file name fn is a distribution of version v of the project. */
static bool of_version(const char *fn, const char *version)
{
	ml_wheel_name wn;
	if (ml_wheel_filename_parse(&wn, fn, NULL) == 0)
		return ml_version_cmp(wn.version, version) == 0;
	/* an sdist: "<name>-<version>.tar.gz" */
	size_t vl = strlen(version);
	const char *dash = strrchr(fn, '-');
	return dash && strncasecmp(dash + 1, version, vl) == 0 && dash[1 + vl] == '.';
}

static bool wanted(const ml_pin_lookup *q, const char *sha)
{
	for (size_t i = 0; sha && i < q->n_sha256; i++)
		if (strcmp(q->sha256[i], sha) == 0)
			return true;
	return false;
}

static bool have_hash(const ml_pin_lookup *q, const char *sha)
{
	for (size_t i = 0; i < q->n_found; i++)
		if (strcmp(q->found[i].sha256, sha) == 0)
			return true;
	return false;
}

static void one(pins_run *r, ml_pin_lookup *q)
{
	for (size_t s = 0; s < r->n_sources; s++) {
		ml_project *proj = NULL;
		ml_err e = ML_ERR_INIT;
		int rc = mlf_lookup(&proj, r->sources[s].url, r->sources[s].find_links, q->name,
		                    r->cfg, r->cache, r->o, NULL, NULL, &e);
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
		for (size_t k = 0; k < proj->n_files && !rc; k++) {
			const ml_index_file *f = &proj->files[k];
			if (wanted(q, f->sha256) && f->url && !have_hash(q, f->sha256))
				rc = push_file(&q->found, &q->n_found, f);
			else if (of_version(f->filename, q->version) && !wanted(q, f->sha256))
				rc = push_file(&q->offered, &q->n_offered, f);
		}
		ml_project_free(proj);
		if (rc && !q->rc) {
			q->rc = rc;
			ml_err_set(&q->err, rc, "out of memory");
		}
	}
}

static void one_job(void *data, size_t i)
{
	pins_run *r = data;
	one(r, &r->q[i]);
}

/* Sizes the found files whose page gave none, all at once
 * (ml_http_sizes: HEAD, else a ranged GET); one still unknown keeps size
 * -1 and the download learns it. */
static int size_found(pins_run *r, ml_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		for (size_t k = 0; k < r->q[i].n_found; k++)
			n += r->q[i].found[k].size < 0;
	if (!n)
		return 0;
	char **urls = calloc(n, sizeof(*urls));
	int64_t *sizes = calloc(n, sizeof(*sizes));
	ml_index_file **files = calloc(n, sizeof(*files));
	int rc = urls && sizes && files ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t m = 0;
	for (size_t i = 0; !rc && i < r->n; i++) {
		for (size_t k = 0; !rc && k < r->q[i].n_found; k++) {
			ml_index_file *f = &r->q[i].found[k];
			if (f->size >= 0)
				continue;
			if (r->o->offline && mlf_is_remote(f->url)) {
				ml_err_set(
				        err, ML_ENOENT,
				        "the size of '%s' is unknown and --offline forbids asking "
				        "the file server",
				        f->filename);
				ml_err_hint(err, "run without --offline once");
				rc = ML_ENOENT;
				break;
			}
			files[m] = f;
			urls[m++] = f->url;
		}
	}
	ml_fetch_opts fo = *r->o;
	ml_fetch_opts_use_index(&fo, r->cfg);
	if (!rc)
		rc = ml_http_sizes(sizes, urls, m, &fo, err);
	for (size_t k = 0; !rc && k < m; k++)
		files[k]->size = sizes[k];
	free(urls);
	free(sizes);
	free(files);
	return rc;
}

int ml_fetch_pin_files(ml_pin_lookup *q, size_t n, const ml_index_config *cfg, ml_cache *c,
                       const ml_fetch_opts *o, ml_err *err)
{
	ml_fetch_opts defaults = ML_FETCH_OPTS_INIT;
	pins_run r = {0};
	r.q = q;
	r.n = n;
	r.cfg = cfg;
	r.cache = c;
	r.o = o ? o : &defaults;
	if (mlf_sources(&r.sources, &r.n_sources, cfg, r.o->offline))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (r.n_sources)
		mlf_each_parallel(n, one_job, &r);
	int rc = size_found(&r, err);
	free(r.sources);
	return rc;
}
