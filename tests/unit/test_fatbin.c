/*
 * test_fatbin.c - specs for the fatbin reader (src/verify/fatbin.c, elf.c)
 * and the static audit (src/verify/audit.c): the exact SASS and PTX lists
 * of every nvcc-built fixture in tests/fixtures/fatbin (README.md there
 * has cuobjdump's view of each), the "will it run?" answers the audit
 * gives for them on several GPUs, damaged and hostile fatbins reported as
 * malformed without crashing (every prefix and many byte flips are tried
 * under AddressSanitizer), wheels read in place, directory walks, and the
 * embedded smoke-test kernel image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include "win_skip.h"

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlsetup/verify.h"
#include "../../src/verify/internal.h"

/* The smoke test's embedded kernel (src/verify/saxpy.fatbin). */
const unsigned char *ml_smoke_kernel_image(size_t *len);

#define FIX     "tests/fixtures/fatbin/"
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* --- helpers --------------------------------------------------------------- */

static unsigned char *slurp(const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof path, FIX "%s", name);
	char *data = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_os_read_file(&data, len, NULL, path, 1 << 20, &err) != 0)
		fail_msg("cannot read fixture %s: %s", path, err.msg);
	return (unsigned char *)data;
}

/* Space-separated names of an arch list ("sm_75 sm_80"). */
static void names(char *dst, size_t sz, const ml_cuda_arch *v, size_t n)
{
	size_t len = 0;
	dst[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char nm[32];
		assert_int_equal(ml_cuda_arch_format(nm, sizeof nm, &v[i]), 0);
		len += (size_t)snprintf(dst + len, sz - len, "%s%s", i ? " " : "", nm);
	}
}

/* Scans a fixture image; returns the scan's code, list in *l. */
static int scan_fixture(const char *name, ml_fatbin_list *l, ml_err *err)
{
	size_t len;
	unsigned char *buf = slurp(name, &len);
	*l = (ml_fatbin_list)ML_FATBIN_LIST_INIT;
	int rc = ml_fatbin_scan_image(l, buf, len, err);
	free(buf);
	return rc;
}

/* The .nv_fatbin bytes of a fixture, in an exactly-sized heap block. */
static unsigned char *fatbin_section(const char *name, size_t *size)
{
	size_t len, off;
	unsigned char *buf = slurp(name, &len);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_elf_section(&off, size, buf, len, ".nv_fatbin", &err), 0);
	unsigned char *sec = malloc(*size ? *size : 1);
	assert_non_null(sec);
	memcpy(sec, buf + off, *size);
	free(buf);
	return sec;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Writes a container header at p. */
static void container(unsigned char *p, uint64_t fat_size)
{
	put32(p, ML_FATBIN_MAGIC);
	put16(p + 4, 1);
	put16(p + 6, 16);
	put64(p + 8, fat_size);
}

/* Writes an entry header of hsize bytes (zeroed beyond the fields) at p. */
static void entry(unsigned char *p, uint16_t kind, uint32_t hsize, uint64_t payload, uint32_t arch,
                  uint64_t flags)
{
	memset(p, 0, 64);
	put16(p, kind);
	put16(p + 2, 0x101);
	put32(p + 4, hsize);
	put64(p + 8, payload);
	put32(p + 28, arch);
	put64(p + 40, flags);
}

/* Scans a heap copy of buf[0..len) so AddressSanitizer sees any over-read. */
static int scan_copy(ml_fatbin_list *l, const unsigned char *buf, size_t len, ml_err *err)
{
	unsigned char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, buf, len);
	*l = (ml_fatbin_list)ML_FATBIN_LIST_INIT;
	int rc = ml_fatbin_scan(l, copy, len, err);
	free(copy);
	return rc;
}

/* --- every fixture's exact lists ---------------------------------------------- */

static const struct {
	const char *file, *sass, *ptx;
	size_t containers, entries, compressed;
} listed[] = {
        {"sass_only.so", "sm_75 sm_80 sm_86 sm_90", "", 1, 4, 0},
        {"ptx_only.so", "", "compute_80", 1, 1, 0},
        {"sass_ptx.so", "sm_90", "compute_90", 1, 2, 1},
        {"ptx_zstd.so", "", "compute_75", 1, 1, 1},
        {"lz4.so", "sm_86", "compute_86", 1, 2, 2},
        {"sm90a.so", "sm_90a", "", 1, 1, 0},
        {"sm100f.so", "sm_100f", "", 1, 1, 0},
        {"sm120.so", "sm_120", "", 1, 1, 0},
        {"multi.so", "sm_80 sm_120", "compute_120", 2, 3, 1},
        {"fake_pe.dll", "sm_80 sm_120", "compute_120", 2, 3, 1},
        /* make_torch_fatbins.sh: CUDA 12's ptxas for sm_50 .. sm_72 */
        {"sm50_90.so", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "", 1, 7, 0},
        {"sm70_120.so", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "", 1, 7, 0},
        {"sm75_120.so", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "", 1, 6, 0},
        {"sm70_120.dll", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "", 1, 7, 0},
        {"sm75_120.dll", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "", 1, 6, 0},
};

static void test_each_fixture_lists_its_exact_sass_and_ptx(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(listed); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		char got[256];
		if (scan_fixture(listed[i].file, &l, &err) != 0)
			fail_msg("%s: %s", listed[i].file, err.msg);
		names(got, sizeof got, l.sass, l.n_sass);
		assert_string_equal(got, listed[i].sass);
		names(got, sizeof got, l.ptx, l.n_ptx);
		assert_string_equal(got, listed[i].ptx);
		assert_int_equal(l.n_containers, listed[i].containers);
		assert_int_equal(l.n_entries, listed[i].entries);
		assert_int_equal(l.n_compressed, listed[i].compressed);
		assert_int_equal(l.n_other, 0);
		ml_fatbin_list_release(&l);
	}
}

static void test_compressed_entries_keep_their_flags_and_sizes(void **state)
{
	(void)state;
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_fixture("ptx_zstd.so", &l, &err), 0);
	assert_true(l.entries[0].compressed);
	assert_true(l.entries[0].flags & ML_FATBIN_FLAG_ZSTD);
	assert_true(l.entries[0].uncompressed_size > l.entries[0].payload_size);
	ml_fatbin_list_release(&l);

	assert_int_equal(scan_fixture("lz4.so", &l, &err), 0);
	for (size_t i = 0; i < l.n_entries; i++) {
		assert_true(l.entries[i].compressed);
		assert_true(l.entries[i].flags & ML_FATBIN_FLAG_LZ4);
		assert_false(l.entries[i].flags & ML_FATBIN_FLAG_ZSTD);
	}
	ml_fatbin_list_release(&l);

	assert_int_equal(scan_fixture("ptx_only.so", &l, &err), 0);
	assert_false(l.entries[0].compressed);
	assert_int_equal(l.entries[0].uncompressed_size, 0);
	assert_int_equal(l.entries[0].kind, ML_FATBIN_KIND_PTX);
	ml_fatbin_list_release(&l);
}

static void test_entry_header_sizes_are_read_never_assumed(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		uint32_t first_header;
	} cases[] = {{"sass_only.so", 64}, {"ptx_only.so", 80}, {"sm100f.so", 112}};
	for (size_t i = 0; i < N_OF(cases); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(scan_fixture(cases[i].file, &l, &err), 0);
		assert_int_equal(l.entries[0].header_size, cases[i].first_header);
		ml_fatbin_list_release(&l);
	}
}

static void test_variant_flags_give_a_and_f(void **state)
{
	(void)state;
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_fixture("sm90a.so", &l, &err), 0);
	assert_true(l.entries[0].flags & ML_FATBIN_FLAG_ARCH_SPECIFIC);
	assert_int_equal(l.sass[0].variant, 'a');
	ml_fatbin_list_release(&l);
	assert_int_equal(scan_fixture("sm100f.so", &l, &err), 0);
	assert_true(l.entries[0].flags & ML_FATBIN_FLAG_FAMILY);
	assert_int_equal(l.sass[0].major, 10);
	assert_int_equal(l.sass[0].minor, 0);
	assert_int_equal(l.sass[0].variant, 'f');
	ml_fatbin_list_release(&l);
}

/* --- where code lies; kernels ------------------------------------------------------ */

/* Executable (.nv_fatbin), embedded (data sections) and relocatable
 * (__nv_relfatbin) code of each fixture, the kernel-less architectures and
 * the cubins that could not be read. cuobjdump --list-elf --list-ptx lists
 * the first two columns (README.md). */
static const struct {
	const char *file, *sass, *ptx, *emb_sass, *emb_ptx, *rel_sass, *rel_ptx, *kernelless;
	size_t unreadable;
} places[] = {
        {"sass_only.so", "sm_75 sm_80 sm_86 sm_90", "", "", "", "", "", "", 0},
        {"kernelless.so", "sm_75", "", "", "", "", "", "sm_75", 0},
        {"kernelless_lz4.so", "sm_75", "", "", "", "", "", "sm_75", 0},
        {"kernelless_zstd.so", "sm_75", "", "", "", "", "", "sm_75", 0},
        {"sass_zstd.so", "sm_75 sm_86", "", "", "", "", "", "", 0},
        {"lz4.so", "sm_86", "compute_86", "", "", "", "", "", 0},
        {"mixed_kernelless.so", "sm_75 sm_86", "", "", "", "", "", "sm_75", 0},
        {"reloc_only.so", "", "", "", "", "sm_75", "compute_75", "", 0},
        {"reloc_linked.so", "sm_75", "", "", "", "sm_75", "compute_90", "", 0},
        {"data_fatbin.so", "sm_75", "", "sm_80 sm_86", "compute_86", "", "", "sm_75", 0},
        {"bad_lz4_payload.so", "sm_75", "", "", "", "", "", "", 1},
        {"bad_zstd_size.so", "sm_75", "", "", "", "", "", "", 1},
};

static void check_names(const char *file, const char *what, const ml_cuda_arch *v, size_t n,
                        const char *want)
{
	char got[256];
	names(got, sizeof got, v, n);
	if (strcmp(got, want) != 0)
		fail_msg("%s: %s is '%s', want '%s'", file, what, got, want);
}

static void test_executable_embedded_and_relocatable_code_are_told_apart(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(places); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		const char *f = places[i].file;
		if (scan_fixture(f, &l, &err) != 0)
			fail_msg("%s: %s", f, err.msg);
		check_names(f, "sass", l.sass, l.n_sass, places[i].sass);
		check_names(f, "ptx", l.ptx, l.n_ptx, places[i].ptx);
		check_names(f, "embedded sass", l.embedded_sass, l.n_embedded_sass,
		            places[i].emb_sass);
		check_names(f, "embedded ptx", l.embedded_ptx, l.n_embedded_ptx, places[i].emb_ptx);
		check_names(f, "relocatable sass", l.relocatable_sass, l.n_relocatable_sass,
		            places[i].rel_sass);
		check_names(f, "relocatable ptx", l.relocatable_ptx, l.n_relocatable_ptx,
		            places[i].rel_ptx);
		check_names(f, "kernelless", l.kernelless, l.n_kernelless, places[i].kernelless);
		assert_int_equal(l.n_unreadable, places[i].unreadable);
		for (size_t k = 0; k < l.n_entries; k++) {
			const ml_fatbin_entry *e = &l.entries[k];
			/* Relocatable code is never read; counted PTX is read as PTX:
			 * its ISA always (nvcc 13.0 writes PTX ISA 9.0), its
			 * kernels (0 or 1: "has an .entry") when it settles its
			 * architecture. */
			if (e->where == ML_FATBIN_RELOCATABLE) {
				assert_int_equal(e->kernels, -1);
				assert_int_equal(e->isa, 0);
			} else if (e->arch.ptx) {
				assert_int_equal(e->isa, 90);
				assert_true(e->kernels >= -1 && e->kernels <= 1);
			}
		}
		ml_fatbin_list_release(&l);
	}
}

static void test_kernels_are_counted_in_plain_lz4_and_zstd_cubins(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		uint64_t compression;
		int32_t kernels; /* of the first entry */
	} cases[] = {
	        {"kernelless.so", 0, 0},
	        {"kernelless_lz4.so", ML_FATBIN_FLAG_LZ4, 0},
	        {"kernelless_zstd.so", ML_FATBIN_FLAG_ZSTD, 0},
	        {"sass_only.so", 0, 1}, /* add_one: one .text._Z7add_onePi */
	        {"lz4.so", ML_FATBIN_FLAG_LZ4, 1},
	        {"sass_zstd.so", ML_FATBIN_FLAG_ZSTD, 1},
	        {"bad_lz4_payload.so", ML_FATBIN_FLAG_LZ4, -1},
	        {"bad_zstd_size.so", ML_FATBIN_FLAG_ZSTD, -1},
	};
	for (size_t i = 0; i < N_OF(cases); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(scan_fixture(cases[i].file, &l, &err), 0);
		const ml_fatbin_entry *e = &l.entries[0];
		assert_int_equal(e->kind, ML_FATBIN_KIND_ELF);
		assert_int_equal(e->where, ML_FATBIN_EXECUTABLE);
		assert_int_equal(e->flags & (ML_FATBIN_FLAG_LZ4 | ML_FATBIN_FLAG_ZSTD),
		                 cases[i].compression);
		if (e->kernels != cases[i].kernels)
			fail_msg("%s: %d kernels, want %d", cases[i].file, e->kernels,
			         cases[i].kernels);
		ml_fatbin_list_release(&l);
	}
	/* Once an architecture shows a kernel, its further cubins are not read. */
	ml_fatbin_list l = ML_FATBIN_LIST_INIT;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_fixture("sass_only.so", &l, &err), 0);
	size_t len;
	unsigned char *buf = slurp("sass_only.so", &len);
	assert_int_equal(ml_fatbin_scan_image(&l, buf, len, &err), 0);
	free(buf);
	assert_int_equal(l.n_entries, 8);
	for (size_t k = 4; k < 8; k++)
		assert_int_equal(l.entries[k].kernels, -1);
	assert_int_equal(l.n_with_kernels, 4);
	ml_fatbin_list_release(&l);
}

/* Scans the .nv_fatbin sections of fixtures a and b, concatenated. */
static int scan_two(ml_fatbin_list *l, const char *a, const char *b, ml_err *err)
{
	size_t na, nb;
	unsigned char *sa = fatbin_section(a, &na), *sb = fatbin_section(b, &nb);
	unsigned char *both = malloc(na + nb);
	assert_non_null(both);
	memcpy(both, sa, na);
	memcpy(both + na, sb, nb);
	*l = (ml_fatbin_list)ML_FATBIN_LIST_INIT;
	int rc = ml_fatbin_scan(l, both, na + nb, err);
	free(both);
	free(sa);
	free(sb);
	return rc;
}

static void test_an_architecture_has_kernels_when_any_of_its_cubins_has(void **state)
{
	(void)state;
	/* A kernel-less sm_75 cubin and one with a kernel, in either order:
	 * sm_75 holds kernels; both cubins were read (the kernel-less one is
	 * the smaller, so it is read first). */
	static const char *const order[][2] = {{"kernelless.so", "sass_only.so"},
	                                       {"sass_only.so", "kernelless.so"}};
	for (size_t i = 0; i < N_OF(order); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(scan_two(&l, order[i][0], order[i][1], &err), 0);
		char got[128];
		names(got, sizeof got, l.kernelless, l.n_kernelless);
		assert_string_equal(got, "");
		names(got, sizeof got, l.with_kernels, l.n_with_kernels);
		assert_string_equal(got, "sm_75 sm_80 sm_86 sm_90");
		for (size_t k = 0; k < l.n_entries; k++)
			if (l.entries[k].arch.minor == 5 && l.entries[k].arch.major == 7)
				assert_int_equal(l.entries[k].kernels,
				                 l.entries[k].payload_size < 2048 ? 0 : 1);
		ml_fatbin_list_release(&l);
	}
	/* Two cubins with kernels per architecture: only one of each is read. */
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_two(&l, "sass_only.so", "sass_only.so", &err), 0);
	assert_int_equal(l.n_entries, 8);
	size_t read = 0;
	for (size_t k = 0; k < l.n_entries; k++)
		read += l.entries[k].kernels != -1;
	assert_int_equal(read, 4);
	ml_fatbin_list_release(&l);
	/* Two kernel-less cubins: the architecture stays kernel-less. */
	assert_int_equal(scan_two(&l, "kernelless_lz4.so", "kernelless_zstd.so", &err), 0);
	assert_int_equal(l.n_kernelless, 1);
	assert_int_equal(l.n_with_kernels, 0);
	assert_int_equal(l.entries[0].kernels, 0);
	assert_int_equal(l.entries[1].kernels, 0);
	ml_fatbin_list_release(&l);
}

/* The payload of a fixture's first entry (as stored) and its header. */
static unsigned char *first_payload(const char *name, size_t *len, ml_fatbin_entry *entry,
                                    uint32_t *csize)
{
	size_t flen;
	unsigned char *file = slurp(name, &flen);
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_fixture(name, &l, &err), 0);
	*entry = l.entries[0];
	ml_fatbin_list_release(&l);
	const unsigned char *h = file + entry->offset;
	*csize = (uint32_t)(h[16] | h[17] << 8 | h[18] << 16 | (uint32_t)h[19] << 24);
	*len = (size_t)entry->payload_size;
	unsigned char *p = malloc(*len);
	assert_non_null(p);
	memcpy(p, h + entry->header_size, *len);
	free(file);
	return p;
}

static void test_inflate_is_bounded_and_exact(void **state)
{
	(void)state;
	static const char *const files[] = {"kernelless_lz4.so", "kernelless_zstd.so",
	                                    "sass_zstd.so", "lz4.so"};
	for (size_t i = 0; i < N_OF(files); i++) {
		ml_fatbin_entry e;
		uint32_t csize;
		size_t len;
		unsigned char *src = first_payload(files[i], &len, &e, &csize);
		assert_true(csize > 0 && csize <= len);
		unsigned char *out = NULL;
		size_t out_len = 0;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_fatbin_inflate(&out, &out_len, src, csize, e.flags,
		                                   e.uncompressed_size, 0, &err),
		                 0);
		assert_int_equal(out_len, e.uncompressed_size);
		assert_memory_equal(out, "\177ELF", 4);
		size_t kernels = 99;
		assert_int_equal(ml_cubin_count_kernels(&kernels, out, out_len, &err), 0);
		assert_true(kernels <= 1);
		/* Every prefix of the cubin: an error or a count, never a crash. */
		for (size_t n = 0; n < out_len; n += 7) {
			unsigned char *cut = malloc(n ? n : 1);
			assert_non_null(cut);
			memcpy(cut, out, n);
			int rc = ml_cubin_count_kernels(&kernels, cut, n, &err);
			assert_true(rc == 0 || rc == ML_EPARSE);
			free(cut);
		}
		free(out);

		/* A declared size off by one either way, zero, over the cap, or
		 * beyond any real compression ratio. */
		static const int64_t delta[] = {-1, 1};
		for (size_t d = 0; d < N_OF(delta); d++) {
			int rc = ml_fatbin_inflate(&out, &out_len, src, csize, e.flags,
			                           e.uncompressed_size + (uint64_t)delta[d], 0,
			                           &err);
			assert_int_equal(rc, ML_EPARSE);
		}
		assert_int_equal(ml_fatbin_inflate(&out, &out_len, src, csize, e.flags, 0, 0, &err),
		                 ML_EPARSE);
		assert_int_equal(ml_fatbin_inflate(&out, &out_len, src, csize, e.flags,
		                                   e.uncompressed_size, e.uncompressed_size - 1,
		                                   &err),
		                 ML_EPARSE);
		assert_non_null(strstr(err.msg, "declared uncompressed size"));
		assert_int_equal(
		        ml_fatbin_inflate(&out, &out_len, src, 1, e.flags, 1ull << 30, 0, &err),
		        ML_EPARSE);
		/* No compression named, or both. */
		assert_int_equal(ml_fatbin_inflate(&out, &out_len, src, csize, 0,
		                                   e.uncompressed_size, 0, &err),
		                 ML_EPARSE);
		assert_int_equal(ml_fatbin_inflate(&out, &out_len, src, csize,
		                                   ML_FATBIN_FLAG_LZ4 | ML_FATBIN_FLAG_ZSTD,
		                                   e.uncompressed_size, 0, &err),
		                 ML_EPARSE);
		/* Every prefix of the compressed bytes, and byte flips in them. */
		for (size_t n = 0; n < csize; n++) {
			unsigned char *cut = malloc(n ? n : 1);
			assert_non_null(cut);
			memcpy(cut, src, n);
			int rc = ml_fatbin_inflate(&out, &out_len, cut, n, e.flags,
			                           e.uncompressed_size, 0, &err);
			assert_true(rc == ML_EPARSE);
			free(cut);
		}
		for (size_t b = 0; b < csize; b += 3) {
			unsigned char keep = src[b];
			src[b] ^= 0x5a;
			int rc = ml_fatbin_inflate(&out, &out_len, src, csize, e.flags,
			                           e.uncompressed_size, 0, &err);
			assert_true(rc == 0 || rc == ML_EPARSE);
			if (rc == 0) {
				assert_int_equal(out_len, e.uncompressed_size);
				free(out);
			}
			src[b] = keep;
		}
		free(src);
	}
}

static void test_cubin_reader_wants_a_cuda_elf(void **state)
{
	(void)state;
	size_t len, kernels = 0;
	ml_err err = ML_ERR_INIT;
	unsigned char *host = slurp("sass_only.so", &len);
	assert_int_equal(ml_cubin_count_kernels(&kernels, host, len, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "ELF machine 62 is not a CUDA cubin"));
	free(host);
	static const unsigned char junk[80] = "not an ELF image";
	assert_int_equal(ml_cubin_count_kernels(&kernels, junk, sizeof junk, &err), ML_EPARSE);
	assert_int_equal(ml_cubin_count_kernels(&kernels, NULL, 0, &err), ML_EPARSE);
	/* The plain kernel-less cubin: no .text.<name> section. */
	ml_fatbin_entry e;
	uint32_t csize;
	unsigned char *cubin = first_payload("kernelless.so", &len, &e, &csize);
	kernels = 99;
	assert_int_equal(ml_cubin_count_kernels(&kernels, cubin, len, &err), 0);
	assert_int_equal(kernels, 0);
	free(cubin);
	cubin = first_payload("sass_only.so", &len, &e, &csize);
	assert_int_equal(ml_cubin_count_kernels(&kernels, cubin, len, &err), 0);
	assert_int_equal(kernels, 1);
	free(cubin);
}

/* --- the audit's answers follow THE rule ------------------------------------------ */

static const ml_cuda_arch devices[] = {
        {7, 5, 0, false, 0},  {8, 9, 0, false, 0},  {9, 0, 0, false, 0},  {10, 0, 0, false, 0},
        {10, 3, 0, false, 0}, {12, 0, 0, false, 0}, {12, 1, 0, false, 0},
};

/* One letter per device above: R runs, - does not. */
static const struct {
	const char *file, *answers;
} expected_runs[] = {
        /*                    7.5 8.9 9.0 10.0 10.3 12.0 12.1 */
        {"sass_only.so", "RRR----"}, /* sm_86 covers 8.9; nothing for 10.x/12.x */
        {"ptx_only.so", "-RRRRRR"},  /* compute_80 JITs to >= 8.0 */
        {"sass_ptx.so", "--RRRRR"},  /* sm_90 SASS, then compute_90 PTX */
        {"ptx_zstd.so", "RRRRRRR"},  /* compute_75 JITs everywhere here */
        {"lz4.so", "-RRRRRR"},       /* sm_86 on 8.9, compute_86 beyond */
        {"sm90a.so", "--R----"},     /* arch-specific: exactly 9.0 */
        {"sm100f.so", "---RR--"},    /* family: 10.x from 10.0, not 12.0 */
        {"sm120.so", "-----RR"},     /* sm_120 on 12.0 and 12.1 */
        {"multi.so", "-R---RR"},     /* sm_80 + sm_120 + compute_120 */
        {"fake_pe.dll", "-R---RR"},
};

static void test_audit_answers_match_the_rule_for_every_fixture(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(expected_runs); i++) {
		char path[256];
		snprintf(path, sizeof path, FIX "%s", expected_runs[i].file);
		const char *paths[] = {path};
		ml_audit_opts o = ML_AUDIT_OPTS_INIT;
		o.devices = devices;
		o.n_devices = N_OF(devices);
		ml_audit *a = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_audit_paths(&a, paths, 1, &o, &err), 0);
		assert_int_equal(a->n_files, 1);
		const ml_audit_file *f = &a->files[0];
		assert_true(f->has_code);
		assert_int_equal(f->error, 0);
		/* The audit asks ml_arch_runs_on() with the listed code ... */
		ml_cuda_arch code[32];
		size_t n = 0;
		for (size_t k = 0; k < f->code.n_sass; k++)
			code[n++] = f->code.sass[k];
		for (size_t k = 0; k < f->code.n_ptx; k++)
			code[n++] = f->code.ptx[k];
		for (size_t d = 0; d < N_OF(devices); d++) {
			char why[512];
			bool rule = ml_arch_runs_on(code, n, devices[d].major, devices[d].minor,
			                            why, sizeof why);
			assert_int_equal(f->answers[d].runs, rule);
			assert_string_equal(f->answers[d].why, why);
			/* ... and the rule gives what the fixture was built for. */
			bool want = expected_runs[i].answers[d] == 'R';
			if (f->answers[d].runs != want)
				fail_msg("%s on %d.%d: got %s, want %s (%s)", expected_runs[i].file,
				         devices[d].major, devices[d].minor,
				         f->answers[d].runs ? "runs" : "does not run",
				         want ? "runs" : "does not run", f->answers[d].why);
			assert_int_equal(a->overall[d].runs, want);
		}
		assert_int_equal(ml_audit_status(a, &err),
		                 strchr(expected_runs[i].answers, '-') ? ML_EGPU : 0);
		ml_audit_free(a);
	}
}

static void test_audit_says_why(void **state)
{
	(void)state;
	const char *paths[] = {FIX "sass_only.so", FIX "ptx_only.so"};
	static const ml_cuda_arch devs[] = {{8, 9, 0, false, 0}, {12, 0, 0, false, 0}};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = 2;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, paths, 2, &o, &err), 0);
	assert_int_equal(a->n_files, 2);
	assert_string_equal(a->files[0].answers[0].why, "SASS sm_86 runs on 8.9");
	assert_string_equal(a->files[0].answers[1].why,
	                    "sm_120: no SASS for major 12, no PTX ≤ 12.0");
	/* No driver known: PTX runs on the condition that one can JIT it. */
	assert_string_equal(a->files[1].answers[1].why,
	                    "PTX compute_80 (ISA 9.0) can be JIT-compiled for 12.0 by a driver for "
	                    "CUDA ≥ 13.0");
	assert_true(a->files[1].answers[1].conditional);
	assert_true(a->overall[0].runs);
	assert_false(a->overall[1].runs);
	assert_non_null(strstr(a->overall[1].why, "1 of 2 libraries"));
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "sass_only.so' cannot run on sm_120"));
	assert_non_null(strstr(err.hint, "sm_120"));
	ml_audit_free(a);
}

static void test_merged_audits_answer_as_one_audit_of_all_paths(void **state)
{
	(void)state;
	const char *both[] = {FIX "ptx_only.so", FIX "sass_only.so"};
	static const ml_cuda_arch devs[] = {{8, 9, 0, false, 0}, {12, 0, 0, false, 0}};
	static const ml_cuda_arch other[] = {{8, 9, 0, false, 0}};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = 2;
	ml_audit *one = NULL, *a = NULL, *b = NULL, *c = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&one, both, 2, &o, &err), 0);
	assert_int_equal(ml_audit_paths(&a, both, 1, &o, &err), 0);
	assert_int_equal(ml_audit_paths(&b, both + 1, 1, &o, &err), 0);
	assert_true(a->overall[1].runs); /* PTX alone runs on 12.0 */
	o.devices = other;
	o.n_devices = 1;
	assert_int_equal(ml_audit_paths(&c, both, 1, &o, &err), 0);
	assert_int_equal(ml_audit_merge(a, c, &err), ML_EFAIL); /* other devices */
	ml_audit_free(c);
	assert_int_equal(ml_audit_merge(a, b, &err), 0); /* b is a's now */
	assert_int_equal(a->n_files, one->n_files);
	assert_int_equal(a->n_scanned, one->n_scanned);
	assert_int_equal(a->n_with_code, one->n_with_code);
	for (size_t i = 0; i < a->n_files; i++)
		assert_string_equal(a->files[i].path, one->files[i].path);
	for (size_t d = 0; d < 2; d++) {
		assert_int_equal(a->overall[d].runs, one->overall[d].runs);
		assert_string_equal(a->overall[d].why, one->overall[d].why);
	}
	assert_false(a->overall[1].runs);
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	ml_audit_free(a);
	ml_audit_free(one);
}

/* Audits the fixtures named in files[0..n) for devs; returns the audit. */
static ml_audit *audit_fixtures(const char *const *files, size_t n, const ml_cuda_arch *devs,
                                size_t n_devs)
{
	char paths[16][256];
	const char *p[16];
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		snprintf(paths[i], sizeof paths[i], FIX "%s", files[i]);
		p[i] = paths[i];
	}
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = n_devs;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, p, n, &o, &err), 0);
	assert_int_equal(a->n_files, n);
	return a;
}

/* One letter per device of `devices`: R runs, - fails, U unverified. */
static const struct {
	const char *file, *answers;
} expected_states[] = {
        /*                          7.5 8.9 9.0 10.0 10.3 12.0 12.1 */
        {"kernelless.so", "UUUUUUU"},       /* a kernel-less cubin cannot fail */
        {"kernelless_lz4.so", "UUUUUUU"},   /* ... read through LZ4 */
        {"kernelless_zstd.so", "UUUUUUU"},  /* ... and zstd */
        {"reloc_only.so", "UUUUUUU"},       /* relocatable code is never loaded */
        {"mixed_kernelless.so", "-R-----"}, /* only the sm_86 kernels count */
        {"sass_zstd.so", "RR-----"},        /* sm_75, sm_86 with kernels */
        {"reloc_linked.so", "R------"},     /* compute_90 is relocatable only */
        {"data_fatbin.so", "-RRRRRR"},      /* embedded sm_80 sm_86 compute_86 */
        {"bad_lz4_payload.so", "R------"},  /* unreadable: assumed to hold kernels */
        {"bad_zstd_size.so", "R------"},
};

static void test_kernelless_and_relocatable_code_decide_nothing(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(expected_states); i++) {
		const char *file = expected_states[i].file;
		ml_audit *a = audit_fixtures(&file, 1, devices, N_OF(devices));
		const ml_audit_file *f = &a->files[0];
		assert_true(f->has_code);
		assert_int_equal(f->error, 0);
		bool unverified = strchr(expected_states[i].answers, 'U') != NULL;
		assert_int_equal(f->unverified, unverified);
		assert_int_equal(a->n_unverified, unverified);
		assert_int_equal(a->n_with_code, 1);
		for (size_t d = 0; d < N_OF(devices); d++) {
			char want = expected_states[i].answers[d];
			ml_audit_state st = want == 'R'   ? ML_AUDIT_RUNS
			                    : want == 'U' ? ML_AUDIT_UNVERIFIED
			                                  : ML_AUDIT_FAILS;
			if (f->answers[d].state != st)
				fail_msg("%s on %d.%d: %s, want %s (%s)", file, devices[d].major,
				         devices[d].minor, ml_audit_state_name(f->answers[d].state),
				         ml_audit_state_name(st), f->answers[d].why);
			assert_int_equal(f->answers[d].runs, st == ML_AUDIT_RUNS);
			/* Overall: an unverified file is neither runs nor fails. */
			assert_int_equal(a->overall[d].runs, want != '-');
		}
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_audit_status(a, &err),
		                 strchr(expected_states[i].answers, '-') ? ML_EGPU : 0);
		ml_audit_free(a);
	}
}

static void test_unverified_files_say_why_and_are_summed_up(void **state)
{
	(void)state;
	static const char *const files[] = {"kernelless_lz4.so", "reloc_only.so", "sass_only.so"};
	static const ml_cuda_arch devs[] = {{8, 6, 0, false, 0}, {12, 0, 0, false, 0}};
	ml_audit *a = audit_fixtures(files, 3, devs, 2);
	assert_string_equal(a->files[0].answers[0].why, ML_AUDIT_NO_KERNELS_WHY);
	assert_string_equal(a->files[0].answers[1].why,
	                    "no kernels visible; stored in another form");
	assert_non_null(strstr(a->files[1].answers[0].why, "only relocatable device code"));
	assert_int_equal(a->n_unverified, 2);
	assert_int_equal(a->n_with_code, 3);
	assert_true(a->overall[0].runs);
	assert_string_equal(a->overall[0].why,
	                    "the 1 library with CUDA code runs on sm_86; 2 unverified (no kernels "
	                    "visible; stored in another form)");
	assert_false(a->overall[1].runs);
	assert_non_null(strstr(a->overall[1].why, "1 of 3 libraries with CUDA code cannot run on "
	                                          "sm_120; 2 unverified"));
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "sass_only.so' cannot run on sm_120"));
	assert_null(strstr(err.msg, "kernelless"));
	ml_audit_free(a);

	/* Unverified alone: exit 0. */
	a = audit_fixtures(files, 2, devs, 2);
	assert_int_equal(ml_audit_status(a, &err), 0);
	assert_string_equal(a->overall[1].why, "no library with visible kernels; 2 unverified (no "
	                                       "kernels visible; stored in another form)");
	ml_audit_free(a);
	assert_string_equal(ml_audit_state_name(ML_AUDIT_RUNS), "runs");
	assert_string_equal(ml_audit_state_name(ML_AUDIT_FAILS), "fails");
	assert_string_equal(ml_audit_state_name(ML_AUDIT_UNVERIFIED), "unverified");
}

static void test_status_names_every_failing_library(void **state)
{
	(void)state;
	static const char *const files[] = {"sass_only.so", "kernelless.so",   "sm90a.so",
	                                    "multi.so",     "reloc_linked.so", "sm120.so"};
	static const ml_cuda_arch dev = {12, 0, 0, false, 0};
	ml_audit *a = audit_fixtures(files, N_OF(files), &dev, 1);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "sass_only.so' cannot run on sm_120: sm_120: no SASS"));
	assert_non_null(strstr(err.msg, "(3 libraries cannot: sass_only.so, sm90a.so, "
	                                "reloc_linked.so)"));
	ml_audit_free(a);
}

/* --- damaged and hostile input ------------------------------------------------------- */

static void test_hostile_fixtures_are_reported_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *file, *msg, *sass;
	} cases[] = {
	        {"bad_trunc_entry_header.so", "header truncated (20 of at least 64", "sm_90"},
	        {"bad_entry_header_huge.so", "header size 4294967280 outside 64..4096", ""},
	        {"bad_payload_overflow.so", "payload of 18446744073709551608 bytes runs past",
	         "sm_90"},
	        {"bad_fat_size_past_end.so", "run past the end", ""},
	        {"bad_zero_sizes.so", "header size 0 outside 64..4096", ""},
	        {"bad_zero_container.so", "container at offset 0x2020: header size 0", ""},
	        {"bad_magic.so", "magic 0xdeadbeef", "sm_80"},
	        {"bad_truncated_file.so", "section header table", ""},
	        {"bad_section_table.so", "section header table", ""},
	        {"bad_pe_truncated.dll", "run past the end", "sm_80"},
	};
	for (size_t i = 0; i < N_OF(cases); i++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		int rc = scan_fixture(cases[i].file, &l, &err);
		if (rc != ML_EPARSE)
			fail_msg("%s: got %d, want ML_EPARSE", cases[i].file, rc);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].file, err.msg,
			         cases[i].msg);
		char got[128];
		names(got, sizeof got, l.sass, l.n_sass); /* what was read before */
		assert_string_equal(got, cases[i].sass);
		ml_fatbin_list_release(&l);
	}
}

static void test_malformed_file_is_recorded_and_the_audit_goes_on(void **state)
{
	(void)state;
	const char *paths[] = {FIX "bad_zero_sizes.so", FIX "does-not-exist.so", FIX "sm120.so"};
	static const ml_cuda_arch dev = {12, 0, 0, false, 0};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = &dev;
	o.n_devices = 1;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, paths, 3, &o, &err), 0);
	assert_int_equal(a->n_files, 3);
	assert_int_equal(a->files[0].error, ML_EPARSE);
	assert_non_null(strstr(a->files[0].error_msg, "malformed CUDA fatbin"));
	assert_int_equal(a->files[1].error, ML_ENOENT);
	assert_int_equal(a->files[2].error, 0);
	assert_int_equal(a->n_errors, 2);
	assert_int_equal(a->n_scanned, 2);
	assert_true(a->overall[0].runs);
	assert_int_equal(ml_audit_status(a, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "2 files could not be audited"));
	ml_audit_free(a);

	/* A library that cannot run decides the outcome over unreadable paths. */
	const char *paths2[] = {FIX "does-not-exist.so", FIX "sass_only.so"};
	assert_int_equal(ml_audit_paths(&a, paths2, 2, &o, &err), 0);
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	ml_audit_free(a);
}

static void test_every_prefix_of_a_fatbin_is_safe(void **state)
{
	(void)state;
	size_t size;
	unsigned char *sec = fatbin_section("multi.so", &size);
	size_t full = 0;
	for (size_t n = 0; n <= size; n++) {
		ml_fatbin_list l;
		ml_err err = ML_ERR_INIT;
		int rc = scan_copy(&l, sec, n, &err);
		assert_true(rc == 0 || rc == ML_EPARSE);
		if (rc == 0)
			full = n;
		ml_fatbin_list_release(&l);
	}
	assert_int_equal(full, size); /* only the whole section is well-formed */
	free(sec);
}

static void test_byte_flips_in_headers_are_safe(void **state)
{
	(void)state;
	size_t size;
	unsigned char *sec = fatbin_section("sass_ptx.so", &size);
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_copy(&l, sec, size, &err), 0);
	/* Header bytes: the container's and each entry's. */
	size_t heads[8], n_heads = 0;
	heads[n_heads++] = 0;
	for (size_t i = 0; i < l.n_entries; i++)
		heads[n_heads++] = (size_t)l.entries[i].offset;
	ml_fatbin_list_release(&l);
	static const unsigned char values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	for (size_t h = 0; h < n_heads; h++) {
		for (size_t b = heads[h]; b < heads[h] + 80 && b < size; b++) {
			for (size_t v = 0; v < N_OF(values); v++) {
				unsigned char keep = sec[b];
				sec[b] = values[v];
				int rc = scan_copy(&l, sec, size, &err);
				assert_true(rc == 0 || rc == ML_EPARSE);
				ml_fatbin_list_release(&l);
				sec[b] = keep;
			}
		}
	}
	free(sec);
}

static void test_crafted_regions(void **state)
{
	(void)state;
	unsigned char buf[1024] = {0};
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;

	/* Nothing, or only zeros: no containers, no error. */
	assert_int_equal(scan_copy(&l, buf, 0, &err), 0);
	assert_int_equal(l.n_containers, 0);
	memset(buf, 0, sizeof buf);
	assert_int_equal(scan_copy(&l, buf, 64, &err), 0);
	assert_int_equal(l.n_containers, 0);

	/* An empty container, padding, then one with an unknown kind and a PTX
	 * entry whose header is 96 bytes. */
	container(buf, 0);
	container(buf + 24, 64 + 8 + 96 + 16);
	entry(buf + 40, 4, 64, 8, 90, 0);
	entry(buf + 40 + 72, ML_FATBIN_KIND_PTX, 96, 16, 120, 0);
	assert_int_equal(scan_copy(&l, buf, 40 + 72 + 112, &err), 0);
	assert_int_equal(l.n_containers, 2);
	assert_int_equal(l.n_other, 1);
	assert_int_equal(l.n_ptx, 1);
	assert_int_equal(l.ptx[0].major, 12);
	assert_int_equal(l.entries[0].header_size, 96);
	assert_int_equal(l.entries[0].offset, 40 + 72);
	ml_fatbin_list_release(&l);

	/* A zero tail inside a container ends it. */
	memset(buf, 0, sizeof buf);
	container(buf, 64 + 8 + 40);
	entry(buf + 16, ML_FATBIN_KIND_ELF, 64, 8, 86, 0);
	assert_int_equal(scan_copy(&l, buf, 16 + 112, &err), 0);
	assert_int_equal(l.n_sass, 1);
	ml_fatbin_list_release(&l);

	/* Junk after a container is not padding. */
	buf[16 + 112] = 0x42;
	assert_int_equal(scan_copy(&l, buf, 16 + 144, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "no fatbin container at offset 0x80"));
	ml_fatbin_list_release(&l);

	static const struct {
		uint16_t version, kind;
		uint32_t hsize, arch;
		uint64_t flags;
		const char *msg;
	} bad[] = {
	        {2, 2, 64, 80, 0, "unsupported version 2"},
	        {1, 2, 63, 80, 0, "header size 63 outside"},
	        {1, 2, 4097, 80, 0, "header size 4097 outside"},
	        {1, 2, 64, 9, 0, "architecture 9 is not a compute capability"},
	        {1, 1, 64, 10000, 0, "architecture 10000"},
	        {1, 2, 64, 90, ML_FATBIN_FLAG_ARCH_SPECIFIC | ML_FATBIN_FLAG_FAMILY, "both"},
	};
	for (size_t i = 0; i < N_OF(bad); i++) {
		memset(buf, 0, sizeof buf);
		container(buf, 64 + 8);
		put16(buf + 4, bad[i].version);
		entry(buf + 16, bad[i].kind, bad[i].hsize, 8, bad[i].arch, bad[i].flags);
		assert_int_equal(scan_copy(&l, buf, 16 + 72, &err), ML_EPARSE);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].msg);
		ml_fatbin_list_release(&l);
	}

	/* The largest header size accepted, when it fits. */
	memset(buf, 0, sizeof buf);
	unsigned char *big = calloc(1, 16 + 4096);
	assert_non_null(big);
	container(big, 4096);
	entry(big + 16, ML_FATBIN_KIND_ELF, 4096, 0, 121, ML_FATBIN_FLAG_FAMILY);
	assert_int_equal(scan_copy(&l, big, 16 + 4096, &err), 0);
	assert_int_equal(l.sass[0].variant, 'f');
	assert_int_equal(l.sass[0].minor, 1);
	ml_fatbin_list_release(&l);
	free(big);
}

static void test_lists_stay_sorted_and_unique(void **state)
{
	(void)state;
	unsigned char buf[16 + 6 * 64];
	static const struct {
		uint32_t arch;
		uint64_t flags;
	} order[] = {{120, 0}, {90, ML_FATBIN_FLAG_ARCH_SPECIFIC},
	             {90, 0},  {100, ML_FATBIN_FLAG_FAMILY},
	             {100, 0}, {90, 0}};
	container(buf, 6 * 64);
	for (size_t i = 0; i < N_OF(order); i++)
		entry(buf + 16 + 64 * i, ML_FATBIN_KIND_ELF, 64, 0, order[i].arch, order[i].flags);
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(scan_copy(&l, buf, sizeof buf, &err), 0);
	char got[128];
	names(got, sizeof got, l.sass, l.n_sass);
	assert_string_equal(got, "sm_90 sm_90a sm_100 sm_100f sm_120");
	assert_int_equal(l.n_entries, 6);
	ml_fatbin_list_release(&l);
	ml_fatbin_list_release(NULL);
}

/* --- ELF sections ------------------------------------------------------------------- */

static void test_elf_section_finder(void **state)
{
	(void)state;
	size_t len, off, size;
	unsigned char *buf = slurp("sass_only.so", &len);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_elf_section(&off, &size, buf, len, ".nv_fatbin", &err), 0);
	assert_int_equal(off, 0x2020);
	assert_int_equal(size, 0x34f8);
	assert_int_equal(ml_elf_section(&off, &size, buf, len, ".nv_fat", &err), ML_ENOENT);
	assert_int_equal(ml_elf_section(&off, &size, buf, len, "__nv_relfatbin", &err), ML_ENOENT);
	/* Cut anywhere, the finder stays inside the buffer. */
	for (size_t n = 0; n < len; n += 97) {
		unsigned char *cut = malloc(n ? n : 1);
		assert_non_null(cut);
		memcpy(cut, buf, n);
		int rc = ml_elf_section(&off, &size, cut, n, ".nv_fatbin", &err);
		assert_true(rc == ML_ENOENT || rc == ML_EPARSE);
		free(cut);
	}
	/* e_shstrndx past the table. */
	unsigned char keep[2] = {buf[0x3e], buf[0x3f]};
	put16(buf + 0x3e, 0x7fff);
	assert_int_equal(ml_elf_section(&off, &size, buf, len, ".nv_fatbin", &err), ML_EPARSE);
	buf[0x3e] = keep[0];
	buf[0x3f] = keep[1];
	/* e_shentsize too small. */
	put16(buf + 0x3a, 40);
	assert_int_equal(ml_elf_section(&off, &size, buf, len, ".nv_fatbin", &err), ML_EPARSE);
	free(buf);

	unsigned char notelf[64] = "MZ not an ELF file";
	assert_int_equal(ml_elf_section(&off, &size, notelf, sizeof notelf, ".nv_fatbin", &err),
	                 ML_ENOENT);
	assert_int_equal(ml_fatbin_scan_image(NULL, NULL, 0, &err), 0);
}

/* --- the embedded smoke-test kernel ---------------------------------------------- */

static void test_smoke_kernel_image_lists_its_arches(void **state)
{
	(void)state;
	size_t len = 0;
	const unsigned char *img = ml_smoke_kernel_image(&len);
	assert_non_null(img);
	assert_true(len > 16);
	ml_fatbin_list l = ML_FATBIN_LIST_INIT;
	ml_err err = ML_ERR_INIT;
	if (ml_fatbin_scan(&l, img, len, &err) != 0)
		fail_msg("kernel image: %s", err.msg);
	char got[256];
	names(got, sizeof got, l.sass, l.n_sass);
	assert_string_equal(got,
	                    "sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_103 sm_110 sm_120 sm_121");
	names(got, sizeof got, l.ptx, l.n_ptx);
	assert_string_equal(got, "compute_75 compute_121");
	assert_int_equal(l.n_containers, 1);
	ml_fatbin_list_release(&l);
}

/* --- wheels and directories --------------------------------------------------------- */

static char tmpdir[256];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int make_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/mlsetup-test-fatbin.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int drop_tmp(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes a zip at path with members {name, fixture or NULL for text}. */
static void write_wheel(const char *path, const char *const (*members)[2], size_t n)
{
	struct archive *w = archive_write_new();
	assert_non_null(w);
	assert_int_equal(archive_write_set_format_zip(w), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(w, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		size_t len = 5;
		unsigned char *data = members[i][1] ? slurp(members[i][1], &len) : NULL;
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, members[i][0]);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)len);
		assert_int_equal(archive_write_header(w, e), ARCHIVE_OK);
		assert_int_equal(archive_write_data(w, data ? (void *)data : "text\n", len),
		                 (la_ssize_t)len);
		archive_entry_free(e);
		free(data);
	}
	assert_int_equal(archive_write_close(w), ARCHIVE_OK);
	archive_write_free(w);
}

static void copy_fixture(const char *name, const char *dest)
{
	size_t len;
	unsigned char *data = slurp(name, &len);
	FILE *f = fopen(dest, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(data);
}

static void test_wheel_members_are_read_in_place(void **state)
{
	(void)state;
	char whl[512];
	snprintf(whl, sizeof whl, "%s/demo-1.0-py3-none-linux_x86_64.whl", tmpdir);
	static const char *const members[][2] = {
	        {"demo/__init__.py", NULL},
	        {"demo/lib/libdemo_cuda.so", "sass_only.so"},
	        {"demo/lib/libptx.so.12", "ptx_only.so"},
	        {"demo/_C.cpython-312-x86_64-linux-gnu.so", "multi.so"},
	        {"demo/readme.so.txt", "sm120.so"}, /* not a library name */
	        {"demo-1.0.dist-info/RECORD", NULL},
	};
	write_wheel(whl, members, N_OF(members));
	const char *paths[] = {whl};
	static const ml_cuda_arch dev = {12, 0, 0, false, 0};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = &dev;
	o.n_devices = 1;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, paths, 1, &o, &err), 0);
	assert_int_equal(a->n_scanned, 3);
	assert_int_equal(a->n_files, 3);
	char want[600];
	snprintf(want, sizeof want, "%s!demo/lib/libdemo_cuda.so", whl);
	assert_string_equal(a->files[0].path, want);
	assert_false(a->files[0].answers[0].runs);
	assert_true(a->files[1].answers[0].runs);
	assert_true(a->files[2].answers[0].runs);
	assert_int_equal(a->files[2].code.n_containers, 2);
	assert_false(a->overall[0].runs);
	ml_audit_free(a);

	/* Members over the cap are reported, not read. */
	o.max_member_bytes = 1000;
	assert_int_equal(ml_audit_paths(&a, paths, 1, &o, &err), 0);
	assert_int_equal(a->n_scanned, 0);
	assert_int_equal(a->n_errors, 3);
	assert_int_equal(a->files[0].error, ML_EFAIL);
	assert_non_null(strstr(a->files[0].error_msg, "larger than"));
	assert_int_equal(ml_audit_status(a, &err), ML_EFAIL);
	ml_audit_free(a);

	/* A file named .whl that is no zip is a broken wheel. */
	snprintf(whl, sizeof whl, "%s/broken-1.0-py3-none-any.whl", tmpdir);
	copy_fixture("sm120.so", whl);
	o.max_member_bytes = 0;
	assert_int_equal(ml_audit_paths(&a, paths, 1, &o, &err), 0);
	assert_int_equal(a->n_errors, 1);
	assert_int_equal(a->files[0].error, ML_EPARSE);
	assert_non_null(strstr(a->files[0].error_msg, "cannot read wheel"));
	ml_audit_free(a);
}

static void test_directory_walk_reads_each_library_once(void **state)
{
	(void)state;
	ML_LINUX_ONLY(
	        "symbolic links: wine 8's CreateSymbolicLinkW reports success and makes none");
	char p[512], q[512];
	snprintf(p, sizeof p, "%s/env", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/env/lib", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/env/lib/python3.12", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/env/lib/python3.12/site-packages", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/env/lib/python3.12/site-packages/b.so", tmpdir);
	copy_fixture("sm120.so", p);
	snprintf(p, sizeof p, "%s/env/lib/python3.12/site-packages/a.so.1", tmpdir);
	copy_fixture("sm90a.so", p);
	snprintf(p, sizeof p, "%s/env/lib/python3.12/site-packages/plain.so", tmpdir);
	copy_fixture("bad_section_table.so", p); /* malformed ELF: an error */
	snprintf(p, sizeof p, "%s/env/lib/python3.12/site-packages/notes.txt", tmpdir);
	copy_fixture("sm120.so", p); /* not a library name: not read */
	/* lib64 -> lib, a loop back to the top, and a link to a library. */
	snprintf(q, sizeof q, "%s/env/lib64", tmpdir);
	assert_int_equal(symlink("lib", q), 0);
	snprintf(q, sizeof q, "%s/env/lib/python3.12/site-packages/loop", tmpdir);
	assert_int_equal(symlink("../../..", q), 0);
	snprintf(q, sizeof q, "%s/env/lib/python3.12/site-packages/link.so", tmpdir);
	assert_int_equal(symlink("b.so", q), 0);
	snprintf(q, sizeof q, "%s/env/lib/python3.12/site-packages/outside", tmpdir);
	assert_int_equal(symlink("/", q), 0); /* not walked: outside the tree */
	snprintf(q, sizeof q, "%s/env/dangling.so", tmpdir);
	assert_int_equal(symlink("nowhere.so", q), 0);

	snprintf(p, sizeof p, "%s/env", tmpdir);
	const char *paths[] = {p};
	static const ml_cuda_arch devs[] = {{9, 0, 0, false, 0}, {12, 0, 0, false, 0}};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = 2;
	o.all = true;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, paths, 1, &o, &err), 0);
	assert_int_equal(a->n_scanned, 3); /* a.so.1, b.so (once), plain.so */
	assert_int_equal(a->n_with_code, 2);
	/* Links come after real entries: a.so.1, b.so, plain.so, dangling.so. */
	assert_int_equal(a->n_files, 4);
	assert_int_equal(a->n_errors, 2);
	assert_non_null(strstr(a->files[0].path, "env/lib/python3.12/site-packages/a.so.1"));
	assert_non_null(strstr(a->files[1].path, "site-packages/b.so"));
	assert_int_equal(a->files[2].error, ML_EPARSE);
	assert_non_null(strstr(a->files[3].path, "env/dangling.so"));
	assert_int_equal(a->files[3].error, ML_ENOENT);
	assert_false(a->overall[0].runs); /* b.so: sm_120 only */
	assert_false(a->overall[1].runs); /* a.so.1: sm_90a only */
	ml_audit_free(a);
}

static void test_library_names(void **state)
{
	(void)state;
	static const char *const yes[] = {
	        "libtorch_cuda.so",
	        "libcudart.so.12",
	        "libcublasLt.so.12.4.5.8",
	        "x/y/z.so",
	        "_C.cpython-312-x86_64-linux-gnu.so",
	        "cudart64_12.dll",
	        "TORCH_CUDA.DLL",
	        "_C.cp312-win_amd64.pyd",
	};
	static const char *const no[] = {
	        "",      ".so.1x",     "readme.so.txt", "lib.so.",    "lib.so.1.",
	        "x.whl", "a.so/b.txt", "libfoo.sox",    "lib.so.1.a",
	};
	for (size_t i = 0; i < N_OF(yes); i++)
		if (!ml_audit_is_library_name(yes[i]))
			fail_msg("'%s' should be a library name", yes[i]);
	for (size_t i = 0; i < N_OF(no); i++)
		if (ml_audit_is_library_name(no[i]))
			fail_msg("'%s' should not be a library name", no[i]);
	assert_false(ml_audit_is_library_name(NULL));
}

static void test_json_document(void **state)
{
	(void)state;
	const char *paths[] = {FIX "multi.so", FIX "ptx_only.so"};
	static const ml_cuda_arch devs[] = {{8, 6, 0, false, 0}, {9, 0, 0, false, 0}};
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = 2;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, paths, 2, &o, &err), 0);
	cJSON *doc = ml_audit_to_json(a);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "schema")->valuestring, "mlsetup.audit/1");
	cJSON *files = cJSON_GetObjectItem(doc, "files");
	assert_int_equal(cJSON_GetArraySize(files), 2);
	cJSON *f0 = cJSON_GetArrayItem(files, 0);
	assert_string_equal(cJSON_GetObjectItem(f0, "path")->valuestring, FIX "multi.so");
	cJSON *sass = cJSON_GetObjectItem(f0, "sass");
	assert_int_equal(cJSON_GetArraySize(sass), 2);
	assert_string_equal(cJSON_GetArrayItem(sass, 1)->valuestring, "sm_120");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "ptx"), 0)->valuestring,
	                    "compute_120");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "runs_on"), "sm_86")));
	assert_true(
	        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "runs_on"), "sm_90")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(f0, "error")));
	cJSON *overall = cJSON_GetObjectItem(doc, "runs_on");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(overall, "sm_86")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(overall, "sm_90")));
	assert_int_equal(cJSON_GetObjectItem(doc, "libraries_scanned")->valueint, 2);
	cJSON_Delete(doc);
	ml_audit_free(a);
}

/* The JSON string array obj[key] as one space-separated string. */
static void json_names(char *dst, size_t sz, const cJSON *obj, const char *key)
{
	const cJSON *arr = cJSON_GetObjectItem(obj, key);
	assert_true(cJSON_IsArray(arr));
	size_t len = 0;
	dst[0] = '\0';
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		assert_true(cJSON_IsString(it));
		len += (size_t)snprintf(dst + len, sz - len, "%s%s", len ? " " : "",
		                        it->valuestring);
	}
}

static void test_json_has_places_kernelless_and_unverified(void **state)
{
	(void)state;
	static const char *const files[] = {"data_fatbin.so", "reloc_linked.so", "kernelless.so"};
	static const ml_cuda_arch devs[] = {{8, 6, 0, false, 0}};
	ml_audit *a = audit_fixtures(files, 3, devs, 1);
	cJSON *doc = ml_audit_to_json(a);
	assert_non_null(doc);
	char got[256];
	assert_int_equal(cJSON_GetObjectItem(doc, "libraries_unverified")->valueint, 1);
	json_names(got, sizeof got, doc, "unverified");
	assert_string_equal(got, FIX "kernelless.so");
	cJSON *fs = cJSON_GetObjectItem(doc, "files");
	cJSON *f0 = cJSON_GetArrayItem(fs, 0), *f1 = cJSON_GetArrayItem(fs, 1),
	      *f2 = cJSON_GetArrayItem(fs, 2);
	json_names(got, sizeof got, f0, "sass");
	assert_string_equal(got, "sm_75");
	json_names(got, sizeof got, cJSON_GetObjectItem(f0, "embedded"), "sass");
	assert_string_equal(got, "sm_80 sm_86");
	json_names(got, sizeof got, cJSON_GetObjectItem(f0, "embedded"), "ptx");
	assert_string_equal(got, "compute_86");
	json_names(got, sizeof got, f0, "kernelless");
	assert_string_equal(got, "sm_75");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "runs_on"), "sm_86")));
	json_names(got, sizeof got, f1, "ptx");
	assert_string_equal(got, "");
	json_names(got, sizeof got, cJSON_GetObjectItem(f1, "relocatable"), "ptx");
	assert_string_equal(got, "compute_90");
	json_names(got, sizeof got, cJSON_GetObjectItem(f1, "relocatable"), "sass");
	assert_string_equal(got, "sm_75");
	assert_true(
	        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(f1, "runs_on"), "sm_86")));
	cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(f2, "runs_on"), "sm_86");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "unverified");
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(f2, "why"), "sm_86")->valuestring,
	        ML_AUDIT_NO_KERNELS_WHY);
	assert_int_equal(cJSON_GetObjectItem(f2, "unreadable_cubins")->valueint, 0);
	/* Overall answers stay booleans: reloc_linked.so fails on 8.6. */
	assert_true(
	        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "runs_on"), "sm_86")));
	cJSON_Delete(doc);
	ml_audit_free(a);
}

/* --- GPU truth on today's stacks: kernel-less PTX, the driver, ranges ------ */

/* Audits paths[0..n) for devs with the driver driver_cuda; fails the test
 * when the audit cannot be made. */
static ml_audit *audit_for(const char *const *paths, size_t n, const ml_cuda_arch *devs,
                           size_t n_devs, int driver_cuda)
{
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	o.devices = devs;
	o.n_devices = n_devs;
	o.driver_cuda = driver_cuda;
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_audit_paths(&a, paths, n, &o, &err) != 0)
		fail_msg("audit failed: %s", err.msg);
	return a;
}

static void test_kernelless_ptx_can_fail_nowhere(void **state)
{
	(void)state;
	static const ml_cuda_arch devs[] = {
	        {7, 5, 0, false, 0}, {9, 0, 0, false, 0}, {12, 1, 0, false, 0}};
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	char got[256];
	/* One compute_90 module without an .entry: kernel-less, not counted. */
	assert_int_equal(scan_fixture("ptx_kernelless.so", &l, &err), 0);
	names(got, sizeof got, l.ptx, l.n_ptx);
	assert_string_equal(got, "compute_90");
	names(got, sizeof got, l.kernelless_ptx, l.n_kernelless_ptx);
	assert_string_equal(got, "compute_90");
	assert_int_equal(l.n_ptx_with_entries, 0);
	assert_int_equal(l.entries[0].kernels, 0);
	assert_int_equal(l.entries[0].isa, 90);
	ml_fatbin_list_release(&l);
	/* Beside a module of the same architecture that has one: it counts. */
	assert_int_equal(scan_fixture("ptx_two_modules.so", &l, &err), 0);
	names(got, sizeof got, l.ptx_with_entries, l.n_ptx_with_entries);
	assert_string_equal(got, "compute_90");
	assert_int_equal(l.ptx_with_entries[0].isa, 90);
	assert_int_equal(l.n_kernelless_ptx, 0);
	ml_fatbin_list_release(&l);
	/* As cuDNN 9.26's libcudnn_ext.so.9: no kernel in any cubin or PTX
	 * module, so unverified on every GPU - before, its compute_121 PTX
	 * failed 7.5 and 9.0 ("no PTX <= 9.0"). */
	const char *paths[] = {FIX "kernelless_all.so", FIX "ptx_kernelless.so"};
	ml_audit *a = audit_for(paths, 2, devs, N_OF(devs), 0);
	assert_int_equal(a->n_files, 2);
	assert_int_equal(a->n_unverified, 2);
	for (size_t i = 0; i < 2; i++)
		for (size_t d = 0; d < N_OF(devs); d++) {
			assert_int_equal(a->files[i].answers[d].state, ML_AUDIT_UNVERIFIED);
			assert_string_equal(a->files[i].answers[d].why, ML_AUDIT_NO_KERNELS_WHY);
		}
	names(got, sizeof got, a->files[0].code.kernelless, a->files[0].code.n_kernelless);
	assert_string_equal(got, "sm_80 sm_120f");
	names(got, sizeof got, a->files[0].code.kernelless_ptx, a->files[0].code.n_kernelless_ptx);
	assert_string_equal(got, "compute_121");
	for (size_t d = 0; d < N_OF(devs); d++)
		assert_true(a->overall[d].runs);
	assert_int_equal(ml_audit_status(a, &err), 0);
	ml_audit_free(a);
}

static void test_ptx_counts_only_where_the_driver_can_jit_it(void **state)
{
	(void)state;
	/* ptx_only.so: compute_80 PTX of ISA 9.0 (nvcc 13.0): CUDA 13.0 JITs it. */
	static const ml_cuda_arch devs[] = {{8, 9, 0, false, 0}};
	const char *paths[] = {FIX "ptx_only.so"};
	ml_err err = ML_ERR_INIT;
	ml_audit *a = audit_for(paths, 1, devs, 1, 12040); /* a 550 driver */
	const ml_audit_answer *ans = &a->files[0].answers[0];
	assert_int_equal(ans->state, ML_AUDIT_FAILS);
	assert_string_equal(ans->why,
	                    "sm_89: no SASS for major 8, PTX compute_80 (ISA 9.0) needs a "
	                    "driver for CUDA ≥ 13.0 to JIT it, and this driver supports "
	                    "CUDA 12.4");
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	ml_audit_free(a);
	a = audit_for(paths, 1, devs, 1, 13000); /* a 580 driver */
	ans = &a->files[0].answers[0];
	assert_int_equal(ans->state, ML_AUDIT_RUNS);
	assert_false(ans->conditional);
	assert_true(ans->has_by);
	assert_true(ans->by.ptx);
	assert_int_equal(ans->by.isa, 90);
	assert_string_equal(ans->why, "PTX compute_80 (ISA 9.0) can be JIT-compiled for 8.9");
	ml_audit_free(a);
	a = audit_for(paths, 1, devs, 1, 0); /* no driver known: the condition is named */
	ans = &a->files[0].answers[0];
	assert_int_equal(ans->state, ML_AUDIT_RUNS);
	assert_true(ans->conditional);
	assert_non_null(strstr(ans->why, "by a driver for CUDA ≥ 13.0"));
	ml_audit_free(a);
	/* Compressed PTX (zstd, LZ4) is read for its ISA through a prefix. */
	static const char *const compressed[] = {"ptx_zstd.so", "lz4.so", "sass_ptx.so"};
	for (size_t i = 0; i < N_OF(compressed); i++) {
		ml_fatbin_list l;
		assert_int_equal(scan_fixture(compressed[i], &l, &err), 0);
		assert_int_equal(l.n_ptx_with_entries, 1);
		assert_int_equal(l.ptx_with_entries[0].isa, 90);
		ml_fatbin_list_release(&l);
	}
}

/* Writes fixture `name` to tmpdir/rel, making its directories. */
static void place_fixture(const char *name, const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	for (char *p = path + strlen(tmpdir) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	copy_fixture(name, path);
}

static void test_library_below_its_documented_minimum_is_not_for_that_gpu(void **state)
{
	(void)state;
	/* The same code (SASS sm_75 .. sm_90) as cuSPARSELt and as cuBLAS. */
	place_fixture("sass_only.so", "env/nvidia/cusparselt/lib/libcusparseLt.so.0");
	place_fixture("sass_only.so", "env/nvidia/cublas/lib/libcublas.so.12");
	static const ml_cuda_arch devs[] = {{7, 0, 0, false, 0}, {8, 6, 0, false, 0}};
	char env[512];
	snprintf(env, sizeof env, "%s/env", tmpdir);
	const char *paths[] = {env};
	ml_err err = ML_ERR_INIT;
	ml_audit *a = audit_for(paths, 1, devs, N_OF(devs), 12040);
	assert_int_equal(a->n_files, 2);
	const ml_audit_file *cublas = &a->files[0], *lt = &a->files[1];
	assert_non_null(strstr(lt->path, "libcusparseLt.so.0"));
	/* 7.0 is below cuSPARSELt's 8.0: not for this GPU; cuBLAS fails there. */
	assert_int_equal(lt->answers[0].state, ML_AUDIT_NOT_FOR_GPU);
	assert_false(lt->answers[0].runs);
	assert_non_null(strstr(lt->answers[0].why, "cuSPARSELt supports compute capability 8.0"));
	assert_int_equal(cublas->answers[0].state, ML_AUDIT_FAILS);
	assert_int_equal(lt->answers[1].state, ML_AUDIT_RUNS);
	assert_false(a->overall[0].runs); /* cuBLAS */
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "libcublas.so.12' cannot run on sm_70"));
	assert_null(strstr(err.msg, "libcusparseLt"));
	ml_audit_free(a);
	/* cuSPARSELt alone fails nothing on 7.0. */
	snprintf(env, sizeof env, "%s/env/nvidia/cusparselt", tmpdir);
	a = audit_for(paths, 1, devs, N_OF(devs), 12040);
	assert_true(a->overall[0].runs);
	assert_non_null(strstr(a->overall[0].why, "1 not for this GPU"));
	assert_int_equal(ml_audit_status(a, &err), 0);
	cJSON *doc = ml_audit_to_json(a);
	cJSON *st = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "files"), 0),
	                                "state");
	assert_string_equal(cJSON_GetObjectItem(st, "sm_70")->valuestring, "not_for_this_gpu");
	assert_string_equal(cJSON_GetObjectItem(st, "sm_86")->valuestring, "runs");
	cJSON_Delete(doc);
	ml_audit_free(a);
	assert_non_null(ml_cuda_library_find("w.whl!nvidia/cusparselt/lib/libcusparseLt.so.0"));
	assert_null(ml_cuda_library_find("nvidia/cublas/lib/libcublas.so.12"));
	assert_int_equal(ml_cuda_libraries_check(&err), 0);
}

static void test_torch_library_gets_torch_judgement_beside_nvidias(void **state)
{
	(void)state;
	/* torch/lib/libtorch_cuda.so with SASS sm_75 .. sm_90, and cuBLAS with
	 * sm_120 only (listed first: "aaa" sorts before "torch"). */
	place_fixture("sass_only.so", "sp/torch/lib/libtorch_cuda.so");
	place_fixture("sm120.so", "sp/aaa/libcublas.so.12");
	char path[512];
	snprintf(path, sizeof path, "%s/sp/torch/version.py", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("__version__ = '2.9.0+cu128'\ncuda: Optional[str] = '12.8'\n", f);
	assert_int_equal(fclose(f), 0);
	static const ml_cuda_arch devs[] = {{8, 7, 0, false, 0}, {8, 6, 0, false, 0}};
	char sp[512];
	snprintf(sp, sizeof sp, "%s/sp", tmpdir);
	const char *paths[] = {sp};
	ml_err err = ML_ERR_INIT;
	ml_audit *a = audit_for(paths, 1, devs, N_OF(devs), 0);
	assert_int_equal(a->n_files, 2);
	const ml_audit_file *t = &a->files[1];
	assert_non_null(strstr(t->path, "torch/lib/libtorch_cuda.so"));
	/* NVIDIA: sm_86 SASS runs on 8.7 (Orin); torch 2.x's own check says
	 * an integrated 8.7 needs its own code: shown, deciding nothing. */
	assert_int_equal(t->answers[0].state, ML_AUDIT_RUNS);
	assert_true(t->answers[0].torch_checked);
	assert_false(t->answers[0].torch_runs);
	assert_non_null(strstr(t->answers[0].torch_why, "except {8.7}"));
	assert_true(t->answers[1].torch_runs);
	assert_false(a->files[0].answers[0].torch_checked); /* not torch's library */
	/* cuBLAS (sm_120 only) fails on both devices and the status names it:
	 * torch's own library runs there. */
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "libcublas.so.12' cannot run on sm_87"));
	ml_audit_free(a);
	/* A CUDA 13.2 build relaxes 8.7: torch accepts sm_80/sm_86 code there. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("cuda = '13.2'\n", f);
	assert_int_equal(fclose(f), 0);
	a = audit_for(paths, 1, devs, N_OF(devs), 0);
	assert_true(a->files[1].answers[0].torch_runs);
	ml_audit_free(a);
	/* When torch's library fails too, it is named first, before cuBLAS. */
	place_fixture("sm120.so", "sp/torch/lib/libtorch_cuda.so");
	static const ml_cuda_arch ampere[] = {{8, 0, 0, false, 0}};
	a = audit_for(paths, 1, ampere, 1, 0);
	assert_int_equal(ml_audit_status(a, &err), ML_EGPU);
	assert_non_null(strstr(err.msg, "torch/lib/libtorch_cuda.so' cannot run on sm_80"));
	assert_non_null(strstr(err.msg, "(2 libraries cannot: libtorch_cuda.so, libcublas.so.12)"));
	assert_non_null(strstr(a->overall[0].why, "first: "));
	assert_non_null(strstr(a->overall[0].why, "libtorch_cuda.so"));
	cJSON *doc = ml_audit_to_json(a);
	cJSON *failing = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "failing"), "sm_80");
	assert_int_equal(cJSON_GetArraySize(failing), 2);
	assert_non_null(strstr(cJSON_GetArrayItem(failing, 0)->valuestring, "libtorch_cuda.so"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "driver")));
	cJSON_Delete(doc);
	ml_audit_free(a);
}

static void test_mercury_cubins_are_read_and_classified(void **state)
{
	(void)state;
	ml_fatbin_list l;
	ml_err err = ML_ERR_INIT;
	char got[256];
	/* nvcc 13.0's sm_100f cubin: SASS and the same kernel in Mercury form. */
	assert_int_equal(scan_fixture("sm100f.so", &l, &err), 0);
	assert_int_equal(l.n_merc, 1);
	assert_true(l.entries[0].merc);
	assert_int_equal(l.entries[0].kernels, 1);
	ml_fatbin_list_release(&l);
	/* Its kernels in Mercury form only (.nv.capmerc.text.<name>, no
	 * .text.<name>): they count, the architecture is not kernel-less. */
	assert_int_equal(scan_fixture("capmerc_only.so", &l, &err), 0);
	assert_int_equal(l.n_merc, 1);
	assert_int_equal(l.entries[0].kernels, 1);
	names(got, sizeof got, l.with_kernels, l.n_with_kernels);
	assert_string_equal(got, "sm_100f");
	assert_int_equal(l.n_kernelless, 0);
	ml_fatbin_list_release(&l);
	/* A kernel-less family cubin with Mercury sections is kernel-less. */
	assert_int_equal(scan_fixture("kernelless_all.so", &l, &err), 0);
	assert_int_equal(l.n_merc, 1);
	names(got, sizeof got, l.kernelless, l.n_kernelless);
	assert_string_equal(got, "sm_80 sm_120f");
	ml_fatbin_list_release(&l);
	static const ml_cuda_arch devs[] = {{10, 3, 0, false, 0}};
	const char *paths[] = {FIX "capmerc_only.so"};
	ml_audit *a = audit_for(paths, 1, devs, 1, 13000);
	assert_int_equal(a->files[0].answers[0].state, ML_AUDIT_RUNS);
	assert_string_equal(a->files[0].answers[0].why, "SASS sm_100f runs on 10.3");
	cJSON *doc = ml_audit_to_json(a);
	cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "files"), 0);
	assert_int_equal(cJSON_GetObjectItem(f0, "merc_cubins")->valueint, 1);
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "runs_by"), "sm_103")->valuestring,
	        "sm_100f");
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "driver"), "cuda")->valuestring,
	        "13.0");
	cJSON_Delete(doc);
	ml_audit_free(a);
}

static void test_ptx_text_is_read_for_version_and_entries(void **state)
{
	(void)state;
	ml_ptx_info info;
	static const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n// .entry in a "
	                          "comment\n/* .entry here too\n */\n\n.version 8.7\n.target "
	                          "sm_52\n.address_size 64\n.file 1 \".entry x\"\n"
	                          ".visible .entry _Z3addPi(\n.param .u64 p)\n{ ret; }\n"
	                          ".entry k2() { ret; }\n.func f() { ret; }\n";
	ml_ptx_scan(&info, ptx, sizeof ptx - 1, 0);
	assert_int_equal(info.isa, 87);
	assert_int_equal(info.entries, 2);
	ml_ptx_scan(&info, ptx, sizeof ptx - 1, 1);
	assert_int_equal(info.entries, 1);
	/* cuDNN 9.26's kernel-less modules: blank lines, a version, no .entry. */
	static const char none[] = "\n\n\n\n.version 9.4\n.target sm_121\n.address_size 64\n\0"
	                           ".entry after_the_nul()";
	ml_ptx_scan(&info, none, sizeof none - 1, 0);
	assert_int_equal(info.isa, 94);
	assert_int_equal(info.entries, 0);
	/* Not versions: ".version 10", ".version 8.10", ".versions 8.7". */
	static const char *const bad[] = {".version 10\n", ".version 8.10\n", ".versions 8.7\n",
	                                  ".version\n8.7", ".version .7"};
	for (size_t i = 0; i < N_OF(bad); i++) {
		ml_ptx_scan(&info, bad[i], strlen(bad[i]), 0);
		if (info.isa != 0)
			fail_msg("'%s' read as ISA %d", bad[i], info.isa);
	}
	/* Every prefix of the text is safe to scan (AddressSanitizer). */
	for (size_t n = 0; n <= sizeof ptx - 1; n++) {
		char *copy = malloc(n ? n : 1);
		assert_non_null(copy);
		memcpy(copy, ptx, n);
		ml_ptx_scan(&info, copy, n, 0);
		free(copy);
	}
}

static void test_inflate_prefix_agrees_with_the_whole(void **state)
{
	(void)state;
	static const char *const files[] = {"ptx_zstd.so", "lz4.so", "sass_zstd.so"};
	for (size_t i = 0; i < N_OF(files); i++) {
		size_t size;
		unsigned char *sec = fatbin_section(files[i], &size);
		ml_fatbin_list l = ML_FATBIN_LIST_INIT;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_fatbin_scan(&l, sec, size, &err), 0);
		const ml_fatbin_entry *e = &l.entries[0];
		const unsigned char *h = sec + e->offset;
		uint32_t csize = (uint32_t)h[16] | (uint32_t)h[17] << 8 | (uint32_t)h[18] << 16 |
		                 (uint32_t)h[19] << 24;
		unsigned char *whole = NULL;
		size_t len = 0, got = 0;
		assert_int_equal(ml_fatbin_inflate(&whole, &len, h + e->header_size, csize,
		                                   e->flags, e->uncompressed_size, 0, &err),
		                 0);
		unsigned char head[64];
		assert_int_equal(ml_fatbin_inflate_prefix(head, sizeof head, &got,
		                                          h + e->header_size, csize, e->flags,
		                                          &err),
		                 0);
		assert_int_equal(got, len < sizeof head ? len : sizeof head);
		assert_memory_equal(head, whole, got);
		/* Corrupt input is an error, never an over-read. */
		unsigned char junk[32];
		memset(junk, 0xff, sizeof junk);
		assert_int_equal(ml_fatbin_inflate_prefix(head, sizeof head, &got, junk,
		                                          sizeof junk, e->flags, &err),
		                 ML_EPARSE);
		free(whole);
		ml_fatbin_list_release(&l);
		free(sec);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_each_fixture_lists_its_exact_sass_and_ptx),
	        cmocka_unit_test(test_compressed_entries_keep_their_flags_and_sizes),
	        cmocka_unit_test(test_entry_header_sizes_are_read_never_assumed),
	        cmocka_unit_test(test_variant_flags_give_a_and_f),
	        cmocka_unit_test(test_executable_embedded_and_relocatable_code_are_told_apart),
	        cmocka_unit_test(test_kernels_are_counted_in_plain_lz4_and_zstd_cubins),
	        cmocka_unit_test(test_an_architecture_has_kernels_when_any_of_its_cubins_has),
	        cmocka_unit_test(test_inflate_is_bounded_and_exact),
	        cmocka_unit_test(test_cubin_reader_wants_a_cuda_elf),
	        cmocka_unit_test(test_audit_answers_match_the_rule_for_every_fixture),
	        cmocka_unit_test(test_audit_says_why),
	        cmocka_unit_test(test_merged_audits_answer_as_one_audit_of_all_paths),
	        cmocka_unit_test(test_kernelless_and_relocatable_code_decide_nothing),
	        cmocka_unit_test(test_unverified_files_say_why_and_are_summed_up),
	        cmocka_unit_test(test_status_names_every_failing_library),
	        cmocka_unit_test(test_hostile_fixtures_are_reported_malformed),
	        cmocka_unit_test(test_malformed_file_is_recorded_and_the_audit_goes_on),
	        cmocka_unit_test(test_every_prefix_of_a_fatbin_is_safe),
	        cmocka_unit_test(test_byte_flips_in_headers_are_safe),
	        cmocka_unit_test(test_crafted_regions),
	        cmocka_unit_test(test_lists_stay_sorted_and_unique),
	        cmocka_unit_test(test_elf_section_finder),
	        cmocka_unit_test(test_smoke_kernel_image_lists_its_arches),
	        cmocka_unit_test_setup_teardown(test_wheel_members_are_read_in_place, make_tmp,
	                                        drop_tmp),
	        cmocka_unit_test_setup_teardown(test_directory_walk_reads_each_library_once,
	                                        make_tmp, drop_tmp),
	        cmocka_unit_test(test_library_names),
	        cmocka_unit_test(test_json_document),
	        cmocka_unit_test(test_json_has_places_kernelless_and_unverified),
	        cmocka_unit_test(test_kernelless_ptx_can_fail_nowhere),
	        cmocka_unit_test(test_ptx_counts_only_where_the_driver_can_jit_it),
	        cmocka_unit_test_setup_teardown(
	                test_library_below_its_documented_minimum_is_not_for_that_gpu, make_tmp,
	                drop_tmp),
	        cmocka_unit_test_setup_teardown(
	                test_torch_library_gets_torch_judgement_beside_nvidias, make_tmp, drop_tmp),
	        cmocka_unit_test(test_mercury_cubins_are_read_and_classified),
	        cmocka_unit_test(test_ptx_text_is_read_for_version_and_entries),
	        cmocka_unit_test(test_inflate_prefix_agrees_with_the_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
