/*
 * lockfile.c - the lock files an install writes (PEP 751). The
 * environment's, <env>/pylock.toml, is written into the staged
 * environment before it is swapped into place, so an environment never
 * appears without it; each wheel's URL comes from the manifest (a lock
 * file, pip's resolution, an index lookup), else from the source that
 * served it in this run, else from the cache's record of where the blob
 * was fetched. And pip's resolution of a file that pins no hashes is kept
 * as a lock under the cache (<cache>/resolved/), said loudly: a shipped
 * manifest's is taken again by later installs with the same interpreter.
 */
#include <stdio.h>
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
	if (r->res->plan->project && r->res->plan->project->commit[0])
		in.commit = r->res->plan->project->commit; /* the project's checkout */
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

int mli_resolution_lock(char *path, size_t sz, mli_run *r, ml_err *err)
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
	if (ml_pathf(path, sz, "%s/resolved/%.100s-%.12s.pylock.toml", ml_cache_root(r->cache),
	             base, key_hex))
		return ml_err_set(err, ML_EFAIL, "cache path too long");
	return 0;
}

/* "CPython 3.12.8 on linux-x86_64" */
static void target_desc(char *dst, size_t sz, const ml_python_info *py, const ml_machine *m)
{
	snprintf(dst, sz, "CPython %s on %s-%s", py->version, m->os.name, m->os.arch);
}

int mli_save_resolution(mli_run *r, const ml_pip_info *pi, ml_err *err)
{
	ml_install_result *res = r->res;
	const ml_plan *p = res->plan;
	const ml_manifest *mf = p->selection->manifest;
	int rc0 = mli_resolution_lock(res->resolved_lock, sizeof(res->resolved_lock), r, err);
	if (rc0)
		return rc0;
	char dir[sizeof(res->resolved_lock)];
	ml_strlcpy(dir, res->resolved_lock, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	const char **urls = calloc(p->n_files ? p->n_files : 1, sizeof(*urls));
	if (!urls)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_files; i++)
		urls[i] = p->files[i].url;
	ml_pylock_input in = ML_PYLOCK_INPUT_INIT;
	in.plan = p;
	in.urls = urls;
	in.python = &res->python;
	in.python_source = res->python_source[0] ? res->python_source : NULL;
	in.python_reason = res->python_reason[0] ? res->python_reason : NULL;
	in.machine = res->machine;
	char *text = NULL;
	int rc = ml_pylock_render(&text, &in, NULL, err);
	free(urls);
	int e = rc ? 0 : ml_fs_mkdirs(dir, 0755);
	if (!rc && !e)
		e = ml_fs_write_atomic(res->resolved_lock, text, strlen(text), 0644);
	free(text);
	if (!rc && e)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", res->resolved_lock,
		                strerror(-e));
	if (rc) {
		res->resolved_lock[0] = '\0';
		return rc;
	}
	char desc[256];
	target_desc(desc, sizeof(desc), &res->python, res->machine);
	if (mf->embedded) { /* the shipped Windows manifests: trust on first use */
		mli_say(&r->ev, ML_EV_WARNING,
		        "'%s' (%s) pins versions without hashes: %s %s of %s resolved it for "
		        "%s, and the hashes the indexes gave were trusted on first use; every "
		        "file is checked against them, and the lock is kept in %s%s%s",
		        mf->name, mf->embedded_name, pi->tool[0] ? pi->tool : "pip", pi->version,
		        res->python.executable, desc,
		        res->target[0] ? res->target : "",
		        res->target[0] ? "/pylock.toml once installed, and in " : "",
		        res->resolved_lock);
		return 0;
	}
	mli_say(&r->ev, ML_EV_WARNING,
	        "'%s' does not pin hashes: %s %s of %s%s resolved it for %s; every file is "
	        "checked against that resolution, saved as the lock %s%s",
	        mf->name, pi->tool[0] ? pi->tool : "pip", pi->version, res->python.executable,
	        pi->externally_managed ? " (externally managed, PEP 668: "
	                                 "--break-system-packages for the dry run only)"
	                               : "",
	        desc, res->resolved_lock,
	        res->target[0] ? " (and <environment>/pylock.toml once installed)" : "");
	return 0;
}
