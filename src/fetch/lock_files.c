/*
 * lock_files.c - the index lookups of `mlsetup lock`: for every pinned
 * version of a lock, every wheel file its indexes and --find-links
 * locations list (PEP 691 JSON, PEP 503 HTML), with sha256 and size (HEAD
 * requests where a page gives none), and pip's index options for the
 * resolver run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlsetup/plan.h"

static void note(const ml_lock_files_opts *o, bool detail, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void note(const ml_lock_files_opts *o, bool detail, const char *fmt, ...)
{
	if (!o || !o->on_note)
		return;
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	o->on_note(text, detail, o->data);
}

/* Adds every wheel of each pinned version that `proj` lists. */
static int record_files(ml_lock *lk, const ml_project *proj, const char *normalized,
                        size_t *n_yanked)
{
	for (size_t f = 0; f < proj->n_files; f++) {
		const ml_index_file *fi = &proj->files[f];
		ml_wheel_name wn;
		if (!fi->sha256 || ml_wheel_filename_parse(&wn, fi->filename, NULL) != 0 ||
		    !ml_lock_wheel_fits(lk, wn.platform_tag))
			continue;
		for (size_t i = 0; i < lk->n_pkgs; i++) {
			ml_lock_pkg *p = &lk->pkgs[i];
			if (strcmp(p->normalized, normalized) ||
			    ml_version_cmp(p->version, wn.version))
				continue;
			if (fi->yanked)
				(*n_yanked)++;
			if (ml_lock_pkg_add_file(p, fi->filename, fi->url, fi->sha256, fi->size))
				return ML_ENOMEM;
		}
	}
	return 0;
}

/* Learns the sizes the index pages did not give (PEP 503 HTML has none)
 * from the file servers, all at once (ml_http_sizes); a size none tells
 * stays -1. */
static int fill_sizes(ml_lock *lk, const ml_index_config *cfg, const ml_lock_files_opts *o,
                      ml_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			n += lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url;
	if (!n)
		return 0;
	char **urls = calloc(n, sizeof(*urls));
	int64_t *sizes = calloc(n, sizeof(*sizes));
	int rc = 0;
	if (!urls || !sizes) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	size_t k = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			if (lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url)
				urls[k++] = lk->pkgs[i].files[f].url;
	note(o, false, "asking the file server for %zu sizes the index did not give", n);
	ml_fetch_opts fo = ML_FETCH_OPTS_INIT;
	ml_fetch_opts_use_index(&fo, cfg);
	rc = ml_http_sizes(sizes, urls, n, &fo, err);
	k = 0;
	for (size_t i = 0; !rc && i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			if (lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url)
				lk->pkgs[i].files[f].size = sizes[k++];
out:
	free(urls);
	free(sizes);
	return rc;
}

/* Looks one project up at every source of cfg and records its files. */
static int lookup_project(ml_lock *lk, const ml_index_config *cfg, const char *normalized,
                          const ml_lock_files_opts *o, size_t *n_yanked, ml_err *err)
{
	size_t n_sources = (cfg->index_url ? 1 : 0) + cfg->n_extra + cfg->n_find_links;
	for (size_t s = 0; s < n_sources; s++) {
		size_t k = s;
		const char *url;
		bool find_links = false;
		if (cfg->index_url && k == 0) {
			url = cfg->index_url;
		} else {
			k -= cfg->index_url ? 1 : 0;
			find_links = k >= cfg->n_extra;
			url = find_links ? cfg->find_links[k - cfg->n_extra]
			                 : cfg->extra_index_urls[k];
		}
		ml_index_source src = {.url = url,
		                       .trusted_hosts = cfg->trusted_hosts,
		                       .n_trusted = cfg->n_trusted,
		                       .cert = cfg->cert};
		ml_project *proj = NULL;
		ml_err e2 = ML_ERR_INIT;
		int rc = find_links ? ml_find_links_project(&proj, &src, normalized, &e2)
		                    : ml_index_project(&proj, &src, normalized, &e2);
		if (rc == ML_ENOENT)
			continue; /* not on this index / location */
		if (rc) {
			*err = e2;
			return rc;
		}
		note(o, true, "%s: %zu files", normalized, proj->n_files);
		rc = record_files(lk, proj, normalized, n_yanked);
		ml_project_free(proj);
		if (rc)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	return 0;
}

int ml_fetch_lock_files(ml_lock *lk, const ml_index_config *cfg, const ml_lock_files_opts *o,
                        size_t *n_yanked, ml_err *err)
{
	size_t yanked = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++) {
		bool dup = false; /* one lookup per project, whatever its versions */
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(lk->pkgs[j].normalized, lk->pkgs[i].normalized);
		if (dup)
			continue;
		int rc = lookup_project(lk, cfg, lk->pkgs[i].normalized, o, &yanked, err);
		if (rc)
			return rc;
	}
	int rc = fill_sizes(lk, cfg, o, err);
	if (rc)
		return rc;
	if (n_yanked)
		*n_yanked = yanked;
	return 0;
}

size_t ml_index_config_pip_args(char **args, size_t cap, const ml_index_config *cfg)
{
	size_t n = 0;
	if (cfg->no_index && n + 1 <= cap)
		args[n++] = "--no-index";
	if (cfg->index_url && n + 2 <= cap) {
		args[n++] = "--index-url";
		args[n++] = cfg->index_url;
	}
	for (size_t i = 0; i < cfg->n_extra && n + 2 <= cap; i++) {
		args[n++] = "--extra-index-url";
		args[n++] = cfg->extra_index_urls[i];
	}
	for (size_t i = 0; i < cfg->n_find_links && n + 2 <= cap; i++) {
		args[n++] = "--find-links";
		args[n++] = cfg->find_links[i];
	}
	for (size_t i = 0; i < cfg->n_trusted && n + 2 <= cap; i++) {
		args[n++] = "--trusted-host";
		args[n++] = cfg->trusted_hosts[i];
	}
	if (cfg->cert && n + 2 <= cap) {
		args[n++] = "--cert";
		args[n++] = cfg->cert;
	}
	return n;
}
