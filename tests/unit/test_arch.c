/*
 * test_arch.c - specs for the one "will it run?" rule (src/plan/arch.c):
 * parsing and formatting CUDA architecture names, and whether SASS and PTX
 * built for a list of architectures run on a device of a given compute
 * capability, with the reason given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/plan.h"

#define N_OF(a)  (sizeof(a) / sizeof((a)[0]))
#define MAX_CODE 16

typedef struct code_list {
	ml_cuda_arch v[MAX_CODE];
	size_t n;
} code_list;

/* "sm_80 sm_86 compute_90" -> parsed list */
static code_list code_of(const char *names)
{
	code_list c;
	char buf[256], *save = NULL;
	memset(&c, 0, sizeof c);
	snprintf(buf, sizeof buf, "%s", names);
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (c.n == MAX_CODE)
			fail_msg("too many names");
		if (ml_cuda_arch_parse(&c.v[c.n], w) != 0)
			fail_msg("'%s' should parse", w);
		c.n++;
	}
	return c;
}

static bool runs(const char *names, int major, int minor, char *why, size_t why_sz)
{
	code_list c = code_of(names);
	return ml_arch_runs_on(c.v, c.n, major, minor, why, why_sz);
}

/* --- names ----------------------------------------------------------------- */

static void test_parse_reads_major_minor_variant_and_kind(void **state)
{
	static const struct {
		const char *s;
		int major, minor;
		char variant;
		bool ptx;
	} rows[] = {
	        {"sm_50", 5, 0, 0, false},        {"sm_86", 8, 6, 0, false},
	        {"sm_90", 9, 0, 0, false},        {"sm_90a", 9, 0, 'a', false},
	        {"sm_100", 10, 0, 0, false},      {"sm_100f", 10, 0, 'f', false},
	        {"sm_100a", 10, 0, 'a', false},   {"sm_103", 10, 3, 0, false},
	        {"sm_120", 12, 0, 0, false},      {"sm_121", 12, 1, 0, false},
	        {"compute_90", 9, 0, 0, true},    {"compute_120", 12, 0, 0, true},
	        {"compute_90a", 9, 0, 'a', true}, {"compute_100f", 10, 0, 'f', true},
	        {"sm_110", 11, 0, 0, false},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		ml_cuda_arch a;
		assert_int_equal(ml_cuda_arch_parse(&a, rows[i].s), 0);
		if (a.major != rows[i].major || a.minor != rows[i].minor ||
		    a.variant != rows[i].variant || a.ptx != rows[i].ptx)
			fail_msg("'%s' parsed as %d.%d '%c' ptx=%d", rows[i].s, a.major, a.minor,
			         a.variant ? a.variant : '-', a.ptx);
	}
}

static void test_parse_refuses_other_names_and_leaves_out_alone(void **state)
{
	static const char *const bad[] = {
	        "",         "sm_",   "sm_9",      "sm_090", "sm_90b", "sm_90af",
	        "SM_90",    "sm90",  "compute_",  "lto_90", "sm_90 ", " sm_90",
	        "sm_12345", "sm_-1", "compute_9", "8.6",    NULL,
	};
	(void)state;
	for (size_t i = 0; i < N_OF(bad); i++) {
		ml_cuda_arch a = {77, 7, 'x', true, 0};
		if (ml_cuda_arch_parse(&a, bad[i]) != ML_EPARSE)
			fail_msg("'%s' should be refused", bad[i] ? bad[i] : "(null)");
		assert_int_equal(a.major, 77);
	}
}

static void test_format_round_trips_and_refuses_what_has_no_name(void **state)
{
	static const char *const names[] = {"sm_50",  "sm_90a",      "sm_100f",
	                                    "sm_121", "compute_120", "compute_90a"};
	char buf[32];
	(void)state;
	for (size_t i = 0; i < N_OF(names); i++) {
		ml_cuda_arch a;
		assert_int_equal(ml_cuda_arch_parse(&a, names[i]), 0);
		assert_int_equal(ml_cuda_arch_format(buf, sizeof buf, &a), 0);
		assert_string_equal(buf, names[i]);
	}
	ml_cuda_arch a = {12, 0, 0, false, 0};
	assert_int_equal(ml_cuda_arch_format(buf, 6, &a), ML_EFAIL); /* "sm_120" needs 7 bytes */
	assert_int_equal(ml_cuda_arch_format(buf, 7, &a), 0);
	a.minor = 10;
	assert_int_equal(ml_cuda_arch_format(buf, sizeof buf, &a), ML_EFAIL);
	a = (ml_cuda_arch){0, 5, 0, false, 0};
	assert_int_equal(ml_cuda_arch_format(buf, sizeof buf, &a), ML_EFAIL);
	a = (ml_cuda_arch){9, 0, 'x', false, 0};
	assert_int_equal(ml_cuda_arch_format(buf, sizeof buf, &a), ML_EFAIL);
	assert_int_equal(ml_cuda_arch_format(buf, sizeof buf, NULL), ML_EFAIL);
}

/* --- the rule ---------------------------------------------------------------- */

static void test_sass_runs_on_same_major_higher_minor(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("sm_80", 8, 6, why, sizeof why));
	assert_string_equal(why, "SASS sm_80 runs on 8.6");
	assert_true(runs("sm_80", 8, 9, NULL, 0));
	assert_true(runs("sm_86", 8, 6, NULL, 0));
	assert_true(runs("sm_120", 12, 1, NULL, 0));
	assert_true(runs("sm_100", 10, 3, NULL, 0));
	assert_false(runs("sm_86", 8, 0, NULL, 0));
	assert_false(runs("sm_121", 12, 0, NULL, 0));
}

static void test_sass_never_crosses_major(void **state)
{
	char why[256];
	(void)state;
	assert_false(runs("sm_80", 9, 0, why, sizeof why));
	assert_string_equal(why, "sm_90: no SASS for major 9, no PTX ≤ 9.0");
	assert_false(runs("sm_90", 10, 0, NULL, 0));
	assert_false(runs("sm_100", 12, 0, NULL, 0));
	assert_false(runs("sm_90", 8, 9, NULL, 0));
}

static void test_arch_specific_only_exact(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("sm_90a", 9, 0, why, sizeof why));
	assert_string_equal(why, "SASS sm_90a runs on 9.0");
	assert_false(runs("sm_100a", 10, 3, why, sizeof why));
	assert_string_equal(why,
	                    "sm_103: no SASS for 10.3 (major 10 has only sm_100a), no PTX ≤ 10.3");
	assert_false(runs("sm_90a", 10, 0, NULL, 0));
	assert_false(runs("compute_90a", 12, 0, NULL, 0));
	assert_true(runs("compute_90a", 9, 0, NULL, 0));
}

static void test_family_variant(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("sm_100f", 10, 3, why, sizeof why));
	assert_string_equal(why, "SASS sm_100f runs on 10.3");
	assert_true(runs("sm_120f", 12, 1, NULL, 0));
	assert_false(runs("sm_103f", 10, 0, NULL, 0));
	assert_false(runs("sm_100f", 12, 0, NULL, 0));
	assert_true(runs("compute_100f", 10, 3, NULL, 0));
	assert_false(runs("compute_100f", 12, 0, NULL, 0));
}

static void test_ptx_jits_forward(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("compute_90", 12, 0, why, sizeof why));
	assert_string_equal(why, "PTX compute_90 can be JIT-compiled for 12.0");
	assert_true(runs("compute_90", 9, 0, NULL, 0));
	assert_true(runs("compute_80", 8, 6, NULL, 0));
	assert_false(runs("compute_120", 9, 0, why, sizeof why));
	assert_string_equal(why, "sm_90: no SASS for major 9, no PTX ≤ 9.0");
}

static void test_sass_is_preferred_over_ptx_in_the_reason(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("compute_120 sm_120", 12, 0, why, sizeof why));
	assert_string_equal(why, "SASS sm_120 runs on 12.0");
	assert_true(
	        runs("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120", 12, 1, why, sizeof why));
	assert_string_equal(why, "SASS sm_120 runs on 12.1");
}

static void test_the_closest_match_is_named(void **state)
{
	char why[256];
	(void)state;
	assert_true(runs("sm_80 sm_86", 8, 9, why, sizeof why));
	assert_string_equal(why, "SASS sm_86 runs on 8.9");
	assert_true(runs("compute_50 compute_90 compute_80", 12, 0, why, sizeof why));
	assert_string_equal(why, "PTX compute_90 can be JIT-compiled for 12.0");
	assert_true(runs("sm_90 sm_90a", 9, 0, why, sizeof why));
	assert_string_equal(why, "SASS sm_90a runs on 9.0");
}

static void test_torch_2_6_has_no_sm_120(void **state)
{
	char why[256];
	(void)state;
	/* tests/e2e/matrix.md: torch 2.6.0 + CUDA 12.4, no PTX */
	assert_false(runs("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", 12, 0, why, sizeof why));
	assert_string_equal(why, "sm_120: no SASS for major 12, no PTX ≤ 12.0");
	assert_true(runs("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", 8, 9, why, sizeof why));
	assert_string_equal(why, "SASS sm_86 runs on 8.9");
	assert_true(runs("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", 9, 0, NULL, 0));
}

static void test_torch_2_7_runs_on_blackwell(void **state)
{
	char why[256];
	(void)state;
	static const char torch27[] = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120";
	assert_true(runs(torch27, 12, 0, why, sizeof why));
	assert_true(runs(torch27, 10, 0, NULL, 0));
	assert_true(runs(torch27, 10, 3, NULL, 0));
	assert_false(runs(torch27, 11, 0, why, sizeof why)); /* Thor: no sm_110, PTX 12.0 too new */
	assert_string_equal(why, "sm_110: no SASS for major 11, no PTX ≤ 11.0");
	assert_false(runs(torch27, 7, 0, NULL, 0));
}

static void test_torch_2_8_dropped_pascal(void **state)
{
	char why[256];
	(void)state;
	static const char torch28[] = "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120";
	assert_false(runs(torch28, 6, 1, why, sizeof why));
	assert_string_equal(why, "sm_61: no SASS for major 6, no PTX ≤ 6.1");
	assert_true(runs(torch28, 7, 0, NULL, 0));
}

static void test_unusable_ptx_is_named_in_the_reason(void **state)
{
	char why[256];
	(void)state;
	assert_false(runs("sm_90a compute_90a", 12, 0, why, sizeof why));
	assert_string_equal(why, "sm_120: no SASS for major 12, no PTX that JIT-compiles for 12.0 "
	                         "(have compute_90a)");
}

static void test_no_code_or_unknown_device_runs_nowhere(void **state)
{
	char why[256];
	(void)state;
	assert_false(ml_arch_runs_on(NULL, 0, 8, 6, why, sizeof why));
	assert_string_equal(why, "sm_86: no SASS for major 8, no PTX ≤ 8.6");
	assert_false(runs("sm_80 compute_80", -1, -1, why, sizeof why));
	assert_string_equal(why, "the device's compute capability is unknown");
}

static void test_why_is_truncated_safely(void **state)
{
	char why[8];
	(void)state;
	memset(why, 'x', sizeof why);
	assert_true(runs("sm_80", 8, 6, why, sizeof why));
	assert_string_equal(why, "SASS sm");
}

/* --- the driver and torch's own judgement (ml_arch_judge) ------------------ */

/* Judges names (PTX entries may carry ":ISA", "compute_52:87") on X.Y. */
static bool judge(ml_arch_verdict *v, const char *names, int major, int minor, int driver_cuda,
                  ml_arch_rules rules, int torch_cuda)
{
	char buf[256], *save = NULL;
	code_list c;
	memset(&c, 0, sizeof c);
	snprintf(buf, sizeof buf, "%s", names);
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(w, ':');
		if (colon)
			*colon = '\0';
		if (ml_cuda_arch_parse(&c.v[c.n], w) != 0)
			fail_msg("'%s' should parse", w);
		if (colon)
			c.v[c.n].isa = atoi(colon + 1);
		c.n++;
	}
	ml_arch_query q = ML_ARCH_QUERY_INIT;
	q.dev_major = major;
	q.dev_minor = minor;
	q.driver_cuda = driver_cuda;
	q.rules = rules;
	q.torch_cuda = torch_cuda;
	return ml_arch_judge(v, c.v, c.n, &q);
}

static void test_ptx_runs_only_where_the_driver_knows_its_isa(void **state)
{
	(void)state;
	ml_arch_verdict v;
	/* cuSPARSELt 0.7.1's only code below 8.0: compute_52 at ISA 8.7
	 * (CUDA 12.8). A V100 on a 550 driver (CUDA 12.4) cannot JIT it. */
	assert_false(judge(&v, "sm_80 compute_52:87", 7, 0, 12040, ML_ARCH_NVIDIA, 0));
	assert_string_equal(v.why, "sm_70: no SASS for major 7, PTX compute_52 (ISA 8.7) needs a "
	                           "driver for CUDA ≥ 12.8 to JIT it, and this driver supports "
	                           "CUDA 12.4");
	/* A 570 driver (CUDA 12.8) can. */
	assert_true(judge(&v, "sm_80 compute_52:87", 7, 0, 12080, ML_ARCH_NVIDIA, 0));
	assert_true(v.by.ptx);
	assert_int_equal(v.ptx_cuda, 12080);
	assert_false(v.conditional);
	/* No driver known: it runs on that condition, which why names. */
	assert_true(judge(&v, "sm_80 compute_52:87", 7, 0, 0, ML_ARCH_NVIDIA, 0));
	assert_true(v.conditional);
	assert_string_equal(v.why,
	                    "PTX compute_52 (ISA 8.7) can be JIT-compiled for 7.0 by a driver for "
	                    "CUDA ≥ 12.8");
	/* PTX of unknown ISA counts as before; SASS needs no driver at all. */
	assert_true(judge(&v, "compute_52", 7, 0, 12040, ML_ARCH_NVIDIA, 0));
	assert_false(v.conditional);
	assert_true(judge(&v, "sm_70 compute_90:90", 7, 0, 11080, ML_ARCH_NVIDIA, 0));
	assert_false(v.by.ptx);
	/* Of two PTX the driver can JIT, the closer; of two with the driver
	 * unknown, the one asking least of it. */
	assert_true(judge(&v, "compute_60:84 compute_70:90", 7, 5, 13000, ML_ARCH_NVIDIA, 0));
	assert_int_equal(v.by.major, 7);
	assert_true(judge(&v, "compute_60:84 compute_70:90", 7, 5, 12040, ML_ARCH_NVIDIA, 0));
	assert_int_equal(v.by.major, 6);
	assert_true(judge(&v, "compute_60:84 compute_70:90", 7, 5, 0, ML_ARCH_NVIDIA, 0));
	assert_int_equal(v.by.major, 6);
	assert_int_equal(v.ptx_cuda, 12040);
	/* An ISA newer than every release mlsetup knows needs a newer driver. */
	assert_false(judge(&v, "compute_90:99", 9, 0, 13050, ML_ARCH_NVIDIA, 0));
	assert_non_null(strstr(v.why, "needs a driver for CUDA newer than 13.5"));
	assert_true(judge(&v, "compute_90:99", 9, 0, 13060, ML_ARCH_NVIDIA, 0));
	/* ml_arch_runs_on() is the judgement without a driver. */
	char why[256];
	code_list c = code_of("compute_52");
	c.v[0].isa = 87;
	assert_true(ml_arch_runs_on(c.v, c.n, 7, 0, why, sizeof why));
	assert_non_null(strstr(why, "by a driver for CUDA ≥ 12.8"));
}

static void test_torch_judges_its_own_library_by_its_own_table(void **state)
{
	(void)state;
	ml_arch_verdict v;
	/* Integrated parts need code of their own in torch's eyes; NVIDIA's
	 * same-major rule runs sm_80 code on 8.7 (Jetson Orin). */
	assert_true(judge(&v, "sm_80 sm_86", 8, 7, 0, ML_ARCH_NVIDIA, 0));
	assert_false(judge(&v, "sm_80 sm_86", 8, 7, 0, ML_ARCH_TORCH, 12080));
	assert_string_equal(v.why, "torch accepts no code of this build for 8.7 (sm_86 supports "
	                           ">=8.6,<9.0 except {8.7})");
	assert_true(judge(&v, "sm_80 sm_87", 8, 7, 0, ML_ARCH_TORCH, 12080));
	assert_false(judge(&v, "sm_70", 7, 2, 0, ML_ARCH_TORCH, 12080));
	assert_false(judge(&v, "sm_60 sm_61", 6, 2, 0, ML_ARCH_TORCH, 12080));
	assert_false(judge(&v, "sm_50 sm_52", 5, 3, 0, ML_ARCH_TORCH, 12080));
	/* From a CUDA 13.2 build on, 7.0, 8.0 and 8.6 code runs on 7.2 and 8.7. */
	assert_true(judge(&v, "sm_80 sm_86", 8, 7, 0, ML_ARCH_TORCH, 13020));
	assert_true(judge(&v, "sm_70", 7, 2, 0, ML_ARCH_TORCH, 13020));
	assert_false(judge(&v, "sm_60", 6, 2, 0, ML_ARCH_TORCH, 13020));
	/* Thor: 10.1 before CUDA 13, 11.0 after; code for either runs on both
	 * in torch's table, where NVIDIA's same-major rule sees two majors. */
	assert_true(judge(&v, "sm_101", 11, 0, 0, ML_ARCH_TORCH, 13000));
	assert_false(judge(&v, "sm_101", 11, 0, 0, ML_ARCH_NVIDIA, 0));
	assert_true(judge(&v, "sm_110", 10, 1, 0, ML_ARCH_TORCH, 12080));
	/* ... and 10.0 code is not for 10.1, but is for 10.3. */
	assert_false(judge(&v, "sm_100", 10, 1, 0, ML_ARCH_TORCH, 12080));
	assert_true(judge(&v, "sm_100", 10, 3, 0, ML_ARCH_TORCH, 12080));
	assert_true(judge(&v, "sm_100", 10, 1, 0, ML_ARCH_NVIDIA, 0));
	/* Variants are ignored, as torch ignores them; PTX is judged alike. */
	assert_true(judge(&v, "sm_90a", 9, 0, 0, ML_ARCH_TORCH, 12080));
	assert_true(judge(&v, "sm_120a", 12, 1, 0, ML_ARCH_TORCH, 13020));
	assert_true(judge(&v, "compute_75", 7, 5, 0, ML_ARCH_TORCH, 13000));
	assert_false(judge(&v, "sm_120", 11, 0, 0, ML_ARCH_TORCH, 13000));
	assert_string_equal(v.why,
	                    "torch accepts no code of this build for 11.0 (none for major 11)");
	/* An unknown device runs nothing under either rule. */
	assert_false(judge(&v, "sm_80", -1, 0, 0, ML_ARCH_TORCH, 0));
}


static void test_device_names_as_people_write_them(void **state)
{
	(void)state;
	ml_cuda_arch d;
	assert_int_equal(ml_cuda_device_parse(&d, "sm_120"), 0);
	assert_int_equal(d.major * 10 + d.minor, 120);
	assert_int_equal(ml_cuda_device_parse(&d, "12.0"), 0);
	assert_int_equal(d.major, 12);
	assert_int_equal(ml_cuda_device_parse(&d, "8.6"), 0);
	assert_int_equal(d.major * 10 + d.minor, 86);
	assert_false(d.ptx);
	static const char *const bad[] = {"sm_90a", "compute_90", "0.9", "12.", "12.10", "1234.5",
	                                  "12", "", "sm_", "12.0 ", "x.0"};
	for (size_t i = 0; i < N_OF(bad); i++)
		if (ml_cuda_device_parse(&d, bad[i]) != ML_EPARSE)
			fail_msg("'%s' should not parse as a device", bad[i]);
	assert_int_equal(ml_cuda_device_parse(&d, NULL), ML_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse_reads_major_minor_variant_and_kind),
	        cmocka_unit_test(test_parse_refuses_other_names_and_leaves_out_alone),
	        cmocka_unit_test(test_format_round_trips_and_refuses_what_has_no_name),
	        cmocka_unit_test(test_sass_runs_on_same_major_higher_minor),
	        cmocka_unit_test(test_sass_never_crosses_major),
	        cmocka_unit_test(test_arch_specific_only_exact),
	        cmocka_unit_test(test_family_variant),
	        cmocka_unit_test(test_ptx_jits_forward),
	        cmocka_unit_test(test_sass_is_preferred_over_ptx_in_the_reason),
	        cmocka_unit_test(test_the_closest_match_is_named),
	        cmocka_unit_test(test_torch_2_6_has_no_sm_120),
	        cmocka_unit_test(test_torch_2_7_runs_on_blackwell),
	        cmocka_unit_test(test_torch_2_8_dropped_pascal),
	        cmocka_unit_test(test_unusable_ptx_is_named_in_the_reason),
	        cmocka_unit_test(test_no_code_or_unknown_device_runs_nowhere),
	        cmocka_unit_test(test_why_is_truncated_safely),
	        cmocka_unit_test(test_ptx_runs_only_where_the_driver_knows_its_isa),
	        cmocka_unit_test(test_torch_judges_its_own_library_by_its_own_table),
	        cmocka_unit_test(test_device_names_as_people_write_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
