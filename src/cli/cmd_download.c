/*
 * cmd_download.c - `mlsetup download -r MANIFEST -d DIR`: the pip download
 * analogue. The pipeline is the library's (ml_install_download: plan the
 * manifest for this machine or --platform / --python, fetch exactly the
 * files the plan chooses into the shared cache, prove each one, place them
 * in DIR with a PEP 503 index.html); this command parses the options,
 * shows the download progress and renders the outcome. --offline (global)
 * uses only the cache and local --find-links and lists what is missing.
 *
 * Exit codes: 0, 1 (missing files, bad manifest), 2 (usage), 3
 * (integrity), 4 (network), 6 (no wheel for the platform).
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

enum {
	OPT_REQ = 'r',
	OPT_DEST = 'd',
	OPT_PYTHON = 1200,
	OPT_PLATFORM,
	OPT_NO_PROGRESS,
};

struct dl_args {
	ml_install_download_opts o;
	ml_cli_index ix;
	bool no_progress;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct dl_args *a = data;
	ml_install_download_opts *o = &a->o;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (!r)
		r = ml_cli_fetch_option(&o->fetch, &o->cache_dir, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	switch (opt) {
	case OPT_REQ:
		o->manifest = arg;
		break;
	case OPT_DEST:
		o->dest = arg;
		break;
	case OPT_PYTHON:
		o->python = arg;
		break;
	case OPT_PLATFORM:
		o->platform = arg;
		break;
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	}
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        ML_CLI_INDEX_LONGOPTS,
	        ML_CLI_FETCH_LONGOPTS,
	        {"requirement", required_argument, NULL, OPT_REQ},
	        {"dest", required_argument, NULL, OPT_DEST},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        {NULL, 0, NULL, 0},
	};
	struct dl_args *a = args;
	ml_install_download_opts init = ML_INSTALL_DOWNLOAD_OPTS_INIT;
	a->o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_download, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_download, err, "unexpected argument '%s'", argv[first]);
	if (!a->o.manifest)
		return ml_cli_usage(&ml_cmd_download, err, "-r MANIFEST is required");
	if (!a->o.dest)
		return ml_cli_usage(&ml_cmd_download, err, "-d DIR is required");
	return 0;
}

static const char *status_of(const ml_download *d)
{
	if (d->done)
		return "ok";
	return d->result == ML_ENOENT ? "missing" : "failed";
}

static cJSON *file_json(const ml_download *d, const ml_artifact *art, const char *dest)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", art->name);
	cJSON_AddStringToObject(f, "version", art->version ? art->version : "");
	cJSON_AddStringToObject(f, "filename", d->name ? d->name : "");
	cJSON_AddStringToObject(f, "sha256", d->sha256);
	cJSON_AddNumberToObject(f, "size", (double)d->size);
	cJSON_AddStringToObject(f, "status", status_of(d));
	cJSON_AddBoolToObject(f, "from_cache", d->from_cache);
	cJSON_AddBoolToObject(f, "repaired", d->repaired);
	cJSON_AddNumberToObject(f, "attempts", d->attempts);
	cJSON_AddNumberToObject(f, "bytes_downloaded", (double)d->bytes);
	if (d->url_used >= 0 && (size_t)d->url_used < d->n_urls) {
		char shown[2048];
		ml_url_redact(shown, sizeof(shown), d->urls[d->url_used]);
		cJSON_AddStringToObject(f, "url", shown);
	} else {
		cJSON_AddNullToObject(f, "url");
	}
	if (d->done) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dest, d->name);
		cJSON_AddStringToObject(f, "path", path);
		cJSON_AddNullToObject(f, "error");
	} else {
		cJSON_AddNullToObject(f, "path");
		cJSON_AddStringToObject(f, "error", d->err.msg);
	}
	return f;
}

static cJSON *to_json(const ml_install_download_opts *o, const ml_install_download_result *r,
                      int rc)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "mlsetup.download/1");
	cJSON_AddBoolToObject(doc, "ok", rc == 0);
	cJSON_AddStringToObject(doc, "manifest", o->manifest);
	char plat[48];
	snprintf(plat, sizeof(plat), "%s-%s", r->machine->os.name, r->machine->os.arch);
	cJSON_AddStringToObject(doc, "platform", plat);
	cJSON_AddStringToObject(doc, "python", r->plan->python.xy);
	cJSON_AddStringToObject(doc, "dest", o->dest);
	cJSON_AddStringToObject(doc, "cache_dir", r->cache_dir);
	cJSON *files = cJSON_AddArrayToObject(doc, "files");
	uint64_t total = 0, net = 0;
	size_t n_cached = 0, n_ok = 0;
	for (size_t i = 0; i < r->n_items; i++) {
		const ml_download *d = &r->items[i];
		cJSON_AddItemToArray(files, file_json(d, &r->plan->files[i], o->dest));
		net += d->bytes;
		if (!d->done)
			continue;
		n_ok++;
		total += d->size > 0 ? (uint64_t)d->size : 0;
		n_cached += d->from_cache;
	}
	cJSON *t = cJSON_AddObjectToObject(doc, "totals");
	cJSON_AddNumberToObject(t, "files", (double)r->n_items);
	cJSON_AddNumberToObject(t, "ok", (double)n_ok);
	cJSON_AddNumberToObject(t, "from_cache", (double)n_cached);
	cJSON_AddNumberToObject(t, "bytes", (double)total);
	cJSON_AddNumberToObject(t, "bytes_downloaded", (double)net);
	cJSON_AddNumberToObject(t, "seconds", r->seconds);
	return doc;
}

static void print_human(const char *dest, const ml_install_download_result *r)
{
	uint64_t total = 0, net = 0;
	size_t n_ok = 0, n_cached = 0;
	for (size_t i = 0; i < r->n_items; i++) {
		const ml_download *d = &r->items[i];
		net += d->bytes;
		if (!d->done)
			continue;
		n_ok++;
		n_cached += d->from_cache;
		total += (uint64_t)d->size;
		ml_say("saved %s/%s (%.1f MiB%s)", dest, d->name, (double)d->size / 1048576.0,
		       d->from_cache ? ", from cache" : "");
	}
	if (n_ok == r->n_items)
		ml_say("%s%zu file%s, %.1f MiB in %s%s (%zu from cache, %.1f MiB downloaded in "
		       "%.1f s)",
		       ml_c("green"), n_ok, n_ok == 1 ? "" : "s", (double)total / 1048576.0, dest,
		       ml_c("reset"), n_cached, (double)net / 1048576.0, r->seconds);
}

/* Every file that failed, each with its own reason, unless the one error
 * main() prints already says it. */
static void print_failures(const ml_install_download_result *r, int rc, const ml_err *err)
{
	size_t n_bad = 0;
	for (size_t i = 0; i < r->n_items; i++)
		n_bad += !r->items[i].done && r->items[i].result;
	if (n_bad > 1 || (n_bad == 1 && rc == 0))
		for (size_t i = 0; i < r->n_items; i++)
			if (!r->items[i].done && r->items[i].result &&
			    strcmp(r->items[i].err.msg, err->msg) != 0)
				fprintf(stderr, "%s: %s\n",
				        r->items[i].result == ML_ENOENT ? "missing" : "error",
				        r->items[i].err.msg);
}

static void on_event(const ml_install_event *ev, void *data)
{
	ml_fetch_ui_event(data, ev);
	if (ev->kind == ML_EV_WARNING)
		ml_warn("%s", ev->text);
	else if (ev->kind == ML_EV_DETAIL)
		ml_verbose("%s", ev->text);
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	struct dl_args *a = args;
	ml_fetch_ui ui = {!a->no_progress, NULL, "downloading", {{0}}};
	a->o.sysroot = ctx->sysroot;
	a->o.offline = ctx->offline;
	a->o.on_event = on_event;
	a->o.event_data = &ui;
	if (ml_cli_index_no_torch(&a->ix, &ml_cmd_download, err))
		return ML_EUSAGE;
	ml_cli_index_flags(&a->ix, &a->o.index);
	ml_install_download_result r;
	int rc = ml_install_download(&r, &a->o, err);
	ml_fetch_ui_finish(&ui);
	if (r.items) {
		print_failures(&r, rc, err);
		if (ctx->json) {
			cJSON *doc = to_json(&a->o, &r, rc);
			int jrc = doc ? ml_out_json(doc) : ML_ENOMEM;
			cJSON_Delete(doc);
			if (jrc && !rc)
				rc = ml_err_set(err, jrc, "cannot write the JSON document");
		} else if (rc == 0) {
			print_human(a->o.dest, &r);
		}
		for (size_t i = 0; i < r.n_items; i++)
			if (r.items[i].repaired && r.items[i].done)
				ml_warn("the cached copy of '%s' was corrupted; it was removed and "
				        "fetched again",
				        r.items[i].name);
	}
	ml_install_download_result_release(&r);
	return rc;
}

const ml_command ml_cmd_download = {
        "download",
        sizeof(struct dl_args),
        parse,
        run,
        ML_NEED_FETCH,
        "fetch and verify a manifest's wheels into a directory (pip download analogue)",
        "mlsetup download -r MANIFEST -d DIR [index options] [--python X.Y] [--platform OS-ARCH] "
        "[--offline] [--json]",
        "  -r, --requirement MANIFEST  the pinned, hashed manifest (mlsetup lock output)\n"
        "  -d, --dest DIR          where the wheels go; DIR/index.html makes it a\n"
        "                          PEP 503 --find-links source\n"
        "  --python X.Y            plan for this CPython version (default: python.json's)\n"
        "  --platform OS-ARCH      plan for another platform: linux-x86_64, linux-aarch64,\n"
        "                          windows-x86_64, darwin-aarch64 ... (glibc 2.28 when the\n"
        "                          OS or CPU differs from this machine's)\n" ML_CLI_INDEX_HELP
                ML_CLI_FETCH_HELP
        "  --offline               use only the cache and local --find-links; list what is\n"
        "                          missing (global option)\n"
        "  --no-progress           no progress display\n",
};
