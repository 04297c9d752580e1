/*
 * cmd_verify.c - `mlsetup verify`: does GPU code really run in this
 * environment? Audits its CUDA libraries, runs a SAXPY kernel on every GPU
 * through the driver API and torch's own checks with the environment's
 * interpreter, and explains every failure with its cause and remedy.
 * Exit 0 on pass, 5 when a GPU check fails, 6 when the driver is too old.
 */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "verify_run.h"

enum { OPT_TARGET = 't', OPT_PYTHON = 1300, OPT_REQUIRE_GPU };

struct verify_args {
	const char *target, *python;
	bool require_gpu;
	ml_framework_opts fo;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct verify_args *a = data;
	int r = ml_verify_option(&a->fo, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_TARGET)
		a->target = arg;
	else if (opt == OPT_PYTHON)
		a->python = arg;
	else if (opt == OPT_REQUIRE_GPU)
		a->require_gpu = true;
	return 0;
}

static int cmd_verify(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
	        ML_VERIFY_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct verify_args a = {".venv", NULL, false, ML_FRAMEWORK_OPTS_INIT};
	int first;
	bool help;
	int rc = ml_cli_parse(&ml_cmd_verify, argc, argv, opts, on_option, &a, &first, &help, err);
	if (rc || help)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_verify, err, "unexpected argument '%s'", argv[first]);
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = a.target;
	ml_machine *m = NULL;
	if ((rc = ml_detect(&m, &d, err)) != 0)
		return rc;
	ml_verify_run r;
	rc = ml_verify_run_do(&r, m, a.target, a.python, a.require_gpu, ctx->sysroot, &a.fo, err);
	if (!rc) {
		if (ctx->json) {
			cJSON *doc = cJSON_CreateObject();
			cJSON_AddStringToObject(doc, "schema", "mlsetup.verify/1");
			cJSON_AddStringToObject(doc, "python", r.python);
			ml_verify_run_json(&r, doc);
			ml_out_json(doc);
			cJSON_Delete(doc);
		} else {
			ml_verify_run_print(&r);
		}
		rc = ml_verify_run_status(&r, err);
	}
	ml_verify_run_release(&r);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_verify = {
        "verify",
        cmd_verify,
        ML_NEED_NONE,
        "prove GPU code runs in an environment: audit, CUDA and torch smoke tests, diagnosis",
        "mlsetup verify [--target DIR | --python PATH] [--require-gpu] [--json]",
        "  -t, --target DIR     the environment (default ./.venv)\n"
        "  --python PATH        check this interpreter instead of an environment\n"
        "  --require-gpu        no NVIDIA GPU is a failure (exit 5), not a skipped "
        "check\n" ML_VERIFY_HELP,
};
