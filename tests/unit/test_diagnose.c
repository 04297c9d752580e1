/*
 * test_diagnose.c - specs for the diagnosis of known failure classes from
 * the error texts torch and CUDA really print (src/verify/framework.c's
 * table of phrases, src/verify/diagnose.c's causes and remedies). Each case
 * feeds one text, quoted from the source that prints it, through the whole
 * path: a stand-in interpreter prints the smoke script's JSON line with the
 * text where torch would put it (the error of CUDA initialization, or of a
 * kernel on GPU 0), ml_smoke_framework() reads and classifies it, and
 * ml_diagnose() gives the verdict on a machine like the one where the text
 * is seen. The CUresult side of the same classes (the driver smoke test on
 * the fake libcuda) is in test_smoke.c.
 */
#include <limits.h>
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

#include "mlsetup/verify.h"
#include "../../src/verify/internal.h"

#define SYSROOTS "tests/fixtures/sysroot/"

/* Where torch reports the text. */
enum where {
	AT_INIT,   /* CUDA initialization: is_available() False, init() raises it */
	AT_KERNEL, /* CUDA works; the fp32 matmul on GPU 0 raises it */
};

/* The machine the text is seen on. */
struct machine {
	const char *gpu;       /* the detected GPU */
	int major, minor;      /* its compute capability */
	const char *driver;    /* loaded driver version, "" none */
	const char *root;      /* sysroot for /dev: "empty" (no /dev/nvidia*),
	                        * "nvidia-devices", "container-no-libcuda" */
	const char *container; /* container kind, NULL none */
};

/* One known failure class, from one text. */
struct text_case {
	const char *name;
	enum where where;
	const char *error_type; /* the exception's type */
	const char *text;       /* what torch prints, quoted from its source */
	struct machine m;
	const char *cvd; /* CUDA_VISIBLE_DEVICES, NULL unset */
	ml_fw_class cls;
	ml_cause cause;
	int exit_code;
	const char *detail;    /* in the failed check's detail, or NULL */
	const char *remedy[4]; /* in the failed check's remedy */
};

static const struct machine RTX5090 = {
        "NVIDIA GeForce RTX 5090", 12, 0, "570.124.04", "empty", NULL};
static const struct machine RTX3090_OLD = {
        "NVIDIA GeForce RTX 3090", 8, 6, "470.256.02", "empty", NULL};
static const struct machine HGX_H100 = {"NVIDIA H100 80GB HBM3", 9,   0, "550.54.15",
                                        "nvidia-devices",        NULL};
static const struct machine A100 = {"NVIDIA A100-SXM4-80GB", 8,   0, "570.124.06",
                                    "nvidia-devices",        NULL};
static const struct machine A100_DOCKER = {
        "NVIDIA A100-SXM4-80GB", 8, 0, "550.54.15", "empty", "docker"};
static const struct machine A100_DOCKER_DEVICES = {"NVIDIA A100-SXM4-80GB", 8,       0, "550.54.15",
                                                   "container-no-libcuda",  "docker"};

/* What write_python() reports as torch.version.cuda and the manifest
 * run_case() says was installed (NULL: none); the cases below keep these,
 * a test may change them for one run. */
static const char *case_torch_cuda = "12.4";
static const char *case_manifest = "requirements.txt";

static const struct text_case cases[] = {
        /* cudaErrorNoKernelImageForDevice (209), raised through
         * c10/cuda/CUDAException.h C10_CUDA_CHECK as "CUDA error: " +
         * cudaGetErrorString(); torch >= 2.8 raises torch.AcceleratorError. */
        {"no kernel image (RuntimeError)",
         AT_KERNEL,
         "RuntimeError",
         "CUDA error: no kernel image is available for execution on the device\n"
         "CUDA kernel errors might be asynchronously reported at some other API call, so the "
         "stacktrace below might be incorrect.",
         RTX5090,
         NULL,
         ML_FW_NO_KERNEL_IMAGE,
         ML_CAUSE_NO_KERNEL_IMAGE,
         5,
         "CUDA error: no kernel image is available",
         {"sm_120", "mlsetup install --manifest requirements_blackwell.txt"}},
        {"no kernel image (AcceleratorError)",
         AT_KERNEL,
         "AcceleratorError",
         "CUDA error: no kernel image is available for execution on the device",
         RTX5090,
         NULL,
         ML_FW_NO_KERNEL_IMAGE,
         ML_CAUSE_NO_KERNEL_IMAGE,
         5,
         NULL,
         {"Blackwell, sm_120", "requirements_blackwell.txt"}},
        /* c10/cuda/CUDAFunctions.cpp device_count_impl():
         * cudaErrorInsufficientDriver with a driver present. */
        {"driver too old (torch)",
         AT_INIT,
         "RuntimeError",
         "The NVIDIA driver on your system is too old (found version 11040). Please update your "
         "GPU driver by downloading and installing a new version from the URL: "
         "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org "
         "to install a PyTorch version that has been compiled with your version of the CUDA "
         "driver.",
         RTX3090_OLD,
         NULL,
         ML_FW_DRIVER_TOO_OLD,
         ML_CAUSE_DRIVER_TOO_OLD,
         6,
         "found version 11040",
         {"update the NVIDIA driver to 550.54.14 or newer (the minimum of requirements.txt)",
          "this machine has 470.256.02, for CUDA 11.4 at most"}},
        /* cudaGetErrorString(cudaErrorInsufficientDriver = 35). */
        {"driver too old (CUDA runtime)",
         AT_KERNEL,
         "RuntimeError",
         "CUDA error: CUDA driver version is insufficient for CUDA runtime version",
         RTX3090_OLD,
         NULL,
         ML_FW_DRIVER_TOO_OLD,
         ML_CAUSE_DRIVER_TOO_OLD,
         6,
         NULL,
         {"550.54.14 or newer"}},
        /* device_count_impl(), default case, for cudaErrorSystemNotReady
         * (802): what torch.cuda.init() raises on an NVSwitch system whose
         * Fabric Manager is not running. */
        {"802 system not yet initialized (torch.cuda.init)",
         AT_INIT,
         "RuntimeError",
         "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
         "calling NumCudaDevices() that might have already set an error? Error 802: system not "
         "yet initialized",
         HGX_H100,
         NULL,
         ML_FW_SYSTEM_NOT_READY,
         ML_CAUSE_SYSTEM_NOT_READY,
         5,
         "Error 802: system not yet initialized",
         {"Fabric Manager", "550.54.15; Debian/Ubuntu: nvidia-fabricmanager-550",
          "sudo systemctl enable --now nvidia-fabricmanager"}},
        /* The same as torch.cuda.is_available() warns it (c10::cuda::
         * device_count() catches the error and warns). */
        {"802 system not yet initialized (warning)",
         AT_INIT,
         "UserWarning",
         "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
         "functions before calling NumCudaDevices() that might have already set an error? Error "
         "802: system not yet initialized (Triggered internally at "
         "/pytorch/c10/cuda/CUDAFunctions.cpp:109.)",
         HGX_H100,
         NULL,
         ML_FW_SYSTEM_NOT_READY,
         ML_CAUSE_SYSTEM_NOT_READY,
         5,
         NULL,
         {"nvidia-fabricmanager"}},
        /* cudaGetErrorString(cudaErrorDevicesUnavailable = 46) since CUDA
         * 10, through C10_CUDA_CHECK: the first CUDA call on a GPU in
         * exclusive-process compute mode that another process holds. */
        {"46 all devices busy or unavailable",
         AT_KERNEL,
         "RuntimeError",
         "CUDA error: all CUDA-capable devices are busy or unavailable\n"
         "CUDA kernel errors might be asynchronously reported at some other API call, so the "
         "stacktrace below might be incorrect.",
         A100,
         NULL,
         ML_FW_DEVICES_BUSY,
         ML_CAUSE_GPU_BUSY,
         5,
         "busy or unavailable",
         {"exclusive-process", "sudo nvidia-smi -i 0 -c DEFAULT", "stop that process"}},
        /* The same code's text before CUDA 10, and the driver's
         * cuGetErrorString(CUDA_ERROR_DEVICE_UNAVAILABLE). */
        {"46 device(s) is/are busy (old text)",
         AT_KERNEL,
         "RuntimeError",
         "CUDA error: CUDA-capable device(s) is/are busy or unavailable",
         A100,
         NULL,
         ML_FW_DEVICES_BUSY,
         ML_CAUSE_GPU_BUSY,
         5,
         NULL,
         {"-c DEFAULT"}},
        /* c10/cuda/CUDAFunctions.cpp device_count_ensure_non_zero(): a
         * driver, no device - on an A100 with MIG mode on and no MIG
         * device, CUDA enumerates nothing. */
        {"MIG without a MIG device: No CUDA GPUs are available",
         AT_INIT,
         "RuntimeError",
         "No CUDA GPUs are available",
         A100,
         NULL,
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "with MIG mode on CUDA sees only MIG devices",
         {"nvidia-smi -L", "sudo nvidia-smi mig -i 0 -cgi <profile> -C",
          "set CUDA_VISIBLE_DEVICES to its MIG-... UUID", "nvidia-smi -i 0 -mig 0"}},
        /* The same with CUDA_VISIBLE_DEVICES naming a MIG device CUDA does
         * not have (a stale UUID, or one not passed into a container). */
        {"MIG UUID CUDA does not find",
         AT_INIT,
         "RuntimeError",
         "No CUDA GPUs are available",
         A100,
         "MIG-4f1c2a4b-5d6e-7f80-91a2-b3c4d5e6f708",
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "CUDA_VISIBLE_DEVICES='MIG-4f1c2a4b-5d6e-7f80-91a2-b3c4d5e6f708' names a MIG device",
         {"nvidia-smi -L", "MIG-... UUIDs", "NVIDIA_VISIBLE_DEVICES"}},
        /* cudaGetErrorString(cudaErrorInvalidDevice = 101) on a GPU check. */
        {"invalid device ordinal",
         AT_KERNEL,
         "RuntimeError",
         "CUDA error: invalid device ordinal",
         A100,
         "1",
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "invalid device ordinal",
         {"CUDA_VISIBLE_DEVICES ('1')", "nvidia-smi -L", "MIG-..."}},
        /* device_count_impl(), cudaErrorInsufficientDriver with no driver
         * version: the CUDA runtime found no libcuda.so.1 - in a container
         * started without the NVIDIA container runtime. */
        {"container without the GPU runtime",
         AT_INIT,
         "RuntimeError",
         "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
         "installed a driver from http://www.nvidia.com/Download/index.aspx",
         A100_DOCKER,
         NULL,
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "docker container without the GPU runtime: no /dev/nvidia* devices",
         {"docker run --gpus all", "NVIDIA Container Toolkit"}},
        {"container given the devices but not the driver's library",
         AT_INIT,
         "RuntimeError",
         "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
         "installed a driver from http://www.nvidia.com/Download/index.aspx",
         A100_DOCKER_DEVICES,
         NULL,
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "/dev/nvidia* are there, but not the driver's library libcuda.so.1",
         {"docker run --gpus all"}},
        {"no libcuda.so.1 outside a container",
         AT_INIT,
         "RuntimeError",
         "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
         "installed a driver from http://www.nvidia.com/Download/index.aspx",
         A100,
         NULL,
         ML_FW_CUDA_UNAVAILABLE,
         ML_CAUSE_GPU_NOT_VISIBLE,
         5,
         "the NVIDIA kernel module 570.124.06 is loaded, but not its library libcuda.so.1",
         {"user-space libraries", "ldconfig"}},
};

/* Writes the smoke script's JSON line for tc into a shell script standing in
 * for python at path (in dir). */
static void write_python(char *path, size_t sz, const char *dir, const struct text_case *tc)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "mlsetup.torch_smoke/1");
	cJSON_AddStringToObject(doc, "python", "3.12.8");
	cJSON_AddStringToObject(doc, "torch", "2.6.0+cu124");
	cJSON_AddStringToObject(doc, "torch_path", "/env/torch/__init__.py");
	cJSON_AddStringToObject(doc, "torch_cuda", case_torch_cuda);
	cJSON *archs = cJSON_AddArrayToObject(doc, "arch_list");
	const char *list[] = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"};
	for (size_t i = 0; i < 7; i++)
		cJSON_AddItemToArray(archs, cJSON_CreateString(list[i]));
	cJSON *checks = cJSON_AddArrayToObject(doc, "checks");
	cJSON *imp = cJSON_CreateObject();
	cJSON_AddStringToObject(imp, "name", "import");
	cJSON_AddTrueToObject(imp, "ok");
	cJSON_AddItemToArray(checks, imp);
	cJSON *gpus = cJSON_AddArrayToObject(doc, "gpus");
	if (tc->where == AT_INIT) {
		cJSON_AddFalseToObject(doc, "cuda_available");
		cJSON_AddNumberToObject(doc, "device_count", 0);
		char text[2048];
		snprintf(text, sizeof(text), "%s: %s", tc->error_type, tc->text);
		cJSON_AddStringToObject(doc, "cuda_error", text);
		cJSON_AddTrueToObject(doc, "gpu_checks_skipped");
		cJSON_AddStringToObject(doc, "skip_reason", "torch.cuda.is_available() is False");
	} else {
		cJSON_AddTrueToObject(doc, "cuda_available");
		cJSON_AddNumberToObject(doc, "device_count", 1);
		cJSON *g = cJSON_CreateObject();
		cJSON_AddNumberToObject(g, "index", 0);
		cJSON_AddStringToObject(g, "name", tc->m.gpu);
		cJSON *cap = cJSON_AddArrayToObject(g, "capability");
		cJSON_AddItemToArray(cap, cJSON_CreateNumber(tc->m.major));
		cJSON_AddItemToArray(cap, cJSON_CreateNumber(tc->m.minor));
		cJSON *gc = cJSON_AddArrayToObject(g, "checks");
		cJSON *k = cJSON_CreateObject();
		cJSON_AddStringToObject(k, "name", "fp32_matmul");
		cJSON_AddFalseToObject(k, "ok");
		cJSON_AddStringToObject(k, "error_type", tc->error_type);
		cJSON_AddStringToObject(k, "error", tc->text);
		cJSON_AddItemToArray(gc, k);
		cJSON_AddItemToArray(gpus, g);
	}
	char *line = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	snprintf(path, sz, "%s/python", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
	        "#!/bin/sh\ncat <<'EOF'\nsome output of torch\nMLSETUP-TORCH-SMOKE-JSON: %s\nEOF\n",
	        line);
	fclose(f);
	free(line);
	chmod(path, 0755);
}

/* The check that carries the text: torch_cuda for a failed CUDA
 * initialization, GPU 0's fp32_matmul for a failed kernel. */
static const ml_check *text_check(const ml_verdict *v, enum where where)
{
	const ml_check *k = where == AT_INIT ? v->checks : v->n_gpus ? v->gpus[0].checks : NULL;
	size_t n = where == AT_INIT ? v->n_checks : v->n_gpus ? v->gpus[0].n_checks : 0;
	const char *name = where == AT_INIT ? "torch_cuda" : "fp32_matmul";
	for (size_t i = 0; i < n; i++)
		if (strcmp(k[i].name, name) == 0 && k[i].status == ML_CHECK_FAIL)
			return &k[i];
	return NULL;
}

/* Runs one case through ml_smoke_framework() and ml_diagnose(). */
static void run_case(const struct text_case *tc)
{
	char dir[] = "/tmp/mlsetup-diag.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	write_python(path, sizeof(path), dir, tc);
	if (tc->cvd)
		setenv("CUDA_VISIBLE_DEVICES", tc->cvd, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("LD_LIBRARY_PATH");

	ml_framework_result r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_smoke_framework(&r, path, NULL, &err), 0);
	if (r.cls != tc->cls)
		fail_msg("%s: class %s, want %s (%s)", tc->name, ml_fw_class_name(r.cls),
		         ml_fw_class_name(tc->cls), r.detail);

	ml_machine m;
	ml_gpu g;
	memset(&m, 0, sizeof(m));
	memset(&g, 0, sizeof(g));
	ml_strlcpy(m.os.name, "linux", sizeof(m.os.name));
	ml_strlcpy(m.driver.version, tc->m.driver, sizeof(m.driver.version));
	if (tc->m.container) {
		m.os.container = true;
		ml_strlcpy(m.os.container_kind, tc->m.container, sizeof(m.os.container_kind));
	}
	ml_strlcpy(g.name, tc->m.gpu, sizeof(g.name));
	g.cc_major = tc->m.major;
	g.cc_minor = tc->m.minor;
	m.gpus = &g;
	m.n_gpus = 1;
	char root[256];
	snprintf(root, sizeof(root), SYSROOTS "%s", tc->m.root);
	ml_diagnose_opts o = ML_DIAGNOSE_OPTS_INIT;
	o.machine = &m;
	o.framework = &r;
	o.manifest = case_manifest;
	o.root = root;
	ml_verdict *v = NULL;
	assert_int_equal(ml_diagnose(&v, &o, &err), 0);
	unsetenv("CUDA_VISIBLE_DEVICES");

	const ml_check *k = text_check(v, tc->where);
	if (!k)
		fail_msg("%s: the check with the text did not fail", tc->name);
	if (v->cause != tc->cause || k->cause != tc->cause)
		fail_msg("%s: cause %s (check %s: %s), want %s", tc->name, ml_cause_name(v->cause),
		         k->name, ml_cause_name(k->cause), ml_cause_name(tc->cause));
	if (ml_verdict_exit_code(v) != tc->exit_code)
		fail_msg("%s: exit %d, want %d", tc->name, ml_verdict_exit_code(v), tc->exit_code);
	if (tc->detail && !strstr(k->detail, tc->detail))
		fail_msg("%s: detail '%s' lacks '%s'", tc->name, k->detail, tc->detail);
	for (size_t i = 0; i < 4 && tc->remedy[i]; i++) {
		if (!strstr(k->remedy, tc->remedy[i]))
			fail_msg("%s: remedy '%s' lacks '%s'", tc->name, k->remedy, tc->remedy[i]);
	}
	ml_verdict_free(v);
	ml_framework_result_release(&r);
	unlink(path);
	rmdir(dir);
}

static void test_each_known_text_gets_its_cause_and_remedy(void **state)
{
	(void)state;
	ML_LINUX_ONLY("the fake python is a #!/bin/sh script, which Windows cannot run");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		printf("# %s\n", cases[i].name);
		run_case(&cases[i]);
	}
}

/* Without an installed manifest the driver minimum is torch's CUDA
 * version's; for a version the driver table has no row for, the newest
 * older row of its major, as a lower bound, never the GPU's default
 * advice (550.54.14 for an RTX 3090, below what any CUDA 13 build needs). */
static void test_driver_too_old_for_a_toolkit_without_a_row_names_a_lower_bound(void **state)
{
	(void)state;
	ML_LINUX_ONLY("the fake python is a #!/bin/sh script, which Windows cannot run");
	struct text_case tc = cases[0];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, "driver too old (torch)"))
			tc = cases[i];
	assert_string_equal(tc.name, "driver too old (torch)");
	tc.remedy[0] = "update the NVIDIA driver to 595.71.05 or newer (torch is built with CUDA "
	               "13.3; a lower bound: mlsetup's driver table has no row for it)";
	tc.remedy[1] = NULL;
	case_torch_cuda = "13.3";
	case_manifest = NULL;
	run_case(&tc);
	tc.remedy[0] = "update the NVIDIA driver to 595.45.04 or newer (torch is built with CUDA "
	               "13.2)";
	case_torch_cuda = "13.2";
	run_case(&tc);
	case_torch_cuda = "12.4";
	case_manifest = "requirements.txt";
}

static void test_classifier_knows_each_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (ml_fw_classify(cases[i].text) != cases[i].cls)
			fail_msg("%s: '%s' is %s", cases[i].name, cases[i].text,
			         ml_fw_class_name(ml_fw_classify(cases[i].text)));
	}
	/* The CUDA enumerator names, as some tools print them. */
	assert_int_equal(ml_fw_classify("cudaErrorSystemNotReady"), ML_FW_SYSTEM_NOT_READY);
	assert_int_equal(ml_fw_classify("CUDA_ERROR_SYSTEM_NOT_READY"), ML_FW_SYSTEM_NOT_READY);
	assert_int_equal(ml_fw_classify("cudaErrorDevicesUnavailable"), ML_FW_DEVICES_BUSY);
	assert_int_equal(ml_fw_classify("CUDA_ERROR_DEVICE_UNAVAILABLE"), ML_FW_DEVICES_BUSY);
	assert_int_equal(ml_fw_classify("CUDA_ERROR_NO_BINARY_FOR_GPU"), ML_FW_NO_KERNEL_IMAGE);
	/* Other errors of the same torch function stay other than these. */
	assert_int_equal(ml_fw_classify("Unexpected error from cudaGetDeviceCount(). Error 803: "
	                                "system has unsupported display driver / cuda driver "
	                                "combination"),
	                 ML_FW_OTHER);
	assert_true(ml_fw_says_no_driver_library("RuntimeError: Found no NVIDIA driver on your "
	                                         "system. Please check ..."));
	assert_false(ml_fw_says_no_driver_library("No CUDA GPUs are available"));
	assert_false(ml_fw_says_no_driver_library(NULL));
	assert_string_equal(ml_fw_class_name(ML_FW_SYSTEM_NOT_READY), "system_not_ready");
	assert_string_equal(ml_fw_class_name(ML_FW_DEVICES_BUSY), "devices_busy");
	assert_string_equal(ml_cause_name(ML_CAUSE_SYSTEM_NOT_READY), "system_not_ready");
	assert_string_equal(ml_cause_name(ML_CAUSE_GPU_BUSY), "gpu_busy");
	assert_string_equal(ml_cause_name(ML_CAUSE_PRECISION_FAILED), "precision_failed");
	assert_string_equal(ml_cause_name(ML_CAUSE_OTHER), "other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_each_known_text_gets_its_cause_and_remedy),
	        cmocka_unit_test(
	                test_driver_too_old_for_a_toolkit_without_a_row_names_a_lower_bound),
	        cmocka_unit_test(test_classifier_knows_each_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
