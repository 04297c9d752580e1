/*
 * test_pci_ids.c - specs for the GPU fact tables of the detect stage: the
 * built-in PCI id table (src/detect/pci_ids.c) and the compute capability,
 * driver version and CUDA version tables (src/detect/gpu_tables.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/detect.h"
#include "../../src/detect/internal.h"

/* Until detect.h declares it. */

/* --- PCI id table -------------------------------------------------------- */

static void test_table_is_sorted_without_duplicate_ids(void **state)
{
	const ml_pci_gpu *t = NULL;
	size_t n = ml_pci_table(&t);

	(void)state;
	assert_non_null(t);
	assert_true(n > 100);
	for (size_t i = 1; i < n; i++) {
		if (t[i - 1].device_id >= t[i].device_id)
			fail_msg("entry %zu (0x%04x) does not sort after entry %zu (0x%04x)", i,
			         (unsigned)t[i].device_id, i - 1, (unsigned)t[i - 1].device_id);
	}
}

static void test_every_entry_has_a_name_and_a_known_architecture(void **state)
{
	const ml_pci_gpu *t = NULL;
	size_t n = ml_pci_table(&t);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_non_null(t[i].name);
		assert_true(strlen(t[i].name) > 0);
		assert_true(strlen(t[i].name) < sizeof(((ml_gpu *)0)->name));
		if (ml_cc_architecture(t[i].cc_major, t[i].cc_minor)[0] == '\0')
			fail_msg("0x%04x %s: no architecture for %u.%u", (unsigned)t[i].device_id,
			         t[i].name, t[i].cc_major, t[i].cc_minor);
	}
}

static void test_every_entry_is_found_by_lookup(void **state)
{
	const ml_pci_gpu *t = NULL;
	size_t n = ml_pci_table(&t);

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(ml_pci_lookup(t[i].device_id), &t[i]);
}

static void assert_lookup(uint16_t id, const char *name, int major, int minor)
{
	const ml_pci_gpu *g = ml_pci_lookup(id);

	assert_non_null(g);
	assert_int_equal(g->device_id, id);
	assert_string_equal(g->name, name);
	assert_int_equal(g->cc_major, major);
	assert_int_equal(g->cc_minor, minor);
}

static void test_lookup_finds_rtx_5090(void **state)
{
	(void)state;
	assert_lookup(0x2b85, "NVIDIA GeForce RTX 5090", 12, 0);
}

static void test_lookup_finds_rtx_3090(void **state)
{
	(void)state;
	assert_lookup(0x2204, "NVIDIA GeForce RTX 3090", 8, 6);
}

static void test_lookup_finds_h100_sxm5(void **state)
{
	(void)state;
	assert_lookup(0x2330, "NVIDIA H100 80GB HBM3", 9, 0);
}

static void test_lookup_finds_each_generation(void **state)
{
	(void)state;
	assert_lookup(0x15f8, "Tesla P100-PCIE-16GB", 6, 0);
	assert_lookup(0x1db6, "Tesla V100-PCIE-32GB", 7, 0);
	assert_lookup(0x1eb8, "Tesla T4", 7, 5);
	assert_lookup(0x20b2, "NVIDIA A100-SXM4-80GB", 8, 0);
	assert_lookup(0x2684, "NVIDIA GeForce RTX 4090", 8, 9);
	assert_lookup(0x27b8, "NVIDIA L4", 8, 9);
	assert_lookup(0x2335, "NVIDIA H200", 9, 0);
	assert_lookup(0x2901, "NVIDIA B200", 10, 0);
	assert_lookup(0x3182, "NVIDIA B300 SXM6 AC", 10, 3);
	assert_lookup(0x2bb1, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 12, 0);
	assert_lookup(0x2e12, "NVIDIA GB10", 12, 1);
}

static void test_lookup_finds_first_and_last_entries(void **state)
{
	const ml_pci_gpu *t = NULL;
	size_t n = ml_pci_table(&t);

	(void)state;
	assert_ptr_equal(ml_pci_lookup(t[0].device_id), &t[0]);
	assert_ptr_equal(ml_pci_lookup(t[n - 1].device_id), &t[n - 1]);
}

static void test_lookup_returns_null_for_unknown_id(void **state)
{
	(void)state;
	assert_null(ml_pci_lookup(0x0000));
	assert_null(ml_pci_lookup(0x0001));
	assert_null(ml_pci_lookup(0x2b86)); /* between two known ids */
	assert_null(ml_pci_lookup(0x1b80)); /* GTX 1080: Pascal consumer, not listed */
	assert_null(ml_pci_lookup(0xffff));
}

/* --- compute capability -------------------------------------------------- */

static void test_architecture_names_each_generation(void **state)
{
	(void)state;
	assert_string_equal(ml_cc_architecture(3, 5), "Kepler");
	assert_string_equal(ml_cc_architecture(3, 7), "Kepler");
	assert_string_equal(ml_cc_architecture(5, 0), "Maxwell");
	assert_string_equal(ml_cc_architecture(5, 2), "Maxwell");
	assert_string_equal(ml_cc_architecture(6, 0), "Pascal");
	assert_string_equal(ml_cc_architecture(6, 1), "Pascal");
	assert_string_equal(ml_cc_architecture(7, 0), "Volta");
	assert_string_equal(ml_cc_architecture(7, 2), "Volta");
	assert_string_equal(ml_cc_architecture(7, 5), "Turing");
	assert_string_equal(ml_cc_architecture(8, 0), "Ampere");
	assert_string_equal(ml_cc_architecture(8, 6), "Ampere");
	assert_string_equal(ml_cc_architecture(8, 7), "Ampere");
	assert_string_equal(ml_cc_architecture(8, 9), "Ada");
	assert_string_equal(ml_cc_architecture(9, 0), "Hopper");
	assert_string_equal(ml_cc_architecture(10, 0), "Blackwell");
	assert_string_equal(ml_cc_architecture(10, 3), "Blackwell");
	assert_string_equal(ml_cc_architecture(11, 0), "Blackwell");
	assert_string_equal(ml_cc_architecture(12, 0), "Blackwell");
	assert_string_equal(ml_cc_architecture(12, 1), "Blackwell");
}

static void test_architecture_is_empty_when_unknown(void **state)
{
	(void)state;
	assert_string_equal(ml_cc_architecture(-1, -1), "");
	assert_string_equal(ml_cc_architecture(-1, 0), "");
	assert_string_equal(ml_cc_architecture(8, -1), "");
	assert_string_equal(ml_cc_architecture(0, 0), "");
	assert_string_equal(ml_cc_architecture(2, 0), "");
	assert_string_equal(ml_cc_architecture(4, 0), "");
	assert_string_equal(ml_cc_architecture(7, 1), "");
	assert_string_equal(ml_cc_architecture(8, 8), "");
	assert_string_equal(ml_cc_architecture(9, 1), "");
	assert_string_equal(ml_cc_architecture(13, 0), "");
	assert_string_equal(ml_cc_architecture(99, 0), "");
}

static void test_cc_format_writes_major_dot_minor(void **state)
{
	char buf[16];

	(void)state;
	ml_cc_format(buf, sizeof buf, 12, 0);
	assert_string_equal(buf, "12.0");
	ml_cc_format(buf, sizeof buf, 8, 6);
	assert_string_equal(buf, "8.6");
	ml_cc_format(buf, sizeof buf, -1, -1);
	assert_string_equal(buf, "");
}

static void test_cc_sm_writes_sass_target(void **state)
{
	char buf[16];

	(void)state;
	ml_cc_sm(buf, sizeof buf, 12, 0);
	assert_string_equal(buf, "sm_120");
	ml_cc_sm(buf, sizeof buf, 8, 6);
	assert_string_equal(buf, "sm_86");
	ml_cc_sm(buf, sizeof buf, 10, 3);
	assert_string_equal(buf, "sm_103");
	ml_cc_sm(buf, sizeof buf, 7, 5);
	assert_string_equal(buf, "sm_75");
	ml_cc_sm(buf, sizeof buf, -1, 0);
	assert_string_equal(buf, "");
}

static void test_cc_spellings_truncate_to_the_buffer(void **state)
{
	char buf[4] = "xyz";

	(void)state;
	ml_cc_sm(buf, sizeof buf, 12, 0);
	assert_string_equal(buf, "sm_");
	ml_cc_format(buf, 0, 12, 0); /* writes nothing */
	assert_string_equal(buf, "sm_");
	ml_cc_format(NULL, 16, 12, 0);
	ml_cc_sm(NULL, 16, 12, 0);
}

/* --- driver versions ----------------------------------------------------- */

static void test_version_cmp_compares_components_numerically(void **state)
{
	(void)state;
	assert_true(ml_driver_version_cmp("570.26", "570.124.06") < 0);
	assert_true(ml_driver_version_cmp("570.124.06", "570.26") > 0);
	assert_true(ml_driver_version_cmp("550.54.14", "550.54.15") < 0);
	assert_true(ml_driver_version_cmp("550.54.15", "550.54.14") > 0);
	assert_true(ml_driver_version_cmp("580.95.05", "575.64.05") > 0);
	assert_true(ml_driver_version_cmp("99.1", "100.0") < 0);
	assert_int_equal(ml_driver_version_cmp("570.124.06", "570.124.06"), 0);
	assert_int_equal(ml_driver_version_cmp("570.124.06", "570.124.6"), 0);
}

static void test_version_cmp_counts_missing_components_as_zero(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_version_cmp("570", "570.0.0"), 0);
	assert_int_equal(ml_driver_version_cmp("570.0", "570"), 0);
	assert_true(ml_driver_version_cmp("570", "570.0.1") < 0);
	assert_true(ml_driver_version_cmp("570.26.1", "570.26") > 0);
	assert_int_equal(ml_driver_version_cmp("", ""), 0);
	assert_true(ml_driver_version_cmp("", "1") < 0);
}

static void test_version_cmp_treats_junk_as_zero_without_crashing(void **state)
{
	char long_version[4096];

	(void)state;
	assert_int_equal(ml_driver_version_cmp(NULL, NULL), 0);
	assert_int_equal(ml_driver_version_cmp(NULL, ""), 0);
	assert_int_equal(ml_driver_version_cmp(NULL, "0.0"), 0);
	assert_true(ml_driver_version_cmp(NULL, "570") < 0);
	assert_true(ml_driver_version_cmp("570", NULL) > 0);
	assert_int_equal(ml_driver_version_cmp("abc", "0"), 0);
	assert_int_equal(ml_driver_version_cmp("abc.def", "xyz"), 0);
	assert_int_equal(ml_driver_version_cmp("570.xx", "570"), 0);
	assert_int_equal(ml_driver_version_cmp("...", ""), 0);
	assert_int_equal(ml_driver_version_cmp("570.", "570"), 0);
	assert_int_equal(ml_driver_version_cmp(" 570.26\n", "570.26"), 0);
	assert_int_equal(ml_driver_version_cmp("570.124.06-beta", "570.124.06"), 0);
	assert_true(ml_driver_version_cmp("-1", "0.1") < 0);
	/* Components too large for any integer type are clamped, not wrapped. */
	assert_int_equal(
	        ml_driver_version_cmp("99999999999999999999999", "99999999999999999999998"), 0);
	assert_true(ml_driver_version_cmp("99999999999999999999999", "570") > 0);

	memset(long_version, '9', sizeof long_version - 1);
	long_version[sizeof long_version - 1] = '\0';
	for (size_t i = 1; i < sizeof long_version - 1; i += 2)
		long_version[i] = '.';
	assert_true(ml_driver_version_cmp(long_version, "9.9") > 0);
	assert_true(ml_driver_version_cmp("9.9", long_version) < 0);
}

static void test_cuda_version_follows_driver_branch_table(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_cuda_version("450.36.06"), 11000);
	assert_int_equal(ml_driver_cuda_version("455.23.05"), 11010);
	assert_int_equal(ml_driver_cuda_version("460.27.04"), 11020);
	assert_int_equal(ml_driver_cuda_version("465.19.01"), 11030);
	assert_int_equal(ml_driver_cuda_version("470.42.01"), 11040);
	assert_int_equal(ml_driver_cuda_version("495.29.05"), 11050);
	assert_int_equal(ml_driver_cuda_version("510.39.01"), 11060);
	assert_int_equal(ml_driver_cuda_version("515.43.04"), 11070);
	assert_int_equal(ml_driver_cuda_version("520.61.05"), 11080);
	assert_int_equal(ml_driver_cuda_version("525.60.13"), 12000);
	assert_int_equal(ml_driver_cuda_version("530.30.02"), 12010);
	assert_int_equal(ml_driver_cuda_version("535.54.03"), 12020);
	assert_int_equal(ml_driver_cuda_version("545.23.06"), 12030);
	assert_int_equal(ml_driver_cuda_version("550.54.14"), 12040);
	assert_int_equal(ml_driver_cuda_version("555.42.02"), 12050);
	assert_int_equal(ml_driver_cuda_version("560.28.03"), 12060);
	assert_int_equal(ml_driver_cuda_version("565.57.01"), 12070);
	assert_int_equal(ml_driver_cuda_version("570.124.06"), 12080);
	assert_int_equal(ml_driver_cuda_version("575.51.03"), 12090);
	assert_int_equal(ml_driver_cuda_version("580.65.06"), 13000);
	assert_int_equal(ml_driver_cuda_version("590.44.01"), 13010);
	assert_int_equal(ml_driver_cuda_version("595.45.04"), 13020);
}

static void test_cuda_version_of_branch_between_rows_is_the_lower_row(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_cuda_version("540.0"), 12020);
	assert_int_equal(ml_driver_cuda_version("572.16"), 12080);
	assert_int_equal(ml_driver_cuda_version("480.1"), 11040);
	assert_int_equal(ml_driver_cuda_version("524"), 11080);
}

static void test_cuda_version_of_newer_branch_is_the_last_row(void **state)
{
	(void)state;
	/* R595 (CUDA 13.2) is the last row */
	assert_int_equal(ml_driver_cuda_version("600.20.01"), 13020);
	assert_int_equal(ml_driver_cuda_version("610.43.03"), 13020);
	assert_int_equal(ml_driver_cuda_version("9999"), 13020);
}

static void test_cuda_version_is_zero_when_unknown(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_cuda_version(NULL), 0);
	assert_int_equal(ml_driver_cuda_version(""), 0);
	assert_int_equal(ml_driver_cuda_version("   "), 0);
	assert_int_equal(ml_driver_cuda_version("abc"), 0);
	assert_int_equal(ml_driver_cuda_version(".570"), 0);
	assert_int_equal(ml_driver_cuda_version("-570.26"), 0);
	assert_int_equal(ml_driver_cuda_version("570abc"), 0);
	assert_int_equal(ml_driver_cuda_version("99999999999999999999.1"), 0);
	assert_int_equal(ml_driver_cuda_version("449.99"), 0);
	assert_int_equal(ml_driver_cuda_version("390.157"), 0);
	assert_int_equal(ml_driver_cuda_version("0"), 0);
}

static void test_cuda_version_tolerates_surrounding_whitespace(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_cuda_version("570.124.06\n"), 12080);
	assert_int_equal(ml_driver_cuda_version("  550.54.14"), 12040);
	assert_int_equal(ml_driver_cuda_version("570"), 12080);
}

static void test_min_driver_for_blackwell_is_r570(void **state)
{
	(void)state;
	assert_string_equal(ml_min_driver_for_cc(12, 0, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(12, 0, true), "570.65");
	assert_string_equal(ml_min_driver_for_cc(12, 1, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(10, 0, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(10, 3, true), "570.65");
	assert_string_equal(ml_min_driver_for_cc(11, 0, false), "570.26");
}

static void test_min_driver_below_blackwell_is_cuda_12_4_minimum(void **state)
{
	(void)state;
	assert_string_equal(ml_min_driver_for_cc(9, 0, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(9, 0, true), "551.61");
	assert_string_equal(ml_min_driver_for_cc(8, 6, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(7, 5, true), "551.61");
	assert_string_equal(ml_min_driver_for_cc(6, 1, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(5, 0, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(9, 9, false), "550.54.14");
}

static void test_min_driver_is_null_for_gpus_too_old_or_unknown(void **state)
{
	(void)state;
	assert_null(ml_min_driver_for_cc(3, 7, false));
	assert_null(ml_min_driver_for_cc(4, 9, true));
	assert_null(ml_min_driver_for_cc(0, 0, false));
	assert_null(ml_min_driver_for_cc(-1, -1, false));
	assert_null(ml_min_driver_for_cc(-1, -1, true));
	assert_null(ml_min_driver_for_cc(12, -1, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_table_is_sorted_without_duplicate_ids),
	        cmocka_unit_test(test_every_entry_has_a_name_and_a_known_architecture),
	        cmocka_unit_test(test_every_entry_is_found_by_lookup),
	        cmocka_unit_test(test_lookup_finds_rtx_5090),
	        cmocka_unit_test(test_lookup_finds_rtx_3090),
	        cmocka_unit_test(test_lookup_finds_h100_sxm5),
	        cmocka_unit_test(test_lookup_finds_each_generation),
	        cmocka_unit_test(test_lookup_finds_first_and_last_entries),
	        cmocka_unit_test(test_lookup_returns_null_for_unknown_id),
	        cmocka_unit_test(test_architecture_names_each_generation),
	        cmocka_unit_test(test_architecture_is_empty_when_unknown),
	        cmocka_unit_test(test_cc_format_writes_major_dot_minor),
	        cmocka_unit_test(test_cc_sm_writes_sass_target),
	        cmocka_unit_test(test_cc_spellings_truncate_to_the_buffer),
	        cmocka_unit_test(test_version_cmp_compares_components_numerically),
	        cmocka_unit_test(test_version_cmp_counts_missing_components_as_zero),
	        cmocka_unit_test(test_version_cmp_treats_junk_as_zero_without_crashing),
	        cmocka_unit_test(test_cuda_version_follows_driver_branch_table),
	        cmocka_unit_test(test_cuda_version_of_branch_between_rows_is_the_lower_row),
	        cmocka_unit_test(test_cuda_version_of_newer_branch_is_the_last_row),
	        cmocka_unit_test(test_cuda_version_is_zero_when_unknown),
	        cmocka_unit_test(test_cuda_version_tolerates_surrounding_whitespace),
	        cmocka_unit_test(test_min_driver_for_blackwell_is_r570),
	        cmocka_unit_test(test_min_driver_below_blackwell_is_cuda_12_4_minimum),
	        cmocka_unit_test(test_min_driver_is_null_for_gpus_too_old_or_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
