/*
 * cubin.c - one fatbin entry's payload: decompressed when nvcc compressed
 * it (LZ4 blocks through liblz4, zstd frames through libzstd), then read
 * as a cubin to count its kernels.
 *
 * Why: a cubin without kernels (cuFFT 11.2/11.3 ship an 872-byte sm_52 one
 * holding only device data) cannot fail on any GPU, so the audit must not
 * judge a library by it (FACTS.md "Kernel-less cubins"). A kernel is a
 * `.text.<name>` section of the cubin's ELF image.
 *
 * All input is untrusted: the output size is the one the entry header
 * declares, checked against a hard cap and a compression-ratio bound
 * before anything is allocated, and the decompressors are the libraries'
 * bounds-checked ("safe") entry points writing into exactly that many
 * bytes. tests/fuzz/fuzz_cubin.c fuzzes both functions.
 */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

/* ELF e_machine of cubins (System V ABI registry: EM_CUDA). */
enum { EM_CUDA_ = 190 };

/* No real cubin compresses better than this (nvcc's are 2-10x). */
#define MAX_RATIO   1024u
#define RATIO_SLACK (64u << 10)

int ml_fatbin_inflate(unsigned char **out, size_t *out_len, const unsigned char *src,
                      size_t src_len, uint64_t flags, uint64_t uncompressed_size, uint64_t cap,
                      ml_err *err)
{
	bool lz4 = flags & ML_FATBIN_FLAG_LZ4, zstd = flags & ML_FATBIN_FLAG_ZSTD;
	if (lz4 == zstd)
		return ml_err_set(err, ML_EPARSE, "fatbin entry flags 0x%llx name %s compression",
		                  (unsigned long long)flags, lz4 ? "both LZ4 and zstd" : "no");
	if (!src || src_len == 0)
		return ml_err_set(err, ML_EPARSE, "compressed payload is empty");
	if (cap == 0 || cap > ML_FATBIN_INFLATE_MAX)
		cap = ML_FATBIN_INFLATE_MAX;
	uint64_t ratio_bound = (uint64_t)src_len * MAX_RATIO + RATIO_SLACK;
	if (uncompressed_size == 0 || uncompressed_size > cap || uncompressed_size > ratio_bound)
		return ml_err_set(
		        err, ML_EPARSE,
		        "declared uncompressed size %llu bytes is outside 1..%llu for %zu "
		        "compressed bytes",
		        (unsigned long long)uncompressed_size,
		        (unsigned long long)(cap < ratio_bound ? cap : ratio_bound), src_len);
	size_t want = (size_t)uncompressed_size;
	unsigned char *dst = malloc(want);
	if (!dst)
		return ml_err_set(err, ML_ENOMEM, "out of memory decompressing %zu bytes", want);
	size_t got = 0;
	if (lz4) {
		if (src_len > INT_MAX || want > INT_MAX) {
			free(dst);
			return ml_err_set(err, ML_EPARSE, "LZ4 block larger than 2 GiB");
		}
		int n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len,
		                            (int)want);
		if (n < 0) {
			free(dst);
			return ml_err_set(err, ML_EPARSE, "corrupt LZ4 block (%zu bytes)", src_len);
		}
		got = (size_t)n;
	} else {
		size_t n = ZSTD_decompress(dst, want, src, src_len);
		if (ZSTD_isError(n)) {
			free(dst);
			return ml_err_set(err, ML_EPARSE, "corrupt zstd frame (%zu bytes): %s",
			                  src_len, ZSTD_getErrorName(n));
		}
		got = n;
	}
	if (got != want) {
		free(dst);
		return ml_err_set(err, ML_EPARSE,
		                  "payload decompressed to %zu bytes, the header declares %zu", got,
		                  want);
	}
	*out = dst;
	*out_len = got;
	return 0;
}

int ml_cubin_count_kernels(size_t *out, const unsigned char *buf, size_t len, ml_err *err)
{
	ml_elf_table t;
	int rc = ml_elf_table_open(&t, buf, len, err);
	if (rc == ML_ENOENT)
		return ml_err_set(err, ML_EPARSE, "cubin is not an ELF-64 image with sections");
	if (rc)
		return rc;
	if (t.machine != EM_CUDA_)
		return ml_err_set(err, ML_EPARSE, "ELF machine %u is not a CUDA cubin (%d)",
		                  t.machine, EM_CUDA_);
	static const char prefix[] = ".text.";
	size_t kernels = 0;
	for (size_t i = 0; i < t.shnum; i++) {
		size_t n;
		const char *name = ml_elf_section_name(&t, i, &n);
		if (name && n > sizeof prefix - 1 && memcmp(name, prefix, sizeof prefix - 1) == 0)
			kernels++;
	}
	*out = kernels;
	return 0;
}
