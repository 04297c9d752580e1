/*
 * internal.h - what the verify stage's readers share and nothing outside
 * src/verify needs: the ELF-64 section header table, walked by fatbin.c
 * (host libraries: `.nv_fatbin`, `__nv_relfatbin`, data sections) and by
 * cubin.c (device code: a cubin's `.text.<kernel>` sections).
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

#endif
