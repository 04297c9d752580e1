/*
 * framework.c - the framework-level smoke test: does torch, as installed in
 * the environment, compute on this machine's GPUs? Runs the embedded script
 * (torch_smoke.py, embedded at build time) with the environment's
 * interpreter, finds its one JSON line in the output, and turns it into an
 * ml_framework_result: versions, availability, the arch list checked against
 * every GPU's compute capability with ml_arch_runs_on(), and each check with
 * its timing and, when it failed, a class from one table of the messages
 * torch gives ("no kernel image is available for execution on the device",
 * "The NVIDIA driver on your system is too old", ...). The script's step
 * lines are read while it runs and passed on (ml_framework_opts.on_step).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mlsetup/detect.h"
#include "mlsetup/plan.h"
#include "internal.h"

#define MARKER          "MLSETUP-TORCH-SMOKE-JSON: "
#define STEP_MARKER     "MLSETUP-TORCH-SMOKE-STEP: "
#define IMPORT_MARKER   "MLSETUP-TORCH-SMOKE-IMPORT: "
#define MAX_OUTPUT      (16u << 20) /* bytes kept of the interpreter's output */
#define TAIL_BYTES      4096
#define DEFAULT_TIMEOUT 600
#define DEFAULT_SIZE    2048
#define DEFAULT_ALLOC   256

/* torch's text when libcuda.so.1 cannot be loaded (see phrases[]). */
#define NO_DRIVER_PHRASE "Found no NVIDIA driver"

/* Known phrases in the error texts torch, the CUDA runtime and driver, and
 * Python print, first match wins (compared case-insensitively). Each entry
 * quotes the text it matches and says where that text comes from: torch's
 * c10/cuda/CUDAFunctions.cpp device_count_impl() and
 * device_count_ensure_non_zero() (CUDA initialization), c10/cuda/
 * CUDAException.h C10_CUDA_CHECK ("CUDA error: " + cudaGetErrorString()),
 * torch/cuda/__init__.py, and the CUDA runtime's cudaGetErrorString() and
 * the driver's cuGetErrorString() for the error codes named. */
static const struct {
	const char *phrase;
	ml_fw_class cls;
} phrases[] = {
        /* cudaErrorNoKernelImageForDevice (209) / CUDA_ERROR_NO_BINARY_FOR_GPU
         * (209): "no kernel image is available for execution on the
         * device", raised by torch as "CUDA error: no kernel image is
         * available for execution on the device" (C10_CUDA_CHECK). */
        {"no kernel image is available", ML_FW_NO_KERNEL_IMAGE},
        {"cudaErrorNoKernelImageForDevice", ML_FW_NO_KERNEL_IMAGE},
        {"CUDA_ERROR_NO_BINARY_FOR_GPU", ML_FW_NO_KERNEL_IMAGE},
        /* torch/cuda/__init__.py _check_capability(), a warning at CUDA
         * initialization: "<GPU> with CUDA capability sm_120 is not
         * compatible with the current PyTorch installation." */
        {"not compatible with the current PyTorch installation", ML_FW_NO_KERNEL_IMAGE},
        /* device_count_impl(), cudaErrorInsufficientDriver with a driver
         * present: "The NVIDIA driver on your system is too old (found
         * version 11040). Please update your GPU driver ..." (torch 1.x:
         * torch/cuda/__init__.py _check_driver()). */
        {"driver on your system is too old", ML_FW_DRIVER_TOO_OLD},
        /* cudaGetErrorString(cudaErrorInsufficientDriver = 35): "CUDA driver
         * version is insufficient for CUDA runtime version". */
        {"driver version is insufficient", ML_FW_DRIVER_TOO_OLD},
        {"cudaErrorInsufficientDriver", ML_FW_DRIVER_TOO_OLD},
        {"CUDA_ERROR_INSUFFICIENT_DRIVER", ML_FW_DRIVER_TOO_OLD},
        /* cudaGetErrorString(cudaErrorSystemNotReady = 802) and
         * cuGetErrorString(CUDA_ERROR_SYSTEM_NOT_READY): "system not yet
         * initialized"; torch's device_count_impl() reports it as
         * "Unexpected error from cudaGetDeviceCount(). Did you run some cuda
         * functions before calling NumCudaDevices() that might have already
         * set an error? Error 802: system not yet initialized" (a warning
         * from torch.cuda.is_available(), an error from torch.cuda.init()).
         * Seen on NVSwitch systems whose Fabric Manager is not running. */
        {"system not yet initialized", ML_FW_SYSTEM_NOT_READY},
        {"cudaErrorSystemNotReady", ML_FW_SYSTEM_NOT_READY},
        {"CUDA_ERROR_SYSTEM_NOT_READY", ML_FW_SYSTEM_NOT_READY},
        /* cudaGetErrorString(cudaErrorDevicesUnavailable = 46): "all
         * CUDA-capable devices are busy or unavailable" (before CUDA 10:
         * "CUDA-capable device(s) is/are busy or unavailable", which is also
         * the driver's text for CUDA_ERROR_DEVICE_UNAVAILABLE = 46); torch:
         * "CUDA error: all CUDA-capable devices are busy or unavailable".
         * cuda.h: devices in CU_COMPUTEMODE_EXCLUSIVE_PROCESS or
         * CU_COMPUTEMODE_PROHIBITED. */
        {"busy or unavailable", ML_FW_DEVICES_BUSY},
        {"cudaErrorDevicesUnavailable", ML_FW_DEVICES_BUSY},
        {"CUDA_ERROR_DEVICE_UNAVAILABLE", ML_FW_DEVICES_BUSY},
        /* torch.cuda.OutOfMemoryError: "CUDA out of memory. Tried to
         * allocate ..." (c10/cuda/CUDACachingAllocator.cpp);
         * cudaGetErrorString(cudaErrorMemoryAllocation = 2): "out of
         * memory"; cuBLAS handle or workspace allocation. */
        {"out of memory", ML_FW_OOM},
        {"OutOfMemoryError", ML_FW_OOM},
        {"CUBLAS_STATUS_ALLOC_FAILED", ML_FW_OOM},
        /* torch/cuda/__init__.py _lazy_init(): "Torch not compiled with CUDA
         * enabled" (an AssertionError). */
        {"Torch not compiled with CUDA enabled", ML_FW_CPU_ONLY_BUILD},
        /* device_count_ensure_non_zero(): "No CUDA GPUs are available" -
         * a driver, but no device CUDA may use (CUDA_VISIBLE_DEVICES, MIG
         * mode without a MIG device, a container given no GPU). */
        {"No CUDA GPUs are available", ML_FW_CUDA_UNAVAILABLE},
        /* cudaGetErrorString(cudaErrorInvalidDevice = 101): "invalid device
         * ordinal" - a device index CUDA does not have (CUDA_VISIBLE_DEVICES
         * or a MIG UUID that names no visible device). */
        {"invalid device ordinal", ML_FW_CUDA_UNAVAILABLE},
        /* device_count_impl(), cudaErrorInsufficientDriver with no driver
         * version at all (no libcuda.so.1): "Found no NVIDIA driver on your
         * system. Please check that you have an NVIDIA GPU and installed a
         * driver from http://www.nvidia.com/Download/index.aspx" - also what
         * a container started without the NVIDIA container runtime says. */
        {NO_DRIVER_PHRASE, ML_FW_CUDA_UNAVAILABLE},
        /* cudaGetErrorString(cudaErrorNoDevice = 100): "no CUDA-capable
         * device is detected". */
        {"no CUDA-capable device is detected", ML_FW_CUDA_UNAVAILABLE},
        /* device_count_impl(), cudaErrorUnknown: "CUDA unknown error - this
         * may be due to an incorrectly set up environment, e.g. changing env
         * variable CUDA_VISIBLE_DEVICES after program start." */
        {"CUDA unknown error", ML_FW_CUDA_UNAVAILABLE},
        /* Python: import errors, missing or mismatched shared libraries. */
        {"ModuleNotFoundError", ML_FW_IMPORT_ERROR},
        {"ImportError", ML_FW_IMPORT_ERROR},
        {"cannot open shared object file", ML_FW_IMPORT_ERROR},
        {"undefined symbol", ML_FW_IMPORT_ERROR},
};

const char *ml_fw_class_name(ml_fw_class c)
{
	static const char *const names[] = {
	        "ok",    "no_kernel_image", "cpu_only_build", "cuda_unavailable", "driver_too_old",
	        "oom",   "wrong_results",   "import_error",   "system_not_ready", "devices_busy",
	        "other",
	};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "other";
}

ml_fw_class ml_fw_classify(const char *message)
{
	if (!message)
		return ML_FW_OTHER;
	for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++) {
		if (strcasestr(message, phrases[i].phrase))
			return phrases[i].cls;
	}
	return ML_FW_OTHER;
}

bool ml_fw_says_no_driver_library(const char *message)
{
	return message && strcasestr(message, NO_DRIVER_PHRASE);
}

/* --- reading the script's JSON ------------------------------------------ */

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A number, or dflt when absent, null or not finite. */
static double jnum(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

static bool jtrue(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Copies the first line of s (NULL: "") into dst. */
static void first_line(char *dst, size_t sz, const char *s)
{
	if (!s)
		s = "";
	size_t n = strcspn(s, "\n");
	if (n >= sz)
		n = sz - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* One check object -> ml_fw_check. */
static void read_check(ml_fw_check *c, const cJSON *o)
{
	memset(c, 0, sizeof(*c));
	ml_strlcpy(c->name, jstr(o, "name") ? jstr(o, "name") : "?", sizeof(c->name));
	c->ms = jnum(o, "ms", 0);
	c->n = (int)jnum(o, "n", 0);
	c->reps = (int)jnum(o, "reps", 0);
	c->gflops = jnum(o, "gflops", 0);
	c->tflops = jnum(o, "tflops", 0);
	c->gbps = jnum(o, "gbps", 0);
	c->max_abs_error = jnum(o, "max_abs_error", -1);
	c->tolerance = jnum(o, "tolerance", -1);
	const char *error = jstr(o, "error"), *type = jstr(o, "error_type");
	if (jtrue(o, "skipped")) {
		c->status = ML_CHECK_SKIP;
		first_line(c->detail, sizeof(c->detail), jstr(o, "reason"));
	} else if (jtrue(o, "ok")) {
		c->status = ML_CHECK_PASS;
		int n = 0;
		if (c->n > 0)
			n = snprintf(c->detail, sizeof(c->detail), "%d x %d: ", c->n, c->n);
		n += snprintf(c->detail + n, sizeof(c->detail) - (size_t)n,
		              c->reps > 0 ? "%.3g ms" : "%.3f ms", c->ms);
		if (c->reps > 1)
			n += snprintf(c->detail + n, sizeof(c->detail) - (size_t)n,
			              " (mean of %d runs after a warm-up)", c->reps);
		if (c->tflops > 0) {
			char rate[32];
			ml_tflops_format(rate, sizeof(rate), c->tflops);
			n += snprintf(c->detail + n, sizeof(c->detail) - (size_t)n, ", %s TFLOP/s",
			              rate);
		} else if (c->gflops > 0) {
			n += snprintf(c->detail + n, sizeof(c->detail) - (size_t)n,
			              ", %.1f GFLOP/s", c->gflops);
		}
		if (c->gbps > 0)
			n += snprintf(c->detail + n, sizeof(c->detail) - (size_t)n, ", %.1f GB/s",
			              c->gbps);
		if (c->max_abs_error >= 0 && c->tolerance >= 0)
			snprintf(c->detail + n, sizeof(c->detail) - (size_t)n,
			         ", max abs error %.3g within %.3g", c->max_abs_error,
			         c->tolerance);
	} else if (error) {
		c->status = ML_CHECK_FAIL;
		char line[400];
		first_line(line, sizeof(line), error);
		snprintf(c->detail, sizeof(c->detail), "%s%s%s", type ? type : "", type ? ": " : "",
		         line);
		c->cls = ml_fw_classify(c->detail);
		if (c->cls == ML_FW_OTHER)
			c->cls = ml_fw_classify(error);
	} else {
		c->status = ML_CHECK_FAIL;
		c->cls = ML_FW_WRONG_RESULTS;
		snprintf(c->detail, sizeof(c->detail),
		         "wrong results: max abs error %.3g against the CPU reference, above the "
		         "tolerance %.3g",
		         c->max_abs_error, c->tolerance);
	}
}

/* Reads the array `key` of check objects into a new array. */
static int read_checks(ml_fw_check **out, size_t *n_out, const cJSON *o, const char *key)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	*out = NULL;
	*n_out = 0;
	if (n <= 0)
		return 0;
	ml_fw_check *c = calloc((size_t)n, sizeof(*c));
	if (!c)
		return ML_ENOMEM;
	const cJSON *item;
	size_t i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (i < (size_t)n && cJSON_IsObject(item))
			read_check(&c[i++], item);
	}
	*out = c;
	*n_out = i;
	return 0;
}

/* Does a GPU of compute capability major.minor have bf16 in hardware?
 * detect's precision table answers (ml_gpu_precision). */
static bool gpu_has_bf16(int major, int minor)
{
	ml_precision p;
	ml_gpu_precision(&p, major, minor);
	return p.bf16;
}

/* A bf16 matmul that failed on a GPU without bf16 in hardware is expected:
 * it becomes a skip that says so, and only a failure on a GPU that has it
 * counts. */
static void judge_bf16(ml_fw_gpu *g)
{
	for (size_t i = 0; i < g->n_checks; i++) {
		ml_fw_check *c = &g->checks[i];
		if (strcmp(c->name, "bf16_matmul") != 0 || c->status != ML_CHECK_FAIL ||
		    g->cc_major < 0 || gpu_has_bf16(g->cc_major, g->cc_minor))
			continue;
		char seen[sizeof(c->detail)];
		ml_strlcpy(seen, c->detail, sizeof(seen));
		snprintf(c->detail, sizeof(c->detail),
		         "bf16 needs compute capability 8.0 or newer, this GPU is %d.%d: expected "
		         "to fail (%.300s)",
		         g->cc_major, g->cc_minor, seen);
		c->status = ML_CHECK_SKIP;
		c->cls = ML_FW_OK;
	}
}

/* Checks the GPU's capability against torch's arch list with THE rule. */
static void arch_check(ml_fw_gpu *g, char *const *archs, size_t n_archs)
{
	g->arch_ok = true;
	if (g->cc_major < 0) {
		ml_strlcpy(g->arch_why, "compute capability unknown", sizeof(g->arch_why));
		return;
	}
	ml_cuda_arch code[64];
	size_t n = 0;
	for (size_t i = 0; i < n_archs && n < 64; i++) {
		if (ml_cuda_arch_parse(&code[n], archs[i]) == 0)
			n++;
	}
	if (n == 0) {
		ml_strlcpy(g->arch_why, "torch.cuda.get_arch_list() names no architecture",
		           sizeof(g->arch_why));
		return;
	}
	g->arch_ok = ml_arch_runs_on(code, n, g->cc_major, g->cc_minor, g->arch_why,
	                             sizeof(g->arch_why));
}

static int read_gpus(ml_framework_result *r, const cJSON *doc)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	if (n <= 0)
		return 0;
	r->gpus = calloc((size_t)n, sizeof(*r->gpus));
	if (!r->gpus)
		return ML_ENOMEM;
	const cJSON *o;
	cJSON_ArrayForEach(o, arr)
	{
		if (r->n_gpus == (size_t)n || !cJSON_IsObject(o))
			continue;
		ml_fw_gpu *g = &r->gpus[r->n_gpus++];
		g->index = (int)jnum(o, "index", (double)(r->n_gpus - 1));
		ml_strlcpy(g->name, jstr(o, "name") ? jstr(o, "name") : "", sizeof(g->name));
		const cJSON *cap = cJSON_GetObjectItemCaseSensitive(o, "capability");
		g->cc_major = g->cc_minor = -1;
		if (cJSON_IsArray(cap) && cJSON_GetArraySize(cap) == 2 &&
		    cJSON_IsNumber(cJSON_GetArrayItem(cap, 0)) &&
		    cJSON_IsNumber(cJSON_GetArrayItem(cap, 1))) {
			g->cc_major = cJSON_GetArrayItem(cap, 0)->valueint;
			g->cc_minor = cJSON_GetArrayItem(cap, 1)->valueint;
		}
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "warnings");
		if (cJSON_IsArray(w) && cJSON_IsString(cJSON_GetArrayItem(w, 0))) {
			const char *text = cJSON_GetArrayItem(w, 0)->valuestring;
			while (*text == '\n')
				text++;
			first_line(g->warning, sizeof(g->warning), text);
		}
		arch_check(g, r->arch_list, r->n_arch_list);
		if (read_checks(&g->checks, &g->n_checks, o, "checks"))
			return ML_ENOMEM;
		judge_bf16(g);
	}
	return 0;
}

static int read_arch_list(ml_framework_result *r, const cJSON *doc)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "arch_list");
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	if (n <= 0)
		return 0;
	r->arch_list = calloc((size_t)n, sizeof(char *));
	if (!r->arch_list)
		return ML_ENOMEM;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr)
	{
		if (r->n_arch_list == (size_t)n || !cJSON_IsString(item))
			continue;
		r->arch_list[r->n_arch_list] = strdup(item->valuestring);
		if (!r->arch_list[r->n_arch_list])
			return ML_ENOMEM;
		r->n_arch_list++;
	}
	return 0;
}

/* Sets the result's class and detail from what was read (see cls in
 * verify.h for the order). */
static void classify_result(ml_framework_result *r, const cJSON *doc)
{
	const char *import_error = jstr(doc, "import_error"), *fatal = jstr(doc, "fatal");
	if (import_error) {
		r->cls = ML_FW_IMPORT_ERROR;
		first_line(r->detail, sizeof(r->detail), import_error);
		return;
	}
	if (fatal) {
		r->cls = ml_fw_classify(fatal);
		first_line(r->detail, sizeof(r->detail), fatal);
		return;
	}
	for (size_t i = 0; i < r->n_checks; i++) {
		if (r->checks[i].status == ML_CHECK_FAIL) {
			r->cls = r->checks[i].cls ? r->checks[i].cls : ML_FW_OTHER;
			snprintf(r->detail, sizeof(r->detail), "%s: %s", r->checks[i].name,
			         r->checks[i].detail);
			return;
		}
	}
	if (!r->torch_cuda[0]) {
		r->cls = ML_FW_CPU_ONLY_BUILD;
		snprintf(r->detail, sizeof(r->detail),
		         "torch %s is a CPU-only build (torch.version.cuda is None)",
		         r->torch_version);
		return;
	}
	if (!r->cuda_available || r->device_count <= 0) {
		/* Why CUDA is unusable, when the error says so; else unavailable. */
		ml_fw_class c = ml_fw_classify(r->cuda_error);
		r->cls = c == ML_FW_DRIVER_TOO_OLD || c == ML_FW_SYSTEM_NOT_READY ||
		                         c == ML_FW_DEVICES_BUSY
		                 ? c
		                 : ML_FW_CUDA_UNAVAILABLE;
		snprintf(r->detail, sizeof(r->detail), "torch.cuda.is_available() is %s%s%.900s",
		         r->cuda_available ? "True but no device is visible" : "False",
		         r->cuda_error[0] ? ": " : "", r->cuda_error);
		return;
	}
	for (size_t i = 0; i < r->n_gpus; i++) {
		const ml_fw_gpu *g = &r->gpus[i];
		for (size_t k = 0; k < g->n_checks; k++) {
			if (g->checks[k].status != ML_CHECK_FAIL)
				continue;
			r->cls = g->checks[k].cls ? g->checks[k].cls : ML_FW_OTHER;
			snprintf(r->detail, sizeof(r->detail), "GPU %d (%s) %s: %s", g->index,
			         g->name, g->checks[k].name, g->checks[k].detail);
			return;
		}
	}
	r->cls = ML_FW_OK;
	snprintf(r->detail, sizeof(r->detail), "torch %s (CUDA %s) computed correctly on %zu GPU%s",
	         r->torch_version, r->torch_cuda, r->n_gpus, r->n_gpus == 1 ? "" : "s");
}

/* Fills r from the script's JSON document. */
static int read_doc(ml_framework_result *r, const cJSON *doc)
{
	const char *s;
	ml_strlcpy(r->python_version, (s = jstr(doc, "python")) ? s : "",
	           sizeof(r->python_version));
	ml_strlcpy(r->torch_version, (s = jstr(doc, "torch")) ? s : "", sizeof(r->torch_version));
	ml_strlcpy(r->torch_cuda, (s = jstr(doc, "torch_cuda")) ? s : "", sizeof(r->torch_cuda));
	ml_strlcpy(r->torch_path, (s = jstr(doc, "torch_path")) ? s : "", sizeof(r->torch_path));
	r->cuda_available = jtrue(doc, "cuda_available");
	r->device_count = (int)jnum(doc, "device_count", 0);
	s = jstr(doc, "cuda_error");
	if (!s) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(doc, "cuda_warnings");
		if (cJSON_IsArray(w) && cJSON_IsString(cJSON_GetArrayItem(w, 0)))
			s = cJSON_GetArrayItem(w, 0)->valuestring;
	}
	first_line(r->cuda_error, sizeof(r->cuda_error), s);
	r->gpu_checks_skipped = jtrue(doc, "gpu_checks_skipped");
	first_line(r->skip_reason, sizeof(r->skip_reason), jstr(doc, "skip_reason"));
	if (read_arch_list(r, doc) || read_checks(&r->checks, &r->n_checks, doc, "checks") ||
	    read_gpus(r, doc))
		return ML_ENOMEM;
	classify_result(r, doc);
	return 0;
}

/* Keeps the last TAIL_BYTES of the output in r->output. */
static int keep_tail(ml_framework_result *r, const char *output)
{
	size_t len = strlen(output);
	const char *from = len > TAIL_BYTES ? output + len - TAIL_BYTES : output;
	r->output = strdup(from);
	return r->output ? 0 : ML_ENOMEM;
}

/* Finds the last marker line and parses the JSON after it; NULL when there
 * is none or it does not parse. */
static cJSON *find_doc(char *output)
{
	char *at = NULL;
	for (char *p = output; (p = strstr(p, MARKER)); p += strlen(MARKER)) {
		if (p == output || p[-1] == '\n')
			at = p;
	}
	if (!at)
		return NULL;
	at += strlen(MARKER);
	at[strcspn(at, "\n")] = '\0';
	return cJSON_Parse(at);
}

/* --- following the script's steps ------------------------------------- */

/* The step the script is in, from its "begin NAME" / "end STATUS NAME"
 * lines. */
struct steps {
	const ml_framework_opts *o;
	char name[128]; /* the step begun and not ended, "" when none */
	struct timespec t0;
	int imports_s;   /* the imports' limit once the result is out; 0: none */
	bool result_out; /* the result line came */
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void step_end(struct steps *st, ml_check_status status)
{
	ml_verify_step s = {st->name, true, status, since(&st->t0)};
	if (st->o->on_step)
		st->o->on_step(&s, st->o->step_data);
	st->name[0] = '\0';
}

static int on_line(const char *line, void *data)
{
	struct steps *st = data;
	if (strncmp(line, MARKER, strlen(MARKER)) == 0) {
		st->result_out = true;
		return st->imports_s; /* the checks are over: the imports' limit now */
	}
	if (strncmp(line, STEP_MARKER, strlen(STEP_MARKER)) != 0)
		return 0;
	line += strlen(STEP_MARKER);
	if (strncmp(line, "begin ", 6) == 0) {
		if (st->name[0])
			step_end(st, ML_CHECK_PASS);
		ml_strlcpy(st->name, line + 6, sizeof(st->name));
		clock_gettime(CLOCK_MONOTONIC, &st->t0);
		ml_verify_step s = {st->name, false, ML_CHECK_PASS, 0};
		if (st->o->on_step)
			st->o->on_step(&s, st->o->step_data);
	} else if (strncmp(line, "end ", 4) == 0 && st->name[0]) {
		static const struct {
			const char *word;
			ml_check_status status;
		} words[] = {{"pass ", ML_CHECK_PASS},
		             {"fail ", ML_CHECK_FAIL},
		             {"skip ", ML_CHECK_SKIP},
		             {"warn ", ML_CHECK_WARN}};
		ml_check_status status = ML_CHECK_FAIL;
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strncmp(line + 4, words[i].word, strlen(words[i].word)) == 0)
				status = words[i].status;
		step_end(st, status);
	}
	return 0;
}

/* The answers of the imports after the checks (IMPORT_MARKER lines, each
 * at a line's start) into r->imports, {module: {ok, error}}; a line that
 * is no answer is passed over. Returns 0 or ML_ENOMEM. */
static int read_imports(ml_framework_result *r, const char *output)
{
	size_t ml = strlen(IMPORT_MARKER);
	for (const char *p = output; (p = strstr(p, IMPORT_MARKER)); p += ml) {
		if (p != output && p[-1] != '\n')
			continue;
		cJSON *a = cJSON_ParseWithLength(p + ml, strcspn(p + ml, "\n"));
		const char *name =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "module"));
		if (!name || !*name || !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(a, "ok"))) {
			cJSON_Delete(a);
			continue;
		}
		char *module = strdup(name); /* a's own goes with its "module" */
		if (!module) {
			cJSON_Delete(a);
			return ML_ENOMEM;
		}
		/* the answer as it came, less its name, which keys it */
		cJSON_DeleteItemFromObjectCaseSensitive(a, "module");
		if (!r->imports)
			r->imports = cJSON_CreateObject();
		if (r->imports)
			cJSON_DeleteItemFromObjectCaseSensitive(r->imports, module);
		bool fine = r->imports && cJSON_AddItemToObject(r->imports, module, a);
		free(module);
		if (!fine) {
			cJSON_Delete(a);
			return ML_ENOMEM;
		}
	}
	return 0;
}

/* " (in 'fp16 matmul on GPU 0')" when the script died inside a step. */
static void add_step(char *detail, size_t sz, const char *step)
{
	size_t n = strlen(detail);
	if (step[0] && n < sz)
		snprintf(detail + n, sz - n, " (in '%s')", step);
}

int ml_smoke_framework(ml_framework_result *out, const char *python, const ml_framework_opts *opts,
                       ml_err *err)
{
	ml_framework_opts o = ML_FRAMEWORK_OPTS_INIT;
	if (opts)
		o = *opts;
	if (o.timeout_s < 0 || o.matmul_size < 0 || (o.matmul_size && o.matmul_size < 2) ||
	    o.matmul_size > 16384 || o.alloc_mib > 1048576)
		return ml_err_set(
		        err, ML_EUSAGE,
		        "framework smoke test options out of range (timeout %d s, size %d, "
		        "allocation %zu MiB)",
		        o.timeout_s, o.matmul_size, o.alloc_mib);
	if (!python || !*python)
		python = "python3";
	if (strchr(python, '/') && access(python, X_OK) != 0) {
		ml_err_set(err, ML_ENOENT, "cannot run the interpreter '%s': %s", python,
		           strerror(errno));
		ml_err_hint(err, "pass the environment's python (--python PATH) or its --target");
		return ML_ENOENT;
	}
	char size[16], mib[24];
	snprintf(size, sizeof(size), "%d", o.matmul_size ? o.matmul_size : DEFAULT_SIZE);
	snprintf(mib, sizeof(mib), "%zu", o.alloc_mib ? o.alloc_mib : (size_t)DEFAULT_ALLOC);
	int timeout = o.timeout_s ? o.timeout_s : DEFAULT_TIMEOUT;
	char limit[16];
	snprintf(limit, sizeof(limit), "%d", ML_IMPORT_TIMEOUT_S);
	size_t n_imports = o.imports ? o.n_imports : 0;
	const char **argv = calloc(12 + 2 * n_imports, sizeof(*argv));
	if (!argv)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t ac = 0;
	argv[ac++] = python;
	argv[ac++] = "-c";
	argv[ac++] = ml_torch_smoke_script();
	argv[ac++] = "--size";
	argv[ac++] = size;
	argv[ac++] = "--alloc-mib";
	argv[ac++] = mib;
	if (n_imports) {
		argv[ac++] = "--import-timeout";
		argv[ac++] = limit;
	}
	if (n_imports && o.import_claims && o.import_claims[0]) {
		argv[ac++] = "--import-claims";
		argv[ac++] = o.import_claims;
	}
	for (size_t i = 0; i < n_imports; i++) {
		argv[ac++] = "--import";
		argv[ac++] = o.imports[i];
	}

	ml_framework_result r;
	memset(&r, 0, sizeof(r));
	char *output = NULL;
	cJSON *doc = NULL;
	ml_err rerr = ML_ERR_INIT;
	/* the script's own watchdog ends the imports; this is the backstop */
	struct steps st = {&o, "", {0, 0}, n_imports ? ML_IMPORT_TIMEOUT_S + 60 : 0, false};
	int rc = ml_os_run_lines(&output, &r.exit_status, argv, MAX_OUTPUT, timeout, on_line, &st,
	                         &rerr);
	free(argv);
	char open_step[sizeof(st.name)];
	ml_strlcpy(open_step, st.name, sizeof(open_step));
	if (st.name[0]) /* the script never ended it: it crashed, hung or was killed */
		step_end(&st, ML_CHECK_FAIL);
	if (rc == ML_ENOENT) {
		ml_err_set(err, ML_ENOENT, "cannot run the interpreter '%s': %s", python, rerr.msg);
		ml_err_hint(err, "pass the environment's python (--python PATH) or its --target");
		return ML_ENOENT;
	}
	if (rc == ML_EFAIL) { /* killed after the timeout */
		r.cls = ML_FW_OTHER;
		r.exit_status = -1;
		if (st.result_out && st.imports_s) /* its result was lost with the output */
			snprintf(r.detail, sizeof(r.detail),
			         "the imports after the torch smoke test did not finish within %d s "
			         "and it was killed",
			         st.imports_s);
		else
			snprintf(r.detail, sizeof(r.detail),
			         "the torch smoke test did not finish within %d s and was killed",
			         timeout);
		add_step(r.detail, sizeof(r.detail), open_step);
		r.gpu_checks_skipped = true;
		ml_strlcpy(r.skip_reason, "timed out", sizeof(r.skip_reason));
		*out = r;
		return 0;
	}
	if (rc)
		return ml_err_set(err, rc, "%s", rerr.msg);

	rc = n_imports ? read_imports(&r, output) : 0;
	doc = rc ? NULL : find_doc(output);
	if (rc) {
		/* out of memory: said below */
	} else if (doc) {
		rc = read_doc(&r, doc);
	} else {
		/* The interpreter crashed (a signal), exited early or printed
		 * garbage: say what its output says. */
		r.cls = ml_fw_classify(output);
		if (r.cls != ML_FW_IMPORT_ERROR)
			r.cls = ML_FW_OTHER;
		r.gpu_checks_skipped = true;
		ml_strlcpy(r.skip_reason, "the smoke script gave no result", sizeof(r.skip_reason));
		if (r.exit_status < 0)
			snprintf(r.detail, sizeof(r.detail),
			         "'%s' was killed by a signal before the smoke script reported",
			         python);
		else
			snprintf(r.detail, sizeof(r.detail),
			         "'%s' exited with status %d before the smoke script reported",
			         python, r.exit_status);
		add_step(r.detail, sizeof(r.detail), open_step);
		rc = keep_tail(&r, output);
	}
	cJSON_Delete(doc);
	free(output);
	if (rc) {
		ml_framework_result_release(&r);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	*out = r;
	return 0;
}

void ml_framework_result_release(ml_framework_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_arch_list; i++)
		free(r->arch_list[i]);
	free(r->arch_list);
	free(r->checks);
	for (size_t i = 0; i < r->n_gpus; i++)
		free(r->gpus[i].checks);
	free(r->gpus);
	free(r->output);
	cJSON_Delete(r->imports);
	memset(r, 0, sizeof(*r));
}

/* --- JSON --------------------------------------------------------------- */

static void add_num_or_null(cJSON *j, const char *key, double v, bool known)
{
	if (known && isfinite(v))
		cJSON_AddNumberToObject(j, key, v);
	else
		cJSON_AddNullToObject(j, key);
}

static cJSON *checks_json(const ml_fw_check *c, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < n; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", c[i].name);
		cJSON_AddStringToObject(j, "status", ml_check_status_name(c[i].status));
		if (c[i].status == ML_CHECK_FAIL)
			cJSON_AddStringToObject(j, "class", ml_fw_class_name(c[i].cls));
		else
			cJSON_AddNullToObject(j, "class");
		add_num_or_null(j, "ms", c[i].ms, c[i].ms > 0);
		add_num_or_null(j, "n", c[i].n, c[i].n > 0);
		add_num_or_null(j, "reps", c[i].reps, c[i].reps > 0);
		add_num_or_null(j, "gflops", c[i].gflops, c[i].gflops > 0);
		add_num_or_null(j, "tflops", c[i].tflops, c[i].tflops > 0);
		add_num_or_null(j, "gbps", c[i].gbps, c[i].gbps > 0);
		add_num_or_null(j, "max_abs_error", c[i].max_abs_error, c[i].max_abs_error >= 0);
		add_num_or_null(j, "tolerance", c[i].tolerance, c[i].tolerance >= 0);
		cJSON_AddStringToObject(j, "detail", c[i].detail);
		cJSON_AddItemToArray(arr, j);
	}
	return arr;
}

/* The matmul checks that were run, with their speed:
 * [{"dtype": "fp32", "status": "pass", "n": 2048, "ms": 0.35, "tflops":
 * 49.1}, ...]; a failed or skipped dtype has null n, ms and tflops. */
static cJSON *matmul_json(const ml_fw_gpu *g)
{
	static const char *const dtypes[] = {"fp32", "fp16", "bf16"};
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s_matmul", dtypes[i]);
		const ml_fw_check *c = ml_fw_gpu_check(g, name);
		if (!c)
			continue;
		bool timed = c->status == ML_CHECK_PASS;
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "dtype", dtypes[i]);
		cJSON_AddStringToObject(j, "status", ml_check_status_name(c->status));
		add_num_or_null(j, "n", c->n, timed && c->n > 0);
		add_num_or_null(j, "ms", c->ms, timed && c->ms > 0);
		add_num_or_null(j, "tflops", c->tflops, timed && c->tflops > 0);
		cJSON_AddItemToArray(arr, j);
	}
	return arr;
}

const ml_fw_check *ml_fw_gpu_check(const ml_fw_gpu *fg, const char *name)
{
	for (size_t i = 0; fg && i < fg->n_checks; i++) {
		if (strcmp(fg->checks[i].name, name) == 0)
			return &fg->checks[i];
	}
	return NULL;
}

void ml_tflops_format(char *dst, size_t sz, double tflops)
{
	if (!(tflops > 0) || !isfinite(tflops))
		snprintf(dst, sz, "?");
	else if (tflops >= 99.95) /* the bounds are where rounding adds a digit */
		snprintf(dst, sz, "%.0f", tflops);
	else if (tflops >= 9.995)
		snprintf(dst, sz, "%.1f", tflops);
	else if (tflops >= 0.9995)
		snprintf(dst, sz, "%.2f", tflops);
	else { /* three significant digits after the leading zeros */
		int decimals = 2;
		for (double x = tflops; x < 0.9995 && decimals < 12; x *= 10)
			decimals++;
		snprintf(dst, sz, "%.*f", decimals, tflops);
	}
}

cJSON *ml_framework_result_to_json(const ml_framework_result *r)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "class", ml_fw_class_name(r->cls));
	cJSON_AddStringToObject(j, "detail", r->detail);
	cJSON_AddNumberToObject(j, "exit_status", r->exit_status);
	cJSON_AddStringToObject(j, "python", r->python_version);
	cJSON_AddStringToObject(j, "torch", r->torch_version);
	if (r->torch_cuda[0])
		cJSON_AddStringToObject(j, "torch_cuda", r->torch_cuda);
	else
		cJSON_AddNullToObject(j, "torch_cuda");
	cJSON_AddStringToObject(j, "torch_path", r->torch_path);
	cJSON_AddBoolToObject(j, "cuda_available", r->cuda_available);
	cJSON_AddNumberToObject(j, "device_count", r->device_count);
	cJSON_AddStringToObject(j, "cuda_error", r->cuda_error);
	cJSON *archs = cJSON_AddArrayToObject(j, "arch_list");
	for (size_t i = 0; archs && i < r->n_arch_list; i++)
		cJSON_AddItemToArray(archs, cJSON_CreateString(r->arch_list[i]));
	cJSON_AddBoolToObject(j, "gpu_checks_skipped", r->gpu_checks_skipped);
	cJSON_AddStringToObject(j, "skip_reason", r->skip_reason);
	cJSON_AddItemToObject(j, "checks", checks_json(r->checks, r->n_checks));
	cJSON *gpus = cJSON_AddArrayToObject(j, "gpus");
	for (size_t i = 0; gpus && i < r->n_gpus; i++) {
		const ml_fw_gpu *g = &r->gpus[i];
		cJSON *o = cJSON_CreateObject();
		char cc[16];
		cJSON_AddNumberToObject(o, "index", g->index);
		cJSON_AddStringToObject(o, "name", g->name);
		ml_cc_format(cc, sizeof(cc), g->cc_major, g->cc_minor);
		cJSON_AddStringToObject(o, "cc", cc);
		cJSON_AddBoolToObject(o, "arch_ok", g->arch_ok);
		cJSON_AddStringToObject(o, "arch_why", g->arch_why);
		cJSON_AddStringToObject(o, "warning", g->warning);
		cJSON_AddItemToObject(o, "checks", checks_json(g->checks, g->n_checks));
		cJSON_AddItemToObject(o, "matmul", matmul_json(g));
		cJSON_AddItemToArray(gpus, o);
	}
	if (r->output)
		cJSON_AddStringToObject(j, "output", r->output);
	if (!gpus || !archs) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

const char *ml_torch_smoke_script(void)
{
	/* Running python -c with no script would hide a broken build. */
	return ml_embedded_require("torch_smoke.py")->data;
}
