/*
 * fake_cuda.c - a fake CUDA driver API (libcuda.so.1) for tests.
 *
 * Exports the driver API entry points mlsetup's cuda probe and driver-level
 * smoke test use, with the real C ABI, answering from the machine described
 * in $MLSETUP_FAKE_NVIDIA (see README.md and fake_common.h). Return codes
 * follow CUDA: cuInit gives 100 CUDA_ERROR_NO_DEVICE when there is no usable
 * JSON, or the configured "cuda_init_error"; device calls before a
 * successful cuInit give 3, a bad ordinal 101, a NULL or unknown argument 1.
 * As in the real driver, cuDriverGetVersion, cuGetErrorName and
 * cuGetErrorString work without cuInit (cuDriverGetVersion still needs the
 * JSON, else 3). A function listed in "missing_symbols" stays exported (a
 * shared library cannot un-export a symbol at run time) but returns 500
 * CUDA_ERROR_NOT_FOUND, which mlsetup treats like a NULL dlsym().
 *
 * Contexts, modules, memory and launches are simulated on the host:
 * primary contexts are reference-counted per device and made current per
 * thread; module loading walks the fatbin it is given (or reads PTX text)
 * and applies the architecture rules to the current device (209 when
 * nothing fits, 222 when only PTX newer than the driver fits); device
 * memory is host memory within the GPU's "memory_mib"; and cuLaunchKernel
 * runs the one known kernel, saxpy(int n, float a, const float *x,
 * float *y), on the host. Fault knobs inject launch failures, wrong results
 * and module load errors, a context error knob refuses contexts (an
 * exclusive-process GPU held elsewhere), and GPUs marked "mig" (MIG mode on,
 * no MIG device) are not enumerated. This file is self-contained test code: it does not
 * link mlsetup and carries its own small fatbin walker.
 */
#include "fake_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Minimal CUDA driver API types with the real layouts (cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 on 64-bit */
typedef int CUjit_option;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
};

/* CUjit_option values the fake fills (cuModuleLoadDataEx). */
enum {
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* CUdevice_attribute values the fake answers. */
enum {
	CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
	CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
	CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

/* The exported API, with the CUDA driver API's signatures. */
FAKE_API CUresult cuInit(unsigned int Flags);
FAKE_API CUresult cuDriverGetVersion(int *driverVersion);
FAKE_API CUresult cuGetErrorName(CUresult error, const char **pStr);
FAKE_API CUresult cuGetErrorString(CUresult error, const char **pStr);
FAKE_API CUresult cuDeviceGetCount(int *count);
FAKE_API CUresult cuDeviceGet(CUdevice *device, int ordinal);
FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
FAKE_API CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
FAKE_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
FAKE_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx);
FAKE_API CUresult cuCtxSynchronize(void);
FAKE_API CUresult cuModuleLoadData(CUmodule *module, const void *image);
FAKE_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                     CUjit_option *options, void **optionValues);
FAKE_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
FAKE_API CUresult cuModuleUnload(CUmodule hmod);
FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
FAKE_API CUresult cuMemFree_v2(CUdeviceptr dptr);
FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
FAKE_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                 void **extra);

#define FAKE_MAX_DEVICES 64

/* A device's primary context. */
struct CUctx_st {
	int device;
	int refcount;    /* cuDevicePrimaryCtxRetain minus Release */
	CUresult sticky; /* a kernel fault: every later call in the context
	                  * returns it until the context is released */
};

/* A kernel of a loaded module; only "saxpy" exists. */
struct CUfunc_st {
	struct CUmod_st *module;
};

/* A loaded module, in the g_cuda.modules list. */
struct CUmod_st {
	struct CUmod_st *next;
	int device;
	bool has_saxpy;
	struct CUfunc_st saxpy;
};

/* One cuMemAlloc_v2 block, in the g_cuda.allocs list; its address is the
 * CUdeviceptr. */
struct alloc {
	struct alloc *next;
	int device;
	size_t size;
	unsigned char data[];
};

/* Per-process driver state; lists and counters are guarded by lock. */
static struct {
	atomic_int initialized; /* cuInit succeeded */
	pthread_mutex_t lock;
	struct CUctx_st ctx[FAKE_MAX_DEVICES];
	struct CUmod_st *modules;
	struct alloc *allocs;
	size_t used[FAKE_MAX_DEVICES]; /* bytes allocated per device */
} g_cuda = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The calling thread's current context (cuCtxSetCurrent). */
static _Thread_local struct CUctx_st *t_current;

/* Names and descriptions for cuGetErrorName / cuGetErrorString. */
static const struct {
	CUresult code;
	const char *name;
	const char *text;
} g_errors[] = {
        {0, "CUDA_SUCCESS", "no error"},
        {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
        {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
        {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
        {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
        {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
         "CUDA driver version is insufficient for CUDA runtime version"},
        {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
        {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
        {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
        {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
        {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
        {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
         "no kernel image is available for execution on the device"},
        {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
         "the provided PTX was compiled with an unsupported toolchain"},
        {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
        {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
        {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
        {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
        {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
        {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
         "system has unsupported display driver / cuda driver combination"},
        {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
         "forward compatibility was attempted on non supported HW"},
        {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Entry points that need a successful cuInit start with this. */
#define CUDA_ENTER()                                                                               \
	do {                                                                                       \
		if (fake_symbol_missing(__func__))                                                 \
			return CUDA_ERROR_NOT_FOUND;                                               \
		if (!atomic_load(&g_cuda.initialized))                                             \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
	} while (0)

/* Looks a device up, or returns CUDA_ERROR_INVALID_DEVICE from the caller. */
#define CUDA_GPU(var, dev)                                                                         \
	do {                                                                                       \
		(var) = fake_cuda_gpu_at(dev);                                                     \
		if (!(var))                                                                        \
			return CUDA_ERROR_INVALID_DEVICE;                                          \
	} while (0)

static CUresult error_lookup(CUresult error, const char **out, bool want_name)
{
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(g_errors) / sizeof(g_errors[0]); i++) {
		if (g_errors[i].code == error) {
			*out = want_name ? g_errors[i].name : g_errors[i].text;
			return CUDA_SUCCESS;
		}
	}
	*out = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int Flags)
{
	const fake_config *c = fake_config_get();

	if (fake_symbol_missing(__func__))
		return CUDA_ERROR_NOT_FOUND;
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->loaded)
		return CUDA_ERROR_NO_DEVICE;
	if (c->cuda_init_error != 0)
		return c->cuda_init_error;
	atomic_store(&g_cuda.initialized, 1);
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
	const fake_config *c = fake_config_get();

	if (fake_symbol_missing(__func__))
		return CUDA_ERROR_NOT_FOUND;
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->loaded)
		return CUDA_ERROR_NOT_INITIALIZED;
	*driverVersion = c->cuda;
	return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	if (fake_symbol_missing(__func__))
		return CUDA_ERROR_NOT_FOUND;
	return error_lookup(error, pStr, true);
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	if (fake_symbol_missing(__func__))
		return CUDA_ERROR_NOT_FOUND;
	return error_lookup(error, pStr, false);
}

CUresult cuDeviceGetCount(int *count)
{
	CUDA_ENTER();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (int)fake_cuda_gpu_count();
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, ordinal);
	(void)g;
	*device = ordinal;
	return CUDA_SUCCESS;
}

/* Truncates to len - 1 characters like the real driver. */
CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	snprintf(name, (size_t)len, "%s", g->name);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*pi = g->cc_major;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*pi = g->cc_minor;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		*pi = (int)g->pci_bus;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		*pi = (int)g->pci_device;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		*pi = (int)g->pci_domain;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	*bytes = (size_t)(g->memory_mib * 1048576ULL);
	return CUDA_SUCCESS;
}

/* "0000:01:00.0"; truncates to len - 1 characters like the real driver. */
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.%X", g->pci_domain, g->pci_bus,
	         g->pci_device, g->pci_function);
	return CUDA_SUCCESS;
}

static CUresult device_uuid(CUuuid *uuid, CUdevice dev)
{
	const fake_gpu *g;

	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	memcpy(uuid->bytes, g->uuid_bytes, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	CUDA_ENTER();
	return device_uuid(uuid, dev);
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	CUDA_ENTER();
	return device_uuid(uuid, dev);
}

/* --- contexts ----------------------------------------------------------- */

/* Returns the current context, or NULL when none is current or it has been
 * released. Callers hold no lock: the refcount is only read. */
static struct CUctx_st *current(void)
{
	struct CUctx_st *c = t_current;

	return c && c->refcount > 0 ? c : NULL;
}

/* Entry points that work in the current context start with this: they
 * need one (else 201) and fail with its sticky error. */
#define CUDA_CONTEXT(var)                                                                          \
	do {                                                                                       \
		(var) = current();                                                                 \
		if (!(var))                                                                        \
			return CUDA_ERROR_INVALID_CONTEXT;                                         \
		if ((var)->sticky)                                                                 \
			return (var)->sticky;                                                      \
	} while (0)

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	const fake_gpu *g;

	CUDA_ENTER();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_GPU(g, dev);
	if (g->faults.context_error)
		return g->faults.context_error;
	if (dev >= FAKE_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&g_cuda.lock);
	g_cuda.ctx[dev].device = dev;
	g_cuda.ctx[dev].refcount++;
	pthread_mutex_unlock(&g_cuda.lock);
	*pctx = &g_cuda.ctx[dev];
	return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
	const fake_gpu *g;
	CUresult rc = CUDA_SUCCESS;

	CUDA_GPU(g, dev);
	(void)g;
	if (dev >= FAKE_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&g_cuda.lock);
	if (g_cuda.ctx[dev].refcount <= 0) {
		rc = CUDA_ERROR_INVALID_CONTEXT;
	} else if (--g_cuda.ctx[dev].refcount == 0) {
		/* The context is destroyed: its fault goes with it. */
		g_cuda.ctx[dev].sticky = CUDA_SUCCESS;
		if (t_current == &g_cuda.ctx[dev])
			t_current = NULL;
	}
	pthread_mutex_unlock(&g_cuda.lock);
	return rc;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CUDA_ENTER();
	return primary_release(dev);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUDA_ENTER();
	return primary_release(dev);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CUDA_ENTER();
	if (!ctx) {
		t_current = NULL;
		return CUDA_SUCCESS;
	}
	if (ctx < &g_cuda.ctx[0] || ctx >= &g_cuda.ctx[FAKE_MAX_DEVICES] || ctx->refcount <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	t_current = ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	struct CUctx_st *c;

	CUDA_ENTER();
	CUDA_CONTEXT(c);
	return CUDA_SUCCESS;
}

/* --- modules: which code in an image runs on the device ----------------- */

#define FATBIN_MAGIC       0xba55ed50u
#define FATBIN_KIND_PTX    1
#define FATBIN_KIND_SASS   2
#define FATBIN_FLAG_ARCH_A 0x100000ull /* sm_XYa: exactly X.Y */
#define FATBIN_FLAG_ARCH_F 0x200000ull /* sm_XYf: family X, minor >= Y */

static uint64_t le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Highest PTX ISA version (10 * major + minor) the simulated driver's
 * JIT accepts, from its CUDA version (PTX ISA release notes: CUDA 11.0 ->
 * 7.0, 12.0 -> 8.0, 12.4 -> 8.4, 12.8 -> 8.7, 12.9 -> 8.8, 13.0 -> 9.0). */
static int driver_ptx_isa(void)
{
	static const struct {
		int cuda, isa;
	} table[] = {
	        {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74},
	        {11050, 75}, {11060, 76}, {11070, 77}, {11080, 78}, {12000, 80},
	        {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
	        {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90},
	};
	int cuda = fake_config_get()->cuda, isa = 60;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (cuda >= table[i].cuda)
			isa = table[i].isa;
	}
	return isa;
}

/* The binary rule (docs/gpu-truth.md), kept
 * separate from mlsetup's on purpose: SASS sm_AB runs on major A, minor
 * >= B; "a" only on exactly A.B; "f" within family A, minor >= B. PTX
 * compute_AB JITs for any device >= A.B ("a"/"f" as for SASS). */
static bool code_runs(bool ptx, unsigned int arch, unsigned long long flags, const fake_gpu *g)
{
	int major = (int)arch / 10, minor = (int)arch % 10;

	if (flags & FATBIN_FLAG_ARCH_A)
		return g->cc_major == major && g->cc_minor == minor;
	if ((flags & FATBIN_FLAG_ARCH_F) || !ptx)
		return g->cc_major == major && g->cc_minor >= minor;
	return g->cc_major > major || (g->cc_major == major && g->cc_minor >= minor);
}

/* A module load's outcome: the CUresult and the JIT logs. */
struct load {
	CUresult rc;
	bool has_saxpy;
	char info[256];
	char error[256];
};

/* Walks one fatbin container (docs/nvidia-and-python-facts.md "Fatbinary layout"): SASS that runs on g
 * wins; else PTX the driver's JIT accepts; else 222 when PTX fits g but is
 * newer than the driver, 209 when nothing fits. */
static void load_fatbin(struct load *ld, const unsigned char *p, const fake_gpu *g)
{
	uint64_t header = le(p + 6, 2), size = le(p + 8, 8);
	int isa = driver_ptx_isa();
	bool sass = false, ptx = false, ptx_too_new = false;
	unsigned int ptx_arch = 0, new_isa = 0;

	if (header < 16 || size > (1ull << 30)) {
		ld->rc = CUDA_ERROR_INVALID_IMAGE;
		snprintf(ld->error, sizeof(ld->error), "fake-cuda: malformed fatbin header");
		return;
	}
	for (uint64_t off = header; off + 64 <= header + size;) {
		const unsigned char *e = p + off;
		unsigned int kind = (unsigned int)le(e, 2);
		uint64_t ehdr = le(e + 4, 4), payload = le(e + 8, 8);
		unsigned int minor = (unsigned int)le(e + 24, 2),
		             major = (unsigned int)le(e + 26, 2);
		unsigned int arch = (unsigned int)le(e + 28, 4);
		unsigned long long flags = le(e + 40, 8);

		if (ehdr < 64 || ehdr > 4096 || payload > size) {
			ld->rc = CUDA_ERROR_INVALID_IMAGE;
			snprintf(ld->error, sizeof(ld->error), "fake-cuda: malformed fatbin entry");
			return;
		}
		if (kind == FATBIN_KIND_SASS && code_runs(false, arch, flags, g)) {
			sass = true;
		} else if (kind == FATBIN_KIND_PTX && code_runs(true, arch, flags, g)) {
			if (major * 10 + minor <= (unsigned int)isa) {
				ptx = true;
				ptx_arch = arch;
			} else {
				ptx_too_new = true;
				new_isa = major * 10 + minor;
			}
		}
		off += ehdr + payload;
	}
	ld->has_saxpy = true; /* fatbins are taken to hold the saxpy kernel */
	if (sass) {
		ld->rc = CUDA_SUCCESS;
	} else if (ptx) {
		ld->rc = CUDA_SUCCESS;
		snprintf(ld->info, sizeof(ld->info),
		         "fake-cuda: JIT-compiled PTX compute_%u for sm_%d%d", ptx_arch,
		         g->cc_major, g->cc_minor);
	} else if (ptx_too_new) {
		ld->rc = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
		snprintf(ld->error, sizeof(ld->error),
		         "ptxas fatal   : Unsupported .version %u.%u; current version is '%d.%d'",
		         new_isa / 10, new_isa % 10, isa / 10, isa % 10);
	} else {
		ld->rc = CUDA_ERROR_NO_BINARY_FOR_GPU;
	}
}

/* Reads ".version X.Y" and ".target sm_XY" of PTX text: 222 when the ISA
 * is newer than the driver's JIT, 218 when the target is newer than g. */
static void load_ptx(struct load *ld, const char *text, const fake_gpu *g)
{
	const char *v = strstr(text, ".version"), *t = strstr(text, ".target");
	unsigned int vmaj = 0, vmin = 0, arch = 0;
	int isa = driver_ptx_isa();

	if (!v || !t || sscanf(v, ".version %u.%u", &vmaj, &vmin) != 2 ||
	    sscanf(t, ".target sm_%u", &arch) != 1) {
		ld->rc = CUDA_ERROR_INVALID_PTX;
		snprintf(ld->error, sizeof(ld->error), "ptxas fatal   : no .version or .target");
		return;
	}
	if (vmaj * 10 + vmin > (unsigned int)isa) {
		ld->rc = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
		snprintf(ld->error, sizeof(ld->error),
		         "ptxas fatal   : Unsupported .version %u.%u; current version is '%d.%d'",
		         vmaj, vmin, isa / 10, isa % 10);
		return;
	}
	if (!code_runs(true, arch, 0, g)) {
		ld->rc = CUDA_ERROR_INVALID_PTX;
		snprintf(ld->error, sizeof(ld->error),
		         "ptxas fatal   : SM version specified by .target (sm_%u) is higher than "
		         "the device's (sm_%d%d)",
		         arch, g->cc_major, g->cc_minor);
		return;
	}
	ld->rc = CUDA_SUCCESS;
	ld->has_saxpy = strstr(text, ".entry saxpy(") != NULL;
	snprintf(ld->info, sizeof(ld->info), "fake-cuda: JIT-compiled PTX sm_%u for sm_%d%d", arch,
	         g->cc_major, g->cc_minor);
}

/* Copies msg into a JIT log buffer of cap bytes and writes back how much
 * was filled (CU_JIT_*_LOG_BUFFER_SIZE_BYTES is in/out). */
static void put_log(char *buf, void **size_slot, const char *msg)
{
	size_t cap = size_slot ? (size_t)(uintptr_t)*size_slot : 0;
	size_t n = strlen(msg);

	if (!buf || cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, msg, n);
	buf[n] = '\0';
	*size_slot = (void *)(uintptr_t)n;
}

/* cuModuleLoadDataEx and cuModuleLoadData, after CUDA_ENTER. */
static CUresult module_load(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
	struct CUctx_st *c;
	struct load ld;
	const unsigned char *p = image;
	const fake_gpu *g;
	char *info = NULL, *error = NULL;
	void **info_size = NULL, **error_size = NULL;

	CUDA_CONTEXT(c);
	if (!module || !image || (numOptions && (!options || !optionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < numOptions; i++) {
		switch (options[i]) {
		case CU_JIT_INFO_LOG_BUFFER:
			info = optionValues[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			info_size = &optionValues[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER:
			error = optionValues[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			error_size = &optionValues[i];
			break;
		default:
			break; /* other JIT options are accepted and ignored */
		}
	}
	g = fake_cuda_gpu_at(c->device);
	if (!g)
		return CUDA_ERROR_INVALID_CONTEXT;
	memset(&ld, 0, sizeof(ld));
	if (g->faults.module_load_error) {
		ld.rc = g->faults.module_load_error;
		snprintf(ld.error, sizeof(ld.error), "fake-cuda: module_load_error %d", ld.rc);
	} else if (le(p, 4) == FATBIN_MAGIC) {
		load_fatbin(&ld, p, g);
	} else if (memcmp(p,
	                  "\x7f"
	                  "ELF",
	                  4) == 0) {
		ld.rc = CUDA_ERROR_INVALID_IMAGE;
		snprintf(ld.error, sizeof(ld.error), "fake-cuda: cubin images are not simulated");
	} else if (strstr(image, ".version")) {
		load_ptx(&ld, image, g);
	} else {
		ld.rc = CUDA_ERROR_INVALID_IMAGE;
	}
	put_log(info, info_size, ld.info);
	put_log(error, error_size, ld.error);
	if (ld.rc != CUDA_SUCCESS)
		return ld.rc;

	struct CUmod_st *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->device = c->device;
	m->has_saxpy = ld.has_saxpy;
	m->saxpy.module = m;
	pthread_mutex_lock(&g_cuda.lock);
	m->next = g_cuda.modules;
	g_cuda.modules = m;
	pthread_mutex_unlock(&g_cuda.lock);
	*module = m;
	return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
	CUDA_ENTER();
	return module_load(module, image, numOptions, options, optionValues);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	CUDA_ENTER();
	return module_load(module, image, 0, NULL, NULL);
}

/* True when m is a loaded module; call with the lock held. */
static bool module_live(const struct CUmod_st *m)
{
	for (const struct CUmod_st *it = g_cuda.modules; it; it = it->next) {
		if (it == m)
			return true;
	}
	return false;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	bool found = false;

	CUDA_ENTER();
	if (!hmod)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_cuda.lock);
	for (struct CUmod_st **it = &g_cuda.modules; *it; it = &(*it)->next) {
		if (*it == hmod) {
			*it = hmod->next;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&g_cuda.lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	free(hmod);
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	bool live;

	CUDA_ENTER();
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_cuda.lock);
	live = module_live(hmod);
	pthread_mutex_unlock(&g_cuda.lock);
	if (!live)
		return CUDA_ERROR_INVALID_HANDLE;
	if (strcmp(name, "saxpy") != 0 || !hmod->has_saxpy)
		return CUDA_ERROR_NOT_FOUND;
	*hfunc = &hmod->saxpy;
	return CUDA_SUCCESS;
}

/* --- memory ------------------------------------------------------------- */

/* The block holding [ptr, ptr + len) on device, or NULL; lock held. */
static struct alloc *find_alloc(CUdeviceptr ptr, size_t len, int device)
{
	for (struct alloc *a = g_cuda.allocs; a; a = a->next) {
		uintptr_t lo = (uintptr_t)a->data;

		if (a->device == device && ptr >= lo && ptr - lo <= a->size &&
		    len <= a->size - (ptr - lo))
			return a;
	}
	return NULL;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *c;
	const fake_gpu *g;
	struct alloc *a;
	CUresult rc = CUDA_SUCCESS;

	CUDA_ENTER();
	CUDA_CONTEXT(c);
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	g = fake_cuda_gpu_at(c->device);
	if (!g)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&g_cuda.lock);
	if (g->memory_mib && (bytesize > g->memory_mib * 1048576ull ||
	                      g_cuda.used[c->device] > g->memory_mib * 1048576ull - bytesize)) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!(a = calloc(1, sizeof(*a) + bytesize))) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		a->device = c->device;
		a->size = bytesize;
		a->next = g_cuda.allocs;
		g_cuda.allocs = a;
		g_cuda.used[c->device] += bytesize;
		*dptr = (CUdeviceptr)(uintptr_t)a->data;
	}
	pthread_mutex_unlock(&g_cuda.lock);
	return rc;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct alloc **it, *a = NULL;

	CUDA_ENTER();
	pthread_mutex_lock(&g_cuda.lock);
	for (it = &g_cuda.allocs; *it; it = &(*it)->next) {
		if ((uintptr_t)(*it)->data == dptr) {
			a = *it;
			*it = a->next;
			g_cuda.used[a->device] -= a->size;
			break;
		}
	}
	pthread_mutex_unlock(&g_cuda.lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	free(a);
	return CUDA_SUCCESS;
}

/* Checks a copy of len bytes at device address ptr in the current context. */
static CUresult device_range(struct CUctx_st *c, CUdeviceptr ptr, size_t len)
{
	bool ok;

	pthread_mutex_lock(&g_cuda.lock);
	ok = find_alloc(ptr, len, c->device) != NULL;
	pthread_mutex_unlock(&g_cuda.lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	struct CUctx_st *c;

	CUDA_ENTER();
	CUDA_CONTEXT(c);
	if (!srcHost || device_range(c, dstDevice, ByteCount) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	struct CUctx_st *c;

	CUDA_ENTER();
	CUDA_CONTEXT(c);
	if (!dstHost || device_range(c, srcDevice, ByteCount) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
	return CUDA_SUCCESS;
}

/* --- launches ----------------------------------------------------------- */

/* Runs saxpy(n, a, x, y) on the host, as the kernel in
 * src/verify/saxpy.cu computes it. A bad pointer is a kernel fault (700)
 * that, as on a GPU, shows up at the next synchronization. */
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
	struct CUctx_st *c;
	const fake_gpu *g;
	bool live;
	int n;
	float a, *x, *y;
	CUdeviceptr dx, dy;

	(void)sharedMemBytes;
	(void)hStream;
	CUDA_ENTER();
	CUDA_CONTEXT(c);
	if (!f || !kernelParams || extra)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_cuda.lock);
	live = module_live(f->module);
	pthread_mutex_unlock(&g_cuda.lock);
	if (!live || f->module->device != c->device)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ ||
	    (unsigned long long)blockDimX * blockDimY * blockDimZ > 1024 || gridDimY > 65535 ||
	    gridDimZ > 65535 || gridDimX > 0x7fffffffu)
		return CUDA_ERROR_INVALID_VALUE;
	g = fake_cuda_gpu_at(c->device);
	if (!g)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (g->faults.launch_error) {
		c->sticky = g->faults.launch_error;
		return CUDA_SUCCESS;
	}
	memcpy(&n, kernelParams[0], sizeof(n));
	memcpy(&a, kernelParams[1], sizeof(a));
	memcpy(&dx, kernelParams[2], sizeof(dx));
	memcpy(&dy, kernelParams[3], sizeof(dy));
	if (n < 0 || (n > 0 && (device_range(c, dx, (size_t)n * sizeof(float)) ||
	                        device_range(c, dy, (size_t)n * sizeof(float))))) {
		c->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
		return CUDA_SUCCESS;
	}
	x = (float *)(uintptr_t)dx;
	y = (float *)(uintptr_t)dy;
	for (int i = 0; i < n; i++)
		y[i] = a * x[i] + y[i];
	if (g->faults.wrong_results && n > 0)
		y[n / 2] += 1.0f;
	return CUDA_SUCCESS;
}
