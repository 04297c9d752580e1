/*
 * verify_ui.h - what the commands that verify an environment share
 * (verify, doctor, install): the --smoke-size / --alloc-mib options and
 * showing a verification's verdict to people.
 */
#ifndef MLSETUP_CLI_VERIFY_UI_H
#define MLSETUP_CLI_VERIFY_UI_H

#include "cli.h"
#include "mlsetup/verify.h"

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

/* Prints a verification for people: the audit, every check with its
 * status, the remedy of each failure, each GPU's matmul speed per dtype
 * ("fp32 12.3 TFLOP/s · fp16 45.6 TFLOP/s · bf16 44.1 TFLOP/s"), and the
 * verdict. */
void ml_cli_print_verification(const ml_verification *v);

#endif
