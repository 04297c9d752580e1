/*
 * verify.h - the verify stage: does GPU code really run here?
 *
 * Two halves, each with its header: the static audit of the CUDA code in
 * libraries, wheels and environments (audit.h: fatbin.c, elf.c, cubin.c,
 * audit.c, torchbuild.c, libraries.c), and the run-time checks below -
 * the driver-level and framework smoke tests, the diagnosis and the
 * verdict (smoke.c, framework.c, imports.c, diagnose.c, run.c). This
 * header includes audit.h: a verification carries its environment's audit.
 */
#ifndef MLSETUP_VERIFY_H
#define MLSETUP_VERIFY_H

#include "mlsetup/audit.h"
#include "mlsetup/core.h"
#include "mlsetup/plan.h"

/* ==========================================================================
 * The smoke tests and the verdict: does GPU code really run here, and if
 * not, why and what to do?
 *
 *   smoke.c      driver-level smoke test: the CUDA driver API, loaded with
 *                dlopen, runs an embedded SAXPY kernel on every GPU
 *   framework.c  framework-level smoke test: an embedded Python script run
 *                by the environment's interpreter exercises torch
 *   diagnose.c   maps both results (and the machine) to an ml_verdict: per
 *                GPU, per check {name, status, cause, detail, remedy}, from
 *                which the exit code is derived
 *
 * None of these print. The smoke tests never fail because a GPU check
 * failed: they return 0 and say so in their result; only bad options, a
 * missing interpreter and allocation failures are errors.
 * ========================================================================== */

struct cJSON;

/* --- verify: driver-level smoke test (src/verify/smoke.c) ----------------- */

/* Outcome of one check, in smoke results and verdicts alike. */
typedef enum ml_check_status {
	ML_CHECK_PASS = 0,
	ML_CHECK_FAIL = 1,
	ML_CHECK_SKIP = 2, /* not run; detail says why */
	ML_CHECK_WARN = 3, /* ran and passed, with a caveat */
} ml_check_status;

/* Returns "pass", "fail", "skip" or "warn" (static). */
const char *ml_check_status_name(ml_check_status s);

/* One step of checking an environment, reported as it happens so that a
 * front end can show what runs now (a smoke test can take a minute). */
typedef struct ml_verify_step {
	const char *name;       /* "auditing the CUDA libraries", "importing torch",
	                         * "SAXPY on GPU 0", "fp16 matmul on GPU 0" */
	bool done;              /* false: the step begins; true: it ended */
	ml_check_status status; /* done: how it went (FAIL also when the
	                         * program running it died or timed out) */
	double seconds;         /* done: how long it ran (monotonic clock) */
} ml_verify_step;

/* Called at the beginning and at the end of every step, from the thread
 * that runs the check; step and its strings are valid during the call. */
typedef void (*ml_verify_step_fn)(const ml_verify_step *step, void *data);

/* One CUresult other than CUDA_SUCCESS that a driver call returned. */
typedef struct ml_cuda_error {
	char step[40]; /* the driver API function, "cuModuleLoadDataEx" */
	int code;      /* CUresult, 209 */
	char name[64]; /* "CUDA_ERROR_NO_BINARY_FOR_GPU"; "CUresult 12345" when unknown */
} ml_cuda_error;

/* The driver-level smoke test on one GPU (CUDA device ordinal `index`). */
typedef struct ml_smoke_gpu {
	int index;              /* CUDA device ordinal (honours CUDA_VISIBLE_DEVICES) */
	char name[96];          /* cuDeviceGetName, "" when unknown */
	int cc_major, cc_minor; /* attributes 75/76, -1 when unknown */
	ml_check_status status; /* PASS (exact results) or FAIL; WARN: passed
	                         * only through the portable PTX fallback */
	char step[40];          /* first failing driver call ("cuLaunchKernel"), or
	                         * "compare" for wrong results; "" when passed */
	int cuda_error;         /* its CUresult, 0 when none */
	char cuda_error_name[64];
	char detail[512];      /* one line: the error with cuGetErrorString's text,
	                        * the mismatch, or the timing summary */
	bool ptx_fallback;     /* the fatbin was refused and the portable PTX
	                        * (ISA 7.0) was JIT-compiled instead */
	size_t n_floats;       /* elements of x and y */
	double load_ms;        /* cuModuleLoadDataEx (includes any JIT), milliseconds */
	double h2d_ms, d2h_ms; /* copies of x and y to / y from the device, ms */
	double kernel_ms;      /* one launch + cuCtxSynchronize, mean of the timed runs, ms */
	double total_ms;       /* the whole test on this GPU, ms */
	double gbps;           /* kernel bandwidth: 12 bytes per element (read x
	                        * and y, write y) / kernel_ms, 10^9 bytes/s */
	double max_abs_error;  /* against the host result; 0 when exact */
	size_t mismatches;     /* elements that differ */
	char *jit_log;         /* the JIT info and error logs, NULL when empty; owned */
	ml_cuda_error *errors; /* every CUresult != 0 on this GPU, in call order */
	size_t n_errors;
} ml_smoke_gpu;

/* The driver-level smoke test on the whole machine. */
typedef struct ml_smoke_result {
	ml_check_status status; /* PASS: every GPU passed (WARN: some only
	                         * through the PTX fallback); SKIP: no driver
	                         * library or no CUDA device (detail says which);
	                         * FAIL: the driver or a GPU failed */
	char library[256];      /* the library loaded, "" when none */
	char kernel[320];       /* what was loaded: ml_smoke_kernel_desc() or
	                         * "caller's image" */
	int cuda_version;       /* cuDriverGetVersion, 1000*major + 10*minor; 0 unknown */
	char step[40];          /* a failure before the GPUs: "dlopen", "dlsym",
	                         * "cuInit", "cuDeviceGetCount"; "" when none */
	int cuda_error;         /* its CUresult (0 for dlopen/dlsym) */
	char cuda_error_name[64];
	char missing_symbol[64]; /* the required symbol dlsym did not find */
	char detail[512];        /* why skipped or failed before the GPUs, else a summary */
	ml_smoke_gpu *gpus;      /* one per CUDA device, ordinal order */
	size_t n_gpus;
} ml_smoke_result;

typedef struct ml_smoke_opts {
	/* Libraries tried in order (names for the loader's search, or paths),
	 * NULL-terminated; NULL means libcuda.so.1, then the WSL copy
	 * /usr/lib/wsl/lib/libcuda.so.1 (as detect uses). */
	const char *const *lib_names;
	/* Code to load instead of the embedded fatbin: a fatbin, cubin or
	 * NUL-terminated PTX that defines extern "C" saxpy(int n, float a,
	 * const float *x, float *y). NULL: the embedded fatbin, and the
	 * embedded portable PTX when the driver refuses it. */
	const void *image;
	size_t n_floats; /* elements per buffer, 1 .. 2^28; 0: 4 Mi (16 MiB a buffer) */
	int iterations;  /* timed launches after one warm-up, 1 .. 1000; 0: 10 */
	int block_size;  /* threads per block, 32 .. 1024; 0: 256 */
	/* Steps as they run: "starting the CUDA driver" (dlopen, cuInit,
	 * cuDeviceGetCount), then "SAXPY on GPU N" per device; may be NULL. */
	ml_verify_step_fn on_step;
	void *step_data;
} ml_smoke_opts;

#define ML_SMOKE_OPTS_INIT                                                                         \
	{                                                                                          \
		NULL, NULL, 0, 0, 0, NULL, NULL                                                    \
	}

/* --- verify: framework-level smoke test (src/verify/framework.c) ---------- */

/* What went wrong in the framework smoke test, from the error messages
 * torch gives (ml_fw_classify()). */
typedef enum ml_fw_class {
	ML_FW_OK = 0,
	ML_FW_NO_KERNEL_IMAGE,  /* "no kernel image is available for execution ..." */
	ML_FW_CPU_ONLY_BUILD,   /* torch.version.cuda is None ("Torch not compiled ...") */
	ML_FW_CUDA_UNAVAILABLE, /* CUDA build, but no usable GPU ("No CUDA GPUs ...") */
	ML_FW_DRIVER_TOO_OLD,   /* "The NVIDIA driver on your system is too old" */
	ML_FW_OOM,              /* "CUDA out of memory" */
	ML_FW_WRONG_RESULTS,    /* ran, but the result differs from the CPU reference */
	ML_FW_IMPORT_ERROR,     /* `import torch` failed */
	ML_FW_SYSTEM_NOT_READY, /* CUDA error 802 "system not yet initialized":
	                         * an NVSwitch system without its Fabric Manager */
	ML_FW_DEVICES_BUSY,     /* CUDA error 46 "all CUDA-capable devices are busy
	                         * or unavailable": exclusive-process compute mode */
	ML_FW_OTHER,
} ml_fw_class;

/* One framework check: machine-wide "import" and "cpu_matmul", per GPU
 * "fp32_matmul", "fp16_matmul", "bf16_matmul", "elementwise", "alloc". */
typedef struct ml_fw_check {
	char name[32];
	ml_check_status status; /* PASS, FAIL or SKIP (e.g. bf16 unsupported) */
	ml_fw_class cls;        /* why it failed; ML_FW_OK otherwise */
	double ms;              /* one run, milliseconds; 0 unknown. GPU checks:
	                         * the mean of `reps` runs timed with CUDA events
	                         * after one warm-up run and a synchronize */
	int n;                  /* GPU matmuls: n of the n x n matmul; 0 n/a */
	int reps;               /* GPU checks: runs in the timed batch; 0 n/a */
	double gflops;          /* 10^9 floating-point operations per second; 0 n/a */
	double tflops;          /* GPU matmuls: 2 n^3 / (ms / 10^3) / 10^12, the
	                         * 10^12 floating-point operations per second of
	                         * this dtype on this GPU; 0 n/a */
	double gbps;            /* elementwise/alloc: 10^9 bytes per second; 0 n/a */
	double max_abs_error;   /* against the CPU reference, -1 when not compared */
	double tolerance;       /* the bound max_abs_error was held to, -1 n/a */
	char detail[512];       /* first line of the error, or why skipped */
} ml_fw_check;

/* One GPU as torch sees it (torch device index = CUDA device ordinal). */
typedef struct ml_fw_gpu {
	int index;
	char name[96];          /* torch.cuda.get_device_name */
	int cc_major, cc_minor; /* torch.cuda.get_device_capability */
	bool arch_ok;           /* ml_arch_runs_on(torch.cuda.get_arch_list());
	                         * true when the list or the capability is unknown */
	char arch_why[256];     /* its reason, "sm_120: no SASS for major 12, ..." */
	char warning[512];      /* the first warning torch gave about this GPU
	                         * ("... is not compatible with the current
	                         * PyTorch installation"), else "" */
	ml_fw_check *checks;
	size_t n_checks;
} ml_fw_gpu;

/* The framework-level smoke test. */
typedef struct ml_framework_result {
	ml_fw_class cls;         /* what the test found, in this order: torch did
	                          * not import; the CPU check failed; a CPU-only
	                          * build, or CUDA unusable (driver too old,
	                          * unavailable), so GPU checks were skipped -
	                          * whether that matters depends on the machine,
	                          * ml_diagnose() decides; the first failed GPU
	                          * check; else ML_FW_OK */
	char detail[1024];       /* its message (first line); a summary when ok */
	int exit_status;         /* the interpreter's exit status; -1 killed */
	char python_version[32]; /* "3.12.8" */
	char torch_version[64];  /* torch.__version__, "" when not imported */
	char torch_cuda[32];     /* torch.version.cuda, "" for a CPU-only build */
	char torch_path[512];    /* torch.__file__: which torch was imported */
	bool cuda_available;     /* torch.cuda.is_available() */
	int device_count;        /* torch.cuda.device_count() */
	char cuda_error[1024];   /* when unavailable: torch.cuda.init()'s error
	                          * or the CUDA initialization warning, else "" */
	char **arch_list;        /* torch.cuda.get_arch_list(), "sm_90", "compute_90" */
	size_t n_arch_list;
	bool gpu_checks_skipped; /* no GPU checks ran; skip_reason says why */
	char skip_reason[256];
	ml_fw_check *checks; /* machine-wide: "import", "cpu_matmul" */
	size_t n_checks;
	ml_fw_gpu *gpus;
	size_t n_gpus;
	char *output; /* when no JSON came back: the last 4 KiB of the
	               * interpreter's output; NULL otherwise; owned */
	struct cJSON *imports; /* with ml_framework_opts.imports: the answers
	                        * the script gave after its checks, an object
	                        * {module: {"ok": bool, "error": "Type: ..."}}
	                        * (the form ml_verify_imports_answer takes);
	                        * NULL when it gave none; owned */
} ml_framework_result;

typedef struct ml_framework_opts {
	int timeout_s;    /* whole script, seconds; 0: 600 */
	int matmul_size;  /* n of the n x n matmuls (elementwise: n*n elements),
	                   * 2 .. 16384; 0: 2048 */
	size_t alloc_mib; /* size of the allocation check, MiB, 1 .. 1048576; 0: 256 */
	/* Steps as the script reports them while it runs ("importing torch",
	 * "CPU matmul", "checking CUDA", then per GPU "fp32 matmul on GPU N",
	 * "fp16 ...", "bf16 ...", "elementwise ...", "allocation on GPU N");
	 * may be NULL. */
	ml_verify_step_fn on_step;
	void *step_data;
	/* Modules to import after the checks, in the same interpreter, which
	 * has loaded torch by then: the import check's share that needs torch
	 * (ml_verify_imports_held), so that torch's libraries load once. The
	 * smoke test's own limit (timeout_s) ends when its result is out;
	 * the imports then have ML_IMPORT_TIMEOUT_S. Borrowed; may be NULL. */
	const char *const *imports;
	size_t n_imports;
	const char *import_claims; /* the claims directory of those imports,
	                            * ml_verify_imports_held; NULL or "": none */
} ml_framework_opts;

/* How long one interpreter of the import check may take, seconds. */
#define ML_IMPORT_TIMEOUT_S (30 * 60)

#define ML_FRAMEWORK_OPTS_INIT                                                                     \
	{                                                                                          \
		0, 0, 0, NULL, NULL, NULL, 0, NULL                                                 \
	}

/* The GPU check of fg called name ("bf16_matmul"), or NULL. */
const ml_fw_check *ml_fw_gpu_check(const ml_fw_gpu *fg, const char *name);

/* Writes a rate in TFLOP/s with three significant digits and no exponent
 * ("0.0123", "1.23", "12.3", "312", "2250") into dst (sz bytes); "?" when
 * it is not a positive number. */
void ml_tflops_format(char *dst, size_t sz, double tflops);

/* --- verify: diagnosis and verdict (src/verify/diagnose.c) ----------------- */

/* The cause a failed (or warned) check is attributed to. */
typedef enum ml_cause {
	ML_CAUSE_NONE = 0,
	ML_CAUSE_NO_KERNEL_IMAGE,  /* the build has no code for this GPU's architecture */
	ML_CAUSE_DRIVER_TOO_OLD,   /* driver older than the CUDA the code needs */
	ML_CAUSE_CPU_ONLY_BUILD,   /* torch without CUDA on a machine with a GPU */
	ML_CAUSE_GPU_NOT_VISIBLE,  /* GPU present but hidden: CUDA_VISIBLE_DEVICES,
	                            * container without the GPU runtime, WSL without
	                            * the driver libraries, no driver loaded */
	ML_CAUSE_DRIVER_BROKEN,    /* stub library, driver/kernel module mismatch */
	ML_CAUSE_WRONG_RESULTS,    /* computed, but wrong */
	ML_CAUSE_OOM,              /* out of device memory */
	ML_CAUSE_IMPORT_ERROR,     /* torch does not import */
	ML_CAUSE_SYSTEM_NOT_READY, /* CUDA error 802: an NVSwitch system whose
	                            * Fabric Manager is not running */
	ML_CAUSE_GPU_BUSY,         /* CUDA error 46: a GPU in exclusive-process (or
	                            * prohibited) compute mode, held elsewhere */
	ML_CAUSE_PRECISION_FAILED, /* a precision the GPU has in hardware fails
	                            * (bf16 on compute capability 8.0+) */
	ML_CAUSE_OTHER,
} ml_cause;

/* One check of the verdict. */
typedef struct ml_check {
	char name[32]; /* "cuda_driver", "torch_import", "torch_cuda",
	                * "cpu_matmul", "gpu_visible"; per GPU "driver_saxpy",
	                * "torch_arch", "fp32_matmul", "fp16_matmul",
	                * "bf16_matmul", "elementwise", "alloc" */
	ml_check_status status;
	ml_cause cause;   /* ML_CAUSE_NONE when passed or skipped */
	char detail[512]; /* what was seen */
	char remedy[512]; /* what to do; "" when nothing */
} ml_check;

typedef struct ml_verdict_gpu {
	int index; /* CUDA device ordinal, or detect's index when CUDA saw none */
	char name[96];
	int cc_major, cc_minor; /* -1 when unknown */
	ml_check *checks;
	size_t n_checks;
} ml_verdict_gpu;

/* The verdict: everything verify found, per GPU and per check. */
typedef struct ml_verdict {
	ml_check_status status; /* FAIL when any check failed, else WARN when any
	                         * warned, else PASS (SKIPs alone do not fail) */
	ml_cause cause;         /* the cause of the first failure; NONE */
	char summary[512];      /* one line for people */
	ml_check *checks;       /* machine-wide */
	size_t n_checks;
	ml_verdict_gpu *gpus;
	size_t n_gpus;
} ml_verdict;

typedef struct ml_diagnose_opts {
	const ml_machine *machine;            /* from ml_detect; may be NULL */
	const ml_smoke_result *driver;        /* may be NULL: not run */
	const ml_framework_result *framework; /* may be NULL: not run */
	const char *manifest;                 /* manifest the environment came from (name or
	                                       * path), for its minimum driver; NULL unknown */
	const char *root;                     /* directory /dev and /usr/lib/wsl are looked at
	                                       * under; NULL or "/" for the live system */
	bool require_gpu;                     /* --require-gpu: no GPU check run is a failure */
} ml_diagnose_opts;

#define ML_DIAGNOSE_OPTS_INIT                                                                      \
	{                                                                                          \
		NULL, NULL, NULL, NULL, NULL, false                                                \
	}

/* --- checking an environment (src/verify/run.c) ----------------------------- */

typedef struct ml_verify_env_opts {
	const char *target;   /* the environment: <target>/bin/python, its libraries */
	const char *python;   /* instead of target: this interpreter and its
	                       * site-packages (no audit of libraries); NULL */
	const char *manifest; /* the manifest the environment came from (name or
	                       * path; see ml_report_manifest), for remedies; NULL */
	const char *root;     /* sysroot for the diagnosis; NULL: the live system */
	bool require_gpu;     /* no GPU check run is a failure */
	ml_framework_opts framework;
	/* Every step as it runs: "auditing the CUDA libraries", the driver
	 * smoke test's and the framework smoke test's (ml_smoke_opts,
	 * ml_framework_opts); framework.on_step is not used. May be NULL. */
	ml_verify_step_fn on_step;
	void *step_data;
} ml_verify_env_opts;

#define ML_VERIFY_ENV_OPTS_INIT                                                                    \
	{                                                                                          \
		NULL, NULL, NULL, NULL, false, ML_FRAMEWORK_OPTS_INIT, NULL, NULL                  \
	}

/* Everything verify learnt about one environment. */
typedef struct ml_verification {
	char python[4096];      /* the interpreter that was checked */
	ml_audit *audit;        /* of the environment's libraries; NULL with python */
	ml_smoke_result driver; /* the driver-level SAXPY on every GPU */
	ml_framework_result framework;
	bool framework_ran;  /* framework holds a result */
	ml_verdict *verdict; /* never NULL in a returned verification */
} ml_verification;

/* Checks an environment on machine m: the static audit of its CUDA
 * libraries against m's GPUs (ml_audit_paths), the driver-level smoke test
 * (ml_smoke_driver), the framework smoke test with its interpreter
 * (ml_smoke_framework) and the diagnosis that gives each failure a cause
 * and a remedy (ml_diagnose). Returns 0 whatever the verdict says (ask
 * ml_verification_status() for the outcome), ML_ENOENT when there is no
 * environment at o->target or the interpreter cannot be started, ML_EUSAGE
 * (bad framework options), ML_ENOMEM. Caller owns *out; free with
 * ml_verification_free(). */
int ml_verify_env(ml_verification **out, const ml_machine *m, const ml_verify_env_opts *o,
                  ml_err *err);

/* The outcome of a verification, the one place it is decided (from
 * ml_verdict_exit_code()): 0; ML_EGPU when a GPU check failed; or
 * ML_EUNSUPPORTED when the cause is a driver that is too old. err gets the
 * verdict's summary and the first failed check's remedy as hint. */
int ml_verification_status(const ml_verification *v, ml_err *err);

/* Adds "audit" (when audited), "driver_smoke", "framework" (when it ran)
 * and "verdict" to the JSON object obj. Returns 0 or ML_ENOMEM. */
int ml_verification_add_json(struct cJSON *obj, const ml_verification *v);

/* Frees a verification; accepts NULL. */
void ml_verification_free(ml_verification *v);

/* --- every top-level package imports (src/verify/imports.c) -------------- */

/* One installed distribution whose modules are tried. Borrowed strings. */
typedef struct ml_import_dist {
	const char *name;      /* distribution name ("torch") */
	const char *dist_info; /* "torch-2.6.0.dist-info" in site-packages */
	bool requested;        /* named in the manifest: a failure fails the check */
} ml_import_dist;

/* One module tried. */
typedef struct ml_import_result {
	char *module;       /* top-level import name */
	char *distribution; /* the distribution it came from */
	bool requested;
	bool with_torch; /* its distribution is torch or requires it: imported in
	                  * torch's interpreter */
	bool ok;
	char *error; /* "ModuleNotFoundError: ...", or "no result"; NULL when ok */
} ml_import_result;

typedef struct ml_import_check {
	ml_import_result *modules; /* in distribution order */
	size_t n_modules;
	size_t failed_requested, failed_other;
	int run_rc; /* 0, or why the interpreter gave no answer at all */
	ml_err run_err;
} ml_import_check;

/* Imports every top-level module of each distribution with the
 * environment's interpreter (<env_root>/bin/python), in one process per
 * core at once (MLSETUP_IMPORT_JOBS=N sets how many; each distribution's
 * modules in one process; torch and the distributions whose METADATA
 * requires it in one, so its libraries load once; the others shared out
 * by module count), each import timed. A distribution's modules are the names in its
 * top_level.txt, else the first path components of its RECORD rows
 * (packages and top-level .py files); private names ("_x"), test suites,
 * docs and examples are left out. site-packages is
 * <env_root>/lib/python<python_xy>/site-packages. Returns 0 with *out set
 * whatever the imports did (see ml_import_check_status), or ML_ENOMEM.
 * Caller owns *out; free with ml_import_check_free(). */
int ml_verify_imports(ml_import_check **out, const char *env_root, const char *python_xy,
                      const ml_import_dist *dists, size_t n, ml_err *err);

/* An import check under way (ml_verify_imports_start). */
typedef struct ml_import_run ml_import_run;

/* ml_verify_imports() in two halves, so that other checks can run while
 * the interpreters import: _start collects the modules and starts jobs
 * worker processes (0: one per core; MLSETUP_IMPORT_JOBS overrides both),
 * each on a thread of its own, and returns at once with
 * *out set (0), or ML_ENOMEM; _finish waits for them and sets *out as
 * ml_verify_imports() does (0, or ML_ENOMEM), and frees run either way;
 * _abandon waits for them and frees run and what they found (accepts
 * NULL). Every run is finished or abandoned exactly once. With
 * hold_torch, the modules of torch and of the distributions that require
 * it are kept back for an interpreter that loads torch anyway (the torch
 * smoke test): see ml_verify_imports_held and _answer. */
int ml_verify_imports_start(ml_import_run **out, const char *env_root, const char *python_xy,
                            const ml_import_dist *dists, size_t n, unsigned jobs,
                            bool hold_torch, ml_err *err);
int ml_verify_imports_finish(ml_import_check **out, ml_import_run *run, ml_err *err);
void ml_verify_imports_abandon(ml_import_run *run);

/* The list _start kept for another interpreter (hold_torch): torch's
 * share, which no worker has, then the others, which that interpreter
 * imports only where it claims them first in the directory *claims (a
 * file of the module's name created with O_EXCL; "" when it imports
 * them all), as the workers do. *names gets the names and *claims the
 * directory (both borrowed, valid until _finish or _abandon); the count
 * is returned; 0 (and NULLs) when nothing was kept. For
 * ml_framework_opts.imports and .import_claims. */
size_t ml_verify_imports_held(const ml_import_run *run, const char *const **names,
                              const char **claims);

/* That interpreter's answers: an object {module: {"ok": bool, "error":
 * text}} (ml_framework_result.imports; NULL when it gave none). _finish
 * takes them; what nobody answered (an interpreter crashed, or never got
 * that far) it imports in one more interpreter of its own, so every
 * module is answered for. Returns 0 or ML_ENOMEM. */
int ml_verify_imports_answer(ml_import_run *run, const struct cJSON *answers);

/* The outcome of an import check: 0; ML_EFAIL when a module of a requested
 * distribution failed to import ("N top-level modules of the requested
 * packages failed to import"), or the interpreter gave no answer (run_rc,
 * with its message). */
int ml_import_check_status(const ml_import_check *c, ml_err *err);

/* Builds the report's "verification" object: imports[] {module,
 * distribution, ok, error when failed}, status "pass"/"fail", modules,
 * failed_requested, failed_other. Returns a new cJSON object or NULL when
 * out of memory. */
struct cJSON *ml_import_check_to_json(const ml_import_check *c);

/* Frees an import check; accepts NULL. */
void ml_import_check_free(ml_import_check *c);

#endif /* MLSETUP_VERIFY_H */
