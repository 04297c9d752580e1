/*
 * lookup.c - what every index lookup of the fetch stage shares (resolve.c,
 * provider.c): the sources in pip's order, one project page from one source
 * with the retry policy, and the pool of threads that looks several
 * projects up at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "internal.h"

#define BACKOFF_BASE_S 0.5
#define BACKOFF_MAX_S  8.0

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int mlf_lookup(ml_project **out, const char *url, bool find_links, const char *name,
               const ml_index_config *cfg, ml_cache *c, const ml_fetch_opts *o,
               void (*note)(void *data, const char *text), void *data, ml_err *err)
{
	int retries = o && o->retries >= 0 ? o->retries : ML_FETCH_RETRIES;
	double delay = BACKOFF_BASE_S;
	for (int attempt = 1;; attempt++) {
		ml_http_failure f = {0};
		ml_index_source src = {url, cfg ? cfg->trusted_hosts : NULL,
		                       cfg ? cfg->n_trusted : 0, cfg ? cfg->cert : NULL};
		ml_index_opts io = ML_INDEX_OPTS_INIT;
		io.cache = c;
		io.connect_timeout_s = o ? o->http.connect_timeout_s : 0;
		io.low_speed_time_s = o ? o->http.low_speed_time_s : 0;
		io.failure = &f;
		ml_err_clear(err);
		int rc = find_links ? ml_find_links_project_opts(out, &src, name, &io, err)
		                    : ml_index_project_opts(out, &src, name, &io, err);
		if (rc == 0 || !f.retryable || f.tls_rejected)
			return rc;
		if (attempt > retries) {
			size_t l = strlen(err->msg);
			if (attempt > 1)
				snprintf(err->msg + l, sizeof(err->msg) - l, " (after %d requests)",
				         attempt);
			if (!err->hint[0])
				ml_err_hint(err,
				            "check the network and the index URL (--index-url), "
				            "or try again later");
			return rc;
		}
		if (note) {
			char text[1200];
			snprintf(text, sizeof(text), "retrying the index page of %s in %.1f s: %s",
			         name, delay, err->msg);
			note(data, text);
		}
		sleep_s(delay);
		delay = delay * 2 < BACKOFF_MAX_S ? delay * 2 : BACKOFF_MAX_S;
	}
}

bool mlf_is_remote(const char *url)
{
	return strncasecmp(url, "http:", 5) == 0 || strncasecmp(url, "https:", 6) == 0;
}

static int add_source(mlf_source **v, size_t *n, const char *url, bool find_links)
{
	mlf_source *g = realloc(*v, (*n + 1) * sizeof(*g));
	if (!g)
		return ML_ENOMEM;
	*v = g;
	g[(*n)++] = (mlf_source){url, find_links};
	return 0;
}

int mlf_sources(mlf_source **out, size_t *n, const ml_index_config *cfg, bool offline)
{
	mlf_source *v = NULL;
	size_t k = 0;
	int rc = 0;
	if (cfg && !offline && cfg->index_url)
		rc = add_source(&v, &k, cfg->index_url, false);
	for (size_t i = 0; cfg && !rc && !offline && i < cfg->n_extra; i++)
		rc = add_source(&v, &k, cfg->extra_index_urls[i], false);
	for (size_t i = 0; cfg && !rc && i < cfg->n_find_links; i++)
		if (!offline || !mlf_is_remote(cfg->find_links[i]))
			rc = add_source(&v, &k, cfg->find_links[i], true);
	if (rc) {
		free(v);
		return ML_ENOMEM;
	}
	*out = v;
	*n = k;
	return 0;
}

typedef struct pool {
	size_t n, next; /* next under mu */
	void (*job)(void *data, size_t i);
	void *data;
	pthread_mutex_t mu;
} pool;

static void *pool_worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		p->job(p->data, i);
	}
}

void mlf_each_parallel(size_t n, void (*job)(void *data, size_t i), void *data)
{
	if (n == 0)
		return;
	pool p = {n, 0, job, data, PTHREAD_MUTEX_INITIALIZER};
	size_t n_threads = n < MLF_LOOKUP_THREADS ? n : MLF_LOOKUP_THREADS;
	pthread_t th[MLF_LOOKUP_THREADS];
	size_t started = 0;
	for (; started < n_threads; started++)
		if (pthread_create(&th[started], NULL, pool_worker, &p) != 0)
			break;
	if (started == 0)
		pool_worker(&p); /* no threads to be had: do it here */
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}
