/*
 * main.c - mlsetup's entry point: the command table, global options
 * (--json, -q, -v, --color, --sysroot, --help, --version), dispatch, and
 * the exit code. main() provides what each command declares it needs:
 * the target's lock (ML_NEED_LOCK), a refusal under --offline
 * (ML_NEED_NET). After every command stdout is flushed and closed, and a
 * write error fails the run (so a full disk or a closed pipe is noticed).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/version.h"

static const ml_command *const commands[] = {
        &ml_cmd_detect, &ml_cmd_plan,   &ml_cmd_install, &ml_cmd_download,
        &ml_cmd_bundle, &ml_cmd_verify, &ml_cmd_audit,   &ml_cmd_doctor,
        &ml_cmd_lock,   &ml_cmd_export, &ml_cmd_cache,   &ml_cmd_help,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct {
	int code;
	const char *meaning;
} exit_codes[] = {
        {ML_EXIT_OK, "success"},
        {ML_EXIT_FAILED, "failed"},
        {ML_EXIT_USAGE, "usage error (unknown command or option)"},
        {ML_EXIT_INTEGRITY, "integrity: hash or size mismatch, archive refused"},
        {ML_EXIT_NETWORK, "network failure"},
        {ML_EXIT_GPU, "a GPU check failed"},
        {ML_EXIT_UNSUPPORTED, "unsupported system: driver too old, no manifest fits"},
};

static const char global_options[] =
        "  --json              machine-readable output on stdout (schema mlsetup.<command>/1)\n"
        "  -q, --quiet         print only errors\n"
        "  -v, --verbose       print more detail on stderr\n"
        "  --color=WHEN        colour output: auto (default), always, never\n"
        "  --sysroot DIR       read /proc, /sys and /etc under DIR (captured bundles)\n"
        "  --offline           use only the cache and local --find-links; commands that\n"
        "                      need the network refuse to run\n"
        "  -h, --help          show help; `mlsetup help COMMAND` for one command\n"
        "  --version           show version, git commit and library versions\n";

const ml_command *ml_cli_find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

void ml_cli_print_help(void)
{
	printf("mlsetup %s - turn a GPU machine into a working, verified PyTorch environment\n\n",
	       ML_VERSION);
	printf("usage: mlsetup [global options] <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		printf("  %-10s %s\n", commands[i]->name, commands[i]->summary);
	printf("\nglobal options:\n%s\nexit codes:\n", global_options);
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++)
		printf("  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
}

void ml_cli_print_command_help(const ml_command *c)
{
	printf("usage: %s\n\n%s\n", c->usage, c->summary);
	if (c->options && *c->options)
		printf("\noptions:\n%s", c->options);
	printf("\nglobal options:\n%s", global_options);
}

static void print_usage_line(FILE *f)
{
	fprintf(f, "usage: mlsetup [global options] <command> [options]\n");
	fprintf(f, "commands:");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, " %s", commands[i]->name);
	fprintf(f, "\nsee 'mlsetup --help'\n");
}

int ml_cli_usage(const ml_command *c, ml_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ml_err_set(err, ML_EUSAGE, "%s", msg);
	ml_err_hint(err, "usage: %s; see 'mlsetup help %s'", c->usage, c->name);
	return ML_EUSAGE;
}

int ml_cli_parse(const ml_command *c, int argc, char **argv, const struct option *longopts,
                 int (*handle)(int opt, const char *arg, void *data, ml_err *err), void *data,
                 int *first_arg, bool *help_shown, ml_err *err)
{
	*help_shown = false;
	/* Build ":h" plus the short options from longopts' val fields. */
	char shortopts[64] = ":h";
	size_t sl = strlen(shortopts);
	for (const struct option *o = longopts; o && o->name && sl + 3 < sizeof(shortopts); o++) {
		if (o->val > 0 && o->val < 128 && o->val != 'h' && !o->flag) {
			shortopts[sl++] = (char)o->val;
			if (o->has_arg == required_argument)
				shortopts[sl++] = ':';
		}
	}
	shortopts[sl] = '\0';
	struct option all[64];
	size_t n = 0;
	for (const struct option *o = longopts; o && o->name; o++) {
		if (n + 2 >= sizeof(all) / sizeof(all[0])) /* a table this long is a bug */
			return ml_err_set(err, ML_EFAIL,
			                  "internal error: '%s' has more than %zu options", c->name,
			                  sizeof(all) / sizeof(all[0]) - 2);
		all[n++] = *o;
	}
	all[n++] = (struct option){"help", no_argument, NULL, 'h'};
	all[n] = (struct option){NULL, 0, NULL, 0};

	optind = 1;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		if (opt == 'h') {
			ml_cli_print_command_help(c);
			*help_shown = true;
			return 0;
		}
		if (opt == '?')
			return ml_cli_usage(c, err, "unknown option '%s'", argv[optind - 1]);
		if (opt == ':')
			return ml_cli_usage(c, err, "option '%s' needs a value", argv[optind - 1]);
		int rc = handle(opt, optarg, data, err);
		if (rc)
			return rc;
	}
	*first_arg = optind;
	return 0;
}

int ml_cli_number(long *out, const char *arg, long lo, long hi, const char *opt, ml_err *err)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (!errno && end != arg && !*end && v >= lo && v <= hi) {
		*out = v;
		return 0;
	}
	if (hi == LONG_MAX)
		return ml_err_set(err, ML_EUSAGE, "%s takes a number >= %ld, not '%s'", opt, lo,
		                  arg);
	return ml_err_set(err, ML_EUSAGE, "%s takes a number from %ld to %ld, not '%s'", opt, lo,
	                  hi, arg);
}

static int print_version(bool json)
{
	ml_kvs libs;
	ml_version_libraries(&libs);
	if (json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "schema", "mlsetup.version/1");
		cJSON_AddStringToObject(doc, "version", ML_VERSION);
		cJSON_AddStringToObject(doc, "commit", ml_version_commit());
		/* "build" says how the binary was made; the rest are libraries. */
		cJSON *l = cJSON_CreateObject();
		for (size_t i = 0; i < libs.n; i++)
			cJSON_AddStringToObject(strcmp(libs.items[i].key, "build") == 0 ? doc : l,
			                        libs.items[i].key, libs.items[i].value);
		cJSON_AddItemToObject(doc, "libraries", l);
		int rc = ml_out_json(doc);
		cJSON_Delete(doc);
		return rc;
	}
	printf("mlsetup %s (commit %s)\n", ML_VERSION, ml_version_commit());
	for (size_t i = 0; i < libs.n; i++)
		printf("  %-10s %s\n", libs.items[i].key, libs.items[i].value);
	return 0;
}

enum { OPT_COLOR = 256, OPT_SYSROOT, OPT_VERSION, OPT_JSON };

/* Moves global options out of argv (anywhere before "--"), leaving the
 * command and its own options in order. Returns 0 or ML_EUSAGE. */
static int take_global_options(int *argc, char **argv, ml_out_opts *out, ml_ctx *ctx,
                               bool *want_help, bool *want_version, ml_err *err)
{
	int w = 1;
	bool after_dashdash = false;
	for (int r = 1; r < *argc; r++) {
		const char *a = argv[r];
		if (after_dashdash || a[0] != '-') {
			argv[w++] = argv[r];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			after_dashdash = true;
			argv[w++] = argv[r];
		} else if (strcmp(a, "--json") == 0) {
			out->json = ctx->json = true;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			out->verbosity = -1;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			out->verbosity = out->verbosity < 0 ? 1 : out->verbosity + 1;
		} else if (ml_startswith(a, "--color=") || strcmp(a, "--color") == 0) {
			const char *v = a[7] == '=' ? a + 8 : (r + 1 < *argc ? argv[++r] : "");
			if (strcmp(v, "auto") == 0)
				out->color = ML_COLOR_AUTO;
			else if (strcmp(v, "always") == 0)
				out->color = ML_COLOR_ALWAYS;
			else if (strcmp(v, "never") == 0)
				out->color = ML_COLOR_NEVER;
			else
				return ml_err_set(err, ML_EUSAGE,
				                  "--color takes auto, always or never, not '%s'",
				                  v);
		} else if (ml_startswith(a, "--sysroot=")) {
			ctx->sysroot = a + 10;
		} else if (strcmp(a, "--sysroot") == 0) {
			if (r + 1 >= *argc)
				return ml_err_set(err, ML_EUSAGE, "--sysroot needs a directory");
			ctx->sysroot = argv[++r];
		} else if (strcmp(a, "--offline") == 0) {
			ctx->offline = true;
		} else if (strcmp(a, "--version") == 0) {
			*want_version = true;
		} else if ((strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) && w == 1) {
			*want_help = true; /* before the command: top-level help */
		} else {
			argv[w++] = argv[r];
		}
	}
	*argc = w;
	argv[w] = NULL;
	return 0;
}

/* Parses the command's arguments, provides what it needs, runs it. */
static int run_command(const ml_command *c, ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	void *args = calloc(1, c->args_size ? c->args_size : 1);
	if (!args)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = c->parse(ctx, args, argc, argv, err);
	if (rc || ctx->help_shown)
		goto out;
	if ((c->needs & ML_NEED_NET) && ctx->offline) {
		ml_err_set(err, ML_EUSAGE, "'%s' needs the network, and --offline was given",
		           c->name);
		ml_err_hint(err, "run it without --offline");
		rc = ML_EUSAGE;
		goto out;
	}
	if ((c->needs & ML_NEED_LOCK) && !ctx->lock_later &&
	    (rc = ml_env_lock(&ctx->lock, ctx->lock_target ? ctx->lock_target : ".venv",
	                      !ctx->lock_no_wait, err)) != 0)
		goto out;
	rc = c->run(ctx, args, err);
out:
	if (rc == ML_EUSAGE && !err->hint[0])
		ml_err_hint(err, "usage: %s; see 'mlsetup help %s'", c->usage, c->name);
	ml_env_unlock(ctx->lock);
	ctx->lock = NULL;
	free(args);
	return rc;
}

int main(int argc, char **argv)
{
	ml_out_opts oo = {false, 0, ML_COLOR_AUTO};
	ml_ctx ctx = {0};
	ml_err err = ML_ERR_INIT;
	bool want_help = false, want_version = false;
	if (ml_os_init(&argc, &argv) != 0) {
		fprintf(stderr, "error: out of memory\n");
		return ML_EXIT_FAILED;
	}
	int rc = take_global_options(&argc, argv, &oo, &ctx, &want_help, &want_version, &err);
	ml_out_setup(&oo);
	if (rc) {
		ml_report_error(&err);
		print_usage_line(stderr);
		return ML_EXIT_USAGE;
	}
	if (want_version) {
		rc = print_version(ctx.json);
	} else if (want_help || argc < 2) {
		if (argc < 2 && !want_help) {
			print_usage_line(stderr);
			return ML_EXIT_USAGE;
		}
		ml_cli_print_help();
	} else {
		const ml_command *c = ml_cli_find(argv[1]);
		if (!c) {
			fprintf(stderr, "error: unknown command '%s'\n", argv[1]);
			print_usage_line(stderr);
			return ML_EXIT_USAGE;
		}
		rc = run_command(c, &ctx, argc - 1, argv + 1, &err);
		ml_live_stop(); /* the error goes below whatever the command drew */
		if (rc) {
			if (!err.code)
				ml_err_set(&err, rc, "%s failed", c->name);
			ml_report_error(&err);
		}
	}
	int frc = ml_out_finish();
	if (frc && !rc) {
		fprintf(stderr, "error: cannot write to standard output\n");
		rc = frc;
	}
	return ml_exit_code(rc);
}

int ml_cli_manifest_option(const char **list, size_t *n, const char **single, const char *arg,
                           ml_err *err)
{
	if (*n >= ML_CLI_MANIFEST_MAX)
		return ml_err_set(err, ML_EUSAGE, "at most %d --manifest options",
		                  ML_CLI_MANIFEST_MAX);
	list[(*n)++] = arg;
	*single = *n == 1 ? arg : NULL;
	return 0;
}
