/*
 * fuzz_marker.c - libFuzzer target for PEP 508 markers and PEP 440
 * versions (src/pkg/marker.c, src/pkg/version.c).
 *
 * The input is a marker: it is checked and evaluated in three
 * environments, and a marker that ml_marker_check() refuses must be refused
 * by ml_marker_eval() too. Split at its first newline, the input is also
 * two versions (or a specifier and a version): comparison must be
 * antisymmetric and reflexive, normalization must keep a version equal to
 * itself, and matching must succeed whenever both sides are valid.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_marker/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static void fuzz_versions(const char *a, const char *b)
{
	int ab = ml_version_cmp(a, b), ba = ml_version_cmp(b, a);
	CHECK(ab == -ba);
	CHECK(ab >= -1 && ab <= 1);
	CHECK(ml_version_cmp(a, a) == 0);
	char norm[256];
	if (ml_version_valid(a) && ml_version_normalize(norm, sizeof norm, a) == 0) {
		CHECK(ml_version_valid(norm));
		CHECK(ml_version_cmp(norm, a) == 0);
		char again[256];
		CHECK(ml_version_normalize(again, sizeof again, norm) == 0);
		CHECK(strcmp(again, norm) == 0);
	}
	bool out = false;
	ml_err err = ML_ERR_INIT;
	int rc = ml_specifier_match(&out, a, b, &err);
	if (ml_specifier_valid(a) && ml_version_valid(b))
		CHECK(rc == 0);
	if (!ml_specifier_valid(a))
		CHECK(rc == ML_EPARSE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	ml_err err = ML_ERR_INIT;
	int check = ml_marker_check(s, &err);
	CHECK(check == 0 || check == ML_EPARSE || check == ML_ENOMEM);
	static const struct {
		const char *os, *arch;
		int minor;
	} targets[] = {
	        {"linux", "x86_64", 12}, {"windows", "x86_64", 9}, {"darwin", "aarch64", 13}};
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		ml_marker_env env;
		CHECK(ml_marker_env_for(&env, targets[i].os, targets[i].arch, 3,
		                        targets[i].minor) == 0);
		env.extra = i == 1 ? "Gpu_Extra" : NULL;
		env.platform_release = i == 0 ? "5.15.0-91-generic" : "23.1.0";
		bool out = false;
		int rc = ml_marker_eval(&out, s, &env, &err);
		CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
		if (check == ML_EPARSE)
			CHECK(rc == ML_EPARSE);
		if (rc == 0)
			CHECK(check == 0);
	}

	char *nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		fuzz_versions(s, nl + 1);
	} else {
		fuzz_versions(s, s);
	}
	free(s);
	return 0;
}
