/*
 * uv.c - resolves a requirements file that does not pin hashes with uv's
 * resolver, the fast one, for the interpreter the environment will use:
 * `uv pip compile --format pylock.toml` (PEP 751), wheels only, told the
 * run's indexes the way pip is told them. pip downloads every wheel whose
 * metadata it needs from an index that serves no PEP 658 metadata files
 * (torch: ~900 MB); uv reads a wheel's METADATA with HTTP range requests.
 * The lock uv writes names, for each package, the wheels that install on
 * that interpreter with their URL, size and sha256; the pick is the one
 * with the best PEP 425 tag rank, as pip would choose. Everything after
 * (every byte checked against that sha256) is as for pip's resolution.
 * Where mlsetup gets uv: src/install/uvtool.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlsetup/pkg.h"

/* Writes text to path; returns 0 or ML_EIO. */
static int write_file(const char *path, const char *text, ml_err *err)
{
	int e = ml_fs_write_atomic(path, text, strlen(text), 0644);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	return 0;
}

/* Adds the names listed by the requirements file at path (-r includes
 * too) to *names (space-separated, each between spaces). A file that does
 * not read leaves them as they are: requested is a label, not a rule. */
static void add_names(ml_buf *names, const char *path)
{
	ml_requirements *rq = NULL;
	ml_err e = ML_ERR_INIT;
	if (ml_requirements_load_tree(&rq, path, ML_REQ_INCLUDES, &e) != 0)
		return;
	for (size_t i = 0; i < rq->n_reqs; i++)
		ml_buf_printf(names, "%s ", rq->reqs[i].normalized);
	ml_requirements_free(rq);
}

/* True when normalized name n is one of names' words. */
static bool named(const ml_buf *names, const char *n)
{
	size_t l = strlen(n);
	for (const char *w = ml_buf_cstr(names); (w = strstr(w, n)) != NULL; w += l)
		if ((w == ml_buf_cstr(names) || w[-1] == ' ') && w[l] == ' ')
			return true;
	return false;
}

/* The best wheel of pkg for tags, or NULL when none installs there. */
static const ml_pylock_wheel *best_wheel(const ml_pylock_package *pkg, char *const *tags,
                                         size_t n_tags)
{
	const ml_pylock_wheel *best = NULL;
	int best_rank = -1;
	for (size_t i = 0; i < pkg->n_wheels; i++) {
		ml_wheel_name wn;
		ml_err e = ML_ERR_INIT;
		if (ml_wheel_filename_parse(&wn, pkg->wheels[i].filename, &e) != 0)
			continue;
		int r = ml_wheel_tag_rank(&wn, tags, n_tags);
		if (r >= 0 && (best_rank < 0 || r < best_rank)) {
			best = &pkg->wheels[i];
			best_rank = r;
		}
	}
	return best;
}

/* Turns uv's lock into picks. */
static int read_lock(ml_pip_pick **out, size_t *n_out, const char *path, const ml_buf *names,
                     const ml_uv_resolve_opts *o, ml_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ml_os_read_file(&text, &len, NULL, path, 64u * 1024 * 1024, err);
	if (rc)
		return rc;
	ml_pylock *pl = NULL;
	rc = ml_pylock_parse(&pl, path, NULL, text, len, err);
	free(text);
	if (rc)
		return rc;
	ml_pip_pick *picks = calloc(pl->n_pkgs ? pl->n_pkgs : 1, sizeof(*picks));
	size_t k = 0;
	if (!picks)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < pl->n_pkgs; i++) {
		const ml_pylock_package *pkg = &pl->pkgs[i];
		const ml_pylock_wheel *w = best_wheel(pkg, o->tags, o->n_tags);
		if (!w) {
			rc = ml_err_set(err, ML_EFAIL,
			                "uv resolved %s %s for %s, but none of its wheels installs "
			                "there",
			                pkg->name, pkg->version ? pkg->version : "(no version)",
			                o->target_desc ? o->target_desc : o->python);
			break;
		}
		ml_pip_pick *p = &picks[k++];
		p->name = strdup(pkg->name);
		p->version = strdup(pkg->version);
		p->url = strdup(w->url);
		ml_strlcpy(p->sha256, w->sha256, sizeof(p->sha256));
		p->size = w->size > 0 ? w->size : 0;
		p->requested = named(names, pkg->normalized);
		if (!p->name || !p->version || !p->url)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	ml_pylock_free(pl);
	if (rc) {
		ml_pip_picks_free(picks, k);
		return rc;
	}
	*out = picks;
	*n_out = k;
	return 0;
}

int ml_uv_resolve(ml_pip_pick **out, size_t *n_out, const ml_uv_resolve_opts *o, ml_err *err)
{
	ml_pip_run r;
	int rc = ml_resolver_run_begin(&r, "uv", err);
	if (rc)
		return rc;
	char extra[4200], lock[4200];
#ifndef _WIN32
	char cert_env[4200]; /* "SSL_CERT_FILE=..." for env(1); lives until the run */
#endif
	snprintf(extra, sizeof extra, "%s/extra.txt", r.dir);
	/* uv insists on this name for a pylock.toml it writes */
	snprintf(lock, sizeof lock, "%s/pylock.toml", r.dir);
	const char *input = o->input_text ? r.input : o->input_path;
	if (o->input_text)
		rc = write_file(r.input, o->input_text, err);
	/* pip's --cert: uv reads the CA bundle from SSL_CERT_FILE */
	const char *cert = NULL;
	for (size_t i = 0; i + 1 < o->n_index_args; i++)
		if (!strcmp(o->index_args[i], "--cert"))
			cert = o->index_args[i + 1];
	const char *have = getenv("SSL_CERT_FILE");
	if (cert && !(have && !strcmp(have, cert))) {
#ifdef _WIN32
		rc = ml_err_set(err, ML_EUNSUPPORTED,
		                "a --cert for the index is given to pip, not to uv");
#else
		snprintf(cert_env, sizeof cert_env, "SSL_CERT_FILE=%s", cert);
		ml_pip_run_arg(&r, "/usr/bin/env");
		ml_pip_run_arg(&r, cert_env);
#endif
	}
	const char *fixed[] = {o->uv,          "pip",
	                       "compile",      "--quiet",
	                       "--no-config",  "--no-python-downloads",
	                       "--color",      "never",
	                       "--no-header",  "--python",
	                       o->python,      "--only-binary",
	                       ":all:",        "--index-strategy",
	                       "unsafe-best-match", "--format",
	                       "pylock.toml",  "--output-file",
	                       lock};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		ml_pip_run_arg(&r, fixed[i]);
	if (o->cache_dir) {
		ml_pip_run_arg(&r, "--cache-dir");
		ml_pip_run_arg(&r, o->cache_dir);
	}
	/* pip's options as uv takes them; bare requirements go to a file of
	 * their own (uv takes requirements files, not requirements, here) */
	ml_buf reqs = ML_BUF_INIT, names = ML_BUF_INIT;
	for (size_t i = 0; !rc && i < o->n_index_args; i++) {
		const char *a = o->index_args[i];
		bool takes_value = !strcmp(a, "--index-url") || !strcmp(a, "--extra-index-url") ||
		                   !strcmp(a, "--find-links") || !strcmp(a, "--trusted-host");
		if (!strcmp(a, "--cert")) {
			i++; /* SSL_CERT_FILE, above */
		} else if (takes_value && i + 1 < o->n_index_args) {
			ml_pip_run_arg(&r, strcmp(a, "--trusted-host") ? a : "--allow-insecure-host");
			ml_pip_run_arg(&r, o->index_args[++i]);
		} else if (a[0] == '-') {
			ml_pip_run_arg(&r, a);
		} else if (ml_buf_printf(&reqs, "%s\n", a)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	}
	if (!rc)
		ml_pip_run_arg(&r, input);
	if (!rc && reqs.len) {
		rc = write_file(extra, ml_buf_cstr(&reqs), err);
		ml_pip_run_arg(&r, extra);
	}
	char *output = NULL;
	int status = 0;
	if (!rc)
		rc = ml_pip_run_exec(&r, &output, &status, err);
	if (!rc && status != 0)
		rc = ml_resolver_failed(err, "uv", o->input_path,
		                        o->target_desc ? o->target_desc : o->python, output);
	free(output);
	if (!rc) {
		add_names(&names, input);
		if (reqs.len)
			add_names(&names, extra);
		rc = read_lock(out, n_out, lock, &names, o, err);
	}
	ml_buf_release(&reqs);
	ml_buf_release(&names);
	ml_pip_run_end(&r);
	return rc;
}
