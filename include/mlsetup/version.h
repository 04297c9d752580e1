/*
 * version.h - build identification for --version and reports.
 */
#ifndef MLSETUP_VERSION_H
#define MLSETUP_VERSION_H

#include "mlsetup/core.h"

/* Short git commit mlsetup was built from, or "unknown". Static string. */
const char *ml_version_commit(void);

typedef struct ml_kvs {
	struct {
		const char *key, *value;
	} items[8];
	size_t n;
} ml_kvs;

/* Fills out with (library, version) pairs for libcurl (with its TLS
 * backend), libarchive (with its compression libraries), OpenSSL, cJSON,
 * libgit2 and zstd, as reported by each library at run time. Strings are
 * static and stay valid until the next call. Returns 0. */
int ml_version_libraries(ml_kvs *out);

#endif
