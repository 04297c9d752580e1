/*
 * test_detect.c - unit tests for the detect stage's parsers and for the
 * /proc and /sys readers run against fixture trees (tests/fixtures/sysroot).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include "win_skip.h"

#include "mlsetup/detect.h"
#include "../../src/detect/internal.h"

#define SYSROOT "tests/fixtures/sysroot/"
/* The fixture trees are read by the Linux probes, which the Windows build
 * replaces by Windows' own (os_windows.c, pci.c, procfs.c). */
#define NO_PROCFS "the /proc and /sys readers are not built for Windows"

static void test_nvrm_version_proprietary_module(void **state)
{
	(void)state;
	char v[32];
	assert_int_equal(ml_parse_nvrm_version(v, sizeof(v),
	                                       "NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
	                                       "550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"),
	                 0);
	assert_string_equal(v, "550.54.14");
}

static void test_nvrm_version_open_module(void **state)
{
	(void)state;
	char v[32];
	assert_int_equal(
	        ml_parse_nvrm_version(v, sizeof(v),
	                              "NVRM version: NVIDIA UNIX Open Kernel Module for "
	                              "x86_64  580.95.05  Release Build  (dvs-builder@U16)"),
	        0);
	assert_string_equal(v, "580.95.05");
}

static void test_nvrm_version_aarch64_two_part(void **state)
{
	(void)state;
	char v[32];
	assert_int_equal(ml_parse_nvrm_version(v, sizeof(v),
	                                       "NVRM version: NVIDIA UNIX aarch64 Kernel Module  "
	                                       "570.26  Sat Jan 25 2025"),
	                 0);
	assert_string_equal(v, "570.26");
}

static void test_nvrm_version_rejects_malformed(void **state)
{
	(void)state;
	char v[32] = "untouched";
	const char *bad[] = {
	        "",
	        "NVRM version: something else",
	        "NVRM version: NVIDIA UNIX x86_64 Kernel Module",
	        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.  x",
	        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  abc.def",
	        "GCC version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module 550.54.14",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ml_parse_nvrm_version(v, sizeof(v), bad[i]), ML_EPARSE);
	assert_int_equal(ml_parse_nvrm_version(v, sizeof(v), NULL), ML_EPARSE);
	assert_string_equal(v, "untouched");
}

static void test_nvrm_version_too_long_for_buffer(void **state)
{
	(void)state;
	char v[6];
	assert_int_equal(ml_parse_nvrm_version(v, sizeof(v),
	                                       "NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
	                                       "550.54.14"),
	                 ML_EPARSE);
}

static void test_bus_id_normalizes_nvml_cuda_and_short_forms(void **state)
{
	(void)state;
	char b[32];
	assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), "00000000:4B:00.0"), 0);
	assert_string_equal(b, "0000:4b:00.0");
	assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), "0000:4b:00.0"), 0);
	assert_string_equal(b, "0000:4b:00.0");
	assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), "01:00.1"), 0);
	assert_string_equal(b, "0000:01:00.1");
	assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), "0001:c1:1f.7"), 0);
	assert_string_equal(b, "0001:c1:1f.7");
}

static void test_bus_id_rejects_garbage(void **state)
{
	(void)state;
	char b[32];
	const char *bad[] = {"",
	                     "zzzz",
	                     "0000:01:00",
	                     "0000:01:00.8",
	                     "0000:100:00.0",
	                     "0000:01:20.0",
	                     "0000:01:00.0x",
	                     "not-a-bus"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), bad[i]), ML_EPARSE);
	assert_int_equal(ml_pci_bus_id_normalize(b, sizeof(b), NULL), ML_EPARSE);
}

/* Runs ml_detect against a fixture tree with no GPU libraries reachable
 * (the unit tests run without the shims on the library path). */
static ml_machine *detect_root(const char *root)
{
	ml_detect_opts o = ML_DETECT_OPTS_INIT;
	o.root = root;
	o.no_smi = true;
	ml_machine *m = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_detect(&m, &o, &err), 0);
	assert_non_null(m);
	return m;
}

static const ml_probe *probe(const ml_machine *m, const char *source)
{
	for (size_t i = 0; i < m->n_probes; i++)
		if (strcmp(m->probes[i].source, source) == 0)
			return &m->probes[i];
	fail_msg("no probe record for %s", source);
	return NULL;
}

static void test_procfs_reader_proprietary_tree(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PROCFS);
	ml_machine *m = detect_root(SYSROOT "proprietary");
	assert_string_equal(m->driver.version, "550.54.14");
	assert_string_equal(m->driver.source, "procfs");
	assert_true(m->driver.kernel_module);
	assert_int_equal(m->driver.cuda_version, 12040);
	assert_int_equal(m->n_gpus, 1);
	assert_string_equal(m->gpus[0].name, "NVIDIA GeForce RTX 3090");
	assert_string_equal(m->gpus[0].pci_bus_id, "0000:01:00.0");
	assert_int_equal(m->gpus[0].pci_device_id, 0x2204);
	assert_int_equal(m->gpus[0].cc_major, 8);
	assert_int_equal(m->gpus[0].cc_minor, 6);
	assert_string_equal(m->gpus[0].architecture, "Ampere");
	assert_int_equal(probe(m, "procfs")->status, ML_PROBE_OK);
	assert_int_equal(probe(m, "pci")->status, ML_PROBE_OK);
	assert_non_null(strstr(probe(m, "pci")->detail, "kernel driver nvidia"));
	assert_int_equal(probe(m, "nvidia-smi")->status, ML_PROBE_SKIPPED);
	ml_machine_free(m);
}

static void test_pci_reader_finds_gpu_without_driver(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PROCFS);
	ml_machine *m = detect_root(SYSROOT "pci-only");
	assert_string_equal(m->driver.version, "");
	assert_false(m->driver.kernel_module);
	assert_int_equal(m->n_gpus, 1); /* the Intel VGA device is ignored */
	assert_int_equal(m->gpus[0].cc_major, 12);
	assert_string_equal(m->gpus[0].source, "pci");
	char advice[512];
	assert_true(ml_machine_driver_advice(advice, sizeof(advice), m));
	assert_non_null(strstr(advice, "install driver 570.26 or newer"));
	ml_machine_free(m);
}

/* gpus[].driver_model is Windows' (WDDM / TCC, from NVML): on Linux the
 * field is there and null; a known model is written as a string. */
static void test_driver_model_null_on_linux_string_when_known(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PROCFS);
	ml_machine *m = detect_root(SYSROOT "pci-only");
	assert_int_equal(m->n_gpus, 1);
	assert_string_equal(m->gpus[0].driver_model, "");
	cJSON *j = ml_machine_to_json(m);
	assert_non_null(j);
	cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0);
	cJSON *dm = cJSON_GetObjectItem(g, "driver_model");
	assert_non_null(dm);
	assert_true(cJSON_IsNull(dm));
	cJSON_Delete(j);
	ml_strlcpy(m->gpus[0].driver_model, "TCC", sizeof(m->gpus[0].driver_model));
	j = ml_machine_to_json(m);
	g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0);
	dm = cJSON_GetObjectItem(g, "driver_model");
	assert_true(cJSON_IsString(dm));
	assert_string_equal(dm->valuestring, "TCC");
	cJSON_Delete(j);
	ml_machine_free(m);
}

static void test_malformed_tree_is_recorded_not_fatal(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PROCFS);
	ml_machine *m = detect_root(SYSROOT "malformed");
	assert_string_equal(m->driver.version, "");
	assert_int_equal(m->n_gpus, 0);
	assert_int_equal(probe(m, "procfs")->status, ML_PROBE_FAILED);
	assert_non_null(strstr(probe(m, "procfs")->detail, "malformed"));
	assert_non_null(strstr(probe(m, "pci")->detail, "unreadable device id"));
	assert_int_equal(m->memory_mib, 0);
	assert_true(m->cpu_cores >= 1);
	ml_machine_free(m);
}

static void test_os_release_and_wsl_from_tree(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PROCFS);
	ml_machine *m = detect_root(SYSROOT "wsl");
	assert_string_equal(m->os.distro_id, "ubuntu");
	assert_string_equal(m->os.distro_version, "24.04");
	assert_string_equal(m->os.distro_pretty, "Ubuntu 24.04.1 LTS");
	assert_true(m->os.wsl);
	assert_string_equal(m->os.kernel, "5.15.167.4-microsoft-standard-WSL2");
	ml_machine_free(m);
}

static void test_missing_root_detects_nothing_and_does_not_fail(void **state)
{
	(void)state;
	ml_machine *m = detect_root("tests/fixtures/sysroot/does-not-exist");
	assert_int_equal(m->n_gpus, 0);
	assert_int_equal(m->n_probes, 5);
	ml_machine_free(m);
}

/* Precision by compute capability: every generation against docs/nvidia-and-python-facts.md
 * "Precision by compute capability". */
static void test_precision_features_by_compute_capability(void **state)
{
	(void)state;
	static const struct {
		int major, minor;
		bool bf16, tf32, fp8, fp4, fa2;
		const char *dtype;
	} cases[] = {
	        {3, 7, false, false, false, false, false, "float32"}, /* K80 */
	        {6, 1, false, false, false, false, false, "float32"}, /* GTX 1080 */
	        {7, 0, false, false, false, false, false, "float16"}, /* V100 */
	        {7, 5, false, false, false, false, false, "float16"}, /* T4 */
	        {8, 0, true, true, false, false, true, "bfloat16"},   /* A100 */
	        {8, 6, true, true, false, false, true, "bfloat16"},   /* RTX 3090 */
	        {8, 7, true, true, false, false, true, "bfloat16"},   /* Orin */
	        {8, 9, true, true, true, false, true, "bfloat16"},    /* RTX 4090 */
	        {9, 0, true, true, true, false, true, "bfloat16"},    /* H100 */
	        {10, 0, true, true, true, true, true, "bfloat16"},    /* B200 */
	        {12, 0, true, true, true, true, true, "bfloat16"},    /* RTX 5090 */
	        {13, 0, true, true, true, true, true, "bfloat16"},    /* newer */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ml_precision p;
		ml_gpu_precision(&p, cases[i].major, cases[i].minor);
		assert_true(p.known);
		assert_int_equal(p.bf16, cases[i].bf16);
		assert_int_equal(p.tf32, cases[i].tf32);
		assert_int_equal(p.fp8, cases[i].fp8);
		assert_int_equal(p.fp4, cases[i].fp4);
		assert_int_equal(p.flash_attention_2, cases[i].fa2);
		assert_string_equal(p.recommended_dtype, cases[i].dtype);
	}
	ml_precision p;
	ml_gpu_precision(&p, -1, -1);
	assert_false(p.known);
	assert_false(p.bf16);
	assert_null(p.recommended_dtype);
}

/* Every rule names a known feature and its source. */
static void test_precision_rules_name_their_source(void **state)
{
	(void)state;
	const ml_precision_rule *r;
	size_t n = ml_precision_rules(&r);
	assert_true(n >= 8);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(r[i].feature);
		assert_non_null(r[i].source);
		assert_true(strlen(r[i].source) > 20);
		assert_true(r[i].major >= 0 && r[i].minor >= 0 && r[i].minor <= 9);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_nvrm_version_proprietary_module),
	        cmocka_unit_test(test_nvrm_version_open_module),
	        cmocka_unit_test(test_nvrm_version_aarch64_two_part),
	        cmocka_unit_test(test_nvrm_version_rejects_malformed),
	        cmocka_unit_test(test_nvrm_version_too_long_for_buffer),
	        cmocka_unit_test(test_bus_id_normalizes_nvml_cuda_and_short_forms),
	        cmocka_unit_test(test_bus_id_rejects_garbage),
	        cmocka_unit_test(test_procfs_reader_proprietary_tree),
	        cmocka_unit_test(test_pci_reader_finds_gpu_without_driver),
	        cmocka_unit_test(test_driver_model_null_on_linux_string_when_known),
	        cmocka_unit_test(test_malformed_tree_is_recorded_not_fatal),
	        cmocka_unit_test(test_os_release_and_wsl_from_tree),
	        cmocka_unit_test(test_missing_root_detects_nothing_and_does_not_fail),
	        cmocka_unit_test(test_precision_features_by_compute_capability),
	        cmocka_unit_test(test_precision_rules_name_their_source),
	};
	return cmocka_run_group_tests_name("detect", tests, NULL, NULL);
}
