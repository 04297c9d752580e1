/*
 * index_opts.c - the index options every network command shares
 * (--index-url, --extra-index-url, --find-links, --no-index,
 * --trusted-host, --cert, and for a file that leaves torch open
 * --torch-backend and --torch-index-url), parsed into ml_index_flags.
 */
#include <string.h>

#include "cli.h"
#include "index_opts.h"

int ml_cli_index_option(ml_cli_index *ix, int opt, const char *arg, ml_err *err)
{
	switch (opt) {
	case ML_OPT_INDEX_URL:
		ix->index_url = arg;
		return 1;
	case ML_OPT_NO_INDEX:
		ix->no_index = true;
		return 1;
	case ML_OPT_CERT:
		ix->cert = arg;
		return 1;
	case ML_OPT_TORCH_INDEX_URL:
		ix->torch_index_url = arg;
		return 1;
	case ML_OPT_TORCH_BACKEND:
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "cpu") != 0 &&
		    !(strncmp(arg, "cu", 2) == 0 && strlen(arg) >= 4 &&
		      strspn(arg + 2, "0123456789") == strlen(arg + 2))) {
			ml_err_set(
			        err, ML_EUSAGE,
			        "--torch-backend '%s': give auto, cpu or cuXYZ (cu126, cu130, ...)",
			        arg);
			return -1;
		}
		ix->torch_backend = arg;
		return 1;
	case ML_OPT_EXTRA_INDEX_URL:
	case ML_OPT_FIND_LINKS:
	case ML_OPT_TRUSTED_HOST: {
		char **list = opt == ML_OPT_EXTRA_INDEX_URL ? ix->extra
		              : opt == ML_OPT_FIND_LINKS    ? ix->find_links
		                                            : ix->trusted;
		size_t *n = opt == ML_OPT_EXTRA_INDEX_URL ? &ix->n_extra
		            : opt == ML_OPT_FIND_LINKS    ? &ix->n_find_links
		                                          : &ix->n_trusted;
		if (*n >= ML_CLI_INDEX_MAX) {
			ml_err_set(err, ML_EUSAGE, "at most %d values for one index option",
			           ML_CLI_INDEX_MAX);
			return -1;
		}
		list[(*n)++] = (char *)arg;
		return 1;
	}
	default:
		return 0;
	}
}

void ml_cli_index_flags(const ml_cli_index *ix, ml_index_flags *out)
{
	ml_index_flags f = ML_INDEX_FLAGS_INIT;
	f.index_url = ix->index_url;
	f.extra_index_urls = ix->extra;
	f.n_extra = ix->n_extra;
	f.find_links = ix->find_links;
	f.n_find_links = ix->n_find_links;
	f.no_index = ix->no_index;
	f.trusted_hosts = ix->trusted;
	f.n_trusted = ix->n_trusted;
	f.cert = ix->cert;
	f.torch_index_url = ix->torch_index_url;
	f.torch_backend = ix->torch_backend;
	*out = f;
}

int ml_cli_index_no_torch(const ml_cli_index *ix, const ml_command *c, ml_err *err)
{
	if (!ix->torch_backend && !ix->torch_index_url)
		return 0;
	return ml_cli_usage(c, err,
	                    "'mlsetup %s' chooses no torch build, so %s would change nothing: "
	                    "it is for plan and install (a requirements file that leaves torch "
	                    "open); pin torch in the file instead (torch==2.10.0+cu126 and its "
	                    "index)",
	                    c->name, ix->torch_backend ? "--torch-backend" : "--torch-index-url");
}
