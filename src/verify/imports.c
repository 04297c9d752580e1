/*
 * imports.c - the first proof that an environment works: every top-level
 * module of every installed distribution imports, with the environment's
 * own interpreter, in one process. A distribution's top-level modules come
 * from its top_level.txt (setuptools), else from the first path component
 * of its RECORD rows (PEP 376).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Runs the import script over every module and records the answers. */
static int run_imports(ml_import_check *c, const char *env_root)
{
	char py[4200];
	if (ml_pathf(py, sizeof(py), "%s/" ML_ENV_PYTHON_NATIVE, env_root))
		return ml_err_set(&c->run_err, ML_EFAIL, "path too long: '%s'", env_root);
	const char **argv = calloc(c->n_modules + 4, sizeof(*argv));
	if (!argv)
		return ML_ENOMEM;
	argv[0] = py;
	argv[1] = "-c";
	argv[2] = import_script;
	for (size_t i = 0; i < c->n_modules; i++)
		argv[3 + i] = c->modules[i].module;
	char *out = NULL;
	int status = 0;
	int rc = ml_os_run_capture(&out, &status, argv, 8 << 20, IMPORT_TIMEOUT_S, &c->run_err);
	free(argv);
	cJSON *res = rc ? NULL : cJSON_Parse(out);
	free(out);
	if (!rc && !res)
		rc = ml_err_set(&c->run_err, ML_EFAIL,
		                "the import check printed no result (status %d)", status);
	c->run_rc = rc;
	for (size_t i = 0; res && i < c->n_modules; i++) {
		ml_import_result *r = &c->modules[i];
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

int ml_verify_imports(ml_import_check **out, const char *env_root, const char *python_xy,
                      const ml_import_dist *dists, size_t n, ml_err *err)
{
	char site[8192];
	ml_import_check *c = calloc(1, sizeof(*c));
	if (!c)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	if (ml_pathf(site, sizeof(site), "%s/lib/python%s/site-packages", env_root, python_xy))
		rc = ml_err_set(&c->run_err, ML_EFAIL, "path too long: '%s'", env_root);
	size_t cap = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = add_dist_modules(c, &cap, site, &dists[i]);
	if (rc == ML_ENOMEM || (!rc && (rc = run_imports(c, env_root)) == ML_ENOMEM)) {
		ml_import_check_free(c);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (rc && !c->run_rc)
		c->run_rc = rc;
	*out = c;
	return 0;
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
