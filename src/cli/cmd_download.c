/*
 * cmd_download.c - `mlsetup download -r MANIFEST -d DIR`: the pip download
 * analogue. Plans the manifest for this machine (or for --platform /
 * --python), fetches exactly the wheel files the plan chooses into the
 * shared cache, proves each one (size and sha256), and places them in DIR
 * by hard link (or copy), each by rename, with an index.html that makes
 * DIR a PEP 503 --find-links source. --offline uses only the cache and
 * local --find-links directories and lists precisely what is missing.
 *
 * Exit codes: 0, 1 (missing files, bad manifest), 2 (usage), 3
 * (integrity), 4 (network), 6 (no wheel for the platform).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "fetch_ui.h"
#include "index_opts.h"
#include "mlsetup/detect.h"
#include "mlsetup/fetch.h"
#include "mlsetup/plan.h"

enum {
	OPT_REQ = 'r',
	OPT_DEST = 'd',
	OPT_JOBS = 'j',
	OPT_PYTHON = 1200,
	OPT_PLATFORM,
	OPT_CACHE,
	OPT_RETRIES,
	OPT_CONNECT_TIMEOUT,
	OPT_LOW_SPEED_TIME,
	OPT_OFFLINE,
	OPT_NO_PROGRESS,
};

struct dl_args {
	const char *manifest, *dest, *python, *platform, *cache_dir;
	int jobs, retries;
	long connect_timeout, low_speed_time;
	bool offline, no_progress;
	ml_cli_index ix;
};

static int parse_long(long *out, const char *arg, long lo, long hi, const char *opt, ml_err *err)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		return ml_cli_usage(&ml_cmd_download, err,
		                    "%s takes a number from %ld to %ld, not '%s'", opt, lo, hi,
		                    arg);
	*out = v;
	return 0;
}

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct dl_args *a = data;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	long v = 0;
	int rc = 0;
	switch (opt) {
	case OPT_REQ:
		a->manifest = arg;
		break;
	case OPT_DEST:
		a->dest = arg;
		break;
	case OPT_PYTHON:
		a->python = arg;
		break;
	case OPT_PLATFORM:
		a->platform = arg;
		break;
	case OPT_CACHE:
		a->cache_dir = arg;
		break;
	case OPT_JOBS:
		if (!(rc = parse_long(&v, arg, 1, 256, "--jobs", err)))
			a->jobs = (int)v;
		break;
	case OPT_RETRIES:
		if (!(rc = parse_long(&v, arg, 0, 100, "--retries", err)))
			a->retries = (int)v;
		break;
	case OPT_CONNECT_TIMEOUT:
		rc = parse_long(&a->connect_timeout, arg, 1, 3600, "--connect-timeout", err);
		break;
	case OPT_LOW_SPEED_TIME:
		rc = parse_long(&a->low_speed_time, arg, 1, 3600, "--low-speed-time", err);
		break;
	case OPT_OFFLINE:
		a->offline = true;
		break;
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	}
	return rc;
}

/* --platform OS-ARCH: plan for another machine. The same OS and CPU keep
 * the detected libc; anything else is planned for glibc 2.28 (the
 * manylinux_2_28 baseline) on Linux and no libc elsewhere. */
static int apply_platform(ml_machine *m, const char *platform, ml_err *err)
{
	char os[16], arch[16];
	const char *dash = strchr(platform, '-');
	if (!dash || (size_t)(dash - platform) >= sizeof(os) || strlen(dash + 1) >= sizeof(arch))
		goto bad;
	memcpy(os, platform, (size_t)(dash - platform));
	os[dash - platform] = '\0';
	ml_strlcpy(arch, dash + 1, sizeof(arch));
	if (strcmp(arch, "amd64") == 0)
		ml_strlcpy(arch, "x86_64", sizeof(arch));
	if (strcmp(arch, "arm64") == 0)
		ml_strlcpy(arch, "aarch64", sizeof(arch));
	if ((strcmp(os, "linux") && strcmp(os, "windows") && strcmp(os, "darwin")) ||
	    (strcmp(arch, "x86_64") && strcmp(arch, "aarch64")))
		goto bad;
	bool same = strcmp(os, m->os.name) == 0 && strcmp(arch, m->os.arch) == 0;
	ml_strlcpy(m->os.name, os, sizeof(m->os.name));
	ml_strlcpy(m->os.arch, arch, sizeof(m->os.arch));
	if (!same) {
		bool linux = strcmp(os, "linux") == 0;
		ml_strlcpy(m->os.libc_kind, linux ? "glibc" : "", sizeof(m->os.libc_kind));
		ml_strlcpy(m->os.libc_version, linux ? "2.28" : "", sizeof(m->os.libc_version));
	}
	return 0;
bad:
	return ml_cli_usage(&ml_cmd_download, err,
	                    "--platform takes OS-ARCH (linux, windows or darwin; x86_64 or "
	                    "aarch64), not '%s'",
	                    platform);
}

/* A manifest's --find-links entry, relative paths taken from the
 * manifest's directory as pip does. Returns a new string. */
static char *manifest_relative(const char *manifest, const char *loc)
{
	if (strstr(loc, "://") || loc[0] == '/')
		return strdup(loc);
	char *copy = strdup(manifest);
	if (!copy)
		return NULL;
	char *joined = ml_asprintf("%s/%s", dirname(copy), loc);
	free(copy);
	struct stat st;
	if (joined && stat(joined, &st) != 0) {
		free(joined);
		return strdup(loc);
	}
	return joined;
}

/* --- placing files into DIR ------------------------------------------------------ */

static int copy_fd(int in, int out)
{
	char buf[1 << 16];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			off += w;
		}
	}
}

/* Puts the verified blob at dir/name: a hard link when the file system
 * allows, else a copy; either way through a temporary name and rename,
 * so DIR never holds a partial file. *linked says which. */
static int place_file(const char *blob, const char *dir, const char *name, bool *linked,
                      ml_err *err)
{
	char dst[PATH_MAX], tmp[PATH_MAX];
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, name, (long)getpid()) >=
	            (int)sizeof(tmp))
		return ml_err_set(err, ML_EIO, "path too long in '%s'", dir);
	struct stat a, b;
	if (stat(blob, &a) == 0 && stat(dst, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		*linked = true;
		return 0; /* already this very file */
	}
	unlink(tmp);
	if (link(blob, tmp) == 0) {
		*linked = true;
	} else {
		*linked = false;
		int in = open(blob, O_RDONLY | O_CLOEXEC);
		int out = in >= 0 ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
		int rc = (in < 0 || out < 0 || copy_fd(in, out) != 0 || fsync(out) != 0) ? -1 : 0;
		int e = errno;
		if (in >= 0)
			close(in);
		if (out >= 0 && close(out) != 0 && rc == 0) {
			rc = -1;
			e = errno;
		}
		if (rc) {
			unlink(tmp);
			return ml_err_set(err, ML_EIO, "cannot write '%s': %s", dst, strerror(e));
		}
	}
	if (rename(tmp, dst) != 0) {
		int e = errno;
		unlink(tmp);
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", dst, strerror(e));
	}
	return 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (ml_strlcpy(buf, path, sizeof(buf)) >= sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Percent-encodes a file name for an href (RFC 3986 unreserved kept). */
static void href_escape(ml_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			ml_buf_add(b, p, 1);
		else
			ml_buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

static void html_escape(ml_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			ml_buf_puts(b, "&amp;");
			break;
		case '<':
			ml_buf_puts(b, "&lt;");
			break;
		case '>':
			ml_buf_puts(b, "&gt;");
			break;
		case '"':
			ml_buf_puts(b, "&quot;");
			break;
		default:
			ml_buf_add(b, s, 1);
		}
	}
}

static int cmp_downloads(const void *a, const void *b)
{
	const ml_download *x = *(const ml_download *const *)a, *y = *(const ml_download *const *)b;
	return strcmp(x->name, y->name);
}

/* Writes DIR/index.html: a PEP 503 page of the files, with #sha256=
 * fragments, so DIR works as `--find-links DIR/index.html` (and as a
 * directory). */
static int write_index(const char *dir, ml_download *items, size_t n, ml_err *err)
{
	ml_download **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].done)
			v[k++] = &items[i];
	qsort(v, k, sizeof(*v), cmp_downloads);
	ml_buf b = ML_BUF_INIT;
	ml_buf_puts(&b, "<!DOCTYPE html>\n<html>\n  <head>\n"
	                "    <meta name=\"pypi:repository-version\" content=\"1.0\">\n"
	                "    <title>Links for mlsetup download</title>\n  </head>\n  <body>\n");
	for (size_t i = 0; i < k; i++) {
		ml_buf_puts(&b, "    <a href=\"");
		href_escape(&b, v[i]->name);
		ml_buf_printf(&b, "#sha256=%s\">", v[i]->sha256);
		html_escape(&b, v[i]->name);
		ml_buf_puts(&b, "</a><br/>\n");
	}
	int rc = ml_buf_puts(&b, "  </body>\n</html>\n");
	free(v);
	char path[PATH_MAX], tmp[PATH_MAX];
	snprintf(path, sizeof(path), "%s/index.html", dir);
	snprintf(tmp, sizeof(tmp), "%s/.index.html.%ld.tmp", dir, (long)getpid());
	FILE *f = rc ? NULL : fopen(tmp, "w");
	if (!f) {
		ml_buf_release(&b);
		return rc ? ml_err_set(err, ML_ENOMEM, "out of memory")
		          : ml_err_set(err, ML_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	}
	bool ok = fwrite(b.data, 1, b.len, f) == b.len;
	ok = fclose(f) == 0 && ok;
	ml_buf_release(&b);
	if (!ok || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

/* --- output ---------------------------------------------------------------------- */

static const char *status_of(const ml_download *d)
{
	if (d->done)
		return "ok";
	return d->result == ML_ENOENT ? "missing" : "failed";
}

static cJSON *to_json(const struct dl_args *a, const ml_plan *p, const ml_machine *m,
                      const ml_download *items, size_t n, const char *cache_dir, double secs,
                      int rc)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "mlsetup.download/1");
	cJSON_AddBoolToObject(doc, "ok", rc == 0);
	cJSON_AddStringToObject(doc, "manifest", a->manifest);
	char plat[48];
	snprintf(plat, sizeof(plat), "%s-%s", m->os.name, m->os.arch);
	cJSON_AddStringToObject(doc, "platform", plat);
	cJSON_AddStringToObject(doc, "python", p->python.xy);
	cJSON_AddStringToObject(doc, "dest", a->dest);
	cJSON_AddStringToObject(doc, "cache_dir", cache_dir);
	cJSON *files = cJSON_AddArrayToObject(doc, "files");
	uint64_t total = 0, net = 0;
	size_t n_cached = 0, n_ok = 0;
	for (size_t i = 0; i < n; i++) {
		const ml_download *d = &items[i];
		const ml_artifact *art = &p->files[i];
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "name", art->name);
		cJSON_AddStringToObject(f, "version", art->version ? art->version : "");
		cJSON_AddStringToObject(f, "filename", d->name ? d->name : "");
		cJSON_AddStringToObject(f, "sha256", d->sha256);
		cJSON_AddNumberToObject(f, "size", (double)d->size);
		cJSON_AddStringToObject(f, "status", status_of(d));
		cJSON_AddBoolToObject(f, "from_cache", d->from_cache);
		cJSON_AddBoolToObject(f, "repaired", d->repaired);
		cJSON_AddNumberToObject(f, "attempts", d->attempts);
		cJSON_AddNumberToObject(f, "bytes_downloaded", (double)d->bytes);
		if (d->url_used >= 0 && (size_t)d->url_used < d->n_urls) {
			char shown[2048];
			ml_url_redact(shown, sizeof(shown), d->urls[d->url_used]);
			cJSON_AddStringToObject(f, "url", shown);
		} else {
			cJSON_AddNullToObject(f, "url");
		}
		if (d->done) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", a->dest, d->name);
			cJSON_AddStringToObject(f, "path", path);
			cJSON_AddNullToObject(f, "error");
			n_ok++;
			total += d->size > 0 ? (uint64_t)d->size : 0;
			n_cached += d->from_cache;
		} else {
			cJSON_AddNullToObject(f, "path");
			cJSON_AddStringToObject(f, "error", d->err.msg);
		}
		net += d->bytes;
		cJSON_AddItemToArray(files, f);
	}
	cJSON *t = cJSON_AddObjectToObject(doc, "totals");
	cJSON_AddNumberToObject(t, "files", (double)n);
	cJSON_AddNumberToObject(t, "ok", (double)n_ok);
	cJSON_AddNumberToObject(t, "from_cache", (double)n_cached);
	cJSON_AddNumberToObject(t, "bytes", (double)total);
	cJSON_AddNumberToObject(t, "bytes_downloaded", (double)net);
	cJSON_AddNumberToObject(t, "seconds", secs);
	return doc;
}

static void print_human(const struct dl_args *a, const ml_download *items, size_t n, double secs)
{
	uint64_t total = 0, net = 0;
	size_t n_ok = 0, n_cached = 0;
	for (size_t i = 0; i < n; i++) {
		const ml_download *d = &items[i];
		net += d->bytes;
		if (!d->done)
			continue;
		n_ok++;
		n_cached += d->from_cache;
		total += (uint64_t)d->size;
		ml_say("saved %s/%s (%.1f MiB%s)", a->dest, d->name, (double)d->size / 1048576.0,
		       d->from_cache ? ", from cache" : "");
	}
	if (n_ok == n)
		ml_say("%s%zu file%s, %.1f MiB in %s%s (%zu from cache, %.1f MiB downloaded in "
		       "%.1f "
		       "s)",
		       ml_c("green"), n_ok, n_ok == 1 ? "" : "s", (double)total / 1048576.0,
		       a->dest, ml_c("reset"), n_cached, (double)net / 1048576.0, secs);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_download(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        ML_CLI_INDEX_LONGOPTS,
	        {"requirement", required_argument, NULL, OPT_REQ},
	        {"dest", required_argument, NULL, OPT_DEST},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"cache-dir", required_argument, NULL, OPT_CACHE},
	        {"jobs", required_argument, NULL, OPT_JOBS},
	        {"retries", required_argument, NULL, OPT_RETRIES},
	        {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
	        {"low-speed-time", required_argument, NULL, OPT_LOW_SPEED_TIME},
	        {"offline", no_argument, NULL, OPT_OFFLINE},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        {NULL, 0, NULL, 0},
	};
	struct dl_args a = {0};
	a.jobs = 16;
	a.retries = 3;
	a.connect_timeout = 10;
	a.low_speed_time = 30;
	int first;
	bool help;
	int rc =
	        ml_cli_parse(&ml_cmd_download, argc, argv, opts, on_option, &a, &first, &help, err);
	if (rc || help)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_download, err, "unexpected argument '%s'", argv[first]);
	if (!a.manifest)
		return ml_cli_usage(&ml_cmd_download, err, "-r MANIFEST is required");
	if (!a.dest)
		return ml_cli_usage(&ml_cmd_download, err, "-d DIR is required");

	double t0 = mono();
	ml_machine *m = NULL;
	ml_plan *p = NULL;
	ml_index_config *cfg = NULL;
	ml_cache *cache = NULL;
	ml_download *items = NULL;
	size_t n = 0;
	char *extra_fl[ML_CLI_INDEX_MAX] = {0};
	ml_fetch_ui pc = {NULL, "downloading", {{0}}};
	char cache_dir[PATH_MAX];

	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = ".";
	d.no_smi = true;
	if ((rc = ml_detect(&m, &d, err)) != 0)
		goto out;
	if (a.platform && (rc = apply_platform(m, a.platform, err)) != 0)
		goto out;

	ml_plan_opts po = ML_PLAN_OPTS_INIT;
	po.manifest = a.manifest;
	po.python = a.python;
	po.cache_dir = a.cache_dir;
	po.offline = a.offline;
	po.target = a.dest;
	if ((rc = ml_plan_make(&p, m, &po, err)) != 0)
		goto out;
	if (!p->selection->manifest) {
		rc = ml_err_set(err, ML_EUNSUPPORTED, "manifest '%s' does not fit: %s", a.manifest,
		                p->selection->problem);
		ml_err_hint(err, "%s", p->selection->remedy);
		goto out;
	}
	for (size_t i = 0; i < p->selection->n_warnings; i++)
		ml_verbose("%s", p->selection->warnings[i]);
	n = p->n_files;

	/* index sources: flags, environment, pip config, then the manifest */
	const ml_requirements *reqs = p->selection->manifest->reqs;
	ml_cli_index ix = a.ix;
	for (size_t i = 0; i < reqs->n_find_links && ix.n_find_links < ML_CLI_INDEX_MAX; i++) {
		if (!(extra_fl[i] = manifest_relative(a.manifest, reqs->find_links[i]))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		ix.find_links[ix.n_find_links++] = extra_fl[i];
	}
	for (size_t i = 0; i < reqs->n_trusted && ix.n_trusted < ML_CLI_INDEX_MAX; i++)
		ix.trusted[ix.n_trusted++] = reqs->trusted_hosts[i];
	if (reqs->no_index)
		ix.no_index = ix.no_index || !ix.index_url;
	ml_index_flags flags;
	ml_cli_index_flags(&ix, &flags);
	flags.command = "download";
	rc = ml_index_config_resolve(&cfg, &flags, reqs->index_url, reqs->extra_index_urls,
	                             reqs->n_extra, NULL, err);
	if (rc == ML_ENOENT && a.offline) {
		flags.no_index = true; /* offline needs no index */
		rc = ml_index_config_resolve(&cfg, &flags, NULL, NULL, 0, NULL, err);
	}
	if (rc)
		goto out;

	if (ml_cache_dir(cache_dir, sizeof(cache_dir), a.cache_dir) != 0) {
		rc = ml_err_set(err, ML_EFAIL, "no cache directory: HOME is not set");
		ml_err_hint(err, "pass --cache-dir DIR or set MLSETUP_CACHE_DIR");
		goto out;
	}
	if ((rc = ml_cache_open(&cache, cache_dir, ML_CACHE_SHARED, err)) != 0)
		goto out;

	ml_fetch_opts fo = ML_FETCH_OPTS_INIT;
	fo.jobs = a.jobs;
	fo.retries = a.retries;
	fo.connect_timeout_s = a.connect_timeout;
	fo.low_speed_time_s = a.low_speed_time;
	fo.trusted_hosts = cfg->trusted_hosts;
	fo.n_trusted = cfg->n_trusted;
	fo.cert = cfg->cert;
	fo.offline = a.offline;
	fo.on_progress = ml_fetch_ui_progress;
	fo.progress_data = &pc;
	pc.display = ml_progress_new(!a.no_progress);

	items = calloc(n ? n : 1, sizeof(*items));
	if (!items) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	rc = ml_fetch_resolve(items, p, cfg, cache, &fo, err);
	if (rc == 0)
		rc = ml_fetch_all(items, n, cache, &fo, err);
	ml_progress_finish(pc.display);
	pc.display = NULL;

	if (rc == 0 || rc == ML_ENOENT || rc == ML_EINTEGRITY || rc == ML_ENET) {
		/* place what we have, even after a partial failure */
		ml_err e2 = ML_ERR_INIT;
		int prc = 0;
		bool any = false;
		for (size_t i = 0; i < n; i++)
			any = any || items[i].done;
		if (any && mkdir_p(a.dest) != 0)
			prc = ml_err_set(&e2, ML_EIO, "cannot create '%s': %s", a.dest,
			                 strerror(errno));
		for (size_t i = 0; !prc && i < n; i++) {
			bool linked;
			if (items[i].done)
				prc = place_file(items[i].path, a.dest, items[i].name, &linked,
				                 &e2);
		}
		if (!prc && any && rc == 0)
			prc = write_index(a.dest, items, n, &e2);
		if (prc && rc == 0) {
			*err = e2;
			rc = prc;
		}
	}

	size_t n_bad = 0;
	for (size_t i = 0; i < n; i++)
		n_bad += !items[i].done && items[i].result;
	if (n_bad > 1 || (n_bad == 1 && rc == 0))
		for (size_t i = 0; i < n; i++)
			if (!items[i].done && items[i].result &&
			    strcmp(items[i].err.msg, err->msg) != 0) /* main() prints that one */
				fprintf(stderr, "%s: %s\n",
				        items[i].result == ML_ENOENT ? "missing" : "error",
				        items[i].err.msg);
	double secs = mono() - t0;
	if (ctx->json) {
		cJSON *doc = to_json(&a, p, m, items, n, cache_dir, secs, rc);
		int jrc = doc ? ml_out_json(doc) : ML_ENOMEM;
		cJSON_Delete(doc);
		if (jrc && !rc)
			rc = ml_err_set(err, jrc, "cannot write the JSON document");
	} else if (rc == 0) {
		print_human(&a, items, n, secs);
	}
	for (size_t i = 0; i < n; i++)
		if (items[i].repaired && items[i].done)
			ml_warn("the cached copy of '%s' was corrupted; it was removed and fetched "
			        "again",
			        items[i].name);
out:
	ml_progress_finish(pc.display);
	for (size_t i = 0; items && i < n; i++)
		ml_download_release(&items[i]);
	free(items);
	for (size_t i = 0; i < ML_CLI_INDEX_MAX; i++)
		free(extra_fl[i]);
	ml_cache_close(cache);
	ml_index_config_free(cfg);
	ml_plan_free(p);
	ml_machine_free(m);
	return rc;
}

const ml_command ml_cmd_download = {
        "download",
        cmd_download,
        ML_NEED_NET,
        "fetch and verify a manifest's wheels into a directory (pip download analogue)",
        "mlsetup download -r MANIFEST -d DIR [index options] [--python X.Y] [--platform OS-ARCH] "
        "[--offline] [--json]",
        "  -r, --requirement MANIFEST  the pinned, hashed manifest (mlsetup lock output)\n"
        "  -d, --dest DIR          where the wheels go; DIR/index.html makes it a\n"
        "                          PEP 503 --find-links source\n"
        "  --python X.Y            plan for this CPython version (default: python.json's)\n"
        "  --platform OS-ARCH      plan for another platform: linux-x86_64, linux-aarch64,\n"
        "                          windows-x86_64, darwin-aarch64 ... (glibc 2.28 when the\n"
        "                          OS or CPU differs from this machine's)\n" ML_CLI_INDEX_HELP
        "  --cache-dir DIR         the shared download cache (default: MLSETUP_CACHE_DIR,\n"
        "                          XDG_CACHE_HOME/mlsetup, ~/.cache/mlsetup)\n"
        "  -j, --jobs N            transfers at once (default 16)\n"
        "  --retries N             extra requests per source after a retryable failure\n"
        "                          (default 3)\n"
        "  --connect-timeout S     seconds to wait for a connection (default 10)\n"
        "  --low-speed-time S      abandon a transfer below 1 byte/s for S seconds\n"
        "                          (default 30)\n"
        "  --offline               use only the cache and local --find-links; list what is\n"
        "                          missing\n"
        "  --no-progress           no progress display\n",
};
