/*
 * lookup.c - one project page from one source, with the retry policy
 * every index lookup of the fetch stage shares (resolve.c, pins.c).
 */
#include <stdio.h>
#include <string.h>
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
	int retries = o && o->retries >= 0 ? o->retries : 3;
	double delay = BACKOFF_BASE_S;
	for (int attempt = 1;; attempt++) {
		ml_http_failure f = {0};
		ml_index_source src = {url, cfg ? cfg->trusted_hosts : NULL,
		                       cfg ? cfg->n_trusted : 0, cfg ? cfg->cert : NULL};
		ml_index_opts io = ML_INDEX_OPTS_INIT;
		io.cache = c;
		io.connect_timeout_s = o ? o->connect_timeout_s : 0;
		io.low_speed_time_s = o ? o->low_speed_time_s : 0;
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
