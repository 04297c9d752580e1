/*
 * fake_cuda.c - a fake CUDA driver API (libcuda.so.1) for tests.
 *
 * Exports the driver API entry points mlsetup's cuda probe uses, with the
 * real C ABI, answering from the machine described in $MLSETUP_FAKE_NVIDIA
 * (see README.md and fake_common.h). Return codes follow CUDA: cuInit gives
 * 100 CUDA_ERROR_NO_DEVICE when there is no usable JSON, or the configured
 * "cuda_init_error"; device calls before a successful cuInit give 3, a bad
 * ordinal 101, a NULL or unknown argument 1. As in the real driver,
 * cuDriverGetVersion, cuGetErrorName and cuGetErrorString work without
 * cuInit (cuDriverGetVersion still needs the JSON, else 3). A function
 * listed in "missing_symbols" stays exported (a shared library cannot
 * un-export a symbol at run time) but returns 500 CUDA_ERROR_NOT_FOUND,
 * which mlsetup treats like a NULL dlsym().
 *
 * Per-process driver state lives in g_cuda so contexts, modules and
 * launches can be added next to it; per-GPU facts stay in fake_gpu.
 */
#include "fake_common.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Minimal CUDA driver API types with the real layouts (cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_NOT_FOUND = 500,
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
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuGetErrorString(CUresult error, const char **pStr);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);

/* Per-process driver state. */
static struct {
	atomic_int initialized; /* cuInit succeeded */
} g_cuda;

/* Names and descriptions for cuGetErrorName / cuGetErrorString. */
static const struct {
	CUresult code;
	const char *name;
	const char *text;
} g_errors[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
	 "CUDA driver version is insufficient for CUDA runtime version"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
	 "no kernel image is available for execution on the device"},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	 "the provided PTX was compiled with an unsupported toolchain"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	 "system has unsupported display driver / cuda driver combination"},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	 "forward compatibility was attempted on non supported HW"},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Entry points that need a successful cuInit start with this. */
#define CUDA_ENTER()                                                                       \
	do {                                                                               \
		if (fake_symbol_missing(__func__))                                         \
			return CUDA_ERROR_NOT_FOUND;                                       \
		if (!atomic_load(&g_cuda.initialized))                                     \
			return CUDA_ERROR_NOT_INITIALIZED;                                 \
	} while (0)

/* Looks a device up, or returns CUDA_ERROR_INVALID_DEVICE from the caller. */
#define CUDA_GPU(var, dev)                                                                 \
	do {                                                                               \
		(var) = fake_gpu_at(dev);                                                  \
		if (!(var))                                                                \
			return CUDA_ERROR_INVALID_DEVICE;                                  \
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
	*count = (int)fake_config_get()->n_gpus;
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
