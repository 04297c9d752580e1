/*
 * out.h - the front end's output: human text on stdout, diagnostics on
 * stderr, JSON documents, colour and verbosity. Only src/cli/ and core's
 * output files (out_opts.c, out.c, live.c, progress.c) use this; stages
 * never print (docs/ARCHITECTURE.md).
 */
#ifndef MLSETUP_OUT_H
#define MLSETUP_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "mlsetup/core.h"

struct cJSON;

/* --- settings (src/core/out_opts.c) ---------------------------------------- */

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

/* ANSI escape for a style when colour is on, else "". Styles: "bold",
 * "dim", "red", "green", "yellow", "reset". Static strings. */
const char *ml_c(const char *style);

/* --- text, diagnostics and JSON (src/core/out.c) --------------------------- */

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

/* --- live status (src/core/live.c) ----------------------------------------- */

/* What runs now, for a person watching: on a terminal one "live" line at
 * the bottom of stderr, "fetch: SAXPY on GPU 0... 2.3 s", redrawn in place
 * at most 10 times a second (a thread keeps the seconds moving while the
 * work blocks) and erased when the work ends; permanent lines (finished
 * steps, and everything ml_say, ml_warn, ml_verbose and ml_report_error
 * print) appear above it. Tasks nest: the line shows the outermost task's
 * text and the innermost's, and the innermost's seconds. While a terminal
 * progress display (ml_progress) is drawn, the live line steps aside.
 * Functions are thread-safe; the stages never call them (they report
 * through callbacks, the front end calls these). */
typedef enum ml_live_mode {
	ML_LIVE_SILENT, /* --no-progress, -q or --json: nothing */
	ML_LIVE_TTY,    /* stderr is a terminal whose TERM is not "dumb" */
	ML_LIVE_PLAIN,  /* anything else: the front end prints plain lines */
} ml_live_mode;

/* Chooses and returns the mode for this command (after ml_out_setup):
 * silent when enabled is false (--no-progress), with -q or with --json. */
ml_live_mode ml_live_start(bool enabled);

/* The mode chosen by ml_live_start(); ML_LIVE_SILENT before it. */
ml_live_mode ml_live_mode_now(void);

/* Begins a task nested in the running ones (at most 4 deep; deeper ones
 * are counted but not shown) with text (copied), its seconds counted from
 * now. Only ML_LIVE_TTY draws anything. */
void ml_live_begin(const char *text);

/* Replaces the innermost task's text, keeping its clock. */
void ml_live_text(const char *text);

/* Ends the innermost task and returns its seconds (0 when none runs). */
double ml_live_end(void);

/* A permanent line on stderr (printf-style, a newline added): above the
 * live line on a terminal; as is in ML_LIVE_PLAIN; nothing when silent. */
void ml_live_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Ends every task, erases the live line and stops its thread. Safe to call
 * more than once, and without ml_live_start(). */
void ml_live_stop(void);

#endif /* MLSETUP_OUT_H */
