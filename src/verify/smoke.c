/*
 * smoke.c - the driver-level smoke test: without Python, does GPU code run
 * on every GPU of this machine? Loads the CUDA driver library with dlopen,
 * and on each device retains the primary context, loads the embedded SAXPY
 * kernel (a fatbin with SASS for sm_75 ... sm_121 and PTX, falling back to
 * a portable PTX when the driver refuses the fatbin), launches it over a
 * few million floats, copies the result back and compares it exactly with
 * the host's, and times each step. Every CUresult other than CUDA_SUCCESS
 * is recorded with its call and name (CUDA Driver API reference: cuInit,
 * cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
 * cuDeviceGetAttribute, cuDevicePrimaryCtxRetain, cuCtxSetCurrent,
 * cuModuleLoadDataEx, cuModuleGetFunction, cuMemAlloc_v2,
 * cuMemcpyHtoD_v2, cuLaunchKernel, cuCtxSynchronize, cuMemcpyDtoH_v2,
 * cuMemFree_v2, cuModuleUnload, cuDevicePrimaryCtxRelease_v2,
 * cuGetErrorName, cuGetErrorString). A missing library, symbol or device
 * is a result, never a crash.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* The driver API's types, with the real ABI (cuda.h, 64-bit). */
typedef int cu_result;                   /* CUresult */
typedef int cu_device;                   /* CUdevice */
typedef struct cu_ctx *cu_context;       /* CUcontext */
typedef struct cu_mod *cu_module;        /* CUmodule */
typedef struct cu_fn *cu_function;       /* CUfunction */
typedef struct cu_st *cu_stream;         /* CUstream */
typedef unsigned long long cu_deviceptr; /* CUdeviceptr_v2 */

enum {
	CU_SUCCESS = 0,
	CU_ERROR_NO_DEVICE = 100,
	CU_ERROR_INVALID_IMAGE = 200,
	CU_ERROR_NO_BINARY_FOR_GPU = 209,
	CU_ERROR_INVALID_PTX = 218,
	CU_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CU_ATTR_CC_MAJOR = 75, /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
	CU_ATTR_CC_MINOR = 76,
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

#define DEFAULT_FLOATS     ((size_t)4 << 20)
#define MAX_FLOATS         ((size_t)1 << 28)
#define DEFAULT_ITERATIONS 10
#define DEFAULT_BLOCK      256
#define MAX_DEVICES        64
#define MAX_GRID           65535u /* blocks; the kernel is grid-stride */
#define JIT_LOG_BYTES      4096
#define SAXPY_A            2.0f

/* Names of the CUresult codes mlsetup can meet (cuda.h "cudaError_enum";
 * docs/nvidia-and-python-facts.md, "CUDA driver API"), for drivers whose cuGetErrorName is missing.
 */
static const struct {
	int code;
	const char *name;
} cu_errors[] = {
        {0, "CUDA_SUCCESS"},
        {1, "CUDA_ERROR_INVALID_VALUE"},
        {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {3, "CUDA_ERROR_NOT_INITIALIZED"},
        {4, "CUDA_ERROR_DEINITIALIZED"},
        {34, "CUDA_ERROR_STUB_LIBRARY"},
        {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
        {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
        {100, "CUDA_ERROR_NO_DEVICE"},
        {101, "CUDA_ERROR_INVALID_DEVICE"},
        {200, "CUDA_ERROR_INVALID_IMAGE"},
        {201, "CUDA_ERROR_INVALID_CONTEXT"},
        {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
        {214, "CUDA_ERROR_ECC_UNCORRECTABLE"},
        {218, "CUDA_ERROR_INVALID_PTX"},
        {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {300, "CUDA_ERROR_INVALID_SOURCE"},
        {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"},
        {304, "CUDA_ERROR_OPERATING_SYSTEM"},
        {400, "CUDA_ERROR_INVALID_HANDLE"},
        {500, "CUDA_ERROR_NOT_FOUND"},
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
        {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
        {719, "CUDA_ERROR_LAUNCH_FAILED"},
        {801, "CUDA_ERROR_NOT_SUPPORTED"},
        {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
        {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
        {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
        {999, "CUDA_ERROR_UNKNOWN"},
};

const char *ml_cuda_error_name(int code)
{
	for (size_t i = 0; i < sizeof(cu_errors) / sizeof(cu_errors[0]); i++) {
		if (cu_errors[i].code == code)
			return cu_errors[i].name;
	}
	return NULL;
}

const char *ml_check_status_name(ml_check_status s)
{
	switch (s) {
	case ML_CHECK_PASS:
		return "pass";
	case ML_CHECK_FAIL:
		return "fail";
	case ML_CHECK_SKIP:
		return "skip";
	case ML_CHECK_WARN:
		return "warn";
	}
	return "fail";
}

/* The driver entry points, resolved with dlsym. */
struct cu_api {
	cu_result (*init)(unsigned int);
	cu_result (*driver_version)(int *);
	cu_result (*error_name)(cu_result, const char **);
	cu_result (*error_string)(cu_result, const char **);
	cu_result (*device_count)(int *);
	cu_result (*device_get)(cu_device *, int);
	cu_result (*device_name)(char *, int, cu_device);
	cu_result (*device_attr)(int *, int, cu_device);
	cu_result (*ctx_retain)(cu_context *, cu_device);
	cu_result (*ctx_release)(cu_device);
	cu_result (*ctx_set_current)(cu_context);
	cu_result (*ctx_synchronize)(void);
	cu_result (*module_load_ex)(cu_module *, const void *, unsigned int, int *, void **);
	cu_result (*module_load)(cu_module *, const void *);
	cu_result (*module_function)(cu_function *, cu_module, const char *);
	cu_result (*module_unload)(cu_module);
	cu_result (*mem_alloc)(cu_deviceptr *, size_t);
	cu_result (*mem_free)(cu_deviceptr);
	cu_result (*htod)(cu_deviceptr, const void *, size_t);
	cu_result (*dtoh)(void *, cu_deviceptr, size_t);
	cu_result (*launch)(cu_function, unsigned int, unsigned int, unsigned int, unsigned int,
	                    unsigned int, unsigned int, unsigned int, cu_stream, void **, void **);
};

/* Resolves the entry points; returns the name of the first required one
 * that is missing, or NULL. */
static const char *load_api(struct cu_api *a, void *lib)
{
	memset(a, 0, sizeof(*a));
#define SYM(field, name) (a->field = (__typeof__(a->field))ml_os_dlsym(lib, name))
	SYM(init, "cuInit");
	SYM(driver_version, "cuDriverGetVersion");
	SYM(error_name, "cuGetErrorName");
	SYM(error_string, "cuGetErrorString");
	SYM(device_count, "cuDeviceGetCount");
	SYM(device_get, "cuDeviceGet");
	SYM(device_name, "cuDeviceGetName");
	SYM(device_attr, "cuDeviceGetAttribute");
	SYM(ctx_retain, "cuDevicePrimaryCtxRetain");
	if (!SYM(ctx_release, "cuDevicePrimaryCtxRelease_v2"))
		SYM(ctx_release, "cuDevicePrimaryCtxRelease");
	SYM(ctx_set_current, "cuCtxSetCurrent");
	SYM(ctx_synchronize, "cuCtxSynchronize");
	SYM(module_load_ex, "cuModuleLoadDataEx");
	SYM(module_load, "cuModuleLoadData");
	SYM(module_function, "cuModuleGetFunction");
	SYM(module_unload, "cuModuleUnload");
	SYM(mem_alloc, "cuMemAlloc_v2");
	SYM(mem_free, "cuMemFree_v2");
	SYM(htod, "cuMemcpyHtoD_v2");
	SYM(dtoh, "cuMemcpyDtoH_v2");
	SYM(launch, "cuLaunchKernel");
#undef SYM
	const struct {
		const char *name;
		bool present;
	} required[] = {
	        {"cuInit", a->init},
	        {"cuDeviceGetCount", a->device_count},
	        {"cuDeviceGet", a->device_get},
	        {"cuDeviceGetAttribute", a->device_attr},
	        {"cuDevicePrimaryCtxRetain", a->ctx_retain},
	        {"cuDevicePrimaryCtxRelease_v2", a->ctx_release},
	        {"cuCtxSetCurrent", a->ctx_set_current},
	        {"cuCtxSynchronize", a->ctx_synchronize},
	        {"cuModuleLoadDataEx", a->module_load_ex || a->module_load},
	        {"cuModuleGetFunction", a->module_function},
	        {"cuModuleUnload", a->module_unload},
	        {"cuMemAlloc_v2", a->mem_alloc},
	        {"cuMemFree_v2", a->mem_free},
	        {"cuMemcpyHtoD_v2", a->htod},
	        {"cuMemcpyDtoH_v2", a->dtoh},
	        {"cuLaunchKernel", a->launch},
	};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!required[i].present)
			return required[i].name;
	}
	return NULL;
}

/* Writes the CUresult's name: the driver's cuGetErrorName, else our table,
 * else "CUresult N". */
static void error_name(char *dst, size_t sz, const struct cu_api *a, cu_result rc)
{
	const char *s = NULL;
	if (a->error_name && a->error_name(rc, &s) == CU_SUCCESS && s && *s)
		ml_strlcpy(dst, s, sz);
	else if ((s = ml_cuda_error_name(rc)))
		ml_strlcpy(dst, s, sz);
	else
		snprintf(dst, sz, "CUresult %d", rc);
}

/* The driver's description of rc (cuGetErrorString), or "". Static. */
static const char *error_text(const struct cu_api *a, cu_result rc)
{
	const char *s = NULL;
	if (a->error_string && a->error_string(rc, &s) == CU_SUCCESS && s)
		return s;
	return "";
}

/* "cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER (35): <text>" into dst. */
static void describe(char *dst, size_t sz, const struct cu_api *a, const char *step, cu_result rc)
{
	char name[64];
	error_name(name, sizeof(name), a, rc);
	const char *text = error_text(a, rc);
	snprintf(dst, sz, "%s: %s (%d)%s%s", step, name, rc, *text ? ": " : "", text);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Per-GPU run state. */
struct run {
	const struct cu_api *api;
	ml_smoke_gpu *g;
	int oom; /* ML_ENOMEM once recording failed */
};

/* Appends rc to the GPU's error list. */
static void record(struct run *r, const char *step, cu_result rc)
{
	ml_smoke_gpu *g = r->g;
	ml_cuda_error *grown = realloc(g->errors, (g->n_errors + 1) * sizeof(*grown));
	if (!grown) {
		r->oom = ML_ENOMEM;
		return;
	}
	g->errors = grown;
	ml_cuda_error *e = &g->errors[g->n_errors++];
	memset(e, 0, sizeof(*e));
	ml_strlcpy(e->step, step, sizeof(e->step));
	e->code = rc;
	error_name(e->name, sizeof(e->name), r->api, rc);
}

/* Marks the GPU failed at step with rc, unless it already failed. */
static void fail_at(struct run *r, const char *step, cu_result rc)
{
	ml_smoke_gpu *g = r->g;
	if (g->status == ML_CHECK_FAIL)
		return;
	g->status = ML_CHECK_FAIL;
	ml_strlcpy(g->step, step, sizeof(g->step));
	g->cuda_error = rc;
	error_name(g->cuda_error_name, sizeof(g->cuda_error_name), r->api, rc);
	describe(g->detail, sizeof(g->detail), r->api, step, rc);
}

/* Records rc; a failure fails the GPU (the first one names the step).
 * Returns true when rc is CUDA_SUCCESS. */
static bool check(struct run *r, const char *step, cu_result rc)
{
	if (rc == CU_SUCCESS)
		return true;
	record(r, step, rc);
	fail_at(r, step, rc);
	return false;
}

/* Appends a JIT log (len bytes, or up to its NUL) to g->jit_log. */
static void add_log(struct run *r, const char *what, const char *log, size_t cap)
{
	size_t n = strnlen(log, cap);
	while (n && (log[n - 1] == '\n' || log[n - 1] == ' '))
		n--;
	if (!n)
		return;
	ml_buf b = ML_BUF_INIT;
	if ((r->g->jit_log && ml_buf_printf(&b, "%s\n", r->g->jit_log)) ||
	    ml_buf_printf(&b, "%s: %.*s", what, (int)n, log)) {
		ml_buf_release(&b);
		r->oom = ML_ENOMEM;
		return;
	}
	free(r->g->jit_log);
	r->g->jit_log = ml_buf_detach(&b);
	if (!r->g->jit_log)
		r->oom = ML_ENOMEM;
}

/* Loads image with cuModuleLoadDataEx, capturing the JIT info and error
 * logs (options 3-6), or with cuModuleLoadData when only that exists.
 * Records a failure but does not fail the GPU; returns the CUresult. */
static cu_result load_module(struct run *r, cu_module *mod, const void *image, const char *what)
{
	const struct cu_api *a = r->api;
	cu_result rc;
	const char *step = a->module_load_ex ? "cuModuleLoadDataEx" : "cuModuleLoadData";
	if (a->module_load_ex) {
		char info[JIT_LOG_BYTES] = "", error[JIT_LOG_BYTES] = "";
		int opts[4] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
		               CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
		void *vals[4] = {info, (void *)(uintptr_t)sizeof(info), error,
		                 (void *)(uintptr_t)sizeof(error)};
		rc = a->module_load_ex(mod, image, 4, opts, vals);
		char label[96];
		snprintf(label, sizeof(label), "%s info", what);
		add_log(r, label, info, sizeof(info));
		snprintf(label, sizeof(label), "%s error", what);
		add_log(r, label, error, sizeof(error));
	} else {
		rc = a->module_load(mod, image);
	}
	if (rc != CU_SUCCESS)
		record(r, step, rc);
	return rc;
}

/* The driver refused the code object itself (not memory, not context):
 * another one may still load. */
static bool image_refused(cu_result rc)
{
	return rc == CU_ERROR_INVALID_IMAGE || rc == CU_ERROR_NO_BINARY_FOR_GPU ||
	       rc == CU_ERROR_INVALID_PTX || rc == CU_ERROR_UNSUPPORTED_PTX_VERSION;
}

/* Host buffers shared by every GPU: x, y's start values, the expected y,
 * and y as copied back. */
struct host {
	size_t n;
	float *x, *y0, *want, *got;
};

static int host_init(struct host *h, size_t n, int launches)
{
	memset(h, 0, sizeof(*h));
	h->n = n;
	h->x = malloc(n * sizeof(float));
	h->y0 = malloc(n * sizeof(float));
	h->want = malloc(n * sizeof(float));
	h->got = malloc(n * sizeof(float));
	if (!h->x || !h->y0 || !h->want || !h->got)
		return ML_ENOMEM;
	/* Small integers: every intermediate value is an integer below 2^24,
	 * so the GPU's fused multiply-add and the host agree exactly. */
	for (size_t i = 0; i < n; i++) {
		h->x[i] = (float)(i % 64);
		h->y0[i] = (float)((int)(i % 37) - 18);
		float y = h->y0[i];
		for (int k = 0; k < launches; k++)
			y = SAXPY_A * h->x[i] + y;
		h->want[i] = y;
	}
	return 0;
}

static void host_release(struct host *h)
{
	free(h->x);
	free(h->y0);
	free(h->want);
	free(h->got);
	memset(h, 0, sizeof(*h));
}

/* Compares h->got with h->want; fails the GPU on any difference. */
static void compare(struct run *r, const struct host *h)
{
	ml_smoke_gpu *g = r->g;
	size_t worst = 0;
	g->max_abs_error = 0;
	g->mismatches = 0;
	for (size_t i = 0; i < h->n; i++) {
		float got = h->got[i], want = h->want[i];
		if (got == want)
			continue;
		double e = isnan(got) ? INFINITY : fabs((double)got - (double)want);
		if (g->mismatches++ == 0 || e > g->max_abs_error) {
			g->max_abs_error = e;
			worst = i;
		}
	}
	if (!g->mismatches || g->status == ML_CHECK_FAIL)
		return;
	g->status = ML_CHECK_FAIL;
	ml_strlcpy(g->step, "compare", sizeof(g->step));
	snprintf(g->detail, sizeof(g->detail),
	         "wrong results: %zu of %zu floats differ from the host's SAXPY, max abs error "
	         "%g (element %zu: got %g, want %g)",
	         g->mismatches, h->n, g->max_abs_error, worst, (double)h->got[worst],
	         (double)h->want[worst]);
}

/* Loads image and looks saxpy up in it: with lazy loading (the default
 * since CUDA 12.2) the driver may refuse the code at cuModuleGetFunction
 * rather than at the load. Records a failure without failing the GPU and
 * sets *step to the call that gave it; returns its CUresult. On failure
 * nothing stays loaded. */
static cu_result try_kernel(struct run *r, cu_module *mod, cu_function *fn, const void *image,
                            const char *what, const char **step)
{
	const struct cu_api *a = r->api;
	*step = a->module_load_ex ? "cuModuleLoadDataEx" : "cuModuleLoadData";
	*mod = NULL;
	cu_result rc = load_module(r, mod, image, what);
	if (rc != CU_SUCCESS) {
		*mod = NULL;
		return rc;
	}
	rc = a->module_function(fn, *mod, "saxpy");
	if (rc != CU_SUCCESS) {
		*step = "cuModuleGetFunction";
		record(r, *step, rc);
		cu_result u = a->module_unload(*mod);
		if (u != CU_SUCCESS)
			record(r, "cuModuleUnload", u);
		*mod = NULL;
	}
	return rc;
}

/* Loads the kernel: from the caller's image, or from the embedded fatbin
 * and, when the driver refuses that, from the portable PTX. Fails the GPU
 * when nothing loads. Returns true with *mod and *fn set on success. */
static bool load_kernel(struct run *r, cu_module *mod, cu_function *fn, const ml_smoke_opts *o)
{
	const void *image = o->image ? o->image : (const void *)ml_smoke_kernel_image(NULL);
	const char *step, *step2;
	double t0 = now_ms();
	cu_result rc = try_kernel(r, mod, fn, image, o->image ? "image" : "fatbin", &step);
	if (rc == CU_SUCCESS) {
		r->g->load_ms = now_ms() - t0;
		return true;
	}
	if (o->image || !image_refused(rc)) {
		fail_at(r, step, rc);
		return false;
	}
	t0 = now_ms();
	cu_result rc2 = try_kernel(r, mod, fn, ml_smoke_kernel_ptx(), "portable PTX", &step2);
	if (rc2 == CU_SUCCESS) {
		r->g->load_ms = now_ms() - t0;
		r->g->ptx_fallback = true;
		return true;
	}
	fail_at(r, step, rc);
	char name[64];
	error_name(name, sizeof(name), r->api, rc2);
	size_t len = strlen(r->g->detail);
	snprintf(r->g->detail + len, sizeof(r->g->detail) - len,
	         "; the portable PTX fallback failed too: %s: %s (%d)", step2, name, rc2);
	return false;
}

/* Runs SAXPY on CUDA device ordinal `index`; fills r->g. */
static void run_gpu(struct run *r, int index, const struct host *h, const ml_smoke_opts *o,
                    int iterations, int block)
{
	const struct cu_api *a = r->api;
	ml_smoke_gpu *g = r->g;
	double t_start = now_ms();
	g->index = index;
	g->cc_major = g->cc_minor = -1;
	g->status = ML_CHECK_PASS;
	g->n_floats = h->n;
	g->max_abs_error = -1;

	cu_device dev = 0;
	if (!check(r, "cuDeviceGet", a->device_get(&dev, index)))
		return;
	if (a->device_name) {
		char name[sizeof(g->name)] = "";
		cu_result rc = a->device_name(name, (int)sizeof(name) - 1, dev);
		if (rc == CU_SUCCESS)
			ml_strlcpy(g->name, name, sizeof(g->name));
		else
			record(r, "cuDeviceGetName", rc);
	}
	int major = -1, minor = -1;
	cu_result rc = a->device_attr(&major, CU_ATTR_CC_MAJOR, dev);
	if (rc == CU_SUCCESS)
		rc = a->device_attr(&minor, CU_ATTR_CC_MINOR, dev);
	if (rc == CU_SUCCESS && major >= 0 && minor >= 0) {
		g->cc_major = major;
		g->cc_minor = minor;
	} else if (rc != CU_SUCCESS) {
		record(r, "cuDeviceGetAttribute", rc);
	}

	cu_context ctx = NULL;
	if (!check(r, "cuDevicePrimaryCtxRetain", a->ctx_retain(&ctx, dev)))
		goto done;
	cu_module mod = NULL;
	cu_deviceptr dx = 0, dy = 0;
	if (!check(r, "cuCtxSetCurrent", a->ctx_set_current(ctx)))
		goto release;
	cu_function fn = NULL;
	if (!load_kernel(r, &mod, &fn, o))
		goto unset;
	size_t bytes = h->n * sizeof(float);
	if (!check(r, "cuMemAlloc_v2", a->mem_alloc(&dx, bytes)) ||
	    !check(r, "cuMemAlloc_v2", a->mem_alloc(&dy, bytes)))
		goto free_mem;

	double t0 = now_ms();
	if (!check(r, "cuMemcpyHtoD_v2", a->htod(dx, h->x, bytes)) ||
	    !check(r, "cuMemcpyHtoD_v2", a->htod(dy, h->y0, bytes)))
		goto free_mem;
	g->h2d_ms = now_ms() - t0;

	int n = (int)h->n;
	float alpha = SAXPY_A;
	void *params[] = {&n, &alpha, &dx, &dy};
	unsigned int blocks = (unsigned int)((h->n + (size_t)block - 1) / (size_t)block);
	if (blocks > MAX_GRID)
		blocks = MAX_GRID;
	/* One warm-up launch, then `iterations` timed ones. */
	double t_kernel = 0;
	for (int it = 0; it <= iterations; it++) {
		t0 = now_ms();
		if (!check(r, "cuLaunchKernel",
		           a->launch(fn, blocks, 1, 1, (unsigned int)block, 1, 1, 0, NULL, params,
		                     NULL)) ||
		    !check(r, "cuCtxSynchronize", a->ctx_synchronize()))
			goto free_mem;
		if (it > 0)
			t_kernel += now_ms() - t0;
	}
	g->kernel_ms = t_kernel / iterations;
	if (g->kernel_ms > 0)
		g->gbps = 12.0 * (double)h->n / (g->kernel_ms * 1e6);

	t0 = now_ms();
	if (!check(r, "cuMemcpyDtoH_v2", a->dtoh(h->got, dy, bytes)))
		goto free_mem;
	g->d2h_ms = now_ms() - t0;
	compare(r, h);

free_mem:
	if (dy)
		check(r, "cuMemFree_v2", a->mem_free(dy));
	if (dx)
		check(r, "cuMemFree_v2", a->mem_free(dx));
	check(r, "cuModuleUnload", a->module_unload(mod));
unset:
	check(r, "cuCtxSetCurrent", a->ctx_set_current(NULL));
release:
	check(r, "cuDevicePrimaryCtxRelease_v2", a->ctx_release(dev));
done:
	g->total_ms = now_ms() - t_start;
	if (g->status != ML_CHECK_PASS)
		return;
	if (g->ptx_fallback)
		g->status = ML_CHECK_WARN;
	snprintf(g->detail, sizeof(g->detail),
	         "%zu floats exact; kernel %.3f ms (%.1f GB/s), copies %.2f ms to and %.2f ms from "
	         "the device, module load %.2f ms%s",
	         h->n, g->kernel_ms, g->gbps, g->h2d_ms, g->d2h_ms, g->load_ms,
	         g->ptx_fallback ? "; the driver refused the fatbin, the portable PTX was "
	                           "JIT-compiled instead"
	                         : "");
}

/* Sets a failure (or skip) that happened before any GPU. */
static void fail_early(ml_smoke_result *res, const struct cu_api *a, ml_check_status st,
                       const char *step, cu_result rc)
{
	res->status = st;
	ml_strlcpy(res->step, step, sizeof(res->step));
	res->cuda_error = rc;
	error_name(res->cuda_error_name, sizeof(res->cuda_error_name), a, rc);
	describe(res->detail, sizeof(res->detail), a, step, rc);
}

static int check_opts(const ml_smoke_opts *o, ml_err *err)
{
	if (o->n_floats > MAX_FLOATS)
		return ml_err_set(err, ML_EUSAGE, "smoke test size %zu floats is above %zu",
		                  o->n_floats, MAX_FLOATS);
	if (o->iterations < 0 || o->iterations > 1000)
		return ml_err_set(err, ML_EUSAGE, "smoke test iterations %d not in 1..1000",
		                  o->iterations);
	if (o->block_size && (o->block_size < 32 || o->block_size > 1024))
		return ml_err_set(err, ML_EUSAGE, "smoke test block size %d not in 32..1024",
		                  o->block_size);
	return 0;
}

/* Tells o->on_step that a step begins (sets *t0) or ended with st. */
static void report_step(const ml_smoke_opts *o, const char *name, double *t0, bool done,
                        ml_check_status st)
{
	if (!o->on_step)
		return;
	if (!done)
		*t0 = now_ms();
	ml_verify_step s = {name, done, st, done ? (now_ms() - *t0) / 1000.0 : 0};
	o->on_step(&s, o->step_data);
}

int ml_smoke_driver(ml_smoke_result *out, const ml_smoke_opts *opts, ml_err *err)
{
#ifdef _WIN32
	static const char *const default_names[] = {"nvcuda.dll", NULL}; /* System32 only */
#else
	static const char *const default_names[] = {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1",
	                                            NULL};
#endif
	ml_smoke_opts o = ML_SMOKE_OPTS_INIT;
	if (opts)
		o = *opts;
	int rc = check_opts(&o, err);
	if (rc)
		return rc;
	size_t n = o.n_floats ? o.n_floats : DEFAULT_FLOATS;
	int iterations = o.iterations ? o.iterations : DEFAULT_ITERATIONS;
	int block = o.block_size ? o.block_size : DEFAULT_BLOCK;

	ml_smoke_result res;
	memset(&res, 0, sizeof(res));
	ml_strlcpy(res.kernel, o.image ? "caller's image" : ml_smoke_kernel_desc(),
	           sizeof(res.kernel));
	struct cu_api api;
	memset(&api, 0, sizeof(api));
	struct host h;
	memset(&h, 0, sizeof(h));

	const char *const *names = o.lib_names ? o.lib_names : default_names;
	const char *start_step = "starting the CUDA driver";
	double t0 = 0;
	report_step(&o, start_step, &t0, false, ML_CHECK_PASS);
	bool starting = true;
	ml_err lerr = ML_ERR_INIT;
	void *lib = ml_os_dlopen(names, res.library, sizeof(res.library), &lerr);
	if (!lib) {
		res.status = ML_CHECK_SKIP;
		ml_strlcpy(res.step, "dlopen", sizeof(res.step));
		snprintf(res.detail, sizeof(res.detail), "%.200s not loadable: %.280s", names[0],
		         lerr.msg);
		goto done;
	}
	const char *missing = load_api(&api, lib);
	if (missing) {
		res.status = ML_CHECK_FAIL;
		ml_strlcpy(res.step, "dlsym", sizeof(res.step));
		ml_strlcpy(res.missing_symbol, missing, sizeof(res.missing_symbol));
		snprintf(res.detail, sizeof(res.detail), "%s: required symbol %s missing",
		         res.library, missing);
		goto done;
	}
	cu_result cr = api.init(0);
	if (cr != CU_SUCCESS) {
		fail_early(&res, &api, cr == CU_ERROR_NO_DEVICE ? ML_CHECK_SKIP : ML_CHECK_FAIL,
		           "cuInit", cr);
		goto done;
	}
	if (api.driver_version && api.driver_version(&res.cuda_version) != CU_SUCCESS)
		res.cuda_version = 0;
	int count = 0;
	cr = api.device_count(&count);
	if (cr != CU_SUCCESS) {
		fail_early(&res, &api, ML_CHECK_FAIL, "cuDeviceGetCount", cr);
		goto done;
	}
	if (count <= 0) {
		res.status = ML_CHECK_SKIP;
		snprintf(res.detail, sizeof(res.detail), "%s: no CUDA device", res.library);
		goto done;
	}
	if (count > MAX_DEVICES)
		count = MAX_DEVICES;
	res.gpus = calloc((size_t)count, sizeof(*res.gpus));
	if (!res.gpus || host_init(&h, n, iterations + 1)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory for the smoke test (%zu floats)", n);
		goto done;
	}
	res.n_gpus = (size_t)count;
	starting = false;
	report_step(&o, start_step, &t0, true, ML_CHECK_PASS);
	int passed = 0, warned = 0;
	for (int i = 0; i < count; i++) {
		struct run r = {&api, &res.gpus[i], 0};
		char name[40];
		snprintf(name, sizeof(name), "SAXPY on GPU %d", i);
		report_step(&o, name, &t0, false, ML_CHECK_PASS);
		run_gpu(&r, i, &h, &o, iterations, block);
		report_step(&o, name, &t0, true, r.oom ? ML_CHECK_FAIL : res.gpus[i].status);
		if (r.oom) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto done;
		}
		passed += res.gpus[i].status == ML_CHECK_PASS;
		warned += res.gpus[i].status == ML_CHECK_WARN;
	}
	res.status = passed + warned < count ? ML_CHECK_FAIL
	             : warned                ? ML_CHECK_WARN
	                                     : ML_CHECK_PASS;
	snprintf(res.detail, sizeof(res.detail), "%s: CUDA %d.%d, %d of %d GPU%s passed%s",
	         res.library, res.cuda_version / 1000, res.cuda_version % 1000 / 10,
	         passed + warned, count, count == 1 ? "" : "s",
	         warned ? " (some only through the portable PTX)" : "");
done:
	if (starting)
		report_step(&o, start_step, &t0, true, rc ? ML_CHECK_FAIL : res.status);
	host_release(&h);
	ml_os_dlclose(lib);
	if (rc) {
		ml_smoke_result_release(&res);
		return rc;
	}
	*out = res;
	return 0;
}

void ml_smoke_result_release(ml_smoke_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_gpus; i++) {
		free(r->gpus[i].jit_log);
		free(r->gpus[i].errors);
	}
	free(r->gpus);
	memset(r, 0, sizeof(*r));
}

/* --- JSON --------------------------------------------------------------- */

static void add_error(cJSON *j, const char *step, int code, const char *name)
{
	if (!step[0]) {
		cJSON_AddNullToObject(j, "error");
		return;
	}
	cJSON *e = cJSON_AddObjectToObject(j, "error");
	cJSON_AddStringToObject(e, "step", step);
	if (code || name[0]) {
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "name", name);
	}
}

static cJSON *gpu_json(const ml_smoke_gpu *g)
{
	cJSON *j = cJSON_CreateObject();
	char cc[16];
	cJSON_AddNumberToObject(j, "index", g->index);
	cJSON_AddStringToObject(j, "name", g->name);
	ml_cc_format(cc, sizeof(cc), g->cc_major, g->cc_minor);
	if (cc[0])
		cJSON_AddStringToObject(j, "cc", cc);
	else
		cJSON_AddNullToObject(j, "cc");
	cJSON_AddStringToObject(j, "status", ml_check_status_name(g->status));
	add_error(j, g->step, g->cuda_error, g->cuda_error_name);
	cJSON_AddStringToObject(j, "detail", g->detail);
	cJSON_AddBoolToObject(j, "ptx_fallback", g->ptx_fallback);
	cJSON_AddNumberToObject(j, "n_floats", (double)g->n_floats);
	cJSON_AddNumberToObject(j, "load_ms", g->load_ms);
	cJSON_AddNumberToObject(j, "h2d_ms", g->h2d_ms);
	cJSON_AddNumberToObject(j, "kernel_ms", g->kernel_ms);
	cJSON_AddNumberToObject(j, "d2h_ms", g->d2h_ms);
	cJSON_AddNumberToObject(j, "total_ms", g->total_ms);
	cJSON_AddNumberToObject(j, "gbps", g->gbps);
	if (g->max_abs_error >= 0 && isfinite(g->max_abs_error))
		cJSON_AddNumberToObject(j, "max_abs_error", g->max_abs_error);
	else
		cJSON_AddNullToObject(j, "max_abs_error");
	cJSON_AddNumberToObject(j, "mismatches", (double)g->mismatches);
	if (g->jit_log)
		cJSON_AddStringToObject(j, "jit_log", g->jit_log);
	else
		cJSON_AddNullToObject(j, "jit_log");
	cJSON *errs = cJSON_AddArrayToObject(j, "errors");
	for (size_t i = 0; errs && i < g->n_errors; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "step", g->errors[i].step);
		cJSON_AddNumberToObject(e, "code", g->errors[i].code);
		cJSON_AddStringToObject(e, "name", g->errors[i].name);
		cJSON_AddItemToArray(errs, e);
	}
	return j;
}

cJSON *ml_smoke_result_to_json(const ml_smoke_result *r)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "status", ml_check_status_name(r->status));
	cJSON_AddStringToObject(j, "library", r->library);
	cJSON_AddStringToObject(j, "kernel", r->kernel);
	if (r->cuda_version > 0)
		cJSON_AddNumberToObject(j, "cuda_version", r->cuda_version);
	else
		cJSON_AddNullToObject(j, "cuda_version");
	add_error(j, r->step, r->cuda_error, r->cuda_error_name);
	if (r->missing_symbol[0])
		cJSON_AddStringToObject(j, "missing_symbol", r->missing_symbol);
	cJSON_AddStringToObject(j, "detail", r->detail);
	cJSON *gpus = cJSON_AddArrayToObject(j, "gpus");
	for (size_t i = 0; gpus && i < r->n_gpus; i++)
		cJSON_AddItemToArray(gpus, gpu_json(&r->gpus[i]));
	if (!gpus) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* --- the embedded kernel ---------------------------------------------------- */

const unsigned char *ml_smoke_kernel_image(size_t *len)
{
	const ml_embedded_file *f = ml_embedded_require("saxpy.fatbin");
	if (len)
		*len = f->size;
	return (const unsigned char *)f->data;
}

const char *ml_smoke_kernel_ptx(void)
{
	return ml_embedded_require("saxpy_portable.ptx")->data;
}

const char *ml_smoke_kernel_desc(void)
{
	return ml_embedded_require("saxpy.desc")->data;
}
