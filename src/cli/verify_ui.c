/*
 * verify_ui.c - the verify options and the verdict as people read it,
 * shared by verify, doctor and install.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_ui.h"

int ml_verify_option(ml_framework_opts *fo, int opt, const char *arg, ml_err *err)
{
	if (opt != ML_OPT_SMOKE_SIZE && opt != ML_OPT_ALLOC_MIB)
		return 0;
	long v = 0;
	bool size = opt == ML_OPT_SMOKE_SIZE;
	if (ml_cli_number(&v, arg, size ? 2 : 1, size ? 16384 : 1048576,
	                  size ? "--smoke-size" : "--alloc-mib", err))
		return -1;
	if (size)
		fo->matmul_size = (int)v;
	else
		fo->alloc_mib = (size_t)v;
	return 1;
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

/* "fp32 12.3 TFLOP/s · fp16 45.6 TFLOP/s · bf16 failed" for the framework
 * GPU with CUDA device ordinal index; "" when it ran no matmul. */
static void matmul_line(char *dst, size_t sz, const ml_verification *v, int index)
{
	static const char *const dtypes[] = {"fp32", "fp16", "bf16"};
	dst[0] = '\0';
	const ml_fw_gpu *fg = NULL;
	for (size_t i = 0; v->framework_ran && i < v->framework.n_gpus; i++)
		if (v->framework.gpus[i].index == index)
			fg = &v->framework.gpus[i];
	size_t n = 0;
	for (size_t i = 0; fg && i < sizeof(dtypes) / sizeof(dtypes[0]) && n < sz; i++) {
		char name[32], rate[32];
		snprintf(name, sizeof(name), "%s_matmul", dtypes[i]);
		const ml_fw_check *c = ml_fw_gpu_check(fg, name);
		if (!c)
			continue;
		if (c->status == ML_CHECK_PASS && c->tflops > 0) {
			ml_tflops_format(rate, sizeof(rate), c->tflops);
			strcat(rate, " TFLOP/s");
		} else {
			snprintf(rate, sizeof(rate), "%s",
			         c->status == ML_CHECK_FAIL   ? "failed"
			         : c->status == ML_CHECK_SKIP ? "skipped"
			                                      : "not timed");
		}
		n += (size_t)snprintf(dst + n, sz - n, "%s%s %s", n ? " · " : "", dtypes[i], rate);
	}
}

void ml_cli_print_verification(const ml_verification *v)
{
	const char *b = ml_c("bold"), *e = ml_c("reset");
	if (v->audit) {
		ml_say("%saudit%s     %zu libraries read, %zu with CUDA code", b, e,
		       v->audit->n_scanned, v->audit->n_with_code);
		for (size_t d = 0; d < v->audit->n_devices; d++) {
			char arch[16];
			ml_cuda_arch_format(arch, sizeof(arch), &v->audit->devices[d]);
			ml_say("          %s: %s%s%s", arch,
			       v->audit->overall[d].runs ? "runs" : "does NOT run",
			       v->audit->overall[d].runs ? "" : ": ",
			       v->audit->overall[d].runs ? "" : v->audit->overall[d].why);
		}
	}
	ml_say("%schecks%s", b, e);
	for (size_t i = 0; i < v->verdict->n_checks; i++)
		print_check(&v->verdict->checks[i], "  ");
	for (size_t g = 0; g < v->verdict->n_gpus; g++) {
		const ml_verdict_gpu *vg = &v->verdict->gpus[g];
		char sm[16];
		ml_cc_sm(sm, sizeof(sm), vg->cc_major, vg->cc_minor);
		ml_say("  gpu %d: %s (%s)", vg->index, vg->name, sm);
		for (size_t i = 0; i < vg->n_checks; i++)
			print_check(&vg->checks[i], "    ");
		char line[256];
		matmul_line(line, sizeof(line), v, vg->index);
		if (line[0])
			ml_say("    %-14s       %s", "matmul speed", line);
	}
	ml_say("%sverdict%s   %s %s", b, e, ml_check_status_name(v->verdict->status),
	       v->verdict->summary);
}
