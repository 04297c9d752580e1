/*
 * names.c - rules about a wheel's names that one name alone cannot answer:
 * two entries that become one file after Unicode NFC normalization (UAX
 * #15) or, on a file system that folds case (and always for a Windows
 * environment), after case folding; whether a directory folds case; and
 * which entries are a wheel's own bytecode.
 *
 * A single decomposed name ("cafe" + U+0301 ".py") is an ordinary name:
 * Linux file systems store the bytes they are given, and pip and uv
 * install it. Only a pair is a problem: on macOS, on ext4 or tmpfs with
 * casefold, and for Python's own NFKC-normalized identifiers, "caf\u00e9"
 * and "cafe\u0301" are one name, so which bytes end up installed would
 * depend on the order of the entries. Normalization uses utf8proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utf8proc.h>

#include "internal.h"

static bool all_ascii(const char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (const unsigned char *p = (const unsigned char *)paths[i]; *p; p++)
			if (*p >= 0x80)
				return false;
	return true;
}

/* The comparison key of the first len bytes of s: NFC, case-folded with
 * fold. Returns a malloc'ed string, or NULL with *bad set for bytes that
 * are not UTF-8, or NULL (out of memory). */
static char *name_key(const char *s, size_t len, bool fold, bool *bad)
{
	utf8proc_uint8_t *out = NULL;
	utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
	if (fold)
		opt |= UTF8PROC_CASEFOLD;
	utf8proc_ssize_t r =
	        utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &out, opt);
	if (r < 0) {
		*bad = r != UTF8PROC_ERROR_NOMEM;
		free(out);
		return NULL;
	}
	return (char *)out;
}

/* Writes the first len bytes of s (valid UTF-8) into dst for a message,
 * every code point past ASCII as \uXXXX (or \UXXXXXXXX), so that two
 * names that look the same can be told apart. */
static void shown(char *dst, size_t sz, const char *s, size_t len)
{
	size_t j = 0;
	for (size_t i = 0; i < len && j + 11 < sz;) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
		                                      (utf8proc_ssize_t)(len - i), &cp);
		if (k <= 0)
			break;
		if (cp < 0x80)
			dst[j++] = (char)cp;
		else
			j += (size_t)snprintf(dst + j, sz - j, cp > 0xffff ? "\\U%08X" : "\\u%04X",
			                      (unsigned)cp);
		i += (size_t)k;
	}
	dst[j < sz ? j : sz - 1] = '\0';
}

int ml_entry_names_check(const char *const *paths, size_t n, bool fold, ml_err *err)
{
	/* ASCII is its own NFC form; without folding, distinct ASCII names
	 * stay distinct. A single non-ASCII name is enough to compare all:
	 * NFC maps some (U+212A KELVIN SIGN) to ASCII. */
	if (!fold && all_ascii(paths, n))
		return 0;
	mle_map keys = MLE_MAP_INIT; /* key -> index into raws */
	char **raws = NULL;
	size_t n_raws = 0, cap = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *p = paths[i];
		size_t len = strlen(p);
		/* The path and every directory it implies. */
		for (size_t end = 1; end <= len && !rc; end++) {
			if (end < len && p[end] != '/')
				continue;
			bool bad = false;
			char *key = name_key(p, end, fold, &bad);
			if (!key) {
				rc = bad ? ml_err_set(err, ML_EINTEGRITY,
				                      "entry '%.*s' is not valid UTF-8", (int)end,
				                      p)
				         : ml_err_set(err, ML_ENOMEM, "out of memory");
				break;
			}
			size_t idx;
			if (mle_map_get(&keys, key, &idx)) {
				const char *seen = raws[idx];
				if (strlen(seen) != end || memcmp(seen, p, end) != 0) {
					char a[300], b[300];
					shown(a, sizeof a, seen, strlen(seen));
					shown(b, sizeof b, p, end);
					rc = ml_err_set(
					        err, ML_EINTEGRITY,
					        "entries '%s' and '%s' are one name after %s", a, b,
					        fold ? "Unicode NFC normalization and case folding"
					             : "Unicode NFC normalization");
				}
				free(key);
				continue;
			}
			if (n_raws == cap) {
				size_t c = cap ? cap * 2 : 256;
				char **v = realloc(raws, c * sizeof *v);
				if (!v) {
					free(key);
					rc = ml_err_set(err, ML_ENOMEM, "out of memory");
					break;
				}
				raws = v;
				cap = c;
			}
			raws[n_raws] = strndup(p, end);
			if (!raws[n_raws] || mle_map_put(&keys, key, n_raws, NULL) < 0) {
				free(raws[n_raws]);
				free(key);
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
				break;
			}
			n_raws++;
			free(key);
		}
	}
	for (size_t i = 0; i < n_raws; i++)
		free(raws[i]);
	free(raws);
	mle_map_release(&keys);
	return rc;
}

bool mle_dir_folds_case(int dirfd)
{
	char lower[64], upper[64], rnd[17];
	ml_random_hex(rnd, 8);
	snprintf(lower, sizeof lower, ".mlsetup-case-probe-%s", rnd);
	for (size_t i = 0; i < sizeof upper; i++) {
		char c = lower[i];
		upper[i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
		if (!c)
			break;
	}
	int fd = openat(dirfd, lower, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	close(fd);
	struct stat a, b;
	bool folds = fstatat(dirfd, lower, &a, AT_SYMLINK_NOFOLLOW) == 0 &&
	             fstatat(dirfd, upper, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	             a.st_dev == b.st_dev;
	unlinkat(dirfd, lower, 0);
	return folds;
}

bool mle_is_own_bytecode(const char *path)
{
	size_t n = strlen(path);
	if (n < 4 || strcmp(path + n - 4, ".pyc") != 0)
		return false;
	const char *leaf = strrchr(path, '/');
	if (!leaf)
		return false;
	size_t dn = (size_t)(leaf - path);
	return dn >= 11 && memcmp(leaf - 11, "__pycache__", 11) == 0 &&
	       (dn == 11 || leaf[-12] == '/');
}
