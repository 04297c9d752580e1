/*
 * cli.h - the command layer's private interface: the command table entry
 * each cmd_<name>.c defines, the context main() hands every command, and
 * the usage-error helper. Commands use the stages' public headers only.
 */
#ifndef MLSETUP_CLI_H
#define MLSETUP_CLI_H

#include "mlsetup/core.h"
#include "mlsetup/env.h"
#include "mlsetup/out.h"

/* What a command needs main() to provide (apk-tools style). */
enum {
	ML_NEED_NONE = 0,
	/* Reaches the network and cannot do without it: under --offline main()
	 * refuses to run it (usage error). */
	ML_NEED_NET = 1 << 0,
	/* Installs into a target: main() takes the target's lock
	 * (ml_env_lock on ctx->lock_target, waiting unless ctx->lock_no_wait)
	 * before run() and releases it after; run() finds it in ctx->lock. */
	ML_NEED_LOCK = 1 << 1,
	/* Fetches files: from the network, or under --offline from the cache
	 * and local --find-links locations only (main() passes --offline on
	 * in ctx->offline). */
	ML_NEED_FETCH = 1 << 2,
};

/* What main() hands every command: the global options, what parse()
 * asked for, and what main() provided. */
typedef struct ml_ctx {
	const char *sysroot; /* --sysroot DIR: read /proc, /sys, /etc under DIR */
	bool json;           /* --json */
	bool offline;        /* --offline */
	/* set by parse() */
	bool help_shown;         /* --help was shown: nothing to run */
	const char *lock_target; /* ML_NEED_LOCK: the directory to lock */
	bool lock_no_wait;       /* ML_NEED_LOCK: fail at once when it is busy */
	/* provided by main() before run() */
	struct ml_envlock *lock; /* ML_NEED_LOCK: the held lock on lock_target */
} ml_ctx;

typedef struct ml_command {
	const char *name;
	/* Bytes of the command's parsed-arguments struct; main() allocates it
	 * zeroed and hands it to parse() and run(). */
	size_t args_size;
	/* Parses the command's own arguments (argv[0] is the command name)
	 * into args; sets ctx->help_shown after --help, and what the needs
	 * ask for (ctx->lock_target). Returns 0 or ML_EUSAGE with err set. */
	int (*parse)(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err);
	/* Runs the command. Returns 0 or an ML_E* code with err filled;
	 * main() prints err and exits with ml_exit_code(). */
	int (*run)(ml_ctx *ctx, void *args, ml_err *err);
	unsigned needs;      /* ML_NEED_* */
	const char *summary; /* one line for `mlsetup --help` */
	const char *usage;   /* "mlsetup detect [--json] [--target DIR]" */
	const char *options; /* option lines for `mlsetup help <command>` */
} ml_command;

extern const ml_command ml_cmd_detect;
extern const ml_command ml_cmd_help;
extern const ml_command ml_cmd_plan;
extern const ml_command ml_cmd_lock;
extern const ml_command ml_cmd_download;
extern const ml_command ml_cmd_bundle;
extern const ml_command ml_cmd_cache;
extern const ml_command ml_cmd_audit;
extern const ml_command ml_cmd_install;
extern const ml_command ml_cmd_verify;
extern const ml_command ml_cmd_doctor;
extern const ml_command ml_cmd_export;

/* Looks a command up by name; NULL when unknown. */
const ml_command *ml_cli_find(const char *name);
/* Prints a command's full help (usage and options) to stdout. */
void ml_cli_print_command_help(const ml_command *c);
/* Prints the top-level help: commands, global options, exit codes. */
void ml_cli_print_help(void);

/* Records a usage error ("unknown option '--x'") in err and prints the
 * command's usage line to stderr. Returns ML_EUSAGE. */
int ml_cli_usage(const ml_command *c, ml_err *err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Parses a command's options with getopt_long over `longopts`, calling
 * handle(opt, optarg, data) for each; --help/-h prints the command's help
 * and sets *help_shown. Unknown options and missing arguments are usage
 * errors. On success *first_arg is the index of the first operand.
 * Returns 0, ML_EUSAGE, or what handle() returned. */
struct option;
int ml_cli_parse(const ml_command *c, int argc, char **argv, const struct option *longopts,
                 int (*handle)(int opt, const char *arg, void *data, ml_err *err), void *data,
                 int *first_arg, bool *help_shown, ml_err *err);

/* Parses a decimal number option value in [lo, hi] into *out. Returns 0
 * or ML_EUSAGE ("--jobs takes a number from 1 to 256, not 'x'"). */
int ml_cli_number(long *out, const char *arg, long lo, long hi, const char *opt, ml_err *err);

#endif
