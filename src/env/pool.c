/*
 * pool.c - installing many wheels at once: a small pthread pool that runs
 * ml_wheel_unpack() then ml_wheel_install_unpacked() for each wheel,
 * collects a result per wheel, and stops handing out new wheels after the
 * first failure.
 *
 * The pool's threads are a budget (mle_slots, slots.c) of opts->jobs:
 * each worker holds a slot while it works on wheels and gives it back when
 * none are left, and the extraction of a large wheel borrows free slots
 * for threads that inflate its members. So the last, large wheels (torch,
 * cudnn, cublas) are inflated on every core, and the threads running
 * never exceed the budget.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- the pool ----------------------------------------------------------------------- */

typedef struct pool {
	pthread_mutex_t mu;
	ml_wheel_result *out;
	const ml_wheel_job *jobs;
	size_t n, next;
	const ml_env_layout *env;
	const ml_wheels_opts *o;
	bool stop;
	size_t first_failed; /* index, or n when none */
	mle_slots slots;     /* the budget: jobs, minus the workers' slots */
	int threads;         /* the budget's size */
} pool;

static void run_one(pool *p, size_t i)
{
	const ml_wheel_job *j = &p->jobs[i];
	ml_wheel_result *r = &p->out[i];
	ml_unpack_opts uo = ML_UNPACK_OPTS_INIT;
	uo.filename = j->filename;
	uo.max_bytes = p->o->max_bytes;
	uo.max_entries = p->o->max_entries;
	uo.threads = p->threads;
	uo.sha256_checked = j->sha256_checked;
	ml_unpacked u;
	ml_err err = ML_ERR_INIT;
	int rc = 0;
	if (j->unpacked)
		u = *j->unpacked; /* unpacked earlier in this run (ml_unpack_queue) */
	else
		rc = mle_wheel_unpack(&u, p->o->cache_dir, j->path, j->sha256, &uo, &p->slots,
		                      &err);
	if (rc == 0) {
		ml_wheel_install_opts io = ML_WHEEL_INSTALL_OPTS_INIT;
		io.requested = j->requested;
		io.link = p->o->link;
		rc = ml_wheel_install_unpacked(r, u.dir, p->env, &io, &err);
		if (rc == 0) {
			r->cache_hit = u.cache_hit;
			r->bytes_extracted = u.bytes_extracted;
		}
	}
	r->rc = rc;
	r->skipped = false;
	if (rc)
		r->err = err;
}

static void *worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			mle_slots_give(&p->slots, 1); /* for the members of others' wheels */
			return NULL;
		}
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mu);

		run_one(p, i);

		pthread_mutex_lock(&p->mu);
		if (p->out[i].rc && !p->stop) {
			p->stop = true;
			p->first_failed = i;
		}
		if (p->o->on_done)
			p->o->on_done(p->o->ctx, i, &p->out[i]);
		pthread_mutex_unlock(&p->mu);
	}
}

int ml_wheels_install_all(ml_wheel_result *out, const ml_wheel_job *jobs, size_t n,
                          const ml_env_layout *env, const ml_wheels_opts *opts, ml_err *err)
{
	if (!opts || !opts->cache_dir)
		return ml_err_set(err, ML_EFAIL, "no cache directory given");
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].skipped = true;
	}
	if (n == 0)
		return 0;
	pool p;
	memset(&p, 0, sizeof p);
	p.out = out;
	p.jobs = jobs;
	p.n = n;
	p.env = env;
	p.o = opts;
	p.first_failed = n;
	size_t budget = opts->jobs > 0 ? (size_t)opts->jobs : (size_t)ml_os_cpu_count();
	if (budget < 1)
		budget = 1;
	size_t threads = budget > n ? n : budget;
	p.threads = (int)budget;
	if (pthread_mutex_init(&p.mu, NULL) != 0)
		return ml_err_set(err, ML_EFAIL, "cannot create a mutex");
	if (mle_slots_init(&p.slots, (int)(budget - threads)) != 0) {
		pthread_mutex_destroy(&p.mu);
		return ml_err_set(err, ML_EFAIL, "cannot create a mutex");
	}
	pthread_t *tid = calloc(threads, sizeof *tid);
	if (!tid) {
		pthread_mutex_destroy(&p.mu);
		mle_slots_release(&p.slots);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	size_t started = 0;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, worker, &p) != 0)
			break;
	if (started < threads) /* their slots are free for members */
		mle_slots_give(&p.slots, (int)(threads - started));
	int rc = 0;
	if (started == 0) {
		rc = ml_err_set(err, ML_EFAIL, "cannot start worker threads");
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	pthread_mutex_destroy(&p.mu);
	mle_slots_release(&p.slots);
	if (rc)
		return rc;
	if (p.first_failed < n) {
		const ml_wheel_result *r = &out[p.first_failed];
		const char *name = jobs[p.first_failed].filename;
		if (!name)
			name = jobs[p.first_failed].path;
		ml_err_set(err, r->rc, "%s: %s", name, r->err.msg);
		ml_err_hint(err, "%s", r->err.hint);
		return r->rc;
	}
	return 0;
}

/* --- the unpack queue --------------------------------------------------------------- */

typedef struct queued {
	size_t index;
	ml_wheel_job job;
} queued;

struct ml_unpack_queue {
	pthread_mutex_t mu;
	pthread_cond_t more; /* work was added, or the queue closed */
	ml_wheels_opts o;    /* cache_dir, caps, jobs */
	ml_unpack_check_fn check;
	void *ctx;
	size_t n;
	queued *todo; /* FIFO of added wheels: todo[head .. tail) */
	size_t head, tail;
	bool closed, stop;
	int check_rc;     /* the first check's refusal */
	ml_unpacked *out; /* n */
	bool *ok;         /* n */
	mle_slots slots;  /* the budget; workers take one while unpacking */
	int budget;
	pthread_t *tid;
	size_t started;
};

static void unpack_queued(ml_unpack_queue *q, const queued *w)
{
	if (q->check) {
		int crc = q->check(q->ctx, w->index, w->job.path);
		if (crc) {
			pthread_mutex_lock(&q->mu);
			if (!q->check_rc)
				q->check_rc = crc;
			q->stop = true;
			pthread_mutex_unlock(&q->mu);
			return;
		}
	}
	ml_unpack_opts uo = ML_UNPACK_OPTS_INIT;
	uo.filename = w->job.filename;
	uo.max_bytes = q->o.max_bytes;
	uo.max_entries = q->o.max_entries;
	uo.threads = q->budget;
	uo.sha256_checked = w->job.sha256_checked;
	ml_unpacked u;
	ml_err err = ML_ERR_INIT;
	int got = mle_slots_take(&q->slots, 1);
	int rc = mle_wheel_unpack(&u, q->o.cache_dir, w->job.path, w->job.sha256, &uo, &q->slots,
	                          &err);
	mle_slots_give(&q->slots, got);
	pthread_mutex_lock(&q->mu);
	if (rc == 0) {
		q->out[w->index] = u;
		q->ok[w->index] = true;
	} else {
		q->stop = true; /* installing it again says why; spare the rest */
	}
	pthread_mutex_unlock(&q->mu);
}

static void *queue_worker(void *arg)
{
	ml_unpack_queue *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->stop && q->head == q->tail && !q->closed)
			pthread_cond_wait(&q->more, &q->mu);
		if (q->stop || q->head == q->tail)
			break;
		queued w = q->todo[q->head++];
		pthread_mutex_unlock(&q->mu);
		unpack_queued(q, &w);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void queue_free(ml_unpack_queue *q)
{
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->mu);
	mle_slots_release(&q->slots);
	free(q->todo);
	free(q->out);
	free(q->ok);
	free(q->tid);
	free(q);
}

int ml_unpack_queue_start(ml_unpack_queue **out, size_t n, const ml_wheels_opts *opts,
                          ml_unpack_check_fn check, void *ctx, ml_err *err)
{
	if (!opts || !opts->cache_dir)
		return ml_err_set(err, ML_EFAIL, "no cache directory given");
	ml_unpack_queue *q = calloc(1, sizeof *q);
	if (!q)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	q->o = *opts;
	q->check = check;
	q->ctx = ctx;
	q->n = n;
	q->budget = opts->jobs > 0 ? opts->jobs : ml_os_cpu_count();
	if (q->budget < 1)
		q->budget = 1;
	size_t threads = (size_t)q->budget < n ? (size_t)q->budget : n;
	q->todo = calloc(n ? n : 1, sizeof *q->todo);
	q->out = calloc(n ? n : 1, sizeof *q->out);
	q->ok = calloc(n ? n : 1, sizeof *q->ok);
	q->tid = calloc(threads ? threads : 1, sizeof *q->tid);
	if (!q->todo || !q->out || !q->ok || !q->tid) {
		free(q->todo);
		free(q->out);
		free(q->ok);
		free(q->tid);
		free(q);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->more, NULL);
	mle_slots_init(&q->slots, q->budget);
	for (; q->started < threads; q->started++)
		if (pthread_create(&q->tid[q->started], NULL, queue_worker, q) != 0)
			break;
	if (threads && q->started == 0) {
		queue_free(q);
		return ml_err_set(err, ML_EFAIL, "cannot start worker threads");
	}
	*out = q;
	return 0;
}

int ml_unpack_queue_add(ml_unpack_queue *q, size_t index, const ml_wheel_job *job, ml_err *err)
{
	if (index >= q->n)
		return ml_err_set(err, ML_EFAIL, "wheel %zu is not one of the queue's %zu", index,
		                  q->n);
	pthread_mutex_lock(&q->mu);
	int rc = 0;
	if (q->tail >= q->n)
		rc = ml_err_set(err, ML_EFAIL, "wheel %zu was queued twice", index);
	else if (!q->stop && !q->closed) {
		q->todo[q->tail++] = (queued){index, *job};
		pthread_cond_signal(&q->more);
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int ml_unpack_queue_refusal(ml_unpack_queue *q)
{
	pthread_mutex_lock(&q->mu);
	int rc = q->check_rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int ml_unpack_queue_finish(ml_unpack_queue *q, bool stop, ml_unpacked *out, bool *ok)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	if (stop)
		q->stop = true;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->mu);
	for (size_t i = 0; i < q->started; i++)
		pthread_join(q->tid[i], NULL);
	for (size_t i = 0; i < q->n; i++) {
		if (out)
			out[i] = q->out[i];
		ok[i] = q->ok[i];
	}
	int rc = q->check_rc;
	queue_free(q);
	return rc;
}
