/*
 * manifest.c - opens a manifest (embedded by name, or a file by path),
 * parses it as a hashed requirements file, and reads the `# mlsetup:`
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
#include <sys/stat.h>

#include "mlsetup/plan.h"

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

int ml_manifest_open(ml_manifest **out, const char *name_or_path, ml_err *err)
{
	const ml_embedded_file *emb = NULL;
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	bool is_path = strchr(name_or_path, '/') || stat(name_or_path, &st) == 0;
	if (!is_path) {
		char with_txt[256];
		emb = ml_embedded_find(name_or_path);
		if (!emb && snprintf(with_txt, sizeof(with_txt), "%s.txt", name_or_path) <
		                    (int)sizeof(with_txt))
			emb = ml_embedded_find(with_txt);
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
	if (!mf || !(mf->name = strdup(emb ? emb->name : name_or_path))) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto fail;
	}
	mf->embedded = emb != NULL;
	const char *data = emb ? emb->data : text;
	size_t size = emb ? emb->size : len;
	rc = ml_requirements_parse(&mf->reqs, mf->name, data, size, ML_REQ_HASH_MODE, err);
	if (!rc)
		rc = check_header(mf, err);
	if (!rc)
		rc = read_file_lines(mf, data, size, err);
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
	for (size_t i = 0; i < mf->n_files; i++)
		free(mf->files[i].filename);
	free(mf->files);
	free(mf->name);
	free(mf);
}
