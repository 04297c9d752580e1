/*
 * live.h - what core's output files (out.c, progress.c, live.c) share
 * about the live status line (out.h, "live status"): everything printed on
 * the terminal goes through ml_out_lock() / ml_out_unlock(), so that the
 * live line is erased before other text and drawn again below it, and so
 * that the thread that keeps its clock moving never writes in between.
 * Not public API: src/cli uses out.h only.
 */
#ifndef MLSETUP_CORE_LIVE_H
#define MLSETUP_CORE_LIVE_H

#include <stdbool.h>

/* Takes the output lock and erases the live line, if it is drawn. */
void ml_out_lock(void);

/* Draws the live line again (no more often than 10 times a second; the
 * live thread catches up otherwise) and releases the lock. */
void ml_out_unlock(void);

/* A terminal progress display appears (on true) or goes (on false): while
 * any is drawn the live line is erased and not drawn. Counts nesting. */
void ml_live_suspend(bool on);

#endif
