/*
 * err.c - the ml_err carrier and the one table from error code to process
 * exit code (README.md, "Exit codes": 0 ok, 1 failed, 2 usage, 3 integrity,
 * 4 network, 5 GPU check failed, 6 unsupported system).
 */
#include <stdio.h>
#include <string.h>

#include "mlsetup/core.h"

static const struct {
	int code;
	int exit_code;
	const char *name;
} err_table[] = {
        {ML_OK, ML_EXIT_OK, "ok"},
        {ML_EFAIL, ML_EXIT_FAILED, "failed"},
        {ML_EUSAGE, ML_EXIT_USAGE, "usage"},
        {ML_EINTEGRITY, ML_EXIT_INTEGRITY, "integrity"},
        {ML_ENET, ML_EXIT_NETWORK, "network"},
        {ML_EGPU, ML_EXIT_GPU, "gpu check failed"},
        {ML_EUNSUPPORTED, ML_EXIT_UNSUPPORTED, "unsupported system"},
        {ML_ENOENT, ML_EXIT_FAILED, "not found"},
        {ML_ENOMEM, ML_EXIT_FAILED, "out of memory"},
        {ML_EIO, ML_EXIT_FAILED, "i/o error"},
        {ML_EPARSE, ML_EXIT_FAILED, "malformed input"},
};

int ml_exit_code(int code)
{
	for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == code)
			return err_table[i].exit_code;
	return ML_EXIT_FAILED;
}

const char *ml_strerror(int code)
{
	for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == code)
			return err_table[i].name;
	return "unknown error";
}

int ml_err_set(ml_err *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	err->hint[0] = '\0';
	return code;
}

void ml_err_hint(ml_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

void ml_err_clear(ml_err *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}
