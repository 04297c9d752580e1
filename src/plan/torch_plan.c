/*
 * torch_plan.c - a requirements file that leaves torch open gets its torch
 * build chosen before it is resolved. The offers are what the indexes
 * list: the run's own sources (the default index's builds) and PyTorch's
 * per-backend indexes "<base>/<backend>/" (the variant builds), each
 * version's best file for the target's PEP 425 tags. Their CUDA code comes
 * from the torch-build table (by the file's sha256, else by version) or,
 * for a build no table knows, from auditing its wheel, fetched through
 * the provider when its turn comes (ml_torch_choose()). The choice is
 * kept on the plan (plan --json: torch_choice) and pins the resolution:
 * `torch==<version>` with the chosen index as an extra index, so pip takes
 * the torch family from it.
 *
 * Never chosen: shipped manifests, hash-pinned torch, a local label or a
 * direct URL (the user's word), and files that name their own indexes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One listed file taken as an offer. */
typedef struct offer_file {
	char version[128]; /* public */
	char local[32];
	ml_listed_file *file; /* borrowed from its listing */
	int rank;             /* PEP 425 rank, lower is better */
	size_t listing;       /* which listing it came from */
} offer_file;

typedef struct pick_run {
	ml_plan *p;
	const ml_machine *m;
	const ml_plan_provider *pv;
	char platform[48];
	ml_torch_build **learnt; /* builds audited from wheels (owned, each its own
	                          * allocation: offers point at them) */
	size_t n_learnt;
} pick_run;

/* The requirement that leaves torch open in reqs, or NULL (none, or one
 * whose build the user chose: hashes, a local label, a URL). */
static const ml_requirement *open_torch(const ml_requirements *reqs)
{
	for (size_t i = 0; i < reqs->n_reqs; i++) {
		const ml_requirement *r = &reqs->reqs[i];
		if (strcmp(r->normalized, "torch") != 0)
			continue;
		if (r->url || r->n_hashes || (r->specifier && strchr(r->specifier, '+')))
			return NULL;
		return r;
	}
	return NULL;
}

/* Audits offer o's wheel (learn callback of ml_torch_choose()). */
static int learn(const ml_torch_build **out, const ml_torch_offer *o, void *data, ml_err *err)
{
	pick_run *r = data;
	const offer_file *of = o->data;
	const ml_listed_file *f = of->file;
	if (!f->url || !f->sha256)
		return ml_err_set(err, ML_EINTEGRITY, "the index gives %s for %s",
		                  f->url ? "no sha256" : "no URL", f->filename);
	ml_torch_build **v = realloc(r->learnt, (r->n_learnt + 1) * sizeof(*v));
	if (!v || !(v[r->n_learnt] = calloc(1, sizeof(**v)))) {
		if (v)
			r->learnt = v;
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	r->learnt = v;
	ml_plan_note(r->pv, ML_PLAN_NOTE_STEP,
	             "auditing %s to learn which GPUs its CUDA code runs on", f->filename);
	ml_artifact a = {.name = "torch",
	                 .version = (char *)o->version,
	                 .filename = f->filename,
	                 .size = f->size,
	                 .tag_rank = of->rank,
	                 .url = f->url};
	ml_strlcpy(a.sha256, f->sha256, sizeof(a.sha256));
	char path[4096];
	int rc = r->pv->fetch_file(path, sizeof(path), &a, r->pv->data, err);
	if (!rc)
		rc = r->pv->audit_wheel(v[r->n_learnt], path, r->pv->data, err);
	if (rc) {
		free(v[r->n_learnt]);
		return rc;
	}
	*out = v[r->n_learnt++];
	return 0;
}

/* The table's facts of a listed build: by the file's hash, else by
 * (version, backend, platform) on that kind of index; NULL when unknown. */
static const ml_torch_build *known(const pick_run *r, const offer_file *of, ml_torch_index index)
{
	const ml_torch_build *b = of->file->sha256 ? ml_torch_build_lookup(of->file->sha256) : NULL;
	if (b)
		return b;
	if (index == ML_TORCH_INDEX_DEFAULT && !of->local[0])
		return ml_torch_build_find(of->version, r->platform);
	char backend[32];
	ml_torch_backend(backend, sizeof(backend), of->local, NULL);
	b = backend[0] ? ml_torch_build_get(of->version, backend, r->platform, index) : NULL;
	return b && !b->code_unknown ? b : NULL;
}

/* Adds listing q's torch files for the target (tags) that spec allows to
 * files[], keeping each version's best-ranked file. */
static int take_files(offer_file **files, size_t *n, const ml_project_listing *q, size_t listing,
                      char *const *tags, size_t n_tags, const char *spec)
{
	for (size_t i = 0; i < q->n_files; i++) {
		ml_wheel_name w;
		ml_err e = ML_ERR_INIT;
		if (ml_wheel_filename_parse(&w, q->files[i].filename, &e) != 0 ||
		    strcmp(w.normalized, "torch") != 0)
			continue;
		int rank = ml_wheel_tag_rank(&w, tags, n_tags);
		bool ok = true;
		if (rank < 0 ||
		    (spec && *spec && (ml_specifier_match(&ok, spec, w.version, &e) || !ok)))
			continue;
		offer_file of = {.file = &q->files[i], .rank = rank, .listing = listing};
		const char *plus = strchr(w.version, '+');
		size_t pl = plus ? (size_t)(plus - w.version) : strlen(w.version);
		snprintf(of.version, sizeof(of.version), "%.*s", (int)pl, w.version);
		ml_strlcpy(of.local, plus ? plus + 1 : "", sizeof(of.local));
		size_t k = 0;
		while (k < *n && !((*files)[k].listing == listing &&
		                   strcmp((*files)[k].version, of.version) == 0 &&
		                   strcmp((*files)[k].local, of.local) == 0))
			k++;
		if (k < *n) {
			if (rank < (*files)[k].rank)
				(*files)[k] = of;
			continue;
		}
		offer_file *v = realloc(*files, (*n + 1) * sizeof(*v));
		if (!v)
			return ML_ENOMEM;
		*files = v;
		v[(*n)++] = of;
	}
	return 0;
}

/* Lists torch on the run's sources (q[0]) and on each backend's index
 * (q[1..n)); the first backend alone first, so an unreachable host is
 * asked once. Sets *variants_ok false when that host cannot be reached. */
static int list_all(pick_run *r, ml_project_listing *q, size_t n, bool *variants_ok, ml_err *err)
{
	size_t first = n > 1 ? 2 : 1;
	int rc = r->pv->list_files(q, first, r->pv->data, err);
	*variants_ok = n > 1;
	if (rc || n < 2)
		return rc;
	if (q[1].rc && q[1].rc != ML_ENOENT) {
		*variants_ok = false;
		ml_plan_note(
		        r->pv, ML_PLAN_NOTE_WARNING,
		        "PyTorch's indexes cannot be reached (%s): choosing among the builds of "
		        "this run's own indexes",
		        q[1].err.msg);
		return 0;
	}
	return n > 2 ? r->pv->list_files(q + 2, n - 2, r->pv->data, err) : 0;
}

static int choose(pick_run *r, const ml_requirement *req, const ml_plan_complete_opts *o,
                  ml_err *err)
{
	ml_plan *p = r->p;
	const ml_machine *m = r->m;
	const char *const *backends = NULL;
	size_t n_backends = 0;
	const char *base = ml_torch_index_default(&backends, &n_backends);
	const char *named = o->torch_index_url && *o->torch_index_url
	                            ? o->torch_index_url
	                            : getenv("MLSETUP_TORCH_INDEX_URL");
	if (named && *named)
		base = strcmp(named, "none") == 0 ? NULL : named;
	if (!base)
		n_backends = 0;
	size_t nq = 1 + n_backends;
	ml_project_listing *q = calloc(nq, sizeof(*q));
	char(*urls)[1024] = calloc(nq, sizeof(*urls));
	offer_file *files = NULL;
	size_t n_files = 0;
	ml_torch_offer *offers = NULL;
	char **tags = NULL;
	size_t n_tags = 0;
	int rc = !q || !urls ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
	for (size_t i = 0; !rc && i < nq; i++) {
		q[i].name = "torch";
		if (i) {
			ml_torch_variant_url(urls[i], sizeof(urls[i]), base, backends[i - 1]);
			q[i].index_url = urls[i];
		}
	}
	int maj = 0, min = 0, gmaj = 0, gmin = 0;
	sscanf(p->python.xy, "%d.%d", &maj, &min);
	sscanf(m->os.libc_version, "%d.%d", &gmaj, &gmin);
	ml_tag_target t = {m->os.name, m->os.arch, m->os.libc_kind, gmaj, gmin, maj, min};
	if (!rc)
		rc = ml_tags_for(&tags, &n_tags, &t, err);
	bool variants_ok = false;
	if (!rc) {
		ml_plan_note(
		        r->pv, ML_PLAN_NOTE_STEP,
		        "'%s' leaves torch open (%s%s): choosing the build for this machine's GPUs "
		        "among the indexes' builds",
		        p->selection->manifest->name, req->name,
		        req->specifier && *req->specifier ? req->specifier : "");
		rc = list_all(r, q, nq, &variants_ok, err);
	}
	for (size_t i = 0; !rc && i < nq; i++)
		if (i == 0 || variants_ok)
			rc = take_files(&files, &n_files, &q[i], i, tags, n_tags, req->specifier);
	if (!rc && n_files && !(offers = calloc(n_files, sizeof(*offers))))
		rc = ML_ENOMEM;
	for (size_t i = 0; !rc && i < n_files; i++) {
		ml_torch_index index =
		        files[i].listing ? ML_TORCH_INDEX_VARIANT : ML_TORCH_INDEX_DEFAULT;
		offers[i] = (ml_torch_offer){.version = files[i].version,
		                             .local = files[i].local,
		                             .index = index,
		                             .index_url = files[i].listing ? urls[files[i].listing]
		                                                           : NULL,
		                             .build = known(r, &files[i], index),
		                             .data = &files[i]};
	}
	ml_torch_choice *c = NULL;
	if (!rc && !(c = calloc(1, sizeof(*c))))
		rc = ML_ENOMEM;
	if (rc == ML_ENOMEM)
		ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_torch_choose_opts co = {.backend = o->torch_backend, .learn = learn, .learn_data = r};
	if (!rc)
		rc = ml_torch_choose(c, offers, n_files, m, &co, err);
	if (!rc) {
		p->torch_choice = c;
		c = NULL;
	}
	free(c);
	free(offers);
	free(files);
	for (size_t i = 0; q && i < nq; i++)
		ml_project_listing_release(&q[i]);
	free(q);
	free(urls);
	ml_tags_free(tags, n_tags);
	return rc;
}

/* A file named with --manifest was judged before its torch build was
 * known ("cannot tell which GPUs it runs on"): judged again by the same
 * rules now that it is, still the user's choice. (A project's candidate
 * is judged again by its caller.) */
static int rejudge(ml_plan *p, const ml_machine *m, ml_err *err)
{
	ml_selection *s = p->selection;
	if (!s->overridden)
		return 0;
	char choice[512] = "chosen by --manifest";
	for (size_t i = 0; i < s->n_reasons; i++)
		if (strcmp(s->reasons[i].rule, "choice") == 0)
			ml_strlcpy(choice, s->reasons[i].detail, sizeof(choice));
	ml_select_opts so = ML_SELECT_OPTS_INIT;
	so.python_version = p->python.xy;
	bool fits = false;
	int rc = ml_select_judge(s, m, &so, choice, &fits, err);
	s->overridden = true;
	return rc;
}

int ml_plan_torch_choose(ml_plan *p, const ml_machine *m, const ml_plan_provider *pv,
                         const ml_plan_complete_opts *o, ml_err *err)
{
	const ml_manifest *mf = p->selection ? p->selection->manifest : NULL;
	if (!mf || !p->needs_resolution || mf->embedded || !mf->reqs || p->torch_choice)
		return 0;
	const ml_requirement *req = open_torch(mf->reqs);
	if (!req)
		return 0;
	const ml_requirements *rs = mf->reqs;
	if (rs->index_url || rs->n_extra || rs->n_find_links || rs->no_index) {
		ml_plan_note(
		        pv, ML_PLAN_NOTE_STEP,
		        "'%s' names its own indexes: torch comes from them as written (no build "
		        "is chosen)",
		        mf->name);
		return 0;
	}
	pick_run r = {.p = p, .m = m, .pv = pv};
	snprintf(r.platform, sizeof(r.platform), "%s-%s", m->os.name, m->os.arch);
	int rc = choose(&r, req, o, err);
	for (size_t i = 0; i < r.n_learnt; i++)
		free(r.learnt[i]);
	free(r.learnt);
	if (rc)
		return rc;
	ml_torch_choice *c = p->torch_choice;
	if (c->chosen && c->runs) {
		ml_plan_note(pv, c->compat ? ML_PLAN_NOTE_WARNING : ML_PLAN_NOTE_STEP, "%s",
		             c->reason);
		/* the manifest's torch is now that build: its facts are known */
		int rc2 = ml_manifest_set_torch_build(p->selection->manifest, &c->build, err);
		return rc2 ? rc2 : rejudge(p, m, err);
	}
	if (c->chosen)
		return ml_err_set(err, ML_EUNSUPPORTED, "%s", c->reason);
	ml_err_set(err, ML_EUNSUPPORTED, "no torch build on offer runs on this machine");
	ml_err_hint(err, "%s", c->nearest);
	return ML_EUNSUPPORTED;
}

int ml_plan_torch_resolve_args(char ***out, size_t *n, const ml_plan *p)
{
	*out = NULL;
	*n = 0;
	const ml_torch_choice *c = p->torch_choice;
	if (!c || !c->chosen)
		return 0;
	char **v = calloc(3, sizeof(*v));
	size_t len = strlen(c->version) + 8;
	if (!v || !(v[0] = malloc(len))) {
		free(v);
		return ML_ENOMEM;
	}
	snprintf(v[0], len, "torch==%s", c->version);
	*n = 1;
	if (c->index == ML_TORCH_INDEX_VARIANT && c->index_url[0]) {
		if (!(v[1] = strdup("--extra-index-url")) || !(v[2] = strdup(c->index_url))) {
			free(v[0]);
			free(v[1]);
			free(v);
			return ML_ENOMEM;
		}
		*n = 3;
	}
	*out = v;
	return 0;
}
