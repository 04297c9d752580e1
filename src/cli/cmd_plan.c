/*
 * cmd_plan.c - `mlsetup plan`: install, stopped before it changes
 * anything. Shows the machine, the manifest chosen and every rule that
 * decided it, the interpreter, the exact wheel per package, sizes and cache
 * state. Exit 6 when no manifest fits this machine.
 */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/detect.h"
#include "mlsetup/plan.h"

enum { OPT_MANIFEST = 'm', OPT_PYTHON = 'p', OPT_TARGET = 't', OPT_CACHE = 256, OPT_PINS };

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	(void)err;
	ml_plan_opts *o = data;
	switch (opt) {
	case OPT_MANIFEST:
		o->manifest = arg;
		break;
	case OPT_PYTHON:
		o->python = arg;
		break;
	case OPT_TARGET:
		o->target = arg;
		break;
	case OPT_CACHE:
		o->cache_dir = arg;
		break;
	case OPT_PINS:
		o->python_pins = arg;
		break;
	}
	return 0;
}

static const char *mark(ml_verdict_kind v)
{
	switch (v) {
	case ML_RULE_OK:
		return "ok  ";
	case ML_RULE_WARN:
		return "warn";
	case ML_RULE_FAIL:
		return "FAIL";
	default:
		return "note";
	}
}

static void print_human(const ml_plan *p, const ml_machine *m)
{
	const char *b = ml_c("bold"), *r = ml_c("reset"), *y = ml_c("yellow"), *red = ml_c("red");
	const ml_selection *s = p->selection;
	ml_say("%smachine%s   %s-%s, %s %s, driver %s, %zu NVIDIA GPU%s", b, r, m->os.name,
	       m->os.arch, m->os.libc_kind, m->os.libc_version,
	       m->driver.version[0] ? m->driver.version : "none", m->n_gpus,
	       m->n_gpus == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_gpus; i++) {
		char sm[16];
		ml_cc_sm(sm, sizeof(sm), m->gpus[i].cc_major, m->gpus[i].cc_minor);
		ml_say("          gpu %zu: %s (%s)", i, m->gpus[i].name, sm);
	}
	ml_say("%srules%s", b, r);
	for (size_t i = 0; i < s->n_reasons; i++)
		ml_say("  %-27s %-8s %s %s", s->reasons[i].manifest, s->reasons[i].rule,
		       mark(s->reasons[i].verdict), s->reasons[i].detail);
	if (!s->manifest) {
		ml_say("%snothing fits:%s %s", red, r, s->problem);
		return;
	}
	ml_say("%smanifest%s  %s%s%s", b, r, s->manifest->name, s->manifest->summary ? " - " : "",
	       s->manifest->summary ? s->manifest->summary : "");
	if (p->python.path)
		ml_say("%spython%s    %s (%s)", b, r, p->python.version, p->python.path);
	else
		ml_say("%spython%s    %s (pinned %s)", b, r, p->python.version, p->python.pin_name);
	ml_say("%starget%s    %s", b, r, p->target);
	ml_say("%sfiles%s     %zu wheels for this platform (%zu requirements do not apply here)", b,
	       r, p->n_files, p->n_not_here);
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		if (a->filename)
			ml_say("  %-70s %9.1f MiB%s", a->filename, (double)a->size / 1048576.0,
			       a->cached ? "  cached" : "");
		else
			ml_say("  %s==%s  (file unknown, size unknown)", a->name, a->version);
	}
	ml_say("%ssizes%s     %.1f MiB in all, %.1f MiB to download; about %.1f MiB of disk "
	       "needed, %llu MiB free",
	       b, r, (double)p->total_bytes / 1048576.0, (double)p->download_bytes / 1048576.0,
	       (double)p->disk_needed_bytes / 1048576.0, (unsigned long long)m->disk_free_mib);
	for (size_t i = 0; i < s->n_warnings; i++)
		ml_say("%swarning:%s %s", y, r, s->warnings[i]);
	for (size_t i = 0; i < p->n_warnings; i++)
		ml_say("%swarning:%s %s", y, r, p->warnings[i]);
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"manifest", required_argument, NULL, OPT_MANIFEST},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"cache-dir", required_argument, NULL, OPT_CACHE},
	        {"python-pins", required_argument, NULL, OPT_PINS},
	        {NULL, 0, NULL, 0},
	};
	ml_plan_opts *o = args;
	ml_plan_opts init = ML_PLAN_OPTS_INIT;
	*o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_plan, argc, argv, opts, on_option, o, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown && first < argc)
		return ml_cli_usage(&ml_cmd_plan, err, "unexpected argument '%s'", argv[first]);
	return rc;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	ml_plan_opts o = *(const ml_plan_opts *)args;
	o.offline = ctx->offline;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = o.target ? o.target : ".venv";
	ml_machine *m = NULL;
	int rc = ml_detect(&m, &d, err);
	if (rc)
		return rc;
	ml_plan *p = NULL;
	rc = ml_plan_make(&p, m, &o, err);
	if (!rc) {
		if (ctx->json) {
			cJSON *doc = ml_plan_to_json(p, m);
			rc = doc ? ml_out_json(doc) : ml_err_set(err, ML_ENOMEM, "out of memory");
			cJSON_Delete(doc);
		} else {
			print_human(p, m);
		}
		if (!rc && !p->selection->manifest) {
			ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s",
			           p->selection->problem);
			ml_err_hint(err, "%s", p->selection->remedy);
			rc = ML_EUNSUPPORTED;
		} else if (!rc) {
			for (size_t i = 0; i < p->selection->n_warnings; i++)
				if (p->selection->overridden)
					ml_warn("%s", p->selection->warnings[i]);
		}
	}
	ml_plan_free(p);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_plan = {
        "plan",
        sizeof(ml_plan_opts),
        parse,
        run,
        ML_NEED_NONE,
        "show what install would do here, and why; changes nothing",
        "mlsetup plan [--manifest NAME|PATH] [--python X.Y|PATH] [--target DIR] [--offline] "
        "[--json]",
        "  --manifest NAME|PATH  use this manifest instead of choosing (warns when the GPUs\n"
        "                        cannot run it)\n"
        "  --python X.Y|PATH     pinned interpreter version, or an existing interpreter\n"
        "  --target DIR          where the environment would go (default ./.venv)\n"
        "  --cache-dir DIR       cache to check for files already downloaded\n"
        "  --offline             contact no index (plan never needs one for shipped manifests;\n"
        "                        global option)\n"
        "  --python-pins FILE    interpreter pins (format of manifests/python.json) instead of\n"
        "                        the built-in ones; also MLSETUP_PYTHON_PINS\n",
};
