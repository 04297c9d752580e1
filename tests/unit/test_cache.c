/*
 * test_cache.c - specs for the content-addressed cache (src/fetch/cache.c)
 * through its public functions, in a temporary directory: opening creates
 * the layout and takes the cache-wide lock (shared, or exclusive for clean
 * and prune); a blob enters only by commit of a partial file and is proved
 * by size and sha256 on every get, so a blob stored under the wrong hash or
 * edited on disk is refused and removed; verify finds edited blobs; prune
 * removes what was not used for N days; clean empties it; stats count what
 * is there.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#ifdef _WIN32
#include <openssl/evp.h>
#endif

#include "env_testutil.h"
#include "mlsetup/fetch.h"
#include "../../src/fetch/internal.h"

typedef struct fx {
	char *tmp;
	char dir[4096]; /* the cache under test, not yet created */
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	f->tmp = tmpdir_new("cache");
	if (!f->tmp)
		return -1;
	pf(f->dir, "%s/cache", f->tmp);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	rm_rf(f->tmp);
	free(f->tmp);
	free(f);
	return 0;
}

static ml_cache *open_cache(const fx *f, ml_cache_mode mode)
{
	ml_cache *c = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_cache_open(&c, f->dir, mode, &err) != 0)
		fail_msg("ml_cache_open: %s", err.msg);
	return c;
}

/* The sha256 of a string (no quotes in it), in lower-case hex, from
 * sha256sum (on Windows, which has none: OpenSSL's EVP_Digest()):
 * independent of the code under test. */
static void sha_of(char out[65], const char *data)
{
#ifdef _WIN32
	unsigned char md[32];
	unsigned int n = 0;
	assert_int_equal(EVP_Digest(data, strlen(data), md, &n, EVP_sha256(), NULL), 1);
	assert_int_equal(n, 32);
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return;
#endif
	char *hex = capture(NULL, "printf '%%s' '%s' | sha256sum", data);
	assert_true(strlen(hex) >= 64);
	snprintf(out, 65, "%.64s", hex);
	free(hex);
}

/* Stores data as blob `name` (its true sha256 when name is NULL) the way
 * the download engine does: a partial file, then commit. Writes the
 * blob's sha256 into sha and its path into path. */
static void put(ml_cache *c, const char *data, const char *name, char sha[65], char *path)
{
	int fd = -1;
	char part[4096];
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_tmp_create(&fd, part, sizeof(part), c, &err), 0);
	assert_true(exists(part));
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	if (name)
		snprintf(sha, 65, "%s", name);
	else
		sha_of(sha, data);
	if (ml_cache_blob_commit(path, 4096, c, fd, part, sha, &err) != 0)
		fail_msg("commit: %s", err.msg);
	close(fd);
	assert_false(exists(part));
}

/* Sets a file's modification time to `days` days ago. */
static void age(const char *path, int days)
{
	time_t t = time(NULL) - (time_t)days * 86400;
	const struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_open_creates_the_layout_and_names_its_root(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	assert_string_equal(ml_cache_root(c), f->dir);
	char path[4096];
	static const char *const dirs[] = {"blobs/sha256", "tmp", "index", "locks"};
	for (size_t i = 0; i < 4; i++) {
		struct stat st;
		assert_int_equal(stat(pf(path, "%s/%s", f->dir, dirs[i]), &st), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	assert_true(exists(pf(path, "%s/.lock", f->dir)));
	ml_cache_close(c);
	ml_cache_close(NULL);
}

static void test_exclusive_open_fails_while_the_cache_is_in_use(void **state)
{
	fx *f = *state;
	ml_cache *shared = open_cache(f, ML_CACHE_SHARED);
	ml_cache *other = open_cache(f, ML_CACHE_SHARED); /* shared users coexist */
	ml_cache *c = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_open(&c, f->dir, ML_CACHE_EXCLUSIVE, &err), ML_EFAIL);
	assert_null(c);
	assert_non_null(strstr(err.msg, "in use"));
	assert_non_null(strstr(err.hint, "wait"));
	ml_cache_close(shared);
	ml_cache_close(other);
	/* Closing released the lock. */
	c = open_cache(f, ML_CACHE_EXCLUSIVE);
	ml_cache_close(c);
}

static void test_open_refuses_a_cache_it_cannot_create(void **state)
{
	fx *f = *state;
	char path[4096];
	FILE *file = fopen(pf(path, "%s/plain-file", f->tmp), "w");
	fclose(file);
	ml_cache *c = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(
	        ml_cache_open(&c, pf(path, "%s/plain-file/cache", f->tmp), ML_CACHE_SHARED, &err),
	        ML_EIO);
	assert_null(c);
	assert_non_null(strstr(err.msg, "plain-file"));
}

static void test_a_committed_blob_is_found_by_its_hash_and_size(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char sha[65], blob[4096], want[4096], got[4096];
	put(c, "wheel bytes\n", NULL, sha, blob);
	assert_string_equal(blob, pf(want, "%s/blobs/sha256/%.2s/%s", f->dir, sha, sha));
	struct stat st;
	assert_int_equal(stat(blob, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0444);
	bool corrupted = true;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, sha, 12, &corrupted, &err), 0);
	assert_string_equal(got, blob);
	assert_false(corrupted);
	/* -1: size unknown, the hash alone decides. */
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, sha, -1, &corrupted, &err), 0);
	/* Committing the same content again keeps the one blob. */
	put(c, "wheel bytes\n", NULL, sha, blob);
	ml_cache_stats s;
	assert_int_equal(ml_cache_stats_get(&s, c, &err), 0);
	assert_int_equal(s.blobs, 1);
	assert_int_equal(s.blob_bytes, 12);
	ml_cache_close(c);
}

static void test_a_hash_not_in_the_cache_is_not_found(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char sha[65], got[4096];
	sha_of(sha, "never stored");
	bool corrupted = true;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, sha, -1, &corrupted, &err),
	                 ML_ENOENT);
	assert_false(corrupted);
	assert_non_null(strstr(err.msg, "not in the cache"));
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, "not-a-digest", -1, NULL, &err),
	                 ML_EFAIL);
	ml_cache_close(c);
}

static void test_a_blob_stored_under_a_wrong_hash_is_refused_and_removed(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char claimed[65], sha[65], blob[4096], got[4096];
	sha_of(claimed, "what the index promised");
	put(c, "what the server sent", claimed, sha, blob);
	assert_true(exists(blob));
	bool corrupted = false;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, claimed, -1, &corrupted, &err),
	                 ML_ENOENT);
	assert_true(corrupted);
	assert_non_null(strstr(err.msg, "corrupted"));
	assert_non_null(strstr(err.msg, claimed));
	assert_false(exists(blob));
	ml_cache_close(c);
}

static void test_a_blob_of_the_wrong_size_is_refused_and_removed(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char sha[65], blob[4096], got[4096];
	put(c, "twelve bytes", NULL, sha, blob);
	bool corrupted = false;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, sha, 13, &corrupted, &err),
	                 ML_ENOENT);
	assert_true(corrupted);
	assert_non_null(strstr(err.msg, "expected 13"));
	assert_false(exists(blob));
	ml_cache_close(c);
}

static void test_an_edited_blob_is_detected_on_get(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char sha[65], blob[4096], got[4096];
	put(c, "original content", NULL, sha, blob);
	/* Same size, one byte changed: only the hash can tell. */
	assert_int_equal(chmod(blob, 0644), 0);
	FILE *w = fopen(blob, "r+");
	fputc('O', w);
	fclose(w);
	bool corrupted = false;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, sha, 16, &corrupted, &err),
	                 ML_ENOENT);
	assert_true(corrupted);
	assert_false(exists(blob));
	ml_cache_close(c);
}

static void test_verify_removes_edited_blobs_and_keeps_good_ones(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char good[65], bad[65], gpath[4096], bpath[4096];
	put(c, "good blob", NULL, good, gpath);
	put(c, "bad blob", NULL, bad, bpath);
	assert_int_equal(chmod(bpath, 0644), 0);
	FILE *w = fopen(bpath, "a");
	fputs("!", w);
	fclose(w);
	ml_cache_stats checked, removed;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_verify(c, &checked, &removed, &err), 0);
	assert_int_equal(checked.blobs, 2);
	assert_int_equal(checked.blob_bytes, 9 + 9);
	assert_int_equal(removed.blobs, 1);
	assert_int_equal(removed.blob_bytes, 9);
	assert_true(exists(gpath));
	assert_false(exists(bpath));
	/* Nothing left to find. */
	assert_int_equal(ml_cache_verify(c, &checked, &removed, &err), 0);
	assert_int_equal(checked.blobs, 1);
	assert_int_equal(removed.blobs, 0);
	ml_cache_close(c);
}

static void test_prune_removes_only_blobs_unused_for_that_many_days(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char old[65], recent[65], used[65], opath[4096], rpath[4096], upath[4096], got[4096];
	put(c, "old", NULL, old, opath);
	put(c, "recent", NULL, recent, rpath);
	put(c, "old but used today", NULL, used, upath);
	age(opath, 30);
	age(rpath, 3);
	age(upath, 30);
	ml_err err = ML_ERR_INIT;
	/* A use sets the "last used" time. */
	assert_int_equal(ml_cache_blob_get(got, sizeof(got), c, used, -1, NULL, &err), 0);
	ml_cache_stats removed;
	assert_int_equal(ml_cache_prune(c, 7, &removed, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "exclusively"));
	assert_true(exists(opath));
	ml_cache_close(c);

	c = open_cache(f, ML_CACHE_EXCLUSIVE);
	assert_int_equal(ml_cache_prune(c, 7, &removed, &err), 0);
	assert_int_equal(removed.blobs, 1);
	assert_int_equal(removed.blob_bytes, 3);
	assert_false(exists(opath));
	assert_true(exists(rpath));
	assert_true(exists(upath));
	ml_cache_close(c);
}

static void test_clean_empties_the_cache_and_needs_it_exclusively(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char a[65], b[65], apath[4096], bpath[4096];
	put(c, "first", NULL, a, apath);
	put(c, "second", NULL, b, bpath);
	ml_cache_stats removed, s;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_clean(c, &removed, &err), ML_EFAIL);
	assert_true(exists(apath));
	ml_cache_close(c);

	c = open_cache(f, ML_CACHE_EXCLUSIVE);
	assert_int_equal(ml_cache_clean(c, &removed, &err), 0);
	assert_int_equal(removed.blobs, 2);
	assert_int_equal(removed.blob_bytes, 5 + 6);
	assert_false(exists(apath));
	assert_false(exists(bpath));
	assert_int_equal(ml_cache_stats_get(&s, c, &err), 0);
	assert_int_equal(s.blobs, 0);
	assert_int_equal(s.blob_bytes, 0);
	assert_int_equal(s.parts, 0);
	assert_int_equal(s.pages, 0);
	ml_cache_close(c);
}

static void test_stats_count_blobs_partial_downloads_and_pages(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	ml_err err = ML_ERR_INIT;
	ml_cache_stats s;
	assert_int_equal(ml_cache_stats_get(&s, c, &err), 0);
	assert_int_equal(s.blobs + s.parts + s.pages + s.unpacked, 0);

	char sha[65], blob[4096], part[4096];
	put(c, "0123456789", NULL, sha, blob);
	int fd = -1;
	assert_int_equal(ml_cache_tmp_create(&fd, part, sizeof(part), c, &err), 0);
	assert_int_equal(write(fd, "1234", 4), 4);
	ml_http_response page;
	memset(&page, 0, sizeof(page));
	page.status = 200;
	assert_int_equal(ml_buf_add(&page.body, "<html></html>", 13), 0);
	page.etag = "\"abc\"";
	page.content_type = "text/html";
	assert_int_equal(
	        ml_cache_page_put(c, "http://127.0.0.1/simple/x/", "text/html", &page, &err), 0);
	ml_buf_release(&page.body);

	assert_int_equal(ml_cache_stats_get(&s, c, &err), 0);
	assert_int_equal(s.blobs, 1);
	assert_int_equal(s.blob_bytes, 10);
	assert_int_equal(s.parts, 1);
	assert_int_equal(s.part_bytes, 4);
	assert_int_equal(s.pages, 1);
	assert_true(s.page_bytes >= 13);

	/* A stored page reads back with its validator. */
	ml_http_response back;
	memset(&back, 0, sizeof(back));
	assert_int_equal(
	        ml_cache_page_get(&back, c, "http://127.0.0.1/simple/x/", "text/html", &err), 0);
	assert_int_equal(back.body.len, 13);
	assert_string_equal(back.etag, "\"abc\"");
	ml_http_response_release(&back);

	/* A discarded partial download is gone. */
	ml_cache_tmp_discard(fd, part);
	assert_false(exists(part));
	assert_int_equal(ml_cache_stats_get(&s, c, &err), 0);
	assert_int_equal(s.parts, 0);
	ml_cache_close(c);
}

static void test_a_blob_lock_is_held_until_released(void **state)
{
	fx *f = *state;
	ml_cache *c = open_cache(f, ML_CACHE_SHARED);
	char sha[65];
	sha_of(sha, "being downloaded");
	ml_cache_lock *first = NULL, *second = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_cache_blob_lock(&first, c, sha, false, &err), 0);
	assert_non_null(first);
	/* Another download of the same blob must wait. */
	assert_int_equal(ml_cache_blob_lock(&second, c, sha, false, &err), 0);
	assert_null(second);
	ml_cache_unlock(first);
	assert_int_equal(ml_cache_blob_lock(&second, c, sha, false, &err), 0);
	assert_non_null(second);
	ml_cache_unlock(second);
	ml_cache_unlock(NULL);
	ml_cache_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_open_creates_the_layout_and_names_its_root,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(test_exclusive_open_fails_while_the_cache_is_in_use,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(test_open_refuses_a_cache_it_cannot_create, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_a_committed_blob_is_found_by_its_hash_and_size,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(test_a_hash_not_in_the_cache_is_not_found, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_blob_stored_under_a_wrong_hash_is_refused_and_removed, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_blob_of_the_wrong_size_is_refused_and_removed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_an_edited_blob_is_detected_on_get, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(
	                test_verify_removes_edited_blobs_and_keeps_good_ones, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_prune_removes_only_blobs_unused_for_that_many_days, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_clean_empties_the_cache_and_needs_it_exclusively, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_stats_count_blobs_partial_downloads_and_pages,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(test_a_blob_lock_is_held_until_released, setup,
	                                        teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
