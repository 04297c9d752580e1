/*
 * cmd_doctor.c - `mlsetup doctor`: detect, the plan's selection rules and
 * verify for an existing environment, printed as findings with remedies:
 * what this machine is, which manifest fits it and why, and whether the
 * environment that is there really runs on its GPUs. Each step shows as it
 * runs (stage_ui.c).
 */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/plan.h"
#include "mlsetup/report.h"
#include "stage_ui.h"
#include "verify_ui.h"

enum { OPT_TARGET = 't', OPT_PYTHON = 1400, OPT_NO_PROGRESS };

struct doctor_args {
	ml_verify_env_opts o;
	bool no_progress;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct doctor_args *a = data;
	ml_verify_env_opts *o = &a->o;
	int r = ml_verify_option(&o->framework, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_TARGET)
		o->target = arg;
	else if (opt == OPT_PYTHON)
		o->python = arg;
	else if (opt == OPT_NO_PROGRESS)
		a->no_progress = true;
	return 0;
}

static void print_findings(const ml_machine *m, const ml_plan *p)
{
	const char *b = ml_c("bold"), *e = ml_c("reset");
	ml_say("%smachine%s   %s-%s, %s %s, driver %s (CUDA %d.%d), %zu NVIDIA GPU%s", b, e,
	       m->os.name, m->os.arch, m->os.libc_kind, m->os.libc_version,
	       m->driver.version[0] ? m->driver.version : "none", m->driver.cuda_version / 1000,
	       (m->driver.cuda_version % 1000) / 10, m->n_gpus, m->n_gpus == 1 ? "" : "s");
	char advice[512];
	if (ml_machine_driver_advice(advice, sizeof(advice), m))
		ml_say("          finding: %s", advice);
	const ml_selection *s = p->selection;
	if (s->manifest)
		ml_say("%sfits%s      %s (%s)", b, e, s->manifest->name,
		       s->manifest->summary ? s->manifest->summary : "");
	else
		ml_say("%sfits%s      nothing: %s; remedy: %s", b, e, s->problem, s->remedy);
	for (size_t i = 0; i < s->n_warnings; i++)
		ml_say("          finding: %s", s->warnings[i]);
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        ML_VERIFY_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct doctor_args *a = args;
	ml_verify_env_opts init = ML_VERIFY_ENV_OPTS_INIT;
	a->o = init;
	a->o.target = ".venv";
	int first;
	int rc = ml_cli_parse(&ml_cmd_doctor, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown && first < argc)
		return ml_cli_usage(&ml_cmd_doctor, err, "unexpected argument '%s'", argv[first]);
	return rc;
}

static void print_json(const ml_machine *m, const ml_plan *p, const ml_verification *v)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "mlsetup.doctor/1");
	cJSON_AddItemToObject(doc, "machine", ml_machine_to_json(m));
	cJSON_AddItemToObject(doc, "plan", ml_plan_to_json(p, m));
	ml_verification_add_json(doc, v);
	ml_out_json(doc);
	cJSON_Delete(doc);
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	const struct doctor_args *a = args;
	ml_verify_env_opts o = a->o;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = o.target;
	ml_machine *m = NULL;
	ml_plan *p = NULL;
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
	ml_plan_opts po = ML_PLAN_OPTS_INIT;
	po.target = o.target;
	po.offline = true;
	ml_stage_ui_begin(&ui, "plan");
	rc = ml_plan_make(&p, m, &po, err);
	ml_stage_ui_end(&ui, rc);
	/* The manifest the environment came from, for the remedies. */
	if (!o.python && ml_report_read(&rep, o.target, NULL) == 0)
		o.manifest = ml_report_manifest(rep);
	o.root = ctx->sysroot;
	o.on_step = ml_stage_ui_step;
	o.step_data = &ui;
	if (!rc) {
		ml_stage_ui_begin(&ui, "verify");
		rc = ml_verify_env(&v, m, &o, err);
		ml_stage_ui_end(&ui, rc);
	}
	ml_stage_ui_finish(&ui);
	if (!rc) {
		if (ctx->json) {
			print_json(m, p, v);
		} else {
			print_findings(m, p);
			ml_cli_print_verification(v);
		}
		rc = ml_verification_status(v, err);
		if (!rc && !p->selection->manifest) {
			ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s",
			           p->selection->problem);
			ml_err_hint(err, "%s", p->selection->remedy);
			rc = ML_EUNSUPPORTED;
		}
	}
	ml_verification_free(v);
	ml_report_free(rep);
	ml_plan_free(p);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_doctor = {
        "doctor",
        sizeof(struct doctor_args),
        parse,
        run,
        ML_NEED_NONE,
        "diagnose a machine and its environment: detect, selection rules, verify, remedies",
        "mlsetup doctor [--target DIR | --python PATH] [--no-progress] [--json]",
        "  -t, --target DIR     the environment (default ./.venv)\n"
        "  --python PATH        check this interpreter instead of an environment\n"
        "  --no-progress        no progress: neither each step live on a terminal nor the\n"
        "                       stage lines elsewhere (-q silences them too)\n" ML_VERIFY_HELP,
};
