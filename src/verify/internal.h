/*
 * internal.h - what the verify stage's files share and nothing outside
 * src/verify needs: the ELF-64 section header table (elf.c), walked by
 * fatbin.c (host libraries: `.nv_fatbin`, `__nv_relfatbin`, data
 * sections) and by cubin.c (device code: a cubin's `.text.<kernel>`
 * sections); the fatbin and cubin readers, the driver and framework smoke
 * tests and the diagnosis that run.c (ml_verify_env) and audit.c combine.
 * Unit tests and fuzz targets include it to test those pieces directly.
 */
#ifndef MLSETUP_VERIFY_INTERNAL_H
#define MLSETUP_VERIFY_INTERNAL_H

#include "mlsetup/verify.h"

/* Little-endian reads from byte pointers: no alignment, no aliasing. */
static inline uint16_t ml_rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t ml_rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t ml_rd64(const unsigned char *p)
{
	return (uint64_t)ml_rd32(p) | (uint64_t)ml_rd32(p + 4) << 32;
}

/* --- ELF-64 sections (elf.c) ------------------------------------------------ */

/* A section header table of an ELF-64 little-endian image, checked to lie
 * inside it (System V ABI, "ELF-64 Object File Format"). */
typedef struct ml_elf_table {
	const unsigned char *buf; /* the whole image, len bytes */
	size_t len;
	const unsigned char *sh0; /* first section header */
	size_t shentsize;         /* bytes per section header, >= 64 */
	size_t shnum;             /* section headers, all inside buf */
	size_t stroff, strsize;   /* the section name table's bytes in buf */
	uint16_t machine;         /* e_machine (190: NVIDIA CUDA) */
	uint16_t type;            /* e_type (1 relocatable, 2 executable, 3 shared) */
} ml_elf_table;

/* Opens the section header table of buf[0..len): e_shoff, e_shentsize,
 * e_shnum and e_shstrndx, with extended numbering through section 0.
 * Returns 0; ML_ENOENT when buf is not ELF-64 little-endian or has no
 * section header table; ML_EPARSE when the table or the name table lies
 * outside buf (err says which). */
int ml_elf_table_open(ml_elf_table *out, const unsigned char *buf, size_t len, ml_err *err);

/* The name of section i (< t->shnum) as a pointer into the name table and
 * its length, or NULL when the name does not end with a NUL inside the
 * table. */
const char *ml_elf_section_name(const ml_elf_table *t, size_t i, size_t *name_len);

/* Bounds of section i's bytes in the image. Returns 0; ML_ENOENT for a
 * SHT_NOBITS section (no bytes in the file); ML_EPARSE when they lie
 * outside the image (err names what, e.g. "section .nv_fatbin"). */
int ml_elf_section_bytes(size_t *off, size_t *size, const ml_elf_table *t, size_t i,
                         const char *what, ml_err *err);

/* Finds the section called name in an ELF-64 little-endian image buf[0..len)
 * (System V ABI, "ELF-64 Object File Format": e_shoff, e_shentsize,
 * e_shnum and e_shstrndx of the file header, extended numbering through
 * section 0 when e_shnum or e_shstrndx overflow) and sets *out_off and
 * *out_size to where its bytes lie in buf. A SHT_NOBITS section is treated
 * as absent. Returns 0; ML_ENOENT when buf is not ELF-64 little-endian, has
 * no section header table, or has no such section; ML_EPARSE when the
 * header, section table, name table or the section itself lies outside buf
 * (err says which). Never reads outside buf[0..len). */
int ml_elf_section(size_t *out_off, size_t *out_size, const unsigned char *buf, size_t len,
                   const char *name, ml_err *err);

/* --- torch wheels (torchbuild.c), fed by the wheel reader in audit.c ----- */

/* The small metadata members of a wheel that tell a torch build apart,
 * kept by audit.c while it reads the wheel's libraries (each NUL-terminated,
 * owned; NULL when the wheel has no such member). */
typedef struct ml_wheel_meta {
	char *version_py; /* torch/version.py */
	char *metadata;   /* torch-<version>.dist-info/METADATA */
	char *wheel;      /* torch-<version>.dist-info/WHEEL */
} ml_wheel_meta;

/* Largest metadata member kept, in bytes. */
#define ML_WHEEL_META_MAX (4u << 20)

/* Returns where member `name` of a wheel is kept in m, or NULL when it is
 * not one of those members. */
char **ml_wheel_meta_slot(ml_wheel_meta *m, const char *name);

/* Frees what m holds and zeroes it. */
void ml_wheel_meta_release(ml_wheel_meta *m);

/* When m shows that the wheel at path is torch's, appends its
 * ml_torch_wheel to a->torch: its build from m, the wheel's file name and
 * the code of a->files[first_file..a->n_files) (the wheel's libraries), and
 * the sha256 of the file. Returns 0 or ML_ENOMEM. */
int ml_torch_wheel_add(ml_audit *a, const char *path, const ml_wheel_meta *m, size_t first_file,
                       ml_err *err);

/* Frees what w owns. */
void ml_torch_wheel_release(ml_torch_wheel *w);

/* Adds torch's own judgement (ml_arch_judge() with ML_ARCH_TORCH) to the
 * answers of every torch CUDA library among a->files (libtorch_cuda.so,
 * torch_cuda.dll) that has counted code: torch_checked, torch_runs,
 * torch_why; the torch's CUDA version (for the rows a CUDA 13.2 build
 * relaxes) comes from the audited wheel, or from torch/version.py beside
 * the library. Decides nothing. Returns 0 (err unused: nothing fails). */
int ml_torch_checks(ml_audit *a, ml_err *err);

/* --- used only inside src/verify (moved from mlsetup/verify.h) ------------- */

/* Returns true when a file name (last path component or zip member name)
 * looks like a shared library that may carry CUDA code: "*.so", "*.so.N"
 * with dotted digits after ".so." ("libcudart.so.12", "x.so.1.2"), and,
 * case-insensitively, "*.dll" and "*.pyd". */
bool ml_audit_is_library_name(const char *name);

/* Returns "runs", "fails", "unverified" or "not_for_this_gpu" (static). */
const char *ml_audit_state_name(ml_audit_state s);

/* --- libraries with a range of their own (src/verify/libraries.c) -------- */

/* A CUDA library that supports only GPUs from min_major.min_minor on and
 * that torch uses only for features older GPUs lack (manifests/
 * cuda-libraries.json). Static strings. */
typedef struct ml_cuda_library {
	const char *name;         /* "cuSPARSELt" */
	int min_major, min_minor; /* its documented minimum compute capability */
	const char *torch_uses;   /* what torch uses it for */
	const char *source;       /* where the minimum and the use are documented */
} ml_cuda_library;

/* The table's library whose file-name patterns match the last component
 * of path (a path, or a wheel member "w.whl!nvidia/x/lib/libx.so.0"), or
 * NULL. */
const ml_cuda_library *ml_cuda_library_find(const char *path);

/* Returns 0 when the embedded table is present and well-formed, else
 * ML_EPARSE with the reason in err (a broken build: no library is then
 * found). */
int ml_cuda_libraries_check(ml_err *err);

/* Returns "none", "no_kernel_image", "driver_too_old", "cpu_only_build",
 * "gpu_not_visible", "driver_broken", "wrong_results", "oom",
 * "import_error", "system_not_ready", "gpu_busy", "precision_failed" or
 * "other" (static). */
const char *ml_cause_name(ml_cause c);

/* Counts the kernels of a cubin buf[0..len): an ELF-64 little-endian image
 * for the NVIDIA CUDA machine (e_machine 190) whose sections named
 * `.text.<name>` each hold one kernel (docs/nvidia-and-python-facts.md, "Fatbinary layout"). Sets
 * *out. Returns 0; ML_EPARSE when buf is not such an image or its section
 * table or name table lies outside it (err says which). Never reads
 * outside buf[0..len). */
int ml_cubin_count_kernels(size_t *out, const unsigned char *buf, size_t len, ml_err *err);

/* What one cubin holds (ml_cubin_read()). */
typedef struct ml_cubin_info {
	size_t kernels;      /* `.text.<name>` sections */
	size_t merc_kernels; /* `.nv.capmerc.text.<name>` / `.nv.merc.text.<name>`:
	                      * kernels in Mercury form (cubin.c) */
	bool merc;           /* any `.nv.merc.*` or `.nv.capmerc.*` section */
} ml_cubin_info;

/* Reads a cubin as ml_cubin_count_kernels() does and says what it holds;
 * ml_cubin_count_kernels() is kernels, or merc_kernels when there are no
 * `.text.` kernels. Same returns and errors. */
int ml_cubin_read(ml_cubin_info *out, const unsigned char *buf, size_t len, ml_err *err);

/* What the start or the whole of a PTX module says (ml_ptx_scan()). */
typedef struct ml_ptx_info {
	int isa;        /* its `.version X.Y` as 10 * X + Y; 0 when none was seen */
	size_t entries; /* `.entry` directives seen (kernels) */
} ml_ptx_info;

/* Reads PTX text[0..len) (PTX ISA document: directives `.version` and
 * `.entry`), skipping comments and quoted strings, up to the first NUL
 * (nvcc pads payloads with NULs): the first `.version` and the number of
 * `.entry` directives, stopping once max_entries are seen (0: count all).
 * Untrusted bytes: never reads outside text[0..len). Never fails. */
void ml_ptx_scan(ml_ptx_info *out, const char *text, size_t len, size_t max_entries);

/* Returns the CUresult's enumerator name from mlsetup's own table
 * ("CUDA_ERROR_NO_BINARY_FOR_GPU" for 209; the codes of docs/nvidia-and-python-facts.md, "CUDA
 * driver API" and those the smoke test can meet), or NULL when the code is
 * not in it. Static string. The smoke test prefers the driver's own
 * cuGetErrorName and falls back to this. */
const char *ml_cuda_error_name(int code);

/* Maps the smoke results to checks with causes and remedies:
 *   no kernel image  -> names the GPU's architecture (sm_XY) and the
 *                       shipped manifest whose torch_sass/torch_ptx covers
 *                       it (ml_manifest_open + ml_arch_runs_on, in
 *                       selection.json's preference order);
 *   driver too old   -> names the minimum driver (the manifest's, else the
 *                       one torch's CUDA version needs, else the GPU's) and
 *                       the CUDA version torch found the driver to have;
 *   system not ready -> CUDA error 802 (cuInit, or torch's "Error 802:
 *                       system not yet initialized"): the Fabric Manager of
 *                       the driver's version, to install and start;
 *   GPU busy         -> CUDA error 46 (a context refused, or torch's "all
 *                       CUDA-capable devices are busy or unavailable"):
 *                       free the GPU or `nvidia-smi -c DEFAULT`;
 *   CPU-only build, GPU not visible (CUDA_VISIBLE_DEVICES empty, -1 or a
 *   MIG UUID CUDA does not find; a container without the GPU runtime, with
 *   no /dev/nvidia* or no libcuda.so.1 (torch: "Found no NVIDIA driver on
 *   your system"); WSL without /usr/lib/wsl/lib/libcuda.so.1; no driver
 *   loaded; a MIG-capable GPU - compute capability 8.0, 9.x, 10.x - that
 *   CUDA does not see: MIG mode without a MIG device), wrong results, out
 *   of memory, a broken driver installation; detected GPUs no smoke test
 *   reached take the cause of a machine-wide failure that explains it
 *   (802, 46, a driver too old or broken);
 *   bf16 failing     on a GPU with bf16 in hardware (a bf16 failure on an
 *                    older GPU arrives as a skip, see ml_smoke_framework):
 *                    names the GPU, its architecture, and the CUDA
 *                    libraries torch loads as the suspect.
 * Caller owns *out; free with ml_verdict_free(). Returns 0 or ML_ENOMEM. */
int ml_diagnose(ml_verdict **out, const ml_diagnose_opts *o, ml_err *err);

/* Decompresses one entry's payload src[0..src_len) - the compressed_size
 * bytes after the entry header - according to flags: ML_FATBIN_FLAG_LZ4
 * (an LZ4 block, liblz4's LZ4_decompress_safe) or ML_FATBIN_FLAG_ZSTD (a
 * zstd frame, libzstd). The result must be exactly uncompressed_size bytes
 * (the header's field); nothing is allocated or written beyond that size,
 * which may not exceed min(cap, ML_FATBIN_INFLATE_MAX) nor 1024 times
 * src_len plus 64 KiB (no real cubin compresses better). Sets *out (a new
 * buffer, caller frees) and *out_len. Returns 0; ML_EPARSE for corrupt
 * data, a size other than the declared one, a size over the bounds, or
 * flags naming no or both compressions (err says which); ML_ENOMEM. */
int ml_fatbin_inflate(unsigned char **out, size_t *out_len, const unsigned char *src,
                      size_t src_len, uint64_t flags, uint64_t uncompressed_size, uint64_t cap,
                      ml_err *err);

/* Decompresses at most cap bytes from the start of one entry's payload
 * src[0..src_len) into dst, as ml_fatbin_inflate() does the whole (flags
 * name LZ4 or zstd), for reading a PTX module's header without inflating
 * all of it: liblz4's LZ4_decompress_safe_partial, libzstd's streaming
 * decoder. Sets *got to the bytes written (fewer when the payload is
 * shorter). Returns 0; ML_EPARSE for corrupt data or bad flags (err says
 * which); ML_ENOMEM. */
int ml_fatbin_inflate_prefix(unsigned char *dst, size_t cap, size_t *got, const unsigned char *src,
                             size_t src_len, uint64_t flags, ml_err *err);

/* Frees what l holds and resets it to ML_FATBIN_LIST_INIT. Accepts NULL. */
void ml_fatbin_list_release(ml_fatbin_list *l);

/* Scans one fatbin region buf[0..len) - the bytes of a `.nv_fatbin`
 * section, or a fatbin image such as nvcc -fatbin writes - as executable
 * code and appends every entry to *out (which the caller initialised;
 * entries read before a failure stay appended, so a truncated fatbin still
 * shows what it had).
 *
 * Layout (docs/nvidia-and-python-facts.md, "Fatbinary layout", checked with nvcc 13.0): containers
 * follow each other, zero padding between and after them is allowed. A container header is 16 bytes
 * little-endian {u32 magic ML_FATBIN_MAGIC; u16 version 1; u16 header_size >= 16; u64 fat_size};
 * its entries fill the fat_size bytes after the header, each {u16 kind; u16 version; u32
 * header_size; u64 payload_size; u32 compressed_size; u32 options_offset; u16 minor; u16 major; u32
 * arch; u32 name_offset; u32 name_len; u64 flags; u64 reserved; u64 uncompressed_size} followed by
 * extra header bytes up to header_size (64..4096, read from the entry, never assumed), then
 * payload_size bytes. arch is 10*major + minor of the compute capability (90 = 9.0, 120 = 12.0);
 * flags mark compression and the `a`/`f` variants. Entries of other kinds are counted in n_other
 * and skipped. Then SASS payloads are decompressed and read as cubins to count kernels (see
 * ml_fatbin_list); a cubin that cannot be read is not a fatbin error. A zero-filled tail inside a
 * container ends it.
 *
 * Returns 0; ML_EPARSE when the bytes are not a well-formed fatbin (a
 * non-zero byte where a container must start, a bad magic or version, a
 * header or payload running past its container or the buffer, an entry
 * header size outside 64..4096, an architecture outside 1.0..999.9, both
 * variant flags), with err naming the offset ("fatbin entry at offset
 * 0x2c0: payload of 4096 bytes runs past the container end (100 bytes
 * left)"); or ML_ENOMEM. Never reads outside buf[0..len). */
int ml_fatbin_scan(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err);

/* Scans a whole shared library or executable image buf[0..len) and appends
 * what its fatbins hold to *out (as ml_fatbin_scan(); entry offsets count
 * from the start of buf):
 *
 *   - ELF-64 little-endian with a section table: the `.nv_fatbin` section
 *     (ML_FATBIN_EXECUTABLE) and `__nv_relfatbin` (ML_FATBIN_RELOCATABLE),
 *     each when present, scanned strictly; then `.data`, `.rodata` and
 *     `.data.rel.ro` by magic (ML_FATBIN_EMBEDDED), counting only
 *     candidates that parse as whole containers (libraries such as cuFFT
 *     11.2 keep their kernels there, outside .nv_fatbin);
 *   - anything else (Windows PE DLLs, where the section name is cut to 8
 *     characters, ELF without a section table): every 8-byte-aligned
 *     offset holding ML_FATBIN_MAGIC followed by version 1 and header size
 *     16 starts a container (ML_FATBIN_EXECUTABLE), which must then be
 *     well-formed.
 *
 * Returns 0 (also when there is no fatbin at all: out unchanged), ML_EPARSE
 * for a malformed ELF file or fatbin (err names the section or offset), or
 * ML_ENOMEM. */
int ml_fatbin_scan_image(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err);

/* Frees what r owns and zeroes it. Accepts NULL. */
void ml_framework_result_release(ml_framework_result *r);

/* Builds the JSON object for a framework result (class, versions,
 * availability, arch_list, checks[], gpus[] with their checks[] - each
 * with ms, n, reps, gflops, tflops, gbps, null where they do not apply - and
 * matmul[]: per dtype run {dtype "fp32"/"fp16"/"bf16", status, n, ms,
 * tflops}, the numbers null unless it passed).
 * Returns a new cJSON object (caller frees) or NULL when out of memory. */
struct cJSON *ml_framework_result_to_json(const ml_framework_result *r);

/* Returns "ok", "no_kernel_image", "cpu_only_build", "cuda_unavailable",
 * "driver_too_old", "oom", "wrong_results", "import_error",
 * "system_not_ready", "devices_busy" or "other". */
const char *ml_fw_class_name(ml_fw_class c);

/* Classifies an error message torch (or Python) gave, case-insensitively,
 * by the first matching entry of one table of known phrases, each quoted
 * from the torch or CUDA source that prints it ("no kernel image is
 * available", "not compatible with the current PyTorch installation",
 * "driver on your system is too old", "system not yet initialized" (802),
 * "busy or unavailable" (46), "out of memory", "Torch not compiled with
 * CUDA enabled", "No CUDA GPUs are available", "invalid device ordinal",
 * "Found no NVIDIA driver", "ModuleNotFoundError", ...). NULL or no match
 * gives ML_FW_OTHER. */
ml_fw_class ml_fw_classify(const char *message);

/* True when message is torch's "Found no NVIDIA driver on your system"
 * (c10/cuda/CUDAFunctions.cpp device_count_impl(): the CUDA runtime found
 * no libcuda.so.1 to load), classified ML_FW_CUDA_UNAVAILABLE like every
 * "no usable GPU" text, but telling that the driver's library itself is
 * missing (a container started without the NVIDIA container runtime). */
bool ml_fw_says_no_driver_library(const char *message);

/* Runs the driver-level smoke test (CUDA Driver API): dlopen the driver
 * library; cuInit(0), cuDriverGetVersion, cuDeviceGetCount; then on every
 * device cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute (75/76),
 * cuDevicePrimaryCtxRetain + cuCtxSetCurrent, cuModuleLoadDataEx with the
 * JIT info/error log options (3-6), cuModuleGetFunction("saxpy"),
 * cuMemAlloc_v2 twice, cuMemcpyHtoD_v2, one warm-up and `iterations` timed
 * cuLaunchKernel + cuCtxSynchronize, cuMemcpyDtoH_v2, an exact comparison
 * with the host's SAXPY (small integers, so float arithmetic is exact),
 * then cuMemFree_v2, cuModuleUnload and cuDevicePrimaryCtxRelease_v2.
 * Times are taken with the monotonic clock. Every CUresult other than 0 is
 * recorded with its step and name (cuGetErrorName, else
 * ml_cuda_error_name()); a missing required symbol, a library that cannot
 * be loaded or no device are recorded too, never fatal.
 * Fills *out (release with ml_smoke_result_release()) and returns 0 whatever
 * the GPUs did; returns ML_EUSAGE for options out of range or ML_ENOMEM
 * (out untouched then). */
int ml_smoke_driver(ml_smoke_result *out, const ml_smoke_opts *o, ml_err *err);

/* Runs the framework-level smoke test: the embedded script
 * (ml_torch_smoke_script(), source src/verify/torch_smoke.py) with
 * `python -c SCRIPT --size N --alloc-mib M`, in the caller's environment,
 * killed after timeout_s. The script reports torch's version, CUDA build,
 * availability, devices, capabilities and arch list, checks each device's
 * capability against the arch list (here, with ml_arch_runs_on), and runs
 * on the CPU a matmul against an exact reference and on every GPU fp32,
 * fp16 and bf16 matmuls against CPU references, an elementwise kernel and
 * an allocation, timed (GPU checks: one warm-up run, a synchronize, then a
 * batch of runs between CUDA events; a matmul's rate is 2 n^3 / seconds
 * per run, in TFLOP/s); it prints one JSON line that this parses (cJSON)
 * and classifies (ml_fw_classify). Before and after each step it prints a
 * "MLSETUP-TORCH-SMOKE-STEP: begin NAME" / "... end STATUS NAME" line,
 * read as it comes and passed to o->on_step; a step the script never
 * ended (it crashed or hung) ends as FAIL, and the result's detail names
 * it. A bf16 matmul that failed on a GPU without bf16 in hardware
 * (compute capability below 8.0; the script does not try it there) is
 * expected: it becomes a skip whose detail says so, so a bf16 FAIL means a
 * GPU that has bf16. No GPU: the CPU checks still run and
 * gpu_checks_skipped says why. A script that crashes, hangs or prints no
 * JSON gives ML_FW_OTHER (or ML_FW_IMPORT_ERROR when the output says so)
 * with the output's tail in out->output.
 * Fills *out (release with ml_framework_result_release()) and returns 0;
 * ML_ENOENT when python cannot be started (err names it), ML_EUSAGE for
 * options out of range, ML_ENOMEM (out untouched then). */
int ml_smoke_framework(ml_framework_result *out, const char *python, const ml_framework_opts *o,
                       ml_err *err);

const char *ml_smoke_kernel_desc(void);

/* The embedded kernel: data files that src/verify/make_kernel_image.sh
 * writes from saxpy.cu and the build embeds (EMBED_FILES in the Makefile).
 * The fatbin src/verify/saxpy.fatbin with SASS sm_75 ... sm_121 and PTX
 * compute_75 and compute_121, 64-byte aligned as cuModuleLoadData expects
 * (*len gets its size in bytes when len is non-NULL); the portable PTX
 * fallback src/verify/saxpy_portable.ptx (ISA 7.0, .target sm_50,
 * NUL-terminated); and src/verify/saxpy.desc, a one-line description naming
 * the toolkit and the code the two hold. Static data, never NULL: a build
 * without these files aborts with a message when they are asked for. */
const unsigned char *ml_smoke_kernel_image(size_t *len);

const char *ml_smoke_kernel_ptx(void);

/* Frees what r owns and zeroes it. Accepts NULL. */
void ml_smoke_result_release(ml_smoke_result *r);

/* Builds the JSON object for a driver smoke result: status, library,
 * kernel, cuda_version, the failure before the GPUs, and gpus[] with
 * timings, errors[] and jit_log. Returns a new cJSON object (caller frees
 * with cJSON_Delete) or NULL when out of memory. */
struct cJSON *ml_smoke_result_to_json(const ml_smoke_result *r);

/* The framework smoke script src/verify/torch_smoke.py, embedded at build
 * time (EMBED_FILES in the Makefile) byte for byte. Static, NUL-terminated,
 * never NULL: a build without it aborts with a message when it is asked
 * for. */
const char *ml_torch_smoke_script(void);

/* The process exit code the verdict calls for (README.md, "Exit codes"):
 * ML_EXIT_OK (0) unless a check failed; ML_EXIT_UNSUPPORTED (6) when a
 * failure's cause is a driver that is too old; else ML_EXIT_GPU (5), i.e.
 * ml_exit_code(ML_EGPU). NULL gives ML_EXIT_FAILED. */
int ml_verdict_exit_code(const ml_verdict *v);

/* Frees a verdict; accepts NULL. */
void ml_verdict_free(ml_verdict *v);

/* Builds the JSON object for a verdict: status, cause, exit_code, summary,
 * checks[], gpus[] {index, name, cc, checks[]}, each check {name, status,
 * cause, detail, remedy}. Returns a new cJSON object (caller frees) or
 * NULL when out of memory. */
struct cJSON *ml_verdict_to_json(const ml_verdict *v);

#endif
