/*
 * cmd_help.c - `mlsetup help [COMMAND]`: the top-level help, or one
 * command's usage and options.
 */
#include <stdio.h>

#include "cli.h"

static int cmd_help(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	(void)ctx;
	if (argc < 2) {
		ml_cli_print_help();
		return 0;
	}
	if (argc > 2)
		return ml_cli_usage(&ml_cmd_help, err, "help takes one command name");
	const ml_command *c = ml_cli_find(argv[1]);
	if (!c)
		return ml_cli_usage(&ml_cmd_help, err, "unknown command '%s'", argv[1]);
	ml_cli_print_command_help(c);
	return 0;
}

const ml_command ml_cmd_help = {
        "help",
        cmd_help,
        ML_NEED_NONE,
        "show help for mlsetup or one command",
        "mlsetup help [COMMAND]",
        "",
};
