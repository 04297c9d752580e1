/*
 * toml.c - a TOML 1.0 reader for what PEP 751 lock files (pylock.toml)
 * use, and the rest of the format with it: basic, literal and multi-line
 * strings, integers (decimal, hex, octal, binary), floats, booleans, dates
 * and times (kept as their text), arrays, inline tables, tables, arrays of
 * tables, dotted keys and comments. Debian ships no C TOML library.
 *
 * The parser follows the statement-by-statement algorithm of Python's
 * tomllib (the reference the tests compare against, document by
 * document): the same value grammar, tried in the same order, and the
 * same rules for which tables may be defined or extended when (a table
 * defined by a [header] or by dotted keys is never defined again; inline
 * tables and arrays are frozen). Every node records its line, so callers
 * can say where a value came from. Nothing here prints or keeps state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum {
	F_EXPLICIT = 1u << 0, /* a table defined by a header or finished dotted keys */
	F_PENDING = 1u << 1,  /* defined by dotted keys in the current section */
	F_FROZEN = 1u << 2,   /* an inline table or static array: immutable */
};

typedef struct tparser {
	const char *s; /* the document, CRLF turned into LF */
	size_t n, pos;
	const char *name; /* for messages */
	ml_err *err;
	ml_toml *root;
	ml_toml *cur;  /* the table the current section writes into */
	int cur_depth; /* its depth: levels below the root (ML_TOML_MAX_DEPTH) */
	ml_toml **pending;
	size_t n_pending, cap_pending;
	size_t line_pos; /* line_at(): the line of line_pos is line */
	int line;
} tparser;

/* --- nodes ------------------------------------------------------------------ */

static ml_toml *node_new(ml_toml_kind kind, int line)
{
	ml_toml *t = calloc(1, sizeof(*t));
	if (t) {
		t->kind = kind;
		t->line = line;
	}
	return t;
}

void ml_toml_free(ml_toml *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		ml_toml_free(t->items[i]);
		if (t->keys)
			free(t->keys[i]);
	}
	free(t->items);
	free(t->keys);
	free(t->key_lens);
	free(t->str);
	free(t);
}

/* Appends v (taken over) to an array or, with key, to a table. */
static int node_add(ml_toml *t, const char *key, size_t klen, ml_toml *v)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4;
		ml_toml **items = realloc(t->items, cap * sizeof(*items));
		if (!items)
			return ML_ENOMEM;
		t->items = items;
		if (t->kind == ML_TOML_TABLE) {
			char **keys = realloc(t->keys, cap * sizeof(*keys));
			if (!keys)
				return ML_ENOMEM;
			t->keys = keys;
			size_t *lens = realloc(t->key_lens, cap * sizeof(*lens));
			if (!lens)
				return ML_ENOMEM;
			t->key_lens = lens;
		}
		t->cap = cap;
	}
	if (t->kind == ML_TOML_TABLE) {
		char *k = malloc(klen + 1);
		if (!k)
			return ML_ENOMEM;
		memcpy(k, key, klen);
		k[klen] = '\0';
		t->keys[t->n] = k;
		t->key_lens[t->n] = klen;
	}
	t->items[t->n++] = v;
	return 0;
}

static ml_toml *table_find(const ml_toml *t, const char *key, size_t klen)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->key_lens[i] == klen && memcmp(t->keys[i], key, klen) == 0)
			return t->items[i];
	return NULL;
}

const ml_toml *ml_toml_get(const ml_toml *table, const char *key)
{
	if (!table || table->kind != ML_TOML_TABLE || !key)
		return NULL;
	return table_find(table, key, strlen(key));
}

const char *ml_toml_get_string(const ml_toml *table, const char *key)
{
	const ml_toml *v = ml_toml_get(table, key);
	return v && v->kind == ML_TOML_STRING ? v->str : NULL;
}

const char *ml_toml_kind_name(ml_toml_kind kind)
{
	static const char *const names[] = {"string",    "integer", "float", "boolean",
	                                    "date-time", "array",   "table"};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/* --- errors ------------------------------------------------------------------- */

/* The 1-based line of offset pos; counts on from the last answer, so a
 * parse that moves forward costs one pass over the text. */
static int line_at(tparser *p, size_t pos)
{
	if (pos > p->n)
		pos = p->n;
	if (pos < p->line_pos) {
		p->line_pos = 0;
		p->line = 1;
	}
	for (size_t i = p->line_pos; i < pos; i++)
		p->line += p->s[i] == '\n';
	p->line_pos = pos;
	return p->line;
}

static int fail(tparser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(tparser *p, size_t pos, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ml_err_set(p->err, ML_EPARSE, "'%.300s' line %d: %s", p->name, line_at(p, pos), msg);
	ml_err_hint(p->err, "the file is not valid TOML 1.0");
	return ML_EPARSE;
}

/* A value more than ML_TOML_MAX_DEPTH levels below the root. */
static int too_deep(tparser *p, size_t pos)
{
	ml_err_set(p->err, ML_EPARSE, "'%.300s' line %d: nested more than %d levels deep", p->name,
	           line_at(p, pos), ML_TOML_MAX_DEPTH);
	ml_err_hint(p->err, "tables, arrays, inline tables and the parts of dotted keys and "
	                    "table headers count one level each; deeper documents are refused");
	return ML_EPARSE;
}

static int oom(tparser *p)
{
	return ml_err_set(p->err, ML_ENOMEM, "out of memory reading '%.300s'", p->name);
}

/* --- characters ------------------------------------------------------------- */

static int peek(const tparser *p, size_t off)
{
	return p->pos + off < p->n ? (unsigned char)p->s[p->pos + off] : -1;
}

static bool starts(const tparser *p, const char *lit)
{
	size_t l = strlen(lit);
	return p->n - p->pos >= l && memcmp(p->s + p->pos, lit, l) == 0;
}

/* ASCII control characters TOML allows nowhere but where noted. */
static bool is_ctrl(int c)
{
	return (c >= 0 && c < 0x20) || c == 0x7f;
}

static bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static void skip_ws(tparser *p)
{
	while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
		p->pos++;
}

static void skip_ws_nl(tparser *p)
{
	while (p->pos < p->n &&
	       (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n'))
		p->pos++;
}

/* A comment runs to the end of the line; no control characters but tab. */
static int skip_comment(tparser *p)
{
	if (peek(p, 0) != '#')
		return 0;
	p->pos++;
	while (p->pos < p->n && p->s[p->pos] != '\n') {
		int c = (unsigned char)p->s[p->pos];
		if (c != '\t' && is_ctrl(c))
			return fail(p, p->pos, "invalid character 0x%02x in a comment", c);
		p->pos++;
	}
	return 0;
}

static int skip_comments_and_array_ws(tparser *p)
{
	for (;;) {
		size_t before = p->pos;
		skip_ws_nl(p);
		int rc = skip_comment(p);
		if (rc)
			return rc;
		if (p->pos == before)
			return 0;
	}
}

/* Checks that text is UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF). Returns the offset of the first bad byte, or
 * len. */
static size_t utf8_check(const unsigned char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k;
		unsigned cp, min;
		if ((c & 0xe0) == 0xc0) {
			k = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return i;
		}
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= len || (s[i + j] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += k + 1;
	}
	return len;
}

/* Appends code point cp as UTF-8. */
static int put_utf8(ml_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return ml_buf_add(b, u, n);
}

/* --- strings ------------------------------------------------------------------ */

/* An escape after '\' in a basic string (p->pos at the backslash). */
static int parse_escape(tparser *p, ml_buf *b, bool multiline)
{
	size_t at = p->pos;
	int c = peek(p, 1);
	p->pos += 2;
	if (multiline && (c == ' ' || c == '\t' || c == '\n')) {
		/* line-ending backslash: drop whitespace and newlines */
		if (c != '\n') {
			skip_ws(p);
			if (p->pos >= p->n)
				return 0;
			if (p->s[p->pos] != '\n')
				return fail(p, p->pos, "unescaped '\\' in a string");
			p->pos++;
		}
		skip_ws_nl(p);
		return 0;
	}
	const char *rep = NULL;
	switch (c) {
	case 'b':
		rep = "\b";
		break;
	case 't':
		rep = "\t";
		break;
	case 'n':
		rep = "\n";
		break;
	case 'f':
		rep = "\f";
		break;
	case 'r':
		rep = "\r";
		break;
	case '"':
		rep = "\"";
		break;
	case '\\':
		rep = "\\";
		break;
	case 'u':
	case 'U': {
		size_t k = c == 'u' ? 4 : 8;
		unsigned long cp = 0;
		for (size_t i = 0; i < k; i++) {
			int h = peek(p, i);
			if (!is_hex(h))
				return fail(p, p->pos,
				            "invalid \\%c escape: %zu hex digits expected", c, k);
			cp = cp * 16 +
			     (unsigned long)(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
		}
		p->pos += k;
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return fail(p, p->pos, "escaped character is not a Unicode scalar value");
		return put_utf8(b, cp) ? oom(p) : 0;
	}
	default:
		return fail(p, at, "unescaped '\\' in a string");
	}
	return ml_buf_puts(b, rep) ? oom(p) : 0;
}

/* A basic string's body, p->pos after the opening quote(s); stops after
 * the closing '"' or '"""'. */
static int basic_body(tparser *p, ml_buf *b, bool multiline)
{
	size_t start = p->pos;
	for (;;) {
		if (p->pos >= p->n)
			return fail(p, p->pos, "unterminated string");
		int c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			if (!multiline || starts(p, "\"\"\"")) {
				if (ml_buf_add(b, p->s + start, p->pos - start))
					return oom(p);
				p->pos += multiline ? 3 : 1;
				return 0;
			}
			p->pos++;
			continue;
		}
		if (c == '\\') {
			if (ml_buf_add(b, p->s + start, p->pos - start))
				return oom(p);
			int rc = parse_escape(p, b, multiline);
			if (rc)
				return rc;
			start = p->pos;
			continue;
		}
		if (is_ctrl(c) && c != '\t' && !(multiline && c == '\n'))
			return fail(p, p->pos, "invalid character 0x%02x in a string", c);
		p->pos++;
	}
}

/* A literal string's body up to the closing delimiter. */
static int literal_body(tparser *p, ml_buf *b, bool multiline)
{
	size_t start = p->pos;
	for (;;) {
		if (p->pos >= p->n)
			return fail(p, p->pos, "unterminated string");
		int c = (unsigned char)p->s[p->pos];
		if (c == '\'' && (!multiline || starts(p, "'''"))) {
			if (ml_buf_add(b, p->s + start, p->pos - start))
				return oom(p);
			p->pos += multiline ? 3 : 1;
			return 0;
		}
		if (is_ctrl(c) && c != '\t' && !(multiline && c == '\n'))
			return fail(p, p->pos, "invalid character 0x%02x in a string", c);
		p->pos++;
	}
}

/* Any string at p->pos ('"', '\'', '"""' or '''') into b. */
static int parse_string(tparser *p, ml_buf *b, bool allow_multiline)
{
	char q = p->s[p->pos];
	bool ml = allow_multiline && (q == '"' ? starts(p, "\"\"\"") : starts(p, "'''"));
	if (!ml) {
		p->pos++;
		return q == '"' ? basic_body(p, b, false) : literal_body(p, b, false);
	}
	p->pos += 3;
	if (peek(p, 0) == '\n')
		p->pos++; /* a newline right after the delimiter is trimmed */
	int rc = q == '"' ? basic_body(p, b, true) : literal_body(p, b, true);
	/* up to two more quotes belong to the content: """"a""""" */
	for (int i = 0; !rc && i < 2 && peek(p, 0) == q; i++) {
		if (ml_buf_add(b, &q, 1))
			return oom(p);
		p->pos++;
	}
	return rc;
}

/* --- keys ---------------------------------------------------------------------- */

typedef struct key_part {
	char *s;
	size_t len;
} key_part;

typedef struct tkey {
	key_part *parts;
	size_t n, cap;
} tkey;

static void key_release(tkey *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->parts[i].s);
	free(k->parts);
	memset(k, 0, sizeof(*k));
}

static int key_part_parse(tparser *p, tkey *k)
{
	int c = peek(p, 0);
	ml_buf b = ML_BUF_INIT;
	if (is_bare(c)) {
		size_t start = p->pos;
		while (is_bare(peek(p, 0)))
			p->pos++;
		if (ml_buf_add(&b, p->s + start, p->pos - start))
			return oom(p);
	} else if (c == '"' || c == '\'') {
		int rc = parse_string(p, &b, false);
		if (rc) {
			ml_buf_release(&b);
			return rc;
		}
	} else {
		return fail(p, p->pos, "invalid initial character for a key");
	}
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4;
		key_part *parts = realloc(k->parts, cap * sizeof(*parts));
		if (!parts) {
			ml_buf_release(&b);
			return oom(p);
		}
		k->parts = parts;
		k->cap = cap;
	}
	size_t len = b.len;
	char *s = b.data ? ml_buf_detach(&b) : calloc(1, 1);
	if (!s)
		return oom(p);
	k->parts[k->n++] = (key_part){s, len};
	return 0;
}

/* A dotted key: parts separated by '.', with spaces around the dots. */
static int key_parse(tparser *p, tkey *k)
{
	int rc = key_part_parse(p, k);
	skip_ws(p);
	while (!rc && peek(p, 0) == '.') {
		p->pos++;
		skip_ws(p);
		rc = key_part_parse(p, k);
		skip_ws(p);
	}
	return rc;
}

/* "a.b.c" for messages (at most sz bytes). */
static const char *key_show(char *dst, size_t sz, const tkey *k, size_t upto)
{
	dst[0] = '\0';
	for (size_t i = 0; i < upto && i < k->n; i++) {
		size_t l = strlen(dst);
		snprintf(dst + l, sz - l, "%s%.*s", i ? "." : "", (int)k->parts[i].len,
		         k->parts[i].s);
	}
	return dst;
}

/* --- scalars ------------------------------------------------------------------- */

/* Matches digits with single underscores between them ("1_000") at p->pos
 * for the class is_ok; returns how many bytes, 0 when none. */
static size_t digits_run(const tparser *p, size_t at, bool (*is_ok)(int))
{
	size_t i = at;
	if (i >= p->n || !is_ok((unsigned char)p->s[i]))
		return 0;
	i++;
	for (;;) {
		if (i < p->n && is_ok((unsigned char)p->s[i])) {
			i++;
		} else if (i + 1 < p->n && p->s[i] == '_' && is_ok((unsigned char)p->s[i + 1])) {
			i += 2;
		} else {
			return i - at;
		}
	}
}

static bool is_bin(int c)
{
	return c == '0' || c == '1';
}

static bool is_oct(int c)
{
	return c >= '0' && c <= '7';
}

static bool is_dec(int c)
{
	return is_digit(c);
}

static bool is_hexd(int c)
{
	return is_hex(c);
}

/* n digits at s exactly, as a number. */
static int num_at(const char *s, size_t n)
{
	int v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static bool all_digits(const tparser *p, size_t at, size_t n)
{
	if (at + n > p->n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_digit((unsigned char)p->s[at + i]))
			return false;
	return true;
}

/* HH:MM:SS(.frac)? at `at` (hours 00-23, minutes and seconds 00-59);
 * returns its length or 0. */
static size_t time_at(const tparser *p, size_t at)
{
	const char *s = p->s + at;
	if (!all_digits(p, at, 2) || at + 8 > p->n || s[2] != ':' || !all_digits(p, at + 3, 2) ||
	    s[5] != ':' || !all_digits(p, at + 6, 2))
		return 0;
	if (num_at(s, 2) > 23 || num_at(s + 3, 2) > 59 || num_at(s + 6, 2) > 59)
		return 0;
	size_t n = 8;
	if (at + n < p->n && s[n] == '.' && at + n + 1 < p->n &&
	    is_digit((unsigned char)s[n + 1])) {
		n++;
		while (at + n < p->n && is_digit((unsigned char)s[n]))
			n++;
	}
	return n;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* A date, date-time or time at p->pos (RFC 3339 as TOML allows it): 0 and
 * *len set when one is there (with *bad_date when it names no real day),
 * else *len = 0. */
static void datetime_at(const tparser *p, size_t *len, bool *bad_date)
{
	size_t at = p->pos;
	const char *s = p->s + at;
	*len = 0;
	*bad_date = false;
	if (all_digits(p, at, 4) && at + 10 <= p->n && s[4] == '-' && all_digits(p, at + 5, 2) &&
	    s[7] == '-' && all_digits(p, at + 8, 2)) {
		int y = num_at(s, 4), m = num_at(s + 5, 2), d = num_at(s + 8, 2);
		if (m >= 1 && m <= 12 && d >= 1 && d <= 31) {
			static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
			int dim = mdays[m - 1] + (m == 2 && leap(y));
			*bad_date = y < 1 || d > dim;
			size_t n = 10;
			if (at + n < p->n && (s[n] == 'T' || s[n] == 't' || s[n] == ' ')) {
				size_t tl = time_at(p, at + n + 1);
				if (tl) {
					n += 1 + tl;
					if (at + n < p->n && (s[n] == 'Z' || s[n] == 'z')) {
						n++;
					} else if (at + n < p->n && (s[n] == '+' || s[n] == '-') &&
					           all_digits(p, at + n + 1, 2) &&
					           at + n + 6 <= p->n && s[n + 3] == ':' &&
					           all_digits(p, at + n + 4, 2) &&
					           num_at(s + n + 1, 2) <= 23 &&
					           num_at(s + n + 4, 2) <= 59) {
						n += 6;
					}
				}
			}
			*len = n;
			return;
		}
	}
	*len = time_at(p, at);
}

/* A number at p->pos, as tomllib's grammar reads it: 0x/0o/0b integers,
 * else a decimal integer part with an optional fraction and exponent. */
static int parse_number(tparser *p, ml_toml **out, int line)
{
	size_t at = p->pos, n = 0;
	int base = 10;
	bool is_float = false;
	const char *s = p->s + at;
	if (s[0] == '0' && at + 1 < p->n && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
		bool (*cls)(int) = s[1] == 'x' ? is_hexd : s[1] == 'o' ? is_oct : is_bin;
		size_t d = digits_run(p, at + 2, cls);
		if (d) {
			base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
			n = 2 + d;
		}
	}
	if (!n) {
		size_t i = at;
		if (i < p->n && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i < p->n && p->s[i] == '0') {
			i++;
		} else {
			size_t d = i < p->n && p->s[i] >= '1' && p->s[i] <= '9'
			                   ? digits_run(p, i, is_dec)
			                   : 0;
			if (!d)
				return fail(p, at, "invalid value");
			i += d;
		}
		if (i + 1 < p->n && p->s[i] == '.') {
			size_t d = digits_run(p, i + 1, is_dec);
			if (d) {
				i += 1 + d;
				is_float = true;
			}
		}
		if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
			size_t j = i + 1;
			if (j < p->n && (p->s[j] == '+' || p->s[j] == '-'))
				j++;
			size_t d = digits_run(p, j, is_dec);
			if (d) {
				i = j + d;
				is_float = true;
			}
		}
		n = i - at;
	}
	char buf[512];
	size_t k = 0;
	for (size_t i = 0; i < n && k < sizeof(buf) - 1; i++)
		if (s[i] != '_')
			buf[k++] = s[i];
	buf[k] = '\0';
	if (k >= sizeof(buf) - 1)
		return fail(p, at, "number too long");
	ml_toml *v = node_new(is_float ? ML_TOML_FLOAT : ML_TOML_INTEGER, line);
	if (!v)
		return oom(p);
	if (is_float) {
		v->f = strtod(buf, NULL);
		v->str = strdup(buf);
		v->len = k;
		if (!v->str) {
			ml_toml_free(v);
			return oom(p);
		}
	} else {
		const char *digits = base == 10 ? buf : buf + 2;
		bool neg = digits[0] == '-';
		if (digits[0] == '+' || digits[0] == '-')
			digits++;
		uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (const char *d = digits; *d; d++) {
			unsigned dv = is_digit(*d) ? (unsigned)(*d - '0')
			                           : (unsigned)((*d | 0x20) - 'a' + 10);
			if (u > (limit - dv) / (unsigned)base) {
				ml_toml_free(v);
				return fail(p, at, "integer %s is out of the 64-bit range", buf);
			}
			u = u * (unsigned)base + dv;
		}
		v->i = neg ? (u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u) : (int64_t)u;
	}
	p->pos += n;
	*out = v;
	return 0;
}

/* --- values -------------------------------------------------------------------- */

static int parse_value(tparser *p, ml_toml **out, int depth);
static int kv_into(tparser *p, ml_toml *table, int depth, bool inline_table);

/* An array whose node lies `depth` levels below the root. */
static int parse_array(tparser *p, ml_toml **out, int line, int depth)
{
	ml_toml *a = node_new(ML_TOML_ARRAY, line);
	if (!a)
		return oom(p);
	p->pos++;
	int rc = skip_comments_and_array_ws(p);
	if (!rc && peek(p, 0) == ']') {
		p->pos++;
		*out = a;
		return 0;
	}
	while (!rc) {
		ml_toml *v = NULL;
		if ((rc = parse_value(p, &v, depth + 1)) != 0)
			break;
		if (node_add(a, NULL, 0, v)) {
			ml_toml_free(v);
			rc = oom(p);
			break;
		}
		if ((rc = skip_comments_and_array_ws(p)) != 0)
			break;
		int c = peek(p, 0);
		if (c == ']') {
			p->pos++;
			*out = a;
			return 0;
		}
		if (c != ',') {
			rc = fail(p, p->pos, "unclosed array");
			break;
		}
		p->pos++;
		if ((rc = skip_comments_and_array_ws(p)) != 0)
			break;
		if (peek(p, 0) == ']') {
			p->pos++;
			*out = a;
			return 0;
		}
	}
	ml_toml_free(a);
	return rc;
}

/* An inline table whose node lies `depth` levels below the root. */
static int parse_inline_table(tparser *p, ml_toml **out, int line, int depth)
{
	ml_toml *t = node_new(ML_TOML_TABLE, line);
	if (!t)
		return oom(p);
	p->pos++;
	skip_ws(p);
	int rc = 0;
	if (peek(p, 0) == '}') {
		p->pos++;
		*out = t;
		return 0;
	}
	for (;;) {
		if ((rc = kv_into(p, t, depth, true)) != 0)
			break;
		skip_ws(p);
		int c = peek(p, 0);
		if (c == '}') {
			p->pos++;
			*out = t;
			return 0;
		}
		if (c != ',') {
			rc = fail(p, p->pos, "unclosed inline table");
			break;
		}
		p->pos++;
		skip_ws(p);
	}
	ml_toml_free(t);
	return rc;
}

/* The value at p->pos, whose node will lie `depth` levels below the root:
 * refused past ML_TOML_MAX_DEPTH (which also bounds this recursion). */
static int parse_value(tparser *p, ml_toml **out, int depth)
{
	if (depth > ML_TOML_MAX_DEPTH)
		return too_deep(p, p->pos);
	int line = line_at(p, p->pos);
	int c = peek(p, 0);
	if (c == '"' || c == '\'') {
		ml_buf b = ML_BUF_INIT;
		int rc = parse_string(p, &b, true);
		if (rc) {
			ml_buf_release(&b);
			return rc;
		}
		ml_toml *v = node_new(ML_TOML_STRING, line);
		size_t len = b.len;
		char *s = b.data ? ml_buf_detach(&b) : calloc(1, 1);
		if (!v || !s) {
			free(s);
			free(v);
			return oom(p);
		}
		v->str = s;
		v->len = len;
		*out = v;
		return 0;
	}
	if (starts(p, "true") || starts(p, "false")) {
		ml_toml *v = node_new(ML_TOML_BOOL, line);
		if (!v)
			return oom(p);
		v->b = c == 't';
		p->pos += v->b ? 4 : 5;
		*out = v;
		return 0;
	}
	if (c == '[' || c == '{') {
		return c == '[' ? parse_array(p, out, line, depth)
		                : parse_inline_table(p, out, line, depth);
	}
	size_t dl = 0;
	bool bad_date = false;
	datetime_at(p, &dl, &bad_date);
	if (dl) {
		if (bad_date)
			return fail(p, p->pos, "invalid date or date-time");
		ml_toml *v = node_new(ML_TOML_DATETIME, line);
		if (!v || !(v->str = malloc(dl + 1))) {
			free(v);
			return oom(p);
		}
		memcpy(v->str, p->s + p->pos, dl);
		v->str[dl] = '\0';
		v->len = dl;
		p->pos += dl;
		*out = v;
		return 0;
	}
	if (is_digit(c) || ((c == '+' || c == '-') && is_digit(peek(p, 1))))
		return parse_number(p, out, line);
	static const char *const special[] = {"inf", "nan", "+inf", "-inf", "+nan", "-nan"};
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		if (!starts(p, special[i]))
			continue;
		ml_toml *v = node_new(ML_TOML_FLOAT, line);
		if (!v || !(v->str = strdup(special[i]))) {
			free(v);
			return oom(p);
		}
		v->len = strlen(special[i]);
		v->f = strtod(special[i], NULL);
		p->pos += v->len;
		*out = v;
		return 0;
	}
	return fail(p, p->pos, "invalid value");
}

/* --- tables -------------------------------------------------------------------- */

static int add_pending(tparser *p, ml_toml *t)
{
	if (t->flags & F_PENDING)
		return 0;
	if (p->n_pending == p->cap_pending) {
		size_t cap = p->cap_pending ? p->cap_pending * 2 : 8;
		ml_toml **np = realloc(p->pending, cap * sizeof(*np));
		if (!np)
			return oom(p);
		p->pending = np;
		p->cap_pending = cap;
	}
	t->flags |= F_PENDING;
	p->pending[p->n_pending++] = t;
	return 0;
}

/* Tables defined by dotted keys in the section that ends become defined
 * for good: no later header or dotted key may define them again. */
static void finalize_pending(tparser *p)
{
	for (size_t i = 0; i < p->n_pending; i++)
		p->pending[i]->flags = (p->pending[i]->flags & ~F_PENDING) | F_EXPLICIT;
	p->n_pending = 0;
}

/* The child table `part` of t, created when missing. Arrays of tables
 * lead to their last table (when through_arrays). *depth, t's depth on
 * entry, becomes *out's: one level more, two through an array. */
static int child_table(tparser *p, ml_toml *t, const key_part *part, bool through_arrays,
                       ml_toml **out, bool *created, int *depth, size_t at)
{
	ml_toml *c = table_find(t, part->s, part->len);
	if (created)
		*created = false;
	if (!c) {
		if (!(c = node_new(ML_TOML_TABLE, line_at(p, at))))
			return oom(p);
		if (node_add(t, part->s, part->len, c)) {
			free(c);
			return oom(p);
		}
		if (created)
			*created = true;
	}
	if (c->flags & F_FROZEN)
		return fail(p, at, "'%.*s' is an inline table or array and cannot be extended",
		            (int)part->len, part->s);
	++*depth;
	if (c->kind == ML_TOML_ARRAY && through_arrays && c->n > 0) {
		c = c->items[c->n - 1];
		++*depth;
	}
	if (c->kind != ML_TOML_TABLE)
		return fail(p, at, "'%.*s' is already a value, not a table", (int)part->len,
		            part->s);
	if (*depth > ML_TOML_MAX_DEPTH)
		return too_deep(p, at);
	*out = c;
	return 0;
}

/* A key/value pair into table (the section's table, or an inline table),
 * which lies `depth` levels below the root. Each part of a dotted key is
 * a level: the value lies k.n levels below the table (a dotted key never
 * passes through an array of tables: those are defined by headers). */
static int kv_into(tparser *p, ml_toml *table, int depth, bool inline_table)
{
	size_t at = p->pos;
	tkey k = {0};
	char shown[256];
	int rc = key_parse(p, &k);
	if (!rc && k.n > (size_t)(ML_TOML_MAX_DEPTH - depth))
		rc = too_deep(p, at);
	if (!rc && peek(p, 0) != '=')
		rc = fail(p, p->pos, "expected '=' after a key");
	ml_toml *v = NULL;
	if (!rc) {
		p->pos++;
		skip_ws(p);
		rc = parse_value(p, &v, depth + (int)k.n);
	}
	ml_toml *t = table;
	int td = depth;
	for (size_t i = 0; !rc && i + 1 < k.n; i++) {
		ml_toml *c = table_find(t, k.parts[i].s, k.parts[i].len);
		if (c && !inline_table && (c->flags & F_EXPLICIT)) {
			rc = fail(p, at, "table '%s' is already defined",
			          key_show(shown, sizeof(shown), &k, i + 1));
			break;
		}
		rc = child_table(p, t, &k.parts[i], !inline_table, &t, NULL, &td, at);
		if (!rc && !inline_table)
			rc = add_pending(p, t);
	}
	if (!rc && td + 1 != depth + (int)k.n)
		rc = too_deep(p, at); /* through an array: cannot happen, see above */
	if (!rc && table_find(t, k.parts[k.n - 1].s, k.parts[k.n - 1].len))
		rc = fail(p, at, "key '%s' is defined twice",
		          key_show(shown, sizeof(shown), &k, k.n));
	if (!rc) {
		if (v->kind == ML_TOML_ARRAY || v->kind == ML_TOML_TABLE)
			v->flags |= F_FROZEN;
		if (node_add(t, k.parts[k.n - 1].s, k.parts[k.n - 1].len, v))
			rc = oom(p);
		else
			v = NULL;
	}
	ml_toml_free(v);
	key_release(&k);
	return rc;
}

/* Appends a new table to the array of tables `last` of t (creating the
 * array) and makes it the section's table. */
static int aot_append(tparser *p, ml_toml *t, ml_toml *c, const key_part *last, size_t at)
{
	ml_toml *e = node_new(ML_TOML_TABLE, line_at(p, at));
	if (!e)
		return oom(p);
	if (!c) {
		if (!(c = node_new(ML_TOML_ARRAY, line_at(p, at))) ||
		    node_add(t, last->s, last->len, c)) {
			free(c);
			free(e);
			return oom(p);
		}
		c->flags |= F_EXPLICIT; /* never a [table], never dotted into */
	}
	if (node_add(c, NULL, 0, e)) {
		free(e);
		return oom(p);
	}
	p->cur = e;
	return 0;
}

/* [table] or [[array.of.tables]] at p->pos. */
static int header_rule(tparser *p)
{
	size_t at = p->pos;
	bool aot = peek(p, 1) == '[';
	char shown[256];
	finalize_pending(p);
	p->pos += aot ? 2 : 1;
	skip_ws(p);
	tkey k = {0};
	int rc = key_parse(p, &k);
	if (!rc && k.n > ML_TOML_MAX_DEPTH)
		rc = too_deep(p, at);
	ml_toml *t = p->root;
	int depth = 0; /* t's */
	for (size_t i = 0; !rc && i + 1 < k.n; i++)
		rc = child_table(p, t, &k.parts[i], true, &t, NULL, &depth, at);
	if (!rc) {
		const key_part *last = &k.parts[k.n - 1];
		ml_toml *c = table_find(t, last->s, last->len);
		key_show(shown, sizeof(shown), &k, k.n);
		if (c && (c->flags & F_FROZEN)) {
			rc = fail(p, at, "'%s' is an inline table or array and cannot be extended",
			          shown);
		} else if (aot && c && c->kind != ML_TOML_ARRAY) {
			rc = fail(p, at, "'%s' is already defined as a table or value", shown);
		} else if (aot && depth + 2 > ML_TOML_MAX_DEPTH) {
			rc = too_deep(p, at); /* the array, and the table in it */
		} else if (aot) {
			rc = aot_append(p, t, c, last, at);
			p->cur_depth = depth + 2;
		} else if (c && (c->kind != ML_TOML_TABLE || (c->flags & F_EXPLICIT))) {
			rc = fail(p, at, "table '%s' is defined twice", shown);
		} else {
			bool created = false;
			rc = child_table(p, t, last, false, &c, &created, &depth, at);
			if (!rc) {
				c->flags |= F_EXPLICIT;
				if (!created)
					c->line = line_at(p, at);
				p->cur = c;
				p->cur_depth = depth;
			}
		}
	}
	key_release(&k);
	if (rc)
		return rc;
	if (!starts(p, aot ? "]]" : "]"))
		return fail(p, p->pos, "expected '%s' at the end of a table header",
		            aot ? "]]" : "]");
	p->pos += aot ? 2 : 1;
	return 0;
}

/* --- documents ------------------------------------------------------------------ */

static int parse_document(tparser *p)
{
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->n)
			return 0;
		int c = peek(p, 0), rc = 0;
		if (c == '\n') {
			p->pos++;
			continue;
		}
		if (is_bare(c) || c == '"' || c == '\'') {
			rc = kv_into(p, p->cur, p->cur_depth, false);
			skip_ws(p);
		} else if (c == '[') {
			rc = header_rule(p);
			skip_ws(p);
		} else if (c != '#') {
			rc = fail(p, p->pos, "invalid statement");
		}
		if (!rc)
			rc = skip_comment(p);
		if (rc)
			return rc;
		if (p->pos >= p->n)
			return 0;
		if (p->s[p->pos] != '\n')
			return fail(p, p->pos, "expected the end of the line after a statement");
		p->pos++;
	}
}

int ml_toml_parse(ml_toml **out, const char *name_for_messages, const char *text, size_t len,
                  ml_err *err)
{
	tparser p = {0};
	p.line = 1;
	p.name = name_for_messages ? name_for_messages : "(toml)";
	p.err = err;
	if (!text)
		len = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	char *s = malloc(len + 1);
	if (!s)
		return oom(&p);
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (!(text[i] == '\r' && i + 1 < len && text[i + 1] == '\n'))
			s[n++] = text[i];
	s[n] = '\0';
	p.s = s;
	p.n = n;
	int rc;
	size_t bad = utf8_check((const unsigned char *)s, n);
	if (bad < n) {
		rc = fail(&p, bad, "invalid UTF-8");
	} else if (!(p.root = node_new(ML_TOML_TABLE, 1))) {
		rc = oom(&p);
	} else {
		p.cur = p.root;
		rc = parse_document(&p);
	}
	free(p.pending);
	free(s);
	if (rc) {
		ml_toml_free(p.root);
		return rc;
	}
	*out = p.root;
	return 0;
}
