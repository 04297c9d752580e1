/*
 * out.c - decides between human text, JSON and silence for everything the
 * front end shows; stages hand it data and never print themselves.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mlsetup/out.h"

static ml_out_opts g_opts = {false, 0, ML_COLOR_AUTO};
static bool g_color;

void ml_out_setup(const ml_out_opts *opts)
{
	g_opts = *opts;
	if (opts->color == ML_COLOR_ALWAYS) {
		g_color = true;
	} else if (opts->color == ML_COLOR_NEVER) {
		g_color = false;
	} else {
		const char *term = getenv("TERM");
		const char *no_color = getenv("NO_COLOR");
		g_color = isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
		          !(term && strcmp(term, "dumb") == 0);
	}
}

const ml_out_opts *ml_out_get(void)
{
	return &g_opts;
}

void ml_say(const char *fmt, ...)
{
	if (g_opts.json || g_opts.verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

void ml_verbose(const char *fmt, ...)
{
	if (g_opts.verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("verbose: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ml_warn(const char *fmt, ...)
{
	if (g_opts.verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ml_report_error(const ml_err *err)
{
	fprintf(stderr, "error: %s\n", err->msg[0] ? err->msg : ml_strerror(err->code));
	if (err->hint[0])
		fprintf(stderr, "hint: %s\n", err->hint);
}

int ml_out_json(const struct cJSON *doc)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return ML_ENOMEM;
	int rc = (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF) ? ML_EIO : 0;
	cJSON_free(text);
	return rc;
}

const char *ml_c(const char *style)
{
	static const struct {
		const char *name, *code;
	} styles[] = {
	        {"bold", "\033[1m"},   {"dim", "\033[2m"},     {"red", "\033[31m"},
	        {"green", "\033[32m"}, {"yellow", "\033[33m"}, {"reset", "\033[0m"},
	};
	if (!g_color)
		return "";
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcmp(styles[i].name, style) == 0)
			return styles[i].code;
	return "";
}

int ml_out_finish(void)
{
	int rc = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = ML_EIO;
	if (fclose(stdout) != 0 && errno != EBADF)
		rc = ML_EIO;
	return rc;
}
