/*
 * download.c - the download pipeline (`mlsetup download -r MANIFEST -d
 * DIR`, pip download's analogue): install stopped after fetch. Plans the
 * manifest for this machine (or another platform / Python), fetches
 * exactly the wheel files the plan chooses into the shared cache, proves
 * each one, and places them in DIR with a PEP 503 index.html.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int plan_for(ml_install_download_result *res, const ml_install_download_opts *o,
                    mli_events *ev, ml_err *err)
{
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = o->sysroot;
	d.target_dir = ".";
	d.no_smi = true;
	mli_stage_begin(ev, ML_STAGE_DETECT);
	int rc = ml_detect(&res->machine, &d, err);
	if (!rc && o->platform)
		rc = ml_plan_set_platform(res->machine, o->platform, err);
	if (mli_stage_end(ev, NULL, rc))
		return rc;
	ml_install_event e = {.kind = ML_EV_MACHINE, .machine = res->machine};
	mli_emit(ev, &e);
	ml_plan_opts po = ML_PLAN_OPTS_INIT;
	po.manifest = o->manifest;
	po.python = o->python;
	po.python_pins = o->python_pins;
	po.cache_dir = o->cache_dir;
	po.offline = o->offline;
	po.target = o->dest;
	mli_stage_begin(ev, ML_STAGE_PLAN);
	if (mli_stage_end(ev, NULL, rc = ml_plan_make(&res->plan, res->machine, &po, err)))
		return rc;
	const ml_selection *s = res->plan->selection;
	if (!s->manifest) {
		ml_err_set(err, ML_EUNSUPPORTED, "manifest '%s' does not fit: %s", o->manifest,
		           s->problem);
		ml_err_hint(err, "%s", s->remedy);
		return ML_EUNSUPPORTED;
	}
	if (res->plan->needs_resolution) {
		ml_err_set(err, ML_EUNSUPPORTED,
		           "manifest '%s' does not pin hashes: download fetches the files a "
		           "pinned, hashed manifest names",
		           o->manifest);
		ml_err_hint(err,
		            "pin it for the targets with mlsetup lock %s -o pinned.txt (--python, "
		            "--platform), or install it: <env>/pylock.toml then names every file",
		            o->manifest);
		return ML_EUNSUPPORTED;
	}
	e = (ml_install_event){.kind = ML_EV_PLAN, .plan = res->plan, .text = ""};
	mli_emit(ev, &e);
	for (size_t i = 0; i < s->n_warnings; i++)
		mli_say(ev, ML_EV_DETAIL, "%s", s->warnings[i]);
	return 0;
}

/* Fetches every file of the plan into the cache; fills res->items. */
static int fetch_all(ml_install_download_result *res, const ml_install_download_opts *o,
                     const ml_index_config *cfg, mli_events *ev, ml_err *err)
{
	ml_cache *cache = NULL;
	if (ml_cache_dir(res->cache_dir, sizeof(res->cache_dir), o->cache_dir) != 0) {
		ml_err_set(err, ML_EFAIL, "no cache directory: HOME is not set");
		ml_err_hint(err, "pass --cache-dir DIR or set MLSETUP_CACHE_DIR");
		return ML_EFAIL;
	}
	int rc = ml_cache_open(&cache, res->cache_dir, ML_CACHE_SHARED, err);
	if (rc)
		return rc;
	ml_fetch_opts fo;
	mli_fetch_opts_for(&fo, &o->fetch, cfg, o->offline, ev);
	if (!ml_plan_is_complete(res->plan)) { /* files named by hash only, sizes */
		ml_plan_provider pv;
		mli_provider x;
		mli_provider_init(&pv, &x, cfg, cache, &fo, ev, NULL);
		rc = ml_plan_complete(res->plan, res->machine, &pv, NULL, NULL, err);
	}
	if (rc) {
		ml_cache_close(cache);
		return rc;
	}
	res->n_items = res->plan->n_files;
	res->items = calloc(res->n_items ? res->n_items : 1, sizeof(*res->items));
	if (!res->items)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc)
		rc = ml_fetch_resolve(res->items, res->plan, cfg, cache, &fo, err);
	if (!rc)
		rc = ml_fetch_all(res->items, res->n_items, cache, &fo, err);
	ml_cache_close(cache);
	return rc;
}

int ml_install_download(ml_install_download_result *res, const ml_install_download_opts *o,
                        ml_err *err)
{
	memset(res, 0, sizeof(*res));
	double t0 = mli_now();
	mli_events ev = {o->on_event, o->event_data, ML_STAGE_DETECT, t0};
	ml_index_config *cfg = NULL;
	int rc = plan_for(res, o, &ev, err);
	if (rc)
		goto out;
	const ml_manifest *mf = res->plan->selection->manifest;
	ml_index_flags flags = o->index;
	flags.command = "download";
	mli_stage_begin(&ev, ML_STAGE_FETCH);
	/* pip's default index, when nothing names one, is asked of the plan's
	 * interpreter, or the pinned one when it is unpacked (download fetches
	 * none), else of python3 on PATH */
	char managed[4096];
	const char *python = mli_plan_python(&res->plan->python, managed, sizeof(managed));
	rc = ml_index_config_for_manifest(&cfg, &flags, mf->reqs, mf->embedded ? NULL : mf->name,
	                                  o->offline, python, err);
	if (!rc)
		rc = fetch_all(res, o, cfg, &ev, err);
	mli_stage_end(&ev, NULL, rc);
	if (rc == 0 || rc == ML_ENOENT || rc == ML_EINTEGRITY || rc == ML_ENET) {
		/* place what we have, even after a partial failure */
		ml_err e2 = ML_ERR_INIT;
		int prc = ml_fetch_place(o->dest, res->items, res->n_items, rc == 0, &e2);
		if (prc && rc == 0) {
			*err = e2;
			rc = prc;
		}
	}
out:
	ml_index_config_free(cfg);
	res->seconds = mli_now() - t0;
	return rc;
}

void ml_install_download_result_release(ml_install_download_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; res->items && i < res->n_items; i++)
		ml_download_release(&res->items[i]);
	free(res->items);
	ml_plan_free(res->plan);
	ml_machine_free(res->machine);
	memset(res, 0, sizeof(*res));
}
