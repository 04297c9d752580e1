/*
 * place.c - verified files out of the cache into a directory of the
 * user's (`mlsetup download -d DIR`): each by hard link or copy and a
 * rename, never partial, plus a PEP 503 index.html so the directory is a
 * pip --find-links source; and a static PEP 503 "simple" tree over such a
 * directory (`mlsetup bundle`), so any static web server is an index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

/* The done items sorted by name, in a new array (caller frees). */
static const ml_download **sorted_done(const ml_download *items, size_t n, size_t *k)
{
	const ml_download **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	*k = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].done)
			v[(*k)++] = &items[i];
	qsort(v, *k, sizeof(*v), cmp_downloads);
	return v;
}

static void page_begin(ml_buf *b, const char *title)
{
	ml_buf_puts(b, "<!DOCTYPE html>\n<html>\n  <head>\n"
	               "    <meta name=\"pypi:repository-version\" content=\"1.0\">\n"
	               "    <title>");
	html_escape(b, title);
	ml_buf_puts(b, "</title>\n  </head>\n  <body>\n");
}

/* An anchor to prefix + name (name percent-encoded), with a #sha256=
 * fragment when sha256 is given. */
static void page_link(ml_buf *b, const char *prefix, const char *name, const char *sha256)
{
	ml_buf_printf(b, "    <a href=\"%s", prefix);
	href_escape(b, name);
	if (sha256)
		ml_buf_printf(b, "#sha256=%s", sha256);
	ml_buf_puts(b, "\">");
	html_escape(b, name);
	ml_buf_puts(b, "</a><br/>\n");
}

/* Ends the page in b and writes it atomically to path. */
static int page_write(ml_buf *b, const char *path, ml_err *err)
{
	int rc = ml_buf_puts(b, "  </body>\n</html>\n");
	if (rc)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int e = ml_fs_write_atomic(path, b->data, b->len, 0644);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	return 0;
}

/* Writes dir/index.html: a PEP 503 page of the done items, with #sha256=
 * fragments, names sorted. */
static int write_index(const char *dir, const ml_download *items, size_t n, ml_err *err)
{
	size_t k = 0;
	const ml_download **v = sorted_done(items, n, &k);
	if (!v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_buf b = ML_BUF_INIT;
	page_begin(&b, "Links for mlsetup download");
	for (size_t i = 0; i < k; i++)
		page_link(&b, "", v[i]->name, v[i]->sha256);
	free(v);
	char path[4200];
	int rc = ml_pathf(path, sizeof(path), "%s/index.html", dir)
	                 ? ml_err_set(err, ML_EIO, "path too long: '%s'", dir)
	                 : page_write(&b, path, err);
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

/* The PEP 503 project of a wheel file name: the distribution before the
 * first '-' (PEP 427 escapes '-' in names), normalized. NULL: no memory. */
static char *project_of(const char *filename)
{
	return ml_pep503_normalize(filename, strcspn(filename, "-"));
}

typedef struct simple_entry {
	char *project;
	const ml_download *d;
} simple_entry;

static int cmp_entries(const void *a, const void *b)
{
	const simple_entry *x = a, *y = b;
	int c = strcmp(x->project, y->project);
	return c ? c : strcmp(x->d->name, y->d->name);
}

/* Writes dir/simple/<project>/index.html for entries e[0..n) (one project). */
static int write_project(const char *dir, const char *files_rel, const simple_entry *e, size_t n,
                         ml_err *err)
{
	char pdir[4200], path[4300], prefix[512];
	if (ml_pathf(pdir, sizeof(pdir), "%s/simple/%s", dir, e[0].project) ||
	    ml_pathf(path, sizeof(path), "%s/index.html", pdir) ||
	    ml_pathf(prefix, sizeof(prefix), "../../%s/", files_rel))
		return ml_err_set(err, ML_EIO, "path too long in '%s'", dir);
	int fe = ml_fs_mkdirs(pdir, 0755);
	if (fe)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", pdir, strerror(-fe));
	ml_buf b = ML_BUF_INIT;
	char title[300];
	snprintf(title, sizeof(title), "Links for %s", e[0].project);
	page_begin(&b, title);
	for (size_t i = 0; i < n; i++)
		page_link(&b, prefix, e[i].d->name, e[i].d->sha256);
	int rc = page_write(&b, path, err);
	ml_buf_release(&b);
	return rc;
}

int ml_fetch_place_simple(const char *dir, const char *files_rel, const ml_download *items,
                          size_t n, ml_err *err)
{
	simple_entry *e = calloc(n ? n : 1, sizeof(*e));
	ml_buf root = ML_BUF_INIT;
	size_t k = 0;
	int rc = e ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < n; i++) {
		if (!items[i].done)
			continue;
		e[k].d = &items[i];
		if (!(e[k++].project = project_of(items[i].name)))
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (!rc)
		qsort(e, k, sizeof(*e), cmp_entries);
	char path[4200];
	if (!rc && ml_pathf(path, sizeof(path), "%s/simple/index.html", dir))
		rc = ml_err_set(err, ML_EIO, "path too long: '%s'", dir);
	if (!rc)
		page_begin(&root, "Simple index");
	for (size_t i = 0; !rc && i < k;) {
		/* the files of one project, each name once; one name with two
		 * contents is an error */
		simple_entry *p = calloc(k - i, sizeof(*p));
		size_t j = i, np = 0;
		if (!p)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		for (; !rc && j < k && strcmp(e[j].project, e[i].project) == 0; j++) {
			if (np && strcmp(p[np - 1].d->name, e[j].d->name) == 0) {
				if (strcmp(p[np - 1].d->sha256, e[j].d->sha256) != 0)
					rc = ml_err_set(
					        err, ML_EINTEGRITY,
					        "two files named '%s' differ: sha256 %s and %s",
					        e[j].d->name, p[np - 1].d->sha256, e[j].d->sha256);
				continue;
			}
			p[np++] = e[j];
		}
		if (!rc)
			rc = write_project(dir, files_rel, p, np, err);
		if (!rc) {
			ml_buf_puts(&root, "    <a href=\"");
			href_escape(&root, e[i].project);
			ml_buf_puts(&root, "/\">");
			html_escape(&root, e[i].project);
			ml_buf_puts(&root, "</a><br/>\n");
		}
		free(p);
		i = j;
	}
	if (!rc)
		rc = page_write(&root, path, err);
	for (size_t i = 0; e && i < k; i++)
		free(e[i].project);
	free(e);
	ml_buf_release(&root);
	return rc;
}
