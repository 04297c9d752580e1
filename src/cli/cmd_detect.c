/*
 * cmd_detect.c - `mlsetup detect [--json] [--target DIR]`: what machine is
 * this? Prints OS, libc, CPU, memory, disk, the NVIDIA driver and every
 * GPU with its compute capability and precision features (bf16, tf32,
 * fp8, fp4, FlashAttention 2, the dtype to train in), and how each fact
 * was learnt.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/detect.h"

struct detect_args {
	const char *target;
	bool no_smi;
};

enum { OPT_TARGET = 't', OPT_NO_SMI = 256 };

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	(void)err;
	struct detect_args *a = data;
	if (opt == OPT_TARGET)
		a->target = arg;
	else if (opt == OPT_NO_SMI)
		a->no_smi = true;
	return 0;
}

/* One line under a GPU: the precisions its compute capability supports,
 * the dtype to train in and whether FlashAttention 2 runs. */
static void print_precision(const ml_gpu *gp)
{
	ml_precision p;
	ml_gpu_precision(&p, gp->cc_major, gp->cc_minor);
	if (!p.known)
		return;
	char feats[64] = "";
	const struct {
		bool on;
		const char *name;
	} f[] = {{p.bf16, "bf16"}, {p.tf32, "tf32"}, {p.fp8, "fp8"}, {p.fp4, "fp4"}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].on)
			snprintf(feats + strlen(feats), sizeof feats - strlen(feats), "%s%s",
			         feats[0] ? " " : "", f[i].name);
	ml_say("             precision: %s · recommended dtype %s · FlashAttention 2: %s",
	       feats[0] ? feats : "no bf16, tf32, fp8 or fp4", p.recommended_dtype,
	       p.flash_attention_2 ? "yes" : "no (needs compute capability 8.0)");
}

static void print_human(const ml_machine *m)
{
	const char *b = ml_c("bold"), *r = ml_c("reset"), *y = ml_c("yellow"), *g = ml_c("green");
	ml_say("%smachine%s", b, r);
	ml_say("  os         %s%s%s, kernel %s, %s",
	       m->os.distro_pretty[0] ? m->os.distro_pretty : m->os.name, m->os.wsl ? " (WSL)" : "",
	       "", m->os.kernel, m->os.arch);
	if (strcmp(m->os.name, "windows") != 0) /* no libc to speak of there */
		ml_say("  libc       %s %s", m->os.libc_kind[0] ? m->os.libc_kind : "unknown",
		       m->os.libc_version);
	if (m->os.container)
		ml_say("  container  %s", m->os.container_kind);
	ml_say("  cpu        %s (%d cores)", m->cpu_model[0] ? m->cpu_model : "unknown",
	       m->cpu_cores);
	ml_say("  memory     %llu MiB", (unsigned long long)m->memory_mib);
	ml_say("  disk       %llu MiB free at %s", (unsigned long long)m->disk_free_mib,
	       m->target_dir);
	ml_say("%snvidia%s", b, r);
	if (m->driver.version[0])
		ml_say("  driver     %s (CUDA %d.%d), from %s", m->driver.version,
		       m->driver.cuda_version / 1000, (m->driver.cuda_version % 1000) / 10,
		       m->driver.source);
	else if (m->driver.cuda_version)
		ml_say("  driver     version unknown (CUDA %d.%d)", m->driver.cuda_version / 1000,
		       (m->driver.cuda_version % 1000) / 10);
	else
		ml_say("  driver     none loaded");
	if (m->n_gpus == 0)
		ml_say("  %sno NVIDIA GPU found%s", y, r);
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *gp = &m->gpus[i];
		char cc[16], sm[16];
		ml_cc_format(cc, sizeof(cc), gp->cc_major, gp->cc_minor);
		ml_cc_sm(sm, sizeof(sm), gp->cc_major, gp->cc_minor);
		/* memory and slot as far as known: a PCI scan without a driver
		 * knows no memory, a Windows one not always the slot */
		char mem[32] = "memory unknown";
		if (gp->memory_mib)
			snprintf(mem, sizeof(mem), "%llu MiB", (unsigned long long)gp->memory_mib);
		ml_say("  gpu %-6d %s%s%s: compute capability %s (%s, %s), %s, %s", gp->index, g,
		       gp->name[0] ? gp->name : "unknown NVIDIA GPU", r, cc[0] ? cc : "unknown",
		       sm[0] ? sm : "?", gp->architecture[0] ? gp->architecture : "unknown", mem,
		       gp->pci_bus_id[0] ? gp->pci_bus_id : "slot unknown");
		print_precision(gp);
	}
	char advice[512];
	if (ml_machine_driver_advice(advice, sizeof(advice), m))
		ml_say("  %s%s%s", y, advice, r);
	ml_say("%sprobes%s", b, r);
	for (size_t i = 0; i < m->n_probes; i++) {
		const ml_probe *p = &m->probes[i];
		ml_say("  %-11s %-8s %s", p->source,
		       p->status == ML_PROBE_OK       ? "ok"
		       : p->status == ML_PROBE_FAILED ? "failed"
		                                      : "skipped",
		       p->detail);
	}
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"no-smi", no_argument, NULL, OPT_NO_SMI},
	        {NULL, 0, NULL, 0},
	};
	int first;
	int rc = ml_cli_parse(&ml_cmd_detect, argc, argv, opts, on_option, args, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown && first < argc)
		return ml_cli_usage(&ml_cmd_detect, err, "unexpected argument '%s'", argv[first]);
	return rc;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	const struct detect_args *a = args;
	ml_detect_opts o = ML_DETECT_OPTS_INIT;
	o.root = ctx->sysroot;
	o.target_dir = a->target;
	o.no_smi = a->no_smi;
	ml_machine *m = NULL;
	int rc = ml_detect(&m, &o, err);
	if (rc)
		return rc;
	if (ctx->json) {
		cJSON *doc = ml_machine_to_json(m);
		rc = doc ? ml_out_json(doc) : ml_err_set(err, ML_ENOMEM, "out of memory");
		cJSON_Delete(doc);
	} else {
		print_human(m);
	}
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_detect = {
        "detect",
        sizeof(struct detect_args),
        parse,
        run,
        ML_NEED_NONE,
        "show the OS, libc, CPU, memory, disk, NVIDIA driver and GPUs",
        "mlsetup detect [--json] [--target DIR] [--no-smi]",
        "  --target DIR        report free disk space where the environment will go (default .)\n"
        "  --no-smi            do not run nvidia-smi as the last-resort probe\n",
};
