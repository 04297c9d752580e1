/*
 * detect.h - the detect stage: what machine is this?
 *
 * ml_detect() fills one ml_machine: operating system, libc, CPU, memory,
 * free disk, NVIDIA driver and every NVIDIA GPU with its compute
 * capability. GPU facts come from a chain of probes, each filling what the
 * ones before it could not learn:
 *
 *   1. nvml    dlopen libnvidia-ml.so.1 (also /usr/lib/wsl/lib)
 *   2. cuda    dlopen libcuda.so.1 (CUDA driver API)
 *   3. procfs  /sys/module/nvidia/version, /proc/driver/nvidia/...
 *   4. pci     /sys/bus/pci/devices + the built-in PCI id table
 *   5. nvidia-smi --query-gpu=... --format=csv,noheader
 *
 * Every probe appends an ml_probe record, so a report can say how each fact
 * was learnt. A missing library or symbol, an error code or a malformed file
 * is recorded there and never aborts detection. The stage never prints.
 */
#ifndef MLSETUP_DETECT_H
#define MLSETUP_DETECT_H

#include "mlsetup/core.h"

typedef enum ml_probe_status {
	ML_PROBE_OK = 0,      /* ran and contributed facts */
	ML_PROBE_FAILED = 1,  /* ran and could not contribute (detail says why) */
	ML_PROBE_SKIPPED = 2, /* not run: nothing left for it to learn */
} ml_probe_status;

typedef struct ml_probe {
	char source[32]; /* "nvml", "cuda", "procfs", "pci", "nvidia-smi" */
	ml_probe_status status;
	char detail[512]; /* what it learnt, or why it failed */
} ml_probe;

/* One NVIDIA GPU. Unknown numbers are -1 (cc) or 0 (memory, device id);
 * unknown strings are "". */
typedef struct ml_gpu {
	int index;              /* 0-based, in PCI bus order / NVML order */
	char name[96];          /* "NVIDIA GeForce RTX 5090" */
	int cc_major, cc_minor; /* compute capability, -1 when unknown */
	char architecture[16];  /* "Blackwell", "Hopper", ... or "" */
	uint64_t memory_mib;    /* total device memory, MiB (2^20 bytes) */
	char pci_bus_id[32];    /* normalized "0000:01:00.0" (sysfs form) */
	uint32_t pci_device_id; /* PCI device id, e.g. 0x2b85; 0 if unknown */
	char uuid[96];          /* "GPU-..." */
	char source[32];        /* probe that first reported this GPU */
	char driver_model[8];   /* Windows: "WDDM", "TCC" or "MCDM" (nvmlDeviceGetDriverModel);
	                         * "" when unknown and always on Linux (JSON null) */
} ml_gpu;

typedef struct ml_driver {
	char version[32];     /* "570.124.04", "" when no driver found */
	int cuda_version;     /* highest CUDA the driver supports, 1000*major + 10*minor
	                       * (12080 = 12.8); 0 when unknown */
	char source[32];      /* probe the version came from */
	char cuda_source[32]; /* probe (or "driver-table") the CUDA version came from */
	bool kernel_module;   /* the NVIDIA kernel module is loaded */
} ml_driver;

typedef struct ml_os_info {
	char name[16];           /* "linux", "windows", "darwin" */
	char distro_id[64];      /* os-release ID, "debian" */
	char distro_version[64]; /* os-release VERSION_ID, "12" */
	char distro_pretty[128]; /* os-release PRETTY_NAME */
	char kernel[128];        /* uname release */
	char arch[16];           /* "x86_64", "aarch64" */
	char libc_kind[8];       /* "glibc", "musl", "" */
	char libc_version[16];   /* "2.36" */
	bool wsl;
	bool container;
	char container_kind[32]; /* "docker", "podman", "kubernetes", "lxc", ... */
} ml_os_info;

typedef struct ml_machine {
	ml_os_info os;
	char cpu_model[128];
	int cpu_cores;          /* online logical CPUs */
	uint64_t memory_mib;    /* MemTotal, MiB */
	uint64_t disk_free_mib; /* free at target_dir, MiB */
	char target_dir[4096];
	ml_driver driver;
	ml_gpu *gpus;
	size_t n_gpus;
	ml_probe *probes;
	size_t n_probes;
} ml_machine;

typedef struct ml_detect_opts {
	/* Directory /proc, /sys and /etc are read under; NULL or "/" for the
	 * live system. Used for captured bundles and test fixture trees. */
	const char *root;
	/* Directory whose free space is reported; NULL means ".". */
	const char *target_dir;
	/* Skip the nvidia-smi probe even if GPU facts are missing. */
	bool no_smi;
} ml_detect_opts;

#define ML_DETECT_OPTS_INIT                                                                        \
	{                                                                                          \
		NULL, NULL, false                                                                  \
	}

/* Detects the machine. Never fails because of a missing or broken GPU
 * stack: such problems are recorded in (*out)->probes. Returns 0, or
 * ML_ENOMEM. Caller owns *out; free with ml_machine_free(). */
int ml_detect(ml_machine **out, const ml_detect_opts *opts, ml_err *err);

/* Frees a machine; accepts NULL. */
void ml_machine_free(ml_machine *m);

/* Builds the "mlsetup.detect/1" JSON document for m: os, cpu, memory_mib,
 * disk_free_mib, driver, gpus[] (each with driver_model "WDDM" / "TCC" /
 * "MCDM" / null, features {bf16, tf32, fp8,
 * fp4, flash_attention_2} and recommended_dtype from ml_gpu_precision(), null
 * when the compute capability is unknown), probes[], advice[]. Returns a new cJSON
 * object (caller frees with cJSON_Delete) or NULL on allocation failure. */
struct cJSON *ml_machine_to_json(const ml_machine *m);

/* Writes at most one line of driver advice for the GPUs found: which driver
 * to install when none is loaded ("NVIDIA GeForce RTX 5090 (Blackwell,
 * sm_120) found, no NVIDIA driver loaded: install driver 570.26 or newer"),
 * or which to upgrade to when the loaded one is older than the manifests
 * need. Returns true when advice was written, false (dst = "") otherwise. */
bool ml_machine_driver_advice(char *dst, size_t dstsz, const ml_machine *m);

/* Formats a compute capability as "12.0" / "sm_120" into dst (dstsz
 * bytes); "" when unknown (major < 0). */
void ml_cc_format(char *dst, size_t dstsz, int major, int minor);
void ml_cc_sm(char *dst, size_t dstsz, int major, int minor);

/* Returns the architecture name for a compute capability ("Blackwell" for
 * 12.0, "Hopper" for 9.0), or "" when unknown. Static string. */
const char *ml_cc_architecture(int major, int minor);

/* --- precision by compute capability (src/detect/gpu_tables.c) ----------- */

/* What a GPU's tensor cores and kernels support, from its compute
 * capability alone, and the dtype to train in. One table in gpu_tables.c
 * holds every rule with its source (docs/nvidia-and-python-facts.md, "Precision by compute
 * capability"; NVIDIA CUDA C++ Programming Guide, "Compute Capabilities";
 * NVIDIA Ampere, Ada, Hopper and Blackwell tuning guides; the
 * FlashAttention 2 README's requirement "Ampere, Ada, or Hopper GPUs");
 * detect reports it and verify may use it. */
typedef struct ml_precision {
	bool known;                    /* the compute capability is known; else every
	                                * feature is false and recommended_dtype NULL */
	bool bf16;                     /* bfloat16 tensor cores: 8.0 (Ampere) and newer */
	bool tf32;                     /* TF32 tensor cores: 8.0 and newer */
	bool fp8;                      /* FP8 (E4M3/E5M2) tensor cores: 8.9 (Ada) and newer */
	bool fp4;                      /* FP4 tensor cores: 10.0 (Blackwell) and newer */
	bool flash_attention_2;        /* FlashAttention 2 runs: 8.0 and newer */
	const char *recommended_dtype; /* "bfloat16" from 8.0, "float16" on 7.x,
	                                * "float32" below; static */
} ml_precision;

/* Fills *out for a GPU of compute capability major.minor (unknown when
 * major < 0: out->known false). Never fails. */
void ml_gpu_precision(ml_precision *out, int major, int minor);

/* --- CUDA toolkit -> minimum driver (src/detect/drivers.c) ---------------- */

/* The one home of every driver number mlsetup uses is manifests/drivers.json
 * (embedded): NVIDIA CUDA Toolkit release notes, table 3 "CUDA Toolkit and
 * Minimum Required Driver Version" (GA releases, and the updates whose
 * minimum differs: 12.8 Update 1, 13.2 Update 2), the "CUDA Minor Version
 * Compatibility" floors (12.x: 525.60.13 / 528.33; 13.x: 580.65.06, no
 * Windows floor published), and rules naming the first toolkit with SASS
 * for an architecture. detect, plan and verify read it only through the
 * functions below. Strings they return are static (they live as long as
 * the process). */

/* One row of table 3. */
typedef struct ml_toolkit_driver {
	const char *cuda;        /* "12.8"; "12.8.1" for 12.8 Update 1 */
	const char *release;     /* "12.8 GA", "12.8 Update 1" */
	const char *linux_min;   /* "570.26" */
	const char *windows_min; /* "570.65"; NULL when none is recorded */
} ml_toolkit_driver;

/* Returns 0 when the embedded table is present and well-formed, else
 * ML_EPARSE with the reason in err (a broken build: every lookup below then
 * answers NULL). */
int ml_drivers_check(ml_err *err);

/* Sets *out (when non-NULL) to the toolkit rows, oldest first, and returns
 * how many there are (0 when the table is broken). */
size_t ml_toolkit_drivers(const ml_toolkit_driver **out);

/* The row of CUDA toolkit `cuda` ("12.4"; "12.4.0" is the same toolkit,
 * "12.8.1" is 12.8 Update 1), or NULL when the table has no such toolkit. */
const ml_toolkit_driver *ml_toolkit_driver_find(const char *cuda);

/* Minimum Linux / Windows driver for code built with CUDA toolkit `cuda`
 * ("12.8" -> "570.26" / "570.65"); NULL when the toolkit or its minimum
 * for that OS is not in the table. */
const char *ml_toolkit_min_driver(const char *cuda, bool windows);

/* The CUDA minor-version compatibility floor for builds of `cuda`'s major
 * version ("12.4" -> "525.60.13" on Linux, "13.2" -> "580.65.06"): such
 * builds start on a driver this new, with reduced features and no JIT of
 * newer PTX. NULL when the major has no floor in the table, or none for
 * that OS (Windows, 13.x). */
const char *ml_minor_version_floor(const char *cuda, bool windows);

/* The first CUDA toolkit with SASS for the architecture of compute
 * capability major.minor, when the table has a rule for it ("12.8" for
 * Blackwell, 10.x / 11.x / 12.x). For a GPU newer than every rule it
 * returns the newest rule's toolkit, a lower bound, and sets *beyond (when
 * non-NULL) to true. NULL when no rule applies (every toolkit in the table
 * has SASS for it) or the capability is unknown (< 0). */
const char *ml_arch_first_toolkit(int major, int minor, bool *beyond);

/* The practical minimum driver of an architecture: the minimum of its
 * first toolkit (ml_arch_first_toolkit()), which no build - not even one
 * running under minor-version compatibility - gets below. "570.26" /
 * "570.65" for Blackwell; NULL when no rule applies. */
const char *ml_arch_min_driver(int major, int minor, bool windows);

/* The minimum Linux / Windows driver detect advises for a GPU of this
 * compute capability: the newer of its architecture's minimum and the
 * minimum of the toolkit of mlsetup's default build (drivers.json
 * "detect_advice": 570.26 / 570.65 for Blackwell, the CUDA 12.4 minimum
 * 550.54.14 / 551.61 from Maxwell to Hopper). NULL when the GPU is older
 * than that build's oldest SASS, or the capability is unknown. */
const char *ml_min_driver_for_cc(int major, int minor, bool windows);

/* The CUDA version (1000 * major + 10 * minor, as cuDriverGetVersion
 * reports a driver's) of the release that introduced PTX ISA version `isa`
 * (10 * major + minor: 87 for ".version 8.7"), from drivers.json
 * "ptx_isa" (NVIDIA PTX ISA document, "PTX Release History"). A driver
 * JIT-compiles a PTX module only when its own CUDA version is at least
 * this; minor-version compatibility does not extend to JIT. For an ISA
 * newer than every row it returns the newest row's release, a lower bound,
 * and sets *beyond (when non-NULL) to true. 0 when isa <= 0 or the table
 * is broken. */
int ml_ptx_isa_cuda(int isa, bool *beyond);

/* The highest CUDA version (1000 * major + 10 * minor) a driver of this
 * version supports, from its branch ("550.54.15" -> 12040; drivers.json
 * "driver_branches"), as NVML's nvmlSystemGetCudaDriverVersion would
 * report it; for a machine, prefer
 * ml_driver.cuda_version, which detect reads from the driver itself. 0
 * when the version is not a driver version or older than every branch
 * known. */
int ml_driver_cuda_version(const char *driver_version);

/* --- driver versions (src/detect/gpu_tables.c) ---------------------------- */


/* Compares dotted driver versions numerically ("570.26" < "570.124.06").
 * Returns <0, 0 or >0 like strcmp. */
int ml_driver_version_cmp(const char *a, const char *b);

#endif /* MLSETUP_DETECT_H */
