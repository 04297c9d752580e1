/*
 * fake_common.h - the simulated NVIDIA machine shared by the fake driver
 * libraries (fake_nvml.c -> libnvidia-ml.so.1, fake_cuda.c -> libcuda.so.1).
 *
 * The machine is described by the JSON file named in $MLSETUP_FAKE_NVIDIA
 * (schema in tests/shims/README.md). It is read once per loaded shim, on
 * first use, and kept until the shim is unloaded. Nothing here is exported
 * from the shims: every declaration is hidden, so two shims loaded into one
 * process each keep their own copy and never bind to each other's.
 */
#ifndef MLSETUP_FAKE_COMMON_H
#define MLSETUP_FAKE_COMMON_H

#include <stdbool.h>
#include <stddef.h>

/* FAKE_API marks the driver API functions a shim exports. On ELF every
 * non-static function is exported by default, so it is empty there and the
 * .so build is as before. A PE DLL exports only what is named: with
 * __declspec(dllexport) on any function, the MinGW linker exports exactly
 * those (plain C names; x64 Windows has one calling convention, which NVML's
 * and CUDA's headers use). FAKE_HIDDEN keeps the shared helpers out of the
 * ELF dynamic symbol table; a PE DLL never exports them, so it is empty. */
#ifdef _WIN32
#define FAKE_API __declspec(dllexport)
#define FAKE_HIDDEN
#else
#define FAKE_API
#define FAKE_HIDDEN __attribute__((visibility("hidden")))
#endif

/* PCI vendor id of NVIDIA. */
#define FAKE_PCI_VENDOR_NVIDIA 0x10deu

/* Faults the fake libcuda injects on one GPU; zero means none. */
typedef struct fake_faults {
	int launch_error;      /* cuCtxSynchronize after a launch returns it, and
	                        * it sticks to the context (e.g. 719) */
	int module_load_error; /* cuModuleLoadData/Ex return it (e.g. 200, 218) */
	bool wrong_results;    /* each saxpy launch adds 1 to element n/2 */
	int context_error;     /* cuDevicePrimaryCtxRetain returns it (e.g. 46,
	                        * CUDA_ERROR_DEVICE_UNAVAILABLE: an
	                        * exclusive-process GPU another process holds) */
} fake_faults;

/* "driver_model" of a GPU (nvmlDriverModel_t values, Windows only in the
 * real NVML); UNSET: WDDM in the Windows build, "not supported" on Linux. */
enum {
	FAKE_DRIVER_MODEL_UNSET = -1,
	FAKE_DRIVER_MODEL_WDDM = 0, /* NVML_DRIVER_WDDM: display driver model */
	FAKE_DRIVER_MODEL_TCC = 1,  /* NVML_DRIVER_WDM: TCC, compute only */
	FAKE_DRIVER_MODEL_MCDM = 2, /* NVML_DRIVER_MCDM */
};

/* One simulated GPU, in index order. Strings are owned by the config. */
typedef struct fake_gpu {
	char *name;                    /* "NVIDIA GeForce RTX 5090" */
	int cc_major, cc_minor;        /* compute capability, 12 and 0 */
	unsigned long long memory_mib; /* total memory, MiB (2^20 bytes) */
	unsigned int pci_device_id;    /* 16-bit PCI device id, 0x2b85 */
	char *uuid;                    /* "GPU-..." exactly as configured */
	unsigned char uuid_bytes[16];  /* uuid's 32 hex digits as bytes */
	unsigned int pci_domain;       /* PCI location: domain:bus:device.function */
	unsigned int pci_bus;
	unsigned int pci_device;
	unsigned int pci_function;
	/* Fault knobs of the CUDA shim; the machine-wide value unless the GPU
	 * sets its own (README.md "Fault knobs"). */
	fake_faults faults;
	bool mig;         /* MIG mode on and no MIG device made: NVML lists the GPU, the
	                   * CUDA driver does not enumerate it */
	int driver_model; /* nvmlDeviceGetDriverModel: FAKE_DRIVER_MODEL_* */
} fake_gpu;

/* The simulated machine: driver, GPUs and failure knobs. */
typedef struct fake_config {
	bool loaded;  /* false: no usable JSON, i.e. "no driver" */
	char *driver; /* driver version, "570.124.04" */
	int cuda;     /* 1000*major + 10*minor, 12080 */
	fake_gpu *gpus;
	size_t n_gpus;
	int nvml_init_error;    /* nvmlInit_v2/nvmlInit return this when != 0 */
	int cuda_init_error;    /* cuInit returns this when != 0 */
	char **missing_symbols; /* API names that act as if not exported */
	size_t n_missing_symbols;
	fake_faults faults; /* machine-wide fault knobs, copied into each GPU
	                     * that does not set its own */
} fake_config;

/* Returns the machine, reading $MLSETUP_FAKE_NVIDIA on the first call
 * (thread-safe, pthread_once). Never NULL; ->loaded is false when the
 * variable is unset or the file cannot be read or parsed (the latter two
 * are reported on stderr). Owned by the shim; freed when it is unloaded. */
FAKE_HIDDEN const fake_config *fake_config_get(void);

/* Returns the GPU at index, or NULL when the config is not loaded or
 * index is out of range. */
FAKE_HIDDEN const fake_gpu *fake_gpu_at(long long index);

/* The GPUs the CUDA driver enumerates: all but those with "mig" set, in
 * index order. fake_cuda_gpu_count() counts them; fake_cuda_gpu_at()
 * returns the one with CUDA device ordinal `ordinal`, or NULL. */
FAKE_HIDDEN size_t fake_cuda_gpu_count(void);
FAKE_HIDDEN const fake_gpu *fake_cuda_gpu_at(long long ordinal);

/* True when the API function called name is listed in "missing_symbols".
 * A shim cannot un-export a symbol at run time, so a listed function stays
 * exported and instead returns NVML_ERROR_FUNCTION_NOT_FOUND (13) or
 * CUDA_ERROR_NOT_FOUND (500); mlsetup treats that like dlsym() == NULL. */
FAKE_HIDDEN bool fake_symbol_missing(const char *name);

/* Copies src into dst (dstsz bytes) if it fits with its NUL. Returns false
 * and leaves dst untouched when it does not. */
FAKE_HIDDEN bool fake_copy_string(char *dst, size_t dstsz, const char *src);

#endif /* MLSETUP_FAKE_COMMON_H */
