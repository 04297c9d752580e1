/*
 * cmd_plan.c - `mlsetup plan`: install, stopped before it changes
 * anything. Shows the machine, the manifest chosen and every rule that
 * decided it, the interpreter, the exact wheel per package, sizes and cache
 * state. Exit 6 when no manifest fits this machine.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "index_opts.h"
#include "mlsetup/install.h"

enum {
	OPT_MANIFEST = 'm',
	OPT_PYTHON = 'p',
	OPT_TARGET = 't',
	OPT_CACHE = 256,
	OPT_PINS,
	OPT_REQUIRE_HASHES,
	OPT_PY_PREFERENCE,
	OPT_PROJECT,
	OPT_CHECKOUT,
	OPT_PLATFORM,
	OPT_GPU,
	OPT_DRIVER,
};

struct plan_args {
	ml_install_opts o;
	ml_cli_index ix;
	const char *manifests[ML_CLI_MANIFEST_MAX]; /* --manifest, repeated */
	size_t n_manifests;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct plan_args *a = data;
	ml_install_opts *o = &a->o;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	switch (opt) {
	case OPT_MANIFEST:
		return ml_cli_manifest_option(a->manifests, &a->n_manifests, &o->manifest, arg,
		                              err);
	case OPT_PROJECT:
		o->project = arg;
		break;
	case OPT_CHECKOUT:
		o->checkout = arg;
		break;
	case OPT_PLATFORM:
		o->platform = arg;
		break;
	case OPT_GPU:
		o->gpus = arg;
		break;
	case OPT_DRIVER:
		o->driver = arg;
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
	case OPT_REQUIRE_HASHES:
		o->require_hashes = true;
		break;
	case OPT_PY_PREFERENCE:
		return ml_python_preference_parse(&o->python_preference, arg, err);
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

static void print_human(const ml_plan *p, const ml_machine *m, const char *resolved_lock)
{
	const char *b = ml_c("bold"), *r = ml_c("reset"), *y = ml_c("yellow"), *red = ml_c("red");
	const ml_selection *s = p->selection;
	ml_say("%smachine%s   %s-%s%s%s%s%s, driver %s, %zu NVIDIA GPU%s", b, r, m->os.name,
	       m->os.arch, m->os.libc_kind[0] ? ", " : "", m->os.libc_kind,
	       m->os.libc_version[0] ? " " : "", m->os.libc_version,
	       m->driver.version[0] ? m->driver.version : "none", m->n_gpus,
	       m->n_gpus == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_gpus; i++) {
		char sm[16];
		ml_cc_sm(sm, sizeof(sm), m->gpus[i].cc_major, m->gpus[i].cc_minor);
		ml_say("          gpu %zu: %s (%s)", i, m->gpus[i].name, sm);
	}
	if (p->project)
		ml_say("%sproject%s   %s%s%s%s%s (%s)", b, r, p->project->url,
		       p->project->rev ? " @ " : "", p->project->rev ? p->project->rev : "",
		       p->project->commit[0] ? ", commit " : "", p->project->commit,
		       p->project->path);
	if (p->n_candidates)
		ml_say("%scandidates%s", b, r);
	for (size_t i = 0; i < p->n_candidates; i++)
		ml_say("  %s %s", p->candidates[i].chosen ? "*" : "-", p->candidates[i].reason);
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
		ml_say("%spython%s    %s (%s%s)", b, r, p->python.version, p->python.path,
		       !strcmp(p->python.source, "system") ? ", found on this machine" : "");
	else
		ml_say("%spython%s    %s (pinned %s)", b, r, p->python.version, p->python.pin_name);
	ml_say("%starget%s    %s", b, r, p->target);
	const ml_torch_choice *tc = p->torch_choice;
	if (tc && tc->chosen)
		ml_say("%storch%s     %s; %zu newer or preferred builds passed over (plan --json: "
		       "torch_choice)",
		       b, r, tc->reason, tc->n_rejected);
	if (p->needs_resolution && s->manifest->embedded)
		ml_say("%sfiles%s     resolved at first install: the shipped manifest '%s' (%s) "
		       "pins versions without hashes; install has pip of the environment's "
		       "interpreter resolve it against the indexes it names and locks the hashes "
		       "they give (trust on first use) in %s/pylock.toml",
		       b, r, s->manifest->name, s->manifest->embedded_name, p->target);
	else if (p->needs_resolution)
		ml_say("%sfiles%s     not known yet: '%s' does not pin hashes; pip of the "
		       "environment's interpreter resolves it (install does, once it has the "
		       "interpreter; or give --python PATH)",
		       b, r, s->manifest->name);
	else
		ml_say("%sfiles%s     %zu wheels for this platform (%zu requirements do not apply "
		       "here)",
		       b, r, p->n_files, p->n_not_here);
	if (resolved_lock && resolved_lock[0] && s->manifest->embedded)
		ml_say("%slock%s      %s (the lock of '%s' on this machine: install checks every "
		       "byte against the hashes it holds, trusted on first use)",
		       b, r, resolved_lock, s->manifest->name);
	else if (resolved_lock && resolved_lock[0])
		ml_say("%slock%s      %s ('%s' does not pin hashes: %s %s resolved it, and install "
		       "checks every byte against this)",
		       b, r, resolved_lock, s->manifest->name,
		       p->resolver.tool[0] ? p->resolver.tool : "pip", p->resolver.version);
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
	        {"project", required_argument, NULL, OPT_PROJECT},
	        {"checkout", required_argument, NULL, OPT_CHECKOUT},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"gpu", required_argument, NULL, OPT_GPU},
	        {"driver", required_argument, NULL, OPT_DRIVER},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"cache-dir", required_argument, NULL, OPT_CACHE},
	        {"python-pins", required_argument, NULL, OPT_PINS},
	        {"require-hashes", no_argument, NULL, OPT_REQUIRE_HASHES},
	        {"python-preference", required_argument, NULL, OPT_PY_PREFERENCE},
	        ML_CLI_INDEX_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct plan_args *a = args;
	ml_install_opts init = ML_INSTALL_OPTS_INIT;
	a->o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_plan, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown) { /* requirements as arguments, as install takes them */
		a->o.requirements = argv + first;
		a->o.n_requirements = (size_t)(argc - first);
	}
	if (!rc && a->n_manifests > 1) {
		a->o.manifests = a->manifests;
		a->o.n_manifests = a->n_manifests;
	}
	if (!rc && a->o.checkout && !a->o.project)
		return ml_cli_usage(&ml_cmd_plan, err, "--checkout needs --project GIT_URL");
	return rc;
}

/* Shows the steps and warnings of planning as they come. */
static void on_event(const ml_install_event *ev, void *data)
{
	(void)data;
	if (ev->kind == ML_EV_STEP)
		ml_say("%s", ev->text);
	else if (ev->kind == ML_EV_DETAIL)
		ml_verbose("%s", ev->text);
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	struct plan_args *a = args;
	a->o.offline = ctx->offline;
	a->o.sysroot = ctx->sysroot;
	a->o.on_event = on_event;
	ml_cli_index_flags(&a->ix, &a->o.index);
	ml_install_result res;
	int rc = ml_install_plan(&res, &a->o, err);
	const ml_plan *p = res.plan;
	const ml_machine *m = res.machine;
	/* a plan where nothing fits is still shown, with every rule */
	if (rc == ML_EUNSUPPORTED && p && !p->selection->manifest)
		rc = 0;
	if (!rc && p) {
		if (ctx->json) {
			cJSON *doc = ml_plan_to_json(p, m);
			rc = doc ? ml_out_json(doc) : ml_err_set(err, ML_ENOMEM, "out of memory");
			cJSON_Delete(doc);
		} else {
			print_human(p, m, res.resolved_lock);
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
	ml_install_result_release(&res);
	return rc;
}

const ml_command ml_cmd_plan = {
        "plan",
        sizeof(struct plan_args),
        parse,
        run,
        ML_NEED_NONE,
        "show what install would do here, and why; changes nothing",
        "mlsetup plan [--manifest NAME|PATH]... [--project PATH|GIT_URL] [--python X.Y|PATH] "
        "[--target DIR] "
        "[--platform OS-ARCH] [--gpu SM,...] [--driver VERSION] [--offline] [--json] "
        "[REQUIREMENT...]",
        "  REQUIREMENT...        requirements as install takes them (torch 'numpy<2')\n"
        "  --manifest NAME|PATH  use this manifest instead of choosing (warns when the GPUs\n"
        "                        cannot run it); repeated: candidates, the first that fits\n"
        "  --project PATH|GIT_URL  a project directory or git repository (@REV: a commit,\n"
        "                        tag or branch): lists its candidates and why each was\n"
        "                        taken or passed over; git checkouts go into the cache\n"
        "  --checkout DIR        where install would check the project out\n"
        "  --python X.Y|PATH     pinned interpreter version, or an existing interpreter\n"
        "  --python-preference P managed (default), system, only-managed or only-system\n"
        "  --require-hashes      refuse a manifest that does not pin hashes\n"
        "  --target DIR          where the environment would go (default ./.venv)\n"
        "  --platform OS-ARCH    plan as if this machine ran another OS (linux-x86_64,\n"
        "                        linux-aarch64, windows-x86_64): its manifests, interpreter\n"
        "                        and driver minimums; the GPUs and driver detected here\n"
        "  --gpu SM,...          plan for these GPUs instead (sm_70,sm_120 or 7.0,12.0;\n"
        "                        none): a login node planning for its compute nodes\n"
        "  --driver VERSION      and this NVIDIA driver (550.54.15)\n"
        "  --cache-dir DIR       cache to check for files already downloaded\n"
        "  --offline             contact no index (plan never needs one for shipped manifests;\n"
        "                        global option)\n"
        "  --python-pins FILE    interpreter pins (format of manifests/python.json) instead of\n"
        "                        the built-in ones; also MLSETUP_PYTHON_PINS\n" ML_CLI_INDEX_HELP,
};
