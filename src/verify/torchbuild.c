/*
 * torchbuild.c - a torch wheel -> its build: which CUDA code torch's own
 * CUDA library carries (libtorch_cuda.so, torch_cuda.dll: what
 * torch.cuda.get_arch_list() reports; the nvidia-*
 * wheels' libraries are not torch's), which CUDA toolkit it was built with
 * (torch/version.py's `cuda`, else the METADATA's Requires-Dist), its
 * version, local label, build tag and platform (METADATA, the PEP 427 file
 * name, WHEEL), which of its other libraries miss GPUs torch runs on, and
 * the torch-build table's entry with the wheel's sha256.
 *
 * audit.c reads the wheel once and hands over the metadata members it kept
 * and the libraries it audited; nothing here opens the archive again, and
 * nothing here calls the audit: ml_torch_build_from_wheel(), which runs
 * one on a single wheel, lives in audit.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- which members matter ------------------------------------------------------ */

/* Is the dist-info directory that starts name (up to "/") torch's:
 * "torch-2.8.0.dist-info", "torch-2.8.0+cu128.dist-info"? */
static bool torch_dist_info(const char *name, const char **rest)
{
	const char *slash = strchr(name, '/');
	static const char suffix[] = ".dist-info";
	size_t n = slash ? (size_t)(slash - name) : 0, m = sizeof suffix - 1;
	if (!slash || n <= m || memcmp(slash - m, suffix, m) != 0)
		return false;
	const char *dash = memchr(name, '-', n);
	char dist[64];
	if (!dash || (size_t)(dash - name) >= sizeof dist)
		return false;
	memcpy(dist, name, (size_t)(dash - name));
	dist[dash - name] = '\0';
	char norm[64];
	if (ml_name_normalize(norm, sizeof norm, dist) != 0 || strcmp(norm, "torch") != 0)
		return false;
	*rest = slash + 1;
	return true;
}

char **ml_wheel_meta_slot(ml_wheel_meta *m, const char *name)
{
	const char *rest;
	if (strcmp(name, "torch/version.py") == 0)
		return &m->version_py;
	if (torch_dist_info(name, &rest)) {
		if (strcmp(rest, "METADATA") == 0)
			return &m->metadata;
		if (strcmp(rest, "WHEEL") == 0)
			return &m->wheel;
	}
	return NULL;
}

void ml_wheel_meta_release(ml_wheel_meta *m)
{
	free(m->version_py);
	free(m->metadata);
	free(m->wheel);
	*m = (ml_wheel_meta){NULL, NULL, NULL};
}

/* --- small text readers -------------------------------------------------------- */

/* Calls fn(line, len, arg) for each line of text; stops when fn returns
 * false. */
static void each_line(const char *text, bool (*fn)(const char *, size_t, void *), void *arg)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && p[len - 1] == '\r')
			len--;
		if (!fn(p, len, arg))
			return;
		p = nl ? nl + 1 : NULL;
	}
}

/* A Python assignment `key = 'value'`, `key: Optional[str] = "value"` or
 * `key = None` in torch/version.py (as torch's setup writes it). */
struct py_assign {
	const char *key;
	char *out;
	size_t sz;
	bool found, none;
};

static bool py_assign_line(const char *line, size_t len, void *arg)
{
	struct py_assign *a = arg;
	size_t k = strlen(a->key);
	if (len <= k || memcmp(line, a->key, k) != 0)
		return true;
	size_t j = k;
	while (j < len && line[j] == ' ')
		j++;
	if (j == len || (line[j] != '=' && line[j] != ':')) /* `key =` or `key: T =` */
		return true;
	const char *eq = memchr(line + j, '=', len - j);
	if (!eq)
		return true;
	const char *v = eq + 1, *end = line + len;
	while (v < end && *v == ' ')
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if ((size_t)(end - v) == 4 && memcmp(v, "None", 4) == 0) {
		a->found = a->none = true;
		a->out[0] = '\0';
		return false;
	}
	if (end - v >= 2 && (*v == '\'' || *v == '"') && end[-1] == *v) {
		size_t n = (size_t)(end - v - 2);
		if (n >= a->sz)
			n = a->sz - 1;
		memcpy(a->out, v + 1, n);
		a->out[n] = '\0';
		a->found = true;
		a->none = false;
		return false;
	}
	return true;
}

/* Reads key from version.py into out; returns true when assigned (a
 * string, or None: out "" and *none true). */
static bool py_value(const char *text, const char *key, char *out, size_t sz, bool *none)
{
	struct py_assign a = {key, out, sz, false, false};
	out[0] = '\0';
	if (text)
		each_line(text, py_assign_line, &a);
	if (none)
		*none = a.none;
	return a.found;
}

/* A header `Key: value` of METADATA or WHEEL (RFC 822 style; the headers
 * end at the first empty line). */
struct header {
	const char *key;
	char *out;
	size_t sz;
	bool found;
};

static bool header_line(const char *line, size_t len, void *arg)
{
	struct header *h = arg;
	size_t k = strlen(h->key);
	if (len == 0)
		return false; /* the body starts */
	if (len > k && strncasecmp(line, h->key, k) == 0 && line[k] == ':') {
		const char *v = line + k + 1;
		while (v < line + len && *v == ' ')
			v++;
		size_t n = (size_t)(line + len - v);
		if (n >= h->sz)
			n = h->sz - 1;
		memcpy(h->out, v, n);
		h->out[n] = '\0';
		h->found = true;
		return false;
	}
	return true;
}

static bool header_value(const char *text, const char *key, char *out, size_t sz)
{
	struct header h = {key, out, sz, false};
	out[0] = '\0';
	if (text)
		each_line(text, header_line, &h);
	return h.found;
}

/* The CUDA version METADATA's Requires-Dist implies: "cuda-toolkit[...]==
 * 13.0.2" gives 13.0 (what torch >= 2.11 pins); the nvidia-*-cuXX names
 * give only the major (torch <= 2.10). */
struct cuda_deps {
	char cuda[16];
	char source[128];
	bool exact;
};

static bool requires_line(const char *line, size_t len, void *arg)
{
	struct cuda_deps *d = arg;
	static const char key[] = "Requires-Dist:";
	if (len == 0)
		return false;
	if (len <= sizeof key - 1 || strncasecmp(line, key, sizeof key - 1) != 0)
		return true;
	const char *p = line + sizeof key - 1, *end = line + len;
	while (p < end && *p == ' ')
		p++;
	char name[96], norm[96];
	size_t n = 0;
	while (p + n < end && n < sizeof name - 1 &&
	       (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_' || p[n] == '.'))
		n++;
	memcpy(name, p, n);
	name[n] = '\0';
	if (ml_name_normalize(norm, sizeof norm, name) != 0)
		return true;
	if (strcmp(norm, "cuda-toolkit") == 0 && !d->exact) {
		const char *eq = NULL;
		for (const char *q = p + n; q + 1 < end && !eq; q++)
			if (q[0] == '=' && q[1] == '=')
				eq = q + 2;
		int major, minor;
		if (eq && eq < end && isdigit((unsigned char)*eq) &&
		    sscanf(eq, "%3d.%3d", &major, &minor) == 2 && major > 0 && major < 1000 &&
		    minor >= 0 && minor < 1000) {
			snprintf(d->cuda, sizeof d->cuda, "%d.%d", major, minor);
			char pin[32];
			size_t k = 0;
			while (eq + k < end && k < sizeof pin - 1 &&
			       (isdigit((unsigned char)eq[k]) || eq[k] == '.'))
				k++;
			snprintf(d->source, sizeof d->source, "METADATA: cuda-toolkit==%.*s",
			         (int)k, eq);
			d->exact = true;
		}
		return true;
	}
	size_t l = strlen(norm);
	const char *cu = l > 4 ? strstr(norm + l - 5, "-cu") : NULL;
	if (!d->cuda[0] && strncmp(norm, "nvidia-", 7) == 0 && cu &&
	    isdigit((unsigned char)cu[3])) {
		int major = atoi(cu + 3) % 1000;
		if (major > 0 && major < 1000) {
			snprintf(d->cuda, sizeof d->cuda, "%d", major);
			snprintf(d->source, sizeof d->source,
			         "METADATA: nvidia-*-cu%d (major only)", major);
		}
	}
	return true;
}

/* --- platforms ----------------------------------------------------------------- */

/* "manylinux_2_28_x86_64.manylinux2014_x86_64" -> "linux-x86_64",
 * "win_amd64" -> "windows-x86_64", "macosx_11_0_arm64" ->
 * "darwin-aarch64", "any" -> "any"; "" when unknown. */
static void platform_of(char *dst, size_t sz, const char *tag)
{
	char first[128];
	size_t n = strcspn(tag, ".");
	snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : 0), tag);
	const char *os = strstr(first, "linux")             ? "linux"
	                 : strncmp(first, "win", 3) == 0    ? "windows"
	                 : strncmp(first, "macosx", 6) == 0 ? "darwin"
	                                                    : NULL;
	size_t l = strlen(first);
#define ENDS(s) (l >= sizeof(s) - 1 && strcmp(first + l - (sizeof(s) - 1), s) == 0)
	const char *arch = ENDS("x86_64") || ENDS("amd64")           ? "x86_64"
	                   : ENDS("aarch64") || ENDS("arm64")        ? "aarch64"
	                   : ENDS("universal2") || ENDS("universal") ? "universal"
	                                                             : NULL;
#undef ENDS
	if (strcmp(first, "any") == 0)
		snprintf(dst, sz, "any");
	else if (os && arch)
		snprintf(dst, sz, "%s-%s", os, arch);
	else
		dst[0] = '\0';
}

/* --- code ---------------------------------------------------------------------- */

static bool same_arch(const ml_cuda_arch *a, const ml_cuda_arch *b)
{
	return a->major == b->major && a->minor == b->minor && a->variant == b->variant &&
	       a->ptx == b->ptx;
}

static int cmp_arch(const void *x, const void *y)
{
	const ml_cuda_arch *a = x, *b = y;
	if (a->major != b->major)
		return a->major - b->major;
	if (a->minor != b->minor)
		return a->minor - b->minor;
	return (int)(unsigned char)a->variant - (int)(unsigned char)b->variant;
}

static void add_arch(ml_cuda_arch *v, size_t *n, const ml_cuda_arch *a)
{
	for (size_t i = 0; i < *n; i++)
		if (same_arch(&v[i], a))
			return;
	if (*n < ML_TORCH_MAX_CODE)
		v[(*n)++] = *a;
}

/* What counts of a library's code (as the audit answers with it): SASS
 * and PTX architectures holding kernels, executable and embedded. */
static void add_counted(ml_torch_build *b, const ml_fatbin_list *c)
{
	for (size_t i = 0; i < c->n_with_kernels; i++)
		add_arch(b->sass, &b->n_sass, &c->with_kernels[i]);
	for (size_t i = 0; i < c->n_ptx_with_entries; i++)
		add_arch(b->ptx, &b->n_ptx, &c->ptx_with_entries[i]);
	qsort(b->sass, b->n_sass, sizeof *b->sass, cmp_arch);
	qsort(b->ptx, b->n_ptx, sizeof *b->ptx, cmp_arch);
}

/* The counted code of a library as one list (SASS, then PTX) in
 * code[CODE_MAX]; returns how many. */
enum { CODE_MAX = 2 * ML_TORCH_MAX_CODE };
static size_t counted_code(ml_cuda_arch *code, const ml_fatbin_list *c)
{
	ml_torch_build lib = {0};
	add_counted(&lib, c);
	size_t n = 0;
	for (size_t k = 0; k < lib.n_sass; k++)
		code[n++] = lib.sass[k];
	for (size_t k = 0; k < lib.n_ptx; k++)
		code[n++] = lib.ptx[k];
	return n;
}

static bool same_code(const ml_cuda_arch *a, const ml_cuda_arch *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].major != b[i].major || a[i].minor != b[i].minor ||
		    a[i].variant != b[i].variant || a[i].ptx != b[i].ptx)
			return false;
	return true;
}

/* Whether a table entry says what the wheel itself says: the same CUDA
 * version and the same SASS and PTX (the PTX ISA aside: the table keeps
 * names only). */
static bool same_build(const ml_torch_build *a, const ml_torch_build *b)
{
	return strcmp(a->cuda, b->cuda) == 0 && a->n_sass == b->n_sass && a->n_ptx == b->n_ptx &&
	       same_code(a->sass, b->sass, a->n_sass) && same_code(a->ptx, b->ptx, a->n_ptx);
}

/* The member part of "w.whl!torch/lib/x.so". */
static const char *member_of(const char *path)
{
	const char *bang = strrchr(path, '!');
	return bang ? bang + 1 : path;
}

static bool is_torch_cuda_library(const char *member)
{
	const char *slash = strrchr(member, '/');
	const char *base = slash ? slash + 1 : member;
	return strcmp(base, "libtorch_cuda.so") == 0 || strcasecmp(base, "torch_cuda.dll") == 0;
}

/* Records the libraries other than torch's own CUDA library that cannot
 * run on some device the build's code runs on. Returns 0 or ML_ENOMEM. */
static int find_gaps(ml_torch_wheel *w, const ml_audit *a, size_t first, size_t main_lib)
{
	ml_cuda_arch devices[2 * ML_TORCH_MAX_CODE];
	size_t n_dev = 0;
	const ml_cuda_arch *lists[] = {w->build.sass, w->build.ptx};
	size_t counts[] = {w->build.n_sass, w->build.n_ptx};
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			ml_cuda_arch d = {lists[l][i].major, lists[l][i].minor, 0, false, 0};
			bool dup = false;
			for (size_t k = 0; k < n_dev && !dup; k++)
				dup = same_arch(&devices[k], &d);
			if (!dup)
				devices[n_dev++] = d;
		}
	qsort(devices, n_dev, sizeof *devices, cmp_arch);
	for (size_t i = first; i < a->n_files; i++) {
		const ml_audit_file *f = &a->files[i];
		if (i == main_lib || !f->has_code || f->unverified)
			continue;
		ml_cuda_arch code[CODE_MAX];
		size_t n = counted_code(code, &f->code);
		ml_torch_gap gap = {.n_missing = 0};
		for (size_t d = 0; d < n_dev; d++)
			if (!ml_arch_runs_on(code, n, devices[d].major, devices[d].minor, NULL,
			                     0) &&
			    gap.n_missing < ML_TORCH_MAX_CODE)
				gap.missing[gap.n_missing++] = devices[d];
		if (!gap.n_missing)
			continue;
		ml_strlcpy(gap.library, member_of(f->path), sizeof gap.library);
		ml_torch_gap *g = realloc(w->gaps, (w->n_gaps + 1) * sizeof *g);
		if (!g)
			return ML_ENOMEM;
		w->gaps = g;
		w->gaps[w->n_gaps++] = gap;
	}
	return 0;
}

/* --- the build ------------------------------------------------------------------ */

static void name_facts(ml_torch_build *b, const char *path, const ml_wheel_meta *m)
{
	const char *slash = strrchr(path, '/');
	ml_wheel_name wn;
	ml_err e = ML_ERR_INIT;
	bool named = ml_wheel_filename_parse(&wn, slash ? slash + 1 : path, &e) == 0 &&
	             strcmp(wn.normalized, "torch") == 0;
	char version[128] = "", tag[256] = "";
	if (!header_value(m->metadata, "Version", version, sizeof version) && named)
		ml_strlcpy(version, wn.version, sizeof version);
	char *plus = strchr(version, '+');
	if (plus) {
		*plus = '\0';
		ml_strlcpy(b->local, plus + 1, sizeof b->local);
	}
	ml_strlcpy(b->version, version, sizeof b->version);
	if (named)
		ml_strlcpy(b->build_tag, wn.build, sizeof b->build_tag);
	else
		header_value(m->wheel, "Build", b->build_tag, sizeof b->build_tag);
	if (named) {
		platform_of(b->platform, sizeof b->platform, wn.platform_tag);
	} else if (header_value(m->wheel, "Tag", tag, sizeof tag)) {
		char *last = strrchr(tag, '-'); /* cp311-cp311-linux_x86_64 */
		platform_of(b->platform, sizeof b->platform, last ? last + 1 : tag);
	}
}

/* "12.8", "13": digits, separated by single dots. */
static bool dotted(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
			return false;
	return true;
}

static void cuda_facts(ml_torch_wheel *w, const ml_wheel_meta *m)
{
	bool none = false;
	py_value(m->version_py, "__version__", w->torch_version, sizeof w->torch_version, NULL);
	py_value(m->version_py, "hip", w->hip, sizeof w->hip, NULL);
	if (py_value(m->version_py, "cuda", w->build.cuda, sizeof w->build.cuda, &none)) {
		if (none)
			return; /* a CPU-only (or ROCm) build */
		if (dotted(w->build.cuda)) {
			snprintf(w->cuda_source, sizeof w->cuda_source, "torch/version.py");
			return;
		}
		w->build.cuda[0] = '\0'; /* not a CUDA version: ask METADATA */
	}
	struct cuda_deps d = {"", "", false};
	if (m->metadata)
		each_line(m->metadata, requires_line, &d);
	ml_strlcpy(w->build.cuda, d.cuda, sizeof w->build.cuda);
	ml_strlcpy(w->cuda_source, d.source, sizeof w->cuda_source);
}

int ml_torch_wheel_add(ml_audit *a, const char *path, const ml_wheel_meta *m, size_t first_file,
                       ml_err *err)
{
	if (!m->version_py && !m->metadata)
		return 0; /* not torch's */
	ml_torch_wheel w;
	memset(&w, 0, sizeof w);
	if (!(w.path = strdup(path)))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	name_facts(&w.build, path, m);
	cuda_facts(&w, m);
	ml_torch_backend(w.build.backend, sizeof w.build.backend, w.build.local, w.build.cuda);
	size_t main_lib = SIZE_MAX;
	for (size_t i = first_file; i < a->n_files && main_lib == SIZE_MAX; i++)
		if (a->files[i].has_code && is_torch_cuda_library(member_of(a->files[i].path)))
			main_lib = i;
	if (main_lib != SIZE_MAX) {
		ml_strlcpy(w.library, member_of(a->files[main_lib].path), sizeof w.library);
		add_counted(&w.build, &a->files[main_lib].code);
	} else {
		for (size_t i = first_file; i < a->n_files; i++)
			if (a->files[i].has_code)
				add_counted(&w.build, &a->files[i].code);
	}
	if (find_gaps(&w, a, first_file, main_lib)) {
		ml_torch_wheel_release(&w);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	ml_err e = ML_ERR_INIT;
	if (ml_sha256_file(w.sha256, NULL, path, &e) != 0)
		w.sha256[0] = '\0';
	else
		w.known = ml_torch_build_lookup(w.sha256);
	w.known_agrees = w.known && same_build(&w.build, w.known);
	ml_torch_wheel *grown = realloc(a->torch, (a->n_torch + 1) * sizeof *grown);
	if (!grown) {
		ml_torch_wheel_release(&w);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	a->torch = grown;
	a->torch[a->n_torch++] = w;
	return 0;
}

void ml_torch_wheel_release(ml_torch_wheel *w)
{
	free(w->path);
	free(w->gaps);
	w->path = NULL;
	w->gaps = NULL;
	w->n_gaps = 0;
}

/* --- torch's own judgement of its library ------------------------------------------ */

/* "13.2" -> 13020; 0 when not such a version. */
static int cuda_number(const char *v)
{
	int major = 0, minor = 0;
	if (!v || sscanf(v, "%d.%d", &major, &minor) != 2 || major < 1 || minor < 0 || minor > 9)
		return 0;
	return major * 1000 + minor * 10;
}

/* The CUDA version of the torch whose library is at path: the audited
 * wheel's (path "w.whl!torch/lib/libtorch_cuda.so"), else torch/version.py
 * beside the library's directory in an environment. 0 when unknown. */
static int torch_cuda_of(const ml_audit *a, const char *path)
{
	const char *bang = strrchr(path, '!');
	if (bang) {
		size_t n = (size_t)(bang - path);
		for (size_t t = 0; t < a->n_torch; t++)
			if (strlen(a->torch[t].path) == n && memcmp(a->torch[t].path, path, n) == 0)
				return cuda_number(a->torch[t].build.cuda);
		return 0;
	}
	const char *lib = strstr(path, "/lib/");
	const char *last = lib;
	while (lib && (lib = strstr(lib + 1, "/lib/")) != NULL)
		last = lib;
	if (!last)
		return 0;
	char *py = ml_asprintf("%.*s/version.py", (int)(last - path), path);
	char *text = NULL;
	size_t len = 0;
	int cuda = 0;
	char v[32];
	bool none = false;
	if (py && ml_os_read_file(&text, &len, NULL, py, ML_WHEEL_META_MAX, NULL) == 0 &&
	    py_value(text, "cuda", v, sizeof v, &none) && !none)
		cuda = cuda_number(v);
	free(text);
	free(py);
	return cuda;
}

int ml_torch_checks(ml_audit *a, ml_err *err)
{
	for (size_t i = 0; i < a->n_files; i++) {
		ml_audit_file *f = &a->files[i];
		if (!f->has_code || f->unverified || !is_torch_cuda_library(member_of(f->path)))
			continue;
		ml_cuda_arch code[CODE_MAX];
		size_t n = counted_code(code, &f->code);
		ml_arch_query q = ML_ARCH_QUERY_INIT;
		q.rules = ML_ARCH_TORCH;
		q.torch_cuda = torch_cuda_of(a, f->path);
		for (size_t d = 0; d < a->n_devices; d++) {
			ml_arch_verdict v;
			q.dev_major = a->devices[d].major;
			q.dev_minor = a->devices[d].minor;
			ml_audit_answer *ans = &f->answers[d];
			ans->torch_checked = true;
			ans->torch_runs = ml_arch_judge(&v, code, n, &q);
			ml_strlcpy(ans->torch_why, v.why, sizeof ans->torch_why);
		}
	}
	(void)err;
	return 0;
}
