/*
 * arch.c - the one answer to "will this CUDA code run on this GPU?".
 *
 * CUDA binaries carry SASS (machine code for one compute capability,
 * "sm_86", "sm_90a", "sm_100f") and PTX (virtual code, "compute_90") that
 * the driver can JIT-compile for newer GPUs. ml_arch_runs_on() applies the
 * compatibility rules of the CUDA C++ Programming Guide ("Binary
 * Compatibility", "PTX Compatibility", arch- and family-specific features)
 * as DESIGN.md "Where the will-it-run logic lives" states them; plan, audit
 * and verify all ask it rather than deciding on their own.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
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
	*out = (ml_cuda_arch){v / 10, v % 10, variant, ptx};
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

/* The rule itself, for one code object. */
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

bool ml_arch_runs_on(const ml_cuda_arch *code, size_t n, int dev_major, int dev_minor, char *why,
                     size_t why_sz)
{
	char scratch[2];
	if (!why || why_sz == 0) {
		why = scratch;
		why_sz = sizeof scratch;
	}
	why[0] = '\0';
	if (dev_major < 0 || dev_minor < 0) {
		snprintf(why, why_sz, "the device's compute capability is unknown");
		return false;
	}
	const ml_cuda_arch *best_sass = NULL, *best_ptx = NULL;
	bool sass_same_major = false, ptx_at_or_below = false;
	for (size_t k = 0; code && k < n; k++) {
		const ml_cuda_arch *c = &code[k];
		if (!c->ptx && c->major == dev_major)
			sass_same_major = true;
		if (c->ptx &&
		    (c->major < dev_major || (c->major == dev_major && c->minor <= dev_minor)))
			ptx_at_or_below = true;
		if (!fits(c, dev_major, dev_minor))
			continue;
		const ml_cuda_arch **best = c->ptx ? &best_ptx : &best_sass;
		if (!*best || closer(c, *best))
			*best = c;
	}
	char nm[32];
	if (best_sass) {
		name_of(nm, sizeof nm, best_sass);
		snprintf(why, why_sz, "SASS %s runs on %d.%d", nm, dev_major, dev_minor);
		return true;
	}
	if (best_ptx) {
		name_of(nm, sizeof nm, best_ptx);
		snprintf(why, why_sz, "PTX %s can be JIT-compiled for %d.%d", nm, dev_major,
		         dev_minor);
		return true;
	}
	char sass[256], ptx[256], have[128];
	if (!sass_same_major) {
		snprintf(sass, sizeof sass, "no SASS for major %d", dev_major);
	} else {
		list_names(have, sizeof have, code, n, sass_of_major, dev_major);
		snprintf(sass, sizeof sass, "no SASS for %d.%d (major %d has only %s)", dev_major,
		         dev_minor, dev_major, have);
	}
	if (!ptx_at_or_below) {
		snprintf(ptx, sizeof ptx, "no PTX ≤ %d.%d", dev_major, dev_minor);
	} else {
		list_names(have, sizeof have, code, n, any_ptx, 0);
		snprintf(ptx, sizeof ptx, "no PTX that JIT-compiles for %d.%d (have %s)", dev_major,
		         dev_minor, have);
	}
	snprintf(why, why_sz, "sm_%d%d: %s, %s", dev_major, dev_minor, sass, ptx);
	return false;
}
