/*
 * export.c - `mlsetup export`: an existing environment's lock file,
 * <env>/pylock.toml, as it is (PEP 751) or as a hashed requirements file,
 * so the environment can be rebuilt elsewhere with mlsetup or pip.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlsetup/report.h"

int ml_install_export(char **out, const ml_install_export_opts *o, ml_err *err)
{
	const char *target = o->target ? o->target : ".venv";
	const char *format = o->format ? o->format : "pylock";
	if (strcmp(format, "pylock") != 0 && strcmp(format, "requirements") != 0) {
		ml_err_set(err, ML_EUSAGE, "unknown export format '%s'", format);
		ml_err_hint(err, "use --format pylock or --format requirements");
		return ML_EUSAGE;
	}
	char path[4200];
	if (ml_pathf(path, sizeof(path), "%s/%s", target, ML_PYLOCK_FILE))
		return ml_err_set(err, ML_EFAIL, "target path too long: '%s'", target);
	char *text = NULL;
	size_t len = 0;
	int rc = ml_os_read_file(&text, &len, NULL, path, 64u << 20, err);
	if (rc == ML_ENOENT) {
		ml_err_set(err, ML_ENOENT, "'%s' has no %s", target, ML_PYLOCK_FILE);
		ml_err_hint(err,
		            "is it an environment mlsetup built? One built before mlsetup wrote "
		            "lock files gets one from 'mlsetup install --reinstall'");
	}
	if (rc)
		return rc;
	ml_pylock *pl = NULL;
	char *result = NULL;
	rc = ml_pylock_parse(&pl, path, target, text, len, err);
	if (!rc && !strcmp(format, "pylock")) {
		result = text; /* the lock as written, byte for byte */
		text = NULL;
	} else if (!rc) {
		rc = ml_pylock_to_requirements(&result, pl, err);
	}
	if (!rc && o->output) {
		int e = ml_fs_write_atomic(o->output, result, strlen(result), 0644);
		if (e)
			rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", o->output,
			                strerror(-e));
	}
	ml_pylock_free(pl);
	free(text);
	if (rc) {
		free(result);
		return rc;
	}
	*out = result;
	return 0;
}
