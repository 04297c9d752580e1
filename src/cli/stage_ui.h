/*
 * stage_ui.h - shows a pipeline's progress while it runs, for install,
 * verify and doctor: the machine and the manifest chosen first (stdout);
 * then, on a terminal, a live line naming the running stage and step with
 * its seconds, the download bars, wheels unpacked and linked N of M, and
 * each verify step, finished steps staying as lines; off a terminal one
 * plain line per stage start and end on stderr; nothing with -q, --json or
 * --no-progress. core/live.c and core/progress.c draw.
 */
#ifndef MLSETUP_CLI_STAGE_UI_H
#define MLSETUP_CLI_STAGE_UI_H

#include "fetch_ui.h"
#include "mlsetup/install.h"
#include "mlsetup/out.h"

typedef struct ml_stage_ui {
	ml_live_mode mode;
	ml_fetch_ui fetch;      /* the download bars */
	const char *stage;      /* the stage running now, NULL between stages */
	double t0;              /* when it began (monotonic seconds) */
	bool wheels;            /* the "wheels unpacked and linked" task runs */
	size_t n_done, n_total; /* its count */
} ml_stage_ui;

/* Chooses the display (ml_live_start): enabled is false for --no-progress. */
void ml_stage_ui_start(ml_stage_ui *ui, bool enabled);

/* A stage ("detect", "fetch", "verify", ...; static string) begins or
 * ends: "mlsetup: fetch: started" / "mlsetup: fetch: done in 3.2 s" (or
 * "failed after") off a terminal, the live line's outer task on one. */
void ml_stage_ui_begin(ml_stage_ui *ui, const char *stage);
void ml_stage_ui_end(ml_stage_ui *ui, int rc);

/* Shows one event of the install pipeline (its on_event; data is the
 * ml_stage_ui): stages, machine and manifest, warnings (-v: details),
 * downloads, wheels, checks and verify steps. */
void ml_stage_ui_event(const ml_install_event *ev, void *data);

/* Shows one verify step (ml_verify_env_opts.on_step; data is the
 * ml_stage_ui): the live line while it runs, a line when it ended. */
void ml_stage_ui_step(const ml_verify_step *step, void *data);

/* Erases what is drawn and stops the live line. */
void ml_stage_ui_finish(ml_stage_ui *ui);

/* "machine   linux-x86_64, glibc 2.36, driver 550.54.14 (CUDA 12.4);
 * NVIDIA GeForce RTX 3090 (sm_86)", on stdout. */
void ml_cli_print_machine(const ml_machine *m);

/* "manifest  NAME - SUMMARY (REASON)", on stdout. */
void ml_cli_print_manifest(const ml_plan *p, const char *reason);

#endif
