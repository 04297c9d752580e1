/*
 * internal.h - what the packaging-standard files share and no other
 * folder needs: PEP 440 normalization and specifier checks, the PEP 508
 * syntax check requirements and lock files use, the PEP 600 manylinux
 * rule behind the tag lists, and small TOML helpers for pylock.c. Unit
 * tests and fuzz targets include it to test those pieces directly.
 */
#ifndef MLSETUP_PKG_INTERNAL_H
#define MLSETUP_PKG_INTERNAL_H

#include "mlsetup/pkg.h"

/* Writes the PEP 440 normalized form of v ("Normalization": "V1.0-RC.1" ->
 * "1.0rc1", "1.0-1" -> "1.0.post1", "1!02.0+Ubuntu-1" -> "1!2.0+ubuntu.1";
 * trailing zeros are kept) into dst, dstsz bytes. Returns 0, ML_EPARSE when
 * v is not a valid version, or ML_EFAIL when it does not fit (dst then holds
 * a truncated, NUL-terminated string). */
int ml_version_normalize(char *dst, size_t dstsz, const char *v);

/* Returns true when spec is a valid PEP 440 specifier set ("Version
 * specifiers"): comma-separated clauses of ~=, ==, !=, <=, >=, <, >, ===,
 * with "==X.*"/"!=X.*" prefix matching, local labels only after == and !=,
 * and ~= needing at least two release segments. "" (no clauses) is valid
 * and matches every version. */
bool ml_specifier_valid(const char *spec);

/* Checks that marker is valid PEP 508 (same grammar and messages as
 * ml_marker_eval) without evaluating it. Also refuses the ~= and ===
 * comparisons no environment could make valid: without a version-valued
 * variable, or against a right-hand literal that forms no specifier. When
 * this refuses a marker, ml_marker_eval() refuses it in every environment.
 * Returns 0, ML_ENOMEM or ML_EPARSE. */
int ml_marker_check(const char *marker, ml_err *err);

/* Returns true when a wheel with this platform tag installs on a Linux with
 * glibc glibc_major.glibc_minor and CPU arch ("x86_64"/"amd64",
 * "aarch64"/"arm64", or another manylinux arch such as "ppc64le"): PEP 600
 * "manylinux_X_Y_<arch>" needs glibc >= X.Y; the legacy aliases mean
 * manylinux1 = 2.5 (PEP 513), manylinux2010 = 2.12 (PEP 571), manylinux2014
 * = 2.17 (PEP 599). As in packaging, tags older than glibc 2.5 (x86_64,
 * i686) or 2.17 (other arches) never match, and manylinux1/2010 exist only
 * for x86_64 and i686.
 * Any other tag (musllinux, linux_x86_64, win_amd64) returns false. */
bool ml_manylinux_compatible(const char *platform_tag, int glibc_major, int glibc_minor,
                             const char *arch);

/* The string value of key in table, or NULL when missing or not a string. */
const char *ml_toml_get_string(const ml_toml *table, const char *key);

/* "string", "integer", "float", "boolean", "date-time", "array", "table". */
const char *ml_toml_kind_name(ml_toml_kind kind);

#endif
