/*
 * cmd_bundle.c - `mlsetup bundle -o DIR`: a self-contained directory for
 * fleets and air-gapped machines. The pipeline is the library's
 * (ml_install_bundle: every candidate manifest planned for the platform,
 * its wheels fetched and proven, a static PEP 503 index over them, the
 * interpreter archive, this binary, DIR/install.sh and DIR/bundle.json;
 * a --project's requirements files are the candidates, locked with pip
 * when they pin no hashes);
 * this command parses the options, shows the progress and renders the
 * outcome. DIR/install.sh [install options] installs from it offline;
 * any static web server serving DIR is an index (DIR/simple/) and an
 * interpreter mirror (DIR/python/) for `mlsetup install`.
 *
 * Exit codes: 0, 1 (missing files, bad manifest, a project that is not
 * there or has no requirements file), 2 (usage: DIR not empty, a bad
 * project URL or REV), 3 (integrity), 4 (network, a git URL that cannot
 * be cloned), 6 (no manifest has wheels for the platform).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "fetch_opts.h"
#include "fetch_ui.h"
#include "index_opts.h"
#include "mlsetup/install.h"

#define MAX_LIST 16

enum {
	OPT_OUT = 'o',
	OPT_MANIFEST = 'm',
	OPT_PYTHON = 1200,
	OPT_PLATFORM,
	OPT_PINS,
	OPT_MIRROR,
	OPT_NO_PROGRESS,
	OPT_PROJECT,
	OPT_RESOLVER,
};

struct bundle_args {
	ml_install_bundle_opts o;
	ml_cli_index ix;
	const char *manifests[MAX_LIST];
	const char *pythons[MAX_LIST];
	bool no_progress;
};

static int add_to(const char **list, size_t *n, const char *arg, const char *opt, ml_err *err)
{
	if (*n >= MAX_LIST)
		return ml_err_set(err, ML_EUSAGE, "%s is given more than %d times", opt, MAX_LIST);
	list[(*n)++] = arg;
	return 0;
}

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct bundle_args *a = data;
	ml_install_bundle_opts *o = &a->o;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (!r)
		r = ml_cli_fetch_option(&o->fetch, &o->cache_dir, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	int rc = 0;
	switch (opt) {
	case OPT_OUT:
		o->dest = arg;
		break;
	case OPT_MANIFEST:
		rc = add_to(a->manifests, &o->n_manifests, arg, "--manifest", err);
		break;
	case OPT_PROJECT:
		o->project = arg;
		break;
	case OPT_RESOLVER:
		o->resolver = arg;
		break;
	case OPT_PYTHON:
		if (strchr(arg, '/'))
			return ml_err_set(err, ML_EUSAGE,
			                  "--python takes a version X.Y here, not a path ('%s')",
			                  arg);
		rc = add_to(a->pythons, &o->n_pythons, arg, "--python", err);
		break;
	case OPT_PLATFORM:
		o->platform = arg;
		break;
	case OPT_PINS:
		o->python_pins = arg;
		break;
	case OPT_MIRROR:
		o->python_mirror = arg;
		break;
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	}
	return rc;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        ML_CLI_INDEX_LONGOPTS,
	        ML_CLI_FETCH_LONGOPTS,
	        {"output", required_argument, NULL, OPT_OUT},
	        {"manifest", required_argument, NULL, OPT_MANIFEST},
	        {"project", required_argument, NULL, OPT_PROJECT},
	        {"resolver-python", required_argument, NULL, OPT_RESOLVER},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"python-pins", required_argument, NULL, OPT_PINS},
	        {"python-mirror", required_argument, NULL, OPT_MIRROR},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        {NULL, 0, NULL, 0},
	};
	struct bundle_args *a = args;
	ml_install_bundle_opts init = ML_INSTALL_BUNDLE_OPTS_INIT;
	a->o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_bundle, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_bundle, err, "unexpected argument '%s'", argv[first]);
	if (!a->o.dest)
		return ml_cli_usage(&ml_cmd_bundle, err, "-o DIR is required");
	a->o.manifests = a->manifests;
	a->o.pythons = a->pythons;
	return 0;
}

static void on_event(const ml_install_event *ev, void *data)
{
	ml_fetch_ui_event(data, ev);
	if (ev->kind == ML_EV_WARNING)
		ml_warn("%s", ev->text);
	else if (ev->kind == ML_EV_STEP)
		ml_say("%s", ev->text);
	else if (ev->kind == ML_EV_DETAIL)
		ml_verbose("%s", ev->text);
}

static void print_human(const ml_install_bundle_result *r)
{
	ml_say("%sbundle %s: %zu plan%s for %s, %zu wheel%s (%.1f MiB), %zu interpreter "
	       "archive%s, in %.1f s%s",
	       ml_c("green"), r->dest, r->n_plans, r->n_plans == 1 ? "" : "s", r->platform,
	       r->n_files, r->n_files == 1 ? "" : "s", (double)r->bytes / 1048576.0,
	       r->n_interpreters, r->n_interpreters == 1 ? "" : "s", r->seconds, ml_c("reset"));
	if (r->n_locked)
		ml_say("%zu manifest%s pinned no hashes: the bundle carries pip's lock%s of %s "
		       "(bundle.json: \"locked\")",
		       r->n_locked, r->n_locked == 1 ? "" : "s", r->n_locked == 1 ? "" : "s",
		       r->n_locked == 1 ? "it" : "them");
	ml_say("install offline: %s/install.sh [install options]", r->dest);
	ml_say("or serve %s and: mlsetup install --index-url URL/simple/ --python-mirror "
	       "URL/python",
	       r->dest);
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	struct bundle_args *a = args;
	ml_fetch_ui ui = {!a->no_progress, NULL, "downloading", {{0}}};
	a->o.sysroot = ctx->sysroot;
	a->o.offline = ctx->offline;
	a->o.on_event = on_event;
	a->o.event_data = &ui;
	if (ml_cli_index_no_torch(&a->ix, &ml_cmd_bundle, err))
		return ML_EUSAGE;
	ml_cli_index_flags(&a->ix, &a->o.index);
	ml_install_bundle_result r;
	int rc = ml_install_bundle(&r, &a->o, err);
	ml_fetch_ui_finish(&ui);
	if (ctx->json) {
		cJSON *doc = rc ? cJSON_CreateObject() : r.record;
		if (rc && doc) {
			cJSON_AddStringToObject(doc, "schema", "mlsetup.bundle/1");
			cJSON_AddStringToObject(doc, "error", err->msg);
		}
		if (doc) {
			cJSON_AddBoolToObject(doc, "ok", rc == 0);
			if (!rc)
				cJSON_AddStringToObject(doc, "dest", r.dest);
		}
		int jrc = doc ? ml_out_json(doc) : ML_ENOMEM;
		if (rc)
			cJSON_Delete(doc);
		if (jrc && !rc)
			rc = ml_err_set(err, jrc, "cannot write the JSON document");
	} else if (rc == 0) {
		print_human(&r);
	}
	ml_install_bundle_result_release(&r);
	return rc;
}

const ml_command ml_cmd_bundle = {
        "bundle",
        sizeof(struct bundle_args),
        parse,
        run,
        ML_NEED_FETCH,
        "write a self-contained directory that installs offline or serves a fleet",
        "mlsetup bundle -o DIR [--manifest NAME|PATH ...] [--project PATH|GIT_URL] "
        "[--platform OS-ARCH] [--python X.Y ...] [index options] [--offline] [--json]",
        "  -o, --output DIR        the bundle to write (must not exist, or be empty):\n"
        "                          DIR/mlsetup (this binary), DIR/manifests/, DIR/files/\n"
        "                          (the wheels), DIR/simple/ (a static PEP 503 index),\n"
        "                          DIR/python/ (the interpreter archive and pins),\n"
        "                          DIR/install.sh, DIR/bundle.json\n"
        "  -m, --manifest NAME|PATH  a candidate manifest (repeatable, in preference\n"
        "                          order; default: the project's, else the shipped\n"
        "                          ones): the target chooses the first that fits\n"
        "  --project PATH|GIT_URL  a project directory or git repository (https://,\n"
        "                          file://, git+https://..., @REV for a commit, tag or\n"
        "                          branch; checked out into the cache): its requirements\n"
        "                          files are the candidates, as install --project finds\n"
        "                          them; with --manifest, those (found in the project)\n"
        "  --resolver-python PATH  interpreter whose pip locks a manifest that pins no\n"
        "                          hashes, for the platform and every --python (default\n"
        "                          python3); the bundle carries the lock\n"
        "  --platform OS-ARCH      plan for this platform (default: this machine's)\n"
        "  --python X.Y            bundle for this CPython (repeatable; default: the\n"
        "                          pins' default)\n"
        "  --python-pins FILE      interpreter pins (default: MLSETUP_PYTHON_PINS, the\n"
        "                          built-in manifests/python.json)\n"
        "  --python-mirror URL     fetch the interpreter archive from this mirror\n"
        "                          (default: MLSETUP_PYTHON_MIRROR)\n" ML_CLI_INDEX_HELP
                ML_CLI_FETCH_HELP
        "  --offline               use only the cache and local --find-links (global)\n"
        "  --no-progress           no progress display\n"
        "\n"
        "Then: DIR/install.sh [install options] installs offline with DIR/mlsetup;\n"
        "DIR on any static web server is an index for a fleet:\n"
        "  mlsetup install --index-url URL/simple/ --python-mirror URL/python\n",
};
