/*
 * imports.c - the first proof that an environment works: every top-level
 * module of every installed distribution imports, with the environment's
 * own interpreter, in one process per core. A distribution's top-level modules come
 * from its top_level.txt (setuptools), else from the first path component
 * of its RECORD rows (PEP 376).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define IMPORT_TIMEOUT_S (30 * 60)

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

/* Names that are never imported on their own: private modules, test
 * suites, docs, examples, and anything that is no Python identifier path. */
static bool skipped_name(const char *name)
{
	static const char *const skip[] = {"test",     "tests", "testing", "benchmarks",
	                                   "examples", "docs",  NULL};
	if (name[0] == '_' || strchr(name, '.') || strchr(name, '/') || strchr(name, '-'))
		return true;
	for (size_t i = 0; skip[i]; i++)
		if (strcmp(name, skip[i]) == 0)
			return true;
	return false;
}

/* Cuts the top-level name out of one line of top_level.txt (have_top) or
 * RECORD into name (sz bytes). Returns false when the line names none. */
static bool line_name(char *name, size_t sz, const char *line, bool have_top)
{
	size_t len = have_top ? strcspn(line, " \t") : strcspn(line, "/,");
	if (!len || len >= sz)
		return false;
	memcpy(name, line, len);
	name[len] = '\0';
	if (have_top)
		return true;
	bool is_dir = line[len] == '/';
	size_t nl = strlen(name);
	if (is_dir)
		return !strstr(name, ".dist-info") && !strstr(name, ".data") &&
		       strcmp(name, "..") != 0 && strcmp(name, "__pycache__") != 0;
	if (nl < 4 || strcmp(name + nl - 3, ".py") != 0)
		return false;
	name[nl - 3] = '\0';
	return true;
}

/* Appends the top-level modules of dist (each once) to c->modules. */
static int add_dist_modules(ml_import_check *c, size_t *cap, const char *site,
                            const ml_import_dist *dist)
{
	char path[8192];
	char *text = NULL;
	if (ml_pathf(path, sizeof(path), "%s/%s/top_level.txt", site, dist->dist_info))
		return 0;
	bool have_top = ml_os_read_file(&text, NULL, NULL, path, 1 << 20, NULL) == 0;
	if (!have_top && (ml_pathf(path, sizeof(path), "%s/%s/RECORD", site, dist->dist_info) ||
	                  ml_os_read_file(&text, NULL, NULL, path, 64 << 20, NULL) != 0))
		return 0;
	size_t first = c->n_modules; /* this distribution's modules start here */
	int rc = 0;
	for (char *save = NULL, *line = strtok_r(text, "\r\n", &save); line && !rc;
	     line = strtok_r(NULL, "\r\n", &save)) {
		char name[256];
		if (!line_name(name, sizeof(name), line, have_top) || skipped_name(name))
			continue;
		bool seen = false;
		for (size_t i = first; i < c->n_modules && !seen; i++)
			seen = strcmp(c->modules[i].module, name) == 0;
		if (seen)
			continue;
		if (c->n_modules == *cap) {
			size_t ncap = *cap ? *cap * 2 : 32;
			ml_import_result *v = realloc(c->modules, ncap * sizeof(*v));
			if (!v) {
				rc = ML_ENOMEM;
				break;
			}
			c->modules = v;
			*cap = ncap;
		}
		ml_import_result *r = &c->modules[c->n_modules];
		memset(r, 0, sizeof(*r));
		r->module = strdup(name);
		r->distribution = strdup(dist->name ? dist->name : "");
		r->requested = dist->requested;
		c->n_modules++;
		if (!r->module || !r->distribution)
			rc = ML_ENOMEM;
	}
	free(text);
	return rc;
}

/* One worker: an interpreter importing its share of the modules. */
typedef struct import_job {
	const char *python;
	const char **argv; /* python -c script module... NULL */
	size_t *index;     /* the modules' indexes in c->modules */
	size_t n;
	char *out;
	int status;
	int rc;
	ml_err err;
} import_job;

static void *import_run(void *arg)
{
	import_job *j = arg;
	j->rc = ml_os_run_capture(&j->out, &j->status, j->argv, 8 << 20, IMPORT_TIMEOUT_S,
	                          &j->err);
	return NULL;
}

/* How many interpreters import at once: MLSETUP_IMPORT_JOBS when set (1:
 * one process, as before), else jobs, else one per core; at most one per
 * distribution and at most 16. */
static size_t worker_count(size_t n_dists, unsigned jobs)
{
	const char *env = getenv("MLSETUP_IMPORT_JOBS");
	long n = env && *env ? strtol(env, NULL, 10) : jobs ? (long)jobs : ml_os_cpu_count();
	if (n < 1)
		n = 1;
	if (n > 16)
		n = 16;
	if ((size_t)n > n_dists)
		n = (long)(n_dists ? n_dists : 1);
	return (size_t)n;
}

/* Records one worker's answers in c; returns ML_ENOMEM or 0. */
static int take_answers(ml_import_check *c, import_job *j)
{
	cJSON *res = j->rc ? NULL : cJSON_Parse(j->out);
	if (!j->rc && !res)
		j->rc = ml_err_set(&j->err, ML_EFAIL,
		                   "the import check printed no result (status %d)", j->status);
	if (j->rc && !c->run_rc) {
		c->run_rc = j->rc;
		c->run_err = j->err;
	}
	for (size_t k = 0; res && k < j->n; k++) {
		ml_import_result *r = &c->modules[j->index[k]];
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, r->module);
		r->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ok"));
		if (r->ok)
			continue;
		const char *why =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "error"));
		if (!(r->error = strdup(why ? why : "no result"))) {
			cJSON_Delete(res);
			return ML_ENOMEM;
		}
		if (r->requested)
			c->failed_requested++;
		else
			c->failed_other++;
	}
	cJSON_Delete(res);
	return 0;
}

/* A started import check (ml_verify_imports_start). */
struct ml_import_run {
	ml_import_check *c;
	char py[4200];
	import_job *jobs;
	size_t nw;
	size_t *index;
	const char **argv;
	pthread_t *th;
	bool *started;
};

/* True when the distribution is torch or its METADATA requires torch
 * (Requires-Dist: torch ...): such distributions share one interpreter, so
 * that torch's libraries (seconds to load) are loaded once. */
static bool needs_torch(const char *site, const ml_import_dist *dist)
{
	if (dist->name && !strcmp(dist->name, "torch"))
		return true;
	char path[8192];
	char *text = NULL;
	if (ml_pathf(path, sizeof(path), "%s/%s/METADATA", site, dist->dist_info) ||
	    ml_os_read_file(&text, NULL, NULL, path, 16 << 20, NULL) != 0)
		return false;
	bool yes = false;
	for (const char *l = text; l && *l && !yes; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == '\n' || *l == '\r')
			break; /* the headers end at the first empty line */
		if (strncasecmp(l, "Requires-Dist:", 14))
			continue;
		l += 14;
		l += strspn(l, " \t");
		yes = !strncasecmp(l, "torch", 5) && !strchr("abcdefghijklmnopqrstuvwxyz"
		                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
		                                              l[5]) &&
		      !strstr(l, "extra ==") && !strstr(l, "extra==");
	}
	free(text);
	return yes;
}

/* Shares the modules out among run->nw workers and fills their argv:
 * each distribution's modules go to one worker; with two workers or more,
 * torch and what requires it to the first, every other distribution to
 * the worker with the fewest modules so far among the rest. Returns 0 or
 * ML_ENOMEM. */
static int share_out(ml_import_run *run)
{
	ml_import_check *c = run->c;
	size_t nw = run->nw, w = 0;
	size_t *owner = calloc(c->n_modules ? c->n_modules : 1, sizeof(*owner));
	size_t *count = calloc(nw, sizeof(*count));
	if (!owner || !count) {
		free(owner);
		free(count);
		return ML_ENOMEM;
	}
	bool any_torch = false;
	for (size_t i = 0; i < c->n_modules; i++)
		any_torch |= c->modules[i].with_torch;
	size_t first_free = nw > 1 && any_torch ? 1 : 0;
	for (size_t i = 0; i < c->n_modules; i++) {
		if (i == 0 || strcmp(c->modules[i].distribution, c->modules[i - 1].distribution)) {
			w = first_free;
			if (c->modules[i].with_torch && first_free)
				w = 0;
			else
				for (size_t k = first_free + 1; k < nw; k++)
					if (count[k] < count[w])
						w = k;
		}
		owner[i] = w;
		count[w]++;
	}
	/* the workers' lists, one after another in index and in argv (each
	 * argv: python -c script modules... NULL) */
	size_t at = 0;
	for (size_t k = 0; k < nw; k++) {
		import_job *j = &run->jobs[k];
		j->index = run->index + at;
		j->argv = run->argv + at + 4 * k;
		j->argv[0] = run->py;
		j->argv[1] = "-c";
		j->argv[2] = import_script;
		at += count[k];
	}
	for (size_t i = 0; i < c->n_modules; i++) {
		import_job *j = &run->jobs[owner[i]];
		j->index[j->n] = i;
		j->argv[3 + j->n++] = c->modules[i].module;
	}
	free(owner);
	free(count);
	return 0;
}

/* Starts the workers: each its own thread running one interpreter. */
static int start_imports(ml_import_run *run, const char *env_root, unsigned jobs)
{
	ml_import_check *c = run->c;
	if (ml_pathf(run->py, sizeof(run->py), "%s/" ML_ENV_PYTHON_NATIVE, env_root))
		return ml_err_set(&c->run_err, ML_EFAIL, "path too long: '%s'", env_root);
	size_t n_dists = 0;
	for (size_t i = 0; i < c->n_modules; i++)
		if (i == 0 || strcmp(c->modules[i].distribution, c->modules[i - 1].distribution))
			n_dists++;
	run->nw = worker_count(n_dists, jobs);
	run->jobs = calloc(run->nw, sizeof(*run->jobs));
	run->index = calloc(c->n_modules ? c->n_modules : 1, sizeof(*run->index));
	run->argv = calloc(c->n_modules + 4 * run->nw, sizeof(*run->argv));
	run->th = calloc(run->nw, sizeof(*run->th));
	run->started = calloc(run->nw, sizeof(*run->started));
	if (!run->jobs || !run->index || !run->argv || !run->th || !run->started ||
	    share_out(run))
		return ML_ENOMEM;
	for (size_t k = 0; k < run->nw; k++)
		run->started[k] = run->jobs[k].n &&
		                  pthread_create(&run->th[k], NULL, import_run, &run->jobs[k]) == 0;
	return 0;
}

static void run_free(ml_import_run *run)
{
	free(run->jobs);
	free(run->index);
	free(run->argv);
	free(run->th);
	free(run->started);
	free(run);
}

int ml_verify_imports_start(ml_import_run **out, const char *env_root, const char *python_xy,
                            const ml_import_dist *dists, size_t n, unsigned jobs, ml_err *err)
{
	char site[8192];
	ml_import_run *run = calloc(1, sizeof(*run));
	ml_import_check *c = run ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		free(run);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	run->c = c;
	int rc = 0;
	if (ml_pathf(site, sizeof(site), "%s/lib/python%s/site-packages", env_root, python_xy))
		rc = ml_err_set(&c->run_err, ML_EFAIL, "path too long: '%s'", env_root);
	size_t cap = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		size_t first = c->n_modules;
		rc = add_dist_modules(c, &cap, site, &dists[i]);
		bool t = !rc && c->n_modules > first && needs_torch(site, &dists[i]);
		for (size_t k = first; t && k < c->n_modules; k++)
			c->modules[k].with_torch = true;
	}
	if (!rc)
		rc = start_imports(run, env_root, jobs);
	if (rc == ML_ENOMEM) {
		ml_verify_imports_abandon(run);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (rc && !c->run_rc)
		c->run_rc = rc;
	*out = run;
	return 0;
}

int ml_verify_imports_finish(ml_import_check **out, ml_import_run *run, ml_err *err)
{
	ml_import_check *c = run->c;
	int rc = 0;
	for (size_t k = 0; run->jobs && k < run->nw; k++) {
		if (run->started && run->started[k])
			pthread_join(run->th[k], NULL);
		else if (!run->jobs[k].n)
			continue; /* nothing to import there */
		else if (!c->run_rc)
			import_run(&run->jobs[k]); /* no thread: now */
		else
			run->jobs[k].rc = c->run_rc;
	}
	for (size_t k = 0; !c->run_rc && run->jobs && k < run->nw; k++)
		if (!rc && run->jobs[k].n)
			rc = take_answers(c, &run->jobs[k]);
	for (size_t k = 0; run->jobs && k < run->nw; k++)
		free(run->jobs[k].out);
	run->c = NULL;
	run_free(run);
	if (rc == ML_ENOMEM) {
		ml_import_check_free(c);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	*out = c;
	return 0;
}

void ml_verify_imports_abandon(ml_import_run *run)
{
	if (!run)
		return;
	for (size_t k = 0; run->jobs && run->started && k < run->nw; k++)
		if (run->started[k])
			pthread_join(run->th[k], NULL);
	for (size_t k = 0; run->jobs && k < run->nw; k++)
		free(run->jobs[k].out);
	ml_import_check_free(run->c);
	run_free(run);
}

int ml_verify_imports(ml_import_check **out, const char *env_root, const char *python_xy,
                      const ml_import_dist *dists, size_t n, ml_err *err)
{
	ml_import_run *run = NULL;
	int rc = ml_verify_imports_start(&run, env_root, python_xy, dists, n, 0, err);
	return rc ? rc : ml_verify_imports_finish(out, run, err);
}

int ml_import_check_status(const ml_import_check *c, ml_err *err)
{
	if (c->run_rc) {
		if (err)
			*err = c->run_err;
		return c->run_rc;
	}
	if (c->failed_requested)
		return ml_err_set(
		        err, ML_EFAIL,
		        "%zu top-level module%s of the requested packages failed to import",
		        c->failed_requested, c->failed_requested == 1 ? "" : "s");
	return 0;
}

cJSON *ml_import_check_to_json(const ml_import_check *c)
{
	cJSON *v = cJSON_CreateObject();
	cJSON *imports = cJSON_AddArrayToObject(v, "imports");
	if (!imports) {
		cJSON_Delete(v);
		return NULL;
	}
	/* Without an answer from the interpreter there is nothing per module. */
	for (size_t i = 0; !c->run_rc && i < c->n_modules; i++) {
		const ml_import_result *r = &c->modules[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "module", r->module);
		cJSON_AddStringToObject(j, "distribution", r->distribution);
		cJSON_AddBoolToObject(j, "ok", r->ok);
		if (!r->ok)
			cJSON_AddStringToObject(j, "error", r->error ? r->error : "no result");
		cJSON_AddItemToArray(imports, j);
	}
	bool pass = !c->run_rc && c->failed_requested == 0;
	cJSON_AddStringToObject(v, "status", pass ? "pass" : "fail");
	cJSON_AddNumberToObject(v, "modules", (double)c->n_modules);
	cJSON_AddNumberToObject(v, "failed_requested", (double)c->failed_requested);
	cJSON_AddNumberToObject(v, "failed_other", (double)c->failed_other);
	return v;
}

void ml_import_check_free(ml_import_check *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_modules; i++) {
		free(c->modules[i].module);
		free(c->modules[i].distribution);
		free(c->modules[i].error);
	}
	free(c->modules);
	free(c);
}
