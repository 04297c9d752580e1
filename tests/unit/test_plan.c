/*
 * test_plan.c - specs for the plan (src/plan/plan.c through
 * ml_plan_make(), offline, with the embedded manifests and interpreter
 * pins): one wheel per package that applies here, chosen for the
 * interpreter's version and named, hashed and sized as the manifest's
 * `# mlsetup-file:` lines say; the requested flags from the manifest's
 * header; sizes that add up; cache state; files a manifest cannot name;
 * a manifest with no wheel for this platform; nothing fitting; too little
 * disk. Expectations are read from the manifests/ files as text, so the specs
 * hold when the manifests are locked again.
 *
 * Tests run from the repository root (tests/run-tests.sh does that).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/plan.h"

typedef struct fx {
	char *tmp;
	char cache[4096];
	ml_machine m;
	ml_gpu gpus[2];
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	f->tmp = tmpdir_new("plan");
	if (!f->tmp)
		return -1;
	pf(f->cache, "%s/cache", f->tmp);
	unsetenv("MLSETUP_PYTHON_PINS");
	unsetenv("MLSETUP_CACHE_DIR");
	/* Linux x86_64, glibc 2.36, an RTX 3090 on an R550 driver, 500 GiB free. */
	ml_machine *m = &f->m;
	snprintf(m->os.name, sizeof(m->os.name), "linux");
	snprintf(m->os.arch, sizeof(m->os.arch), "x86_64");
	snprintf(m->os.libc_kind, sizeof(m->os.libc_kind), "glibc");
	snprintf(m->os.libc_version, sizeof(m->os.libc_version), "2.36");
	snprintf(m->driver.version, sizeof(m->driver.version), "550.127.05");
	snprintf(m->target_dir, sizeof(m->target_dir), "%s", f->tmp);
	m->disk_free_mib = 500 * 1024;
	m->gpus = f->gpus;
	m->n_gpus = 1;
	snprintf(f->gpus[0].name, sizeof(f->gpus[0].name), "NVIDIA GeForce RTX 3090");
	f->gpus[0].cc_major = 8;
	f->gpus[0].cc_minor = 6;
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

static ml_plan *plan_for(fx *f, const char *python, const char *manifest)
{
	ml_plan_opts o = ML_PLAN_OPTS_INIT;
	char target[4096];
	o.python = python;
	o.manifest = manifest;
	o.target = pf(target, "%s/.venv", f->tmp);
	o.cache_dir = f->cache;
	o.offline = true;
	ml_plan *p = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_plan_make(&p, &f->m, &o, &err) != 0)
		fail_msg("ml_plan_make: %s", err.msg);
	return p;
}

static const ml_artifact *artifact(const ml_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, name) == 0)
			return &p->files[i];
	fail_msg("no %s in the plan", name);
	return NULL;
}

/* The value of a `# mlsetup: key = value` line of a shipped manifest. */
static char *header(const char *manifest, const char *key)
{
	char path[4096];
	char *text = slurp(pf(path, "manifests/%s", manifest), NULL);
	if (!text)
		fail_msg("manifests/%s not found: run the tests from the repository root",
		         manifest);
	char want[256];
	sf(want, sizeof(want), "\n# mlsetup: %s = ", key);
	char *at = strstr(text, want);
	if (!at)
		fail_msg("manifests/%s has no %s header", manifest, key);
	at += strlen(want);
	char *value = strndup(at, strcspn(at, "\n"));
	free(text);
	return value;
}

/* Fails unless manifests/<manifest> has the line
 * "# mlsetup-file: <sha256> <size> <filename>" for a. */
static void assert_file_line(const char *manifest, const ml_artifact *a)
{
	char path[4096], line[1024];
	char *text = slurp(pf(path, "manifests/%s", manifest), NULL);
	assert_non_null(text);
	sf(line, sizeof(line), "\n# mlsetup-file: %s %lld %s\n", a->sha256, (long long)a->size,
	   a->filename);
	if (!strstr(text, line))
		fail_msg("%s: the plan says '%s', the manifest does not", manifest, line + 1);
	free(text);
}

/* Counts the requirement lines (name==version) of a shipped manifest. */
static size_t requirement_count(const char *manifest)
{
	char path[4096];
	char *text = slurp(pf(path, "manifests/%s", manifest), NULL);
	assert_non_null(text);
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		if (l[0] != '#' && l[0] != ' ' && l[0] != '-' && strstr(l, "=="))
			n++;
	free(text);
	return n;
}

static void test_one_wheel_per_package_named_hashed_and_sized_by_the_manifest(void **state)
{
	fx *f = *state;
	ml_plan *p = plan_for(f, "3.12", NULL);
	assert_non_null(p->selection->manifest);
	assert_string_equal(p->selection->manifest->name, "requirements.txt");
	assert_int_equal(p->n_files + p->n_not_here, requirement_count("requirements.txt"));
	assert_true(p->n_files > 10);
	assert_int_equal(p->n_unknown, 0);
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		assert_non_null(a->filename);
		assert_int_equal(strlen(a->sha256), 64);
		assert_true(a->size > 0);
		assert_true(a->tag_rank >= 0);
		assert_true(a->line > 0);
		/* The file is a wheel of this package and version... */
		ml_wheel_name wn;
		assert_int_equal(ml_wheel_filename_parse(&wn, a->filename, NULL), 0);
		assert_string_equal(wn.normalized, a->name);
		assert_int_equal(ml_version_cmp(wn.version, a->version), 0);
		/* ...for CPython 3.12 where it is version-specific... */
		if (strncmp(wn.python_tag, "cp", 2) == 0 && strcmp(wn.abi_tag, "abi3") != 0)
			assert_string_equal(wn.python_tag, "cp312");
		/* ...exactly as the manifest records it. */
		assert_file_line("requirements.txt", a);
	}
	const ml_artifact *torch = artifact(p, "torch");
	assert_non_null(strstr(torch->filename, "-cp312-cp312-"));
	assert_non_null(strstr(torch->filename, "x86_64.whl"));
	ml_plan_free(p);
}

static void test_cpython_311_gets_the_cp311_wheels_of_the_same_versions(void **state)
{
	fx *f = *state;
	ml_plan *p12 = plan_for(f, "3.12", NULL);
	ml_plan *p11 = plan_for(f, "3.11", NULL);
	assert_string_equal(p11->python.xy, "3.11");
	assert_int_equal(p11->n_files, p12->n_files);
	const ml_artifact *t11 = artifact(p11, "torch"), *t12 = artifact(p12, "torch");
	assert_string_equal(t11->version, t12->version);
	assert_non_null(strstr(t11->filename, "-cp311-cp311-"));
	assert_string_not_equal(t11->sha256, t12->sha256);
	assert_file_line("requirements.txt", t11);
	ml_plan_free(p11);
	ml_plan_free(p12);
}

static void test_requested_flags_follow_the_manifest_header(void **state)
{
	fx *f = *state;
	ml_plan *p = plan_for(f, "3.12", NULL);
	char *requested = header("requirements.txt", "requested");
	size_t n_requested = 0;
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		char word[300];
		sf(word, sizeof(word), " %s ", a->name);
		char padded[2048];
		sf(padded, sizeof(padded), " %s ", requested);
		bool listed = strstr(padded, word) != NULL;
		if (a->requested != listed)
			fail_msg("%s: requested is %d, the header says '%s'", a->name, a->requested,
			         requested);
		n_requested += a->requested;
	}
	assert_true(artifact(p, "torch")->requested);
	assert_true(n_requested >= 5);
	assert_true(n_requested < p->n_files); /* dependencies are not requested */
	free(requested);
	ml_plan_free(p);
}

static void test_sizes_add_up_and_an_empty_cache_downloads_everything(void **state)
{
	fx *f = *state;
	ml_plan *p = plan_for(f, "3.12", NULL);
	uint64_t sum = 0;
	for (size_t i = 0; i < p->n_files; i++) {
		assert_false(p->files[i].cached);
		sum += (uint64_t)p->files[i].size;
	}
	assert_int_equal(p->total_bytes, sum);
	assert_int_equal(p->download_bytes, sum);
	/* An estimate: the downloads plus the unpacked environment. */
	assert_true(p->disk_needed_bytes > p->download_bytes + p->total_bytes);
	assert_int_equal(p->n_warnings, 0);
	ml_plan_free(p);
}

/* Creates path if needed and makes it size bytes long (truncate -s). */
static void resize(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static void test_a_wheel_already_in_the_cache_is_not_downloaded_again(void **state)
{
	fx *f = *state;
	ml_plan *before = plan_for(f, "3.12", NULL);
	const ml_artifact *a = artifact(before, "numpy");
	/* A file of the right size where the blob goes (plan checks the size;
	 * the hash is checked when the file is used). Sparse: instant. */
	char blob[4096];
	assert_int_equal(ml_cache_blob_path(blob, sizeof(blob), f->cache, a->sha256), 0);
	char dir[4096];
	ml_strlcpy(dir, blob, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	assert_int_equal(ml_fs_mkdirs(dir, 0755), 0);
	resize(blob, (off_t)a->size);
	ml_plan *after = plan_for(f, "3.12", NULL);
	assert_true(artifact(after, "numpy")->cached);
	assert_false(artifact(after, "torch")->cached);
	assert_int_equal(after->total_bytes, before->total_bytes);
	assert_int_equal(after->download_bytes, before->download_bytes - (uint64_t)a->size);
	/* The wrong size is not the cached file. */
	resize(blob, 1);
	ml_plan *wrong = plan_for(f, "3.12", NULL);
	assert_false(artifact(wrong, "numpy")->cached);
	assert_int_equal(wrong->download_bytes, before->download_bytes);
	ml_plan_free(wrong);
	ml_plan_free(after);
	ml_plan_free(before);
}

static void test_the_interpreter_comes_from_the_pins(void **state)
{
	fx *f = *state;
	ml_plan *p = plan_for(f, "3.12", NULL);
	assert_string_equal(p->python.xy, "3.12");
	assert_int_equal(strncmp(p->python.version, "3.12.", 5), 0);
	assert_null(p->python.path);
	char want[64];
	sf(want, sizeof(want), "cpython-%s-linux-x86_64-gnu", p->python.version);
	assert_string_equal(p->python.pin_name, want);
	assert_int_equal(strlen(p->python.sha256), 64);
	assert_non_null(strstr(p->python.url, "x86_64-unknown-linux-gnu"));
	ml_plan_free(p);
	/* No --python: the pins' default version. */
	p = plan_for(f, NULL, NULL);
	assert_true(p->python.xy[0] != '\0');
	assert_int_equal(strncmp(p->python.version, p->python.xy, strlen(p->python.xy)), 0);
	ml_plan_free(p);
}

static void test_a_python_without_a_pin_is_unsupported(void **state)
{
	fx *f = *state;
	ml_plan_opts o = ML_PLAN_OPTS_INIT;
	o.python = "3.7";
	o.cache_dir = f->cache;
	ml_plan *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_make(&p, &f->m, &o, &err), ML_EUNSUPPORTED);
	assert_null(p);
	assert_non_null(strstr(err.msg, "no pinned Python 3.7"));
	assert_non_null(strstr(err.hint, "--python PATH"));
}

static void test_a_blackwell_gpu_on_r570_plans_the_blackwell_manifest(void **state)
{
	fx *f = *state;
	snprintf(f->gpus[0].name, sizeof(f->gpus[0].name), "NVIDIA GeForce RTX 5090");
	f->gpus[0].cc_major = 12;
	f->gpus[0].cc_minor = 0;
	snprintf(f->m.driver.version, sizeof(f->m.driver.version), "570.124.04");
	ml_plan *p = plan_for(f, "3.12", NULL);
	assert_string_equal(p->selection->manifest->name, "requirements_blackwell.txt");
	char *torch = header("requirements_blackwell.txt", "torch");
	assert_string_equal(artifact(p, "torch")->version, torch);
	for (size_t i = 0; i < p->n_files; i++)
		assert_file_line("requirements_blackwell.txt", &p->files[i]);
	free(torch);
	ml_plan_free(p);
}

static void test_when_nothing_fits_the_plan_has_no_files(void **state)
{
	fx *f = *state;
	f->gpus[0].cc_major = 12;
	f->gpus[0].cc_minor = 0;
	ml_plan *p = plan_for(f, "3.12", NULL);
	assert_null(p->selection->manifest);
	assert_non_null(strstr(p->selection->remedy, "570.26"));
	assert_int_equal(p->n_files, 0);
	assert_int_equal(p->total_bytes, 0);
	ml_plan_free(p);
}

static void test_too_little_disk_is_a_warning_naming_the_target(void **state)
{
	fx *f = *state;
	f->m.disk_free_mib = 100;
	ml_plan *p = plan_for(f, "3.12", NULL);
	assert_int_equal(p->n_warnings, 1);
	assert_non_null(strstr(p->warnings[0], "only 100 MiB free"));
	assert_non_null(strstr(p->warnings[0], f->tmp));
	ml_plan_free(p);
}

/* Writes a manifest into the scratch directory; returns its path. */
static const char *write_manifest(fx *f, char *path, const char *text)
{
	pf(path, "%s/m.txt", f->tmp);
	FILE *w = fopen(path, "w");
	fputs(text, w);
	fclose(w);
	return path;
}

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static void test_files_the_manifest_does_not_name_are_unknown_with_a_warning(void **state)
{
	fx *f = *state;
	char path[4096];
	write_manifest(f, path,
	               "# mlsetup: python = 3.12\n"
	               "# mlsetup: platforms = linux-x86_64\n"
	               "# mlsetup: requested = alpha\n"
	               "alpha==1.0 --hash=sha256:" SHA_A "\n"
	               "beta==2.0 --hash=sha256:" SHA_B "\n"
	               "gamma==3.0 ; sys_platform == 'win32' --hash=sha256:" SHA_C "\n"
	               "# mlsetup-file: " SHA_A " 1234 alpha-1.0-py3-none-any.whl\n");
	ml_plan *p = plan_for(f, "3.12", path);
	assert_true(p->selection->overridden);
	assert_int_equal(p->n_files, 2);
	assert_int_equal(p->n_not_here, 1); /* gamma is for Windows only */
	assert_int_equal(p->n_unknown, 1);
	const ml_artifact *alpha = artifact(p, "alpha"), *beta = artifact(p, "beta");
	assert_string_equal(alpha->filename, "alpha-1.0-py3-none-any.whl");
	assert_int_equal(alpha->size, 1234);
	assert_true(alpha->requested);
	assert_null(beta->filename);
	assert_int_equal(beta->size, -1);
	assert_string_equal(beta->sha256, "");
	assert_false(beta->requested);
	assert_int_equal(p->total_bytes, 1234);
	assert_int_equal(p->n_warnings, 1);
	assert_non_null(strstr(p->warnings[0], "1 file could not be named or sized"));
	ml_plan_free(p);
}

static void test_a_manifest_with_no_wheel_for_this_platform_is_unsupported(void **state)
{
	fx *f = *state;
	char path[4096];
	write_manifest(f, path,
	               "# mlsetup: python = 3.12\n"
	               "winonly==1.0 --hash=sha256:" SHA_A "\n"
	               "# mlsetup-file: " SHA_A " 10 winonly-1.0-cp312-cp312-win_amd64.whl\n");
	ml_plan_opts o = ML_PLAN_OPTS_INIT;
	o.python = "3.12";
	o.manifest = path;
	o.cache_dir = f->cache;
	ml_plan *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_make(&p, &f->m, &o, &err), ML_EUNSUPPORTED);
	assert_null(p);
	assert_non_null(strstr(err.msg, "line 2"));
	assert_non_null(strstr(err.msg, "no wheel of winonly 1.0 installs on CPython 3.12"));
}

static void test_the_wheel_with_the_best_pep425_tag_wins(void **state)
{
	fx *f = *state;
	char path[4096];
	/* Listed worst first: the order in the manifest must not matter. */
	write_manifest(
	        f, path,
	        "# mlsetup: python = 3.12\n"
	        "alpha==1.0 --hash=sha256:" SHA_A " --hash=sha256:" SHA_B " --hash=sha256:" SHA_C
	        "\n"
	        "# mlsetup-file: " SHA_A " 10 alpha-1.0-py3-none-any.whl\n"
	        "# mlsetup-file: " SHA_B " 20 alpha-1.0-cp312-cp312-manylinux_2_17_x86_64.whl\n"
	        "# mlsetup-file: " SHA_C " 30 alpha-1.0-cp312-cp312-manylinux_2_39_x86_64.whl\n");
	ml_plan *p = plan_for(f, "3.12", path);
	const ml_artifact *a = artifact(p, "alpha");
	/* glibc 2.36 cannot run manylinux_2_39; of the rest, cp312 beats py3. */
	assert_string_equal(a->filename, "alpha-1.0-cp312-cp312-manylinux_2_17_x86_64.whl");
	assert_string_equal(a->sha256, SHA_B);
	assert_int_equal(a->size, 20);
	ml_plan_free(p);
	/* On CPython 3.11 only the pure wheel installs. */
	p = plan_for(f, "3.11", path);
	assert_string_equal(artifact(p, "alpha")->filename, "alpha-1.0-py3-none-any.whl");
	ml_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	        T(test_one_wheel_per_package_named_hashed_and_sized_by_the_manifest),
	        T(test_cpython_311_gets_the_cp311_wheels_of_the_same_versions),
	        T(test_requested_flags_follow_the_manifest_header),
	        T(test_sizes_add_up_and_an_empty_cache_downloads_everything),
	        T(test_a_wheel_already_in_the_cache_is_not_downloaded_again),
	        T(test_the_interpreter_comes_from_the_pins),
	        T(test_a_python_without_a_pin_is_unsupported),
	        T(test_a_blackwell_gpu_on_r570_plans_the_blackwell_manifest),
	        T(test_when_nothing_fits_the_plan_has_no_files),
	        T(test_too_little_disk_is_a_warning_naming_the_target),
	        T(test_the_wheel_with_the_best_pep425_tag_wins),
	        T(test_files_the_manifest_does_not_name_are_unknown_with_a_warning),
	        T(test_a_manifest_with_no_wheel_for_this_platform_is_unsupported),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
