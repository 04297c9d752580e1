/*
 * win_probe.c - loads the Windows fake driver DLLs (nvml.dll, nvcuda.dll,
 * built by `make shims-windows`) the way a Windows program loads the real
 * ones, and prints what they answer, one "key = value" line each.
 *
 *   win_probe.exe NVML_DLL CUDA_DLL   load both by full path
 *   win_probe.exe                     load nvml.dll and nvcuda.dll from
 *                                     System32 only (after
 *                                     tests/shims/install-wine-shims.sh)
 *
 * The machine comes from MLSETUP_FAKE_NVIDIA as for the Linux shims; under
 * wine give it as a Windows path (Z:\tmp\x.json: wine maps / to Z:).
 * Exits 0 when every call succeeded, 1 when one failed (the line says
 * which), 2 when a DLL or a symbol is missing. Test code, built for
 * x86_64-windows-gnu by zig.
 */
#include <windows.h>

#include <shellapi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_str_fn)(char *, unsigned int);
typedef int (*nvml_uint_fn)(unsigned int *);
typedef int (*nvml_handle_fn)(unsigned int, void **);
typedef int (*nvml_name_fn)(void *, char *, unsigned int);
typedef int (*nvml_cc_fn)(void *, int *, int *);
typedef int (*nvml_model_fn)(void *, int *, int *);
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_attr_fn)(int *, int, int);

static int g_failed;

static HMODULE load(const wchar_t *path, bool full_path)
{
	/* A full path: the DLL's own directory is searched for its
	 * dependencies; a bare name: System32 only, never the current or the
	 * program's directory. */
	DWORD flags = full_path
	                      ? LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
	                      : LOAD_LIBRARY_SEARCH_SYSTEM32;
	HMODULE h = LoadLibraryExW(path, NULL, flags);

	if (!h) {
		printf("error: cannot load %ls: error %lu\n", path, (unsigned long)GetLastError());
		exit(2);
	}
	return h;
}

static FARPROC sym(HMODULE h, const char *name)
{
	FARPROC p = GetProcAddress(h, name);

	if (!p) {
		printf("error: no symbol %s\n", name);
		exit(2);
	}
	return p;
}

/* Prints "name = rc" and remembers a failure. */
static int check(const char *name, int rc)
{
	printf("%s = %d\n", name, rc);
	if (rc != 0)
		g_failed = 1;
	return rc;
}

/* Casts between function pointer types go through this, which -Wextra
 * (-Wcast-function-type) accepts. */
#define FN(type, h, name) ((type)(void (*)(void))sym(h, name))

static void probe_nvml(HMODULE h)
{
	char buf[96];
	unsigned int n = 0;

	if (check("nvmlInit_v2", FN(nvml_void_fn, h, "nvmlInit_v2")()) != 0)
		return;
	if (check("nvmlSystemGetDriverVersion",
	          FN(nvml_str_fn, h, "nvmlSystemGetDriverVersion")(buf, sizeof buf)) == 0)
		printf("driver = %s\n", buf);
	if (check("nvmlDeviceGetCount_v2", FN(nvml_uint_fn, h, "nvmlDeviceGetCount_v2")(&n)) == 0)
		printf("nvml.count = %u\n", n);
	for (unsigned int i = 0; i < n; i++) {
		void *dev = NULL;
		int major = -1, minor = -1, cur = -1, pend = -1;

		if (check("nvmlDeviceGetHandleByIndex_v2",
		          FN(nvml_handle_fn, h, "nvmlDeviceGetHandleByIndex_v2")(i, &dev)) != 0)
			continue;
		if (check("nvmlDeviceGetName",
		          FN(nvml_name_fn, h, "nvmlDeviceGetName")(dev, buf, sizeof buf)) == 0)
			printf("nvml.gpu%u.name = %s\n", i, buf);
		if (check("nvmlDeviceGetCudaComputeCapability",
		          FN(nvml_cc_fn, h, "nvmlDeviceGetCudaComputeCapability")(dev, &major,
		                                                                  &minor)) == 0)
			printf("nvml.gpu%u.cc = %d.%d\n", i, major, minor);
		if (check("nvmlDeviceGetDriverModel",
		          FN(nvml_model_fn, h, "nvmlDeviceGetDriverModel")(dev, &cur, &pend)) == 0)
			printf("nvml.gpu%u.driver_model = %d %d\n", i, cur, pend);
	}
	check("nvmlShutdown", FN(nvml_void_fn, h, "nvmlShutdown")());
}

static void probe_cuda(HMODULE h)
{
	int v = 0, n = 0;

	if (check("cuInit", FN(cu_init_fn, h, "cuInit")(0)) != 0)
		return;
	if (check("cuDriverGetVersion", FN(cu_int_fn, h, "cuDriverGetVersion")(&v)) == 0)
		printf("cuda.version = %d\n", v);
	if (check("cuDeviceGetCount", FN(cu_int_fn, h, "cuDeviceGetCount")(&n)) == 0)
		printf("cuda.count = %d\n", n);
	for (int i = 0; i < n; i++) {
		int dev = -1, major = -1, minor = -1;

		if (check("cuDeviceGet", FN(cu_get_fn, h, "cuDeviceGet")(&dev, i)) != 0)
			continue;
		check("cuDeviceGetAttribute(75)",
		      FN(cu_attr_fn, h, "cuDeviceGetAttribute")(&major, 75, dev));
		check("cuDeviceGetAttribute(76)",
		      FN(cu_attr_fn, h, "cuDeviceGetAttribute")(&minor, 76, dev));
		printf("cuda.gpu%d.cc = %d.%d\n", i, major, minor);
	}
}

int main(void)
{
	int argc = 0;
	wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);

	if (!argv || (argc != 1 && argc != 3)) {
		printf("usage: win_probe.exe [NVML_DLL CUDA_DLL]\n");
		return 2;
	}
	probe_nvml(load(argc == 3 ? argv[1] : L"nvml.dll", argc == 3));
	probe_cuda(load(argc == 3 ? argv[2] : L"nvcuda.dll", argc == 3));
	LocalFree(argv);
	fflush(stdout);
	return g_failed;
}
