/*
 * requirements.c - manifests: pip's requirements-file format.
 *
 * Reads a requirements file the way pip does (pip "Requirements File
 * Format"; pip's req_file.py behaviour): physical lines are joined at
 * trailing backslashes, comments are removed, and each logical line is
 * either a line of global options (--index-url, --extra-index-url, ...) or
 * a PEP 508 requirement followed by its own options (--hash). On top of
 * that it collects `# mlsetup: key = value` headers and, in hash mode,
 * enforces what mlsetup's manifests promise: one exact `==` pin and at
 * least one sha256 per requirement. Every error names file and line.
 * Also PEP 503 name normalization, which the other stages share.
 */
#include "internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX_BYTES (16u * 1024u * 1024u)

int ml_name_normalize(char *dst, size_t dstsz, const char *name)
{
	char *n = ml_pep503_normalize(name, strlen(name));
	if (!n) {
		if (dstsz)
			dst[0] = '\0';
		return ML_EFAIL;
	}
	size_t len = ml_strlcpy(dst, n, dstsz);
	free(n);
	return len < dstsz ? 0 : ML_EFAIL;
}

/* --- small helpers ------------------------------------------------------- */

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *normalized_dup(const char *name)
{
	size_t n = strlen(name) + 1;
	char *d = malloc(n);
	if (d)
		(void)ml_name_normalize(d, n, name);
	return d;
}

/* Appends s (taken over; NULL means allocation failed) to a string array. */
static int push_str(char ***arr, size_t *n, char *s)
{
	if (!s)
		return ML_ENOMEM;
	char **p = realloc(*arr, (*n + 1) * sizeof *p);
	if (!p) {
		free(s);
		return ML_ENOMEM;
	}
	p[(*n)++] = s;
	*arr = p;
	return 0;
}

static void free_strs(char **arr, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(arr[k]);
	free(arr);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void req_release(ml_requirement *q)
{
	free(q->name);
	free(q->normalized);
	free_strs(q->extras, q->n_extras);
	free(q->specifier);
	free(q->version);
	free(q->url);
	free(q->marker);
	free_strs(q->sha256, q->n_hashes);
	memset(q, 0, sizeof *q);
}

void ml_requirements_free(ml_requirements *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < r->n_reqs; k++)
		req_release(&r->reqs[k]);
	free(r->reqs);
	free(r->path);
	free(r->index_url);
	free_strs(r->extra_index_urls, r->n_extra);
	free_strs(r->find_links, r->n_find_links);
	free_strs(r->trusted_hosts, r->n_trusted);
	free_strs(r->only_binary, r->n_only_binary);
	for (size_t k = 0; k < r->n_includes; k++)
		free(r->includes[k].path);
	free(r->includes);
	for (size_t k = 0; k < r->n_meta; k++) {
		free(r->meta[k].key);
		free(r->meta[k].value);
	}
	free(r->meta);
	free(r);
}

const char *ml_requirements_meta(const ml_requirements *r, const char *key)
{
	if (!r || !key)
		return NULL;
	for (size_t k = 0; k < r->n_meta; k++)
		if (strcmp(r->meta[k].key, key) == 0)
			return r->meta[k].value;
	return NULL;
}

/* --- the parser ------------------------------------------------------------ */

typedef struct rparser {
	const char *path; /* for messages, may be NULL */
	unsigned flags;
	ml_err *err;
	ml_requirements *r;
	size_t cap_reqs;
} rparser;

/* Records "manifest 'PATH' line N: MESSAGE" and the hint (may be NULL). */
static int fail(rparser *c, int code, int line, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static int fail(rparser *c, int code, int line, const char *hint, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->path)
		ml_err_set(c->err, code, "manifest '%.200s' line %d: %s", c->path, line, msg);
	else
		ml_err_set(c->err, code, "manifest line %d: %s", line, msg);
	ml_err_hint(c->err, "%s", hint ? hint : "");
	return code;
}

static int oom(rparser *c)
{
	ml_err_set(c->err, ML_ENOMEM, "out of memory reading manifest '%.200s'",
	           c->path ? c->path : "");
	ml_err_hint(c->err, "%s", "");
	return ML_ENOMEM;
}

/* `# mlsetup: key = value` on a whole-line comment. */
static int header_line(rparser *c, const char *s, size_t n, int line)
{
	size_t i = 0;
	while (i < n && is_space(s[i]))
		i++;
	if (i >= n || s[i] != '#')
		return 0;
	i++;
	while (i < n && is_space(s[i]))
		i++;
	if (n - i < 8 || memcmp(s + i, "mlsetup:", 8) != 0)
		return 0;
	i += 8;
	const char *rest = s + i, *end = s + n;
	const char *eq = memchr(rest, '=', (size_t)(end - rest));
	static const char hint[] = "write headers as '# mlsetup: key = value'";
	if (!eq)
		return fail(c, ML_EPARSE, line, hint, "malformed header '%.*s'",
		            (int)(n > 200 ? 200 : n), s);
	const char *ka = rest, *kb = eq, *va = eq + 1, *vb = end;
	while (ka < kb && is_space(*ka))
		ka++;
	while (kb > ka && is_space(kb[-1]))
		kb--;
	while (va < vb && is_space(*va))
		va++;
	while (vb > va && is_space(vb[-1]))
		vb--;
	bool key_ok = ka < kb;
	for (const char *k = ka; k < kb; k++)
		key_ok &= isalnum((unsigned char)*k) || *k == '_' || *k == '-' || *k == '.';
	if (!key_ok)
		return fail(c, ML_EPARSE, line, hint, "malformed header key '%.*s'",
		            (int)(kb - ka > 100 ? 100 : kb - ka), ka);
	ml_requirements *r = c->r;
	for (size_t k = 0; k < r->n_meta; k++)
		if (strlen(r->meta[k].key) == (size_t)(kb - ka) &&
		    memcmp(r->meta[k].key, ka, (size_t)(kb - ka)) == 0)
			return fail(c, ML_EPARSE, line, "keep one header line per key",
			            "header '%s' repeated (first on line %d)", r->meta[k].key,
			            r->meta[k].line);
	ml_kv *m = realloc(r->meta, (r->n_meta + 1) * sizeof *m);
	if (!m)
		return oom(c);
	r->meta = m;
	m[r->n_meta].key = dup_n(ka, (size_t)(kb - ka));
	m[r->n_meta].value = dup_n(va, (size_t)(vb - va));
	m[r->n_meta].line = line;
	r->n_meta++;
	if (!m[r->n_meta - 1].key || !m[r->n_meta - 1].value)
		return oom(c);
	return 0;
}

/* pip's COMMENT_RE, (^|\s+)#.*$: true when s has a comment. */
static const char *comment_start(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '#' && (i == 0 || is_space(s[i - 1])))
			return s + i;
	return NULL;
}

/* Splits option text the way Python's shlex.split() does (POSIX mode). */
static int shell_split(rparser *c, int line, const char *s, char ***out, size_t *n_out)
{
	char **toks = NULL;
	size_t n = 0;
	ml_buf b = ML_BUF_INIT;
	size_t i = 0, len = strlen(s);
	int rc = 0;
	while (i < len) {
		while (i < len && is_space(s[i]))
			i++;
		if (i >= len)
			break;
		bool any = false;
		while (i < len && !is_space(s[i])) {
			char q = s[i];
			any = true;
			if (q == '\'' || q == '"') {
				size_t j = i + 1;
				for (; j < len && s[j] != q; j++) {
					if (q == '"' && s[j] == '\\' && j + 1 < len &&
					    (s[j + 1] == '"' || s[j + 1] == '\\'))
						j++;
					if (ml_buf_add(&b, s + j, 1))
						goto nomem;
				}
				if (j >= len) {
					rc = fail(c, ML_EPARSE, line, "close the quote",
					          "no closing quotation in options '%.200s'", s);
					goto out;
				}
				i = j + 1;
			} else if (q == '\\' && i + 1 < len) {
				if (ml_buf_add(&b, s + i + 1, 1))
					goto nomem;
				i += 2;
			} else {
				if (ml_buf_add(&b, s + i, 1))
					goto nomem;
				i++;
			}
		}
		if (any) {
			char *t = b.data ? ml_buf_detach(&b) : dup_n("", 0);
			if ((rc = push_str(&toks, &n, t)))
				goto nomem;
		}
	}
	*out = toks;
	*n_out = n;
	ml_buf_release(&b);
	return 0;
nomem:
	rc = oom(c);
out:
	ml_buf_release(&b);
	free_strs(toks, n);
	return rc;
}

enum { OPT_FLAG, OPT_VALUE };
enum { SCOPE_GLOBAL, SCOPE_REQ, SCOPE_REFUSED };

typedef struct opt_def {
	const char *name, *short_name;
	int kind, scope;
	const char *refusal, *hint; /* for SCOPE_REFUSED */
} opt_def;

static const opt_def options[] = {
        {"--index-url", "-i", OPT_VALUE, SCOPE_GLOBAL, NULL, NULL},
        {"--extra-index-url", NULL, OPT_VALUE, SCOPE_GLOBAL, NULL, NULL},
        {"--find-links", "-f", OPT_VALUE, SCOPE_GLOBAL, NULL, NULL},
        {"--trusted-host", NULL, OPT_VALUE, SCOPE_GLOBAL, NULL, NULL},
        {"--only-binary", NULL, OPT_VALUE, SCOPE_GLOBAL, NULL, NULL},
        {"--no-index", NULL, OPT_FLAG, SCOPE_GLOBAL, NULL, NULL},
        {"--require-hashes", NULL, OPT_FLAG, SCOPE_GLOBAL, NULL, NULL},
        {"--prefer-binary", NULL, OPT_FLAG, SCOPE_GLOBAL, NULL, NULL},
        {"--pre", NULL, OPT_FLAG, SCOPE_GLOBAL, NULL, NULL},
        {"--hash", NULL, OPT_VALUE, SCOPE_REQ, NULL, NULL},
        {"--requirement", "-r", OPT_VALUE, SCOPE_REFUSED,
         "nested requirement files (-r) are not supported",
         "list every requirement in this manifest"},
        {"--constraint", "-c", OPT_VALUE, SCOPE_REFUSED, "constraint files (-c) are not supported",
         "pin the versions in this manifest with =="},
        {"--editable", "-e", OPT_VALUE, SCOPE_REFUSED,
         "editable installs (-e) are not supported: mlsetup installs wheels only",
         "build a wheel (pip wheel --no-deps -w wheelhouse PATH), then list it as "
         "name==version with --find-links wheelhouse"},
        {"--no-binary", NULL, OPT_VALUE, SCOPE_REFUSED,
         "--no-binary is refused: mlsetup installs wheels only", "remove --no-binary"},
        {"--use-feature", NULL, OPT_VALUE, SCOPE_REFUSED,
         "--use-feature is a pip option mlsetup does not have", "remove --use-feature"},
        {"--global-option", NULL, OPT_VALUE, SCOPE_REFUSED,
         "--global-option is refused: mlsetup does not build from source",
         "remove --global-option"},
        {"--config-settings", NULL, OPT_VALUE, SCOPE_REFUSED,
         "--config-settings is refused: mlsetup does not build from source",
         "remove --config-settings"},
};

/* Stores one --hash value into q. */
static int add_hash(rparser *c, int line, ml_requirement *q, const char *v)
{
	static const char hint[] = "use --hash=sha256:<64 hex digits> (pip hash FILE prints one)";
	const char *colon = strchr(v, ':');
	if (!colon || colon == v)
		return fail(c, ML_EPARSE, line, hint,
		            "malformed --hash '%.100s'; expected sha256:<hex>", v);
	char algo[24];
	size_t an = (size_t)(colon - v);
	if (an >= sizeof algo)
		an = sizeof algo - 1;
	for (size_t k = 0; k < an; k++)
		algo[k] = (char)tolower((unsigned char)v[k]);
	algo[an] = '\0';
	if (strcmp(algo, "sha256") != 0)
		return fail(c, ML_EPARSE, line, hint, "%s hashes are refused", algo);
	const char *hex = colon + 1;
	char low[65];
	if (ml_sha256_hex_normalize(low, hex) != 0)
		return fail(c, ML_EPARSE, line,
		            "copy the whole sha256 of the wheel file: 64 hex digits",
		            "sha256 hash '%.80s' is not 64 hex digits", hex);
	for (size_t k = 0; k < q->n_hashes; k++)
		if (strcmp(q->sha256[k], low) == 0)
			return 0;
	return push_str(&q->sha256, &q->n_hashes, dup_n(low, 64)) ? oom(c) : 0;
}

/* Applies options (shell-split tokens). q is the requirement they follow,
 * NULL on a line of global options. */
static int apply_options(rparser *c, int line, char **toks, size_t n, ml_requirement *q)
{
	ml_requirements *r = c->r;
	for (size_t i = 0; i < n; i++) {
		const char *t = toks[i], *val = NULL;
		size_t name_len;
		if (t[0] == '-' && t[1] == '-') {
			const char *eq = strchr(t, '=');
			name_len = eq ? (size_t)(eq - t) : strlen(t);
			val = eq ? eq + 1 : NULL;
		} else if (t[0] == '-' && t[1]) {
			name_len = 2;
			val = t[2] ? t + 2 : NULL;
		} else {
			return fail(c, ML_EPARSE, line,
			            "put each requirement on its own line, followed by its options",
			            "unexpected '%.100s' among options", t);
		}
		const opt_def *d = NULL;
		for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
			const char *nm = name_len == 2 && t[1] != '-' ? options[k].short_name
			                                              : options[k].name;
			if (nm && strlen(nm) == name_len && memcmp(nm, t, name_len) == 0) {
				d = &options[k];
				break;
			}
		}
		if (!d)
			return fail(c, ML_EPARSE, line,
			            "manifests take --index-url, --extra-index-url, --find-links, "
			            "--no-index, --trusted-host, --require-hashes, --pre, "
			            "--prefer-binary, --only-binary and --hash",
			            "unknown option '%.*s'", (int)(name_len > 60 ? 60 : name_len),
			            t);
		bool include =
		        !strcmp(d->name, "--requirement") || !strcmp(d->name, "--constraint");
		if (d->scope == SCOPE_REFUSED && !(include && (c->flags & ML_REQ_INCLUDES)))
			return fail(c, ML_EPARSE, line, d->hint, "%s", d->refusal);
		if (d->kind == OPT_FLAG && val)
			return fail(c, ML_EPARSE, line, NULL, "option '%s' takes no value",
			            d->name);
		if (d->kind == OPT_VALUE && !val) {
			if (i + 1 >= n)
				return fail(c, ML_EPARSE, line, NULL, "option '%s' needs a value",
				            d->name);
			val = toks[++i];
		}
		if (d->scope == SCOPE_REQ && !q)
			return fail(
			        c, ML_EPARSE, line,
			        "put --hash after its requirement; continue long lines with '\\'",
			        "'%s' must follow a requirement on the same line", d->name);
		if (d->scope == SCOPE_GLOBAL && q)
			return fail(c, ML_EPARSE, line, "move it to a line of its own",
			            "option '%s' cannot follow a requirement", d->name);
		int rc = 0;
		if (include && q)
			return fail(c, ML_EPARSE, line, "move it to a line of its own",
			            "option '%s' cannot follow a requirement", d->name);
		if (include) {
			ml_include *inc = realloc(r->includes, (r->n_includes + 1) * sizeof(*inc));
			if (!inc)
				return oom(c);
			r->includes = inc;
			inc[r->n_includes] =
			        (ml_include){dup_n(val, strlen(val)), d->name[2] == 'c', line};
			if (!inc[r->n_includes++].path)
				return oom(c);
		} else if (strcmp(d->name, "--hash") == 0) {
			rc = add_hash(c, line, q, val);
			if (rc)
				return rc;
		} else if (strcmp(d->name, "--index-url") == 0) {
			char *u = dup_n(val, strlen(val));
			if (!u)
				return oom(c);
			free(r->index_url);
			r->index_url = u;
		} else if (strcmp(d->name, "--extra-index-url") == 0) {
			rc = push_str(&r->extra_index_urls, &r->n_extra, dup_n(val, strlen(val)));
		} else if (strcmp(d->name, "--find-links") == 0) {
			rc = push_str(&r->find_links, &r->n_find_links, dup_n(val, strlen(val)));
		} else if (strcmp(d->name, "--trusted-host") == 0) {
			rc = push_str(&r->trusted_hosts, &r->n_trusted, dup_n(val, strlen(val)));
		} else if (strcmp(d->name, "--only-binary") == 0) {
			rc = push_str(&r->only_binary, &r->n_only_binary, dup_n(val, strlen(val)));
		} else if (strcmp(d->name, "--no-index") == 0) {
			r->no_index = true;
		} else if (strcmp(d->name, "--require-hashes") == 0) {
			r->require_hashes = true;
		} else if (strcmp(d->name, "--prefer-binary") == 0) {
			r->prefer_binary = true;
		} else if (strcmp(d->name, "--pre") == 0) {
			r->pre = true;
		}
		if (rc)
			return oom(c);
	}
	return 0;
}

/* PEP 508 identifier: letters and digits, with - _ . inside. */
static size_t identifier(const char *s, size_t i, size_t len)
{
	size_t j = i;
	if (j >= len || !isalnum((unsigned char)s[j]))
		return 0;
	while (j < len &&
	       (isalnum((unsigned char)s[j]) || s[j] == '-' || s[j] == '_' || s[j] == '.'))
		j++;
	while (j > i && !isalnum((unsigned char)s[j - 1]))
		j--;
	return j - i;
}

/* Parses the requirement text s (trimmed, non-empty) into q (PEP 508
 * "Grammar": name_req and url_req). */
/* True when a requirement line is a local path or a URL rather than a
 * PEP 508 requirement, as pip tells them apart: a path separator before
 * any specifier, a leading '.' or '~', a scheme, or an archive suffix. */
static bool path_like(const char *s)
{
	size_t head = strcspn(s, " \t;[<>=!~@");
	if (s[0] == '.' || s[0] == '~' || memchr(s, '/', head) || memchr(s, '\\', head))
		return true;
	static const char *const suffixes[] = {".whl", ".zip",     ".tar.gz",
	                                       ".tgz", ".tar.bz2", ".tar.xz"};
	for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
		size_t l = strlen(suffixes[k]);
		if (head > l && strncmp(s + head - l, suffixes[k], l) == 0)
			return true;
	}
	return false;
}

/* A direct reference "name @ url" must be a wheel at an http(s) URL:
 * VCS and local references would be built, not installed. */
static int check_url(rparser *c, int line, const ml_requirement *q)
{
	char hint[400];
	const char *u = q->url;
	static const char *const vcs[] = {"git+", "hg+", "svn+", "bzr+"};
	for (size_t k = 0; k < sizeof vcs / sizeof vcs[0]; k++)
		if (strncmp(u, vcs[k], strlen(vcs[k])) == 0) {
			snprintf(hint, sizeof hint,
			         "build a wheel (pip wheel --no-deps -w wheelhouse '%.200s'), then "
			         "list %s==<version> with --find-links wheelhouse",
			         u, q->name);
			return fail(
			        c, ML_EPARSE, line, hint,
			        "'%s' is a VCS requirement (%.100s): mlsetup installs wheels only",
			        q->name, u);
		}
	size_t end = strcspn(u, "?#");
	bool remote = strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
	bool wheel = end > 4 && strncmp(u + end - 4, ".whl", 4) == 0;
	if (remote && wheel)
		return 0;
	snprintf(hint, sizeof hint,
	         "build a wheel (pip wheel --no-deps -w wheelhouse ...), then list %s==<version> "
	         "with --find-links wheelhouse",
	         q->name);
	return fail(c, ML_EPARSE, line, hint,
	            "'%s' points at %s (%.100s): mlsetup installs wheels only", q->name,
	            remote ? "a file that is no wheel" : "a local path", u);
}

static int parse_requirement(rparser *c, int line, const char *s, ml_requirement *q)
{
	static const char hint[] = "write requirements as name==version (PEP 508)";
	size_t len = strlen(s), i = 0;
	if (path_like(s))
		return fail(
		        c, ML_EPARSE, line,
		        "mlsetup installs wheels from indexes and --find-links locations: put the "
		        "wheel in a directory, add --find-links DIR and name it name==version",
		        "invalid requirement '%.200s': expected a project name at column 1, not "
		        "a local path or URL",
		        s);
	size_t n = identifier(s, 0, len);
	if (n == 0)
		return fail(c, ML_EPARSE, line, hint,
		            "invalid requirement '%.200s': expected a project name at column 1", s);
	if (!(q->name = dup_n(s, n)) || !(q->normalized = normalized_dup(q->name)))
		return oom(c);
	i = n;
	while (i < len && is_space(s[i]))
		i++;
	if (i < len && s[i] == '[') {
		i++;
		for (;;) {
			while (i < len && is_space(s[i]))
				i++;
			if (i < len && s[i] == ']' && q->n_extras == 0) {
				i++;
				break;
			}
			size_t e = identifier(s, i, len);
			if (e == 0)
				return fail(c, ML_EPARSE, line, hint,
				            "invalid requirement '%.200s': expected an extra name "
				            "at column %zu",
				            s, i + 1);
			char *raw = dup_n(s + i, e);
			char *x = raw ? normalized_dup(raw) : NULL;
			free(raw);
			if (push_str(&q->extras, &q->n_extras, x))
				return oom(c);
			i += e;
			while (i < len && is_space(s[i]))
				i++;
			if (i < len && s[i] == ',') {
				i++;
				continue;
			}
			if (i < len && s[i] == ']') {
				i++;
				break;
			}
			return fail(
			        c, ML_EPARSE, line, hint,
			        "invalid requirement '%.200s': expected ',' or ']' at column %zu",
			        s, i + 1);
		}
		while (i < len && is_space(s[i]))
			i++;
	}
	const char *marker = NULL;
	if (i < len && s[i] == '@') {
		i++;
		while (i < len && is_space(s[i]))
			i++;
		size_t u = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (i == u)
			return fail(c, ML_EPARSE, line, hint,
			            "invalid requirement '%.200s': expected a URL after '@'", s);
		if (!(q->url = dup_n(s + u, i - u)))
			return oom(c);
		int urc = check_url(c, line, q);
		if (urc)
			return urc;
		while (i < len && is_space(s[i]))
			i++;
		if (i < len && s[i] != ';')
			return fail(c, ML_EPARSE, line, hint,
			            "invalid requirement '%.200s': expected ';' or the end at "
			            "column %zu",
			            s, i + 1);
		if (i < len)
			marker = s + i + 1;
		if (!(q->specifier = dup_n("", 0)))
			return oom(c);
	} else {
		const char *semi = strchr(s + i, ';');
		size_t a = i, b = semi ? (size_t)(semi - s) : len;
		while (b > a && is_space(s[b - 1]))
			b--;
		if (b > a && s[a] == '(') {
			if (s[b - 1] != ')')
				return fail(
				        c, ML_EPARSE, line, hint,
				        "invalid requirement '%.200s': expected ')' at column %zu",
				        s, b + 1);
			a++;
			b--;
		}
		char *raw = dup_n(s + a, b - a);
		if (!raw)
			return oom(c);
		bool valid = ml_specifier_valid(raw);
		free(raw);
		if (!valid) {
			char shown[256];
			snprintf(shown, sizeof shown, "%.*s", (int)(b - a), s + a);
			return fail(c, ML_EPARSE, line,
			            "use PEP 440 specifiers such as ==1.26.4 or >=1.26,<2",
			            "invalid version specifier '%s' for '%s'", ml_strtrim(shown),
			            q->name);
		}
		/* once valid, whitespace carries no meaning: drop it and the
		 * empty clauses pip ignores */
		ml_buf spec = ML_BUF_INIT;
		for (size_t k = a; k < b; k++) {
			if (is_space(s[k]))
				continue;
			if (s[k] == ',' && (spec.len == 0 || spec.data[spec.len - 1] == ','))
				continue;
			if (ml_buf_add(&spec, s + k, 1)) {
				ml_buf_release(&spec);
				return oom(c);
			}
		}
		if (spec.len && spec.data[spec.len - 1] == ',')
			spec.data[--spec.len] = '\0';
		q->specifier = spec.data ? ml_buf_detach(&spec) : dup_n("", 0);
		if (!q->specifier)
			return oom(c);
		const char *sp = q->specifier;
		if (sp[0] == '=' && sp[1] == '=' && sp[2] != '=' && !strchr(sp, ',') &&
		    !(strlen(sp) >= 2 && strcmp(sp + strlen(sp) - 2, ".*") == 0))
			if (!(q->version = dup_n(sp + 2, strlen(sp + 2))))
				return oom(c);
		if (semi)
			marker = semi + 1;
	}
	if (marker) {
		while (*marker && is_space(*marker))
			marker++;
		size_t m = strlen(marker);
		while (m > 0 && is_space(marker[m - 1]))
			m--;
		if (m == 0)
			return fail(c, ML_EPARSE, line,
			            "write a PEP 508 marker after ';' or drop the ';'",
			            "empty marker after ';' in '%.200s'", s);
		if (!(q->marker = dup_n(marker, m)))
			return oom(c);
		ml_err merr = ML_ERR_INIT;
		int rc = ml_marker_check(q->marker, &merr);
		if (rc == ML_ENOMEM)
			return oom(c);
		if (rc)
			return fail(c, ML_EPARSE, line,
			            "markers look like: python_version >= \"3.10\" and "
			            "sys_platform == \"linux\"",
			            "%s", merr.msg);
	}
	return 0;
}

/* The pin hash mode asks for, derived from what was written. */
static int check_hash_mode(rparser *c, const ml_requirement *q)
{
	ml_requirements *r = c->r;
	char hint[512];
	if (q->url) {
		snprintf(hint, sizeof hint,
		         "pin an exact version from an index (%s==<version>) with its "
		         "--hash=sha256:",
		         q->name);
		return fail(
		        c, ML_EPARSE, q->line, hint,
		        "'%s' is a direct reference (name @ url); hash mode needs name==version",
		        q->name);
	}
	if (!q->version) {
		const char *sp = q->specifier;
		if (strncmp(sp, "===", 3) == 0 && !strchr(sp, ',')) {
			snprintf(hint, sizeof hint, "pin with == (%s==%.100s)", q->name, sp + 3);
			return fail(c, ML_EPARSE, q->line, hint,
			            "'%s' is pinned with ===, not ==", q->name);
		}
		/* suggest the version of the first clause when it is one */
		char v[128] = "<version>";
		size_t k = 0;
		while (sp[k] && strchr("<>=!~", sp[k]))
			k++;
		size_t e = k;
		while (sp[e] && sp[e] != ',')
			e++;
		if (e > k && e - k < sizeof v) {
			char cand[128];
			snprintf(cand, sizeof cand, "%.*s", (int)(e - k), sp + k);
			if (ml_version_valid(cand))
				memcpy(v, cand, strlen(cand) + 1);
		}
		snprintf(hint, sizeof hint, "pin an exact version (%s==%s)", q->name, v);
		if (!sp[0])
			return fail(c, ML_EPARSE, q->line, hint,
			            "'%s' is not pinned with ==", q->name);
		return fail(c, ML_EPARSE, q->line, hint,
		            "'%s' is not pinned with == (found '%.100s')", q->name, sp);
	}
	if (q->n_hashes == 0) {
		snprintf(hint, sizeof hint,
		         "add --hash=sha256:<64 hex digits> for each wheel of %s==%.100s (mlsetup "
		         "lock "
		         "writes them)",
		         q->name, q->version);
		return fail(c, ML_EPARSE, q->line, hint, "'%s' has no --hash", q->name);
	}
	for (size_t k = 0; k < r->n_reqs; k++) {
		const ml_requirement *o = &r->reqs[k];
		bool same_marker = (!o->marker && !q->marker) ||
		                   (o->marker && q->marker && strcmp(o->marker, q->marker) == 0);
		if (same_marker && strcmp(o->normalized, q->normalized) == 0)
			return fail(
			        c, ML_EPARSE, q->line,
			        "keep one line per package, or give the lines different markers",
			        "'%s' is listed twice (first on line %d)", q->name, o->line);
	}
	return 0;
}

/* One logical line, comments already removed and trimmed (non-empty). */
static int logical_line(rparser *c, char *s, int line)
{
	/* pip expands ${VAR}; a manifest must mean the same everywhere */
	for (const char *d = strstr(s, "${"); d; d = strstr(d + 2, "${")) {
		const char *e = d + 2;
		while (isupper((unsigned char)*e) || isdigit((unsigned char)*e) || *e == '_')
			e++;
		if (*e == '}' && e > d + 2)
			return fail(c, ML_EPARSE, line, "write the value itself",
			            "environment variable '%.*s' is not expanded in manifests",
			            (int)(e - d + 1 > 80 ? 80 : e - d + 1), d);
	}
	/* pip's break_args_options: options start at the first token that
	 * begins with '-' */
	char *opts = NULL;
	for (char *p = s; *p; p++) {
		if (*p == '-' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			opts = p;
			break;
		}
	}
	char **toks = NULL;
	size_t n = 0;
	int rc = 0;
	if (opts) {
		char *o = dup_n(opts, strlen(opts));
		if (!o)
			return oom(c);
		rc = shell_split(c, line, o, &toks, &n);
		free(o);
		if (rc)
			return rc;
		*opts = '\0';
	}
	ml_strtrim(s);
	if (!*s) {
		rc = apply_options(c, line, toks, n, NULL);
		free_strs(toks, n);
		return rc;
	}
	ml_requirement q = {0};
	q.line = line;
	if ((rc = parse_requirement(c, line, s, &q)) || (rc = apply_options(c, line, toks, n, &q)))
		goto out;
	if ((c->flags & ML_REQ_HASH_MODE) && (rc = check_hash_mode(c, &q)))
		goto out;
	ml_requirements *r = c->r;
	if (r->n_reqs == c->cap_reqs) {
		size_t cap = c->cap_reqs ? 2 * c->cap_reqs : 16;
		ml_requirement *p = realloc(r->reqs, cap * sizeof *p);
		if (!p) {
			rc = oom(c);
			goto out;
		}
		r->reqs = p;
		c->cap_reqs = cap;
	}
	r->reqs[r->n_reqs++] = q;
	memset(&q, 0, sizeof q);
out:
	req_release(&q);
	free_strs(toks, n);
	return rc;
}

/* Strips the comment from a logical line, trims it and hands it on. */
static int emit(rparser *c, ml_buf *b, int line)
{
	char *s = b->data;
	if (!s)
		return 0;
	const char *h = comment_start(s, b->len);
	if (h)
		s[h - s] = '\0';
	ml_strtrim(s);
	if (!*s)
		return 0;
	return logical_line(c, s, line);
}

int ml_requirements_parse(ml_requirements **out, const char *path_for_messages, const char *text,
                          size_t len, unsigned flags, ml_err *err)
{
	rparser c = {path_for_messages, flags, err, NULL, 0};
	ml_buf cur = ML_BUF_INIT;
	int rc = 0, cur_line = 0;
	if (!(c.r = calloc(1, sizeof *c.r)))
		return oom(&c);
	if (path_for_messages &&
	    !(c.r->path = dup_n(path_for_messages, strlen(path_for_messages)))) {
		rc = oom(&c);
		goto out;
	}
	if (!text)
		len = 0;
	size_t i = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	bool joining = false;
	for (int line = 1; i < len; line++) {
		const char *s = text + i;
		size_t n = 0;
		while (i + n < len && s[n] != '\n' && s[n] != '\r')
			n++;
		i += n;
		if (i < len) /* \n, \r\n or \r ends the line */
			i += text[i] == '\r' && i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
		if (memchr(s, '\0', n)) {
			rc = fail(&c, ML_EPARSE, line, "save the manifest as UTF-8 text",
			          "contains a NUL byte");
			goto out;
		}
		if ((rc = header_line(&c, s, n, line)))
			goto out;
		/* pip's COMMENT_RE.match(): only a whole-line comment stops a
		 * continuation; "x==1 # note \" still continues (and its
		 * comment then swallows the next line, as in pip) */
		size_t lead = 0;
		while (lead < n && is_space(s[lead]))
			lead++;
		bool comment = lead < n && s[lead] == '#';
		if (n == 0 || s[n - 1] != '\\' || comment) {
			if (joining) {
				if ((comment && ml_buf_add(&cur, " ", 1)) ||
				    ml_buf_add(&cur, s, n)) {
					rc = oom(&c);
					goto out;
				}
				rc = emit(&c, &cur, cur_line);
				ml_buf_release(&cur);
				joining = false;
			} else {
				if (ml_buf_add(&cur, s, n)) {
					rc = oom(&c);
					goto out;
				}
				rc = emit(&c, &cur, line);
				ml_buf_release(&cur);
			}
			if (rc)
				goto out;
		} else {
			if (!joining)
				cur_line = line;
			joining = true;
			/* pip: line.strip("\\") */
			size_t a = 0, b = n;
			while (a < b && s[a] == '\\')
				a++;
			while (b > a && s[b - 1] == '\\')
				b--;
			if (ml_buf_add(&cur, s + a, b - a)) {
				rc = oom(&c);
				goto out;
			}
		}
	}
	if (joining && (rc = emit(&c, &cur, cur_line)))
		goto out;
	*out = c.r;
	c.r = NULL;
out:
	ml_buf_release(&cur);
	ml_requirements_free(c.r);
	return rc;
}

int ml_requirements_load(ml_requirements **out, const char *path, unsigned flags, ml_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ml_os_read_file(&text, &len, NULL, path, MANIFEST_MAX_BYTES + 1, err);
	if (rc)
		return rc;
	if (len > MANIFEST_MAX_BYTES) {
		free(text);
		rc = ml_err_set(err, ML_EPARSE, "manifest '%.200s' is larger than 16 MiB", path);
		ml_err_hint(err, "%s", "a manifest lists one line per package; check the file");
		return rc;
	}
	rc = ml_requirements_parse(out, path, text, len, flags, err);
	free(text);
	return rc;
}

/* --- -r / -c includes --------------------------------------------------------- */

/* Moves the strings of src[0..n) to the end of *dst (src emptied). */
static int move_strs(char ***dst, size_t *nd, char ***src, size_t *ns)
{
	for (size_t k = 0; k < *ns; k++) {
		if (push_str(dst, nd, (*src)[k])) {
			for (size_t j = k + 1; j < *ns; j++)
				free((*src)[j]);
			free(*src);
			*src = NULL;
			*ns = 0;
			return ML_ENOMEM;
		}
	}
	free(*src);
	*src = NULL;
	*ns = 0;
	return 0;
}

/* A path written in the file at `from`, taken from that file's
 * directory when relative (pip does so for -r, -c and existing
 * --find-links directories). */
static char *relative_to(const char *from, const char *p, bool only_if_exists)
{
	if (p[0] == '/' || strstr(p, "://"))
		return strdup(p);
	const char *slash = strrchr(from, '/');
	if (!slash)
		return strdup(p);
	char *j = ml_asprintf("%.*s/%s", (int)(slash - from), from, p);
	if (j && only_if_exists && access(j, F_OK) != 0) {
		free(j);
		return strdup(p);
	}
	return j;
}

/* Loads the file at path and, recursively, its includes into top. */
static int load_tree(ml_requirements *top, const char *path, bool constraint, unsigned flags,
                     int depth, char ***seen, size_t *n_seen, ml_err *err)
{
	char real[4096];
	if (!realpath(path, real))
		ml_strlcpy(real, path, sizeof real);
	for (size_t k = 0; k < *n_seen; k++)
		if (!strcmp((*seen)[k], real))
			return 0; /* included twice: pip reads it again, to no effect */
	if (push_str(seen, n_seen, dup_n(real, strlen(real))))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_requirements *r = NULL;
	int rc = ml_requirements_load(&r, path, flags | ML_REQ_INCLUDES, err);
	if (rc)
		return rc;
	if (depth > 0) {
		/* an included file's options apply to the whole run, as in pip */
		for (size_t k = 0; k < r->n_find_links; k++) {
			char *f = relative_to(path, r->find_links[k], true);
			if (!f) {
				rc = ML_ENOMEM;
				break;
			}
			free(r->find_links[k]);
			r->find_links[k] = f;
		}
		if (!top->index_url && r->index_url) {
			top->index_url = r->index_url;
			r->index_url = NULL;
		}
		top->no_index |= r->no_index;
		top->require_hashes |= r->require_hashes;
		top->pre |= r->pre;
		if (!rc)
			rc = move_strs(&top->extra_index_urls, &top->n_extra, &r->extra_index_urls,
			               &r->n_extra);
		if (!rc)
			rc = move_strs(&top->find_links, &top->n_find_links, &r->find_links,
			               &r->n_find_links);
		if (!rc)
			rc = move_strs(&top->trusted_hosts, &top->n_trusted, &r->trusted_hosts,
			               &r->n_trusted);
		if (!rc && !constraint && r->n_reqs) {
			ml_requirement *q =
			        realloc(top->reqs, (top->n_reqs + r->n_reqs) * sizeof(*q));
			if (!q) {
				rc = ML_ENOMEM;
			} else {
				top->reqs = q;
				memcpy(q + top->n_reqs, r->reqs, r->n_reqs * sizeof(*q));
				top->n_reqs += r->n_reqs;
				r->n_reqs = 0;
			}
		}
		if (rc) {
			ml_requirements_free(r);
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	}
	for (size_t k = 0; k < r->n_includes && !rc; k++) {
		const ml_include *inc = &r->includes[k];
		if (strstr(inc->path, "://")) {
			rc = ml_err_set(err, ML_EPARSE,
			                "manifest '%.200s' line %d: -%c %.200s: "
			                "including a file by URL is not supported",
			                path, inc->line, inc->constraint ? 'c' : 'r', inc->path);
			ml_err_hint(err, "download the file and include it by path");
			break;
		}
		if (depth >= 10) {
			rc = ml_err_set(
			        err, ML_EPARSE,
			        "manifest '%.200s' line %d: includes nest deeper than 10 files",
			        path, inc->line);
			break;
		}
		char *sub = relative_to(path, inc->path, false);
		if (!sub) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		rc = load_tree(top, sub, constraint || inc->constraint, flags, depth + 1, seen,
		               n_seen, err);
		if (rc == ML_ENOENT) {
			ml_err_set(err, ML_ENOENT,
			           "manifest '%.200s' line %d: cannot read '%.200s'", path,
			           inc->line, sub);
			ml_err_hint(err, "an included file is taken from the including file's "
			                 "directory");
		}
		free(sub);
	}
	if (depth > 0)
		ml_requirements_free(r);
	return rc;
}

int ml_requirements_load_tree(ml_requirements **out, const char *path, unsigned flags, ml_err *err)
{
	ml_requirements *top = NULL;
	char **seen = NULL;
	size_t n_seen = 0;
	char real[4096];
	if (!realpath(path, real))
		ml_strlcpy(real, path, sizeof real);
	int rc = ml_requirements_load(&top, path, flags | ML_REQ_INCLUDES, err);
	if (!rc && push_str(&seen, &n_seen, dup_n(real, strlen(real))))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	/* the top file's includes, each with its own includes */
	size_t n_inc = top ? top->n_includes : 0;
	for (size_t k = 0; !rc && k < n_inc; k++) {
		const ml_include *inc = &top->includes[k];
		if (strstr(inc->path, "://")) {
			rc = ml_err_set(err, ML_EPARSE,
			                "manifest '%.200s' line %d: -%c %.200s: "
			                "including a file by URL is not supported",
			                path, inc->line, inc->constraint ? 'c' : 'r', inc->path);
			ml_err_hint(err, "download the file and include it by path");
			break;
		}
		char *sub = relative_to(path, inc->path, false);
		if (!sub) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		rc = load_tree(top, sub, inc->constraint, flags, 1, &seen, &n_seen, err);
		if (rc == ML_ENOENT) {
			ml_err_set(err, ML_ENOENT,
			           "manifest '%.200s' line %d: cannot read '%.200s'", path,
			           inc->line, sub);
			ml_err_hint(err, "an included file is taken from the including file's "
			                 "directory");
		}
		free(sub);
	}
	free_strs(seen, n_seen);
	if (rc) {
		ml_requirements_free(top);
		return rc;
	}
	*out = top;
	return 0;
}
