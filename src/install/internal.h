/*
 * internal.h - what only the install pipeline's source files share: the
 * state of one install in progress, event helpers and stage timing.
 * Nothing here is public API; names start with mli_.
 */
#ifndef MLSETUP_INSTALL_INTERNAL_H
#define MLSETUP_INSTALL_INTERNAL_H

#include "mlsetup/install.h"

/* Sends events to a pipeline's on_event callback, stamped with the stage
 * the pipeline is in. */
typedef struct mli_events {
	ml_install_event_fn fn; /* may be NULL */
	void *data;
	ml_install_stage stage; /* the stage now running */
	double t0;              /* when its span began (monotonic seconds) */
} mli_events;

/* One install in progress. */
typedef struct mli_run {
	const ml_install_opts *o;
	ml_install_result *res;
	mli_events ev;
	ml_envlock *lock; /* the lock on the target (o->lock, or own_lock) */
	ml_envlock *own_lock;
	ml_cache *cache;
	ml_index_config *cfg;
	ml_env_stage *stage;
	ml_download *items; /* plan->n_files, the wheels as fetched */
	size_t n_wheels_done;
	char interpreter[4096]; /* the path the environment's python runs */
} mli_run;

/* Monotonic time in seconds. */
double mli_now(void);

/* Sends ev (kind and payload set by the caller) with ev->stage filled. */
void mli_emit(mli_events *e, ml_install_event *ev);

/* Sends a WARNING, DETAIL or STEP event with printf-style text. */
void mli_say(mli_events *e, ml_install_event_kind kind, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Begins a span of stage st (STAGE_BEGIN). */
void mli_stage_begin(mli_events *e, ml_install_stage st);

/* Ends the span (STAGE_END with its seconds and rc), adds its seconds to
 * *total when non-NULL, and returns rc. */
int mli_stage_end(mli_events *e, double *total, int rc);

/* Runs call as a span of stage st of run r: rc = the call's result. */
#define MLI_STAGE(r, st, call)                                                                     \
	(mli_stage_begin(&(r)->ev, (st)), mli_stage_end(&(r)->ev, &(r)->res->seconds[(st)], (call)))

/* The fetch options of an install (jobs, retries, timeouts, the index
 * configuration's trusted hosts and cert, offline), with progress
 * forwarded as FETCH events. */
void mli_fetch_opts(ml_fetch_opts *fo, mli_run *r);

/* The forwarding callback for ml_fetch_opts.on_progress; data is an
 * mli_events. */
void mli_forward_fetch(const ml_fetch_progress *p, void *data);

/* interpreter.c: the environment's interpreter, probed into r->res->python:
 * --python PATH as is, or the pinned archive fetched, verified and
 * unpacked once into the shared interpreter directory. */
int mli_interpreter(mli_run *r, ml_err *err);

/* wheels.c: every wheel not yet unpacked in the cache, fetched and
 * verified into r->items. */
int mli_fetch_wheels(mli_run *r, ml_err *err);

/* wheels.c: the audit of the requested packages' binary wheels for the
 * machine's GPUs, before anything is extracted. */
int mli_audit_before_build(mli_run *r, ml_err *err);

/* wheels.c: the venv in a staging directory, every wheel installed, the
 * optional bytecode, and the atomic swap into place. */
int mli_build_env(mli_run *r, ml_err *err);

#endif
