/*
 * torch.c - the one reader of manifests/torch-builds.json (embedded): which
 * CUDA code and CUDA toolkit every known torch build carries, a build being
 * (version, backend, platform) on the package index or on one of PyTorch's
 * variant indexes. Audited builds are found by the sha256 of any of their
 * wheel files or by their version; every build, derived ones included, by
 * (version, backend, platform) or in the list of a version's builds. The
 * table is generated (`make torch-builds`: manifests/make_torch_builds.py
 * audits one wheel per package-index build with `mlsetup audit` and derives
 * the variant builds from each release's arch table or release notes);
 * nothing here is a second copy of it. A build's minimum driver is asked of
 * the CUDA -> driver table (detect.h) each time.
 *
 * The table is parsed once, on first use; what it hands out lives as long
 * as the process. Manifests without a torch_sass/torch_ptx header take
 * their torch facts from here by their torch wheel hashes.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define TABLE_NAME "torch-builds.json"

static struct {
	bool ok;
	char error[256];
	ml_torch_build *builds;
	size_t n_builds;
	ml_torch_file *files; /* every file of every build, build by build */
	size_t n_files;
	char *strings; /* file names, hashes, sources and notes, NUL-separated */
} table;

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static bool bad(const char *fmt, const char *what)
{
	snprintf(table.error, sizeof table.error, "embedded " TABLE_NAME ": ");
	size_t l = strlen(table.error);
	snprintf(table.error + l, sizeof table.error - l, fmt, what ? what : "");
	return false;
}

/* Copies the string member key of obj into dst (sz bytes); absent or null
 * reads as "" when optional. Returns false when missing or too long. */
static bool str_member(char *dst, size_t sz, const cJSON *obj, const char *key, bool optional)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	dst[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return optional;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= sz)
		return false;
	ml_strlcpy(dst, v->valuestring, sz);
	return true;
}

static bool dotted_or_empty(const char *s)
{
	if (!*s)
		return true;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
			return false;
	return true;
}

/* Reads key's array of architecture names (PTX when want_ptx); null reads
 * as no entries and sets *unknown. */
static bool code_member(ml_cuda_arch *out, size_t *n, const cJSON *obj, const char *key,
                        bool want_ptx, bool *unknown)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key), *e;
	*n = 0;
	if (cJSON_IsNull(arr)) {
		*unknown = true;
		return true;
	}
	if (!cJSON_IsArray(arr))
		return false;
	cJSON_ArrayForEach(e, arr)
	{
		ml_cuda_arch a;
		if (!cJSON_IsString(e) || ml_cuda_arch_parse(&a, e->valuestring) != 0 ||
		    a.ptx != want_ptx || *n == ML_TORCH_MAX_CODE)
			return false;
		out[(*n)++] = a;
	}
	return true;
}

static int cmp_hash(const void *a, const void *b)
{
	return strcmp(((const ml_torch_file *)a)->sha256, ((const ml_torch_file *)b)->sha256);
}

/* Checks that no sha256 appears twice in the whole table. */
static bool hashes_unique(void)
{
	ml_torch_file *sorted = malloc((table.n_files ? table.n_files : 1) * sizeof *sorted);
	if (!sorted)
		return bad("out of memory%s", NULL);
	memcpy(sorted, table.files, table.n_files * sizeof *sorted);
	qsort(sorted, table.n_files, sizeof *sorted, cmp_hash);
	bool ok = true;
	for (size_t i = 1; ok && i < table.n_files; i++)
		if (strcmp(sorted[i - 1].sha256, sorted[i].sha256) == 0)
			ok = bad("sha256 %s is listed twice", sorted[i].sha256);
	free(sorted);
	return ok;
}

/* Copies the string member key of e (when a non-empty string) into the
 * table's strings; *dst is NULL when absent or null. */
static bool text_member(const char **dst, const cJSON *e, const char *key, char **strp)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
	*dst = NULL;
	if (!v || cJSON_IsNull(v))
		return true;
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return false;
	*dst = *strp;
	*strp += sprintf(*strp, "%s", v->valuestring) + 1;
	return true;
}

/* The source kind of a source text, -1 when it is none of the table's. */
static int source_kind(const char *source)
{
	if (!source)
		return -1;
	if (strncmp(source, "audited ", 8) == 0)
		return ML_TORCH_SOURCE_AUDITED;
	if (strncmp(source, "release table ", 14) == 0)
		return ML_TORCH_SOURCE_RELEASE_TABLE;
	if (strcmp(source, "release notes") == 0)
		return ML_TORCH_SOURCE_RELEASE_NOTES;
	return -1;
}

/* Reads backend, index and source; an audited entry is the default index's. */
static bool load_model(ml_torch_build *b, const cJSON *e, char **strp)
{
	char index[16];
	if (!str_member(b->backend, sizeof b->backend, e, "backend", false) || !b->backend[0] ||
	    !str_member(index, sizeof index, e, "index", false))
		return bad("build %s: backend and index must be strings", b->version);
	if (strcmp(index, "default") == 0)
		b->index = ML_TORCH_INDEX_DEFAULT;
	else if (strcmp(index, "variant") == 0)
		b->index = ML_TORCH_INDEX_VARIANT;
	else
		return bad("build %s: index must be default or variant", b->version);
	if (!text_member(&b->source, e, "source", strp) || source_kind(b->source) < 0)
		return bad("build %s: source must be \"audited FILE SHA256\", \"release table "
		           "...\" or \"release notes\"",
		           b->version);
	b->source_kind = (ml_torch_source)source_kind(b->source);
	if (!text_member(&b->note, e, "note", strp))
		return bad("build %s: note must be a string", b->version);
	if ((b->source_kind == ML_TORCH_SOURCE_AUDITED) != (b->index == ML_TORCH_INDEX_DEFAULT))
		return bad("build %s: the default index's builds are audited, the variant "
		           "indexes' derived",
		           b->version);
	if (b->index == ML_TORCH_INDEX_VARIANT && strcmp(b->local, b->backend) != 0)
		return bad("build %s: a variant index's build has its backend as local label",
		           b->version);
	return true;
}

static bool load_build(ml_torch_build *b, const cJSON *e, char **strp)
{
	if (!str_member(b->version, sizeof b->version, e, "version", false) ||
	    !ml_version_valid(b->version) || strchr(b->version, '+'))
		return bad("a build needs a PEP 440 public version%s", NULL);
	if (!str_member(b->local, sizeof b->local, e, "local", true) ||
	    !str_member(b->build_tag, sizeof b->build_tag, e, "build_tag", true) ||
	    !str_member(b->platform, sizeof b->platform, e, "platform", false) || !b->platform[0])
		return bad("build %s: local, build_tag and platform must be strings", b->version);
	if (!load_model(b, e, strp))
		return false;
	if (!str_member(b->cuda, sizeof b->cuda, e, "cuda", true) || !dotted_or_empty(b->cuda))
		return bad("build %s: cuda must be a dotted version or null", b->version);
	bool sass_unknown = false, ptx_unknown = false;
	if (!code_member(b->sass, &b->n_sass, e, "sass", false, &sass_unknown) ||
	    !code_member(b->ptx, &b->n_ptx, e, "ptx", true, &ptx_unknown))
		return bad("build %s: sass and ptx must list sm_XY / compute_XY names", b->version);
	b->code_unknown = sass_unknown || ptx_unknown;
	if (b->code_unknown && (!sass_unknown || !ptx_unknown || !b->cuda[0] ||
	                        b->source_kind == ML_TORCH_SOURCE_AUDITED))
		return bad("build %s: only a derived CUDA build may leave sass and ptx null",
		           b->version);
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(e, "files"), *f;
	bool audited = b->source_kind == ML_TORCH_SOURCE_AUDITED;
	if (!cJSON_IsArray(files) || (cJSON_GetArraySize(files) == 0) == audited)
		return bad(audited ? "build %s has no files" : "derived build %s lists files",
		           b->version);
	b->files = audited ? &table.files[table.n_files] : NULL;
	cJSON_ArrayForEach(f, files)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "filename");
		const cJSON *hash = cJSON_GetObjectItemCaseSensitive(f, "sha256");
		if (!cJSON_IsString(name) || !name->valuestring[0] || !cJSON_IsString(hash) ||
		    !ml_is_sha256_hex(hash->valuestring))
			return bad("build %s: every file needs a filename and a lower-case sha256",
			           b->version);
		ml_torch_file *tf = &table.files[table.n_files++];
		tf->filename = *strp;
		*strp += sprintf(*strp, "%s", name->valuestring) + 1;
		tf->sha256 = *strp;
		*strp += sprintf(*strp, "%s", hash->valuestring) + 1;
		b->n_files++;
	}
	return true;
}

/* Counts files and the bytes their strings (and each build's source and
 * note) need, to allocate once. */
static void measure(const cJSON *builds, size_t *n_files, size_t *n_bytes)
{
	const cJSON *e, *f;
	*n_files = *n_bytes = 0;
	cJSON_ArrayForEach(e, builds)
	{
		static const char *const texts[] = {"source", "note"};
		for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, texts[i]);
			*n_bytes += (cJSON_IsString(t) ? strlen(t->valuestring) : 0) + 1;
		}
		const cJSON *files = cJSON_GetObjectItemCaseSensitive(e, "files");
		cJSON_ArrayForEach(f, files)
		{
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "filename");
			(*n_files)++;
			*n_bytes += (cJSON_IsString(name) ? strlen(name->valuestring) : 0) + 66;
		}
	}
}

static bool load_doc(const cJSON *doc)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "mlsetup.torch-builds/2") != 0)
		return bad("schema is not mlsetup.torch-builds/2%s", NULL);
	const cJSON *builds = cJSON_GetObjectItemCaseSensitive(doc, "builds"), *e;
	if (!cJSON_IsArray(builds) || cJSON_GetArraySize(builds) == 0)
		return bad("no builds%s", NULL);
	size_t n_builds = (size_t)cJSON_GetArraySize(builds), n_files, n_bytes;
	measure(builds, &n_files, &n_bytes);
	table.builds = calloc(n_builds, sizeof *table.builds);
	table.files = calloc(n_files ? n_files : 1, sizeof *table.files);
	table.strings = malloc(n_bytes + 1);
	if (!table.builds || !table.files || !table.strings)
		return bad("out of memory%s", NULL);
	char *strp = table.strings;
	cJSON_ArrayForEach(e, builds)
	{
		if (!load_build(&table.builds[table.n_builds], e, &strp))
			return false;
		table.n_builds++;
	}
	return hashes_unique();
}

static void load(void)
{
	const ml_embedded_file *f = ml_embedded_find(TABLE_NAME);
	if (!f) {
		bad("missing from this build%s", NULL);
		return;
	}
	cJSON *doc = cJSON_ParseWithLength(f->data, f->size);
	if (!doc) {
		bad("not valid JSON%s", NULL);
		return;
	}
	table.ok = load_doc(doc);
	cJSON_Delete(doc);
	if (!table.ok) {
		free(table.builds);
		free(table.files);
		free(table.strings);
		table.builds = NULL;
		table.files = NULL;
		table.strings = NULL;
		table.n_builds = table.n_files = 0;
	}
}

static bool ready(void)
{
	pthread_once(&table_once, load);
	return table.ok;
}

int ml_torch_builds_check(ml_err *err)
{
	if (ready())
		return 0;
	ml_err_set(err, ML_EPARSE, "%s", table.error);
	ml_err_hint(err, "regenerate it with make torch-builds and rebuild mlsetup");
	return ML_EPARSE;
}

size_t ml_torch_builds(const ml_torch_build **out)
{
	bool ok = ready();
	if (out)
		*out = ok ? table.builds : NULL;
	return ok ? table.n_builds : 0;
}

const ml_torch_build *ml_torch_build_lookup(const char *sha256)
{
	char want[65];
	if (!ready() || ml_sha256_hex_normalize(want, sha256) != 0)
		return NULL;
	for (size_t i = 0; i < table.n_builds; i++) {
		const ml_torch_build *b = &table.builds[i];
		for (size_t k = 0; k < b->n_files; k++)
			if (strcmp(b->files[k].sha256, want) == 0)
				return b;
	}
	return NULL;
}

const ml_torch_build *ml_torch_build_find(const char *version, const char *platform)
{
	if (!ready() || !version || !platform)
		return NULL;
	const char *plus = strchr(version, '+');
	size_t vlen = plus ? (size_t)(plus - version) : strlen(version);
	const char *local = plus ? plus + 1 : "";
	char pub[64];
	if (vlen >= sizeof pub)
		return NULL;
	memcpy(pub, version, vlen);
	pub[vlen] = '\0';
	const ml_torch_build *best = NULL;
	for (size_t i = 0; i < table.n_builds; i++) {
		const ml_torch_build *b = &table.builds[i];
		if (b->source_kind != ML_TORCH_SOURCE_AUDITED ||
		    ml_version_cmp(b->version, pub) != 0 || strcmp(b->local, local) != 0 ||
		    strcmp(b->platform, platform) != 0)
			continue;
		if (!best || atoi(b->build_tag) > atoi(best->build_tag))
			best = b;
	}
	return best;
}

const ml_torch_build *ml_torch_build_get(const char *version, const char *backend,
                                         const char *platform, ml_torch_index index)
{
	if (!ready() || !version || !backend || !platform || strchr(version, '+'))
		return NULL;
	const ml_torch_build *best = NULL;
	for (size_t i = 0; i < table.n_builds; i++) {
		const ml_torch_build *b = &table.builds[i];
		if (ml_version_cmp(b->version, version) != 0 || strcmp(b->backend, backend) != 0 ||
		    strcmp(b->platform, platform) != 0 ||
		    (index != ML_TORCH_INDEX_UNKNOWN && b->index != index))
			continue;
		/* the default index's build first, then the highest build tag */
		if (!best || b->index < best->index ||
		    (b->index == best->index && atoi(b->build_tag) > atoi(best->build_tag)))
			best = b;
	}
	return best;
}

size_t ml_torch_builds_of(const char *version, const char *platform, const ml_torch_build **out,
                          size_t max)
{
	size_t n = 0;
	if (!ready() || !version)
		return 0;
	for (size_t i = 0; i < table.n_builds; i++) {
		const ml_torch_build *b = &table.builds[i];
		if (ml_version_cmp(b->version, version) != 0 ||
		    (platform && strcmp(b->platform, platform) != 0))
			continue;
		if (n < max)
			out[n] = b;
		n++;
	}
	return n;
}

const char *ml_torch_index_name(ml_torch_index index)
{
	switch (index) {
	case ML_TORCH_INDEX_DEFAULT:
		return "default";
	case ML_TORCH_INDEX_VARIANT:
		return "variant";
	case ML_TORCH_INDEX_UNKNOWN:
		break;
	}
	return NULL;
}

/* "cpu", "xpu", "cu" + digits, "rocm" + digits and dots: a flavour. */
static bool flavour_label(const char *s)
{
	if (strcmp(s, "cpu") == 0 || strcmp(s, "xpu") == 0)
		return true;
	const char *p = strncmp(s, "cu", 2) == 0     ? s + 2
	                : strncmp(s, "rocm", 4) == 0 ? s + 4
	                                             : NULL;
	if (!p || !isdigit((unsigned char)*p))
		return false;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p) && !(*p == '.' && s[0] == 'r'))
			return false;
	return true;
}

char *ml_torch_backend(char *dst, size_t sz, const char *local, const char *cuda)
{
	if (!sz)
		return dst;
	dst[0] = '\0';
	if (local && flavour_label(local)) {
		ml_strlcpy(dst, local, sz);
		return dst;
	}
	if (!cuda || !*cuda) {
		ml_strlcpy(dst, "cpu", sz);
		return dst;
	}
	const char *dot = strchr(cuda, '.');
	if (!dotted_or_empty(cuda) || !dot)
		return dst; /* "12": the minor is unknown */
	size_t major = (size_t)(dot - cuda), minor = strcspn(dot + 1, ".");
	if (2 + major + minor < sz)
		snprintf(dst, sz, "cu%.*s%.*s", (int)major, cuda, (int)minor, dot + 1);
	return dst;
}

/* The CUDA major of a dotted version ("12.8" -> 12), -1 when none. */
static int cuda_major(const char *cuda)
{
	return cuda && isdigit((unsigned char)*cuda) ? atoi(cuda) : -1;
}

const ml_toolkit_driver *ml_cuda_driver_row(const char *cuda, bool *exact)
{
	*exact = false;
	const ml_toolkit_driver *own = ml_toolkit_driver_find(cuda);
	if (own) {
		*exact = true;
		return own;
	}
	const ml_toolkit_driver *rows;
	size_t n = ml_toolkit_drivers(&rows);
	const ml_toolkit_driver *best = NULL;
	for (size_t i = 0; cuda && i < n; i++)
		if (cuda_major(rows[i].cuda) == cuda_major(cuda) &&
		    ml_driver_version_cmp(rows[i].cuda, cuda) < 0)
			best = &rows[i]; /* rows are oldest first */
	return best;
}

const char *ml_torch_build_min_driver(const ml_torch_build *b, bool windows, bool *at_least)
{
	if (at_least)
		*at_least = false;
	if (!b || !b->cuda[0])
		return NULL;
	bool exact;
	const ml_toolkit_driver *row = ml_cuda_driver_row(b->cuda, &exact);
	if (exact)
		return windows ? row->windows_min : row->linux_min;
	/* Not in the table: the newest older toolkit of the same major, else
	 * the major's minor-version floor, is a lower bound. */
	const char *v = row ? (windows ? row->windows_min : row->linux_min)
	                    : ml_minor_version_floor(b->cuda, windows);
	if (v && at_least)
		*at_least = true;
	return v;
}

static bool add_code(cJSON *obj, const char *key, const ml_cuda_arch *v, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);
	for (size_t i = 0; arr && i < n; i++) {
		char nm[32];
		if (ml_cuda_arch_format(nm, sizeof nm, &v[i]) ||
		    !cJSON_AddItemToArray(arr, cJSON_CreateString(nm)))
			return false;
	}
	return arr != NULL;
}

static bool add_str_or_null(cJSON *obj, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(obj, key, v) != NULL
	         : cJSON_AddNullToObject(obj, key) != NULL;
}

cJSON *ml_torch_build_to_json(const ml_torch_build *b)
{
	cJSON *o = cJSON_CreateObject(), *drv = NULL;
	bool at_least_l = false, at_least_w = false;
	const char *lin = ml_torch_build_min_driver(b, false, &at_least_l);
	const char *win = ml_torch_build_min_driver(b, true, &at_least_w);
	bool ok = o && cJSON_AddStringToObject(o, "version", b->version) &&
	          cJSON_AddStringToObject(o, "local", b->local) &&
	          cJSON_AddStringToObject(o, "build_tag", b->build_tag) &&
	          cJSON_AddStringToObject(o, "platform", b->platform) &&
	          add_str_or_null(o, "backend", b->backend[0] ? b->backend : NULL) &&
	          add_str_or_null(o, "index", ml_torch_index_name(b->index)) &&
	          add_str_or_null(o, "source", b->source) &&
	          add_str_or_null(o, "cuda", b->cuda[0] ? b->cuda : NULL) &&
	          (b->code_unknown
	                   ? cJSON_AddNullToObject(o, "sass") && cJSON_AddNullToObject(o, "ptx")
	                   : add_code(o, "sass", b->sass, b->n_sass) &&
	                             add_code(o, "ptx", b->ptx, b->n_ptx)) &&
	          (drv = cJSON_AddObjectToObject(o, "min_driver")) != NULL &&
	          add_str_or_null(drv, "linux", lin) && add_str_or_null(drv, "windows", win) &&
	          cJSON_AddBoolToObject(drv, "at_least", at_least_l || at_least_w) &&
	          (!b->files || cJSON_AddNumberToObject(o, "files", (double)b->n_files));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* --- manifests ---------------------------------------------------------------- */

static bool same_arch(const ml_cuda_arch *a, const ml_cuda_arch *b)
{
	return a->major == b->major && a->minor == b->minor && a->variant == b->variant &&
	       a->ptx == b->ptx;
}

/* Keeps in *code only the entries also in other (two builds of one pin
 * that disagree: what runs must run with either). */
static void intersect(ml_cuda_arch *code, size_t *n, const ml_cuda_arch *other, size_t n_other)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		for (size_t j = 0; j < n_other; j++)
			if (same_arch(&code[i], &other[j])) {
				code[k++] = code[i];
				break;
			}
	*n = k;
}

int ml_manifest_torch_facts(ml_manifest *mf, ml_err *err)
{
	if (mf->has_gpu_header || !mf->reqs)
		return 0;
	ml_cuda_arch code[2 * ML_TORCH_MAX_CODE];
	size_t n = 0;
	const ml_torch_build *cuda_build = NULL, *any = NULL;
	for (size_t i = 0; i < mf->reqs->n_reqs; i++) {
		const ml_requirement *r = &mf->reqs->reqs[i];
		if (strcmp(r->normalized, "torch") != 0)
			continue;
		for (size_t h = 0; h < r->n_hashes; h++) {
			const ml_torch_build *b = ml_torch_build_lookup(r->sha256[h]);
			if (!b || (cuda_build && !b->cuda[0]))
				continue;
			ml_cuda_arch these[2 * ML_TORCH_MAX_CODE];
			size_t n_these = 0;
			for (size_t k = 0; k < b->n_sass; k++)
				these[n_these++] = b->sass[k];
			for (size_t k = 0; k < b->n_ptx; k++)
				these[n_these++] = b->ptx[k];
			if (b->cuda[0] && !cuda_build) { /* CUDA builds decide from now on */
				memcpy(code, these, n_these * sizeof *code);
				n = n_these;
				cuda_build = b;
			} else if (b->cuda[0]) {
				intersect(code, &n, these, n_these);
				if (ml_driver_version_cmp(b->cuda, cuda_build->cuda) > 0)
					cuda_build = b;
			} else if (!any) {
				n = 0; /* a CPU-only build: no CUDA code */
			}
			any = b;
		}
	}
	if (!any)
		return 0; /* not a known build: the GPU fit cannot be judged */
	if (n && !(mf->code = malloc(n * sizeof *mf->code)))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	memcpy(mf->code, code, n * sizeof *code);
	mf->n_code = n;
	mf->has_gpu_header = true;
	if (!mf->cuda && cuda_build) {
		mf->cuda = cuda_build->cuda;
		if (!mf->min_driver_linux)
			mf->min_driver_linux = ml_torch_build_min_driver(cuda_build, false, NULL);
		if (!mf->min_driver_windows)
			mf->min_driver_windows = ml_torch_build_min_driver(cuda_build, true, NULL);
	}
	return 0;
}

int ml_manifest_set_torch_build(ml_manifest *mf, const ml_torch_build *b, ml_err *err)
{
	ml_torch_build *copy = malloc(sizeof(*copy));
	size_t n = b->n_sass + b->n_ptx;
	ml_cuda_arch *code = n ? malloc(n * sizeof(*code)) : NULL;
	char *label = ml_asprintf("%s%s%s", b->version, b->local[0] ? "+" : "", b->local);
	if (!copy || (n && !code) || !label) {
		free(copy);
		free(code);
		free(label);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	*copy = *b;
	copy->files = NULL;
	copy->n_files = 0;
	if (n) { /* a CPU-only build has no code (and memcpy no NULL) */
		memcpy(code, b->sass, b->n_sass * sizeof(*code));
		memcpy(code + b->n_sass, b->ptx, b->n_ptx * sizeof(*code));
	}
	free(mf->torch_build);
	free(mf->torch_label);
	free(mf->code);
	mf->torch_build = copy;
	mf->torch_label = label;
	mf->code = code;
	mf->n_code = n;
	mf->has_gpu_header = true;
	mf->torch = label;
	mf->cuda = copy->cuda[0] ? copy->cuda : NULL;
	if (!ml_requirements_meta(mf->reqs, "min_driver_linux"))
		mf->min_driver_linux =
		        copy->cuda[0] ? ml_torch_build_min_driver(copy, false, NULL) : NULL;
	if (!ml_requirements_meta(mf->reqs, "min_driver_windows"))
		mf->min_driver_windows =
		        copy->cuda[0] ? ml_torch_build_min_driver(copy, true, NULL) : NULL;
	return 0;
}
