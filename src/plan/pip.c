/*
 * pip.c - resolves a requirements file that does not pin hashes (pinned
 * without hashes, or loose: ranges, extras, markers, -r/-c includes,
 * extra indexes) with pip's own resolver, run by the interpreter the
 * environment will use, so markers and tags are that interpreter's: `pip
 * install --dry-run --report`, wheels only. pip's installation report
 * names the exact file of every package of the closure and its sha256;
 * the install then checks every byte against that resolution. No
 * home-made resolver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* Asks the interpreter for its pip and whether it is externally managed
 * (PEP 668: an EXTERNALLY-MANAGED file in its standard library). */
static const char probe_py[] =
        "import os, sysconfig\n"
        "try:\n"
        "    import pip\n"
        "    v = pip.__version__\n"
        "except Exception as e:\n"
        "    v = 'none: %s' % e\n"
        "em = os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED'))\n"
        "print('%d %s' % (em, v))\n";

int ml_pip_probe(ml_pip_info *out, const char *python, ml_err *err)
{
	const char *argv[] = {python, "-I", "-c", probe_py, NULL};
	char *o = NULL;
	int status = 0;
	int rc = ml_os_run_capture(&o, &status, argv, 4096, 60, err);
	if (rc == 0 && status != 0)
		rc = ml_err_set(err, ML_EFAIL, "interpreter '%s' does not run", python);
	if (rc) {
		free(o);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	char ver[256] = "";
	int em = 0;
	if (sscanf(o, "%d %255[^\n]", &em, ver) != 2) {
		free(o);
		return ml_err_set(err, ML_EFAIL, "interpreter '%s' answered no pip version",
		                  python);
	}
	free(o);
	out->externally_managed = em != 0;
	out->has_pip = strncmp(ver, "none", 4) != 0;
	ml_strlcpy(out->version, out->has_pip ? ver : "", sizeof(out->version));
	if (!out->has_pip) {
		ml_err_set(err, ML_ENOENT,
		           "interpreter '%s' has no pip (%s), which resolves requirements that do "
		           "not pin hashes",
		           python, ver[4] == ':' ? ver + 6 : ver);
		ml_err_hint(
		        err,
		        "install its pip ('%s -m ensurepip', or the distribution's python3-pip), "
		        "choose an interpreter that has one (--python PATH), or pin every "
		        "requirement with hashes (mlsetup lock)",
		        python);
		return ML_ENOENT;
	}
	return 0;
}

void ml_pip_picks_free(ml_pip_pick *picks, size_t n)
{
	for (size_t i = 0; picks && i < n; i++) {
		free(picks[i].name);
		free(picks[i].version);
		free(picks[i].url);
	}
	free(picks);
}

static const char *str_at(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The sha256 of a report entry: archive_info.hashes.sha256 (pip >= 23),
 * else archive_info.hash "sha256=..." (older pip). */
static void report_sha256(char out[65], const cJSON *di)
{
	const cJSON *ai = cJSON_GetObjectItemCaseSensitive(di, "archive_info");
	const char *h = str_at(cJSON_GetObjectItemCaseSensitive(ai, "hashes"), "sha256");
	const char *legacy = str_at(ai, "hash");
	out[0] = '\0';
	if (!h && legacy && strncmp(legacy, "sha256=", 7) == 0)
		h = legacy + 7;
	if (h && ml_sha256_hex_normalize(out, h) != 0)
		out[0] = '\0';
}

static int read_report(ml_pip_pick **out, size_t *n_out, const char *path, ml_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ml_os_read_file(&text, &len, NULL, path, 256u * 1024 * 1024, err);
	if (rc)
		return rc;
	cJSON *doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (!doc)
		return ml_err_set(err, ML_EPARSE, "pip's report '%s' is not valid JSON", path);
	const cJSON *install = cJSON_GetObjectItemCaseSensitive(doc, "install"), *it;
	int n = cJSON_GetArraySize(install);
	ml_pip_pick *picks = calloc(n > 0 ? (size_t)n : 1, sizeof(*picks));
	size_t k = 0;
	if (!cJSON_IsArray(install))
		rc = ml_err_set(err, ML_EPARSE, "pip's report has no install list");
	else if (!picks)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, install)
	{
		if (rc)
			break;
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *di = cJSON_GetObjectItemCaseSensitive(it, "download_info");
		const char *name = str_at(md, "name"), *ver = str_at(md, "version");
		const char *url = str_at(di, "url");
		if (!name || !ver || !url) {
			rc = ml_err_set(
			        err, ML_EPARSE,
			        "pip's report lists a package without name, version or URL");
			break;
		}
		ml_pip_pick *p = &picks[k++];
		p->name = strdup(name);
		p->version = strdup(ver);
		p->url = strdup(url);
		p->requested = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "requested"));
		report_sha256(p->sha256, di);
		if (!p->name || !p->version || !p->url)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	cJSON_Delete(doc);
	if (rc) {
		ml_pip_picks_free(picks, k);
		return rc;
	}
	*out = picks;
	*n_out = k;
	return 0;
}

/* --- one pip dry run (shared with lock.c) ------------------------------------ */

int ml_resolver_run_begin(ml_pip_run *r, const char *what, ml_err *err)
{
	memset(r, 0, sizeof *r);
	int rc = ml_fs_mktempdir(r->dir, sizeof r->dir, what, err);
	if (rc)
		return rc;
	snprintf(r->target, sizeof r->target, "%s/target", r->dir);
	snprintf(r->report, sizeof r->report, "%s/report.json", r->dir);
	snprintf(r->input, sizeof r->input, "%s/requirements.txt", r->dir);
	return 0;
}

int ml_pip_run_begin(ml_pip_run *r, const char *python, const char *what, ml_err *err)
{
	int rc = ml_resolver_run_begin(r, what, err);
	if (rc)
		return rc;
	const char *fixed[] = {python,
	                       "-m",
	                       "pip",
	                       "install",
	                       "--dry-run",
	                       "--ignore-installed",
	                       "--no-input",
	                       "--disable-pip-version-check",
	                       "--target",
	                       r->target,
	                       "--report",
	                       r->report,
	                       "--only-binary=:all:"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		r->argv[r->n++] = fixed[i];
	return 0;
}

void ml_pip_run_arg(ml_pip_run *r, const char *arg)
{
	if (r->n + 1 < ML_PIP_RUN_MAX_ARGS)
		r->argv[r->n++] = arg;
	else
		r->overflow = true;
}

int ml_pip_run_exec(ml_pip_run *r, char **output, int *status, ml_err *err)
{
	if (r->overflow)
		return ml_err_set(err, ML_EUSAGE, "too many arguments for pip (at most %d)",
		                  ML_PIP_RUN_MAX_ARGS - 1);
	r->argv[r->n] = NULL;
	return ml_os_run_output(output, status, r->argv, 1024 * 1024, 30 * 60, err);
}

int ml_resolver_failed(ml_err *err, const char *tool, const char *input, const char *target,
                       const char *output)
{
	size_t len = output ? strlen(output) : 0;
	const char *tailp = len > 1500 ? output + len - 1500 : output ? output : "";
	ml_err_set(err, ML_EFAIL, "%s could not resolve '%s' for %s:\n%s", tool, input, target,
	           tailp);
	ml_err_hint(err,
	            "fix the requirements or the index options (%s's own message is above); "
	            "mlsetup installs wheels only (--only-binary :all:)",
	            tool);
	return ML_EFAIL;
}

void ml_pip_run_end(ml_pip_run *r)
{
	if (r->dir[0])
		ml_fs_rm_tree(r->dir);
	r->dir[0] = '\0';
}

int ml_pip_resolve(ml_pip_pick **out, size_t *n_out, const ml_pip_resolve_opts *o, ml_err *err)
{
	ml_pip_run r;
	int rc = ml_pip_run_begin(&r, o->python, "resolve", err);
	if (rc)
		return rc;
	if (o->input_text) {
		int e = ml_fs_write_atomic(r.input, o->input_text, strlen(o->input_text), 0644);
		if (e) {
			rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", r.input,
			                strerror(-e));
			ml_pip_run_end(&r);
			return rc;
		}
	}
	/* PEP 668: a distribution's Python refuses installs; a dry run
	 * installs nothing, so it may pass */
	if (o->break_system_packages)
		ml_pip_run_arg(&r, "--break-system-packages");
	for (size_t i = 0; i < o->n_index_args; i++)
		ml_pip_run_arg(&r, o->index_args[i]);
	ml_pip_run_arg(&r, "-r");
	ml_pip_run_arg(&r, o->input_text ? r.input : o->input_path);
	char *output = NULL;
	int status = 0;
	rc = ml_pip_run_exec(&r, &output, &status, err);
	if (!rc && status != 0)
		rc = ml_resolver_failed(err, "pip", o->input_path,
		                        o->target_desc ? o->target_desc : o->python, output);
	free(output);
	if (!rc)
		rc = read_report(out, n_out, r.report, err);
	ml_pip_run_end(&r);
	return rc;
}
