/*
 * fuzz_index.c - libFuzzer target for the package index's project pages
 * (src/fetch/index.c): PEP 691 JSON (ml_index_parse_json) and PEP 503
 * HTML (ml_index_parse_html), with the URL resolution both use
 * (ml_url_resolve, src/fetch/http.c). Pages come from the network: any
 * index or mirror the user names.
 *
 * Every input is parsed both ways against the same page URL. Each answer
 * is 0, ML_EPARSE or ML_ENOMEM, a refusal with a message. Every file of an
 * accepted page holds together: a non-empty file name, an absolute URL (the page's
 * scheme or its own) without a fragment, a sha256 and a metadata sha256
 * that are absent or 64 lower-case hex digits (the latter only with
 * metadata), a yank reason only when yanked, a size of -1 or more, a
 * requires-python that is absent or trimmed and non-empty; a JSON page's
 * name is PEP 503 normalized. And the round trip: an accepted page,
 * written back in its own format (JSON with cJSON; HTML with every value
 * entity-escaped and the hash in the URL's fragment), parses to the same
 * files, field for field.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_index/ (JSON and
 * HTML pages shaped like the package index's and PyTorch's indexes').
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mlsetup/fetch.h"
#include "../../src/fetch/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

#define PAGE_URL "https://index.example/simple/ml-demo/"

static bool lower_hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void check_trimmed(const char *s)
{
	if (!s)
		return;
	size_t n = strlen(s);
	CHECK(n > 0 && !is_space(s[0]) && !is_space(s[n - 1]));
}

static void check_project(const ml_project *p, bool json)
{
	if (json && p->name) {
		char *again = ml_pep503_normalize(p->name, strlen(p->name));
		CHECK(again && strcmp(again, p->name) == 0);
		free(again);
	}
	if (!json)
		CHECK(p->name == NULL);
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_index_file *f = &p->files[i];
		/* Any text: an HTML name is the URL's last segment, percent-
		 * decoded ("%2F" gives '/'), and every use parses it as a wheel
		 * name first (ml_wheel_filename_parse refuses directories). */
		CHECK(f->filename && f->filename[0]);
		CHECK(f->url && f->url[0] && !strchr(f->url, '#'));
		/* absolute: a scheme, then ':' */
		const char *colon = strchr(f->url, ':');
		CHECK(colon && colon > f->url);
		for (const char *c = f->url; c < colon; c++)
			CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (c > f->url && ((*c >= '0' && *c <= '9') || strchr("+-.", *c))));
		CHECK(!f->sha256 || lower_hex64(f->sha256));
		CHECK(!f->core_metadata_sha256 || lower_hex64(f->core_metadata_sha256));
		CHECK(!f->core_metadata_sha256 || f->has_core_metadata);
		CHECK(!f->yanked_reason || f->yanked);
		CHECK(f->size >= -1);
		check_trimmed(f->requires_python);
		check_trimmed(f->yanked_reason);
	}
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_same(const ml_project *a, const ml_project *b)
{
	CHECK(same_str(a->name, b->name));
	CHECK(a->n_files == b->n_files);
	for (size_t i = 0; i < a->n_files; i++) {
		const ml_index_file *x = &a->files[i], *y = &b->files[i];
		CHECK(same_str(x->filename, y->filename));
		CHECK(same_str(x->url, y->url));
		CHECK(same_str(x->sha256, y->sha256));
		CHECK(same_str(x->requires_python, y->requires_python));
		CHECK(x->size == y->size);
		CHECK(x->yanked == y->yanked);
		CHECK(same_str(x->yanked_reason, y->yanked_reason));
		CHECK(x->has_core_metadata == y->has_core_metadata);
		CHECK(same_str(x->core_metadata_sha256, y->core_metadata_sha256));
	}
}

/* --- writing a page back ------------------------------------------------------- */

static char *render_json(const ml_project *p)
{
	cJSON *root = cJSON_CreateObject(), *files = cJSON_CreateArray();
	CHECK(root && files);
	cJSON *meta = cJSON_AddObjectToObject(root, "meta");
	CHECK(meta && cJSON_AddStringToObject(meta, "api-version", "1.1"));
	if (p->name)
		CHECK(cJSON_AddStringToObject(root, "name", p->name));
	cJSON_AddItemToObject(root, "files", files);
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_index_file *f = &p->files[i];
		cJSON *o = cJSON_CreateObject();
		CHECK(o);
		cJSON_AddItemToArray(files, o);
		CHECK(cJSON_AddStringToObject(o, "filename", f->filename));
		CHECK(cJSON_AddStringToObject(o, "url", f->url));
		cJSON *h = cJSON_AddObjectToObject(o, "hashes");
		CHECK(h);
		if (f->sha256)
			CHECK(cJSON_AddStringToObject(h, "sha256", f->sha256));
		if (f->size >= 0)
			CHECK(cJSON_AddNumberToObject(o, "size", (double)f->size));
		if (f->requires_python)
			CHECK(cJSON_AddStringToObject(o, "requires-python", f->requires_python));
		if (f->yanked_reason)
			CHECK(cJSON_AddStringToObject(o, "yanked", f->yanked_reason));
		else
			CHECK(cJSON_AddBoolToObject(o, "yanked", f->yanked));
		if (f->core_metadata_sha256) {
			cJSON *m = cJSON_AddObjectToObject(o, "core-metadata");
			CHECK(m && cJSON_AddStringToObject(m, "sha256", f->core_metadata_sha256));
		} else {
			CHECK(cJSON_AddBoolToObject(o, "core-metadata", f->has_core_metadata));
		}
	}
	char *s = cJSON_PrintUnformatted(root);
	CHECK(s);
	cJSON_Delete(root);
	return s;
}

/* Appends s with &, <, >, " and ' as character references. */
static void html_escaped(ml_buf *b, const char *s)
{
	for (; *s; s++) {
		int rc;
		switch (*s) {
		case '&':
			rc = ml_buf_puts(b, "&amp;");
			break;
		case '<':
			rc = ml_buf_puts(b, "&lt;");
			break;
		case '>':
			rc = ml_buf_puts(b, "&gt;");
			break;
		case '"':
			rc = ml_buf_puts(b, "&quot;");
			break;
		case '\'':
			rc = ml_buf_puts(b, "&#39;");
			break;
		default:
			rc = ml_buf_add(b, s, 1);
		}
		CHECK(rc == 0);
	}
}

static char *render_html(const ml_project *p)
{
	ml_buf b = ML_BUF_INIT;
	CHECK(ml_buf_puts(&b, "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" "
	                      "content=\"1.1\"></head><body>\n") == 0);
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_index_file *f = &p->files[i];
		CHECK(ml_buf_puts(&b, "<a href=\"") == 0);
		html_escaped(&b, f->url);
		if (f->sha256) {
			CHECK(ml_buf_puts(&b, "#sha256=") == 0);
			html_escaped(&b, f->sha256);
		}
		CHECK(ml_buf_puts(&b, "\"") == 0);
		if (f->requires_python) {
			CHECK(ml_buf_puts(&b, " data-requires-python=\"") == 0);
			html_escaped(&b, f->requires_python);
			CHECK(ml_buf_puts(&b, "\"") == 0);
		}
		if (f->yanked) {
			CHECK(ml_buf_puts(&b, " data-yanked=\"") == 0);
			if (f->yanked_reason)
				html_escaped(&b, f->yanked_reason);
			CHECK(ml_buf_puts(&b, "\"") == 0);
		}
		if (f->core_metadata_sha256)
			CHECK(ml_buf_printf(&b, " data-core-metadata=\"sha256=%s\"",
			                    f->core_metadata_sha256) == 0);
		else if (f->has_core_metadata)
			CHECK(ml_buf_puts(&b, " data-core-metadata=\"true\"") == 0);
		CHECK(ml_buf_puts(&b, ">") == 0);
		html_escaped(&b, f->filename);
		CHECK(ml_buf_puts(&b, "</a><br />\n") == 0);
	}
	CHECK(ml_buf_puts(&b, "</body></html>\n") == 0);
	char *s = ml_buf_detach(&b);
	CHECK(s);
	return s;
}

static void fuzz_page(const uint8_t *data, size_t size, bool json)
{
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = json ? ml_index_parse_json(&p, PAGE_URL, (const char *)data, size, &err)
	              : ml_index_parse_html(&p, PAGE_URL, (const char *)data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	if (rc) {
		CHECK(err.msg[0]);
		return;
	}
	check_project(p, json);
	/* HTML file names come from the URL: one that is not its URL's last
	 * segment (JSON names freely) cannot be written back as HTML. */
	char *page = json ? render_json(p) : render_html(p);
	ml_project *again = NULL;
	rc = json ? ml_index_parse_json(&again, PAGE_URL, page, strlen(page), &err)
	          : ml_index_parse_html(&again, PAGE_URL, page, strlen(page), &err);
	CHECK(rc == 0);
	check_same(p, again);
	ml_project_free(again);
	free(page);
	ml_project_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_page(data, size, true);
	fuzz_page(data, size, false);
	return 0;
}
