/*
 * fuzz_record.c - libFuzzer target for the wheel metadata readers
 * (src/env/record.c): RECORD (PEP 376 CSV), WHEEL and entry_points.txt.
 *
 * Properties: a RECORD that parses, written back with ml_record_format()
 * and parsed again, gives the same rows, and writing it again gives the
 * same bytes; every parser either succeeds or says ML_EPARSE / ML_ENOMEM;
 * and an entry point value that ml_entry_point_split() accepts yields a
 * module and an attribute made only of identifier characters and dots, so
 * nothing from a wheel can become code in a launcher.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_record/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/env.h"
#include "../../src/env/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static void check_identifiers(const char *s)
{
	CHECK(*s);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		CHECK(c == '.' || c == '_' || c >= 0x80 || (c >= '0' && c <= '9') ||
		      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
	}
}

static void fuzz_record(const char *data, size_t size)
{
	ml_record *r = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_record_parse(&r, data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	if (rc)
		return;
	ml_buf b = ML_BUF_INIT, b2 = ML_BUF_INIT;
	CHECK(ml_record_format(&b, r) == 0);
	ml_record *again = NULL;
	CHECK(ml_record_parse(&again, b.data ? b.data : "", b.len, &err) == 0);
	CHECK(again->n == r->n);
	for (size_t i = 0; i < r->n; i++) {
		CHECK(strcmp(again->rows[i].path, r->rows[i].path) == 0);
		CHECK(strcmp(again->rows[i].hash, r->rows[i].hash) == 0);
		CHECK(again->rows[i].size == r->rows[i].size);
		CHECK(r->rows[i].path[0] != '\0');
		CHECK(r->rows[i].size >= -1);
	}
	CHECK(ml_record_format(&b2, again) == 0);
	CHECK(b.len == b2.len && memcmp(ml_buf_cstr(&b), ml_buf_cstr(&b2), b.len) == 0);
	ml_buf_release(&b);
	ml_buf_release(&b2);
	ml_record_free(again);
	ml_record_free(r);
}

static void fuzz_wheel_meta(const char *data, size_t size)
{
	ml_wheel_meta m;
	ml_err err = ML_ERR_INIT;
	int rc = ml_wheel_meta_parse(&m, data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE);
	if (rc == 0)
		CHECK(m.version_major >= 0 && m.version_minor >= 0 && strlen(m.generator) < 128);
}

static void fuzz_entry_points(const char *data, size_t size)
{
	ml_entry_points *ep = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_entry_points_parse(&ep, data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	if (rc)
		return;
	for (size_t i = 0; i < ep->n; i++) {
		CHECK(ep->v[i].name[0] != '\0');
		char mod[256], attr[256];
		if (ml_entry_point_split(mod, sizeof mod, attr, sizeof attr, ep->v[i].value,
		                         &err) == 0) {
			check_identifiers(mod);
			check_identifiers(attr);
		}
	}
	ml_entry_points_free(ep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_record(s, size);
	fuzz_wheel_meta(s, size);
	fuzz_entry_points(s, size);
	/* The whole input as one entry point value too. */
	char mod[256], attr[256];
	ml_err err = ML_ERR_INIT;
	if (!memchr(s, '\0', size) &&
	    ml_entry_point_split(mod, sizeof mod, attr, sizeof attr, s, &err) == 0) {
		check_identifiers(mod);
		check_identifiers(attr);
	}
	free(s);
	return 0;
}
