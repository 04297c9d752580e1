/*
 * test_drivers.c - specs for the driver table (manifests/drivers.json, read
 * by src/detect/drivers.c): each CUDA toolkit's minimum driver as NVIDIA's
 * release notes (table 3) give it, the minor-version floors (CUDA Minor
 * Version Compatibility), the highest CUDA a driver branch supports,
 * the per-architecture minimum, and the places that take their numbers
 * from it - a manifest's `cuda` header, detect's advice - plus where a GPU
 * stands against the shipped builds (ml_shipped_build_range()), which the
 * remedies for a GPU no build covers rest on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "mlsetup/detect.h"
#include "mlsetup/plan.h"
#include "../../src/plan/internal.h"

/* --- the table ----------------------------------------------------------- */

static void test_table_loads(void **state)
{
	ml_err err = ML_ERR_INIT;
	const ml_toolkit_driver *t = NULL;

	(void)state;
	assert_int_equal(ml_drivers_check(&err), 0);
	size_t n = ml_toolkit_drivers(&t);
	assert_non_null(t);
	assert_true(n >= 8);
	for (size_t i = 1; i < n; i++) /* oldest first, each toolkit once */
		assert_true(ml_driver_version_cmp(t[i - 1].cuda, t[i].cuda) < 0);
	for (size_t i = 0; i < n; i++)
		assert_non_null(t[i].linux_min);
}

static void expect_toolkit(const char *cuda, const char *release, const char *linux_min,
                           const char *windows_min)
{
	const ml_toolkit_driver *t = ml_toolkit_driver_find(cuda);
	if (!t)
		fail_msg("CUDA %s is not in the table", cuda);
	assert_string_equal(t->release, release);
	assert_string_equal(t->linux_min, linux_min);
	assert_string_equal(ml_toolkit_min_driver(cuda, false), linux_min);
	if (windows_min) {
		assert_string_equal(t->windows_min, windows_min);
		assert_string_equal(ml_toolkit_min_driver(cuda, true), windows_min);
	} else {
		assert_null(t->windows_min);
		assert_null(ml_toolkit_min_driver(cuda, true));
	}
}

static void test_each_toolkit_minimum_is_what_the_release_notes_say(void **state)
{
	(void)state;
	expect_toolkit("12.4", "12.4 GA", "550.54.14", "551.61");
	expect_toolkit("12.8", "12.8 GA", "570.26", "570.65");
	expect_toolkit("12.8.1", "12.8 Update 1", "570.124.06", "572.61");
	expect_toolkit("12.9", "12.9 GA", "575.51.03", "576.02");
	expect_toolkit("13.0", "13.0 GA", "580.65.06", NULL);
	/* 13.x: the release notes name no Windows minimum. */
	expect_toolkit("13.1", "13.1 GA", "590.44.01", NULL);
	expect_toolkit("13.2", "13.2 GA", "595.45.04", NULL);
	expect_toolkit("13.2.2", "13.2 Update 2", "595.71.05", NULL);
	/* The older GA releases diagnosis named before the table existed. */
	assert_string_equal(ml_toolkit_min_driver("11.8", false), "520.61.05");
	assert_string_equal(ml_toolkit_min_driver("12.1", false), "530.30.02");
	assert_string_equal(ml_toolkit_min_driver("12.6", false), "560.28.03");
}

/* PTX ISA -> the CUDA release that first loads it (PTX ISA document,
 * "PTX Release History"): what a driver must support to JIT the PTX. */
static void test_ptx_isa_maps_to_the_release_that_introduced_it(void **state)
{
	bool beyond = true;
	(void)state;
	assert_int_equal(ml_ptx_isa_cuda(84, &beyond), 12040);
	assert_false(beyond);
	assert_int_equal(ml_ptx_isa_cuda(85, NULL), 12050);
	assert_int_equal(ml_ptx_isa_cuda(86, NULL), 12070); /* no 12.6 ISA of its own */
	assert_int_equal(ml_ptx_isa_cuda(87, NULL), 12080);
	assert_int_equal(ml_ptx_isa_cuda(88, NULL), 12090);
	assert_int_equal(ml_ptx_isa_cuda(90, NULL), 13000);
	assert_int_equal(ml_ptx_isa_cuda(92, NULL), 13020);
	assert_int_equal(ml_ptx_isa_cuda(94, NULL), 13040);
	assert_int_equal(ml_ptx_isa_cuda(78, NULL), 11080);
	/* A gap (no 8.9) needs the next known release; past the table, the
	 * newest as a lower bound. */
	assert_int_equal(ml_ptx_isa_cuda(89, NULL), 13000);
	assert_int_equal(ml_ptx_isa_cuda(99, &beyond), 13050);
	assert_true(beyond);
	assert_int_equal(ml_ptx_isa_cuda(0, NULL), 0);
	assert_int_equal(ml_ptx_isa_cuda(-3, NULL), 0);
	/* and drivers: a 550 driver stops at CUDA 12.4, so at PTX ISA 8.4 */
	assert_int_equal(ml_driver_cuda_version("550.54.15"), 12040);
	assert_true(ml_driver_cuda_version("550.54.15") < ml_ptx_isa_cuda(87, NULL));
}

static void test_windows_and_linux_minimums_differ(void **state)
{
	(void)state;
	assert_string_equal(ml_toolkit_min_driver("12.8", false), "570.26");
	assert_string_equal(ml_toolkit_min_driver("12.8", true), "570.65");
	assert_string_equal(ml_minor_version_floor("12.8", false), "525.60.13");
	assert_string_equal(ml_minor_version_floor("12.8", true), "528.33");
	assert_string_equal(ml_min_driver_for_cc(9, 0, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(9, 0, true), "551.61");
}

static void test_unknown_cuda_versions_have_no_minimum(void **state)
{
	(void)state;
	assert_null(ml_toolkit_driver_find("12.5"));
	assert_null(ml_toolkit_min_driver("12.5", false));
	assert_null(ml_toolkit_min_driver("99.0", true));
	assert_null(ml_toolkit_min_driver("12", false)); /* 12.0 is not in the table */
	assert_null(ml_toolkit_min_driver("", false));
	assert_null(ml_toolkit_min_driver(NULL, false));
	/* "12.4.0" is 12.4; "12.8.1" is Update 1, not 12.8 GA. */
	assert_string_equal(ml_toolkit_min_driver("12.4.0", false), "550.54.14");
	assert_string_equal(ml_toolkit_min_driver("12.8.1", false), "570.124.06");
	/* A build reporting 13.2 (torch 2.15.0) gets 13.2 GA's, not Update 2's. */
	assert_string_equal(ml_toolkit_min_driver("13.2", false), "595.45.04");
	assert_null(ml_toolkit_driver_find("13.3"));
}

static void test_minor_version_floor_is_per_cuda_major(void **state)
{
	(void)state;
	assert_string_equal(ml_minor_version_floor("12.4", false), "525.60.13");
	assert_string_equal(ml_minor_version_floor("12.9", false), "525.60.13");
	assert_string_equal(ml_minor_version_floor("12.4", true), "528.33");
	/* 13.x: a Linux floor; no Windows one is published. */
	assert_string_equal(ml_minor_version_floor("13.0", false), "580.65.06");
	assert_string_equal(ml_minor_version_floor("13.2", false), "580.65.06");
	assert_null(ml_minor_version_floor("13.2", true));
	assert_null(ml_minor_version_floor("14.0", false));
	assert_null(ml_minor_version_floor("11.8", false));
	assert_null(ml_minor_version_floor(NULL, false));
	assert_null(ml_minor_version_floor("x", false));
}

/* The newest CUDA a driver branch supports: R590 is CUDA 13.1's, R595
 * 13.2's; a branch between two (R585) supports the lower one's. */
static void test_driver_branches_of_cuda_13(void **state)
{
	(void)state;
	assert_int_equal(ml_driver_cuda_version("580.65.06"), 13000);
	assert_int_equal(ml_driver_cuda_version("585.05.10"), 13000);
	assert_int_equal(ml_driver_cuda_version("590.44.01"), 13010);
	assert_int_equal(ml_driver_cuda_version("595.45.04"), 13020);
	assert_int_equal(ml_driver_cuda_version("595.71.05"), 13020);
	/* each toolkit's minimum driver supports that toolkit */
	assert_int_equal(ml_driver_cuda_version(ml_toolkit_min_driver("13.1", false)), 13010);
	assert_int_equal(ml_driver_cuda_version(ml_toolkit_min_driver("13.2", false)), 13020);
}

/* The row a build's minimum comes from (selection names it): its own, or
 * for a toolkit the table lacks the newest older one of its major. */
static void test_cuda_driver_row_is_exact_or_a_lower_bound(void **state)
{
	bool exact = false;
	(void)state;
	const ml_toolkit_driver *r = ml_cuda_driver_row("13.2", &exact);
	assert_non_null(r);
	assert_true(exact);
	assert_string_equal(r->linux_min, "595.45.04");
	r = ml_cuda_driver_row("13.3", &exact);
	assert_non_null(r);
	assert_false(exact);
	assert_string_equal(r->cuda, "13.2.2");
	r = ml_cuda_driver_row("12.5", &exact);
	assert_string_equal(r->cuda, "12.4");
	assert_false(exact);
	assert_null(ml_cuda_driver_row("12", &exact)); /* only the 12.x floor */
	assert_null(ml_cuda_driver_row("99.0", &exact));
	assert_null(ml_cuda_driver_row(NULL, &exact));
}

/* --- per architecture ---------------------------------------------------- */

static void test_blackwell_needs_its_first_toolkit(void **state)
{
	bool beyond = true;

	(void)state;
	assert_string_equal(ml_arch_first_toolkit(12, 0, &beyond), "12.8");
	assert_false(beyond);
	assert_string_equal(ml_arch_first_toolkit(10, 0, NULL), "12.8");
	assert_string_equal(ml_arch_first_toolkit(11, 0, NULL), "12.8");
	/* The driver is the toolkit's, not a copy. */
	assert_string_equal(ml_arch_min_driver(12, 0, false), ml_toolkit_min_driver("12.8", false));
	assert_string_equal(ml_arch_min_driver(12, 0, false), "570.26");
	assert_string_equal(ml_arch_min_driver(12, 0, true), "570.65");
	assert_string_equal(ml_min_driver_for_cc(12, 0, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(12, 0, true), "570.65");
}

static void test_ampere_and_hopper_have_no_architecture_minimum(void **state)
{
	bool beyond = true;

	(void)state;
	assert_null(ml_arch_first_toolkit(8, 6, &beyond));
	assert_false(beyond);
	assert_null(ml_arch_min_driver(8, 6, false));
	assert_null(ml_arch_min_driver(9, 0, true));
	/* detect still advises the default build's driver. */
	assert_string_equal(ml_min_driver_for_cc(8, 6, false), "550.54.14");
	assert_string_equal(ml_min_driver_for_cc(9, 0, false), "550.54.14");
}

static void test_gpu_newer_than_every_rule_gets_the_newest_as_a_lower_bound(void **state)
{
	bool beyond = false;

	(void)state;
	assert_string_equal(ml_arch_first_toolkit(13, 0, &beyond), "12.8");
	assert_true(beyond);
	assert_string_equal(ml_arch_min_driver(13, 0, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(13, 0, false), "570.26");
	assert_string_equal(ml_min_driver_for_cc(13, 0, true), "570.65");
}

static void test_unknown_or_too_old_gpus_get_no_advice(void **state)
{
	(void)state;
	assert_null(ml_arch_first_toolkit(-1, -1, NULL));
	assert_null(ml_min_driver_for_cc(-1, -1, false));
	assert_null(ml_min_driver_for_cc(3, 7, false));
}

/* --- who reads it ---------------------------------------------------------- */

/* Writes a one-package hashed manifest with `header` lines; returns its
 * path (static buffer). */
static const char *write_manifest(const char *header)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/mlsetup-test-drivers-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%snumpy==1.26.4 --hash=sha256:%064d\n", header, 0);
	fclose(f);
	return path;
}

static void test_manifest_with_cuda_12_8_gets_570_26(void **state)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;

	(void)state;
	const char *path = write_manifest("# mlsetup: cuda = 12.8\n");
	assert_int_equal(ml_manifest_open(&mf, path, &err), 0);
	unlink(path);
	assert_string_equal(mf->min_driver_linux, "570.26");
	assert_string_equal(mf->min_driver_windows, "570.65");
	ml_manifest_free(mf);

	assert_int_equal(ml_manifest_open(&mf, "requirements_blackwell.txt", &err), 0);
	assert_string_equal(mf->cuda, "12.8");
	assert_string_equal(mf->min_driver_linux, "570.26");
	ml_manifest_free(mf);
	assert_int_equal(ml_manifest_open(&mf, "requirements.txt", &err), 0);
	assert_string_equal(mf->min_driver_linux, "550.54.14");
	assert_string_equal(mf->min_driver_windows, "551.61");
	ml_manifest_free(mf);
}

static void test_manifest_with_cuda_13_2_gets_595_45_04_and_no_windows_minimum(void **state)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;

	(void)state;
	const char *path = write_manifest("# mlsetup: cuda = 13.2\n");
	assert_int_equal(ml_manifest_open(&mf, path, &err), 0);
	unlink(path);
	assert_string_equal(mf->min_driver_linux, "595.45.04");
	assert_null(mf->min_driver_windows);
	ml_manifest_free(mf);
}

static void test_manifest_min_driver_header_overrides_the_table(void **state)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;

	(void)state;
	const char *path = write_manifest("# mlsetup: cuda = 12.8\n"
	                                  "# mlsetup: min_driver_linux = 575.1\n");
	assert_int_equal(ml_manifest_open(&mf, path, &err), 0);
	unlink(path);
	assert_string_equal(mf->min_driver_linux, "575.1");
	assert_string_equal(mf->min_driver_windows, "570.65");
	ml_manifest_free(mf);
}

static void test_manifest_with_unknown_cuda_names_no_minimum(void **state)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;

	(void)state;
	const char *path = write_manifest("# mlsetup: cuda = 12.5\n");
	assert_int_equal(ml_manifest_open(&mf, path, &err), 0);
	unlink(path);
	assert_null(mf->min_driver_linux);
	assert_null(mf->min_driver_windows);
	ml_manifest_free(mf);
}

/* The Windows manifests name their Windows driver minimum in the header
 * (the issue asks it shown there): it must be drivers.json's for their
 * CUDA version. And they pin every requirement exactly, without hashes,
 * torch with the local version of its CUDA build (+cu124), so no index
 * can swap in another build. */
static void test_windows_manifests_agree_with_the_driver_table_and_pin_torch(void **state)
{
	(void)state;
	const char *names[] = {"requirements.txt", "requirements_blackwell.txt"};
	for (size_t i = 0; i < 2; i++) {
		ml_manifest *mf = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_manifest_open_os(&mf, names[i], "windows", 0, &err), 0);
		assert_true(mf->resolve);
		assert_non_null(mf->cuda);
		assert_non_null(ml_requirements_meta(mf->reqs, "min_driver_windows"));
		assert_string_equal(mf->min_driver_windows, ml_toolkit_min_driver(mf->cuda, true));
		assert_true(mf->has_gpu_header);
		assert_int_equal(mf->n_platforms, 1);
		assert_string_equal(mf->platforms[0], "windows-x86_64");
		char cu[16] = "+cu";
		for (const char *c = mf->cuda; *c; c++)
			if (*c != '.')
				strncat(cu, c, 1);
		int seen = 0;
		for (size_t k = 0; k < mf->reqs->n_reqs; k++) {
			const ml_requirement *r = &mf->reqs->reqs[k];
			assert_non_null(r->version); /* == pinned */
			assert_int_equal(r->n_hashes, 0);
			if (strncmp(r->normalized, "torch", 5) != 0)
				continue;
			seen++;
			assert_non_null(strstr(r->version, cu));
			if (!strcmp(r->normalized, "torch")) {
				char want[64];
				snprintf(want, sizeof(want), "%s%s", mf->torch, cu);
				assert_string_equal(r->version, want);
			}
		}
		assert_int_equal(seen, 3); /* torch, torchvision, torchaudio */
		assert_int_equal(mf->reqs->n_extra, 1);
		assert_non_null(strstr(mf->reqs->extra_index_urls[0], cu + 1));
		ml_manifest_free(mf);
	}
}

/* drivers.json's detect_advice repeats two facts of the default build
 * (selection.json's no_gpu manifest): its CUDA version and oldest SASS.
 * They must agree with the manifest. */
static void test_detect_advice_agrees_with_the_default_build(void **state)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;

	(void)state;
	const ml_embedded_file *sel = ml_embedded_find("selection.json");
	assert_non_null(sel);
	cJSON *doc = cJSON_ParseWithLength(sel->data, sel->size);
	const cJSON *no_gpu = cJSON_GetObjectItemCaseSensitive(doc, "no_gpu");
	assert_true(cJSON_IsString(no_gpu));
	assert_int_equal(ml_manifest_open(&mf, no_gpu->valuestring, &err), 0);
	cJSON_Delete(doc);
	int major = 99, minor = 9;
	for (size_t i = 0; i < mf->n_code; i++)
		if (mf->code[i].major * 10 + mf->code[i].minor < major * 10 + minor) {
			major = mf->code[i].major;
			minor = mf->code[i].minor;
		}
	assert_true(major < 99);
	assert_string_equal(ml_min_driver_for_cc(major, minor, false), mf->min_driver_linux);
	assert_string_equal(ml_min_driver_for_cc(major, minor, true), mf->min_driver_windows);
	if (minor > 0)
		minor--;
	else
		major--, minor = 9;
	assert_null(ml_min_driver_for_cc(major, minor, false));
	ml_manifest_free(mf);
}

/* --- where a GPU stands against the shipped builds ------------------------- */

static void test_cc_13_is_newer_than_every_shipped_build(void **state)
{
	ml_build_range r;
	ml_err err = ML_ERR_INIT;

	(void)state;
	assert_int_equal(ml_shipped_build_range(&r, 13, 0, &err), 0);
	assert_int_equal(r.fit, ML_BUILDS_NEWER);
	assert_string_equal(r.newest, "requirements_blackwell.txt");
	assert_string_equal(r.newest_cuda, "12.8");
	assert_string_equal(r.newest_torch, "2.8.0");
	assert_string_equal(r.newest_sass, "sm_120");
	assert_string_equal(r.newest_ptx, "");
}

static void test_kepler_is_older_than_every_shipped_build(void **state)
{
	ml_build_range r;
	ml_err err = ML_ERR_INIT;

	(void)state;
	assert_int_equal(ml_shipped_build_range(&r, 3, 7, &err), 0);
	assert_int_equal(r.fit, ML_BUILDS_OLDER);
	assert_string_equal(r.oldest, "requirements.txt");
	assert_string_equal(r.oldest_code, "sm_50");
}

static void test_covered_and_skipped_architectures(void **state)
{
	ml_build_range r;
	ml_err err = ML_ERR_INIT;

	(void)state;
	assert_int_equal(ml_shipped_build_range(&r, 8, 6, &err), 0);
	assert_int_equal(r.fit, ML_BUILDS_COVER);
	assert_int_equal(ml_shipped_build_range(&r, 12, 1, &err), 0);
	assert_int_equal(r.fit, ML_BUILDS_COVER);
	/* Thor (11.0): between sm_100 and sm_120, no build has code for it. */
	assert_int_equal(ml_shipped_build_range(&r, 11, 0, &err), 0);
	assert_int_equal(r.fit, ML_BUILDS_GAP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_table_loads),
	        cmocka_unit_test(test_each_toolkit_minimum_is_what_the_release_notes_say),
	        cmocka_unit_test(test_ptx_isa_maps_to_the_release_that_introduced_it),
	        cmocka_unit_test(test_windows_and_linux_minimums_differ),
	        cmocka_unit_test(test_unknown_cuda_versions_have_no_minimum),
	        cmocka_unit_test(test_minor_version_floor_is_per_cuda_major),
	        cmocka_unit_test(test_driver_branches_of_cuda_13),
	        cmocka_unit_test(test_cuda_driver_row_is_exact_or_a_lower_bound),
	        cmocka_unit_test(test_blackwell_needs_its_first_toolkit),
	        cmocka_unit_test(test_ampere_and_hopper_have_no_architecture_minimum),
	        cmocka_unit_test(test_gpu_newer_than_every_rule_gets_the_newest_as_a_lower_bound),
	        cmocka_unit_test(test_unknown_or_too_old_gpus_get_no_advice),
	        cmocka_unit_test(test_manifest_with_cuda_12_8_gets_570_26),
	        cmocka_unit_test(
	                test_manifest_with_cuda_13_2_gets_595_45_04_and_no_windows_minimum),
	        cmocka_unit_test(test_manifest_min_driver_header_overrides_the_table),
	        cmocka_unit_test(test_manifest_with_unknown_cuda_names_no_minimum),
	        cmocka_unit_test(test_windows_manifests_agree_with_the_driver_table_and_pin_torch),
	        cmocka_unit_test(test_detect_advice_agrees_with_the_default_build),
	        cmocka_unit_test(test_cc_13_is_newer_than_every_shipped_build),
	        cmocka_unit_test(test_kepler_is_older_than_every_shipped_build),
	        cmocka_unit_test(test_covered_and_skipped_architectures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
