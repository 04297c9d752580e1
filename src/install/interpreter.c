/*
 * interpreter.c - the interpreter an environment is built on: an existing
 * one (--python PATH) as it is, or the pinned python-build-standalone
 * archive, fetched and verified like every wheel (from a mirror when one
 * is given) and unpacked once into the shared interpreter directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* Replaces the release host prefix of a python-build-standalone URL with
 * the mirror: everything up to ".../releases/download" (or, for other
 * URLs, the scheme and host). */
static int mirror_url(char *dst, size_t sz, const char *url, const char *mirror)
{
	if (!mirror || !*mirror)
		return ml_pathf(dst, sz, "%s", url);
	size_t ml = strlen(mirror);
	while (ml && mirror[ml - 1] == '/')
		ml--;
	const char *rest = strstr(url, "/releases/download/");
	if (rest) {
		rest += strlen("/releases/download");
	} else {
		const char *host = strstr(url, "://");
		rest = host ? strchr(host + 3, '/') : NULL;
		if (!rest)
			rest = "";
	}
	return ml_pathf(dst, sz, "%.*s%s", (int)ml, mirror, rest);
}

/* The archive's size when the pins do not give it: a HEAD request. */
static int archive_size(int64_t *size, mli_run *r, char *url, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	if (r->o->offline) {
		ml_err_set(err, ML_ENOENT,
		           "interpreter %s is not unpacked yet and --offline forbids fetching it",
		           pp->pin_name);
		ml_err_hint(err, "run once online, or use --python PATH");
		return ML_ENOENT;
	}
	char *urls[1] = {url};
	int rc = ml_http_sizes(size, urls, 1, r->cfg ? r->cfg->trusted_hosts : NULL,
	                       r->cfg ? r->cfg->n_trusted : 0, r->cfg ? r->cfg->cert : NULL, err);
	if (!rc && *size < 0)
		rc = ml_err_set(err, ML_ENET, "the server gave no size for the interpreter '%s'",
		                pp->pin_name);
	return rc;
}

/* Fetches the pinned archive into the cache and unpacks it into dir. */
static int fetch_and_unpack(mli_run *r, const char *dir, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	char url[4096];
	const char *mirror =
	        r->o->python_mirror ? r->o->python_mirror : getenv("MLSETUP_PYTHON_MIRROR");
	if (mirror_url(url, sizeof(url), pp->url, mirror))
		return ml_err_set(err, ML_EFAIL, "interpreter URL too long");
	int64_t size = pp->size;
	int rc = size < 0 ? archive_size(&size, r, url, err) : 0;
	if (rc)
		return rc;
	const char *base = strrchr(url, '/');
	ml_download d;
	memset(&d, 0, sizeof(d));
	rc = ml_download_init(&d, base ? base + 1 : url, pp->sha256, size, err);
	if (!rc)
		rc = ml_download_add_url(&d, url, err);
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	if (!rc && (rc = ml_fetch_all(&d, 1, r->cache, &fo, err)) != 0 && d.err.msg[0])
		*err = d.err;
	if (!rc) {
		r->res->n_downloaded += !d.from_cache;
		r->res->bytes_downloaded += d.bytes;
		rc = ml_python_unpack(r->interpreter, sizeof(r->interpreter), d.path, pp->sha256,
		                      dir, pp->pin_name, err);
	}
	ml_download_release(&d);
	return rc;
}

bool mli_managed_installed(const ml_python_plan *pp, char *path, size_t sz)
{
	char dir[4096], marker[4400];
	struct stat st;
	return !pp->path && pp->pin_name && ml_python_dir(dir, sizeof(dir), NULL) == 0 &&
	       ml_pathf(marker, sizeof(marker), "%s/%s/%s", dir, pp->pin_name, ML_ENV_MARKER) ==
	               0 &&
	       ml_pathf(path, sz, "%s/%s/python/bin/python3", dir, pp->pin_name) == 0 &&
	       stat(marker, &st) == 0 && stat(path, &st) == 0;
}

/* The pinned interpreter could not be fetched for a network reason: plan
 * again with a fitting CPython found on this machine (the plan's version
 * first), and say so loudly. Returns 0 with the new plan in place, or
 * fetch_rc (err unchanged) when none fits. */
static int fall_back(mli_run *r, int fetch_rc, ml_err *err)
{
	ml_install_result *res = r->res;
	char pinned[128];
	ml_strlcpy(pinned, res->plan->python.pin_name ? res->plan->python.pin_name : "",
	           sizeof(pinned));
	ml_python_found *found = NULL;
	size_t n = 0;
	if (ml_python_find_system(&found, &n, NULL) != 0)
		return fetch_rc;
	/* the planned version first, then (unless --python X.Y asked for
	 * that one) the others in the order found */
	for (int pass = 0; pass < (r->o->python ? 1 : 2); pass++) {
		for (size_t i = 0; i < n; i++) {
			bool same = !strcmp(found[i].xy, res->plan->python.xy);
			if (same != (pass == 0))
				continue;
			ml_plan_opts po;
			mli_plan_opts(&po, r->o);
			po.python = found[i].executable;
			ml_plan *np = NULL;
			bool fits = ml_plan_make(&np, res->machine, &po, NULL) == 0 &&
			            np->selection->manifest;
			for (size_t k = 0; fits && k < np->selection->n_reasons; k++)
				fits = !(!strcmp(np->selection->reasons[k].rule, "python") &&
				         np->selection->reasons[k].verdict == ML_RULE_FAIL);
			if (!fits) {
				ml_plan_free(np);
				continue;
			}
			ml_strlcpy(np->python.source, "system", sizeof(np->python.source));
			ml_buf why = ML_BUF_INIT;
			ml_buf_printf(
			        &why,
			        "the pinned interpreter %s could not be fetched (%.300s): using "
			        "CPython %s found at %s instead",
			        pinned, err->msg, found[i].version, found[i].executable);
			ml_strlcpy(res->python_reason, ml_buf_cstr(&why),
			           sizeof(res->python_reason));
			ml_buf_release(&why);
			mli_say(&r->ev, ML_EV_WARNING,
			        "%s; --python-preference only-managed forbids this, "
			        "--python-mirror "
			        "URL names another host for the pinned one",
			        res->python_reason);
			ml_plan_free(res->plan);
			res->plan = np;
			ml_strlcpy(r->interpreter, found[i].executable, sizeof(r->interpreter));
			ml_strlcpy(res->python_source, "system", sizeof(res->python_source));
			free(found);
			ml_err_clear(err);
			return 0;
		}
	}
	free(found);
	ml_err_hint(err, "no CPython on this machine fits the manifest either; use --python PATH, "
	                 "or --python-mirror URL for another host");
	return fetch_rc;
}

int mli_interpreter(mli_run *r, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	if (pp->path) {
		ml_strlcpy(r->interpreter, pp->path, sizeof(r->interpreter));
		ml_strlcpy(r->res->python_source, pp->source[0] ? pp->source : "path",
		           sizeof(r->res->python_source));
		return ml_python_probe(&r->res->python, r->interpreter, err);
	}
	ml_strlcpy(r->res->python_source, "managed", sizeof(r->res->python_source));
	char dir[4096], marker[4400];
	if (ml_python_dir(dir, sizeof(dir), NULL))
		return ml_err_set(err, ML_EFAIL,
		                  "no directory for interpreters: set XDG_DATA_HOME or HOME");
	if (ml_pathf(marker, sizeof(marker), "%s/%s/%s", dir, pp->pin_name, ML_ENV_MARKER) ||
	    ml_pathf(r->interpreter, sizeof(r->interpreter), "%s/%s/python/bin/python3", dir,
	             pp->pin_name))
		return ml_err_set(err, ML_EFAIL, "interpreter directory path too long: '%s'", dir);
	struct stat st;
	int rc = 0;
	if (stat(marker, &st) == 0 && stat(r->interpreter, &st) == 0)
		r->res->python_cached = true;
	else
		rc = fetch_and_unpack(r, dir, err);
	/* managed (the default): a network failure falls back to the machine's */
	if (rc == ML_ENET && r->o->python_preference == ML_PYTHON_MANAGED)
		rc = fall_back(r, rc, err);
	return rc ? rc : ml_python_probe(&r->res->python, r->interpreter, err);
}
