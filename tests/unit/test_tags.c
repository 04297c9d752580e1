/*
 * test_tags.c - specs for which wheels install where (src/pkg/tags.c):
 * PEP 425 tag order as packaging.tags lists it for CPython, PEP 600
 * manylinux with its legacy aliases, musllinux, Windows and macOS
 * platforms, PEP 427 wheel file names and compressed tag sets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/pkg.h"
#include "../../src/pkg/internal.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct tagv {
	char **v;
	size_t n;
} tagv;

static tagv tags_for(const char *os, const char *arch, const char *libc, int lmaj, int lmin,
                     int py_minor)
{
	ml_tag_target t = {os, arch, libc, lmaj, lmin, 3, py_minor};
	tagv out = {NULL, 0};
	ml_err err = ML_ERR_INIT;
	if (ml_tags_for(&out.v, &out.n, &t, &err) != 0)
		fail_msg("tags for %s %s failed: %s", os, arch, err.msg);
	return out;
}

static long index_of(const tagv *t, const char *tag)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i], tag) == 0)
			return (long)i;
	return -1;
}

static void assert_order(const tagv *t, const char *before, const char *after)
{
	long a = index_of(t, before), b = index_of(t, after);
	if (a < 0 || b < 0 || a >= b)
		fail_msg("'%s' (%ld) should come before '%s' (%ld)", before, a, after, b);
}

static void assert_absent(const tagv *t, const char *tag)
{
	if (index_of(t, tag) >= 0)
		fail_msg("'%s' should not be listed", tag);
}

/* --- ml_tags_for ------------------------------------------------------------ */

static void test_cp312_glibc_2_35_x86_64_starts_with_the_most_specific_tags(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 35, 12);
	assert_string_equal(t.v[0], "cp312-cp312-manylinux_2_35_x86_64");
	assert_string_equal(t.v[1], "cp312-cp312-manylinux_2_34_x86_64");
	/* 31 manylinux_2_Y (2.35 .. 2.5) + 3 legacy aliases + linux_x86_64 */
	assert_string_equal(t.v[34], "cp312-cp312-linux_x86_64");
	assert_string_equal(t.v[35], "cp312-abi3-manylinux_2_35_x86_64");
	assert_string_equal(t.v[70], "cp312-none-manylinux_2_35_x86_64");
	assert_string_equal(t.v[105], "cp311-abi3-manylinux_2_35_x86_64");
	/* packaging.tags.sys_tags() lists 960 tags for this target */
	assert_int_equal(t.n, 960);
	assert_string_equal(t.v[t.n - 1], "py30-none-any");
	ml_tags_free(t.v, t.n);
}

static void test_manylinux2014_alias_matches_glibc_2_17(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 35, 12);
	long at = index_of(&t, "cp312-cp312-manylinux_2_17_x86_64");
	assert_true(at > 0);
	assert_string_equal(t.v[at + 1], "cp312-cp312-manylinux2014_x86_64");
	assert_string_equal(t.v[at + 2], "cp312-cp312-manylinux_2_16_x86_64");
	ml_tags_free(t.v, t.n);
}

static void test_manylinux2010_and_manylinux1_aliases_follow_2_12_and_2_5(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 28, 11);
	long a = index_of(&t, "cp311-cp311-manylinux_2_12_x86_64");
	assert_string_equal(t.v[a + 1], "cp311-cp311-manylinux2010_x86_64");
	long b = index_of(&t, "cp311-cp311-manylinux_2_5_x86_64");
	assert_string_equal(t.v[b + 1], "cp311-cp311-manylinux1_x86_64");
	assert_string_equal(t.v[b + 2], "cp311-cp311-linux_x86_64");
	assert_absent(&t, "cp311-cp311-manylinux_2_4_x86_64");
	assert_absent(&t, "cp311-cp311-manylinux_2_29_x86_64");
	ml_tags_free(t.v, t.n);
}

static void test_aarch64_manylinux_stops_at_2_17(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "aarch64", "glibc", 2, 39, 12);
	assert_string_equal(t.v[0], "cp312-cp312-manylinux_2_39_aarch64");
	assert_order(&t, "cp312-cp312-manylinux_2_17_aarch64", "cp312-cp312-manylinux2014_aarch64");
	assert_absent(&t, "cp312-cp312-manylinux_2_16_aarch64");
	assert_absent(&t, "cp312-cp312-manylinux2010_aarch64");
	assert_absent(&t, "cp312-cp312-manylinux1_aarch64");
	assert_order(&t, "cp312-cp312-manylinux2014_aarch64", "cp312-cp312-linux_aarch64");
	ml_tags_free(t.v, t.n);
}

static void test_tag_families_come_in_packaging_order(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 17, 13);
	/* cpython_tags(): cp313 ABI, abi3, none, older abi3 */
	assert_order(&t, "cp313-cp313-linux_x86_64", "cp313-abi3-manylinux_2_17_x86_64");
	assert_order(&t, "cp313-abi3-linux_x86_64", "cp313-none-manylinux_2_17_x86_64");
	assert_order(&t, "cp313-none-linux_x86_64", "cp312-abi3-manylinux_2_17_x86_64");
	assert_order(&t, "cp33-abi3-linux_x86_64", "cp32-abi3-manylinux_2_17_x86_64");
	assert_absent(&t, "cp31-abi3-linux_x86_64");
	assert_absent(&t, "cp312-cp312-linux_x86_64");
	/* compatible_tags(): py313, py3, py312 ... py30 on the platform, then any */
	assert_order(&t, "cp32-abi3-linux_x86_64", "py313-none-manylinux_2_17_x86_64");
	assert_order(&t, "py313-none-linux_x86_64", "py3-none-manylinux_2_17_x86_64");
	assert_order(&t, "py3-none-linux_x86_64", "py312-none-manylinux_2_17_x86_64");
	assert_order(&t, "py30-none-linux_x86_64", "cp313-none-any");
	assert_order(&t, "cp313-none-any", "py313-none-any");
	assert_order(&t, "py313-none-any", "py3-none-any");
	assert_order(&t, "py3-none-any", "py312-none-any");
	assert_string_equal(t.v[t.n - 1], "py30-none-any");
	ml_tags_free(t.v, t.n);
}

static void test_musl_lists_musllinux_down_to_1_0_then_linux(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "musl", 1, 2, 12);
	assert_string_equal(t.v[0], "cp312-cp312-musllinux_1_2_x86_64");
	assert_string_equal(t.v[1], "cp312-cp312-musllinux_1_1_x86_64");
	assert_string_equal(t.v[2], "cp312-cp312-musllinux_1_0_x86_64");
	assert_string_equal(t.v[3], "cp312-cp312-linux_x86_64");
	assert_absent(&t, "cp312-cp312-manylinux_2_17_x86_64");
	assert_int_equal(t.n, 123);
	ml_tags_free(t.v, t.n);
}

static void test_unknown_libc_lists_only_the_plain_linux_tag(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", NULL, 0, 0, 12);
	assert_string_equal(t.v[0], "cp312-cp312-linux_x86_64");
	assert_string_equal(t.v[1], "cp312-abi3-linux_x86_64");
	assert_int_equal(t.n, 42);
	ml_tags_free(t.v, t.n);
}

static void test_windows_platforms(void **state)
{
	(void)state;
	tagv t = tags_for("windows", "amd64", NULL, 0, 0, 12);
	assert_string_equal(t.v[0], "cp312-cp312-win_amd64");
	assert_string_equal(t.v[1], "cp312-abi3-win_amd64");
	assert_int_equal(t.n, 42);
	ml_tags_free(t.v, t.n);
	t = tags_for("windows", "aarch64", NULL, 0, 0, 13);
	assert_string_equal(t.v[0], "cp313-cp313-win_arm64");
	ml_tags_free(t.v, t.n);
}

static void test_macos_platforms_as_packaging_lists_them(void **state)
{
	(void)state;
	tagv t = tags_for("darwin", "arm64", NULL, 14, 0, 12);
	assert_string_equal(t.v[0], "cp312-cp312-macosx_14_0_arm64");
	assert_string_equal(t.v[1], "cp312-cp312-macosx_14_0_universal2");
	assert_string_equal(t.v[2], "cp312-cp312-macosx_13_0_arm64");
	assert_order(&t, "cp312-cp312-macosx_11_0_universal2",
	             "cp312-cp312-macosx_10_16_universal2");
	assert_order(&t, "cp312-cp312-macosx_10_16_universal2",
	             "cp312-cp312-macosx_10_4_universal2");
	assert_absent(&t, "cp312-cp312-macosx_10_9_arm64");
	assert_absent(&t, "cp312-cp312-macosx_14_2_arm64");
	assert_int_equal(t.n, 582);
	ml_tags_free(t.v, t.n);
	t = tags_for("darwin", "x86_64", NULL, 10, 15, 9);
	assert_string_equal(t.v[0], "cp39-cp39-macosx_10_15_x86_64");
	assert_string_equal(t.v[1], "cp39-cp39-macosx_10_15_intel");
	assert_absent(&t, "cp39-cp39-macosx_10_3_x86_64");
	ml_tags_free(t.v, t.n);
	/* unknown macOS version: python.org's minimum, 11.0 on arm64 */
	t = tags_for("darwin", "aarch64", NULL, 0, 0, 12);
	assert_string_equal(t.v[0], "cp312-cp312-macosx_11_0_arm64");
	ml_tags_free(t.v, t.n);
}

static void test_old_python_abi_has_the_pymalloc_suffix(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 17, 7);
	assert_string_equal(t.v[0], "cp37-cp37m-manylinux_2_17_x86_64");
	ml_tags_free(t.v, t.n);
}

static void test_unsupported_targets_are_refused(void **state)
{
	static const ml_tag_target bad[] = {
	        {"linux", "x86_64", "glibc", 2, 35, 2, 7},
	        {"freebsd", "x86_64", NULL, 0, 0, 3, 12},
	        {"linux", "riscv64", "glibc", 2, 35, 3, 12},
	        {"linux", "x86_64", "uclibc", 1, 0, 3, 12},
	        {"linux", "x86_64", "glibc", 2, 100000, 3, 12},
	        {NULL, "x86_64", NULL, 0, 0, 3, 12},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(bad); i++) {
		char **out = (char **)0x1;
		size_t n = 7;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_tags_for(&out, &n, &bad[i], &err), ML_EUNSUPPORTED);
		assert_true(err.msg[0] != '\0');
		assert_ptr_equal(out, (char **)0x1);
		assert_int_equal(n, 7);
	}
	ml_tags_free(NULL, 3);
}

/* --- wheel file names -------------------------------------------------------- */

static void test_wheel_filename_parse_splits_the_pep427_name(void **state)
{
	ml_wheel_name w;
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(
	        ml_wheel_filename_parse(
	                &w, "torch-2.6.0+cu124-cp312-cp312-manylinux_2_28_x86_64.whl", &err),
	        0);
	assert_string_equal(w.name, "torch");
	assert_string_equal(w.version, "2.6.0+cu124");
	assert_string_equal(w.build, "");
	assert_string_equal(w.python_tag, "cp312");
	assert_string_equal(w.abi_tag, "cp312");
	assert_string_equal(w.platform_tag, "manylinux_2_28_x86_64");

	assert_int_equal(
	        ml_wheel_filename_parse(&w, "typing_extensions-4.12.2-py3-none-any.whl", &err), 0);
	assert_string_equal(w.name, "typing_extensions");
	assert_string_equal(w.normalized, "typing-extensions");

	assert_int_equal(ml_wheel_filename_parse(&w, "foo-1.0-1abc-PY2.py3-none-ANY.whl", &err), 0);
	assert_string_equal(w.build, "1abc");
	assert_string_equal(w.python_tag, "py2.py3");
	assert_string_equal(w.platform_tag, "any");

	assert_int_equal(
	        ml_wheel_filename_parse(
	                &w,
	                "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
	                &err),
	        0);
	assert_string_equal(w.platform_tag, "manylinux_2_17_x86_64.manylinux2014_x86_64");
}

static void test_wheel_filename_parse_refuses_malformed_names(void **state)
{
	static const char *const bad[] = {
	        "torch-2.6.0-cp312-cp312-linux_x86_64.zip",
	        "torch-2.6.0-cp312-linux_x86_64.whl",
	        "torch-2.6.0-1-2-cp312-cp312-linux_x86_64.whl",
	        "torch-2.6.0-x1-cp312-cp312-linux_x86_64.whl",
	        "torch-not.a.version!-cp312-cp312-linux_x86_64.whl",
	        "to rch-2.6.0-cp312-cp312-linux_x86_64.whl",
	        "torch-2.6.0-cp312-cp312-linux_x86_64..whl",
	        "torch-2.6.0\t-cp312-cp312-any.whl",
	        "torch-2.6.0-cp312-cp312-.whl",
	        "torch-2.6.0-cp312.-cp312-any.whl",
	        "torch--2.6.0-cp312-cp312-any.whl",
	        "dir/torch-2.6.0-cp312-cp312-any.whl",
	        ".whl",
	        "",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(bad); i++) {
		ml_wheel_name w;
		ml_err err = ML_ERR_INIT;
		memset(&w, 0x5a, sizeof w);
		if (ml_wheel_filename_parse(&w, bad[i], &err) != ML_EPARSE)
			fail_msg("'%s' should be refused", bad[i]);
		assert_non_null(strstr(err.msg, "invalid wheel file name"));
		assert_int_equal((unsigned char)w.name[0], 0x5a);
	}
	assert_int_equal(ml_wheel_filename_parse(&(ml_wheel_name){0}, NULL, NULL), ML_EPARSE);
}

static int rank(const char *file, const tagv *t)
{
	ml_wheel_name w;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_filename_parse(&w, file, &err) != 0)
		fail_msg("%s", err.msg);
	return ml_wheel_tag_rank(&w, t->v, t->n);
}

static void test_wheel_tag_rank_prefers_the_most_specific_wheel(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 35, 12);
	int cp = rank("torch-2.6.0-cp312-cp312-manylinux_2_28_x86_64.whl", &t);
	int abi3 = rank("cryptography-43.0.0-cp39-abi3-manylinux_2_28_x86_64.whl", &t);
	int pure = rank("typing_extensions-4.12.2-py3-none-any.whl", &t);
	assert_true(cp >= 0);
	assert_true(cp < abi3);
	assert_true(abi3 < pure);
	assert_string_equal(t.v[cp], "cp312-cp312-manylinux_2_28_x86_64");
	assert_string_equal(t.v[pure], "py3-none-any");
	/* a newer manylinux ranks before an older one */
	assert_true(rank("x-1-cp312-cp312-manylinux_2_34_x86_64.whl", &t) <
	            rank("x-1-cp312-cp312-manylinux2014_x86_64.whl", &t));
	ml_tags_free(t.v, t.n);
}

static void test_compressed_tag_sets_expand_to_their_best_member(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 35, 12);
	assert_int_equal(rank("six-1.16.0-py2.py3-none-any.whl", &t),
	                 rank("six-1.16.0-py3-none-any.whl", &t));
	int both =
	        rank("numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", &t);
	assert_string_equal(t.v[both], "cp312-cp312-manylinux_2_17_x86_64");
	ml_tags_free(t.v, t.n);
}

static void test_wheels_for_another_target_do_not_install(void **state)
{
	static const char *const other[] = {
	        "torch-2.6.0-cp312-cp312-win_amd64.whl",
	        "torch-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl",
	        "torch-2.6.0-cp312-cp312-manylinux_2_36_x86_64.whl",
	        "torch-2.6.0-cp312-cp312-manylinux_2_28_aarch64.whl",
	        "torch-2.6.0-cp312-cp312-musllinux_1_2_x86_64.whl",
	        "x-1-cp313-abi3-manylinux_2_17_x86_64.whl",
	        "x-1-py2-none-any.whl",
	        "x-1-pp310-pypy310_pp73-manylinux_2_17_x86_64.whl",
	};
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 35, 12);
	for (size_t i = 0; i < N_OF(other); i++)
		if (rank(other[i], &t) != -1)
			fail_msg("'%s' should not install on cp312 glibc 2.35 x86_64", other[i]);
	assert_int_equal(ml_wheel_tag_rank(NULL, t.v, t.n), -1);
	ml_tags_free(t.v, t.n);
}

/* --- PEP 600 -------------------------------------------------------------------- */

static void test_manylinux_compatible_follows_pep600_and_the_legacy_aliases(void **state)
{
	static const struct {
		const char *tag;
		int maj, min;
		const char *arch;
		bool want;
	} rows[] = {
	        {"manylinux_2_28_x86_64", 2, 28, "x86_64", true},
	        {"manylinux_2_28_x86_64", 2, 27, "x86_64", false},
	        {"manylinux_2_28_x86_64", 2, 35, "amd64", true},
	        {"manylinux_2_28_x86_64", 3, 0, "x86_64", true},
	        {"manylinux_2_28_aarch64", 2, 35, "x86_64", false},
	        {"manylinux_2_28_aarch64", 2, 35, "arm64", true},
	        {"manylinux2014_x86_64", 2, 17, "x86_64", true},
	        {"manylinux2014_x86_64", 2, 16, "x86_64", false},
	        {"manylinux2014_aarch64", 2, 17, "aarch64", true},
	        {"manylinux2014_ppc64le", 2, 17, "ppc64le", true},
	        {"manylinux2010_x86_64", 2, 12, "x86_64", true},
	        {"manylinux2010_x86_64", 2, 11, "x86_64", false},
	        {"manylinux1_x86_64", 2, 5, "x86_64", true},
	        {"manylinux1_x86_64", 2, 4, "x86_64", false},
	        {"manylinux1_i686", 2, 5, "i686", true},
	        {"manylinux1_aarch64", 2, 35, "aarch64", false},
	        {"manylinux2010_aarch64", 2, 35, "aarch64", false},
	        {"manylinux_2_5_aarch64", 2, 35, "aarch64", false},
	        {"manylinux_2_17_aarch64", 2, 35, "aarch64", true},
	        {"musllinux_1_2_x86_64", 2, 35, "x86_64", false},
	        {"linux_x86_64", 2, 35, "x86_64", false},
	        {"win_amd64", 2, 35, "x86_64", false},
	        {"manylinux_2_x_x86_64", 2, 35, "x86_64", false},
	        {"manylinux_2_28", 2, 35, "x86_64", false},
	        {"manylinux_99999_0_x86_64", 2, 35, "x86_64", false},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++)
		if (ml_manylinux_compatible(rows[i].tag, rows[i].maj, rows[i].min, rows[i].arch) !=
		    rows[i].want)
			fail_msg("%s on glibc %d.%d %s should be %s", rows[i].tag, rows[i].maj,
			         rows[i].min, rows[i].arch,
			         rows[i].want ? "compatible" : "incompatible");
	assert_false(ml_manylinux_compatible(NULL, 2, 35, "x86_64"));
	assert_false(ml_manylinux_compatible("manylinux1_x86_64", 2, 35, NULL));
}

static void test_manylinux_compatible_agrees_with_the_tag_list(void **state)
{
	(void)state;
	tagv t = tags_for("linux", "x86_64", "glibc", 2, 31, 12);
	char tag[64];
	for (int minor = 0; minor <= 40; minor++) {
		snprintf(tag, sizeof tag, "manylinux_2_%d_x86_64", minor);
		char full[96];
		snprintf(full, sizeof full, "cp312-cp312-%s", tag);
		bool listed = index_of(&t, full) >= 0;
		if (listed != ml_manylinux_compatible(tag, 2, 31, "x86_64"))
			fail_msg("%s: listed %d but compatible %d", tag, listed, !listed);
	}
	ml_tags_free(t.v, t.n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cp312_glibc_2_35_x86_64_starts_with_the_most_specific_tags),
	        cmocka_unit_test(test_manylinux2014_alias_matches_glibc_2_17),
	        cmocka_unit_test(test_manylinux2010_and_manylinux1_aliases_follow_2_12_and_2_5),
	        cmocka_unit_test(test_aarch64_manylinux_stops_at_2_17),
	        cmocka_unit_test(test_tag_families_come_in_packaging_order),
	        cmocka_unit_test(test_musl_lists_musllinux_down_to_1_0_then_linux),
	        cmocka_unit_test(test_unknown_libc_lists_only_the_plain_linux_tag),
	        cmocka_unit_test(test_windows_platforms),
	        cmocka_unit_test(test_macos_platforms_as_packaging_lists_them),
	        cmocka_unit_test(test_old_python_abi_has_the_pymalloc_suffix),
	        cmocka_unit_test(test_unsupported_targets_are_refused),
	        cmocka_unit_test(test_wheel_filename_parse_splits_the_pep427_name),
	        cmocka_unit_test(test_wheel_filename_parse_refuses_malformed_names),
	        cmocka_unit_test(test_wheel_tag_rank_prefers_the_most_specific_wheel),
	        cmocka_unit_test(test_compressed_tag_sets_expand_to_their_best_member),
	        cmocka_unit_test(test_wheels_for_another_target_do_not_install),
	        cmocka_unit_test(test_manylinux_compatible_follows_pep600_and_the_legacy_aliases),
	        cmocka_unit_test(test_manylinux_compatible_agrees_with_the_tag_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
