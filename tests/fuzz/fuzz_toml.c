/*
 * fuzz_toml.c - libFuzzer target for the TOML 1.0 reader
 * (src/pkg/toml.c) and the PEP 751 lock-file reader on top of it
 * (src/pkg/pylock.c).
 *
 * Whatever is accepted must hold together: the root is a table, no table
 * has a key twice, every string is NUL-terminated at its length, lines
 * are within the document, and the tree is less than 200 levels deep (the
 * reader refuses more than ML_TOML_MAX_DEPTH, 64: this bound catches any
 * way around it); whatever is refused must say where, naming a line.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_toml/ (a dotted
 * key of 300 parts, deep_dotted_key.toml, was its first finding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static void check_tree(const ml_toml *v, int max_line, int depth)
{
	CHECK(depth < 200);
	CHECK(v->line >= 1 && v->line <= max_line);
	switch (v->kind) {
	case ML_TOML_TABLE:
		for (size_t i = 0; i < v->n; i++) {
			CHECK(v->keys[i][v->key_lens[i]] == '\0');
			for (size_t j = 0; j < i; j++)
				CHECK(v->key_lens[i] != v->key_lens[j] ||
				      memcmp(v->keys[i], v->keys[j], v->key_lens[i]) != 0);
			check_tree(v->items[i], max_line, depth + 1);
		}
		break;
	case ML_TOML_ARRAY:
		for (size_t i = 0; i < v->n; i++)
			check_tree(v->items[i], max_line, depth + 1);
		break;
	case ML_TOML_STRING:
	case ML_TOML_DATETIME:
	case ML_TOML_FLOAT:
		CHECK(v->str && v->str[v->len] == '\0');
		break;
	default:
		break;
	}
}

/* Whatever the lock reader accepts is usable: every wheel has a file
 * name, a URL and a sha256, and a package with wheels a valid version. */
static void check_lock(const uint8_t *data, size_t size)
{
	ml_pylock *pl = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_pylock_parse(&pl, "fuzz.toml", "/base", (const char *)data, size, &err);
	if (rc) {
		CHECK(pl == NULL);
		CHECK(rc == ML_EPARSE || rc == ML_ENOMEM);
		if (rc == ML_EPARSE)
			CHECK(strncmp(err.msg, "lock file ", 10) == 0);
		return;
	}
	CHECK(pl->lock_version && pl->lock_version[0] == '1');
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		const ml_pylock_package *p = &pl->pkgs[i];
		CHECK(p->name && p->normalized && p->name[0]);
		CHECK(p->n_wheels ? p->version && ml_version_valid(p->version)
		                  : p->source_kind != NULL);
		if (p->marker)
			CHECK(ml_marker_check(p->marker, NULL) == 0);
		for (size_t w = 0; w < p->n_wheels; w++) {
			CHECK(p->wheels[w].filename[0] && !strchr(p->wheels[w].filename, '/'));
			CHECK(p->wheels[w].url != NULL);
			CHECK(ml_is_sha256_hex(p->wheels[w].sha256));
			CHECK(p->wheels[w].size >= -1);
		}
	}
	ml_pylock_free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' ||
		         (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n'));
	ml_toml *t = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_toml_parse(&t, "fuzz.toml", (const char *)data, size, &err);
	if (rc == 0) {
		CHECK(t && t->kind == ML_TOML_TABLE);
		check_tree(t, lines, 0);
		ml_toml_free(t);
		check_lock(data, size);
	} else {
		CHECK(t == NULL);
		CHECK(rc == ML_EPARSE || rc == ML_ENOMEM);
		if (rc == ML_EPARSE)
			CHECK(strncmp(err.msg, "'fuzz.toml' line ", 17) == 0);
	}
	return 0;
}
