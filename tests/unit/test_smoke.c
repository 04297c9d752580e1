/*
 * test_smoke.c - specs for the driver-level smoke test (src/verify/smoke.c)
 * and its diagnosis (src/verify/diagnose.c), run against the fake
 * libcuda.so.1 of tests/shims (build it with `make shims`). Each case points
 * MLSETUP_FAKE_NVIDIA at a machine in tests/fixtures/gpus/ and passes the
 * shim's absolute path as the library to load; ml_smoke_driver() closes the
 * library after each run, so the next run reads the next machine.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "mlsetup/verify.h"
#include "../../src/verify/internal.h"

#define GPUS       "tests/fixtures/gpus/"
#define SM80_IMAGE "tests/fixtures/smoke/saxpy_sm80.fatbin"
#define SMALL      ((size_t)1 << 16) /* floats: fast under sanitizers */

/* The fake CUDA driver: on Windows its DLL (make check-windows builds it). */
#ifdef _WIN32
#define SHIM      "build/shims-windows/nvcuda.dll"
#define SHIM_MAKE "make shims-windows"
#else
#define SHIM      "build/shims/libcuda.so.1"
#define SHIM_MAKE "make shims"
#endif

static char shim[PATH_MAX];

static int find_shim(void **state)
{
	(void)state;
	if (!realpath(SHIM, shim)) {
		fprintf(stderr, SHIM " missing: run `" SHIM_MAKE "`\n");
		return -1;
	}
	return 0;
}

/* Runs the smoke test on the fake machine in tests/fixtures/gpus/<fixture>
 * (NULL: no MLSETUP_FAKE_NVIDIA, i.e. no driver) with opts o (NULL:
 * defaults but a small size). */
static ml_smoke_result run_on(const char *fixture, const ml_smoke_opts *o)
{
	const char *names[] = {shim, NULL};
	ml_smoke_opts opts = ML_SMOKE_OPTS_INIT;
	if (o)
		opts = *o;
	if (!opts.lib_names)
		opts.lib_names = names;
	if (!opts.n_floats)
		opts.n_floats = SMALL;
	if (fixture) {
		char path[512];
		snprintf(path, sizeof(path), GPUS "%s", fixture);
		setenv("MLSETUP_FAKE_NVIDIA", path, 1);
	} else {
		unsetenv("MLSETUP_FAKE_NVIDIA");
	}
	ml_smoke_result r;
	ml_err err = ML_ERR_INIT;
	memset(&r, 0x5a, sizeof(r));
	int rc = ml_smoke_driver(&r, &opts, &err);
	if (rc != 0)
		fail_msg("ml_smoke_driver: %s", err.msg);
	unsetenv("MLSETUP_FAKE_NVIDIA");
	return r;
}

/* Reads a whole binary file (the test image) into a new buffer. */
static unsigned char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	unsigned char *buf = malloc(1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	assert_true(n > 16 && n < (1 << 20));
	return buf;
}

static bool has_error(const ml_smoke_gpu *g, const char *step, int code)
{
	for (size_t i = 0; i < g->n_errors; i++) {
		if (strcmp(g->errors[i].step, step) == 0 && g->errors[i].code == code)
			return true;
	}
	return false;
}

static void test_healthy_gpus_pass_with_exact_results(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("mixed-3090-5090.json", NULL);
	assert_int_equal(r.status, ML_CHECK_PASS);
	assert_string_equal(r.library, shim);
	assert_int_equal(r.cuda_version, 12080);
	assert_string_equal(r.step, "");
	assert_int_equal(r.n_gpus, 2);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->index, 0);
	assert_string_equal(g->name, "NVIDIA GeForce RTX 3090");
	assert_int_equal(g->cc_major, 8);
	assert_int_equal(g->cc_minor, 6);
	assert_int_equal(g->status, ML_CHECK_PASS);
	assert_string_equal(g->step, "");
	assert_int_equal(g->cuda_error, 0);
	assert_int_equal(g->n_floats, SMALL);
	assert_int_equal(g->mismatches, 0);
	assert_true(g->max_abs_error == 0.0);
	assert_false(g->ptx_fallback);
	assert_null(g->jit_log); /* SASS sm_86 matched: nothing to JIT */
	assert_int_equal(g->n_errors, 0);
	assert_true(g->kernel_ms >= 0 && g->total_ms >= g->kernel_ms);
	assert_non_null(strstr(g->detail, "65536 floats exact"));
	assert_int_equal(r.gpus[1].status, ML_CHECK_PASS);
	assert_int_equal(r.gpus[1].cc_major, 12);
	assert_non_null(strstr(r.detail, "2 of 2 GPUs passed"));
	assert_non_null(strstr(r.kernel, "sm_120"));
	ml_smoke_result_release(&r);
}

static void test_default_size_is_four_mebi_floats(void **state)
{
	(void)state;
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.n_floats = 0;
	o.iterations = 1;
	const char *names[] = {shim, NULL};
	o.lib_names = names;
	setenv("MLSETUP_FAKE_NVIDIA", GPUS "rtx3090-550.json", 1);
	ml_smoke_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_driver(&r, &o, &err), 0);
	unsetenv("MLSETUP_FAKE_NVIDIA");
	assert_int_equal(r.status, ML_CHECK_PASS);
	assert_int_equal(r.gpus[0].n_floats, (size_t)4 << 20);
	assert_int_equal(r.gpus[0].mismatches, 0);
	assert_true(r.gpus[0].gbps > 0);
	ml_smoke_result_release(&r);
}

static void test_image_without_sm120_or_ptx_gives_no_binary_for_gpu(void **state)
{
	(void)state;
	unsigned char *image = read_all(SM80_IMAGE);
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.image = image;
	ml_smoke_result r = run_on("rtx5090.json", &o);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	assert_string_equal(r.kernel, "caller's image");
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_string_equal(g->step, "cuModuleLoadDataEx");
	assert_int_equal(g->cuda_error, 209);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_NO_BINARY_FOR_GPU");
	assert_non_null(strstr(g->detail, "CUDA_ERROR_NO_BINARY_FOR_GPU (209)"));
	assert_non_null(strstr(g->detail, "no kernel image is available"));
	assert_false(g->ptx_fallback); /* a caller's image gets no fallback */
	assert_true(has_error(g, "cuModuleLoadDataEx", 209));
	ml_smoke_result_release(&r);

	/* The same image runs on 8.6: SASS sm_80 covers the same major. */
	r = run_on("rtx3090-550.json", &o);
	assert_int_equal(r.status, ML_CHECK_PASS);
	ml_smoke_result_release(&r);
	free(image);
}

static void test_ptx_images_load_and_a_missing_kernel_is_named(void **state)
{
	(void)state;
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.image = ml_smoke_kernel_ptx();
	ml_smoke_result r = run_on("rtx5090.json", &o);
	assert_int_equal(r.gpus[0].status, ML_CHECK_PASS);
	assert_non_null(strstr(r.gpus[0].jit_log, "JIT-compiled PTX sm_50 for sm_120"));
	ml_smoke_result_release(&r);

	static const char other[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
	                            ".visible .entry axpby(\n)\n{\n\tret;\n}\n";
	o.image = other;
	r = run_on("rtx5090.json", &o);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_string_equal(g->step, "cuModuleGetFunction");
	assert_int_equal(g->cuda_error, 500);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_NOT_FOUND");
	ml_smoke_result_release(&r);
}

static void test_launch_failure_is_named_with_its_code(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-launch-error.json", NULL);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	/* Kernel faults surface at the next synchronization, as on a GPU. */
	assert_string_equal(g->step, "cuCtxSynchronize");
	assert_int_equal(g->cuda_error, 719);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_LAUNCH_FAILED");
	assert_non_null(strstr(g->detail, "CUDA_ERROR_LAUNCH_FAILED (719)"));
	assert_int_equal(g->n_errors, 1); /* cleanup still succeeded */
	ml_smoke_result_release(&r);
}

static void test_wrong_results_fail_with_the_max_error(void **state)
{
	(void)state;
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.iterations = 1; /* warm-up + 1: element n/2 is off by 2 */
	ml_smoke_result r = run_on("smoke-wrong-results.json", &o);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_string_equal(g->step, "compare");
	assert_int_equal(g->cuda_error, 0);
	assert_int_equal(g->mismatches, 1);
	assert_true(g->max_abs_error == 2.0);
	assert_non_null(strstr(g->detail, "1 of 65536 floats differ"));
	assert_non_null(strstr(g->detail, "element 32768"));
	ml_smoke_result_release(&r);
}

static void test_insufficient_driver_is_reported_by_name_and_number(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-insufficient-driver.json", NULL);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	assert_string_equal(r.step, "cuInit");
	assert_int_equal(r.cuda_error, 35);
	assert_string_equal(r.cuda_error_name, "CUDA_ERROR_INSUFFICIENT_DRIVER");
	assert_non_null(strstr(r.detail, "CUDA_ERROR_INSUFFICIENT_DRIVER (35)"));
	assert_int_equal(r.n_gpus, 0);
	ml_smoke_result_release(&r);
}

static void test_missing_library_is_skipped_with_the_reason(void **state)
{
	(void)state;
	const char *names[] = {"/nonexistent/libcuda.so.1", NULL};
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.lib_names = names;
	ml_smoke_result r = run_on("rtx3090-550.json", &o);
	assert_int_equal(r.status, ML_CHECK_SKIP);
	assert_string_equal(r.step, "dlopen");
	assert_string_equal(r.library, "");
	assert_non_null(strstr(r.detail, "/nonexistent/libcuda.so.1 not loadable"));
	assert_int_equal(r.n_gpus, 0);
	ml_smoke_result_release(&r);
}

static void test_no_driver_and_no_device_are_skipped(void **state)
{
	(void)state;
	ml_smoke_result r = run_on(NULL, NULL); /* the shim without a machine: cuInit 100 */
	assert_int_equal(r.status, ML_CHECK_SKIP);
	assert_string_equal(r.step, "cuInit");
	assert_int_equal(r.cuda_error, 100);
	assert_string_equal(r.cuda_error_name, "CUDA_ERROR_NO_DEVICE");
	ml_smoke_result_release(&r);

	r = run_on("smoke-no-gpus.json", NULL);
	assert_int_equal(r.status, ML_CHECK_SKIP);
	assert_non_null(strstr(r.detail, "no CUDA device"));
	assert_int_equal(r.n_gpus, 0);
	ml_smoke_result_release(&r);
}

static void test_library_without_the_driver_api_is_a_failure_not_a_crash(void **state)
{
	(void)state;
#ifdef _WIN32
	const char *names[] = {"kernel32.dll", NULL}; /* a system library without it */
#else
	const char *names[] = {"libm.so.6", NULL};
#endif
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.lib_names = names;
	ml_smoke_result r = run_on("rtx3090-550.json", &o);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	assert_string_equal(r.step, "dlsym");
	assert_string_equal(r.missing_symbol, "cuInit");
	assert_non_null(strstr(r.detail, "required symbol cuInit missing"));
	ml_smoke_result_release(&r);
}

static void test_symbol_answering_not_found_fails_that_step(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-missing-launch.json", NULL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_string_equal(g->step, "cuLaunchKernel");
	assert_int_equal(g->cuda_error, 500);
	/* cuGetErrorName answers 500 too: the name comes from mlsetup's table. */
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_NOT_FOUND");
	ml_smoke_result_release(&r);
}

static void test_newer_gpu_jit_compiles_the_ptx(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-future-gpu-cuda130.json", NULL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(r.status, ML_CHECK_PASS);
	assert_int_equal(g->status, ML_CHECK_PASS);
	assert_false(g->ptx_fallback);
	assert_non_null(g->jit_log);
	assert_non_null(strstr(g->jit_log, "fatbin info: fake-cuda: JIT-compiled PTX compute_121"));
	ml_smoke_result_release(&r);
}

static void test_old_driver_falls_back_to_the_portable_ptx(void **state)
{
	(void)state;
	/* CUDA 12.4 cannot JIT the fatbin's PTX ISA 9.0 (222); ISA 7.0 works. */
	ml_smoke_result r = run_on("smoke-future-gpu-cuda124.json", NULL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(r.status, ML_CHECK_WARN);
	assert_int_equal(g->status, ML_CHECK_WARN);
	assert_true(g->ptx_fallback);
	assert_int_equal(g->mismatches, 0);
	assert_true(has_error(g, "cuModuleLoadDataEx", 222));
	assert_non_null(strstr(g->jit_log, "Unsupported .version 9.0; current version is '8.4'"));
	assert_non_null(strstr(g->jit_log, "portable PTX info"));
	assert_non_null(strstr(g->detail, "portable PTX was JIT-compiled"));
	ml_smoke_result_release(&r);

	/* Pascal is older than every code object of the fatbin (209), but the
	 * portable PTX targets sm_50. */
	r = run_on("gtx1080-570.json", NULL);
	assert_int_equal(r.gpus[0].status, ML_CHECK_WARN);
	assert_true(has_error(&r.gpus[0], "cuModuleLoadDataEx", 209));
	ml_smoke_result_release(&r);
}

static void test_module_load_error_names_both_attempts(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-module-load-error.json", NULL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_int_equal(g->cuda_error, 200);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_INVALID_IMAGE");
	assert_non_null(strstr(g->detail, "portable PTX fallback failed too"));
	assert_int_equal(g->n_errors, 2);
	ml_smoke_result_release(&r);
}

static void test_device_memory_exhaustion_is_out_of_memory(void **state)
{
	(void)state;
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.n_floats = (size_t)4 << 20; /* 16 MiB a buffer; the GPU has 8 MiB */
	o.iterations = 1;
	ml_smoke_result r = run_on("smoke-small-memory.json", &o);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_int_equal(g->status, ML_CHECK_FAIL);
	assert_string_equal(g->step, "cuMemAlloc_v2");
	assert_int_equal(g->cuda_error, 2);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_OUT_OF_MEMORY");
	ml_smoke_result_release(&r);
}

static void test_each_gpu_is_judged_on_its_own(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-mixed-fault.json", NULL);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	assert_int_equal(r.n_gpus, 2);
	assert_int_equal(r.gpus[0].status, ML_CHECK_PASS);
	assert_int_equal(r.gpus[1].status, ML_CHECK_FAIL);
	assert_int_equal(r.gpus[1].cuda_error, 719);
	assert_non_null(strstr(r.detail, "1 of 2 GPUs passed"));
	ml_smoke_result_release(&r);
}

/* What an on_step callback heard: "begin NAME" / "end STATUS NAME". */
struct heard {
	char lines[16][96];
	size_t n;
};

static void hear(const ml_verify_step *s, void *data)
{
	struct heard *h = data;
	assert_true(s->seconds >= 0);
	if (h->n < 16)
		snprintf(h->lines[h->n++], sizeof(h->lines[0]), "%s %s%s%s",
		         s->done ? "end" : "begin", s->done ? ml_check_status_name(s->status) : "",
		         s->done ? " " : "", s->name);
}

static void test_steps_are_reported_as_they_run(void **state)
{
	(void)state;
	struct heard h = {{{0}}, 0};
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.on_step = hear;
	o.step_data = &h;
	ml_smoke_result r = run_on("smoke-mixed-fault.json", &o);
	const char *want[] = {
	        "begin starting the CUDA driver", "end pass starting the CUDA driver",
	        "begin SAXPY on GPU 0",           "end pass SAXPY on GPU 0",
	        "begin SAXPY on GPU 1",           "end fail SAXPY on GPU 1",
	};
	assert_int_equal(h.n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(h.lines[i], want[i]);
	ml_smoke_result_release(&r);

	/* No device: the driver step ends skipped, no GPU step. */
	h.n = 0;
	r = run_on("smoke-no-gpus.json", &o);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.lines[1], "end skip starting the CUDA driver");
	ml_smoke_result_release(&r);
}

static void test_options_out_of_range_are_usage_errors(void **state)
{
	(void)state;
	ml_smoke_result r;
	ml_err err = ML_ERR_INIT;
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.block_size = 2048;
	assert_int_equal(ml_smoke_driver(&r, &o, &err), ML_EUSAGE);
	o.block_size = 0;
	o.n_floats = ((size_t)1 << 28) + 1;
	assert_int_equal(ml_smoke_driver(&r, &o, &err), ML_EUSAGE);
	o.n_floats = 0;
	o.iterations = -1;
	assert_int_equal(ml_smoke_driver(&r, &o, &err), ML_EUSAGE);
}

static void test_json_carries_error_names_and_timings(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-mixed-fault.json", NULL);
	cJSON *j = ml_smoke_result_to_json(&r);
	assert_non_null(j);
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"status\":\"fail\""));
	assert_non_null(strstr(text, "\"cc\":\"12.0\""));
	assert_non_null(strstr(text, "\"error\":{\"step\":\"cuCtxSynchronize\",\"code\":719,"
	                             "\"name\":\"CUDA_ERROR_LAUNCH_FAILED\"}"));
	assert_non_null(strstr(text, "\"kernel_ms\":"));
	assert_non_null(strstr(text, "\"gbps\":"));
	free(text);
	cJSON_Delete(j);
	ml_smoke_result_release(&r);
	ml_smoke_result_release(NULL);
}

static void test_own_error_table_names_the_facts_codes(void **state)
{
	(void)state;
	assert_string_equal(ml_cuda_error_name(209), "CUDA_ERROR_NO_BINARY_FOR_GPU");
	assert_string_equal(ml_cuda_error_name(35), "CUDA_ERROR_INSUFFICIENT_DRIVER");
	assert_string_equal(ml_cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY");
	assert_string_equal(ml_cuda_error_name(222), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
	assert_string_equal(ml_cuda_error_name(804), "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
	assert_null(ml_cuda_error_name(12345));
}

static void test_embedded_kernel_is_a_fatbin_with_portable_ptx(void **state)
{
	(void)state;
	size_t len = 0;
	const unsigned char *p = ml_smoke_kernel_image(&len);
	assert_true(len > 1024);
	assert_int_equal(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24, 0xba55ed50u);
	assert_int_equal((uintptr_t)p % 64, 0);
	assert_non_null(strstr(ml_smoke_kernel_ptx(), ".version 7.0\n.target sm_50\n"));
	assert_non_null(strstr(ml_smoke_kernel_ptx(), ".entry saxpy("));

	/* The fatbin reader of `mlsetup audit` sees the code the image claims,
	 * and THE rule says it runs from Turing to GB10 and beyond (PTX). */
	ml_fatbin_list l = ML_FATBIN_LIST_INIT;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_fatbin_scan(&l, p, len, &err), 0);
	char names[256] = "";
	for (size_t i = 0; i < l.n_sass; i++) {
		char a[16];
		assert_int_equal(ml_cuda_arch_format(a, sizeof(a), &l.sass[i]), 0);
		strcat(strcat(names, a), " ");
	}
	for (size_t i = 0; i < l.n_ptx; i++) {
		char a[16];
		assert_int_equal(ml_cuda_arch_format(a, sizeof(a), &l.ptx[i]), 0);
		strcat(strcat(names, a), " ");
	}
	assert_string_equal(names, "sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_103 sm_110 sm_120 "
	                           "sm_121 compute_75 compute_121 ");
	const int ccs[][2] = {{7, 5},  {8, 0},  {8, 6},  {8, 7},  {8, 9},  {9, 0},
	                      {10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}, {13, 0}};
	ml_cuda_arch code[32];
	size_t n = 0;
	for (size_t i = 0; i < l.n_sass; i++)
		code[n++] = l.sass[i];
	for (size_t i = 0; i < l.n_ptx; i++)
		code[n++] = l.ptx[i];
	for (size_t i = 0; i < sizeof(ccs) / sizeof(ccs[0]); i++)
		assert_true(ml_arch_runs_on(code, n, ccs[i][0], ccs[i][1], NULL, 0));
	assert_false(ml_arch_runs_on(code, n, 7, 0, NULL, 0)); /* Volta: the PTX fallback */
	ml_fatbin_list_release(&l);
}

/* Reads the file at path into a new NUL-terminated buffer (caller frees);
 * *len gets its size in bytes. */
static char *read_source(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	assert_true(feof(f));
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* The build embeds the data files make_kernel_image.sh writes (EMBED_FILES
 * in the Makefile) byte for byte, each followed by a NUL: a file left out
 * of the build or a stale build/gen/embedded.c fails here. */
static void test_embedded_kernel_files_are_the_committed_data_files(void **state)
{
	(void)state;
	static const char *const names[] = {"saxpy.fatbin", "saxpy_portable.ptx", "saxpy.desc"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const ml_embedded_file *f = ml_embedded_find(names[i]);
		if (!f)
			fail_msg("%s is not embedded: add it to EMBED_FILES in the Makefile",
			         names[i]);
		char path[64];
		snprintf(path, sizeof(path), "src/verify/%s", names[i]);
		size_t len = 0;
		char *src = read_source(path, &len);
		assert_int_equal(f->size, len);
		if (memcmp(f->data, src, len) != 0)
			fail_msg("embedded %s differs from %s", names[i], path);
		assert_int_equal(f->data[len], '\0');
		free(src);
	}
	size_t len = 0;
	const unsigned char *image = ml_smoke_kernel_image(&len);
	assert_ptr_equal(image, ml_embedded_find("saxpy.fatbin")->data);
	assert_int_equal(len, ml_embedded_find("saxpy.fatbin")->size);
	assert_ptr_equal(ml_smoke_kernel_image(NULL), image);
	assert_ptr_equal(ml_smoke_kernel_ptx(), ml_embedded_find("saxpy_portable.ptx")->data);
	assert_ptr_equal(ml_smoke_kernel_desc(), ml_embedded_find("saxpy.desc")->data);
	/* embed.sh aligns every file as cuModuleLoadData wants the image; the
	 * small ones show it (a large array may be aligned by chance). */
	for (const ml_embedded_file *f = ml_embedded_files; f->name; f++)
		if ((uintptr_t)f->data % 64 != 0)
			fail_msg("embedded %s is not 64-byte aligned", f->name);
}

/* The description is one line naming the toolkit, exactly the code the
 * fatbin holds, in its order, and the fallback. */
static void test_kernel_description_names_the_code_in_the_image(void **state)
{
	(void)state;
	const char *desc = ml_smoke_kernel_desc();
	assert_null(strchr(desc, '\n'));
	assert_true(strlen(desc) < sizeof(((ml_smoke_result *)0)->kernel));
	assert_int_equal(strncmp(desc, "saxpy.cu, release ", 18), 0);
	size_t len = 0;
	const unsigned char *p = ml_smoke_kernel_image(&len);
	ml_fatbin_list l = ML_FATBIN_LIST_INIT;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_fatbin_scan(&l, p, len, &err), 0);
	char code[256] = ": ";
	for (size_t i = 0; i < l.n_sass + l.n_ptx; i++) {
		char a[16];
		const ml_cuda_arch *arch = i < l.n_sass ? &l.sass[i] : &l.ptx[i - l.n_sass];
		assert_int_equal(ml_cuda_arch_format(a, sizeof(a), arch), 0);
		strcat(strcat(code, i ? " " : ""), a);
	}
	strcat(code, "; fallback PTX ISA 7.0 sm_50");
	ml_fatbin_list_release(&l);
	const char *at = strstr(desc, code);
	if (!at || strcmp(at, code) != 0)
		fail_msg("src/verify/saxpy.desc '%s' does not end with '%s'", desc, code);
}

/* --- diagnosis of driver-level results ----------------------------------- */

/* The verdict for a driver smoke result, on a machine with one detected
 * GPU (name, cc) and the given driver ("": none), looked at under root. */
static ml_verdict *verdict_under(const char *root, const ml_smoke_result *r, const char *gpu,
                                 int major, int minor, const char *driver, bool wsl)
{
	static ml_machine m;
	static ml_gpu g;
	memset(&m, 0, sizeof(m));
	memset(&g, 0, sizeof(g));
	ml_strlcpy(m.os.name, "linux", sizeof(m.os.name));
	m.os.wsl = wsl;
	ml_strlcpy(m.driver.version, driver, sizeof(m.driver.version));
	if (gpu) {
		ml_strlcpy(g.name, gpu, sizeof(g.name));
		g.cc_major = major;
		g.cc_minor = minor;
		m.gpus = &g;
		m.n_gpus = 1;
	}
	ml_diagnose_opts o = ML_DIAGNOSE_OPTS_INIT;
	o.machine = &m;
	o.driver = r;
	o.root = root;
	ml_verdict *v = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_diagnose(&v, &o, &err), 0);
	return v;
}

/* The same on a machine without /dev/nvidia*. */
static ml_verdict *verdict_for(const ml_smoke_result *r, const char *gpu, int major, int minor,
                               const char *driver, bool wsl)
{
	return verdict_under("tests/fixtures/sysroot/empty", r, gpu, major, minor, driver, wsl);
}

static const ml_check *gpu_check(const ml_verdict *v, size_t gpu, const char *name)
{
	assert_true(gpu < v->n_gpus);
	for (size_t i = 0; i < v->gpus[gpu].n_checks; i++) {
		if (strcmp(v->gpus[gpu].checks[i].name, name) == 0)
			return &v->gpus[gpu].checks[i];
	}
	fail_msg("no check %s on GPU %zu", name, gpu);
	return NULL;
}

static void test_verdict_passes_healthy_gpus(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("mixed-3090-5090.json", NULL);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 3090", 8, 6, "570.124.04", false);
	assert_int_equal(v->status, ML_CHECK_PASS);
	assert_int_equal(ml_verdict_exit_code(v), 0);
	assert_int_equal(v->n_gpus, 2);
	assert_int_equal(gpu_check(v, 1, "driver_saxpy")->status, ML_CHECK_PASS);
	assert_string_equal(v->checks[0].name, "cuda_driver");
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_insufficient_driver_names_the_minimum_and_exits_6(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-insufficient-driver.json", NULL);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 5090", 12, 0, "525.60.13", false);
	const ml_check *k = &v->checks[0];
	assert_string_equal(k->name, "cuda_driver");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_DRIVER_TOO_OLD);
	assert_non_null(strstr(k->detail, "CUDA_ERROR_INSUFFICIENT_DRIVER (35)"));
	assert_non_null(strstr(k->remedy, "570.26 or newer"));
	assert_non_null(strstr(k->remedy, "this machine has 525.60.13"));
	assert_int_equal(ml_verdict_exit_code(v), 6);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_stub_library_is_a_broken_driver(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-stub-library.json", NULL);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 3090", 8, 6, "570.124.04", false);
	assert_int_equal(v->checks[0].cause, ML_CAUSE_DRIVER_BROKEN);
	assert_non_null(strstr(v->checks[0].detail, "CUDA_ERROR_STUB_LIBRARY (34)"));
	assert_non_null(strstr(v->checks[0].remedy, "stub"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_names_gpu_faults_wrong_results_and_oom(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-launch-error.json", NULL);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 3090", 8, 6, "570.124.04", false);
	const ml_check *k = gpu_check(v, 0, "driver_saxpy");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_OTHER);
	assert_non_null(strstr(k->remedy, "Xid"));
	assert_non_null(strstr(v->summary, "CUDA_ERROR_LAUNCH_FAILED (719)"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);

	r = run_on("smoke-wrong-results.json", NULL);
	v = verdict_for(&r, NULL, 0, 0, "570.124.04", false);
	assert_int_equal(v->cause, ML_CAUSE_WRONG_RESULTS);
	assert_non_null(strstr(gpu_check(v, 0, "driver_saxpy")->remedy, "ECC"));
	ml_verdict_free(v);
	ml_smoke_result_release(&r);

	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.n_floats = (size_t)4 << 20;
	o.iterations = 1;
	r = run_on("smoke-small-memory.json", &o);
	v = verdict_for(&r, NULL, 0, 0, "570.124.04", false);
	assert_int_equal(v->cause, ML_CAUSE_OOM);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_no_binary_for_gpu_is_no_kernel_image(void **state)
{
	(void)state;
	unsigned char *image = read_all(SM80_IMAGE);
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.image = image;
	ml_smoke_result r = run_on("rtx5090.json", &o);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 5090", 12, 0, "570.124.04", false);
	const ml_check *k = gpu_check(v, 0, "driver_saxpy");
	assert_int_equal(k->cause, ML_CAUSE_NO_KERNEL_IMAGE);
	assert_non_null(strstr(k->remedy, "sm_120"));
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
	free(image);
}

static void test_verdict_ptx_fallback_warns_without_failing(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("smoke-future-gpu-cuda124.json", NULL);
	ml_verdict *v = verdict_for(&r, NULL, 0, 0, "550.54.14", false);
	assert_int_equal(v->status, ML_CHECK_WARN);
	const ml_check *k = gpu_check(v, 0, "driver_saxpy");
	assert_int_equal(k->status, ML_CHECK_WARN);
	assert_int_equal(k->cause, ML_CAUSE_DRIVER_TOO_OLD);
	assert_non_null(strstr(k->remedy, "580.65.06"));
	assert_int_equal(ml_verdict_exit_code(v), 0);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_missing_library_on_wsl_names_the_driver_libraries(void **state)
{
	(void)state;
	const char *names[] = {"/nonexistent/libcuda.so.1", NULL};
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	o.lib_names = names;
	ml_smoke_result r = run_on(NULL, &o);
	ml_verdict *v = verdict_for(&r, "NVIDIA GeForce RTX 4090", 8, 9, "", true);
	const ml_check *k = &v->checks[0];
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_GPU_NOT_VISIBLE);
	assert_non_null(strstr(k->detail, "/usr/lib/wsl/lib/libcuda.so.1 is missing"));
	assert_non_null(strstr(k->remedy, "NVIDIA driver for Windows"));
	/* The detected GPU appears, failed, with the same reason. */
	assert_int_equal(gpu_check(v, 0, "gpu_visible")->cause, ML_CAUSE_GPU_NOT_VISIBLE);
	ml_verdict_free(v);

	/* Without any GPU, a missing driver library is just a skip. */
	v = verdict_for(&r, NULL, 0, 0, "", false);
	assert_int_equal(v->status, ML_CHECK_PASS);
	assert_int_equal(v->checks[0].status, ML_CHECK_SKIP);
	assert_int_equal(ml_verdict_exit_code(v), 0);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_802_on_an_nvswitch_system_names_the_fabric_manager(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("hgx-h100-no-fabric-manager.json", NULL);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	assert_string_equal(r.step, "cuInit");
	assert_int_equal(r.cuda_error, 802);
	assert_string_equal(r.cuda_error_name, "CUDA_ERROR_SYSTEM_NOT_READY");
	assert_non_null(strstr(r.detail, "CUDA_ERROR_SYSTEM_NOT_READY (802): system not yet "
	                                 "initialized"));
	ml_verdict *v = verdict_for(&r, "NVIDIA H100 80GB HBM3", 9, 0, "550.54.15", false);
	const ml_check *k = &v->checks[0];
	assert_string_equal(k->name, "cuda_driver");
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_SYSTEM_NOT_READY);
	assert_non_null(strstr(k->remedy, "Fabric Manager of exactly the driver's version "
	                                  "(550.54.15; Debian/Ubuntu: nvidia-fabricmanager-550)"));
	assert_non_null(strstr(k->remedy, "sudo systemctl enable --now nvidia-fabricmanager"));
	/* The detected GPU CUDA could not reach says why, not "MIG". */
	k = gpu_check(v, 0, "gpu_visible");
	assert_int_equal(k->cause, ML_CAUSE_SYSTEM_NOT_READY);
	assert_non_null(strstr(k->detail, "cuda_driver failed (system_not_ready)"));
	assert_non_null(strstr(k->remedy, "nvidia-fabricmanager"));
	assert_int_equal(v->cause, ML_CAUSE_SYSTEM_NOT_READY);
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_46_on_an_exclusive_process_gpu_is_busy(void **state)
{
	(void)state;
	ml_smoke_result r = run_on("a100-exclusive-busy.json", NULL);
	assert_int_equal(r.status, ML_CHECK_FAIL);
	const ml_smoke_gpu *g = &r.gpus[0];
	assert_string_equal(g->step, "cuDevicePrimaryCtxRetain");
	assert_int_equal(g->cuda_error, 46);
	assert_string_equal(g->cuda_error_name, "CUDA_ERROR_DEVICE_UNAVAILABLE");
	assert_non_null(strstr(g->detail, "busy or unavailable"));
	ml_verdict *v = verdict_for(&r, "NVIDIA A100-SXM4-80GB", 8, 0, "570.124.06", false);
	const ml_check *k = gpu_check(v, 0, "driver_saxpy");
	assert_int_equal(k->cause, ML_CAUSE_GPU_BUSY);
	assert_non_null(strstr(k->remedy, "exclusive-process"));
	assert_non_null(strstr(k->remedy, "sudo nvidia-smi -i 0 -c DEFAULT"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

static void test_verdict_mig_gpu_without_a_mig_device_names_mig(void **state)
{
	(void)state;
	/* NVML lists the A100; the CUDA driver enumerates no device. */
	ml_smoke_result r = run_on("a100-mig-no-instance.json", NULL);
	assert_int_equal(r.status, ML_CHECK_SKIP);
	assert_int_equal(r.n_gpus, 0);
	assert_non_null(strstr(r.detail, "no CUDA device"));
	ml_verdict *v = verdict_under("tests/fixtures/sysroot/nvidia-devices", &r,
	                              "NVIDIA A100-SXM4-80GB", 8, 0, "570.124.06", false);
	const ml_check *k = &v->checks[0];
	assert_int_equal(k->status, ML_CHECK_FAIL);
	assert_int_equal(k->cause, ML_CAUSE_GPU_NOT_VISIBLE);
	assert_non_null(strstr(k->detail, "NVIDIA A100-SXM4-80GB (sm_80) supports MIG"));
	assert_non_null(strstr(k->remedy, "nvidia-smi -L"));
	assert_non_null(strstr(k->remedy, "CUDA_VISIBLE_DEVICES to its MIG-... UUID"));
	assert_int_equal(ml_verdict_exit_code(v), 5);
	ml_verdict_free(v);
	/* A GPU without MIG (8.6) gets no such guess. */
	v = verdict_under("tests/fixtures/sysroot/nvidia-devices", &r, "NVIDIA GeForce RTX 3090", 8,
	                  6, "570.124.06", false);
	assert_null(strstr(v->checks[0].detail, "MIG"));
	assert_null(strstr(v->checks[0].remedy, "MIG"));
	ml_verdict_free(v);
	ml_smoke_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_healthy_gpus_pass_with_exact_results),
	        cmocka_unit_test(test_default_size_is_four_mebi_floats),
	        cmocka_unit_test(test_image_without_sm120_or_ptx_gives_no_binary_for_gpu),
	        cmocka_unit_test(test_ptx_images_load_and_a_missing_kernel_is_named),
	        cmocka_unit_test(test_launch_failure_is_named_with_its_code),
	        cmocka_unit_test(test_wrong_results_fail_with_the_max_error),
	        cmocka_unit_test(test_insufficient_driver_is_reported_by_name_and_number),
	        cmocka_unit_test(test_missing_library_is_skipped_with_the_reason),
	        cmocka_unit_test(test_no_driver_and_no_device_are_skipped),
	        cmocka_unit_test(test_library_without_the_driver_api_is_a_failure_not_a_crash),
	        cmocka_unit_test(test_symbol_answering_not_found_fails_that_step),
	        cmocka_unit_test(test_newer_gpu_jit_compiles_the_ptx),
	        cmocka_unit_test(test_old_driver_falls_back_to_the_portable_ptx),
	        cmocka_unit_test(test_module_load_error_names_both_attempts),
	        cmocka_unit_test(test_device_memory_exhaustion_is_out_of_memory),
	        cmocka_unit_test(test_each_gpu_is_judged_on_its_own),
	        cmocka_unit_test(test_steps_are_reported_as_they_run),
	        cmocka_unit_test(test_options_out_of_range_are_usage_errors),
	        cmocka_unit_test(test_json_carries_error_names_and_timings),
	        cmocka_unit_test(test_own_error_table_names_the_facts_codes),
	        cmocka_unit_test(test_embedded_kernel_is_a_fatbin_with_portable_ptx),
	        cmocka_unit_test(test_embedded_kernel_files_are_the_committed_data_files),
	        cmocka_unit_test(test_kernel_description_names_the_code_in_the_image),
	        cmocka_unit_test(test_verdict_passes_healthy_gpus),
	        cmocka_unit_test(test_verdict_insufficient_driver_names_the_minimum_and_exits_6),
	        cmocka_unit_test(test_verdict_stub_library_is_a_broken_driver),
	        cmocka_unit_test(test_verdict_names_gpu_faults_wrong_results_and_oom),
	        cmocka_unit_test(test_verdict_no_binary_for_gpu_is_no_kernel_image),
	        cmocka_unit_test(test_verdict_ptx_fallback_warns_without_failing),
	        cmocka_unit_test(test_verdict_missing_library_on_wsl_names_the_driver_libraries),
	        cmocka_unit_test(test_verdict_802_on_an_nvswitch_system_names_the_fabric_manager),
	        cmocka_unit_test(test_verdict_46_on_an_exclusive_process_gpu_is_busy),
	        cmocka_unit_test(test_verdict_mig_gpu_without_a_mig_device_names_mig),
	};
	return cmocka_run_group_tests(tests, find_shim, NULL);
}
