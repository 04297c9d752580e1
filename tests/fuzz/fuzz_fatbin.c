/*
 * fuzz_fatbin.c - libFuzzer target for the fatbin reader and the ELF-64
 * section finder (src/verify/fatbin.c).
 *
 * The input is scanned three ways: as a raw fatbin region
 * (ml_fatbin_scan), as a whole library image (ml_fatbin_scan_image: ELF
 * sections, or containers found by magic), and for its `.nv_fatbin`
 * section (ml_elf_section). Beyond "no crash, no over-read" (ASan), each
 * result must hold: only the documented error codes; every entry's header
 * and payload inside the input; the SASS and PTX lists sorted, unique,
 * nameable and matching the entries; a section inside the input; and a
 * second scan into the same list appending exactly as much again.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_fatbin/ (the
 * fixtures' .nv_fatbin sections and two whole libraries).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/verify.h"

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
		char nm[32];
		CHECK(ml_cuda_arch_format(nm, sizeof nm, &e->arch) == 0);
		CHECK(e->arch.ptx ? listed(l->ptx, l->n_ptx, &e->arch)
		                  : listed(l->sass, l->n_sass, &e->arch));
		compressed += e->compressed;
	}
	CHECK(compressed == l->n_compressed);
	CHECK(l->n_sass + l->n_ptx <= l->n_entries);
	for (size_t i = 1; i < l->n_sass; i++)
		CHECK(order(&l->sass[i - 1], &l->sass[i]) < 0);
	for (size_t i = 1; i < l->n_ptx; i++)
		CHECK(order(&l->ptx[i - 1], &l->ptx[i]) < 0);
	for (size_t i = 0; i < l->n_sass; i++)
		CHECK(!l->sass[i].ptx);
	for (size_t i = 0; i < l->n_ptx; i++)
		CHECK(l->ptx[i].ptx);
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
