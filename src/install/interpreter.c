/*
 * interpreter.c - the interpreter an environment is built on: an existing
 * one (--python PATH) as it is, or the pinned python-build-standalone
 * archive, fetched and verified like every wheel (from a mirror when one
 * is given) and unpacked once into the shared interpreter directory.
 *
 * When the plan is complete, the pinned archive is fetched with the wheels
 * instead, and a worker thread unpacks and probes it the moment it is
 * verified, then lays the groundwork of the environment (the staging
 * directory and the venv skeleton) while the wheels still download
 * (mli_prep_*).
 */
#include <pthread.h>
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

/* The archive's size when the pins do not give it: asked of its server
 * (ml_http_sizes); -1 when the server does not tell (the download learns
 * it). */
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
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	return ml_http_sizes(size, urls, 1, &fo, err);
}

/* The pinned archive's URL (on the mirror when one is given). */
static int archive_url(char *url, size_t sz, const mli_run *r, ml_err *err)
{
	const char *mirror =
	        r->o->python_mirror ? r->o->python_mirror : getenv("MLSETUP_PYTHON_MIRROR");
	if (mirror_url(url, sz, r->res->plan->python.url, mirror))
		return ml_err_set(err, ML_EFAIL, "interpreter URL too long");
	return 0;
}

/* d, initialised to fetch the pinned archive of size bytes from url. */
static int archive_download(ml_download *d, const mli_run *r, const char *url, int64_t size,
                            ml_err *err)
{
	const char *base = strrchr(url, '/');
	memset(d, 0, sizeof(*d));
	int rc = ml_download_init(d, base ? base + 1 : url, r->res->plan->python.sha256, size, err);
	return rc ? rc : ml_download_add_url(d, url, err);
}

/* Fetches the pinned archive into the cache and unpacks it into dir. */
static int fetch_and_unpack(mli_run *r, const char *dir, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	char url[4096];
	int rc = archive_url(url, sizeof(url), r, err);
	int64_t size = pp->size;
	if (!rc && size < 0)
		rc = archive_size(&size, r, url, err);
	if (rc)
		return rc;
	ml_download d;
	rc = archive_download(&d, r, url, size, err);
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

/* The shared interpreter directory in dir, and r->interpreter set to the
 * pinned interpreter's path in it; *installed says whether it is unpacked
 * there already. */
static int managed_paths(char *dir, size_t dir_sz, bool *installed, mli_run *r, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	char marker[4400];
	ml_strlcpy(r->res->python_source, "managed", sizeof(r->res->python_source));
	if (ml_python_dir(dir, dir_sz, NULL))
		return ml_err_set(err, ML_EFAIL,
		                  "no directory for interpreters: set XDG_DATA_HOME or HOME");
	if (ml_pathf(marker, sizeof(marker), "%s/%s/%s", dir, pp->pin_name, ML_ENV_MARKER) ||
	    ml_pathf(r->interpreter, sizeof(r->interpreter), "%s/%s/" ML_PYTHON_ARCHIVE_EXE, dir,
	             pp->pin_name))
		return ml_err_set(err, ML_EFAIL, "interpreter directory path too long: '%s'", dir);
	struct stat st;
	*installed = stat(marker, &st) == 0 && stat(r->interpreter, &st) == 0;
	return 0;
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
	char dir[4096];
	bool installed = false;
	int rc = managed_paths(dir, sizeof(dir), &installed, r, err);
	if (rc)
		return rc;
	if (installed)
		r->res->python_cached = true;
	else
		rc = fetch_and_unpack(r, dir, err);
	/* managed (the default): a network failure falls back to the machine's */
	if (rc == ML_ENET && r->o->python_preference == ML_PYTHON_MANAGED)
		rc = fall_back(r, rc, err);
	return rc ? rc : ml_python_probe(&r->res->python, r->interpreter, err);
}

/* --- the groundwork laid while the wheels download ---------------------------------- */

struct mli_prep {
	mli_run *r;
	bool fetch;         /* dl is the pinned archive, fetched with the wheels */
	ml_download dl;     /* its download (moved back in by mli_prep_fetched) */
	char dir[4096];     /* the shared interpreter directory */
	char archive[4096]; /* the verified archive's path in the cache */
	char python[4096];  /* the interpreter unpacked (or r->interpreter) */
	ml_python_info py;  /* its probe, when the worker made it */
	bool probed;
	pthread_t thread;
	bool started;
	int rc; /* the worker's result */
	ml_err err;
};

/* The worker: unpacks the archive and probes the interpreter when they
 * are its to do, then begins the staging directory and creates the venv
 * skeleton in it. Reads r only where the pipeline leaves it alone while
 * fetching; emits no events. */
static void *prep_main(void *arg)
{
	mli_prep *pr = arg;
	mli_run *r = pr->r;
	ml_err *err = &pr->err;
	int rc = 0;
	if (pr->fetch)
		rc = ml_python_unpack(pr->python, sizeof(pr->python), pr->archive,
		                      r->res->plan->python.sha256, pr->dir,
		                      r->res->plan->python.pin_name, err);
	if (!rc && pr->fetch) {
		rc = ml_python_probe(&pr->py, pr->python, err);
		pr->probed = rc == 0;
	}
	const ml_python_info *py = pr->probed ? &pr->py : &r->res->python;
	if (!rc && strcmp(py->xy, r->res->plan->python.xy) != 0)
		rc = ML_EFAIL; /* mli_prep_finish says it, as the pipeline would */
	if (!rc)
		rc = ml_env_stage_begin(&r->stage, r->lock, err);
	if (!rc)
		rc = ml_env_layout_init(&r->env, r->stage->path, r->stage->target, py->xy, err);
	if (!rc)
		rc = ml_venv_create(&r->env, py, NULL, err);
	r->env_ready = rc == 0;
	if (rc && r->stage) { /* mli_build_env begins again and reports */
		ml_env_stage_abort(r->stage);
		r->stage = NULL;
	}
	pr->rc = rc;
	return NULL;
}

static mli_prep *prep_new(mli_run *r)
{
	if (!r->prep && (r->prep = calloc(1, sizeof(*r->prep))) != NULL) {
		r->prep->r = r;
		r->prep->err = (ml_err)ML_ERR_INIT;
	}
	return r->prep;
}

int mli_interpreter_defer(mli_run *r, ml_err *err)
{
	const ml_python_plan *pp = &r->res->plan->python;
	if (pp->path || !pp->pin_name || pp->size < 0 || r->o->offline || r->planning)
		return 0;
	char dir[4096], url[4096];
	bool installed = false;
	int rc = managed_paths(dir, sizeof(dir), &installed, r, err);
	if (rc || installed)
		return rc; /* installed: mli_interpreter() probes it */
	mli_prep *pr = prep_new(r);
	if (!pr)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if ((rc = archive_url(url, sizeof(url), r, err)) != 0 ||
	    (rc = archive_download(&pr->dl, r, url, pp->size, err)) != 0)
		return rc;
	ml_strlcpy(pr->dir, dir, sizeof(pr->dir));
	pr->fetch = true;
	return 1;
}

ml_download *mli_prep_download(mli_run *r)
{
	return r->prep && r->prep->fetch ? &r->prep->dl : NULL;
}

void mli_prep_start(mli_run *r, const char *archive)
{
	mli_prep *pr = r->prep ? r->prep : prep_new(r);
	if (!pr || pr->started || r->env_ready || r->planning || (pr->fetch && !archive))
		return;
	if (archive)
		ml_strlcpy(pr->archive, archive, sizeof(pr->archive));
	if (pthread_create(&pr->thread, NULL, prep_main, pr) == 0)
		pr->started = true;
}

void mli_prep_fetched(mli_run *r, ml_download *d)
{
	mli_prep *pr = r->prep;
	if (pr && pr->fetch)
		pr->dl = *d; /* moves */
	else
		ml_download_release(d);
	memset(d, 0, sizeof(*d));
}

/* Waits for the worker, if it runs. */
static void prep_join(mli_prep *pr)
{
	if (pr && pr->started) {
		pthread_join(pr->thread, NULL);
		pr->started = false;
	}
}

int mli_prep_finish(mli_run *r, ml_err *err)
{
	mli_prep *pr = r->prep;
	if (!pr)
		return 0;
	prep_join(pr);
	if (!pr->fetch)
		return 0; /* a skeleton that could not be made is made again, and reported, later */
	int rc = 0;
	const ml_python_plan *pp = &r->res->plan->python;
	if (pr->dl.result || !pr->dl.done) {
		rc = pr->dl.result ? pr->dl.result : ML_ENET;
		if (pr->dl.err.msg[0])
			*err = pr->dl.err;
		else
			ml_err_set(err, rc, "the interpreter %s was not fetched", pp->pin_name);
	} else {
		r->res->n_downloaded += !pr->dl.from_cache;
		r->res->bytes_downloaded += pr->dl.bytes;
		if (!pr->probed) { /* the worker never ran, or stopped before probing */
			rc = pr->rc && pr->err.msg[0] ? pr->rc : 0;
			if (rc)
				*err = pr->err;
			else if ((rc = ml_python_unpack(pr->python, sizeof(pr->python), pr->dl.path,
			                                pp->sha256, pr->dir, pp->pin_name, err)) ==
			         0)
				rc = ml_python_probe(&r->res->python, pr->python, err);
		} else {
			r->res->python = pr->py;
		}
		if (!rc)
			ml_strlcpy(r->interpreter, pr->python, sizeof(r->interpreter));
	}
	pr->fetch = false;
	ml_download_release(&pr->dl);
	if (rc == ML_ENET && r->o->python_preference == ML_PYTHON_MANAGED &&
	    (rc = fall_back(r, rc, err)) == 0)
		rc = ml_python_probe(&r->res->python, r->interpreter, err);
	return rc;
}

void mli_prep_release(mli_run *r)
{
	if (!r->prep)
		return;
	prep_join(r->prep);
	ml_download_release(&r->prep->dl);
	free(r->prep);
	r->prep = NULL;
}
