/*
 * verify_run.h - what `verify`, `doctor` and `install` share: run the
 * checks of an environment (audit of its libraries, the driver-level and
 * the framework-level smoke tests, the diagnosis) and show the verdict.
 */
#ifndef MLSETUP_CLI_VERIFY_RUN_H
#define MLSETUP_CLI_VERIFY_RUN_H

#include "cli.h"
#include "mlsetup/detect.h"
#include "mlsetup/verify.h"

typedef struct ml_verify_run {
	const ml_machine *m; /* borrowed */
	char python[4096];   /* the environment's interpreter */
	char manifest[256];  /* from <target>/mlsetup-report.json, "" unknown */
	ml_audit *audit;     /* of the environment's libraries; NULL with --python */
	ml_smoke_result driver;
	ml_framework_result framework;
	bool framework_ran;
	ml_verdict *verdict;
} ml_verify_run;

/* Verifies the environment at target (or, when python is non-NULL, the
 * interpreter python and its site-packages) on machine m. Fills *r
 * (release with ml_verify_run_release()) and returns 0 whatever the
 * verdict; ML_ENOENT / ML_EUSAGE when there is no environment or
 * interpreter to check, ML_ENOMEM. */
int ml_verify_run_do(ml_verify_run *r, const ml_machine *m, const char *target, const char *python,
                     bool require_gpu, const char *sysroot, const ml_framework_opts *fo,
                     ml_err *err);

/* The verify options verify, doctor and install share: --smoke-size N (the
 * n of the n x n matmuls) and --alloc-mib M (the allocation check). */
enum { ML_OPT_SMOKE_SIZE = 1500, ML_OPT_ALLOC_MIB };
#define ML_VERIFY_LONGOPTS                                                                         \
	{"smoke-size", required_argument, NULL, ML_OPT_SMOKE_SIZE},                                \
	{                                                                                          \
		"alloc-mib", required_argument, NULL, ML_OPT_ALLOC_MIB                             \
	}
#define ML_VERIFY_HELP                                                                             \
	"  --smoke-size N       n of the n x n matmuls of the torch smoke test (default 2048)\n"   \
	"  --alloc-mib M        size of the GPU allocation check in MiB (default 256)\n"

/* Records --smoke-size / --alloc-mib in fo. Returns 1 when opt was one of
 * them, 0 when not, -1 (err set, ML_EUSAGE) for a bad value. */
int ml_verify_option(ml_framework_opts *fo, int opt, const char *arg, ml_err *err);

/* The exit-code error of a verdict: 0, ML_EGPU (a GPU check failed) or
 * ML_EUNSUPPORTED (driver too old), with err describing it. */
int ml_verify_run_status(const ml_verify_run *r, ml_err *err);

/* Prints the verdict for people: every check with its status, and the
 * remedy of each failure. */
void ml_verify_run_print(const ml_verify_run *r);

/* Adds "audit", "driver_smoke", "framework" and "verdict" to obj. */
void ml_verify_run_json(const ml_verify_run *r, struct cJSON *obj);

/* Writes the compute capability of every GPU of m whose capability is
 * known into out (at most cap entries, SASS form, no variant), for the
 * audit's devices. Returns how many were written. */
size_t ml_cli_gpu_archs(ml_cuda_arch *out, size_t cap, const ml_machine *m);

void ml_verify_run_release(ml_verify_run *r);

#endif
