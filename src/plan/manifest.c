/*
 * manifest.c - opens a manifest (embedded by name, or a file by path),
 * parses it as a hashed requirements file (a shipped one without hashes,
 * the Windows set, is resolved by pip at install), and reads the `# mlsetup:`
 * header that selection needs (torch's SASS/PTX list - else taken from the
 * torch-build table by torch's wheel hashes, src/plan/torch.c - the CUDA version,
 * whose minimum drivers come from the driver table, supported Pythons and
 * platforms) and the `# mlsetup-file:` lines that `mlsetup lock` writes so
 * plans can name wheel files offline.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#include "internal.h"

#define MANIFEST_MAX (16u * 1024 * 1024)

/* Splits a space-separated header value into a new string array. */
static int split_words(char ***out, size_t *n, const char *value)
{
	char *copy = strdup(value);
	if (!copy)
		return ML_ENOMEM;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	int rc = 0;
	for (char *save = NULL, *w = strtok_r(copy, " \t,", &save); w && !rc;
	     w = strtok_r(NULL, " \t,", &save)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			char **p = realloc(*out, cap * sizeof(*p));
			if (!p) {
				rc = ML_ENOMEM;
				break;
			}
			*out = p;
		}
		if (!((*out)[*n] = strdup(w)))
			rc = ML_ENOMEM;
		else
			(*n)++;
	}
	free(copy);
	return rc;
}

static void free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static int header_line(const ml_manifest *mf, const char *key)
{
	for (size_t i = 0; i < mf->reqs->n_meta; i++)
		if (strcmp(mf->reqs->meta[i].key, key) == 0)
			return mf->reqs->meta[i].line;
	return 0;
}

static bool dotted_version(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
			return false;
	return true;
}

/* Reads torch_sass / torch_ptx: architecture names or "none". */
static int read_code(ml_manifest *mf, const char *key, bool want_ptx, ml_err *err)
{
	const char *v = ml_requirements_meta(mf->reqs, key);
	if (!v)
		return 0;
	mf->has_gpu_header = true;
	char **w = NULL;
	size_t n = 0;
	if (split_words(&w, &n, v))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (strcmp(w[i], "none") == 0)
			continue;
		ml_cuda_arch a;
		if (ml_cuda_arch_parse(&a, w[i]) != 0 || a.ptx != want_ptx) {
			rc = ml_err_set(err, ML_EPARSE,
			                "manifest '%s' line %d: '%s' is not a %s architecture name",
			                mf->name, header_line(mf, key), w[i],
			                want_ptx ? "PTX (compute_XY)" : "SASS (sm_XY)");
			ml_err_hint(err, "write %s as space-separated names like %s, or none", key,
			            want_ptx ? "compute_90" : "sm_80 sm_90");
			break;
		}
		ml_cuda_arch *p = realloc(mf->code, (mf->n_code + 1) * sizeof(*p));
		if (!p) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		mf->code = p;
		mf->code[mf->n_code++] = a;
	}
	free_words(w, n);
	return rc;
}

static int check_header(ml_manifest *mf, ml_err *err)
{
	mf->summary = ml_requirements_meta(mf->reqs, "summary");
	mf->torch = ml_requirements_meta(mf->reqs, "torch");
	mf->cuda = ml_requirements_meta(mf->reqs, "cuda");
	/* The minimum drivers are the CUDA toolkit's (drivers.json); a
	 * manifest of the user's own may still name them, and then wins. */
	mf->min_driver_linux = ml_requirements_meta(mf->reqs, "min_driver_linux");
	mf->min_driver_windows = ml_requirements_meta(mf->reqs, "min_driver_windows");
	if (!mf->min_driver_linux)
		mf->min_driver_linux = ml_toolkit_min_driver(mf->cuda, false);
	if (!mf->min_driver_windows)
		mf->min_driver_windows = ml_toolkit_min_driver(mf->cuda, true);
	const char *drivers[] = {"min_driver_linux", "min_driver_windows"};
	for (size_t i = 0; i < 2; i++) {
		const char *v = ml_requirements_meta(mf->reqs, drivers[i]);
		if (v && !dotted_version(v)) {
			ml_err_set(err, ML_EPARSE,
			           "manifest '%s' line %d: %s '%s' is not a driver version",
			           mf->name, header_line(mf, drivers[i]), drivers[i], v);
			ml_err_hint(err, "write it as a dotted driver version, like 535.104.05");
			return ML_EPARSE;
		}
	}
	int rc = read_code(mf, "torch_sass", false, err);
	if (!rc)
		rc = read_code(mf, "torch_ptx", true, err);
	if (!rc)
		rc = ml_manifest_torch_facts(mf, err); /* no header: the torch-build table */
	if (rc)
		return rc;
	const char *py = ml_requirements_meta(mf->reqs, "python");
	if (py && split_words(&mf->pythons, &mf->n_pythons, py))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < mf->n_pythons; i++) {
		int a, b;
		char tail;
		if (sscanf(mf->pythons[i], "%d.%d%c", &a, &b, &tail) != 2) {
			ml_err_set(err, ML_EPARSE,
			           "manifest '%s' line %d: python '%s' is not an X.Y version",
			           mf->name, header_line(mf, "python"), mf->pythons[i]);
			ml_err_hint(err, "list supported versions like: python = 3.11 3.12");
			return ML_EPARSE;
		}
	}
	const char *plat = ml_requirements_meta(mf->reqs, "platforms");
	if (plat && split_words(&mf->platforms, &mf->n_platforms, plat))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < mf->n_platforms; i++) {
		if (!strchr(mf->platforms[i], '-')) {
			ml_err_set(err, ML_EPARSE,
			           "manifest '%s' line %d: platform '%s' is not an os-arch pair",
			           mf->name, header_line(mf, "platforms"), mf->platforms[i]);
			ml_err_hint(err, "list platforms like: platforms = linux-x86_64");
			return ML_EPARSE;
		}
	}
	return 0;
}

/* Collects `# mlsetup-file: <sha256> <size> <filename>` lines. */
static int read_file_lines(ml_manifest *mf, const char *text, size_t len, ml_err *err)
{
	const char *end = text + len;
	int lineno = 0;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		lineno++;
		static const char tag[] = "# mlsetup-file:";
		if (n > sizeof(tag) - 1 && memcmp(line, tag, sizeof(tag) - 1) == 0) {
			char buf[1024], hash[128], fname[512];
			long long size;
			size_t c = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
			memcpy(buf, line, c);
			buf[c] = '\0';
			if (sscanf(buf + sizeof(tag) - 1, "%127s %lld %511s", hash, &size, fname) !=
			            3 ||
			    strlen(hash) != 64 || size < 0) {
				ml_err_set(err, ML_EPARSE,
				           "manifest '%s' line %d: malformed mlsetup-file line",
				           mf->name, lineno);
				ml_err_hint(
				        err,
				        "expected '# mlsetup-file: <sha256> <size> <filename>'; "
				        "regenerate the manifest with mlsetup lock");
				return ML_EPARSE;
			}
			ml_file_info *p = realloc(mf->files, (mf->n_files + 1) * sizeof(*p));
			if (!p)
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			mf->files = p;
			ml_file_info *fi = &mf->files[mf->n_files];
			for (size_t i = 0; i < 65; i++)
				fi->sha256[i] = (char)tolower((unsigned char)hash[i]);
			fi->size = size;
			fi->url = NULL;
			if (!(fi->filename = strdup(fname)))
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			mf->n_files++;
		}
		line = nl ? nl + 1 : end;
	}
	return 0;
}

const ml_file_info *ml_manifest_file(const ml_manifest *mf, const char *sha256)
{
	for (size_t i = 0; i < mf->n_files; i++)
		if (strcmp(mf->files[i].sha256, sha256) == 0)
			return &mf->files[i];
	return NULL;
}

int ml_manifest_set_resolution(ml_manifest *mf, const ml_pip_pick *picks, size_t n, ml_err *err)
{
	ml_requirements *r = mf->reqs;
	ml_requirement *reqs = calloc(n ? n : 1, sizeof(*reqs));
	if (!reqs)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	ml_buf requested = ML_BUF_INIT;
	for (size_t i = 0; i < n && !rc; i++) {
		const ml_pip_pick *p = &picks[i];
		if (!p->sha256[0]) {
			const char *base = strrchr(p->url, '/');
			rc = ml_err_set(
			        err, ML_EINTEGRITY,
			        "pip's resolution of '%s' gives no sha256 for %s %s ('%.200s')",
			        mf->name, p->name, p->version, base ? base + 1 : p->url);
			ml_err_hint(err, "use an index that lists each file's sha256 (PEP 503 "
			                 "#sha256=, PEP 691 hashes), or pin the file with --hash");
			break;
		}
		ml_requirement *q = &reqs[i];
		char norm[256];
		if (ml_name_normalize(norm, sizeof(norm), p->name) != 0)
			ml_strlcpy(norm, p->name, sizeof(norm));
		/* the line of the file's own requirement of that name, else 0 */
		for (size_t k = 0; k < r->n_reqs; k++)
			if (!strcmp(r->reqs[k].normalized, norm))
				q->line = r->reqs[k].line;
		q->name = strdup(p->name);
		q->normalized = strdup(norm);
		q->version = strdup(p->version);
		q->specifier = ml_asprintf("==%s", p->version);
		q->sha256 = calloc(1, sizeof(char *));
		if (!q->name || !q->normalized || !q->version || !q->specifier || !q->sha256 ||
		    !(q->sha256[0] = strdup(p->sha256))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		q->n_hashes = 1;
		const char *slash = strrchr(p->url, '/');
		char fname[512];
		size_t k = 0;
		for (const char *c = slash ? slash + 1 : p->url;
		     *c && *c != '#' && *c != '?' && k < sizeof(fname) - 1; c++) {
			unsigned hi, lo;
			if (*c == '%' && sscanf(c + 1, "%1x%1x", &hi, &lo) == 2) {
				fname[k++] = (char)(hi * 16 + lo);
				c += 2;
			} else {
				fname[k++] = *c;
			}
		}
		fname[k] = '\0';
		char *url = strndup(p->url, strcspn(p->url, "#"));
		if (!url)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		if (!rc)
			rc = ml_manifest_add_file(mf, p->sha256, p->size > 0 ? p->size : -1, fname,
			                          url, err);
		free(url);
		if (!rc && p->requested)
			rc = ml_buf_printf(&requested, "%s%s", requested.len ? " " : "", norm)
			             ? ml_err_set(err, ML_ENOMEM, "out of memory")
			             : 0;
	}
	if (rc) {
		for (size_t i = 0; i < n; i++) {
			free(reqs[i].name);
			free(reqs[i].normalized);
			free(reqs[i].version);
			free(reqs[i].specifier);
			if (reqs[i].sha256)
				free(reqs[i].sha256[0]);
			free(reqs[i].sha256);
		}
		free(reqs);
		ml_buf_release(&requested);
		return rc;
	}
	/* the file's own requirements are replaced by the pins */
	ml_requirements *old = calloc(1, sizeof(*old));
	if (old) {
		old->reqs = r->reqs;
		old->n_reqs = r->n_reqs;
		ml_requirements_free(old);
	}
	r->reqs = reqs;
	r->n_reqs = n;
	if (!ml_requirements_meta(r, "requested")) {
		ml_kv *m = realloc(r->meta, (r->n_meta + 1) * sizeof(*m));
		if (m) {
			r->meta = m;
			m[r->n_meta] = (ml_kv){strdup("requested"),
			                       strdup(requested.data ? requested.data : ""), 0};
			if (m[r->n_meta].key && m[r->n_meta].value)
				r->n_meta++;
		}
	}
	ml_buf_release(&requested);
	mf->resolve = false;
	mf->resolved = true;
	return 0;
}

int ml_manifest_add_file(ml_manifest *mf, const char *sha256, int64_t size, const char *filename,
                         const char *url, ml_err *err)
{
	char hex[65];
	if (ml_sha256_hex_normalize(hex, sha256) != 0)
		return ml_err_set(err, ML_EFAIL, "'%.80s' is not a sha256", sha256);
	ml_file_info *fi = (ml_file_info *)ml_manifest_file(mf, hex);
	if (!fi) {
		ml_file_info *p = realloc(mf->files, (mf->n_files + 1) * sizeof(*p));
		if (!p)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		mf->files = p;
		fi = &mf->files[mf->n_files];
		memset(fi, 0, sizeof(*fi));
		memcpy(fi->sha256, hex, sizeof(fi->sha256));
		fi->size = -1;
		if (!(fi->filename = strdup(filename)))
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		mf->n_files++;
	}
	if (fi->size < 0)
		fi->size = size;
	if (!fi->url && url && !(fi->url = strdup(url)))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return 0;
}

/* --- lock files --------------------------------------------------------------- */

static int add_meta(ml_requirements *r, const char *key, const char *value, int line)
{
	ml_kv *m = realloc(r->meta, (r->n_meta + 1) * sizeof(*m));
	if (!m)
		return ML_ENOMEM;
	r->meta = m;
	m[r->n_meta] = (ml_kv){strdup(key), strdup(value), line};
	r->n_meta++;
	return m[r->n_meta - 1].key && m[r->n_meta - 1].value ? 0 : ML_ENOMEM;
}

/* Space-joined strings of a TOML array (or the string itself). */
static int join_strings(ml_buf *b, const ml_toml *v)
{
	if (v->kind == ML_TOML_STRING)
		return ml_buf_puts(b, v->str);
	for (size_t i = 0; v->kind == ML_TOML_ARRAY && i < v->n; i++)
		if (v->items[i]->kind == ML_TOML_STRING &&
		    ml_buf_printf(b, "%s%s", b->len ? " " : "", v->items[i]->str))
			return ML_ENOMEM;
	return 0;
}

/* The `# mlsetup:` header of a lock mlsetup wrote ([tool.mlsetup.header]
 * and [tool.mlsetup] requested); a lock from another tool has none, and
 * every package counts as requested. */
static int lock_meta(ml_requirements *r, const ml_pylock *pl)
{
	const ml_toml *tool = ml_toml_get(ml_toml_get(pl->doc, "tool"), "mlsetup");
	const ml_toml *hdr = ml_toml_get(tool, "header");
	for (size_t i = 0; hdr && hdr->kind == ML_TOML_TABLE && i < hdr->n; i++) {
		if (!strcmp(hdr->keys[i], "requested"))
			continue;
		ml_buf b = ML_BUF_INIT;
		int rc = join_strings(&b, hdr->items[i]);
		if (!rc && b.len)
			rc = add_meta(r, hdr->keys[i], ml_buf_cstr(&b), hdr->items[i]->line);
		ml_buf_release(&b);
		if (rc)
			return rc;
	}
	ml_buf req = ML_BUF_INIT;
	const ml_toml *rq = ml_toml_get(tool, "requested");
	int rc = 0;
	if (rq)
		rc = join_strings(&req, rq);
	for (size_t i = 0; !rc && !rq && i < pl->n_pkgs; i++)
		rc = ml_buf_printf(&req, "%s%s", i ? " " : "", pl->pkgs[i].normalized);
	if (!rc)
		rc = add_meta(r, "requested", ml_buf_cstr(&req), rq ? rq->line : 1);
	ml_buf_release(&req);
	return rc;
}

/* Turns a lock into the manifest's requirements (one `name==version` per
 * package, with the sha256 of each of its wheels and its marker) and
 * recorded files (every wheel, with its URL). */
static int from_lock(ml_manifest *mf, ml_pylock *pl, ml_err *err)
{
	mf->lock = pl;
	mf->requires_python = pl->requires_python;
	mf->environments = pl->environments;
	mf->n_environments = pl->n_environments;
	ml_requirements *r = calloc(1, sizeof(*r));
	if (!r)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	mf->reqs = r;
	if (!(r->path = strdup(mf->name)) ||
	    (pl->n_pkgs && !(r->reqs = calloc(pl->n_pkgs, sizeof(*r->reqs)))) || lock_meta(r, pl))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		const ml_pylock_package *p = &pl->pkgs[i];
		ml_requirement *q = &r->reqs[r->n_reqs++];
		q->line = p->line;
		q->name = strdup(p->name);
		q->normalized = strdup(p->normalized);
		q->version = p->version ? strdup(p->version) : NULL;
		q->specifier = p->version ? ml_asprintf("==%s", p->version) : strdup("");
		q->marker = p->marker ? strdup(p->marker) : NULL;
		if (!q->name || !q->normalized || !q->specifier || (p->version && !q->version) ||
		    (p->marker && !q->marker) ||
		    (p->n_wheels && !(q->sha256 = calloc(p->n_wheels, sizeof(char *)))))
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		for (size_t w = 0; w < p->n_wheels; w++) {
			const ml_pylock_wheel *wh = &p->wheels[w];
			bool dup = false;
			for (size_t k = 0; k < q->n_hashes && !dup; k++)
				dup = !strcmp(q->sha256[k], wh->sha256);
			if (!dup && !(q->sha256[q->n_hashes++] = strdup(wh->sha256)))
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			int rc = ml_manifest_add_file(mf, wh->sha256, wh->size, wh->filename,
			                              wh->url, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Reads a lock file at path into mf. */
static int open_lock(ml_manifest *mf, const char *path, const char *text, size_t len, ml_err *err)
{
	char dir[4096];
	const char *base = NULL;
	if (ml_fs_split_path(dir, sizeof(dir), &base, path) != 0)
		ml_strlcpy(dir, ".", sizeof(dir));
	if (!dir[0])
		ml_strlcpy(dir, ".", sizeof(dir));
	char absdir[4096];
	if (!realpath(dir, absdir))
		ml_strlcpy(absdir, dir, sizeof(absdir));
	ml_pylock *pl = NULL;
	int rc = ml_pylock_parse(&pl, path, absdir, text, len, err);
	if (rc)
		return rc;
	rc = from_lock(mf, pl, err);
	if (!rc)
		rc = check_header(mf, err);
	return rc;
}

/* pip's boolean words for PIP_REQUIRE_HASHES. */
static bool env_true(const char *name)
{
	const char *v = getenv(name);
	if (!v)
		return false;
	static const char *const yes[] = {"1", "true", "yes", "on", "y"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(v, yes[i]))
			return true;
	return false;
}

/* Reads a user's requirements file: hash mode when it pins hashes (or
 * hashes are required), else with its includes, to be resolved. */
static int open_requirements(ml_manifest *mf, const char *path, const char *data, size_t size,
                             unsigned flags, ml_err *err)
{
	ml_requirements *probe = NULL;
	int rc = ml_requirements_parse(&probe, mf->name, data, size, ML_REQ_INCLUDES, err);
	if (rc)
		return rc;
	bool hashed = (flags & ML_MANIFEST_REQUIRE_HASHES) || env_true("PIP_REQUIRE_HASHES") ||
	              probe->require_hashes;
	for (size_t i = 0; !hashed && i < probe->n_reqs; i++)
		hashed = probe->reqs[i].n_hashes > 0;
	ml_requirements_free(probe);
	if (hashed) {
		rc = ml_requirements_parse(&mf->reqs, mf->name, data, size, ML_REQ_HASH_MODE, err);
		if (rc && (flags & ML_MANIFEST_REQUIRE_HASHES))
			ml_err_hint(err,
			            "--require-hashes asks every requirement to be pinned with == "
			            "and hashed (mlsetup lock writes such a file); without it the "
			            "file is resolved with pip");
		else if (rc && env_true("PIP_REQUIRE_HASHES"))
			ml_err_hint(err,
			            "PIP_REQUIRE_HASHES asks every requirement to be pinned and "
			            "hashed; unset it to have the file resolved with pip");
	} else {
		rc = ml_requirements_load_tree(&mf->reqs, path, 0, err);
		mf->resolve = true;
	}
	if (!rc)
		rc = check_header(mf, err);
	if (!rc && hashed)
		rc = read_file_lines(mf, data, size, err);
	return rc;
}

/* A shipped manifest: hash mode, as `mlsetup lock` writes them, unless it
 * pins no hashes at all (the Windows set, whose torch builds could not be
 * fetched where the manifests are made): then pip resolves it at install,
 * and install locks what pip chose. */
static int open_embedded(ml_manifest *mf, const char *data, size_t size, unsigned flags,
                         ml_err *err)
{
	ml_requirements *probe = NULL;
	int rc = ml_requirements_parse(&probe, mf->name, data, size, 0, err);
	if (rc)
		return rc;
	bool hashed = probe->require_hashes;
	for (size_t i = 0; !hashed && i < probe->n_reqs; i++)
		hashed = probe->reqs[i].n_hashes > 0;
	if (!hashed && (flags & ML_MANIFEST_REQUIRE_HASHES)) {
		ml_requirements_free(probe);
		ml_err_set(err, ML_EPARSE,
		           "the shipped manifest '%s' (%s) pins versions without hashes: it is "
		           "resolved and locked at first install, and --require-hashes refuses "
		           "that",
		           mf->name, mf->embedded_name);
		ml_err_hint(err, "install once without --require-hashes, then install with "
		                 "--manifest <environment>/pylock.toml, which pins every hash");
		return ML_EPARSE;
	}
	if (hashed) {
		ml_requirements_free(probe);
		rc = ml_requirements_parse(&mf->reqs, mf->name, data, size, ML_REQ_HASH_MODE, err);
	} else {
		mf->reqs = probe;
		mf->resolve = true;
	}
	if (!rc)
		rc = check_header(mf, err);
	if (!rc && hashed)
		rc = read_file_lines(mf, data, size, err);
	return rc;
}

const char *ml_plan_build_os(void)
{
#if defined(_WIN32)
	return "windows";
#elif defined(__APPLE__)
	return "darwin";
#else
	return "linux";
#endif
}

/* The shipped manifest called name for os: "<os>/<name>" when the build
 * ships a set for that OS, else name itself (the default set). */
static const ml_embedded_file *find_shipped(const char *name, const char *os)
{
	size_t ol = os ? strlen(os) : 0;
	bool own_set = false;
	for (const ml_embedded_file *f = ml_embedded_files; ol && f->name && !own_set; f++)
		own_set = strncmp(f->name, os, ol) == 0 && f->name[ol] == '/';
	if (!own_set)
		return ml_embedded_find(name);
	char key[320];
	if (snprintf(key, sizeof(key), "%s/%s", os, name) >= (int)sizeof(key))
		return NULL;
	return ml_embedded_find(key);
}

int ml_manifest_open(ml_manifest **out, const char *name_or_path, ml_err *err)
{
	return ml_manifest_open_os(out, name_or_path, ml_plan_build_os(), 0, err);
}

int ml_manifest_open_os(ml_manifest **out, const char *name_or_path, const char *os,
                        unsigned flags, ml_err *err)
{
	const ml_embedded_file *emb = NULL;
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	bool is_path = strchr(name_or_path, '/') || stat(name_or_path, &st) == 0;
	if (!is_path) {
		char with_txt[256];
		emb = find_shipped(name_or_path, os);
		if (!emb && snprintf(with_txt, sizeof(with_txt), "%s.txt", name_or_path) <
		                    (int)sizeof(with_txt))
			emb = find_shipped(with_txt, os);
		if (!emb || !strstr(emb->name, ".txt")) {
			ml_err_set(err, ML_ENOENT, "no manifest named '%s'", name_or_path);
			ml_err_hint(err, "use requirements.txt or requirements_blackwell.txt, or a "
			                 "path to a manifest file");
			return ML_ENOENT;
		}
	} else {
		int rc = ml_os_read_file(&text, &len, NULL, name_or_path, MANIFEST_MAX, err);
		if (rc) {
			ml_err_hint(err, "check the --manifest path");
			return rc;
		}
	}
	ml_manifest *mf = calloc(1, sizeof(*mf));
	int rc = ML_ENOMEM;
	/* a shipped manifest's name is its base name on every OS */
	const char *slash = emb ? strrchr(emb->name, '/') : NULL;
	if (!mf || !(mf->name = strdup(slash ? slash + 1 : emb ? emb->name : name_or_path))) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto fail;
	}
	mf->embedded = emb != NULL;
	mf->embedded_name = emb ? emb->name : NULL;
	const char *data = emb ? emb->data : text;
	size_t size = emb ? emb->size : len;
	if (!emb && ml_pylock_path_like(name_or_path)) {
		if ((rc = open_lock(mf, name_or_path, data, size, err)) != 0)
			goto fail;
		free(text);
		*out = mf;
		return 0;
	}
	if (emb) {
		rc = open_embedded(mf, data, size, flags, err);
	} else {
		rc = open_requirements(mf, name_or_path, data, size, flags, err);
	}
	if (rc)
		goto fail;
	free(text);
	*out = mf;
	return 0;
fail:
	free(text);
	ml_manifest_free(mf);
	return rc;
}

void ml_manifest_free(ml_manifest *mf)
{
	if (!mf)
		return;
	ml_requirements_free(mf->reqs);
	free(mf->code);
	free_words(mf->pythons, mf->n_pythons);
	free_words(mf->platforms, mf->n_platforms);
	for (size_t i = 0; i < mf->n_files; i++) {
		free(mf->files[i].filename);
		free(mf->files[i].url);
	}
	free(mf->files);
	ml_pylock_free(mf->lock);
	free(mf->torch_build);
	free(mf->torch_label);
	free(mf->name);
	free(mf);
}
