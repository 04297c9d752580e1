/*
 * version.c - PEP 440 versions and version specifiers.
 *
 * A version is parsed into spans of the original string (no allocation):
 * epoch, release segments, pre-, post- and dev-release numbers and the local
 * label, following the canonical regular expression of PEP 440 Appendix B.
 * Numbers are kept as digit strings without leading zeros and compared by
 * length, then digit by digit, so "1.0.20240101123456789" compares exactly.
 * Ordering follows PEP 440 "Summary of permitted suffixes and relative
 * ordering"; specifiers follow PEP 440 "Version specifiers".
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* A decimal number as digits without leading zeros; n == 0 means zero. */
typedef struct num {
	const char *p;
	size_t n;
} num;

enum { PRE_NONE = 0, PRE_A = 1, PRE_B = 2, PRE_RC = 3 };

typedef struct pver {
	num epoch;
	const char *rel; /* "1.02.3": digits separated by single dots */
	size_t rel_len;
	size_t n_rel;
	int pre; /* PRE_* */
	num pre_n;
	bool post;
	num post_n;
	bool dev;
	num dev_n;
	const char *local; /* text after '+', NULL when none */
	size_t local_len;
	bool wildcard; /* trailing ".*" (only where allowed) */
} pver;

static num mknum(const char *p, size_t n)
{
	while (n > 0 && *p == '0') {
		p++;
		n--;
	}
	return (num){p, n};
}

static int num_cmp(num a, num b)
{
	if (a.n != b.n)
		return a.n < b.n ? -1 : 1;
	int c = a.n ? memcmp(a.p, b.p, a.n) : 0;
	return (c > 0) - (c < 0);
}

static bool is_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

static size_t digits(const char *s, size_t i, size_t len)
{
	size_t j = i;
	while (j < len && isdigit((unsigned char)s[j]))
		j++;
	return j - i;
}

/* Matches word case-insensitively at s[i..len). */
static bool word_at(const char *s, size_t i, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (len - i < n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (tolower((unsigned char)s[i + k]) != word[k])
			return false;
	return true;
}

/* Parses an optional "[-_.]?LETTERS[-_.]?DIGITS?" group at *pi. letters
 * lists alternatives longest first, kinds their values. Returns the kind,
 * or 0 (and *pi untouched) when the group is absent. */
static int letter_group(const char *s, size_t len, size_t *pi, const char *const *letters,
                        const int *kinds, num *n_out)
{
	size_t i = *pi;
	if (i < len && is_sep(s[i]))
		i++;
	for (size_t k = 0; letters[k]; k++) {
		if (!word_at(s, i, len, letters[k]))
			continue;
		i += strlen(letters[k]);
		if (i < len && is_sep(s[i]))
			i++;
		size_t d = digits(s, i, len);
		*n_out = mknum(s + i, d);
		*pi = i + d;
		return kinds[k];
	}
	return 0;
}

/* Parses s[0..len) as a PEP 440 version (surrounding whitespace allowed).
 * With allow_wildcard, "X.Y.*" (epoch and release only) is accepted too. */
static bool ver_parse(pver *v, const char *s, size_t len, bool allow_wildcard)
{
	static const char *const pre_words[] = {"alpha", "a",  "beta", "b", "preview",
	                                        "pre",   "rc", "c",    NULL};
	static const int pre_kinds[] = {PRE_A, PRE_A, PRE_B, PRE_B, PRE_RC, PRE_RC, PRE_RC, PRE_RC};
	static const char *const post_words[] = {"post", "rev", "r", NULL};
	static const char *const dev_words[] = {"dev", NULL};
	static const int one[] = {1, 1, 1};

	memset(v, 0, sizeof *v);
	size_t i = 0;
	while (i < len && isspace((unsigned char)s[i]))
		i++;
	while (len > i && isspace((unsigned char)s[len - 1]))
		len--;
	if (i < len && (s[i] == 'v' || s[i] == 'V'))
		i++;
	size_t d = digits(s, i, len);
	if (d == 0)
		return false;
	if (i + d < len && s[i + d] == '!') {
		v->epoch = mknum(s + i, d);
		i += d + 1;
		d = digits(s, i, len);
		if (d == 0)
			return false;
	}
	v->rel = s + i;
	v->n_rel = 1;
	i += d;
	while (i + 1 < len && s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		i++;
		i += digits(s, i, len);
		v->n_rel++;
	}
	v->rel_len = (size_t)(s + i - v->rel);
	if (allow_wildcard && i + 2 == len && s[i] == '.' && s[i + 1] == '*') {
		v->wildcard = true;
		return true;
	}

	v->pre = letter_group(s, len, &i, pre_words, pre_kinds, &v->pre_n);

	/* post-release: "-N" or "[-_.]?(post|rev|r)[-_.]?N?" */
	if (i + 1 < len && s[i] == '-' && isdigit((unsigned char)s[i + 1])) {
		d = digits(s, i + 1, len);
		v->post = true;
		v->post_n = mknum(s + i + 1, d);
		i += 1 + d;
	} else if (letter_group(s, len, &i, post_words, one, &v->post_n)) {
		v->post = true;
	}

	if (letter_group(s, len, &i, dev_words, one, &v->dev_n))
		v->dev = true;

	if (i < len && s[i] == '+') {
		i++;
		size_t start = i;
		for (;;) {
			size_t k = i;
			while (k < len && isalnum((unsigned char)s[k]))
				k++;
			if (k == i)
				return false;
			i = k;
			if (i + 1 < len && is_sep(s[i]) && isalnum((unsigned char)s[i + 1]))
				i++;
			else
				break;
		}
		v->local = s + start;
		v->local_len = i - start;
	}
	return i == len;
}

/* Iterates release segments: returns false when exhausted (value zero). */
typedef struct rel_it {
	const char *p, *end;
} rel_it;

static num rel_next(rel_it *it)
{
	if (it->p >= it->end)
		return (num){NULL, 0};
	const char *q = it->p;
	while (q < it->end && *q != '.')
		q++;
	num n = mknum(it->p, (size_t)(q - it->p));
	it->p = q < it->end ? q + 1 : q;
	return n;
}

static int release_cmp(const pver *a, const pver *b)
{
	rel_it ia = {a->rel, a->rel + a->rel_len}, ib = {b->rel, b->rel + b->rel_len};
	while (ia.p < ia.end || ib.p < ib.end) {
		int c = num_cmp(rel_next(&ia), rel_next(&ib));
		if (c)
			return c;
	}
	return 0;
}

static bool base_eq(const pver *a, const pver *b)
{
	return num_cmp(a->epoch, b->epoch) == 0 && release_cmp(a, b) == 0;
}

/* Local labels: segments split on [-_.]; numeric ones compare as numbers
 * and sort after alphanumeric ones, which compare case-insensitively. */
static int local_cmp(const pver *a, const pver *b)
{
	if (!a->local || !b->local)
		return (a->local != NULL) - (b->local != NULL);
	const char *pa = a->local, *ea = a->local + a->local_len;
	const char *pb = b->local, *eb = b->local + b->local_len;
	while (pa < ea && pb < eb) {
		const char *qa = pa, *qb = pb;
		bool da = true, db = true;
		while (qa < ea && !is_sep(*qa))
			da &= isdigit((unsigned char)*qa++) != 0;
		while (qb < eb && !is_sep(*qb))
			db &= isdigit((unsigned char)*qb++) != 0;
		int c;
		if (da && db) {
			c = num_cmp(mknum(pa, (size_t)(qa - pa)), mknum(pb, (size_t)(qb - pb)));
		} else if (da != db) {
			c = da ? 1 : -1;
		} else {
			size_t na = (size_t)(qa - pa), nb = (size_t)(qb - pb), k = 0;
			c = 0;
			for (; k < na && k < nb && !c; k++) {
				int x = tolower((unsigned char)pa[k]),
				    y = tolower((unsigned char)pb[k]);
				c = (x > y) - (x < y);
			}
			if (!c)
				c = (na > nb) - (na < nb);
		}
		if (c)
			return c;
		pa = qa < ea ? qa + 1 : qa;
		pb = qb < eb ? qb + 1 : qb;
	}
	return (pa < ea) - (pb < eb);
}

/* PEP 440 ordering; with_local false compares the public versions. */
static int ver_cmp(const pver *a, const pver *b, bool with_local)
{
	int c = num_cmp(a->epoch, b->epoch);
	if (c)
		return c;
	if ((c = release_cmp(a, b)))
		return c;
	/* pre: a dev release of a final (1.0.dev0) sorts before its
	 * pre-releases, a final after them */
	int ca = !a->pre && !a->post && a->dev ? 0 : a->pre ? 1 : 2;
	int cb = !b->pre && !b->post && b->dev ? 0 : b->pre ? 1 : 2;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (ca == 1) {
		if (a->pre != b->pre)
			return a->pre < b->pre ? -1 : 1;
		if ((c = num_cmp(a->pre_n, b->pre_n)))
			return c;
	}
	if (a->post != b->post)
		return a->post ? 1 : -1;
	if (a->post && (c = num_cmp(a->post_n, b->post_n)))
		return c;
	if (a->dev != b->dev)
		return a->dev ? -1 : 1;
	if (a->dev && (c = num_cmp(a->dev_n, b->dev_n)))
		return c;
	return with_local ? local_cmp(a, b) : 0;
}

bool ml_version_valid(const char *v)
{
	pver p;
	return v && ver_parse(&p, v, strlen(v), false);
}

int ml_version_cmp(const char *a, const char *b)
{
	pver pa, pb;
	bool va = a && ver_parse(&pa, a, strlen(a), false);
	bool vb = b && ver_parse(&pb, b, strlen(b), false);
	if (va && vb)
		return ver_cmp(&pa, &pb, true);
	if (va != vb)
		return va ? 1 : -1;
	int c = strcmp(a ? a : "", b ? b : "");
	return (c > 0) - (c < 0);
}

/* Appends to a fixed buffer, remembering overflow. */
typedef struct out_s {
	char *dst;
	size_t sz, len;
	bool full;
} out_s;

static void put(out_s *o, const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (o->len + 1 < o->sz)
			o->dst[o->len++] = s[k];
		else
			o->full = true;
	}
	if (o->sz)
		o->dst[o->len] = '\0';
}

static void put_num(out_s *o, num n)
{
	if (n.n)
		put(o, n.p, n.n);
	else
		put(o, "0", 1);
}

int ml_version_normalize(char *dst, size_t dstsz, const char *v)
{
	pver p;
	if (dstsz)
		dst[0] = '\0';
	if (!v || !ver_parse(&p, v, strlen(v), false))
		return ML_EPARSE;
	out_s o = {dst, dstsz, 0, dstsz == 0};
	if (p.epoch.n) {
		put_num(&o, p.epoch);
		put(&o, "!", 1);
	}
	rel_it it = {p.rel, p.rel + p.rel_len};
	for (size_t k = 0; k < p.n_rel; k++) {
		if (k)
			put(&o, ".", 1);
		put_num(&o, rel_next(&it));
	}
	if (p.pre) {
		static const char *const names[] = {"", "a", "b", "rc"};
		put(&o, names[p.pre], strlen(names[p.pre]));
		put_num(&o, p.pre_n);
	}
	if (p.post) {
		put(&o, ".post", 5);
		put_num(&o, p.post_n);
	}
	if (p.dev) {
		put(&o, ".dev", 4);
		put_num(&o, p.dev_n);
	}
	if (p.local) {
		/* segments joined by '.', lower case, numbers without leading
		 * zeros (they compare as numbers) */
		const char *q = p.local, *e = p.local + p.local_len;
		put(&o, "+", 1);
		while (q < e) {
			const char *z = q;
			bool numeric = true;
			while (z < e && !is_sep(*z))
				numeric &= isdigit((unsigned char)*z++) != 0;
			if (numeric) {
				put_num(&o, mknum(q, (size_t)(z - q)));
			} else {
				for (const char *k = q; k < z; k++) {
					char c = (char)tolower((unsigned char)*k);
					put(&o, &c, 1);
				}
			}
			if (z < e)
				put(&o, ".", 1);
			q = z < e ? z + 1 : z;
		}
	}
	return o.full ? ML_EFAIL : 0;
}

/* --- specifiers ---------------------------------------------------------- */

typedef enum op {
	OP_ARBITRARY,  /* === */
	OP_COMPATIBLE, /* ~= */
	OP_EQ,
	OP_NE,
	OP_LE,
	OP_GE,
	OP_LT,
	OP_GT,
} op;

typedef struct clause {
	op op;
	pver v;          /* for every operator but === */
	const char *raw; /* the operand text, trimmed */
	size_t raw_len;
} clause;

/* Parses one trimmed clause s[0..len). */
static bool clause_parse(clause *c, const char *s, size_t len)
{
	static const struct {
		const char *text;
		op op;
	} ops[] = {{"===", OP_ARBITRARY}, {"~=", OP_COMPATIBLE}, {"==", OP_EQ}, {"!=", OP_NE},
	           {"<=", OP_LE},         {">=", OP_GE},         {"<", OP_LT},  {">", OP_GT}};
	size_t k, n = 0;
	for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		n = strlen(ops[k].text);
		if (len >= n && memcmp(s, ops[k].text, n) == 0)
			break;
	}
	if (k == sizeof ops / sizeof ops[0])
		return false;
	c->op = ops[k].op;
	s += n;
	len -= n;
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	c->raw = s;
	c->raw_len = len;
	if (c->op == OP_ARBITRARY) { /* any string, even "" (as packaging) */
		for (size_t i = 0; i < len; i++)
			if (isspace((unsigned char)s[i]) || s[i] == ';' || s[i] == ')')
				return false;
		return true;
	}
	if (len == 0)
		return false;
	bool eq = c->op == OP_EQ || c->op == OP_NE;
	if (!ver_parse(&c->v, s, len, eq))
		return false;
	if (c->v.local && !eq)
		return false;
	if (c->op == OP_COMPATIBLE && c->v.n_rel < 2)
		return false;
	return true;
}

/* Calls fn for every non-empty clause of spec; stops at the first false.
 * Returns false when a clause does not parse. */
static bool clauses_each(const char *spec, bool (*fn)(const clause *, void *), void *ctx,
                         bool *stopped)
{
	const char *p = spec;
	*stopped = false;
	for (;;) {
		const char *q = strchr(p, ',');
		const char *end = q ? q : p + strlen(p);
		const char *a = p, *b = end;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (a < b) {
			clause c;
			if (!clause_parse(&c, a, (size_t)(b - a)))
				return false;
			if (fn && !*stopped && !fn(&c, ctx))
				*stopped = true;
		}
		if (!q)
			return true;
		p = q + 1;
	}
}

bool ml_specifier_valid(const char *spec)
{
	bool stopped;
	return spec && clauses_each(spec, NULL, NULL, &stopped);
}

/* Release prefix match with zero padding of the candidate (PEP 440
 * "Version matching", prefix matching); k = how many segments of spec. */
static bool prefix_match(const pver *cand, const pver *spec, size_t k)
{
	if (num_cmp(cand->epoch, spec->epoch) != 0)
		return false;
	rel_it ic = {cand->rel, cand->rel + cand->rel_len},
	       is = {spec->rel, spec->rel + spec->rel_len};
	for (size_t i = 0; i < k; i++)
		if (num_cmp(rel_next(&ic), rel_next(&is)) != 0)
			return false;
	return true;
}

static bool eq_match(const pver *cand, const pver *spec)
{
	if (spec->wildcard)
		return prefix_match(cand, spec, spec->n_rel);
	return ver_cmp(cand, spec, spec->local != NULL) == 0;
}

typedef struct match_ctx {
	const char *raw; /* candidate, trimmed */
	size_t raw_len;
	pver v;
	bool valid;
	bool all; /* result so far */
} match_ctx;

static bool clause_match(const clause *c, void *vctx)
{
	match_ctx *m = vctx;
	const pver *s = &c->v, *p = &m->v;
	bool ok;
	if (c->op == OP_ARBITRARY) {
		ok = c->raw_len == m->raw_len;
		for (size_t i = 0; ok && i < c->raw_len; i++)
			ok = tolower((unsigned char)c->raw[i]) == tolower((unsigned char)m->raw[i]);
		m->all = m->all && ok;
		return m->all;
	}
	if (!m->valid) {
		m->all = false;
		return false;
	}
	switch (c->op) {
	case OP_COMPATIBLE:
		ok = ver_cmp(p, s, false) >= 0 && prefix_match(p, s, s->n_rel - 1);
		break;
	case OP_EQ:
		ok = eq_match(p, s);
		break;
	case OP_NE:
		ok = !eq_match(p, s);
		break;
	case OP_LE:
		ok = ver_cmp(p, s, false) <= 0;
		break;
	case OP_GE:
		ok = ver_cmp(p, s, false) >= 0;
		break;
	case OP_LT:
		/* "<V" must not admit a pre-release of V unless V is one
		 * itself: below V.dev0, the first pre-release of V */
		if (s->pre || s->dev) {
			ok = ver_cmp(p, s, true) < 0;
		} else {
			pver b = *s;
			b.dev = true;
			b.dev_n = (num){NULL, 0};
			ok = ver_cmp(p, &b, true) < 0;
		}
		break;
	case OP_GT:
		/* ">V" must not admit a local version of V, nor a post-release
		 * of V unless V is one itself */
		ok = ver_cmp(p, s, true) > 0;
		if (ok && (s->dev || s->post))
			ok = ver_cmp(p, s, false) != 0;
		else if (ok)
			ok = !(base_eq(p, s) && p->pre == s->pre &&
			       (!p->pre || num_cmp(p->pre_n, s->pre_n) == 0));
		break;
	default:
		ok = false;
	}
	m->all = m->all && ok;
	return m->all;
}

static bool clause_needs_version(const clause *c, void *vctx)
{
	if (c->op != OP_ARBITRARY)
		*(bool *)vctx = true;
	return true;
}

int ml_specifier_match(bool *out, const char *spec, const char *version, ml_err *err)
{
	bool stopped, needs_version = false;
	if (!spec || !clauses_each(spec, clause_needs_version, &needs_version, &stopped))
		return ml_err_set(err, ML_EPARSE, "invalid version specifier '%s'",
		                  spec ? spec : "(null)");
	if (!version)
		return ml_err_set(err, ML_EPARSE, "no version to match against '%s'", spec);
	match_ctx m = {0};
	const char *a = version, *b = version + strlen(version);
	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	m.raw = a;
	m.raw_len = (size_t)(b - a);
	m.valid = ver_parse(&m.v, version, strlen(version), false);
	if (!m.valid && needs_version)
		return ml_err_set(err, ML_EPARSE, "invalid version '%s' for specifier '%s'",
		                  version, spec);
	m.all = true;
	(void)clauses_each(spec, clause_match, &m, &stopped);
	*out = m.all;
	return 0;
}
