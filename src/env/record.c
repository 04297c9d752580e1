/*
 * record.c - the text files inside a wheel's .dist-info directory that an
 * installer must read and write: RECORD (PEP 376 "RECORD", a CSV file as
 * Python's csv module reads and writes it), WHEEL (PEP 427, "Key: value"
 * lines) and entry_points.txt (PyPA "Entry points specification", INI).
 *
 * All parsers are pure (text in, structures out) so the fuzz target
 * tests/fuzz/fuzz_record.c can drive them directly.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* --- RECORD ---------------------------------------------------------------------- */

void ml_record_free(ml_record *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->rows[i].path);
		free(r->rows[i].hash);
	}
	free(r->rows);
	free(r);
}

/* Reads one CSV record starting at *pos into fields (at most 4 kept, *nf
 * counts all). Returns 0, 1 at end of text, ML_EPARSE or ML_ENOMEM. */
static int csv_row(ml_buf fields[4], size_t *nf, const char *t, size_t len, size_t *pos, int *line,
                   ml_err *err)
{
	size_t i = *pos;
	*nf = 0;
	if (i >= len)
		return 1;
	int start_line = *line;
	for (;;) {
		ml_buf *f = *nf < 4 ? &fields[*nf] : NULL;
		if (f) {
			f->len = 0;
			if (ml_buf_add(f, "", 0))
				return ML_ENOMEM;
		}
		(*nf)++;
		if (i < len && t[i] == '"') {
			i++;
			for (;;) {
				if (i >= len)
					return ml_err_set(
					        err, ML_EPARSE,
					        "RECORD line %d: unterminated quoted field",
					        start_line);
				if (t[i] == '"') {
					if (i + 1 < len && t[i + 1] == '"') {
						if (f && ml_buf_add(f, "\"", 1))
							return ML_ENOMEM;
						i += 2;
						continue;
					}
					i++;
					break;
				}
				if (t[i] == '\n')
					(*line)++;
				if (f && ml_buf_add(f, &t[i], 1))
					return ML_ENOMEM;
				i++;
			}
			if (i < len && t[i] != ',' && t[i] != '\n' && t[i] != '\r')
				return ml_err_set(err, ML_EPARSE,
				                  "RECORD line %d: text after a closing quote",
				                  *line);
		} else {
			size_t s = i;
			while (i < len && t[i] != ',' && t[i] != '\n' && t[i] != '\r')
				i++;
			if (f && ml_buf_add(f, t + s, i - s))
				return ML_ENOMEM;
		}
		if (i < len && t[i] == ',') {
			i++;
			continue;
		}
		break;
	}
	if (i < len && t[i] == '\r')
		i++;
	if (i < len && t[i] == '\n')
		i++;
	(*line)++;
	*pos = i;
	return 0;
}

int ml_record_parse(ml_record **out, const char *text, size_t len, ml_err *err)
{
	if (memchr(text, '\0', len))
		return ml_err_set(err, ML_EPARSE, "RECORD contains a NUL byte");
	ml_record *r = calloc(1, sizeof *r);
	ml_buf f[4] = {ML_BUF_INIT, ML_BUF_INIT, ML_BUF_INIT, ML_BUF_INIT};
	size_t cap = 0, pos = 0, nf;
	int line = 1, rc = 0;
	if (!r)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	for (;;) {
		int row_line = line;
		rc = csv_row(f, &nf, text, len, &pos, &line, err);
		if (rc == 1) {
			rc = 0;
			break;
		}
		if (rc == ML_ENOMEM)
			ml_err_set(err, ML_ENOMEM, "out of memory");
		if (rc)
			goto fail;
		if (nf == 1 && f[0].len == 0)
			continue; /* blank line */
		if (nf != 3) {
			rc = ml_err_set(err, ML_EPARSE,
			                "RECORD line %d: %zu fields, expected 3 (path, hash, size)",
			                row_line, nf);
			goto fail;
		}
		if (f[0].len == 0) {
			rc = ml_err_set(err, ML_EPARSE, "RECORD line %d: empty path", row_line);
			goto fail;
		}
		int64_t size = -1;
		if (f[2].len) {
			size = 0;
			for (size_t k = 0; k < f[2].len; k++) {
				char c = f[2].data[k];
				if (c < '0' || c > '9' || size > (INT64_MAX - 9) / 10) {
					rc = ml_err_set(err, ML_EPARSE,
					                "RECORD line %d: size '%.40s' is not a "
					                "number of bytes",
					                row_line, f[2].data);
					goto fail;
				}
				size = size * 10 + (c - '0');
			}
		}
		if (r->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			ml_record_row *v = realloc(r->rows, nc * sizeof *v);
			if (!v) {
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				goto fail;
			}
			r->rows = v;
			cap = nc;
		}
		ml_record_row *row = &r->rows[r->n];
		row->path = strdup(ml_buf_cstr(&f[0]));
		row->hash = strdup(ml_buf_cstr(&f[1]));
		row->size = size;
		r->n++;
		if (!row->path || !row->hash) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto fail;
		}
	}
	for (int k = 0; k < 4; k++)
		ml_buf_release(&f[k]);
	*out = r;
	return 0;
fail:
	for (int k = 0; k < 4; k++)
		ml_buf_release(&f[k]);
	ml_record_free(r);
	return rc;
}

static int csv_field(ml_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n"))
		return ml_buf_puts(b, s);
	if (ml_buf_puts(b, "\""))
		return ML_ENOMEM;
	for (; *s; s++)
		if ((*s == '"' && ml_buf_add(b, "\"\"", 2)) || (*s != '"' && ml_buf_add(b, s, 1)))
			return ML_ENOMEM;
	return ml_buf_puts(b, "\"");
}

int ml_record_format(ml_buf *b, const ml_record *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const ml_record_row *row = &r->rows[i];
		if (csv_field(b, row->path) || ml_buf_puts(b, ",") ||
		    csv_field(b, row->hash ? row->hash : "") || ml_buf_puts(b, ","))
			return ML_ENOMEM;
		if (row->size >= 0 && ml_buf_printf(b, "%lld", (long long)row->size))
			return ML_ENOMEM;
		if (ml_buf_puts(b, "\n"))
			return ML_ENOMEM;
	}
	return 0;
}

/* --- WHEEL ------------------------------------------------------------------------ */

int ml_wheel_meta_parse(ml_wheel_meta *out, const char *text, size_t len, ml_err *err)
{
	ml_wheel_meta m = {0};
	bool have_version = false;
	size_t i = 0;
	int line = 0;
	while (i < len) {
		size_t s = i;
		while (i < len && text[i] != '\n')
			i++;
		size_t e = i;
		if (i < len)
			i++;
		line++;
		if (e > s && text[e - 1] == '\r')
			e--;
		if (e == s || text[s] == ' ' || text[s] == '\t')
			continue; /* blank, or a continuation of a header we don't use */
		const char *colon = memchr(text + s, ':', e - s);
		if (!colon)
			return ml_err_set(err, ML_EPARSE, "WHEEL line %d: not a 'Key: value' line",
			                  line);
		size_t klen = (size_t)(colon - (text + s));
		const char *v = colon + 1;
		while (v < text + e && (*v == ' ' || *v == '\t'))
			v++;
		size_t vlen = (size_t)(text + e - v);
		while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
			vlen--;
		if (klen == 13 && strncasecmp(text + s, "Wheel-Version", 13) == 0) {
			int maj = 0, min = 0;
			size_t k = 0, d1 = 0, d2 = 0;
			while (k < vlen && isdigit((unsigned char)v[k]) && d1 < 6)
				maj = maj * 10 + (v[k++] - '0'), d1++;
			if (k < vlen && v[k] == '.')
				k++;
			while (k < vlen && isdigit((unsigned char)v[k]) && d2 < 6)
				min = min * 10 + (v[k++] - '0'), d2++;
			if (!d1 || !d2 || k != vlen)
				return ml_err_set(err, ML_EPARSE,
				                  "WHEEL line %d: Wheel-Version '%.*s' is not M.N",
				                  line, (int)(vlen > 40 ? 40 : vlen), v);
			m.version_major = maj;
			m.version_minor = min;
			have_version = true;
		} else if (klen == 15 && strncasecmp(text + s, "Root-Is-Purelib", 15) == 0) {
			m.root_is_purelib = vlen == 4 && strncasecmp(v, "true", 4) == 0;
		} else if (klen == 9 && strncasecmp(text + s, "Generator", 9) == 0) {
			size_t n = vlen < sizeof m.generator - 1 ? vlen : sizeof m.generator - 1;
			memcpy(m.generator, v, n);
			m.generator[n] = '\0';
		}
	}
	if (!have_version)
		return ml_err_set(err, ML_EPARSE, "WHEEL has no Wheel-Version");
	*out = m;
	return 0;
}

/* --- entry_points.txt ---------------------------------------------------------------- */

void ml_entry_points_free(ml_entry_points *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].group);
		free(e->v[i].name);
		free(e->v[i].value);
	}
	free(e->v);
	free(e);
}

static char *dup_trim(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int ml_entry_points_parse(ml_entry_points **out, const char *text, size_t len, ml_err *err)
{
	if (memchr(text, '\0', len))
		return ml_err_set(err, ML_EPARSE, "entry_points.txt contains a NUL byte");
	ml_entry_points *ep = calloc(1, sizeof *ep);
	char *group = NULL;
	size_t cap = 0, i = 0;
	int line = 0, rc = 0;
	if (!ep)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	while (i < len) {
		size_t s = i;
		while (i < len && text[i] != '\n')
			i++;
		size_t e = i;
		if (i < len)
			i++;
		line++;
		while (s < e && isspace((unsigned char)text[s]))
			s++;
		while (e > s && isspace((unsigned char)text[e - 1]))
			e--;
		if (s == e || text[s] == '#' || text[s] == ';')
			continue;
		if (text[s] == '[') {
			if (text[e - 1] != ']' || e - s < 3) {
				rc = ml_err_set(err, ML_EPARSE,
				                "entry_points.txt line %d: malformed section",
				                line);
				goto fail;
			}
			free(group);
			if (!(group = dup_trim(text + s + 1, e - s - 2))) {
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				goto fail;
			}
			continue;
		}
		const char *eq = memchr(text + s, '=', e - s);
		if (!eq || eq == text + s || !group) {
			rc = ml_err_set(
			        err, ML_EPARSE,
			        !group ? "entry_points.txt line %d: entry before any [section]"
			               : "entry_points.txt line %d: expected 'name = value'",
			        line);
			goto fail;
		}
		if (ep->n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			ml_entry_point *v = realloc(ep->v, nc * sizeof *v);
			if (!v) {
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				goto fail;
			}
			ep->v = v;
			cap = nc;
		}
		ml_entry_point *p = &ep->v[ep->n];
		p->group = strdup(group);
		p->name = dup_trim(text + s, (size_t)(eq - (text + s)));
		p->value = dup_trim(eq + 1, (size_t)(text + e - eq - 1));
		ep->n++;
		if (!p->group || !p->name || !p->value) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto fail;
		}
		if (!*p->name) {
			rc = ml_err_set(err, ML_EPARSE, "entry_points.txt line %d: empty name",
			                line);
			goto fail;
		}
	}
	free(group);
	*out = ep;
	return 0;
fail:
	free(group);
	ml_entry_points_free(ep);
	return rc;
}

/* A dotted sequence of Python identifiers (ASCII rules; bytes >= 0x80 are
 * taken as the letters of non-ASCII identifiers). */
static bool dotted_identifiers(const char *s, size_t n)
{
	if (n == 0)
		return false;
	bool start = true;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		bool letter = isalpha(c) || c == '_' || c >= 0x80;
		if (start ? !letter : !(letter || isdigit(c)))
			return false;
		start = false;
	}
	return !start;
}

int ml_entry_point_split(char *module, size_t module_sz, char *attr, size_t attr_sz,
                         const char *value, ml_err *err)
{
	const char *v = value;
	while (*v == ' ' || *v == '\t')
		v++;
	const char *end = v + strlen(v);
	const char *br = strchr(v, '[');
	if (br) {
		const char *close = strchr(br, ']');
		const char *after = close ? close + 1 : NULL;
		while (after && (*after == ' ' || *after == '\t'))
			after++;
		if (!close || *after)
			goto bad;
		end = br;
	}
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	const char *colon = memchr(v, ':', (size_t)(end - v));
	if (!colon)
		goto bad;
	const char *me = colon, *as = colon + 1;
	while (me > v && (me[-1] == ' ' || me[-1] == '\t'))
		me--;
	while (as < end && (*as == ' ' || *as == '\t'))
		as++;
	size_t mn = (size_t)(me - v), an = (size_t)(end - as);
	if (!dotted_identifiers(v, mn) || !dotted_identifiers(as, an) || mn >= module_sz ||
	    an >= attr_sz)
		goto bad;
	memcpy(module, v, mn);
	module[mn] = '\0';
	memcpy(attr, as, an);
	attr[an] = '\0';
	return 0;
bad:
	return ml_err_set(err, ML_EPARSE,
	                  "entry point '%.200s' is not of the form 'module:attribute'", value);
}
