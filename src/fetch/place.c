/*
 * place.c - verified files out of the cache into a directory of the
 * user's (`mlsetup download -d DIR`): each by hard link or copy and a
 * rename, never partial, plus a PEP 503 index.html so the directory is a
 * pip --find-links source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/fetch.h"

/* Percent-encodes a file name for an href (RFC 3986 unreserved kept). */
static void href_escape(ml_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			ml_buf_add(b, p, 1);
		else
			ml_buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

static void html_escape(ml_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			ml_buf_puts(b, "&amp;");
			break;
		case '<':
			ml_buf_puts(b, "&lt;");
			break;
		case '>':
			ml_buf_puts(b, "&gt;");
			break;
		case '"':
			ml_buf_puts(b, "&quot;");
			break;
		default:
			ml_buf_add(b, s, 1);
		}
	}
}

static int cmp_downloads(const void *a, const void *b)
{
	const ml_download *x = *(const ml_download *const *)a, *y = *(const ml_download *const *)b;
	return strcmp(x->name, y->name);
}

/* Writes dir/index.html: a PEP 503 page of the done items, with #sha256=
 * fragments, names sorted. */
static int write_index(const char *dir, const ml_download *items, size_t n, ml_err *err)
{
	const ml_download **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].done)
			v[k++] = &items[i];
	qsort(v, k, sizeof(*v), cmp_downloads);
	ml_buf b = ML_BUF_INIT;
	ml_buf_puts(&b, "<!DOCTYPE html>\n<html>\n  <head>\n"
	                "    <meta name=\"pypi:repository-version\" content=\"1.0\">\n"
	                "    <title>Links for mlsetup download</title>\n  </head>\n  <body>\n");
	for (size_t i = 0; i < k; i++) {
		ml_buf_puts(&b, "    <a href=\"");
		href_escape(&b, v[i]->name);
		ml_buf_printf(&b, "#sha256=%s\">", v[i]->sha256);
		html_escape(&b, v[i]->name);
		ml_buf_puts(&b, "</a><br/>\n");
	}
	int rc = ml_buf_puts(&b, "  </body>\n</html>\n");
	free(v);
	char path[4200];
	if (rc) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	} else if (ml_pathf(path, sizeof(path), "%s/index.html", dir)) {
		rc = ml_err_set(err, ML_EIO, "path too long: '%s'", dir);
	} else {
		int e = ml_fs_write_atomic(path, b.data, b.len, 0644);
		if (e)
			rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	}
	ml_buf_release(&b);
	return rc;
}

int ml_fetch_place(const char *dir, const ml_download *items, size_t n, bool index, ml_err *err)
{
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = items[i].done;
	if (!any)
		return 0;
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	for (size_t i = 0; i < n; i++) {
		if (!items[i].done)
			continue;
		char dst[4200];
		if (ml_pathf(dst, sizeof(dst), "%s/%s", dir, items[i].name))
			return ml_err_set(err, ML_EIO, "path too long in '%s'", dir);
		if ((e = ml_fs_link_or_copy(items[i].path, dst, NULL)) != 0)
			return ml_err_set(err, ML_EIO, "cannot write '%s': %s", dst, strerror(-e));
	}
	return index ? write_index(dir, items, n, err) : 0;
}
