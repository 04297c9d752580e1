/*
 * tags.c - which wheels install here: PEP 425 compatibility tags, PEP 427
 * wheel file names and PEP 600 manylinux.
 *
 * ml_tags_for() lists a target CPython's supported tags best first, in the
 * order packaging.tags.sys_tags() gives (the order pip ranks wheels by);
 * ml_wheel_tag_rank() places a wheel in that list. Platform lists follow
 * PEP 600 (manylinux_X_Y with the legacy manylinux1/2010/2014 aliases),
 * PEP 656 (musllinux_X_Y) and packaging's macOS rules.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct strv {
	char **v;
	size_t n, cap;
} strv;

static int sv_push(strv *s, char *str)
{
	if (!str)
		return ML_ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **p = realloc(s->v, cap * sizeof *p);
		if (!p) {
			free(str);
			return ML_ENOMEM;
		}
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	return 0;
}

void ml_tags_free(char **tags, size_t n)
{
	if (!tags)
		return;
	for (size_t k = 0; k < n; k++)
		free(tags[k]);
	free(tags);
}

/* "x86_64"/"amd64" -> "x86_64", "aarch64"/"arm64" -> "aarch64", else NULL. */
static const char *norm_arch(const char *a)
{
	if (!a)
		return NULL;
	if (strcmp(a, "x86_64") == 0 || strcmp(a, "amd64") == 0 || strcmp(a, "AMD64") == 0)
		return "x86_64";
	if (strcmp(a, "aarch64") == 0 || strcmp(a, "arm64") == 0 || strcmp(a, "ARM64") == 0)
		return "aarch64";
	return NULL;
}

/* packaging's _manylinux.platform_tags(): manylinux_<glibc> down to the
 * oldest glibc of the arch, each legacy alias right after its version. */
static int manylinux_platforms(strv *p, const char *arch, int gmaj, int gmin)
{
	int too_old_minor = strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0 ? 4 : 16;
	for (int maj = gmaj; maj >= 2; maj--) {
		int max_minor = maj == gmaj ? gmin : 50; /* packaging's _LAST_GLIBC_MINOR */
		int min_minor = maj == 2 ? too_old_minor : -1;
		for (int minor = max_minor; minor > min_minor; minor--) {
			if (sv_push(p, ml_asprintf("manylinux_%d_%d_%s", maj, minor, arch)))
				return ML_ENOMEM;
			const char *legacy = NULL;
			if (maj == 2 && minor == 17)
				legacy = "manylinux2014";
			else if (maj == 2 && minor == 12)
				legacy = "manylinux2010";
			else if (maj == 2 && minor == 5)
				legacy = "manylinux1";
			if (legacy && sv_push(p, ml_asprintf("%s_%s", legacy, arch)))
				return ML_ENOMEM;
		}
	}
	return 0;
}

/* packaging's _mac_binary_formats() */
static size_t mac_formats(const char **out, int maj, int min, const char *arch)
{
	size_t n = 0;
	if (strcmp(arch, "x86_64") == 0) {
		if (maj < 10 || (maj == 10 && min < 4))
			return 0;
		out[n++] = "x86_64";
		out[n++] = "intel";
		out[n++] = "fat64";
		out[n++] = "fat3"; /* i386+ppc+x86_64, as packaging >= 25 spells it */
		out[n++] = "universal2";
		out[n++] = "universal";
	} else {
		out[n++] = "arm64";
		out[n++] = "universal2";
	}
	return n;
}

static int mac_push(strv *p, int maj, int min, const char *arch)
{
	const char *f[8];
	size_t n = mac_formats(f, maj, min, arch);
	for (size_t k = 0; k < n; k++)
		if (sv_push(p, ml_asprintf("macosx_%d_%d_%s", maj, min, f[k])))
			return ML_ENOMEM;
	return 0;
}

/* packaging's mac_platforms() for a given macOS version and arch. */
static int mac_platforms(strv *p, int maj, int min, const char *arch)
{
	if (maj == 10) {
		for (int m = min; m >= 0; m--)
			if (mac_push(p, 10, m, arch))
				return ML_ENOMEM;
	}
	if (maj >= 11) {
		for (int M = maj; M > 10; M--)
			if (mac_push(p, M, 0, arch))
				return ML_ENOMEM;
		for (int m = 16; m > 3; m--) {
			if (strcmp(arch, "x86_64") == 0) {
				if (mac_push(p, 10, m, arch))
					return ML_ENOMEM;
			} else if (sv_push(p, ml_asprintf("macosx_10_%d_universal2", m))) {
				return ML_ENOMEM;
			}
		}
	}
	return 0;
}

static int platforms(strv *p, const ml_tag_target *t, ml_err *err)
{
	const char *arch = norm_arch(t->arch);
	if (!t->os || !arch)
		return ml_err_set(err, ML_EUNSUPPORTED, "no wheel tags for os '%s' arch '%s'",
		                  t->os ? t->os : "(none)", t->arch ? t->arch : "(none)");
	if (strcmp(t->os, "linux") == 0) {
		const char *kind = t->libc_kind ? t->libc_kind : "";
		if (t->libc_major < 0 || t->libc_major > 9 || t->libc_minor < 0 ||
		    t->libc_minor > 999)
			return ml_err_set(err, ML_EUNSUPPORTED,
			                  "libc version %d.%d is out of range", t->libc_major,
			                  t->libc_minor);
		int rc = 0;
		if (strcmp(kind, "glibc") == 0) {
			rc = manylinux_platforms(p, arch, t->libc_major, t->libc_minor);
		} else if (strcmp(kind, "musl") == 0) {
			for (int m = t->libc_minor; m >= 0 && t->libc_major > 0 && !rc; m--)
				rc = sv_push(p, ml_asprintf("musllinux_%d_%d_%s", t->libc_major, m,
				                            arch));
		} else if (kind[0]) {
			return ml_err_set(err, ML_EUNSUPPORTED, "no wheel tags for libc '%s'",
			                  kind);
		}
		if (rc || sv_push(p, ml_asprintf("linux_%s", arch)))
			return ML_ENOMEM;
		return 0;
	}
	if (strcmp(t->os, "windows") == 0)
		return sv_push(
		        p, ml_asprintf("win_%s", strcmp(arch, "x86_64") == 0 ? "amd64" : "arm64"));
	if (strcmp(t->os, "darwin") == 0) {
		const char *a = strcmp(arch, "x86_64") == 0 ? "x86_64" : "arm64";
		int maj = t->libc_major, min = t->libc_minor;
		if (maj == 0 && min == 0) {
			maj = strcmp(a, "arm64") == 0 ? 11 : 10;
			min = strcmp(a, "arm64") == 0 ? 0 : 9;
		}
		if (maj < 10 || maj > 99 || min < 0 || min > 99)
			return ml_err_set(err, ML_EUNSUPPORTED,
			                  "macOS version %d.%d is out of range", maj, min);
		return mac_platforms(p, maj, min, a);
	}
	return ml_err_set(err, ML_EUNSUPPORTED, "no wheel tags for os '%s'", t->os);
}

int ml_tags_for(char ***out, size_t *n_out, const ml_tag_target *t, ml_err *err)
{
	strv plat = {0}, tags = {0};
	int rc = 0;
	if (!t || t->py_major != 3 || t->py_minor < 0 || t->py_minor > 99) {
		return ml_err_set(err, ML_EUNSUPPORTED, "no wheel tags for Python %d.%d",
		                  t ? t->py_major : 0, t ? t->py_minor : 0);
	}
	if ((rc = platforms(&plat, t, err))) {
		if (rc == ML_ENOMEM)
			ml_err_set(err, ML_ENOMEM, "out of memory listing wheel tags");
		goto out;
	}
	int minor = t->py_minor;
	char interp[16], abi[16];
	snprintf(interp, sizeof interp, "cp3%d", minor);
	snprintf(abi, sizeof abi, "cp3%d%s", minor, minor < 8 ? "m" : "");
	bool abi3 = minor >= 2;

	/* packaging.tags.cpython_tags() */
	for (size_t k = 0; k < plat.n; k++)
		if ((rc = sv_push(&tags, ml_asprintf("%s-%s-%s", interp, abi, plat.v[k]))))
			goto nomem;
	for (size_t k = 0; abi3 && k < plat.n; k++)
		if ((rc = sv_push(&tags, ml_asprintf("%s-abi3-%s", interp, plat.v[k]))))
			goto nomem;
	for (size_t k = 0; k < plat.n; k++)
		if ((rc = sv_push(&tags, ml_asprintf("%s-none-%s", interp, plat.v[k]))))
			goto nomem;
	for (int m = minor - 1; abi3 && m > 1; m--)
		for (size_t k = 0; k < plat.n; k++)
			if ((rc = sv_push(&tags, ml_asprintf("cp3%d-abi3-%s", m, plat.v[k]))))
				goto nomem;

	/* packaging.tags.compatible_tags(): py3X, py3, py3W... */
	char py[102][16];
	size_t npy = 0;
	snprintf(py[npy++], sizeof py[0], "py3%d", minor);
	snprintf(py[npy++], sizeof py[0], "py3");
	for (int m = minor - 1; m >= 0; m--)
		snprintf(py[npy++], sizeof py[0], "py3%d", m);
	for (size_t v = 0; v < npy; v++)
		for (size_t k = 0; k < plat.n; k++)
			if ((rc = sv_push(&tags, ml_asprintf("%s-none-%s", py[v], plat.v[k]))))
				goto nomem;
	if ((rc = sv_push(&tags, ml_asprintf("%s-none-any", interp))))
		goto nomem;
	for (size_t v = 0; v < npy; v++)
		if ((rc = sv_push(&tags, ml_asprintf("%s-none-any", py[v]))))
			goto nomem;
	*out = tags.v;
	*n_out = tags.n;
	tags.v = NULL;
	tags.n = 0;
	goto out;
nomem:
	rc = ml_err_set(err, ML_ENOMEM, "out of memory listing wheel tags");
out:
	ml_tags_free(plat.v, plat.n);
	ml_tags_free(tags.v, tags.n);
	return rc;
}

/* --- wheel file names ------------------------------------------------------ */

/* Copies s[0..n) into dst (sz bytes), lower-cased when lower; false when
 * it does not fit. */
static bool copy_field(char *dst, size_t sz, const char *s, size_t n, bool lower)
{
	if (n >= sz)
		return false;
	for (size_t k = 0; k < n; k++)
		dst[k] = lower ? (char)tolower((unsigned char)s[k]) : s[k];
	dst[n] = '\0';
	return true;
}

/* A compressed tag set: dot-separated non-empty [A-Za-z0-9_] components. */
static bool tag_set_ok(const char *s, size_t n)
{
	if (n == 0 || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (size_t k = 0; k < n; k++) {
		char c = s[k];
		if (c == '.' && s[k + 1] == '.')
			return false;
		if (!(isalnum((unsigned char)c) || c == '_' || c == '.'))
			return false;
	}
	return true;
}

int ml_wheel_filename_parse(ml_wheel_name *out, const char *filename, ml_err *err)
{
	ml_wheel_name w;
	memset(&w, 0, sizeof w);
	const char *f = filename ? filename : "";
	size_t len = strlen(f);
#define BAD(why) ml_err_set(err, ML_EPARSE, "invalid wheel file name '%.200s': %s", f, why)
	if (len < 4 || strcmp(f + len - 4, ".whl") != 0)
		return BAD("it does not end in .whl");
	if (strchr(f, '/') || strchr(f, '\\'))
		return BAD("it has a directory part");
	len -= 4;
	const char *part[6];
	size_t plen[6], np = 0;
	const char *p = f, *end = f + len;
	while (p <= end) {
		const char *d = memchr(p, '-', (size_t)(end - p));
		if (!d)
			d = end;
		if (np == 6)
			return BAD("it has too many '-'-separated parts");
		part[np] = p;
		plen[np++] = (size_t)(d - p);
		p = d + 1;
	}
	if (np != 5 && np != 6)
		return BAD("expected name-version(-build)-python-abi-platform.whl");
	for (size_t k = 0; k < np; k++)
		if (plen[k] == 0)
			return BAD("it has an empty part");
	for (size_t k = 0; k < plen[0]; k++)
		if (!(isalnum((unsigned char)part[0][k]) || part[0][k] == '_' || part[0][k] == '.'))
			return BAD("invalid project name");
	if (!copy_field(w.name, sizeof w.name, part[0], plen[0], false) ||
	    !copy_field(w.version, sizeof w.version, part[1], plen[1], false))
		return BAD("a part is too long");
	(void)ml_name_normalize(w.normalized, sizeof w.normalized, w.name);
	bool spaced = false;
	for (const char *c = w.version; *c; c++)
		spaced |= isspace((unsigned char)*c) != 0;
	if (spaced || !ml_version_valid(w.version))
		return BAD("invalid version");
	size_t t = 2;
	if (np == 6) {
		if (!isdigit((unsigned char)part[2][0]))
			return BAD("a build tag must start with a digit");
		for (size_t k = 0; k < plen[2]; k++)
			if (!(isalnum((unsigned char)part[2][k]) || part[2][k] == '_' ||
			      part[2][k] == '.'))
				return BAD("invalid build tag");
		if (!copy_field(w.build, sizeof w.build, part[2], plen[2], false))
			return BAD("a part is too long");
		t = 3;
	}
	for (size_t k = t; k < np; k++)
		if (!tag_set_ok(part[k], plen[k]))
			return BAD("invalid compatibility tag");
	if (!copy_field(w.python_tag, sizeof w.python_tag, part[t], plen[t], true) ||
	    !copy_field(w.abi_tag, sizeof w.abi_tag, part[t + 1], plen[t + 1], true) ||
	    !copy_field(w.platform_tag, sizeof w.platform_tag, part[t + 2], plen[t + 2], true))
		return BAD("a part is too long");
#undef BAD
	*out = w;
	return 0;
}

/* Is s[0..n) one of the dot-separated components of set? */
static bool in_set(const char *set, const char *s, size_t n)
{
	for (const char *p = set;;) {
		const char *d = strchr(p, '.');
		size_t len = d ? (size_t)(d - p) : strlen(p);
		if (len == n && memcmp(p, s, n) == 0)
			return true;
		if (!d)
			return false;
		p = d + 1;
	}
}

int ml_wheel_tag_rank(const ml_wheel_name *w, char *const *tags, size_t n)
{
	if (!w || !tags)
		return -1;
	for (size_t k = 0; k < n && k <= (size_t)0x7fffffff; k++) {
		const char *t = tags[k];
		const char *d1 = t ? strchr(t, '-') : NULL;
		const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
		if (!d2)
			continue;
		if (in_set(w->python_tag, t, (size_t)(d1 - t)) &&
		    in_set(w->abi_tag, d1 + 1, (size_t)(d2 - d1 - 1)) &&
		    in_set(w->platform_tag, d2 + 1, strlen(d2 + 1)))
			return (int)k;
	}
	return -1;
}

/* --- PEP 600 ---------------------------------------------------------------- */

/* Reads a decimal number of at most 4 digits at *p. */
static bool small_num(const char **p, int *out)
{
	int v = 0, k = 0;
	while (isdigit((unsigned char)**p) && k < 5) {
		v = v * 10 + (**p - '0');
		(*p)++;
		k++;
	}
	if (k == 0 || k == 5)
		return false;
	*out = v;
	return true;
}

bool ml_manylinux_compatible(const char *platform_tag, int glibc_major, int glibc_minor,
                             const char *arch)
{
	if (!platform_tag || !arch)
		return false;
	const char *want = norm_arch(arch);
	if (!want)
		want = arch; /* another manylinux arch: ppc64le, s390x, i686, ... */
	int maj, min;
	bool legacy_x86_only = false;
	const char *a;
	if (strncmp(platform_tag, "manylinux1_", 11) == 0) {
		maj = 2, min = 5, a = platform_tag + 11, legacy_x86_only = true;
	} else if (strncmp(platform_tag, "manylinux2010_", 14) == 0) {
		maj = 2, min = 12, a = platform_tag + 14, legacy_x86_only = true;
	} else if (strncmp(platform_tag, "manylinux2014_", 14) == 0) {
		maj = 2, min = 17, a = platform_tag + 14;
	} else if (strncmp(platform_tag, "manylinux_", 10) == 0) {
		a = platform_tag + 10;
		if (!small_num(&a, &maj) || *a++ != '_' || !small_num(&a, &min) || *a++ != '_')
			return false;
	} else {
		return false;
	}
	if (strcmp(a, want) != 0)
		return false;
	bool x86 = strcmp(a, "x86_64") == 0 || strcmp(a, "i686") == 0;
	if (legacy_x86_only && !x86)
		return false;
	/* packaging lists nothing older: glibc 2.5 on x86, 2.17 elsewhere */
	int oldest = x86 ? 5 : 17;
	if (maj < 2 || (maj == 2 && min < oldest))
		return false;
	return glibc_major > maj || (glibc_major == maj && glibc_minor >= min);
}
