/*
 * test_install.c - unit tests for the install library: the index sources
 * install and download share (a manifest's own --find-links, taken from
 * the manifest's directory, its --no-index and --trusted-host), and the
 * pipeline's contract when it stops early: the events it sent, and a
 * result and report that say how far it got.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "mlsetup/install.h"
#include "mlsetup/pkg.h"

/* No index from the environment or pip's configuration files. */
static int quiet_env(void **state)
{
	(void)state;
	unsetenv("MLSETUP_INDEX_URL");
	unsetenv("PIP_INDEX_URL");
	unsetenv("PIP_EXTRA_INDEX_URL");
	unsetenv("PIP_FIND_LINKS");
	unsetenv("PIP_NO_INDEX");
	unsetenv("PIP_TRUSTED_HOST");
	setenv("PIP_CONFIG_FILE", "/dev/null", 1);
	return 0;
}

static ml_requirements *manifest(const char *text)
{
	ml_requirements *r = NULL;
	assert_int_equal(ml_requirements_parse(&r, "m.txt", text, strlen(text), 0, NULL), 0);
	return r;
}

static void test_manifest_find_links_is_taken_from_its_directory(void **state)
{
	(void)state;
	char dir[64] = "/tmp/mlsetup-install-XXXXXX", sub[128], path[160];
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/wheels", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/m.txt", dir);
	ml_requirements *m = manifest("--no-index\n--find-links wheels\n--find-links gone\n"
	                              "--find-links https://h.example/w/\n");
	ml_index_config *cfg = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_config_for_manifest(&cfg, NULL, m, path, false, NULL, &err), 0);
	assert_true(cfg->no_index);
	assert_null(cfg->index_url);
	assert_int_equal(cfg->n_find_links, 3);
	assert_string_equal(cfg->find_links[0], sub);    /* exists beside the manifest */
	assert_string_equal(cfg->find_links[1], "gone"); /* does not: as written */
	assert_string_equal(cfg->find_links[2], "https://h.example/w/");
	ml_index_config_free(cfg);
	/* An embedded manifest has no directory: paths stay as written. */
	assert_int_equal(ml_index_config_for_manifest(&cfg, NULL, m, NULL, false, NULL, &err), 0);
	assert_string_equal(cfg->find_links[0], "wheels");
	ml_index_config_free(cfg);
	ml_requirements_free(m);
	rmdir(sub);
	rmdir(dir);
}

static void test_command_line_joins_the_manifest_options(void **state)
{
	(void)state;
	ml_requirements *m =
	        manifest("--no-index\n--find-links /srv/w\n--trusted-host a.example\n");
	char *fl[] = {"/cli/w"};
	char *th[] = {"b.example"};
	ml_index_flags f = ML_INDEX_FLAGS_INIT;
	f.find_links = fl;
	f.n_find_links = 1;
	f.trusted_hosts = th;
	f.n_trusted = 1;
	ml_index_config *cfg = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_config_for_manifest(&cfg, &f, m, "m.txt", false, NULL, &err), 0);
	assert_true(cfg->no_index);
	assert_int_equal(cfg->n_find_links, 2);
	assert_string_equal(cfg->find_links[0], "/cli/w"); /* the command line first */
	assert_string_equal(cfg->find_links[1], "/srv/w");
	assert_int_equal(cfg->n_trusted, 2);
	ml_index_config_free(cfg);
	/* --index-url on the command line overrides the manifest's --no-index */
	f.index_url = "http://127.0.0.1:9/simple/";
	assert_int_equal(ml_index_config_for_manifest(&cfg, &f, m, "m.txt", false, NULL, &err), 0);
	assert_false(cfg->no_index);
	assert_string_equal(cfg->index_url, "http://127.0.0.1:9/simple/");
	ml_index_config_free(cfg);
	ml_requirements_free(m);
}

static void test_manifest_index_url_is_used(void **state)
{
	(void)state;
	ml_requirements *m = manifest("--index-url http://127.0.0.1:9/simple/\n");
	ml_index_config *cfg = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_config_for_manifest(&cfg, NULL, m, "m.txt", true, NULL, &err), 0);
	assert_string_equal(cfg->index_url, "http://127.0.0.1:9/simple/");
	assert_string_equal(cfg->origin, "manifest");
	ml_index_config_free(cfg);
	ml_requirements_free(m);
}

/* Records the events of a run. */
typedef struct seen {
	ml_install_event_kind kinds[64];
	ml_install_stage stages[64];
	int rcs[64];
	size_t n;
	bool machine_given;
} seen;

static void record(const ml_install_event *ev, void *data)
{
	seen *s = data;
	if (s->n < 64) {
		s->kinds[s->n] = ev->kind;
		s->stages[s->n] = ev->stage;
		s->rcs[s->n++] = ev->rc;
	}
	if (ev->kind == ML_EV_MACHINE)
		s->machine_given = ev->machine != NULL;
}

static void test_a_run_that_stops_at_the_plan_says_how_far_it_got(void **state)
{
	(void)state;
	char dir[64] = "/tmp/mlsetup-install-XXXXXX", target[128];
	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/env", dir);
	seen s = {.n = 0};
	ml_install_opts o = ML_INSTALL_OPTS_INIT;
	o.manifest = "tests/no-such-manifest.txt";
	o.target = target;
	o.sysroot = "tests/fixtures/sysroot/empty";
	o.on_event = record;
	o.event_data = &s;
	ml_install_result res;
	ml_err err = ML_ERR_INIT;
	int rc = ml_install(&res, &o, &err);
	assert_int_equal(rc, ML_ENOENT);
	assert_non_null(strstr(err.msg, "no-such-manifest"));
	/* detect began and ended, the machine was announced, the plan failed */
	assert_true(s.n >= 5);
	assert_int_equal(s.kinds[0], ML_EV_STAGE_BEGIN);
	assert_int_equal(s.stages[0], ML_STAGE_DETECT);
	assert_int_equal(s.kinds[1], ML_EV_STAGE_END);
	assert_int_equal(s.rcs[1], 0);
	assert_true(s.machine_given);
	assert_int_equal(s.kinds[s.n - 1], ML_EV_STAGE_END);
	assert_int_equal(s.stages[s.n - 1], ML_STAGE_PLAN);
	assert_int_equal(s.rcs[s.n - 1], ML_ENOENT);
	/* the result holds what was learnt; nothing was put in place */
	assert_non_null(res.machine);
	assert_null(res.plan);
	assert_false(res.committed);
	assert_false(res.report_written);
	assert_string_equal(res.target, "");
	assert_true(res.seconds[ML_STAGE_DETECT] >= 0);
	assert_non_null(res.report);
	assert_string_equal(cJSON_GetObjectItem(res.report, "status")->valuestring, "failed");
	assert_non_null(
	        strstr(cJSON_GetObjectItem(res.report, "error")->valuestring, "no-such-manifest"));
	assert_non_null(cJSON_GetObjectItem(res.report, "machine"));
	assert_null(cJSON_GetObjectItem(res.report, "plan"));
	struct stat st;
	assert_int_equal(stat(target, &st), -1);
	ml_install_result_release(&res);
	ml_install_result_release(NULL);
	rmdir(dir);
}

static void test_stage_names_are_the_report_keys(void **state)
{
	(void)state;
	const char *want[] = {"detect", "plan", "fetch", "interpreter", "install", "verify"};
	for (int i = 0; i < ML_STAGE_COUNT; i++)
		assert_string_equal(ml_install_stage_name(i), want[i]);
	assert_string_equal(ml_install_stage_name(ML_STAGE_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_manifest_find_links_is_taken_from_its_directory),
	        cmocka_unit_test(test_command_line_joins_the_manifest_options),
	        cmocka_unit_test(test_manifest_index_url_is_used),
	        cmocka_unit_test(test_a_run_that_stops_at_the_plan_says_how_far_it_got),
	        cmocka_unit_test(test_stage_names_are_the_report_keys),
	};
	return cmocka_run_group_tests(tests, quiet_env, NULL);
}
