/*
 * cmd_help.c - `mlsetup help [COMMAND]`: the top-level help, or one
 * command's usage and options.
 */
#include <stdio.h>

#include "cli.h"

struct help_args {
	const ml_command *command; /* NULL: the top-level help */
};

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	(void)ctx;
	struct help_args *a = args;
	if (argc > 2)
		return ml_cli_usage(&ml_cmd_help, err, "help takes one command name");
	if (argc == 2 && !(a->command = ml_cli_find(argv[1])))
		return ml_cli_usage(&ml_cmd_help, err, "unknown command '%s'", argv[1]);
	return 0;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	(void)ctx;
	(void)err;
	const struct help_args *a = args;
	if (a->command)
		ml_cli_print_command_help(a->command);
	else
		ml_cli_print_help();
	return 0;
}

const ml_command ml_cmd_help = {
        "help",
        sizeof(struct help_args),
        parse,
        run,
        ML_NEED_NONE,
        "show help for mlsetup or one command",
        "mlsetup help [COMMAND]",
        "",
};
