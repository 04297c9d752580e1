/*
 * link-smoke.c - proves that a release prefix (build-deps.sh) links into
 * one static program and that each library works there: it calls every
 * library the Makefile's PKGS names once, checks SHA-256("abc") against
 * FIPS 180-2's value, round-trips a buffer through libdeflate, zstd and lz4,
 * and, given a URL, fetches it with libcurl. Built and run by
 * link-smoke.sh; not part of mlsetup.
 *
 * Prints one line per library; exits 0 when every check passed, 1 if not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <git2.h>
#include <libdeflate.h>
#include <lz4.h>
#include <openssl/evp.h>
#include <utf8proc.h>
#include <zlib.h>
#include <zstd.h>

static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		failed++;
	}
}

static size_t count_bytes(char *data, size_t size, size_t n, void *user)
{
	(void)data;
	*(size_t *)user += size * n;
	return size * n;
}

static void check_sha256(void)
{
	static const char want[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1] = "";

	check(EVP_Digest("abc", 3, md, &len, EVP_sha256(), NULL) == 1, "EVP_Digest");
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	printf("openssl   %s, sha256(abc) %s\n", OpenSSL_version(OPENSSL_VERSION), hex);
	check(strcmp(hex, want) == 0, "sha256(abc)");
}

static void check_codecs(void)
{
	char in[4096], out[8192], back[4096];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)"mlsetup "[i % 8];

	struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t clen = c ? libdeflate_deflate_compress(c, in, sizeof(in), out, sizeof(out)) : 0;
	size_t dlen = 0;
	int ok = d && clen > 0 &&
		 libdeflate_deflate_decompress(d, out, clen, back, sizeof(back), &dlen) == LIBDEFLATE_SUCCESS &&
		 dlen == sizeof(in) && memcmp(in, back, dlen) == 0;
	printf("libdeflate %zu -> %zu bytes\n", sizeof(in), clen);
	check(ok, "libdeflate round trip");
	libdeflate_free_compressor(c);
	libdeflate_free_decompressor(d);

	size_t zlen = ZSTD_compress(out, sizeof(out), in, sizeof(in), 3);
	size_t zback = ZSTD_isError(zlen) ? 0 : ZSTD_decompress(back, sizeof(back), out, zlen);
	printf("zstd      %s, %zu -> %zu bytes\n", ZSTD_versionString(), sizeof(in), zlen);
	check(!ZSTD_isError(zlen) && zback == sizeof(in) && memcmp(in, back, zback) == 0, "zstd round trip");

	int llen = LZ4_compress_default(in, out, (int)sizeof(in), (int)sizeof(out));
	int lback = llen > 0 ? LZ4_decompress_safe(out, back, llen, (int)sizeof(back)) : -1;
	printf("lz4       %d, %zu -> %d bytes\n", LZ4_versionNumber(), sizeof(in), llen);
	check(lback == (int)sizeof(in) && memcmp(in, back, sizeof(in)) == 0, "lz4 round trip");

	uLongf glen = sizeof(out);
	check(compress2((Bytef *)out, &glen, (const Bytef *)in, sizeof(in), 6) == Z_OK, "zlib compress2");
	printf("zlib      %s, %zu -> %lu bytes\n", zlibVersion(), sizeof(in), (unsigned long)glen);
}

static void check_curl(const char *url)
{
	curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);

	printf("curl      %s\n", curl_version());
	printf("          ssl %s, http2 %s\n", v->ssl_version ? v->ssl_version : "none",
	       (v->features & CURL_VERSION_HTTP2) ? "yes" : "no");
	if (!url)
		return;

	CURL *h = curl_easy_init();
	size_t bytes = 0;
	long code = 0;
	CURLcode rc = CURLE_FAILED_INIT;

	if (h) {
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_bytes);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &bytes);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
		rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_cleanup(h);
	}
	printf("          GET %s: %s, HTTP %ld, %zu bytes\n", url, curl_easy_strerror(rc), code, bytes);
	/* file:// has no response code */
	check(rc == CURLE_OK && (code == 200 || code == 0) && bytes > 0, "curl GET");
}

int main(int argc, char **argv)
{
	int major = 0, minor = 0, rev = 0;

	check(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK, "curl_global_init");
	check_curl(argc > 1 ? argv[1] : NULL);

	printf("libarchive %s\n", archive_version_string());
	struct archive *a = archive_read_new();
	check(a && archive_read_support_format_zip(a) == ARCHIVE_OK &&
		      archive_read_support_format_tar(a) == ARCHIVE_OK &&
		      archive_read_support_filter_gzip(a) == ARCHIVE_OK &&
		      archive_read_support_filter_zstd(a) == ARCHIVE_OK,
	      "libarchive zip/tar/gzip/zstd");
	archive_read_free(a);

	check(git_libgit2_init() > 0, "git_libgit2_init");
	git_libgit2_version(&major, &minor, &rev);
	int features = git_libgit2_features();
	printf("libgit2   %d.%d.%d, https %s, threads %s\n", major, minor, rev,
	       (features & GIT_FEATURE_HTTPS) ? "yes" : "no", (features & GIT_FEATURE_THREADS) ? "yes" : "no");
	check(features & GIT_FEATURE_HTTPS, "libgit2 https");
	git_libgit2_shutdown();

	check_sha256();

	cJSON *j = cJSON_Parse("{\"torch\": [2, 9]}");
	cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "torch");
	printf("cjson     %s, [2, 9] has %d items\n", cJSON_Version(), cJSON_GetArraySize(t));
	check(cJSON_GetArraySize(t) == 2, "cJSON_Parse");
	cJSON_Delete(j);

	check_codecs();

	utf8proc_uint8_t *nfc = utf8proc_NFC((const utf8proc_uint8_t *)"e\xcc\x81");
	printf("utf8proc  %s, NFC(e + U+0301) = %s\n", utf8proc_version(),
	       nfc && strcmp((const char *)nfc, "\xc3\xa9") == 0 ? "U+00E9" : "wrong");
	check(nfc && strcmp((const char *)nfc, "\xc3\xa9") == 0, "utf8proc NFC");
	free(nfc);

	curl_global_cleanup();
	printf("%s\n", failed ? "link-smoke: FAILED" : "link-smoke: ok");
	return failed ? 1 : 0;
}
