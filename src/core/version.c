/*
 * version.c - mlsetup's version, the git commit and the kind of build it
 * is, and the versions of the libraries it runs with (for --version and
 * reports).
 *
 * A release build (packaging/release, `make release`) defines
 * ML_RELEASE_BUILD and includes the generated mlsetup-release.h, which
 * names the target, the glibc baseline, the zig version and the Debian
 * source version of every statically linked library.
 */
#include <stdio.h>
#include <string.h>

#include <archive.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <git2.h>
#include <libdeflate.h>
#include <lz4.h>
#include <openssl/crypto.h>
#include <utf8proc.h>
#include <zlib.h>
#include <zstd.h>

#include "mlsetup/core.h"
#include "mlsetup/version.h"

#ifdef ML_RELEASE_BUILD
#include "mlsetup-release.h"
#endif

#ifndef ML_GIT_COMMIT
#define ML_GIT_COMMIT "unknown"
#endif

const char *ml_version_commit(void)
{
	return ML_GIT_COMMIT;
}

const char *ml_version_build(void)
{
#ifdef ML_RELEASE_BUILD
	return "release " ML_BUILD_TARGET " (glibc >= " ML_BUILD_GLIBC "), zig " ML_BUILD_ZIG
	       ", static libraries from Debian " ML_BUILD_SUITE " sources";
#else
	return "development, shared libraries of the build machine";
#endif
}

/* Writes "<version>" or, in a release build, "<version> [static, Debian
 * <debian version>]" into buf (sz bytes); returns buf. */
static const char *with_origin(char *buf, size_t sz, const char *version, const char *debian)
{
	if (debian && debian[0])
		snprintf(buf, sz, "%s [static, Debian %s]", version, debian);
	else
		snprintf(buf, sz, "%s", version);
	return buf;
}

#ifndef ML_DEB_CURL
#define ML_DEB_CURL ""
#endif
#ifndef ML_DEB_LIBARCHIVE
#define ML_DEB_LIBARCHIVE ""
#endif
#ifndef ML_DEB_OPENSSL
#define ML_DEB_OPENSSL ""
#endif
#ifndef ML_DEB_CJSON
#define ML_DEB_CJSON ""
#endif
#ifndef ML_DEB_LIBGIT2
#define ML_DEB_LIBGIT2 ""
#endif
#ifndef ML_DEB_ZSTD
#define ML_DEB_ZSTD ""
#endif
#ifndef ML_DEB_LZ4
#define ML_DEB_LZ4 ""
#endif
#ifndef ML_DEB_ZLIB
#define ML_DEB_ZLIB ""
#endif
#ifndef ML_DEB_LIBDEFLATE
#define ML_DEB_LIBDEFLATE ""
#endif
#ifndef ML_DEB_UTF8PROC
#define ML_DEB_UTF8PROC ""
#endif

int ml_version_libraries(ml_kvs *out)
{
	static char curl[256], archive[256], ssl[256], cjson[256], git[256], zstd[256], lz4[256],
	        zlib[256], deflate[256], u8p[256];
	char v[160];
	const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	snprintf(v, sizeof(v), "%s (%s%s%s%s%s)", cv->version,
	         cv->ssl_version ? cv->ssl_version : "no TLS",
	         cv->nghttp2_version ? ", nghttp2/" : "",
	         cv->nghttp2_version ? cv->nghttp2_version : "", cv->libz_version ? ", zlib/" : "",
	         cv->libz_version ? cv->libz_version : "");
	with_origin(curl, sizeof(curl), v, ML_DEB_CURL);
	with_origin(archive, sizeof(archive), archive_version_details(), ML_DEB_LIBARCHIVE);
	with_origin(ssl, sizeof(ssl), OpenSSL_version(OPENSSL_VERSION), ML_DEB_OPENSSL);
	with_origin(cjson, sizeof(cjson), cJSON_Version(), ML_DEB_CJSON);
	int maj = 0, min = 0, rev = 0;
	git_libgit2_version(&maj, &min, &rev);
	snprintf(v, sizeof(v), "%d.%d.%d", maj, min, rev);
	with_origin(git, sizeof(git), v, ML_DEB_LIBGIT2);
	with_origin(zstd, sizeof(zstd), ZSTD_versionString(), ML_DEB_ZSTD);
	with_origin(lz4, sizeof(lz4), LZ4_versionString(), ML_DEB_LZ4);
	with_origin(zlib, sizeof(zlib), zlibVersion(), ML_DEB_ZLIB);
	/* libdeflate has no run-time version call: this is the version of
	 * the header it was built against. */
	with_origin(deflate, sizeof(deflate), LIBDEFLATE_VERSION_STRING, ML_DEB_LIBDEFLATE);
	with_origin(u8p, sizeof(u8p), utf8proc_version(), ML_DEB_UTF8PROC);

	const struct {
		const char *key, *value;
	} items[] = {
	        {"build", ml_version_build()},
	        {"libcurl", curl},
	        {"libarchive", archive},
	        {"openssl", ssl},
	        {"cjson", cjson},
	        {"libgit2", git},
	        {"zstd", zstd},
	        {"lz4", lz4},
	        {"zlib", zlib},
	        {"libdeflate", deflate},
	        {"utf8proc", u8p},
	};
	out->n = 0;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]) && out->n < ML_KVS_MAX; i++) {
		out->items[out->n].key = items[i].key;
		out->items[out->n++].value = items[i].value;
	}
	return 0;
}
