/*
 * verify.h - the verify stage: does GPU code really run here?
 *
 * This header holds the static audit: which CUDA code (SASS for one compute
 * capability, PTX the driver can JIT-compile) a shared library, a wheel or a
 * whole environment carries, read from the fatbinaries embedded in it, and
 * whether that code runs on given GPUs, answered by ml_arch_runs_on(), the
 * one "will it run?" rule (plan.h). Sources:
 *
 *   fatbin.c  the fatbinary reader: containers and entries (FACTS.md
 *             "Fatbinary", checked against nvcc 13.0 output) and the ELF-64
 *             section lookup for `.nv_fatbin` (System V ABI, "ELF-64 Object
 *             File Format"); pure functions over bytes in memory
 *   audit.c   paths -> per-library lists and answers: regular files (mmap),
 *             wheels (zip members read in place with libarchive), directory
 *             trees; and the "mlsetup.audit/1" JSON document
 *
 * Nothing here prints, decompresses or runs GPU code. Every reader is
 * bounds-checked with overflow-safe arithmetic and is fuzzed
 * (tests/fuzz/fuzz_fatbin.c): malformed, truncated or hostile input gives
 * ML_EPARSE with a message naming the offset, never a crash.
 */
#ifndef MLSETUP_VERIFY_H
#define MLSETUP_VERIFY_H

#include "mlsetup/core.h"
#include "mlsetup/plan.h"

/* --- the fatbinary reader (src/verify/fatbin.c) --------------------------- */

/* Container magic, little-endian u32 at the start of every container
 * (FACTS.md "Fatbinary"). */
#define ML_FATBIN_MAGIC 0xBA55ED50u

/* Entry kinds (u16 at offset 0 of an entry header). */
enum { ML_FATBIN_KIND_PTX = 1, ML_FATBIN_KIND_ELF = 2 };

/* Entry flags (u64 at offset 40 of an entry header), FACTS.md "Fatbinary". */
#define ML_FATBIN_FLAG_LZ4           0x2000ull   /* payload LZ4-compressed */
#define ML_FATBIN_FLAG_ZSTD          0x8000ull   /* payload zstd-compressed */
#define ML_FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull /* sm_90a / compute_90a */
#define ML_FATBIN_FLAG_FAMILY        0x200000ull /* sm_100f / compute_100f */

/* One code object of a fatbin: SASS (kind 2, an ELF cubin) or PTX (kind 1).
 * Offsets and sizes are in bytes; offsets count from the start of the
 * buffer given to the scan (for ml_fatbin_scan_image(), the file). */
typedef struct ml_fatbin_entry {
	ml_cuda_arch arch;          /* sm_90, sm_90a, sm_100f, compute_80 ... */
	uint16_t kind;              /* ML_FATBIN_KIND_PTX or ML_FATBIN_KIND_ELF */
	uint64_t flags;             /* ML_FATBIN_FLAG_* and others, as stored */
	bool compressed;            /* LZ4 or zstd; listed, never decompressed */
	uint64_t offset;            /* of the entry header */
	uint32_t header_size;       /* entry header bytes (64, 80, 112 seen) */
	uint64_t payload_size;      /* payload bytes as stored after the header */
	uint64_t uncompressed_size; /* when compressed, as the header says; else 0 */
} ml_fatbin_entry;

/* What one or more scans found. Scans append to it; sass[] and ptx[] stay
 * sorted (major, minor, then plain < 'a' < 'f') without duplicates.
 * Initialise with ML_FATBIN_LIST_INIT; release with ml_fatbin_list_release(). */
typedef struct ml_fatbin_list {
	ml_fatbin_entry *entries; /* every PTX and SASS entry, in file order */
	size_t n_entries;
	size_t cap_entries; /* entries allocated (internal) */
	ml_cuda_arch *sass; /* unique SASS architectures */
	size_t n_sass;
	ml_cuda_arch *ptx; /* unique PTX architectures */
	size_t n_ptx;
	size_t n_containers; /* containers whose header was valid */
	size_t n_compressed; /* entries with a compressed payload */
	size_t n_other;      /* entries of other kinds, skipped (not listed) */
} ml_fatbin_list;

#define ML_FATBIN_LIST_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0, NULL, 0, NULL, 0, 0, 0, 0                                              \
	}

/* Scans one fatbin region buf[0..len) - the bytes of a `.nv_fatbin`
 * section, or a fatbin image such as nvcc -fatbin writes - and appends every
 * entry to *out (which the caller initialised; entries read before a failure
 * stay appended, so a truncated fatbin still shows what it had).
 *
 * Layout (FACTS.md "Fatbinary", checked with nvcc 13.0): containers follow
 * each other, zero padding between and after them is allowed. A container
 * header is 16 bytes little-endian {u32 magic ML_FATBIN_MAGIC; u16 version
 * 1; u16 header_size >= 16; u64 fat_size}; its entries fill the fat_size
 * bytes after the header, each {u16 kind; u16 version; u32 header_size; u64
 * payload_size; u32 compressed_size; u32 options_offset; u16 minor; u16
 * major; u32 arch; u32 name_offset; u32 name_len; u64 flags; u64 reserved;
 * u64 uncompressed_size} followed by extra header bytes up to header_size
 * (64..4096, read from the entry, never assumed), then payload_size bytes.
 * arch is 10*major + minor of the compute capability (90 = 9.0, 120 =
 * 12.0); flags mark compression and the `a`/`f` variants. Entries of other
 * kinds are counted in n_other and skipped. Compressed payloads are listed,
 * not decompressed. A zero-filled tail inside a container ends it.
 *
 * Returns 0; ML_EPARSE when the bytes are not a well-formed fatbin (a
 * non-zero byte where a container must start, a bad magic or version, a
 * header or payload running past its container or the buffer, an entry
 * header size outside 64..4096, an architecture outside 1.0..999.9, both
 * variant flags), with err naming the offset ("fatbin entry at offset
 * 0x2c0: payload of 4096 bytes runs past the container end (100 bytes
 * left)"); or ML_ENOMEM. Never reads outside buf[0..len). */
int ml_fatbin_scan(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err);

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

/* Scans a whole shared library or executable image buf[0..len) and appends
 * what its fatbins hold to *out (as ml_fatbin_scan(); entry offsets count
 * from the start of buf):
 *
 *   - ELF-64 little-endian with a section table: the `.nv_fatbin` section
 *     (loaded fatbins) and `__nv_relfatbin` (relocatable device code), each
 *     when present, scanned strictly with ml_fatbin_scan();
 *   - anything else (Windows PE DLLs, where the section name is cut to 8
 *     characters, ELF without a section table): every 8-byte-aligned
 *     offset holding ML_FATBIN_MAGIC followed by version 1 and header size
 *     16 starts a container, which must then be well-formed.
 *
 * Returns 0 (also when there is no fatbin at all: out unchanged), ML_EPARSE
 * for a malformed ELF file or fatbin (err names the section or offset), or
 * ML_ENOMEM. */
int ml_fatbin_scan_image(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err);

/* Frees what l holds and resets it to ML_FATBIN_LIST_INIT. Accepts NULL. */
void ml_fatbin_list_release(ml_fatbin_list *l);

/* --- the audit: paths -> answers (src/verify/audit.c) --------------------- */

/* One answer of ml_arch_runs_on() for one device. */
typedef struct ml_audit_answer {
	bool runs;
	char why[512]; /* "SASS sm_86 runs on 8.9", "sm_120: no SASS for major 12,
	                * no PTX ≤ 12.0" */
} ml_audit_answer;

/* One file audited: a library, a wheel member, or a path that failed. */
typedef struct ml_audit_file {
	char *path;               /* as given or walked ("env/lib/x.so"); wheel members
	                           * "w.whl!torch/lib/libtorch_cuda.so" */
	ml_fatbin_list code;      /* what its fatbins hold (partial after an error) */
	bool has_code;            /* at least one SASS or PTX entry was found */
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
} ml_audit_opts;

#define ML_AUDIT_OPTS_INIT                                                                         \
	{                                                                                          \
		NULL, 0, 0, false                                                                  \
	}

/* The result of an audit. */
typedef struct ml_audit {
	ml_cuda_arch *devices; /* copy of opts->devices, duplicates removed */
	size_t n_devices;
	ml_audit_file *files; /* in the order met: files with CUDA code, files
	                       * and paths with an error, and with opts->all
	                       * every library scanned */
	size_t n_files;
	size_t n_scanned;         /* libraries read (wheel members included) */
	size_t n_with_code;       /* of those, with SASS or PTX */
	size_t n_errors;          /* files in files[] whose error is set */
	ml_audit_answer *overall; /* per device: runs iff every file with CUDA
	                           * code runs there (vacuously true without any);
	                           * why names the first file that cannot */
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
 * For every file with CUDA code, answers[d] = ml_arch_runs_on(sass + ptx,
 * device d); overall[d] is their conjunction. A path that cannot be read, a
 * malformed fatbin or a broken wheel is recorded as a file with error set
 * and the audit goes on. Returns 0 with *out set (even when files failed:
 * see n_errors and ml_audit_status()), or ML_ENOMEM. Caller owns *out; free
 * with ml_audit_free(). */
int ml_audit_paths(ml_audit **out, const char *const *paths, size_t n_paths,
                   const ml_audit_opts *opts, ml_err *err);

/* Returns true when a file name (last path component or zip member name)
 * looks like a shared library that may carry CUDA code: "*.so", "*.so.N"
 * with dotted digits after ".so." ("libcudart.so.12", "x.so.1.2"), and,
 * case-insensitively, "*.dll" and "*.pyd". */
bool ml_audit_is_library_name(const char *name);

/* Derives the audit's outcome, the one place that decides it: ML_EGPU when
 * some file with CUDA code cannot run on an asked device (err names the
 * file, the device and why, and hints at a build that carries the code),
 * else ML_EFAIL when any path or file failed (err says how many and names
 * the first), else 0. Exit codes 5, 1 and 0 (DESIGN.md "Commands"). */
int ml_audit_status(const ml_audit *a, ml_err *err);

/* Builds the "mlsetup.audit/1" JSON document: schema, devices[] ("sm_120"),
 * libraries_scanned, libraries_with_cuda, errors, files[] each with path,
 * sass[], ptx[], containers, entries, compressed, error (string or null),
 * runs_on {"sm_120": bool} and why {"sm_120": text} (empty objects when the
 * file has no code), then the overall runs_on and why. Returns a new cJSON
 * object (caller frees with cJSON_Delete) or NULL when out of memory. */
struct cJSON *ml_audit_to_json(const ml_audit *a);

/* Frees an audit and everything it owns. Accepts NULL. */
void ml_audit_free(ml_audit *a);

#endif /* MLSETUP_VERIFY_H */
