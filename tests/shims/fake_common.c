/*
 * fake_common.c - reads the simulated NVIDIA machine for the fake driver
 * libraries from the JSON file named in $MLSETUP_FAKE_NVIDIA.
 *
 * All JSON parsing and validation lives here; the shims only read the
 * resulting fake_config. A fixture with a typo (unknown key, wrong type,
 * bad compute capability) is rejected with one line on stderr and the
 * machine then looks as if it had no driver, so a broken fixture cannot
 * silently pass a test. The schema is documented in README.md next to
 * this file.
 */
#include "fake_common.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_ENV      "MLSETUP_FAKE_NVIDIA"
#define FAKE_MAX_FILE (1024 * 1024)

static fake_config g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Where a parse is and what went wrong, for the one-line diagnostic. */
typedef struct parse_ctx {
	char where[64]; /* "gpus[1]" or "" for the top level */
	char msg[256];
} parse_ctx;

/* Records why parsing failed; returns false so callers can return it. */
__attribute__((format(printf, 2, 3))) static bool fail(parse_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	va_end(ap);
	return false;
}

static void config_free(fake_config *c)
{
	if (c->gpus) {
		for (size_t i = 0; i < c->n_gpus; i++) {
			free(c->gpus[i].name);
			free(c->gpus[i].uuid);
		}
	}
	if (c->missing_symbols) {
		for (size_t i = 0; i < c->n_missing_symbols; i++)
			free(c->missing_symbols[i]);
	}
	free(c->gpus);
	free(c->missing_symbols);
	free(c->driver);
	memset(c, 0, sizeof(*c));
}

/* Reads a whole file (at most FAKE_MAX_FILE bytes) into a NUL-terminated
 * heap buffer. */
static char *read_file(const char *path, parse_ctx *ctx)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fail(ctx, "cannot open: %s", strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len == cap) {
			char *grown;

			if (cap >= FAKE_MAX_FILE) {
				fail(ctx, "larger than %zu bytes", (size_t)FAKE_MAX_FILE);
				goto err;
			}
			cap = cap ? cap * 2 : 4096;
			grown = realloc(buf, cap + 1);
			if (!grown) {
				fail(ctx, "out of memory");
				goto err;
			}
			buf = grown;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (ferror(f)) {
			fail(ctx, "cannot read: %s", strerror(errno));
			goto err;
		}
		if (feof(f))
			break;
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
err:
	free(buf);
	fclose(f);
	return NULL;
}

static bool key_known(const char *key, const char *const *known)
{
	for (; *known; known++) {
		if (strcmp(key, *known) == 0)
			return true;
	}
	return false;
}

/* Rejects keys that are not in known (catches fixture typos). */
static bool check_keys(const cJSON *obj, const char *const *known, parse_ctx *ctx)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, obj)
	{
		if (!item->string || !key_known(item->string, known))
			return fail(ctx, "unknown key \"%s\"", item->string ? item->string : "");
	}
	return true;
}

static bool dup_string(char **out, const char *s, parse_ctx *ctx)
{
	*out = strdup(s);
	return *out ? true : fail(ctx, "out of memory");
}

/* Optional string member; def (may be NULL) when absent. */
static bool get_string(const cJSON *obj, const char *key, const char *def, char **out,
                       parse_ctx *ctx)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (!item)
		return def ? dup_string(out, def, ctx) : fail(ctx, "\"%s\" is required", key);
	if (!cJSON_IsString(item))
		return fail(ctx, "\"%s\" must be a string", key);
	return dup_string(out, item->valuestring, ctx);
}

/* Optional integral number member in [min, max]; def when absent. */
static bool get_integer(const cJSON *obj, const char *key, long long def, long long min,
                        long long max, long long *out, parse_ctx *ctx)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	double d;

	if (!item) {
		*out = def;
		return true;
	}
	if (!cJSON_IsNumber(item))
		return fail(ctx, "\"%s\" must be a number", key);
	d = item->valuedouble;
	if (d < (double)min || d > (double)max || d != (double)(long long)d)
		return fail(ctx, "\"%s\" must be an integer in [%lld, %lld]", key, min, max);
	*out = (long long)d;
	return true;
}

/* Parses an unsigned number of at most maxdigits digits in base, the whole
 * of [s, end). */
static bool parse_uint(const char *s, const char *end, int base, size_t maxdigits,
                       unsigned long *out)
{
	size_t n = (size_t)(end - s);
	char tmp[16];
	char *stop;

	if (n == 0 || n > maxdigits || n >= sizeof(tmp))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (base == 16 ? !strchr("0123456789abcdefABCDEF", tmp[i])
		               : !strchr("0123456789", tmp[i]))
			return false;
	}
	errno = 0;
	*out = strtoul(tmp, &stop, base);
	return errno == 0 && *stop == '\0';
}

/* "12.0" -> 12, 0. */
static bool parse_cc(const char *s, fake_gpu *g)
{
	const char *dot = strchr(s, '.');
	unsigned long major, minor;

	if (!dot || !parse_uint(s, dot, 10, 2, &major) ||
	    !parse_uint(dot + 1, dot + strlen(dot), 10, 2, &minor))
		return false;
	g->cc_major = (int)major;
	g->cc_minor = (int)minor;
	return true;
}

/* "00000000:01:00.0", "0000:01:00.0" or "01:00.0" (hex). */
static bool parse_bus_id(const char *s, fake_gpu *g)
{
	const char *c1 = strchr(s, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *bus = s, *dot;
	unsigned long domain = 0, b, d, f;

	if (!c1)
		return false;
	if (c2) {
		if (!parse_uint(s, c1, 16, 8, &domain))
			return false;
		bus = c1 + 1;
		c1 = c2;
	}
	dot = strchr(c1, '.');
	if (!dot || !parse_uint(bus, c1, 16, 2, &b) || !parse_uint(c1 + 1, dot, 16, 2, &d) ||
	    !parse_uint(dot + 1, dot + strlen(dot), 16, 1, &f) || d > 0x1f || f > 7)
		return false;
	g->pci_domain = (unsigned int)domain;
	g->pci_bus = (unsigned int)b;
	g->pci_device = (unsigned int)d;
	g->pci_function = (unsigned int)f;
	return true;
}

/* "GPU-3f1c...-..." -> 16 bytes: optional "GPU-", then exactly 32 hex
 * digits, dashes ignored. */
static bool parse_uuid(const char *s, unsigned char out[16])
{
	size_t n = 0;

	if (strncmp(s, "GPU-", 4) == 0)
		s += 4;
	for (; *s; s++) {
		unsigned long v;

		if (*s == '-')
			continue;
		if (n == 32 || !parse_uint(s, s + 1, 16, 1, &v))
			return false;
		if (n % 2 == 0)
			out[n / 2] = (unsigned char)(v << 4);
		else
			out[n / 2] |= (unsigned char)v;
		n++;
	}
	return n == 32;
}

/* Reads the fault knobs obj sets over *f; absent keys keep their value. */
static bool parse_faults(const cJSON *obj, fake_faults *f, parse_ctx *ctx)
{
	const cJSON *item;
	long long v;

	if (!get_integer(obj, "launch_error", f->launch_error, 0, INT_MAX, &v, ctx))
		return false;
	f->launch_error = (int)v;
	if (!get_integer(obj, "module_load_error", f->module_load_error, 0, INT_MAX, &v, ctx))
		return false;
	f->module_load_error = (int)v;
	item = cJSON_GetObjectItemCaseSensitive(obj, "wrong_results");
	if (item) {
		if (!cJSON_IsBool(item))
			return fail(ctx, "\"wrong_results\" must be true or false");
		f->wrong_results = cJSON_IsTrue(item);
	}
	if (!get_integer(obj, "context_error", f->context_error, 0, INT_MAX, &v, ctx))
		return false;
	f->context_error = (int)v;
	return true;
}

static bool parse_gpu(const cJSON *obj, size_t index, const fake_faults *defaults, fake_gpu *g,
                      parse_ctx *ctx)
{
	static const char *const keys[] = {
	        "name",
	        "cc",
	        "memory_mib",
	        "pci_device_id",
	        "uuid",
	        "pci_bus_id",
	        "comment",
	        "launch_error",
	        "module_load_error",
	        "wrong_results",
	        "context_error",
	        "mig",
	        "driver_model",
	        NULL,
	};
	const cJSON *item;
	char *s = NULL;
	long long mib;
	bool ok;

	snprintf(ctx->where, sizeof(ctx->where), "gpus[%zu]", index);
	if (!cJSON_IsObject(obj))
		return fail(ctx, "must be an object");
	if (!check_keys(obj, keys, ctx) || !get_string(obj, "name", NULL, &g->name, ctx))
		return false;
	g->faults = *defaults;
	if (!parse_faults(obj, &g->faults, ctx))
		return false;
	item = cJSON_GetObjectItemCaseSensitive(obj, "mig");
	if (item) {
		if (!cJSON_IsBool(item))
			return fail(ctx, "\"mig\" must be true or false");
		g->mig = cJSON_IsTrue(item);
	}

	g->driver_model = FAKE_DRIVER_MODEL_UNSET;
	if (cJSON_GetObjectItemCaseSensitive(obj, "driver_model")) {
		if (!get_string(obj, "driver_model", NULL, &s, ctx))
			return false;
		if (strcmp(s, "WDDM") == 0)
			g->driver_model = FAKE_DRIVER_MODEL_WDDM;
		else if (strcmp(s, "TCC") == 0)
			g->driver_model = FAKE_DRIVER_MODEL_TCC;
		else if (strcmp(s, "MCDM") == 0)
			g->driver_model = FAKE_DRIVER_MODEL_MCDM;
		free(s);
		s = NULL;
		if (g->driver_model == FAKE_DRIVER_MODEL_UNSET)
			return fail(ctx, "\"driver_model\" must be \"WDDM\", \"TCC\" or \"MCDM\"");
	}

	if (!get_string(obj, "cc", NULL, &s, ctx))
		return false;
	ok = parse_cc(s, g);
	free(s);
	if (!ok)
		return fail(ctx, "\"cc\" must look like \"12.0\"");

	if (!get_integer(obj, "memory_mib", 0, 0, 1LL << 40, &mib, ctx))
		return false;
	g->memory_mib = (unsigned long long)mib;

	item = cJSON_GetObjectItemCaseSensitive(obj, "pci_device_id");
	if (cJSON_IsString(item)) {
		const char *v = item->valuestring;
		unsigned long id;

		if (strncmp(v, "0x", 2) == 0 || strncmp(v, "0X", 2) == 0)
			v += 2;
		if (!parse_uint(v, v + strlen(v), 16, 4, &id))
			return fail(ctx, "\"pci_device_id\" must look like \"0x2b85\"");
		g->pci_device_id = (unsigned int)id;
	} else {
		long long id;

		if (!get_integer(obj, "pci_device_id", 0, 0, 0xffff, &id, ctx))
			return false;
		g->pci_device_id = (unsigned int)id;
	}

	if (cJSON_GetObjectItemCaseSensitive(obj, "uuid")) {
		if (!get_string(obj, "uuid", NULL, &g->uuid, ctx))
			return false;
	} else {
		char def[64];

		snprintf(def, sizeof(def), "GPU-00000000-0000-0000-0000-%012zx", index);
		if (!dup_string(&g->uuid, def, ctx))
			return false;
	}
	if (!parse_uuid(g->uuid, g->uuid_bytes))
		return fail(ctx, "\"uuid\" must be \"GPU-\" and 32 hex digits (dashes allowed)");

	if (cJSON_GetObjectItemCaseSensitive(obj, "pci_bus_id")) {
		if (!get_string(obj, "pci_bus_id", NULL, &s, ctx))
			return false;
		ok = parse_bus_id(s, g);
		free(s);
		if (!ok)
			return fail(ctx, "\"pci_bus_id\" must look like \"00000000:01:00.0\"");
	} else {
		g->pci_domain = 0;
		g->pci_bus = (unsigned int)((index + 1) & 0xff);
		g->pci_device = 0;
		g->pci_function = 0;
	}
	return true;
}

static bool parse_config(const cJSON *root, fake_config *c, parse_ctx *ctx)
{
	static const char *const keys[] = {
	        "driver",
	        "cuda",
	        "gpus",
	        "nvml_init_error",
	        "cuda_init_error",
	        "missing_symbols",
	        "smi_error",
	        "comment",
	        "launch_error",
	        "module_load_error",
	        "wrong_results",
	        "context_error",
	        NULL,
	};
	const cJSON *gpus, *missing, *item;
	long long v;
	size_t i;

	if (!cJSON_IsObject(root))
		return fail(ctx, "top level must be an object");
	if (!check_keys(root, keys, ctx) ||
	    !get_string(root, "driver", "570.124.04", &c->driver, ctx))
		return false;
	if (!get_integer(root, "cuda", 12080, 0, INT_MAX, &v, ctx))
		return false;
	c->cuda = (int)v;
	if (!get_integer(root, "nvml_init_error", 0, INT_MIN, INT_MAX, &v, ctx))
		return false;
	c->nvml_init_error = (int)v;
	if (!get_integer(root, "cuda_init_error", 0, INT_MIN, INT_MAX, &v, ctx))
		return false;
	c->cuda_init_error = (int)v;
	if (!parse_faults(root, &c->faults, ctx))
		return false;
	item = cJSON_GetObjectItemCaseSensitive(root, "smi_error");
	if (item && !cJSON_IsBool(item))
		return fail(ctx, "\"smi_error\" must be true or false");

	missing = cJSON_GetObjectItemCaseSensitive(root, "missing_symbols");
	if (missing) {
		if (!cJSON_IsArray(missing))
			return fail(ctx, "\"missing_symbols\" must be an array of strings");
		c->missing_symbols =
		        calloc((size_t)cJSON_GetArraySize(missing) + 1, sizeof(char *));
		if (!c->missing_symbols)
			return fail(ctx, "out of memory");
		cJSON_ArrayForEach(item, missing)
		{
			if (!cJSON_IsString(item))
				return fail(ctx, "\"missing_symbols\" must be an array of strings");
			if (!dup_string(&c->missing_symbols[c->n_missing_symbols],
			                item->valuestring, ctx))
				return false;
			c->n_missing_symbols++;
		}
	}

	gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
	if (!gpus)
		return true;
	if (!cJSON_IsArray(gpus))
		return fail(ctx, "\"gpus\" must be an array");
	c->gpus = calloc((size_t)cJSON_GetArraySize(gpus) + 1, sizeof(fake_gpu));
	if (!c->gpus)
		return fail(ctx, "out of memory");
	i = 0;
	cJSON_ArrayForEach(item, gpus)
	{
		/* Count first so config_free() sees partly filled entries. */
		c->n_gpus = i + 1;
		if (!parse_gpu(item, i, &c->faults, &c->gpus[i], ctx))
			return false;
		i++;
	}
	return true;
}

static void config_load(void)
{
	const char *path = getenv(FAKE_ENV);
	parse_ctx ctx = {{0}, {0}};
	cJSON *root = NULL;
	char *text;

	if (!path || !*path)
		return;
	text = read_file(path, &ctx);
	if (!text)
		goto out;
	root = cJSON_Parse(text);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();

		fail(&ctx, "invalid JSON at byte %td", at ? at - text : (ptrdiff_t)0);
		goto out;
	}
	if (parse_config(root, &g_config, &ctx))
		g_config.loaded = true;
out:
	if (!g_config.loaded) {
		fprintf(stderr, "fake-nvidia: %s: %s%s%s; simulating no driver\n", path, ctx.where,
		        ctx.where[0] ? ": " : "", ctx.msg);
		config_free(&g_config);
	}
	cJSON_Delete(root);
	free(text);
}

/* Frees the machine when the shim is unloaded (dlclose or exit), so leak
 * checkers see a clean process. Later calls see "no driver". */
__attribute__((destructor)) static void config_unload(void)
{
	config_free(&g_config);
}

const fake_config *fake_config_get(void)
{
	pthread_once(&g_once, config_load);
	return &g_config;
}

const fake_gpu *fake_gpu_at(long long index)
{
	const fake_config *c = fake_config_get();

	if (!c->loaded || index < 0 || (unsigned long long)index >= c->n_gpus)
		return NULL;
	return &c->gpus[index];
}

size_t fake_cuda_gpu_count(void)
{
	const fake_config *c = fake_config_get();
	size_t n = 0;

	for (size_t i = 0; c->loaded && i < c->n_gpus; i++)
		n += !c->gpus[i].mig;
	return n;
}

const fake_gpu *fake_cuda_gpu_at(long long ordinal)
{
	const fake_config *c = fake_config_get();

	for (size_t i = 0; c->loaded && ordinal >= 0 && i < c->n_gpus; i++) {
		if (!c->gpus[i].mig && ordinal-- == 0)
			return &c->gpus[i];
	}
	return NULL;
}

bool fake_symbol_missing(const char *name)
{
	const fake_config *c = fake_config_get();

	for (size_t i = 0; i < c->n_missing_symbols; i++) {
		if (strcmp(c->missing_symbols[i], name) == 0)
			return true;
	}
	return false;
}

bool fake_copy_string(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);

	if (!dst || n >= dstsz)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}
