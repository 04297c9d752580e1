/*
 * cmd_lock.c - `mlsetup lock INPUT.in -o OUT.txt`: regenerates a pinned,
 * hashed manifest from loose requirements. The pipeline is the library's
 * (ml_install_lock: pip's own resolver once per target platform/Python,
 * the sha256 and size of every wheel of each pinned version from the
 * index, PEP 691 with the PEP 503 HTML fallback, the `# mlsetup:` header
 * carried over from INPUT.in); this command parses the options and shows
 * the steps. It needs the network: main() refuses it under --offline.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "index_opts.h"
#include "mlsetup/install.h"

enum { OPT_OUTPUT = 'o', OPT_PYTHON = 1100, OPT_PLATFORM, OPT_RESOLVER };

#define MAX_TARGET_VALUES 16

struct lock_args {
	ml_install_lock_opts o;
	const char *pythons[MAX_TARGET_VALUES];
	const char *platforms[MAX_TARGET_VALUES];
	ml_cli_index ix;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct lock_args *a = data;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_OUTPUT) {
		a->o.output = arg;
	} else if (opt == OPT_RESOLVER) {
		a->o.resolver = arg;
	} else if (opt == OPT_PYTHON || opt == OPT_PLATFORM) {
		const char **list = opt == OPT_PYTHON ? a->pythons : a->platforms;
		size_t *n = opt == OPT_PYTHON ? &a->o.n_pythons : &a->o.n_platforms;
		if (*n >= MAX_TARGET_VALUES)
			return ml_err_set(err, ML_EUSAGE, "at most %d --python/--platform values",
			                  MAX_TARGET_VALUES);
		list[(*n)++] = arg;
	}
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"output", required_argument, NULL, OPT_OUTPUT},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"resolver-python", required_argument, NULL, OPT_RESOLVER},
	        ML_CLI_INDEX_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct lock_args *a = args;
	int first;
	int rc = ml_cli_parse(&ml_cmd_lock, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	if (argc - first != 1)
		return ml_cli_usage(&ml_cmd_lock, err, "lock takes exactly one INPUT file");
	if (!a->o.output)
		return ml_cli_usage(&ml_cmd_lock, err, "missing -o OUT.txt");
	a->o.input = argv[first];
	return 0;
}

/* Shows the lock's steps as they come. */
static void on_event(const ml_install_event *ev, void *data)
{
	(void)data;
	if (ev->kind == ML_EV_STEP) {
		ml_say("%s", ev->text);
		fflush(stdout); /* before pip's own output */
	} else if (ev->kind == ML_EV_WARNING) {
		ml_warn("%s", ev->text);
	} else if (ev->kind == ML_EV_DETAIL) {
		ml_verbose("%s", ev->text);
	}
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	(void)ctx;
	struct lock_args *a = args;
	a->o.pythons = a->pythons;
	a->o.platforms = a->platforms;
	a->o.on_event = on_event;
	if (ml_cli_index_no_torch(&a->ix, &ml_cmd_lock, err))
		return ML_EUSAGE;
	ml_cli_index_flags(&a->ix, &a->o.index);
	ml_install_lock_result r;
	int rc = ml_install_lock(&r, &a->o, err);
	if (!rc)
		ml_say("wrote %s: %zu packages, %zu wheel hashes, %zu targets", a->o.output,
		       r.n_packages, r.n_files, r.n_targets);
	return rc;
}

const ml_command ml_cmd_lock = {
        "lock",
        sizeof(struct lock_args),
        parse,
        run,
        ML_NEED_NET,
        "regenerate a pinned, hashed manifest from loose requirements",
        "mlsetup lock INPUT.in -o OUT.txt [--python X.Y ...] [--platform OS-ARCH ...] "
        "[--resolver-python PATH] [index options]",
        "  -o, --output FILE       manifest to write (replaced atomically)\n"
        "  --python X.Y            target Python, repeatable (default: the input's python header)\n"
        "  --platform OS-ARCH      target platform, repeatable: linux-x86_64, linux-aarch64,\n"
        "                          windows-x86_64, darwin-aarch64 (default: the platforms header)\n"
        "  --resolver-python PATH  interpreter whose pip resolves (default "
        "python3)\n" ML_CLI_INDEX_HELP,
};
