/*
 * fuzz_entry_check.c - libFuzzer target for the archive entry checker and
 * checked extraction (src/env/entry.c, extract.c, zipscan.c).
 *
 * The input is a list of entries, each [type][name length][name][link
 * length][link] (bytes; lengths one byte each). Every entry goes through
 * ml_entry_check(), with and without ML_ENTRY_ALLOW_LINKS: an accepted
 * name must be relative, free of "..", ".", empty components,
 * backslashes and control bytes, and an accepted symlink must stay inside
 * the tree when resolved from its directory; links and special files must
 * be refused without the flag. The names accepted go through
 * ml_entry_names_check() with and without case folding: it answers 0 or
 * ML_EINTEGRITY, folding never accepts what NFC alone refused, and
 * distinct ASCII names are never refused without folding.
 *
 * When the first byte's low bit is set, the entries are also written into
 * a real archive (tar.gz, or zip when bit 1 is set) with libarchive and
 * extracted with ml_archive_extract() into a fresh directory inside an
 * otherwise empty box. The property (docs/reliability.md "Fuzzing"): every
 * created path resolves under the target, nothing appears in the box
 * beside the target, no file keeps a setuid/setgid/sticky bit, and a
 * refused archive leaves the box empty.
 * Built by `make fuzz`; seeds in tests/fuzz/corpus/fuzz_entry_check/.
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

#include <archive.h>
#include <archive_entry.h>

#include "mlsetup/env.h"
#include "../../src/env/internal.h"
#include "fuzz_tmp.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

#define MAX_ENTRIES 24

typedef struct entry {
	ml_entry_type type;
	char name[256], link[256];
	size_t name_len, link_len;
} entry;

/* --- the pure checker --------------------------------------------------------------- */

static void check_normalized(const char *norm)
{
	size_t n = strlen(norm);
	CHECK(n == 0 || norm[0] != '/');
	CHECK(!(n >= 2 && norm[1] == ':' &&
	        ((norm[0] >= 'a' && norm[0] <= 'z') || (norm[0] >= 'A' && norm[0] <= 'Z'))));
	for (const char *p = norm; *p; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f && *p != '\\');
	for (const char *p = norm; *p;) {
		const char *s = strchr(p, '/');
		size_t c = s ? (size_t)(s - p) : strlen(p);
		CHECK(c > 0 && c <= 255);
		CHECK(!(c == 1 && p[0] == '.'));
		CHECK(!(c == 2 && p[0] == '.' && p[1] == '.'));
		p += c + (s ? 1 : 0);
		CHECK(!(s && !*p)); /* no trailing '/' */
	}
}

/* Lexical walk of link from the directory of norm: must not climb above
 * the root. */
static void check_link_stays(const char *norm, const char *link, size_t len)
{
	long depth = 0;
	for (const char *p = norm; *p; p++)
		depth += *p == '/';
	CHECK(len > 0 && link[0] != '/');
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && link[j] != '/')
			j++;
		size_t c = j - i;
		if (c == 2 && link[i] == '.' && link[i + 1] == '.')
			depth--;
		else if (c && !(c == 1 && link[i] == '.'))
			depth++;
		CHECK(depth >= 0);
		i = j + 1;
	}
}

static void fuzz_check(const entry *e)
{
	char norm[ML_PATH_MAX];
	ml_err err = ML_ERR_INIT;
	int plain = ml_entry_check(norm, sizeof norm, e->name, e->name_len, e->type, e->link,
	                           e->link_len, 0, &err);
	CHECK(plain == 0 || plain == ML_EINTEGRITY);
	if (plain == 0) {
		CHECK(e->type == ML_ENTRY_FILE || e->type == ML_ENTRY_DIR);
		CHECK(memchr(e->name, '\0', e->name_len) == NULL);
		check_normalized(norm);
	}
	int links = ml_entry_check(norm, sizeof norm, e->name, e->name_len, e->type, e->link,
	                           e->link_len, ML_ENTRY_ALLOW_LINKS, &err);
	CHECK(links == 0 || links == ML_EINTEGRITY);
	if (links == 0) {
		CHECK(e->type != ML_ENTRY_OTHER);
		check_normalized(norm);
		if (e->type == ML_ENTRY_SYMLINK) {
			CHECK(memchr(e->link, '\0', e->link_len) == NULL);
			check_link_stays(norm, e->link, e->link_len);
		}
	}
	if (e->type == ML_ENTRY_FILE || e->type == ML_ENTRY_DIR)
		CHECK(plain == links);
}

/* --- the extraction property ----------------------------------------------------------- */

static char parent[PATH_MAX], box[PATH_MAX], dest[PATH_MAX], archive_path[PATH_MAX],
        real_dest[PATH_MAX];

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

static int check_created(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if (S_ISREG(st->st_mode))
		CHECK((st->st_mode & 07000) == 0);
	CHECK(!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode) &&
	      !S_ISSOCK(st->st_mode));
	char real[PATH_MAX];
	if (realpath(path, real)) {
		size_t n = strlen(real_dest);
		CHECK(strncmp(real, real_dest, n) == 0 && (real[n] == '\0' || real[n] == '/'));
	} else {
		CHECK(errno == ENOENT || errno == ELOOP || errno == ENOTDIR);
	}
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

/* Open descriptors of this process: extraction must not leak any. */
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

static bool write_archive(const entry *v, size_t n, bool zip)
{
	static char buf[1 << 16];
	size_t used = 0;
	struct archive *a = archive_write_new();
	if (zip) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		archive_write_add_filter_gzip(a);
	}
	archive_write_set_bytes_in_last_block(a, 1);
	if (archive_write_open_memory(a, buf, sizeof buf, &used) != ARCHIVE_OK) {
		archive_write_free(a);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const entry *e = &v[i];
		char name[257];
		memcpy(name, e->name, e->name_len);
		name[e->name_len] = '\0';
		if (!name[0])
			continue;
		struct archive_entry *ae = archive_entry_new();
		archive_entry_set_pathname(ae, name);
		archive_entry_set_mtime(ae, 1700000000, 0);
		char link[257];
		memcpy(link, e->link, e->link_len);
		link[e->link_len] = '\0';
		switch (e->type) {
		case ML_ENTRY_DIR:
			archive_entry_set_filetype(ae, AE_IFDIR);
			archive_entry_set_perm(ae, 0755);
			break;
		case ML_ENTRY_SYMLINK:
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_perm(ae, 0777);
			archive_entry_set_symlink(ae, link);
			break;
		case ML_ENTRY_HARDLINK:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, 0644);
			archive_entry_set_hardlink(ae, link);
			break;
		case ML_ENTRY_OTHER:
			archive_entry_set_filetype(ae, AE_IFIFO);
			archive_entry_set_perm(ae, 0644);
			break;
		default:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, e->link_len & 1 ? 04755 : 0644);
			archive_entry_set_size(ae, (la_int64_t)e->link_len);
		}
		if (archive_write_header(a, ae) == ARCHIVE_OK && e->type == ML_ENTRY_FILE)
			archive_write_data(a, e->link, e->link_len);
		archive_entry_free(ae);
	}
	bool ok = archive_write_close(a) == ARCHIVE_OK;
	archive_write_free(a);
	if (!ok)
		return false;
	FILE *f = fopen(archive_path, "wb");
	CHECK(f);
	CHECK(fwrite(buf, 1, used, f) == used);
	fclose(f);
	return true;
}

static void remove_box(void)
{
	rm_tree(parent);
}

static void fuzz_extract(const entry *v, size_t n, bool zip)
{
	if (!box[0]) {
		snprintf(parent, sizeof parent, "%s/mlsetup-fuzz-%ld", fuzz_tmpdir(),
		         (long)getpid());
		snprintf(box, sizeof box, "%s/box", parent);
		snprintf(dest, sizeof dest, "%s/dest", box);
		snprintf(archive_path, sizeof archive_path, "%s/in.archive", parent);
		mkdir(parent, 0700);
		mkdir(box, 0700);
		atexit(remove_box);
	}
	if (!write_archive(v, n, zip))
		return;
	ml_extract_opts o = ML_EXTRACT_OPTS_INIT;
	o.kind = zip ? ML_ARCHIVE_WHEEL : ML_ARCHIVE_INTERPRETER;
	o.max_bytes = 1 << 16;
	o.max_entries = 64;
	o.list_files = true;
	ml_extract_result res;
	ml_err err = ML_ERR_INIT;
	int fds = count_fds();
	int rc = ml_archive_extract(&res, archive_path, dest, &o, &err);
	CHECK(count_fds() == fds);
	CHECK(rc == 0 || rc == ML_EINTEGRITY);
	if (rc) {
		CHECK(err.msg[0]);
		CHECK(box_holds_only(NULL));
		return;
	}
	CHECK(box_holds_only("dest"));
	CHECK(realpath(dest, real_dest));
	nftw(dest, check_created, 16, FTW_PHYS);
	ml_extract_result_release(&res);
	rm_tree(dest);
}

/* Names across entries: the NFC / case-fold collision check. */
static void fuzz_names(const entry *v, size_t n)
{
	static char norms[MAX_ENTRIES][ML_PATH_MAX];
	const char *names[MAX_ENTRIES];
	size_t k = 0;
	bool ascii = true;
	for (size_t i = 0; i < n; i++) {
		ml_err err = ML_ERR_INIT;
		if (ml_entry_check(norms[k], sizeof norms[k], v[i].name, v[i].name_len, v[i].type,
		                   NULL, 0, 0, &err) != 0)
			continue;
		bool dup = false;
		for (size_t j = 0; j < k; j++)
			dup |= strcmp(norms[j], norms[k]) == 0;
		if (dup)
			continue;
		for (const char *p = norms[k]; *p; p++)
			ascii &= (unsigned char)*p < 0x80;
		names[k] = norms[k];
		k++;
	}
	ml_err err = ML_ERR_INIT;
	int nfc = ml_entry_names_check(names, k, false, &err);
	CHECK(nfc == 0 || nfc == ML_EINTEGRITY);
	int fold = ml_entry_names_check(names, k, true, &err);
	CHECK(fold == 0 || fold == ML_EINTEGRITY);
	if (nfc)
		CHECK(fold);
	if (ascii)
		CHECK(nfc == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0];
	entry v[MAX_ENTRIES];
	size_t n = 0, i = 1;
	while (i + 2 <= size && n < MAX_ENTRIES) {
		entry *e = &v[n];
		e->type = (ml_entry_type)(data[i++] % 5);
		e->name_len = data[i++];
		if (i + e->name_len > size)
			e->name_len = size - i;
		memcpy(e->name, data + i, e->name_len);
		i += e->name_len;
		e->link_len = 0;
		if (i < size) {
			e->link_len = data[i++];
			if (i + e->link_len > size)
				e->link_len = size - i;
			memcpy(e->link, data + i, e->link_len);
			i += e->link_len;
		}
		fuzz_check(e);
		n++;
	}
	fuzz_names(v, n);
	if ((mode & 1) && n)
		fuzz_extract(v, n, mode & 2);
	return 0;
}
