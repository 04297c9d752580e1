/*
 * lock.c - the lock pipeline (`mlsetup lock INPUT.in -o OUT.txt`): loose
 * requirements in, a pinned, hashed manifest out. pip's own resolver picks
 * the versions once per target platform/Python (plan stage); the indexes
 * give the sha256 and size of every wheel of each pinned version (fetch
 * stage); the manifest is rendered (plan stage) and written atomically.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void on_note(const char *text, bool detail, void *data)
{
	mli_say(data, detail ? ML_EV_DETAIL : ML_EV_STEP, "%s", text);
}

/* pip's index options for cfg; *out is a new array (caller frees). */
static int pip_args(char ***out, size_t *n, const ml_index_config *cfg, ml_err *err)
{
	size_t cap = 5 + 2 * (cfg->n_extra + cfg->n_find_links + cfg->n_trusted);
	char **args = calloc(cap, sizeof(*args));
	if (!args)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	*n = ml_index_config_pip_args(args, cap, cfg);
	*out = args;
	return 0;
}

/* Resolves every target with pip, then records every wheel's hash. */
static int resolve_and_hash(ml_lock *lk, const ml_requirements *in, const ml_install_lock_opts *o,
                            mli_events *ev, ml_err *err)
{
	ml_index_config *cfg = NULL;
	char **args = NULL;
	size_t n_args = 0, n_yanked = 0;
	int rc = ml_lock_add_targets(lk, o->pythons, o->n_pythons, o->platforms, o->n_platforms, in,
	                             err);
	if (!rc)
		rc = ml_index_config_resolve(&cfg, &o->index, in->index_url, in->extra_index_urls,
		                             in->n_extra, o->resolver, err);
	if (!rc) {
		mli_say(ev, ML_EV_DETAIL, "index from %s", cfg->origin ? cfg->origin : "nowhere");
		rc = pip_args(&args, &n_args, cfg, err);
	}
	const char *name = o->name ? o->name : o->input;
	ml_lock_pip_opts po = {.python = o->resolver,
	                       .input_path = o->input,
	                       .index_args = args,
	                       .n_index_args = n_args,
	                       .name = name};
	for (size_t t = 0; !rc && t < lk->n_targets; t++) {
		mli_say(ev, ML_EV_STEP, "resolving %s for CPython %d.%d on %s with pip", name,
		        lk->targets[t].py_major, lk->targets[t].py_minor, lk->targets[t].platform);
		rc = ml_lock_resolve(lk, t, &po, err);
	}
	if (!rc) {
		mli_say(ev, ML_EV_STEP, "looking up the wheels of %zu pinned versions", lk->n_pkgs);
		ml_lock_files_opts lo = {on_note, ev};
		rc = ml_fetch_lock_files(lk, cfg, &lo, &n_yanked, err);
	}
	if (!rc && n_yanked)
		mli_say(ev, ML_EV_WARNING,
		        "%zu pinned file%s yanked on the index (used because pinned with ==)",
		        n_yanked, n_yanked == 1 ? " is" : "s are");
	free(args);
	ml_index_config_free(cfg);
	return rc;
}

/* Renders the manifest and writes it atomically. */
static int write_manifest(const ml_lock *lk, const ml_requirements *in,
                          const ml_install_lock_opts *o, ml_err *err)
{
	char *text = NULL;
	ml_buf command = ML_BUF_INIT;
	int rc = 0;
	/* The command recorded in the banner names files as given, never index
	 * URLs (those come from the environment at run time). */
	if (o->command) {
		ml_buf_puts(&command, o->command);
	} else {
		ml_buf_printf(&command, "mlsetup lock %s -o %s", o->input, o->output);
		for (size_t i = 0; i < o->n_pythons; i++)
			ml_buf_printf(&command, " --python %s", o->pythons[i]);
		for (size_t i = 0; i < o->n_platforms; i++)
			ml_buf_printf(&command, " --platform %s", o->platforms[i]);
	}
	if (!rc)
		rc = ml_lock_render(&text, lk, in, ml_buf_cstr(&command), err);
	if (!rc) {
		int e = ml_fs_write_atomic(o->output, text, strlen(text), 0644);
		if (e)
			rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", o->output,
			                strerror(-e));
	}
	free(text);
	ml_buf_release(&command);
	return rc;
}

int ml_install_lock(ml_install_lock_result *out, const ml_install_lock_opts *o, ml_err *err)
{
	mli_events ev = {o->on_event, o->event_data, ML_STAGE_PLAN, mli_now()};
	ml_lock lk = ML_LOCK_INIT;
	ml_requirements *in = NULL;
	/* -r includes as pip reads them: their index options apply too */
	int rc = ml_requirements_load_tree(&in, o->input, 0, err);
	if (!rc)
		rc = resolve_and_hash(&lk, in, o, &ev, err);
	if (!rc)
		rc = write_manifest(&lk, in, o, err);
	if (!rc) {
		ml_install_lock_result r = {lk.n_pkgs, 0, lk.n_targets};
		for (size_t i = 0; i < lk.n_pkgs; i++)
			r.n_files += lk.pkgs[i].n_files;
		*out = r;
	}
	ml_lock_release(&lk);
	ml_requirements_free(in);
	return rc;
}
