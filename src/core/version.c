/*
 * version.c - mlsetup's version, the git commit it was built from, and the
 * versions of the libraries it runs with (for --version and reports).
 */
#include <stdio.h>

#include <archive.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <git2.h>
#include <openssl/crypto.h>
#include <zstd.h>

#include "mlsetup/core.h"
#include "mlsetup/version.h"

#ifndef ML_GIT_COMMIT
#define ML_GIT_COMMIT "unknown"
#endif

const char *ml_version_commit(void)
{
	return ML_GIT_COMMIT;
}

int ml_version_libraries(ml_kvs *out)
{
	static char git[32], cjson[32];
	int maj = 0, min = 0, rev = 0;
	git_libgit2_version(&maj, &min, &rev);
	snprintf(git, sizeof(git), "%d.%d.%d", maj, min, rev);
	snprintf(cjson, sizeof(cjson), "%s", cJSON_Version());
	const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	static char curl[96];
	snprintf(curl, sizeof(curl), "%s (%s)", cv->version,
	         cv->ssl_version ? cv->ssl_version : "no TLS");
	out->n = 0;
	out->items[out->n].key = "libcurl";
	out->items[out->n++].value = curl;
	out->items[out->n].key = "libarchive";
	out->items[out->n++].value = archive_version_details();
	out->items[out->n].key = "openssl";
	out->items[out->n++].value = OpenSSL_version(OPENSSL_VERSION);
	out->items[out->n].key = "cjson";
	out->items[out->n++].value = cjson;
	out->items[out->n].key = "libgit2";
	out->items[out->n++].value = git;
	out->items[out->n].key = "zstd";
	out->items[out->n++].value = ZSTD_versionString();
	return 0;
}
