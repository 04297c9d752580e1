/*
 * interpreter.c - the interpreter an environment is built on: an existing
 * one (--python PATH) as it is, or the pinned python-build-standalone
 * archive, fetched and verified like every wheel (from a mirror when one
 * is given) and unpacked once into the shared interpreter directory.
 */
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

int mli_interpreter(mli_run *r, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	if (pp->path) {
		ml_strlcpy(r->interpreter, pp->path, sizeof(r->interpreter));
		return ml_python_probe(&r->res->python, r->interpreter, err);
	}
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
	return rc ? rc : ml_python_probe(&r->res->python, r->interpreter, err);
}
