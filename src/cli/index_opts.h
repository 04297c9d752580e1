/*
 * index_opts.h - shared index options for the commands that reach an
 * index (lock, plan, download, install). Include ML_CLI_INDEX_LONGOPTS in a
 * command's option table and pass each option to ml_cli_index_option().
 */
#ifndef MLSETUP_CLI_INDEX_OPTS_H
#define MLSETUP_CLI_INDEX_OPTS_H

#include "mlsetup/fetch.h"

#define ML_CLI_INDEX_MAX 16

struct ml_command;

enum {
	ML_OPT_INDEX_URL = 'i',
	ML_OPT_FIND_LINKS = 'f',
	ML_OPT_EXTRA_INDEX_URL = 1000,
	ML_OPT_NO_INDEX,
	ML_OPT_TRUSTED_HOST,
	ML_OPT_CERT,
	ML_OPT_TORCH_INDEX_URL,
	ML_OPT_TORCH_BACKEND,
};

#define ML_CLI_INDEX_LONGOPTS                                                                      \
	{"index-url", required_argument, NULL, ML_OPT_INDEX_URL},                                  \
	        {"extra-index-url", required_argument, NULL, ML_OPT_EXTRA_INDEX_URL},              \
	        {"find-links", required_argument, NULL, ML_OPT_FIND_LINKS},                        \
	        {"no-index", no_argument, NULL, ML_OPT_NO_INDEX},                                  \
	        {"trusted-host", required_argument, NULL, ML_OPT_TRUSTED_HOST},                    \
	        {"cert", required_argument, NULL, ML_OPT_CERT},                                    \
	        {"torch-index-url", required_argument, NULL, ML_OPT_TORCH_INDEX_URL},              \
	{                                                                                          \
		"torch-backend", required_argument, NULL, ML_OPT_TORCH_BACKEND                     \
	}

#define ML_CLI_INDEX_HELP                                                                          \
	"  -i, --index-url URL     package index (PEP 503/691); default: MLSETUP_INDEX_URL,\n"     \
	"                          PIP_INDEX_URL, pip's config files, the manifest, pip's own\n"   \
	"  --extra-index-url URL   another index, tried after the first (repeatable)\n"            \
	"  -f, --find-links PATH|URL  a directory or page of wheels (repeatable)\n"                \
	"  --no-index              use no index, only --find-links\n"                              \
	"  --trusted-host HOST     allow plain http for HOST (repeatable)\n"                       \
	"  --cert FILE             CA bundle for TLS (default: system, SSL_CERT_FILE)\n"           \
	"  --torch-backend auto|cpu|cuXYZ  the torch build for a file that leaves torch\n"         \
	"                          open: auto (default) takes the newest that runs here\n"         \
	"  --torch-index-url URL   base of PyTorch's per-backend indexes (URL/<backend>/);\n"      \
	"                          none: only the other indexes; default:\n"                       \
	"                          MLSETUP_TORCH_INDEX_URL, else PyTorch's own\n"

typedef struct ml_cli_index {
	const char *index_url;
	char *extra[ML_CLI_INDEX_MAX];
	size_t n_extra;
	char *find_links[ML_CLI_INDEX_MAX];
	size_t n_find_links;
	char *trusted[ML_CLI_INDEX_MAX];
	size_t n_trusted;
	bool no_index;
	const char *cert;
	const char *torch_index_url;
	const char *torch_backend;
} ml_cli_index;

/* Records an index option. Returns 1 when opt was one, 0 when it was not,
 * -1 (err set, ML_EUSAGE) when a list option was given too often. */
int ml_cli_index_option(ml_cli_index *ix, int opt, const char *arg, ml_err *err);

/* For the commands that choose no torch build (lock, download, bundle):
 * ML_EUSAGE (usage of c, err set) when --torch-backend or
 * --torch-index-url was given, so that neither is silently ignored; else
 * 0. */
int ml_cli_index_no_torch(const ml_cli_index *ix, const struct ml_command *c, ml_err *err);

/* Fills *out (borrowing ix's strings) for ml_index_config_resolve(). */
void ml_cli_index_flags(const ml_cli_index *ix, ml_index_flags *out);

#endif
