/*
 * drivers.c - the one reader of manifests/drivers.json (embedded): NVIDIA's
 * CUDA toolkit -> minimum driver table (CUDA Toolkit release notes, table 3
 * "CUDA Toolkit and Minimum Required Driver Version"), the CUDA
 * minor-version compatibility floors, the architecture rules ("Blackwell
 * needs the driver of CUDA 12.8, its first toolkit with SASS") and the
 * toolkit detect's driver advice starts from, which CUDA release first
 * loads each PTX ISA version, and which CUDA each driver branch supports.
 * detect, plan, audit and verify all ask here, so no driver number lives
 * in C.
 *
 * The table is parsed once, on first use, into static storage; every string
 * handed out points into it and lives as long as the process.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define MAX_TOOLKITS 64
#define MAX_FLOORS   8
#define MAX_RULES    16
#define MAX_MAJORS   8
#define MAX_ISAS     64
#define MAX_BRANCHES 64
/* The largest branch number taken seriously; anything longer is garbage. */
#define BRANCH_MAX 9999

struct toolkit_row {
	char cuda[16], release[32], linux_min[32], windows_min[32];
};

struct floor_row {
	char major[8], linux_min[32], windows_min[32];
};

/* PTX ISA version -> the CUDA release that introduced it, both as
 * 10 * major + minor / 1000 * major + 10 * minor. */
struct isa_row {
	int isa, cuda;
};

/* Driver branch (570) -> the highest CUDA it supports (12080). */
struct branch_row {
	int branch, cuda;
};

struct arch_rule {
	char architecture[24];
	int majors[MAX_MAJORS];
	size_t n_majors;
	char toolkit[16];
};

static struct {
	bool ok;
	char error[256];
	struct toolkit_row rows[MAX_TOOLKITS];
	ml_toolkit_driver toolkits[MAX_TOOLKITS];
	size_t n_toolkits;
	struct floor_row floors[MAX_FLOORS];
	size_t n_floors;
	struct arch_rule rules[MAX_RULES];
	size_t n_rules;
	struct isa_row isas[MAX_ISAS];
	size_t n_isas;
	struct branch_row branches[MAX_BRANCHES];
	size_t n_branches;
	char advice_toolkit[16];
	int advice_major, advice_minor;
} table;

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* A dotted version ("12.8.1"): digits, separated by single dots. */
static bool dotted(const char *s)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
			return false;
	return true;
}

/* Copies the string member `key` of obj into dst; a JSON null (or an absent
 * member when optional) leaves dst "". Returns false when it is missing,
 * not a dotted version (when `version`), or too long. */
static bool member(char *dst, size_t sz, const cJSON *obj, const char *key, bool optional,
                   bool version)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	dst[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return optional;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= sz ||
	    (version && !dotted(v->valuestring)))
		return false;
	ml_strlcpy(dst, v->valuestring, sz);
	return true;
}

static const struct toolkit_row *find_row(const char *cuda)
{
	for (size_t i = 0; cuda && i < table.n_toolkits; i++)
		if (ml_driver_version_cmp(table.rows[i].cuda, cuda) == 0)
			return &table.rows[i];
	return NULL;
}

static bool bad(const char *what)
{
	snprintf(table.error, sizeof(table.error), "embedded drivers.json: %s", what);
	return false;
}

static bool load_toolkits(const cJSON *doc)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "toolkits");
	const cJSON *e;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return bad("no toolkits");
	cJSON_ArrayForEach(e, arr)
	{
		if (table.n_toolkits == MAX_TOOLKITS)
			return bad("too many toolkits");
		struct toolkit_row *r = &table.rows[table.n_toolkits];
		if (!member(r->cuda, sizeof(r->cuda), e, "cuda", false, true) ||
		    !member(r->release, sizeof(r->release), e, "release", true, false) ||
		    !member(r->linux_min, sizeof(r->linux_min), e, "linux", false, true) ||
		    !member(r->windows_min, sizeof(r->windows_min), e, "windows", true, true))
			return bad("a toolkit needs a dotted cuda and linux version (windows: a "
			           "version or null)");
		if (table.n_toolkits &&
		    ml_driver_version_cmp(table.rows[table.n_toolkits - 1].cuda, r->cuda) >= 0)
			return bad("toolkits must be listed oldest first, each once");
		ml_toolkit_driver *t = &table.toolkits[table.n_toolkits++];
		t->cuda = r->cuda;
		t->release = r->release[0] ? r->release : r->cuda;
		t->linux_min = r->linux_min;
		t->windows_min = r->windows_min[0] ? r->windows_min : NULL;
	}
	return true;
}

static bool load_floors(const cJSON *doc)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(doc, "minor_version_compatibility");
	const cJSON *e;
	if (obj && !cJSON_IsObject(obj))
		return bad("minor_version_compatibility is not an object");
	cJSON_ArrayForEach(e, obj)
	{
		if (!cJSON_IsObject(e)) /* "comment" */
			continue;
		if (table.n_floors == MAX_FLOORS)
			return bad("too many minor-version floors");
		struct floor_row *f = &table.floors[table.n_floors];
		if (strlen(e->string) >= sizeof(f->major) || !dotted(e->string) ||
		    strchr(e->string, '.') ||
		    !member(f->linux_min, sizeof(f->linux_min), e, "linux", false, true) ||
		    !member(f->windows_min, sizeof(f->windows_min), e, "windows", true, true))
			return bad("a minor-version floor needs a CUDA major and a linux version");
		ml_strlcpy(f->major, e->string, sizeof(f->major));
		table.n_floors++;
	}
	return true;
}

static bool load_rules(const cJSON *doc)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "architectures");
	const cJSON *e, *m;
	if (arr && !cJSON_IsArray(arr))
		return bad("architectures is not an array");
	cJSON_ArrayForEach(e, arr)
	{
		if (table.n_rules == MAX_RULES)
			return bad("too many architecture rules");
		struct arch_rule *r = &table.rules[table.n_rules];
		const cJSON *majors = cJSON_GetObjectItemCaseSensitive(e, "cc_major");
		if (!member(r->architecture, sizeof(r->architecture), e, "architecture", false,
		            false) ||
		    !member(r->toolkit, sizeof(r->toolkit), e, "first_toolkit", false, true) ||
		    !cJSON_IsArray(majors))
			return bad("an architecture rule needs architecture, cc_major and "
			           "first_toolkit");
		if (!find_row(r->toolkit))
			return bad("an architecture rule names a toolkit that is not in the table");
		cJSON_ArrayForEach(m, majors)
		{
			if (!cJSON_IsNumber(m) || m->valueint < 1 || r->n_majors == MAX_MAJORS)
				return bad("cc_major must list compute capability majors");
			r->majors[r->n_majors++] = m->valueint;
		}
		table.n_rules++;
	}
	return true;
}

/* "9.2" -> 92 (minor one digit), "13.2" -> 13020; -1 when not X.Y. */
static int two_part(const char *s, int minor_scale)
{
	int major = 0, minor = 0, n = 0;
	if (!dotted(s) || sscanf(s, "%d.%d%n", &major, &minor, &n) != 2 || s[n] != '\0' ||
	    major < 1 || major > 99 || minor < 0 || minor > 9)
		return -1;
	return minor_scale == 10 ? major * 10 + minor : major * 1000 + minor * 10;
}

static bool load_isas(const cJSON *doc)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(doc, "ptx_isa");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "versions");
	const cJSON *e;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return bad("ptx_isa has no versions");
	cJSON_ArrayForEach(e, arr)
	{
		char isa[16], cuda[16];
		if (table.n_isas == MAX_ISAS)
			return bad("too many PTX ISA versions");
		struct isa_row *r = &table.isas[table.n_isas];
		if (!member(isa, sizeof isa, e, "isa", false, true) ||
		    !member(cuda, sizeof cuda, e, "cuda", false, true) ||
		    (r->isa = two_part(isa, 10)) < 0 || (r->cuda = two_part(cuda, 1000)) < 0)
			return bad("a PTX ISA row needs an isa X.Y and a cuda X.Y");
		if (table.n_isas && (table.isas[table.n_isas - 1].isa >= r->isa ||
		                     table.isas[table.n_isas - 1].cuda >= r->cuda))
			return bad("PTX ISA versions must be listed oldest first, each once");
		table.n_isas++;
	}
	return true;
}

static bool load_branches(const cJSON *doc)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(doc, "driver_branches");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "branches");
	const cJSON *e;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return bad("driver_branches has no branches");
	cJSON_ArrayForEach(e, arr)
	{
		char cuda[16];
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "branch");
		if (table.n_branches == MAX_BRANCHES)
			return bad("too many driver branches");
		struct branch_row *r = &table.branches[table.n_branches];
		if (!cJSON_IsNumber(b) || b->valueint < 1 || b->valueint > BRANCH_MAX ||
		    !member(cuda, sizeof cuda, e, "cuda", false, true) ||
		    (r->cuda = two_part(cuda, 1000)) < 0)
			return bad("a driver branch needs a branch number and a cuda X.Y");
		r->branch = b->valueint;
		if (table.n_branches && (table.branches[table.n_branches - 1].branch >= r->branch ||
		                         table.branches[table.n_branches - 1].cuda > r->cuda))
			return bad("driver branches must be listed oldest first, each once");
		table.n_branches++;
	}
	return true;
}

static bool load_advice(const cJSON *doc)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, "detect_advice");
	char from[16];
	if (!member(table.advice_toolkit, sizeof(table.advice_toolkit), a, "toolkit", false,
	            true) ||
	    !member(from, sizeof(from), a, "from_cc", false, true) ||
	    sscanf(from, "%d.%d", &table.advice_major, &table.advice_minor) != 2)
		return bad("detect_advice needs a toolkit and a from_cc compute capability");
	if (!find_row(table.advice_toolkit))
		return bad("detect_advice names a toolkit that is not in the table");
	return true;
}

static void load(void)
{
	const ml_embedded_file *f = ml_embedded_find("drivers.json");
	if (!f) {
		bad("missing from this build");
		return;
	}
	cJSON *doc = cJSON_ParseWithLength(f->data, f->size);
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (!doc)
		bad("not valid JSON");
	else if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "mlsetup.drivers/1") != 0)
		bad("schema is not mlsetup.drivers/1");
	else
		table.ok = load_toolkits(doc) && load_floors(doc) && load_rules(doc) &&
		           load_isas(doc) && load_branches(doc) && load_advice(doc);
	cJSON_Delete(doc);
	if (!table.ok) {
		table.n_toolkits = table.n_floors = table.n_rules = table.n_isas = 0;
		table.n_branches = 0;
		table.advice_toolkit[0] = '\0';
	}
}

static bool loaded(void)
{
	pthread_once(&table_once, load);
	return table.ok;
}

int ml_drivers_check(ml_err *err)
{
	if (loaded())
		return 0;
	ml_err_set(err, ML_EPARSE, "%s", table.error);
	ml_err_hint(err, "this mlsetup binary is broken: rebuild it from a clean checkout");
	return ML_EPARSE;
}

size_t ml_toolkit_drivers(const ml_toolkit_driver **out)
{
	bool ok = loaded();
	if (out)
		*out = table.toolkits;
	return ok ? table.n_toolkits : 0;
}

const ml_toolkit_driver *ml_toolkit_driver_find(const char *cuda)
{
	if (!loaded() || !cuda)
		return NULL;
	for (size_t i = 0; i < table.n_toolkits; i++)
		if (ml_driver_version_cmp(table.toolkits[i].cuda, cuda) == 0)
			return &table.toolkits[i];
	return NULL;
}

const char *ml_toolkit_min_driver(const char *cuda, bool windows)
{
	const ml_toolkit_driver *t = ml_toolkit_driver_find(cuda);
	return !t ? NULL : windows ? t->windows_min : t->linux_min;
}

const char *ml_minor_version_floor(const char *cuda, bool windows)
{
	char major[8] = "";
	if (!loaded() || !cuda || sscanf(cuda, "%7[0-9]", major) != 1)
		return NULL;
	for (size_t i = 0; i < table.n_floors; i++) {
		const struct floor_row *f = &table.floors[i];
		if (strcmp(f->major, major) == 0)
			return windows ? (f->windows_min[0] ? f->windows_min : NULL) : f->linux_min;
	}
	return NULL;
}

/* The rule for this compute capability major: its own, or for a GPU newer
 * than every rule the newest one (a lower bound); NULL when none applies. */
static const struct arch_rule *rule_for(int major, bool *beyond)
{
	const struct arch_rule *newest = NULL;
	int top = 0;
	*beyond = false;
	for (size_t i = 0; i < table.n_rules; i++) {
		const struct arch_rule *r = &table.rules[i];
		for (size_t j = 0; j < r->n_majors; j++) {
			if (r->majors[j] == major)
				return r;
			if (r->majors[j] > top ||
			    (r->majors[j] == top &&
			     ml_driver_version_cmp(r->toolkit, newest->toolkit) > 0)) {
				top = r->majors[j];
				newest = r;
			}
		}
	}
	*beyond = newest && major > top;
	return *beyond ? newest : NULL;
}

const char *ml_arch_first_toolkit(int major, int minor, bool *beyond)
{
	bool dummy;
	bool *b = beyond ? beyond : &dummy;
	*b = false;
	if (!loaded() || major < 0 || minor < 0)
		return NULL;
	const struct arch_rule *r = rule_for(major, b);
	return r ? r->toolkit : NULL;
}

const char *ml_arch_min_driver(int major, int minor, bool windows)
{
	return ml_toolkit_min_driver(ml_arch_first_toolkit(major, minor, NULL), windows);
}

const char *ml_min_driver_for_cc(int major, int minor, bool windows)
{
	if (!loaded() || major < 0 || minor < 0 ||
	    major * 10 + minor < table.advice_major * 10 + table.advice_minor)
		return NULL;
	const char *base = ml_toolkit_min_driver(table.advice_toolkit, windows);
	const char *arch = ml_arch_min_driver(major, minor, windows);
	if (!base || (arch && ml_driver_version_cmp(arch, base) > 0))
		return arch;
	return base;
}

int ml_ptx_isa_cuda(int isa, bool *beyond)
{
	bool dummy;
	bool *b = beyond ? beyond : &dummy;
	*b = false;
	if (!loaded() || isa <= 0 || table.n_isas == 0)
		return 0;
	for (size_t i = 0; i < table.n_isas; i++)
		if (table.isas[i].isa == isa)
			return table.isas[i].cuda;
	const struct isa_row *newest = &table.isas[table.n_isas - 1];
	if (isa > newest->isa) {
		*b = true;
		return newest->cuda;
	}
	/* between two rows (an ISA no release had): the release of the next
	 * known ISA, which surely loads it; below the table (PTX of CUDA 8 or
	 * older): the oldest row, which every driver mlsetup knows exceeds */
	for (size_t i = 0; i < table.n_isas; i++)
		if (table.isas[i].isa > isa)
			return table.isas[i].cuda;
	return 0;
}

int ml_driver_cuda_version(const char *driver_version)
{
	if (!driver_version || !loaded())
		return 0;
	const char *s = driver_version;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (!isdigit((unsigned char)*s))
		return 0;
	int branch = 0;
	while (isdigit((unsigned char)*s)) {
		branch = branch * 10 + (*s - '0');
		if (branch > BRANCH_MAX)
			return 0;
		s++;
	}
	/* The branch must be a whole component: "570.124.06", "570", "570\n". */
	if (*s != '\0' && *s != '.' && !isspace((unsigned char)*s))
		return 0;
	int cuda = 0;
	for (size_t i = 0; i < table.n_branches && table.branches[i].branch <= branch; i++)
		cuda = table.branches[i].cuda;
	return cuda;
}
