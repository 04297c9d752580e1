/*
 * fuzz_wheel.c - libFuzzer target for installing a wheel (src/env/
 * wheel.c): the checks of an unpacked wheel (one .dist-info matching the
 * file name, WHEEL, the .data schemes, RECORD against every file) and the
 * install that follows (files placed by scheme, #!python scripts
 * rewritten, console and GUI entry points turned into launchers, a new
 * RECORD). fuzz_unzip covers the zip reader below it, fuzz_record the
 * RECORD, WHEEL and entry_points.txt texts alone.
 *
 * Input: the wheel's file name, a newline, then the wheel's bytes. The
 * wheel is written into an otherwise empty box, unpacked into a cache
 * there (ml_wheel_unpack, small caps) and installed into an environment
 * there (ml_wheel_install_unpacked). Properties beyond "no crash, no
 * over-read, no leak": each step answers 0 or a documented refusal
 * (ML_EINTEGRITY, ML_EUNSUPPORTED, ML_EPARSE), with a message, never an
 * I/O error; no descriptor leaks; nothing appears in the box but the
 * wheel, the cache and the environment, and every path created resolves
 * inside them; a refused unpack leaves no unpacked tree; an unpacked
 * wheel's name and version are those of its file name (PEP 503 / PEP 440
 * equal); an installed one leaves a RECORD that parses, lists no path
 * twice and names only files that exist under the environment.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_wheel/ (the wheels
 * tests/fixtures/make_wheels.py writes, good and bad).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlsetup/env.h"
#include "mlsetup/pkg.h"
#include "../../src/env/internal.h"
#include "fuzz_tmp.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static char top[PATH_MAX], box[PATH_MAX], real_box[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Removes what is under path (read-only directories included). */
static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_top(void)
{
	rm_tree(top);
}

static int check_created(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	CHECK(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode));
	CHECK((st->st_mode & 07000) == 0);
	char real[PATH_MAX];
	CHECK(realpath(path, real));
	size_t n = strlen(real_box);
	CHECK(strncmp(real, real_box, n) == 0 && (real[n] == '\0' || real[n] == '/'));
	return 0;
}

/* Only wheel.whl, cache/ and env/ in the box. */
static void check_box(void)
{
	DIR *d = opendir(box);
	CHECK(d);
	struct dirent *de;
	while ((de = readdir(d)))
		CHECK(!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		      !strcmp(de->d_name, "wheel.whl") || !strcmp(de->d_name, "cache") ||
		      !strcmp(de->d_name, "env"));
	closedir(d);
	nftw(box, check_created, 16, FTW_PHYS);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Files that RECORD names (relative to site-packages) exist, once each. */
static void check_record(const ml_env_layout *env, const ml_wheel_result *r)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s/%s/RECORD", env->root, env->site_packages, r->dist_info);
	FILE *f = fopen(path, "rb");
	CHECK(f);
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof text, f);
	fclose(f);
	CHECK(len < sizeof text);
	ml_record *rec = NULL;
	ml_err err = ML_ERR_INIT;
	CHECK(ml_record_parse(&rec, text, len, &err) == 0);
	for (size_t i = 0; i < rec->n; i++) {
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(rec->rows[i].path, rec->rows[j].path) != 0);
		char file[PATH_MAX * 2];
		snprintf(file, sizeof file, "%s/%s/%s", env->root, env->site_packages,
		         rec->rows[i].path);
		struct stat st;
		CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));
		char real[PATH_MAX];
		CHECK(realpath(file, real));
		size_t n = strlen(real_box);
		CHECK(strncmp(real, real_box, n) == 0 && real[n] == '/');
	}
	ml_record_free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < 256 ? size : 256);
	if (!nl)
		return 0;
	char filename[256];
	size_t fn = (size_t)(nl - data);
	memcpy(filename, data, fn);
	filename[fn] = '\0';
	if (memchr(filename, '\0', fn))
		return 0;
	const uint8_t *wheel = nl + 1;
	size_t wsize = size - fn - 1;

	if (!top[0]) {
		snprintf(top, sizeof top, "%s/mlsetup-fuzz-wheel-%ld", fuzz_tmpdir(),
		         (long)getpid());
		snprintf(box, sizeof box, "%s/box", top);
		CHECK(mkdir(top, 0700) == 0 && mkdir(box, 0700) == 0);
		CHECK(realpath(box, real_box));
		atexit(remove_top);
	}
	char wheel_path[PATH_MAX], cache[PATH_MAX], root[PATH_MAX];
	snprintf(wheel_path, sizeof wheel_path, "%s/wheel.whl", box);
	snprintf(cache, sizeof cache, "%s/cache", box);
	snprintf(root, sizeof root, "%s/env", box);
	FILE *f = fopen(wheel_path, "wb");
	CHECK(f && fwrite(wheel, 1, wsize, f) == wsize && fclose(f) == 0);
	CHECK(mkdir(cache, 0755) == 0 && mkdir(root, 0755) == 0);
	char sha[65];
	CHECK(ml_sha256_hex_buf(sha, wheel, wsize) == 0);

	int fds = count_fds();
	ml_unpack_opts uo = ML_UNPACK_OPTS_INIT;
	uo.filename = filename;
	uo.max_bytes = 1 << 20;
	uo.max_entries = 256;
	ml_unpacked u;
	ml_err err = ML_ERR_INIT;
	int rc = ml_wheel_unpack(&u, cache, wheel_path, sha, &uo, &err);
	CHECK(count_fds() == fds);
	CHECK(rc == 0 || rc == ML_EINTEGRITY || rc == ML_EUNSUPPORTED || rc == ML_EPARSE);
	if (rc) {
		CHECK(err.msg[0]);
		CHECK(!ml_wheel_unpacked_ready(cache, sha));
	} else {
		ml_wheel_name wn;
		CHECK(ml_wheel_filename_parse(&wn, filename, NULL) == 0);
		char a[256], b[256];
		CHECK(ml_name_normalize(a, sizeof a, u.name) == 0);
		CHECK(ml_name_normalize(b, sizeof b, wn.name) == 0);
		CHECK(strcmp(a, b) == 0);
		CHECK(ml_version_cmp(u.version, wn.version) == 0);

		ml_env_layout env;
		CHECK(ml_env_layout_init(&env, root, root, "3.12", &err) == 0);
		ml_wheel_install_opts io = ML_WHEEL_INSTALL_OPTS_INIT;
		io.requested = wsize & 1;
		io.link = ML_LINK_COPY;
		ml_wheel_result r;
		rc = ml_wheel_install_unpacked(&r, u.dir, &env, &io, &err);
		CHECK(count_fds() == fds);
		CHECK(rc == 0 || rc == ML_EINTEGRITY || rc == ML_EPARSE);
		if (rc)
			CHECK(err.msg[0]);
		else
			check_record(&env, &r);
	}
	check_box();
	rm_tree(cache);
	rm_tree(root);
	unlink(wheel_path);
	return 0;
}
