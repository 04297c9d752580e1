/*
 * fetch_opts.h - the fetch options install, download and bundle share
 * (--cache-dir, --jobs, --retries, --connect-timeout, --low-speed-time):
 * one option table, one parser (fetch_opts.c) and one help text, filling
 * the ml_fetch_opts each command's options nest. The defaults the help
 * names are fetch.h's (ML_FETCH_*), the ones every request uses. Include
 * ML_CLI_FETCH_LONGOPTS in a command's option table and pass each option
 * to ml_cli_fetch_option(), as with index_opts.h.
 */
#ifndef MLSETUP_CLI_FETCH_OPTS_H
#define MLSETUP_CLI_FETCH_OPTS_H

#include "mlsetup/fetch.h"

enum {
	ML_OPT_JOBS = 'j',
	ML_OPT_RETRIES = 1100,
	ML_OPT_CONNECT_TIMEOUT,
	ML_OPT_LOW_SPEED_TIME,
	ML_OPT_CACHE_DIR,
};

/* The values each option takes. */
#define ML_CLI_JOBS_MAX    256
#define ML_CLI_RETRIES_MAX 100
#define ML_CLI_SECONDS_MAX 3600

#define ML_CLI_FETCH_LONGOPTS                                                                      \
	{"jobs", required_argument, NULL, ML_OPT_JOBS},                                            \
	        {"retries", required_argument, NULL, ML_OPT_RETRIES},                              \
	        {"connect-timeout", required_argument, NULL, ML_OPT_CONNECT_TIMEOUT},              \
	        {"low-speed-time", required_argument, NULL, ML_OPT_LOW_SPEED_TIME},                \
	{                                                                                          \
		"cache-dir", required_argument, NULL, ML_OPT_CACHE_DIR                             \
	}

#define ML_CLI_STR_(x) #x
#define ML_CLI_STR(x)  ML_CLI_STR_(x)

/* clang-format off */
#define ML_CLI_FETCH_HELP                                                                          \
	"  --cache-dir DIR         the shared download cache (default: MLSETUP_CACHE_DIR,\n"        \
	"                          XDG_CACHE_HOME/mlsetup, ~/.cache/mlsetup)\n"                     \
	"  -j, --jobs N            transfers at once (default " ML_CLI_STR(ML_FETCH_JOBS) ");\n"    \
	"                          install also unpacks N wheels at once (default: one\n"           \
	"                          per CPU)\n"                                                      \
	"  --retries N             extra requests per source after a retryable failure\n"          \
	"                          (default " ML_CLI_STR(ML_FETCH_RETRIES) ")\n"                    \
	"  --connect-timeout S     seconds to wait for a connection, for every request\n"         \
	"                          (default " ML_CLI_STR(ML_FETCH_CONNECT_TIMEOUT_S) ")\n"          \
	"  --low-speed-time S      abandon a transfer below 1 byte/s for S seconds\n"              \
	"                          (default " ML_CLI_STR(ML_FETCH_LOW_SPEED_TIME_S) ")\n"
/* clang-format on */

/* Records a fetch option into *fo (jobs 1..ML_CLI_JOBS_MAX, retries
 * 0..ML_CLI_RETRIES_MAX, seconds 1..ML_CLI_SECONDS_MAX) or, for
 * --cache-dir, *cache_dir (borrowing arg). Returns 1 when opt was one, 0
 * when it was not, -1 (err set, ML_EUSAGE) for a bad value. */
int ml_cli_fetch_option(ml_fetch_opts *fo, const char **cache_dir, int opt, const char *arg,
                        ml_err *err);

#endif
