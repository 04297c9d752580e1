/*
 * complete.c - completes a plan the manifest does not fully describe,
 * before anything is fetched: requirements named by hash only (a hashed
 * requirements file without `# mlsetup-file:` lines, as pip-compile and
 * uv write them) learn their files from the indexes, files of unknown
 * size (a lock without sizes) are sized by their servers (one whose
 * server does not tell keeps size -1: the download learns it), and the
 * plan chooses its files again (ml_plan_refile).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "mlsetup/report.h"

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

/* Files named with a URL but no size (a lock without sizes): their
 * servers are asked, all at once (ml_http_sizes); a size none tells stays
 * -1 and the download learns it. */
static int size_files(completer *r, ml_plan *p, ml_err *err)
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
		} else if (r->fo->offline && strncmp(a->url, "file:", 5) != 0) {
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
	if (!rc && n) {
		ml_fetch_opts fo = *r->fo;
		ml_fetch_opts_use_index(&fo, r->cfg);
		rc = ml_http_sizes(sizes, urls, n, &fo, err);
	}
	for (size_t k = 0; !rc && k < n; k++)
		if (sizes[k] >= 0)
			rc = ml_manifest_add_file(mf, arts[k]->sha256, sizes[k], arts[k]->filename,
			                          arts[k]->url, err);
	free(urls);
	free(sizes);
	free(arts);
	return rc;
}

bool mli_plan_complete(const ml_plan *p)
{
	return !p->needs_resolution && p->n_unknown == 0 && p->n_unsized == 0;
}

/* "CPython 3.12.8 on linux-x86_64" */
static void target_desc(char *dst, size_t sz, const ml_python_info *py, const ml_machine *m)
{
	snprintf(dst, sz, "CPython %s on %s-%s", py->version, m->os.name, m->os.arch);
}

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

int mli_resolve(ml_pip_info *pi_out, ml_plan *p, const ml_machine *m, const char *python,
                const ml_python_info *py, const ml_index_config *cfg, mli_events *ev, ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	ml_pip_info pi;
	int rc = ml_pip_probe(&pi, python, err);
	*pi_out = pi;
	if (rc)
		return rc;
	size_t cap = 8 + 2 * (cfg ? cfg->n_extra + cfg->n_find_links + cfg->n_trusted : 0);
	char **args = calloc(cap, sizeof(*args));
	if (!args)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t n_args = cfg ? ml_index_config_pip_args(args, cap, cfg) : 0;
	char desc[256];
	target_desc(desc, sizeof(desc), py, m);
	mli_say(ev, ML_EV_STEP, "resolving '%s' with pip %s for %s%s", mf->name, pi.version, desc,
	        pi.externally_managed ? " (an externally managed Python: the dry run passes "
	                                "--break-system-packages)"
	                              : "");
	/* a shipped manifest has no file: pip reads its embedded text */
	const ml_embedded_file *emb = mf->embedded ? ml_embedded_find(mf->embedded_name) : NULL;
	ml_pip_resolve_opts po = {.python = python,
	                          .input_path = mf->embedded_name ? mf->embedded_name : mf->name,
	                          .input_text = emb ? emb->data : NULL,
	                          .index_args = args,
	                          .n_index_args = n_args,
	                          .break_system_packages = pi.externally_managed,
	                          .target_desc = desc};
	ml_pip_pick *picks = NULL;
	size_t n = 0;
	rc = ml_pip_resolve(&picks, &n, &po, err);
	free(args);
	for (size_t i = 0; !rc && i < n; i++)
		hash_local(&picks[i]);
	if (!rc)
		rc = ml_manifest_set_resolution(mf, picks, n, err);
	ml_pip_picks_free(picks, n);
	if (!rc)
		rc = ml_plan_refile(p, m, err);
	return rc;
}

/* Where the resolution of the plan's file without hashes is kept:
 * <cache>/resolved/<name>-<12 hex>.pylock.toml, the hex naming the file
 * (a shipped manifest: its embedded name and the sha256 of its text, so a
 * new mlsetup with other pins resolves again), the interpreter and the
 * platform. Fills r->res->resolved_lock and dir (its folder). */
static int resolution_path(mli_run *r, char *dir, size_t dir_sz, ml_err *err)
{
	const ml_manifest *mf = r->res->plan->selection->manifest;
	char real[4096], key_hex[65];
	const ml_embedded_file *emb = mf->embedded ? ml_embedded_find(mf->embedded_name) : NULL;
	if (emb) { /* "embedded:windows/requirements.txt:<sha256>" */
		char text_hex[65];
		if (ml_sha256_hex_buf(text_hex, emb->data, emb->size) != 0)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		snprintf(real, sizeof(real), "embedded:%s:%s", emb->name, text_hex);
	} else if (!realpath(mf->name, real)) {
		ml_strlcpy(real, mf->name, sizeof(real));
	}
	char *key = ml_asprintf("%s\n%s\n%s-%s", real, r->res->python.executable,
	                        r->res->machine->os.name, r->res->machine->os.arch);
	if (!key || ml_sha256_hex_buf(key_hex, key, strlen(key)) != 0) {
		free(key);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	free(key);
	const char *base = strrchr(mf->name, '/');
	base = base ? base + 1 : mf->name;
	if (ml_pathf(dir, dir_sz, "%s/resolved", ml_cache_root(r->cache)) ||
	    ml_pathf(r->res->resolved_lock, sizeof(r->res->resolved_lock),
	             "%s/%.100s-%.12s.pylock.toml", dir, base, key_hex))
		return ml_err_set(err, ML_EFAIL, "cache path too long");
	return 0;
}

/* A shipped manifest without hashes (the Windows set) is resolved once:
 * later installs with the same interpreter take the lock its first install
 * kept (resolution_path()) and check every file against the hashes trusted
 * then, asking pip nothing. Sets *reused; a lock that is not there, or
 * does not read, leaves it false (resolved again, and said). */
static int reuse_first_lock(mli_run *r, bool *reused, ml_err *err)
{
	*reused = false;
	ml_plan *p = r->res->plan;
	ml_manifest *mf = p->selection->manifest;
	char dir[4300];
	int rc = resolution_path(r, dir, sizeof(dir), err);
	struct stat st;
	if (rc || stat(r->res->resolved_lock, &st) != 0) {
		r->res->resolved_lock[0] = '\0';
		return rc;
	}
	ml_manifest *lk = NULL;
	ml_err e = ML_ERR_INIT;
	if (ml_manifest_open(&lk, r->res->resolved_lock, &e) != 0) {
		mli_say(&r->ev, ML_EV_WARNING,
		        "the lock of the first install of '%s', %s, does not read (%s): "
		        "resolving it again",
		        mf->name, r->res->resolved_lock, e.msg);
		r->res->resolved_lock[0] = '\0';
		return 0;
	}
	const char *requested = NULL;
	for (size_t i = 0; i < lk->reqs->n_meta; i++)
		if (!strcmp(lk->reqs->meta[i].key, "requested"))
			requested = lk->reqs->meta[i].value;
	size_t n = lk->reqs->n_reqs;
	ml_pip_pick *picks = calloc(n ? n : 1, sizeof(*picks));
	rc = picks ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
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
			                r->res->resolved_lock, q->name, mf->name);
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
	if (!rc)
		rc = ml_plan_refile(p, r->res->machine, err);
	if (rc)
		return rc;
	*reused = true;
	mli_say(&r->ev, ML_EV_STEP,
	        "'%s' (%s): the lock of its first install, %s, pins every file; each is checked "
	        "against the hashes trusted then (delete the lock to resolve it again)",
	        mf->name, mf->embedded_name, r->res->resolved_lock);
	return 0;
}

/* Saves the resolution of a file without hashes as a lock file in the
 * cache (resolution_path()), and says so. */
static int save_resolution(mli_run *r, const ml_pip_info *pi, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	const ml_manifest *mf = p->selection->manifest;
	char dir[4300];
	int rc0 = resolution_path(r, dir, sizeof(dir), err);
	if (rc0)
		return rc0;
	const char **urls = calloc(p->n_files ? p->n_files : 1, sizeof(*urls));
	if (!urls)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_files; i++)
		urls[i] = p->files[i].url;
	ml_pylock_input in = ML_PYLOCK_INPUT_INIT;
	in.plan = p;
	in.urls = urls;
	in.python = &r->res->python;
	in.python_source = r->res->python_source[0] ? r->res->python_source : NULL;
	in.python_reason = r->res->python_reason[0] ? r->res->python_reason : NULL;
	in.machine = r->res->machine;
	char *text = NULL;
	int rc = ml_pylock_render(&text, &in, NULL, err);
	free(urls);
	int e = rc ? 0 : ml_fs_mkdirs(dir, 0755);
	if (!rc && !e)
		e = ml_fs_write_atomic(r->res->resolved_lock, text, strlen(text), 0644);
	free(text);
	if (!rc && e)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", r->res->resolved_lock,
		                strerror(-e));
	if (rc) {
		r->res->resolved_lock[0] = '\0';
		return rc;
	}
	char desc[256];
	target_desc(desc, sizeof(desc), &r->res->python, r->res->machine);
	if (mf->embedded) { /* the shipped Windows manifests: trust on first use */
		mli_say(&r->ev, ML_EV_WARNING,
		        "'%s' (%s) pins versions without hashes: pip %s of %s resolved it for "
		        "%s, and the hashes the indexes gave were trusted on first use; every "
		        "file is checked against them, and the lock is kept in %s%s%s",
		        mf->name, mf->embedded_name, pi->version, r->res->python.executable, desc,
		        r->res->target[0] ? r->res->target : "",
		        r->res->target[0] ? "/pylock.toml once installed, and in " : "",
		        r->res->resolved_lock);
		return 0;
	}
	mli_say(&r->ev, ML_EV_WARNING,
	        "'%s' does not pin hashes: pip %s of %s%s resolved it for %s; every file is "
	        "checked against that resolution, saved as the lock %s%s",
	        mf->name, pi->version, r->res->python.executable,
	        pi->externally_managed ? " (externally managed, PEP 668: "
	                                 "--break-system-packages for the dry run only)"
	                               : "",
	        desc, r->res->resolved_lock,
	        r->res->target[0] ? " (and <environment>/pylock.toml once installed)" : "");
	return 0;
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

int mli_complete_run(mli_run *r, const char *python, ml_err *err)
{
	ml_plan *p = r->res->plan;
	ml_pip_info pi = {0};
	int rc = 0;
	if (p->needs_resolution) {
		if (!python) {
			mli_say(&r->ev, ML_EV_WARNING,
			        "'%s' does not pin hashes: its files are known once pip of the "
			        "environment's interpreter resolves it, which install does after "
			        "fetching the interpreter (or give --python PATH)",
			        p->selection->manifest->name);
			return 0;
		}
		bool reused = false;
		if (p->selection->manifest->embedded && r->cache)
			rc = reuse_first_lock(r, &reused, err);
		if (!rc && reused) {
			ml_fetch_opts fo;
			mli_fetch_opts(&fo, r);
			rc = mli_complete_plan(p, r->res->machine, r->cfg, r->cache, &fo, &r->ev, err);
			for (size_t i = 0; !rc && i < p->n_warnings; i++)
				mli_say(&r->ev, ML_EV_WARNING, "%s", p->warnings[i]);
			return rc;
		}
		if (!rc)
			rc = mli_resolve(&pi, p, r->res->machine, python, &r->res->python, r->cfg,
			                 &r->ev, err);
	}
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	if (!rc)
		rc = mli_complete_plan(p, r->res->machine, r->cfg, r->cache, &fo, &r->ev, err);
	for (size_t i = 0; !rc && i < p->n_warnings; i++)
		mli_say(&r->ev, ML_EV_WARNING, "%s", p->warnings[i]);
	if (!rc && p->selection->manifest->resolved)
		rc = save_resolution(r, &pi, err);
	return rc;
}
