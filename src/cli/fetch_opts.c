/*
 * fetch_opts.c - the fetch options install, download and bundle share
 * (--cache-dir, --jobs, --retries, --connect-timeout, --low-speed-time),
 * parsed in one place into the ml_fetch_opts their options nest.
 */
#include "cli.h"
#include "fetch_opts.h"

int ml_cli_fetch_option(ml_fetch_opts *fo, const char **cache_dir, int opt, const char *arg,
                        ml_err *err)
{
	long v = 0;
	int rc;
	switch (opt) {
	case ML_OPT_CACHE_DIR:
		*cache_dir = arg;
		return 1;
	case ML_OPT_JOBS:
		if ((rc = ml_cli_number(&v, arg, 1, ML_CLI_JOBS_MAX, "--jobs", err)) == 0)
			fo->jobs = (int)v;
		break;
	case ML_OPT_RETRIES:
		if ((rc = ml_cli_number(&v, arg, 0, ML_CLI_RETRIES_MAX, "--retries", err)) == 0)
			fo->retries = (int)v;
		break;
	case ML_OPT_CONNECT_TIMEOUT:
		rc = ml_cli_number(&fo->http.connect_timeout_s, arg, 1, ML_CLI_SECONDS_MAX,
		                   "--connect-timeout", err);
		break;
	case ML_OPT_LOW_SPEED_TIME:
		rc = ml_cli_number(&fo->http.low_speed_time_s, arg, 1, ML_CLI_SECONDS_MAX,
		                   "--low-speed-time", err);
		break;
	default:
		return 0;
	}
	return rc ? -1 : 1;
}
