/*
 * fetch_ui.h - shows the fetch stage's progress on the front end's
 * progress display, from the pipelines' FETCH events; shared by download
 * and install.
 */
#ifndef MLSETUP_CLI_FETCH_UI_H
#define MLSETUP_CLI_FETCH_UI_H

#include "mlsetup/install.h"
#include "mlsetup/out.h"

#define ML_FETCH_UI_LINES 256

typedef struct ml_fetch_ui {
	bool enabled;         /* false: --no-progress */
	ml_progress *display; /* made at the first report, NULL before */
	const char *title;    /* "downloading" */
	ml_progress_line lines[ML_FETCH_UI_LINES];
} ml_fetch_ui;

/* Shows one event of a pipeline: FETCH reports of the fetch and
 * interpreter stages redraw the display (notes become "warning: ..." lines
 * above it; the interpreter's title is "downloading the interpreter"); the
 * end of either stage erases it; FETCH_FAILED erases it and prints the
 * file's error. Other events are not the display's. */
void ml_fetch_ui_event(ml_fetch_ui *ui, const ml_install_event *ev);

/* Erases the display, if any. */
void ml_fetch_ui_finish(ml_fetch_ui *ui);

#endif
