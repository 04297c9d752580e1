/*
 * test_select.c - specs for manifest selection (src/plan/select.c through
 * ml_select(), with the embedded manifests and selection rules): for
 * machines built by hand (no GPU, Ampere, Hopper, Blackwell on old and new
 * drivers, mixed GPUs, Kepler, a driver below the CUDA 12 floor, CUDA 13.2
 * builds on drivers from below the CUDA 13 floor to 13.2's own, Windows,
 * aarch64 with and without a GPU, an unsupported Python), which manifest is chosen, every rule's
 * verdict in order, and what the problem and remedy say when nothing fits.
 * The numbers asserted are the user-visible ones (driver 570.26,
 * 550.54.14), whatever table they come from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlsetup/plan.h"
#include "../../src/plan/internal.h"

/* A machine and the storage for its GPUs (m.gpus points into gpus). */
typedef struct box {
	ml_machine m;
	ml_gpu gpus[4];
} box;

/* A machine with no GPU yet: os "linux"/"windows", arch, driver ("" for
 * none), glibc 2.36 on Linux. */
static void machine(box *b, const char *os, const char *arch, const char *driver)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->m.os.name, sizeof(b->m.os.name), "%s", os);
	snprintf(b->m.os.arch, sizeof(b->m.os.arch), "%s", arch);
	if (strcmp(os, "linux") == 0) {
		snprintf(b->m.os.libc_kind, sizeof(b->m.os.libc_kind), "glibc");
		snprintf(b->m.os.libc_version, sizeof(b->m.os.libc_version), "2.36");
	}
	snprintf(b->m.driver.version, sizeof(b->m.driver.version), "%s", driver);
	b->m.driver.kernel_module = driver[0] != '\0';
	b->m.gpus = b->gpus;
}

static void gpu(box *b, const char *name, int major, int minor)
{
	ml_gpu *g = &b->gpus[b->m.n_gpus];
	g->index = (int)b->m.n_gpus++;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->cc_major = major;
	g->cc_minor = minor;
	snprintf(g->architecture, sizeof(g->architecture), "%s", ml_cc_architecture(major, minor));
}

static ml_selection *select_for(const box *b, const char *python, const char *forced)
{
	ml_select_opts o = ML_SELECT_OPTS_INIT;
	o.python_version = python;
	o.manifest = forced;
	ml_selection *s = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_select(&s, &b->m, &o, &err) != 0)
		fail_msg("ml_select: %s", err.msg);
	return s;
}

static const char *verdict_name(ml_verdict_kind v)
{
	switch (v) {
	case ML_RULE_OK:
		return "ok";
	case ML_RULE_WARN:
		return "warn";
	case ML_RULE_FAIL:
		return "FAIL";
	case ML_RULE_INFO:
		return "info";
	}
	return "?";
}

/* Every reason as "manifest rule verdict", one per line, in order. */
static void assert_verdicts(const ml_selection *s, const char *want)
{
	char got[4096] = "";
	for (size_t i = 0; i < s->n_reasons; i++) {
		const ml_reason *r = &s->reasons[i];
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s %s %s\n", r->manifest, r->rule,
		         verdict_name(r->verdict));
	}
	assert_string_equal(got, want);
}

/* Fails unless the nth (0-based) reason for (manifest, rule) contains text. */
static void assert_reason(const ml_selection *s, const char *manifest, const char *rule, int nth,
                          const char *text)
{
	for (size_t i = 0; i < s->n_reasons; i++) {
		const ml_reason *r = &s->reasons[i];
		if (strcmp(r->manifest, manifest) || strcmp(r->rule, rule) || nth-- > 0)
			continue;
		if (!strstr(r->detail, text))
			fail_msg("%s %s: '%s' does not say '%s'", manifest, rule, r->detail, text);
		return;
	}
	fail_msg("no %s reason for %s", rule, manifest);
}

static void assert_chosen(const ml_selection *s, const char *name)
{
	if (!name) {
		if (s->manifest)
			fail_msg("chose %s, expected nothing to fit", s->manifest->name);
		return;
	}
	if (!s->manifest)
		fail_msg("nothing fits (%s), expected %s", s->problem, name);
	assert_string_equal(s->manifest->name, name);
	assert_true(s->manifest->embedded);
	assert_string_equal(s->problem, "");
}

static bool any_warning(const ml_selection *s, const char *text)
{
	for (size_t i = 0; i < s->n_warnings; i++)
		if (strstr(s->warnings[i], text))
			return true;
	return false;
}

#define REQ "requirements.txt"
#define BW  "requirements_blackwell.txt"

static void test_no_gpu_selects_the_default_manifest_and_skips_gpu_checks(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "");
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_true(s->gpu_checks_skipped);
	assert_false(s->overridden);
	/* No GPU: neither the gpu nor the driver rule is judged. */
	assert_verdicts(s, REQ " platform ok\n" REQ " python ok\n" REQ " choice info\n");
	assert_reason(s, REQ, "platform", 0, "linux-x86_64 is supported");
	assert_reason(s, REQ, "python", 0, "Python 3.12 is supported");
	assert_reason(s, REQ, "choice", 0, "no NVIDIA GPU");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void test_rtx3090_on_r550_gets_the_reproducible_stack(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "550.127.05");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_false(s->gpu_checks_skipped);
	assert_verdicts(s, REQ " gpu ok\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" REQ " choice info\n");
	assert_reason(s, REQ, "gpu", 0, "NVIDIA GeForce RTX 3090 (sm_86): SASS sm_86 runs on 8.6");
	assert_reason(s, REQ, "driver", 0, "driver 550.127.05 >= 550.54.14");
	assert_reason(s, REQ, "choice", 0, "preferred for reproducibility");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void test_h100_gets_the_reproducible_stack(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "570.124.06");
	gpu(&b, "NVIDIA H100 80GB HBM3", 9, 0);
	ml_selection *s = select_for(&b, "3.11", NULL);
	assert_chosen(s, REQ);
	assert_verdicts(s, REQ " gpu ok\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" REQ " choice info\n");
	assert_reason(s, REQ, "gpu", 0, "NVIDIA H100 80GB HBM3 (sm_90): SASS sm_90");
	assert_reason(s, REQ, "python", 0, "Python 3.11 is supported");
	ml_selection_free(s);
}

static void test_rtx5090_on_r550_fits_nothing_and_names_driver_570(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "550.54.14");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	/* torch 2.6 has no sm_120 code; the Blackwell build runs but needs R570. */
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu ok\n" BW " driver FAIL\n" BW
	                       " platform ok\n" BW " python ok\n");
	assert_reason(s, REQ, "gpu", 0, "NVIDIA GeForce RTX 5090 (sm_120): sm_120: no SASS");
	assert_reason(s, BW, "gpu", 0, "runs on 12.0");
	assert_reason(s, BW, "driver", 0, "driver 550.54.14 is below 570.26");
	assert_non_null(strstr(s->problem, "NVIDIA GeForce RTX 5090 (sm_120)"));
	assert_non_null(strstr(s->problem, BW));
	assert_non_null(strstr(s->problem, "driver >= 570.26"));
	assert_non_null(strstr(s->problem, "this machine has 550.54.14"));
	assert_string_equal(s->remedy, "upgrade the NVIDIA driver to 570.26 or newer");
	ml_selection_free(s);
}

static void test_rtx5090_on_r570_gets_the_blackwell_stack(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "570.124.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, BW);
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu ok\n" BW " driver ok\n" BW
	                       " platform ok\n" BW " python ok\n" BW " choice info\n");
	assert_reason(s, BW, "gpu", 0, "NVIDIA GeForce RTX 5090 (sm_120): SASS sm_120");
	assert_reason(s, BW, "driver", 0, "driver 570.124.04 >= 570.26");
	assert_reason(s, BW, "choice", 0, "the preferred manifests before it do not");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void test_mixed_ampere_and_blackwell_need_the_build_both_run(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "570.124.04");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, BW);
	/* One gpu verdict per GPU, in order. */
	assert_verdicts(s, REQ " gpu ok\n" REQ " gpu FAIL\n" REQ " driver ok\n" REQ
	                       " platform ok\n" REQ " python ok\n" BW " gpu ok\n" BW " gpu ok\n" BW
	                       " driver ok\n" BW " platform ok\n" BW " python ok\n" BW
	                       " choice info\n");
	assert_reason(s, REQ, "gpu", 0, "NVIDIA GeForce RTX 3090 (sm_86)");
	assert_reason(s, REQ, "gpu", 1, "NVIDIA GeForce RTX 5090 (sm_120): sm_120: no SASS");
	assert_reason(s, BW, "gpu", 0, "NVIDIA GeForce RTX 3090 (sm_86): SASS sm_86 runs on 8.6");
	assert_reason(s, BW, "gpu", 1, "NVIDIA GeForce RTX 5090 (sm_120): SASS sm_120");
	ml_selection_free(s);
}

static void test_kepler_fits_nothing_and_says_the_generation_was_dropped(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "470.256.02");
	gpu(&b, "NVIDIA Tesla K40m", 3, 5);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver FAIL\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu FAIL\n" BW " driver FAIL\n" BW
	                       " platform ok\n" BW " python ok\n");
	assert_reason(s, REQ, "gpu", 0, "NVIDIA Tesla K40m (sm_35)");
	assert_reason(s, REQ, "driver", 0, "driver 470.256.02 is below 550.54.14");
	assert_string_equal(s->problem, "no shipped manifest has CUDA code that runs on NVIDIA "
	                                "Tesla K40m (sm_35) (Kepler)");
	assert_non_null(strstr(s->remedy, "dropped this GPU generation"));
	ml_selection_free(s);
}

static void test_driver_520_is_below_the_cuda12_floor_and_fits_nothing(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "520.61.05");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	assert_verdicts(s, REQ " gpu ok\n" REQ " driver FAIL\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu ok\n" BW " driver FAIL\n" BW
	                       " platform ok\n" BW " python ok\n");
	assert_reason(s, REQ, "driver", 0,
	              "driver 520.61.05 is below 550.54.14, the minimum for "
	              "CUDA 12.4");
	assert_reason(s, BW, "driver", 0,
	              "driver 520.61.05 is below 570.26, the minimum for CUDA "
	              "12.8");
	/* and it names the floor it is also below, the rule that failed */
	assert_reason(s, REQ, "driver", 0,
	              "and below 525.60.13, the CUDA 12.x minor-version compatibility floor");
	/* The preferred manifest is the one to upgrade for, and the problem
	 * names the GPU (its code runs; only the driver is too old). */
	assert_non_null(strstr(s->problem, "NVIDIA GeForce RTX 3090 (sm_86) needs"));
	assert_non_null(strstr(s->problem, REQ ", which need driver >= 550.54.14"));
	assert_non_null(strstr(s->problem, "this machine has 520.61.05"));
	assert_string_equal(s->remedy, "upgrade the NVIDIA driver to 550.54.14 or newer");
	ml_selection_free(s);
}

static void test_driver_535_runs_under_minor_version_compatibility_with_a_warning(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "535.183.01");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_verdicts(s, REQ " gpu ok\n" REQ " driver warn\n" REQ " platform ok\n" REQ
	                       " python ok\n" REQ " choice info\n");
	assert_reason(s, REQ, "driver", 0, "driver 535.183.01 is below 550.54.14");
	assert_reason(s, REQ, "driver", 0, "at least 525.60.13");
	assert_true(any_warning(s, "minor-version compatibility"));
	assert_true(any_warning(s, "upgrade to 550.54.14 or newer"));
	ml_selection_free(s);
}

static void test_blackwell_below_r570_gets_no_minor_version_grace(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "560.35.03");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	/* 560 is above the CUDA 12 floor, but Blackwell needs an R570 driver. */
	assert_reason(s, BW, "driver", 0, "driver 560.35.03 is below 570.26");
	assert_reason(s, BW, "driver", 0, "NVIDIA GeForce RTX 5090 (sm_120) needs an R570+ driver");
	assert_string_equal(s->remedy, "upgrade the NVIDIA driver to 570.26 or newer");
	ml_selection_free(s);
}

/* Windows has its own set (manifests/windows/, the same names): pins
 * without hashes, resolved at first install; chosen from their headers
 * alone, with the Windows driver minimums. */
static void assert_windows_set(const ml_selection *s, const char *name, const char *cuda)
{
	char want[128];
	snprintf(want, sizeof(want), "windows/%s", name);
	assert_string_equal(s->manifest->embedded_name, want);
	assert_true(s->manifest->resolve);
	assert_string_equal(s->manifest->cuda, cuda);
}

static void test_windows_rtx5090_on_572_gets_the_windows_blackwell_manifest(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "572.83");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, BW);
	assert_windows_set(s, BW, "12.8");
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu ok\n" BW " driver ok\n" BW
	                       " platform ok\n" BW " python ok\n" BW " choice info\n");
	assert_reason(s, BW, "gpu", 0, "NVIDIA GeForce RTX 5090 (sm_120): SASS sm_120");
	assert_reason(s, BW, "driver", 0, "driver 572.83 >= 570.65, the minimum for CUDA 12.8");
	assert_reason(s, BW, "platform", 0,
	              "windows-x86_64 is supported (manifest: windows-x86_64)");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void test_windows_rtx3090_on_551_gets_the_windows_cu124_manifest(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "551.61");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.11", NULL);
	assert_chosen(s, REQ);
	assert_windows_set(s, REQ, "12.4");
	assert_reason(s, REQ, "driver", 0, "driver 551.61 >= 551.61, the minimum for CUDA 12.4");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void
test_windows_driver_below_the_cuda12_floor_fits_nothing_with_windows_advice(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "527.56");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	assert_reason(s, REQ, "driver", 0, "driver 527.56 is below 551.61");
	assert_reason(s, BW, "driver", 0, "driver 527.56 is below 570.65");
	assert_string_equal(s->remedy, "upgrade the NVIDIA driver to 551.61 or newer");
	ml_selection_free(s);
}

static void test_windows_without_a_gpu_gets_the_windows_default(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "");
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_windows_set(s, REQ, "12.4");
	assert_true(s->gpu_checks_skipped);
	ml_selection_free(s);
}

static void test_a_manifest_named_on_windows_is_the_windows_one(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "572.83");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", "requirements_blackwell");
	assert_string_equal(s->manifest->name, BW);
	assert_windows_set(s, BW, "12.8");
	ml_selection_free(s);
	/* and on Linux the Linux one, hashed */
	machine(&b, "linux", "x86_64", "572.83");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	s = select_for(&b, "3.12", "requirements_blackwell");
	assert_string_equal(s->manifest->embedded_name, BW);
	assert_false(s->manifest->resolve);
	ml_selection_free(s);
}

static void test_require_hashes_refuses_the_windows_manifests(void **state)
{
	(void)state;
	box b;
	machine(&b, "windows", "x86_64", "572.83");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_select_opts o = ML_SELECT_OPTS_INIT;
	o.python_version = "3.12";
	o.require_hashes = true;
	ml_selection *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_not_equal(ml_select(&s, &b.m, &o, &err), 0);
	assert_null(s);
	assert_non_null(strstr(err.msg, "windows/requirements.txt"));
	assert_non_null(strstr(err.msg, "pins versions without hashes"));
}

static void test_an_os_without_a_set_of_its_own_gets_the_default_set(void **state)
{
	(void)state;
	box b;
	machine(&b, "darwin", "aarch64", "");
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	assert_reason(s, REQ, "platform", 0,
	              "darwin-aarch64 is not supported (manifest: linux-x86_64 linux-aarch64)");
	assert_string_equal(s->problem, REQ " fits these GPUs but not this platform");
	ml_selection_free(s);
}

static void test_aarch64_gpus_fit_nothing_the_package_index_builds_are_cpu_only(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "aarch64", "570.124.06");
	gpu(&b, "NVIDIA GH200 480GB", 9, 0);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, NULL);
	/* The platform is supported (there are aarch64 wheels), but torch
	 * from the package index has no CUDA code there. */
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" BW " gpu FAIL\n" BW " driver ok\n" BW
	                       " platform ok\n" BW " python ok\n");
	assert_reason(s, REQ, "gpu", 0,
	              "NVIDIA GH200 480GB (sm_90): torch 2.6.0 of this manifest is CPU-only on "
	              "linux-aarch64");
	assert_reason(s, BW, "gpu", 0, "torch 2.8.0 of this manifest is CPU-only");
	assert_reason(s, REQ, "platform", 0,
	              "linux-aarch64 is supported (manifest: linux-x86_64 linux-aarch64)");
	assert_non_null(strstr(s->problem, "torch builds for linux-aarch64 are CPU-only"));
	assert_non_null(strstr(s->problem, "NVIDIA GH200 480GB (sm_90)"));
	assert_non_null(strstr(s->remedy, "a CUDA build of torch for linux-aarch64"));
	assert_non_null(strstr(s->remedy, "--manifest " REQ " for a CPU-only environment"));
	ml_selection_free(s);
}

static void test_aarch64_without_a_gpu_gets_the_default_manifest_without_gpu_checks(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "aarch64", "");
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_true(s->gpu_checks_skipped);
	assert_verdicts(s, REQ " platform ok\n" REQ " python ok\n" REQ " choice info\n");
	assert_int_equal(s->n_warnings, 0);
	ml_selection_free(s);
}

static void test_forcing_a_cpu_only_build_on_a_gpu_warns_the_gpus_stay_unused(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "aarch64", "570.124.06");
	gpu(&b, "NVIDIA GH200 480GB", 9, 0);
	ml_selection *s = select_for(&b, "3.12", "requirements");
	assert_chosen(s, REQ);
	assert_true(any_warning(s, "CPU-only on linux-aarch64"));
	assert_true(any_warning(s, "the GPUs stay unused"));
	assert_false(any_warning(s, "no kernel image"));
	ml_selection_free(s);
}

static void test_python_313_is_not_supported_by_the_manifests(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "550.127.05");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	ml_selection *s = select_for(&b, "3.13", NULL);
	assert_chosen(s, NULL);
	assert_verdicts(s, REQ " gpu ok\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python FAIL\n" BW " gpu ok\n" BW " driver warn\n" BW
	                       " platform ok\n" BW " python FAIL\n");
	assert_reason(s, REQ, "python", 0, "Python 3.13 is not supported (manifest: 3.11 3.12)");
	assert_string_equal(s->problem, REQ " fits these GPUs but not this Python version");
	assert_non_null(strstr(s->remedy, "--python X.Y"));
	ml_selection_free(s);
}

static void test_python_313_without_a_gpu_fits_nothing_either(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "");
	ml_selection *s = select_for(&b, "3.13", NULL);
	assert_chosen(s, NULL);
	assert_verdicts(s, REQ " platform ok\n" REQ " python FAIL\n");
	assert_string_equal(s->problem, REQ " fits these GPUs but not this Python version");
	ml_selection_free(s);
}

static void test_forcing_a_manifest_that_cannot_run_warns_loudly(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "570.124.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_selection *s = select_for(&b, "3.12", "requirements");
	assert_chosen(s, REQ);
	assert_true(s->overridden);
	assert_verdicts(s, REQ " gpu FAIL\n" REQ " driver ok\n" REQ " platform ok\n" REQ
	                       " python ok\n" REQ " choice info\n");
	assert_reason(s, REQ, "choice", 0, "although it does not fit this machine");
	assert_true(any_warning(s, "torch 2.6.0+cu124 has no code for NVIDIA GeForce RTX 5090 "
	                           "(sm_120)"));
	assert_true(any_warning(s, "no kernel image is available for execution on the device"));
	ml_selection_free(s);
}

static void test_unknown_compute_capability_is_a_warning_not_a_failure(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "550.127.05");
	gpu(&b, "NVIDIA Graphics Device", -1, -1);
	ml_selection *s = select_for(&b, "3.12", NULL);
	assert_chosen(s, REQ);
	assert_reason(s, REQ, "gpu", 0, "compute capability unknown");
	assert_true(any_warning(s, "compute capability unknown"));
	ml_selection_free(s);
}

static void test_a_manifest_that_does_not_exist_is_an_error(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "");
	ml_select_opts o = ML_SELECT_OPTS_INIT;
	o.manifest = "no-such-manifest.txt";
	ml_selection *s = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_select(&s, &b.m, &o, &err), ML_ENOENT);
	assert_null(s);
	assert_non_null(strstr(err.msg, "no-such-manifest.txt"));
}

/* --- CUDA 13.2 builds: which driver rule applied --------------------------- */

/* torch 2.15.0's cp312 wheel: a CUDA 13.2 build in mlsetup's torch-build
 * table, so the manifest needs no header. */
#define TORCH_2_15_CP312 "6d8c86f4e33a9f12a58149bd9b0d64351632b8eb44479be8ff85e5389932dd79"

/* Writes a manifest pinning torch==2.15.0 (hash `sha`) under `header`;
 * returns its path (static buffer). */
static const char *torch_manifest(const char *header, const char *sha)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/mlsetup-test-select-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%storch==2.15.0 --hash=sha256:%s\n", header, sha);
	fclose(f);
	return path;
}

/* The plan of an RTX 3090 on Linux with driver `driver` for the torch 2.15.0
 * (CUDA 13.2) manifest, forced; *path is the manifest's name. */
static ml_selection *cuda_13_2_on(const char *driver, const char **path)
{
	box b;
	machine(&b, "linux", "x86_64", driver);
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	*path = torch_manifest("", TORCH_2_15_CP312);
	ml_selection *s = select_for(&b, "3.12", *path);
	unlink(*path);
	assert_string_equal(s->manifest->cuda, "13.2");
	return s;
}

static ml_verdict_kind driver_verdict(const ml_selection *s)
{
	for (size_t i = 0; i < s->n_reasons; i++)
		if (!strcmp(s->reasons[i].rule, "driver"))
			return s->reasons[i].verdict;
	fail_msg("no driver reason");
	return ML_RULE_INFO;
}

static void test_cuda_13_2_build_on_its_own_minimum_cites_table_3(void **state)
{
	(void)state;
	const char *p;
	ml_selection *s = cuda_13_2_on("595.45.04", &p);
	assert_int_equal(driver_verdict(s), ML_RULE_OK);
	assert_reason(s, p, "driver", 0,
	              "driver 595.45.04 >= 595.45.04, the minimum for CUDA 13.2 (toolkit "
	              "release notes, table 3)");
	ml_selection_free(s);
	s = cuda_13_2_on("595.71.05", &p);
	assert_int_equal(driver_verdict(s), ML_RULE_OK);
	assert_reason(s, p, "driver", 0,
	              "driver 595.71.05 >= 595.45.04, the minimum for CUDA 13.2 (toolkit "
	              "release notes, table 3)");
	ml_selection_free(s);
}

static void test_cuda_13_2_build_on_585_runs_under_minor_version_compatibility(void **state)
{
	(void)state;
	const char *p;
	ml_selection *s = cuda_13_2_on("585.05.10", &p);
	assert_int_equal(driver_verdict(s), ML_RULE_WARN);
	assert_reason(s, p, "driver", 0,
	              "driver 585.05.10 is below 595.45.04, the minimum for CUDA 13.2, but at "
	              "least 580.65.06, the CUDA 13.x minor-version compatibility floor: runs "
	              "under CUDA 13.x minor-version compatibility");
	assert_true(any_warning(s, "upgrade to 595.45.04 or newer for full support"));
	ml_selection_free(s);
}

static void test_cuda_13_2_build_on_575_fails_below_the_cuda_13_floor(void **state)
{
	(void)state;
	const char *p;
	ml_selection *s = cuda_13_2_on("575.51.03", &p);
	assert_int_equal(driver_verdict(s), ML_RULE_FAIL);
	assert_reason(s, p, "driver", 0,
	              "driver 575.51.03 is below 595.45.04, the minimum for CUDA 13.2 (toolkit "
	              "release notes, table 3), and below 580.65.06, the CUDA 13.x "
	              "minor-version compatibility floor");
	ml_selection_free(s);
}

static void test_cuda_13_2_build_on_550_never_calls_580_the_13_2_minimum(void **state)
{
	(void)state;
	const char *p;
	ml_selection *s = cuda_13_2_on("550.54.14", &p);
	assert_int_equal(driver_verdict(s), ML_RULE_FAIL);
	assert_reason(s, p, "driver", 0,
	              "driver 550.54.14 is below 595.45.04, the minimum for CUDA 13.2");
	assert_reason(s, p, "driver", 0, "and below 580.65.06, the CUDA 13.x minor-version");
	for (size_t i = 0; i < s->n_reasons; i++)
		assert_null(strstr(s->reasons[i].detail, "580.65.06, the minimum"));
	ml_selection_free(s);
}

/* A GPU that runs the build only through PTX: minor-version compatibility
 * does not JIT newer PTX, so the floor does not help, and the reason says
 * so. */
static void test_cuda_13_2_ptx_only_build_above_the_floor_still_fails(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "585.05.10");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	const char *p =
	        torch_manifest("# mlsetup: cuda = 13.2\n# mlsetup: torch_sass = none\n"
	                       "# mlsetup: torch_ptx = compute_80\n",
	                       "0000000000000000000000000000000000000000000000000000000000000000");
	ml_selection *s = select_for(&b, "3.12", p);
	unlink(p);
	assert_int_equal(driver_verdict(s), ML_RULE_FAIL);
	assert_reason(s, p, "driver", 0,
	              "driver 585.05.10 is below 595.45.04, the minimum for CUDA 13.2");
	assert_reason(s, p, "driver", 0,
	              "it meets 580.65.06, the CUDA 13.x minor-version compatibility floor, "
	              "but a GPU here runs this build only through PTX JIT");
	ml_selection_free(s);
}

/* A CUDA toolkit the driver table has no row for (an audited wheel of CUDA
 * 13.3): its minimum is a lower bound, and the reason says so rather than
 * calling it 13.3's. */
static void test_a_toolkit_without_a_row_gets_a_lower_bound_named_as_such(void **state)
{
	(void)state;
	box b;
	machine(&b, "linux", "x86_64", "590.44.01");
	gpu(&b, "NVIDIA GeForce RTX 3090", 8, 6);
	const char *p = torch_manifest("", TORCH_2_15_CP312);
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_manifest_open(&mf, p, &err), 0);
	unlink(p);
	ml_torch_build tb = {.version = "2.16.0", .platform = "linux-x86_64", .cuda = "13.3"};
	tb.sass[0] = (ml_cuda_arch){.major = 8, .minor = 6};
	tb.n_sass = 1;
	assert_int_equal(ml_manifest_set_torch_build(mf, &tb, &err), 0);
	ml_selection *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->manifest = mf;
	ml_select_opts o = ML_SELECT_OPTS_INIT;
	o.python_version = "3.12";
	bool fits = false;
	assert_int_equal(ml_select_judge(s, &b.m, &o, "judged", &fits, &err), 0);
	assert_true(fits);
	assert_int_equal(driver_verdict(s), ML_RULE_WARN);
	assert_reason(s, p, "driver", 0,
	              "driver 590.44.01 is below 595.71.05, the minimum for CUDA 13.2.2, a lower "
	              "bound for CUDA 13.3 (mlsetup's driver table has no row for it), but at "
	              "least 580.65.06");
	ml_selection_free(s);
}

/* The NUL-separated candidates of ml_python_candidates(), as one string
 * with '|' between them, for these registry entries. */
static char *candidates_reg(const char *path, bool windows, const ml_python_reg *reg, size_t n,
                            const char *lad, const char *pf)
{
	ml_buf b = ML_BUF_INIT;
	assert_int_equal(0, ml_python_candidates(&b, path, windows, reg, n, lad, pf));
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] == '\0')
			b.data[i] = '|';
	return ml_buf_detach(&b);
}

/* The same with nothing in the registry. */
static char *candidates(const char *path, bool windows, const char *lad, const char *pf)
{
	return candidates_reg(path, windows, NULL, 0, lad, pf);
}

static void test_system_pythons_are_looked_for_on_path_then_in_the_usual_places(void **state)
{
	(void)state;
	char *c = candidates("/opt/py/bin/:relative:::/usr/bin", false, NULL, NULL);
	/* PATH first, newest minor first, trailing slash dropped; relative
	 * entries never; then /usr/local/bin and /usr/bin */
	assert_non_null(strstr(c, "/opt/py/bin/python3.19|/opt/py/bin/python3.18|"));
	assert_non_null(
	        strstr(c, "/opt/py/bin/python3.8|/opt/py/bin/python3|/usr/bin/python3.19|"));
	assert_null(strstr(c, "relative"));
	assert_non_null(strstr(c, "|/usr/local/bin/python3|/usr/bin/python3.19|"));
	size_t l = strlen(c);
	assert_true(l > 18 && !strcmp(c + l - 18, "|/usr/bin/python3|"));
	assert_null(strstr(c, ".exe"));
	free(c);
}

static void test_windows_pythons_are_python_exe_on_path_then_in_python_org_folders(void **state)
{
	(void)state;
	char *c = candidates("C:\\Py312\\;.;scripts;\\\\srv\\py;Z:/tools;/unix/style", true,
	                     "C:\\Users\\u\\AppData\\Local", "C:\\Program Files");
	const char *want = "C:\\Py312\\python.exe|C:\\Py312\\python3.exe|"
	                   "\\\\srv\\py\\python.exe|\\\\srv\\py\\python3.exe|"
	                   "Z:/tools\\python.exe|Z:/tools\\python3.exe|"
	                   "/unix/style\\python.exe|/unix/style\\python3.exe|"
	                   "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python319\\python.exe|";
	assert_memory_equal(want, c, strlen(want));
	assert_non_null(strstr(c, "|C:\\Program Files\\Python38\\python.exe|"));
	assert_null(strstr(c, "scripts"));   /* relative: a planted python.exe */
	assert_null(strstr(c, "python3.1")); /* no POSIX names */
	free(c);
	/* no roots: PATH alone */
	c = candidates("D:\\p", true, NULL, NULL);
	assert_string_equal("D:\\p\\python.exe|D:\\p\\python3.exe|", c);
	free(c);
}

static void
test_windows_registry_pythons_follow_path_in_pep514_order_without_pylauncher(void **state)
{
	(void)state;
	/* as ml_python_find_system() reads them: HKCU, then HKLM 64-bit,
	 * then HKLM 32-bit */
	const ml_python_reg reg[] = {
	        {.company = "TestCo",
	         .tag = "3.12",
	         .executable_path = "C:\\Users\\u\\py\\bin\\python.exe",
	         .install_path = "C:\\Users\\u\\py"},
	        /* PEP 514: PyLauncher is not an interpreter (keys are
	         * case-insensitive) */
	        {.company = "PyLauncher", .tag = "3.12", .install_path = "C:\\Windows\\launch"},
	        {.company = "pylauncher", .tag = "x", .executable_path = "C:\\Windows\\py.exe"},
	        /* no ExecutablePath: InstallPath's default value + python.exe */
	        {.company = "PythonCore", .tag = "3.11", .install_path = "D:\\Py311\\"},
	        {.company = "PythonCore",
	         .tag = "3.10",
	         .executable_path = "",
	         .install_path = "\\\\srv\\Py310"},
	        /* relative or drive-relative: never (a planted python.exe);
	         * a relative ExecutablePath is not replaced by InstallPath */
	        {.company = "Bad",
	         .tag = "1",
	         .executable_path = "python.exe",
	         .install_path = "E:\\Bad1"},
	        {.company = "Bad", .tag = "2", .install_path = "Bad2"},
	        {.company = "Bad", .tag = "3", .executable_path = "\\Bad3\\python.exe"},
	        {.company = "Bad", .tag = "4", .executable_path = "/Bad4/python.exe"},
	        {.company = "Bad", .tag = "5", .install_path = "E:Bad5"},
	        {.company = "Bad", .tag = "6"},
	        {.company = "PythonCore",
	         .tag = "3.9-32",
	         .executable_path = "C:\\Program Files (x86)\\Python39-32\\python.exe"},
	};
	char *c = candidates_reg("C:\\Py313", true, reg, sizeof(reg) / sizeof(reg[0]),
	                         "C:\\Users\\u\\AppData\\Local", NULL);
	const char *want = "C:\\Py313\\python.exe|C:\\Py313\\python3.exe|"
	                   "C:\\Users\\u\\py\\bin\\python.exe|"
	                   "D:\\Py311\\python.exe|"
	                   "\\\\srv\\Py310\\python.exe|"
	                   "C:\\Program Files (x86)\\Python39-32\\python.exe|"
	                   "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python319\\python.exe|";
	assert_memory_equal(want, c, strlen(want));
	assert_null(strstr(c, "Windows"));
	assert_null(strstr(c, "Bad"));
	free(c);
	/* POSIX has no registry */
	c = candidates_reg("/opt/bin", false, reg, sizeof(reg) / sizeof(reg[0]), NULL, NULL);
	assert_null(strstr(c, "python.exe"));
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_no_gpu_selects_the_default_manifest_and_skips_gpu_checks),
	        cmocka_unit_test(test_rtx3090_on_r550_gets_the_reproducible_stack),
	        cmocka_unit_test(test_h100_gets_the_reproducible_stack),
	        cmocka_unit_test(test_rtx5090_on_r550_fits_nothing_and_names_driver_570),
	        cmocka_unit_test(test_rtx5090_on_r570_gets_the_blackwell_stack),
	        cmocka_unit_test(test_mixed_ampere_and_blackwell_need_the_build_both_run),
	        cmocka_unit_test(test_kepler_fits_nothing_and_says_the_generation_was_dropped),
	        cmocka_unit_test(test_driver_520_is_below_the_cuda12_floor_and_fits_nothing),
	        cmocka_unit_test(
	                test_driver_535_runs_under_minor_version_compatibility_with_a_warning),
	        cmocka_unit_test(test_blackwell_below_r570_gets_no_minor_version_grace),
	        cmocka_unit_test(test_windows_rtx5090_on_572_gets_the_windows_blackwell_manifest),
	        cmocka_unit_test(test_windows_rtx3090_on_551_gets_the_windows_cu124_manifest),
	        cmocka_unit_test(
	                test_windows_driver_below_the_cuda12_floor_fits_nothing_with_windows_advice),
	        cmocka_unit_test(test_windows_without_a_gpu_gets_the_windows_default),
	        cmocka_unit_test(test_a_manifest_named_on_windows_is_the_windows_one),
	        cmocka_unit_test(test_require_hashes_refuses_the_windows_manifests),
	        cmocka_unit_test(test_an_os_without_a_set_of_its_own_gets_the_default_set),
	        cmocka_unit_test(
	                test_aarch64_gpus_fit_nothing_the_package_index_builds_are_cpu_only),
	        cmocka_unit_test(
	                test_aarch64_without_a_gpu_gets_the_default_manifest_without_gpu_checks),
	        cmocka_unit_test(test_forcing_a_cpu_only_build_on_a_gpu_warns_the_gpus_stay_unused),
	        cmocka_unit_test(test_python_313_is_not_supported_by_the_manifests),
	        cmocka_unit_test(test_python_313_without_a_gpu_fits_nothing_either),
	        cmocka_unit_test(test_forcing_a_manifest_that_cannot_run_warns_loudly),
	        cmocka_unit_test(test_unknown_compute_capability_is_a_warning_not_a_failure),
	        cmocka_unit_test(test_a_manifest_that_does_not_exist_is_an_error),
	        cmocka_unit_test(test_cuda_13_2_build_on_its_own_minimum_cites_table_3),
	        cmocka_unit_test(
	                test_cuda_13_2_build_on_585_runs_under_minor_version_compatibility),
	        cmocka_unit_test(test_cuda_13_2_build_on_575_fails_below_the_cuda_13_floor),
	        cmocka_unit_test(test_cuda_13_2_build_on_550_never_calls_580_the_13_2_minimum),
	        cmocka_unit_test(test_cuda_13_2_ptx_only_build_above_the_floor_still_fails),
	        cmocka_unit_test(test_a_toolkit_without_a_row_gets_a_lower_bound_named_as_such),
	        cmocka_unit_test(
	                test_system_pythons_are_looked_for_on_path_then_in_the_usual_places),
	        cmocka_unit_test(
	                test_windows_pythons_are_python_exe_on_path_then_in_python_org_folders),
	        cmocka_unit_test(
	                test_windows_registry_pythons_follow_path_in_pep514_order_without_pylauncher),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
