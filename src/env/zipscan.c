/*
 * zipscan.c - our own reading of a zip file's structure (PKWARE APPNOTE
 * 6.3.x sections 4.3.6-4.3.16, 4.5.3), done before libarchive reads a
 * wheel. It is what lets extraction refuse what a tolerant reader would
 * accept: data before the first entry or after the end record (trailing
 * data, zip/tar hybrids), entries that overlap or hide bytes between them,
 * central and local headers that disagree about a name, a CRC-32 or a
 * size, data descriptors (APPNOTE 4.3.9) that disagree with the central
 * directory, encryption, multi-disk archives, and more entries than the
 * cap: a reader that trusts the local values and one that trusts the
 * central ones would otherwise install different bytes. For the same
 * reason an Info-ZIP Unicode Path extra field (0x7075) that names anything
 * but its header's name is refused (check_unicode_path). It also keeps each
 * entry's raw name bytes, which is the only place a NUL inside a name can
 * be seen (libarchive cuts names at NUL).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SIG_LOCAL    0x04034b50u
#define SIG_CENTRAL  0x02014b50u
#define SIG_EOCD     0x06054b50u
#define SIG_EOCD64   0x06064b50u
#define SIG_LOCATOR  0x07064b50u
#define SIG_DESC     0x08074b50u
#define EOCD_LEN     22u
#define LOCATOR_LEN  20u
#define EOCD64_LEN   56u
#define CENTRAL_LEN  46u
#define LOCAL_LEN    30u
#define MAX_COMMENT  65535u
#define FLAG_ENCRYPT 0x0001u
#define FLAG_DESC    0x0008u
#define FLAG_STRONG  0x0040u

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off, const char *what, ml_err *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ml_err_set(err, ML_EIO, "cannot read '%s': %s", what,
			                  strerror(errno));
		if (r == 0)
			return ml_err_set(err, ML_EINTEGRITY, "zip '%s' is truncated", what);
		got += (size_t)r;
	}
	return 0;
}

static int refuse(ml_err *err, const char *what, const char *why)
{
	ml_err_set(err, ML_EINTEGRITY, "archive '%s' refused: %s", what, why);
	ml_err_hint(err,
	            "the file is not a plain zip archive; download it again from a trusted index");
	return ML_EINTEGRITY;
}

/* As refuse(), naming the entry e ("entry '<name>' <why>"), shown with
 * mle_printable() (control characters, bidirectional controls and bytes
 * that are not UTF-8 escaped). */
static int refuse_entry(ml_err *err, const char *what, const mle_zip_entry *e, const char *why)
{
	char shown[300], msg[1024];
	mle_printable(shown, sizeof shown, e->name, e->name_len);
	snprintf(msg, sizeof msg, "entry '%s' %s", shown, why);
	return refuse(err, what, msg);
}

/* Checks the extra fields (n bytes at extra) of entry e's local or
 * central header (where: "local", "central") for Info-ZIP Unicode Path
 * fields (APPNOTE 6.3.x 4.6.9: header id 0x7075; a version byte, 1; the
 * CRC-32 of the header's name; the name in UTF-8). A reader that honours
 * the field sees that name instead of the header's (Info-ZIP's unzip when
 * the header name is not flagged UTF-8 and the CRC-32 matches it; other
 * readers without looking at the CRC-32), so what one tool lists would
 * not be what is installed: a field is accepted only when it holds
 * exactly the header's name bytes, whatever its CRC-32 says. The local and central headers each have to
 * agree with their own name, which is the same bytes (check_locals), so
 * they also agree with each other. Extra fields must tile the extra area
 * (a field that runs past its end is refused: where the next one starts
 * would be a guess); fewer than 4 bytes left over are ignored as padding.
 * Returns 0 or ML_EINTEGRITY naming the entry and the other name. */
static int check_unicode_path(const mle_zip_entry *e, const uint8_t *extra, size_t n,
                              const char *where, const char *what, ml_err *err)
{
	char why[700], other[300];
	for (size_t i = 0; i + 4 <= n; i += 4 + (size_t)le16(extra + i + 2)) {
		uint16_t id = le16(extra + i), len = le16(extra + i + 2);
		const uint8_t *p = extra + i + 4;
		if (i + 4 + len > n)
			snprintf(why, sizeof why, "has a malformed extra field in its %s header",
			         where);
		else if (id != 0x7075)
			continue;
		else if (len < 5)
			snprintf(why, sizeof why,
			         "has a malformed Info-ZIP Unicode Path extra field (0x7075) in "
			         "its %s header",
			         where);
		else if (p[0] != 1)
			snprintf(why, sizeof why,
			         "has an Info-ZIP Unicode Path extra field (0x7075) of version %u "
			         "in its %s header (only version 1 is defined)",
			         (unsigned)p[0], where);
		else if ((size_t)len - 5 == e->name_len && memcmp(p + 5, e->name, len - 5) == 0)
			continue;
		else {
			mle_printable(other, sizeof other, (const char *)p + 5, (size_t)len - 5);
			snprintf(why, sizeof why,
			         "has an Info-ZIP Unicode Path extra field (0x7075) in its %s "
			         "header that names '%s': zip readers that honour the field "
			         "would see another file",
			         where, other);
		}
		return refuse_entry(err, what, e, why);
	}
	return 0;
}

/* Finds the end-of-central-directory record that ends exactly at the end
 * of the file (its comment running to the last byte). */
static int find_eocd(uint64_t *eocd_off, uint8_t rec[EOCD_LEN], int fd, uint64_t size,
                     const char *what, ml_err *err)
{
	if (size < EOCD_LEN)
		return refuse(err, what, "too short to be a zip archive");
	uint64_t span = size < EOCD_LEN + MAX_COMMENT ? size : EOCD_LEN + MAX_COMMENT;
	uint8_t *tail = malloc(span);
	if (!tail)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = read_at(fd, tail, span, size - span, what, err);
	if (rc) {
		free(tail);
		return rc;
	}
	bool any_sig = false;
	for (uint64_t i = span - EOCD_LEN + 1; i-- > 0;) {
		if (le32(tail + i) != SIG_EOCD)
			continue;
		any_sig = true;
		if (i + EOCD_LEN + le16(tail + i + 20) == span) {
			memcpy(rec, tail + i, EOCD_LEN);
			*eocd_off = size - span + i;
			free(tail);
			return 0;
		}
	}
	free(tail);
	return refuse(err, what,
	              any_sig ? "data after the end of the zip archive (trailing data)"
	                      : "no end-of-central-directory record: not a zip archive");
}

/* Applies the Zip64 extended information extra field (APPNOTE 4.5.3) to
 * the fields saturated in the central header. */
static int apply_zip64(mle_zip_entry *e, const uint8_t *extra, size_t n, bool need_u, bool need_c,
                       bool need_o, const char *what, ml_err *err)
{
	for (size_t i = 0; i + 4 <= n;) {
		uint16_t id = le16(extra + i), len = le16(extra + i + 2);
		if (i + 4 + len > n)
			return refuse(err, what, "malformed extra field in the central directory");
		if (id == 0x0001) {
			const uint8_t *p = extra + i + 4, *end = p + len;
			if (need_u) {
				if (p + 8 > end)
					goto bad;
				e->usize = le64(p);
				p += 8;
			}
			if (need_c) {
				if (p + 8 > end)
					goto bad;
				e->csize = le64(p);
				p += 8;
			}
			if (need_o) {
				if (p + 8 > end)
					goto bad;
				e->local_offset = le64(p);
			}
			return 0;
		}
		i += 4 + (size_t)len;
	}
	if (!need_u && !need_c && !need_o)
		return 0;
bad:
	return refuse(err, what, "an entry lacks its zip64 sizes");
}

static int cmp_offset(const void *a, const void *b)
{
	const mle_zip_entry *x = *(mle_zip_entry *const *)a;
	const mle_zip_entry *y = *(mle_zip_entry *const *)b;
	return x->local_offset < y->local_offset ? -1 : x->local_offset > y->local_offset;
}

/* The sizes a local header's Zip64 extra field (APPNOTE 4.5.3) gives for
 * the fields saturated at 0xFFFFFFFF. Returns false when one is missing. */
static bool local_zip64(uint64_t *usize, uint64_t *csize, const uint8_t *extra, size_t n)
{
	for (size_t i = 0; i + 4 <= n;) {
		uint16_t id = le16(extra + i), len = le16(extra + i + 2);
		if (i + 4 + len > n)
			return false;
		if (id == 0x0001) {
			const uint8_t *p = extra + i + 4, *end = p + len;
			if (*usize == 0xFFFFFFFFu) {
				if (p + 8 > end)
					return false;
				*usize = le64(p);
				p += 8;
			}
			if (*csize == 0xFFFFFFFFu) {
				if (p + 8 > end)
					return false;
				*csize = le64(p);
			}
			return true;
		}
		i += 4 + (size_t)len;
	}
	return *usize != 0xFFFFFFFFu && *csize != 0xFFFFFFFFu;
}

/* Checks the data descriptor of e, the gap bytes (12, 16, 20 or 24) at
 * offset off: an optional signature, the CRC-32, then the compressed and
 * uncompressed sizes (4 bytes each, or 8 with Zip64). All three must be
 * the central directory's. */
static int check_descriptor(const mle_zip_entry *e, int fd, uint64_t off, uint64_t gap,
                            const char *what, ml_err *err)
{
	uint8_t d[24];
	int rc = read_at(fd, d, (size_t)gap, off, what, err);
	if (rc)
		return rc;
	size_t p = 0;
	if (gap == 16 || gap == 24) {
		if (le32(d) != SIG_DESC)
			return refuse_entry(err, what, e, "has a malformed data descriptor");
		p = 4;
	}
	bool wide = gap == 20 || gap == 24;
	uint64_t csize = wide ? le64(d + p + 4) : le32(d + p + 4);
	uint64_t usize = wide ? le64(d + p + 12) : le32(d + p + 8);
	if (le32(d + p) != e->crc || csize != e->csize || usize != e->usize)
		return refuse_entry(err, what, e,
		                    "has a data descriptor that disagrees with the central "
		                    "directory (CRC-32 or sizes)");
	return 0;
}

/* Walks the entries in file order: each local header must agree with its
 * central header (name, method, flags; CRC-32 and sizes unless a data
 * descriptor follows the data, which must agree instead), and the entries
 * must tile the file from offset 0 to the central directory without
 * overlaps or hidden bytes. Sets each entry's data_offset. */
static int check_locals(mle_zip *z, int fd, uint64_t cd_off, const char *what, ml_err *err)
{
	if (z->n == 0)
		return cd_off == 0 ? 0 : refuse(err, what, "data before the central directory");
	mle_zip_entry **order = malloc(z->n * sizeof *order);
	uint8_t *name = malloc(2 * 65536);
	int rc = 0;
	if (!order || !name) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < z->n; i++)
		order[i] = &z->v[i];
	qsort(order, z->n, sizeof *order, cmp_offset);
	if (order[0]->local_offset != 0) {
		rc = refuse(err, what, "data before the first entry (a zip/tar hybrid?)");
		goto out;
	}
	for (size_t i = 0; i < z->n; i++) {
		mle_zip_entry *e = order[i];
		uint8_t h[LOCAL_LEN];
		if (e->local_offset > cd_off || cd_off - e->local_offset < LOCAL_LEN) {
			rc = refuse(err, what, "an entry points outside the archive");
			goto out;
		}
		if ((rc = read_at(fd, h, LOCAL_LEN, e->local_offset, what, err)))
			goto out;
		if (le32(h) != SIG_LOCAL) {
			rc = refuse(
			        err, what,
			        "an entry has no local header where the central directory says");
			goto out;
		}
		uint16_t nlen = le16(h + 26), xlen = le16(h + 28);
		if (le16(h + 8) != e->method ||
		    ((le16(h + 6) ^ e->flags) & (FLAG_ENCRYPT | FLAG_DESC))) {
			rc = refuse(err, what, "local and central headers of an entry disagree");
			goto out;
		}
		if (cd_off - e->local_offset - LOCAL_LEN < (uint64_t)nlen + xlen) {
			rc = refuse(err, what, "an entry's data runs into the central directory");
			goto out;
		}
		if ((rc = read_at(fd, name, (size_t)nlen + xlen, e->local_offset + LOCAL_LEN, what,
		                  err)))
			goto out;
		if (nlen != e->name_len || memcmp(name, e->name, nlen) != 0) {
			char other[300], why[400];
			mle_printable(other, sizeof other, (const char *)name, nlen);
			snprintf(why, sizeof why,
			         "has another name in its local header: '%s' (an entry's local "
			         "name differs from its central name)",
			         other);
			rc = refuse_entry(err, what, e, why);
			goto out;
		}
		if ((rc = check_unicode_path(e, name + nlen, xlen, "local", what, err)))
			goto out;
		if (!(e->flags & FLAG_DESC)) {
			uint64_t lu = le32(h + 22), lc = le32(h + 18);
			if (!local_zip64(&lu, &lc, name + nlen, xlen) || le32(h + 14) != e->crc ||
			    lc != e->csize || lu != e->usize) {
				rc = refuse_entry(
				        err, what, e,
				        "has a local header that disagrees with the central "
				        "directory (CRC-32 or sizes)");
				goto out;
			}
		}
		uint64_t end = e->local_offset + LOCAL_LEN + nlen + xlen;
		if (end > cd_off || cd_off - end < e->csize) {
			rc = refuse(err, what, "an entry's data runs into the central directory");
			goto out;
		}
		e->data_offset = end;
		end += e->csize;
		uint64_t next = i + 1 < z->n ? order[i + 1]->local_offset : cd_off;
		if (next < end) {
			rc = refuse(err, what, "entries overlap");
			goto out;
		}
		uint64_t gap = next - end;
		bool ok = (e->flags & FLAG_DESC)
		                  ? (gap == 12 || gap == 16 || gap == 20 || gap == 24)
		                  : gap == 0;
		if (!ok) {
			rc = refuse(err, what, "unaccounted bytes between entries");
			goto out;
		}
		if ((e->flags & FLAG_DESC) && (rc = check_descriptor(e, fd, end, gap, what, err)))
			goto out;
	}
out:
	free(order);
	free(name);
	return rc;
}

int mle_zip_scan(mle_zip *out, int fd, uint64_t size, uint64_t max_entries, const char *what,
                 ml_err *err)
{
	uint8_t eocd[EOCD_LEN] = {0}, sig[4];
	uint64_t eocd_off = 0;
	int rc = find_eocd(&eocd_off, eocd, fd, size, what, err);
	if (rc)
		return rc;
	if ((rc = read_at(fd, sig, 4, 0, what, err)))
		return rc;
	if (le32(sig) != SIG_LOCAL && !(le32(sig) == SIG_EOCD && eocd_off == 0))
		return refuse(err, what, "does not start with a zip entry (a zip/tar hybrid?)");
	if (le16(eocd + 4) != 0 || le16(eocd + 6) != 0 || le16(eocd + 8) != le16(eocd + 10))
		return refuse(err, what, "multi-disk zip archives are not supported");

	uint64_t count = le16(eocd + 10), cd_size = le32(eocd + 12), cd_off = le32(eocd + 16);
	uint64_t cd_end = eocd_off; /* where the central directory must end */
	if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
		uint8_t loc[LOCATOR_LEN], e64[EOCD64_LEN];
		if (eocd_off < LOCATOR_LEN)
			return refuse(err, what, "zip64 locator missing");
		uint64_t loc_off = eocd_off - LOCATOR_LEN;
		if ((rc = read_at(fd, loc, LOCATOR_LEN, loc_off, what, err)))
			return rc;
		if (le32(loc) != SIG_LOCATOR || le32(loc + 4) != 0 || le32(loc + 16) > 1)
			return refuse(err, what, "zip64 locator missing or multi-disk");
		uint64_t e64_off = le64(loc + 8);
		if (e64_off > loc_off || loc_off - e64_off < EOCD64_LEN)
			return refuse(err, what, "zip64 end record out of place");
		if ((rc = read_at(fd, e64, EOCD64_LEN, e64_off, what, err)))
			return rc;
		if (le32(e64) != SIG_EOCD64 || le64(e64 + 4) + 12 != loc_off - e64_off)
			return refuse(err, what, "zip64 end record malformed or followed by data");
		if (le32(e64 + 16) != 0 || le32(e64 + 20) != 0 || le64(e64 + 24) != le64(e64 + 32))
			return refuse(err, what, "multi-disk zip archives are not supported");
		count = le64(e64 + 32);
		cd_size = le64(e64 + 40);
		cd_off = le64(e64 + 48);
		cd_end = e64_off;
	}
	if (cd_off > cd_end || cd_end - cd_off != cd_size)
		return refuse(err, what,
		              "central directory out of place (data before the end record)");
	if (count > max_entries) {
		ml_err_set(err, ML_EINTEGRITY,
		           "archive '%s' refused: %llu entries, more than the cap of %llu", what,
		           (unsigned long long)count, (unsigned long long)max_entries);
		ml_err_hint(err, "a wheel this large is not expected; check where it came from");
		return ML_EINTEGRITY;
	}
	if (count > cd_size / CENTRAL_LEN)
		return refuse(err, what, "central directory too small for its entry count");

	uint8_t *cd = malloc(cd_size ? cd_size : 1);
	mle_zip z = {calloc(count ? count : 1, sizeof(mle_zip_entry)), 0, 0};
	if (!cd || !z.v) {
		free(cd);
		free(z.v);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if ((rc = read_at(fd, cd, cd_size, cd_off, what, err)))
		goto fail;
	uint64_t p = 0;
	for (uint64_t i = 0; i < count; i++) {
		if (cd_size - p < CENTRAL_LEN || le32(cd + p) != SIG_CENTRAL) {
			rc = refuse(err, what, "malformed central directory");
			goto fail;
		}
		const uint8_t *h = cd + p;
		size_t nlen = le16(h + 28), xlen = le16(h + 30), clen = le16(h + 32);
		if (cd_size - p - CENTRAL_LEN < nlen + xlen + clen) {
			rc = refuse(err, what, "malformed central directory");
			goto fail;
		}
		mle_zip_entry *e = &z.v[z.n];
		e->made_by = le16(h + 4);
		e->flags = le16(h + 8);
		e->method = le16(h + 10);
		e->crc = le32(h + 16);
		e->csize = le32(h + 20);
		e->usize = le32(h + 24);
		e->ext_attr = le32(h + 38);
		e->local_offset = le32(h + 42);
		e->name_len = nlen;
		if (!(e->name = malloc(nlen + 1))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto fail;
		}
		memcpy(e->name, h + CENTRAL_LEN, nlen);
		e->name[nlen] = '\0';
		z.n++;
		if (le16(h + 34) != 0 && le16(h + 34) != 0xFFFF) {
			rc = refuse(err, what, "multi-disk zip archives are not supported");
			goto fail;
		}
		if (e->flags & (FLAG_ENCRYPT | FLAG_STRONG)) {
			rc = refuse(err, what, "encrypted entries");
			goto fail;
		}
		rc = check_unicode_path(e, h + CENTRAL_LEN + nlen, xlen, "central", what, err);
		if (rc)
			goto fail;
		rc = apply_zip64(e, h + CENTRAL_LEN + nlen, xlen, e->usize == 0xFFFFFFFFu,
		                 e->csize == 0xFFFFFFFFu, e->local_offset == 0xFFFFFFFFu, what,
		                 err);
		if (rc)
			goto fail;
		if (e->usize > UINT64_MAX - z.total_usize) {
			rc = refuse(err, what, "declared sizes overflow");
			goto fail;
		}
		z.total_usize += e->usize;
		p += CENTRAL_LEN + nlen + xlen + clen;
	}
	if (p != cd_size) {
		rc = refuse(err, what,
		            "central directory has bytes its entries do not account for");
		goto fail;
	}
	if ((rc = check_locals(&z, fd, cd_off, what, err)))
		goto fail;
	free(cd);
	*out = z;
	return 0;
fail:
	free(cd);
	mle_zip_release(&z);
	return rc;
}

void mle_zip_release(mle_zip *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		free(z->v[i].name);
	free(z->v);
	z->v = NULL;
	z->n = 0;
	z->total_usize = 0;
}

unsigned mle_zip_unix_mode(const mle_zip_entry *e)
{
	return (e->made_by >> 8) == 3 ? (unsigned)(e->ext_attr >> 16) : 0;
}
