/*
 * cmd_export.c - `mlsetup export`: an environment's lock file, as PEP 751
 * (pylock.toml, the default) or as a hashed requirements file, on stdout
 * or into a file, so the same environment can be built elsewhere
 * (`mlsetup install --manifest FILE`, or pip). The work is the library's
 * (ml_install_export).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "mlsetup/install.h"

enum { OPT_TARGET = 't', OPT_OUTPUT = 'o', OPT_FORMAT = 1300 };

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	(void)err;
	ml_install_export_opts *o = data;
	if (opt == OPT_TARGET)
		o->target = arg;
	else if (opt == OPT_OUTPUT)
		o->output = arg;
	else if (opt == OPT_FORMAT)
		o->format = arg;
	return 0;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"output", required_argument, NULL, OPT_OUTPUT},
	        {"format", required_argument, NULL, OPT_FORMAT},
	        {NULL, 0, NULL, 0},
	};
	ml_install_export_opts *o = args;
	ml_install_export_opts init = ML_INSTALL_EXPORT_OPTS_INIT;
	*o = init;
	int first;
	int rc = ml_cli_parse(&ml_cmd_export, argc, argv, opts, on_option, o, &first,
	                      &ctx->help_shown, err);
	if (!rc && !ctx->help_shown && first < argc)
		return ml_cli_usage(&ml_cmd_export, err, "unexpected argument '%s'", argv[first]);
	return rc;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	(void)ctx;
	const ml_install_export_opts *o = args;
	char *text = NULL;
	int rc = ml_install_export(&text, o, err);
	if (!rc && !o->output)
		fputs(text, stdout);
	else if (!rc)
		ml_say("wrote %s", o->output);
	free(text);
	return rc;
}

const ml_command ml_cmd_export = {
        "export",
        sizeof(ml_install_export_opts),
        parse,
        run,
        ML_NEED_NONE,
        "an environment's lock file, as pylock.toml or a hashed requirements file",
        "mlsetup export [--target DIR] [--format pylock|requirements] [-o FILE]",
        "  -t, --target DIR       the environment (default ./.venv)\n"
        "  --format FORMAT        pylock (PEP 751, the default) or requirements (pinned,\n"
        "                         hashed: pip install --require-hashes -r FILE takes it)\n"
        "  -o, --output FILE      write FILE instead of standard output\n",
};
