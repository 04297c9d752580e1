/*
 * nvml.c - probe 1: NVML, loaded with dlopen (libnvidia-ml.so.1, or the
 * WSL copy under /usr/lib/wsl/lib). Learns the driver version, the CUDA
 * version the driver supports and, per GPU, name, compute capability,
 * memory, PCI info and UUID. Signatures follow NVIDIA's nvml.h (NVML API
 * Reference): nvmlInit_v2, nvmlSystemGetDriverVersion,
 * nvmlSystemGetCudaDriverVersion_v2, nvmlDeviceGetCount_v2,
 * nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetName,
 * nvmlDeviceGetCudaComputeCapability, nvmlDeviceGetMemoryInfo,
 * nvmlDeviceGetPciInfo_v3, nvmlDeviceGetUUID, and on Windows
 * nvmlDeviceGetDriverModel (WDDM or TCC). On Windows the library is
 * nvml.dll, from System32 (drivers since R418 put it there) or, for older
 * drivers, %ProgramFiles%\NVIDIA Corporation\NVSMI - by full path only.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef int nvml_return; /* nvmlReturn_t */
typedef void *nvml_device;

enum { NVML_SUCCESS = 0, NVML_ERROR_FUNCTION_NOT_FOUND = 13 };

/* nvmlDriverModel_t */
enum { NVML_DRIVER_WDDM = 0, NVML_DRIVER_WDM = 1 /* TCC */, NVML_DRIVER_MCDM = 2 };

typedef struct {
	unsigned long long total, free, used; /* bytes */
} nvml_memory;

typedef struct {
	char bus_id_legacy[16];
	unsigned int domain, bus, device;
	unsigned int pci_device_id; /* device << 16 | vendor */
	unsigned int pci_subsystem_id;
	char bus_id[32];
} nvml_pci_info; /* nvmlPciInfo_t, version 3 layout */

struct nvml_api {
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*driver_version)(char *, unsigned int);
	nvml_return (*cuda_version)(int *);
	nvml_return (*count)(unsigned int *);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned int);
	nvml_return (*cc)(nvml_device, int *, int *);
	nvml_return (*memory)(nvml_device, nvml_memory *);
	nvml_return (*pci)(nvml_device, nvml_pci_info *);
	nvml_return (*uuid)(nvml_device, char *, unsigned int);
	nvml_return (*driver_model)(nvml_device, int *, int *); /* current, pending */
};

static const char *nvml_errstr(const struct nvml_api *api, nvml_return r)
{
	const char *s = api->error_string ? api->error_string(r) : NULL;
	return s ? s : "unknown error";
}

/* First symbol of the list that resolves, else NULL. */
static void *sym_any(void *lib, const char *a, const char *b)
{
	void *p = ml_os_dlsym(lib, a);
	return p || !b ? p : ml_os_dlsym(lib, b);
}

/* Appends ", missing X" to note for optional symbols that did not resolve
 * or that answered NVML_ERROR_FUNCTION_NOT_FOUND. */
static void note_missing(ml_buf *note, const char *symbol)
{
	if (!strstr(ml_buf_cstr(note), symbol))
		ml_buf_printf(note, "; %s unavailable", symbol);
}

static void read_gpu(struct nvml_api *api, ml_machine *m, unsigned int i, ml_buf *note, int *rc)
{
	nvml_device dev = NULL;
	nvml_return r = api->handle(i, &dev);
	if (r != NVML_SUCCESS) {
		ml_buf_printf(note, "; GPU %u: nvmlDeviceGetHandleByIndex_v2: %s (%d)", i,
		              nvml_errstr(api, r), r);
		return;
	}
	nvml_pci_info pci;
	memset(&pci, 0, sizeof(pci));
	const char *bus = NULL;
	r = api->pci ? api->pci(dev, &pci) : NVML_ERROR_FUNCTION_NOT_FOUND;
	if (r == NVML_SUCCESS) {
		pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
		bus = pci.bus_id;
	} else {
		note_missing(note, "nvmlDeviceGetPciInfo_v3");
	}
	ml_gpu *g = ml_machine_gpu(m, bus, (int)i, "nvml");
	if (!g) {
		*rc = ML_ENOMEM;
		return;
	}
	if (r == NVML_SUCCESS && !g->pci_device_id && (pci.pci_device_id & 0xffff) == 0x10de)
		g->pci_device_id = pci.pci_device_id >> 16;

	char name[96] = "";
	if (api->name && api->name(dev, name, sizeof(name)) == NVML_SUCCESS) {
		name[sizeof(name) - 1] = '\0';
		ml_fill_str(g->name, sizeof(g->name), name);
	} else {
		note_missing(note, "nvmlDeviceGetName");
	}
	int major = -1, minor = -1;
	if (api->cc && api->cc(dev, &major, &minor) == NVML_SUCCESS && major >= 0 && minor >= 0) {
		if (g->cc_major < 0) {
			g->cc_major = major;
			g->cc_minor = minor;
		}
	} else {
		note_missing(note, "nvmlDeviceGetCudaComputeCapability");
	}
	nvml_memory mem = {0, 0, 0};
	if (api->memory && api->memory(dev, &mem) == NVML_SUCCESS) {
		if (!g->memory_mib)
			g->memory_mib = mem.total / (1024 * 1024);
	} else {
		note_missing(note, "nvmlDeviceGetMemoryInfo");
	}
	char uuid[96] = "";
	if (api->uuid && api->uuid(dev, uuid, sizeof(uuid)) == NVML_SUCCESS) {
		uuid[sizeof(uuid) - 1] = '\0';
		ml_fill_str(g->uuid, sizeof(g->uuid), uuid);
	} else {
		note_missing(note, "nvmlDeviceGetUUID");
	}
	/* Windows only (NVML answers NOT_SUPPORTED elsewhere); its absence is
	 * not noted: Linux libraries need not have it. */
	int cur = -1, pending = -1;
	if (api->driver_model && api->driver_model(dev, &cur, &pending) == NVML_SUCCESS) {
		if (cur == NVML_DRIVER_WDDM)
			ml_fill_str(g->driver_model, sizeof(g->driver_model), "WDDM");
		else if (cur == NVML_DRIVER_WDM)
			ml_fill_str(g->driver_model, sizeof(g->driver_model), "TCC");
		else if (cur == NVML_DRIVER_MCDM) /* compute-only, R550 and later */
			ml_fill_str(g->driver_model, sizeof(g->driver_model), "MCDM");
	}
}

int ml_probe_nvml(ml_machine *m, const ml_detect_opts *o)
{
	(void)o;
#ifdef _WIN32
	/* ml_os_dlopen() takes a bare name from System32 only. */
	const char *pf = getenv("ProgramW6432");
	if (!pf || !*pf)
		pf = getenv("ProgramFiles");
	char nvsmi[PATH_MAX] = "";
	if (pf && *pf)
		ml_pathf(nvsmi, sizeof nvsmi, "%s/NVIDIA Corporation/NVSMI/nvml.dll", pf);
	const char *const names[] = {"nvml.dll", nvsmi[0] ? nvsmi : NULL, NULL};
	const char *primary = "nvml.dll";
#else
	static const char *const names[] = {"libnvidia-ml.so.1",
	                                    "/usr/lib/wsl/lib/libnvidia-ml.so.1", NULL};
	const char *primary = "libnvidia-ml.so.1";
#endif
	char loaded[PATH_MAX] = "";
	ml_err err = ML_ERR_INIT;
	void *lib = ml_os_dlopen(names, loaded, sizeof(loaded), &err);
	if (!lib)
		return ml_machine_probe(m, "nvml", ML_PROBE_FAILED, "%s not loadable: %s", primary,
		                        err.msg);

	struct nvml_api api;
	memset(&api, 0, sizeof(api));
	api.init = (nvml_return(*)(void))sym_any(lib, "nvmlInit_v2", "nvmlInit");
	api.shutdown = (nvml_return(*)(void))sym_any(lib, "nvmlShutdown", NULL);
	api.error_string = (const char *(*)(nvml_return))sym_any(lib, "nvmlErrorString", NULL);
	api.driver_version = (nvml_return(*)(char *, unsigned int))sym_any(
	        lib, "nvmlSystemGetDriverVersion", NULL);
	api.cuda_version = (nvml_return(*)(int *))sym_any(lib, "nvmlSystemGetCudaDriverVersion_v2",
	                                                  "nvmlSystemGetCudaDriverVersion");
	api.count = (nvml_return(*)(unsigned int *))sym_any(lib, "nvmlDeviceGetCount_v2",
	                                                    "nvmlDeviceGetCount");
	api.handle = (nvml_return(*)(unsigned int, nvml_device *))sym_any(
	        lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	api.name = (nvml_return(*)(nvml_device, char *, unsigned int))sym_any(
	        lib, "nvmlDeviceGetName", NULL);
	api.cc = (nvml_return(*)(nvml_device, int *, int *))sym_any(
	        lib, "nvmlDeviceGetCudaComputeCapability", NULL);
	api.memory = (nvml_return(*)(nvml_device, nvml_memory *))sym_any(
	        lib, "nvmlDeviceGetMemoryInfo", NULL);
	api.pci = (nvml_return(*)(nvml_device, nvml_pci_info *))sym_any(
	        lib, "nvmlDeviceGetPciInfo_v3", NULL);
	api.uuid = (nvml_return(*)(nvml_device, char *, unsigned int))sym_any(
	        lib, "nvmlDeviceGetUUID", NULL);
	api.driver_model = (nvml_return(*)(nvml_device, int *, int *))sym_any(
	        lib, "nvmlDeviceGetDriverModel_v2", "nvmlDeviceGetDriverModel");

	int rc = 0;
	if (!api.init || !api.shutdown || !api.count || !api.handle) {
		const char *which = !api.init       ? "nvmlInit_v2"
		                    : !api.shutdown ? "nvmlShutdown"
		                    : !api.count    ? "nvmlDeviceGetCount_v2"
		                                    : "nvmlDeviceGetHandleByIndex_v2";
		rc = ml_machine_probe(m, "nvml", ML_PROBE_FAILED, "%s: required symbol %s missing",
		                      loaded, which);
		ml_os_dlclose(lib);
		return rc;
	}
	nvml_return r = api.init();
	if (r != NVML_SUCCESS) {
		rc = ml_machine_probe(m, "nvml", ML_PROBE_FAILED, "nvmlInit_v2 failed: %s (%d)",
		                      nvml_errstr(&api, r), r);
		ml_os_dlclose(lib);
		return rc;
	}

	ml_buf note = ML_BUF_INIT;
	char version[80] = "";
	if (api.driver_version && api.driver_version(version, sizeof(version)) == NVML_SUCCESS) {
		version[sizeof(version) - 1] = '\0';
		if (!m->driver.version[0]) {
			ml_strlcpy(m->driver.version, version, sizeof(m->driver.version));
			ml_strlcpy(m->driver.source, "nvml", sizeof(m->driver.source));
		}
	} else {
		note_missing(&note, "nvmlSystemGetDriverVersion");
	}
	int cuda = 0;
	if (api.cuda_version && api.cuda_version(&cuda) == NVML_SUCCESS && cuda > 0) {
		if (!m->driver.cuda_version) {
			m->driver.cuda_version = cuda;
			ml_strlcpy(m->driver.cuda_source, "nvml", sizeof(m->driver.cuda_source));
		}
	} else {
		note_missing(&note, "nvmlSystemGetCudaDriverVersion_v2");
	}
	unsigned int count = 0;
	r = api.count(&count);
	if (r != NVML_SUCCESS) {
		rc = ml_machine_probe(m, "nvml", ML_PROBE_FAILED,
		                      "driver %s; nvmlDeviceGetCount_v2 failed: %s (%d)",
		                      version[0] ? version : "unknown", nvml_errstr(&api, r), r);
	} else {
		if (count > 64)
			count = 64; /* NVML never reports more; guards a broken library */
		for (unsigned int i = 0; i < count && !rc; i++)
			read_gpu(&api, m, i, &note, &rc);
		if (!rc)
			rc = ml_machine_probe(m, "nvml", ML_PROBE_OK, "%s: driver %s, %u GPU%s%s",
			                      loaded, version[0] ? version : "unknown", count,
			                      count == 1 ? "" : "s", ml_buf_cstr(&note));
	}
	ml_buf_release(&note);
	api.shutdown();
	ml_os_dlclose(lib);
	return rc;
}
