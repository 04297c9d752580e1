/*
 * cuda.c - probe 2: the CUDA driver API, loaded with dlopen (libcuda.so.1,
 * or the WSL copy). Learns the CUDA version the driver supports and, per
 * device, name, compute capability (attributes 75/76), memory, PCI bus id
 * and UUID. CUDA Driver API reference: cuInit, cuDriverGetVersion,
 * cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute,
 * cuDeviceTotalMem_v2, cuDeviceGetPCIBusId, cuDeviceGetUuid, cuGetErrorName.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef int cu_result; /* CUresult */
typedef int cu_device; /* CUdevice */

enum {
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

struct cuda_api {
	cu_result (*init)(unsigned int);
	cu_result (*driver_version)(int *);
	cu_result (*count)(int *);
	cu_result (*get)(cu_device *, int);
	cu_result (*name)(char *, int, cu_device);
	cu_result (*attr)(int *, int, cu_device);
	cu_result (*total_mem)(size_t *, cu_device);
	cu_result (*bus_id)(char *, int, cu_device);
	cu_result (*uuid)(unsigned char *, cu_device);
	cu_result (*error_name)(cu_result, const char **);
};

static const char *cu_name(const struct cuda_api *api, cu_result r)
{
	const char *s = NULL;
	if (api->error_name && api->error_name(r, &s) == 0 && s)
		return s;
	return "CUDA_ERROR";
}

static void read_device(struct cuda_api *api, ml_machine *m, int i, ml_buf *note, int *rc)
{
	cu_device dev = 0;
	cu_result r = api->get(&dev, i);
	if (r != 0) {
		ml_buf_printf(note, "; device %d: cuDeviceGet: %s (%d)", i, cu_name(api, r), r);
		return;
	}
	char bus[32] = "";
	if (!api->bus_id || api->bus_id(bus, (int)sizeof(bus), dev) != 0)
		bus[0] = '\0';
	bus[sizeof(bus) - 1] = '\0';
	ml_gpu *g = ml_machine_gpu(m, bus[0] ? bus : NULL, i, "cuda");
	if (!g) {
		*rc = ML_ENOMEM;
		return;
	}
	char name[96] = "";
	if (api->name && api->name(name, (int)sizeof(name), dev) == 0) {
		name[sizeof(name) - 1] = '\0';
		ml_fill_str(g->name, sizeof(g->name), name);
	}
	int major = -1, minor = -1;
	if (api->attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0 &&
	    api->attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0 &&
	    major >= 0 && minor >= 0 && g->cc_major < 0) {
		g->cc_major = major;
		g->cc_minor = minor;
	}
	size_t bytes = 0;
	if (api->total_mem && api->total_mem(&bytes, dev) == 0 && !g->memory_mib)
		g->memory_mib = bytes / (1024 * 1024);
	unsigned char u[16];
	if (api->uuid && api->uuid(u, dev) == 0 && !g->uuid[0])
		snprintf(g->uuid, sizeof(g->uuid),
		         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		         u[12], u[13], u[14], u[15]);
}

int ml_probe_cuda(ml_machine *m, const ml_detect_opts *o)
{
	(void)o;
#ifdef _WIN32
	/* System32 only (ml_os_dlopen() never searches elsewhere). */
	static const char *const names[] = {"nvcuda.dll", NULL};
#else
	static const char *const names[] = {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", NULL};
#endif
	char loaded[256] = "";
	ml_err err = ML_ERR_INIT;
	void *lib = ml_os_dlopen(names, loaded, sizeof(loaded), &err);
	if (!lib)
		return ml_machine_probe(m, "cuda", ML_PROBE_FAILED, "%s not loadable: %s", names[0],
		                        err.msg);
	struct cuda_api api;
	memset(&api, 0, sizeof(api));
	api.init = (cu_result(*)(unsigned int))ml_os_dlsym(lib, "cuInit");
	api.driver_version = (cu_result(*)(int *))ml_os_dlsym(lib, "cuDriverGetVersion");
	api.count = (cu_result(*)(int *))ml_os_dlsym(lib, "cuDeviceGetCount");
	api.get = (cu_result(*)(cu_device *, int))ml_os_dlsym(lib, "cuDeviceGet");
	api.name = (cu_result(*)(char *, int, cu_device))ml_os_dlsym(lib, "cuDeviceGetName");
	api.attr = (cu_result(*)(int *, int, cu_device))ml_os_dlsym(lib, "cuDeviceGetAttribute");
	api.total_mem = (cu_result(*)(size_t *, cu_device))ml_os_dlsym(lib, "cuDeviceTotalMem_v2");
	api.bus_id = (cu_result(*)(char *, int, cu_device))ml_os_dlsym(lib, "cuDeviceGetPCIBusId");
	api.uuid = (cu_result(*)(unsigned char *, cu_device))ml_os_dlsym(lib, "cuDeviceGetUuid");
	api.error_name = (cu_result(*)(cu_result, const char **))ml_os_dlsym(lib, "cuGetErrorName");

	int rc = 0;
	const char *missing = !api.init             ? "cuInit"
	                      : !api.driver_version ? "cuDriverGetVersion"
	                      : !api.count          ? "cuDeviceGetCount"
	                      : !api.get            ? "cuDeviceGet"
	                      : !api.attr           ? "cuDeviceGetAttribute"
	                                            : NULL;
	if (missing) {
		rc = ml_machine_probe(m, "cuda", ML_PROBE_FAILED, "%s: required symbol %s missing",
		                      loaded, missing);
		goto out;
	}
	cu_result r = api.init(0);
	if (r != 0) {
		rc = ml_machine_probe(m, "cuda", ML_PROBE_FAILED, "cuInit failed: %s (%d)",
		                      cu_name(&api, r), r);
		goto out;
	}
	int version = 0;
	if (api.driver_version(&version) == 0 && version > 0 && !m->driver.cuda_version) {
		m->driver.cuda_version = version;
		ml_strlcpy(m->driver.cuda_source, "cuda", sizeof(m->driver.cuda_source));
	}
	int count = 0;
	r = api.count(&count);
	if (r != 0) {
		rc = ml_machine_probe(m, "cuda", ML_PROBE_FAILED,
		                      "cuDeviceGetCount failed: %s (%d)", cu_name(&api, r), r);
		goto out;
	}
	if (count > 64)
		count = 64;
	ml_buf note = ML_BUF_INIT;
	for (int i = 0; i < count && !rc; i++)
		read_device(&api, m, i, &note, &rc);
	if (!rc)
		rc = ml_machine_probe(m, "cuda", ML_PROBE_OK, "%s: CUDA %d.%d, %d device%s%s",
		                      loaded, version / 1000, (version % 1000) / 10, count,
		                      count == 1 ? "" : "s", ml_buf_cstr(&note));
	ml_buf_release(&note);
out:
	ml_os_dlclose(lib);
	return rc;
}
