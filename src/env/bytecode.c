/*
 * bytecode.c - `install --compile-bytecode`: .pyc files for everything in
 * an environment's site-packages, made by the environment's own
 * interpreter while the environment is still staged, naming the paths it
 * will have once in place.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mlsetup/env.h"

#define COMPILE_TIMEOUT_S (30 * 60)

int ml_env_compile_bytecode(const ml_env_layout *env, ml_err *err)
{
	char py[ML_PATH_MAX + 16], site[ML_PATH_MAX + 80];
	if (ml_pathf(py, sizeof(py), "%s/%s", env->root, env->python) ||
	    ml_pathf(site, sizeof(site), "%s/%s", env->root, env->site_packages))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", env->root);
	/* -s/-p record the final path in the .pyc files, not the staging one. */
	const char *argv[] = {py,        "-m", "compileall",    "-q", "-j", "0", "-s",
	                      env->root, "-p", env->final_root, site, NULL};
	char *out = NULL;
	int status = 0;
	int rc = ml_os_run_output(&out, &status, argv, 64 * 1024, COMPILE_TIMEOUT_S, err);
	if (!rc && status != 0)
		rc = ml_err_set(err, ML_EFAIL, "compileall failed (status %d): %.400s", status,
		                out ? out : "");
	free(out);
	return rc;
}
