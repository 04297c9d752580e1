/*
 * test_report.c - unit tests for the report stage: the document an install
 * writes into its environment reads back to the same facts, a report
 * matches exactly the plan it was made for (the "already up to date"
 * check), and what is not a report is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "mlsetup/core.h"
#include "mlsetup/report.h"

#define H(c)                                                                                       \
	c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c  \
	        c c c c c c c c c c c c c c c c c c c
#define HA H("a")
#define HB H("b")
#define HC H("c")

/* A plan of two wheels from manifest m.txt for Python 3.11.7, and what
 * installing it did; everything a report is made from. */
typedef struct fixture {
	char dir[64];
	ml_machine machine;
	ml_manifest manifest;
	ml_selection selection;
	ml_artifact files[2];
	ml_plan plan;
	ml_wheel_result wheels[2];
	bool from_cache[2];
	ml_python_info python;
	double seconds[2];
	const char *stage_names[2];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/mlsetup-report-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	strcpy(f->machine.os.name, "linux");
	strcpy(f->machine.os.arch, "x86_64");
	f->manifest.name = "m.txt";
	f->selection.manifest = &f->manifest;
	f->files[0] = (ml_artifact){
	        "purepkg", "1.0", "purepkg-1.0-py3-none-any.whl", HA, 100, 0, true, false, 5, NULL};
	f->files[1] = (ml_artifact){"platpkg", "2.0", "platpkg-2.0-cp311-cp311-linux_x86_64.whl",
	                            HB,        200,   0,
	                            false,     false, 6,
	                            NULL};
	f->plan.selection = &f->selection;
	strcpy(f->plan.python.version, "3.11.7");
	strcpy(f->plan.python.xy, "3.11");
	f->plan.files = f->files;
	f->plan.n_files = 2;
	f->wheels[0].bytes_extracted = 1000;
	f->wheels[0].n_linked = 3;
	f->wheels[1].cache_hit = true;
	f->wheels[1].n_linked = 4;
	f->wheels[1].method = ML_LINK_HARDLINK;
	f->from_cache[1] = true;
	strcpy(f->python.version, "3.11.7");
	strcpy(f->python.executable, "/opt/python/bin/python3.11");
	f->seconds[0] = 1.5;
	f->seconds[1] = 2.0;
	f->stage_names[0] = "fetch";
	f->stage_names[1] = "install";
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	assert_int_equal(ml_fs_rm_tree(f->dir), 0);
	free(f);
	return 0;
}

static ml_report_input input_of(fixture *f, int status, const ml_err *err)
{
	ml_report_input in = ML_REPORT_INPUT_INIT;
	in.status = status;
	in.err = err;
	in.target = f->dir;
	in.machine = &f->machine;
	in.plan = &f->plan;
	in.python = &f->python;
	in.wheels = f->wheels;
	in.from_cache = f->from_cache;
	in.stage_names = f->stage_names;
	in.stage_seconds = f->seconds;
	in.n_stages = 2;
	in.downloaded_files = 1;
	in.downloaded_bytes = 100;
	in.files_from_cache = 1;
	return in;
}

/* Builds the report of f with status, writes it into f->dir, reads it back. */
static ml_report *write_and_read(fixture *f, int status)
{
	ml_err err = ML_ERR_INIT;
	ml_err_set(&err, status, "it failed");
	ml_report_input in = input_of(f, status, &err);
	cJSON *doc = ml_report_build(&in);
	assert_non_null(doc);
	assert_int_equal(ml_report_write(f->dir, doc, &err), 0);
	cJSON_Delete(doc);
	ml_report *r = NULL;
	assert_int_equal(ml_report_read(&r, f->dir, &err), 0);
	return r;
}

static void test_document_carries_the_schema_and_sums(void **state)
{
	fixture *f = *state;
	ml_report_input in = input_of(f, 0, NULL);
	cJSON *doc = ml_report_build(&in);
	assert_string_equal(cJSON_GetObjectItem(doc, "schema")->valuestring, "mlsetup.report/1");
	assert_string_equal(cJSON_GetObjectItem(doc, "status")->valuestring, "ok");
	assert_null(cJSON_GetObjectItem(doc, "error"));
	cJSON *inst = cJSON_GetObjectItem(doc, "installed");
	assert_int_equal(cJSON_GetArraySize(inst), 2);
	cJSON *second = cJSON_GetArrayItem(inst, 1);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(second, "from_cache")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(second, "unpacked_cache_hit")));
	assert_string_equal(cJSON_GetObjectItem(second, "link_method")->valuestring, "hardlink");
	cJSON *c = cJSON_GetObjectItem(doc, "counters");
	assert_int_equal(cJSON_GetObjectItem(c, "bytes_extracted")->valueint, 1000);
	assert_int_equal(cJSON_GetObjectItem(c, "files_linked")->valueint, 7);
	assert_int_equal(cJSON_GetObjectItem(c, "unpacked_cache_hits")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(c, "downloaded_files")->valueint, 1);
	cJSON *st = cJSON_GetObjectItem(doc, "stages");
	assert_true(cJSON_GetObjectItem(st, "fetch_s")->valuedouble == 1.5);
	assert_true(cJSON_GetObjectItem(st, "total_s")->valuedouble == 3.5);
	assert_null(cJSON_GetObjectItem(doc, "verification"));
	assert_null(cJSON_GetObjectItem(doc, "gpu_verification"));
	cJSON_Delete(doc);
}

static void test_round_trip_matches_its_own_plan(void **state)
{
	fixture *f = *state;
	ml_report *r = write_and_read(f, 0);
	assert_string_equal(ml_report_manifest(r), "m.txt");
	assert_true(ml_report_matches_plan(r, &f->plan));
	/* the order of the wheels does not matter */
	ml_artifact swapped[2] = {f->files[1], f->files[0]};
	ml_plan p = f->plan;
	p.files = swapped;
	assert_true(ml_report_matches_plan(r, &p));
	ml_report_free(r);
}

static void test_another_plan_does_not_match(void **state)
{
	fixture *f = *state;
	ml_report *r = write_and_read(f, 0);
	ml_plan p = f->plan;
	ml_artifact other[2] = {f->files[0], f->files[1]};
	strcpy(other[1].sha256, HC); /* another wheel */
	p.files = other;
	assert_false(ml_report_matches_plan(r, &p));
	p = f->plan;
	p.n_files = 1; /* one wheel fewer */
	assert_false(ml_report_matches_plan(r, &p));
	p = f->plan;
	strcpy(p.python.version, "3.11.8"); /* another interpreter */
	assert_false(ml_report_matches_plan(r, &p));
	ml_manifest mf = f->manifest;
	mf.name = "other.txt"; /* another manifest */
	ml_selection s = f->selection;
	s.manifest = &mf;
	p = f->plan;
	p.selection = &s;
	assert_false(ml_report_matches_plan(r, &p));
	s.manifest = NULL; /* nothing fits */
	assert_false(ml_report_matches_plan(r, &p));
	ml_report_free(r);
}

static void test_a_failed_build_never_matches(void **state)
{
	fixture *f = *state;
	ml_report *r = write_and_read(f, ML_EFAIL);
	assert_false(ml_report_matches_plan(r, &f->plan));
	assert_string_equal(ml_report_manifest(r), "m.txt");
	ml_report_free(r);
}

static void test_no_report_is_enoent(void **state)
{
	fixture *f = *state;
	ml_report *r = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_report_read(&r, f->dir, &err), ML_ENOENT);
	assert_null(r);
	assert_false(ml_report_matches_plan(NULL, &f->plan));
	assert_null(ml_report_manifest(NULL));
}

static void test_what_is_not_a_report_is_refused(void **state)
{
	fixture *f = *state;
	char path[128];
	snprintf(path, sizeof(path), "%s/mlsetup-report.json", f->dir);
	const char *bodies[] = {"{\"schema\": \"mlsetup.plan/1\"}", "not json", "[]"};
	for (size_t i = 0; i < 3; i++) {
		FILE *fp = fopen(path, "w");
		assert_non_null(fp);
		fputs(bodies[i], fp);
		fclose(fp);
		ml_report *r = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_report_read(&r, f->dir, &err), ML_EPARSE);
		assert_non_null(strstr(err.msg, "mlsetup.report/1"));
	}
}

static void test_write_replaces_the_old_report_whole(void **state)
{
	fixture *f = *state;
	ml_report_free(write_and_read(f, ML_EFAIL));
	ml_report *r = write_and_read(f, 0);
	assert_true(ml_report_matches_plan(r, &f->plan));
	ml_report_free(r);
	DIR *d = opendir(f->dir);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	assert_int_equal(n, 1); /* no temporary file left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_document_carries_the_schema_and_sums, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_round_trip_matches_its_own_plan, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_another_plan_does_not_match, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_a_failed_build_never_matches, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_no_report_is_enoent, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_what_is_not_a_report_is_refused, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_write_replaces_the_old_report_whole, setup,
	                                        teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
