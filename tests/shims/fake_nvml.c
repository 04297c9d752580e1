/*
 * fake_nvml.c - a fake NVML (libnvidia-ml.so.1) for tests.
 *
 * Exports the NVML entry points mlsetup's nvml probe uses, with the real C
 * ABI, answering from the machine described in $MLSETUP_FAKE_NVIDIA (see
 * README.md and fake_common.h). Return codes follow NVML: 1 before
 * nvmlInit, 2 for a bad handle or NULL, 7 when a buffer is too small, 9
 * when there is no usable JSON. A function listed in "missing_symbols"
 * stays exported (a shared library cannot un-export a symbol at run time)
 * but returns 13 NVML_ERROR_FUNCTION_NOT_FOUND, which mlsetup treats like
 * a NULL dlsym(). nvmlErrorString cannot return an error code and ignores
 * "missing_symbols".
 */
#include "fake_common.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* Minimal NVML types with the real layouts (nvml.h, pciInfo v3). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlMemory_st {
	unsigned long long total; /* bytes */
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlPciInfo_st {
	char busIdLegacy[16]; /* "0000:01:00.0" */
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId; /* device << 16 | vendor */
	unsigned int pciSubSystemId;
	char busId[32]; /* "00000000:01:00.0" */
} nvmlPciInfo_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
};

/* The exported API, with NVML's signatures. */
FAKE_API nvmlReturn_t nvmlInit_v2(void);
FAKE_API nvmlReturn_t nvmlInit(void);
FAKE_API nvmlReturn_t nvmlShutdown(void);
FAKE_API const char *nvmlErrorString(nvmlReturn_t result);
FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
                                                         int *minor);
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
/* nvmlDriverModel_t is an enum, an int in the C ABI. */
FAKE_API nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t device, int *current, int *pending);

/* nvmlInit/nvmlShutdown nest like the real library's reference count. */
static atomic_int g_init_count;

/* Every entry point but init and nvmlErrorString starts with this. */
#define NVML_ENTER()                                                                               \
	do {                                                                                       \
		if (fake_symbol_missing(__func__))                                                 \
			return NVML_ERROR_FUNCTION_NOT_FOUND;                                      \
		if (atomic_load(&g_init_count) <= 0)                                               \
			return NVML_ERROR_UNINITIALIZED;                                           \
	} while (0)

/* Maps a handle back to its GPU; NULL for anything nvmlDeviceGetHandleBy*
 * did not hand out. */
static const fake_gpu *gpu_of(nvmlDevice_t dev)
{
	const fake_config *c = fake_config_get();

	for (size_t i = 0; i < c->n_gpus; i++) {
		if ((uintptr_t)&c->gpus[i] == (uintptr_t)dev)
			return &c->gpus[i];
	}
	return NULL;
}

static nvmlReturn_t copy_out(char *dst, unsigned int len, const char *src)
{
	if (!dst)
		return NVML_ERROR_INVALID_ARGUMENT;
	return fake_copy_string(dst, len, src) ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

static nvmlReturn_t init(const char *name)
{
	const fake_config *c = fake_config_get();

	if (fake_symbol_missing(name))
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (!c->loaded)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (c->nvml_init_error != 0)
		return c->nvml_init_error;
	atomic_fetch_add(&g_init_count, 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
	return init(__func__);
}

nvmlReturn_t nvmlInit(void)
{
	return init(__func__);
}

nvmlReturn_t nvmlShutdown(void)
{
	int n;

	if (fake_symbol_missing(__func__))
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	n = atomic_load(&g_init_count);
	do {
		if (n <= 0)
			return NVML_ERROR_UNINITIALIZED;
	} while (!atomic_compare_exchange_weak(&g_init_count, &n, n - 1));
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	static const struct {
		int code;
		const char *text;
	} table[] = {
	        {0, "Success"},
	        {1, "Uninitialized"},
	        {2, "Invalid Argument"},
	        {3, "Not Supported"},
	        {4, "Insufficient Permissions"},
	        {5, "Already Initialized"},
	        {6, "Not Found"},
	        {7, "Insufficient Size"},
	        {8, "Insufficient External Power"},
	        {9, "Driver Not Loaded"},
	        {10, "Timeout"},
	        {11, "Interrupt Request Issue"},
	        {12, "Library Not Found"},
	        {13, "Function Not Found"},
	        {14, "Corrupted infoROM"},
	        {15, "GPU is lost"},
	        {16, "GPU requires restart"},
	        {17, "Operating System Error"},
	        {18, "Driver/library version mismatch"},
	        {19, "In use by another client"},
	        {20, "Insufficient Memory"},
	        {21, "No data"},
	        {999, "Unknown Error"},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].code == result)
			return table[i].text;
	}
	return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	NVML_ENTER();
	return copy_out(version, length, fake_config_get()->driver);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	NVML_ENTER();
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = fake_config_get()->cuda;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	NVML_ENTER();
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = fake_config_get()->cuda;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	NVML_ENTER();
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = (unsigned int)fake_config_get()->n_gpus;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = fake_gpu_at(index);
	if (!g || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = (nvmlDevice_t)(uintptr_t)g;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	return copy_out(name, length, g->name);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g || !major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = g->cc_major;
	*minor = g->cc_minor;
	return NVML_SUCCESS;
}

/* An idle GPU: everything free. */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g || !memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = g->memory_mib * 1048576ULL;
	memory->free = memory->total;
	memory->used = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.%X",
	         g->pci_domain & 0xffffu, g->pci_bus, g->pci_device, g->pci_function);
	pci->domain = g->pci_domain;
	pci->bus = g->pci_bus;
	pci->device = g->pci_device;
	pci->pciDeviceId = g->pci_device_id << 16 | FAKE_PCI_VENDOR_NVIDIA;
	pci->pciSubSystemId = 0;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", g->pci_domain, g->pci_bus,
	         g->pci_device, g->pci_function);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	const fake_gpu *g;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	return copy_out(uuid, length, g->uuid);
}

/* Windows only in the real NVML: WDDM (0), WDM/TCC (1) or MCDM (2), current
 * and after the next reboot (the fake has no pending change). The Windows
 * build answers WDDM for a GPU without "driver_model"; the Linux build
 * answers 3 NVML_ERROR_NOT_SUPPORTED, as the real Linux NVML does, unless
 * the fixture sets one. */
nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t device, int *current, int *pending)
{
	const fake_gpu *g;
	int model;

	NVML_ENTER();
	g = gpu_of(device);
	if (!g || (!current && !pending))
		return NVML_ERROR_INVALID_ARGUMENT;
	model = g->driver_model;
#ifdef _WIN32
	if (model == FAKE_DRIVER_MODEL_UNSET)
		model = FAKE_DRIVER_MODEL_WDDM;
#endif
	if (model == FAKE_DRIVER_MODEL_UNSET)
		return NVML_ERROR_NOT_SUPPORTED;
	if (current)
		*current = model;
	if (pending)
		*pending = model;
	return NVML_SUCCESS;
}
