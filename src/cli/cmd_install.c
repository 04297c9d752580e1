/*
 * cmd_install.c - `mlsetup install`: a verified environment at the target.
 * The pipeline is the library's (ml_install, src/install/: detect -> plan
 * -> fetch -> audit -> env -> verify -> report); this command parses the
 * options, shows the pipeline's events as they come (stage_ui.c: the
 * machine and the manifest first, then each stage and step live, the
 * download bars, warnings, the GPU verdict) and ends with a summary, or
 * with the report as JSON. main() holds the target's lock while it runs
 * (ML_NEED_LOCK).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "fetch_opts.h"
#include "index_opts.h"
#include "mlsetup/install.h"
#include "stage_ui.h"
#include "verify_ui.h"

enum {
	OPT_MANIFEST = 'm',
	OPT_TARGET = 't',
	OPT_PYTHON = 1200,
	OPT_PINS,
	OPT_MIRROR,
	OPT_NO_PROGRESS,
	OPT_NO_WAIT,
	OPT_NO_VERIFY,
	OPT_REQUIRE_GPU,
	OPT_COMPILE,
	OPT_NO_COMPILE,
	OPT_LINK,
	OPT_FORCE,
	OPT_REINSTALL,
	OPT_REQUIRE_HASHES,
	OPT_PY_PREFERENCE,
	OPT_PROJECT,
	OPT_CHECKOUT,
	OPT_GPU,
	OPT_DRIVER,
};

struct install_args {
	ml_install_opts o;
	ml_cli_index ix;
	const char *manifests[ML_CLI_MANIFEST_MAX]; /* --manifest, repeated */
	size_t n_manifests;
	bool no_progress;
};

static int parse_link(ml_link_method *out, const char *s, ml_err *err)
{
	static const ml_link_method all[] = {ML_LINK_AUTO, ML_LINK_REFLINK, ML_LINK_HARDLINK,
	                                     ML_LINK_COPY};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(s, ml_link_method_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return ml_err_set(err, ML_EUSAGE, "--link takes auto, reflink, hardlink or copy, not '%s'",
	                  s);
}

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct install_args *a = data;
	ml_install_opts *o = &a->o;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (!r)
		r = ml_cli_fetch_option(&o->fetch, &o->cache_dir, opt, arg, err);
	if (!r)
		r = ml_verify_option(&o->framework, opt, arg, err);
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
	case OPT_GPU:
		o->gpus = arg;
		break;
	case OPT_DRIVER:
		o->driver = arg;
		break;
	case OPT_TARGET:
		o->target = arg;
		break;
	case OPT_PYTHON:
		o->python = arg;
		break;
	case OPT_PINS:
		o->python_pins = arg;
		break;
	case OPT_MIRROR:
		o->python_mirror = arg;
		break;
	case OPT_LINK:
		return parse_link(&o->link, arg, err);
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	case OPT_NO_WAIT:
		o->no_wait = true;
		break;
	case OPT_NO_VERIFY:
		o->no_verify = true;
		break;
	case OPT_REQUIRE_GPU:
		o->require_gpu = true;
		break;
	case OPT_COMPILE:
		o->compile_bytecode = true;
		o->no_compile_bytecode = false;
		break;
	case OPT_NO_COMPILE:
		o->no_compile_bytecode = true;
		o->compile_bytecode = false;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_REINSTALL:
		o->reinstall = true;
		break;
	case OPT_REQUIRE_HASHES:
		o->require_hashes = true;
		break;
	case OPT_PY_PREFERENCE:
		return ml_python_preference_parse(&o->python_preference, arg, err);
	}
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"manifest", required_argument, NULL, OPT_MANIFEST},
	        {"project", required_argument, NULL, OPT_PROJECT},
	        {"checkout", required_argument, NULL, OPT_CHECKOUT},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"python-pins", required_argument, NULL, OPT_PINS},
	        {"python-mirror", required_argument, NULL, OPT_MIRROR},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
	        {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
	        {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
	        {"compile-bytecode", no_argument, NULL, OPT_COMPILE},
	        {"no-compile-bytecode", no_argument, NULL, OPT_NO_COMPILE},
	        {"link", required_argument, NULL, OPT_LINK},
	        {"force", no_argument, NULL, OPT_FORCE},
	        {"reinstall", no_argument, NULL, OPT_REINSTALL},
	        {"require-hashes", no_argument, NULL, OPT_REQUIRE_HASHES},
	        {"python-preference", required_argument, NULL, OPT_PY_PREFERENCE},
	        {"gpu", required_argument, NULL, OPT_GPU},
	        {"driver", required_argument, NULL, OPT_DRIVER},
	        ML_VERIFY_LONGOPTS,
	        ML_CLI_INDEX_LONGOPTS,
	        ML_CLI_FETCH_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct install_args *a = args;
	ml_install_opts init = ML_INSTALL_OPTS_INIT;
	a->o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_install, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	/* requirements as arguments, as pip install takes them */
	a->o.requirements = argv + first;
	a->o.n_requirements = (size_t)(argc - first);
	if (a->n_manifests > 1) {
		a->o.manifests = a->manifests;
		a->o.n_manifests = a->n_manifests;
	}
	if (a->o.checkout && !a->o.project)
		return ml_cli_usage(&ml_cmd_install, err, "--checkout needs --project GIT_URL");
	/* a project's environment goes into its checkout, known once it is
	 * there: ml_install takes the lock then */
	if (!a->o.target && a->o.project)
		ctx->lock_later = true;
	if (!a->o.target && !a->o.project)
		a->o.target = ".venv";
	ctx->lock_target = a->o.target;
	ctx->lock_no_wait = a->o.no_wait;
	return 0;
}

static void print_summary(const ml_install_result *r, int rc)
{
	const char *b = ml_c("bold"), *e = ml_c("reset");
	const ml_plan *p = r->plan;
	if (!p || !p->selection->manifest)
		return;
	if (r->up_to_date) {
		ml_say("environment %s is up to date: manifest %s, %zu packages; nothing to do",
		       r->target, p->selection->manifest->name, p->n_files);
		return;
	}
	/* The machine and the manifest were shown first, as they came. */
	if (r->python.version[0])
		ml_say("%spython%s       %s (%s%s)", b, e, r->python.version, r->python.executable,
		       r->python_cached ? ", already unpacked" : "");
	ml_say("%spackages%s     %zu wheels, %.1f MiB: %llu downloaded (%.1f MiB), %llu from the "
	       "cache",
	       b, e, p->n_files, (double)p->total_bytes / 1048576.0,
	       (unsigned long long)r->n_downloaded, (double)r->bytes_downloaded / 1048576.0,
	       (unsigned long long)r->n_from_cache);
	char times[256] = "";
	for (int i = 0; i < ML_STAGE_COUNT; i++)
		snprintf(times + strlen(times), sizeof(times) - strlen(times), "%s%s %.1f s",
		         i ? ", " : "", ml_install_stage_name(i), r->seconds[i]);
	ml_say("%sstages%s       %s", b, e, times);
#ifdef _WIN32
	char t[sizeof(r->target)]; /* as Windows writes paths */
	ml_strlcpy(t, r->target, sizeof(t));
	for (char *c = t; *c; c++)
		if (*c == '/')
			*c = '\\';
	if (!rc)
		ml_say("%senvironment%s  %s (activate: %s\\Scripts\\activate.bat, or in "
		       "PowerShell %s\\Scripts\\Activate.ps1)",
		       b, e, t, t, t);
#else
	if (!rc)
		ml_say("%senvironment%s  %s (activate: . %s/bin/activate)", b, e, r->target,
		       r->target);
#endif
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	struct install_args *a = args;
	ml_stage_ui ui;
	ml_stage_ui_start(&ui, !a->no_progress);
	a->o.sysroot = ctx->sysroot;
	a->o.offline = ctx->offline;
	a->o.lock = ctx->lock;
	a->o.on_event = ml_stage_ui_event;
	a->o.event_data = &ui;
	ml_cli_index_flags(&a->ix, &a->o.index);
	ml_install_result r;
	int rc = ml_install(&r, &a->o, err);
	ml_stage_ui_finish(&ui);
	if (ctx->json && r.report)
		ml_out_json(r.report);
	print_summary(&r, rc);
	ml_install_result_release(&r);
	return rc;
}

const ml_command ml_cmd_install = {
        "install",
        sizeof(struct install_args),
        parse,
        run,
        ML_NEED_FETCH | ML_NEED_LOCK,
        "build a verified environment: detect, plan, fetch, build, verify, report",
        "mlsetup install [--manifest NAME|PATH]... [--project PATH|GIT_URL [--checkout DIR]] "
        "[--target DIR] [--python X.Y|PATH] [index options] "
        "[--cache-dir DIR] [--jobs N] [--offline] [--require-gpu] [--no-verify] "
        "[REQUIREMENT...]",
        "  REQUIREMENT...          requirements as pip takes them (torch 'numpy<2'):\n"
        "                          resolved as a requirements file; a torch left open\n"
        "                          gets the build that runs on this machine's GPUs\n"
        "  --manifest NAME|PATH    use this manifest instead of choosing one; repeated:\n"
        "                          candidates, the first that fits this machine is chosen\n"
        "  --project PATH|GIT_URL  a project directory or git repository (https://, file://,\n"
        "                          git+https://..., @REV for a commit, tag or branch): its\n"
        "                          requirements files are the candidates ([tool.mlsetup]\n"
        "                          manifests of pyproject.toml, else requirements.txt and\n"
        "                          every requirements*.txt that requires torch)\n"
        "  --checkout DIR          where a git project is checked out (default\n"
        "                          ./<repository name>); reused when clean and at REV\n"
        "  -t, --target DIR        where the environment goes (default ./.venv, with\n"
        "                          --project <project>/.venv); replaced\n"
        "                          atomically, an existing one is untouched on failure\n"
        "  --python X.Y|PATH       pinned interpreter version, or an existing interpreter\n"
        "  --python-preference P   managed (default: a pinned interpreter, else one found\n"
        "                          here when the download fails for the network), system\n"
        "                          (one found here first), only-managed, only-system\n"
        "  --python-mirror URL     replaces the interpreter release host prefix (also\n"
        "                          MLSETUP_PYTHON_MIRROR)\n"
        "  --python-pins FILE      interpreter pins instead of the built-in ones\n"
        "  --offline               use only the cache and --find-links (global option)\n"
        "  --no-progress           no progress: neither the live display on a terminal nor\n"
        "                          the stage lines elsewhere (-q silences them too)\n"
        "  --no-wait               fail at once when another install holds the target\n"
        "  --no-verify             skip the import check after building\n"
        "  --require-gpu           fail (exit 5) when no NVIDIA GPU is found\n"
        "  --gpu SM,... [--driver VERSION]  build for these GPUs instead of this machine's\n"
        "                          (a login node for its compute nodes): chosen and audited\n"
        "                          for them; their GPU checks run there (mlsetup verify)\n"
        "  --compile-bytecode      compile .pyc files after installing, also with --no-verify\n"
        "                          (an install that verifies compiles them by default, on\n"
        "                          every core, so that its import check reads bytecode)\n"
        "  --no-compile-bytecode   do not: the import check compiles what it imports\n"
        "  --link METHOD           auto (default), reflink, hardlink or copy\n"
        "  --reinstall             rebuild the target even when it already is this plan\n"
        "  --require-hashes        refuse a manifest that does not pin hashes instead of\n"
        "                          resolving it with pip (also PIP_REQUIRE_HASHES)\n"
        "  --force                 build even when the audit of the downloaded wheels says the\n"
        "                          GPUs cannot run them\n" ML_VERIFY_HELP ML_CLI_INDEX_HELP
                ML_CLI_FETCH_HELP,
};
