/*
 * version.h - build identification for --version and reports.
 */
#ifndef MLSETUP_VERSION_H
#define MLSETUP_VERSION_H

#include "mlsetup/core.h"

/* Short git commit mlsetup was built from, or "unknown". Static string. */
const char *ml_version_commit(void);

/* Which build this is, as one line: a release build names its target, its
 * glibc baseline, its zig version and the Debian suite its static
 * libraries come from ("release x86_64-linux-gnu (glibc >= 2.17), zig
 * 0.17.1, static libraries from Debian bookworm sources"); any other build
 * says it uses the build machine's shared libraries. Static string. */
const char *ml_version_build(void);

#define ML_KVS_MAX 16

typedef struct ml_kvs {
	struct {
		const char *key, *value;
	} items[ML_KVS_MAX];
	size_t n;
} ml_kvs;

/* Fills out with ("build", ml_version_build()) followed by (library,
 * version) pairs for libcurl (with its TLS, HTTP/2 and zlib libraries),
 * libarchive (with its compression libraries), OpenSSL, cJSON, libgit2,
 * zstd and lz4, as reported by each library at run time; in a release build each
 * version ends in "[static, Debian <source package version>]". Strings are
 * static and stay valid until the next call. Returns 0. */
int ml_version_libraries(ml_kvs *out);

#endif
