/*
 * cmd_audit.c - `mlsetup audit PATH... [--arch sm_XY]... [--driver VERSION]
 * [--all] [--json]`: which CUDA code (SASS, PTX) do these libraries, wheels
 * or environments carry, and does it run on these GPUs? Without --arch the
 * detected GPUs and their driver are asked about; --driver names the
 * driver, so that PTX is judged by the ISA it can JIT. A torch wheel also
 * gets one line: its CUDA version, the SASS and PTX of torch's own CUDA
 * library and the driver that needs. Exit 5 when some library cannot run
 * on an asked GPU, 1 when a path could not be audited (5 wins), 0
 * otherwise. The rendering is audit_ui.c's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit_ui.h"
#include "cli.h"
#include "mlsetup/detect.h"
#include "mlsetup/plan.h"
#include "mlsetup/audit.h"

enum { OPT_ARCH = 'a', OPT_ALL = 256, OPT_DRIVER };

#define ML_AUDIT_MAX_DEVICES 64

struct audit_args {
	ml_cuda_arch devices[ML_AUDIT_MAX_DEVICES];
	size_t n_devices;
	bool all;
	char driver[32]; /* --driver, or the detected driver; "" when none */
	int driver_cuda; /* the CUDA version it supports; 0 when unknown */
	const char *const *paths;
	size_t n_paths;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct audit_args *a = data;
	if (opt == OPT_ALL) {
		a->all = true;
		return 0;
	}
	if (opt == OPT_DRIVER) {
		a->driver_cuda = ml_driver_cuda_version(arg);
		if (a->driver_cuda == 0 || strlen(arg) >= sizeof a->driver)
			return ml_cli_usage(&ml_cmd_audit, err,
			                    "--driver '%s' is not an NVIDIA driver version mlsetup "
			                    "knows (e.g. 570.172.08)",
			                    arg);
		ml_strlcpy(a->driver, arg, sizeof a->driver);
		return 0;
	}
	/* --arch takes one name or a comma-separated list. */
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	size_t before = a->n_devices;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		if (a->n_devices == sizeof a->devices / sizeof a->devices[0])
			rc = ml_cli_usage(&ml_cmd_audit, err, "too many --arch values");
		else if (ml_cuda_device_parse(&a->devices[a->n_devices], t) != 0)
			rc = ml_cli_usage(
			        &ml_cmd_audit, err,
			        "--arch '%s' is not a GPU: use sm_XY (sm_120) or X.Y (12.0)", t);
		else
			a->n_devices++;
	}
	if (!rc && a->n_devices == before)
		rc = ml_cli_usage(&ml_cmd_audit, err, "--arch needs a value");
	free(copy);
	return rc;
}

/* Fills args->devices with the compute capabilities of the detected GPUs,
 * and the driver with the detected one unless --driver named one. */
static int detected_devices(struct audit_args *args, const ml_ctx *ctx, ml_err *err)
{
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	ml_machine *m = NULL;
	int rc = ml_detect(&m, &d, err);
	if (rc)
		return rc;
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	ml_audit_opts_machine(&o, args->devices, ML_AUDIT_MAX_DEVICES, m);
	args->n_devices = o.n_devices;
	if (!args->driver[0] && o.driver) {
		ml_strlcpy(args->driver, o.driver, sizeof args->driver);
		args->driver_cuda = o.driver_cuda;
	}
	ml_machine_free(m);
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"arch", required_argument, NULL, OPT_ARCH},
	        {"all", no_argument, NULL, OPT_ALL},
	        {"driver", required_argument, NULL, OPT_DRIVER},
	        {NULL, 0, NULL, 0},
	};
	struct audit_args *a = args;
	int first;
	int rc = ml_cli_parse(&ml_cmd_audit, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	if (first >= argc)
		return ml_cli_usage(&ml_cmd_audit, err, "no PATH to audit");
	a->paths = (const char *const *)argv + first;
	a->n_paths = (size_t)(argc - first);
	return 0;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	struct audit_args *a = args;
	bool detected = a->n_devices == 0;
	int rc;
	if (detected && (rc = detected_devices(a, ctx, err)) != 0)
		return rc;
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = a->devices;
	o.n_devices = a->n_devices;
	o.all = a->all;
	o.driver = a->driver[0] ? a->driver : NULL;
	o.driver_cuda = a->driver_cuda;
	ml_audit *au = NULL;
	if ((rc = ml_audit_paths(&au, a->paths, a->n_paths, &o, err)) != 0)
		return rc;
	if (ctx->json) {
		cJSON *doc = ml_audit_to_json(au);
		const char *from = !detected ? "arch" : a->n_devices ? "detected" : "none";
		if (doc && !cJSON_AddStringToObject(doc, "devices_from", from)) {
			cJSON_Delete(doc);
			doc = NULL;
		}
		rc = doc ? ml_out_json(doc) : ml_err_set(err, ML_ENOMEM, "out of memory");
		cJSON_Delete(doc);
	} else {
		ml_cli_print_audit(au, detected);
	}
	if (!rc)
		rc = ml_audit_status(au, err);
	ml_audit_free(au);
	return rc;
}

const ml_command ml_cmd_audit = {
        "audit",
        sizeof(struct audit_args),
        parse,
        run,
        ML_NEED_NONE,
        "list the CUDA code (SASS, PTX) in libraries, wheels or environments; say where it runs",
        "mlsetup audit PATH... [--arch sm_XY]... [--driver VERSION] [--all] [--json]",
        "  PATH                  a shared library (.so, .dll), a wheel (read in place), or a\n"
        "                        directory: every library below it (an environment); a\n"
        "                        torch wheel also gets its build: CUDA version, SASS/PTX of\n"
        "                        torch's CUDA library, the driver it needs\n"
        "  --arch sm_XY|X.Y      GPU to answer for; repeatable or comma-separated (default:\n"
        "                        the GPUs detected here, with their driver)\n"
        "  --driver VERSION      the driver to judge PTX by (570.172.08): PTX counts only\n"
        "                        where it can JIT the PTX's ISA; without it and --arch,\n"
        "                        PTX counts on that condition, which the answer names\n"
        "  --all                 also list libraries without CUDA code\n"
        "exit status: 0 runs everywhere asked, 5 some library cannot run on an asked GPU,\n"
        "1 a path could not be audited (unreadable, malformed fatbin, broken wheel)\n",
};
