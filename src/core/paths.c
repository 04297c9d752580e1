/*
 * paths.c - where mlsetup keeps things: the cache directory and the
 * content-addressed blob paths inside it (docs/ARCHITECTURE.md, "The cache").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/core.h"

static int fits(int n, size_t sz)
{
	return (n < 0 || (size_t)n >= sz) ? ML_EFAIL : 0;
}

int ml_cache_dir(char *dst, size_t dstsz, const char *override)
{
	const char *v;
	if (override && *override)
		return fits(snprintf(dst, dstsz, "%s", override), dstsz);
	if ((v = getenv("MLSETUP_CACHE_DIR")) && *v)
		return fits(snprintf(dst, dstsz, "%s", v), dstsz);
#ifdef _WIN32
	/* '/' throughout: the file-system helpers split paths there. */
	if ((v = getenv("LOCALAPPDATA")) && *v) {
		int rc = fits(snprintf(dst, dstsz, "%s/mlsetup/Cache", v), dstsz);
		for (char *c = dst; !rc && *c; c++)
			if (*c == '\\')
				*c = '/';
		return rc;
	}
	return ML_EFAIL;
#else
	if ((v = getenv("XDG_CACHE_HOME")) && *v == '/')
		return fits(snprintf(dst, dstsz, "%s/mlsetup", v), dstsz);
	if ((v = getenv("HOME")) && *v)
		return fits(snprintf(dst, dstsz, "%s/.cache/mlsetup", v), dstsz);
	return ML_EFAIL;
#endif
}

int ml_cache_blob_path(char *dst, size_t dstsz, const char *cache_dir, const char *sha256)
{
	if (!ml_is_sha256_hex(sha256)) /* it becomes a path: nothing but hex digits */
		return ML_EFAIL;
	return fits(snprintf(dst, dstsz, "%s/blobs/sha256/%.2s/%s", cache_dir, sha256, sha256),
	            dstsz);
}
