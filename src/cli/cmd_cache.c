/*
 * cmd_cache.c - `mlsetup cache dir|info|clean|prune|verify`: shows and
 * maintains the shared download cache. `prune --days N` removes what no
 * manifest or environment used in N days (every use of a blob sets its
 * modification time); `clean` removes everything; both wait for no other
 * process and refuse while one uses the cache. `verify` re-hashes every
 * blob and removes the ones that no longer match (exit 3 when it found
 * any).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mlsetup/fetch.h"

enum { OPT_CACHE = 1300, OPT_DAYS };

struct cache_args {
	const char *cache_dir;
	long days;
	const char *action; /* dir, info, clean, prune or verify */
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct cache_args *a = data;
	if (opt == OPT_CACHE) {
		a->cache_dir = arg;
	} else if (opt == OPT_DAYS) {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > 36500)
			return ml_cli_usage(&ml_cmd_cache, err,
			                    "--days takes a number of days (0 to 36500), not '%s'",
			                    arg);
		a->days = v;
	}
	return 0;
}

static void add_stats(cJSON *obj, const char *key, const ml_cache_stats *s)
{
	cJSON *o = cJSON_AddObjectToObject(obj, key);
	cJSON_AddNumberToObject(o, "blobs", (double)s->blobs);
	cJSON_AddNumberToObject(o, "blob_bytes", (double)s->blob_bytes);
	cJSON_AddNumberToObject(o, "index_pages", (double)s->pages);
	cJSON_AddNumberToObject(o, "index_bytes", (double)s->page_bytes);
	cJSON_AddNumberToObject(o, "partial_files", (double)s->parts);
	cJSON_AddNumberToObject(o, "partial_bytes", (double)s->part_bytes);
	cJSON_AddNumberToObject(o, "unpacked_wheels", (double)s->unpacked);
	cJSON_AddNumberToObject(o, "unpacked_bytes", (double)s->unpacked_bytes);
}

static double mib(uint64_t b)
{
	return (double)b / 1048576.0;
}

static int emit(const char *action, const char *dir, const char *key, const ml_cache_stats *s,
                const ml_cache_stats *s2, const char *key2)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return ML_ENOMEM;
	cJSON_AddStringToObject(doc, "schema", "mlsetup.cache/1");
	cJSON_AddStringToObject(doc, "action", action);
	cJSON_AddStringToObject(doc, "cache_dir", dir);
	if (s)
		add_stats(doc, key, s);
	if (s2)
		add_stats(doc, key2, s2);
	int rc = ml_out_json(doc);
	cJSON_Delete(doc);
	return rc;
}

static int parse(ml_ctx *ctx, void *args, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"cache-dir", required_argument, NULL, OPT_CACHE},
	        {"days", required_argument, NULL, OPT_DAYS},
	        {NULL, 0, NULL, 0},
	};
	struct cache_args *a = args;
	a->days = 30;
	int first;
	int rc = ml_cli_parse(&ml_cmd_cache, argc, argv, opts, on_option, a, &first,
	                      &ctx->help_shown, err);
	if (rc || ctx->help_shown)
		return rc;
	if (first >= argc)
		return ml_cli_usage(&ml_cmd_cache, err,
		                    "say what to do: dir, info, clean, prune or "
		                    "verify");
	a->action = argv[first];
	if (first + 1 < argc)
		return ml_cli_usage(&ml_cmd_cache, err, "unexpected argument '%s'",
		                    argv[first + 1]);
	return 0;
}

static int run(ml_ctx *ctx, void *args, ml_err *err)
{
	const struct cache_args *a = args;
	const char *action = a->action;
	bool is_dir = strcmp(action, "dir") == 0, is_info = strcmp(action, "info") == 0,
	     is_clean = strcmp(action, "clean") == 0, is_prune = strcmp(action, "prune") == 0,
	     is_verify = strcmp(action, "verify") == 0;
	if (!is_dir && !is_info && !is_clean && !is_prune && !is_verify)
		return ml_cli_usage(&ml_cmd_cache, err, "unknown cache action '%s'", action);
	int rc;

	char dir[PATH_MAX];
	if (ml_cache_dir(dir, sizeof(dir), a->cache_dir) != 0) {
		ml_err_set(err, ML_EFAIL, "no cache directory: HOME is not set");
		ml_err_hint(err, "pass --cache-dir DIR or set MLSETUP_CACHE_DIR");
		return ML_EFAIL;
	}
	if (is_dir) {
		if (ctx->json)
			return emit("dir", dir, NULL, NULL, NULL, NULL);
		printf("%s\n", dir);
		return 0;
	}
	ml_cache *c = NULL;
	rc = ml_cache_open(&c, dir, is_clean || is_prune ? ML_CACHE_EXCLUSIVE : ML_CACHE_SHARED,
	                   err);
	if (rc)
		return rc;
	ml_cache_stats s = {0}, s2 = {0};
	if (is_info) {
		rc = ml_cache_stats_get(&s, c, err);
		if (!rc && ctx->json) {
			rc = emit("info", dir, "contents", &s, NULL, NULL);
		} else if (!rc) {
			ml_say("cache     %s", dir);
			ml_say("files     %llu (%.1f MiB)", (unsigned long long)s.blobs,
			       mib(s.blob_bytes));
			ml_say("index     %llu pages (%.1f MiB)", (unsigned long long)s.pages,
			       mib(s.page_bytes));
			ml_say("partial   %llu downloads in progress (%.1f MiB)",
			       (unsigned long long)s.parts, mib(s.part_bytes));
			ml_say("unpacked  %llu wheels (%.1f MiB)", (unsigned long long)s.unpacked,
			       mib(s.unpacked_bytes));
		}
	} else if (is_clean || is_prune) {
		rc = is_clean ? ml_cache_clean(c, &s, err)
		              : ml_cache_prune(c, (unsigned)a->days, &s, err);
		if (!rc && ctx->json) {
			rc = emit(action, dir, "removed", &s, NULL, NULL);
		} else if (!rc) {
			ml_say("removed %llu files (%.1f MiB), %llu unpacked wheels (%.1f MiB) and "
			       "%llu index pages from %s",
			       (unsigned long long)(s.blobs + s.parts),
			       mib(s.blob_bytes + s.part_bytes), (unsigned long long)s.unpacked,
			       mib(s.unpacked_bytes), (unsigned long long)s.pages, dir);
		}
	} else {
		rc = ml_cache_verify(c, &s, &s2, err);
		if (!rc && ctx->json)
			rc = emit("verify", dir, "checked", &s, &s2, "removed");
		else if (!rc)
			ml_say("checked %llu files (%.1f MiB): %llu corrupted and removed",
			       (unsigned long long)s.blobs, mib(s.blob_bytes),
			       (unsigned long long)s2.blobs);
		if (!rc && s2.blobs) {
			rc = ml_err_set(
			        err, ML_EINTEGRITY,
			        "%llu cached files did not match their sha256 and were removed",
			        (unsigned long long)s2.blobs);
			ml_err_hint(err,
			            "they will be downloaded again when needed; check the disk "
			            "if this repeats");
		}
	}
	ml_cache_close(c);
	return rc;
}

const ml_command ml_cmd_cache = {
        "cache",
        sizeof(struct cache_args),
        parse,
        run,
        ML_NEED_NONE,
        "show or maintain the download cache (dir, info, clean, prune, verify)",
        "mlsetup cache dir|info|clean|prune|verify [--days N] [--cache-dir DIR] [--json]",
        "  dir                 print the cache directory\n"
        "  info                what the cache holds: files, index pages, partial downloads\n"
        "  clean               remove everything (refused while another mlsetup uses it)\n"
        "  prune               remove what no manifest or environment used in --days days\n"
        "  verify              re-hash every cached file; remove those that do not match\n"
        "                      (exit 3 when any were found)\n"
        "  --days N            for prune: unused for more than N days (default 30)\n"
        "  --cache-dir DIR     the cache (default: MLSETUP_CACHE_DIR, XDG_CACHE_HOME/mlsetup,\n"
        "                      ~/.cache/mlsetup)\n",
};
