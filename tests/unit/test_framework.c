/*
 * test_framework.c - specs for the framework-level smoke test
 * (src/verify/framework.c, the embedded torch_smoke.py) and the diagnosis
 * of its results (src/verify/diagnose.c). The script runs under the
 * CPython the env tests use (tests/fixtures/find_python.sh), or python3
 * when there is none, against the stub torch in tests/fixtures/stub_torch,
 * whose behaviour MLSETUP_STUB_TORCH selects (healthy, no_kernel_image,
 * cpu_only, cuda_unavailable, driver_too_old, oom, wrong_results,
 * import_error).
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include "win_skip.h"
#include <cjson/cJSON.h>

#include "env_testutil.h"
#include "mlsetup/verify.h"
#include "../../src/verify/internal.h"

#define EMPTY "tests/fixtures/sysroot/empty"
/* On Windows (make check-windows, under wine) there is no Python for the
 * stub torch and no /bin/sh for the scripted interpreters. */
#define NO_PYTHON "the stub torch needs a Python 3 interpreter that Windows can run"
#define NO_SH     "the interpreter is a #!/bin/sh script, which Windows cannot run"

static char stub_path[PATH_MAX];
static char PYTHON[4096]; /* the interpreter that runs the stub torch */

static int setup(void **state)
{
	(void)state;
	/* The stub needs only Python 3: any CPython >= 3.11 found, else python3. */
	if (!find_test_python(PYTHON, sizeof PYTHON)) {
		printf("# %s: running the stub torch with python3\n", PYTHON);
		snprintf(PYTHON, sizeof PYTHON, "python3");
	}
	if (!realpath("tests/fixtures/stub_torch", stub_path))
		return -1;
	unsetenv("CUDA_VISIBLE_DEVICES");
	return 0;
}

/* Runs the framework smoke test on the stub torch in `mode` (NULL: no stub
 * on the path at all), with small sizes. */
static ml_framework_result run_mode(const char *mode)
{
	if (mode) {
		setenv("PYTHONPATH", stub_path, 1);
		setenv("MLSETUP_STUB_TORCH", mode, 1);
	} else {
		setenv("PYTHONPATH", "/nonexistent", 1);
	}
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.matmul_size = 16;
	o.alloc_mib = 1;
	o.timeout_s = 120;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	int rc = ml_smoke_framework(&r, PYTHON, &o, &err);
	unsetenv("PYTHONPATH");
	unsetenv("MLSETUP_STUB_TORCH");
	unsetenv("MLSETUP_STUB_TORCH_DEVICES");
	if (rc != 0)
		fail_msg("ml_smoke_framework: %s", err.msg);
	return r;
}

static const ml_fw_check *fw_check(const ml_fw_check *c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	}
	fail_msg("no check %s", name);
	return NULL;
}

/* A detected machine with one GPU (name, cc) on driver `driver` ("" none). */
typedef struct fake_machine {
	ml_machine m;
	ml_gpu gpu;
} fake_machine;

static void machine_with(fake_machine *fm, const char *name, int major, int minor,
                         const char *driver)
{
	memset(fm, 0, sizeof(*fm));
	ml_strlcpy(fm->m.os.name, "linux", sizeof(fm->m.os.name));
	ml_strlcpy(fm->m.driver.version, driver, sizeof(fm->m.driver.version));
	fm->gpu.index = 0;
	ml_strlcpy(fm->gpu.name, name, sizeof(fm->gpu.name));
	fm->gpu.cc_major = major;
	fm->gpu.cc_minor = minor;
	ml_strlcpy(fm->gpu.architecture, ml_cc_architecture(major, minor),
	           sizeof(fm->gpu.architecture));
	fm->m.gpus = &fm->gpu;
	fm->m.n_gpus = 1;
}

static ml_verdict *diagnose(const ml_framework_result *f, const ml_machine *m, const char *manifest)
{
	ml_diagnose_opts o = ML_DIAGNOSE_OPTS_INIT;
	o.framework = f;
	o.machine = m;
	o.manifest = manifest;
	o.root = EMPTY;
	ml_verdict *v = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_diagnose(&v, &o, &err), 0);
	assert_non_null(v);
	return v;
}

static const ml_check *find(const ml_check *k, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(k[i].name, name) == 0)
			return &k[i];
	}
	fail_msg("no verdict check %s", name);
	return NULL;
}

static void test_healthy_torch_passes_every_check(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("healthy");
	assert_int_equal(r.cls, ML_FW_OK);
	assert_int_equal(r.exit_status, 0);
	assert_true(strncmp(r.python_version, "3.", 2) == 0);
	assert_string_equal(r.torch_version, "2.6.0+cu124");
	assert_string_equal(r.torch_cuda, "12.4");
	assert_non_null(strstr(r.torch_path, "stub_torch/torch/__init__.py"));
	assert_true(r.cuda_available);
	assert_int_equal(r.device_count, 1);
	assert_int_equal(r.n_arch_list, 7);
	assert_string_equal(r.arch_list[6], "sm_90");
	assert_false(r.gpu_checks_skipped);
	assert_int_equal(fw_check(r.checks, r.n_checks, "import")->status, ML_CHECK_PASS);
	assert_int_equal(fw_check(r.checks, r.n_checks, "cpu_matmul")->status, ML_CHECK_PASS);
	assert_int_equal(r.n_gpus, 1);
	const ml_fw_gpu *g = &r.gpus[0];
	assert_string_equal(g->name, "NVIDIA GeForce RTX 3090");
	assert_int_equal(g->cc_major, 8);
	assert_int_equal(g->cc_minor, 6);
	assert_true(g->arch_ok);
	assert_non_null(strstr(g->arch_why, "SASS sm_86"));
	assert_int_equal(g->n_checks, 5);
	const char *names[] = {"fp32_matmul", "fp16_matmul", "bf16_matmul", "elementwise", "alloc"};
	for (size_t i = 0; i < 5; i++) {
		const ml_fw_check *c = fw_check(g->checks, g->n_checks, names[i]);
		assert_int_equal(c->status, ML_CHECK_PASS);
		assert_true(c->max_abs_error >= 0 && c->max_abs_error <= c->tolerance);
	}
	assert_true(fw_check(g->checks, g->n_checks, "fp32_matmul")->gflops > 0);
	/* fp16 rounds its inputs, and the CPU reference uses the same ones. */
	assert_true(fw_check(g->checks, g->n_checks, "fp16_matmul")->max_abs_error > 0);

	fake_machine fm;
	machine_with(&fm, "NVIDIA GeForce RTX 3090", 8, 6, "550.54.14");
	ml_verdict *v = diagnose(&r, &fm.m, NULL);
	assert_int_equal(v->status, ML_CHECK_PASS);
	assert_int_equal(ml_verdict_exit_code(v), 0);
	assert_int_equal(v->n_gpus, 1);
	assert_int_equal(find(v->checks, v->n_checks, "torch_cuda")->status, ML_CHECK_PASS);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_no_kernel_image_on_sm120_names_the_blackwell_manifest(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("no_kernel_image");
	assert_int_equal(r.cls, ML_FW_NO_KERNEL_IMAGE);
	assert_non_null(strstr(r.detail, "no kernel image is available"));
	const ml_fw_gpu *g = &r.gpus[0];
	assert_int_equal(g->cc_major, 12);
	assert_false(g->arch_ok);
	assert_non_null(strstr(g->arch_why, "sm_120"));
	assert_non_null(strstr(g->warning, "not compatible with the current PyTorch installation"));
	const ml_fw_check *c = fw_check(g->checks, g->n_checks, "fp32_matmul");
	assert_int_equal(c->status, ML_CHECK_FAIL);
	assert_int_equal(c->cls, ML_FW_NO_KERNEL_IMAGE);
	assert_non_null(strstr(c->detail, "RuntimeError: CUDA error: no kernel image"));

	fake_machine fm;
	machine_with(&fm, "NVIDIA GeForce RTX 5090", 12, 0, "570.124.04");
	ml_verdict *v = diagnose(&r, &fm.m, "requirements.txt");
	assert_int_equal(v->status, ML_CHECK_FAIL);
	assert_int_equal(v->cause, ML_CAUSE_NO_KERNEL_IMAGE);
	assert_int_equal(ml_verdict_exit_code(v), 5);
	const ml_check *k = find(v->gpus[0].checks, v->gpus[0].n_checks, "torch_arch");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_NO_KERNEL_IMAGE);
	assert_non_null(strstr(k->remedy, "Blackwell, sm_120"));
	assert_non_null(strstr(k->remedy, "torch 2.6.0+cu124 (CUDA 12.4)"));
	assert_non_null(strstr(k->remedy, "mlsetup install --manifest requirements_blackwell.txt"));
	assert_non_null(strstr(k->remedy, "driver 570.26 or newer"));
	k = find(v->gpus[0].checks, v->gpus[0].n_checks, "fp32_matmul");
	assert_non_null(strstr(k->remedy, "requirements_blackwell.txt"));
	assert_non_null(strstr(v->summary, "GPU 0 (NVIDIA GeForce RTX 5090) torch_arch failed"));

	cJSON *j = ml_verdict_to_json(v);
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(strstr(text, "\"cause\":\"no_kernel_image\""));
	assert_non_null(strstr(text, "\"exit_code\":5"));
	assert_non_null(strstr(text, "\"cc\":\"12.0\""));
	free(text);
	cJSON_Delete(j);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_gpu_no_manifest_covers_gets_a_general_remedy(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	/* A Kepler GPU (3.7): older than every shipped manifest. */
	setenv("MLSETUP_STUB_TORCH_DEVICES", "Tesla K80=3.7", 1);
	ml_framework_result r = run_mode("healthy");
	assert_int_equal(r.cls, ML_FW_NO_KERNEL_IMAGE);
	fake_machine fm;
	machine_with(&fm, "Tesla K80", 3, 7, "470.256.02");
	ml_verdict *v = diagnose(&r, &fm.m, NULL);
	const ml_check *k = find(v->gpus[0].checks, v->gpus[0].n_checks, "torch_arch");
	assert_non_null(strstr(k->remedy, "no manifest shipped with mlsetup covers it"));
	assert_non_null(strstr(k->remedy, "sm_37"));
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_each_gpu_is_checked_against_the_arch_list(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	setenv("MLSETUP_STUB_TORCH_DEVICES",
	       "NVIDIA GeForce RTX 3090=8.6;NVIDIA GeForce RTX 5090=12.0;Tesla T4=7.5", 1);
	ml_framework_result r = run_mode("healthy");
	assert_int_equal(r.n_gpus, 3);
	assert_true(r.gpus[0].arch_ok);
	assert_false(r.gpus[1].arch_ok);
	assert_true(r.gpus[2].arch_ok);
	assert_int_equal(r.cls, ML_FW_NO_KERNEL_IMAGE);
	assert_non_null(strstr(r.detail, "GPU 1 (NVIDIA GeForce RTX 5090)"));
	/* bf16 needs 8.0: skipped on the T4, not failed. */
	const ml_fw_check *bf16 = fw_check(r.gpus[2].checks, r.gpus[2].n_checks, "bf16_matmul");
	assert_int_equal(bf16->status, ML_CHECK_SKIP);
	assert_non_null(strstr(bf16->detail, "8.0"));
	assert_int_equal(fw_check(r.gpus[0].checks, r.gpus[0].n_checks, "fp32_matmul")->status,
	                 ML_CHECK_PASS);

	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->n_gpus, 3);
	assert_int_equal(find(v->gpus[0].checks, v->gpus[0].n_checks, "torch_arch")->status,
	                 ML_CHECK_PASS);
	assert_int_equal(find(v->gpus[1].checks, v->gpus[1].n_checks, "torch_arch")->status,
	                 ML_CHECK_FAIL);
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_cpu_only_build_is_fine_without_a_gpu_and_fails_with_one(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("cpu_only");
	assert_int_equal(r.cls, ML_FW_CPU_ONLY_BUILD);
	assert_string_equal(r.torch_cuda, "");
	assert_true(r.gpu_checks_skipped);
	assert_non_null(strstr(r.skip_reason, "CPU-only build"));
	assert_non_null(strstr(r.cuda_error, "Torch not compiled with CUDA enabled"));
	assert_int_equal(fw_check(r.checks, r.n_checks, "cpu_matmul")->status, ML_CHECK_PASS);
	assert_int_equal(r.n_gpus, 0);

	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->status, ML_CHECK_PASS);
	assert_int_equal(find(v->checks, v->n_checks, "torch_cuda")->status, ML_CHECK_SKIP);
	assert_int_equal(ml_verdict_exit_code(v), 0);
	ml_verdict_free(v);

	fake_machine fm;
	machine_with(&fm, "NVIDIA GeForce RTX 3090", 8, 6, "550.54.14");
	v = diagnose(&r, &fm.m, NULL);
	const ml_check *k = find(v->checks, v->n_checks, "torch_cuda");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_CPU_ONLY_BUILD);
	assert_non_null(strstr(k->remedy, "install a CUDA build"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);

	/* --require-gpu on a machine without one. */
	ml_diagnose_opts o = ML_DIAGNOSE_OPTS_INIT;
	o.framework = &r;
	o.require_gpu = true;
	o.root = EMPTY;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_diagnose(&v, &o, &err), 0);
	assert_int_equal(v->status, ML_CHECK_FAIL);
	assert_non_null(strstr(find(v->checks, v->n_checks, "gpu_required")->detail,
	                       "no NVIDIA GPU was found"));
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_hidden_gpus_name_cuda_visible_devices(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("cuda_unavailable");
	assert_int_equal(r.cls, ML_FW_CUDA_UNAVAILABLE);
	assert_non_null(strstr(r.detail, "No CUDA GPUs are available"));
	fake_machine fm;
	machine_with(&fm, "NVIDIA GeForce RTX 3090", 8, 6, "550.54.14");
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	ml_verdict *v = diagnose(&r, &fm.m, NULL);
	unsetenv("CUDA_VISIBLE_DEVICES");
	const ml_check *k = find(v->checks, v->n_checks, "torch_cuda");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_GPU_NOT_VISIBLE);
	assert_non_null(strstr(k->detail, "CUDA_VISIBLE_DEVICES=''"));
	assert_non_null(strstr(k->remedy, "unset CUDA_VISIBLE_DEVICES"));
	/* The detected GPU is listed, with why CUDA cannot see it. */
	assert_int_equal(v->n_gpus, 1);
	assert_string_equal(v->gpus[0].checks[0].name, "gpu_visible");
	ml_verdict_free(v);

	/* A container started without the GPU runtime. */
	fm.m.os.container = true;
	ml_strlcpy(fm.m.os.container_kind, "docker", sizeof(fm.m.os.container_kind));
	v = diagnose(&r, &fm.m, NULL);
	k = find(v->checks, v->n_checks, "torch_cuda");
	assert_non_null(strstr(k->detail, "docker container without the GPU runtime"));
	assert_non_null(strstr(k->remedy, "docker run --gpus all"));
	ml_verdict_free(v);

	/* WSL without the driver's libraries. */
	fm.m.os.container = false;
	fm.m.os.wsl = true;
	v = diagnose(&r, &fm.m, NULL);
	k = find(v->checks, v->n_checks, "torch_cuda");
	assert_non_null(strstr(k->detail, "/usr/lib/wsl/lib/libcuda.so.1 is missing"));
	assert_non_null(strstr(k->remedy, "wsl --shutdown"));
	ml_verdict_free(v);

	/* A GPU on the PCI bus, no driver. */
	fm.m.os.wsl = false;
	fm.m.driver.version[0] = '\0';
	v = diagnose(&r, &fm.m, NULL);
	k = find(v->checks, v->n_checks, "torch_cuda");
	assert_non_null(strstr(k->detail, "no NVIDIA driver is loaded"));
	assert_non_null(strstr(k->remedy, "install driver 550.54.14 or newer"));
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_driver_too_old_names_the_minimum(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("driver_too_old");
	assert_int_equal(r.cls, ML_FW_DRIVER_TOO_OLD);
	assert_non_null(strstr(r.cuda_error, "The NVIDIA driver on your system is too old"));
	fake_machine fm;
	machine_with(&fm, "NVIDIA GeForce RTX 3090", 8, 6, "470.256.02");
	ml_verdict *v = diagnose(&r, &fm.m, NULL);
	const ml_check *k = find(v->checks, v->n_checks, "torch_cuda");
	assert_int_equal(k->cause, ML_CAUSE_DRIVER_TOO_OLD);
	assert_non_null(strstr(k->remedy, "550.54.14 or newer (torch is built with CUDA 12.4)"));
	assert_non_null(strstr(k->remedy, "this machine has 470.256.02"));
	assert_int_equal(ml_verdict_exit_code(v), 6);
	ml_verdict_free(v);

	/* The installed manifest's minimum wins. */
	v = diagnose(&r, &fm.m, "requirements_blackwell.txt");
	k = find(v->checks, v->n_checks, "torch_cuda");
	assert_non_null(
	        strstr(k->remedy, "570.26 or newer (the minimum of requirements_blackwell.txt)"));
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_out_of_memory_is_classified(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("oom");
	assert_int_equal(r.cls, ML_FW_OOM);
	const ml_fw_check *c = fw_check(r.gpus[0].checks, r.gpus[0].n_checks, "alloc");
	assert_int_equal(c->status, ML_CHECK_FAIL);
	assert_int_equal(c->cls, ML_FW_OOM);
	assert_non_null(strstr(c->detail, "OutOfMemoryError: CUDA out of memory"));
	assert_int_equal(fw_check(r.gpus[0].checks, r.gpus[0].n_checks, "fp32_matmul")->status,
	                 ML_CHECK_PASS);
	ml_verdict *v = diagnose(&r, NULL, NULL);
	const ml_check *k = find(v->gpus[0].checks, v->gpus[0].n_checks, "alloc");
	assert_int_equal(k->cause, ML_CAUSE_OOM);
	assert_non_null(strstr(k->remedy, "nvidia-smi"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_wrong_results_are_caught_against_the_cpu(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("wrong_results");
	assert_int_equal(r.cls, ML_FW_WRONG_RESULTS);
	const ml_fw_check *c = fw_check(r.gpus[0].checks, r.gpus[0].n_checks, "fp32_matmul");
	assert_int_equal(c->status, ML_CHECK_FAIL);
	assert_int_equal(c->cls, ML_FW_WRONG_RESULTS);
	assert_true(c->max_abs_error > c->tolerance);
	assert_non_null(strstr(c->detail, "wrong results: max abs error"));
	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->cause, ML_CAUSE_WRONG_RESULTS);
	const ml_check *k = find(v->gpus[0].checks, v->gpus[0].n_checks, "fp32_matmul");
	assert_non_null(strstr(k->remedy, "Xid"));
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_import_errors_are_classified(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("import_error");
	assert_int_equal(r.cls, ML_FW_IMPORT_ERROR);
	assert_non_null(strstr(r.detail, "ImportError: libcudnn.so.9"));
	assert_true(r.gpu_checks_skipped);
	ml_verdict *v = diagnose(&r, NULL, NULL);
	const ml_check *k = find(v->checks, v->n_checks, "torch_import");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_IMPORT_ERROR);
	assert_non_null(strstr(k->remedy, "reinstall the environment"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_framework_result_release(&r);

	r = run_mode(NULL); /* no torch at all */
	assert_int_equal(r.cls, ML_FW_IMPORT_ERROR);
	assert_non_null(strstr(r.detail, "ModuleNotFoundError: No module named 'torch'"));
	ml_framework_result_release(&r);
}

static void test_missing_interpreter_is_an_error(void **state)
{
	(void)state;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, "/nonexistent/bin/python", NULL, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/bin/python"));
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.matmul_size = 1;
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), ML_EUSAGE);
}

static void test_interpreter_without_a_result_is_other_with_its_output(void **state)
{
	(void)state;
	ML_LINUX_ONLY("runs /bin/false as the interpreter");
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, "/bin/false", NULL, &err), 0);
	assert_int_equal(r.cls, ML_FW_OTHER);
	assert_int_equal(r.exit_status, 1);
	assert_non_null(r.output);
	assert_non_null(strstr(r.detail, "exited with status 1 before the smoke script reported"));
	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->status, ML_CHECK_FAIL);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

static void test_hanging_interpreter_is_killed_after_the_timeout(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_SH);
	char dir[] = "/tmp/mlsetup-fw.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/python", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nexec sleep 30\n", f);
	fclose(f);
	chmod(path, 0755);
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.timeout_s = 1;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, &o, &err), 0);
	assert_int_equal(r.cls, ML_FW_OTHER);
	assert_int_equal(r.exit_status, -1);
	assert_non_null(strstr(r.detail, "did not finish within 1 s"));
	ml_framework_result_release(&r);
	unlink(path);
	rmdir(dir);
}

/* What an on_step callback heard: "begin NAME" / "end STATUS NAME". */
struct heard {
	char lines[32][96];
	size_t n;
	const char *touch; /* a file created when a step begins; NULL: none */
};

static void hear(const ml_verify_step *s, void *data)
{
	struct heard *h = data;
	assert_true(s->seconds >= 0);
	if (h->n < 32)
		snprintf(h->lines[h->n++], sizeof(h->lines[0]), "%s %s%s%s",
		         s->done ? "end" : "begin", s->done ? ml_check_status_name(s->status) : "",
		         s->done ? " " : "", s->name);
	if (!s->done && h->touch) {
		FILE *f = fopen(h->touch, "w");
		if (f)
			fclose(f);
	}
}

static void test_steps_are_reported_in_order_with_their_outcome(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_SH);
	struct heard h = {{{0}}, 0, NULL};
	setenv("PYTHONPATH", stub_path, 1);
	setenv("MLSETUP_STUB_TORCH", "healthy", 1);
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.matmul_size = 8;
	o.alloc_mib = 1;
	o.on_step = hear;
	o.step_data = &h;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), 0);
	const char *names[] = {"importing torch",      "CPU matmul",
	                       "checking CUDA",        "fp32 matmul on GPU 0",
	                       "fp16 matmul on GPU 0", "bf16 matmul on GPU 0",
	                       "elementwise on GPU 0", "allocation on GPU 0"};
	assert_int_equal(h.n, 16);
	for (size_t i = 0; i < 8; i++) {
		char begin[96], end[96];
		snprintf(begin, sizeof(begin), "begin %s", names[i]);
		snprintf(end, sizeof(end), "end pass %s", names[i]);
		assert_string_equal(h.lines[2 * i], begin);
		assert_string_equal(h.lines[2 * i + 1], end);
	}
	ml_framework_result_release(&r);

	/* A GPU without bf16 skips that step; a CPU-only build stops after
	 * "checking CUDA", which it skips. */
	h.n = 0;
	setenv("MLSETUP_STUB_TORCH_DEVICES", "Tesla T4=7.5", 1);
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), 0);
	assert_string_equal(h.lines[11], "end skip bf16 matmul on GPU 0");
	ml_framework_result_release(&r);
	unsetenv("MLSETUP_STUB_TORCH_DEVICES");
	h.n = 0;
	setenv("MLSETUP_STUB_TORCH", "cpu_only", 1);
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), 0);
	assert_int_equal(h.n, 6);
	assert_string_equal(h.lines[5], "end skip checking CUDA");
	ml_framework_result_release(&r);
	unsetenv("PYTHONPATH");
	unsetenv("MLSETUP_STUB_TORCH");
}

/* Writes an executable shell script standing in for python into dir. */
static void fake_python(char *path, size_t sz, const char *dir, const char *body)
{
	snprintf(path, sz, "%s/python", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s", body);
	fclose(f);
	chmod(path, 0755);
}

static void test_a_step_arrives_while_the_script_still_runs(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_SH);
	/* The script waits, after beginning its step, until the callback has
	 * heard that step (it creates `seen`), and ends the step only then: if
	 * steps came only after the script exited, the step would end failed. */
	char dir[] = "/tmp/mlsetup-fw.XXXXXX", path[64], seen[64], body[512];
	assert_non_null(mkdtemp(dir));
	snprintf(seen, sizeof(seen), "%s/seen", dir);
	snprintf(body, sizeof(body),
	         "echo 'MLSETUP-TORCH-SMOKE-STEP: begin waiting for mlsetup'\n"
	         "i=0; while [ ! -f %s ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
	         "[ -f %s ] && echo 'MLSETUP-TORCH-SMOKE-STEP: end pass waiting for mlsetup'\n"
	         "exit 0\n",
	         seen, seen);
	fake_python(path, sizeof(path), dir, body);
	struct heard h = {{{0}}, 0, seen};
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.on_step = hear;
	o.step_data = &h;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, &o, &err), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.lines[0], "begin waiting for mlsetup");
	assert_string_equal(h.lines[1], "end pass waiting for mlsetup");
	ml_framework_result_release(&r);
	unlink(seen);
	unlink(path);
	rmdir(dir);
}

static void test_a_step_the_script_never_ended_fails_and_is_named(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_SH);
	char dir[] = "/tmp/mlsetup-fw.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	fake_python(path, sizeof(path), dir,
	            "echo 'MLSETUP-TORCH-SMOKE-STEP: begin fp16 matmul on GPU 0'\n"
	            "kill -SEGV $$\n");
	struct heard h = {{{0}}, 0, NULL};
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.on_step = hear;
	o.step_data = &h;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, &o, &err), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.lines[1], "end fail fp16 matmul on GPU 0");
	assert_int_equal(r.exit_status, -1);
	assert_non_null(strstr(r.detail, "killed by a signal"));
	assert_non_null(strstr(r.detail, "(in 'fp16 matmul on GPU 0')"));
	ml_framework_result_release(&r);
	unlink(path);
	rmdir(dir);
}

/* The answer for module in r->imports: "ok", the error text, or NULL
 * when there is none. */
static const char *import_answer(const ml_framework_result *r, const char *module)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(r->imports, module);
	if (!a)
		return NULL;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "ok")))
		return "ok";
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "error"));
}

static void test_imports_after_the_checks_are_answered_one_by_one(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	setenv("PYTHONPATH", stub_path, 1);
	setenv("MLSETUP_STUB_TORCH", "healthy", 1);
	/* "json" is claimed by another interpreter already: not imported here */
	char claims[] = "/tmp/mlsetup-claims.XXXXXX", taken[64];
	assert_non_null(mkdtemp(claims));
	snprintf(taken, sizeof(taken), "%s/json", claims);
	FILE *f = fopen(taken, "w");
	assert_non_null(f);
	fclose(f);
	const char *mods[] = {"torch", "no_such_module_here", "json", "csv"};
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.matmul_size = 8;
	o.alloc_mib = 1;
	o.imports = mods;
	o.n_imports = 4;
	o.import_claims = claims;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), 0);
	assert_int_equal(r.cls, ML_FW_OK); /* the checks' result is untouched */
	assert_string_equal(import_answer(&r, "torch"), "ok");
	assert_string_equal(import_answer(&r, "csv"), "ok");
	assert_non_null(strstr(import_answer(&r, "no_such_module_here"),
	                       "ModuleNotFoundError: No module named 'no_such_module_here'"));
	assert_null(import_answer(&r, "json"));
	assert_int_equal(cJSON_GetArraySize(r.imports), 3);
	ml_framework_result_release(&r);

	/* without imports asked for, there are none */
	o.imports = NULL;
	o.n_imports = 0;
	assert_int_equal(ml_smoke_framework(&r, PYTHON, &o, &err), 0);
	assert_null(r.imports);
	ml_framework_result_release(&r);
	unsetenv("PYTHONPATH");
	unsetenv("MLSETUP_STUB_TORCH");
	char csv[64];
	snprintf(csv, sizeof(csv), "%s/csv", claims);
	unlink(csv);
	unlink(taken);
	rmdir(claims);
}

static void test_the_imports_have_a_limit_of_their_own(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_SH);
	/* The result is out at once, the import takes 2 s: with imports asked
	 * for, the smoke test's 1 s limit ended with its result; without, the
	 * same script is killed. */
	char dir[] = "/tmp/mlsetup-fw.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	fake_python(path, sizeof(path), dir,
	            "echo 'MLSETUP-TORCH-SMOKE-JSON: {\"schema\": \"mlsetup.torch_smoke/1\", "
	            "\"torch\": \"9.0.0\", \"checks\": [], \"gpus\": []}'\n"
	            "sleep 2\n"
	            "echo 'MLSETUP-TORCH-SMOKE-IMPORT: {\"module\": \"slow\", \"ok\": true}'\n");
	const char *mods[] = {"slow"};
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	o.timeout_s = 1;
	o.imports = mods;
	o.n_imports = 1;
	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, &o, &err), 0);
	assert_int_equal(r.exit_status, 0);
	assert_string_equal(import_answer(&r, "slow"), "ok");
	assert_string_equal(r.torch_version, "9.0.0");
	ml_framework_result_release(&r);
	o.n_imports = 0;
	assert_int_equal(ml_smoke_framework(&r, path, &o, &err), 0);
	assert_int_equal(r.exit_status, -1);
	assert_non_null(strstr(r.detail, "did not finish within 1 s"));
	assert_null(r.imports);
	ml_framework_result_release(&r);
	unlink(path);
	rmdir(dir);
}

static void test_classifier_knows_torch_messages(void **state)
{
	(void)state;
	assert_int_equal(ml_fw_classify("RuntimeError: CUDA error: no kernel image is available "
	                                "for execution on the device"),
	                 ML_FW_NO_KERNEL_IMAGE);
	assert_int_equal(ml_fw_classify("torch.AcceleratorError: CUDA error: NO KERNEL IMAGE IS "
	                                "AVAILABLE for execution on the device"),
	                 ML_FW_NO_KERNEL_IMAGE);
	assert_int_equal(ml_fw_classify("The NVIDIA driver on your system is too old (found "
	                                "version 11040)"),
	                 ML_FW_DRIVER_TOO_OLD);
	assert_int_equal(ml_fw_classify("torch.OutOfMemoryError: CUDA out of memory. Tried to "
	                                "allocate 2.00 GiB"),
	                 ML_FW_OOM);
	assert_int_equal(ml_fw_classify("AssertionError: Torch not compiled with CUDA enabled"),
	                 ML_FW_CPU_ONLY_BUILD);
	assert_int_equal(ml_fw_classify("RuntimeError: Found no NVIDIA driver on your system."),
	                 ML_FW_CUDA_UNAVAILABLE);
	assert_int_equal(ml_fw_classify("OSError: libcudnn.so.9: cannot open shared object file"),
	                 ML_FW_IMPORT_ERROR);
	assert_int_equal(ml_fw_classify("ValueError: something else"), ML_FW_OTHER);
	assert_int_equal(ml_fw_classify(NULL), ML_FW_OTHER);
	assert_string_equal(ml_fw_class_name(ML_FW_NO_KERNEL_IMAGE), "no_kernel_image");
	assert_string_equal(ml_cause_name(ML_CAUSE_GPU_NOT_VISIBLE), "gpu_not_visible");
}

static void test_framework_json_carries_classes_and_timings(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	ml_framework_result r = run_mode("oom");
	cJSON *j = ml_framework_result_to_json(&r);
	assert_non_null(j);
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(strstr(text, "\"class\":\"oom\""));
	assert_non_null(strstr(text, "\"torch_cuda\":\"12.4\""));
	assert_non_null(strstr(text, "\"arch_list\":[\"sm_50\""));
	assert_non_null(
	        strstr(text, "\"name\":\"fp32_matmul\",\"status\":\"pass\",\"class\":null"));
	assert_non_null(strstr(text, "\"gflops\":"));
	free(text);
	cJSON_Delete(j);
	ml_framework_result_release(&r);
	ml_framework_result_release(NULL);
	ml_verdict_free(NULL);
	assert_int_equal(ml_verdict_exit_code(NULL), 1);
}

static void test_matmul_speed_is_tflops_per_dtype_without_the_warm_up(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	/* The stub's GPU clock runs every matmul at these rates, and charges
	 * the first matmul of each dtype half a second more (cuBLAS set-up):
	 * timing that first call would show here as a far lower rate. */
	setenv("MLSETUP_STUB_TORCH_DEVICES", "NVIDIA A100-SXM4-80GB=8.0", 1);
	setenv("MLSETUP_STUB_TORCH_TFLOPS", "fp32=19.5,fp16=312,bf16=156", 1);
	ml_framework_result r = run_mode("healthy");
	unsetenv("MLSETUP_STUB_TORCH_TFLOPS");
	assert_int_equal(r.cls, ML_FW_OK);
	const char *names[] = {"fp32_matmul", "fp16_matmul", "bf16_matmul"};
	const double rates[] = {19.5, 312, 156};
	const char *shown[] = {", 19.5 TFLOP/s", ", 312 TFLOP/s", ", 156 TFLOP/s"};
	for (size_t i = 0; i < 3; i++) {
		const ml_fw_check *c = fw_check(r.gpus[0].checks, r.gpus[0].n_checks, names[i]);
		assert_int_equal(c->status, ML_CHECK_PASS);
		assert_int_equal(c->n, 16);
		assert_true(c->reps >= 1 && c->reps <= 200);
		/* 2 n^3 operations per n x n matmul, over the time of one run. */
		double want = 2.0 * 16 * 16 * 16 / (c->ms / 1e3) / 1e12;
		assert_true(fabs(c->tflops - want) <= 1e-9 * want);
		assert_true(fabs(c->tflops - rates[i]) <= 1e-9 * rates[i]);
		assert_true(fabs(c->gflops - 1e3 * c->tflops) <= 1e-6 * c->gflops);
		if (!strstr(c->detail, shown[i]))
			fail_msg("%s detail '%s' lacks '%s'", names[i], c->detail, shown[i]);
		assert_non_null(strstr(c->detail, "16 x 16: "));
	}

	cJSON *j = ml_framework_result_to_json(&r);
	const cJSON *mm = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0),
	                                      "matmul");
	assert_int_equal(cJSON_GetArraySize(mm), 3);
	const char *dtypes[] = {"fp32", "fp16", "bf16"};
	for (int i = 0; i < 3; i++) {
		const cJSON *m = cJSON_GetArrayItem(mm, i);
		assert_string_equal(cJSON_GetObjectItem(m, "dtype")->valuestring, dtypes[i]);
		assert_string_equal(cJSON_GetObjectItem(m, "status")->valuestring, "pass");
		assert_int_equal(cJSON_GetObjectItem(m, "n")->valueint, 16);
		double t = cJSON_GetObjectItem(m, "tflops")->valuedouble;
		assert_true(fabs(t - rates[i]) <= 1e-9 * rates[i]);
	}
	/* Checks keep their fields and gain the new ones. */
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(strstr(text, "\"name\":\"fp32_matmul\",\"status\":\"pass\""));
	assert_non_null(strstr(text, "\"gflops\":"));
	assert_non_null(strstr(text, "\"tflops\":"));
	free(text);
	cJSON_Delete(j);
	ml_framework_result_release(&r);
}

static void test_tflops_are_written_with_three_digits_and_no_exponent(void **state)
{
	(void)state;
	const struct {
		double v;
		const char *want;
	} cases[] = {{2250.4, "2250"},    {312.0, "312"}, {19.46, "19.5"},
	             {1.234, "1.23"},     {0.5, "0.500"}, {0.01234, "0.0123"},
	             {1e-5, "0.0000100"}, {0, "?"},       {-1, "?"},
	             {9.9999999, "10.0"}, {99.96, "100"}, {0.99996, "1.00"},
	             {0.099996, "0.100"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[32];
		ml_tflops_format(buf, sizeof(buf), cases[i].v);
		assert_string_equal(buf, cases[i].want);
	}
}

static void test_bf16_failing_where_the_gpu_has_bf16_fails_with_its_diagnosis(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	setenv("MLSETUP_STUB_TORCH_DEVICES", "NVIDIA A100-SXM4-80GB=8.0;NVIDIA H100 80GB HBM3=9.0",
	       1);
	ml_framework_result r = run_mode("bf16_fails");
	assert_int_equal(r.n_gpus, 2);
	for (size_t g = 0; g < 2; g++) {
		const ml_fw_gpu *fg = &r.gpus[g];
		assert_int_equal(ml_fw_gpu_check(fg, "fp32_matmul")->status, ML_CHECK_PASS);
		assert_int_equal(ml_fw_gpu_check(fg, "fp16_matmul")->status, ML_CHECK_PASS);
		const ml_fw_check *c = ml_fw_gpu_check(fg, "bf16_matmul");
		assert_int_equal(c->status, ML_CHECK_FAIL);
		assert_non_null(strstr(c->detail, "CUBLAS_STATUS_NOT_SUPPORTED when calling"));
		assert_true(c->tflops == 0);
	}
	assert_non_null(strstr(r.detail, "GPU 0 (NVIDIA A100-SXM4-80GB) bf16_matmul"));

	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->status, ML_CHECK_FAIL);
	assert_int_equal(v->cause, ML_CAUSE_PRECISION_FAILED);
	assert_int_equal(ml_verdict_exit_code(v), 5);
	assert_non_null(strstr(v->summary, "GPU 0 (NVIDIA A100-SXM4-80GB) bf16_matmul failed"));
	const ml_check *k = find(v->gpus[0].checks, v->gpus[0].n_checks, "bf16_matmul");
	assert_int_equal(k->cause, ML_CAUSE_PRECISION_FAILED);
	assert_non_null(strstr(k->remedy, "NVIDIA A100-SXM4-80GB (Ampere, sm_80) has bf16"));
	assert_non_null(strstr(k->remedy, "cuBLAS"));
	assert_non_null(strstr(k->remedy, "reinstall the environment"));
	assert_non_null(strstr(k->remedy, "train in fp16"));
	k = find(v->gpus[1].checks, v->gpus[1].n_checks, "bf16_matmul");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_non_null(strstr(k->remedy, "NVIDIA H100 80GB HBM3 (Hopper, sm_90)"));
	assert_int_equal(find(v->gpus[1].checks, v->gpus[1].n_checks, "fp16_matmul")->status,
	                 ML_CHECK_PASS);

	cJSON *j = ml_verdict_to_json(v);
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(strstr(text, "\"cause\":\"precision_failed\""));
	free(text);
	cJSON_Delete(j);
	j = ml_framework_result_to_json(&r);
	const cJSON *bf16 = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0),
	                            "matmul"),
	        2);
	assert_string_equal(cJSON_GetObjectItem(bf16, "dtype")->valuestring, "bf16");
	assert_string_equal(cJSON_GetObjectItem(bf16, "status")->valuestring, "fail");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(bf16, "tflops")));
	cJSON_Delete(j);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
}

/* A smoke script result with a Tesla V100 (7.0) and an A100 (8.0) whose
 * bf16 matmuls both failed, as a script that tried bf16 everywhere would
 * report them. */
static const char BF16_ON_BOTH[] =
        "cat <<'EOF'\n"
        "MLSETUP-TORCH-SMOKE-JSON: {\"torch\": \"2.6.0+cu124\", \"torch_cuda\": \"12.4\", "
        "\"cuda_available\": true, \"device_count\": 2, \"arch_list\": [\"sm_70\", "
        "\"sm_80\"], \"checks\": [{\"name\": \"import\", \"ok\": true}], \"gpus\": ["
        "{\"index\": 0, \"name\": \"Tesla V100-SXM2-16GB\", \"capability\": [7, 0], "
        "\"checks\": [{\"name\": \"fp16_matmul\", \"ok\": true}, {\"name\": "
        "\"bf16_matmul\", \"ok\": false, \"error_type\": \"RuntimeError\", \"error\": "
        "\"CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx(...)`\"}]}, "
        "{\"index\": 1, \"name\": \"NVIDIA A100-SXM4-80GB\", \"capability\": [8, 0], "
        "\"checks\": [{\"name\": \"fp16_matmul\", \"ok\": true}, {\"name\": "
        "\"bf16_matmul\", \"ok\": false, \"error_type\": \"RuntimeError\", \"error\": "
        "\"CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx(...)`\"}]}]}\n"
        "EOF\n";

static void test_bf16_failing_where_the_gpu_lacks_bf16_is_expected(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PYTHON);
	/* The smoke script does not even try bf16 below 8.0. */
	setenv("MLSETUP_STUB_TORCH_DEVICES", "Tesla V100-SXM2-16GB=7.0", 1);
	ml_framework_result r = run_mode("bf16_fails");
	assert_int_equal(r.cls, ML_FW_OK);
	assert_int_equal(ml_fw_gpu_check(&r.gpus[0], "bf16_matmul")->status, ML_CHECK_SKIP);
	ml_verdict *v = diagnose(&r, NULL, NULL);
	assert_int_equal(v->status, ML_CHECK_PASS);
	assert_int_equal(ml_verdict_exit_code(v), 0);
	ml_verdict_free(v);
	ml_framework_result_release(&r);

	/* Where bf16 did run and fail, the GPU's features decide. */
	char dir[] = "/tmp/mlsetup-fw.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	fake_python(path, sizeof(path), dir, BF16_ON_BOTH);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, NULL, &err), 0);
	const ml_fw_check *c = ml_fw_gpu_check(&r.gpus[0], "bf16_matmul");
	assert_int_equal(c->status, ML_CHECK_SKIP);
	assert_int_equal(c->cls, ML_FW_OK);
	assert_non_null(strstr(c->detail, "bf16 needs compute capability 8.0 or newer, this GPU "
	                                  "is 7.0: expected to fail (RuntimeError: CUDA error: "
	                                  "CUBLAS_STATUS_NOT_SUPPORTED"));
	assert_int_equal(ml_fw_gpu_check(&r.gpus[1], "bf16_matmul")->status, ML_CHECK_FAIL);
	assert_non_null(strstr(r.detail, "GPU 1 (NVIDIA A100-SXM4-80GB) bf16_matmul"));
	v = diagnose(&r, NULL, NULL);
	assert_int_equal(find(v->gpus[0].checks, v->gpus[0].n_checks, "bf16_matmul")->status,
	                 ML_CHECK_SKIP);
	assert_int_equal(find(v->gpus[1].checks, v->gpus[1].n_checks, "bf16_matmul")->cause,
	                 ML_CAUSE_PRECISION_FAILED);
	assert_non_null(strstr(v->summary, "GPU 1 (NVIDIA A100-SXM4-80GB) bf16_matmul failed"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_framework_result_release(&r);
	unlink(path);
	rmdir(dir);
}

/* The build embeds src/verify/torch_smoke.py byte for byte, followed by a
 * NUL: a script left out of EMBED_FILES (Makefile) or a stale
 * build/gen/embedded.c fails here. */
static void test_embedded_script_matches_its_source(void **state)
{
	(void)state;
	FILE *f = fopen("src/verify/torch_smoke.py", "rb");
	assert_non_null(f);
	static char src[1 << 17];
	size_t n = fread(src, 1, sizeof(src), f);
	assert_true(feof(f));
	fclose(f);
	const ml_embedded_file *e = ml_embedded_find("torch_smoke.py");
	if (!e)
		fail_msg("torch_smoke.py is not embedded: add it to EMBED_FILES in the Makefile");
	assert_ptr_equal(ml_torch_smoke_script(), e->data);
	assert_int_equal(e->size, n);
	if (memcmp(e->data, src, n) != 0)
		fail_msg("the embedded torch_smoke.py differs from src/verify/torch_smoke.py");
	assert_int_equal(e->data[n], '\0');
	assert_int_equal(strlen(ml_torch_smoke_script()), n); /* no NUL inside: python -c */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_healthy_torch_passes_every_check),
	        cmocka_unit_test(test_no_kernel_image_on_sm120_names_the_blackwell_manifest),
	        cmocka_unit_test(test_gpu_no_manifest_covers_gets_a_general_remedy),
	        cmocka_unit_test(test_each_gpu_is_checked_against_the_arch_list),
	        cmocka_unit_test(test_cpu_only_build_is_fine_without_a_gpu_and_fails_with_one),
	        cmocka_unit_test(test_hidden_gpus_name_cuda_visible_devices),
	        cmocka_unit_test(test_driver_too_old_names_the_minimum),
	        cmocka_unit_test(test_out_of_memory_is_classified),
	        cmocka_unit_test(test_wrong_results_are_caught_against_the_cpu),
	        cmocka_unit_test(test_import_errors_are_classified),
	        cmocka_unit_test(test_missing_interpreter_is_an_error),
	        cmocka_unit_test(test_interpreter_without_a_result_is_other_with_its_output),
	        cmocka_unit_test(test_hanging_interpreter_is_killed_after_the_timeout),
	        cmocka_unit_test(test_steps_are_reported_in_order_with_their_outcome),
	        cmocka_unit_test(test_a_step_arrives_while_the_script_still_runs),
	        cmocka_unit_test(test_a_step_the_script_never_ended_fails_and_is_named),
	        cmocka_unit_test(test_imports_after_the_checks_are_answered_one_by_one),
	        cmocka_unit_test(test_the_imports_have_a_limit_of_their_own),
	        cmocka_unit_test(test_classifier_knows_torch_messages),
	        cmocka_unit_test(test_framework_json_carries_classes_and_timings),
	        cmocka_unit_test(test_matmul_speed_is_tflops_per_dtype_without_the_warm_up),
	        cmocka_unit_test(test_tflops_are_written_with_three_digits_and_no_exponent),
	        cmocka_unit_test(test_bf16_failing_where_the_gpu_has_bf16_fails_with_its_diagnosis),
	        cmocka_unit_test(test_bf16_failing_where_the_gpu_lacks_bf16_is_expected),
	        cmocka_unit_test(test_embedded_script_matches_its_source),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
