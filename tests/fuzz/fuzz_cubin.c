/*
 * fuzz_cubin.c - libFuzzer target for one fatbin entry's payload
 * (src/verify/cubin.c): decompression (LZ4 through liblz4, zstd through
 * libzstd) bounded by the declared size, and the cubin reader that counts
 * kernels.
 *
 * Input: one byte choosing the payload kind (bit 0: LZ4, bit 1: zstd;
 * neither or both must be refused), four bytes of declared uncompressed
 * size (little-endian, so sizes up to 4 GiB are tried against the caps),
 * then the payload. Beyond "no crash, no over-read, no leak" (ASan), each
 * result must hold: only the documented error codes; a success yields
 * exactly the declared size, within the cap and the ratio bound; the kernel
 * count never exceeds the section count. The raw input is also read as a
 * cubin directly. Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_cubin/
 * (the fixtures' kernel-less and one-kernel cubins, plain and compressed).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/verify.h"
#include "../../src/verify/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

/* Counts kernels and checks the result against the ELF section count. */
static void count(const unsigned char *buf, size_t len)
{
	ml_err err = ML_ERR_INIT;
	size_t kernels = (size_t)-1;
	int rc = ml_cubin_count_kernels(&kernels, buf, len, &err);
	CHECK(rc == 0 || rc == ML_EPARSE);
	if (rc == 0) {
		/* e_shnum (or section 0's size with extended numbering) bounds it;
		 * every section header lies inside the input. */
		CHECK(len >= 64);
		CHECK(kernels <= len / 64);
	} else {
		CHECK(kernels == (size_t)-1); /* *out set only on success */
		CHECK(err.msg[0] != '\0');
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	count(data, size);
	if (size < 5)
		return 0;
	uint64_t flags =
	        (data[0] & 1 ? ML_FATBIN_FLAG_LZ4 : 0) | (data[0] & 2 ? ML_FATBIN_FLAG_ZSTD : 0);
	uint64_t declared = (uint64_t)data[1] | (uint64_t)data[2] << 8 | (uint64_t)data[3] << 16 |
	                    (uint64_t)data[4] << 24;
	const unsigned char *src = data + 5;
	size_t src_len = size - 5;
	/* A small cap sometimes, so that both bounds are reached. */
	uint64_t cap = data[0] & 4 ? 1u << 16 : 0;
	unsigned char *out = NULL;
	size_t out_len = 0;
	ml_err err = ML_ERR_INIT;
	int rc = ml_fatbin_inflate(&out, &out_len, src, src_len, flags, declared, cap, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	if (rc == 0) {
		CHECK(flags == ML_FATBIN_FLAG_LZ4 || flags == ML_FATBIN_FLAG_ZSTD);
		CHECK(out_len == declared && out_len > 0);
		CHECK(out_len <= (cap ? cap : ML_FATBIN_INFLATE_MAX));
		CHECK(out_len <= (uint64_t)src_len * 1024 + (64u << 10));
		count(out, out_len);
		free(out);
	} else {
		CHECK(out == NULL);
	}
	return 0;
}
