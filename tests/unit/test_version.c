/*
 * test_version.c - specs for PEP 440 versions and version specifiers
 * (src/pkg/version.c): validity, normalization, ordering, and specifier
 * matching as used for requires-python and markers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void test_valid_versions_are_accepted(void **state)
{
	static const char *const ok[] = {
	        "1",
	        "1.0",
	        "1.0.0",
	        "2.6.0+cu124",
	        "1!2.0",
	        "v1.0",
	        "V1.0",
	        " 1.0 ",
	        "1.0a1",
	        "1.0alpha1",
	        "1.0.a.1",
	        "1.0-b2",
	        "1.0rc1",
	        "1.0c1",
	        "1.0pre1",
	        "1.0preview1",
	        "1.0.post1",
	        "1.0-1",
	        "1.0post",
	        "1.0.rev2",
	        "1.0r3",
	        "1.0.dev0",
	        "1.0dev",
	        "1.0a1.post2.dev3",
	        "1.0+ubuntu-1",
	        "1.0+abc.5_x",
	        "2024.01.15",
	        "1.0A1",
	        "1.0RC1",
	        "1.0a.",
	        "00.01",
	        "1.0.post.dev",
	        "1.0_post_1",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(ok); i++)
		if (!ml_version_valid(ok[i]))
			fail_msg("'%s' should be a valid version", ok[i]);
}

static void test_invalid_versions_are_refused(void **state)
{
	static const char *const bad[] = {
	        "",           " ",       "1.",          ".1",    "1..0",
	        "1.0-",       "a",       "1.0+",        "1.0+.", "1.0+a..b",
	        "1.0 0",      "1!",      "!1",          "1.0.*", "1.0-dev--",
	        "1.0.post--", "1.0a1a2", "1.0+cu124+x", "1.0_",  "1.0a1.post2.dev3.dev4",
	        "1,0",        "1.0\n2",  "vv1",         "1.0~1",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(bad); i++)
		if (ml_version_valid(bad[i]))
			fail_msg("'%s' should not be a valid version", bad[i]);
	assert_false(ml_version_valid(NULL));
}

static void test_release_ignores_trailing_zeros(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("1.0", "1.0.0"), 0);
	assert_int_equal(ml_version_cmp("1", "1.0.0.0"), 0);
	assert_int_equal(ml_version_cmp("2.6", "2.6.0"), 0);
	assert_int_equal(ml_version_cmp("1.0.1", "1.0"), 1);
}

static void test_leading_zeros_and_case_and_spelling_are_ignored(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("1.01", "1.1"), 0);
	assert_int_equal(ml_version_cmp("1.0ALPHA1", "1.0a1"), 0);
	assert_int_equal(ml_version_cmp("1.0-c1", "1.0rc1"), 0);
	assert_int_equal(ml_version_cmp("1.0-1", "1.0.post1"), 0);
	assert_int_equal(ml_version_cmp("v1.0", "1.0"), 0);
	assert_int_equal(ml_version_cmp("0!1.0", "1.0"), 0);
	assert_int_equal(ml_version_cmp("1.0+Ubuntu-1", "1.0+ubuntu.1"), 0);
}

/* Ascending, PEP 440 "Summary of permitted suffixes and relative ordering". */
static void test_ordering_follows_pep440_summary(void **state)
{
	static const char *const asc[] = {
	        "0.9",
	        "1.0.dev456",
	        "1.0a1",
	        "1.0a2.dev456",
	        "1.0a12.dev456",
	        "1.0a12",
	        "1.0b1.dev456",
	        "1.0b2",
	        "1.0b2.post345.dev456",
	        "1.0b2.post345",
	        "1.0rc1.dev456",
	        "1.0rc1",
	        "1.0",
	        "1.0+abc.5",
	        "1.0+abc.7",
	        "1.0+5",
	        "1.0.post456.dev34",
	        "1.0.post456",
	        "1.0.15",
	        "1.1.dev1",
	        "1.1",
	        "2024.1",
	        "1!0.1",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(asc); i++)
		for (size_t j = 0; j < N_OF(asc); j++) {
			int want = (i > j) - (i < j);
			int got = ml_version_cmp(asc[i], asc[j]);
			if (got != want)
				fail_msg("cmp('%s', '%s') = %d, want %d", asc[i], asc[j], got,
				         want);
		}
}

static void test_local_version_sorts_after_its_public_version(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("2.6.0", "2.6.0+cu124"), -1);
	assert_int_equal(ml_version_cmp("2.6.0+cu124", "2.6.1"), -1);
	assert_int_equal(ml_version_cmp("2.6.0+cu124", "2.6.0+cu126"), -1);
}

static void test_local_segments_compare_numbers_as_numbers_and_above_words(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("1.0+9", "1.0+10"), -1);
	assert_int_equal(ml_version_cmp("1.0+abc", "1.0+1"), -1);
	/* alphanumeric segments compare as strings: "cu10" < "cu9" */
	assert_int_equal(ml_version_cmp("1.0+cu10", "1.0+cu9"), -1);
	assert_int_equal(ml_version_cmp("1.0+a", "1.0+a.0"), -1);
}

static void test_numbers_of_any_length_compare_exactly(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("1.99999999999999999999999", "1.100000000000000000000000"),
	                 -1);
	assert_int_equal(ml_version_cmp("18446744073709551616", "18446744073709551615"), 1);
	assert_int_equal(ml_version_cmp("1.0.dev000000000000000000001", "1.0.dev1"), 0);
}

static void test_invalid_versions_sort_before_valid_ones(void **state)
{
	(void)state;
	assert_int_equal(ml_version_cmp("not-a-version", "0"), -1);
	assert_int_equal(ml_version_cmp("0", "not-a-version"), 1);
	assert_int_equal(ml_version_cmp(NULL, "1.0"), -1);
	assert_int_equal(ml_version_cmp("abc", "abd"), -1);
	assert_int_equal(ml_version_cmp("abc", "abc"), 0);
}

static void test_normalize_writes_the_canonical_form(void **state)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
	        {"1.0", "1.0"},
	        {"V1.0-RC.1", "1.0rc1"},
	        {"1.0-1", "1.0.post1"},
	        {"1.0.alpha", "1.0a0"},
	        {"1.0-PRE-2", "1.0rc2"},
	        {"1.0rev", "1.0.post0"},
	        {"1.0_DEV", "1.0.dev0"},
	        {"1!02.0+Ubuntu-1", "1!2.0+ubuntu.1"},
	        {"0!1.0", "1.0"},
	        {"2.6.0+cu124", "2.6.0+cu124"},
	        {"1+2.10.00", "1+2.10.0"},
	        {" 1.0.0 ", "1.0.0"},
	};
	char buf[64];
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		assert_int_equal(ml_version_normalize(buf, sizeof buf, rows[i].in), 0);
		if (strcmp(buf, rows[i].out) != 0)
			fail_msg("normalize('%s') = '%s', want '%s'", rows[i].in, buf, rows[i].out);
	}
}

static void test_normalize_refuses_invalid_and_reports_truncation(void **state)
{
	char buf[4];
	(void)state;
	assert_int_equal(ml_version_normalize(buf, sizeof buf, "1.0-"), ML_EPARSE);
	assert_int_equal(ml_version_normalize(buf, sizeof buf, "1.0.0.0"), ML_EFAIL);
	assert_string_equal(buf, "1.0");
}

static void test_specifier_validity_follows_pep440(void **state)
{
	static const struct {
		const char *spec;
		bool valid;
	} rows[] = {
	        {"", true},
	        {">=3.9,<3.14", true},
	        {" >= 3.9 , < 3.14 ", true},
	        {"==2.6.0", true},
	        {"==2.6.0+cu124", true},
	        {"==3.12.*", true},
	        {"!=3.0.*", true},
	        {"~=2.6", true},
	        {"~=1.4.5a1", true},
	        {"===foobar", true},
	        {">=3.9,", true},
	        {"~=2", false},         /* ~= needs two release segments */
	        {">=1.0+local", false}, /* local only with == and != */
	        {"~=1.0+local", false},
	        {"==1.*.0", false},
	        {">=1.0.*", false}, /* wildcard only with == and != */
	        {"==1.0a1.*", false},
	        {"=>1.0", false},
	        {"1.0", false},
	        {">=", false},
	        {">= 1.0 2.0", false},
	        {"===a b", false},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++)
		if (ml_specifier_valid(rows[i].spec) != rows[i].valid)
			fail_msg("specifier_valid('%s') should be %d", rows[i].spec, rows[i].valid);
	assert_false(ml_specifier_valid(NULL));
}

static void test_specifier_match_follows_pep440(void **state)
{
	static const struct {
		const char *spec, *version;
		bool match;
	} rows[] = {
	        /* requires-python */
	        {">=3.9,<3.14", "3.12.0", true},
	        {">=3.9,<3.14", "3.14.0", false},
	        {">=3.9,<3.14", "3.8.18", false},
	        {">=3.10", "3.9.18", false},
	        {"!=3.0.*,!=3.1.*,>=2.7", "3.1.4", false},
	        {"!=3.0.*,!=3.1.*,>=2.7", "3.12.0", true},
	        {"", "3.12.0", true},
	        /* == and local versions */
	        {"==2.6.0", "2.6.0", true},
	        {"==2.6.0", "2.6", true},
	        {"==2.6.0", "2.6.0+cu124", true},
	        {"==2.6.0+cu124", "2.6.0+cu124", true},
	        {"==2.6.0+cu124", "2.6.0+cu126", false},
	        {"==2.6.0+cu124", "2.6.0", false},
	        {"!=2.6.0", "2.6.0+cu124", false},
	        /* prefix matching */
	        {"==3.12.*", "3.12.7", true},
	        {"==3.12.*", "3.12", true},
	        {"==3.12.*", "3.13.0", false},
	        {"==3.1.*", "3.12.0", false},
	        {"==1.1.*", "1.1.post1", true},
	        {"==1.1.*", "1.1a1", true},
	        {"==1.1.*", "1.1.0+local", true},
	        {"==1.0.0.*", "1", true},
	        /* compatible release */
	        {"~=2.2", "2.3", true},
	        {"~=2.2", "3.0", false},
	        {"~=2.2", "2.1", false},
	        {"~=1.4.5", "1.4.9", true},
	        {"~=1.4.5", "1.5.0", false},
	        {"~=2.2.post3", "2.2.post4", true},
	        /* exclusive ordering */
	        {"<3.13", "3.13.0rc1", false},
	        {"<3.13", "3.12.9", true},
	        {"<3.13rc2", "3.13.0rc1", true},
	        {">3.12", "3.12.post1", false},
	        {">3.12", "3.12.0+local", false},
	        {">3.12", "3.12.1", true},
	        {">3.12.post1", "3.12.post2", true},
	        {">1.0rc1", "1.0.post1", true},
	        {"<=2.0", "2.0+local", true},
	        {">=2.0", "2.0.dev1", false},
	        /* pre-releases are ordinary versions here */
	        {">=3.12", "3.13.0b1", true},
	        /* arbitrary equality */
	        {"===foobar", "FooBar", true},
	        {"===1.0", "1.0.0", false},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		bool got = !rows[i].match;
		ml_err err = ML_ERR_INIT;
		int rc = ml_specifier_match(&got, rows[i].spec, rows[i].version, &err);
		if (rc != 0)
			fail_msg("match('%s', '%s') failed: %s", rows[i].spec, rows[i].version,
			         err.msg);
		if (got != rows[i].match)
			fail_msg("match('%s', '%s') = %d, want %d", rows[i].spec, rows[i].version,
			         got, rows[i].match);
	}
}

static void test_specifier_match_refuses_invalid_input_and_leaves_out_alone(void **state)
{
	bool out = true;
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(ml_specifier_match(&out, ">=3.9,<", "3.12", &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, ">=3.9,<"));
	assert_true(out);
	assert_int_equal(ml_specifier_match(&out, ">=3.9", "three", &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "three"));
	assert_true(out);
	/* === alone compares strings, so any string is acceptable */
	assert_int_equal(ml_specifier_match(&out, "===three", "three", &err), 0);
	assert_true(out);
	assert_int_equal(ml_specifier_match(&out, NULL, "1", NULL), ML_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_valid_versions_are_accepted),
	        cmocka_unit_test(test_invalid_versions_are_refused),
	        cmocka_unit_test(test_release_ignores_trailing_zeros),
	        cmocka_unit_test(test_leading_zeros_and_case_and_spelling_are_ignored),
	        cmocka_unit_test(test_ordering_follows_pep440_summary),
	        cmocka_unit_test(test_local_version_sorts_after_its_public_version),
	        cmocka_unit_test(test_local_segments_compare_numbers_as_numbers_and_above_words),
	        cmocka_unit_test(test_numbers_of_any_length_compare_exactly),
	        cmocka_unit_test(test_invalid_versions_sort_before_valid_ones),
	        cmocka_unit_test(test_normalize_writes_the_canonical_form),
	        cmocka_unit_test(test_normalize_refuses_invalid_and_reports_truncation),
	        cmocka_unit_test(test_specifier_validity_follows_pep440),
	        cmocka_unit_test(test_specifier_match_follows_pep440),
	        cmocka_unit_test(test_specifier_match_refuses_invalid_input_and_leaves_out_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
