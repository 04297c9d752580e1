/*
 * test_torch_choice.c - the torch build chosen for a requirement that
 * leaves torch open (src/plan/torch_choice.c), on the simulated machines
 * of the right-torch issue: V100 + driver 550, GTX 1080 + 535, RTX 5090 +
 * 570 and + 595, a V100 + RTX 5090 pair, no GPU; with PyTorch's variant
 * indexes on offer (the torch-build table's derived builds) and without
 * them (the package index's builds only). The expected builds follow from
 * the table's CUDA code and the driver table: a change to either that
 * moves a choice fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "mlsetup/plan.h"
#include "../../src/plan/internal.h"

#define TORCH_INDEX   "http://127.0.0.1:9/whl"
#define DEFAULT_INDEX "http://127.0.0.1:9/simple/"

typedef struct box {
	ml_machine m;
	ml_gpu gpus[4];
} box;

static void machine(box *b, const char *driver)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->m.os.name, sizeof(b->m.os.name), "linux");
	snprintf(b->m.os.arch, sizeof(b->m.os.arch), "x86_64");
	snprintf(b->m.driver.version, sizeof(b->m.driver.version), "%s", driver);
	b->m.gpus = b->gpus;
}

static void gpu(box *b, const char *name, int major, int minor)
{
	ml_gpu *g = &b->gpus[b->m.n_gpus];
	g->index = (int)b->m.n_gpus++;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->cc_major = major;
	g->cc_minor = minor;
}

/* Chooses among the table's linux-x86_64 builds matching spec, with the
 * variant indexes when variants. */
static void choose(ml_torch_choice *c, const box *b, const char *spec, bool variants,
                   const char *backend)
{
	ml_torch_offers offers;
	ml_err err = ML_ERR_INIT;
	if (ml_torch_table_offers(&offers, "linux-x86_64", spec, DEFAULT_INDEX,
	                          variants ? TORCH_INDEX : NULL, &err) != 0)
		fail_msg("ml_torch_table_offers: %s", err.msg);
	assert_true(offers.n > 0);
	ml_torch_choose_opts o = {.backend = backend};
	if (ml_torch_choose(c, offers.offers, offers.n, &b->m, &o, &err) != 0)
		fail_msg("ml_torch_choose: %s", err.msg);
	ml_torch_offers_release(&offers);
}

/* The rejection of version (with local part), or NULL. */
static const ml_torch_rejection *rejected(const ml_torch_choice *c, const char *version)
{
	for (size_t i = 0; i < c->n_rejected; i++)
		if (strcmp(c->rejected[i].version, version) == 0)
			return &c->rejected[i];
	return NULL;
}

static void test_v100_on_550_gets_the_newest_cu126_build(void **state)
{
	(void)state;
	box b;
	machine(&b, "550.54.15");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_true(c.chosen);
	assert_true(c.runs);
	assert_string_equal(c.backend, "cu126");
	assert_string_equal(c.version, "2.15.0+cu126");
	assert_string_equal(c.index_url, TORCH_INDEX "/cu126/");
	assert_true(c.compat); /* 550 < 560.28.03, CUDA 12.6's minimum; above 12.x's floor */
	assert_non_null(strstr(c.reason, "minor-version compatibility"));
	const ml_torch_rejection *r = rejected(&c, "2.15.0");
	assert_non_null(r);
	assert_string_equal(r->index, "default");
	assert_non_null(strstr(r->reason, "no code for Tesla V100-SXM2-16GB (sm_70)"));
	assert_non_null(strstr(r->reason, "sm_70: no SASS for 7.0"));
	/* everything ranked above the choice is there, best first */
	assert_string_equal(c.rejected[0].version, "2.15.0");
	assert_null(rejected(&c, "2.14.1+cu126"));
	ml_torch_choice_release(&c);
}

static void test_v100_on_550_without_variant_indexes_gets_2_10_0(void **state)
{
	(void)state;
	box b;
	machine(&b, "550.54.15");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, false, NULL);
	assert_true(c.chosen);
	assert_string_equal(c.version, "2.10.0");
	assert_string_equal(c.backend, "cu128");
	assert_string_equal(c.index_url, DEFAULT_INDEX);
	assert_true(c.compat);
	assert_non_null(rejected(&c, "2.11.0"));
	for (size_t i = 0; i < c.n_rejected; i++)
		assert_string_equal(c.rejected[i].index, "default");
	ml_torch_choice_release(&c);
}

static void test_gtx_1080_on_535_runs_sm_60_code(void **state)
{
	(void)state;
	box b;
	machine(&b, "535.183.01");
	gpu(&b, "NVIDIA GeForce GTX 1080", 6, 1);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_string_equal(c.version, "2.15.0+cu126");
	assert_non_null(strstr(c.reason, "SASS sm_60"));
	ml_torch_choice_release(&c);
	choose(&c, &b, NULL, false, NULL);
	assert_string_equal(c.version, "2.7.1"); /* the last default build with sm_60 */
	ml_torch_choice_release(&c);
}

static void test_rtx_5090_on_570_gets_a_cuda_12_build(void **state)
{
	(void)state;
	box b;
	machine(&b, "570.124.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	/* CUDA 13 builds need 580.65.06 at least; cu126 has no sm_120; the
	 * newest CUDA 12 build with sm_120 SASS is 2.13.0's cu129, under
	 * minor-version compatibility (12.9 wants 575.51.03) */
	assert_string_equal(c.version, "2.13.0+cu129");
	assert_true(c.compat);
	const ml_torch_rejection *r = rejected(&c, "2.15.0");
	assert_non_null(r);
	assert_non_null(strstr(r->reason, "a CUDA 13.2 build needs a driver for CUDA 13"));
	r = rejected(&c, "2.15.0+cu126");
	assert_non_null(r);
	assert_non_null(strstr(r->reason, "no code for NVIDIA GeForce RTX 5090 (sm_120)"));
	ml_torch_choice_release(&c);
	choose(&c, &b, NULL, false, NULL);
	assert_string_equal(c.version, "2.10.0");
	assert_false(c.compat);
	ml_torch_choice_release(&c);
}

static void test_rtx_5090_on_595_gets_the_newest_torch(void **state)
{
	(void)state;
	box b;
	machine(&b, "595.45.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_string_equal(c.version, "2.15.0");
	assert_string_equal(c.backend, "cu132");
	assert_string_equal(c.index_url, DEFAULT_INDEX);
	assert_false(c.compat);
	assert_int_equal(c.n_rejected, 0);
	ml_torch_choice_release(&c);
}

static void test_v100_and_rtx_5090_get_the_one_build_for_both(void **state)
{
	(void)state;
	box b;
	machine(&b, "595.45.04");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_string_equal(c.version, "2.11.0+cu128");
	const ml_torch_rejection *r = rejected(&c, "2.15.0+cu126");
	assert_non_null(r);
	assert_non_null(strstr(r->reason, "RTX 5090"));
	r = rejected(&c, "2.15.0");
	assert_non_null(r);
	assert_non_null(strstr(r->reason, "V100"));
	ml_torch_choice_release(&c);
}

static void test_no_gpu_gets_the_cpu_build(void **state)
{
	(void)state;
	box b;
	machine(&b, "");
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_string_equal(c.version, "2.15.0+cpu");
	assert_string_equal(c.backend, "cpu");
	assert_string_equal(c.index_url, TORCH_INDEX "/cpu/");
	assert_non_null(rejected(&c, "2.15.0")); /* the default index's CUDA build */
	ml_torch_choice_release(&c);
	/* no CPU build on offer: the default index's, which runs on the CPU */
	choose(&c, &b, NULL, false, NULL);
	assert_string_equal(c.version, "2.15.0");
	assert_true(c.runs);
	assert_non_null(strstr(c.reason, "--torch-backend cpu"));
	ml_torch_choice_release(&c);
}

static void test_a_gpu_machine_never_gets_the_cpu_build(void **state)
{
	(void)state;
	box b;
	machine(&b, "535.183.01");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0); /* 535 is too old for sm_120 */
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	assert_false(c.chosen);
	assert_false(c.runs);
	const ml_torch_rejection *r = rejected(&c, "2.15.0+cpu");
	assert_non_null(r);
	assert_non_null(strstr(r->reason, "CPU-only build"));
	/* the nearest option: the newest build a driver upgrade runs */
	assert_non_null(strstr(c.nearest, "595.45.04"));
	assert_non_null(strstr(c.nearest, "torch 2.15.0"));
	ml_torch_choice_release(&c);
}

static void test_specifier_limits_versions_and_default_index_wins_ties(void **state)
{
	(void)state;
	box b;
	machine(&b, "550.54.15");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	ml_torch_choice c;
	choose(&c, &b, "<2.9", true, NULL);
	assert_string_equal(c.version, "2.8.0"); /* not 2.8.0+cu128 nor +cu126 */
	assert_string_equal(c.index_url, DEFAULT_INDEX);
	ml_torch_choice_release(&c);
	choose(&c, &b, "==2.10.0", true, NULL);
	assert_string_equal(c.version, "2.10.0");
	ml_torch_choice_release(&c);
}

static void test_a_named_backend_is_taken_even_when_it_cannot_run(void **state)
{
	(void)state;
	box b;
	machine(&b, "595.45.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, "cu126");
	assert_true(c.chosen);
	assert_false(c.runs);
	assert_string_equal(c.version, "2.15.0+cu126");
	assert_non_null(strstr(c.reason, "no code for NVIDIA GeForce RTX 5090"));
	ml_torch_choice_release(&c);
	choose(&c, &b, NULL, true, "cu130");
	assert_true(c.runs);
	assert_string_equal(c.version, "2.15.0+cu130");
	ml_torch_choice_release(&c);
}

static void test_json_carries_the_choice_and_the_rejected(void **state)
{
	(void)state;
	box b;
	machine(&b, "550.54.15");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	cJSON *j = ml_torch_choice_to_json(&c);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "version")->valuestring, "2.15.0+cu126");
	assert_string_equal(cJSON_GetObjectItem(j, "backend")->valuestring, "cu126");
	assert_string_equal(cJSON_GetObjectItem(j, "index_url")->valuestring,
	                    TORCH_INDEX "/cu126/");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "minor_version_compat")));
	cJSON *rej = cJSON_GetObjectItem(j, "rejected");
	assert_int_equal(cJSON_GetArraySize(rej), (int)c.n_rejected);
	cJSON *first = cJSON_GetArrayItem(rej, 0);
	assert_string_equal(cJSON_GetObjectItem(first, "version")->valuestring, "2.15.0");
	assert_non_null(strstr(cJSON_GetObjectItem(first, "reason")->valuestring, "sm_70"));
	assert_null(cJSON_GetObjectItem(j, "nearest"));
	cJSON_Delete(j);
	ml_torch_choice_release(&c);
}

/* learn: the facts of one build, counted. */
static int learnt;
static int learn_from_table(const ml_torch_build **out, const ml_torch_offer *o, void *data,
                            ml_err *err)
{
	(void)data;
	(void)err;
	learnt++;
	*out = ml_torch_build_get(o->version, o->local && o->local[0] ? o->local : "cu128",
	                          "linux-x86_64", o->index);
	return 0;
}

static int learn_fails(const ml_torch_build **out, const ml_torch_offer *o, void *data, ml_err *err)
{
	(void)out;
	(void)o;
	(void)data;
	return ml_err_set(err, ML_ENET, "cannot reach the index");
}

static void test_facts_are_learnt_in_rank_order_and_only_as_needed(void **state)
{
	(void)state;
	box b;
	machine(&b, "570.124.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	/* three builds without facts: 2.10.0 (default), 2.9.0+cu128, 2.8.0+cu126 */
	ml_torch_offer offers[] = {
	        {.version = "2.8.0", .local = "cu126", .index = ML_TORCH_INDEX_VARIANT},
	        {.version = "2.10.0", .local = "", .index = ML_TORCH_INDEX_DEFAULT},
	        {.version = "2.9.0", .local = "cu128", .index = ML_TORCH_INDEX_VARIANT},
	};
	ml_torch_choose_opts o = {.learn = learn_from_table};
	ml_torch_choice c;
	ml_err err = ML_ERR_INIT;
	learnt = 0;
	assert_int_equal(ml_torch_choose(&c, offers, 3, &b.m, &o, &err), 0);
	assert_string_equal(c.version, "2.10.0");
	assert_string_equal(c.build.cuda, "12.8");
	assert_int_equal(learnt, 1); /* the newest ran: the others were never learnt */
	ml_torch_choice_release(&c);
	/* without learn, builds without facts are passed over with that reason */
	assert_int_equal(ml_torch_choose(&c, offers, 3, &b.m, NULL, &err), 0);
	assert_false(c.chosen);
	assert_int_equal(c.n_rejected, 3);
	assert_non_null(strstr(c.rejected[0].reason, "was not audited"));
	ml_torch_choice_release(&c);
	/* a failed audit passes the build over and says why */
	o.learn = learn_fails;
	assert_int_equal(ml_torch_choose(&c, offers, 3, &b.m, &o, &err), 0);
	assert_false(c.chosen);
	assert_non_null(strstr(c.rejected[0].reason, "cannot reach the index"));
	ml_torch_choice_release(&c);
}

static void test_the_variant_index_base_and_backends_are_data(void **state)
{
	(void)state;
	const char *const *backends = NULL;
	size_t n = 0;
	const char *url = ml_torch_index_default(&backends, &n);
	assert_non_null(url);
	assert_true(strncmp(url, "https://", 8) == 0);
	assert_true(n >= 5);
	bool cpu = false, cu126 = false;
	for (size_t i = 0; i < n; i++) {
		cpu |= strcmp(backends[i], "cpu") == 0;
		cu126 |= strcmp(backends[i], "cu126") == 0;
	}
	assert_true(cpu && cu126);
}

static void test_resolution_is_pinned_to_the_choice_and_its_index(void **state)
{
	(void)state;
	box b;
	machine(&b, "550.54.15");
	gpu(&b, "Tesla V100-SXM2-16GB", 7, 0);
	ml_torch_choice c;
	choose(&c, &b, NULL, true, NULL);
	ml_plan p;
	memset(&p, 0, sizeof(p));
	p.torch_choice = &c;
	char **args = NULL;
	size_t n = 0;
	assert_int_equal(ml_plan_torch_resolve_args(&args, &n, &p), 0);
	assert_int_equal(n, 3);
	assert_string_equal(args[0], "torch==2.15.0+cu126");
	assert_string_equal(args[1], "--extra-index-url");
	assert_string_equal(args[2], TORCH_INDEX "/cu126/");
	for (size_t i = 0; i < n; i++)
		free(args[i]);
	free(args);
	ml_torch_choice_release(&c);
	/* the default index's build: the run's own indexes, only the pin */
	choose(&c, &b, NULL, false, NULL);
	assert_int_equal(ml_plan_torch_resolve_args(&args, &n, &p), 0);
	assert_int_equal(n, 1);
	assert_string_equal(args[0], "torch==2.10.0");
	free(args[0]);
	free(args);
	ml_torch_choice_release(&c);
	/* nothing chosen: nothing added */
	p.torch_choice = NULL;
	assert_int_equal(ml_plan_torch_resolve_args(&args, &n, &p), 0);
	assert_int_equal(n, 0);
	assert_null(args);
}

/* linux-aarch64: the table's variant builds (the package index's aarch64
 * torch has no entry there): a GH200 (9.0) on driver 575 (CUDA 12.9)
 * cannot start CUDA 13 builds, so it gets the newest +cu126; Thor (11.0)
 * on 595 gets a CUDA 13 build, the only ones with sm_110. */
static void test_aarch64_gh200_and_thor(void **state)
{
	(void)state;
	box b;
	machine(&b, "575.51.03");
	snprintf(b.m.os.arch, sizeof(b.m.os.arch), "aarch64");
	gpu(&b, "NVIDIA GH200 480GB", 9, 0);
	ml_torch_offers offers;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_torch_table_offers(&offers, "linux-aarch64", NULL, DEFAULT_INDEX,
	                                       TORCH_INDEX, &err),
	                 0);
	ml_torch_choice c;
	assert_int_equal(ml_torch_choose(&c, offers.offers, offers.n, &b.m, NULL, &err), 0);
	assert_string_equal(c.version, "2.15.0+cu126");
	assert_non_null(strstr(c.rejected[0].reason, "needs a driver for CUDA 13"));
	ml_torch_choice_release(&c);
	machine(&b, "595.45.04");
	snprintf(b.m.os.arch, sizeof(b.m.os.arch), "aarch64");
	gpu(&b, "NVIDIA Jetson AGX Thor", 11, 0);
	assert_int_equal(ml_torch_choose(&c, offers.offers, offers.n, &b.m, NULL, &err), 0);
	assert_true(c.chosen);
	assert_string_equal(c.build.version, "2.15.0");
	assert_true(strncmp(c.backend, "cu13", 4) == 0);
	assert_non_null(strstr(c.reason, "sm_110"));
	ml_torch_choice_release(&c);
	ml_torch_offers_release(&offers);
}

static void test_nothing_on_offer_is_said(void **state)
{
	(void)state;
	box b;
	machine(&b, "595.45.04");
	gpu(&b, "NVIDIA GeForce RTX 5090", 12, 0);
	ml_torch_choice c;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_torch_choose(&c, NULL, 0, &b.m, NULL, &err), 0);
	assert_false(c.chosen);
	assert_non_null(strstr(c.nearest, "no torch build is on offer"));
	ml_torch_choice_release(&c);
}

static void test_bad_specifier_is_an_error(void **state)
{
	(void)state;
	ml_torch_offers offers;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_torch_table_offers(&offers, "linux-x86_64", ">>2", NULL, NULL, &err),
	                 ML_EPARSE);
	assert_int_equal(offers.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_v100_on_550_gets_the_newest_cu126_build),
	        cmocka_unit_test(test_v100_on_550_without_variant_indexes_gets_2_10_0),
	        cmocka_unit_test(test_gtx_1080_on_535_runs_sm_60_code),
	        cmocka_unit_test(test_rtx_5090_on_570_gets_a_cuda_12_build),
	        cmocka_unit_test(test_rtx_5090_on_595_gets_the_newest_torch),
	        cmocka_unit_test(test_v100_and_rtx_5090_get_the_one_build_for_both),
	        cmocka_unit_test(test_no_gpu_gets_the_cpu_build),
	        cmocka_unit_test(test_a_gpu_machine_never_gets_the_cpu_build),
	        cmocka_unit_test(test_specifier_limits_versions_and_default_index_wins_ties),
	        cmocka_unit_test(test_a_named_backend_is_taken_even_when_it_cannot_run),
	        cmocka_unit_test(test_json_carries_the_choice_and_the_rejected),
	        cmocka_unit_test(test_facts_are_learnt_in_rank_order_and_only_as_needed),
	        cmocka_unit_test(test_the_variant_index_base_and_backends_are_data),
	        cmocka_unit_test(test_resolution_is_pinned_to_the_choice_and_its_index),
	        cmocka_unit_test(test_aarch64_gh200_and_thor),
	        cmocka_unit_test(test_nothing_on_offer_is_said),
	        cmocka_unit_test(test_bad_specifier_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
