/*
 * sources.c - a manifest's index sources: the manifest's own --find-links,
 * --trusted-host, --no-index, --index-url and --extra-index-url lines
 * joined to the command line's index options and the environment, the way
 * pip joins a requirements file's options to its command line. install and
 * download both call it, so they cannot disagree about where files come
 * from; and the index configuration's transport settings (trusted hosts,
 * CA bundle) put into fetch options (ml_fetch_opts_use_index).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "mlsetup/pkg.h"

/* A manifest's --find-links entry: a relative path is taken from the
 * manifest's directory, as pip does, when it exists there. Returns a new
 * string, or NULL when out of memory. */
static char *manifest_relative(const char *manifest_path, const char *loc)
{
	if (!manifest_path || strstr(loc, "://") || loc[0] == '/')
		return strdup(loc);
	char dir[4096];
	const char *base;
	if (ml_fs_split_path(dir, sizeof(dir), &base, manifest_path) != 0)
		return strdup(loc);
	char *joined = ml_asprintf("%s/%s", dir, loc);
	struct stat st;
	if (joined && stat(joined, &st) != 0) {
		free(joined);
		return strdup(loc);
	}
	return joined;
}

/* Appends src[0..n) to the list (*list, *len), copying the pointers into a
 * new array (*owned). Returns 0 or ML_ENOMEM. */
static int join_list(char ***owned, char *const **list, size_t *len, char *const *src, size_t n)
{
	char **v = malloc((*len + n + 1) * sizeof(*v));
	if (!v)
		return ML_ENOMEM;
	for (size_t i = 0; i < *len; i++)
		v[i] = (*list)[i];
	for (size_t i = 0; i < n; i++)
		v[*len + i] = src[i];
	*len += n;
	*list = v;
	*owned = v;
	return 0;
}

int ml_index_config_for_manifest(ml_index_config **out, const ml_index_flags *flags,
                                 const ml_requirements *manifest, const char *manifest_path,
                                 bool offline, const char *python, ml_err *err)
{
	ml_index_flags f = ML_INDEX_FLAGS_INIT;
	if (flags)
		f = *flags;
	size_t n_fl = manifest->n_find_links;
	char **fl = calloc(n_fl + 1, sizeof(*fl));
	char **fl_list = NULL, **trusted_list = NULL;
	int rc = fl ? 0 : ML_ENOMEM;
	for (size_t i = 0; !rc && i < n_fl; i++)
		if (!(fl[i] = manifest_relative(manifest_path, manifest->find_links[i])))
			rc = ML_ENOMEM;
	if (!rc)
		rc = join_list(&fl_list, &f.find_links, &f.n_find_links, fl, n_fl);
	if (!rc)
		rc = join_list(&trusted_list, &f.trusted_hosts, &f.n_trusted,
		               manifest->trusted_hosts, manifest->n_trusted);
	if (rc) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (manifest->no_index)
		f.no_index = f.no_index || !f.index_url;
	rc = ml_index_config_resolve(out, &f, manifest->index_url, manifest->extra_index_urls,
	                             manifest->n_extra, python, err);
	if (rc == ML_ENOENT && offline) {
		f.no_index = true; /* offline needs no index */
		ml_err_clear(err);
		rc = ml_index_config_resolve(out, &f, NULL, NULL, 0, python, err);
	}
out:
	for (size_t i = 0; fl && i < n_fl; i++)
		free(fl[i]);
	free(fl);
	free(fl_list);
	free(trusted_list);
	return rc;
}

void ml_fetch_opts_use_index(ml_fetch_opts *fo, const ml_index_config *cfg)
{
	fo->http.trusted_hosts = cfg ? cfg->trusted_hosts : NULL;
	fo->http.n_trusted = cfg ? cfg->n_trusted : 0;
	fo->http.cert = cfg ? cfg->cert : NULL;
}
