/*
 * pylock.c - reads PEP 751 lock files (pylock.toml, lock-version 1.x) as
 * pip lock, uv export and mlsetup itself write them: the packages, each
 * with its version, marker and wheels (file name, URL or path, size,
 * sha256), the lock's requires-python and environments, and the whole
 * document for the [tool] tables. Nothing here fetches: the manifest
 * (src/plan/manifest.c) turns a lock into requirements and recorded
 * files, and the plan picks each package's wheel from those as for any
 * manifest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int fail_at(ml_err *err, const char *path, int line, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static int fail_at(ml_err *err, const char *path, int line, const char *hint, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ml_err_set(err, ML_EPARSE, "lock file '%.300s' line %d: %s", path, line, msg);
	ml_err_hint(err, "%s", hint ? hint : "see PEP 751 for the format of pylock.toml");
	return ML_EPARSE;
}

static int oom(ml_err *err)
{
	return ml_err_set(err, ML_ENOMEM, "out of memory reading a lock file");
}

void ml_pylock_free(ml_pylock *pl)
{
	if (!pl)
		return;
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		ml_pylock_package *p = &pl->pkgs[i];
		free(p->name);
		free(p->normalized);
		free(p->version);
		free(p->marker);
		free(p->requires_python);
		free(p->index);
		for (size_t w = 0; w < p->n_wheels; w++) {
			free(p->wheels[w].filename);
			free(p->wheels[w].url);
		}
		free(p->wheels);
	}
	free(pl->pkgs);
	for (size_t i = 0; i < pl->n_environments; i++)
		free(pl->environments[i]);
	free(pl->environments);
	free(pl->path);
	ml_toml_free(pl->doc);
	free(pl);
}

/* Percent-decodes the last path segment of a URL or path into a new
 * string (query and fragment dropped). */
static char *last_segment(const char *url)
{
	size_t end = strcspn(url, "?#");
	size_t start = end;
	while (start > 0 && url[start - 1] != '/')
		start--;
	char *out = malloc(end - start + 1);
	if (!out)
		return NULL;
	size_t k = 0;
	for (size_t i = start; i < end; i++) {
		unsigned hi, lo;
		if (url[i] == '%' && i + 2 < end && sscanf(url + i + 1, "%1x%1x", &hi, &lo) == 2) {
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[k++] = url[i];
		}
	}
	out[k] = '\0';
	return out;
}

/* A string-valued key that must be a string when present. */
static int opt_string(const char **out, const ml_toml *t, const char *key, const char *path,
                      ml_err *err)
{
	const ml_toml *v = ml_toml_get(t, key);
	*out = NULL;
	if (!v)
		return 0;
	if (v->kind != ML_TOML_STRING)
		return fail_at(err, path, v->line, NULL, "'%s' must be a string, not a %s", key,
		               ml_toml_kind_name(v->kind));
	*out = v->str;
	return 0;
}

static int dup_opt(char **out, const char *s, ml_err *err)
{
	*out = NULL;
	if (s && !(*out = strdup(s)))
		return oom(err);
	return 0;
}

static int read_wheel(ml_pylock_wheel *w, const ml_toml *t, const char *path, const char *base_dir,
                      const char *pkg, ml_err *err)
{
	const char *name, *url, *fpath;
	w->line = t->line;
	w->size = -1;
	if (t->kind != ML_TOML_TABLE)
		return fail_at(err, path, t->line, NULL, "a wheel of '%s' is not a table", pkg);
	int rc = opt_string(&name, t, "name", path, err);
	if (!rc)
		rc = opt_string(&url, t, "url", path, err);
	if (!rc)
		rc = opt_string(&fpath, t, "path", path, err);
	if (rc)
		return rc;
	if (!url && !fpath)
		return fail_at(err, path, t->line, "give each wheel a url (or a path)",
		               "a wheel of '%s' has neither url nor path", pkg);
	if (url) {
		if (!(w->url = strdup(url)))
			return oom(err);
	} else if (fpath[0] == '/') {
		if (!(w->url = ml_asprintf("file://%s", fpath)))
			return oom(err);
	} else {
		/* PEP 751: a relative path is relative to the lock file's directory */
		if (!(w->url = ml_asprintf("file://%s/%s", base_dir ? base_dir : ".", fpath)))
			return oom(err);
	}
	if (!(w->filename = name ? strdup(name) : last_segment(url ? url : fpath)))
		return oom(err);
	if (!w->filename[0] || strchr(w->filename, '/'))
		return fail_at(err, path, t->line, NULL, "a wheel of '%s' has no file name", pkg);
	const ml_toml *size = ml_toml_get(t, "size");
	if (size) {
		if (size->kind != ML_TOML_INTEGER || size->i < 0)
			return fail_at(err, path, size->line, NULL,
			               "the size of '%s' must be a non-negative integer",
			               w->filename);
		w->size = size->i;
	}
	const ml_toml *hashes = ml_toml_get(t, "hashes");
	if (!hashes || hashes->kind != ML_TOML_TABLE)
		return fail_at(err, path, t->line, "PEP 751 requires hashes = {sha256 = \"...\"}",
		               "wheel '%s' has no hashes table", w->filename);
	const char *sha = NULL;
	if ((rc = opt_string(&sha, hashes, "sha256", path, err)) != 0)
		return rc;
	if (!sha)
		return fail_at(err, path, hashes->line,
		               "mlsetup checks every file by sha256; relock with sha256 hashes",
		               "wheel '%s' has no sha256 hash", w->filename);
	if (ml_sha256_hex_normalize(w->sha256, sha) != 0)
		return fail_at(err, path, hashes->line, NULL,
		               "the sha256 of '%s' is not 64 hex digits", w->filename);
	return 0;
}

static int read_package(ml_pylock_package *p, const ml_toml *t, const char *path,
                        const char *base_dir, ml_err *err)
{
	const char *name, *version, *marker, *rp, *index;
	p->line = t->line;
	if (t->kind != ML_TOML_TABLE)
		return fail_at(err, path, t->line, NULL, "an entry of packages is not a table");
	int rc = opt_string(&name, t, "name", path, err);
	if (!rc)
		rc = opt_string(&version, t, "version", path, err);
	if (!rc)
		rc = opt_string(&marker, t, "marker", path, err);
	if (!rc)
		rc = opt_string(&rp, t, "requires-python", path, err);
	if (!rc)
		rc = opt_string(&index, t, "index", path, err);
	if (rc)
		return rc;
	if (!name || !name[0])
		return fail_at(err, path, t->line, NULL, "a package has no name");
	char norm[256];
	if (ml_name_normalize(norm, sizeof(norm), name) != 0)
		return fail_at(err, path, t->line, NULL, "package name '%.100s' is too long", name);
	if (version && !ml_version_valid(version))
		return fail_at(err, path, t->line, NULL, "'%s' has an invalid version '%.100s'",
		               name, version);
	if ((rc = dup_opt(&p->name, name, err)) || (rc = dup_opt(&p->normalized, norm, err)) ||
	    (rc = dup_opt(&p->version, version, err)) || (rc = dup_opt(&p->marker, marker, err)) ||
	    (rc = dup_opt(&p->requires_python, rp, err)) || (rc = dup_opt(&p->index, index, err)))
		return rc;
	if (marker) {
		ml_err merr = ML_ERR_INIT;
		if ((rc = ml_marker_check(marker, &merr)) != 0)
			return rc == ML_ENOMEM ? oom(err)
			                       : fail_at(err, path, t->line, NULL, "%s", merr.msg);
	}
	const ml_toml *wheels = ml_toml_get(t, "wheels");
	if (wheels && wheels->kind != ML_TOML_ARRAY)
		return fail_at(err, path, wheels->line, NULL, "'wheels' of '%s' must be an array",
		               name);
	if (wheels && wheels->n) {
		if (!(p->wheels = calloc(wheels->n, sizeof(*p->wheels))))
			return oom(err);
		for (size_t i = 0; i < wheels->n; i++) {
			p->n_wheels++;
			rc = read_wheel(&p->wheels[i], wheels->items[i], path, base_dir, name, err);
			if (rc)
				return rc;
		}
	}
	static const char *const others[] = {"sdist", "archive", "vcs", "directory"};
	for (size_t i = 0; !p->n_wheels && i < sizeof(others) / sizeof(others[0]); i++)
		if (ml_toml_get(t, others[i]))
			p->source_kind = others[i];
	if (!p->n_wheels && !p->source_kind)
		p->source_kind = "nothing";
	if (p->n_wheels && !p->version)
		return fail_at(err, path, t->line, NULL, "'%s' has wheels but no version", name);
	return 0;
}

int ml_pylock_parse(ml_pylock **out, const char *path_for_messages, const char *base_dir,
                    const char *text, size_t len, ml_err *err)
{
	const char *path = path_for_messages ? path_for_messages : "pylock.toml";
	ml_pylock *pl = calloc(1, sizeof(*pl));
	if (!pl || !(pl->path = strdup(path))) {
		free(pl);
		return oom(err);
	}
	int rc = ml_toml_parse(&pl->doc, path, text, len, err);
	if (rc) {
		if (rc == ML_EPARSE) {
			char msg[sizeof(err->msg)];
			ml_strlcpy(msg, err->msg, sizeof(msg));
			ml_err_set(err, ML_EPARSE, "lock file %s", msg);
			ml_err_hint(err, "the file is not valid TOML 1.0");
		}
		goto out;
	}
	const ml_toml *doc = pl->doc;
	const char *lv = NULL;
	if ((rc = opt_string(&lv, doc, "lock-version", path, err)) != 0)
		goto out;
	if (!lv) {
		rc = fail_at(err, path, 1, "a PEP 751 lock file starts with lock-version = \"1.0\"",
		             "no lock-version: this is not a PEP 751 lock file");
		goto out;
	}
	if (strncmp(lv, "1.", 2) != 0 && strcmp(lv, "1") != 0) {
		rc = fail_at(err, path, ml_toml_get(doc, "lock-version")->line,
		             "regenerate the lock with a tool that writes lock-version 1",
		             "lock-version '%.40s' is not supported (mlsetup reads 1.x)", lv);
		goto out;
	}
	pl->lock_version = lv;
	if ((rc = opt_string(&pl->created_by, doc, "created-by", path, err)) != 0 ||
	    (rc = opt_string(&pl->requires_python, doc, "requires-python", path, err)) != 0)
		goto out;
	if (pl->requires_python && !ml_specifier_valid(pl->requires_python)) {
		rc = fail_at(err, path, ml_toml_get(doc, "requires-python")->line, NULL,
		             "requires-python '%.100s' is not a version specifier",
		             pl->requires_python);
		goto out;
	}
	const ml_toml *envs = ml_toml_get(doc, "environments");
	if (envs && envs->kind != ML_TOML_ARRAY) {
		rc = fail_at(err, path, envs->line, NULL, "'environments' must be an array");
		goto out;
	}
	for (size_t i = 0; envs && i < envs->n; i++) {
		const ml_toml *e = envs->items[i];
		ml_err merr = ML_ERR_INIT;
		if (e->kind != ML_TOML_STRING || ml_marker_check(e->str, &merr) != 0) {
			rc = fail_at(err, path, e->line, NULL,
			             "environment %zu is not a PEP 508 marker%s%s", i + 1,
			             merr.msg[0] ? ": " : "", merr.msg);
			goto out;
		}
		char **ne = realloc(pl->environments, (pl->n_environments + 1) * sizeof(*ne));
		if (!ne) {
			rc = oom(err);
			goto out;
		}
		pl->environments = ne;
		if (!(ne[pl->n_environments] = strdup(e->str))) {
			rc = oom(err);
			goto out;
		}
		pl->n_environments++;
	}
	const ml_toml *pkgs = ml_toml_get(doc, "packages");
	if (pkgs && pkgs->kind != ML_TOML_ARRAY) {
		rc = fail_at(err, path, pkgs->line, NULL, "'packages' must be an array of tables");
		goto out;
	}
	if (pkgs && pkgs->n && !(pl->pkgs = calloc(pkgs->n, sizeof(*pl->pkgs)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; pkgs && i < pkgs->n; i++) {
		pl->n_pkgs++;
		if ((rc = read_package(&pl->pkgs[i], pkgs->items[i], path, base_dir, err)) != 0)
			goto out;
	}
out:
	if (rc) {
		ml_pylock_free(pl);
		return rc;
	}
	*out = pl;
	return 0;
}

bool ml_pylock_path_like(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n > 5 && strcmp(path + n - 5, ".toml") == 0;
}
