/*
 * fuzz_requirements.c - libFuzzer target for manifests, pip's
 * requirements-file format (src/pkg/requirements.c).
 *
 * Every input is parsed with and without hash mode. Whatever is accepted
 * must hold together: names normalized, hashes 64 lower-case hex digits,
 * requirements in increasing line order, hash-mode requirements pinned and
 * hashed; whatever is refused must say why, naming a line.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_requirements/.
 */
#include <ctype.h>
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

static void check_result(const ml_requirements *r, unsigned flags)
{
	int last_line = 0;
	for (size_t i = 0; i < r->n_reqs; i++) {
		const ml_requirement *q = &r->reqs[i];
		CHECK(q->name && q->name[0] && q->normalized && q->specifier);
		char norm[1024];
		if (ml_name_normalize(norm, sizeof norm, q->name) == 0)
			CHECK(strcmp(norm, q->normalized) == 0);
		CHECK(q->line > last_line);
		last_line = q->line;
		CHECK(ml_specifier_valid(q->specifier));
		if (q->marker)
			CHECK(ml_marker_check(q->marker, NULL) == 0);
		for (size_t k = 0; k < q->n_hashes; k++) {
			CHECK(strlen(q->sha256[k]) == 64);
			for (size_t j = 0; j < 64; j++)
				CHECK(isdigit((unsigned char)q->sha256[k][j]) ||
				      (q->sha256[k][j] >= 'a' && q->sha256[k][j] <= 'f'));
		}
		if (flags & ML_REQ_HASH_MODE) {
			CHECK(q->version && ml_version_valid(q->version));
			CHECK(q->n_hashes > 0 && !q->url);
		}
	}
	for (size_t i = 0; i < r->n_meta; i++)
		CHECK(ml_requirements_meta(r, r->meta[i].key) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = {0, ML_REQ_HASH_MODE};
	for (size_t m = 0; m < 2; m++) {
		ml_requirements *r = NULL;
		ml_err err = ML_ERR_INIT;
		int rc = ml_requirements_parse(&r, "fuzz.txt", (const char *)data, size, modes[m],
		                               &err);
		if (rc == 0) {
			CHECK(r != NULL);
			check_result(r, modes[m]);
			ml_requirements_free(r);
		} else {
			CHECK(r == NULL);
			CHECK(rc == ML_EPARSE || rc == ML_ENOMEM);
			if (rc == ML_EPARSE)
				CHECK(strncmp(err.msg, "manifest 'fuzz.txt' line ", 25) == 0);
		}
	}
	return 0;
}
