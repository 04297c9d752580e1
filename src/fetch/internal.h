/*
 * internal.h - what the fetch stage's source files share and no other
 * folder needs: one index lookup with retries. Names start with mlf_.
 */
#ifndef MLSETUP_FETCH_INTERNAL_H
#define MLSETUP_FETCH_INTERNAL_H

#include "mlsetup/fetch.h"

/* Asks one source (an index base URL, or a --find-links location when
 * find_links) for project name with ml_index_project_opts /
 * ml_find_links_project_opts (cfg's trusted hosts and cert, c as the page
 * cache, o's timeouts), retrying retryable failures o->retries times (< 0:
 * 3) with exponential backoff (0.5 s doubling, at most 8 s); each retry is
 * announced through note(data, text) when note is non-NULL. A rejected
 * certificate is never retried. Returns what the lookup returns (0,
 * ML_ENOENT when the source does not have the project, ML_ENET, ...). */
int mlf_lookup(ml_project **out, const char *url, bool find_links, const char *name,
               const ml_index_config *cfg, ml_cache *c, const ml_fetch_opts *o,
               void (*note)(void *data, const char *text), void *data, ml_err *err);

#endif
