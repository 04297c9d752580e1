/*
 * report.c - the "mlsetup.report/1" document: built from what the stages
 * returned, written into the environment atomically, and read back by the
 * next run (is the environment already this plan? which manifest did it
 * come from?).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mlsetup/report.h"

#define MAX_REPORT_BYTES (64u << 20)

struct ml_report {
	cJSON *doc;
};

static void add_installed(cJSON *doc, const ml_report_input *in)
{
	cJSON *inst = cJSON_AddArrayToObject(doc, "installed");
	uint64_t extracted = 0, hits = 0, linked = 0, refl = 0, hard = 0, copied = 0;
	const ml_plan *p = in->plan;
	for (size_t i = 0; p && in->wheels && i < p->n_files; i++) {
		const ml_wheel_result *res = &in->wheels[i];
		const ml_artifact *a = &p->files[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", a->name);
		cJSON_AddStringToObject(j, "version", a->version);
		cJSON_AddStringToObject(j, "filename", a->filename ? a->filename : "");
		cJSON_AddStringToObject(j, "sha256", a->sha256);
		cJSON_AddNumberToObject(j, "size", (double)a->size);
		cJSON_AddBoolToObject(j, "requested", a->requested);
		cJSON_AddBoolToObject(j, "from_cache", in->from_cache && in->from_cache[i]);
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
	for (size_t i = 0; i < in->n_stages; i++) {
		char key[64];
		snprintf(key, sizeof(key), "%s_s", in->stage_names[i]);
		cJSON_AddNumberToObject(st, key, in->stage_seconds[i]);
		total += in->stage_seconds[i];
	}
	cJSON_AddNumberToObject(st, "total_s", total);
	cJSON *c = cJSON_AddObjectToObject(doc, "counters");
	cJSON_AddNumberToObject(c, "downloaded_files", (double)in->downloaded_files);
	cJSON_AddNumberToObject(c, "downloaded_bytes", (double)in->downloaded_bytes);
	cJSON_AddNumberToObject(c, "files_from_cache", (double)in->files_from_cache);
	cJSON_AddNumberToObject(c, "unpacked_cache_hits", (double)hits);
	cJSON_AddNumberToObject(c, "bytes_extracted", (double)extracted);
	cJSON_AddNumberToObject(c, "files_linked", (double)linked);
	cJSON_AddNumberToObject(c, "files_reflinked", (double)refl);
	cJSON_AddNumberToObject(c, "files_hardlinked", (double)hard);
	cJSON_AddNumberToObject(c, "files_copied", (double)copied);
}

cJSON *ml_report_build(const ml_report_input *in)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	cJSON_AddStringToObject(doc, "schema", ML_REPORT_SCHEMA);
	cJSON_AddStringToObject(doc, "mlsetup_version", ML_VERSION);
	cJSON_AddStringToObject(doc, "status",
	                        in->status ? "failed" : in->unverified ? "unverified" : "ok");
	if (in->status) {
		cJSON_AddStringToObject(doc, "error", in->err ? in->err->msg : "");
		cJSON_AddStringToObject(doc, "hint", in->err ? in->err->hint : "");
	}
	cJSON_AddStringToObject(doc, "target", in->target ? in->target : "");
	if (in->machine)
		cJSON_AddItemToObject(doc, "machine", ml_machine_to_json(in->machine));
	if (in->plan)
		cJSON_AddItemToObject(doc, "plan", ml_plan_to_json(in->plan, in->machine));
	cJSON *py = cJSON_AddObjectToObject(doc, "python");
	cJSON_AddStringToObject(py, "version", in->python ? in->python->version : "");
	cJSON_AddStringToObject(py, "executable", in->python ? in->python->executable : "");
	cJSON_AddBoolToObject(py, "already_unpacked", in->python_already_unpacked);
	if (in->python_source && in->python_source[0])
		cJSON_AddStringToObject(py, "source", in->python_source);
	if (in->python_reason && in->python_reason[0])
		cJSON_AddStringToObject(py, "reason", in->python_reason);
	add_installed(doc, in);
	if (in->verification)
		cJSON_AddItemToObject(doc, "verification", cJSON_Duplicate(in->verification, true));
	if (in->project)
		ml_project_info_add_json(doc, "project", in->project);
	if (in->audit_before_build)
		cJSON_AddItemToObject(doc, "audit_before_build",
		                      ml_audit_to_json(in->audit_before_build));
	if (in->gpu) {
		cJSON *g = cJSON_AddObjectToObject(doc, "gpu_verification");
		if (!g || ml_verification_add_json(g, in->gpu) != 0) {
			cJSON_Delete(doc);
			return NULL;
		}
	}
	return doc;
}

int ml_report_write(const char *target, const cJSON *doc, ml_err *err)
{
	char path[ML_PATH_MAX + 32];
	if (ml_pathf(path, sizeof(path), "%s/%s", target, ML_REPORT_FILE))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", target);
	char *text = cJSON_Print(doc);
	if (!text)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t len = strlen(text);
	char *data = malloc(len + 2);
	if (!data) {
		cJSON_free(text);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	memcpy(data, text, len);
	data[len] = '\n';
	cJSON_free(text);
	int rc = ml_fs_write_atomic(path, data, len + 1, 0644);
	free(data);
	if (rc)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-rc));
	return 0;
}

int ml_report_read(ml_report **out, const char *target, ml_err *err)
{
	char path[ML_PATH_MAX + 32];
	if (ml_pathf(path, sizeof(path), "%s/%s", target, ML_REPORT_FILE))
		return ml_err_set(err, ML_ENOENT, "path too long: '%s'", target);
	char *text = NULL;
	int rc = ml_os_read_file(&text, NULL, NULL, path, MAX_REPORT_BYTES, err);
	if (rc)
		return rc;
	cJSON *doc = cJSON_Parse(text);
	free(text);
	const char *schema = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "schema"));
	if (!doc || !schema || strcmp(schema, ML_REPORT_SCHEMA) != 0) {
		cJSON_Delete(doc);
		return ml_err_set(err, ML_EPARSE, "'%s' is not an %s document", path,
		                  ML_REPORT_SCHEMA);
	}
	ml_report *r = calloc(1, sizeof(*r));
	if (!r) {
		cJSON_Delete(doc);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	r->doc = doc;
	*out = r;
	return 0;
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, a);
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, b));
}

const char *ml_report_manifest(const ml_report *r)
{
	if (!r)
		return NULL;
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(r->doc, "plan");
	return str_at(plan, "manifest", "name");
}

static bool has_sha256(const cJSON *installed, const char *sha256)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, installed)
	{
		const char *h = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "sha256"));
		if (h && strcmp(h, sha256) == 0)
			return true;
	}
	return false;
}

bool ml_report_matches_plan(const ml_report *r, const ml_plan *p)
{
	if (!r || !p || !p->selection || !p->selection->manifest)
		return false;
	const char *status =
	        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r->doc, "status"));
	const char *man = ml_report_manifest(r);
	const char *pyv = str_at(r->doc, "python", "version");
	const cJSON *inst = cJSON_GetObjectItemCaseSensitive(r->doc, "installed");
	if (!status || strcmp(status, "ok") != 0 || !man ||
	    strcmp(man, p->selection->manifest->name) != 0 || !pyv ||
	    strcmp(pyv, p->python.version) != 0 || !cJSON_IsArray(inst) ||
	    (size_t)cJSON_GetArraySize(inst) != p->n_files)
		return false;
	for (size_t i = 0; i < p->n_files; i++)
		if (!has_sha256(inst, p->files[i].sha256))
			return false;
	return true;
}

void ml_report_free(ml_report *r)
{
	if (!r)
		return;
	cJSON_Delete(r->doc);
	free(r);
}
