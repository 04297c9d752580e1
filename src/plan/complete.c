/*
 * complete.c - completes a plan the manifest does not fully describe,
 * before anything is fetched, by asking a provider (ml_plan_provider) for
 * what only the package indexes, the file servers and a resolver know: a
 * requirements file that pins no hashes is pinned by a resolver (pip
 * today), or by the lock kept from a shipped manifest's first resolution;
 * requirements named by hash only (a hashed file without `# mlsetup-file:`
 * lines, as pip-compile and uv write them) learn their files from what the
 * sources list; files of unknown size (a lock without sizes) are sized by
 * their servers (one whose server does not tell keeps size -1: the
 * download learns it); then the plan chooses its files again
 * (ml_plan_refile). Also learns a project candidate's torch build from its
 * wheel, fetched and audited through the provider. Plan decides what to
 * ask and what the answers mean; the provider only answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "internal.h"

bool ml_plan_is_complete(const ml_plan *p)
{
	return !p->needs_resolution && p->n_unknown == 0 && p->n_unsized == 0;
}

static bool is_remote(const char *url)
{
	return strncasecmp(url, "http:", 5) == 0 || strncasecmp(url, "https:", 6) == 0;
}

/* --- files named by hash only ----------------------------------------------------- */

static const ml_requirement *req_at_line(const ml_manifest *mf, int line)
{
	for (size_t i = 0; i < mf->reqs->n_reqs; i++)
		if (mf->reqs->reqs[i].line == line)
			return &mf->reqs->reqs[i];
	return NULL;
}

/* What the sources say of one requirement named by hash only: the files
 * with one of its hashes (the first source's), and its version's other
 * files (for the message when none has). Borrowed from the listing. */
typedef struct pin {
	const ml_artifact *a;
	const ml_requirement *rq;
	ml_project_listing l;
	ml_listed_file **found;
	size_t n_found;
	ml_listed_file **offered;
	size_t n_offered;
} pin;

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

static bool wanted(const ml_requirement *rq, const char *sha)
{
	for (size_t i = 0; sha && i < rq->n_hashes; i++)
		if (strcmp(rq->sha256[i], sha) == 0)
			return true;
	return false;
}

static bool have_hash(const pin *q, const char *sha)
{
	for (size_t i = 0; i < q->n_found; i++)
		if (strcmp(q->found[i]->sha256, sha) == 0)
			return true;
	return false;
}

/* Sorts the listing's files into found and offered, in source order. */
static int match(pin *q)
{
	size_t n = q->l.n_files;
	q->found = calloc(n ? n : 1, sizeof(*q->found));
	q->offered = calloc(n ? n : 1, sizeof(*q->offered));
	if (!q->found || !q->offered)
		return ML_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		ml_listed_file *f = &q->l.files[k];
		if (wanted(q->rq, f->sha256) && f->url && !have_hash(q, f->sha256))
			q->found[q->n_found++] = f;
		else if (of_version(f->filename, q->a->version) && !wanted(q->rq, f->sha256))
			q->offered[q->n_offered++] = f;
	}
	return 0;
}

/* Sizes the found files whose source gave none, all at once; one still
 * unknown keeps size -1 and the download learns it. */
static int size_found(pin *q, size_t n, const ml_plan_provider *pv, ml_err *err)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < q[i].n_found; k++)
			m += q[i].found[k]->size < 0;
	if (!m)
		return 0;
	char **urls = calloc(m, sizeof(*urls));
	int64_t *sizes = calloc(m, sizeof(*sizes));
	ml_listed_file **files = calloc(m, sizeof(*files));
	int rc = urls && sizes && files ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	m = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		for (size_t k = 0; !rc && k < q[i].n_found; k++) {
			ml_listed_file *f = q[i].found[k];
			if (f->size >= 0)
				continue;
			if (pv->offline && is_remote(f->url)) {
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
	if (!rc && m)
		rc = pv->file_sizes(sizes, urls, m, pv->data, err);
	for (size_t k = 0; !rc && k < m; k++)
		files[k]->size = sizes[k];
	free(urls);
	free(sizes);
	free(files);
	return rc;
}

/* The failure for a requirement no source has a listed file of. */
static int not_found(const ml_manifest *mf, const pin *q, bool offline, ml_err *err)
{
	const ml_artifact *a = q->a;
	const ml_requirement *rq = q->rq;
	if (q->l.rc && !q->n_found) {
		*err = q->l.err;
		return q->l.rc;
	}
	if (!q->l.project_seen) {
		ml_err_set(err, ML_ENOENT, "manifest '%s' line %d: %s is on none of the %s",
		           mf->name, a->line, rq->name,
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
	for (size_t i = 0; i < rq->n_hashes; i++)
		ml_buf_printf(&b, "%s%s", i ? ", " : "", rq->sha256[i]);
	ml_buf_puts(&b, "); the indexes offer ");
	for (size_t i = 0; i < q->n_offered && i < 8; i++)
		ml_buf_printf(&b, "%s%s (sha256 %s)", i ? ", " : "", q->offered[i]->filename,
		              q->offered[i]->sha256 ? q->offered[i]->sha256 : "not given");
	if (q->n_offered > 8)
		ml_buf_printf(&b, " and %zu more", q->n_offered - 8);
	if (!q->n_offered)
		ml_buf_printf(&b, "no file of %s %s", rq->name, a->version);
	ml_err_set(err, ML_EINTEGRITY,
	           "manifest '%s' line %d: no file of %s %s has one of the %zu hash%s the "
	           "requirement lists (%s",
	           mf->name, a->line, rq->name, a->version, rq->n_hashes,
	           rq->n_hashes == 1 ? "" : "es", ml_buf_cstr(&b));
	ml_buf_release(&b);
	ml_err_hint(err, "the files changed after the requirements were hashed, or this is not the "
	                 "index they were made for; hash them again only if you trust the new "
	                 "files");
	return ML_EINTEGRITY;
}

/* Files named by hash only: the sources say which file has each hash. */
static int lookup_hashes(ml_plan *p, const ml_plan_provider *pv, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	pin *q = calloc(p->n_unknown, sizeof(*q));
	ml_project_listing *ls = calloc(p->n_unknown, sizeof(*ls));
	size_t n = 0;
	int rc = q && ls ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		const ml_requirement *rq = a->filename ? NULL : req_at_line(mf, a->line);
		if (!rq || n >= p->n_unknown)
			continue;
		q[n].a = a;
		q[n].rq = rq;
		ls[n++].name = a->name;
	}
	if (!rc) {
		ml_plan_note(pv, ML_PLAN_NOTE_STEP,
		             "asking the indexes which files the %zu hashed requirement%s name%s",
		             n, n == 1 ? "" : "s", n == 1 ? "s" : "");
		rc = pv->list_files(ls, n, pv->data, err);
	}
	for (size_t i = 0; i < n; i++)
		q[i].l = ls[i]; /* moves: released below, whatever rc is */
	for (size_t i = 0; !rc && i < n; i++)
		if (match(&q[i]))
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc)
		rc = size_found(q, n, pv, err);
	for (size_t i = 0; !rc && i < n; i++) {
		for (size_t k = 0; !rc && k < q[i].n_found; k++) {
			const ml_listed_file *f = q[i].found[k];
			rc = ml_manifest_add_file(mf, f->sha256, f->size, f->filename, f->url, err);
		}
		if (!rc && !q[i].n_found)
			rc = not_found(mf, &q[i], pv->offline, err);
	}
	for (size_t i = 0; q && i < n; i++) {
		ml_project_listing_release(&q[i].l);
		free(q[i].found);
		free(q[i].offered);
	}
	free(q);
	free(ls);
	return rc;
}

/* --- sizes ---------------------------------------------------------------------- */

/* Files named with a URL but no size (a lock without sizes): their
 * servers are asked, all at once; a size none tells stays -1 and the
 * download learns it. */
static int size_files(ml_plan *p, const ml_plan_provider *pv, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	char **urls = calloc(p->n_files ? p->n_files : 1, sizeof(*urls));
	int64_t *sizes = calloc(p->n_files ? p->n_files : 1, sizeof(*sizes));
	ml_artifact **arts = calloc(p->n_files ? p->n_files : 1, sizeof(*arts));
	int rc = urls && sizes && arts ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; !rc && i < p->n_files; i++) {
		ml_artifact *a = &p->files[i];
		if (!a->filename || a->size >= 0)
			continue;
		if (!a->url) {
			ml_err_set(err, ML_EFAIL,
			           "manifest '%s' line %d: the size of %s is unknown", mf->name,
			           a->line, a->filename);
			ml_err_hint(err, "give the file's size, or its URL");
			rc = ML_EFAIL;
		} else if (pv->offline && strncmp(a->url, "file:", 5) != 0) {
			ml_err_set(err, ML_ENOENT,
			           "the size of '%s' is unknown and --offline forbids asking its "
			           "server",
			           a->filename);
			ml_err_hint(err,
			            "run without --offline once, or use a lock that gives sizes");
			rc = ML_ENOENT;
		} else {
			arts[n] = a;
			urls[n++] = a->url;
		}
	}
	if (!rc && n)
		rc = pv->file_sizes(sizes, urls, n, pv->data, err);
	for (size_t k = 0; !rc && k < n; k++)
		if (sizes[k] >= 0)
			rc = ml_manifest_add_file(mf, arts[k]->sha256, sizes[k], arts[k]->filename,
			                          arts[k]->url, err);
	free(urls);
	free(sizes);
	free(arts);
	return rc;
}

/* --- a file that pins no hashes ------------------------------------------------ */

/* Pins the manifest to the resolver's answer for o->python, and says
 * which resolver answered in *done. */
static int resolve(ml_plan *p, const ml_machine *m, const ml_plan_provider *pv,
                   const ml_plan_complete_opts *o, ml_plan_completion *done, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	char desc[256];
	snprintf(desc, sizeof(desc), "CPython %s on %s-%s",
	         o->python_version ? o->python_version : "", m->os.name, m->os.arch);
	/* a shipped manifest has no file: the resolver reads its embedded text */
	const ml_embedded_file *emb = mf->embedded ? ml_embedded_find(mf->embedded_name) : NULL;
	ml_resolve_request rq = {.manifest = mf->name,
	                         .python = o->python,
	                         .input_path = mf->embedded_name ? mf->embedded_name : mf->name,
	                         .input_text = emb ? emb->data : NULL,
	                         .target_desc = desc,
	                         .note = pv->note,
	                         .note_data = pv->note_data};
	int maj = 0, min = 0, gmaj = 0, gmin = 0;
	sscanf(o->python_version ? o->python_version : "", "%d.%d", &maj, &min);
	sscanf(m->os.libc_version, "%d.%d", &gmaj, &gmin);
	rq.target = (ml_tag_target){m->os.name, m->os.arch, m->os.libc_kind, gmaj, gmin, maj, min};
	char **extra = NULL;
	size_t n_extra = 0;
	if (ml_plan_torch_resolve_args(&extra, &n_extra, p))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	rq.extra_args = extra;
	rq.n_extra_args = n_extra;
	ml_resolution res;
	memset(&res, 0, sizeof(res));
	int rc = pv->resolve(&res, &rq, pv->data, err);
	for (size_t i = 0; i < n_extra; i++)
		free(extra[i]);
	free(extra);
	if (!rc)
		rc = ml_manifest_set_resolution(mf, res.picks, res.n_picks, err);
	ml_pip_picks_free(res.picks, res.n_picks);
	if (!rc) {
		done->resolved = true;
		done->resolver = res.resolver;
		p->resolver = res.resolver;
	}
	return rc;
}

/* A shipped manifest without hashes (the Windows set) is resolved once:
 * later installs with the same interpreter take the lock its first install
 * kept (o->resolved_lock) and check every file against the hashes trusted
 * then, asking the resolver nothing. Sets *reused; a lock that is not
 * there, or does not read, leaves it false (resolved again, and said). */
static int reuse_lock(ml_plan *p, const ml_plan_provider *pv, const char *path, bool *reused,
                      ml_err *err)
{
	*reused = false;
	ml_manifest *mf = p->selection->manifest;
	struct stat st;
	if (!path || stat(path, &st) != 0)
		return 0;
	ml_manifest *lk = NULL;
	ml_err e = ML_ERR_INIT;
	if (ml_manifest_open(&lk, path, &e) != 0) {
		ml_plan_note(pv, ML_PLAN_NOTE_WARNING,
		             "the lock of the first install of '%s', %s, does not read (%s): "
		             "resolving it "
		             "again",
		             mf->name, path, e.msg);
		return 0;
	}
	const char *requested = NULL;
	for (size_t i = 0; i < lk->reqs->n_meta; i++)
		if (!strcmp(lk->reqs->meta[i].key, "requested"))
			requested = lk->reqs->meta[i].value;
	size_t n = lk->reqs->n_reqs;
	ml_pip_pick *picks = calloc(n ? n : 1, sizeof(*picks));
	int rc = picks ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < n; i++) {
		const ml_requirement *q = &lk->reqs->reqs[i];
		const ml_file_info *fi = NULL;
		for (size_t k = 0; q->n_hashes && k < lk->n_files && !fi; k++)
			if (!strcmp(lk->files[k].sha256, q->sha256[0]))
				fi = &lk->files[k];
		if (!q->version || !fi || !fi->url) {
			rc = ml_err_set(err, ML_EPARSE,
			                "the lock '%s' names no file for %s: delete it to resolve "
			                "'%s' again",
			                path, q->name, mf->name);
			break;
		}
		picks[i].name = strdup(q->name);
		picks[i].version = strdup(q->version);
		picks[i].url = strdup(fi->url);
		ml_strlcpy(picks[i].sha256, fi->sha256, sizeof(picks[i].sha256));
		/* requested: the words of the lock's [tool.mlsetup] requested */
		size_t l = strlen(q->normalized);
		for (const char *w = requested; w && *w && !picks[i].requested;) {
			w += strspn(w, " ");
			size_t wl = strcspn(w, " ");
			picks[i].requested = wl == l && !strncmp(w, q->normalized, l);
			w += wl;
		}
		if (!picks[i].name || !picks[i].version || !picks[i].url)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = ml_manifest_set_resolution(mf, picks, n, err);
	/* the sizes the lock knows: no server is asked for them */
	for (size_t k = 0; !rc && k < lk->n_files; k++)
		if (lk->files[k].size >= 0)
			rc = ml_manifest_add_file(mf, lk->files[k].sha256, lk->files[k].size,
			                          lk->files[k].filename, lk->files[k].url, err);
	ml_pip_picks_free(picks, n);
	ml_manifest_free(lk);
	if (rc)
		return rc;
	*reused = true;
	ml_plan_note(
	        pv, ML_PLAN_NOTE_STEP,
	        "'%s' (%s): the lock of its first install, %s, pins every file; each is checked "
	        "against the hashes trusted then (delete the lock to resolve it again)",
	        mf->name, mf->embedded_name ? mf->embedded_name : mf->name, path);
	return 0;
}

int ml_plan_complete(ml_plan *p, const ml_machine *m, const ml_plan_provider *pv,
                     const ml_plan_complete_opts *opts, ml_plan_completion *out, ml_err *err)
{
	ml_plan_complete_opts none = {0};
	const ml_plan_complete_opts *o = opts ? opts : &none;
	ml_plan_completion done;
	memset(&done, 0, sizeof(done));
	int rc = ml_plan_torch_choose(p, m, pv, o, err);
	if (rc) {
		/* nothing to resolve for: the choice says why */
	} else if (p->needs_resolution && !o->python) {
		ml_plan_note(pv, ML_PLAN_NOTE_WARNING,
		             "'%s' does not pin hashes: its files are known once pip of the "
		             "environment's interpreter resolves it, which install does after "
		             "fetching the interpreter (or give --python PATH)",
		             p->selection->manifest->name);
		done.unresolved = true;
	} else if (p->needs_resolution) {
		rc = reuse_lock(p, pv, o->resolved_lock, &done.lock_reused, err);
		if (!rc && !done.lock_reused)
			rc = resolve(p, m, pv, o, &done, err);
		/* the pins name every file: choose them before looking further */
		if (!rc)
			rc = ml_plan_refile(p, m, err);
	}
	if (!rc && !done.unresolved && p->n_unknown)
		rc = lookup_hashes(p, pv, err);
	if (!rc && !done.unresolved && p->n_unsized)
		rc = size_files(p, pv, err);
	if (!rc && !done.unresolved)
		rc = ml_plan_refile(p, m, err);
	if (out)
		*out = done;
	return rc;
}

/* --- a project candidate's torch build, from its wheel ------------------------------ */

int ml_candidate_unjudged(ml_candidate *c, bool broken, const char *reason)
{
	c->broken = c->broken || broken;
	free(c->reason);
	c->reason = strdup(reason);
	if (!c->reason)
		return ML_ENOMEM;
	/* one line: a resolver's output joined */
	char *w = c->reason;
	for (const char *q = c->reason; *q; q++) {
		if (*q == '\n' || *q == '\r') {
			if (w > c->reason && w[-1] != ' ')
				*w++ = ' ';
			continue;
		}
		*w++ = *q;
	}
	while (w > c->reason && w[-1] == ' ')
		w--;
	*w = '\0';
	return 0;
}

const ml_artifact *ml_plan_torch_wheel(const ml_plan *p, bool offline, const char **why)
{
	const ml_artifact *a = NULL;
	for (size_t i = 0; i < p->n_files && !a; i++)
		if (strcmp(p->files[i].name, "torch") == 0)
			a = &p->files[i];
	/* a size no server told (-1) is learned by the download; offline,
	 * nothing asked the servers */
	if (a && a->filename && a->sha256[0] && !(a->size < 0 && offline))
		return a;
	*why = offline ? "offline, and its torch wheel is unknown here"
	               : "its torch wheel for this platform is unknown";
	return NULL;
}

/* c marked broken with "<what>: <detail>". */
static int failed(ml_candidate *c, const char *what, const char *detail)
{
	char *r = ml_asprintf("%s: %s", what, detail);
	int rc = r ? ml_candidate_unjudged(c, true, r) : ML_ENOMEM;
	free(r);
	return rc;
}

int ml_candidate_audit_torch(ml_candidate *c, ml_plan *p, const ml_artifact *a,
                             const ml_plan_provider *pv, ml_err *err)
{
	ml_plan_note(
	        pv, ML_PLAN_NOTE_STEP,
	        "auditing %s of %s: torch builds not in mlsetup's table are judged by the code "
	        "their wheel carries",
	        a->filename, c->name);
	char path[4096];
	ml_err e = ML_ERR_INIT;
	int rc = pv->fetch_file(path, sizeof(path), a, pv->data, &e);
	if (rc)
		rc = failed(c, "its torch wheel cannot be fetched", e.msg);
	else {
		ml_torch_build b;
		if (pv->audit_wheel(&b, path, pv->data, &e) != 0)
			rc = failed(c, "its torch wheel cannot be audited", e.msg);
		else {
			ml_strlcpy(c->source, "audit", sizeof(c->source));
			return ml_manifest_set_torch_build(p->selection->manifest, &b, err);
		}
	}
	return rc ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}
