/*
 * fuzz_pylock.c - libFuzzer target for PEP 751 lock files: the reader
 * (src/pkg/pylock.c, on the TOML reader) and the manifest a lock becomes
 * (src/plan/manifest.c: requirements, recorded files, the `# mlsetup:`
 * header from [tool.mlsetup.header]). A pylock.toml comes from a cloned
 * project or a colleague: untrusted input. fuzz_toml reaches the reader
 * too, from any TOML; this target starts from real lock files (pip lock,
 * uv export, mlsetup's own), so its mutations stay lock-shaped.
 *
 * The input is the lock file. ml_pylock_parse() must answer 0, ML_EPARSE
 * (the message "lock file 'NAME' line N: ...") or ML_ENOMEM. What it
 * accepts must hold together: lock-version 1.x; requires-python a valid
 * specifier; environments and package markers accepted by
 * ml_marker_check() and evaluable; every package named, normalized as
 * ml_name_normalize() says, with a valid version when it has wheels, and
 * a source kind when it has none; every wheel a file name without '/', a
 * URL (a `path` becomes file://), a 64-digit lower-case sha256 and a size
 * of -1 or more. An accepted lock, written to a file and opened with
 * ml_manifest_open(), answers 0, ML_EPARSE or ML_ENOMEM, and an opened
 * manifest has one requirement per package ("==version", the package's
 * marker, its wheels' sha256 without duplicates) and records every wheel;
 * one it refuses (the header it reads from [tool.mlsetup.header]) names
 * the file.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_pylock/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlsetup/plan.h"
#include "../../src/pkg/internal.h"
#include "fuzz_tmp.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static char dir[256], lock_path[300];

static void remove_dir(void)
{
	unlink(lock_path);
	rmdir(dir);
}

static void check_marker(const char *m)
{
	CHECK(ml_marker_check(m, NULL) == 0);
	ml_marker_env env;
	CHECK(ml_marker_env_for(&env, "linux", "x86_64", 3, 12) == 0);
	bool out;
	ml_err err = ML_ERR_INIT;
	int rc = ml_marker_eval(&out, m, &env, &err);
	CHECK(rc == 0 || rc == ML_ENOMEM);
}

static void check_lock(const ml_pylock *pl)
{
	CHECK(pl->lock_version && pl->lock_version[0] == '1');
	if (pl->requires_python)
		CHECK(ml_specifier_valid(pl->requires_python));
	for (size_t i = 0; i < pl->n_environments; i++)
		check_marker(pl->environments[i]);
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		const ml_pylock_package *p = &pl->pkgs[i];
		CHECK(p->name && p->name[0] && p->normalized);
		char norm[256];
		CHECK(ml_name_normalize(norm, sizeof norm, p->name) == 0);
		CHECK(strcmp(norm, p->normalized) == 0);
		if (p->version)
			CHECK(ml_version_valid(p->version));
		CHECK(p->n_wheels ? p->version != NULL && p->source_kind == NULL
		                  : p->source_kind != NULL);
		if (p->marker)
			check_marker(p->marker);
		for (size_t w = 0; w < p->n_wheels; w++) {
			const ml_pylock_wheel *wh = &p->wheels[w];
			CHECK(wh->filename && wh->filename[0] && !strchr(wh->filename, '/'));
			CHECK(wh->url && wh->url[0]);
			CHECK(ml_is_sha256_hex(wh->sha256));
			for (const char *h = wh->sha256; *h; h++)
				CHECK((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'));
			CHECK(wh->size >= -1);
			CHECK(wh->line >= 1);
		}
	}
}

static void check_manifest(const ml_manifest *mf, const ml_pylock *pl)
{
	CHECK(mf->lock && mf->reqs);
	CHECK(mf->reqs->n_reqs == pl->n_pkgs);
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		const ml_pylock_package *p = &pl->pkgs[i];
		const ml_requirement *q = &mf->reqs->reqs[i];
		CHECK(strcmp(q->name, p->name) == 0 && strcmp(q->normalized, p->normalized) == 0);
		if (p->version) {
			CHECK(q->specifier[0] == '=' && q->specifier[1] == '=');
			CHECK(strcmp(q->specifier + 2, p->version) == 0);
		} else {
			CHECK(q->specifier[0] == '\0');
		}
		CHECK((p->marker == NULL) == (q->marker == NULL));
		CHECK(q->n_hashes <= p->n_wheels);
		for (size_t a = 0; a < q->n_hashes; a++)
			for (size_t b = 0; b < a; b++)
				CHECK(strcmp(q->sha256[a], q->sha256[b]) != 0);
		for (size_t w = 0; w < p->n_wheels; w++) {
			bool hashed = false, recorded = false;
			for (size_t k = 0; k < q->n_hashes; k++)
				hashed |= strcmp(q->sha256[k], p->wheels[w].sha256) == 0;
			for (size_t k = 0; k < mf->n_files; k++)
				recorded |= strcmp(mf->files[k].sha256, p->wheels[w].sha256) == 0;
			CHECK(hashed && recorded);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "%s/mlsetup-fuzz-pylock-%ld", fuzz_tmpdir(),
		         (long)getpid());
		snprintf(lock_path, sizeof lock_path, "%s/pylock.toml", dir);
		CHECK(mkdir(dir, 0700) == 0);
		atexit(remove_dir);
	}
	ml_pylock *pl = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_pylock_parse(&pl, "fuzz/pylock.toml", "/base", (const char *)data, size, &err);
	CHECK(rc == 0 || rc == ML_EPARSE || rc == ML_ENOMEM);
	if (rc) {
		CHECK(pl == NULL);
		if (rc == ML_EPARSE)
			CHECK(strncmp(err.msg, "lock file 'fuzz/pylock.toml' line ", 34) == 0);
		return 0; /* the manifest reads it with the same reader */
	}
	check_lock(pl);

	FILE *f = fopen(lock_path, "wb");
	CHECK(f);
	CHECK(fwrite(data, 1, size, f) == size);
	CHECK(fclose(f) == 0);
	ml_manifest *mf = NULL;
	ml_err merr = ML_ERR_INIT;
	int mrc = ml_manifest_open(&mf, lock_path, &merr);
	CHECK(mrc == 0 || mrc == ML_EPARSE || mrc == ML_ENOMEM);
	if (mrc == ML_EPARSE) /* its header ([tool.mlsetup.header]) */
		CHECK(strstr(merr.msg, lock_path) != NULL);
	if (mrc == 0)
		check_manifest(mf, pl);
	ml_manifest_free(mf);
	ml_pylock_free(pl);
	return 0;
}
