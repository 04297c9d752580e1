/*
 * cmd_doctor.c - `mlsetup doctor`: detect, the plan's selection rules and
 * verify for an existing environment, printed as findings with remedies:
 * what this machine is, which manifest fits it and why, and whether the
 * environment that is there really runs on its GPUs.
 */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/plan.h"
#include "verify_run.h"

enum { OPT_TARGET = 't', OPT_PYTHON = 1400 };

struct doctor_args {
	const char *target, *python;
	ml_framework_opts fo;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct doctor_args *a = data;
	int r = ml_verify_option(&a->fo, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_TARGET)
		a->target = arg;
	else if (opt == OPT_PYTHON)
		a->python = arg;
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

static int cmd_doctor(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        ML_VERIFY_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct doctor_args a = {".venv", NULL, ML_FRAMEWORK_OPTS_INIT};
	int first;
	bool help;
	int rc = ml_cli_parse(&ml_cmd_doctor, argc, argv, opts, on_option, &a, &first, &help, err);
	if (rc || help)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_doctor, err, "unexpected argument '%s'", argv[first]);
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = a.target;
	ml_machine *m = NULL;
	if ((rc = ml_detect(&m, &d, err)) != 0)
		return rc;
	ml_plan_opts po = ML_PLAN_OPTS_INIT;
	po.target = a.target;
	po.offline = true;
	ml_plan *p = NULL;
	ml_verify_run r;
	bool have_run = false;
	rc = ml_plan_make(&p, m, &po, err);
	if (!rc) {
		rc = ml_verify_run_do(&r, m, a.target, a.python, false, ctx->sysroot, &a.fo, err);
		have_run = rc == 0;
	}
	if (!rc) {
		if (ctx->json) {
			cJSON *doc = cJSON_CreateObject();
			cJSON_AddStringToObject(doc, "schema", "mlsetup.doctor/1");
			cJSON_AddItemToObject(doc, "machine", ml_machine_to_json(m));
			cJSON_AddItemToObject(doc, "plan", ml_plan_to_json(p, m));
			ml_verify_run_json(&r, doc);
			ml_out_json(doc);
			cJSON_Delete(doc);
		} else {
			print_findings(m, p);
			ml_verify_run_print(&r);
		}
		rc = ml_verify_run_status(&r, err);
		if (!rc && !p->selection->manifest) {
			ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s",
			           p->selection->problem);
			ml_err_hint(err, "%s", p->selection->remedy);
			rc = ML_EUNSUPPORTED;
		}
	}
	if (have_run)
		ml_verify_run_release(&r);
	ml_plan_free(p);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_doctor = {
        "doctor",
        cmd_doctor,
        ML_NEED_NONE,
        "diagnose a machine and its environment: detect, selection rules, verify, remedies",
        "mlsetup doctor [--target DIR | --python PATH] [--json]",
        "  -t, --target DIR     the environment (default ./.venv)\n"
        "  --python PATH        check this interpreter instead of an environment\n" ML_VERIFY_HELP,
};
