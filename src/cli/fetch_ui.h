/*
 * fetch_ui.h - shows the fetch stage's progress reports (ml_fetch_progress)
 * on the front end's progress display; shared by download and install.
 */
#ifndef MLSETUP_CLI_FETCH_UI_H
#define MLSETUP_CLI_FETCH_UI_H

#include "mlsetup/fetch.h"
#include "mlsetup/out.h"

#define ML_FETCH_UI_LINES 256

typedef struct ml_fetch_ui {
	ml_progress *display;
	const char *title; /* "downloading" */
	ml_progress_line lines[ML_FETCH_UI_LINES];
} ml_fetch_ui;

/* ml_fetch_opts.on_progress callback; data is an ml_fetch_ui whose display
 * was made with ml_progress_new(). Notes become "warning: ..." lines. */
void ml_fetch_ui_progress(const ml_fetch_progress *p, void *data);

#endif
