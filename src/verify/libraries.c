/*
 * libraries.c - the one reader of manifests/cuda-libraries.json (embedded):
 * CUDA libraries of the torch stacks that support only part of the GPUs
 * torch runs on, each with its documented minimum compute capability, the
 * use torch makes of it and the source of both. The audit asks here before
 * it calls a library's missing code a failure: cuSPARSELt (2:4 structured
 * sparsity, compute capability 8.0 and newer by design) carries no code a
 * V100 can run on an older driver, and torch never asks it to.
 *
 * The table is parsed once, on first use, into static storage; every
 * string handed out points into it and lives as long as the process.
 */
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define MAX_LIBRARIES 16
#define MAX_PATTERNS  8

struct row {
	char name[32], min_cc[8], torch_uses[256], source[512];
	char patterns[MAX_PATTERNS][64];
	size_t n_patterns;
	ml_cuda_library lib;
};

static struct {
	bool ok;
	char error[256];
	struct row rows[MAX_LIBRARIES];
	size_t n;
} table;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool bad(const char *what)
{
	snprintf(table.error, sizeof table.error, "embedded cuda-libraries.json: %s", what);
	return false;
}

/* Copies the string member key of obj into dst; false when it is missing,
 * not a string or does not fit. */
static bool text(char *dst, size_t sz, const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= sz || !v->valuestring[0])
		return false;
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return true;
}

static bool load_row(const cJSON *e)
{
	if (table.n == MAX_LIBRARIES)
		return bad("too many libraries");
	struct row *r = &table.rows[table.n];
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(e, "files"), *f;
	int major = 0, minor = 0, used = 0;
	if (!text(r->name, sizeof r->name, e, "name") ||
	    !text(r->min_cc, sizeof r->min_cc, e, "min_cc") ||
	    !text(r->torch_uses, sizeof r->torch_uses, e, "torch_uses") ||
	    !text(r->source, sizeof r->source, e, "source") || !cJSON_IsArray(files) ||
	    sscanf(r->min_cc, "%d.%d%n", &major, &minor, &used) != 2 || r->min_cc[used] ||
	    major < 1 || minor < 0 || minor > 9)
		return bad("a library needs name, files, min_cc (X.Y), torch_uses and source");
	cJSON_ArrayForEach(f, files)
	{
		if (r->n_patterns == MAX_PATTERNS || !cJSON_IsString(f) || !f->valuestring[0] ||
		    strlen(f->valuestring) >= sizeof r->patterns[0] || strchr(f->valuestring, '/'))
			return bad("files must list up to 8 file-name patterns");
		memcpy(r->patterns[r->n_patterns++], f->valuestring, strlen(f->valuestring) + 1);
	}
	if (r->n_patterns == 0)
		return bad("a library needs at least one file-name pattern");
	r->lib = (ml_cuda_library){r->name, major, minor, r->torch_uses, r->source};
	table.n++;
	return true;
}

static void load(void)
{
	const ml_embedded_file *f = ml_embedded_find("cuda-libraries.json");
	if (!f) {
		bad("missing from this build");
		return;
	}
	cJSON *doc = cJSON_ParseWithLength(f->data, f->size);
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	const cJSON *libs = cJSON_GetObjectItemCaseSensitive(doc, "libraries"), *e;
	if (!doc)
		bad("not valid JSON");
	else if (!cJSON_IsString(schema) ||
	         strcmp(schema->valuestring, "mlsetup.cuda-libraries/1") != 0)
		bad("schema is not mlsetup.cuda-libraries/1");
	else if (!cJSON_IsArray(libs))
		bad("no libraries array");
	else {
		table.ok = true;
		cJSON_ArrayForEach(e, libs) table.ok = table.ok && load_row(e);
	}
	cJSON_Delete(doc);
	if (!table.ok)
		table.n = 0;
}

int ml_cuda_libraries_check(ml_err *err)
{
	pthread_once(&once, load);
	if (table.ok)
		return 0;
	ml_err_set(err, ML_EPARSE, "%s", table.error);
	ml_err_hint(err, "this mlsetup binary is broken: rebuild it from a clean checkout");
	return ML_EPARSE;
}

const ml_cuda_library *ml_cuda_library_find(const char *path)
{
	pthread_once(&once, load);
	if (!path)
		return NULL;
	const char *slash = strrchr(path, '/'), *bang = strrchr(path, '!');
	const char *back = strrchr(path, '\\');
	const char *base = path;
	if (slash && slash + 1 > base)
		base = slash + 1;
	if (bang && bang + 1 > base)
		base = bang + 1;
	if (back && back + 1 > base)
		base = back + 1;
	for (size_t i = 0; i < table.n; i++)
		for (size_t k = 0; k < table.rows[i].n_patterns; k++)
			if (fnmatch(table.rows[i].patterns[k], base, 0) == 0)
				return &table.rows[i].lib;
	return NULL;
}
