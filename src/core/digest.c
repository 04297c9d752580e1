/*
 * digest.c - SHA-256 and hex, the one copy every stage uses: of a buffer,
 * of a file (or any OpenSSL digest by name, for RECORD's sha384/sha512),
 * and streaming for bytes that arrive in pieces. OpenSSL EVP underneath;
 * core.h keeps its types out of the public API.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "mlsetup/core.h"

void ml_hex_encode(char *dst, const uint8_t *d, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = hx[d[i] >> 4];
		dst[2 * i + 1] = hx[d[i] & 15];
	}
	dst[2 * n] = '\0';
}

bool ml_is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int ml_sha256_hex_normalize(char out[65], const char *s)
{
	if (!s || strlen(s) != 64)
		return ML_EFAIL;
	char low[65];
	for (size_t i = 0; i < 64; i++)
		low[i] = (s[i] >= 'A' && s[i] <= 'F') ? (char)(s[i] - 'A' + 'a') : s[i];
	low[64] = '\0';
	if (!ml_is_sha256_hex(low))
		return ML_EFAIL;
	memcpy(out, low, 65);
	return 0;
}

int ml_sha256_buf(uint8_t out[32], const void *data, size_t n)
{
	unsigned len = 0;
	return EVP_Digest(data, n, out, &len, EVP_sha256(), NULL) == 1 && len == 32 ? 0 : ML_ENOMEM;
}

int ml_sha256_hex_buf(char hex[65], const void *data, size_t n)
{
	uint8_t d[32];
	int rc = ml_sha256_buf(d, data, n);
	if (!rc)
		ml_hex_encode(hex, d, 32);
	return rc;
}

int ml_digest_file(uint8_t *digest, unsigned *digest_len, uint64_t *size, int fd, const char *path,
                   const char *md_name, ml_err *err)
{
	const EVP_MD *md = EVP_get_digestbyname(md_name);
	if (!md)
		return ml_err_set(err, ML_EFAIL, "unknown digest '%s'", md_name);
	int own = -1;
	if (fd < 0) {
		own = fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ml_err_set(err, errno == ENOENT ? ML_ENOENT : ML_EIO,
			                  "cannot open '%s': %s", path, strerror(errno));
	}
	int rc = 0;
	uint64_t total = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char *buf = malloc(1 << 20);
	if (!ctx || !buf || EVP_DigestInit_ex(ctx, md, NULL) != 1) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ml_err_set(err, ML_EIO, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
			rc = ml_err_set(err, ML_EFAIL, "digest of '%s' failed", path);
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, digest, digest_len) != 1) {
		rc = ml_err_set(err, ML_EFAIL, "digest of '%s' failed", path);
		goto out;
	}
	if (size)
		*size = total;
out:
	free(buf);
	EVP_MD_CTX_free(ctx);
	if (own >= 0)
		close(own);
	return rc;
}

int ml_sha256_fd(char hex[65], uint64_t *size, int fd, const char *path, ml_err *err)
{
	uint8_t d[64];
	unsigned len = 0;
	int rc = ml_digest_file(d, &len, size, fd, path, "sha256", err);
	if (!rc)
		ml_hex_encode(hex, d, 32);
	return rc;
}

int ml_sha256_file(char hex[65], uint64_t *size, const char *path, ml_err *err)
{
	return ml_sha256_fd(hex, size, -1, path, err);
}

struct ml_sha256 {
	EVP_MD_CTX *ctx;
};

ml_sha256 *ml_sha256_new(void)
{
	ml_sha256 *h = calloc(1, sizeof(*h));
	if (h && (h->ctx = EVP_MD_CTX_new()) && EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1)
		return h;
	ml_sha256_free(h);
	return NULL;
}

int ml_sha256_reset(ml_sha256 *h)
{
	return EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1 ? 0 : ML_EFAIL;
}

int ml_sha256_update(ml_sha256 *h, const void *data, size_t n)
{
	return EVP_DigestUpdate(h->ctx, data, n) == 1 ? 0 : ML_EFAIL;
}

int ml_sha256_final(ml_sha256 *h, uint8_t out[32])
{
	unsigned len = 0;
	if (EVP_DigestFinal_ex(h->ctx, out, &len) != 1 || len != 32)
		return ML_EFAIL;
	return ml_sha256_reset(h);
}

void ml_sha256_free(ml_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}
