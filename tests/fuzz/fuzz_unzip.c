/*
 * fuzz_unzip.c - libFuzzer target for the wheel reader (src/env/zipscan.c,
 * unzip.c, names.c): the input is a zip file, byte for byte, extracted as
 * a wheel with ml_archive_extract() into a fresh directory inside an
 * otherwise empty box (own bytecode dropped, files listed, on one or
 * three threads, with the Windows name rules or without, chosen by the
 * input's length).
 *
 * Properties (docs/reliability.md "Fuzzing" and "Archives"): the result is 0 or
 * ML_EINTEGRITY; no descriptor leaks; a refused archive leaves the box
 * empty; an extracted one leaves only the target, every created path
 * resolves under it, no file keeps a setuid/setgid/sticky bit, and every
 * listed file that was written is on disk with exactly the listed size
 * (its central-directory size: nothing is written past it) and sha256,
 * and the sizes add up to the bytes the result reports, within the cap;
 * with the Windows rules every listed path passes them.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_unzip/.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlsetup/env.h"
#include "../../src/env/internal.h"
#include "fuzz_tmp.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

#define MAX_BYTES (4u << 20)

static char parent[PATH_MAX], box[PATH_MAX], dest[PATH_MAX], archive_path[PATH_MAX];
static char real_dest[PATH_MAX];

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

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_all(void)
{
	rm_tree(parent);
}

static int check_created(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	CHECK(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode));
	if (S_ISREG(st->st_mode))
		CHECK((st->st_mode & 07000) == 0);
	char real[PATH_MAX];
	CHECK(realpath(path, real));
	size_t n = strlen(real_dest);
	CHECK(strncmp(real, real_dest, n) == 0 && (real[n] == '\0' || real[n] == '/'));
	return 0;
}

static bool box_holds_only(const char *name)
{
	DIR *d = opendir(box);
	CHECK(d);
	struct dirent *de;
	bool ok = true;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (!name || strcmp(de->d_name, name)))
			ok = false;
	closedir(d);
	return ok;
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

/* The file's size and sha256 on disk must be the listed ones. */
static void check_listed(const ml_extracted_file *f)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dest, f->path);
	struct stat st;
	if (f->dropped) {
		CHECK(lstat(path, &st) != 0);
		return;
	}
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK((uint64_t)st.st_size == f->size);
	char hex[65];
	uint64_t size = 0;
	ml_err err = ML_ERR_INIT;
	CHECK(ml_sha256_file(hex, &size, path, &err) == 0);
	for (int i = 0; i < 32; i++) {
		char b[3];
		snprintf(b, sizeof b, "%02x", f->sha256[i]);
		CHECK(memcmp(hex + 2 * i, b, 2) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!box[0]) {
		snprintf(parent, sizeof parent, "%s/mlsetup-fuzz-unzip-%ld", fuzz_tmpdir(),
		         (long)getpid());
		snprintf(box, sizeof box, "%s/box", parent);
		snprintf(dest, sizeof dest, "%s/dest", box);
		snprintf(archive_path, sizeof archive_path, "%s/in.whl", parent);
		mkdir(parent, 0700);
		mkdir(box, 0700);
		atexit(remove_all);
	}
	FILE *f = fopen(archive_path, "wb");
	CHECK(f);
	CHECK(fwrite(data, 1, size, f) == size);
	fclose(f);

	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = ML_ARCHIVE_WHEEL;
	o.max_bytes = MAX_BYTES;
	o.max_entries = 256;
	o.list_files = true;
	o.drop_pycache = true;
	o.threads = size % 2 ? 3 : 1;
	o.windows_names = size % 3 == 0;
	ml_extract_result res;
	ml_err err = ML_ERR_INIT;
	int fds = count_fds();
	int rc = ml_archive_extract(&res, archive_path, dest, &o, &err);
	CHECK(count_fds() == fds);
	CHECK(rc == 0 || rc == ML_EINTEGRITY);
	if (rc) {
		CHECK(err.msg[0]);
		CHECK(box_holds_only(NULL));
		return 0;
	}
	CHECK(box_holds_only("dest"));
	CHECK(realpath(dest, real_dest));
	nftw(dest, check_created, 16, FTW_PHYS);
	uint64_t bytes = 0, written = 0, dropped = 0;
	for (size_t i = 0; i < res.n_listed; i++) {
		check_listed(&res.files[i]);
		if (o.windows_names)
			CHECK(ml_entry_windows_check(res.files[i].path, strlen(res.files[i].path),
			                             NULL, &err) == 0);
		if (res.files[i].dropped) {
			dropped++;
		} else {
			bytes += res.files[i].size;
			written++;
		}
	}
	CHECK(bytes == res.bytes && bytes <= MAX_BYTES);
	CHECK(written == res.n_files && dropped == res.n_dropped);
	ml_extract_result_release(&res);
	rm_tree(dest);
	return 0;
}
