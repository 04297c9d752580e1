/*
 * elf.c - the section header table of an ELF-64 little-endian image held
 * in memory (System V ABI, "ELF-64 Object File Format"): opened and
 * checked to lie inside the bytes, with extended numbering through section
 * 0; a section's name and bytes; a section found by name. fatbin.c walks
 * host libraries with it (`.nv_fatbin`, `__nv_relfatbin`, data sections),
 * cubin.c device code (a cubin's `.text.<kernel>` sections); it uses
 * neither. All input is untrusted: every offset and size is checked
 * against the image before it is used. Contracts in internal.h.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define rd16 ml_rd16
#define rd32 ml_rd32
#define rd64 ml_rd64

/* ELF-64 file header and section header fields (System V ABI). */
enum {
	EH_SIZE = 64,
	EH_TYPE = 0x10,
	EH_MACHINE = 0x12,
	EH_SHOFF = 0x28,
	EH_SHENTSIZE = 0x3a,
	EH_SHNUM = 0x3c,
	EH_SHSTRNDX = 0x3e,
	SH_SIZE_MIN = 64, /* sizeof(Elf64_Shdr) */
	SH_NAME = 0,
	SH_TYPE = 4,
	SH_LINK = 40,
	SH_OFFSET = 24,
	SH_SIZE = 32,
	SHT_NOBITS_ = 8,
	SHN_XINDEX_ = 0xffff,
};

static bool is_elf64le(const unsigned char *buf, size_t len)
{
	return len >= EH_SIZE && memcmp(buf, "\177ELF", 4) == 0 && buf[4] == 2 && buf[5] == 1;
}

/* Bounds of a section's bytes; ML_EPARSE when outside buf. */
static int section_bytes(size_t *off, size_t *size, const unsigned char *sh, size_t len,
                         const char *what, ml_err *err)
{
	uint64_t o = rd64(sh + SH_OFFSET), s = rd64(sh + SH_SIZE);
	if (o > len || s > len - o)
		return ml_err_set(err, ML_EPARSE,
		                  "ELF %s (offset 0x%llx, %llu bytes) runs past the end of the "
		                  "file (%zu bytes)",
		                  what, (unsigned long long)o, (unsigned long long)s, len);
	*off = (size_t)o;
	*size = (size_t)s;
	return 0;
}

int ml_elf_table_open(ml_elf_table *out, const unsigned char *buf, size_t len, ml_err *err)
{
	if (!buf || !is_elf64le(buf, len))
		return ml_err_set(err, ML_ENOENT, "not an ELF-64 little-endian file");
	uint64_t shoff = rd64(buf + EH_SHOFF);
	uint16_t shentsize = rd16(buf + EH_SHENTSIZE);
	uint64_t shnum = rd16(buf + EH_SHNUM);
	uint32_t shstrndx = rd16(buf + EH_SHSTRNDX);
	if (shoff == 0)
		return ml_err_set(err, ML_ENOENT, "ELF file has no section header table");
	if (shentsize < SH_SIZE_MIN)
		return ml_err_set(err, ML_EPARSE, "ELF section header size %u is below %d",
		                  shentsize, SH_SIZE_MIN);
	if (shoff > len || len - shoff < shentsize)
		return ml_err_set(err, ML_EPARSE,
		                  "ELF section header table at 0x%llx lies outside the file (%zu "
		                  "bytes)",
		                  (unsigned long long)shoff, len);
	const unsigned char *sh0 = buf + shoff;
	if (shnum == 0) /* extended numbering: the count is section 0's size */
		shnum = rd64(sh0 + SH_SIZE);
	if (shstrndx == SHN_XINDEX_)
		shstrndx = rd32(sh0 + SH_LINK);
	if (shnum > (len - shoff) / shentsize)
		return ml_err_set(err, ML_EPARSE,
		                  "ELF section header table (%llu entries at 0x%llx) runs past "
		                  "the end of the file",
		                  (unsigned long long)shnum, (unsigned long long)shoff);
	if (shstrndx >= shnum)
		return ml_err_set(err, ML_EPARSE,
		                  "ELF section name table index %u is not below %llu sections",
		                  shstrndx, (unsigned long long)shnum);
	ml_elf_table t = {
	        .buf = buf,
	        .len = len,
	        .sh0 = sh0,
	        .shentsize = shentsize,
	        .shnum = (size_t)shnum,
	        .machine = rd16(buf + EH_MACHINE),
	        .type = rd16(buf + EH_TYPE),
	};
	int rc = section_bytes(&t.stroff, &t.strsize, sh0 + (size_t)shstrndx * shentsize, len,
	                       "section name table", err);
	if (rc)
		return rc;
	*out = t;
	return 0;
}

const char *ml_elf_section_name(const ml_elf_table *t, size_t i, size_t *name_len)
{
	uint32_t n = rd32(t->sh0 + i * t->shentsize + SH_NAME);
	if (n >= t->strsize)
		return NULL;
	const char *name = (const char *)t->buf + t->stroff + n;
	const char *nul = memchr(name, 0, t->strsize - n);
	if (!nul)
		return NULL;
	*name_len = (size_t)(nul - name);
	return name;
}

int ml_elf_section_bytes(size_t *off, size_t *size, const ml_elf_table *t, size_t i,
                         const char *what, ml_err *err)
{
	const unsigned char *sh = t->sh0 + i * t->shentsize;
	if (rd32(sh + SH_TYPE) == SHT_NOBITS_)
		return ml_err_set(err, ML_ENOENT, "ELF %s has no bytes in the file", what);
	return section_bytes(off, size, sh, t->len, what, err);
}

int ml_elf_section(size_t *out_off, size_t *out_size, const unsigned char *buf, size_t len,
                   const char *name, ml_err *err)
{
	ml_elf_table t;
	int rc = ml_elf_table_open(&t, buf, len, err);
	if (rc)
		return rc;
	size_t want = strlen(name);
	for (size_t i = 0; i < t.shnum; i++) {
		size_t n;
		const char *nm = ml_elf_section_name(&t, i, &n);
		if (!nm || n != want || memcmp(nm, name, n) != 0)
			continue;
		char what[128];
		snprintf(what, sizeof what, "section %s", name);
		rc = ml_elf_section_bytes(out_off, out_size, &t, i, what, err);
		if (rc != ML_ENOENT) /* a SHT_NOBITS section counts as absent */
			return rc;
	}
	return ml_err_set(err, ML_ENOENT, "no ELF section %s", name);
}
