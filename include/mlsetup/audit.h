/*
 * audit.h - the verify stage's static audit: does this CUDA code run there?
 *
 * Without running anything: which CUDA code (SASS for one compute
 * capability, PTX the driver can JIT-compile) a shared library, a wheel or
 * a whole environment carries, read from the fatbinaries embedded in it,
 * and whether that code runs on given GPUs, answered by ml_arch_judge(),
 * the one "will it run?" rule (plan.h; docs/gpu-truth.md). Sources:
 *
 *   fatbin.c  the fatbinary reader: containers and entries
 *             (docs/nvidia-and-python-facts.md, "Fatbinary layout",
 *             checked against nvcc 13.0 output) and where each
 *             container lies (`.nv_fatbin`, `__nv_relfatbin`, data
 *             sections); pure functions over bytes
 *   elf.c     the ELF-64 section lookup fatbin.c and cubin.c share (System
 *             V ABI, "ELF-64 Object File Format"); pure
 *   cubin.c   one entry's payload: LZ4 (liblz4) or zstd (libzstd)
 *             decompression, bounded, and the cubin's kernels counted
 *   audit.c   paths -> per-library lists and answers: regular files (mmap),
 *             wheels (zip members read in place with libarchive), directory
 *             trees; the "mlsetup.audit/1" JSON document; and a torch
 *             wheel's build, by an audit of that wheel
 *   libraries.c  the libraries with a documented range of their own
 *             (manifests/cuda-libraries.json)
 *   torchbuild.c  a torch wheel -> its build: the code of torch's own CUDA
 *             library, its CUDA version (torch/version.py, METADATA), the
 *             table entry with its hash (plan.h, ml_torch_build_lookup())
 *
 * Nothing here prints or runs GPU code. Every reader is bounds-checked with
 * overflow-safe arithmetic and is fuzzed (tests/fuzz/fuzz_fatbin.c,
 * tests/fuzz/fuzz_cubin.c): malformed, truncated or hostile input gives
 * ML_EPARSE with a message naming the offset, never a crash.
 */
#ifndef MLSETUP_AUDIT_H
#define MLSETUP_AUDIT_H

#include "mlsetup/core.h"
#include "mlsetup/plan.h"

/* --- the fatbinary reader (src/verify/fatbin.c) --------------------------- */

/* Container magic, little-endian u32 at the start of every container
 * (docs/nvidia-and-python-facts.md, "Fatbinary layout"). */
#define ML_FATBIN_MAGIC 0xBA55ED50u

/* Entry kinds (u16 at offset 0 of an entry header). */
enum { ML_FATBIN_KIND_PTX = 1, ML_FATBIN_KIND_ELF = 2 };

/* Entry flags (u64 at offset 40 of an entry header), docs/nvidia-and-python-facts.md, "Fatbinary
 * layout". */
#define ML_FATBIN_FLAG_LZ4           0x2000ull   /* payload LZ4-compressed */
#define ML_FATBIN_FLAG_ZSTD          0x8000ull   /* payload zstd-compressed */
#define ML_FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull /* sm_90a / compute_90a */
#define ML_FATBIN_FLAG_FAMILY        0x200000ull /* sm_100f / compute_100f */

/* Where a container was found, which decides whether its code counts at
 * run time (docs/nvidia-and-python-facts.md, "Fatbinary layout"). */
typedef enum ml_fatbin_where {
	ML_FATBIN_EXECUTABLE = 0,  /* `.nv_fatbin` (or found by magic in a PE
	                            * DLL or an ELF file without sections): what
	                            * the CUDA runtime loads; what `cuobjdump
	                            * --list-elf --list-ptx` lists */
	ML_FATBIN_EMBEDDED = 1,    /* a whole container inside `.data`, `.rodata`
	                            * or `.data.rel.ro`: loaded by the library
	                            * itself at run time (cuFFT 11.2, CUPTI); counts */
	ML_FATBIN_RELOCATABLE = 2, /* `__nv_relfatbin`: relocatable device code,
	                            * input to a device link, never loaded at run
	                            * time; never counts */
} ml_fatbin_where;

/* One code object of a fatbin: SASS (kind 2, an ELF cubin) or PTX (kind 1).
 * Offsets and sizes are in bytes; offsets count from the start of the
 * buffer given to the scan (for ml_fatbin_scan_image(), the file). */
typedef struct ml_fatbin_entry {
	ml_cuda_arch arch;          /* sm_90, sm_90a, sm_100f, compute_80 ... */
	uint16_t kind;              /* ML_FATBIN_KIND_PTX or ML_FATBIN_KIND_ELF */
	uint64_t flags;             /* ML_FATBIN_FLAG_* and others, as stored */
	bool compressed;            /* LZ4 or zstd */
	ml_fatbin_where where;      /* the container's place in the image */
	uint64_t offset;            /* of the entry header */
	uint32_t header_size;       /* entry header bytes (64, 72, 80, 112 seen) */
	uint64_t payload_size;      /* payload bytes as stored after the header */
	uint64_t uncompressed_size; /* when compressed, as the header says; else 0 */
	int32_t kernels;            /* SASS: kernels in the cubin (see ml_fatbin_list);
	                             * PTX: `.entry` directives in the module (0
	                             * or more; 1 may mean "at least one"). -1 when
	                             * not read: relocatable code, an architecture
	                             * another entry showed to hold kernels, or an
	                             * entry that could not be read */
	int isa;                    /* PTX: the module's PTX ISA version (its
	                             * `.version` directive), 10 * major + minor;
	                             * 0 when not read or absent */
	bool merc;                  /* SASS read: the cubin carries Mercury
	                             * sections (`.nv.merc.*`, `.nv.capmerc.*`) */
} ml_fatbin_entry;

/* What one or more scans found. Scans append to it; every architecture
 * array stays sorted (major, minor, then plain < 'a' < 'f') without
 * duplicates. sass[] and ptx[] hold only ML_FATBIN_EXECUTABLE code - the
 * lists `cuobjdump --list-elf` / `--list-ptx` print; the embedded and
 * relocatable arrays hold the rest.
 *
 * Kernels: when a scan has read its entries, the SASS cubins of counted
 * code (executable and embedded) are read, smallest first within each
 * architecture, until the architecture shows a kernel; an architecture
 * none of whose counted cubins holds one is in kernelless[] (cuFFT's
 * 872-byte sm_52 cubin). A kernel is a `.text.<name>` section of the
 * cubin's ELF image; a cubin without any, whose Mercury sections hold
 * `.nv.capmerc.text.<name>` / `.nv.merc.text.<name>` kernels, counts
 * those (see cubin.c: CUDA 13 cubins for Blackwell targets carry, beside
 * the SASS, the same kernels in NVIDIA's Mercury form, which the driver
 * finalizes for the family member it loads them on). A cubin that cannot
 * be read (bad compression, not a CUDA ELF, over the size cap) is counted
 * in n_unreadable and treated as holding kernels. Reading costs what
 * decompressing those cubins costs: NCCL 2.21.5 ships one device-linked
 * cubin of 37-88 MB per architecture.
 *
 * PTX the same way: every counted PTX module's first bytes are read for
 * its ISA version (`.version 8.7`), and per architecture the modules are
 * read whole, smallest first, until one holds a kernel (an `.entry`
 * directive); an architecture none of whose counted modules has one is in
 * kernelless_ptx[] (cuDNN 9.26's libcudnn_ext.so.9: 22 compute_121
 * modules, no `.entry`), the others in ptx_with_entries[] carrying the
 * newest ISA among their modules (the conservative one: the driver must
 * JIT every module). Such an architecture can fail on no GPU.
 * Initialise with ML_FATBIN_LIST_INIT; release with
 * ml_fatbin_list_release(). */
typedef struct ml_fatbin_list {
	ml_fatbin_entry *entries; /* every PTX and SASS entry, in file order */
	size_t n_entries;
	size_t cap_entries; /* entries allocated (internal) */
	ml_cuda_arch *sass; /* unique SASS architectures, executable containers */
	size_t n_sass;
	ml_cuda_arch *ptx; /* unique PTX architectures, executable containers */
	size_t n_ptx;
	size_t n_containers;         /* containers whose header was valid (all places) */
	size_t n_compressed;         /* entries with a compressed payload (all places) */
	size_t n_other;              /* entries of other kinds, skipped (not listed) */
	ml_cuda_arch *embedded_sass; /* ML_FATBIN_EMBEDDED: SASS */
	size_t n_embedded_sass;
	ml_cuda_arch *embedded_ptx; /* ML_FATBIN_EMBEDDED: PTX */
	size_t n_embedded_ptx;
	ml_cuda_arch *relocatable_sass; /* ML_FATBIN_RELOCATABLE: SASS */
	size_t n_relocatable_sass;
	ml_cuda_arch *relocatable_ptx; /* ML_FATBIN_RELOCATABLE: PTX */
	size_t n_relocatable_ptx;
	ml_cuda_arch *with_kernels; /* counted SASS architectures with a kernel
	                             * (or an unreadable cubin) */
	size_t n_with_kernels;
	ml_cuda_arch *kernelless; /* counted SASS architectures whose every
	                           * entry holds no kernel */
	size_t n_kernelless;
	size_t n_unreadable;            /* counted cubins and PTX modules that could not be read */
	ml_cuda_arch *ptx_with_entries; /* counted PTX architectures with an
	                                 * `.entry` (or an unreadable module),
	                                 * isa: the newest of their modules */
	size_t n_ptx_with_entries;
	ml_cuda_arch *kernelless_ptx; /* counted PTX architectures whose every
	                               * module holds no `.entry` */
	size_t n_kernelless_ptx;
	size_t n_merc; /* SASS cubins read that carry Mercury sections */
} ml_fatbin_list;

#define ML_FATBIN_LIST_INIT                                                                        \
	{                                                                                          \
		.entries = NULL                                                                    \
	}

/* --- one entry's payload (src/verify/cubin.c) ------------------------------- */

/* Largest payload decompressed, in bytes (512 MiB); real cubins stay far
 * below (NCCL's device-linked ones are about 16 MiB). */
#define ML_FATBIN_INFLATE_MAX (512ull << 20)

/* --- the audit: paths -> answers (src/verify/audit.c) --------------------- */

/* One file's answer for one device. The rules of the states, once:
 *
 *   - What counts of a file's code: its SASS architectures whose cubins
 *     hold a kernel and its PTX architectures whose modules hold one (an
 *     `.entry`), from executable and embedded containers; relocatable
 *     code never counts (ml_fatbin_list).
 *   - Nothing counts (kernel-less cubins and PTX, or relocatable code
 *     only): ML_AUDIT_UNVERIFIED on every device, never a failure. Code
 *     without kernels can fail on no GPU.
 *   - Else ml_arch_judge() with NVIDIA's rules and the driver (PTX counts
 *     only where the driver can JIT its ISA) decides RUNS or FAILS.
 *   - A FAILS on a device below the documented minimum of a library that
 *     torch uses only for features such a device lacks anyway (the table
 *     manifests/cuda-libraries.json: cuSPARSELt, 2:4 structured sparsity,
 *     8.0 and newer) becomes ML_AUDIT_NOT_FOR_GPU, which fails nothing.
 *   - torch's own library also gets torch's judgement (ML_ARCH_TORCH)
 *     beside NVIDIA's, in torch_runs/torch_why; it decides nothing. */
typedef enum ml_audit_state {
	ML_AUDIT_RUNS = 0,        /* ml_arch_judge() says the code runs there */
	ML_AUDIT_FAILS = 1,       /* it says it does not */
	ML_AUDIT_UNVERIFIED = 2,  /* the file's counted code holds no kernels
	                           * (kernel-less cubins and PTX, or relocatable
	                           * code only): nothing can be said; neither
	                           * runs nor fails */
	ML_AUDIT_NOT_FOR_GPU = 3, /* it does not run there, and the device is
	                           * below the library's documented minimum
	                           * for the only use torch makes of it: not a
	                           * failure */
} ml_audit_state;

/* The text of every ML_AUDIT_UNVERIFIED answer whose file has kernel-less
 * code only. */
#define ML_AUDIT_NO_KERNELS_WHY "no kernels visible; stored in another form"

/* One answer for one device. */
typedef struct ml_audit_answer {
	bool runs;            /* state == ML_AUDIT_RUNS (overall: no file fails) */
	ml_audit_state state; /* per file; overall answers are RUNS or FAILS */
	char why[512];        /* "SASS sm_86 runs on 8.9", "sm_120: no SASS for major
	                       * 12, no PTX ≤ 12.0", ML_AUDIT_NO_KERNELS_WHY */
	bool has_by;          /* runs: by names the entry that makes it run */
	ml_cuda_arch by;      /* "sm_120f", "compute_52" (isa set when known) */
	bool conditional;     /* runs only through PTX whose ISA needs a driver the
	                       * audit did not know (ml_arch_verdict) */
	bool torch_checked;   /* torch's own library: torch's judgement below */
	bool torch_runs;      /* torch's DEVICE_REQUIREMENT accepts its code here */
	char torch_why[256];  /* ml_arch_verdict.why under ML_ARCH_TORCH */
} ml_audit_answer;

/* One file audited: a library, a wheel member, or a path that failed. */
typedef struct ml_audit_file {
	char *path;               /* as given or walked ("env/lib/x.so"); wheel members
	                           * "w.whl!torch/lib/libtorch_cuda.so" */
	ml_fatbin_list code;      /* what its fatbins hold (partial after an error) */
	bool has_code;            /* at least one SASS or PTX entry was found,
	                           * wherever it lies */
	bool unverified;          /* has_code, but no counted entry holds a kernel:
	                           * every answer is ML_AUDIT_UNVERIFIED */
	int error;                /* 0, or ML_ENOENT / ML_EIO (unreadable), ML_EPARSE
	                           * (malformed ELF, fatbin or wheel), ML_EFAIL (wheel
	                           * member over the size cap, directory too deep) */
	char error_msg[512];      /* lower-case message when error != 0 */
	ml_audit_answer *answers; /* one per device of the audit when has_code,
	                           * else NULL */
} ml_audit_file;

/* What to answer for and how. */
typedef struct ml_audit_opts {
	const ml_cuda_arch *devices; /* compute capabilities to answer for (major,
	                              * minor; variant and ptx are ignored) */
	size_t n_devices;
	uint64_t max_member_bytes; /* wheel members bigger than this are not
	                            * read but reported; 0 means 2 GiB */
	bool all;                  /* keep files without CUDA code too (--all) */
	int driver_cuda;           /* the highest CUDA version the driver of the
	                            * devices supports, 1000 * major + 10 * minor
	                            * (ml_driver.cuda_version); 0 when unknown */
	const char *driver;        /* that driver's version for messages
	                            * ("550.54.15"), or NULL; copied */
} ml_audit_opts;

#define ML_AUDIT_OPTS_INIT                                                                         \
	{                                                                                          \
		NULL, 0, 0, false, 0, NULL                                                         \
	}

/* --- torch builds from wheels (src/verify/torchbuild.c) ------------------- */

/* A library of a torch wheel that cannot run on some GPU that torch's own
 * CUDA library runs on (torch 2.11's libtorch_cuda_linalg.so has no code
 * for sm_75 while libtorch_cuda.so has): what it does fails there. */
typedef struct ml_torch_gap {
	char library[256];                       /* member, "torch/lib/libtorch_cuda_linalg.so" */
	ml_cuda_arch missing[ML_TORCH_MAX_CODE]; /* the devices, as SASS names ("sm_75") */
	size_t n_missing;
} ml_torch_gap;

/* What an audit learnt about one torch wheel among its paths: a wheel
 * whose dist-info is torch's (or that holds torch/version.py). */
typedef struct ml_torch_wheel {
	char *path;             /* as given */
	char sha256[65];        /* of the wheel file; "" when it could not be hashed */
	ml_torch_build build;   /* derived from the wheel's own bytes; files NULL */
	char torch_version[96]; /* torch.__version__ in torch/version.py, "2.8.0+cu128"; "" */
	char hip[48]; /* torch.version.hip ("6.2.41134-65d174c3e") of a ROCm build, else "" */
	char cuda_source[128]; /* where build.cuda came from: "torch/version.py",
	                        * "METADATA: cuda-toolkit==13.0.2", "METADATA:
	                        * nvidia-*-cu12 (major only)"; "" when none */
	char library[256];     /* the member whose code is the build's:
	                        * torch/lib/libtorch_cuda.so (Linux) or
	                        * torch/lib/torch_cuda.dll (Windows); "" when the
	                        * wheel has neither (then: all its libraries' code) */
	ml_torch_gap *gaps;    /* other libraries that miss some of its devices */
	size_t n_gaps;
	const ml_torch_build *known; /* the torch-build table's build with this
	                              * sha256 (ml_torch_build_lookup()), or NULL */
	bool known_agrees;           /* known says what the wheel's own bytes say:
	                              * the same CUDA version, SASS and PTX */
} ml_torch_wheel;

/* Derives the torch build of one wheel, read in place by an audit of it
 * (ml_audit_paths(); this wrapper is in src/verify/audit.c): the SASS and PTX
 * of torch's own CUDA library (what torch.cuda.get_arch_list() reports;
 * the nvidia-* wheels' libraries are not torch's), the CUDA version from
 * torch/version.py (`cuda = '12.8'`, None for a CPU-only build; else from
 * the METADATA's Requires-Dist: cuda-toolkit==X.Y.Z, or the major of the
 * nvidia-*-cuXX names), the version, local label, build tag and platform
 * from the METADATA and the wheel's file name (PEP 427) or WHEEL tags. Use
 * ml_torch_build_min_driver() (plan.h) for the driver it needs.
 * Fills *out (files NULL). Returns 0; ML_ENOENT when path is not a torch
 * wheel ("no torch/version.py or torch dist-info"); ML_ENOENT, ML_EIO or
 * ML_EPARSE when it cannot be read (err names it); ML_ENOMEM. */
int ml_torch_build_from_wheel(ml_torch_build *out, const char *path, ml_err *err);

/* The result of an audit. */
typedef struct ml_audit {
	ml_cuda_arch *devices; /* copy of opts->devices, duplicates removed */
	size_t n_devices;
	int driver_cuda;      /* opts->driver_cuda */
	char driver[32];      /* opts->driver, "" when none */
	ml_audit_file *files; /* in the order met: files with CUDA code, files
	                       * and paths with an error, and with opts->all
	                       * every library scanned */
	size_t n_files;
	size_t n_scanned;         /* libraries read (wheel members included) */
	size_t n_with_code;       /* of those, with SASS or PTX anywhere */
	size_t n_unverified;      /* of those, unverified (files[].unverified) */
	size_t n_errors;          /* files in files[] whose error is set */
	ml_audit_answer *overall; /* per device: runs iff no file fails there
	                           * (vacuously true without any; unverified files
	                           * count as neither); why names the first file
	                           * that fails */
	ml_torch_wheel *torch;    /* every torch wheel among the paths (given as a
	                           * path or met in a walked directory), in order */
	size_t n_torch;
} ml_audit;

/* Audits each of paths[0..n_paths):
 *
 *   - a regular file: a wheel when it is a zip archive (by content), whose
 *     members named like libraries (ml_audit_is_library_name) are read into
 *     memory one at a time (at most opts->max_member_bytes each; PEP 427
 *     wheels are zip files) and scanned in place, never extracted; any
 *     other file is mapped read-only and scanned with
 *     ml_fatbin_scan_image() whatever its name;
 *   - a directory: every library and wheel below it, walked in name order,
 *     following symbolic links but entering each directory and reading
 *     each file once (device and inode), so links like lib64 -> lib and
 *     symlink loops are harmless; an environment's lib/pythonX.Y/site-packages
 *     and conda's lib/ are covered by this walk.
 *
 * A torch wheel also gets an ml_torch_wheel in torch[] (its build, read in
 * the same pass: torch/version.py, the dist-info's METADATA and WHEEL, and
 * the sha256 of the wheel file for ml_torch_build_lookup()).
 *
 * For every file with CUDA code the counted code is its executable and
 * embedded PTX plus the SASS architectures that hold kernels
 * (code.with_kernels); relocatable code and kernel-less architectures never
 * count. answers[d] = ml_arch_runs_on(counted code, device d), or
 * ML_AUDIT_UNVERIFIED on every device when nothing counts (why:
 * ML_AUDIT_NO_KERNELS_WHY, or that only relocatable code was found).
 * overall[d] fails iff some file fails on d. A path that cannot be read, a
 * malformed fatbin or a broken wheel is recorded as a file with error set
 * and the audit goes on. Returns 0 with *out set (even when files failed:
 * see n_errors and ml_audit_status()), or ML_ENOMEM. Caller owns *out; free
 * with ml_audit_free(). */
int ml_audit_paths(ml_audit **out, const char *const *paths, size_t n_paths,
                   const ml_audit_opts *opts, ml_err *err);

/* Derives the audit's outcome, the one place that decides it: ML_EGPU when
 * some file with CUDA code fails on an asked device (err names the device,
 * the first failing file and why, and up to eight failing files by their
 * last path component; the hint points at a build that carries the code),
 * else ML_EFAIL when any path or file failed (err says how many and names
 * the first), else 0. Unverified files decide nothing. Exit codes 5, 1 and
 * 0 (README.md, "Exit codes"). */
int ml_audit_status(const ml_audit *a, ml_err *err);

/* Builds the "mlsetup.audit/1" JSON document: schema, devices[] ("sm_120"),
 * libraries_scanned, libraries_with_cuda, libraries_unverified, errors,
 * unverified[] (paths of the unverified files), files[] each with path,
 * sass[] and ptx[] (executable containers only: what cuobjdump --list-elf
 * / --list-ptx list), embedded {sass[], ptx[]} (containers in data
 * sections, loaded by the library at run time; they count), relocatable
 * {sass[], ptx[]} (`__nv_relfatbin`, device-link input; never counted),
 * kernelless[] (SASS architectures whose counted entries hold no kernel),
 * containers, entries, compressed, unreadable_cubins, error (string or
 * null), runs_on {"sm_120": true | false | "unverified"} and why
 * {"sm_120": text} (empty objects when the file has no code), then the
 * overall runs_on (booleans) and why, and torch_wheels[] {path, sha256,
 * torch_version, hip, cuda_source, library, torch_build
 * (ml_torch_build_to_json()), gaps [{library, missing[]}], known (the
 * table's build, or null)}. Returns a new cJSON object (caller
 * frees with cJSON_Delete) or NULL when out of memory. */
struct cJSON *ml_audit_to_json(const ml_audit *a);

/* Appends what audit `from` found to `into`, as if one ml_audit_paths()
 * call had been given into's paths and then from's: files, torch wheels
 * and counts move over, and the overall answers are worked out again.
 * Both must answer for the same devices in the same order. On success
 * `from` is freed (its contents now belong to into); on failure both are
 * left as they were. Returns 0, ML_EFAIL (different devices) or
 * ML_ENOMEM. */
int ml_audit_merge(ml_audit *into, ml_audit *from, ml_err *err);

/* --- the devices and the driver of a machine (src/verify/audit.c) -------- */

/* Writes the compute capability of every GPU of m whose capability is
 * known into out (at most cap entries, SASS form, no variant): the devices
 * an audit answers for. Returns how many were written. */
size_t ml_verify_gpu_archs(ml_cuda_arch *out, size_t cap, const ml_machine *m);

/* Points *o (initialised with ML_AUDIT_OPTS_INIT) at this machine: its
 * GPUs' compute capabilities, written into devs (cap entries) as
 * ml_verify_gpu_archs() does, and its driver (version and the CUDA version
 * it supports, ml_driver), so that PTX is judged by what this driver can
 * JIT. devs and m must outlive the audit. */
void ml_audit_opts_machine(ml_audit_opts *o, ml_cuda_arch *devs, size_t cap, const ml_machine *m);

/* Frees an audit and everything it owns. Accepts NULL. */
void ml_audit_free(ml_audit *a);

#endif /* MLSETUP_AUDIT_H */
