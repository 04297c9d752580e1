/*
 * verify_run.c - runs every check of an environment and turns the results
 * into a verdict: the static audit of its CUDA libraries, the native
 * driver-level smoke test (a SAXPY kernel on every GPU), the framework
 * smoke test with the environment's interpreter, and the diagnosis that
 * maps each failure to a cause and a remedy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "verify_run.h"

/* The manifest an environment was built from, from its report. */
static void read_manifest_name(char *dst, size_t sz, const char *target)
{
	char path[4200];
	char *text = NULL;
	dst[0] = '\0';
	snprintf(path, sizeof(path), "%s/mlsetup-report.json", target);
	if (ml_os_read_file(&text, NULL, NULL, path, 64u << 20, NULL) != 0)
		return;
	cJSON *doc = cJSON_Parse(text);
	free(text);
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(doc, "plan");
	const cJSON *man = cJSON_GetObjectItemCaseSensitive(plan, "manifest");
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(man, "name"));
	if (name)
		ml_strlcpy(dst, name, sz);
	cJSON_Delete(doc);
}

size_t ml_cli_gpu_archs(ml_cuda_arch *out, size_t cap, const ml_machine *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_gpus && n < cap; i++)
		if (m->gpus[i].cc_major >= 0)
			out[n++] =
			        (ml_cuda_arch){m->gpus[i].cc_major, m->gpus[i].cc_minor, 0, false};
	return n;
}

int ml_verify_option(ml_framework_opts *fo, int opt, const char *arg, ml_err *err)
{
	if (opt != ML_OPT_SMOKE_SIZE && opt != ML_OPT_ALLOC_MIB)
		return 0;
	char *end = NULL;
	long v = strtol(arg, &end, 10);
	long lo = opt == ML_OPT_SMOKE_SIZE ? 2 : 1, hi = opt == ML_OPT_SMOKE_SIZE ? 16384 : 1048576;
	if (!*arg || *end || v < lo || v > hi) {
		ml_err_set(err, ML_EUSAGE, "%s takes a number from %ld to %ld, not '%s'",
		           opt == ML_OPT_SMOKE_SIZE ? "--smoke-size" : "--alloc-mib", lo, hi, arg);
		return -1;
	}
	if (opt == ML_OPT_SMOKE_SIZE)
		fo->matmul_size = (int)v;
	else
		fo->alloc_mib = (size_t)v;
	return 1;
}

int ml_verify_run_do(ml_verify_run *r, const ml_machine *m, const char *target, const char *python,
                     bool require_gpu, const char *sysroot, const ml_framework_opts *fo,
                     ml_err *err)
{
	memset(r, 0, sizeof(*r));
	r->m = m;
	struct stat st;
	if (python) {
		ml_strlcpy(r->python, python, sizeof(r->python));
	} else {
		if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode)) {
			ml_err_set(err, ML_ENOENT, "no environment at '%s'", target);
			ml_err_hint(err, "give --target DIR of an environment, or --python PATH");
			return ML_ENOENT;
		}
		snprintf(r->python, sizeof(r->python), "%s/bin/python", target);
		read_manifest_name(r->manifest, sizeof(r->manifest), target);
	}
	/* Static audit: which GPUs could the environment's CUDA code run on? */
	ml_cuda_arch devs[64];
	size_t nd = ml_cli_gpu_archs(devs, 64, m);
	if (!python) {
		ml_audit_opts ao = ML_AUDIT_OPTS_INIT;
		ao.devices = devs;
		ao.n_devices = nd;
		const char *paths[] = {target};
		if (ml_audit_paths(&r->audit, paths, 1, &ao, err) != 0)
			return ML_ENOMEM;
	}
	ml_err e2 = ML_ERR_INIT;
	if (ml_smoke_driver(&r->driver, NULL, &e2) == ML_ENOMEM)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = ml_smoke_framework(&r->framework, r->python, fo, err);
	if (rc == ML_ENOENT || rc == ML_EUSAGE)
		return rc;
	r->framework_ran = rc == 0;
	ml_diagnose_opts d = ML_DIAGNOSE_OPTS_INIT;
	d.machine = m;
	d.driver = &r->driver;
	d.framework = r->framework_ran ? &r->framework : NULL;
	d.manifest = r->manifest[0] ? r->manifest : NULL;
	d.root = sysroot;
	d.require_gpu = require_gpu;
	return ml_diagnose(&r->verdict, &d, err);
}

int ml_verify_run_status(const ml_verify_run *r, ml_err *err)
{
	int code = ml_verdict_exit_code(r->verdict);
	if (code == 0)
		return 0;
	int rc = code == ML_EXIT_UNSUPPORTED ? ML_EUNSUPPORTED : ML_EGPU;
	ml_err_set(err, rc, "verification failed: %s", r->verdict->summary);
	for (size_t i = 0; i < r->verdict->n_checks; i++)
		if (r->verdict->checks[i].status == ML_CHECK_FAIL &&
		    r->verdict->checks[i].remedy[0]) {
			ml_err_hint(err, "%s", r->verdict->checks[i].remedy);
			return rc;
		}
	for (size_t g = 0; g < r->verdict->n_gpus; g++)
		for (size_t i = 0; i < r->verdict->gpus[g].n_checks; i++) {
			const ml_check *c = &r->verdict->gpus[g].checks[i];
			if (c->status == ML_CHECK_FAIL && c->remedy[0]) {
				ml_err_hint(err, "%s", c->remedy);
				return rc;
			}
		}
	return rc;
}

static void print_check(const ml_check *c, const char *indent)
{
	const char *color = c->status == ML_CHECK_FAIL   ? ml_c("red")
	                    : c->status == ML_CHECK_WARN ? ml_c("yellow")
	                    : c->status == ML_CHECK_PASS ? ml_c("green")
	                                                 : ml_c("dim");
	ml_say("%s%-14s %s%-5s%s %s", indent, c->name, color, ml_check_status_name(c->status),
	       ml_c("reset"), c->detail);
	if (c->remedy[0] && c->status != ML_CHECK_PASS)
		ml_say("%s%-14s       remedy: %s", indent, "", c->remedy);
}

void ml_verify_run_print(const ml_verify_run *r)
{
	const char *b = ml_c("bold"), *e = ml_c("reset");
	if (r->audit) {
		ml_say("%saudit%s     %zu libraries read, %zu with CUDA code", b, e,
		       r->audit->n_scanned, r->audit->n_with_code);
		for (size_t d = 0; d < r->audit->n_devices; d++) {
			char arch[16];
			ml_cuda_arch_format(arch, sizeof(arch), &r->audit->devices[d]);
			ml_say("          %s: %s%s%s", arch,
			       r->audit->overall[d].runs ? "runs" : "does NOT run",
			       r->audit->overall[d].runs ? "" : ": ",
			       r->audit->overall[d].runs ? "" : r->audit->overall[d].why);
		}
	}
	ml_say("%schecks%s", b, e);
	for (size_t i = 0; i < r->verdict->n_checks; i++)
		print_check(&r->verdict->checks[i], "  ");
	for (size_t g = 0; g < r->verdict->n_gpus; g++) {
		const ml_verdict_gpu *vg = &r->verdict->gpus[g];
		char sm[16];
		ml_cc_sm(sm, sizeof(sm), vg->cc_major, vg->cc_minor);
		ml_say("  gpu %d: %s (%s)", vg->index, vg->name, sm);
		for (size_t i = 0; i < vg->n_checks; i++)
			print_check(&vg->checks[i], "    ");
	}
	ml_say("%sverdict%s   %s %s", b, e, ml_check_status_name(r->verdict->status),
	       r->verdict->summary);
}

void ml_verify_run_json(const ml_verify_run *r, cJSON *obj)
{
	if (r->audit)
		cJSON_AddItemToObject(obj, "audit", ml_audit_to_json(r->audit));
	cJSON_AddItemToObject(obj, "driver_smoke", ml_smoke_result_to_json(&r->driver));
	if (r->framework_ran)
		cJSON_AddItemToObject(obj, "framework", ml_framework_result_to_json(&r->framework));
	if (r->verdict)
		cJSON_AddItemToObject(obj, "verdict", ml_verdict_to_json(r->verdict));
}

void ml_verify_run_release(ml_verify_run *r)
{
	ml_audit_free(r->audit);
	ml_smoke_result_release(&r->driver);
	if (r->framework_ran)
		ml_framework_result_release(&r->framework);
	ml_verdict_free(r->verdict);
	memset(r, 0, sizeof(*r));
}
