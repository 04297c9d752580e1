/*
 * fatbin.c - reads which CUDA code a binary carries, and where, without
 * running any of it.
 *
 * nvcc embeds device code in host binaries as fatbinaries: containers of
 * entries, each entry one PTX text or one SASS cubin for one compute
 * capability (docs/nvidia-and-python-facts.md, "Fatbinary layout", checked against nvcc 13.0
 * output). In ELF files the CUDA runtime loads those in the `.nv_fatbin` section;
 * `__nv_relfatbin` holds relocatable device code, never loaded; some
 * libraries keep whole containers in data sections and load them
 * themselves. In Windows DLLs containers are found by their magic. After
 * a scan, SASS entries are read as cubins (cubin.c), smallest first, until
 * each architecture shows a kernel, so that kernel-less cubins can be told
 * apart. All input is
 * untrusted: every length is checked against what is left before it is
 * used, with arithmetic that cannot overflow, and a malformed input gives
 * ML_EPARSE naming the offset. tests/fuzz/fuzz_fatbin.c fuzzes it. The
 * ELF section table walk is elf.c's, shared with cubin.c.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define rd16 ml_rd16
#define rd32 ml_rd32
#define rd64 ml_rd64

/* Container header: magic, version, header_size, fat_size. */
enum { CONTAINER_MIN = 16 };
/* Entry header: fields up to uncompressed_size; most we accept. */
enum { ENTRY_MIN = 64, ENTRY_MAX = 4096 };
/* Entry header field offsets (docs/nvidia-and-python-facts.md, "Fatbinary layout"). */
enum {
	E_KIND = 0,
	E_HEADER_SIZE = 4,
	E_PAYLOAD_SIZE = 8,
	E_COMPRESSED_SIZE = 16,
	E_ARCH = 28,
	E_FLAGS = 40,
	E_UNCOMPRESSED = 56,
};

/* --- the list ------------------------------------------------------------- */

void ml_fatbin_list_release(ml_fatbin_list *l)
{
	if (!l)
		return;
	free(l->entries);
	free(l->sass);
	free(l->ptx);
	free(l->embedded_sass);
	free(l->embedded_ptx);
	free(l->relocatable_sass);
	free(l->relocatable_ptx);
	free(l->with_kernels);
	free(l->kernelless);
	free(l->ptx_with_entries);
	free(l->kernelless_ptx);
	*l = (ml_fatbin_list)ML_FATBIN_LIST_INIT;
}

static int variant_rank(char v)
{
	return v == 0 ? 0 : v == 'a' ? 1 : 2;
}

static int arch_cmp(const ml_cuda_arch *a, const ml_cuda_arch *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	return variant_rank(a->variant) - variant_rank(b->variant);
}

/* Where a would go in the sorted array arr of n; *found when it is there. */
static size_t arch_find(const ml_cuda_arch *arr, size_t n, const ml_cuda_arch *a, bool *found)
{
	size_t lo = 0, hi = n;
	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = arch_cmp(&arr[mid], a);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool arch_in(const ml_cuda_arch *arr, size_t n, const ml_cuda_arch *a)
{
	bool found;
	arch_find(arr, n, a, &found);
	return found;
}

/* Inserts a into the sorted, unique array *arr of *n. Returns 0 or ML_ENOMEM. */
static int insert_unique(ml_cuda_arch **arr, size_t *n, const ml_cuda_arch *a)
{
	bool found;
	size_t at = arch_find(*arr, *n, a, &found);
	if (found)
		return 0;
	ml_cuda_arch *grown = realloc(*arr, (*n + 1) * sizeof **arr);
	if (!grown)
		return ML_ENOMEM;
	*arr = grown;
	memmove(&grown[at + 1], &grown[at], (*n - at) * sizeof *grown);
	grown[at] = *a;
	(*n)++;
	return 0;
}

/* Removes a from the sorted array arr of *n when it is there. */
static void remove_arch(ml_cuda_arch *arr, size_t *n, const ml_cuda_arch *a)
{
	bool found;
	size_t at = arch_find(arr, *n, a, &found);
	if (!found)
		return;
	memmove(&arr[at], &arr[at + 1], (*n - at - 1) * sizeof *arr);
	(*n)--;
}

/* Records what an entry adds to the architecture lists of its place. */
static int list_arch(ml_fatbin_list *l, const ml_fatbin_entry *e)
{
	const ml_cuda_arch *a = &e->arch;
	switch (e->where) {
	case ML_FATBIN_RELOCATABLE:
		return a->ptx ? insert_unique(&l->relocatable_ptx, &l->n_relocatable_ptx, a)
		              : insert_unique(&l->relocatable_sass, &l->n_relocatable_sass, a);
	case ML_FATBIN_EMBEDDED:
		return a->ptx ? insert_unique(&l->embedded_ptx, &l->n_embedded_ptx, a)
		              : insert_unique(&l->embedded_sass, &l->n_embedded_sass, a);
	case ML_FATBIN_EXECUTABLE:
	default:
		return a->ptx ? insert_unique(&l->ptx, &l->n_ptx, a)
		              : insert_unique(&l->sass, &l->n_sass, a);
	}
}

static int append_entry(ml_fatbin_list *l, const ml_fatbin_entry *e, ml_err *err)
{
	if (l->n_entries == l->cap_entries) {
		size_t cap = l->cap_entries ? l->cap_entries * 2 : 16;
		ml_fatbin_entry *grown = realloc(l->entries, cap * sizeof *grown);
		if (!grown)
			return ml_err_set(err, ML_ENOMEM, "out of memory listing fatbin entries");
		l->entries = grown;
		l->cap_entries = cap;
	}
	if (list_arch(l, e))
		return ml_err_set(err, ML_ENOMEM, "out of memory listing fatbin entries");
	l->entries[l->n_entries++] = *e;
	if (e->compressed)
		l->n_compressed++;
	return 0;
}

/* --- kernels --------------------------------------------------------------- */

/* Reads one SASS entry's cubin (h: its header in the scanned buffer, the
 * payload follows) and sets e->kernels and e->merc; a cubin that cannot be
 * read - corrupt, oversized, or no memory for it - stays at -1 and is
 * counted in l->n_unreadable: that is the cubin's problem, not the scan's. */
static void read_kernels(ml_fatbin_list *l, ml_fatbin_entry *e, const unsigned char *h)
{
	const unsigned char *payload = h + e->header_size;
	ml_cubin_info info;
	int rc;
	if (e->compressed) {
		uint32_t csize = rd32(h + E_COMPRESSED_SIZE);
		unsigned char *cubin = NULL;
		size_t len = 0;
		rc = csize == 0 || csize > e->payload_size
		             ? ML_EPARSE
		             : ml_fatbin_inflate(&cubin, &len, payload, csize, e->flags,
		                                 e->uncompressed_size, ML_FATBIN_INFLATE_MAX, NULL);
		if (rc == 0)
			rc = ml_cubin_read(&info, cubin, len, NULL);
		free(cubin);
	} else {
		rc = ml_cubin_read(&info, payload, (size_t)e->payload_size, NULL);
	}
	if (rc != 0) {
		l->n_unreadable++;
		return;
	}
	size_t n = info.kernels ? info.kernels : info.merc_kernels;
	e->kernels = n > INT32_MAX ? INT32_MAX : (int32_t)n;
	e->merc = info.merc;
	l->n_merc += info.merc;
}

/* The first bytes of a PTX module hold its `.version` (after a few
 * comment lines; cuDNN's start with blank lines). */
enum { PTX_HEAD = 16 << 10 };

/* Reads one PTX entry (h: its header in the scanned buffer): its ISA from
 * the first PTX_HEAD bytes when whole is false, else the whole module for
 * its `.entry` directives too (sets e->kernels; stops at the first). A
 * module that cannot be read is counted in l->n_unreadable (once, by the
 * whole read) and keeps kernels -1. Returns false when it could not be
 * read. */
static bool read_ptx(ml_fatbin_list *l, ml_fatbin_entry *e, const unsigned char *h, bool whole)
{
	const unsigned char *payload = h + e->header_size;
	const unsigned char *text = payload;
	unsigned char *owned = NULL, head[PTX_HEAD];
	size_t len = (size_t)e->payload_size;
	int rc = 0;
	if (e->compressed) {
		uint32_t csize = rd32(h + E_COMPRESSED_SIZE);
		if (csize == 0 || csize > e->payload_size)
			rc = ML_EPARSE;
		else if (whole)
			rc = ml_fatbin_inflate(&owned, &len, payload, csize, e->flags,
			                       e->uncompressed_size, ML_FATBIN_INFLATE_MAX, NULL);
		else
			rc = ml_fatbin_inflate_prefix(head, sizeof head, &len, payload, csize,
			                              e->flags, NULL);
		text = owned ? owned : head;
	} else if (!whole && len > PTX_HEAD) {
		len = PTX_HEAD;
	}
	if (rc != 0) {
		free(owned);
		if (whole)
			l->n_unreadable++;
		return false;
	}
	ml_ptx_info info;
	ml_ptx_scan(&info, (const char *)text, len, 1);
	if (info.isa)
		e->isa = info.isa;
	if (whole)
		e->kernels = info.entries > 0;
	free(owned);
	return true;
}

/* One counted SASS entry as settle_kernels() orders them. */
typedef struct cubin_ref {
	ml_cuda_arch arch;
	uint64_t payload_size, offset;
	size_t index; /* in the list's entries[] */
} cubin_ref;

/* By architecture, then smallest payload first, then file order. */
static int by_arch_then_size(const void *x, const void *y)
{
	const cubin_ref *a = x, *b = y;
	int c = arch_cmp(&a->arch, &b->arch);
	if (c)
		return c;
	if (a->payload_size != b->payload_size)
		return a->payload_size < b->payload_size ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* The entries [first, n_entries) of kind that count (executable and
 * embedded; relocatable code is never loaded), as refs in file order; a new
 * array (caller frees) of *n, or NULL when there is none (*n == 0) or no
 * memory (*n > 0). */
static cubin_ref *counted_refs(const ml_fatbin_list *l, size_t first, uint16_t kind, size_t *n)
{
	*n = 0;
	for (size_t i = first; i < l->n_entries; i++)
		*n += l->entries[i].kind == kind && l->entries[i].where != ML_FATBIN_RELOCATABLE;
	cubin_ref *refs = *n ? malloc(*n * sizeof *refs) : NULL;
	for (size_t i = first, k = 0; refs && i < l->n_entries; i++) {
		const ml_fatbin_entry *e = &l->entries[i];
		if (e->kind == kind && e->where != ML_FATBIN_RELOCATABLE)
			refs[k++] = (cubin_ref){e->arch, e->payload_size, e->offset, i};
	}
	return refs;
}

/* Settles, for the entries [first, n_entries) that a scan of buf appended,
 * which counted SASS architectures hold kernels: for each architecture not
 * yet known to, its cubins are read smallest first until one holds a
 * kernel (or cannot be read, and so may); an architecture none of whose
 * cubins does goes into kernelless[]. Reading smallest first finds a
 * kernel in a small cubin when there is one and leaves the big ones
 * unread. Returns 0 or ML_ENOMEM. */
static int settle_kernels(ml_fatbin_list *l, size_t first, const unsigned char *buf)
{
	size_t n;
	cubin_ref *refs = counted_refs(l, first, ML_FATBIN_KIND_ELF, &n);
	if (!refs)
		return n ? ML_ENOMEM : 0;
	qsort(refs, n, sizeof *refs, by_arch_then_size);
	int rc = 0;
	for (size_t g = 0; g < n && !rc;) {
		const ml_cuda_arch arch = refs[g].arch;
		size_t end = g;
		while (end < n && arch_cmp(&refs[end].arch, &arch) == 0)
			end++;
		bool kernels = arch_in(l->with_kernels, l->n_with_kernels, &arch);
		for (size_t k = g; k < end && !kernels; k++) {
			ml_fatbin_entry *e = &l->entries[refs[k].index];
			read_kernels(l, e, buf + e->offset);
			kernels = e->kernels != 0;
		}
		if (kernels) {
			remove_arch(l->kernelless, &l->n_kernelless, &arch);
			rc = insert_unique(&l->with_kernels, &l->n_with_kernels, &arch);
		} else {
			rc = insert_unique(&l->kernelless, &l->n_kernelless, &arch);
		}
		g = end;
	}
	free(refs);
	return rc;
}

/* Keeps the newest ISA of a in the sorted array arr (where a is). */
static void raise_isa(ml_cuda_arch *arr, size_t n, const ml_cuda_arch *a)
{
	bool found;
	size_t at = arch_find(arr, n, a, &found);
	if (found && a->isa > arr[at].isa)
		arr[at].isa = a->isa;
}

/* Settles, for the PTX entries [first, n_entries) that a scan of buf
 * appended (executable and embedded; relocatable PTX is never loaded),
 * each module's ISA (from its first bytes) and which architectures hold
 * kernels: per architecture the modules are read whole, smallest first,
 * until one has an `.entry` (or cannot be read, and so may). An
 * architecture with one goes into ptx_with_entries[] with the newest ISA
 * of its modules; one without, into kernelless_ptx[]. The listing arrays
 * ptx[] and embedded_ptx[] get the newest ISA too. Returns 0 or ML_ENOMEM. */
static int settle_ptx(ml_fatbin_list *l, size_t first, const unsigned char *buf)
{
	size_t n;
	cubin_ref *refs = counted_refs(l, first, ML_FATBIN_KIND_PTX, &n);
	if (!refs)
		return n ? ML_ENOMEM : 0;
	for (size_t k = 0; k < n; k++) {
		ml_fatbin_entry *e = &l->entries[refs[k].index];
		read_ptx(l, e, buf + e->offset, false);
		e->arch.isa = refs[k].arch.isa = e->isa;
		raise_isa(e->where == ML_FATBIN_EMBEDDED ? l->embedded_ptx : l->ptx,
		          e->where == ML_FATBIN_EMBEDDED ? l->n_embedded_ptx : l->n_ptx, &e->arch);
	}
	qsort(refs, n, sizeof *refs, by_arch_then_size);
	int rc = 0;
	for (size_t g = 0; g < n && !rc;) {
		ml_cuda_arch arch = refs[g].arch;
		size_t end = g;
		while (end < n && arch_cmp(&refs[end].arch, &arch) == 0) {
			if (refs[end].arch.isa > arch.isa)
				arch.isa = refs[end].arch.isa;
			end++;
		}
		bool entries = arch_in(l->ptx_with_entries, l->n_ptx_with_entries, &arch);
		for (size_t k = g; k < end && !entries; k++) {
			ml_fatbin_entry *e = &l->entries[refs[k].index];
			entries = !read_ptx(l, e, buf + e->offset, true) || e->kernels != 0;
		}
		ml_cuda_arch **into = entries ? &l->ptx_with_entries : &l->kernelless_ptx;
		size_t *n_into = entries ? &l->n_ptx_with_entries : &l->n_kernelless_ptx;
		if (entries)
			remove_arch(l->kernelless_ptx, &l->n_kernelless_ptx, &arch);
		rc = insert_unique(into, n_into, &arch);
		raise_isa(*into, *n_into, &arch);
		g = end;
	}
	free(refs);
	return rc;
}

/* --- containers and entries ------------------------------------------------ */

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Reads the entries of one container: buf[start..end) relative to the
 * scanned region, which begins at file offset base. */
static int scan_entries(ml_fatbin_list *out, const unsigned char *buf, size_t start, size_t end,
                        uint64_t base, ml_fatbin_where where, ml_err *err)
{
	size_t p = start;
	while (p < end) {
		size_t left = end - p;
		const unsigned char *e = buf + p;
		uint64_t at = base + p;
		if (all_zero(e, left))
			break; /* zero tail: no further entries */
		if (left < ENTRY_MIN)
			return ml_err_set(err, ML_EPARSE,
			                  "fatbin entry at offset 0x%llx: header truncated (%zu of "
			                  "at least %d bytes left in the container)",
			                  (unsigned long long)at, left, ENTRY_MIN);
		uint32_t hsize = rd32(e + E_HEADER_SIZE);
		if (hsize < ENTRY_MIN || hsize > ENTRY_MAX)
			return ml_err_set(err, ML_EPARSE,
			                  "fatbin entry at offset 0x%llx: header size %u outside "
			                  "%d..%d",
			                  (unsigned long long)at, hsize, ENTRY_MIN, ENTRY_MAX);
		if (hsize > left)
			return ml_err_set(err, ML_EPARSE,
			                  "fatbin entry at offset 0x%llx: header of %u bytes runs "
			                  "past the container end (%zu bytes left)",
			                  (unsigned long long)at, hsize, left);
		uint64_t psize = rd64(e + E_PAYLOAD_SIZE);
		if (psize > left - hsize)
			return ml_err_set(
			        err, ML_EPARSE,
			        "fatbin entry at offset 0x%llx: payload of %llu bytes runs "
			        "past the container end (%zu bytes left)",
			        (unsigned long long)at, (unsigned long long)psize, left - hsize);
		uint16_t kind = rd16(e + E_KIND);
		p += hsize + (size_t)psize; /* <= end: checked above */
		if (kind != ML_FATBIN_KIND_PTX && kind != ML_FATBIN_KIND_ELF) {
			out->n_other++;
			continue;
		}
		uint32_t arch = rd32(e + E_ARCH);
		uint64_t flags = rd64(e + E_FLAGS);
		if (arch < 10 || arch > 9999)
			return ml_err_set(err, ML_EPARSE,
			                  "fatbin entry at offset 0x%llx: architecture %u is not a "
			                  "compute capability",
			                  (unsigned long long)at, arch);
		bool a = flags & ML_FATBIN_FLAG_ARCH_SPECIFIC, f = flags & ML_FATBIN_FLAG_FAMILY;
		if (a && f)
			return ml_err_set(
			        err, ML_EPARSE,
			        "fatbin entry at offset 0x%llx: flags 0x%llx mark it both "
			        "arch-specific and family-specific",
			        (unsigned long long)at, (unsigned long long)flags);
		char variant = 0;
		if (a)
			variant = 'a';
		else if (f)
			variant = 'f';
		ml_fatbin_entry ent = {
		        .arch = {.major = (int)(arch / 10),
		                 .minor = (int)(arch % 10),
		                 .variant = variant,
		                 .ptx = kind == ML_FATBIN_KIND_PTX},
		        .kind = kind,
		        .flags = flags,
		        .compressed = flags & (ML_FATBIN_FLAG_LZ4 | ML_FATBIN_FLAG_ZSTD),
		        .where = where,
		        .kernels = -1,
		        .offset = at,
		        .header_size = hsize,
		        .payload_size = psize,
		};
		if (ent.compressed)
			ent.uncompressed_size = rd64(e + E_UNCOMPRESSED);
		int rc = append_entry(out, &ent, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Reads the container whose header starts at buf[off] (region-relative;
 * the region starts at file offset base) and sets *next past it. */
static int scan_container(ml_fatbin_list *out, const unsigned char *buf, size_t len, size_t off,
                          uint64_t base, ml_fatbin_where where, size_t *next, ml_err *err)
{
	size_t left = len - off;
	const unsigned char *h = buf + off;
	uint64_t at = base + off;
	if (left < CONTAINER_MIN)
		return ml_err_set(err, ML_EPARSE,
		                  "fatbin container at offset 0x%llx: header truncated (%zu of %d "
		                  "bytes)",
		                  (unsigned long long)at, left, CONTAINER_MIN);
	uint32_t magic = rd32(h);
	if (magic != ML_FATBIN_MAGIC)
		return ml_err_set(err, ML_EPARSE,
		                  "no fatbin container at offset 0x%llx: magic 0x%08x, expected "
		                  "0x%08x",
		                  (unsigned long long)at, magic, ML_FATBIN_MAGIC);
	uint16_t version = rd16(h + 4), hsize = rd16(h + 6);
	uint64_t fat = rd64(h + 8);
	if (version != 1)
		return ml_err_set(err, ML_EPARSE,
		                  "fatbin container at offset 0x%llx: unsupported version %u",
		                  (unsigned long long)at, version);
	if (hsize < CONTAINER_MIN || hsize > left)
		return ml_err_set(err, ML_EPARSE,
		                  "fatbin container at offset 0x%llx: header size %u outside "
		                  "%d..%zu",
		                  (unsigned long long)at, hsize, CONTAINER_MIN, left);
	if (fat > left - hsize)
		return ml_err_set(err, ML_EPARSE,
		                  "fatbin container at offset 0x%llx: %llu bytes of entries run "
		                  "past the end (%zu bytes left)",
		                  (unsigned long long)at, (unsigned long long)fat, left - hsize);
	out->n_containers++;
	size_t start = off + hsize, end = start + (size_t)fat;
	int rc = scan_entries(out, buf, start, end, base, where, err);
	if (rc)
		return rc;
	*next = end;
	return 0;
}

/* Strict walk over a region that holds only containers and zero padding. */
static int scan_region(ml_fatbin_list *out, const unsigned char *buf, size_t len, uint64_t base,
                       ml_fatbin_where where, ml_err *err)
{
	size_t off = 0;
	for (;;) {
		while (off < len && buf[off] == 0)
			off++;
		if (off >= len)
			return 0;
		int rc = scan_container(out, buf, len, off, base, where, &off, err);
		if (rc)
			return rc;
	}
}

int ml_fatbin_scan(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err)
{
	if (!buf && len)
		return ml_err_set(err, ML_EPARSE, "no fatbin bytes");
	size_t first = out->n_entries;
	int rc = scan_region(out, buf, len, 0, ML_FATBIN_EXECUTABLE, err);
	/* Entries read before a failure stay, with their kernels settled. */
	if (rc != ML_ENOMEM && (settle_kernels(out, first, buf) || settle_ptx(out, first, buf)))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory reading cubins and PTX");
	return rc;
}

/* --- whole images -------------------------------------------------------------- */

/* Rewrites err's message as "<prefix>: <message>". */
static int prefix_err(ml_err *err, int rc, const char *prefix)
{
	if (!err)
		return rc;
	char msg[sizeof err->msg];
	if (snprintf(msg, sizeof msg, "%s: %s", prefix, err->msg) >= 0) /* may truncate */
		memcpy(err->msg, msg, sizeof msg);
	return rc;
}

/* Finds containers by magic at 8-byte-aligned offsets (PE DLLs, ELF files
 * without sections). A candidate needs version 1 and header size 16 after
 * the magic, which code bytes that merely contain the constant lack. */
static int scan_by_magic(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err)
{
	size_t off = 0;
	while (len >= CONTAINER_MIN && off <= len - CONTAINER_MIN) {
		const unsigned char *h = buf + off;
		if (rd32(h) != ML_FATBIN_MAGIC || rd16(h + 4) != 1 ||
		    rd16(h + 6) != CONTAINER_MIN) {
			off += 8;
			continue;
		}
		size_t next;
		int rc = scan_container(out, buf, len, off, 0, ML_FATBIN_EXECUTABLE, &next, err);
		if (rc)
			return rc;
		/* Round up to the next 8-byte boundary, without overflow. */
		off = next % 8 == 0 ? next : next + (8 - next % 8);
	}
	return 0;
}

/* Scans a data section for fatbin containers by magic, as some libraries
 * keep their kernels outside .nv_fatbin (cuFFT 11.2 holds thousands of
 * containers in .data and a single kernel-less sm_52 one in .nv_fatbin)
 * and load them themselves. Arbitrary data may hold the magic by chance,
 * so a candidate counts only when it parses as a whole well-formed
 * container; anything else is skipped, not an error. Returns 0 or
 * ML_ENOMEM. */
static int scan_data_section(ml_fatbin_list *out, const unsigned char *buf, size_t sec_off,
                             size_t sec_size, ml_err *err)
{
	size_t off = sec_off + (sec_off % 8 ? 8 - sec_off % 8 : 0);
	size_t end = sec_off + sec_size;
	while (end >= CONTAINER_MIN && off <= end - CONTAINER_MIN) {
		const unsigned char *h = buf + off;
		if (rd32(h) != ML_FATBIN_MAGIC || rd16(h + 4) != 1 ||
		    rd16(h + 6) != CONTAINER_MIN) {
			off += 8;
			continue;
		}
		ml_fatbin_list one = ML_FATBIN_LIST_INIT;
		size_t next = 0;
		ml_err local = ML_ERR_INIT;
		int rc = scan_container(&one, buf, end, off, 0, ML_FATBIN_EMBEDDED, &next, &local);
		if (rc == 0 && next > off) {
			for (size_t i = 0; i < one.n_entries && !rc; i++)
				rc = append_entry(out, &one.entries[i], err);
			out->n_containers += one.n_containers;
			out->n_other += one.n_other;
			off = next % 8 == 0 ? next : next + (8 - next % 8);
		} else {
			rc = rc == ML_ENOMEM ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
			off += 8;
		}
		ml_fatbin_list_release(&one);
		if (rc)
			return rc;
	}
	return 0;
}

/* ml_fatbin_scan_image() before the kernels are settled. */
static int scan_image(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err)
{
	ml_elf_table t;
	if (ml_elf_table_open(&t, buf, len, NULL) == ML_ENOENT) /* not ELF, or no sections */
		return scan_by_magic(out, buf, len, err);
	static const struct {
		const char *name;
		ml_fatbin_where where;
	} sections[] = {
	        {".nv_fatbin", ML_FATBIN_EXECUTABLE},
	        {"__nv_relfatbin", ML_FATBIN_RELOCATABLE},
	};
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		size_t off, size;
		ml_err local = ML_ERR_INIT;
		int rc = ml_elf_section(&off, &size, buf, len, sections[i].name, &local);
		if (rc == ML_ENOENT)
			continue;
		if (rc) {
			if (err)
				*err = local;
			return rc;
		}
		rc = scan_region(out, buf + off, size, off, sections[i].where, &local);
		if (rc) {
			if (err)
				*err = local;
			char prefix[64];
			snprintf(prefix, sizeof prefix, "section %s", sections[i].name);
			return prefix_err(err, rc, prefix);
		}
	}
	static const char *const data_sections[] = {".data", ".rodata", ".data.rel.ro"};
	for (size_t i = 0; i < sizeof data_sections / sizeof data_sections[0]; i++) {
		size_t off, size;
		if (ml_elf_section(&off, &size, buf, len, data_sections[i], NULL) == 0) {
			int rc = scan_data_section(out, buf, off, size, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ml_fatbin_scan_image(ml_fatbin_list *out, const unsigned char *buf, size_t len, ml_err *err)
{
	if (!buf || len == 0)
		return 0;
	size_t first = out->n_entries;
	int rc = scan_image(out, buf, len, err);
	/* Entries read before a failure stay, with their kernels settled. */
	if (rc != ML_ENOMEM && (settle_kernels(out, first, buf) || settle_ptx(out, first, buf)))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory reading cubins and PTX");
	return rc;
}
