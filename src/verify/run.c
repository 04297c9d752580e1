/*
 * run.c - every check of an environment, and the verdict: the static audit
 * of its CUDA libraries, the native driver-level smoke test (a SAXPY
 * kernel on every GPU), the framework smoke test with the environment's
 * interpreter, and the diagnosis that maps each failure to a cause and a
 * remedy. verify, doctor and install share it.
 *
 * The audit reads every library of the environment (about 1.2 s for the
 * torch 2.6.0 stack here) while the framework smoke test mostly waits for
 * `import torch` in another process (about 2.5 s): the audit runs on a
 * thread of its own meanwhile, so a CPU-only verify costs little more than
 * importing torch. Every step is still reported from the calling thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "internal.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Tells o->on_step that the step `name` begins, or that it ended with st
 * after secs seconds. */
static void report_step(const ml_verify_env_opts *o, const char *name, bool done,
                        ml_check_status st, double secs)
{
	if (!o->on_step)
		return;
	ml_verify_step s = {name, done, st, done ? secs : 0};
	o->on_step(&s, o->step_data);
}

/* The static audit of one environment, run on a thread of its own. */
struct audit_job {
	const char *target;
	ml_cuda_arch devs[64];
	ml_audit_opts ao;
	ml_audit *audit; /* out */
	int rc;          /* out: ml_audit_paths() */
	ml_err err;      /* out */
	double seconds;  /* out: how long it ran */
};

static void *audit_run(void *arg)
{
	struct audit_job *j = arg;
	double t0 = now_s();
	const char *paths[] = {j->target};
	j->rc = ml_audit_paths(&j->audit, paths, 1, &j->ao, &j->err);
	j->seconds = now_s() - t0;
	return NULL;
}

/* The smoke tests and the diagnosis; fills v. */
static int smoke_and_diagnose(ml_verification *v, const ml_machine *m, const ml_verify_env_opts *o,
                              ml_err *err)
{
	ml_err e2 = ML_ERR_INIT;
	ml_smoke_opts so = ML_SMOKE_OPTS_INIT;
	so.on_step = o->on_step;
	so.step_data = o->step_data;
	if (ml_smoke_driver(&v->driver, &so, &e2) == ML_ENOMEM)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_framework_opts fo = o->framework;
	fo.on_step = o->on_step;
	fo.step_data = o->step_data;
	int rc = ml_smoke_framework(&v->framework, v->python, &fo, err);
	if (rc == ML_ENOENT || rc == ML_EUSAGE || rc == ML_ENOMEM)
		return rc;
	v->framework_ran = rc == 0;
	ml_diagnose_opts d = ML_DIAGNOSE_OPTS_INIT;
	d.machine = m;
	d.driver = &v->driver;
	d.framework = v->framework_ran ? &v->framework : NULL;
	d.manifest = o->manifest && o->manifest[0] ? o->manifest : NULL;
	d.root = o->root;
	d.require_gpu = o->require_gpu;
	return ml_diagnose(&v->verdict, &d, err);
}

/* Fills v (zeroed) for o; returns 0 or the first failure. */
static int verify_into(ml_verification *v, const ml_machine *m, const ml_verify_env_opts *o,
                       ml_err *err)
{
	if (o->python) {
		ml_strlcpy(v->python, o->python, sizeof(v->python));
		return smoke_and_diagnose(v, m, o, err);
	}
	const char *target = o->target ? o->target : ".venv";
	struct stat st;
	if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode)) {
		ml_err_set(err, ML_ENOENT, "no environment at '%s'", target);
		ml_err_hint(err, "give --target DIR of an environment, or --python PATH");
		return ML_ENOENT;
	}
	if (ml_pathf(v->python, sizeof(v->python), "%s/" ML_ENV_PYTHON_NATIVE, target))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", target);

	/* Static audit (which GPUs could the environment's CUDA code run on?)
	 * on its own thread, while the smoke tests run on this one. */
	struct audit_job *j = calloc(1, sizeof(*j));
	if (!j)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	j->target = target;
	j->ao = (ml_audit_opts)ML_AUDIT_OPTS_INIT;
	ml_audit_opts_machine(&j->ao, j->devs, 64, m);
	j->err = (ml_err)ML_ERR_INIT;
	const char *step = "auditing the CUDA libraries";
	report_step(o, step, false, ML_CHECK_PASS, 0);
	pthread_t th;
	bool threaded = pthread_create(&th, NULL, audit_run, j) == 0;
	if (!threaded)
		audit_run(j); /* no thread to be had: one after the other */
	int rc = smoke_and_diagnose(v, m, o, err);
	if (threaded)
		pthread_join(th, NULL);
	v->audit = j->audit;
	ml_err aerr = ML_ERR_INIT;
	int status = j->rc ? j->rc : ml_audit_status(v->audit, &aerr);
	report_step(o, step, true,
	            !status                      ? ML_CHECK_PASS
	            : status == ML_EGPU || j->rc ? ML_CHECK_FAIL
	                                         : ML_CHECK_WARN,
	            j->seconds);
	if (j->rc && !rc) { /* the audit's own failure comes first */
		*err = j->err;
		rc = j->rc;
	}
	free(j);
	return rc;
}

int ml_verify_env(ml_verification **out, const ml_machine *m, const ml_verify_env_opts *o,
                  ml_err *err)
{
	ml_verification *v = calloc(1, sizeof(*v));
	if (!v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = verify_into(v, m, o, err);
	if (rc) {
		ml_verification_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

/* The remedy of the first failed check, machine-wide checks first. */
static const char *first_remedy(const ml_verdict *vd)
{
	for (size_t i = 0; i < vd->n_checks; i++)
		if (vd->checks[i].status == ML_CHECK_FAIL && vd->checks[i].remedy[0])
			return vd->checks[i].remedy;
	for (size_t g = 0; g < vd->n_gpus; g++)
		for (size_t i = 0; i < vd->gpus[g].n_checks; i++) {
			const ml_check *c = &vd->gpus[g].checks[i];
			if (c->status == ML_CHECK_FAIL && c->remedy[0])
				return c->remedy;
		}
	return NULL;
}

int ml_verification_status(const ml_verification *v, ml_err *err)
{
	int code = ml_verdict_exit_code(v->verdict);
	if (code == ML_EXIT_OK)
		return 0;
	int rc = code == ML_EXIT_UNSUPPORTED ? ML_EUNSUPPORTED : ML_EGPU;
	ml_err_set(err, rc, "verification failed: %s", v->verdict->summary);
	const char *remedy = first_remedy(v->verdict);
	if (remedy)
		ml_err_hint(err, "%s", remedy);
	return rc;
}

int ml_verification_add_json(cJSON *obj, const ml_verification *v)
{
	cJSON *parts[4] = {NULL, NULL, NULL, NULL};
	const char *keys[4] = {"audit", "driver_smoke", "framework", "verdict"};
	bool want[4] = {v->audit != NULL, true, v->framework_ran, v->verdict != NULL};
	if (want[0])
		parts[0] = ml_audit_to_json(v->audit);
	parts[1] = ml_smoke_result_to_json(&v->driver);
	if (want[2])
		parts[2] = ml_framework_result_to_json(&v->framework);
	if (want[3])
		parts[3] = ml_verdict_to_json(v->verdict);
	int rc = 0;
	for (size_t i = 0; i < 4; i++) {
		if (!want[i])
			continue;
		if (!parts[i] || !cJSON_AddItemToObject(obj, keys[i], parts[i])) {
			cJSON_Delete(parts[i]);
			rc = ML_ENOMEM;
		}
	}
	return rc;
}

void ml_verification_free(ml_verification *v)
{
	if (!v)
		return;
	ml_audit_free(v->audit);
	ml_smoke_result_release(&v->driver);
	if (v->framework_ran)
		ml_framework_result_release(&v->framework);
	ml_verdict_free(v->verdict);
	free(v);
}
