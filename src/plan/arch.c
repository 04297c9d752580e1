/*
 * arch.c - the one answer to "will this CUDA code run on this GPU?".
 *
 * CUDA binaries carry SASS (machine code for one compute capability,
 * "sm_86", "sm_90a", "sm_100f") and PTX (virtual code, "compute_90") that
 * the driver can JIT-compile for newer GPUs. ml_arch_judge() applies the
 * compatibility rules of the CUDA C++ Programming Guide ("Binary
 * Compatibility", "PTX Compatibility", arch- and family-specific
 * features); docs/gpu-truth.md states them with their sources. Plan, audit
 * and verify all ask it rather than deciding on their own. PTX is judged
 * with the driver: a driver JIT-compiles only PTX whose ISA version its
 * CUDA version knows (drivers.json "ptx_isa"), and minor-version
 * compatibility does not extend to JIT. Beside NVIDIA's rules it holds
 * torch's own, stricter judgement of torch's library (DEVICE_REQUIREMENT
 * in torch/cuda/__init__.py), so that the two can be shown side by side
 * and torch's conservatism never fails another library.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ml_cuda_arch_parse(ml_cuda_arch *out, const char *s)
{
	if (!s)
		return ML_EPARSE;
	bool ptx;
	if (strncmp(s, "sm_", 3) == 0) {
		ptx = false;
		s += 3;
	} else if (strncmp(s, "compute_", 8) == 0) {
		ptx = true;
		s += 8;
	} else {
		return ML_EPARSE;
	}
	int v = 0, n = 0;
	if (*s == '0')
		return ML_EPARSE;
	while (isdigit((unsigned char)s[n])) {
		if (n == 4)
			return ML_EPARSE;
		v = v * 10 + (s[n] - '0');
		n++;
	}
	if (n < 2)
		return ML_EPARSE;
	char variant = 0;
	if (s[n] == 'a' || s[n] == 'f')
		variant = s[n++];
	if (s[n] != '\0')
		return ML_EPARSE;
	*out = (ml_cuda_arch){v / 10, v % 10, variant, ptx, 0};
	return 0;
}

int ml_cuda_device_parse(ml_cuda_arch *out, const char *s)
{
	ml_cuda_arch a;
	if (!s)
		return ML_EPARSE;
	if (ml_cuda_arch_parse(&a, s) == 0) {
		if (a.ptx || a.variant)
			return ML_EPARSE;
		*out = a;
		return 0;
	}
	/* X.Y: one to three digits without a leading zero, a dot, one digit. */
	size_t n = 0;
	while (n < 4 && s[n] >= '0' && s[n] <= '9')
		n++;
	if (n < 1 || n > 3 || s[0] == '0' || s[n] != '.' || s[n + 1] < '0' || s[n + 1] > '9' ||
	    s[n + 2] != '\0')
		return ML_EPARSE;
	*out = (ml_cuda_arch){atoi(s), s[n + 1] - '0', 0, false, 0};
	return 0;
}

int ml_cuda_arch_format(char *dst, size_t sz, const ml_cuda_arch *a)
{
	if (!a || a->major < 1 || a->major > 999 || a->minor < 0 || a->minor > 9 ||
	    (a->variant != 0 && a->variant != 'a' && a->variant != 'f'))
		return ML_EFAIL;
	char v[2] = {a->variant, '\0'};
	int n = snprintf(dst, sz, "%s_%d%d%s", a->ptx ? "compute" : "sm", a->major, a->minor, v);
	return n < 0 || (size_t)n >= sz ? ML_EFAIL : 0;
}

/* --- NVIDIA's rules ------------------------------------------------------------ */

/* The rule itself, for one code object, leaving the driver aside. */
static bool fits(const ml_cuda_arch *c, int dev_major, int dev_minor)
{
	if (c->variant == 'a')
		return c->major == dev_major && c->minor == dev_minor;
	if (!c->ptx || c->variant == 'f')
		return c->major == dev_major && dev_minor >= c->minor;
	return dev_major > c->major || (dev_major == c->major && dev_minor >= c->minor);
}

static void name_of(char *dst, size_t sz, const ml_cuda_arch *c)
{
	if (ml_cuda_arch_format(dst, sz, c))
		snprintf(dst, sz, "%s_?", c->ptx ? "compute" : "sm");
}

/* "12.8" for 12080. */
static void cuda_name(char *dst, size_t sz, int cuda)
{
	snprintf(dst, sz, "%d.%d", cuda / 1000, (cuda % 1000) / 10);
}

/* "compute_52 (ISA 8.7)", or the plain name when the ISA is unknown. */
static void ptx_name(char *dst, size_t sz, const ml_cuda_arch *c)
{
	char nm[32];
	name_of(nm, sizeof nm, c);
	if (c->isa > 0)
		snprintf(dst, sz, "%s (ISA %d.%d)", nm, c->isa / 10, c->isa % 10);
	else
		snprintf(dst, sz, "%s", nm);
}

/* Is a a closer fit than b (both fit)? Higher version first; at equal
 * versions arch-specific, then family, then plain code. */
static bool closer(const ml_cuda_arch *a, const ml_cuda_arch *b)
{
	if (a->major != b->major)
		return a->major > b->major;
	if (a->minor != b->minor)
		return a->minor > b->minor;
	static const char order[] = {'a', 'f', 0};
	int ra = 0, rb = 0;
	for (int k = 0; k < 3; k++) {
		if (a->variant == order[k])
			ra = k;
		if (b->variant == order[k])
			rb = k;
	}
	return ra < rb;
}

/* Appends up to 4 names of the entries pick() selects. */
static void list_names(char *dst, size_t sz, const ml_cuda_arch *code, size_t n,
                       bool (*pick)(const ml_cuda_arch *, int), int arg)
{
	size_t len = 0, shown = 0;
	dst[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		if (!pick(&code[k], arg))
			continue;
		if (shown == 4) {
			snprintf(dst + len, sz - len, ", ...");
			return;
		}
		char nm[32];
		name_of(nm, sizeof nm, &code[k]);
		int w = snprintf(dst + len, sz - len, "%s%s", shown ? ", " : "", nm);
		if (w < 0 || (size_t)w >= sz - len)
			return;
		len += (size_t)w;
		shown++;
	}
}

static bool sass_of_major(const ml_cuda_arch *c, int major)
{
	return !c->ptx && c->major == major;
}

static bool any_ptx(const ml_cuda_arch *c, int unused)
{
	(void)unused;
	return c->ptx;
}

/* The CUDA version a PTX entry's ISA needs (0: unknown ISA), and whether
 * a driver of driver_cuda (0: unknown) can JIT it. An ISA newer than the
 * table needs a driver newer than the table's newest release. */
static bool jit_ok(const ml_cuda_arch *c, int driver_cuda, int *need, bool *beyond)
{
	*beyond = false;
	*need = c->isa > 0 ? ml_ptx_isa_cuda(c->isa, beyond) : 0;
	if (*need == 0 || driver_cuda == 0)
		return true;
	return *beyond ? driver_cuda > *need : driver_cuda >= *need;
}

/* Is PTX a (needing need_a) a better pick than b (need_b)? With the
 * driver unknown, the one asking the least of it; then the closer. */
static bool better_ptx(const ml_cuda_arch *a, int need_a, const ml_cuda_arch *b, int need_b,
                       int driver_cuda)
{
	if (driver_cuda == 0 && need_a != need_b)
		return need_a < need_b;
	return closer(a, b);
}

static bool judge_nvidia(ml_arch_verdict *out, const ml_cuda_arch *code, size_t n,
                         const ml_arch_query *q)
{
	int dmaj = q->dev_major, dmin = q->dev_minor;
	const ml_cuda_arch *best_sass = NULL, *best_ptx = NULL, *blocked = NULL;
	int best_need = 0, blocked_need = 0;
	bool sass_same_major = false, ptx_at_or_below = false, blocked_beyond = false;
	for (size_t k = 0; code && k < n; k++) {
		const ml_cuda_arch *c = &code[k];
		if (!c->ptx && c->major == dmaj)
			sass_same_major = true;
		if (c->ptx && (c->major < dmaj || (c->major == dmaj && c->minor <= dmin)))
			ptx_at_or_below = true;
		if (!fits(c, dmaj, dmin))
			continue;
		if (!c->ptx) {
			if (!best_sass || closer(c, best_sass))
				best_sass = c;
			continue;
		}
		int need;
		bool beyond;
		if (!jit_ok(c, q->driver_cuda, &need, &beyond)) {
			if (!blocked || closer(c, blocked)) {
				blocked = c;
				blocked_need = need;
				blocked_beyond = beyond;
			}
		} else if (!best_ptx || better_ptx(c, need, best_ptx, best_need, q->driver_cuda)) {
			best_ptx = c;
			best_need = need;
		}
	}
	char nm[64], cu[16];
	if (best_sass) {
		out->runs = true;
		out->by = *best_sass;
		name_of(nm, sizeof nm, best_sass);
		snprintf(out->why, sizeof out->why, "SASS %s runs on %d.%d", nm, dmaj, dmin);
		return true;
	}
	if (best_ptx) {
		out->runs = true;
		out->by = *best_ptx;
		out->ptx_cuda = best_need;
		out->conditional = best_need > 0 && q->driver_cuda == 0;
		ptx_name(nm, sizeof nm, best_ptx);
		cuda_name(cu, sizeof cu, best_need);
		if (out->conditional)
			snprintf(out->why, sizeof out->why,
			         "PTX %s can be JIT-compiled for %d.%d by a driver for CUDA ≥ %s",
			         nm, dmaj, dmin, cu);
		else
			snprintf(out->why, sizeof out->why, "PTX %s can be JIT-compiled for %d.%d",
			         nm, dmaj, dmin);
		return true;
	}
	char sass[180], ptx[200], have[128];
	if (!sass_same_major) {
		snprintf(sass, sizeof sass, "no SASS for major %d", dmaj);
	} else {
		list_names(have, sizeof have, code, n, sass_of_major, dmaj);
		snprintf(sass, sizeof sass, "no SASS for %d.%d (major %d has only %s)", dmaj, dmin,
		         dmaj, have);
	}
	if (blocked) {
		char drv[16];
		ptx_name(nm, sizeof nm, blocked);
		cuda_name(cu, sizeof cu, blocked_need);
		cuda_name(drv, sizeof drv, q->driver_cuda);
		snprintf(ptx, sizeof ptx,
		         "PTX %s needs a driver for CUDA %s %s to JIT it, and this driver "
		         "supports CUDA %s",
		         nm, blocked_beyond ? "newer than" : "≥", cu, drv);
	} else if (!ptx_at_or_below) {
		snprintf(ptx, sizeof ptx, "no PTX ≤ %d.%d", dmaj, dmin);
	} else {
		list_names(have, sizeof have, code, n, any_ptx, 0);
		snprintf(ptx, sizeof ptx, "no PTX that JIT-compiles for %d.%d (have %s)", dmaj,
		         dmin, have);
	}
	snprintf(out->why, sizeof out->why, "sm_%d%d: %s, %s", dmaj, dmin, sass, ptx);
	return false;
}

/* --- torch's own judgement --------------------------------------------------------- */

/* torch 2.15's DEVICE_REQUIREMENT (torch/cuda/__init__.py): for code of
 * compute capability `code` (10 * major + minor), the devices it accepts:
 * an interval (same major, minor at least code's) less `exclude`, or the
 * set `only`. post132: the relaxed rows torch uses for builds of CUDA 13.2
 * and newer (DEVICE_REQUIREMENT_POST_JETSON_SBSA_UNIFICATION). */
static const struct torch_rule {
	int code;
	int exclude[2]; /* interval rows: devices left out (0: none) */
	int only[2];    /* set rows: the devices (0: none); an interval when only[0] == 0 */
	bool post132;   /* row of the CUDA >= 13.2 table, replacing its twin */
} torch_rules[] = {
        {50, {53, 0}, {0, 0}, false},     {52, {53, 0}, {0, 0}, false},
        {53, {0, 0}, {53, 0}, false},     {60, {62, 0}, {0, 0}, false},
        {61, {62, 0}, {0, 0}, false},     {62, {0, 0}, {62, 0}, false},
        {70, {72, 0}, {0, 0}, false},     {70, {0, 0}, {0, 0}, true},
        {72, {0, 0}, {72, 0}, false},     {75, {0, 0}, {0, 0}, false},
        {80, {87, 0}, {0, 0}, false},     {80, {0, 0}, {0, 0}, true},
        {86, {87, 0}, {0, 0}, false},     {86, {0, 0}, {0, 0}, true},
        {87, {0, 0}, {87, 0}, false},     {89, {0, 0}, {0, 0}, false},
        {90, {0, 0}, {0, 0}, false},      {100, {101, 0}, {0, 0}, false},
        {101, {0, 0}, {101, 110}, false}, /* 10.1 was renumbered 11.0 (Thor) */
        {103, {0, 0}, {0, 0}, false},     {110, {0, 0}, {101, 110}, false},
        {120, {0, 0}, {0, 0}, false},     {121, {0, 0}, {0, 0}, false},
};

/* The row for code under a build of CUDA torch_cuda, or NULL (a code torch
 * does not know: torch then takes the plain interval, and so do we). */
static const struct torch_rule *torch_rule(int code, int torch_cuda)
{
	const struct torch_rule *hit = NULL;
	for (size_t i = 0; i < sizeof torch_rules / sizeof torch_rules[0]; i++) {
		const struct torch_rule *r = &torch_rules[i];
		if (r->code != code || (r->post132 && torch_cuda < 13020))
			continue;
		hit = r; /* the post-13.2 row comes after its twin and wins */
	}
	return hit;
}

static bool torch_accepts(int code, int dev, int torch_cuda)
{
	const struct torch_rule *r = torch_rule(code, torch_cuda);
	if (r && r->only[0])
		return dev == r->only[0] || dev == r->only[1];
	if (r && (dev == r->exclude[0] || dev == r->exclude[1]))
		return false;
	return dev / 10 == code / 10 && dev % 10 >= code % 10;
}

/* torch's own words for what code accepts: ">=8.0,<9.0 except {8.7}",
 * "{10.1, 11.0}". */
static void torch_range(char *dst, size_t sz, int code, int torch_cuda)
{
	const struct torch_rule *r = torch_rule(code, torch_cuda);
	if (r && r->only[0]) {
		if (r->only[1])
			snprintf(dst, sz, "{%d.%d, %d.%d}", r->only[0] / 10, r->only[0] % 10,
			         r->only[1] / 10, r->only[1] % 10);
		else
			snprintf(dst, sz, "{%d.%d}", r->only[0] / 10, r->only[0] % 10);
		return;
	}
	int n = snprintf(dst, sz, ">=%d.%d,<%d.0", code / 10, code % 10, code / 10 + 1);
	if (r && r->exclude[0] && n > 0 && (size_t)n < sz)
		snprintf(dst + n, sz - (size_t)n, " except {%d.%d}", r->exclude[0] / 10,
		         r->exclude[0] % 10);
}

static bool judge_torch(ml_arch_verdict *out, const ml_cuda_arch *code, size_t n,
                        const ml_arch_query *q)
{
	int dev = q->dev_major * 10 + q->dev_minor;
	const ml_cuda_arch *best = NULL, *near = NULL;
	for (size_t k = 0; code && k < n; k++) {
		const ml_cuda_arch *c = &code[k];
		int cc = c->major * 10 + c->minor;
		if (c->major == q->dev_major && (!near || closer(c, near)))
			near = c;
		if (!torch_accepts(cc, dev, q->torch_cuda))
			continue;
		if (!best || (best->ptx && !c->ptx) || (best->ptx == c->ptx && closer(c, best)))
			best = c;
	}
	char nm[32], range[64];
	if (best) {
		out->runs = true;
		out->by = *best;
		name_of(nm, sizeof nm, best);
		torch_range(range, sizeof range, best->major * 10 + best->minor, q->torch_cuda);
		snprintf(out->why, sizeof out->why, "torch accepts %s for %d.%d (it supports %s)",
		         nm, q->dev_major, q->dev_minor, range);
		return true;
	}
	if (near) {
		name_of(nm, sizeof nm, near);
		torch_range(range, sizeof range, near->major * 10 + near->minor, q->torch_cuda);
		snprintf(out->why, sizeof out->why,
		         "torch accepts no code of this build for %d.%d (%s supports %s)",
		         q->dev_major, q->dev_minor, nm, range);
	} else {
		snprintf(out->why, sizeof out->why,
		         "torch accepts no code of this build for %d.%d (none for major %d)",
		         q->dev_major, q->dev_minor, q->dev_major);
	}
	return false;
}

/* --- the one entry point ------------------------------------------------------------ */

bool ml_arch_judge(ml_arch_verdict *out, const ml_cuda_arch *code, size_t n, const ml_arch_query *q)
{
	*out = (ml_arch_verdict){0};
	if (q->dev_major < 0 || q->dev_minor < 0) {
		snprintf(out->why, sizeof out->why, "the device's compute capability is unknown");
		return false;
	}
	return q->rules == ML_ARCH_TORCH ? judge_torch(out, code, n, q)
	                                 : judge_nvidia(out, code, n, q);
}

bool ml_arch_runs_on(const ml_cuda_arch *code, size_t n, int dev_major, int dev_minor, char *why,
                     size_t why_sz)
{
	ml_arch_query q = ML_ARCH_QUERY_INIT;
	q.dev_major = dev_major;
	q.dev_minor = dev_minor;
	ml_arch_verdict v;
	bool runs = ml_arch_judge(&v, code, n, &q);
	if (why && why_sz)
		snprintf(why, why_sz, "%s", v.why);
	return runs;
}
