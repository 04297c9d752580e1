/*
 * bytecode.c - .pyc files for everything in an environment's site-packages,
 * made by the environment's own interpreter while the environment is still
 * staged, naming the paths the sources will have once in place: before an
 * install's import check (which then reads bytecode) and with
 * `install --compile-bytecode`.
 *
 * One interpreter per core, each walking the tree in the same sorted order
 * and compiling every n-th file (py_compile, as compileall does; no task
 * queue to feed, which costs compileall's ProcessPoolExecutor a process of
 * its own on a machine whose cores are all busy compiling). A file that
 * does not compile (a template named .py, Python 2 syntax) is counted and
 * left to run from source, as pip and uv leave it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mlsetup/env.h"

#define COMPILE_TIMEOUT_S (30 * 60)
#define MAX_WORKERS       64

/* argv: root final k n. Prints [[path, "Type: message"], ...] for the
 * files it could not compile. */
static const char compile_script[] =
        "import json, os, py_compile, sys\n"
        "root, final, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
        "site = sys.argv[5]\n"
        "files = []\n"
        "for d, dirs, names in os.walk(site):\n"
        "    dirs[:] = sorted(x for x in dirs if x != '__pycache__')\n"
        "    files += [os.path.join(d, f) for f in sorted(names) if f.endswith('.py')]\n"
        "bad = []\n"
        "for src in files[k::n]:\n"
        "    try:\n"
        "        py_compile.compile(src, dfile=os.path.join(final, os.path.relpath(src, root)),\n"
        "                           doraise=True)\n"
        "    except py_compile.PyCompileError as e:\n"
        "        v = e.exc_value\n"
        "        line = getattr(v, 'lineno', None)\n"
        "        why = '%s: %s' % (e.exc_type_name, getattr(v, 'msg', v))\n"
        "        bad.append([os.path.relpath(src, root), why + (' (line %d)' % line if line else '')])\n"
        "    except Exception as e:\n"
        "        bad.append([os.path.relpath(src, root), '%s: %s' % (type(e).__name__, e)])\n"
        "print(json.dumps(bad))\n";

typedef struct worker {
	const char *argv[9];
	char k[16], n[16];
	char *out;
	int status;
	int rc;
	ml_err err;
	pthread_t th;
	bool started;
} worker;

static void *worker_run(void *arg)
{
	worker *w = arg;
	w->rc = ml_os_run_capture(&w->out, &w->status, w->argv, 16 << 20, COMPILE_TIMEOUT_S,
	                          &w->err);
	return NULL;
}

int ml_env_bytecode_workers(void)
{
	int n = ml_os_cpu_count();
	return n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : n;
}

int ml_env_compile_bytecode(const ml_env_layout *env, size_t *n_failed, char *first_failure,
                            size_t first_sz, ml_err *err)
{
	char py[ML_PATH_MAX + 16], site[ML_PATH_MAX + 80];
	if (n_failed)
		*n_failed = 0;
	if (first_failure && first_sz)
		first_failure[0] = '\0';
	if (ml_pathf(py, sizeof(py), "%s/%s", env->root, env->python) ||
	    ml_pathf(site, sizeof(site), "%s/%s", env->root, env->site_packages))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", env->root);
	int n = ml_env_bytecode_workers();
	worker *ws = calloc((size_t)n, sizeof(*ws));
	if (!ws)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (int k = 0; k < n; k++) {
		worker *w = &ws[k];
		snprintf(w->k, sizeof(w->k), "%d", k);
		snprintf(w->n, sizeof(w->n), "%d", n);
		const char *argv[] = {py,          "-c", compile_script, env->root, env->final_root,
		                      w->k,        w->n, site,           NULL};
		memcpy(w->argv, argv, sizeof(argv));
		w->err = (ml_err)ML_ERR_INIT;
		w->started = pthread_create(&w->th, NULL, worker_run, w) == 0;
	}
	int rc = 0;
	for (int k = 0; k < n; k++) {
		worker *w = &ws[k];
		if (w->started)
			pthread_join(w->th, NULL);
		else
			worker_run(w); /* no thread to be had: here */
		cJSON *bad = w->rc || w->status ? NULL : cJSON_Parse(w->out);
		if (!rc && w->rc) {
			*err = w->err;
			rc = w->rc;
		} else if (!rc && !cJSON_IsArray(bad)) {
			bool said = w->out && *w->out;
			rc = ml_err_set(err, ML_EFAIL,
			                "compiling the bytecode failed (status %d): the environment's "
			                "interpreter %s%.400s",
			                w->status, said ? "said: " : "ended without a word",
			                said ? w->out : "");
			ml_err_hint(err,
			            "what an interpreter runs at startup (a .pth file or sitecustomize "
			            "in site-packages) can end it; nothing was installed, and "
			            "--no-compile-bytecode skips this step");
		}
		const cJSON *one = NULL;
		cJSON_ArrayForEach(one, bad)
		{
			if (n_failed && first_failure && first_sz && !*n_failed)
				snprintf(first_failure, first_sz, "%s: %s",
				         cJSON_GetStringValue(cJSON_GetArrayItem(one, 0)),
				         cJSON_GetStringValue(cJSON_GetArrayItem(one, 1)));
			if (n_failed)
				(*n_failed)++;
		}
		cJSON_Delete(bad);
		free(w->out);
	}
	free(ws);
	return rc;
}
