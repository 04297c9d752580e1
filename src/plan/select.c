/*
 * select.c - the one module that decides which manifest fits a machine.
 * The rules are data: the preference order and the manifest for machines
 * without an NVIDIA GPU (manifests/selection.json; an OS with its own
 * set of manifests, manifests/windows/, has its own of both), the GPUs each
 * manifest's torch build covers (its torch_sass/torch_ptx header), and the
 * drivers it needs - its CUDA toolkit's minimum, the CUDA minor-version
 * floor and the minimum per GPU architecture - from the driver table
 * (manifests/drivers.json, through detect.h); a `cpu_only_platforms`
 * header names the platforms where its torch build has no CUDA code at
 * all (the package index's linux-aarch64 wheels). Each manifest is judged rule
 * by rule (gpu, driver, platform, python) and every verdict is kept as a
 * reason, so `plan` can say why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

typedef struct rules {
	cJSON *doc;
	cJSON *preference; /* array of manifest names */
	const char *no_gpu;
	const char *os; /* whose shipped manifests the names mean (ml_manifest_open_os) */
} rules;

/* How one manifest fared; filled while its reasons are added. */
typedef struct fit {
	ml_verdict_kind gpu, driver, platform, python;
	char gpus_failing[256]; /* "NVIDIA GeForce RTX 5090 (sm_120)" */
	char driver_need[32];   /* the version the driver rule wanted */
	bool ptx_only;          /* some GPU runs only through PTX JIT */
	bool cpu_only;          /* torch has no CUDA code on this platform */
} fit;

/* Loads the rules for OS os: selection.json's "os" entry for it (its own
 * preference and no_gpu; its manifests in manifests/<os>/) when there is
 * one, else the top-level preference and no_gpu. */
static int rules_load(rules *r, const char *os, ml_err *err)
{
	memset(r, 0, sizeof(*r));
	int rc = ml_drivers_check(err);
	if (rc)
		return rc;
	const ml_embedded_file *f = ml_embedded_find("selection.json");
	if (!f)
		return ml_err_set(err, ML_ENOENT, "selection rules are missing from this build");
	r->doc = cJSON_ParseWithLength(f->data, f->size);
	if (!r->doc)
		return ml_err_set(err, ML_EPARSE, "embedded selection.json is not valid JSON");
	r->os = os;
	const cJSON *per_os = cJSON_GetObjectItemCaseSensitive(r->doc, "os");
	const cJSON *own = os ? cJSON_GetObjectItemCaseSensitive(per_os, os) : NULL;
	const cJSON *from = cJSON_IsObject(own) ? own : r->doc;
	r->preference = cJSON_GetObjectItemCaseSensitive(from, "preference");
	cJSON *ng = cJSON_GetObjectItemCaseSensitive(from, "no_gpu");
	r->no_gpu = cJSON_IsString(ng) ? ng->valuestring : NULL;
	if (!cJSON_IsArray(r->preference) || !r->no_gpu || (per_os && !cJSON_IsObject(per_os))) {
		cJSON_Delete(r->doc);
		return ml_err_set(err, ML_EPARSE,
		                  "embedded selection.json lacks preference/no_gpu%s%s",
		                  from == r->doc ? "" : " for ", from == r->doc ? "" : os);
	}
	return 0;
}

static int add_reason(ml_selection *s, const char *manifest, const char *rule, ml_verdict_kind v,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int add_reason(ml_selection *s, const char *manifest, const char *rule, ml_verdict_kind v,
                      const char *fmt, ...)
{
	ml_reason *p = realloc(s->reasons, (s->n_reasons + 1) * sizeof(*p));
	if (!p)
		return ML_ENOMEM;
	s->reasons = p;
	p = &s->reasons[s->n_reasons++];
	memset(p, 0, sizeof(*p));
	ml_strlcpy(p->manifest, manifest, sizeof(p->manifest));
	ml_strlcpy(p->rule, rule, sizeof(p->rule));
	p->verdict = v;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	return 0;
}

static int add_warning(ml_selection *s, const char *text)
{
	char **p = realloc(s->warnings, (s->n_warnings + 1) * sizeof(*p));
	if (!p)
		return ML_ENOMEM;
	s->warnings = p;
	if (!(p[s->n_warnings] = strdup(text)))
		return ML_ENOMEM;
	s->n_warnings++;
	return 0;
}

/* "NVIDIA GeForce RTX 5090 (sm_120)"; a GPU without a name is named by its
 * PCI id and bus ("NVIDIA GPU with PCI id 10de:2ffe at 0000:01:00.0"). */
static void gpu_label(char *dst, size_t n, const ml_gpu *g)
{
	char sm[16], name[96];
	ml_cc_sm(sm, sizeof(sm), g->cc_major, g->cc_minor);
	if (g->name[0])
		ml_strlcpy(name, g->name, sizeof(name));
	else if (g->pci_device_id)
		snprintf(name, sizeof(name), "NVIDIA GPU with PCI id 10de:%04x at %s",
		         (unsigned)g->pci_device_id, g->pci_bus_id[0] ? g->pci_bus_id : "?");
	else
		ml_strlcpy(name, "NVIDIA GPU", sizeof(name));
	snprintf(dst, n, "%s (%s)", name, sm[0] ? sm : "unknown");
}

/* Whether the manifest's `cpu_only_platforms` header (space or comma
 * separated "os-arch" names) lists the machine's platform: its torch
 * build there has no CUDA code, whatever torch_sass/torch_ptx say. */
static bool cpu_only_here(const ml_manifest *mf, const ml_machine *m, char *plat, size_t n)
{
	snprintf(plat, n, "%s-%s", m->os.name, m->os.arch);
	const char *v = ml_requirements_meta(mf->reqs, "cpu_only_platforms");
	size_t pl = strlen(plat);
	while (v && *v) {
		v += strspn(v, " ,\t");
		size_t l = strcspn(v, " ,\t");
		if (l == pl && strncmp(v, plat, l) == 0)
			return true;
		v += l;
	}
	return false;
}

/* Rule 1: every GPU can run the manifest's torch build. */
static int rule_gpu(ml_selection *s, const ml_manifest *mf, const ml_machine *m, fit *f)
{
	f->gpu = ML_RULE_OK;
	char plat[64];
	if (cpu_only_here(mf, m, plat, sizeof(plat))) {
		f->gpu = ML_RULE_FAIL;
		f->cpu_only = true;
		for (size_t i = 0; i < m->n_gpus; i++) {
			char label[160];
			gpu_label(label, sizeof(label), &m->gpus[i]);
			size_t l = strlen(f->gpus_failing);
			snprintf(f->gpus_failing + l, sizeof(f->gpus_failing) - l, "%s%s",
			         l ? ", " : "", label);
			if (add_reason(s, mf->name, "gpu", ML_RULE_FAIL,
			               "%s: torch %s of this manifest is CPU-only on %s: no CUDA "
			               "code runs on it",
			               label, mf->torch ? mf->torch : "", plat))
				return ML_ENOMEM;
		}
		return 0;
	}
	if (!mf->has_gpu_header) {
		f->gpu = ML_RULE_WARN;
		return add_reason(
		        s, mf->name, "gpu", ML_RULE_WARN,
		        "neither mlsetup's table of torch builds nor a torch_sass/torch_ptx "
		        "header says which GPUs this manifest's torch runs on: cannot tell "
		        "whether its CUDA code runs on these GPUs (the wheels are audited "
		        "before anything is unpacked)");
	}
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		char label[160], why[256];
		gpu_label(label, sizeof(label), g);
		if (g->cc_major < 0) {
			if (f->gpu == ML_RULE_OK)
				f->gpu = ML_RULE_WARN;
			if (add_reason(s, mf->name, "gpu", ML_RULE_WARN,
			               "%s: compute capability unknown, cannot check", label))
				return ML_ENOMEM;
			continue;
		}
		bool ok = ml_arch_runs_on(mf->code, mf->n_code, g->cc_major, g->cc_minor, why,
		                          sizeof(why));
		if (ok && strncmp(why, "PTX", 3) == 0)
			f->ptx_only = true;
		if (!ok) {
			f->gpu = ML_RULE_FAIL;
			size_t l = strlen(f->gpus_failing);
			snprintf(f->gpus_failing + l, sizeof(f->gpus_failing) - l, "%s%s",
			         l ? ", " : "", label);
		}
		if (add_reason(s, mf->name, "gpu", ok ? ML_RULE_OK : ML_RULE_FAIL, "%s: %s", label,
		               why))
			return ML_ENOMEM;
	}
	return 0;
}

/* The newest architecture minimum (ml_arch_min_driver()) any detected GPU
 * needs, or NULL; *which is that GPU. */
static const char *gpu_arch_min_driver(const ml_machine *m, bool windows, const ml_gpu **which)
{
	const char *need = NULL;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		const char *v = ml_arch_min_driver(g->cc_major, g->cc_minor, windows);
		if (v && (!need || ml_driver_version_cmp(v, need) > 0)) {
			need = v;
			*which = g;
		}
	}
	return need;
}

/* What the minimum driver `min` of manifest mf for this OS is, for the
 * driver rule's reason: "the minimum for CUDA 13.2" (with `cite`, the
 * source: " (toolkit release notes, table 3)"), the manifest's own
 * min_driver_* header, or a lower bound for a toolkit the driver table has
 * no row for (that of an older toolkit of the same major, or the major's
 * minor-version floor). */
static void min_what(char *dst, size_t sz, const ml_manifest *mf, const char *min, bool windows,
                     bool cite)
{
	const char *src = cite ? " (toolkit release notes, table 3)" : "";
	const char *cuda = mf->cuda ? mf->cuda : "?";
	const char *key = windows ? "min_driver_windows" : "min_driver_linux";
	const char *hdr = mf->reqs ? ml_requirements_meta(mf->reqs, key) : NULL;
	const char *floor = ml_minor_version_floor(mf->cuda, windows);
	bool exact = false;
	const ml_toolkit_driver *row = mf->cuda ? ml_cuda_driver_row(mf->cuda, &exact) : NULL;
	const char *rv = row ? (windows ? row->windows_min : row->linux_min) : NULL;
	if (rv && strcmp(rv, min) == 0 && exact)
		snprintf(dst, sz, "the minimum for CUDA %s%s", cuda, src);
	else if (hdr && strcmp(hdr, min) == 0)
		snprintf(dst, sz, "the manifest's %s%s%s%s", key, mf->cuda ? " (CUDA " : "",
		         mf->cuda ? mf->cuda : "", mf->cuda ? ")" : "");
	else if (rv && strcmp(rv, min) == 0)
		snprintf(dst, sz,
		         "the minimum for CUDA %s%s, a lower bound for CUDA %s (mlsetup's driver "
		         "table has no row for it)",
		         row->cuda, src, cuda);
	else if (floor && strcmp(floor, min) == 0)
		snprintf(dst, sz,
		         "the CUDA %d.x minor-version compatibility floor, a lower bound for CUDA "
		         "%s (mlsetup's driver table has no row for it)",
		         atoi(cuda), cuda);
	else
		snprintf(dst, sz, "the minimum for CUDA %s", cuda);
}

/* Rule 2: the driver meets the manifest's minimum for this OS (NVIDIA's
 * CUDA toolkit release notes, table 3), or at least the CUDA minor-version
 * compatibility floor of the build's CUDA major (with a warning) when every
 * GPU's architecture minimum is met too and no GPU needs PTX JIT. The
 * reason names the rule that decided and the numbers of both. */
static int rule_driver(ml_selection *s, const ml_manifest *mf, const ml_machine *m, fit *f)
{
	bool windows = strcmp(m->os.name, "windows") == 0;
	const char *os = windows ? "Windows" : "Linux";
	const char *min = windows ? mf->min_driver_windows : mf->min_driver_linux;
	const char *drv = m->driver.version;
	const ml_gpu *arch_gpu = NULL;
	const char *arch_min = gpu_arch_min_driver(m, windows, &arch_gpu);
	const char *cuda = mf->cuda ? mf->cuda : "?";
	f->driver = ML_RULE_OK;
	ml_strlcpy(f->driver_need, min ? min : "", sizeof(f->driver_need));
	if (!min && mf->cuda)
		return add_reason(s, mf->name, "driver", ML_RULE_INFO,
		                  "mlsetup's driver table has no minimum %s driver for CUDA %s "
		                  "and the manifest names none: the driver is not checked",
		                  os, mf->cuda);
	if (!min)
		return add_reason(s, mf->name, "driver", ML_RULE_INFO,
		                  "manifest names no CUDA version or minimum %s driver", os);
	char what[256], cited[256];
	min_what(what, sizeof(what), mf, min, windows, false);
	min_what(cited, sizeof(cited), mf, min, windows, true);
	if (!drv[0]) {
		f->driver = ML_RULE_WARN;
		return add_reason(s, mf->name, "driver", ML_RULE_WARN,
		                  "no NVIDIA driver loaded: CUDA %s builds need driver %s or newer, "
		                  "%s",
		                  cuda, min, cited);
	}
	if (ml_driver_version_cmp(drv, min) >= 0)
		return add_reason(s, mf->name, "driver", ML_RULE_OK, "driver %s >= %s, %s", drv,
		                  min, cited);
	/* Below the minimum: CUDA minor-version compatibility is the only way
	 * the build still starts. */
	const char *floor = ml_minor_version_floor(mf->cuda, windows);
	int major = atoi(cuda);
	bool above_floor = floor && ml_driver_version_cmp(drv, floor) >= 0;
	bool arch_ok = !arch_min || ml_driver_version_cmp(drv, arch_min) >= 0;
	if (above_floor && arch_ok && !f->ptx_only) {
		f->driver = ML_RULE_WARN;
		return add_reason(
		        s, mf->name, "driver", ML_RULE_WARN,
		        "driver %s is below %s, %s, but at least %s, the CUDA %d.x "
		        "minor-version compatibility floor: runs under CUDA %d.x minor-version "
		        "compatibility (reduced features; no JIT of PTX newer than the driver); "
		        "upgrade to %s or newer for full support",
		        drv, min, what, floor, major, major, min);
	}
	f->driver = ML_RULE_FAIL;
	/* Which rule failed, besides the minimum: the floor, or what keeps
	 * minor-version compatibility from applying above it. */
	char compat[320] = "";
	if (!floor && mf->cuda)
		snprintf(compat, sizeof(compat),
		         " (mlsetup's driver table records no CUDA %d.x minor-version "
		         "compatibility floor%s)",
		         major, windows ? " for Windows" : "");
	else if (floor && !above_floor && strcmp(floor, min) != 0)
		snprintf(compat, sizeof(compat),
		         ", and below %s, the CUDA %d.x minor-version compatibility floor", floor,
		         major);
	else if (floor && above_floor && arch_ok) /* a GPU needs PTX JIT */
		snprintf(compat, sizeof(compat),
		         "; it meets %s, the CUDA %d.x minor-version compatibility floor, but a "
		         "GPU here runs this build only through PTX JIT, which minor-version "
		         "compatibility does not provide",
		         floor, major);
	else if (floor && above_floor)
		snprintf(compat, sizeof(compat),
		         "; the CUDA %d.x minor-version compatibility floor (%s), which it "
		         "meets, does not lower an architecture's minimum",
		         major, floor);
	if (arch_ok)
		return add_reason(s, mf->name, "driver", ML_RULE_FAIL,
		                  "driver %s is below %s, %s%s", drv, min, cited, compat);
	if (ml_driver_version_cmp(arch_min, min) > 0)
		ml_strlcpy(f->driver_need, arch_min, sizeof(f->driver_need));
	char label[160];
	bool beyond = false;
	gpu_label(label, sizeof(label), arch_gpu);
	const char *tk = ml_arch_first_toolkit(arch_gpu->cc_major, arch_gpu->cc_minor, &beyond);
	const char *arch = ml_cc_architecture(arch_gpu->cc_major, arch_gpu->cc_minor);
	if (beyond)
		return add_reason(s, mf->name, "driver", ML_RULE_FAIL,
		                  "driver %s is below %s, %s%s; %s is newer than "
		                  "the architectures mlsetup's driver table knows and needs at "
		                  "least driver %s (CUDA %s)",
		                  drv, min, cited, compat, label, arch_min, tk);
	/* "R570": the driver branch, the first component of the minimum. */
	int branch = atoi(arch_min);
	return add_reason(s, mf->name, "driver", ML_RULE_FAIL,
	                  "driver %s is below %s, %s%s; %s needs an R%d+ "
	                  "driver (%s or newer: CUDA %s is the first toolkit with %s%sSASS)",
	                  drv, min, cited, compat, label, branch, arch_min, tk, arch,
	                  arch[0] ? " " : "");
}

/* Rule 3: OS, CPU architecture and Python version are supported. */
static int rule_platform(ml_selection *s, const ml_manifest *mf, const ml_machine *m,
                         const char *python, const char *full, fit *f)
{
	char plat[64];
	snprintf(plat, sizeof(plat), "%s-%s", m->os.name, m->os.arch);
	f->platform = mf->n_platforms ? ML_RULE_FAIL : ML_RULE_OK;
	for (size_t i = 0; i < mf->n_platforms; i++)
		if (strcmp(mf->platforms[i], plat) == 0)
			f->platform = ML_RULE_OK;
	ml_buf list = ML_BUF_INIT;
	for (size_t i = 0; i < mf->n_platforms; i++)
		ml_buf_printf(&list, "%s%s", i ? " " : "", mf->platforms[i]);
	int rc = add_reason(s, mf->name, "platform", f->platform, "%s %s (manifest: %s)", plat,
	                    f->platform == ML_RULE_OK ? "is supported" : "is not supported",
	                    mf->n_platforms ? ml_buf_cstr(&list) : "any");
	ml_buf_release(&list);
	if (rc)
		return rc;
	f->python = mf->n_pythons && python ? ML_RULE_FAIL : ML_RULE_OK;
	for (size_t i = 0; python && i < mf->n_pythons; i++)
		if (strcmp(mf->pythons[i], python) == 0)
			f->python = ML_RULE_OK;
	/* a lock file's requires-python (PEP 751), against the full version */
	bool rp_ok = true;
	if (mf->requires_python && python &&
	    ml_specifier_match(&rp_ok, mf->requires_python, full ? full : python, NULL) == 0 &&
	    !rp_ok)
		f->python = ML_RULE_FAIL;
	ml_buf py = ML_BUF_INIT;
	for (size_t i = 0; i < mf->n_pythons; i++)
		ml_buf_printf(&py, "%s%s", i ? " " : "", mf->pythons[i]);
	if (mf->requires_python)
		ml_buf_printf(&py, "%srequires-python %s", mf->n_pythons ? ", " : "",
		              mf->requires_python);
	rc = add_reason(s, mf->name, "python", f->python, "Python %s %s (manifest: %s)",
	                mf->requires_python && full && python ? full
	                : python                              ? python
	                                                      : "(any)",
	                f->python == ML_RULE_OK ? "is supported" : "is not supported",
	                py.len ? ml_buf_cstr(&py) : "any");
	ml_buf_release(&py);
	return rc;
}

static bool fits(const fit *f)
{
	return f->gpu != ML_RULE_FAIL && f->driver != ML_RULE_FAIL && f->platform != ML_RULE_FAIL &&
	       f->python != ML_RULE_FAIL;
}

static int judge(ml_selection *s, const ml_manifest *mf, const ml_machine *m, const char *python,
                 const char *full, bool gpu_rules, fit *f)
{
	memset(f, 0, sizeof(*f));
	int rc = 0;
	if (gpu_rules) {
		rc = rule_gpu(s, mf, m, f);
		if (!rc)
			rc = rule_driver(s, mf, m, f);
	}
	if (!rc)
		rc = rule_platform(s, mf, m, python, full, f);
	return rc;
}

/* Warnings a user must see about the chosen manifest. */
static int collect_warnings(ml_selection *s, const ml_manifest *mf, const fit *f)
{
	char w[1600];
	for (size_t i = 0; i < s->n_reasons; i++) {
		const ml_reason *rs = &s->reasons[i];
		if (strcmp(rs->manifest, mf->name) != 0)
			continue;
		if (rs->verdict == ML_RULE_WARN || (s->overridden && rs->verdict == ML_RULE_FAIL)) {
			snprintf(w, sizeof(w), "%s", rs->detail);
			if (s->overridden && rs->verdict == ML_RULE_FAIL &&
			    !strcmp(rs->rule, "gpu") && f->cpu_only) {
				snprintf(w, sizeof(w),
				         "%s: the GPUs stay unused, and the GPU checks fail",
				         rs->detail);
			} else if (s->overridden && rs->verdict == ML_RULE_FAIL &&
			           !strcmp(rs->rule, "gpu")) {
				/* "12.4" -> "cu124", the local version tag of torch's wheels */
				char cu[16] = "";
				for (const char *c = mf->cuda ? mf->cuda : "";
				     *c && strlen(cu) < 14; c++)
					if (*c != '.')
						strncat(cu, c, 1);
				const char *why = strstr(rs->detail, "): ");
				snprintf(w, sizeof(w),
				         "torch %s%s%s has no code for %s: expect 'no kernel image "
				         "is "
				         "available for execution on the device' (%s)",
				         mf->torch ? mf->torch : "", cu[0] ? "+cu" : "", cu,
				         f->gpus_failing, why ? why + 3 : rs->detail);
			}
			if (add_warning(s, w))
				return ML_ENOMEM;
		}
	}
	return 0;
}

/* No shipped manifest has code for some GPU (`gpus` lists them): whether it
 * is newer or older than every shipped build decides what would help. */
static void explain_no_code(ml_selection *s, const ml_machine *m, const char *gpus)
{
	const ml_gpu *newer = NULL, *older = NULL, *gap = NULL;
	ml_build_range nr, r;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		if (g->cc_major < 0 || ml_shipped_build_range(&r, g->cc_major, g->cc_minor, NULL))
			continue;
		if (r.fit == ML_BUILDS_NEWER && !newer) {
			newer = g;
			nr = r;
		} else if (r.fit == ML_BUILDS_OLDER && !older) {
			older = g;
		} else if (r.fit == ML_BUILDS_GAP && !gap) {
			gap = g;
		}
	}
	char label[160], sm[16];
	if (newer) {
		gpu_label(label, sizeof(label), newer);
		ml_cc_sm(sm, sizeof(sm), newer->cc_major, newer->cc_minor);
		snprintf(
		        s->problem, sizeof(s->problem),
		        "no shipped manifest has CUDA code that runs on %s: it is newer than the "
		        "CUDA builds of the shipped manifests; the newest, %s (torch %s, CUDA %s), "
		        "has SASS up to %s and %s%s",
		        label, nr.newest, nr.newest_torch[0] ? nr.newest_torch : "?",
		        nr.newest_cuda[0] ? nr.newest_cuda : "?",
		        nr.newest_sass[0] ? nr.newest_sass : "none",
		        nr.newest_ptx[0] ? "PTX up to " : "no PTX", nr.newest_ptx);
		snprintf(s->remedy, sizeof(s->remedy),
		         "use --manifest with a torch build that has SASS for %s (from a CUDA "
		         "toolkit newer than %s) or PTX it can JIT (compute_%d%d or older), and "
		         "an NVIDIA driver new enough for both",
		         sm, nr.newest_cuda[0] ? nr.newest_cuda : "the builds'", newer->cc_major,
		         newer->cc_minor);
		return;
	}
	const ml_gpu *g = older ? older : gap;
	const char *arch = g ? g->architecture : "";
	snprintf(s->problem, sizeof(s->problem),
	         "no shipped manifest has CUDA code that runs on %s%s%s%s",
	         gpus[0] ? gpus : "these GPUs", arch[0] ? " (" : "", arch, arch[0] ? ")" : "");
	if (older) {
		snprintf(
		        s->remedy, sizeof(s->remedy),
		        "current PyTorch builds dropped this GPU generation; use --manifest with a "
		        "build that still supports it, or a CPU-only environment");
		return;
	}
	ml_cc_sm(sm, sizeof(sm), g ? g->cc_major : -1, g ? g->cc_minor : -1);
	snprintf(s->remedy, sizeof(s->remedy),
	         "the shipped builds have no code for %s: use --manifest with a torch build "
	         "whose arch list includes it (or PTX for an older architecture)",
	         sm[0] ? sm : "this GPU");
}

/* Fills s->problem and s->remedy from the fits of the rejected manifests. */
static void explain_nothing_fits(ml_selection *s, const ml_machine *m, const fit *fs,
                                 char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) /* a manifest whose code runs but driver is too old */
		if (fs[i].gpu != ML_RULE_FAIL && fs[i].driver == ML_RULE_FAIL) {
			/* the GPUs the preferred manifest could not run, else (its code
			 * ran, only the driver failed) every GPU of the machine */
			char gpus[256] = "";
			if (fs[0].gpus_failing[0])
				ml_strlcpy(gpus, fs[0].gpus_failing, sizeof(gpus));
			for (size_t g = 0; !fs[0].gpus_failing[0] && g < m->n_gpus; g++) {
				char label[160];
				size_t l = strlen(gpus);
				gpu_label(label, sizeof(label), &m->gpus[g]);
				snprintf(gpus + l, sizeof(gpus) - l, "%s%s", l ? ", " : "", label);
			}
			snprintf(s->problem, sizeof(s->problem),
			         "%s needs the CUDA builds of %s, which need driver >= %s; this "
			         "machine has %s",
			         gpus[0] ? gpus : "this GPU", names[i], fs[i].driver_need,
			         m->driver.version);
			snprintf(s->remedy, sizeof(s->remedy),
			         "upgrade the NVIDIA driver to %s or newer", fs[i].driver_need);
			return;
		}
	for (size_t i = 0; i < n; i++)
		if (fs[i].gpu != ML_RULE_FAIL && fs[i].driver != ML_RULE_FAIL) {
			snprintf(s->problem, sizeof(s->problem),
			         "%s fits these GPUs but not this %s", names[i],
			         fs[i].python == ML_RULE_FAIL ? "Python version" : "platform");
			snprintf(
			        s->remedy, sizeof(s->remedy), "%s",
			        fs[i].python == ML_RULE_FAIL
			                ? "pick a supported interpreter with --python X.Y (see the "
			                  "python rule above)"
			                : "use a supported OS and CPU (see the platform rule "
			                  "above) or "
			                  "--manifest with one built for this platform");
			return;
		}
	for (size_t i = 0; i < n; i++) /* the builds for this platform have no CUDA code */
		if (fs[i].cpu_only && fs[i].platform != ML_RULE_FAIL &&
		    fs[i].python != ML_RULE_FAIL) {
			snprintf(s->problem, sizeof(s->problem),
			         "the shipped manifests' torch builds for %s-%s are CPU-only (the "
			         "package index has no CUDA build of them there): nothing runs "
			         "on %s",
			         m->os.name, m->os.arch, fs[i].gpus_failing);
			snprintf(s->remedy, sizeof(s->remedy),
			         "use --manifest with a CUDA build of torch for %s-%s (locked "
			         "from an index that has one), or --manifest %s for a CPU-only "
			         "environment that leaves the GPUs unused",
			         m->os.name, m->os.arch, names[i]);
			return;
		}
	explain_no_code(s, m, n ? fs[n - 1].gpus_failing : "");
}

static int select_forced(ml_selection *s, const ml_machine *m, const ml_select_opts *o, ml_err *err)
{
	ml_manifest *mf = NULL;
	int rc = ml_manifest_open_os(&mf, o->manifest, m->os.name,
	                             o->require_hashes ? ML_MANIFEST_REQUIRE_HASHES : 0, err);
	if (rc)
		return rc;
	fit f;
	s->overridden = true;
	s->gpu_checks_skipped = m->n_gpus == 0;
	rc = judge(s, mf, m, o->python_version, o->python_full, m->n_gpus > 0, &f);
	if (!rc)
		rc = add_reason(s, mf->name, "choice", ML_RULE_INFO, "chosen by --manifest%s",
		                fits(&f) ? "" : " although it does not fit this machine");
	if (!rc)
		rc = collect_warnings(s, mf, &f);
	if (rc) {
		ml_manifest_free(mf);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	s->manifest = mf;
	return 0;
}

static int select_auto(ml_selection *s, const ml_machine *m, const rules *r,
                       const ml_select_opts *o, ml_err *err)
{
	char *names[16];
	size_t n = 0;
	bool gpu = m->n_gpus > 0;
	if (!gpu) {
		names[n++] = (char *)r->no_gpu;
	} else {
		const cJSON *e;
		cJSON_ArrayForEach(e, r->preference) if (cJSON_IsString(e) && n < 16) names[n++] =
		        e->valuestring;
	}
	fit fs[16];
	int rc = 0;
	for (size_t i = 0; i < n && !s->manifest; i++) {
		ml_manifest *mf = NULL;
		rc = ml_manifest_open_os(&mf, names[i], r->os,
		                         o->require_hashes ? ML_MANIFEST_REQUIRE_HASHES : 0, err);
		if (rc)
			return rc;
		rc = judge(s, mf, m, o->python_version, o->python_full, gpu, &fs[i]);
		if (!rc && fits(&fs[i])) {
			s->manifest = mf;
			s->gpu_checks_skipped = !gpu;
			rc = add_reason(
			        s, mf->name, "choice", ML_RULE_INFO, "%s",
			        !gpu     ? "no NVIDIA GPU: the default manifest; GPU checks will "
			                   "be skipped"
			        : i == 0 ? "fits, and is preferred for reproducibility"
			                 : "fits; the preferred manifests before it do not");
			if (!rc)
				rc = collect_warnings(s, mf, &fs[i]);
		} else {
			ml_manifest_free(mf);
		}
		if (rc)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (!s->manifest)
		explain_nothing_fits(s, m, fs, names, n);
	return 0;
}

int ml_manifest_covering(ml_manifest **out, int major, int minor, const char *except, ml_err *err)
{
	*out = NULL;
	rules r;
	int rc = rules_load(&r, ml_plan_build_os(), err);
	if (rc)
		return rc;
	const char *skip = except ? strrchr(except, '/') : NULL;
	skip = skip ? skip + 1 : except;
	const cJSON *item;
	cJSON_ArrayForEach(item, r.preference)
	{
		if (!cJSON_IsString(item) || (skip && strcmp(item->valuestring, skip) == 0))
			continue;
		ml_manifest *mf = NULL;
		if ((rc = ml_manifest_open_os(&mf, item->valuestring, r.os, 0, err)) != 0)
			break; /* a shipped manifest that does not open: a broken build */
		if (mf->has_gpu_header &&
		    ml_arch_runs_on(mf->code, mf->n_code, major, minor, NULL, 0)) {
			*out = mf;
			break;
		}
		ml_manifest_free(mf);
	}
	cJSON_Delete(r.doc);
	return rc;
}

/* 10 * major + minor of a code entry or device, for ordering. */
static int cc_order(int major, int minor)
{
	return major * 10 + minor;
}

/* Folds one shipped manifest's code into out; *newest / *oldest are the
 * newest and oldest code seen so far (-1: none). */
static void fold_range(ml_build_range *out, const ml_manifest *mf, int *newest, int *oldest)
{
	int top = -1, sass = -1, ptx = -1;
	char sass_name[16] = "", ptx_name[16] = "";
	for (size_t i = 0; mf->has_gpu_header && i < mf->n_code; i++) {
		const ml_cuda_arch *a = &mf->code[i];
		int v = cc_order(a->major, a->minor);
		top = v > top ? v : top;
		if (v > (a->ptx ? ptx : sass)) {
			*(a->ptx ? &ptx : &sass) = v;
			ml_cuda_arch_format(a->ptx ? ptx_name : sass_name, sizeof(sass_name), a);
		}
		if (*oldest < 0 || v < *oldest) {
			*oldest = v;
			ml_strlcpy(out->oldest, mf->name, sizeof(out->oldest));
			ml_cuda_arch_format(out->oldest_code, sizeof(out->oldest_code), a);
		}
	}
	if (top > *newest) {
		*newest = top;
		ml_strlcpy(out->newest, mf->name, sizeof(out->newest));
		ml_strlcpy(out->newest_torch, mf->torch ? mf->torch : "",
		           sizeof(out->newest_torch));
		ml_strlcpy(out->newest_cuda, mf->cuda ? mf->cuda : "", sizeof(out->newest_cuda));
		ml_strlcpy(out->newest_sass, sass_name, sizeof(out->newest_sass));
		ml_strlcpy(out->newest_ptx, ptx_name, sizeof(out->newest_ptx));
	}
}

int ml_shipped_build_range(ml_build_range *out, int major, int minor, ml_err *err)
{
	memset(out, 0, sizeof(*out));
	out->fit = ML_BUILDS_GAP;
	rules r;
	int rc = rules_load(&r, ml_plan_build_os(), err);
	if (rc)
		return rc;
	int newest = -1, oldest = -1;
	bool covered = false;
	const cJSON *item;
	cJSON_ArrayForEach(item, r.preference)
	{
		ml_manifest *mf = NULL;
		if (!cJSON_IsString(item))
			continue;
		if ((rc = ml_manifest_open_os(&mf, item->valuestring, r.os, 0, err)) != 0)
			break; /* a shipped manifest that does not open: a broken build */
		fold_range(out, mf, &newest, &oldest);
		covered |= mf->has_gpu_header &&
		           ml_arch_runs_on(mf->code, mf->n_code, major, minor, NULL, 0);
		ml_manifest_free(mf);
	}
	cJSON_Delete(r.doc);
	if (rc)
		return rc;
	int dev = cc_order(major, minor);
	if (covered)
		out->fit = ML_BUILDS_COVER;
	else if (newest >= 0 && dev > newest)
		out->fit = ML_BUILDS_NEWER;
	else if (oldest >= 0 && dev < oldest)
		out->fit = ML_BUILDS_OLDER;
	return 0;
}

int ml_select(ml_selection **out, const ml_machine *m, const ml_select_opts *opts, ml_err *err)
{
	ml_select_opts defaults = ML_SELECT_OPTS_INIT;
	const ml_select_opts *o = opts ? opts : &defaults;
	rules r;
	int rc = rules_load(&r, m->os.name, err);
	if (rc)
		return rc;
	ml_selection *s = calloc(1, sizeof(*s));
	if (!s) {
		cJSON_Delete(r.doc);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	rc = o->manifest ? select_forced(s, m, o, err) : select_auto(s, m, &r, o, err);
	cJSON_Delete(r.doc);
	if (rc) {
		ml_selection_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int ml_select_judge(ml_selection *s, const ml_machine *m, const ml_select_opts *o,
                    const char *choice, bool *fits_out, ml_err *err)
{
	free(s->reasons);
	s->reasons = NULL;
	s->n_reasons = 0;
	for (size_t i = 0; i < s->n_warnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	s->warnings = NULL;
	s->n_warnings = 0;
	s->overridden = false;
	s->gpu_checks_skipped = m->n_gpus == 0;
	s->problem[0] = s->remedy[0] = '\0';
	/* a file that requires no torch: GPU checks do not apply to it */
	bool torch = false;
	const ml_requirements *rq = s->manifest->reqs;
	for (size_t i = 0; rq && i < rq->n_reqs; i++)
		torch = torch || strcmp(rq->reqs[i].normalized, "torch") == 0;
	fit f;
	int rc = 0;
	if (!torch) {
		s->gpu_checks_skipped = true;
		rc = add_reason(s, s->manifest->name, "gpu", ML_RULE_INFO,
		                "requires no torch: the GPU checks do not apply");
	}
	if (!rc)
		rc = judge(s, s->manifest, m, o->python_version, o->python_full,
		           torch && m->n_gpus > 0, &f);
	*fits_out = !rc && fits(&f);
	if (!rc && *fits_out)
		rc = add_reason(s, s->manifest->name, "choice", ML_RULE_INFO, "%s", choice);
	if (!rc && *fits_out)
		rc = collect_warnings(s, s->manifest, &f);
	return rc ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}

void ml_selection_free(ml_selection *s)
{
	if (!s)
		return;
	ml_manifest_free(s->manifest);
	free(s->reasons);
	for (size_t i = 0; i < s->n_warnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	free(s);
}
