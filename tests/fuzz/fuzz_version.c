/*
 * fuzz_version.c - libFuzzer target for PEP 440 versions and specifiers
 * (src/pkg/version.c): ml_version_valid, ml_version_cmp,
 * ml_version_normalize, ml_specifier_valid and ml_specifier_match, which
 * read versions and requires-python specifiers from index pages, lock
 * files and wheels.
 *
 * Input: up to four lines, three versions a, b, c and a specifier set s
 * (missing lines repeat the last one). Properties, beyond "no crash, no
 * over-read, no leak" (ASan/UBSan):
 *   - ordering: ml_version_cmp is in {-1, 0, 1}, reflexive, antisymmetric
 *     and transitive over a, b, c (invalid strings included: they sort
 *     first, by strcmp);
 *   - normalization: a version that parses normalizes to a version that
 *     parses, compares equal to it and to nothing else differently, and
 *     normalizes to itself again; one that does not parse is refused;
 *   - specifiers built from a valid version v (its normalized form n): "==n"
 *     and "===v" match v, "!=n" does not; without a local label ">=n" and
 *     "<=n" match, ">n" and "<n" do not, and "~=n" matches when n has two
 *     release segments; a release-only n matches "==n.*" and not "!=n.*".
 *     Each of those is a valid specifier;
 *   - the input specifier s: valid ones answer 0 for every valid version
 *     and are the conjunction of their clauses; invalid ones are refused
 *     (ML_EPARSE); without "===" the answer is the same for a version, its
 *     normalized form and every version comparing equal to it.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_version/.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

#define BUF 4096

/* 0 or 1 for a valid specifier and version; -1 when refused. */
static int match(const char *spec, const char *version)
{
	bool out = false;
	ml_err err = ML_ERR_INIT;
	int rc = ml_specifier_match(&out, spec, version, &err);
	CHECK(rc == 0 || rc == ML_EPARSE);
	if (rc)
		CHECK(err.msg[0]);
	return rc ? -1 : out;
}

static void check_order(const char *a, const char *b, const char *c)
{
	const char *v[3] = {a, b, c};
	int m[3][3];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			m[i][j] = ml_version_cmp(v[i], v[j]);
			CHECK(m[i][j] >= -1 && m[i][j] <= 1);
		}
	for (int i = 0; i < 3; i++) {
		CHECK(m[i][i] == 0);
		for (int j = 0; j < 3; j++) {
			CHECK(m[i][j] == -m[j][i]);
			for (int k = 0; k < 3; k++) {
				if (m[i][j] <= 0 && m[j][k] <= 0)
					CHECK(m[i][k] <= 0);
				if (m[i][j] == 0 && m[j][k] == 0)
					CHECK(m[i][k] == 0);
			}
		}
	}
}

/* Normalizes v into n (BUF bytes); false when v is invalid or too long. */
static bool check_normalize(char *n, const char *v, const char *other)
{
	int rc = ml_version_normalize(n, BUF, v);
	if (!ml_version_valid(v)) {
		CHECK(rc == ML_EPARSE);
		return false;
	}
	CHECK(rc == 0 || rc == ML_EFAIL);
	if (rc)
		return false;
	CHECK(ml_version_valid(n));
	CHECK(ml_version_cmp(n, v) == 0);
	CHECK(ml_version_cmp(n, other) == ml_version_cmp(v, other));
	static char again[BUF];
	CHECK(ml_version_normalize(again, sizeof again, n) == 0);
	CHECK(strcmp(again, n) == 0);
	return true;
}

/* Matches the specifier op + n against v; it must be valid. */
static int built(const char *op, const char *n, const char *suffix, const char *v)
{
	static char spec[BUF + 16];
	snprintf(spec, sizeof spec, "%s%s%s", op, n, suffix);
	CHECK(ml_specifier_valid(spec));
	int r = match(spec, v);
	CHECK(r >= 0);
	return r;
}

static bool release_only(const char *n)
{
	for (const char *p = n; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '!'))
			return false;
	return true;
}

/* The specifiers a valid version v (normalized n) must satisfy. */
static void check_built(const char *v, const char *n)
{
	CHECK(built("==", n, "", v) == 1);
	CHECK(built("!=", n, "", v) == 0);
	static char spec[BUF + 16];
	snprintf(spec, sizeof spec, "===%s", v);
	if (ml_specifier_valid(spec))
		CHECK(match(spec, v) == 1);
	if (strchr(n, '+'))
		return; /* local labels only after == and != */
	CHECK(built(">=", n, "", v) == 1);
	CHECK(built("<=", n, "", v) == 1);
	CHECK(built(">", n, "", v) == 0);
	CHECK(built("<", n, "", v) == 0);
	const char *rel = strchr(n, '!') ? strchr(n, '!') + 1 : n;
	size_t segments = 1; /* of the release: digits, '.' digits, ... */
	for (const char *p = rel; *p && ((*p >= '0' && *p <= '9') || *p == '.'); p++)
		if (*p == '.' && p[1] >= '0' && p[1] <= '9')
			segments++;
		else if (*p == '.')
			break;
	if (segments >= 2)
		CHECK(built("~=", n, "", v) == 1);
	if (release_only(n)) {
		CHECK(built("==", n, ".*", v) == 1);
		CHECK(built("!=", n, ".*", v) == 0);
	}
}

/* The input specifier against the input versions. */
static void check_spec(const char *s, const char *const *v, const char *const *n, int nv)
{
	bool valid = ml_specifier_valid(s);
	bool arbitrary = strstr(s, "===") != NULL;
	for (int i = 0; i < nv; i++) {
		int r = match(s, v[i]);
		if (!valid) {
			CHECK(r == -1);
			continue;
		}
		if (!ml_version_valid(v[i]))
			continue;
		CHECK(r >= 0);
		/* The conjunction of the clauses. */
		int all = 1;
		const char *p = s;
		for (;;) {
			const char *q = strchr(p, ',');
			size_t len = q ? (size_t)(q - p) : strlen(p);
			static char one[BUF];
			if (len >= sizeof one)
				break;
			memcpy(one, p, len);
			one[len] = '\0';
			int c = match(one, v[i]);
			CHECK(c >= 0);
			all &= c;
			if (!q)
				break;
			p = q + 1;
		}
		CHECK(r == all);
		if (arbitrary)
			continue;
		if (n[i])
			CHECK(match(s, n[i]) == r);
		for (int j = 0; j < nv; j++)
			if (ml_version_valid(v[j]) && ml_version_cmp(v[i], v[j]) == 0)
				CHECK(match(s, v[j]) == r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= BUF || memchr(data, '\0', size))
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	const char *part[4];
	int np = 0;
	for (char *p = s; np < 4;) {
		part[np++] = p;
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	for (int i = np; i < 4; i++)
		part[i] = part[np - 1];

	check_order(part[0], part[1], part[2]);
	static char norm[3][BUF];
	const char *n[3];
	for (int i = 0; i < 3; i++) {
		n[i] = check_normalize(norm[i], part[i], part[(i + 1) % 3]) ? norm[i] : NULL;
		if (n[i])
			check_built(part[i], n[i]);
	}
	check_spec(part[3], part, n, 3);
	free(s);
	return 0;
}
