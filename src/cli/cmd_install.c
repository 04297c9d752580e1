/*
 * cmd_install.c - `mlsetup install`: detect -> plan -> fetch -> build ->
 * verify -> report. Strings the stages together: the plan chooses the
 * manifest and every wheel; fetch proves every byte into the cache; the
 * env stage unpacks each wheel once into the cache, links it into a venv
 * assembled in a staging directory beside the target and swaps it into
 * place atomically; verify imports every top-level package with the
 * environment's interpreter; the report goes to <target>/mlsetup-report.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "mlsetup/env.h"
#include "mlsetup/detect.h"
#include "mlsetup/fetch.h"
#include "mlsetup/plan.h"
#include "mlsetup/verify.h"
#include "verify_run.h"

enum {
	OPT_MANIFEST = 'm',
	OPT_TARGET = 't',
	OPT_JOBS = 'j',
	OPT_PYTHON = 1200,
	OPT_CACHE,
	OPT_OFFLINE,
	OPT_PINS,
	OPT_MIRROR,
	OPT_RETRIES,
	OPT_CONNECT_TIMEOUT,
	OPT_LOW_SPEED_TIME,
	OPT_NO_PROGRESS,
	OPT_NO_WAIT,
	OPT_NO_VERIFY,
	OPT_REQUIRE_GPU,
	OPT_COMPILE,
	OPT_LINK,
	OPT_FORCE,
	OPT_REINSTALL,
};

struct install_args {
	ml_plan_opts po;
	ml_cli_index ix;
	const char *python_mirror;
	const char *link;
	int jobs, retries;
	long connect_timeout, low_speed_time;
	bool no_progress, no_wait, no_verify, require_gpu, compile_bytecode, force, reinstall;
	ml_framework_opts fo;
};

static int parse_long(long *out, const char *arg, long min, const char *opt, ml_err *err)
{
	char *end = NULL;
	long v = strtol(arg, &end, 10);
	if (!*arg || *end || v < min)
		return ml_err_set(err, ML_EUSAGE, "%s takes a number >= %ld, not '%s'", opt, min,
		                  arg);
	*out = v;
	return 0;
}

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct install_args *a = data;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (!r)
		r = ml_verify_option(&a->fo, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	long v = 0;
	switch (opt) {
	case OPT_MANIFEST:
		a->po.manifest = arg;
		break;
	case OPT_TARGET:
		a->po.target = arg;
		break;
	case OPT_PYTHON:
		a->po.python = arg;
		break;
	case OPT_CACHE:
		a->po.cache_dir = arg;
		break;
	case OPT_OFFLINE:
		a->po.offline = true;
		break;
	case OPT_PINS:
		a->po.python_pins = arg;
		break;
	case OPT_MIRROR:
		a->python_mirror = arg;
		break;
	case OPT_LINK:
		a->link = arg;
		break;
	case OPT_JOBS:
	case OPT_RETRIES:
	case OPT_CONNECT_TIMEOUT:
	case OPT_LOW_SPEED_TIME: {
		const char *names[] = {"--jobs", "--retries", "--connect-timeout",
		                       "--low-speed-time"};
		int i = opt == OPT_JOBS              ? 0
		        : opt == OPT_RETRIES         ? 1
		        : opt == OPT_CONNECT_TIMEOUT ? 2
		                                     : 3;
		if (parse_long(&v, arg, i == 1 ? 0 : 1, names[i], err))
			return ML_EUSAGE;
		if (opt == OPT_JOBS)
			a->jobs = (int)v;
		else if (opt == OPT_RETRIES)
			a->retries = (int)v;
		else if (opt == OPT_CONNECT_TIMEOUT)
			a->connect_timeout = v;
		else
			a->low_speed_time = v;
		break;
	}
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	case OPT_NO_WAIT:
		a->no_wait = true;
		break;
	case OPT_NO_VERIFY:
		a->no_verify = true;
		break;
	case OPT_REQUIRE_GPU:
		a->require_gpu = true;
		break;
	case OPT_COMPILE:
		a->compile_bytecode = true;
		break;
	case OPT_FORCE:
		a->force = true;
		break;
	case OPT_REINSTALL:
		a->reinstall = true;
		break;
	}
	return 0;
}

/* --- timing and counters ------------------------------------------------------ */

enum { ST_DETECT, ST_PLAN, ST_FETCH, ST_INTERPRETER, ST_INSTALL, ST_VERIFY, ST_N };
static const char *const stage_names[ST_N] = {"detect",      "plan",    "fetch",
                                              "interpreter", "install", "verify"};

typedef struct install_run {
	struct install_args *a;
	ml_machine *m;
	ml_plan *plan;
	ml_cache *cache;
	ml_index_config *cfg;
	ml_envlock *lock;
	ml_env_stage *stage;
	ml_download *items;
	ml_wheel_result *results;
	ml_python_info py;
	char interpreter[4096];
	bool interpreter_cached;
	double t[ST_N];
	uint64_t n_downloaded, bytes_downloaded, n_from_cache;
	cJSON *verification;
	bool verified_ok;
	cJSON *preaudit;    /* the audit of the downloaded wheels, or NULL */
	ml_verify_run vrun; /* the GPU checks, when the environment has torch */
	bool vrun_done;
	bool up_to_date; /* the target already is exactly this plan */
} install_run;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the interpreter -------------------------------------------------------------- */

/* Replaces the release host prefix of a python-build-standalone URL with
 * the mirror: everything up to ".../releases/download" (or, for other
 * URLs, the scheme and host). */
static int mirror_url(char *dst, size_t sz, const char *url, const char *mirror)
{
	if (!mirror || !*mirror)
		return snprintf(dst, sz, "%s", url) < (int)sz ? 0 : ML_EFAIL;
	size_t ml = strlen(mirror);
	while (ml && mirror[ml - 1] == '/')
		ml--;
	const char *rest = strstr(url, "/releases/download/");
	if (rest) {
		rest += strlen("/releases/download");
	} else {
		const char *host = strstr(url, "://");
		rest = host ? strchr(host + 3, '/') : NULL;
		if (!rest)
			rest = "";
	}
	int n = snprintf(dst, sz, "%.*s%s", (int)ml, mirror, rest);
	return n > 0 && (size_t)n < sz ? 0 : ML_EFAIL;
}

static void fetch_opts_for(ml_fetch_opts *fo, const install_run *r, ml_fetch_ui *ui)
{
	ml_fetch_opts d = ML_FETCH_OPTS_INIT;
	*fo = d;
	if (r->a->jobs > 0)
		fo->jobs = r->a->jobs;
	fo->retries = r->a->retries;
	if (r->a->connect_timeout > 0)
		fo->connect_timeout_s = r->a->connect_timeout;
	if (r->a->low_speed_time > 0)
		fo->low_speed_time_s = r->a->low_speed_time;
	fo->trusted_hosts = r->cfg ? r->cfg->trusted_hosts : NULL;
	fo->n_trusted = r->cfg ? r->cfg->n_trusted : 0;
	fo->cert = r->cfg ? r->cfg->cert : NULL;
	fo->offline = r->a->po.offline;
	fo->on_progress = ui ? ml_fetch_ui_progress : NULL;
	fo->progress_data = ui;
}

/* The interpreter the environment is built on: --python PATH as is, or the
 * pinned python-build-standalone archive, fetched and verified like every
 * wheel and unpacked once into the shared interpreter directory. */
static int ensure_interpreter(install_run *r, ml_err *err)
{
	const ml_python_plan *pp = &r->plan->python;
	if (pp->path) {
		ml_strlcpy(r->interpreter, pp->path, sizeof(r->interpreter));
		return ml_python_probe(&r->py, r->interpreter, err);
	}
	char dir[4096], marker[4400];
	int rc = ml_python_dir(dir, sizeof(dir), NULL);
	if (rc)
		return ml_err_set(err, ML_EFAIL,
		                  "no directory for interpreters: set XDG_DATA_HOME or HOME");
	if (snprintf(marker, sizeof(marker), "%s/%s/.mlsetup-complete", dir, pp->pin_name) >=
	            (int)sizeof(marker) ||
	    snprintf(r->interpreter, sizeof(r->interpreter), "%s/%s/python/bin/python3", dir,
	             pp->pin_name) >= (int)sizeof(r->interpreter))
		return ml_err_set(err, ML_EFAIL, "interpreter directory path too long: '%s'", dir);
	struct stat st;
	if (stat(marker, &st) == 0 && stat(r->interpreter, &st) == 0) {
		r->interpreter_cached = true;
		return ml_python_probe(&r->py, r->interpreter, err);
	}
	char url[4096];
	const char *mirror =
	        r->a->python_mirror ? r->a->python_mirror : getenv("MLSETUP_PYTHON_MIRROR");
	if (mirror_url(url, sizeof(url), pp->url, mirror))
		return ml_err_set(err, ML_EFAIL, "interpreter URL too long");
	int64_t size = pp->size;
	if (size < 0) {
		if (r->a->po.offline) {
			ml_err_set(err, ML_ENOENT,
			           "interpreter %s is not unpacked yet and --offline "
			           "forbids fetching it",
			           pp->pin_name);
			ml_err_hint(err, "run once online, or use --python PATH");
			return ML_ENOENT;
		}
		char *urls[1] = {url};
		rc = ml_http_sizes(&size, urls, 1, r->cfg ? r->cfg->trusted_hosts : NULL,
		                   r->cfg ? r->cfg->n_trusted : 0, r->cfg ? r->cfg->cert : NULL,
		                   err);
		if (rc)
			return rc;
		if (size < 0)
			return ml_err_set(err, ML_ENET,
			                  "the server gave no size for the interpreter '%s'",
			                  pp->pin_name);
	}
	const char *base = strrchr(url, '/');
	ml_download d;
	memset(&d, 0, sizeof(d));
	rc = ml_download_init(&d, base ? base + 1 : url, pp->sha256, size, err);
	if (!rc)
		rc = ml_download_add_url(&d, url, err);
	ml_fetch_opts fo;
	fetch_opts_for(&fo, r, NULL);
	if (!rc && (rc = ml_fetch_all(&d, 1, r->cache, &fo, err)) != 0 && d.err.msg[0])
		*err = d.err;
	if (!rc) {
		r->n_downloaded += !d.from_cache;
		r->bytes_downloaded += d.bytes;
		rc = ml_python_unpack(r->interpreter, sizeof(r->interpreter), d.path, pp->sha256,
		                      dir, pp->pin_name, err);
	}
	ml_download_release(&d);
	return rc ? rc : ml_python_probe(&r->py, r->interpreter, err);
}

/* True when the target is a complete environment whose report shows this
 * very plan: the same manifest, interpreter version and set of wheel
 * hashes, and a successful build. Then there is nothing to do. */
static bool already_up_to_date(const install_run *r)
{
	const char *t = ml_env_lock_target(r->lock);
	if (!ml_env_is_complete(t))
		return false;
	char path[4200];
	char *text = NULL;
	snprintf(path, sizeof(path), "%s/mlsetup-report.json", t);
	if (ml_os_read_file(&text, NULL, NULL, path, 64u << 20, NULL) != 0)
		return false;
	cJSON *doc = cJSON_Parse(text);
	free(text);
	const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "status"));
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(doc, "plan");
	const char *man = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(plan, "manifest"), "name"));
	const char *pyv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(doc, "python"), "version"));
	const cJSON *inst = cJSON_GetObjectItemCaseSensitive(doc, "installed");
	const ml_plan *p = r->plan;
	bool same = status && !strcmp(status, "ok") && man &&
	            !strcmp(man, p->selection->manifest->name) && pyv &&
	            !strcmp(pyv, p->python.version) && cJSON_IsArray(inst) &&
	            (size_t)cJSON_GetArraySize(inst) == p->n_files;
	for (size_t i = 0; same && i < p->n_files; i++) {
		bool found = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, inst)
		{
			const char *h =
			        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "sha256"));
			if (h && !strcmp(h, p->files[i].sha256)) {
				found = true;
				break;
			}
		}
		same = found;
	}
	cJSON_Delete(doc);
	return same;
}

/* --- fetching the wheels ------------------------------------------------------------ */

/* Gets every wheel the build will read into the cache, verified. Wheels
 * already unpacked in the cache are not read at all (ml_wheel_unpack uses
 * the unpacked tree), so they are neither fetched nor re-hashed. */
static int fetch_wheels(install_run *r, ml_err *err)
{
	size_t n = r->plan->n_files;
	r->items = calloc(n ? n : 1, sizeof(*r->items));
	ml_artifact *need = calloc(n ? n : 1, sizeof(*need));
	size_t *where = calloc(n ? n : 1, sizeof(*where));
	if (!r->items || !need || !where) {
		free(need);
		free(where);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	size_t k = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const ml_artifact *a = &r->plan->files[i];
		if (ml_wheel_unpacked_ready(ml_cache_root(r->cache), a->sha256)) {
			rc = ml_download_init(&r->items[i], a->filename, a->sha256, a->size, err);
			r->items[i].done = r->items[i].from_cache = true;
			r->n_from_cache++;
		} else {
			need[k] = *a;
			where[k++] = i;
		}
	}
	ml_download *sub = rc || !k ? NULL : calloc(k, sizeof(*sub));
	if (!rc && k && !sub)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc && k) {
		ml_plan part = *r->plan; /* the same plan, only the files still to read */
		part.files = need;
		part.n_files = k;
		ml_fetch_ui ui = {ml_progress_new(!r->a->no_progress), "downloading", {{0}}};
		ml_fetch_opts fo;
		fetch_opts_for(&fo, r, &ui);
		rc = ml_fetch_resolve(sub, &part, r->cfg, r->cache, &fo, err);
		if (!rc)
			rc = ml_fetch_all(sub, k, r->cache, &fo, err);
		ml_progress_finish(ui.display);
		size_t n_failed = 0;
		for (size_t j = 0; j < k; j++)
			n_failed += sub[j].result != 0;
		for (size_t j = 0; j < k; j++) {
			/* With one failure the summary error already says it all. */
			if (rc && n_failed > 1 && sub[j].result && sub[j].err.msg[0])
				ml_report_error(&sub[j].err);
			r->n_from_cache += sub[j].from_cache;
			r->n_downloaded += sub[j].done && !sub[j].from_cache;
			r->bytes_downloaded += sub[j].bytes;
			r->items[where[j]] = sub[j]; /* moves ownership */
		}
	}
	free(sub);
	free(need);
	free(where);
	return rc;
}

/* --- audit before building -------------------------------------------------------- */

/* "requirements_blackwell.txt (driver 570.26 or newer)": the shipped
 * manifest that covers compute capability major.minor; "" when none. */
static void covering_manifest(char *dst, size_t sz, int major, int minor, const char *except)
{
	ml_manifest *mf = NULL;
	dst[0] = '\0';
	if (ml_manifest_covering(&mf, major, minor, except, NULL) == 0 && mf) {
		const char *drv = mf->min_driver_linux;
		snprintf(dst, sz, "%s%s%s%s", mf->name, drv ? " (driver " : "", drv ? drv : "",
		         drv ? " or newer)" : "");
	}
	ml_manifest_free(mf);
}

/* Audits the requested packages' binary wheels, as downloaded, before
 * anything is extracted: when a GPU of this machine cannot run their CUDA
 * code, stop with the diagnosis (exit 5) unless --force. */
static int audit_before_build(install_run *r, ml_err *err)
{
	ml_cuda_arch devs[64];
	size_t nd = ml_cli_gpu_archs(devs, 64, r->m);
	if (!nd)
		return 0;
	const char *paths[512];
	static char unpacked[512][4200];
	size_t np = 0;
	for (size_t i = 0; i < r->plan->n_files && np < 512; i++) {
		const ml_artifact *a = &r->plan->files[i];
		if (!a->requested || !a->filename || strstr(a->filename, "-none-any.whl"))
			continue;
		if (r->items[i].path[0]) {
			paths[np++] = r->items[i].path;
		} else { /* already unpacked in the cache: audit the unpacked tree */
			snprintf(unpacked[np], sizeof(unpacked[np]), "%s/unpacked/sha256/%s/tree",
			         ml_cache_root(r->cache), a->sha256);
			paths[np] = unpacked[np];
			np++;
		}
	}
	if (!np)
		return 0;
	ml_audit_opts ao = ML_AUDIT_OPTS_INIT;
	ao.devices = devs;
	ao.n_devices = nd;
	ml_audit *au = NULL;
	if (ml_audit_paths(&au, paths, np, &ao, err) != 0)
		return ML_ENOMEM;
	r->preaudit = ml_audit_to_json(au);
	int rc = 0;
	for (size_t d = 0; d < au->n_devices && !rc; d++) {
		if (au->overall[d].runs)
			continue;
		const ml_gpu *g = NULL;
		for (size_t i = 0; i < r->m->n_gpus && !g; i++)
			if (r->m->gpus[i].cc_major == au->devices[d].major &&
			    r->m->gpus[i].cc_minor == au->devices[d].minor)
				g = &r->m->gpus[i];
		char sm[16], cover[128];
		ml_cuda_arch_format(sm, sizeof(sm), &au->devices[d]);
		covering_manifest(cover, sizeof(cover), au->devices[d].major, au->devices[d].minor,
		                  r->plan->selection->manifest->name);
		if (r->a->force) {
			ml_warn("%s (%s) cannot run this manifest's CUDA code: %s; building anyway "
			        "(--force)",
			        g ? g->name : "GPU", sm, au->overall[d].why);
			continue;
		}
		rc = ml_err_set(err, ML_EGPU,
		                "%s (%s) cannot run the CUDA code of manifest '%s': %s; expect 'no "
		                "kernel image is available for execution on the device'",
		                g ? g->name : "GPU", sm, r->plan->selection->manifest->name,
		                au->overall[d].why);
		if (cover[0])
			ml_err_hint(err,
			            "install with --manifest %s; nothing was extracted (--force "
			            "builds anyway)",
			            cover);
		else
			ml_err_hint(err,
			            "no shipped manifest has code for %s; nothing was extracted "
			            "(--force builds anyway)",
			            sm);
	}
	ml_audit_free(au);
	return rc;
}

/* --- building the environment ------------------------------------------------------- */

static int parse_link(ml_link_method *out, const char *s, ml_err *err)
{
	static const ml_link_method all[] = {ML_LINK_AUTO, ML_LINK_REFLINK, ML_LINK_HARDLINK,
	                                     ML_LINK_COPY};
	for (size_t i = 0; i < 4; i++)
		if (!s || !strcmp(s, ml_link_method_name(all[i]))) {
			*out = s ? all[i] : ML_LINK_AUTO;
			return 0;
		}
	return ml_err_set(err, ML_EUSAGE, "--link takes auto, reflink, hardlink or copy, not '%s'",
	                  s);
}

static int compile_bytecode(const ml_env_layout *env, ml_err *err)
{
	char py[4300], site[4300];
	snprintf(py, sizeof(py), "%s/bin/python", env->root);
	snprintf(site, sizeof(site), "%s/%s", env->root, env->site_packages);
	/* -s/-p record the final path in the .pyc files, not the staging one. */
	const char *argv[] = {py,        "-m", "compileall",    "-q", "-j", "0", "-s",
	                      env->root, "-p", env->final_root, site, NULL};
	char *out = NULL;
	int status = 0;
	int rc = ml_os_run_output(&out, &status, argv, 64 * 1024, 30 * 60, err);
	if (!rc && status != 0)
		rc = ml_err_set(err, ML_EFAIL, "compileall failed (status %d): %.400s", status,
		                out);
	free(out);
	return rc;
}

static int build_env(install_run *r, ml_err *err)
{
	ml_link_method link = ML_LINK_AUTO;
	int rc = parse_link(&link, r->a->link, err);
	if (rc)
		return rc;
	if ((rc = ml_env_stage_begin(&r->stage, r->lock, err)) != 0)
		return rc;
	if (r->stage->n_stale_removed || r->stage->recovered)
		ml_verbose("cleaned up after an interrupted run (%d staging directories%s)",
		           r->stage->n_stale_removed,
		           r->stage->recovered ? ", restored the old target" : "");
	ml_env_layout env;
	if ((rc = ml_env_layout_init(&env, r->stage->path, r->stage->target, r->py.xy, err)) != 0)
		return rc;
	if ((rc = ml_venv_create(&env, &r->py, NULL, err)) != 0)
		return rc;
	size_t n = r->plan->n_files;
	ml_wheel_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	r->results = calloc(n ? n : 1, sizeof(*r->results));
	if (!jobs || !r->results) {
		free(jobs);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		jobs[i] = (ml_wheel_job){r->items[i].path, r->items[i].sha256,
		                         r->plan->files[i].filename, r->plan->files[i].requested};
	ml_wheels_opts ao = ML_WHEELS_OPTS_INIT;
	ao.cache_dir = ml_cache_root(r->cache);
	ao.jobs = r->a->jobs;
	ao.link = link;
	rc = ml_wheels_install_all(r->results, jobs, n, &env, &ao, err);
	free(jobs);
	if (!rc && r->a->compile_bytecode)
		rc = compile_bytecode(&env, err);
	if (!rc)
		rc = ml_env_stage_commit(r->stage, err);
	return rc;
}

/* --- verification: every top-level package imports ------------------------------------ */

static const char import_script[] =
        "import importlib, json, sys, time\n"
        "res = {}\n"
        "for n in sys.argv[1:]:\n"
        "    t = time.time()\n"
        "    try:\n"
        "        importlib.import_module(n)\n"
        "        res[n] = {'ok': True, 'seconds': round(time.time() - t, 3)}\n"
        "    except BaseException as e:\n"
        "        res[n] = {'ok': False, 'error': '%s: %s' % (type(e).__name__, e)}\n"
        "print(json.dumps(res))\n";

/* Top-level import names of one installed distribution: top_level.txt,
 * else the first path component of its RECORD rows. Names that are private
 * or test suites are left out. Appends "name\tdist\trequested" lines. */
static void top_level_names(ml_buf *out, const char *site, const ml_wheel_result *res,
                            bool requested)
{
	char path[8192];
	char *text = NULL;
	if (snprintf(path, sizeof(path), "%s/%s/top_level.txt", site, res->dist_info) >=
	    (int)sizeof(path))
		return;
	bool have_top = ml_os_read_file(&text, NULL, NULL, path, 1 << 20, NULL) == 0;
	if (!have_top) {
		if (snprintf(path, sizeof(path), "%s/%s/RECORD", site, res->dist_info) >=
		            (int)sizeof(path) ||
		    ml_os_read_file(&text, NULL, NULL, path, 64 << 20, NULL) != 0)
			return;
	}
	ml_buf seen = ML_BUF_INIT;
	ml_buf_puts(&seen, "\n");
	for (char *save = NULL, *line = strtok_r(text, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		char name[256];
		size_t len = have_top ? strcspn(line, " \t") : strcspn(line, "/,");
		if (!len || len >= sizeof(name))
			continue;
		memcpy(name, line, len);
		name[len] = '\0';
		if (!have_top) {
			bool is_dir = line[len] == '/';
			size_t nl = strlen(name);
			if (is_dir && (strstr(name, ".dist-info") || strstr(name, ".data") ||
			               !strcmp(name, "..") || !strcmp(name, "__pycache__")))
				continue;
			if (!is_dir) {
				if (nl < 4 || strcmp(name + nl - 3, ".py"))
					continue;
				name[nl - 3] = '\0';
			}
		}
		if (name[0] == '_' || !strcmp(name, "test") || !strcmp(name, "tests") ||
		    !strcmp(name, "testing") || !strcmp(name, "benchmarks") ||
		    !strcmp(name, "examples") || !strcmp(name, "docs") || strchr(name, '.') ||
		    strchr(name, '/') || strchr(name, '-'))
			continue;
		char key[300];
		snprintf(key, sizeof(key), "\n%s\n", name);
		if (strstr(ml_buf_cstr(&seen), key))
			continue;
		ml_buf_printf(&seen, "%s\n", name);
		ml_buf_printf(out, "%s\t%s\t%d\n", name, res->name, requested);
	}
	ml_buf_release(&seen);
	free(text);
}

static int verify_imports(install_run *r, ml_err *err)
{
	char site[8192], py[4200];
	const char *target = ml_env_lock_target(r->lock);
	snprintf(site, sizeof(site), "%s/lib/python%s/site-packages", target, r->py.xy);
	snprintf(py, sizeof(py), "%s/bin/python", target);
	ml_buf names = ML_BUF_INIT;
	for (size_t i = 0; i < r->plan->n_files; i++)
		top_level_names(&names, site, &r->results[i], r->plan->files[i].requested);
	/* argv: python -c script name... */
	size_t n = 0, cap = 16;
	const char **argv = malloc(cap * sizeof(*argv));
	char *list = ml_buf_detach(&names);
	int rc = 0;
	if (!argv || !list) {
		free(argv);
		free(list);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	argv[n++] = py;
	argv[n++] = "-c";
	argv[n++] = import_script;
	for (char *save = NULL, *line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (n + 2 >= cap) {
			const char **p = realloc(argv, (cap *= 2) * sizeof(*argv));
			if (!p) {
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				break;
			}
			argv = p;
		}
		argv[n++] = line; /* "name\tdist\trequested": cut below */
	}
	argv[n] = NULL;
	/* Keep a parallel copy of which dist each name came from. */
	char **dist = calloc(n, sizeof(*dist));
	bool *req = calloc(n, sizeof(*req));
	for (size_t i = 3; !rc && dist && req && i < n; i++) {
		char *tab = strchr(argv[i], '\t');
		if (tab) {
			*tab = '\0';
			dist[i] = tab + 1;
			char *tab2 = strchr(dist[i], '\t');
			if (tab2) {
				*tab2 = '\0';
				req[i] = tab2[1] == '1';
			}
		}
	}
	char *out = NULL;
	int status = 0;
	if (!rc && (!dist || !req))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc)
		rc = ml_os_run_capture(&out, &status, argv, 8 << 20, 30 * 60, err);
	cJSON *res = rc ? NULL : cJSON_Parse(out);
	r->verification = cJSON_CreateObject();
	cJSON *imports = cJSON_AddArrayToObject(r->verification, "imports");
	size_t failed_required = 0, failed_other = 0;
	for (size_t i = 3; res && i < n; i++) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, argv[i]);
		bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ok"));
		const char *why =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "error"));
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "module", argv[i]);
		cJSON_AddStringToObject(j, "distribution", dist[i] ? dist[i] : "");
		cJSON_AddBoolToObject(j, "ok", ok);
		if (!ok) {
			cJSON_AddStringToObject(j, "error", why ? why : "no result");
			if (req[i])
				failed_required++;
			else
				failed_other++;
			if (req[i])
				ml_warn("'import %s' (%s) failed: %s", argv[i],
				        dist[i] ? dist[i] : "?", why ? why : "no result");
			else
				ml_verbose("'import %s' (%s) failed: %s", argv[i],
				           dist[i] ? dist[i] : "?", why ? why : "no result");
		}
		cJSON_AddItemToArray(imports, j);
	}
	if (!rc && !res)
		rc = ml_err_set(err, ML_EFAIL, "the import check printed no result (status %d)",
		                status);
	r->verified_ok = !rc && failed_required == 0;
	cJSON_AddStringToObject(r->verification, "status", r->verified_ok ? "pass" : "fail");
	cJSON_AddNumberToObject(r->verification, "modules", (double)(n - 3));
	cJSON_AddNumberToObject(r->verification, "failed_requested", (double)failed_required);
	cJSON_AddNumberToObject(r->verification, "failed_other", (double)failed_other);
	if (!rc && failed_required) {
		rc = ml_err_set(err, ML_EFAIL,
		                "%zu top-level module%s of the requested packages failed to import",
		                failed_required, failed_required == 1 ? "" : "s");
		ml_err_hint(err, "see the warnings above; the environment is in place at '%s'",
		            target);
	}
	cJSON_Delete(res);
	free(out);
	free(dist);
	free(req);
	free(argv);
	free(list);
	return rc;
}

/* --- the report ------------------------------------------------------------------------ */

static cJSON *report_json(const install_run *r, int rc, const ml_err *err)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "mlsetup.report/1");
	cJSON_AddStringToObject(doc, "mlsetup_version", ML_VERSION);
	cJSON_AddStringToObject(doc, "status", rc ? "failed" : "ok");
	if (rc) {
		cJSON_AddStringToObject(doc, "error", err->msg);
		cJSON_AddStringToObject(doc, "hint", err->hint);
	}
	cJSON_AddStringToObject(doc, "target", r->lock ? ml_env_lock_target(r->lock) : "");
	if (r->m)
		cJSON_AddItemToObject(doc, "machine", ml_machine_to_json(r->m));
	if (r->plan)
		cJSON_AddItemToObject(doc, "plan", ml_plan_to_json(r->plan, r->m));
	cJSON *py = cJSON_AddObjectToObject(doc, "python");
	cJSON_AddStringToObject(py, "version", r->py.version);
	cJSON_AddStringToObject(py, "executable", r->py.executable);
	cJSON_AddBoolToObject(py, "already_unpacked", r->interpreter_cached);
	cJSON *inst = cJSON_AddArrayToObject(doc, "installed");
	uint64_t extracted = 0, hits = 0, linked = 0, refl = 0, hard = 0, copied = 0;
	for (size_t i = 0; r->plan && r->results && i < r->plan->n_files; i++) {
		const ml_wheel_result *res = &r->results[i];
		const ml_artifact *a = &r->plan->files[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", a->name);
		cJSON_AddStringToObject(j, "version", a->version);
		cJSON_AddStringToObject(j, "filename", a->filename ? a->filename : "");
		cJSON_AddStringToObject(j, "sha256", a->sha256);
		cJSON_AddNumberToObject(j, "size", (double)a->size);
		cJSON_AddBoolToObject(j, "requested", a->requested);
		cJSON_AddBoolToObject(j, "from_cache", r->items && r->items[i].from_cache);
		cJSON_AddBoolToObject(j, "unpacked_cache_hit", res->cache_hit);
		cJSON_AddNumberToObject(j, "bytes_extracted", (double)res->bytes_extracted);
		cJSON_AddStringToObject(j, "link_method", ml_link_method_name(res->method));
		cJSON_AddItemToArray(inst, j);
		extracted += res->bytes_extracted;
		hits += res->cache_hit;
		linked += res->n_linked;
		refl += res->n_reflinked;
		hard += res->n_hardlinked;
		copied += res->n_copied;
	}
	cJSON *st = cJSON_AddObjectToObject(doc, "stages");
	double total = 0;
	for (int i = 0; i < ST_N; i++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_s", stage_names[i]);
		cJSON_AddNumberToObject(st, key, r->t[i]);
		total += r->t[i];
	}
	cJSON_AddNumberToObject(st, "total_s", total);
	cJSON *c = cJSON_AddObjectToObject(doc, "counters");
	cJSON_AddNumberToObject(c, "downloaded_files", (double)r->n_downloaded);
	cJSON_AddNumberToObject(c, "downloaded_bytes", (double)r->bytes_downloaded);
	cJSON_AddNumberToObject(c, "files_from_cache", (double)r->n_from_cache);
	cJSON_AddNumberToObject(c, "unpacked_cache_hits", (double)hits);
	cJSON_AddNumberToObject(c, "bytes_extracted", (double)extracted);
	cJSON_AddNumberToObject(c, "files_linked", (double)linked);
	cJSON_AddNumberToObject(c, "files_reflinked", (double)refl);
	cJSON_AddNumberToObject(c, "files_hardlinked", (double)hard);
	cJSON_AddNumberToObject(c, "files_copied", (double)copied);
	if (r->verification)
		cJSON_AddItemReferenceToObject(doc, "verification", r->verification);
	if (r->preaudit)
		cJSON_AddItemReferenceToObject(doc, "audit_before_build", r->preaudit);
	if (r->vrun_done) {
		cJSON *g = cJSON_AddObjectToObject(doc, "gpu_verification");
		ml_verify_run_json(&r->vrun, g);
	}
	return doc;
}

/* Writes <target>/mlsetup-report.json through a temporary file and rename. */
static int write_report(const char *target, const cJSON *doc, ml_err *err)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/mlsetup-report.json", target);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = 0;
	size_t len = strlen(text);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    fsync(fd) != 0)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	if (fd >= 0 && close(fd) != 0 && !rc)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path) != 0)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(errno));
	if (rc)
		unlink(tmp);
	cJSON_free(text);
	return rc;
}

static void print_summary(const install_run *r, int rc)
{
	const char *b = ml_c("bold"), *e = ml_c("reset");
	const ml_plan *p = r->plan;
	if (!p || !p->selection->manifest)
		return;
	const ml_manifest *mf = p->selection->manifest;
	ml_say("%smanifest%s     %s%s%s", b, e, mf->name, mf->summary ? " - " : "",
	       mf->summary ? mf->summary : "");
	if (r->py.version[0])
		ml_say("%spython%s       %s (%s%s)", b, e, r->py.version, r->py.executable,
		       r->interpreter_cached ? ", already unpacked" : "");
	ml_say("%spackages%s     %zu wheels, %.1f MiB: %llu downloaded (%.1f MiB), %llu from the "
	       "cache",
	       b, e, p->n_files, (double)p->total_bytes / 1048576.0,
	       (unsigned long long)r->n_downloaded, (double)r->bytes_downloaded / 1048576.0,
	       (unsigned long long)r->n_from_cache);
	char times[256] = "";
	for (int i = 0; i < ST_N; i++)
		snprintf(times + strlen(times), sizeof(times) - strlen(times), "%s%s %.1f s",
		         i ? ", " : "", stage_names[i], r->t[i]);
	ml_say("%sstages%s       %s", b, e, times);
	if (!rc)
		ml_say("%senvironment%s  %s (activate: . %s/bin/activate)", b, e,
		       ml_env_lock_target(r->lock), ml_env_lock_target(r->lock));
}

static void run_release(install_run *r)
{
	for (size_t i = 0; r->items && r->plan && i < r->plan->n_files; i++)
		ml_download_release(&r->items[i]);
	free(r->items);
	free(r->results);
	ml_env_stage_abort(r->stage);
	ml_env_unlock(r->lock);
	ml_cache_close(r->cache);
	ml_index_config_free(r->cfg);
	ml_plan_free(r->plan);
	ml_machine_free(r->m);
	cJSON_Delete(r->verification);
	cJSON_Delete(r->preaudit);
	if (r->vrun_done)
		ml_verify_run_release(&r->vrun);
}

/* Runs fn as stage st, timing it. */
#define TIMED(r, st, call)                                                                         \
	do {                                                                                       \
		double t0_ = now_s();                                                              \
		rc = (call);                                                                       \
		(r)->t[st] += now_s() - t0_;                                                       \
	} while (0)

static int install(install_run *r, ml_ctx *ctx, ml_err *err)
{
	struct install_args *a = r->a;
	int rc;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = ctx->sysroot;
	d.target_dir = a->po.target;
	TIMED(r, ST_DETECT, ml_detect(&r->m, &d, err));
	if (rc)
		return rc;
	if (a->require_gpu && r->m->n_gpus == 0) {
		ml_err_set(err, ML_EGPU, "no NVIDIA GPU found, and --require-gpu was given");
		ml_err_hint(err,
		            "see 'mlsetup detect' for what each probe found; drop --require-gpu "
		            "to build an environment that runs on the CPU");
		return ML_EGPU;
	}
	TIMED(r, ST_PLAN, ml_plan_make(&r->plan, r->m, &a->po, err));
	if (rc)
		return rc;
	const ml_selection *s = r->plan->selection;
	if (!s->manifest) {
		ml_err_set(err, ML_EUNSUPPORTED, "no manifest fits this machine: %s", s->problem);
		ml_err_hint(err, "%s", s->remedy);
		return ML_EUNSUPPORTED;
	}
	for (size_t i = 0; i < s->n_warnings; i++)
		ml_warn("%s", s->warnings[i]);
	for (size_t i = 0; i < r->plan->n_warnings; i++)
		ml_warn("%s", r->plan->warnings[i]);
	if (r->plan->n_unknown) {
		ml_err_set(err, ML_EFAIL, "%zu files of manifest '%s' are unknown",
		           r->plan->n_unknown, s->manifest->name);
		ml_err_hint(err, "regenerate the manifest with mlsetup lock");
		return ML_EFAIL;
	}
	if ((rc = ml_env_lock(&r->lock, r->plan->target, !a->no_wait, err)) != 0)
		return rc;
	if (!a->reinstall && r->plan->python.version[0] && already_up_to_date(r)) {
		r->up_to_date = true;
		return 0;
	}
	if ((rc = ml_cache_open(&r->cache, r->plan->cache_dir, ML_CACHE_SHARED, err)) != 0)
		return rc;
	ml_index_flags flags;
	ml_cli_index_flags(&a->ix, &flags);
	const ml_requirements *mr = s->manifest->reqs;
	TIMED(r, ST_FETCH,
	      ml_index_config_resolve(&r->cfg, &flags, mr->index_url, mr->extra_index_urls,
	                              mr->n_extra, NULL, err));
	if (rc)
		return rc;
	TIMED(r, ST_INTERPRETER, ensure_interpreter(r, err));
	if (rc)
		return rc;
	if (strcmp(r->py.xy, r->plan->python.xy) != 0)
		return ml_err_set(err, ML_EFAIL,
		                  "interpreter '%s' is Python %s, the plan wanted %s",
		                  r->interpreter, r->py.xy, r->plan->python.xy);
	TIMED(r, ST_FETCH, fetch_wheels(r, err));
	if (rc)
		return rc;
	TIMED(r, ST_VERIFY, audit_before_build(r, err));
	if (rc)
		return rc;
	TIMED(r, ST_INSTALL, build_env(r, err));
	if (rc)
		return rc;
	if (!a->no_verify)
		TIMED(r, ST_VERIFY, verify_imports(r, err));
	bool has_torch = false;
	for (size_t i = 0; i < r->plan->n_files; i++)
		has_torch |= !strcmp(r->plan->files[i].name, "torch");
	if (!rc && !a->no_verify && has_torch) {
		TIMED(r, ST_VERIFY,
		      ml_verify_run_do(&r->vrun, r->m, ml_env_lock_target(r->lock), NULL,
		                       a->require_gpu, ctx->sysroot, &a->fo, err));
		r->vrun_done = rc == 0;
		if (r->vrun_done) {
			ml_verify_run_print(&r->vrun);
			rc = ml_verify_run_status(&r->vrun, err);
		}
	}
	return rc;
}

static int cmd_install(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"manifest", required_argument, NULL, OPT_MANIFEST},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"cache-dir", required_argument, NULL, OPT_CACHE},
	        {"offline", no_argument, NULL, OPT_OFFLINE},
	        {"python-pins", required_argument, NULL, OPT_PINS},
	        {"python-mirror", required_argument, NULL, OPT_MIRROR},
	        {"jobs", required_argument, NULL, OPT_JOBS},
	        {"retries", required_argument, NULL, OPT_RETRIES},
	        {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
	        {"low-speed-time", required_argument, NULL, OPT_LOW_SPEED_TIME},
	        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
	        {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
	        {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
	        {"compile-bytecode", no_argument, NULL, OPT_COMPILE},
	        {"link", required_argument, NULL, OPT_LINK},
	        {"force", no_argument, NULL, OPT_FORCE},
	        {"reinstall", no_argument, NULL, OPT_REINSTALL},
	        ML_VERIFY_LONGOPTS,
	        ML_CLI_INDEX_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct install_args a;
	memset(&a, 0, sizeof(a));
	ml_plan_opts po = ML_PLAN_OPTS_INIT;
	a.po = po;
	a.retries = -1;
	int first;
	bool help;
	int rc = ml_cli_parse(&ml_cmd_install, argc, argv, opts, on_option, &a, &first, &help, err);
	if (rc || help)
		return rc;
	if (first < argc)
		return ml_cli_usage(&ml_cmd_install, err, "unexpected argument '%s'", argv[first]);
	if (!a.po.target)
		a.po.target = ".venv";
	install_run r;
	memset(&r, 0, sizeof(r));
	r.a = &a;
	rc = install(&r, ctx, err);
	/* The report goes into the environment only when this run put it in
	 * place: a failed run must leave an existing environment untouched. */
	if (r.stage && r.stage->committed) {
		cJSON *doc = report_json(&r, rc, err);
		ml_err werr = ML_ERR_INIT;
		if (doc && write_report(ml_env_lock_target(r.lock), doc, &werr) != 0)
			ml_warn("%s", werr.msg);
		if (ctx->json && doc)
			ml_out_json(doc);
		cJSON_Delete(doc);
	} else if (ctx->json) {
		cJSON *doc = report_json(&r, rc, err);
		if (doc)
			ml_out_json(doc);
		cJSON_Delete(doc);
	}
	if (r.up_to_date)
		ml_say("environment %s is up to date: manifest %s, %zu packages; nothing to do",
		       ml_env_lock_target(r.lock), r.plan->selection->manifest->name,
		       r.plan->n_files);
	else
		print_summary(&r, rc);
	run_release(&r);
	return rc;
}

const ml_command ml_cmd_install = {
        "install",
        cmd_install,
        ML_NEED_NET | ML_NEED_LOCK,
        "build a verified environment: detect, plan, fetch, build, verify, report",
        "mlsetup install [--manifest NAME|PATH] [--target DIR] [--python X.Y|PATH] [index options] "
        "[--cache-dir DIR] [--jobs N] [--offline] [--require-gpu] [--no-verify]",
        "  --manifest NAME|PATH    use this manifest instead of choosing one\n"
        "  -t, --target DIR        where the environment goes (default ./.venv); replaced\n"
        "                          atomically, an existing one is untouched on failure\n"
        "  --python X.Y|PATH       pinned interpreter version, or an existing interpreter\n"
        "  --python-mirror URL     replaces the interpreter release host prefix (also\n"
        "                          MLSETUP_PYTHON_MIRROR)\n"
        "  --python-pins FILE      interpreter pins instead of the built-in ones\n"
        "  --cache-dir DIR         cache (default $MLSETUP_CACHE_DIR, $XDG_CACHE_HOME/mlsetup)\n"
        "  -j, --jobs N            parallel downloads and wheel installs\n"
        "  --offline               use only the cache and --find-links\n"
        "  --retries N             retries per source on network errors (default 3)\n"
        "  --connect-timeout S     connect timeout in seconds (default 10)\n"
        "  --low-speed-time S      abandon a transfer below 1 byte/s for S seconds (default 30)\n"
        "  --no-progress           no progress display\n"
        "  --no-wait               fail at once when another install holds the target\n"
        "  --no-verify             skip the import check after building\n"
        "  --require-gpu           fail (exit 5) when no NVIDIA GPU is found\n"
        "  --compile-bytecode      compile .pyc files after installing\n"
        "  --link METHOD           auto (default), reflink, hardlink or copy\n"
        "  --reinstall             rebuild the target even when it already is this plan\n"
        "  --force                 build even when the audit of the downloaded wheels says the\n"
        "                          GPUs cannot run them\n" ML_VERIFY_HELP ML_CLI_INDEX_HELP,
};
