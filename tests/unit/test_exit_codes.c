/*
 * test_exit_codes.c - specs for the one table from error code to process
 * exit code (src/core/err.c: ml_exit_code, ml_strerror) and for the
 * README's "Exit codes" table, which must document exactly the exit codes
 * the table produces, each with the meaning the code's name gives.
 *
 * Tests run from the repository root (tests/run-tests.sh does that).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/core.h"

/* Every error code, the exit code it must give and its name. */
static const struct {
	int code;
	int exit_code;
	const char *name;
} expected[] = {
        {ML_OK, 0, "ok"},
        {ML_EFAIL, 1, "failed"},
        {ML_EUSAGE, 2, "usage"},
        {ML_EINTEGRITY, 3, "integrity"},
        {ML_ENET, 4, "network"},
        {ML_EGPU, 5, "gpu check failed"},
        {ML_EUNSUPPORTED, 6, "unsupported system"},
        {ML_ENOENT, 1, "not found"},
        {ML_ENOMEM, 1, "out of memory"},
        {ML_EIO, 1, "i/o error"},
        {ML_EPARSE, 1, "malformed input"},
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static void test_every_error_code_maps_to_its_exit_code(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_EXPECTED; i++)
		if (ml_exit_code(expected[i].code) != expected[i].exit_code)
			fail_msg("ml_exit_code(%d) = %d, expected %d", expected[i].code,
			         ml_exit_code(expected[i].code), expected[i].exit_code);
	assert_int_equal(ml_exit_code(ML_OK), ML_EXIT_OK);
	assert_int_equal(ml_exit_code(ML_EUSAGE), ML_EXIT_USAGE);
	assert_int_equal(ml_exit_code(ML_EINTEGRITY), ML_EXIT_INTEGRITY);
	assert_int_equal(ml_exit_code(ML_ENET), ML_EXIT_NETWORK);
	assert_int_equal(ml_exit_code(ML_EGPU), ML_EXIT_GPU);
	assert_int_equal(ml_exit_code(ML_EUNSUPPORTED), ML_EXIT_UNSUPPORTED);
}

static void test_every_error_code_has_its_lower_case_name(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_EXPECTED; i++) {
		const char *name = ml_strerror(expected[i].code);
		assert_non_null(name);
		assert_string_equal(name, expected[i].name);
		for (const char *c = name; *c; c++)
			assert_false(isupper((unsigned char)*c));
	}
}

static void test_the_spec_lists_every_code_the_table_knows(void **state)
{
	(void)state;
	for (int code = -64; code <= 0; code++) {
		if (strcmp(ml_strerror(code), "unknown error") == 0)
			continue;
		bool listed = false;
		for (size_t i = 0; i < N_EXPECTED; i++)
			listed |= expected[i].code == code;
		if (!listed)
			fail_msg("error code %d ('%s') is missing from this spec", code,
			         ml_strerror(code));
	}
}

static void test_codes_outside_the_table_fail_with_exit_1(void **state)
{
	(void)state;
	static const int unknown[] = {-11, -100, 1, 42};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_int_equal(ml_exit_code(unknown[i]), ML_EXIT_FAILED);
		assert_string_equal(ml_strerror(unknown[i]), "unknown error");
	}
}

static void test_an_err_carries_its_code_message_and_hint(void **state)
{
	(void)state;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_err_set(&err, ML_EINTEGRITY, "'%s' has sha256 %s", "a.whl", "00"),
	                 ML_EINTEGRITY);
	ml_err_hint(&err, "download it again");
	assert_int_equal(err.code, ML_EINTEGRITY);
	assert_string_equal(err.msg, "'a.whl' has sha256 00");
	assert_string_equal(err.hint, "download it again");
	assert_int_equal(ml_exit_code(err.code), 3);
	/* A new message clears the old hint; a NULL err is allowed. */
	ml_err_set(&err, ML_ENET, "timed out");
	assert_string_equal(err.hint, "");
	assert_int_equal(ml_err_set(NULL, ML_ENET, "x"), ML_ENET);
}

/* Reads README.md's "## Exit codes" table into meaning[code] (lower case);
 * returns how many rows it had. */
static int readme_exit_codes(char meaning[16][256])
{
	FILE *f = fopen("README.md", "r");
	if (!f)
		fail_msg("README.md not found: run the tests from the repository root");
	char line[1024];
	bool in = false;
	int rows = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "## ", 3) == 0) {
			in = strncmp(line, "## Exit codes", 13) == 0;
			continue;
		}
		int code;
		char text[256];
		if (!in || sscanf(line, "| %d | %255[^|\n]", &code, text) != 2)
			continue;
		if (code < 0 || code >= 16)
			fail_msg("README exit code %d out of range", code);
		if (meaning[code][0])
			fail_msg("README lists exit code %d twice", code);
		for (char *c = text; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		snprintf(meaning[code], 256, "%s", text);
		rows++;
	}
	fclose(f);
	return rows;
}

static void test_readme_documents_exactly_the_exit_codes_the_table_gives(void **state)
{
	(void)state;
	char meaning[16][256];
	memset(meaning, 0, sizeof(meaning));
	int rows = readme_exit_codes(meaning);
	bool produced[16] = {false};
	for (size_t i = 0; i < N_EXPECTED; i++) {
		int x = ml_exit_code(expected[i].code);
		produced[x] = true;
		if (!meaning[x][0])
			fail_msg("exit code %d (%s) is not in README.md's table", x,
			         ml_strerror(expected[i].code));
	}
	int n_produced = 0;
	for (int x = 0; x < 16; x++) {
		if (meaning[x][0] && !produced[x])
			fail_msg("README.md documents exit code %d, which no error code gives", x);
		n_produced += produced[x];
	}
	assert_int_equal(rows, n_produced);
}

static void test_readme_meanings_match_the_code_names(void **state)
{
	(void)state;
	char meaning[16][256];
	memset(meaning, 0, sizeof(meaning));
	readme_exit_codes(meaning);
	assert_non_null(strstr(meaning[0], "success"));
	/* Codes with an exit code of their own are described by their name. */
	for (size_t i = 0; i < N_EXPECTED; i++) {
		int x = ml_exit_code(expected[i].code);
		if (x < 1 || (x == 1 && expected[i].code != ML_EFAIL))
			continue;
		if (!strstr(meaning[x], ml_strerror(expected[i].code)))
			fail_msg("README says exit %d is '%s', the code is named '%s'", x,
			         meaning[x], ml_strerror(expected[i].code));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_every_error_code_maps_to_its_exit_code),
	        cmocka_unit_test(test_every_error_code_has_its_lower_case_name),
	        cmocka_unit_test(test_the_spec_lists_every_code_the_table_knows),
	        cmocka_unit_test(test_codes_outside_the_table_fail_with_exit_1),
	        cmocka_unit_test(test_an_err_carries_its_code_message_and_hint),
	        cmocka_unit_test(test_readme_documents_exactly_the_exit_codes_the_table_gives),
	        cmocka_unit_test(test_readme_meanings_match_the_code_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
