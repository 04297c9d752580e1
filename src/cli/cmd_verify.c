/*
 * cmd_verify.c - `mlsetup verify`: does GPU code really run in this
 * environment? Audits its CUDA libraries, runs a SAXPY kernel on every GPU
 * through the driver API and torch's own checks with the environment's
 * interpreter, and explains every failure with its cause and remedy
 * (ml_verify_env). Exit 0 on pass, 5 when a GPU check fails, 6 when the
 * driver is too old (ml_verification_status). Each step shows as it runs
 * (stage_ui.c).
 */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/report.h"
#include "stage_ui.h"
#include "verify_ui.h"

enum { OPT_TARGET = 't', OPT_PYTHON = 1300, OPT_REQUIRE_GPU, OPT_NO_PROGRESS };

struct verify_args {
	ml_verify_env_opts o;
	bool no_progress;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct verify_args *a = data;
	ml_verify_env_opts *o = &a->o;
	int r = ml_verify_option(&o->framework, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_TARGET)
		o->target = arg;
	else if (opt == OPT_PYTHON)
		o->python = arg;
	else if (opt == OPT_REQUIRE_GPU)
		o->require_gpu = true;
	else if (opt == OPT_NO_PROGRESS)
		a->no_progress = true;
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        ML_VERIFY_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct verify_args *a = args;
	ml_verify_env_opts init = ML_VERIFY_ENV_OPTS_INIT;
	a->o = init;
	a->o.target = ".venv";
	int first;
	int rc = ml_cli_parse(&ml_cmd_verify, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown && first < argc)
		return ml_cli_usage(&ml_cmd_verify, err, "unexpected argument '%s'", argv[first]);
	return rc;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	const struct verify_args *a = args;
	ml_verify_env_opts o = a->o;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = o.target;
	ml_machine *m = NULL;
	ml_report *rep = NULL;
	ml_verification *v = NULL;
	ml_stage_ui ui;
	ml_stage_ui_start(&ui, !a->no_progress);
	ml_stage_ui_begin(&ui, "detect");
	int rc = ml_detect(&m, &d, err);
	ml_stage_ui_end(&ui, rc);
	if (rc) {
		ml_stage_ui_finish(&ui);
		return rc;
	}
	/* The manifest the environment came from, for the remedies. */
	if (!o.python && ml_report_read(&rep, o.target, NULL) == 0)
		o.manifest = ml_report_manifest(rep);
	o.root = ctx->sysroot;
	o.on_step = ml_stage_ui_step;
	o.step_data = &ui;
	ml_stage_ui_begin(&ui, "verify");
	rc = ml_verify_env(&v, m, &o, err);
	ml_stage_ui_end(&ui, rc);
	ml_stage_ui_finish(&ui);
	if (!rc) {
		if (ctx->json) {
			cJSON *doc = cJSON_CreateObject();
			cJSON_AddStringToObject(doc, "schema", "mlsetup.verify/1");
			cJSON_AddStringToObject(doc, "python", v->python);
			ml_verification_add_json(doc, v);
			ml_out_json(doc);
			cJSON_Delete(doc);
		} else {
			ml_cli_print_verification(v);
		}
		rc = ml_verification_status(v, err);
	}
	ml_verification_free(v);
	ml_report_free(rep);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_verify = {
        "verify",
        sizeof(struct verify_args),
        parse,
        run,
        ML_NEED_NONE,
        "prove GPU code runs in an environment: audit, CUDA and torch smoke tests, diagnosis",
        "mlsetup verify [--target DIR | --python PATH] [--require-gpu] [--no-progress] [--json]",
        "  -t, --target DIR     the environment (default ./.venv)\n"
        "  --python PATH        check this interpreter instead of an environment\n"
        "  --require-gpu        no NVIDIA GPU is a failure (exit 5), not a skipped "
        "check\n"
        "  --no-progress        no progress: neither each step live on a terminal nor the\n"
        "                       stage lines elsewhere (-q silences them too)\n" ML_VERIFY_HELP,
};
