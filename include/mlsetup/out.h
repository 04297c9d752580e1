/*
 * out.h - the front end's output: human text on stdout, diagnostics on
 * stderr, JSON documents, colour and verbosity. Only src/cli/ and
 * src/core/out.c use this; stages never print (DESIGN.md).
 */
#ifndef MLSETUP_OUT_H
#define MLSETUP_OUT_H

#include <stdbool.h>
#include <stdint.h>

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

/* Warnings, errors and hints on a terminal are wrapped at word boundaries
 * to its width (ml_wrap, ml_term_width), continuation lines indented under
 * the text after "warning: " / "error: " / "hint: "; elsewhere (a file, a
 * pipe) each stays one line, so logs can be searched. */

/* The width of the terminal, in columns, for output on fd: $COLUMNS when
 * it is a number >= 20, else the terminal's own (TIOCGWINSZ), else 80. */
int ml_term_width(int fd);

/* Wraps text at word boundaries (spaces) into lines of at most width
 * columns: the first line starts `used` columns in (after a prefix such
 * as "warning: " the caller prints), every later line with `indent`
 * spaces. A newline in text starts a new, indented line; runs of spaces
 * where a line breaks are dropped; a word longer than a whole line is cut.
 * Columns are counted in UTF-8 code points. Writes the result,
 * NUL-terminated and cut to fit, into dst (sz bytes; none when sz is 0) and
 * returns the length of the whole result in bytes, as snprintf does. */
size_t ml_wrap(char *dst, size_t sz, const char *text, int width, int used, int indent);

/* Writes the JSON document to stdout (pretty-printed, newline-terminated).
 * Returns 0 or ML_ENOMEM / ML_EIO. Does not take ownership of doc. */
int ml_out_json(const struct cJSON *doc);

/* ANSI escape for a style when colour is on, else "". Styles: "bold",
 * "dim", "red", "green", "yellow", "reset". Static strings. */
const char *ml_c(const char *style);

/* Flushes and closes stdout; returns 0, or ML_EIO when a write failed
 * (full disk, closed pipe) so the command fails as git does. */
int ml_out_finish(void);

/* --- progress (src/core/progress.c) --------------------------------------- */

/* One line of a progress display: a transfer, or any task with a size. */
typedef struct ml_progress_line {
	const char *label; /* shown as given, cut to fit the terminal */
	uint64_t done;     /* bytes so far */
	int64_t total;     /* bytes, -1 unknown */
	int attempt;       /* 1 for the first try; shown when > 1 */
} ml_progress_line;

/* Everything one redraw shows. Pointers are borrowed for the call only. */
typedef struct ml_progress_state {
	const char *title; /* "downloading" */
	size_t items_done, items_total;
	uint64_t bytes_done, bytes_total; /* bytes */
	double rate;                      /* bytes per second, 0 unknown */
	const ml_progress_line *lines;    /* active tasks */
	size_t n_lines;
} ml_progress_state;

/* A progress display on stderr. On a terminal: one line per active task
 * (at most 8, then "... and N more") and a total bar with bytes, rate and
 * ETA, redrawn in place with ANSI cursor movement at most 10 times a
 * second and erased by ml_progress_finish(). Not a terminal: one plain
 * line every 5 seconds. Silent when `enabled` is false (--no-progress) or
 * with -q or --json. */
typedef struct ml_progress ml_progress;

/* Creates a display (never NULL: a silent one when out of memory). Free
 * with ml_progress_finish(). */
ml_progress *ml_progress_new(bool enabled);

/* Shows s, unless the last redraw was less than 0.1 s ago (terminal) or
 * the last line less than 5 s ago (not a terminal). */
void ml_progress_update(ml_progress *p, const ml_progress_state *s);

/* Prints one line of text (an event: a retry, a repaired cache entry) on
 * stderr above the display, which is redrawn below it at the next update.
 * Silent with -q. */
void ml_progress_note(ml_progress *p, const char *text);

/* Erases the display (terminal) and frees p. Accepts NULL. */
void ml_progress_finish(ml_progress *p);

#endif /* MLSETUP_OUT_H */
