/*
 * torch_choice.c - which torch build to install when a requirement leaves
 * it open (`torch`, `torch>=2.8`, `torch==2.10.0`): among the builds on
 * offer (version, backend, index), the newest whose CUDA code runs on
 * every GPU of the machine with its driver, by the same rules the rest of
 * mlsetup judges code by (ml_arch_judge(): SASS first, then PTX the
 * driver can JIT; the CUDA toolkit's minimum driver, or CUDA minor-version
 * compatibility above the major's floor when no GPU needs PTX). On equal
 * versions the default index's build comes first, then the highest CUDA.
 * A machine without an NVIDIA GPU gets a CPU build. Every build passed
 * over on the way is kept with its reason, and when nothing runs the
 * choice names the nearest option (a newer driver, another backend).
 *
 * Pure: no index, cache or network is asked. The offers come from the
 * torch-build table (ml_torch_table_offers()) or from a caller that
 * listed and audited wheels; a build whose code is not recorded is passed
 * over with that reason, never guessed.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* snprintf into dst, sz bytes, truncating: the messages here join texts
 * of other buffers, and a long one is cut rather than refused. */
static void put(char *dst, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *dst, size_t sz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, sz, fmt, ap);
	va_end(ap);
}

/* How one build fares on the machine. */
typedef enum fate {
	FATE_RUNS,    /* its code runs on every GPU (or: the CPU build, no GPU) */
	FATE_COMPAT,  /* runs, under CUDA minor-version compatibility */
	FATE_DRIVER,  /* its code fits every GPU, but the driver is too old */
	FATE_GPU,     /* a GPU has no code it can run */
	FATE_UNKNOWN, /* its code is not recorded */
	FATE_NOT_HERE /* CPU build on a GPU machine, CUDA build without GPU */
} fate;

static bool windows_machine(const ml_machine *m)
{
	return strcmp(m->os.name, "windows") == 0;
}

static bool cpu_build(const ml_torch_build *b)
{
	return !b->cuda[0] || strcmp(b->backend, "cpu") == 0;
}

/* "NVIDIA GeForce RTX 5090 (sm_120)". */
static void gpu_label(char *dst, size_t sz, const ml_gpu *g)
{
	char sm[16];
	ml_cc_sm(sm, sizeof(sm), g->cc_major, g->cc_minor);
	put(dst, sz, "%s (%s)", g->name[0] ? g->name : "NVIDIA GPU", sm[0] ? sm : "unknown");
}

/* The driver's CUDA version (1000 * major + 10 * minor), 0 when unknown. */
static int driver_cuda(const ml_machine *m)
{
	if (m->driver.cuda_version > 0)
		return m->driver.cuda_version;
	return m->driver.version[0] ? ml_driver_cuda_version(m->driver.version) : 0;
}

/* "12.8" -> 12080; 0 when empty or unreadable. */
static int cuda_number(const char *cuda)
{
	int major = 0, minor = 0;
	if (!cuda || sscanf(cuda, "%d.%d", &major, &minor) < 1)
		return 0;
	return 1000 * major + 10 * minor;
}

/* Whether build b's code runs on GPU g with the machine's driver; why
 * names the code (or its absence). *ptx set when only PTX makes it run. */
static bool gpu_runs(const ml_torch_build *b, const ml_gpu *g, int drv_cuda, bool *ptx, char *why,
                     size_t sz)
{
	ml_cuda_arch code[2 * ML_TORCH_MAX_CODE];
	size_t n = 0;
	for (size_t i = 0; i < b->n_sass; i++)
		code[n++] = b->sass[i];
	for (size_t i = 0; i < b->n_ptx; i++)
		code[n++] = b->ptx[i];
	ml_arch_query q = ML_ARCH_QUERY_INIT;
	q.dev_major = g->cc_major;
	q.dev_minor = g->cc_minor;
	q.driver_cuda = drv_cuda;
	ml_arch_verdict v;
	bool runs = ml_arch_judge(&v, code, n, &q);
	*ptx = runs && v.by.ptx;
	/* The table records no PTX ISA; torch's PTX is its toolkit's, which a
	 * driver for an older CUDA cannot JIT (minor-version compatibility
	 * excludes it). */
	int build_cuda = cuda_number(b->cuda);
	if (runs && v.by.ptx && v.by.isa == 0 && drv_cuda && build_cuda && drv_cuda < build_cuda) {
		char name[24];
		ml_cuda_arch_format(name, sizeof(name), &v.by);
		put(why, sz,
		    "only PTX %s fits, and a driver for CUDA %d.%d cannot JIT this CUDA %s "
		    "build's PTX",
		    name, drv_cuda / 1000, drv_cuda % 1000 / 10, b->cuda);
		return false;
	}
	ml_strlcpy(why, v.why, sz);
	return runs;
}

/* Judges build b on machine m into why (sz bytes). */
static fate judge(const ml_torch_build *b, const ml_machine *m, char *why, size_t sz)
{
	bool windows = windows_machine(m);
	why[0] = '\0';
	if (!m->n_gpus) {
		if (cpu_build(b)) {
			put(why, sz, "no NVIDIA GPU here: the CPU build");
			return FATE_RUNS;
		}
		put(why, sz,
		    "a CUDA %s build, and there is no NVIDIA GPU here: its CUDA libraries "
		    "would be installed for nothing",
		    b->cuda);
		return FATE_NOT_HERE;
	}
	if (cpu_build(b)) {
		char label[160];
		gpu_label(label, sizeof(label), &m->gpus[0]);
		put(why, sz, "CPU-only build: runs no CUDA code on %s%s", label,
		    m->n_gpus > 1 ? " and the other GPUs" : "");
		return FATE_NOT_HERE;
	}
	if (b->code_unknown) {
		put(why, sz,
		    "the CUDA code of this CUDA %s build is not recorded: its wheel would "
		    "have to be audited",
		    b->cuda);
		return FATE_UNKNOWN;
	}
	int drv_cuda = driver_cuda(m);
	bool any_ptx = false;
	char code[512] = ""; /* what runs on each GPU: "SASS sm_80 runs on 8.6; ..." */
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		char label[160], gwhy[400];
		bool ptx = false;
		gpu_label(label, sizeof(label), g);
		if (!gpu_runs(b, g, drv_cuda, &ptx, gwhy, sizeof(gwhy))) {
			put(why, sz, "no code for %s: %s", label, gwhy);
			return FATE_GPU;
		}
		any_ptx |= ptx;
		size_t l = strlen(code);
		put(code + l, sizeof(code) - l, "%s%s", l ? "; " : "", gwhy);
	}
	const char *drv = m->driver.version;
	int build_cuda = cuda_number(b->cuda);
	/* A driver runs builds of its own CUDA major and older: minor-version
	 * compatibility never crosses a major (a 12.8 driver starts no CUDA
	 * 13 runtime), whatever the driver table records for this OS. */
	if (drv_cuda && build_cuda && drv_cuda / 1000 < build_cuda / 1000) {
		put(why, sz,
		    "driver %s supports CUDA %d.%d: a CUDA %s build needs a driver for CUDA %d "
		    "(minor-version compatibility stays within a major)",
		    drv, drv_cuda / 1000, drv_cuda % 1000 / 10, b->cuda, build_cuda / 1000);
		return FATE_DRIVER;
	}
	bool at_least = false;
	const char *min = ml_torch_build_min_driver(b, windows, &at_least);
	bool new_enough = min ? ml_driver_version_cmp(drv, min) >= 0
	                      : !drv_cuda || !build_cuda || drv_cuda >= build_cuda;
	if (!drv[0] || new_enough) {
		put(why, sz, "CUDA %s build, %s%s%s%s", b->cuda, code, drv[0] ? "; driver " : "",
		    drv[0] ? drv : "", drv[0] ? " new enough" : "");
		return FATE_RUNS;
	}
	/* below the minimum (or, with none recorded for this OS, older than
	 * the build's CUDA): CUDA minor-version compatibility, when the
	 * driver is above the major's floor (or none is recorded), every
	 * GPU's architecture minimum is met and no GPU needs PTX JIT */
	const char *floor = ml_minor_version_floor(b->cuda, windows);
	bool arch_ok = true;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const char *need =
		        ml_arch_min_driver(m->gpus[i].cc_major, m->gpus[i].cc_minor, windows);
		if (need && ml_driver_version_cmp(drv, need) < 0)
			arch_ok = false;
	}
	char below[160];
	if (min)
		put(below, sizeof(below), "driver %s is below %s%s, the minimum for CUDA %s", drv,
		    at_least ? "at least " : "", min, b->cuda);
	else
		put(below, sizeof(below),
		    "driver %s supports CUDA %d.%d, older than this CUDA %s build (no %s minimum "
		    "recorded)",
		    drv, drv_cuda / 1000, drv_cuda % 1000 / 10, b->cuda,
		    windows ? "Windows" : "Linux");
	if ((floor ? ml_driver_version_cmp(drv, floor) >= 0 : !min) && arch_ok && !any_ptx) {
		put(why, sz,
		    "CUDA %s build, %s; %s, but %s%s: runs under CUDA %d.x minor-version "
		    "compatibility",
		    b->cuda, code, below, floor ? "at least " : "within its CUDA major",
		    floor ? floor : "", build_cuda / 1000);
		return FATE_COMPAT;
	}
	put(why, sz, "%s", below);
	return FATE_DRIVER;
}

/* The backend an offer's local label names ("cu126"), or its build's;
 * "" when neither says. */
static const char *offer_backend(const ml_torch_offer *o, char *buf, size_t sz)
{
	if (o->local && o->local[0])
		return ml_torch_backend(buf, sz, o->local, NULL);
	return o->build ? o->build->backend : "";
}

/* The CUDA version a backend names ("cu126" -> 12060), 0 for others. */
static int backend_cuda(const char *backend)
{
	if (strncmp(backend, "cu", 2) != 0 || strlen(backend) < 5)
		return 0;
	int v = atoi(backend + 2); /* 126 */
	return 1000 * (v / 10) + 10 * (v % 10);
}

/* Ranking: newest version first; on equal versions the default index's
 * build, then the highest CUDA. */
static int offer_cmp(const void *pa, const void *pb)
{
	const ml_torch_offer *a = pa, *b = pb;
	int c = ml_version_cmp(b->version, a->version);
	if (c)
		return c;
	bool ad = a->index == ML_TORCH_INDEX_DEFAULT, bd = b->index == ML_TORCH_INDEX_DEFAULT;
	if (ad != bd)
		return ad ? -1 : 1;
	char ba[32], bb[32];
	return backend_cuda(offer_backend(b, bb, sizeof(bb))) -
	       backend_cuda(offer_backend(a, ba, sizeof(ba)));
}

/* "2.10.0+cu126": the version a wheel file of o names. */
static void wheel_version(char *dst, size_t sz, const ml_torch_offer *o)
{
	bool local = o->local && o->local[0];
	put(dst, sz, "%s%s%s", o->version, local ? "+" : "", local ? o->local : "");
}

/* "the default index", "<url>". */
static void index_label(char *dst, size_t sz, const ml_torch_offer *o)
{
	if (o->index == ML_TORCH_INDEX_DEFAULT)
		put(dst, sz, "the default index");
	else if (o->index_url)
		put(dst, sz, "%s", o->index_url);
	else
		put(dst, sz, "a variant index");
}

static int reject(ml_torch_choice *c, const ml_torch_offer *o, const char *why)
{
	ml_torch_rejection *r = realloc(c->rejected, (c->n_rejected + 1) * sizeof(*r));
	if (!r)
		return ML_ENOMEM;
	c->rejected = r;
	r += c->n_rejected++;
	memset(r, 0, sizeof(*r));
	char b[32];
	const char *index = ml_torch_index_name(o->index);
	wheel_version(r->version, sizeof(r->version), o);
	ml_strlcpy(r->backend, offer_backend(o, b, sizeof(b)), sizeof(r->backend));
	ml_strlcpy(r->index, index ? index : "", sizeof(r->index));
	ml_strlcpy(r->reason, why, sizeof(r->reason));
	return 0;
}

static void take(ml_torch_choice *c, const ml_torch_offer *o, bool runs, const char *why)
{
	c->chosen = true;
	c->build = *o->build;
	c->build.files = NULL; /* the table's or a wheel's: not the choice's to keep */
	c->build.n_files = 0;
	c->runs = runs;
	c->index = o->index;
	wheel_version(c->version, sizeof(c->version), o);
	ml_strlcpy(c->backend, o->build->backend, sizeof(c->backend));
	ml_strlcpy(c->index_url, o->index_url ? o->index_url : "", sizeof(c->index_url));
	char where[256];
	index_label(where, sizeof(where), o);
	put(c->reason, sizeof(c->reason), "torch %s from %s: %s%s", c->version, where,
	    runs ? "newest build that runs here: " : "", why);
}

/* The facts of offer o, learnt through opts->learn when it has none.
 * Returns 0 (o->build may still be NULL), ML_ENOMEM, or 1 with why set
 * when learning failed (the offer is passed over). */
static int facts(ml_torch_offer *o, const ml_torch_choose_opts *opts, char *why, size_t sz)
{
	if (o->build || !opts || !opts->learn)
		return 0;
	ml_err e = ML_ERR_INIT;
	const ml_torch_build *b = NULL;
	int rc = opts->learn(&b, o, opts->learn_data, &e);
	if (rc == ML_ENOMEM)
		return rc;
	if (rc) {
		put(why, sz, "its wheel could not be audited: %s", e.msg);
		return 1;
	}
	o->build = b;
	return 0;
}

/* The nearest option when nothing runs: the newest build that only a
 * newer driver keeps out, else the GPUs no build has code for. */
static void nearest(ml_torch_choice *c, const ml_torch_offer *offers, const fate *fates, size_t n,
                    const ml_machine *m)
{
	bool windows = windows_machine(m);
	for (size_t i = 0; i < n; i++) {
		if (fates[i] != FATE_DRIVER)
			continue;
		char v[96];
		bool at_least = false;
		const char *min = ml_torch_build_min_driver(offers[i].build, windows, &at_least);
		wheel_version(v, sizeof(v), &offers[i]);
		put(c->nearest, sizeof(c->nearest),
		    "a driver %s%s or newer runs torch %s (%s, CUDA %s): upgrade the NVIDIA "
		    "driver",
		    at_least ? "of at least " : "", min ? min : "?", v, offers[i].build->backend,
		    offers[i].build->cuda);
		return;
	}
	if (!m->n_gpus) {
		put(c->nearest, sizeof(c->nearest),
		    "no CPU build of torch is on offer: name a backend (--torch-backend) or "
		    "an index that serves one");
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (fates[i] == FATE_UNKNOWN) {
			char v[96], b[32];
			wheel_version(v, sizeof(v), &offers[i]);
			put(c->nearest, sizeof(c->nearest),
			    "torch %s (%s) may run here, but its CUDA code could not be learnt "
			    "(its reason above)",
			    v, offer_backend(&offers[i], b, sizeof(b)));
			return;
		}
	put(c->nearest, sizeof(c->nearest),
	    "no torch build on offer has CUDA code for every GPU here: install on each "
	    "kind of GPU separately, or allow other torch versions");
}

/* Whether offer o is of the named backend (learning its facts when only
 * they can tell). Returns 1 yes, 0 no, ML_ENOMEM. */
static int of_backend(ml_torch_offer *o, const char *backend, const ml_torch_choose_opts *opts)
{
	char buf[32], why[8];
	const char *have = offer_backend(o, buf, sizeof(buf));
	if (!have[0]) {
		int rc = facts(o, opts, why, sizeof(why));
		if (rc < 0)
			return rc;
		have = offer_backend(o, buf, sizeof(buf));
	}
	return strcmp(have, backend) == 0;
}

int ml_torch_choose(ml_torch_choice *out, const ml_torch_offer *offers, size_t n,
                    const ml_machine *m, const ml_torch_choose_opts *opts, ml_err *err)
{
	memset(out, 0, sizeof(*out));
	const char *backend =
	        opts && opts->backend && strcmp(opts->backend, "auto") != 0 ? opts->backend : NULL;
	ml_torch_offer *sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	fate *fates = n ? calloc(n, sizeof(*fates)) : NULL;
	if (n && (!sorted || !fates)) {
		free(sorted);
		free(fates);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	int rc = 0;
	size_t k = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		sorted[k] = offers[i];
		int keep = !backend ? 1 : of_backend(&sorted[k], backend, opts);
		if (keep < 0)
			rc = keep;
		else if (keep && sorted[k].version)
			k++;
	}
	if (k)
		qsort(sorted, k, sizeof(*sorted), offer_cmp);
	char why[512];
	for (size_t i = 0; i < k && !out->chosen && !rc; i++) {
		int f = facts(&sorted[i], opts, why, sizeof(why));
		if (f < 0) {
			rc = f;
			break;
		}
		if (f == 1)
			fates[i] = FATE_UNKNOWN;
		else if (!sorted[i].build) {
			fates[i] = FATE_UNKNOWN;
			put(why, sizeof(why),
			    "mlsetup's table does not know this build's CUDA code and its "
			    "wheel "
			    "was not audited");
		} else
			fates[i] = judge(sorted[i].build, m, why, sizeof(why));
		if (fates[i] == FATE_RUNS || fates[i] == FATE_COMPAT) {
			take(out, &sorted[i], true, why);
			out->compat = fates[i] == FATE_COMPAT;
		} else
			rc = reject(out, &sorted[i], why);
	}
	if (!rc && !out->chosen && !m->n_gpus && !backend) {
		/* no CPU build on offer (the variant indexes unreachable or
		 * turned off): the newest CUDA build, which runs on the CPU too */
		for (size_t i = 0; i < k && !out->chosen; i++)
			if (fates[i] == FATE_NOT_HERE) {
				take(out, &sorted[i], true,
				     "no NVIDIA GPU here and no CPU build on offer: this CUDA "
				     "build "
				     "runs on the CPU too, with CUDA libraries it will not use (a "
				     "CPU "
				     "build comes from PyTorch's cpu index: --torch-backend cpu)");
				out->n_rejected = i; /* those above it were CUDA builds too */
			}
	}
	if (!rc && !out->chosen) {
		if (backend && k && sorted[0].build) {
			/* a named backend is the user's word: its newest build, which
			 * does not run here, and why */
			judge(sorted[0].build, m, why, sizeof(why));
			take(out, &sorted[0], false, why);
		}
		nearest(out, sorted, fates, k, m);
		if (!k)
			put(out->nearest, sizeof(out->nearest),
			    "no torch build%s%s is on offer for this platform and these "
			    "versions",
			    backend ? " for backend " : "", backend ? backend : "");
	}
	free(sorted);
	free(fates);
	if (rc) {
		ml_torch_choice_release(out);
		return ml_err_set(err, rc, "out of memory");
	}
	return 0;
}

void ml_torch_choice_release(ml_torch_choice *c)
{
	if (!c)
		return;
	free(c->rejected);
	memset(c, 0, sizeof(*c));
}

void ml_torch_variant_url(char *dst, size_t sz, const char *base, const char *backend)
{
	size_t l = strlen(base);
	while (l && base[l - 1] == '/')
		l--;
	put(dst, sz, "%.*s/%s/", (int)l, base, backend);
}

int ml_torch_table_offers(ml_torch_offers *out, const char *platform, const char *specifier,
                          const char *default_index, const char *torch_index, ml_err *err)
{
	memset(out, 0, sizeof(*out));
	const ml_torch_build *all = NULL;
	size_t n = ml_torch_builds(&all);
	out->offers = n ? calloc(n, sizeof(*out->offers)) : NULL;
	out->urls = n ? calloc(n, sizeof(*out->urls)) : NULL;
	if (n && (!out->offers || !out->urls)) {
		ml_torch_offers_release(out);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const ml_torch_build *b = &all[i];
		if (strcmp(b->platform, platform) != 0)
			continue;
		if (b->index == ML_TORCH_INDEX_VARIANT && (!torch_index || !b->backend[0]))
			continue;
		if (specifier && *specifier) {
			bool ok = false;
			int rc = ml_specifier_match(&ok, specifier, b->version, err);
			if (rc) {
				ml_torch_offers_release(out);
				return rc;
			}
			if (!ok)
				continue;
		}
		ml_torch_offer *o = &out->offers[out->n];
		o->build = b;
		o->version = b->version;
		o->local = b->local;
		o->index = b->index;
		if (b->index == ML_TORCH_INDEX_VARIANT) {
			char url[1024];
			ml_torch_variant_url(url, sizeof(url), torch_index, b->backend);
			if (!(out->urls[out->n] = strdup(url))) {
				ml_torch_offers_release(out);
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			}
			o->index_url = out->urls[out->n];
		} else
			o->index_url = default_index;
		out->n++;
	}
	return 0;
}

void ml_torch_offers_release(ml_torch_offers *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++)
		free(o->urls[i]);
	free(o->urls);
	free(o->offers);
	memset(o, 0, sizeof(*o));
}

cJSON *ml_torch_choice_to_json(const ml_torch_choice *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *rej = cJSON_CreateArray();
	if (!o || !rej)
		goto oom;
	bool ok = true;
	if (c->chosen) {
		ok &= cJSON_AddStringToObject(o, "version", c->version) != NULL;
		ok &= cJSON_AddStringToObject(o, "backend", c->backend) != NULL;
		ok &= (c->index_url[0] ? cJSON_AddStringToObject(o, "index_url", c->index_url)
		                       : cJSON_AddNullToObject(o, "index_url")) != NULL;
		ok &= (c->build.cuda[0] ? cJSON_AddStringToObject(o, "cuda", c->build.cuda)
		                        : cJSON_AddNullToObject(o, "cuda")) != NULL;
	} else {
		ok &= cJSON_AddNullToObject(o, "version") != NULL;
		ok &= cJSON_AddNullToObject(o, "backend") != NULL;
		ok &= cJSON_AddNullToObject(o, "index_url") != NULL;
	}
	ok &= cJSON_AddBoolToObject(o, "runs", c->runs) != NULL;
	ok &= cJSON_AddBoolToObject(o, "minor_version_compat", c->compat) != NULL;
	ok &= cJSON_AddStringToObject(o, "reason", c->chosen ? c->reason : c->nearest) != NULL;
	for (size_t i = 0; ok && i < c->n_rejected; i++) {
		cJSON *r = cJSON_CreateObject();
		ok = r && cJSON_AddItemToArray(rej, r);
		if (!ok) {
			cJSON_Delete(r);
			break;
		}
		ok &= cJSON_AddStringToObject(r, "version", c->rejected[i].version) != NULL;
		ok &= cJSON_AddStringToObject(r, "backend", c->rejected[i].backend) != NULL;
		ok &= cJSON_AddStringToObject(r, "index", c->rejected[i].index) != NULL;
		ok &= cJSON_AddStringToObject(r, "reason", c->rejected[i].reason) != NULL;
	}
	if (!ok || !cJSON_AddItemToObject(o, "rejected", rej))
		goto oom;
	if (c->nearest[0] && !cJSON_AddStringToObject(o, "nearest", c->nearest)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
oom:
	cJSON_Delete(rej);
	cJSON_Delete(o);
	return NULL;
}

/* --- the variant indexes (manifests/torch-index.json) ------------------------- */

#define INDEX_TABLE  "torch-index.json"
#define MAX_BACKENDS 32

static struct {
	char url[512];
	char names[MAX_BACKENDS][32];
	const char *backends[MAX_BACKENDS];
	size_t n;
	bool ok;
} torch_index;

static pthread_once_t torch_index_once = PTHREAD_ONCE_INIT;

static void torch_index_load(void)
{
	const ml_embedded_file *f = ml_embedded_find(INDEX_TABLE);
	cJSON *doc = f ? cJSON_ParseWithLength((const char *)f->data, f->size) : NULL;
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(doc, "url");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "backends");
	if (cJSON_IsString(url) && strlen(url->valuestring) < sizeof(torch_index.url) &&
	    cJSON_IsArray(list)) {
		ml_strlcpy(torch_index.url, url->valuestring, sizeof(torch_index.url));
		torch_index.ok = true;
		const cJSON *e;
		cJSON_ArrayForEach(e, list)
		{
			if (!cJSON_IsString(e) || torch_index.n == MAX_BACKENDS ||
			    strlen(e->valuestring) >= sizeof(torch_index.names[0])) {
				torch_index.ok = false;
				break;
			}
			ml_strlcpy(torch_index.names[torch_index.n], e->valuestring,
			           sizeof(torch_index.names[0]));
			torch_index.backends[torch_index.n] = torch_index.names[torch_index.n];
			torch_index.n++;
		}
	}
	cJSON_Delete(doc);
}

const char *ml_torch_index_default(const char *const **backends, size_t *n)
{
	pthread_once(&torch_index_once, torch_index_load);
	*backends = torch_index.ok ? torch_index.backends : NULL;
	*n = torch_index.ok ? torch_index.n : 0;
	return torch_index.ok ? torch_index.url : NULL;
}
