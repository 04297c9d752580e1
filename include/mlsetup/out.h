/*
 * out.h - the front end's output: human text on stdout, diagnostics on
 * stderr, JSON documents, colour and verbosity. Only src/cli/ and
 * src/core/out.c use this; stages never print (DESIGN.md).
 */
#ifndef MLSETUP_OUT_H
#define MLSETUP_OUT_H

#include <stdbool.h>

#include "mlsetup/core.h"

struct cJSON;

typedef enum ml_color_mode { ML_COLOR_AUTO, ML_COLOR_ALWAYS, ML_COLOR_NEVER } ml_color_mode;

/* Global output settings, set once by main() from --json, -q, -v, --color. */
typedef struct ml_out_opts {
	bool json;     /* stdout carries only the JSON document */
	int verbosity; /* -1 quiet, 0 normal, 1+ verbose */
	ml_color_mode color;
} ml_out_opts;

/* Applies opts. Colour "auto" means: on when stdout is a terminal, NO_COLOR
 * is unset and TERM is not "dumb". */
void ml_out_setup(const ml_out_opts *opts);
const ml_out_opts *ml_out_get(void);

/* Human text on stdout; silent with --json or -q. */
void ml_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Extra detail on stderr, only with -v. */
void ml_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "warning: ..." on stderr; silent with -q. */
void ml_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "error: <msg>" and, when set, "hint: <hint>" on stderr. Always shown. */
void ml_report_error(const ml_err *err);

/* Writes the JSON document to stdout (pretty-printed, newline-terminated).
 * Returns 0 or ML_ENOMEM / ML_EIO. Does not take ownership of doc. */
int ml_out_json(const struct cJSON *doc);

/* ANSI escape for a style when colour is on, else "". Styles: "bold",
 * "dim", "red", "green", "yellow", "reset". Static strings. */
const char *ml_c(const char *style);

/* Flushes and closes stdout; returns 0, or ML_EIO when a write failed
 * (full disk, closed pipe) so the command fails as git does. */
int ml_out_finish(void);

#endif /* MLSETUP_OUT_H */
