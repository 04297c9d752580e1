/*
 * test_marker.c - specs for PEP 508 environment markers (src/pkg/marker.c):
 * the environments mlsetup plans for, the grammar (precedence, parentheses,
 * quoting, operators), version versus string comparison, and error
 * messages that point at a column.
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

static ml_marker_env env_of(const char *os, const char *arch, int major, int minor)
{
	ml_marker_env env;
	memset(&env, 0, sizeof env);
	if (ml_marker_env_for(&env, os, arch, major, minor) != 0)
		fail_msg("no marker environment for %s %s %d.%d", os, arch, major, minor);
	return env;
}

static bool eval(const char *marker, const ml_marker_env *env)
{
	bool out = false;
	ml_err err = ML_ERR_INIT;
	if (ml_marker_eval(&out, marker, env, &err) != 0)
		fail_msg("marker '%s' failed: %s", marker, err.msg);
	return out;
}

/* --- environments ------------------------------------------------------- */

static void test_env_for_linux_x86_64(void **state)
{
	ml_marker_env e = env_of("linux", "x86_64", 3, 12);
	(void)state;
	assert_string_equal(e.os_name, "posix");
	assert_string_equal(e.sys_platform, "linux");
	assert_string_equal(e.platform_machine, "x86_64");
	assert_string_equal(e.platform_system, "Linux");
	assert_string_equal(e.platform_python_implementation, "CPython");
	assert_string_equal(e.implementation_name, "cpython");
	assert_string_equal(e.python_version, "3.12");
	assert_string_equal(e.python_full_version, "3.12.0");
	assert_string_equal(e.implementation_version, "3.12.0");
	assert_string_equal(e.platform_release, "");
	assert_null(e.extra);
}

static void test_env_for_windows_and_darwin_use_their_own_spellings(void **state)
{
	(void)state;
	ml_marker_env w = env_of("windows", "amd64", 3, 11);
	assert_string_equal(w.os_name, "nt");
	assert_string_equal(w.sys_platform, "win32");
	assert_string_equal(w.platform_machine, "AMD64");
	assert_string_equal(w.platform_system, "Windows");
	ml_marker_env wa = env_of("windows", "aarch64", 3, 13);
	assert_string_equal(wa.platform_machine, "ARM64");
	ml_marker_env d = env_of("darwin", "aarch64", 3, 13);
	assert_string_equal(d.os_name, "posix");
	assert_string_equal(d.sys_platform, "darwin");
	assert_string_equal(d.platform_machine, "arm64");
	assert_string_equal(d.platform_system, "Darwin");
	ml_marker_env dx = env_of("darwin", "x86_64", 3, 9);
	assert_string_equal(dx.platform_machine, "x86_64");
	assert_string_equal(dx.python_version, "3.9");
	ml_marker_env l = env_of("linux", "arm64", 3, 10);
	assert_string_equal(l.platform_machine, "aarch64");
	assert_string_equal(l.python_full_version, "3.10.0");
}

static void test_env_for_refuses_unknown_systems_and_leaves_out_alone(void **state)
{
	ml_marker_env e;
	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(ml_marker_env_for(&e, "freebsd", "x86_64", 3, 12), ML_EUNSUPPORTED);
	assert_int_equal(ml_marker_env_for(&e, "linux", "riscv64", 3, 12), ML_EUNSUPPORTED);
	assert_int_equal(ml_marker_env_for(&e, "linux", "x86_64", 4, 0), ML_EUNSUPPORTED);
	assert_int_equal(ml_marker_env_for(&e, "linux", "x86_64", 3, 50), ML_EUNSUPPORTED);
	assert_int_equal(ml_marker_env_for(&e, NULL, "x86_64", 3, 12), ML_EUNSUPPORTED);
	assert_null(e.os_name);
}

static void test_env_strings_are_constants_that_survive_copies(void **state)
{
	(void)state;
	ml_marker_env a = env_of("linux", "x86_64", 3, 12);
	ml_marker_env b = env_of("linux", "x86_64", 3, 13);
	ml_marker_env copy = a;
	assert_string_equal(copy.python_version, "3.12");
	assert_string_equal(b.python_version, "3.13");
	assert_true(eval("python_version == '3.12'", &copy));
}

/* --- evaluation ------------------------------------------------------- */

static void test_marker_table_on_linux_x86_64_python_3_12(void **state)
{
	static const struct {
		const char *marker;
		bool want;
	} rows[] = {
	        {"sys_platform == 'linux'", true},
	        {"sys_platform == \"linux\"", true},
	        {"sys_platform != 'linux'", false},
	        {"os_name == 'nt'", false},
	        {"platform_machine == 'x86_64'", true},
	        {"platform_system == 'Linux'", true},
	        {"platform_python_implementation == 'CPython'", true},
	        {"implementation_name == 'cpython'", true},
	        {"python_version >= '3.9'", true},
	        {"python_version > '3.9'", true}, /* 3.12 > 3.9 as versions, not strings */
	        {"python_version < '3.10'", false},
	        {"python_version <= '3.12'", true},
	        {"python_version == '3.12'", true},
	        {"python_version == '3.12.0'", true},
	        {"python_version == '3.*'", true},
	        {"python_version == '3.1.*'", false},
	        {"python_version ~= '3.10'", true},
	        {"python_version ~= '3.13'", false},
	        {"python_version != '3.12'", false},
	        {"python_version === '3.12'", true},
	        {"python_full_version >= '3.12.0'", true},
	        {"python_full_version < '3.12.1'", true},
	        {"implementation_version == '3.12'", true},
	        {"'3.10' <= python_version", true},
	        {"'3.13' > python_version", true},
	        {"'linux' == sys_platform", true},
	        {"python_version in '3.11 3.12'", true},
	        {"python_version not in '3.11 3.12'", false},
	        {"'x86' in platform_machine", true},
	        {"'arm' in platform_machine", false},
	        {"sys_platform not in 'win32 cygwin'", true},
	        {"(sys_platform == 'linux')", true},
	        {"((((sys_platform == 'linux'))))", true},
	        {"sys_platform == 'linux' and platform_machine == 'x86_64'", true},
	        {"sys_platform == 'linux' and platform_machine == 'aarch64'", false},
	        {"sys_platform == 'win32' or platform_machine == 'x86_64'", true},
	        {"  sys_platform=='linux'and(python_version>='3.9')  ", true},
	        {"os.name == 'posix'", true},
	        {"sys.platform == 'linux'", true},
	        {"platform.machine == 'x86_64'", true},
	        {"platform.python_implementation == 'CPython'", true},
	        {"python_implementation == 'CPython'", true},
	        {"'a' == 'a'", true},
	        {"'a' != 'a'", false},
	};
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++)
		if (eval(rows[i].marker, &env) != rows[i].want)
			fail_msg("'%s' should be %s", rows[i].marker,
			         rows[i].want ? "true" : "false");
}

static void test_marker_table_on_windows_python_3_9(void **state)
{
	static const struct {
		const char *marker;
		bool want;
	} rows[] = {
	        {"sys_platform == 'win32'", true},
	        {"os_name == 'nt'", true},
	        {"platform_machine == 'AMD64'", true},
	        {"platform_system == 'Windows'", true},
	        {"python_version < '3.10'", true},
	        {"python_version >= '3.10' or sys_platform == 'win32'", true},
	        {"sys_platform == 'linux' and python_version < '3.10'", false},
	};
	ml_marker_env env = env_of("windows", "x86_64", 3, 9);
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++)
		if (eval(rows[i].marker, &env) != rows[i].want)
			fail_msg("'%s' should be %s", rows[i].marker,
			         rows[i].want ? "true" : "false");
}

static void test_marker_precedence_and_binds_tighter_than_or(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	/* true or (false and false) -> true; (true or false) and false -> false */
	assert_true(eval("os_name == 'posix' or os_name == 'nt' and os_name == 'java'", &env));
	/* (false and true) or true -> true */
	assert_true(
	        eval("os_name == 'nt' and os_name == 'posix' or sys_platform == 'linux'", &env));
	/* false or (true and false) -> false */
	assert_false(
	        eval("os_name == 'nt' or os_name == 'posix' and sys_platform == 'win32'", &env));
}

static void test_marker_parentheses_override_precedence(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	assert_false(eval("(os_name == 'posix' or os_name == 'nt') and os_name == 'java'", &env));
	assert_true(eval("os_name == 'nt' and (os_name == 'posix' or sys_platform == 'linux') or "
	                 "(python_version >= '3' and (sys_platform == 'linux'))",
	                 &env));
}

static void test_values_that_are_not_versions_have_no_ordering(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	/* PyPA "Dependency specifiers": <= and >= mean ==, < and > are false */
	assert_false(eval("sys_platform > 'a'", &env));
	assert_false(eval("sys_platform < 'z'", &env));
	assert_false(eval("sys_platform >= 'a'", &env));
	assert_true(eval("sys_platform >= 'linux'", &env));
	assert_true(eval("sys_platform <= 'linux'", &env));
	assert_false(eval("python_version > 'abc'", &env));
}

static void test_platform_release_compares_as_a_version_when_it_is_one(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	env.platform_release = "6.8.0";
	assert_true(eval("platform_release >= '5.10'", &env));
	env.platform_release = "5.15.0-91-generic"; /* not PEP 440 */
	assert_false(eval("platform_release >= '5.10'", &env));
	assert_false(eval("platform_release < '5.10'", &env));
	assert_true(eval("platform_release == '5.15.0-91-generic'", &env));
	assert_true(eval("'generic' in platform_release", &env));
}

static void test_exact_interpreter_version_can_be_set_by_the_caller(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	assert_false(eval("python_full_version >= '3.12.4'", &env));
	env.python_full_version = "3.12.7";
	assert_true(eval("python_full_version >= '3.12.4'", &env));
}

static void test_extra_is_compared_after_normalization(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	assert_false(eval("extra == 'gpu'", &env)); /* no extra reads as "" */
	assert_true(eval("extra == ''", &env));
	env.extra = "GPU_Extra";
	assert_true(eval("extra == 'gpu-extra'", &env));
	assert_true(eval("extra == 'Gpu.Extra'", &env));
	assert_true(eval("'gpu--extra' == extra", &env));
	assert_false(eval("extra == 'gpu'", &env));
}

static void test_null_fields_read_as_empty_strings(void **state)
{
	ml_marker_env env;
	(void)state;
	memset(&env, 0, sizeof env);
	assert_true(eval("os_name == ''", &env));
	assert_false(eval("python_version >= '3'", &env));
	bool out = true;
	assert_int_equal(ml_marker_eval(&out, "os_name == ''", NULL, NULL), 0);
	assert_true(out);
}

/* --- errors ------------------------------------------------------------- */

static void test_errors_name_the_column(void **state)
{
	static const struct {
		const char *marker, *want;
	} rows[] = {
	        {"python_versio >= '3'", "unknown variable 'python_versio' at column 1"},
	        {"os_name == 'nt' and foo == 'x'", "unknown variable 'foo' at column 21"},
	        {"os_name = 'nt'", "expected an operator"},
	        {"os_name = 'nt'", "at column 9"},
	        {"os_name == 'nt", "unterminated string at column 12"},
	        {"(os_name == 'nt'", "expected ')' to close the '(' at column 1"},
	        {"os_name == 'nt')", "unmatched ')' at column 16"},
	        {"os_name == 'nt' xor os_name == 'posix'",
	         "expected 'and', 'or' or the end at column 17"},
	        {"os_name == 'nt' and", "found the end"},
	        {"os_name ==", "at column 11"},
	        {"os_name == 'nt' or or", "at column 20"},
	        {"and os_name == 'nt'", "unknown variable 'and' at column 1"},
	        {"os_name notin 'nt'", "expected an operator"},
	        {"os_name == nt", "unknown variable 'nt' at column 12"},
	        {"   ", "empty marker"},
	        {"", "empty marker"},
	        {"os_name == 'nt' ;", "at column 17"},
	        {"extras == 'x'", "unknown variable 'extras'"},
	};
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		bool out = true;
		ml_err err = ML_ERR_INIT;
		int rc = ml_marker_eval(&out, rows[i].marker, &env, &err);
		if (rc != ML_EPARSE)
			fail_msg("'%s' should be refused", rows[i].marker);
		if (!strstr(err.msg, rows[i].want))
			fail_msg("'%s': message '%s' lacks '%s'", rows[i].marker, err.msg,
			         rows[i].want);
		assert_true(out); /* untouched */
		assert_int_equal(ml_marker_check(rows[i].marker, &err), ML_EPARSE);
	}
}

static void test_message_quotes_the_marker_git_style(void **state)
{
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(ml_marker_check("os_nme == \"nt\"", &err), ML_EPARSE);
	assert_string_equal(
	        err.msg,
	        "invalid marker 'os_nme == \"nt\"': unknown variable 'os_nme' at column 1");
}

static void test_compatible_release_on_strings_is_an_error(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	bool out;
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(ml_marker_eval(&out, "os_name ~= 'posix'", &env, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "'~=' compares versions only"));
	assert_non_null(strstr(err.msg, "column 9"));
	assert_int_equal(ml_marker_eval(&out, "python_version ~= 'surprise'", &env, &err),
	                 ML_EPARSE);
	assert_int_equal(ml_marker_eval(&out, "os_name === 'posix'", &env, &err), ML_EPARSE);
	assert_int_equal(ml_marker_check("os_name ~= 'posix'", &err), ML_EPARSE);
	assert_int_equal(ml_marker_check("python_version ~= 'surprise'", &err), ML_EPARSE);
	assert_int_equal(ml_marker_check("python_version ~= '3.10'", &err), 0);
}

static void test_every_comparison_is_evaluated_without_short_circuit(void **state)
{
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	bool out;
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(ml_marker_eval(&out, "os_name == 'posix' or os_name ~= 'x'", &env, &err),
	                 ML_EPARSE);
	assert_int_equal(ml_marker_eval(&out, "os_name == 'nt' and os_name ~= 'x'", &env, &err),
	                 ML_EPARSE);
}

static void test_marker_check_accepts_what_eval_accepts(void **state)
{
	static const char *const ok[] = {
	        "python_version >= '3.9'",
	        "os_name == 'nt' and (sys_platform == 'win32' or extra == 'gpu')",
	        "'3.10' <= python_version",
	        "platform_release >= '5.10'",
	        "implementation_name not in 'pypy graalpy'",
	        "python_full_version === '3.12.0'",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(ok); i++) {
		ml_err err = ML_ERR_INIT;
		if (ml_marker_check(ok[i], &err) != 0)
			fail_msg("'%s' refused: %s", ok[i], err.msg);
	}
	assert_int_equal(ml_marker_check(NULL, NULL), ML_EPARSE);
}

static void test_deep_nesting_is_refused_not_crashing(void **state)
{
	char m[4096];
	size_t n = 0;
	(void)state;
	for (int i = 0; i < 1000; i++)
		m[n++] = '(';
	m[n] = '\0';
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_marker_check(m, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	/* 64 levels are fine */
	n = 0;
	for (int i = 0; i < 64; i++)
		m[n++] = '(';
	memcpy(m + n, "os_name == 'posix'", 18);
	n += 18;
	for (int i = 0; i < 64; i++)
		m[n++] = ')';
	m[n] = '\0';
	ml_marker_env env = env_of("linux", "x86_64", 3, 12);
	assert_true(eval(m, &env));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_env_for_linux_x86_64),
	        cmocka_unit_test(test_env_for_windows_and_darwin_use_their_own_spellings),
	        cmocka_unit_test(test_env_for_refuses_unknown_systems_and_leaves_out_alone),
	        cmocka_unit_test(test_env_strings_are_constants_that_survive_copies),
	        cmocka_unit_test(test_marker_table_on_linux_x86_64_python_3_12),
	        cmocka_unit_test(test_marker_table_on_windows_python_3_9),
	        cmocka_unit_test(test_marker_precedence_and_binds_tighter_than_or),
	        cmocka_unit_test(test_marker_parentheses_override_precedence),
	        cmocka_unit_test(test_values_that_are_not_versions_have_no_ordering),
	        cmocka_unit_test(test_platform_release_compares_as_a_version_when_it_is_one),
	        cmocka_unit_test(test_exact_interpreter_version_can_be_set_by_the_caller),
	        cmocka_unit_test(test_extra_is_compared_after_normalization),
	        cmocka_unit_test(test_null_fields_read_as_empty_strings),
	        cmocka_unit_test(test_errors_name_the_column),
	        cmocka_unit_test(test_message_quotes_the_marker_git_style),
	        cmocka_unit_test(test_compatible_release_on_strings_is_an_error),
	        cmocka_unit_test(test_every_comparison_is_evaluated_without_short_circuit),
	        cmocka_unit_test(test_marker_check_accepts_what_eval_accepts),
	        cmocka_unit_test(test_deep_nesting_is_refused_not_crashing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
