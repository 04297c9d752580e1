/*
 * fuzz_fatbin.c - libFuzzer target for the fatbin reader and the ELF-64
 * section finder (src/verify/fatbin.c, elf.c).
 *
 * The input is scanned three ways: as a raw fatbin region
 * (ml_fatbin_scan), as a whole library image (ml_fatbin_scan_image: ELF
 * sections, or containers found by magic in anything else - the Windows
 * wheels' PE DLLs, "MZ" images, are read this way), and for its
 * `.nv_fatbin` section (ml_elf_section). Beyond "no crash, no over-read"
 * (ASan), each result must hold: only the documented error codes; every
 * entry's header and payload inside the input; every architecture list
 * (executable, embedded, relocatable) sorted, unique, nameable and
 * matching the entries of its place; kernels (SASS .text sections, PTX
 * .entry directives) counted only for executable and embedded code; each
 * counted SASS and each counted PTX architecture either with kernels or
 * kernel-less, never both; a section inside the input; and a second scan
 * into the same list appending exactly as much again. Compressed payloads
 * go through liblz4 / libzstd here too (tests/fuzz/fuzz_cubin.c fuzzes
 * them alone). Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_fatbin/
 * (the fixtures' .nv_fatbin sections, whole libraries, and the PE DLLs
 * of tests/fixtures/fatbin/: fake_pe, real_pe, bad_pe_truncated).
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

static int order(const ml_cuda_arch *a, const ml_cuda_arch *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	int ra = a->variant == 0 ? 0 : a->variant == 'a' ? 1 : 2;
	int rb = b->variant == 0 ? 0 : b->variant == 'a' ? 1 : 2;
	return ra - rb;
}

static bool listed(const ml_cuda_arch *v, size_t n, const ml_cuda_arch *a)
{
	for (size_t i = 0; i < n; i++)
		if (order(&v[i], a) == 0)
			return true;
	return false;
}

static void check_sorted(const ml_cuda_arch *v, size_t n, bool ptx)
{
	for (size_t i = 1; i < n; i++)
		CHECK(order(&v[i - 1], &v[i]) < 0);
	for (size_t i = 0; i < n; i++)
		CHECK(v[i].ptx == ptx);
}

/* Every architecture of v[0..n) has an entry of that place and kind. */
static void check_backed(const ml_fatbin_list *l, const ml_cuda_arch *v, size_t n,
                         ml_fatbin_where where)
{
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < l->n_entries && !found; k++)
			found = l->entries[k].where == where &&
			        order(&l->entries[k].arch, &v[i]) == 0 &&
			        l->entries[k].arch.ptx == v[i].ptx;
		CHECK(found);
	}
}

static void check_list(const ml_fatbin_list *l, size_t size)
{
	size_t compressed = 0;
	for (size_t i = 0; i < l->n_entries; i++) {
		const ml_fatbin_entry *e = &l->entries[i];
		CHECK(e->header_size >= 64 && e->header_size <= 4096);
		CHECK(e->offset <= size && e->header_size <= size - e->offset);
		CHECK(e->payload_size <= size - e->offset - e->header_size);
		CHECK(e->kind == ML_FATBIN_KIND_PTX || e->kind == ML_FATBIN_KIND_ELF);
		CHECK(e->arch.ptx == (e->kind == ML_FATBIN_KIND_PTX));
		CHECK(e->where == ML_FATBIN_EXECUTABLE || e->where == ML_FATBIN_EMBEDDED ||
		      e->where == ML_FATBIN_RELOCATABLE);
		char nm[32];
		CHECK(ml_cuda_arch_format(nm, sizeof nm, &e->arch) == 0);
		const ml_cuda_arch *sass = l->sass, *ptx = l->ptx;
		size_t n_sass = l->n_sass, n_ptx = l->n_ptx;
		if (e->where == ML_FATBIN_EMBEDDED) {
			sass = l->embedded_sass, n_sass = l->n_embedded_sass;
			ptx = l->embedded_ptx, n_ptx = l->n_embedded_ptx;
		} else if (e->where == ML_FATBIN_RELOCATABLE) {
			sass = l->relocatable_sass, n_sass = l->n_relocatable_sass;
			ptx = l->relocatable_ptx, n_ptx = l->n_relocatable_ptx;
		}
		CHECK(e->arch.ptx ? listed(ptx, n_ptx, &e->arch) : listed(sass, n_sass, &e->arch));
		/* Kernels: only counted code is read (SASS cubins for .text
		 * sections, PTX modules for .entry directives); a cubin is far
		 * smaller than 2^31 sections. Each counted architecture is
		 * either with kernels or kernel-less, never both. */
		CHECK(e->kernels >= -1);
		CHECK(e->isa >= 0);
		if (e->where == ML_FATBIN_RELOCATABLE) {
			CHECK(e->kernels == -1);
		} else if (e->arch.ptx) {
			if (e->kernels != 0)
				CHECK(listed(l->ptx_with_entries, l->n_ptx_with_entries, &e->arch));
			CHECK(listed(l->ptx_with_entries, l->n_ptx_with_entries, &e->arch) !=
			      listed(l->kernelless_ptx, l->n_kernelless_ptx, &e->arch));
		} else {
			if (e->kernels != 0)
				CHECK(listed(l->with_kernels, l->n_with_kernels, &e->arch));
			CHECK(listed(l->with_kernels, l->n_with_kernels, &e->arch) !=
			      listed(l->kernelless, l->n_kernelless, &e->arch));
		}
		compressed += e->compressed;
	}
	CHECK(compressed == l->n_compressed);
	CHECK(l->n_sass + l->n_ptx + l->n_embedded_sass + l->n_embedded_ptx +
	              l->n_relocatable_sass + l->n_relocatable_ptx <=
	      l->n_entries);
	CHECK(l->n_with_kernels + l->n_kernelless <= l->n_sass + l->n_embedded_sass);
	CHECK(l->n_ptx_with_entries + l->n_kernelless_ptx <= l->n_ptx + l->n_embedded_ptx);
	CHECK(l->n_merc <= l->n_entries);
	CHECK(l->n_unreadable <= l->n_entries);
	check_sorted(l->sass, l->n_sass, false);
	check_sorted(l->ptx, l->n_ptx, true);
	check_sorted(l->embedded_sass, l->n_embedded_sass, false);
	check_sorted(l->embedded_ptx, l->n_embedded_ptx, true);
	check_sorted(l->relocatable_sass, l->n_relocatable_sass, false);
	check_sorted(l->relocatable_ptx, l->n_relocatable_ptx, true);
	check_sorted(l->with_kernels, l->n_with_kernels, false);
	check_sorted(l->kernelless, l->n_kernelless, false);
	check_sorted(l->ptx_with_entries, l->n_ptx_with_entries, true);
	check_sorted(l->kernelless_ptx, l->n_kernelless_ptx, true);
	check_backed(l, l->sass, l->n_sass, ML_FATBIN_EXECUTABLE);
	check_backed(l, l->ptx, l->n_ptx, ML_FATBIN_EXECUTABLE);
	check_backed(l, l->embedded_sass, l->n_embedded_sass, ML_FATBIN_EMBEDDED);
	check_backed(l, l->relocatable_ptx, l->n_relocatable_ptx, ML_FATBIN_RELOCATABLE);
	for (size_t i = 0; i < l->n_kernelless; i++)
		CHECK(listed(l->sass, l->n_sass, &l->kernelless[i]) ||
		      listed(l->embedded_sass, l->n_embedded_sass, &l->kernelless[i]));
	for (size_t i = 0; i < l->n_kernelless_ptx; i++)
		CHECK(listed(l->ptx, l->n_ptx, &l->kernelless_ptx[i]) ||
		      listed(l->embedded_ptx, l->n_embedded_ptx, &l->kernelless_ptx[i]));
	for (size_t i = 0; i < l->n_ptx_with_entries; i++)
		CHECK(listed(l->ptx, l->n_ptx, &l->ptx_with_entries[i]) ||
		      listed(l->embedded_ptx, l->n_embedded_ptx, &l->ptx_with_entries[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ml_err err = ML_ERR_INIT;

	ml_fatbin_list l = ML_FATBIN_LIST_INIT;
	int rc = ml_fatbin_scan(&l, data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	check_list(&l, size);
	if (rc == 0) {
		size_t n = l.n_entries, c = l.n_containers;
		CHECK(ml_fatbin_scan(&l, data, size, &err) == 0);
		CHECK(l.n_entries == 2 * n && l.n_containers == 2 * c);
		check_list(&l, size);
	}
	ml_fatbin_list_release(&l);

	rc = ml_fatbin_scan_image(&l, data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	check_list(&l, size);
	ml_fatbin_list_release(&l);

	size_t off = 0, len = 0;
	rc = ml_elf_section(&off, &len, data, size, ".nv_fatbin", &err);
	CHECK(rc == 0 || rc == ML_ENOENT || rc == ML_EPARSE);
	if (rc == 0)
		CHECK(off <= size && len <= size - off);
	return 0;
}
