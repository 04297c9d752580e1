/*
 * out_opts.c - the output settings main() applies once (ml_out_opts:
 * --json, -q / -v, --color) and the colour escapes they switch on. Every
 * file that writes for a person reads them here: out.c (text, warnings,
 * errors), live.c (the live status line) and progress.c (the download
 * bars); this file uses none of them, so it sits below all three.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
