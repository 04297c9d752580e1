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

/* argv: claims, then the modules; with a claims directory, a module is
 * imported only by the interpreter that creates its file there first. */
static const char import_script[] =
        "import importlib, json, os, sys, time\n"
        "res = {}\n"
        "claims = sys.argv[1]\n"
        "for n in sys.argv[2:]:\n"
        "    if claims:\n"
        "        try:\n"
        "            os.close(os.open(os.path.join(claims, n), os.O_CREAT | os.O_EXCL | os.O_WRONLY))\n"
        "        except FileExistsError:\n"
        "            continue\n"
        "        except OSError:\n"
        "            pass\n"
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

/* Which interpreter a distribution's modules suit: torch and what requires
 * it (T_HARD: they load torch, seconds of native libraries), what names
 * torch only under an extra (T_SOFT: transformers imports torch when it is
 * there), the rest (T_NONE). */
enum { T_NONE, T_SOFT, T_HARD };

/* The most the held list may add to the other interpreter's command line,
 * bytes (Windows allows 32767 characters in all, and the smoke test's
 * script is half of that). */
#define HELD_ARGV_BYTES 8192

/* One worker: an interpreter importing what it can claim of its list. */
typedef struct import_job {
	const char **argv; /* python -c script claims module... NULL */
	size_t n;          /* modules in argv */
	char *out;
	int status;
	int rc;
	ml_err err;
} import_job;

static void *import_run(void *arg)
{
	import_job *j = arg;
	j->rc = ml_os_run_capture(&j->out, &j->status, j->argv, 8 << 20, ML_IMPORT_TIMEOUT_S,
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

/* Records that module i failed to import, why (NULL: "no result"), and
 * counts it. Returns ML_ENOMEM or 0. */
static int record_failure(ml_import_check *c, size_t i, const char *why)
{
	ml_import_result *r = &c->modules[i];
	if (!(r->error = strdup(why ? why : "no result")))
		return ML_ENOMEM;
	if (r->requested)
		c->failed_requested++;
	else
		c->failed_other++;
	return 0;
}

/* Takes the answers in res, {module: {ok, error}}, for every module not
 * answered yet (answered[i]); several distributions may share a name (the
 * "nvidia" namespace): one answer is all of theirs. Returns ML_ENOMEM or 0. */
static int take_answers(ml_import_check *c, bool *answered, const cJSON *res)
{
	for (size_t i = 0; res && i < c->n_modules; i++) {
		ml_import_result *r = &c->modules[i];
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, r->module);
		if (answered[i] || !e)
			continue;
		answered[i] = true;
		r->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ok"));
		if (!r->ok && record_failure(c, i,
		                             cJSON_GetStringValue(
		                                     cJSON_GetObjectItemCaseSensitive(e, "error"))))
			return ML_ENOMEM;
	}
	return 0;
}

/* Appends name to list (at *n) unless it is there already. */
static void add_name(const char **list, size_t *n, const char *name)
{
	for (size_t m = 0; m < *n; m++)
		if (strcmp(list[m], name) == 0)
			return;
	list[(*n)++] = name;
}

/* A started import check (ml_verify_imports_start). Every interpreter
 * gets an ordered list of the modules and imports those it claims first
 * (a file of the module's name created in claims, O_EXCL): the lists are
 * ordered so that torch's share goes to one interpreter and the others
 * meet in the middle of the rest, whatever each module costs. */
struct ml_import_run {
	ml_import_check *c;
	char py[4200];
	char claims[4096]; /* the claims directory, "" when none was made */
	unsigned char *torch; /* per module: T_NONE, T_SOFT, T_HARD */
	import_job *jobs;
	size_t nw;
	pthread_t *th;
	bool *started;
	const char **held; /* held: the list for the other interpreter */
	size_t n_held;
	cJSON *answers; /* ... and its answers (ml_verify_imports_answer) */
};

/* Reads the distribution's METADATA: T_HARD when it is torch or requires
 * it (Requires-Dist: torch ...), T_SOFT when it names torch only under an
 * extra, else T_NONE. */
static int torch_use(const char *site, const ml_import_dist *dist)
{
	if (dist->name && !strcmp(dist->name, "torch"))
		return T_HARD;
	char path[8192];
	char *text = NULL;
	if (ml_pathf(path, sizeof(path), "%s/%s/METADATA", site, dist->dist_info) ||
	    ml_os_read_file(&text, NULL, NULL, path, 16 << 20, NULL) != 0)
		return T_NONE;
	int use = T_NONE;
	for (const char *l = text; l && *l && use != T_HARD;
	     l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == '\n' || *l == '\r')
			break; /* the headers end at the first empty line */
		if (strncasecmp(l, "Requires-Dist:", 14))
			continue;
		l += 14;
		l += strspn(l, " \t");
		/* this line only: a marker "extra == ..." on a later one is not its */
		char req[1024];
		size_t len = strcspn(l, "\r\n");
		if (len >= sizeof(req))
			len = sizeof(req) - 1;
		memcpy(req, l, len);
		req[len] = '\0';
		if (strncasecmp(req, "torch", 5) ||
		    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
		           req[5]))
			continue;
		use = strstr(req, "extra ==") || strstr(req, "extra==") ? T_SOFT : T_HARD;
	}
	free(text);
	return use;
}

/* Appends to list (at *n) each module of class cls, each name once,
 * forward or backward. */
static void list_class(const char **list, size_t *n, const ml_import_run *run, int cls,
                       bool backward)
{
	const ml_import_check *c = run->c;
	for (size_t k = 0; k < c->n_modules; k++) {
		size_t i = backward ? c->n_modules - 1 - k : k;
		if (run->torch[i] == cls)
			add_name(list, n, c->modules[i].module);
	}
}

/* One interpreter's list into list (room for every module): torch's
 * share first when first (then the extras' users, then the rest
 * backward); else the rest forward, then the extras' users. Returns the
 * count. */
static size_t make_list(const char **list, const ml_import_run *run, bool first)
{
	size_t n = 0;
	if (first) {
		list_class(list, &n, run, T_HARD, false);
		list_class(list, &n, run, T_SOFT, false);
		list_class(list, &n, run, T_NONE, true);
	} else {
		list_class(list, &n, run, T_NONE, false);
		list_class(list, &n, run, T_SOFT, false);
	}
	return n;
}

/* How many names of the held list fit the command line the other
 * interpreter gets ("--import NAME" each, beside the script): at most
 * HELD_ARGV_BYTES. The workers' lists have every module but torch's
 * share, so what is cut off is still imported; 0 when not even torch's
 * share (the first n_hard names) fits, and nothing is held then. */
static size_t held_fit(const char *const *list, size_t n, size_t n_hard)
{
	size_t bytes = 0, k = 0;
	for (; k < n && bytes + strlen(list[k]) + 10 <= HELD_ARGV_BYTES; k++)
		bytes += strlen(list[k]) + 10;
	return k < n_hard ? 0 : k;
}

/* An interpreter's argv for a list of n names: python -c script claims
 * names... NULL. Returns NULL when out of memory. */
static const char **job_argv(const ml_import_run *run, const char *const *names, size_t n)
{
	const char **argv = calloc(n + 5, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = run->py;
	argv[1] = "-c";
	argv[2] = import_script;
	argv[3] = run->claims;
	for (size_t i = 0; i < n; i++)
		argv[4 + i] = names[i];
	return argv;
}

/* Makes the lists and starts the workers, each on its own thread; with
 * hold_torch, torch's share heads the list kept for the other interpreter
 * (run->held) and no worker's list has it. */
static int start_imports(ml_import_run *run, const char *env_root, unsigned jobs,
                         bool hold_torch)
{
	ml_import_check *c = run->c;
	if (ml_pathf(run->py, sizeof(run->py), "%s/" ML_ENV_PYTHON_NATIVE, env_root))
		return ml_err_set(&c->run_err, ML_EFAIL, "path too long: '%s'", env_root);
	size_t n_dists = 0, n_hard = 0;
	for (size_t i = 0; i < c->n_modules; i++)
		if (i == 0 || strcmp(c->modules[i].distribution, c->modules[i - 1].distribution)) {
			n_dists++;
			n_hard += run->torch[i] == T_HARD;
		}
	bool hold = hold_torch && n_hard;
	run->nw = worker_count(hold ? n_dists - n_hard : n_dists, jobs);
	if (run->nw + hold > 1) {
		ml_err terr = ML_ERR_INIT;
		if (ml_fs_mktempdir(run->claims, sizeof(run->claims), "imports", &terr)) {
			run->claims[0] = '\0'; /* no claims: one interpreter does it all */
			run->nw = 1;
			hold = false;
		}
	}
	const char **list = calloc(c->n_modules + 1, sizeof(*list));
	run->jobs = calloc(run->nw, sizeof(*run->jobs));
	run->th = calloc(run->nw, sizeof(*run->th));
	run->started = calloc(run->nw, sizeof(*run->started));
	int rc = list && run->jobs && run->th && run->started ? 0 : ML_ENOMEM;
	if (!rc && hold) {
		size_t n_hard_names = 0;
		list_class(list, &n_hard_names, run, T_HARD, false);
		run->n_held = held_fit(list, make_list(list, run, true), n_hard_names);
		hold = run->n_held > 0;
	}
	if (!rc && hold && !(run->held = job_argv(run, list, run->n_held)))
		rc = ML_ENOMEM;
	for (size_t k = 0; !rc && k < run->nw; k++) {
		import_job *j = &run->jobs[k];
		j->n = make_list(list, run, !hold && k == 0);
		if (!(j->argv = job_argv(run, list, j->n)))
			rc = ML_ENOMEM;
	}
	free(list);
	for (size_t k = 0; !rc && k < run->nw; k++)
		run->started[k] = run->jobs[k].n &&
		                  pthread_create(&run->th[k], NULL, import_run, &run->jobs[k]) == 0;
	return rc;
}

/* Waits for the started workers. */
static void join_all(ml_import_run *run)
{
	for (size_t k = 0; run->jobs && run->started && k < run->nw; k++)
		if (run->started[k]) {
			pthread_join(run->th[k], NULL);
			run->started[k] = false;
		}
}

static void run_free(ml_import_run *run)
{
	if (run->claims[0])
		ml_fs_rm_tree(run->claims);
	for (size_t k = 0; run->jobs && k < run->nw; k++) {
		free(run->jobs[k].argv);
		free(run->jobs[k].out);
	}
	free(run->jobs);
	free(run->th);
	free(run->started);
	free(run->held);
	free(run->torch);
	cJSON_Delete(run->answers);
	free(run);
}

int ml_verify_imports_start(ml_import_run **out, const char *env_root, const char *python_xy,
                            const ml_import_dist *dists, size_t n, unsigned jobs,
                            bool hold_torch, ml_err *err)
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
	size_t cap = 0, tcap = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		size_t first = c->n_modules;
		rc = add_dist_modules(c, &cap, site, &dists[i]);
		if (rc || c->n_modules == first)
			continue;
		if (tcap < cap) {
			unsigned char *t = realloc(run->torch, cap);
			if (!t) {
				rc = ML_ENOMEM;
				break;
			}
			run->torch = t;
			tcap = cap;
		}
		int use = torch_use(site, &dists[i]);
		for (size_t k = first; k < c->n_modules; k++) {
			run->torch[k] = (unsigned char)use;
			c->modules[k].with_torch = use == T_HARD;
		}
	}
	if (!rc && !run->torch && !(run->torch = calloc(1, 1)))
		rc = ML_ENOMEM;
	if (!rc)
		rc = start_imports(run, env_root, jobs, hold_torch);
	if (rc == ML_ENOMEM) {
		ml_verify_imports_abandon(run);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (rc && !c->run_rc)
		c->run_rc = rc;
	*out = run;
	return 0;
}

/* The modules nobody answered for (a crashed or killed interpreter, or
 * the other interpreter never got to them): one more interpreter imports
 * them, claiming nothing. Returns ML_ENOMEM or 0. */
static int answer_the_rest(ml_import_check *c, ml_import_run *run, bool *answered)
{
	const char **names = calloc(c->n_modules + 1, sizeof(*names));
	if (!names)
		return ML_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < c->n_modules; i++)
		if (!answered[i])
			add_name(names, &n, c->modules[i].module);
	int rc = 0;
	import_job j = {0};
	if (n) {
		if (run->claims[0]) /* claims are for interpreters side by side */
			ml_fs_rm_tree(run->claims);
		run->claims[0] = '\0';
		j.n = n;
		j.err = (ml_err)ML_ERR_INIT;
		if (!(j.argv = job_argv(run, names, n)))
			rc = ML_ENOMEM;
	}
	if (n && !rc) {
		import_run(&j);
		cJSON *res = j.rc ? NULL : cJSON_Parse(j.out);
		if (!j.rc && !res)
			j.rc = ml_err_set(&j.err, ML_EFAIL,
			                  "the import check printed no result (status %d)", j.status);
		if (j.rc) {
			c->run_rc = j.rc;
			c->run_err = j.err;
		}
		rc = take_answers(c, answered, res);
		cJSON_Delete(res);
	}
	free(j.argv);
	free(j.out);
	free(names);
	return rc;
}

int ml_verify_imports_finish(ml_import_check **out, ml_import_run *run, ml_err *err)
{
	ml_import_check *c = run->c;
	join_all(run);
	bool *answered = calloc(c->n_modules ? c->n_modules : 1, sizeof(*answered));
	int rc = answered ? 0 : ML_ENOMEM;
	for (size_t k = 0; !rc && !c->run_rc && run->jobs && k < run->nw; k++) {
		import_job *j = &run->jobs[k];
		if (!j->n)
			continue;
		if (!j->out && !j->rc)
			import_run(j); /* no thread could be had: now */
		if (j->rc) { /* it could not run, or it ran out of time */
			c->run_rc = j->rc;
			c->run_err = j->err;
			break;
		}
		cJSON *res = cJSON_Parse(j->out); /* NULL: it crashed; the rest below */
		rc = take_answers(c, answered, res);
		cJSON_Delete(res);
	}
	if (!rc && !c->run_rc)
		rc = take_answers(c, answered, run->answers);
	if (!rc && !c->run_rc)
		rc = answer_the_rest(c, run, answered);
	for (size_t i = 0; !rc && !c->run_rc && i < c->n_modules; i++)
		if (!answered[i])
			rc = record_failure(c, i, NULL);
	free(answered);
	run->c = NULL;
	run_free(run);
	if (rc == ML_ENOMEM) {
		ml_import_check_free(c);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	*out = c;
	return 0;
}

size_t ml_verify_imports_held(const ml_import_run *run, const char *const **names,
                              const char **claims)
{
	*names = NULL;
	*claims = NULL;
	if (!run || !run->held)
		return 0;
	*names = run->held + 4;
	*claims = run->claims;
	return run->n_held;
}

int ml_verify_imports_answer(ml_import_run *run, const cJSON *answers)
{
	if (!run || !run->held || !cJSON_IsObject(answers))
		return 0;
	cJSON_Delete(run->answers);
	return (run->answers = cJSON_Duplicate(answers, true)) ? 0 : ML_ENOMEM;
}

void ml_verify_imports_abandon(ml_import_run *run)
{
	if (!run)
		return;
	join_all(run);
	ml_import_check_free(run->c);
	run_free(run);
}

int ml_verify_imports(ml_import_check **out, const char *env_root, const char *python_xy,
                      const ml_import_dist *dists, size_t n, ml_err *err)
{
	ml_import_run *run = NULL;
	int rc = ml_verify_imports_start(&run, env_root, python_xy, dists, n, 0, false, err);
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
