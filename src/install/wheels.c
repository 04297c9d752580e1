/*
 * wheels.c - the plan's wheels, from the index to the environment: fetch
 * every wheel the build will read (none that is unpacked in the cache
 * already), largest first; as each download is verified, audit it when it
 * is one of the requested packages' binary wheels (for this machine's
 * GPUs) and unpack it into the cache while the others still download; a
 * wheel a GPU cannot run stops all unpacking before it is extracted.
 * Then build the venv in a staging directory beside the target, install
 * every wheel into it from the unpacked cache and swap it into place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- fetching, and unpacking what has arrived -------------------------------------- */

/* Whether the audit before building reads plan file a: a requested
 * binary wheel (pure-Python wheels carry no CUDA code). */
static bool audit_subject(const ml_artifact *a)
{
	return a->requested && a->filename && !strstr(a->filename, "-none-any.whl");
}

/* What the fetch's per-file callback and the unpack queue's check share. */
typedef struct early_ctx {
	mli_run *r;
	ml_unpack_queue *q;
	const size_t *where; /* fetch item -> plan file */
	size_t k;            /* fetch items from the plan; item k: the interpreter */
	ml_cuda_arch devs[64];
	ml_audit_opts ao; /* the machine's GPUs and driver */
} early_ctx;

/* The unpack queue's check, on a worker thread: a wheel the audit reads
 * is audited before it is unpacked, and one a GPU here cannot run stops
 * all unpacking (unless --force), so it is never extracted. An audit that
 * could not be made stops the queue too; it is made again, and reported,
 * after the fetch (mli_audit_before_build). */
static int audit_early(void *ctx, size_t index, const char *path)
{
	early_ctx *x = ctx;
	if (!x->ao.n_devices || !audit_subject(&x->r->res->plan->files[index]))
		return 0;
	ml_audit *a = NULL;
	ml_err e = ML_ERR_INIT;
	if (ml_audit_paths(&a, &path, 1, &x->ao, &e) != 0)
		return ML_EFAIL;
	x->r->audits[index] = a;
	return ml_audit_status(a, &e) == ML_EGPU && !x->r->o->force ? ML_EGPU : 0;
}

/* ml_fetch_opts.on_file: a verified wheel is queued for unpacking at once. */
static void on_fetched(size_t j, const ml_download *d, void *data)
{
	early_ctx *x = data;
	if (j >= x->k) { /* the pinned interpreter: unpacked meanwhile too */
		mli_prep_start(x->r, d->path);
		return;
	}
	if (!x->q)
		return;
	size_t i = x->where[j];
	const ml_artifact *a = &x->r->res->plan->files[i];
	/* on_file reports a file ml_fetch_all has just hashed: downloaded
	 * (every byte it wrote), or found in the cache (ml_cache_blob_get) */
	ml_wheel_job job = {d->path, d->sha256, a->filename, a->requested, NULL, true};
	ml_err e = ML_ERR_INIT;
	(void)ml_unpack_queue_add(x->q, i, &job, &e); /* i < n, once: cannot fail */
}

/* ml_fetch_opts.stop: a wheel a GPU here cannot run was refused before it
 * was unpacked, so the rest would be downloaded in vain. */
static bool refused(void *data)
{
	early_ctx *x = data;
	return x->q && ml_unpack_queue_refusal(x->q) == ML_EGPU;
}

/* Fetches need[0..k) (the plan's files at where[]) and moves each result
 * into r->items, and the pinned interpreter when it was deferred
 * (mli_prep_download). Each wheel is unpacked into the cache (after its
 * audit) the moment its download is verified, while the others still
 * download; the results land in r->early / r->early_ok / r->audits. The
 * interpreter goes to its own worker (mli_prep_start). */
static int fetch_some(mli_run *r, const ml_artifact *need, const size_t *where, size_t k,
                      ml_err *err)
{
	ml_download *sub = calloc(k + 1, sizeof(*sub));
	early_ctx *x = calloc(1, sizeof(*x));
	if (!sub || !x) {
		free(sub);
		free(x);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	ml_plan part = *r->res->plan; /* the same plan, only the files still to read */
	part.files = (ml_artifact *)need;
	part.n_files = k;
	ml_fetch_opts fo;
	mli_fetch_opts(&fo, r);
	x->r = r;
	x->where = where;
	x->k = k;
	x->ao = (ml_audit_opts)ML_AUDIT_OPTS_INIT;
	ml_audit_opts_machine(&x->ao, x->devs, 64, r->res->machine);
	ml_wheels_opts wo = ML_WHEELS_OPTS_INIT;
	wo.cache_dir = ml_cache_root(r->cache);
	wo.jobs = r->o->fetch.jobs;
	ml_err qerr = ML_ERR_INIT;
	/* without a queue, everything is unpacked while building, as it would be anyway */
	(void)ml_unpack_queue_start(&x->q, r->res->plan->n_files, &wo, audit_early, x, &qerr);
	fo.on_file = on_fetched;
	fo.file_data = x;
	fo.stop = refused;
	fo.stop_data = x;
	int rc = k ? ml_fetch_resolve(sub, &part, r->cfg, r->cache, &fo, err) : 0;
	ml_download *py = mli_prep_download(r);
	size_t n_items = k;
	if (py) {
		sub[n_items++] = *py; /* moves; mli_prep_fetched moves it back */
		memset(py, 0, sizeof(*py));
	}
	if (!rc)
		rc = ml_fetch_all(sub, n_items, r->cache, &fo, err);
	int py_rc = py ? sub[k].result : 0;
	if (py) {
		mli_prep_fetched(r, &sub[k]);
		if (rc && py_rc) /* the interpreter's failure is mli_prep_finish's to report */
			rc = ml_fetch_result(sub, k, err);
	}
	if (x->q) {      /* a refusal is the audit's to report; see mli_audit_before_build */
		if (!rc) /* the last, largest wheels can take a while */
			mli_say(&r->ev, ML_EV_STEP, "unpacking the wheels that arrived last");
		if (ml_unpack_queue_finish(x->q, rc != 0, r->early, r->early_ok) == ML_EGPU &&
		    !r->o->force) {
			r->refused = true; /* the fetch stopped for it: not a fetch failure */
			rc = 0;
			ml_err_clear(err);
		}
	}
	free(x);
	size_t n_failed = 0;
	for (size_t j = 0; j < k; j++)
		n_failed += sub[j].result != 0;
	ml_install_result *res = r->res;
	for (size_t j = 0; j < k; j++) {
		/* With one failure the pipeline's error already says it all. */
		if (rc && n_failed > 1 && sub[j].result && sub[j].err.msg[0]) {
			ml_install_event ev = {.kind = ML_EV_FETCH_FAILED,
			                       .err = &sub[j].err,
			                       .text = sub[j].name};
			mli_emit(&r->ev, &ev);
		}
		res->n_from_cache += sub[j].from_cache;
		res->n_downloaded += sub[j].done && !sub[j].from_cache;
		res->bytes_downloaded += sub[j].bytes;
		r->items[where[j]] = sub[j]; /* moves ownership */
	}
	free(sub);
	return rc;
}

void mli_fetch_forget(mli_run *r)
{
	for (size_t i = 0; r->items && i < r->n_items; i++)
		ml_download_release(&r->items[i]);
	for (size_t i = 0; r->audits && i < r->n_items; i++)
		ml_audit_free(r->audits[i]);
	free(r->items);
	free(r->audits);
	free(r->early);
	free(r->early_ok);
	r->items = NULL;
	r->audits = NULL;
	r->early = NULL;
	r->early_ok = NULL;
	r->n_items = 0;
}

int mli_fetch_wheels(mli_run *r, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	size_t n = p->n_files, n1 = n ? n : 1;
	r->n_items = n;
	r->items = calloc(n1, sizeof(*r->items));
	r->res->from_cache = calloc(n1, sizeof(*r->res->from_cache));
	r->early = calloc(n1, sizeof(*r->early));
	r->early_ok = calloc(n1, sizeof(*r->early_ok));
	r->audits = calloc(n1, sizeof(*r->audits));
	ml_artifact *need = calloc(n1, sizeof(*need));
	size_t *where = calloc(n1, sizeof(*where));
	int rc = 0;
	if (!r->items || !r->res->from_cache || !r->early || !r->early_ok || !r->audits || !need ||
	    !where)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const ml_artifact *a = &p->files[i];
		/* Wheels already unpacked in the cache are not read at all
		 * (ml_wheel_unpack uses the unpacked tree): neither fetched nor
		 * re-hashed. */
		if (ml_wheel_unpacked_ready(ml_cache_root(r->cache), a->sha256)) {
			rc = ml_download_init(&r->items[i], a->filename, a->sha256, a->size, err);
			r->items[i].done = r->items[i].from_cache = true;
			r->res->n_from_cache++;
		} else {
			need[k] = *a;
			where[k++] = i;
		}
	}
	if (!mli_prep_download(r))
		mli_prep_start(r, NULL); /* the venv skeleton, while the wheels download */
	if (!rc && (k || mli_prep_download(r)))
		rc = fetch_some(r, need, where, k, err);
	for (size_t i = 0; r->items && r->res->from_cache && i < n; i++)
		r->res->from_cache[i] = r->items[i].from_cache;
	/* a size no server told is known once the download proved the file:
	 * the report and pylock.toml carry it */
	for (size_t i = 0; !rc && r->items && i < n; i++) {
		ml_artifact *a = &r->res->plan->files[i];
		if (a->size < 0 && r->items[i].done && r->items[i].size >= 0) {
			a->size = r->items[i].size;
			r->res->plan->total_bytes += (uint64_t)a->size;
		}
	}
	free(need);
	free(where);
	return rc;
}

/* --- the audit before building ---------------------------------------------------- */

/* "requirements_blackwell.txt (driver 570.26 or newer)": the shipped
 * manifest that covers compute capability major.minor; "" when none. */
static void covering_manifest(char *dst, size_t sz, int major, int minor, const char *except)
{
	ml_manifest *mf = NULL;
	dst[0] = '\0';
	if (ml_manifest_covering(&mf, major, minor, except, NULL) == 0 && mf) {
		const char *drv = mf->min_driver_linux;
		snprintf(dst, sz, "%s%s%s%s", mf->name, drv ? " (driver " : "", drv ? drv : "",
		         drv ? " or newer)" : "");
	}
	ml_manifest_free(mf);
}

/* The machine's GPU of compute capability a, or NULL. */
static const ml_gpu *gpu_of(const ml_machine *m, const ml_cuda_arch *a)
{
	for (size_t i = 0; i < m->n_gpus; i++)
		if (m->gpus[i].cc_major == a->major && m->gpus[i].cc_minor == a->minor)
			return &m->gpus[i];
	return NULL;
}

/* Says, for each device the audit found unable to run the wheels, why:
 * a warning with force, else the failure (the first device's). */
static int explain_devices(mli_run *r, const ml_audit *au, ml_err *err)
{
	const char *mname = r->res->plan->selection->manifest->name;
	int rc = 0;
	for (size_t d = 0; d < au->n_devices && !rc; d++) {
		if (au->overall[d].runs)
			continue;
		const ml_gpu *g = gpu_of(r->res->machine, &au->devices[d]);
		char sm[16], cover[128];
		ml_cuda_arch_format(sm, sizeof(sm), &au->devices[d]);
		if (r->o->force) {
			mli_say(&r->ev, ML_EV_WARNING,
			        "%s (%s) cannot run this manifest's CUDA code: %s; building anyway "
			        "(--force)",
			        g ? g->name : "GPU", sm, au->overall[d].why);
			continue;
		}
		covering_manifest(cover, sizeof(cover), au->devices[d].major, au->devices[d].minor,
		                  mname);
		rc = ml_err_set(err, ML_EGPU,
		                "%s (%s) cannot run the CUDA code of manifest '%s': %s; expect 'no "
		                "kernel image is available for execution on the device'",
		                g ? g->name : "GPU", sm, mname, au->overall[d].why);
		if (cover[0])
			ml_err_hint(err,
			            "install with --manifest %s; nothing was installed (--force "
			            "builds anyway)",
			            cover);
		else
			ml_err_hint(err,
			            "no shipped manifest has code for %s; nothing was installed "
			            "(--force builds anyway)",
			            sm);
	}
	return rc;
}

/* Audits plan file i on its own: the downloaded wheel, or the unpacked
 * tree of one that was unpacked in the cache already. */
static int audit_one(mli_run *r, size_t i, const ml_audit_opts *ao, ml_audit **out, ml_err *err)
{
	char tree[ML_PATH_MAX];
	const char *path = r->items[i].path;
	if (!path[0]) {
		if (ml_wheel_unpacked_tree(tree, sizeof tree, ml_cache_root(r->cache),
		                           r->res->plan->files[i].sha256))
			return ml_err_set(err, ML_EFAIL, "no unpacked tree for '%s'",
			                  r->res->plan->files[i].filename);
		path = tree;
	}
	return ml_audit_paths(out, &path, 1, ao, err);
}

/* The audit of every wheel it reads, in plan order, in r->res->audit:
 * the audits made while downloading (r->audits) and the rest made now. */
static int audit_all(mli_run *r, const ml_audit_opts *ao, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	int rc = 0;
	for (size_t i = 0; !rc && i < p->n_files; i++) {
		if (!audit_subject(&p->files[i]))
			continue;
		if (r->refused && !r->items[i].done && !(r->audits && r->audits[i]))
			continue; /* not fetched: the fetch stopped at a refusal */
		ml_audit *a = r->audits ? r->audits[i] : NULL;
		if (a)
			r->audits[i] = NULL; /* moves */
		else if ((rc = audit_one(r, i, ao, &a, err)) != 0)
			break;
		if (!r->res->audit)
			r->res->audit = a;
		else if ((rc = ml_audit_merge(r->res->audit, a, err)) != 0)
			ml_audit_free(a);
	}
	return rc;
}

int mli_audit_before_build(mli_run *r, ml_err *err)
{
	const ml_plan *p = r->res->plan;
	ml_cuda_arch devs[64];
	ml_audit_opts ao = ML_AUDIT_OPTS_INIT;
	ml_audit_opts_machine(&ao, devs, 64, r->res->machine);
	size_t n_subjects = 0;
	for (size_t i = 0; i < p->n_files; i++)
		n_subjects += audit_subject(&p->files[i]);
	if (!ao.n_devices || !n_subjects)
		return 0;
	ml_install_event ev = {.kind = ML_EV_CHECK_BEGIN, .text = "audit before build"};
	mli_emit(&r->ev, &ev);
	int rc = audit_all(r, &ao, err);
	if (!rc) {
		ml_err aerr = ML_ERR_INIT;
		int status = ml_audit_status(r->res->audit, &aerr);
		if (status == ML_EGPU)
			rc = explain_devices(r, r->res->audit, err);
		else if (status)
			mli_say(&r->ev, ML_EV_DETAIL, "the audit before building: %s", aerr.msg);
	}
	ev = (ml_install_event){
	        .kind = ML_EV_CHECK_END, .text = "audit before build", .ok = rc == 0};
	mli_emit(&r->ev, &ev);
	return rc;
}

/* --- building the environment ----------------------------------------------------- */

static void on_wheel_done(void *ctx, size_t index, const ml_wheel_result *w)
{
	mli_run *r = ctx;
	const ml_plan *p = r->res->plan;
	ml_install_event ev = {.kind = ML_EV_WHEEL,
	                       .wheel = w,
	                       .text = p->files[index].filename,
	                       .n_done = ++r->n_wheels_done,
	                       .n_total = p->n_files};
	mli_emit(&r->ev, &ev);
}

/* Says once for the whole install, not per wheel or file, that files were
 * copied where hard links from the unpacked cache failed
 * (ml_wheel_result.hardlink_errno): a cache on another file system than
 * the target (a tmpfs, another disk) works, but the environment then
 * takes its whole size again and builds slower. */
static void say_copied(mli_run *r, const ml_wheel_result *w, size_t n)
{
	uint64_t copied = 0;
	int e = 0;
	for (size_t i = 0; i < n; i++)
		if (w[i].hardlink_errno) {
			copied += w[i].n_copied;
			if (!e || w[i].hardlink_errno == EXDEV)
				e = w[i].hardlink_errno;
		}
	if (!e)
		return;
	const char *cache = ml_cache_root(r->cache);
	if (e == EXDEV)
		mli_say(&r->ev, ML_EV_WARNING,
		        "the cache %s and the target %s are on different file systems: %llu "
		        "files were copied from the cache instead of hard-linked (a --cache-dir "
		        "on the target's file system links them and saves the space)",
		        cache, r->res->target, (unsigned long long)copied);
	else
		mli_say(&r->ev, ML_EV_WARNING,
		        "hard links from the cache %s into the target %s failed (%s): %llu files "
		        "were copied instead",
		        cache, r->res->target, strerror(e), (unsigned long long)copied);
}

int mli_build_env(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	int rc = mli_prep_finish(r, err); /* the skeleton made while fetching, if any */
	if (!rc && !r->env_ready)
		rc = ml_env_stage_begin(&r->stage, r->lock, err);
	if (rc)
		return rc;
	if (r->stage->n_stale_removed || r->stage->recovered)
		mli_say(&r->ev, ML_EV_DETAIL,
		        "cleaned up after an interrupted run (%d staging directories%s)",
		        r->stage->n_stale_removed,
		        r->stage->recovered ? ", restored the old target" : "");
	if (!r->env_ready && ((rc = ml_env_layout_init(&r->env, r->stage->path, r->stage->target,
	                                               res->python.xy, err)) != 0 ||
	                      (rc = ml_venv_create(&r->env, &res->python, NULL, err)) != 0))
		return rc;
	ml_env_layout env = r->env;
	size_t n = res->plan->n_files;
	ml_wheel_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	res->wheels = calloc(n ? n : 1, sizeof(*res->wheels));
	if (!jobs || !res->wheels) {
		free(jobs);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		jobs[i] =
		        (ml_wheel_job){r->items[i].path, r->items[i].sha256,
		                       res->plan->files[i].filename, res->plan->files[i].requested,
		                       r->early_ok && r->early_ok[i] ? &r->early[i] : NULL,
		                       false /* not queued early: hashed again, to be sure */};
	ml_wheels_opts wo = ML_WHEELS_OPTS_INIT;
	wo.cache_dir = ml_cache_root(r->cache);
	wo.jobs = r->o->fetch.jobs;
	wo.link = r->o->link;
	wo.on_done = on_wheel_done;
	wo.ctx = r;
	rc = ml_wheels_install_all(res->wheels, jobs, n, &env, &wo, err);
	free(jobs);
	if (!rc)
		say_copied(r, res->wheels, n);
	/* The import check after the build would compile what it imports,
	 * in each of its interpreters and on its critical path; compiled here,
	 * on every core and once, it reads bytecode (and so does the user's
	 * first run). --no-verify compiles nothing unless asked, and
	 * --no-compile-bytecode nothing. */
	if (!rc && (r->o->compile_bytecode || (!r->o->no_verify && !r->o->no_compile_bytecode))) {
		int cores = ml_env_bytecode_workers();
		mli_say(&r->ev, ML_EV_STEP, "compiling bytecode on %d core%s", cores,
		        cores == 1 ? "" : "s");
		size_t n_bad = 0;
		char first[512];
		rc = ml_env_compile_bytecode(&env, &n_bad, first, sizeof(first), err);
		if (!rc && n_bad)
			mli_say(&r->ev, ML_EV_DETAIL,
			        "%zu file%s did not compile to bytecode and will run from source "
			        "(first: %s)",
			        n_bad, n_bad == 1 ? "" : "s", first);
	}
	if (!rc)
		rc = mli_write_pylock(r, r->stage->path, err);
	if (!rc)
		rc = mli_write_report_unverified(r, r->stage->path, err);
	if (!rc)
		rc = ml_env_stage_commit(r->stage, err);
	return rc;
}
