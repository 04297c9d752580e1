/*
 * marker.c - PEP 508 environment markers.
 *
 * A recursive-descent parser for the marker grammar of PEP 508 ("Environment
 * Markers" and the complete grammar at its end) that evaluates while it
 * parses: marker_or := marker_and ('or' marker_and)*, marker_and :=
 * marker_expr ('and' marker_expr)*, marker_expr := '(' marker ')' |
 * marker_var marker_op marker_var. Every comparison is evaluated, so
 * errors do not depend on short-circuiting. Version-valued variables
 * compare with PEP 440 (via version.c) when both sides allow it; other
 * values compare as the PyPA "Dependency specifiers" specification (the
 * living successor of PEP 508) now says: equality and containment only, no
 * ordering. The same parser without an environment checks syntax for
 * requirements.c.
 */
#include "internal.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64 /* parentheses; keeps the recursion bounded */

/* --- the environment of a target ---------------------------------------- */

/* python_version / python_full_version for 3.0 .. 3.49, as constants */
/* clang-format off */
#define PY3(n) {"3." #n, "3." #n ".0"}
#define PY3_10(t) PY3(t##0), PY3(t##1), PY3(t##2), PY3(t##3), PY3(t##4), \
		  PY3(t##5), PY3(t##6), PY3(t##7), PY3(t##8), PY3(t##9)
static const char *const py3_versions[][2] = {
	PY3(0), PY3(1), PY3(2), PY3(3), PY3(4), PY3(5), PY3(6), PY3(7), PY3(8), PY3(9),
	PY3_10(1), PY3_10(2), PY3_10(3), PY3_10(4),
};
/* clang-format on */

int ml_marker_env_for(ml_marker_env *out, const char *os, const char *arch, int py_major,
                      int py_minor)
{
	static const struct {
		const char *os, *arch; /* inputs */
		const char *os_name, *sys_platform, *machine, *system;
	} rows[] = {
	        {"linux", "x86_64", "posix", "linux", "x86_64", "Linux"},
	        {"linux", "aarch64", "posix", "linux", "aarch64", "Linux"},
	        {"windows", "x86_64", "nt", "win32", "AMD64", "Windows"},
	        {"windows", "aarch64", "nt", "win32", "ARM64", "Windows"},
	        {"darwin", "x86_64", "posix", "darwin", "x86_64", "Darwin"},
	        {"darwin", "aarch64", "posix", "darwin", "arm64", "Darwin"},
	};
	if (!os || !arch)
		return ML_EUNSUPPORTED;
	if (strcmp(arch, "amd64") == 0 || strcmp(arch, "AMD64") == 0)
		arch = "x86_64";
	else if (strcmp(arch, "arm64") == 0 || strcmp(arch, "ARM64") == 0)
		arch = "aarch64";
	const char *pv, *pfull;
	if (py_major == 3 && py_minor >= 0 &&
	    (size_t)py_minor < sizeof py3_versions / sizeof py3_versions[0]) {
		pv = py3_versions[py_minor][0];
		pfull = py3_versions[py_minor][1];
	} else if (py_major == 2 && py_minor == 7) {
		pv = "2.7";
		pfull = "2.7.0";
	} else {
		return ML_EUNSUPPORTED;
	}
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		if (strcmp(rows[k].os, os) != 0 || strcmp(rows[k].arch, arch) != 0)
			continue;
		*out = (ml_marker_env){
		        .os_name = rows[k].os_name,
		        .sys_platform = rows[k].sys_platform,
		        .platform_machine = rows[k].machine,
		        .platform_python_implementation = "CPython",
		        .platform_release = "",
		        .platform_system = rows[k].system,
		        .platform_version = "",
		        .python_version = pv,
		        .python_full_version = pfull,
		        .implementation_name = "cpython",
		        .implementation_version = pfull,
		        .extra = NULL,
		};
		return 0;
	}
	return ML_EUNSUPPORTED;
}

/* --- parsing and evaluating ----------------------------------------------- */

/* The variables of PEP 508 "Environment Markers" and packaging's legacy
 * spellings; `version` marks those compared as PEP 440 versions. */
static const struct {
	const char *name;
	size_t offset;
	bool version;
} variables[] = {
        {"python_version", offsetof(ml_marker_env, python_version), true},
        {"python_full_version", offsetof(ml_marker_env, python_full_version), true},
        {"os_name", offsetof(ml_marker_env, os_name), false},
        {"os.name", offsetof(ml_marker_env, os_name), false},
        {"sys_platform", offsetof(ml_marker_env, sys_platform), false},
        {"sys.platform", offsetof(ml_marker_env, sys_platform), false},
        {"platform_release", offsetof(ml_marker_env, platform_release), true},
        {"platform_system", offsetof(ml_marker_env, platform_system), false},
        {"platform_version", offsetof(ml_marker_env, platform_version), false},
        {"platform.version", offsetof(ml_marker_env, platform_version), false},
        {"platform_machine", offsetof(ml_marker_env, platform_machine), false},
        {"platform.machine", offsetof(ml_marker_env, platform_machine), false},
        {"platform_python_implementation", offsetof(ml_marker_env, platform_python_implementation),
         false},
        {"platform.python_implementation", offsetof(ml_marker_env, platform_python_implementation),
         false},
        {"python_implementation", offsetof(ml_marker_env, platform_python_implementation), false},
        {"implementation_name", offsetof(ml_marker_env, implementation_name), false},
        {"implementation_version", offsetof(ml_marker_env, implementation_version), true},
        {"extra", offsetof(ml_marker_env, extra), false},
};

typedef enum mop { M_LT, M_LE, M_EQ, M_NE, M_GE, M_GT, M_COMPAT, M_ARB, M_IN, M_NOT_IN } mop;

static const char *const mop_text[] = {
        "<", "<=", "==", "!=", ">=", ">", "~=", "===", "in", "not in"};

typedef struct operand {
	const char *p; /* the value: literal contents or the env string */
	size_t n;
	bool literal;
	bool extra;   /* the `extra` variable: compare PEP 685-normalized */
	bool version; /* a version-valued variable (python_version, ...) */
} operand;

typedef struct mparser {
	const char *s;
	size_t len, i;
	const ml_marker_env *env; /* NULL: syntax check only */
	ml_err *err;
	int depth;
} mparser;

static int fail(mparser *p, size_t at, const char *what)
{
	return ml_err_set(p->err, ML_EPARSE, "invalid marker '%.300s': %s at column %zu", p->s,
	                  what, at + 1);
}

static void skip_ws(mparser *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
	                         p->s[p->i] == '\r' || p->s[p->i] == '\f' || p->s[p->i] == '\v'))
		p->i++;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* Matches keyword kw at p->i followed by a word boundary. */
static bool keyword(const mparser *p, const char *kw)
{
	size_t n = strlen(kw);
	if (p->len - p->i < n || memcmp(p->s + p->i, kw, n) != 0)
		return false;
	size_t j = p->i + n;
	return j == p->len || !(isalnum((unsigned char)p->s[j]) || p->s[j] == '_');
}

static int parse_operand(mparser *p, operand *o)
{
	skip_ws(p);
	size_t start = p->i;
	if (p->i >= p->len)
		return fail(p, start, "expected a variable or a quoted string, found the end");
	char c = p->s[p->i];
	if (c == '\'' || c == '"') {
		const char *end = memchr(p->s + p->i + 1, c, p->len - p->i - 1);
		if (!end)
			return fail(p, start, "unterminated string");
		*o = (operand){p->s + p->i + 1, (size_t)(end - p->s - p->i - 1), true, false,
		               false};
		p->i = (size_t)(end - p->s) + 1;
		return 0;
	}
	if (!ident_char(c))
		return fail(p, start, "expected a variable or a quoted string");
	while (p->i < p->len && ident_char(p->s[p->i]))
		p->i++;
	size_t n = p->i - start;
	for (size_t k = 0; k < sizeof variables / sizeof variables[0]; k++) {
		if (strlen(variables[k].name) != n ||
		    memcmp(variables[k].name, p->s + start, n) != 0)
			continue;
		const char *v = "";
		if (p->env) {
			v = *(const char *const *)((const char *)p->env + variables[k].offset);
			if (!v)
				v = "";
		}
		*o = (operand){v, strlen(v), false, strcmp(variables[k].name, "extra") == 0,
		               variables[k].version};
		return 0;
	}
	char what[160];
	snprintf(what, sizeof what, "unknown variable '%.*s'", (int)(n > 100 ? 100 : n),
	         p->s + start);
	return fail(p, start, what);
}

static int parse_op(mparser *p, mop *out)
{
	static const struct {
		const char *text;
		mop op;
	} sym[] = {{"===", M_ARB}, {"==", M_EQ}, {"!=", M_NE}, {"<=", M_LE},
	           {">=", M_GE},   {"<", M_LT},  {">", M_GT},  {"~=", M_COMPAT}};
	skip_ws(p);
	for (size_t k = 0; k < sizeof sym / sizeof sym[0]; k++) {
		size_t n = strlen(sym[k].text);
		if (p->len - p->i >= n && memcmp(p->s + p->i, sym[k].text, n) == 0) {
			p->i += n;
			*out = sym[k].op;
			return 0;
		}
	}
	if (keyword(p, "in")) {
		p->i += 2;
		*out = M_IN;
		return 0;
	}
	if (keyword(p, "not")) {
		size_t save = p->i;
		p->i += 3;
		size_t before = p->i;
		skip_ws(p);
		if (p->i > before && keyword(p, "in")) {
			p->i += 2;
			*out = M_NOT_IN;
			return 0;
		}
		p->i = save;
	}
	return fail(p, p->i,
	            p->i >= p->len
	                    ? "expected an operator (==, !=, <, <=, >, >=, ~=, ===, in, not in), "
	                      "found the end"
	                    : "expected an operator (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
}

/* Comparisons of values that are not both versions (Dependency
 * specifiers, "Environment Markers"): no ordering is assumed, so <= and >=
 * test equality and < and > are false; in and not in test containment. */
static int string_op(mop op, const char *l, const char *r)
{
	bool eq = strcmp(l, r) == 0;
	switch (op) {
	case M_LT:
	case M_GT:
		return 0;
	case M_LE:
	case M_EQ:
	case M_GE:
		return eq;
	case M_NE:
		return !eq;
	case M_IN:
		return strstr(r, l) != NULL;
	case M_NOT_IN:
		return strstr(r, l) == NULL;
	default:
		return -1; /* ~= and === have no string meaning */
	}
}

/* Evaluates `lhs op rhs`: PEP 440 when a side is a version-valued
 * variable and `op rhs` is a specifier (a left side that is not a version
 * then matches nothing, as in packaging); else string_op(), where ~= and
 * === have no meaning. */
static int compare(mparser *p, size_t op_at, const operand *lhs, mop op, const operand *rhs,
                   bool *out)
{
	char *l, *r, *spec = NULL;
	if (lhs->extra || rhs->extra) {
		l = ml_pep503_normalize(lhs->p, lhs->n);
		r = ml_pep503_normalize(rhs->p, rhs->n);
	} else {
		l = ml_asprintf("%.*s", (int)lhs->n, lhs->p);
		r = ml_asprintf("%.*s", (int)rhs->n, rhs->p);
	}
	int rc = 0;
	if (!l || !r) {
		rc = ml_err_set(p->err, ML_ENOMEM, "out of memory evaluating a marker");
		goto out;
	}
	if (op != M_IN && op != M_NOT_IN && (lhs->version || rhs->version) && !strchr(r, ',')) {
		spec = ml_asprintf("%s%s", mop_text[op], r);
		if (!spec) {
			rc = ml_err_set(p->err, ML_ENOMEM, "out of memory evaluating a marker");
			goto out;
		}
		if (ml_specifier_valid(spec)) {
			/* a value that is not a version satisfies no specifier */
			if (op == M_ARB || ml_version_valid(l))
				rc = ml_specifier_match(out, spec, l, p->err);
			else
				*out = false;
			goto out;
		}
	}
	int v = string_op(op, l, r);
	if (v < 0) {
		char what[200];
		snprintf(what, sizeof what,
		         "'%s' compares versions only (python_version, python_full_version, "
		         "implementation_version or platform_release with a version)",
		         mop_text[op]);
		rc = fail(p, op_at, what);
		goto out;
	}
	*out = v != 0;
out:
	free(l);
	free(r);
	free(spec);
	return rc;
}

/* Without an environment: refuse what no environment could make valid,
 * exactly the ~= and === comparisons compare() would refuse whatever the
 * variables hold. */
static int check_literals(mparser *p, size_t op_at, const operand *lhs, mop op, const operand *rhs)
{
	if (op != M_COMPAT && op != M_ARB)
		return 0;
	char *spec = NULL;
	bool ok = lhs->version || rhs->version;
	if (ok && rhs->literal) {
		spec = ml_asprintf("%s%.*s", mop_text[op], (int)rhs->n, rhs->p);
		if (!spec)
			return ml_err_set(p->err, ML_ENOMEM, "out of memory checking a marker");
		ok = !memchr(rhs->p, ',', rhs->n) && ml_specifier_valid(spec);
	}
	free(spec);
	if (ok)
		return 0;
	char what[200];
	snprintf(what, sizeof what,
	         "'%s' compares versions only (python_version, python_full_version, "
	         "implementation_version or platform_release with a version)",
	         mop_text[op]);
	return fail(p, op_at, what);
}

static int parse_or(mparser *p, bool *out);

static int parse_expr(mparser *p, bool *out)
{
	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == '(') {
		size_t open = p->i;
		if (++p->depth > MAX_DEPTH)
			return fail(p, open, "parentheses nested too deeply");
		p->i++;
		int rc = parse_or(p, out);
		if (rc)
			return rc;
		skip_ws(p);
		if (p->i >= p->len || p->s[p->i] != ')') {
			char what[96];
			snprintf(what, sizeof what, "expected ')' to close the '(' at column %zu",
			         open + 1);
			return fail(p, p->i, what);
		}
		p->i++;
		p->depth--;
		return 0;
	}
	operand lhs, rhs;
	mop op = M_EQ;
	int rc = parse_operand(p, &lhs);
	if (rc)
		return rc;
	skip_ws(p);
	size_t op_at = p->i;
	if ((rc = parse_op(p, &op)) || (rc = parse_operand(p, &rhs)))
		return rc;
	if (!p->env) {
		*out = true;
		return check_literals(p, op_at, &lhs, op, &rhs);
	}
	return compare(p, op_at, &lhs, op, &rhs, out);
}

static int parse_and(mparser *p, bool *out)
{
	int rc = parse_expr(p, out);
	while (!rc) {
		size_t save = p->i;
		skip_ws(p);
		if (!keyword(p, "and")) {
			p->i = save;
			break;
		}
		p->i += 3;
		bool r = false;
		if (!(rc = parse_expr(p, &r)))
			*out = *out && r;
	}
	return rc;
}

static int parse_or(mparser *p, bool *out)
{
	int rc = parse_and(p, out);
	while (!rc) {
		size_t save = p->i;
		skip_ws(p);
		if (!keyword(p, "or")) {
			p->i = save;
			break;
		}
		p->i += 2;
		bool r = false;
		if (!(rc = parse_and(p, &r)))
			*out = *out || r;
	}
	return rc;
}

static int run(bool *out, const char *marker, const ml_marker_env *env, ml_err *err)
{
	if (!marker)
		return ml_err_set(err, ML_EPARSE, "invalid marker: none given");
	mparser p = {marker, strlen(marker), 0, env, err, 0};
	skip_ws(&p);
	if (p.i == p.len)
		return ml_err_set(err, ML_EPARSE, "invalid marker '%.300s': empty marker", marker);
	bool v = false;
	int rc = parse_or(&p, &v);
	if (rc)
		return rc;
	skip_ws(&p);
	if (p.i < p.len)
		return fail(&p, p.i,
		            p.s[p.i] == ')' ? "unmatched ')'" : "expected 'and', 'or' or the end");
	*out = v;
	return 0;
}

int ml_marker_eval(bool *out, const char *marker, const ml_marker_env *env, ml_err *err)
{
	static const ml_marker_env empty = {0};
	return run(out, marker, env ? env : &empty, err);
}

int ml_marker_check(const char *marker, ml_err *err)
{
	bool ignored;
	return run(&ignored, marker, NULL, err);
}
