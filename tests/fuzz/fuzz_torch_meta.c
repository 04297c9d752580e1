/*
 * fuzz_torch_meta.c - libFuzzer target for the readers of a torch wheel's
 * metadata (src/verify/torchbuild.c): torch/version.py's assignments, the
 * METADATA headers and Requires-Dist lines (cuda-toolkit pins, nvidia-*-cuXX
 * names) and WHEEL's Build and Tag lines, all hostile text from a wheel.
 *
 * Input: up to three NUL-separated parts, version.py, METADATA and WHEEL
 * (a missing part is an absent member). Beyond "no crash, no over-read, no
 * leak" (ASan): every derived string is NUL-terminated within its field,
 * a CUDA version is digits and dots, and the build names no code (the
 * audit found no libraries). Built by `make fuzz`; seeds in
 * tests/fuzz/corpus/fuzz_torch_meta/ (real torch 2.6.0, 2.11.0 shapes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/verify/internal.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

/* A NUL-terminated copy of part i of the input, or NULL. */
static char *part(const uint8_t *data, size_t size, int i)
{
	size_t start = 0;
	for (int k = 0; k < i; k++) {
		const uint8_t *nul = memchr(data + start, 0, size - start);
		if (!nul)
			return NULL;
		start = (size_t)(nul - data) + 1;
	}
	const uint8_t *nul = memchr(data + start, 0, size - start);
	size_t len = nul ? (size_t)(nul - data) - start : size - start;
	char *s = malloc(len + 1);
	CHECK(s);
	memcpy(s, data + start, len);
	s[len] = '\0';
	return s;
}

static void terminated(const char *s, size_t sz)
{
	CHECK(memchr(s, '\0', sz) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ml_wheel_meta m = {part(data, size, 0), part(data, size, 1), part(data, size, 2)};
	ml_audit a;
	memset(&a, 0, sizeof a);
	ml_err err = ML_ERR_INIT;
	int rc = ml_torch_wheel_add(&a, "/nonexistent/torch-1.0-py3-none-any.whl", &m, 0, &err);
	CHECK(rc == 0 || rc == ML_ENOMEM);
	for (size_t i = 0; i < a.n_torch; i++) {
		const ml_torch_wheel *w = &a.torch[i];
		terminated(w->build.version, sizeof w->build.version);
		terminated(w->build.local, sizeof w->build.local);
		terminated(w->build.build_tag, sizeof w->build.build_tag);
		terminated(w->build.platform, sizeof w->build.platform);
		terminated(w->build.cuda, sizeof w->build.cuda);
		terminated(w->torch_version, sizeof w->torch_version);
		terminated(w->hip, sizeof w->hip);
		terminated(w->cuda_source, sizeof w->cuda_source);
		CHECK(strspn(w->build.cuda, "0123456789.") == strlen(w->build.cuda));
		CHECK(w->build.n_sass == 0 && w->build.n_ptx == 0 && w->n_gaps == 0);
		CHECK(w->sha256[0] == '\0' && !w->known);
		ml_torch_wheel_release(&a.torch[i]);
	}
	free(a.torch);
	ml_wheel_meta_release(&m);
	return 0;
}
