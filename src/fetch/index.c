/*
 * index.c - the package-index client: one project's files from a PEP 503
 * (HTML) or PEP 691 (JSON) "simple" index page, or from a pip --find-links
 * location (a directory, a single file, or an HTML page of links).
 *
 * The parsers are pure (text in, ml_project out) so tests can feed them
 * fixture pages; ml_index_project() and ml_find_links_project() add the
 * fetching. Nothing here decides which index to ask: that is
 * index_sources.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define CT_JSON        "application/vnd.pypi.simple.v1+json"
#define CT_HTML        "application/vnd.pypi.simple.v1+html"
#define HTML_ACCEPT    "text/html"
#define MAX_LOCAL_HTML ((size_t)64 << 20)

/* --- small helpers ---------------------------------------------------------- */

/* A malloc'd lower-case copy of s when it is a sha256 in hex (either
 * case); NULL with *bad set when it is not, NULL alone when out of memory. */
static char *sha256_dup(const char *s, bool *bad)
{
	char low[65];
	*bad = ml_sha256_hex_normalize(low, s) != 0;
	return *bad ? NULL : strdup(low);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s (n bytes); invalid escapes are kept as written.
 * *len (when non-NULL) gets the decoded length, which is more than
 * strlen() of the result when "%00" decoded to a NUL. */
static char *percent_decode_n(const char *s, size_t n, size_t *len);
static char *percent_decode(const char *s, size_t n)
{
	return percent_decode_n(s, n, NULL);
}

static char *percent_decode_n(const char *s, size_t n, size_t *len)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
		    (lo = hexval((unsigned char)s[i + 2])) >= 0) {
			d[j++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			d[j++] = s[i];
		}
	}
	d[j] = '\0';
	if (len)
		*len = j;
	return d;
}

/* Percent-encodes a local path for a file:// URL (RFC 8089). */
static int percent_encode_path(ml_buf *b, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int rc;
		if (isalnum(*p) || strchr("-._~/!$&'()*,;=:@", *p))
			rc = ml_buf_add(b, p, 1);
		else
			rc = ml_buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
		if (rc)
			return rc;
	}
	return 0;
}

static void utf8_put(ml_buf *b, unsigned long cp, int *rc)
{
	char u[4];
	size_t n;
	if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = 0xFFFD;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	*rc |= ml_buf_add(b, u, n);
}

/* Decodes HTML character references in s (n bytes): the named ones index
 * pages use (&amp; &lt; &gt; &quot; &apos; &nbsp;) and numeric ones
 * (&#62; &#x3E;). Anything else is kept as written. Returns NULL on ENOMEM. */
static char *html_unescape(const char *s, size_t n)
{
	static const struct {
		const char *name;
		unsigned long cp;
	} named[] = {{"amp", '&'},  {"lt", '<'},    {"gt", '>'},
	             {"quot", '"'}, {"apos", '\''}, {"nbsp", 0xA0}};
	ml_buf b = ML_BUF_INIT;
	int rc = ml_buf_add(&b, "", 0);
	for (size_t i = 0; i < n && rc == 0;) {
		if (s[i] != '&') {
			rc |= ml_buf_add(&b, s + i, 1);
			i++;
			continue;
		}
		const char *semi = memchr(s + i, ';', n - i);
		size_t elen = semi ? (size_t)(semi - (s + i)) - 1 : 0; /* between & and ; */
		bool done = false;
		if (semi && elen > 0 && elen < 12) {
			const char *e = s + i + 1;
			if (e[0] == '#') {
				char num[12];
				memcpy(num, e + 1, elen - 1);
				num[elen - 1] = '\0';
				bool x = num[0] == 'x' || num[0] == 'X';
				char *end;
				unsigned long cp = strtoul(num + x, &end, x ? 16 : 10);
				if (num[x] && *end == '\0' && isxdigit((unsigned char)num[x])) {
					utf8_put(&b, cp, &rc);
					done = true;
				}
			} else {
				for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
					if (strlen(named[k].name) == elen &&
					    strncmp(named[k].name, e, elen) == 0) {
						utf8_put(&b, named[k].cp, &rc);
						done = true;
						break;
					}
			}
		}
		if (done) {
			i += elen + 2;
		} else {
			rc |= ml_buf_add(&b, "&", 1);
			i++;
		}
	}
	if (rc) {
		ml_buf_release(&b);
		return NULL;
	}
	return ml_buf_detach(&b);
}

/* Copy of s with surrounding whitespace removed; NULL for empty or ENOMEM
 * (*nomem tells which). */
static char *trimmed_or_null(const char *s, bool *nomem)
{
	char *d = strdup(s);
	if (!d) {
		*nomem = true;
		return NULL;
	}
	ml_strtrim(d);
	if (!d[0]) {
		free(d);
		return NULL;
	}
	return d;
}

/* --- building a project ----------------------------------------------------- */

typedef struct builder {
	ml_project *p;
	size_t cap;
} builder;

void mlf_index_file_release(ml_index_file *f)
{
	free(f->filename);
	free(f->url);
	free(f->sha256);
	free(f->requires_python);
	free(f->yanked_reason);
	free(f->core_metadata_sha256);
}

void ml_project_free(ml_project *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_files; i++)
		mlf_index_file_release(&p->files[i]);
	free(p->files);
	free(p->name);
	free(p);
}

static int builder_init(builder *b)
{
	b->cap = 0;
	b->p = calloc(1, sizeof(*b->p));
	return b->p ? 0 : ML_ENOMEM;
}

/* Appends a zeroed file (size -1) and returns it, or NULL on ENOMEM. */
static ml_index_file *builder_add(builder *b)
{
	ml_project *p = b->p;
	if (p->n_files == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		ml_index_file *f = realloc(p->files, cap * sizeof(*f));
		if (!f)
			return NULL;
		p->files = f;
		b->cap = cap;
	}
	ml_index_file *f = &p->files[p->n_files++];
	memset(f, 0, sizeof(*f));
	f->size = -1;
	return f;
}

/* The URL without its fragment, and the fragment (after '#', or NULL). */
static int split_fragment(char **url_out, const char **frag, char *url)
{
	char *hash = strchr(url, '#');
	*frag = NULL;
	if (hash) {
		*hash = '\0';
		*frag = hash + 1;
	}
	*url_out = url;
	return 0;
}

/* Last path segment of an absolute URL, percent-decoded; NULL when the
 * path ends in '/' (a directory), when the segment decodes to a name with
 * a NUL byte ("%00": no file has such a name; the link is no file, as it
 * is no wheel name to pip), or on ENOMEM (*nomem). */
static char *url_filename(const char *url, bool *nomem)
{
	size_t end = strcspn(url, "?#");
	const char *start = url;
	const char *auth = strstr(url, "://");
	if (auth)
		start = auth + 3 + strcspn(auth + 3, "/?#");
	if (start >= url + end)
		return NULL;
	size_t s = end;
	while (s > (size_t)(start - url) && url[s - 1] != '/')
		s--;
	if (s == end)
		return NULL;
	size_t len = 0;
	char *d = percent_decode_n(url + s, end - s, &len);
	if (!d)
		*nomem = true;
	else if (len != strlen(d) || !len) {
		free(d);
		return NULL;
	}
	return d;
}

/* Extracts sha256=<hex> from a URL fragment ("sha256=ab..", "a=b&sha256=..").
 * Returns 0 (hash set or absent) or ML_EPARSE (a malformed sha256). */
static int fragment_sha256(char **out, const char *frag, bool *nomem)
{
	*out = NULL;
	for (const char *p = frag; p && *p;) {
		size_t n = strcspn(p, "&");
		if (n > 7 && strncasecmp(p, "sha256=", 7) == 0) {
			char h[80];
			if (n - 7 >= sizeof(h))
				return ML_EPARSE;
			memcpy(h, p + 7, n - 7);
			h[n - 7] = '\0';
			bool bad;
			*out = sha256_dup(h, &bad);
			if (bad)
				return ML_EPARSE;
			if (!*out)
				*nomem = true;
			return 0;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return 0;
}

/* Major number of an API version string ("1.1" -> 1); -1 if not numeric. */
static long api_major(const char *v)
{
	if (!v || !isdigit((unsigned char)v[0]))
		return -1;
	return strtol(v, NULL, 10);
}

/* --- PEP 691 JSON ----------------------------------------------------------- */

static int json_hash_object(char **out, const cJSON *hashes, const char *page, const char *what,
                            ml_err *err)
{
	*out = NULL;
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(hashes, "sha256");
	if (!cJSON_IsString(h))
		return 0;
	bool bad;
	*out = sha256_dup(h->valuestring, &bad);
	if (bad)
		return ml_err_set(err, ML_EPARSE,
		                  "index page '%s': %s has a sha256 that is not 64 hex digits",
		                  page, what);
	return *out ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
}

static int json_file(ml_index_file *f, const cJSON *item, const char *base_url, const char *page,
                     size_t idx, ml_err *err)
{
	char what[300];
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(item, "filename");
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(item, "url");
	if (!cJSON_IsObject(item) || !cJSON_IsString(fn) || !fn->valuestring[0])
		return ml_err_set(err, ML_EPARSE, "index page '%s': file %zu has no filename", page,
		                  idx + 1);
	snprintf(what, sizeof(what), "file '%s'", fn->valuestring);
	if (!cJSON_IsString(url) || !url->valuestring[0])
		return ml_err_set(err, ML_EPARSE, "index page '%s': %s has no url", page, what);
	f->filename = strdup(fn->valuestring);
	if (!f->filename)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	char *abs;
	int rc = ml_url_resolve(&abs, base_url, url->valuestring, err);
	if (rc)
		return rc;
	const char *frag;
	split_fragment(&f->url, &frag, abs);

	rc = json_hash_object(&f->sha256, cJSON_GetObjectItemCaseSensitive(item, "hashes"), page,
	                      what, err);
	if (rc)
		return rc;

	const cJSON *size = cJSON_GetObjectItemCaseSensitive(item, "size");
	if (cJSON_IsNumber(size) && size->valuedouble >= 0 &&
	    size->valuedouble < 9007199254740992.0 &&
	    size->valuedouble == (double)(int64_t)size->valuedouble)
		f->size = (int64_t)size->valuedouble;

	bool nomem = false;
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(item, "requires-python");
	if (cJSON_IsString(rp))
		f->requires_python = trimmed_or_null(rp->valuestring, &nomem);

	const cJSON *y = cJSON_GetObjectItemCaseSensitive(item, "yanked");
	if (cJSON_IsTrue(y)) {
		f->yanked = true;
	} else if (cJSON_IsString(y)) {
		f->yanked = true;
		f->yanked_reason = trimmed_or_null(y->valuestring, &nomem);
	}

	const cJSON *md = cJSON_GetObjectItemCaseSensitive(item, "core-metadata");
	if (!md)
		md = cJSON_GetObjectItemCaseSensitive(item, "dist-info-metadata");
	if (cJSON_IsTrue(md)) {
		f->has_core_metadata = true;
	} else if (cJSON_IsObject(md)) {
		f->has_core_metadata = true;
		char mwhat[320];
		snprintf(mwhat, sizeof(mwhat), "the metadata of %s", what);
		rc = json_hash_object(&f->core_metadata_sha256, md, page, mwhat, err);
		if (rc)
			return rc;
	}
	return nomem ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}

int ml_index_parse_json(ml_project **out, const char *base_url, const char *text, size_t len,
                        ml_err *err)
{
	char page[1024];
	ml_url_redact(page, sizeof(page), base_url);
	cJSON *root = cJSON_ParseWithLength(text ? text : "", text ? len : 0);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return ml_err_set(err, ML_EPARSE, "index page '%s' is not a PEP 691 JSON object",
		                  page);
	}
	builder b = {0};
	int rc = 0;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "meta");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, "api-version");
	if (cJSON_IsString(ver) && api_major(ver->valuestring) != 1) {
		rc = ml_err_set(
		        err, ML_EPARSE,
		        "index page '%s' uses API version %s; only 1.x is understood (PEP 691)",
		        page, ver->valuestring);
		goto out;
	}
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(root, "files");
	if (!cJSON_IsArray(files)) {
		rc = ml_err_set(err, ML_EPARSE, "index page '%s' has no \"files\" list", page);
		goto out;
	}
	if (builder_init(&b)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (cJSON_IsString(name) && name->valuestring[0]) {
		b.p->name = ml_pep503_normalize(name->valuestring, strlen(name->valuestring));
		if (!b.p->name) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
	}
	size_t idx = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, files)
	{
		ml_index_file *f = builder_add(&b);
		if (!f) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		rc = json_file(f, item, base_url, page, idx++, err);
		if (rc)
			goto out;
	}
	*out = b.p;
	b.p = NULL;
out:
	ml_project_free(b.p);
	cJSON_Delete(root);
	return rc;
}

/* --- PEP 503 HTML ------------------------------------------------------------ */

/* The attributes of one tag that the index format uses. Values are
 * entity-decoded, NULL when absent. */
typedef struct tag_attrs {
	char *href;
	char *requires_python;
	char *yanked;
	char *core_metadata;
	char *dist_info_metadata;
	char *name;
	char *content;
} tag_attrs;

static void tag_attrs_release(tag_attrs *a)
{
	free(a->href);
	free(a->requires_python);
	free(a->yanked);
	free(a->core_metadata);
	free(a->dist_info_metadata);
	free(a->name);
	free(a->content);
	memset(a, 0, sizeof(*a));
}

static char **attr_slot(tag_attrs *a, const char *name, size_t n)
{
	static const struct {
		const char *name;
		size_t off;
	} known[] = {
	        {"href", offsetof(tag_attrs, href)},
	        {"data-requires-python", offsetof(tag_attrs, requires_python)},
	        {"data-yanked", offsetof(tag_attrs, yanked)},
	        {"data-core-metadata", offsetof(tag_attrs, core_metadata)},
	        {"data-dist-info-metadata", offsetof(tag_attrs, dist_info_metadata)},
	        {"name", offsetof(tag_attrs, name)},
	        {"content", offsetof(tag_attrs, content)},
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && strncasecmp(known[i].name, name, n) == 0)
			return (char **)((char *)a + known[i].off);
	return NULL;
}

static bool html_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* Parses attributes from *pp up to and past the closing '>'. Returns 0 or
 * ML_ENOMEM. */
static int parse_attrs(tag_attrs *a, const char **pp, const char *end)
{
	const char *p = *pp;
	while (p < end) {
		while (p < end && (html_space(*p) || *p == '/'))
			p++;
		if (p >= end)
			break;
		if (*p == '>') {
			p++;
			break;
		}
		const char *name = p;
		while (p < end && !html_space(*p) && *p != '=' && *p != '>' && *p != '/')
			p++;
		size_t nlen = (size_t)(p - name);
		if (nlen == 0) {
			p++;
			continue;
		}
		while (p < end && html_space(*p))
			p++;
		const char *val = "";
		size_t vlen = 0;
		if (p < end && *p == '=') {
			p++;
			while (p < end && html_space(*p))
				p++;
			if (p < end && (*p == '"' || *p == '\'')) {
				char q = *p++;
				val = p;
				while (p < end && *p != q)
					p++;
				vlen = (size_t)(p - val);
				if (p < end)
					p++;
			} else {
				val = p;
				while (p < end && !html_space(*p) && *p != '>')
					p++;
				vlen = (size_t)(p - val);
			}
		}
		char **slot = attr_slot(a, name, nlen);
		if (slot && !*slot) { /* the first of duplicated attributes wins */
			*slot = html_unescape(val, vlen);
			if (!*slot)
				return ML_ENOMEM;
		}
	}
	*pp = p;
	return 0;
}

/* PEP 658/714 attribute value: "true", "sha256=<hex>", other hash names. */
static int metadata_attr(ml_index_file *f, const char *v, const char *page, ml_err *err)
{
	if (!v || strcasecmp(v, "false") == 0)
		return 0;
	f->has_core_metadata = true;
	if (strncasecmp(v, "sha256=", 7) == 0) {
		bool bad;
		f->core_metadata_sha256 = sha256_dup(v + 7, &bad);
		if (bad)
			return ml_err_set(err, ML_EPARSE,
			                  "index page '%s': the metadata of file '%s' has a sha256 "
			                  "that is not 64 hex digits",
			                  page, f->filename);
		if (!f->core_metadata_sha256)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	return 0;
}

static int html_anchor(builder *b, const tag_attrs *a, const char *base, const char *page,
                       ml_err *err)
{
	if (!a->href || !a->href[0])
		return 0;
	char *abs;
	int rc = ml_url_resolve(&abs, base, a->href, err);
	if (rc)
		return rc;
	const char *frag;
	char *url;
	split_fragment(&url, &frag, abs);
	bool nomem = false;
	char *filename = url_filename(url, &nomem);
	if (!filename) {
		free(abs);
		return nomem ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
	}
	ml_index_file *f = builder_add(b);
	if (!f) {
		free(abs);
		free(filename);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	f->url = url;
	f->filename = filename;
	if (fragment_sha256(&f->sha256, frag, &nomem))
		return ml_err_set(
		        err, ML_EPARSE,
		        "index page '%s': file '%s' has a sha256 that is not 64 hex digits", page,
		        f->filename);
	if (a->requires_python)
		f->requires_python = trimmed_or_null(a->requires_python, &nomem);
	if (a->yanked) {
		f->yanked = true;
		f->yanked_reason = trimmed_or_null(a->yanked, &nomem);
	}
	rc = metadata_attr(f, a->core_metadata ? a->core_metadata : a->dist_info_metadata, page,
	                   err);
	if (rc)
		return rc;
	return nomem ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}

static bool tag_is(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);
	if ((size_t)(end - p) < n || strncasecmp(p, name, n) != 0)
		return false;
	return p + n == end || html_space(p[n]) || p[n] == '>' || p[n] == '/';
}

int ml_index_parse_html(ml_project **out, const char *base_url, const char *text, size_t len,
                        ml_err *err)
{
	char page[1024];
	ml_url_redact(page, sizeof(page), base_url);
	builder b = {0};
	char *base = NULL;
	bool have_base_tag = false;
	int rc = 0;
	if (builder_init(&b))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	base = strdup(base_url ? base_url : "");
	if (!base) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	const char *p = text ? text : "", *end = p + (text ? len : 0);
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		if (!lt)
			break;
		p = lt + 1;
		if ((size_t)(end - p) >= 3 && strncmp(p, "!--", 3) == 0) {
			const char *q = p + 3;
			while (q + 2 < end && strncmp(q, "-->", 3) != 0)
				q++;
			p = q + 3 <= end ? q + 3 : end;
			continue;
		}
		bool is_a = tag_is(p, end, "a"), is_base = tag_is(p, end, "base"),
		     is_meta = tag_is(p, end, "meta");
		if (!is_a && !is_base && !is_meta)
			continue;
		p += is_a ? 1 : 4;
		tag_attrs a = {0};
		if (parse_attrs(&a, &p, end)) {
			tag_attrs_release(&a);
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		if (is_a) {
			rc = html_anchor(&b, &a, base, page, err);
		} else if (is_base && a.href && !have_base_tag) {
			char *nb;
			have_base_tag = true;
			rc = ml_url_resolve(&nb, base, a.href, err);
			if (rc == 0) {
				free(base);
				base = nb;
			}
		} else if (is_meta && a.name &&
		           strcasecmp(a.name, "pypi:repository-version") == 0 && a.content &&
		           api_major(a.content) != 1) {
			rc = ml_err_set(err, ML_EPARSE,
			                "index page '%s' uses repository version %s; only 1.x is "
			                "understood (PEP 629)",
			                page, a.content);
		}
		tag_attrs_release(&a);
		if (rc)
			goto out;
	}
	*out = b.p;
	b.p = NULL;
out:
	ml_project_free(b.p);
	free(base);
	return rc;
}

/* --- fetching ----------------------------------------------------------------- */

static bool has_scheme(const char *url, const char *scheme)
{
	size_t n = strlen(scheme);
	return strncasecmp(url, scheme, n) == 0 && url[n] == ':';
}

/* Sets *out to the local path of a file:// URL ("file:///a%20b" -> "/a b";
 * host "" or "localhost" only; caller frees). Returns 0, ML_EFAIL (another
 * host) or ML_ENOMEM. */
static int file_url_path(char **out, const char *url, ml_err *err)
{
	const char *p = url + 5; /* after "file:" */
	if (strncmp(p, "//", 2) == 0) {
		p += 2;
		size_t hl = strcspn(p, "/");
		if (hl != 0 && !(hl == 9 && strncasecmp(p, "localhost", 9) == 0)) {
			char shown[512];
			ml_url_redact(shown, sizeof(shown), url);
			return ml_err_set(err, ML_EFAIL,
			                  "cannot use '%s': file URLs must name a local path",
			                  shown);
		}
		p += hl;
	}
	char *path = percent_decode(p, strcspn(p, "?#"));
	if (!path)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
#ifdef _WIN32
	/* "file:///C:/a" names C:/a */
	if (path[0] == '/' && isalpha((unsigned char)path[1]) && path[2] == ':')
		memmove(path, path + 1, strlen(path));
#endif
	*out = path;
	return 0;
}

/* Media type of a Content-Type value, lower-cased, parameters dropped. */
static void media_type(char *dst, size_t dstsz, const char *ct)
{
	size_t n = strcspn(ct, ";");
	while (n > 0 && html_space(ct[n - 1]))
		n--;
	while (n > 0 && html_space(*ct)) {
		ct++;
		n--;
	}
	if (n >= dstsz)
		n = dstsz - 1;
	for (size_t i = 0; i < n; i++)
		dst[i] = (char)tolower((unsigned char)ct[i]);
	dst[n] = '\0';
}

/* Parses a fetched page by its Content-Type (sniffing when there is none). */
static int parse_page(ml_project **out, const ml_http_response *r, ml_err *err)
{
	const char *text = ml_buf_cstr(&r->body);
	size_t len = r->body.len;
	char page[1024];
	ml_url_redact(page, sizeof(page), r->effective_url);
	if (!r->content_type) {
		size_t i = 0;
		while (i < len && isspace((unsigned char)text[i]))
			i++;
		if (i < len && text[i] == '{')
			return ml_index_parse_json(out, r->effective_url, text, len, err);
		return ml_index_parse_html(out, r->effective_url, text, len, err);
	}
	char mt[128];
	media_type(mt, sizeof(mt), r->content_type);
	if (strcmp(mt, CT_JSON) == 0)
		return ml_index_parse_json(out, r->effective_url, text, len, err);
	if (strcmp(mt, CT_HTML) == 0 || strcmp(mt, "text/html") == 0)
		return ml_index_parse_html(out, r->effective_url, text, len, err);
	ml_err_set(
	        err, ML_EPARSE,
	        "index page '%s' came back as '%s', which is neither PEP 691 JSON nor PEP 503 HTML",
	        page, mt);
	ml_err_hint(err, "check that the index URL points at a simple repository API (it usually "
	                 "ends in /simple/)");
	return ML_EPARSE;
}

/* GETs one page under src's transport settings. With src->cache, an
 * http(s) page stored earlier is revalidated (If-None-Match /
 * If-Modified-Since) and reused on 304; a fresh page with validators is
 * stored. A failure of the page cache itself never fails the fetch. */
static int fetch_page(ml_http_response *out, const ml_index_source *src, const ml_index_opts *o,
                      const char *url, const char *accept, ml_err *err)
{
	ml_index_opts defaults = ML_INDEX_OPTS_INIT;
	if (!o)
		o = &defaults;
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	req.accept = accept;
	req.http.trusted_hosts = src->trusted_hosts;
	req.http.n_trusted = src->n_trusted;
	req.http.cert = src->cert;
	req.http.connect_timeout_s = o->connect_timeout_s;
	req.http.low_speed_time_s = o->low_speed_time_s;
	req.failure = o->failure;
	bool cacheable = o->cache && (has_scheme(url, "http") || has_scheme(url, "https"));
	ml_http_response stored = {0};
	ml_err ignored = ML_ERR_INIT;
	bool have = cacheable &&
	            ml_cache_page_get(&stored, o->cache, url, accept ? accept : "", &ignored) == 0;
	if (have) {
		req.if_none_match = stored.etag;
		req.if_modified_since = stored.last_modified;
	}
	ml_http_response r = {0};
	int rc = ml_http_get(&r, &req, err);
	if (rc == 0 && r.status == 304) {
		if (!have) {
			char shown[1024];
			ml_url_redact(shown, sizeof(shown), url);
			ml_http_response_release(&r);
			rc = ml_err_set(
			        err, ML_ENET,
			        "'%s' answered 304 Not Modified to an unconditional request",
			        shown);
			goto out;
		}
		/* the stored page is current: keep it, with any newer validators */
		ml_buf_release(&r.body);
		r.body = stored.body;
		stored.body = (ml_buf)ML_BUF_INIT;
		free(r.content_type);
		r.content_type = stored.content_type;
		stored.content_type = NULL;
		if (!r.etag) {
			r.etag = stored.etag;
			stored.etag = NULL;
		}
		if (!r.last_modified) {
			r.last_modified = stored.last_modified;
			stored.last_modified = NULL;
		}
		r.status = 200;
	} else if (rc == 0 && cacheable && r.status == 200) {
		ml_cache_page_put(o->cache, url, accept ? accept : "", &r, &ignored);
	}
	if (rc == 0)
		*out = r;
out:
	ml_http_response_release(&stored);
	return rc;
}

int ml_index_project(ml_project **out, const ml_index_source *src, const char *name, ml_err *err)
{
	return ml_index_project_opts(out, src, name, NULL, err);
}

int ml_index_project_opts(ml_project **out, const ml_index_source *src, const char *name,
                          const ml_index_opts *o, ml_err *err)
{
	if (!src || !src->url || !src->url[0] || !name || !name[0])
		return ml_err_set(err, ML_EFAIL, "no index URL or project name given");
	char *norm = ml_pep503_normalize(name, strlen(name));
	if (!norm)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_http_response r = {0};
	ml_project *p = NULL;
	size_t blen = strlen(src->url);
	char *url = ml_asprintf("%s%s%s/", src->url, src->url[blen - 1] == '/' ? "" : "/", norm);
	int rc = 0;
	if (!url) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (has_scheme(url, "file")) {
		char *path;
		rc = file_url_path(&path, url, err);
		if (rc)
			goto out;
		struct stat st;
		bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		free(path);
		if (dir) {
			char *u2 = ml_asprintf("%sindex.html", url);
			if (!u2) {
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				goto out;
			}
			free(url);
			url = u2;
		}
	}
	rc = fetch_page(&r, src, o, url, ML_HTTP_ACCEPT_INDEX, err);
	if (rc == ML_ENOENT) {
		char shown[900];
		ml_url_redact(shown, sizeof(shown), src->url);
		ml_err_set(err, ML_ENOENT, "project '%s' not found on index '%s'", name, shown);
		ml_err_hint(err,
		            "check the name, or add the index that has it with --extra-index-url");
	}
	if (rc)
		goto out;
	rc = parse_page(&p, &r, err);
	if (rc)
		goto out;
	free(p->name);
	p->name = norm;
	norm = NULL;
	*out = p;
	p = NULL;
out:
	ml_project_free(p);
	ml_http_response_release(&r);
	free(url);
	free(norm);
	return rc;
}

/* --- --find-links ------------------------------------------------------------- */

static bool ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Does filename belong to the project with normalized name norm? */
static bool filename_matches(const char *filename, const char *norm)
{
	static const char *const sdist[] = {".tar.gz", ".tgz", ".tar.bz2", ".tbz",
	                                    ".tar.xz", ".txz", ".tar",     ".zip"};
	size_t nl = strlen(norm);
	if (ends_with_ci(filename, ".whl")) {
		size_t n = strcspn(filename, "-");
		char *d = ml_pep503_normalize(filename, n);
		bool ok = d && strcmp(d, norm) == 0;
		free(d);
		return ok;
	}
	for (size_t i = 0; i < sizeof(sdist) / sizeof(sdist[0]); i++) {
		if (!ends_with_ci(filename, sdist[i]))
			continue;
		char *d = ml_pep503_normalize(filename, strlen(filename) - strlen(sdist[i]));
		bool ok = d && strncmp(d, norm, nl) == 0 && d[nl] == '-' &&
		          isdigit((unsigned char)d[nl + 1]);
		free(d);
		return ok;
	}
	return false;
}

/* Keeps only the files of project norm, preserving order. */
static void project_filter(ml_project *p, const char *norm)
{
	size_t j = 0;
	for (size_t i = 0; i < p->n_files; i++) {
		if (filename_matches(p->files[i].filename, norm))
			p->files[j++] = p->files[i];
		else
			mlf_index_file_release(&p->files[i]);
	}
	p->n_files = j;
}

static char *file_url_for(const char *abspath)
{
	ml_buf b = ML_BUF_INIT;
#ifdef _WIN32
	/* "C:\a b" -> "file:///C:/a%20b" (RFC 8089, E.2): the drive is part
	 * of the path, never the host. */
	char *fwd = strdup(abspath);
	if (!fwd)
		return NULL;
	for (char *c = fwd; *c; c++)
		if (*c == '\\')
			*c = '/';
	bool drive = isalpha((unsigned char)fwd[0]) && fwd[1] == ':';
	int rc = ml_buf_puts(&b, drive ? "file:///" : "file://") || percent_encode_path(&b, fwd);
	free(fwd);
	if (rc) {
		ml_buf_release(&b);
		return NULL;
	}
#else
	if (ml_buf_puts(&b, "file://") || percent_encode_path(&b, abspath)) {
		ml_buf_release(&b);
		return NULL;
	}
#endif
	return ml_buf_detach(&b);
}

/* Adds one local file (dir/filename, or path itself when filename is its
 * base name) to the project. */
static int add_local_file(builder *b, const char *path, const char *filename, ml_err *err)
{
	char hex[65];
	uint64_t size;
	int rc = ml_sha256_file(hex, &size, path, err);
	if (rc == ML_ENOENT) /* gone since it was listed: a read error here */
		rc = ml_err_set(err, ML_EIO, "cannot open '%s': %s", path, strerror(ENOENT));
	if (rc)
		return rc;
	ml_index_file *f = builder_add(b);
	if (!f)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	f->filename = strdup(filename);
	f->url = file_url_for(path);
	f->sha256 = strdup(hex);
	f->size = (int64_t)size;
	if (!f->filename || !f->url || !f->sha256)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return 0;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const ml_index_file *)a)->filename, ((const ml_index_file *)b)->filename);
}

static int list_directory(builder *b, const char *dir, const char *norm, ml_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return ml_err_set(err, ML_EIO, "cannot list find-links directory '%s': %s", dir,
		                  strerror(errno));
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !filename_matches(e->d_name, norm))
			continue;
		char *path = ml_asprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		                         e->d_name);
		if (!path) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = add_local_file(b, path, e->d_name, err);
		free(path);
		if (rc)
			break;
	}
	closedir(d);
	if (rc == 0 && b->p->n_files > 1)
		qsort(b->p->files, b->p->n_files, sizeof(ml_index_file), cmp_files);
	return rc;
}

static int find_links_local(builder *b, const char *location, const char *norm, ml_err *err)
{
	char *path = NULL;
	int rc = has_scheme(location, "file") ? file_url_path(&path, location, err) : 0;
	if (rc)
		return rc;
	if (!path && !(path = strdup(location)))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	char abs[PATH_MAX];
	struct stat st;
	if (stat(path, &st) != 0 || !realpath(path, abs)) {
		rc = errno == ENOENT || errno == ENOTDIR
		             ? ml_err_set(err, ML_ENOENT, "find-links location '%s' does not exist",
		                          path)
		             : ml_err_set(err, ML_EIO, "cannot use find-links location '%s': %s",
		                          path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = list_directory(b, abs, norm, err);
	} else if (ends_with_ci(abs, ".html") || ends_with_ci(abs, ".htm")) {
		char *text = NULL, *url = file_url_for(abs);
		size_t len = 0;
		ml_project *page = NULL;
		rc = url ? ml_os_read_file(&text, &len, NULL, abs, MAX_LOCAL_HTML, err)
		         : ml_err_set(err, ML_ENOMEM, "out of memory");
		if (rc == 0)
			rc = ml_index_parse_html(&page, url, text, len, err);
		if (rc == 0) {
			ml_project_free(b->p);
			b->p = page;
			project_filter(b->p, norm);
		}
		free(text);
		free(url);
	} else {
		const char *base = strrchr(abs, '/');
		base = base ? base + 1 : abs;
		if (filename_matches(base, norm))
			rc = add_local_file(b, abs, base, err);
	}
out:
	free(path);
	return rc;
}

int ml_find_links_project(ml_project **out, const ml_index_source *src, const char *name,
                          ml_err *err)
{
	return ml_find_links_project_opts(out, src, name, NULL, err);
}

int ml_find_links_project_opts(ml_project **out, const ml_index_source *src, const char *name,
                               const ml_index_opts *o, ml_err *err)
{
	if (!src || !src->url || !src->url[0] || !name || !name[0])
		return ml_err_set(err, ML_EFAIL, "no find-links location or project name given");
	char *norm = ml_pep503_normalize(name, strlen(name));
	builder b = {0};
	ml_http_response r = {0};
	int rc = 0;
	if (!norm || builder_init(&b)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (has_scheme(src->url, "http") || has_scheme(src->url, "https")) {
		ml_project *page = NULL;
		rc = fetch_page(&r, src, o, src->url, HTML_ACCEPT, err);
		if (rc == 0)
			rc = parse_page(&page, &r, err);
		if (rc)
			goto out;
		ml_project_free(b.p);
		b.p = page;
		project_filter(b.p, norm);
	} else {
		rc = find_links_local(&b, src->url, norm, err);
		if (rc)
			goto out;
	}
	free(b.p->name);
	b.p->name = norm;
	norm = NULL;
	*out = b.p;
	b.p = NULL;
out:
	ml_project_free(b.p);
	ml_http_response_release(&r);
	free(norm);
	return rc;
}
