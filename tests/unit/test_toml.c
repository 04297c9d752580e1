/*
 * test_toml.c - specs for the TOML 1.0 reader (src/pkg/toml.c): every
 * kind of value, tables, arrays of tables, dotted keys, and refusals that
 * name the line; plus a property test against Python's tomllib: random
 * documents (valid ones and mutated ones) from tests/unit/toml_oracle.py
 * are parsed by both, and the two must agree on whether each document is
 * TOML and, when it is, on every value.
 *
 * `test_toml --dump-dir DIR` is the oracle's side door: it parses every
 * DIR/N.toml and writes DIR/N.json (the document as tagged JSON, the
 * toml-test convention: tables are objects, arrays are arrays, scalars
 * {"type": ..., "value": "<text>"}) or DIR/N.err (the message).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "win_skip.h"

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

static const char *self_path;

static ml_toml *parse_ok(const char *text)
{
	ml_toml *t = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_toml_parse(&t, "t.toml", text, strlen(text), &err) != 0)
		fail_msg("parse failed: %s\n--- text:\n%s", err.msg, text);
	assert_int_equal(t->kind, ML_TOML_TABLE);
	return t;
}

static ml_err parse_bad(const char *text)
{
	ml_toml *t = (ml_toml *)0x1;
	ml_err err = ML_ERR_INIT;
	int rc = ml_toml_parse(&t, "t.toml", text, strlen(text), &err);
	if (rc != ML_EPARSE)
		fail_msg("expected ML_EPARSE, got %d for:\n%s", rc, text);
	if (t != (ml_toml *)0x1)
		fail_msg("*out was written on failure");
	return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("'%s' does not contain '%s'", haystack, needle);
}

/* The value at a dotted path of plain keys ("packages.0.wheels.1.url");
 * numbers index arrays. */
static const ml_toml *at(const ml_toml *t, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *part = strtok_r(buf, ".", &save); t && part;
	     part = strtok_r(NULL, ".", &save)) {
		if (t->kind == ML_TOML_ARRAY) {
			size_t i = (size_t)atoi(part);
			t = i < t->n ? t->items[i] : NULL;
		} else {
			t = ml_toml_get(t, part);
		}
	}
	if (!t)
		fail_msg("no value at '%s'", path);
	return t;
}

static void assert_str_at(const ml_toml *t, const char *path, const char *want)
{
	const ml_toml *v = at(t, path);
	assert_int_equal(v->kind, ML_TOML_STRING);
	assert_string_equal(v->str, want);
}

/* --- values ------------------------------------------------------------------ */

static void test_reads_a_pep751_lock_file(void **state)
{
	(void)state;
	ml_toml *t = parse_ok("lock-version = \"1.0\"\n"
	                      "created-by = \"mlsetup\"\n"
	                      "requires-python = \">=3.11\"\n"
	                      "\n"
	                      "[[packages]]\n"
	                      "name = \"numpy\"\n"
	                      "version = \"2.1.0\"\n"
	                      "marker = \"sys_platform == 'linux'\"\n"
	                      "wheels = [\n"
	                      "  { name = \"numpy-2.1.0-cp312-cp312-linux_x86_64.whl\", size = 100,"
	                      " hashes = { sha256 = \"ab\" } },  # first\n"
	                      "  { url = \"https://h/x.whl\", hashes = {sha256 = \"cd\"} },\n"
	                      "]\n"
	                      "\n"
	                      "[[packages]]\n"
	                      "name = \"torch\"\n"
	                      "[[packages.wheels]]\n"
	                      "url = 'https://h/torch.whl'\n"
	                      "size = 2_000_000_000\n"
	                      "upload-time = 2025-01-01T00:00:00Z\n"
	                      "[packages.wheels.hashes]\n"
	                      "sha256 = \"ef\"\n"
	                      "\n"
	                      "[tool.mlsetup]\n"
	                      "gpus = [{name = \"H100\", sm = \"sm_90\"}]\n");
	assert_str_at(t, "lock-version", "1.0");
	const ml_toml *pk = at(t, "packages");
	assert_int_equal(pk->kind, ML_TOML_ARRAY);
	assert_int_equal(pk->n, 2);
	assert_int_equal(pk->items[0]->line, 5);
	assert_str_at(t, "packages.0.marker", "sys_platform == 'linux'");
	assert_int_equal(at(t, "packages.0.wheels.0.size")->i, 100);
	assert_str_at(t, "packages.0.wheels.1.hashes.sha256", "cd");
	assert_int_equal(at(t, "packages.0.wheels.1")->line, 11);
	assert_str_at(t, "packages.1.wheels.0.url", "https://h/torch.whl");
	assert_int_equal(at(t, "packages.1.wheels.0.size")->i, 2000000000);
	assert_int_equal(at(t, "packages.1.wheels.0.upload-time")->kind, ML_TOML_DATETIME);
	assert_string_equal(at(t, "packages.1.wheels.0.upload-time")->str, "2025-01-01T00:00:00Z");
	assert_str_at(t, "packages.1.wheels.0.hashes.sha256", "ef");
	assert_str_at(t, "tool.mlsetup.gpus.0.sm", "sm_90");
	assert_string_equal(ml_toml_get_string(t, "created-by"), "mlsetup");
	assert_null(ml_toml_get_string(t, "packages"));
	assert_null(ml_toml_get(t, "missing"));
	ml_toml_free(t);
}

static void test_strings_in_every_form(void **state)
{
	(void)state;
	ml_toml *t = parse_ok("a = \"tab\\there \\\"q\\\" \\\\ \\u00e9 \\U0001F600\"\n"
	                      "b = 'C:\\no\\escapes'\n"
	                      "c = \"\"\"\nline one\nline two \\\n     joined\"\"\"\n"
	                      "d = '''\nraw \\n\n'''\n"
	                      "e = \"\"\"two quotes at the end\"\"\"\"\"\n"
	                      "f = ''''one'''\n"
	                      "g = \"\"\n"
	                      "\"quoted key\" = 1\n"
	                      "'lit.key' = 2\n"
	                      "h = \"nul\\u0000inside\"\n");
	assert_str_at(t, "a", "tab\there \"q\" \\ \xc3\xa9 \xf0\x9f\x98\x80");
	assert_str_at(t, "b", "C:\\no\\escapes");
	assert_str_at(t, "c", "line one\nline two joined");
	assert_str_at(t, "d", "raw \\n\n");
	assert_str_at(t, "e", "two quotes at the end\"\"");
	assert_str_at(t, "f", "'one");
	assert_str_at(t, "g", "");
	assert_int_equal(ml_toml_get(t, "quoted key")->i, 1);
	assert_int_equal(ml_toml_get(t, "lit.key")->i, 2);
	const ml_toml *h = ml_toml_get(t, "h");
	assert_int_equal(h->len, 10);
	assert_memory_equal(h->str, "nul\0inside", 11);
	ml_toml_free(t);
}

static void test_numbers_booleans_and_dates(void **state)
{
	(void)state;
	ml_toml *t = parse_ok("i1 = +99\ni2 = -17\ni3 = 1_000\ni4 = 0xDEAD_beef\ni5 = 0o755\n"
	                      "i6 = 0b1101\ni7 = -9223372036854775808\ni8 = 0\n"
	                      "f1 = 3.14\nf2 = -1e-3\nf3 = 6.626E+34\nf4 = inf\nf5 = -nan\n"
	                      "f6 = 1_0.5\n"
	                      "t = true\nu = false\n"
	                      "d1 = 1979-05-27T07:32:00-08:00\nd2 = 1979-05-27 07:32:00.999999\n"
	                      "d3 = 1979-05-27\nd4 = 07:32:00\nd5 = 2024-02-29\n");
	assert_int_equal(at(t, "i1")->i, 99);
	assert_int_equal(at(t, "i2")->i, -17);
	assert_int_equal(at(t, "i3")->i, 1000);
	assert_int_equal(at(t, "i4")->i, 0xdeadbeef);
	assert_int_equal(at(t, "i5")->i, 0755);
	assert_int_equal(at(t, "i6")->i, 13);
	assert_true(at(t, "i7")->i == INT64_MIN);
	assert_int_equal(at(t, "f1")->kind, ML_TOML_FLOAT);
	assert_true(at(t, "f1")->f == 3.14);
	assert_true(at(t, "f2")->f == -1e-3);
	assert_true(at(t, "f4")->f > 1e308);
	assert_true(at(t, "f5")->f != at(t, "f5")->f);
	assert_true(at(t, "f6")->f == 10.5);
	assert_true(at(t, "t")->b);
	assert_false(at(t, "u")->b);
	assert_string_equal(at(t, "d1")->str, "1979-05-27T07:32:00-08:00");
	assert_string_equal(at(t, "d2")->str, "1979-05-27 07:32:00.999999");
	assert_string_equal(at(t, "d3")->str, "1979-05-27");
	assert_string_equal(at(t, "d4")->str, "07:32:00");
	assert_int_equal(at(t, "d5")->kind, ML_TOML_DATETIME);
	ml_toml_free(t);
}

static void test_tables_dotted_keys_and_arrays_of_tables(void **state)
{
	(void)state;
	ml_toml *t = parse_ok("top.a.b = 1\n"
	                      "top.a.c = 2\n"
	                      "[x.y.z]\n"
	                      "k = 'deep'\n"
	                      "[x]            # a parent defined after its child is fine\n"
	                      "v = 3\n"
	                      "[ x . \"sub key\" ]\n"
	                      "w = 4\n"
	                      "[[arr]]\n"
	                      "n = 1\n"
	                      "[arr.sub]\n"
	                      "m = 1\n"
	                      "[[arr]]\n"
	                      "n = 2\n"
	                      "[arr.sub]     # a new element may have its own\n"
	                      "m = 2\n"
	                      "[fruit]\n"
	                      "apple.color = 'red'\n"
	                      "[fruit.apple.texture]\n"
	                      "smooth = true\n"
	                      "mixed = [1, 'two', [3.0], {four = 4},]\n");
	assert_int_equal(at(t, "top.a.c")->i, 2);
	assert_str_at(t, "x.y.z.k", "deep");
	assert_int_equal(at(t, "x.v")->i, 3);
	assert_int_equal(ml_toml_get(at(t, "x"), "sub key")->items[0]->i, 4);
	assert_int_equal(at(t, "arr")->n, 2);
	assert_int_equal(at(t, "arr.1.sub.m")->i, 2);
	assert_str_at(t, "fruit.apple.color", "red");
	assert_true(at(t, "fruit.apple.texture.smooth")->b);
	const ml_toml *mixed = at(t, "fruit.apple.texture.mixed");
	assert_int_equal(mixed->n, 4);
	assert_int_equal(mixed->items[2]->kind, ML_TOML_ARRAY);
	assert_int_equal(at(t, "fruit.apple.texture.mixed.3.four")->i, 4);
	/* keys keep document order */
	assert_string_equal(t->keys[0], "top");
	assert_string_equal(t->keys[1], "x");
	assert_string_equal(t->keys[2], "arr");
	ml_toml_free(t);
}

static void test_crlf_bom_and_comments(void **state)
{
	(void)state;
	ml_toml *t =
	        parse_ok("\xEF\xBB\xBF# comment\r\na = 1 # trailing\r\n\r\nb = [ # c\r\n 2,\r\n"
	                 "# alone\r\n]\r\nc = \"\"\"x\r\ny\"\"\"");
	assert_int_equal(at(t, "a")->i, 1);
	assert_int_equal(at(t, "b.0")->i, 2);
	assert_str_at(t, "c", "x\ny");
	assert_int_equal(at(t, "b")->line, 4);
	ml_toml_free(t);
}

/* --- refusals ------------------------------------------------------------------ */

static void test_refuses_duplicates_and_redefinitions_naming_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *doc;
		int line;
		const char *says;
	} cases[] = {
	        {"a = 1\nb = 2\na = 3\n", 3, "defined twice"},
	        {"[t]\nx = 1\n[t]\n", 3, "defined twice"},
	        {"[t]\n[t.u]\n[t]\n", 3, "defined twice"},
	        {"a.b = 1\n[a]\n", 2, "defined twice"},
	        {"[fruit]\napple.color = 1\n[fruit.apple]\n", 3, "defined twice"},
	        {"[a.b]\n[a]\nb.c = 1\n", 3, "already defined"},
	        {"t = {a = 1}\n[t]\n", 2, "cannot be extended"},
	        {"t = {a = 1}\nt.b = 2\n", 2, "cannot be extended"},
	        {"a = [1]\n[[a]]\n", 2, "cannot be extended"},
	        {"[[a]]\n[a]\n", 2, "defined twice"},
	        {"[a]\n[[a]]\n", 2, "already defined"},
	        {"a = 1\na.b = 2\n", 2, "not a table"},
	        {"x = {a = 1, a = 2}\n", 1, "defined twice"},
	        {"x = {a = {}, a.b = 1}\n", 1, "cannot be extended"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ml_err e = parse_bad(cases[i].doc);
		char want[64];
		snprintf(want, sizeof(want), "'t.toml' line %d:", cases[i].line);
		assert_contains(e.msg, want);
		assert_contains(e.msg, cases[i].says);
	}
}

static void test_refuses_malformed_documents_naming_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *doc;
		int line;
	} cases[] = {
	        {"a = \n", 1},
	        {"a = 1 2\n", 1},
	        {"\n\na = \"unterminated\n", 3},
	        {"a = 'no\nnewline'\n", 1},
	        {"a = \"\\q\"\n", 1},
	        {"a = \"\\uD800\"\n", 1},
	        {"a = \"\\u12\"\n", 1},
	        {"a = 01\n", 1},
	        {"a = 1__0\n", 1},
	        {"a = 1_\n", 1},
	        {"a = 0x\n", 1},
	        {"a = +0x10\n", 1},
	        {"a = 1.\n", 1},
	        {"a = .5\n", 1},
	        {"a = 1e\n", 1},
	        {"a = 9223372036854775808\n", 1},
	        {"a = 2023-02-29\n", 1},
	        {"a = 0000-01-01\n", 1},
	        {"a = 1979-05-27T25:00:00\n", 1},
	        {"a = [1, 2\n", 2},
	        {"a = [1 2]\n", 1},
	        {"a = {b = 1,}\n", 1},
	        {"a = {b = 1\n}\n", 1},
	        {"a = TRUE\n", 1},
	        {"[a\n", 1},
	        {"[[a]\n", 1},
	        {"[]\n", 1},
	        {"a.=1\n", 1},
	        {"= 1\n", 1},
	        {"a b = 1\n", 1},
	        {"x = 1\n# bad \x01 comment\n", 2},
	        {"x = \"bad \x7f\"\n", 1},
	        {"x = 1\r\ny = 2\r", 2},
	        {"x = \"\xc3\x28\"\n", 1},
	        {"x = \"\xed\xa0\x80\"\n", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ml_err e = parse_bad(cases[i].doc);
		char want[64];
		snprintf(want, sizeof(want), "'t.toml' line %d:", cases[i].line);
		assert_contains(e.msg, want);
	}
}

static void test_refuses_nesting_too_deep(void **state)
{
	(void)state;
	char doc[400] = "a = ";
	for (int i = 0; i < 100; i++)
		strcat(doc, "[");
	ml_err e = parse_bad(doc);
	assert_contains(e.msg, "'t.toml' line 1: nested more than 64 levels deep");
}

/* The document pre + open x n + post + close x n + tail. */
static char *doc_of(const char *pre, const char *open, const char *post, const char *close,
                    const char *tail, int n)
{
	ml_buf b = ML_BUF_INIT;
	assert_int_equal(ml_buf_puts(&b, pre), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(ml_buf_puts(&b, open), 0);
	assert_int_equal(ml_buf_puts(&b, post), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(ml_buf_puts(&b, close), 0);
	assert_int_equal(ml_buf_puts(&b, tail), 0);
	return ml_buf_detach(&b);
}

/* Levels below t of its deepest value. */
static int tree_depth(const ml_toml *t)
{
	int d = 0;
	for (size_t i = 0; i < t->n; i++) {
		int c = 1 + tree_depth(t->items[i]);
		d = c > d ? c : d;
	}
	return d;
}

/* ML_TOML_MAX_DEPTH bounds the tree however it is built: dotted keys,
 * table headers, arrays and inline tables all count. Each shape is
 * accepted with its deepest value exactly 64 levels down and refused one
 * repetition further, naming the file and the line. */
static void test_nesting_bound_counts_every_level(void **state)
{
	(void)state;
	assert_int_equal(ML_TOML_MAX_DEPTH, 64);
	static const struct {
		const char *pre, *open, *post, *close, *tail;
		int n;    /* repetitions that reach exactly 64 levels */
		int line; /* of the refusal with n + 1 */
	} cases[] = {
	        {"# dotted key\nk", ".a", " = 1", "", "\n", 63, 2},
	        {"# header\n[k", ".a", "]", "", "\n", 63, 2},
	        {"# a key in a header's table\n\n[k", ".a", "]\nx = 1", "", "\n", 62, 4},
	        {"x = ", "[", "", "]", "\n", 64, 1},
	        {"x = ", "{a = ", "1", "}", "\n", 63, 1},
	        {"[t]\nx.y = [{a = [", "{b = [", "1", "]}", "]}]\n", 29, 2},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *ok = doc_of(cases[i].pre, cases[i].open, cases[i].post, cases[i].close,
		                  cases[i].tail, cases[i].n);
		ml_toml *t = NULL;
		ml_err err = ML_ERR_INIT;
		if (ml_toml_parse(&t, "t.toml", ok, strlen(ok), &err) != 0)
			fail_msg("case %zu at the bound: %s\n%s", i, err.msg, ok);
		if (tree_depth(t) != ML_TOML_MAX_DEPTH)
			fail_msg("case %zu: depth %d, not %d", i, tree_depth(t), ML_TOML_MAX_DEPTH);
		ml_toml_free(t);
		free(ok);

		char *deep = doc_of(cases[i].pre, cases[i].open, cases[i].post, cases[i].close,
		                    cases[i].tail, cases[i].n + 1);
		ml_err e = parse_bad(deep);
		char want[64];
		snprintf(want, sizeof(want), "'t.toml' line %d: nested more than 64 levels deep",
		         cases[i].line);
		if (!strstr(e.msg, want))
			fail_msg("case %zu: wanted '%s', got '%s'", i, want, e.msg);
		free(deep);
	}
}

/* Arrays of tables are two levels each (the array and its table):
 * [[a]] [[a.a]] ... with 32 parts puts the last table 64 levels deep. */
static void test_nesting_bound_counts_arrays_of_tables_twice(void **state)
{
	(void)state;
	ml_buf b = ML_BUF_INIT;
	for (int i = 1; i <= 32; i++) {
		assert_int_equal(ml_buf_puts(&b, "[[a"), 0);
		for (int j = 1; j < i; j++)
			assert_int_equal(ml_buf_puts(&b, ".a"), 0);
		assert_int_equal(ml_buf_puts(&b, "]]\n"), 0);
	}
	char *doc = ml_buf_detach(&b);
	ml_toml *t = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_toml_parse(&t, "t.toml", doc, strlen(doc), &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(tree_depth(t), 64);
	ml_toml_free(t);
	/* A key in the last table; a 33rd array, beside the last one. */
	const char *more[] = {"x = 1\n",
	                      "[[a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a."
	                      "a.a.a.a.b]]\n"};
	for (size_t i = 0; i < 2; i++) {
		char *d = doc_of(doc, "", more[i], "", "", 0);
		ml_err e = parse_bad(d);
		assert_contains(e.msg, "'t.toml' line 33: nested more than 64 levels deep");
		free(d);
	}
	free(doc);
}

/* fuzz_toml's finding: a dotted key of hundreds of parts (and one of a
 * hundred thousand) is refused before a deep tree is built. */
static void test_long_dotted_keys_are_refused(void **state)
{
	(void)state;
	int parts[] = {300, 100000};
	for (size_t i = 0; i < 2; i++) {
		char *doc = doc_of("[project]\nname = 'x'\nk", ".k", " = 1\n", "", "", parts[i]);
		ml_err e = parse_bad(doc);
		assert_contains(e.msg, "'t.toml' line 3: nested more than 64 levels deep");
		free(doc);
		doc = doc_of("[k", ".k", "]\n", "", "", parts[i]);
		e = parse_bad(doc);
		assert_contains(e.msg, "'t.toml' line 1: nested more than 64 levels deep");
		free(doc);
	}
}

/* --- the tomllib oracle ------------------------------------------------------- */

static void json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void dump(FILE *f, const ml_toml *v)
{
	char num[64];
	switch (v->kind) {
	case ML_TOML_TABLE:
		fputc('{', f);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			json_str(f, v->keys[i], v->key_lens[i]);
			fputc(':', f);
			dump(f, v->items[i]);
		}
		fputc('}', f);
		return;
	case ML_TOML_ARRAY:
		fputc('[', f);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			dump(f, v->items[i]);
		}
		fputc(']', f);
		return;
	case ML_TOML_STRING:
	case ML_TOML_DATETIME:
		fprintf(f, "{\"type\":\"%s\",\"value\":",
		        v->kind == ML_TOML_STRING ? "string" : "datetime");
		json_str(f, v->str, v->len);
		fputc('}', f);
		return;
	case ML_TOML_INTEGER:
		fprintf(f, "{\"type\":\"integer\",\"value\":\"%lld\"}", (long long)v->i);
		return;
	case ML_TOML_FLOAT:
		snprintf(num, sizeof(num), "%.17g", v->f);
		fprintf(f, "{\"type\":\"float\",\"value\":\"%s\",\"text\":", num);
		json_str(f, v->str, v->len);
		fputc('}', f);
		return;
	case ML_TOML_BOOL:
		fprintf(f, "{\"type\":\"bool\",\"value\":\"%s\"}", v->b ? "true" : "false");
		return;
	}
}

/* Parses DIR/N.toml for every N, writing DIR/N.json or DIR/N.err. */
static int dump_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".toml") != 0)
			continue;
		char path[4096], outp[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *text = NULL;
		size_t len = 0;
		if (ml_os_read_file(&text, &len, NULL, path, 1u << 24, NULL) != 0)
			return 1;
		ml_toml *t = NULL;
		ml_err err = ML_ERR_INIT;
		int rc = ml_toml_parse(&t, e->d_name, text, len, &err);
		snprintf(outp, sizeof(outp), "%s/%.*s.%s", dir, (int)(l - 5), e->d_name,
		         rc ? "err" : "json");
		FILE *f = fopen(outp, "w");
		if (!f)
			return 1;
		if (rc)
			fprintf(f, "%s\n", err.msg);
		else
			dump(f, t);
		fclose(f);
		ml_toml_free(t);
		free(text);
	}
	closedir(d);
	return 0;
}

static void test_agrees_with_tomllib_on_random_documents(void **state)
{
	(void)state;
	ML_LINUX_ONLY(
	        "the oracle is a Linux python3 (tomllib) that runs this program as its dumper");
	if (system("python3 -c 'import tomllib' >/dev/null 2>&1") != 0) {
		printf("# python3 with tomllib (3.11+) is needed for the oracle\n");
		skip();
	}
	/* run from the repository root, as tests/run-tests.sh does */
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "python3 tests/unit/toml_oracle.py --dumper '%s' --count 3000",
	         self_path);
	int rc = system(cmd);
	assert_int_equal(rc, 0);
}

static void test_agrees_with_tomllib_on_real_lock_files(void **state)
{
	(void)state;
	ML_LINUX_ONLY(
	        "the oracle is a Linux python3 (tomllib) that runs this program as its dumper");
	if (system("python3 -c 'import tomllib' >/dev/null 2>&1") != 0) {
		printf("# python3 with tomllib (3.11+) is needed for the oracle\n");
		skip();
	}
	/* pip lock's and uv export's lock files, and the fuzz seeds */
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
	         "python3 tests/unit/toml_oracle.py --dumper '%s' --files "
	         "tests/fixtures/producers/*.toml tests/fuzz/corpus/fuzz_toml/*.toml",
	         self_path);
	assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	if (argc == 3 && strcmp(argv[1], "--dump-dir") == 0)
		return dump_dir(argv[2]);
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_reads_a_pep751_lock_file),
	        cmocka_unit_test(test_strings_in_every_form),
	        cmocka_unit_test(test_numbers_booleans_and_dates),
	        cmocka_unit_test(test_tables_dotted_keys_and_arrays_of_tables),
	        cmocka_unit_test(test_crlf_bom_and_comments),
	        cmocka_unit_test(test_refuses_duplicates_and_redefinitions_naming_the_line),
	        cmocka_unit_test(test_refuses_malformed_documents_naming_the_line),
	        cmocka_unit_test(test_refuses_nesting_too_deep),
	        cmocka_unit_test(test_nesting_bound_counts_every_level),
	        cmocka_unit_test(test_nesting_bound_counts_arrays_of_tables_twice),
	        cmocka_unit_test(test_long_dotted_keys_are_refused),
	        cmocka_unit_test(test_agrees_with_tomllib_on_random_documents),
	        cmocka_unit_test(test_agrees_with_tomllib_on_real_lock_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
