/*
 * test_torch_builds.c - specs for the torch-build table
 * (manifests/torch-builds.json, read by src/plan/torch.c) and for deriving
 * a build from a torch wheel (src/verify/torchbuild.c): lookups by any
 * wheel file's sha256 and by (version, backend, platform), the builds of a
 * version on the package index and on PyTorch's variant indexes (audited,
 * or derived from a release's arch table or its release notes), the
 * audited entries unchanged, the facts tests/e2e/matrix.md records for the
 * builds it names,
 * minimum drivers taken from the one driver table (with a lower bound for
 * toolkits it lacks), and the synthetic wheels of
 * tests/fixtures/make_torch_wheels.py (the +cu128 builds of the PyTorch
 * indexes, CPU-only, ROCm, METADATA-only CUDA versions); and manifests,
 * the shipped ones included, taking their torch facts from the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "win_skip.h"
#include <cjson/cJSON.h>

#include "../../src/verify/internal.h"
#include "env_testutil.h"
#include "mlsetup/plan.h"
#include "mlsetup/verify.h"
#include "../../src/plan/internal.h"

/* Space-separated names of code[0..n). */
static const char *names(const ml_cuda_arch *code, size_t n)
{
	static char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char nm[32];
		assert_int_equal(ml_cuda_arch_format(nm, sizeof nm, &code[i]), 0);
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", nm);
	}
	return buf;
}

static const ml_torch_build *build_of(const char *version)
{
	const ml_torch_build *b = ml_torch_build_find(version, "linux-x86_64");
	assert_non_null(b);
	return b;
}

/* --- the table ------------------------------------------------------------ */

static void test_table_loads_oldest_first_with_files(void **state)
{
	(void)state;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_torch_builds_check(&err), 0);
	const ml_torch_build *b = NULL;
	size_t n = ml_torch_builds(&b), audited = 0, derived = 0;
	assert_true(n >= 15); /* 2.6.0 .. 2.15.0 when generated */
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(ml_version_cmp(b[i - 1].version, b[i].version) <= 0);
		if (b[i].index == ML_TORCH_INDEX_VARIANT) {
			/* derived: no files, the backend as local label, not audited */
			derived++;
			assert_null(b[i].files);
			assert_int_equal(b[i].n_files, 0);
			assert_string_equal(b[i].local, b[i].backend);
			assert_int_not_equal(b[i].source_kind, ML_TORCH_SOURCE_AUDITED);
			assert_int_not_equal(b[i].source_kind, ML_TORCH_SOURCE_WHEEL);
			continue;
		}
		audited++;
		assert_int_equal(b[i].index, ML_TORCH_INDEX_DEFAULT);
		assert_int_equal(b[i].source_kind, ML_TORCH_SOURCE_AUDITED);
		assert_false(b[i].code_unknown);
		assert_string_equal(b[i].platform, "linux-x86_64");
		assert_true(b[i].n_files >= 1);
		assert_true(b[i].n_sass >= 1); /* every Linux x86_64 build is a CUDA build */
		assert_true(b[i].cuda[0] != '\0');
		/* "audited <file> <sha256>", the file one of the build's */
		bool named = false;
		for (size_t k = 0; k < b[i].n_files; k++) {
			assert_true(ml_is_sha256_hex(b[i].files[k].sha256));
			assert_non_null(strstr(b[i].files[k].filename, b[i].version));
			char want[512];
			snprintf(want, sizeof want, "audited %s %s", b[i].files[k].filename,
			         b[i].files[k].sha256);
			named = named || strcmp(b[i].source, want) == 0;
		}
		assert_true(named);
	}
	assert_string_equal(b[0].version, "2.6.0");
	assert_int_equal(b[0].index, ML_TORCH_INDEX_DEFAULT); /* per version: default first */
	assert_true(audited >= 15);
	assert_true(derived > audited);
}

/* The package index's builds as `mlsetup audit` read them (tests/e2e/matrix.md):
 * adding the variant indexes' builds changed none of them. */
static void test_audited_entries_are_unchanged(void **state)
{
	(void)state;
	static const struct {
		const char *version, *build_tag, *cuda, *backend, *sass;
		size_t files;
	} want[] = {
	        {"2.6.0", "", "12.4", "cu124", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 sm_90a",
	         5},
	        {"2.7.0", "", "12.6", "cu126",
	         "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a", 6},
	        {"2.7.1", "", "12.6", "cu126",
	         "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a", 6},
	        {"2.8.0", "", "12.8", "cu128",
	         "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a", 6},
	        {"2.9.0", "", "12.8", "cu128",
	         "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a", 7},
	        {"2.9.1", "", "12.8", "cu128",
	         "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a", 7},
	        {"2.10.0", "", "12.8", "cu128",
	         "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a", 7},
	        {"2.10.0", "3", "12.8", "cu128",
	         "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a", 7},
	        {"2.11.0", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103a sm_120 sm_120a "
	         "sm_121a",
	         7},
	        {"2.12.0", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103a sm_120 sm_120a "
	         "sm_121a",
	         7},
	        {"2.12.1", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103a sm_120 sm_120a "
	         "sm_121a",
	         6},
	        {"2.13.0", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103f sm_120 sm_120a "
	         "sm_121a",
	         6},
	        {"2.14.0", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103f sm_120 sm_120a "
	         "sm_121a",
	         6},
	        {"2.14.1", "", "13.0", "cu130",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103f sm_120 sm_120a "
	         "sm_121a",
	         6},
	        {"2.15.0", "", "13.2", "cu132",
	         "sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103f sm_120 sm_120a "
	         "sm_121a",
	         7},
	};
	const ml_torch_build *all = NULL;
	size_t n = ml_torch_builds(&all);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const ml_torch_build *b = NULL;
		for (size_t k = 0; k < n && !b; k++)
			if (all[k].index == ML_TORCH_INDEX_DEFAULT &&
			    strcmp(all[k].version, want[i].version) == 0 &&
			    strcmp(all[k].build_tag, want[i].build_tag) == 0)
				b = &all[k];
		assert_non_null(b);
		assert_string_equal(b->local, "");
		assert_string_equal(b->cuda, want[i].cuda);
		assert_string_equal(b->backend, want[i].backend); /* the flavour of its CUDA */
		assert_string_equal(names(b->sass, b->n_sass), want[i].sass);
		assert_int_equal(b->n_ptx, 0);
		assert_int_equal(b->n_files, want[i].files);
		/* found by its hashes, never a derived entry */
		for (size_t k = 0; k < b->n_files; k++)
			assert_ptr_equal(ml_torch_build_lookup(b->files[k].sha256), b);
	}
}

/* The five torch 2.6.0 hashes of the shipped requirements.txt. */
static void test_lookup_finds_a_build_by_any_of_its_wheel_hashes(void **state)
{
	(void)state;
	static const char *const h[] = {
	        "6860df13d9911ac158f4c44031609700e1eba07916fff62e21e6ffa0a9e01961",
	        "7979834102cd5b7a43cc64e87f2f3b14bd0e1458f06e9f88ffa386d07c7446e1",
	        "2bb8987f3bb1ef2675897034402373ddfc8f5ef0e156e2d8cfc47cacafdda4a9",
	        "4874a73507a300a5d089ceaff616a569e7bb7c613c56f37f63ec3ffac65259cf",
	        "9EA955317CFCD3852B1402B62AF258CE735C2EDEEE42CA9419B6BC889E5AE053", /* any case */
	};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
		const ml_torch_build *b = ml_torch_build_lookup(h[i]);
		assert_non_null(b);
		assert_string_equal(b->version, "2.6.0");
		assert_string_equal(b->cuda, "12.4");
	}
	assert_null(ml_torch_build_lookup(
	        "0000000000000000000000000000000000000000000000000000000000000000"));
	assert_null(ml_torch_build_lookup("not a hash"));
	assert_null(ml_torch_build_lookup(NULL));
}

/* docs/gpu-truth.md and tests/e2e/matrix.md, measured with mlsetup audit on the real
 * wheels: the package index's defaults. */
static void test_builds_carry_what_facts_md_measured(void **state)
{
	(void)state;
	const ml_torch_build *b = build_of("2.6.0");
	assert_string_equal(names(b->sass, b->n_sass),
	                    "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 sm_90a");
	assert_int_equal(b->n_ptx, 0);
	b = build_of("2.8.0");
	assert_string_equal(b->cuda, "12.8");
	assert_string_equal(names(b->sass, b->n_sass), "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 "
	                                               "sm_90a sm_100 sm_100a sm_120 sm_120a");
	assert_int_equal(b->n_ptx, 0);
	assert_string_equal(build_of("2.9.0")->cuda, "12.8");
	assert_string_equal(build_of("2.10.0")->cuda, "12.8");
	b = build_of("2.11.0");
	assert_string_equal(b->cuda, "13.0");
	assert_string_equal(names(b->sass, 1), "sm_75"); /* Volta dropped */
}

static void test_find_takes_the_highest_build_tag_and_matches_the_local_label(void **state)
{
	(void)state;
	const ml_torch_build *b = build_of("2.10.0");
	assert_string_equal(b->build_tag, "3");
	/* audited builds only: the derived 2.8.0+cu128 is not answered here */
	assert_non_null(
	        ml_torch_build_get("2.8.0", "cu128", "linux-x86_64", ML_TORCH_INDEX_VARIANT));
	assert_null(ml_torch_build_find("2.8.0+cu128", "linux-x86_64"));
	assert_null(ml_torch_build_find("2.8.0", "windows-x86_64"));
	assert_null(ml_torch_build_find("1.0.0", "linux-x86_64"));
}

/* --- the model: (version, backend, platform) on an index ------------------- */

static void test_backend_names_the_flavour(void **state)
{
	(void)state;
	char be[32];
	assert_string_equal(ml_torch_backend(be, sizeof be, "", "13.0"), "cu130");
	assert_string_equal(ml_torch_backend(be, sizeof be, NULL, "12.8.1"), "cu128");
	assert_string_equal(ml_torch_backend(be, sizeof be, "cu126", "12.6"), "cu126");
	assert_string_equal(ml_torch_backend(be, sizeof be, "cu130", NULL), "cu130");
	assert_string_equal(ml_torch_backend(be, sizeof be, "", ""), "cpu");
	assert_string_equal(ml_torch_backend(be, sizeof be, "cpu", NULL), "cpu");
	assert_string_equal(ml_torch_backend(be, sizeof be, "rocm6.2.4", ""), "rocm6.2.4");
	assert_string_equal(ml_torch_backend(be, sizeof be, "", "12"), ""); /* no minor */
	assert_string_equal(ml_torch_backend(be, sizeof be, "ubuntu1", "12.10"), "cu1210");
	assert_string_equal(ml_torch_backend(be, 4, "", "13.0"), ""); /* does not fit */
}

static const ml_torch_build *get(const char *version, const char *backend, const char *platform,
                                 ml_torch_index index)
{
	const ml_torch_build *b = ml_torch_build_get(version, backend, platform, index);
	assert_non_null(b);
	return b;
}

static void test_get_by_version_backend_and_platform(void **state)
{
	(void)state;
	/* 2.15.0 cu132 is on both indexes: the default index's is audited */
	const ml_torch_build *d = get("2.15.0", "cu132", "linux-x86_64", ML_TORCH_INDEX_UNKNOWN);
	assert_int_equal(d->index, ML_TORCH_INDEX_DEFAULT);
	assert_ptr_equal(d, build_of("2.15.0"));
	assert_ptr_equal(get("2.15.0", "cu132", "linux-x86_64", ML_TORCH_INDEX_DEFAULT), d);
	const ml_torch_build *v = get("2.15.0", "cu132", "linux-x86_64", ML_TORCH_INDEX_VARIANT);
	assert_ptr_not_equal(v, d);
	assert_string_equal(v->local, "cu132");
	assert_string_equal(v->cuda, "13.2");
	assert_int_equal(v->source_kind, ML_TORCH_SOURCE_RELEASE_TABLE);
	assert_string_equal(v->source, "release table torch 2.15.0 torch/cuda/__init__.py "
	                               "PYTORCH_RELEASES_CODE_CC");
	assert_null(v->note);
	/* a derived entry lists the table's arches, plain: no a/f variants */
	assert_string_equal(names(v->sass, v->n_sass), "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
	assert_string_equal(ml_torch_build_min_driver(v, false, NULL), "595.45.04");

	/* the highest build tag of the default index */
	assert_string_equal(
	        get("2.10.0", "cu128", "linux-x86_64", ML_TORCH_INDEX_DEFAULT)->build_tag, "3");
	/* a cpu build: no CUDA, no code, nothing unknown about it */
	const ml_torch_build *cpu = get("2.9.0", "cpu", "linux-x86_64", ML_TORCH_INDEX_UNKNOWN);
	assert_int_equal(cpu->index, ML_TORCH_INDEX_VARIANT);
	assert_string_equal(cpu->cuda, "");
	assert_false(cpu->code_unknown);
	assert_int_equal(cpu->n_sass + cpu->n_ptx, 0);
	assert_null(ml_torch_build_min_driver(cpu, false, NULL));

	assert_null(ml_torch_build_get("2.15.0+cu126", "cu126", "linux-x86_64",
	                               ML_TORCH_INDEX_UNKNOWN));
	assert_null(ml_torch_build_get("2.15.0", "cu999", "linux-x86_64", ML_TORCH_INDEX_UNKNOWN));
	assert_null(
	        ml_torch_build_get("2.15.0", "cu126", "windows-x86_64", ML_TORCH_INDEX_UNKNOWN));
	assert_null(ml_torch_build_get("2.15.0", "cu126", "linux-x86_64", ML_TORCH_INDEX_DEFAULT));
	assert_null(ml_torch_build_get(NULL, "cu126", "linux-x86_64", ML_TORCH_INDEX_UNKNOWN));
	assert_null(ml_torch_build_get("2.15.0", NULL, "linux-x86_64", ML_TORCH_INDEX_UNKNOWN));
}

/* Every backend of 2.15.0: the package index's CUDA 13.2 build, and the
 * variant indexes' cpu, cu126, cu130, cu132 and cu134 (the table lists CUDA
 * 13.4; the release notes name it unconfirmed) for x86_64 and aarch64. */
static void test_every_backend_of_2_15_0(void **state)
{
	(void)state;
	const ml_torch_build *b[16];
	size_t n = ml_torch_builds_of("2.15.0", "linux-x86_64", b, 16);
	assert_int_equal(n, 6);
	static const char *const x86[] = {"cu132", "cpu", "cu126", "cu130", "cu132", "cu134"};
	static const char *const cuda[] = {"13.2", "", "12.6", "13.0", "13.2", "13.4"};
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(b[i]->version, "2.15.0");
		assert_string_equal(b[i]->platform, "linux-x86_64");
		assert_string_equal(b[i]->backend, x86[i]);
		assert_string_equal(b[i]->cuda, cuda[i]);
		assert_int_equal(b[i]->index, i ? ML_TORCH_INDEX_VARIANT : ML_TORCH_INDEX_DEFAULT);
		assert_string_equal(b[i]->local, i ? x86[i] : "");
		assert_false(b[i]->code_unknown);
	}
	assert_int_equal(b[1]->source_kind, ML_TORCH_SOURCE_RELEASE_NOTES); /* cpu */
	assert_non_null(b[5]->note);
	assert_non_null(strstr(b[5]->note, "unconfirmed"));

	n = ml_torch_builds_of("2.15.0", "linux-aarch64", b, 16);
	assert_int_equal(n, 4);
	static const char *const arm[] = {"cu126", "cu130", "cu132", "cu134"};
	for (size_t i = 0; i < n; i++)
		assert_string_equal(b[i]->backend, arm[i]);
	assert_string_equal(names(b[0]->sass, b[0]->n_sass), "sm_80 sm_90");
	assert_string_equal(names(b[1]->sass, b[1]->n_sass), "sm_80 sm_90 sm_100 sm_110 sm_120");

	/* every platform; a short array gets the first ones and the count */
	assert_int_equal(ml_torch_builds_of("2.15.0", NULL, NULL, 0), 10);
	assert_int_equal(ml_torch_builds_of("2.15.0", NULL, b, 2), 10);
	assert_string_equal(b[0]->backend, "cu132");
	assert_string_equal(b[1]->backend, "cpu");
	assert_int_equal(ml_torch_builds_of("1.0.0", NULL, b, 16), 0);
	assert_int_equal(ml_torch_builds_of(NULL, NULL, b, 16), 0);
}

/* cu126 builds carry Maxwell to Hopper: sm_50 and sm_70, which the package
 * index's builds of the same releases lack. */
static void test_a_derived_cu126_build_lists_sm_50_and_sm_70(void **state)
{
	(void)state;
	char why[256];
	const ml_torch_build *t = get("2.15.0", "cu126", "linux-x86_64", ML_TORCH_INDEX_VARIANT);
	assert_string_equal(names(t->sass, t->n_sass), "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
	assert_int_equal(t->n_ptx, 0);
	assert_null(t->files);
	assert_true(ml_arch_runs_on(t->sass, t->n_sass, 7, 0, why, sizeof why));   /* V100 */
	assert_true(ml_arch_runs_on(t->sass, t->n_sass, 6, 1, why, sizeof why));   /* GTX 1080 */
	assert_false(ml_arch_runs_on(t->sass, t->n_sass, 12, 0, why, sizeof why)); /* RTX 5090 */
	assert_false(ml_arch_runs_on(build_of("2.15.0")->sass, build_of("2.15.0")->n_sass, 7, 0,
	                             why, sizeof why));

	/* 2.9 has no table of its own: the release notes, said so */
	const ml_torch_build *n = get("2.9.0", "cu126", "linux-x86_64", ML_TORCH_INDEX_VARIANT);
	assert_int_equal(n->source_kind, ML_TORCH_SOURCE_RELEASE_NOTES);
	assert_string_equal(n->source, "release notes");
	assert_string_equal(names(n->sass, n->n_sass), names(t->sass, t->n_sass));
	/* 2.11's table is one set per CUDA version for both host arches */
	const ml_torch_build *f = get("2.11.0", "cu126", "linux-x86_64", ML_TORCH_INDEX_VARIANT);
	assert_string_equal(names(f->sass, f->n_sass), "sm_50 sm_60 sm_70 sm_80 sm_86 sm_90");
	assert_non_null(strstr(f->note, "not keyed by host arch"));
	assert_null(ml_torch_build_get("2.11.0", "cu126", "linux-aarch64", ML_TORCH_INDEX_UNKNOWN));
}

/* A backend whose sources name no code says so: nothing to judge by. */
static void test_a_derived_build_without_code_says_so(void **state)
{
	(void)state;
	const ml_torch_build *b = get("2.6.0", "cu118", "linux-x86_64", ML_TORCH_INDEX_VARIANT);
	assert_true(b->code_unknown);
	assert_string_equal(b->cuda, "11.8");
	assert_int_equal(b->n_sass + b->n_ptx, 0);
	assert_non_null(strstr(b->note, "no compute capabilities"));
	cJSON *j = ml_torch_build_to_json(b);
	assert_non_null(j);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "sass")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "ptx")));
	assert_string_equal(cJSON_GetObjectItem(j, "index")->valuestring, "variant");
	assert_string_equal(cJSON_GetObjectItem(j, "backend")->valuestring, "cu118");
	assert_string_equal(cJSON_GetObjectItem(j, "source")->valuestring, "release notes");
	assert_null(cJSON_GetObjectItem(j, "files")); /* no files: not counted */
	cJSON_Delete(j);
}

/* --- minimum drivers: from drivers.json, never stored in the table -------- */

static void test_min_driver_comes_from_the_driver_table(void **state)
{
	(void)state;
	bool at_least = true;
	assert_string_equal(ml_torch_build_min_driver(build_of("2.8.0"), false, &at_least),
	                    ml_toolkit_min_driver("12.8", false));
	assert_false(at_least);
	assert_string_equal(ml_torch_build_min_driver(build_of("2.8.0"), true, NULL),
	                    ml_toolkit_min_driver("12.8", true));
	assert_string_equal(ml_torch_build_min_driver(build_of("2.11.0"), false, NULL),
	                    ml_toolkit_min_driver("13.0", false));
	/* 2.15.0 is a CUDA 13.2 build: 13.2's own minimum, not 13.0's */
	assert_string_equal(ml_torch_build_min_driver(build_of("2.15.0"), false, &at_least),
	                    "595.45.04");
	assert_false(at_least);
	assert_null(ml_torch_build_min_driver(build_of("2.15.0"), true, &at_least));

	/* not in the table: the newest older 13.x row's (13.2 Update 2), at least */
	ml_torch_build b = {.cuda = "13.9"};
	assert_string_equal(ml_torch_build_min_driver(&b, false, &at_least),
	                    ml_toolkit_min_driver("13.2.2", false));
	assert_true(at_least);
	ml_torch_build major_only = {.cuda = "12"}; /* nvidia-*-cu12: the 12.x floor */
	assert_string_equal(ml_torch_build_min_driver(&major_only, false, &at_least),
	                    ml_minor_version_floor("12.0", false));
	assert_true(at_least);
	ml_torch_build cpu = {.cuda = ""}, future = {.cuda = "99.0"};
	assert_null(ml_torch_build_min_driver(&cpu, false, &at_least));
	assert_false(at_least);
	assert_null(ml_torch_build_min_driver(&future, false, NULL));
	assert_null(ml_torch_build_min_driver(NULL, false, NULL));
}

static void test_build_json_names_cuda_code_and_drivers(void **state)
{
	(void)state;
	cJSON *j = ml_torch_build_to_json(build_of("2.8.0"));
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "cuda")->valuestring, "12.8");
	assert_string_equal(cJSON_GetObjectItem(j, "backend")->valuestring, "cu128");
	assert_string_equal(cJSON_GetObjectItem(j, "index")->valuestring, "default");
	assert_non_null(
	        strstr(cJSON_GetObjectItem(j, "source")->valuestring, "audited torch-2.8.0-"));
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sass"), 0)->valuestring,
	                    "sm_70");
	cJSON *drv = cJSON_GetObjectItem(j, "min_driver");
	assert_string_equal(cJSON_GetObjectItem(drv, "linux")->valuestring, "570.26");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(drv, "at_least")));
	assert_true(cJSON_GetObjectItem(j, "files")->valueint >= 5);
	cJSON_Delete(j);
	ml_torch_build cpu = {.version = "2.8.0", .platform = "darwin-aarch64"};
	j = ml_torch_build_to_json(&cpu);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cuda")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "backend")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "index")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "source")));
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(j, "sass")));
	assert_true(
	        cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "min_driver"), "linux")));
	assert_null(cJSON_GetObjectItem(j, "files"));
	cJSON_Delete(j);
}

/* --- builds from wheels ---------------------------------------------------- */

static char *wheels; /* the synthetic wheels' directory */

/* On Windows these tests skip (the generator is a Linux python3 script). */
#define NO_PY "the synthetic wheels come from a python3 script run by /bin/sh"

static int make_wheels(void **state)
{
	(void)state;
#ifdef _WIN32
	return 0;
#endif
	wheels = tmpdir_new("torchwheels");
	return wheels && make_fixtures("make_torch_wheels.py", wheels) ? 0 : -1;
}

static int remove_wheels(void **state)
{
	(void)state;
	rm_rf(wheels);
	free(wheels);
	return 0;
}

static void from_wheel(ml_torch_build *b, const char *name)
{
	char path[4096];
	ml_err err = ML_ERR_INIT;
	int rc = ml_torch_build_from_wheel(b, pf(path, "%s/%s", wheels, name), &err);
	if (rc)
		fprintf(stderr, "# %s: %s\n", name, err.msg);
	assert_int_equal(rc, 0);
	assert_null(b->files);
}

static void test_cu128_wheel_of_the_pytorch_index(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	ml_torch_build b;
	from_wheel(&b, "torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl");
	assert_string_equal(b.version, "2.8.0");
	assert_string_equal(b.local, "cu128");
	assert_string_equal(b.platform, "linux-x86_64");
	assert_string_equal(b.cuda, "12.8");
	assert_string_equal(b.backend, "cu128");
	assert_int_equal(b.index, ML_TORCH_INDEX_UNKNOWN); /* a wheel: no index known */
	assert_int_equal(b.source_kind, ML_TORCH_SOURCE_WHEEL);
	assert_null(b.source);
	/* libtorch_cuda.so's code only, not libtorch_cuda_linalg.so's sm_75 .. sm_90 */
	assert_string_equal(names(b.sass, b.n_sass), "sm_80 sm_120");
	assert_string_equal(names(b.ptx, b.n_ptx), "compute_120");
	assert_string_equal(ml_torch_build_min_driver(&b, false, NULL), "570.26");

	from_wheel(&b, "torch-2.7.0+cu128-cp312-cp312-win_amd64.whl");
	assert_string_equal(b.platform, "windows-x86_64");
	assert_string_equal(names(b.sass, b.n_sass), "sm_80 sm_120"); /* torch_cuda.dll */
	assert_string_equal(ml_torch_build_min_driver(&b, true, NULL), "570.65");
}

static void test_cuda_version_from_metadata_when_version_py_has_none(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	ml_torch_build b;
	from_wheel(&b, "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl");
	assert_string_equal(b.cuda, "13.0"); /* cuda-toolkit[...]==13.0.2 */
	assert_string_equal(b.local, "");
	assert_string_equal(b.backend, "cu130"); /* no local label: its CUDA names it */
	from_wheel(&b, "torch-2.5.1-1-cp311-cp311-manylinux1_x86_64.whl");
	assert_string_equal(b.cuda, "12");  /* nvidia-*-cu12: the major only */
	assert_string_equal(b.backend, ""); /* so no backend */
	assert_string_equal(b.build_tag, "1");
	assert_string_equal(names(b.sass, b.n_sass), "sm_75 sm_80 sm_86 sm_90");
}

static void test_cpu_only_and_rocm_wheels_have_no_cuda(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	ml_torch_build b;
	from_wheel(&b, "torch-2.8.0-cp311-none-macosx_11_0_arm64.whl");
	assert_string_equal(b.cuda, "");
	assert_string_equal(b.platform, "darwin-aarch64");
	assert_string_equal(b.backend, "cpu");
	assert_int_equal(b.n_sass + b.n_ptx, 0);
	assert_null(ml_torch_build_min_driver(&b, false, NULL));
	from_wheel(&b, "torch-2.6.0+rocm6.2.4-cp311-cp311-linux_x86_64.whl");
	assert_string_equal(b.cuda, "");
	assert_string_equal(b.local, "rocm6.2.4");
	assert_string_equal(b.backend, "rocm6.2.4");
}

static void test_a_wheel_that_is_not_torch_is_refused(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	ml_torch_build b;
	ml_err err = ML_ERR_INIT;
	char path[4096];
	assert_int_equal(ml_torch_build_from_wheel(
	                         &b, pf(path, "%s/notorch-1.0-py3-none-any.whl", wheels), &err),
	                 ML_ENOENT);
	assert_non_null(strstr(err.msg, "is not a torch wheel"));
	assert_int_equal(ml_torch_build_from_wheel(&b, pf(path, "%s/nothere.whl", wheels), &err),
	                 ML_ENOENT);
	assert_non_null(strstr(err.msg, "nothere.whl"));
}

/* The audit keeps every torch wheel among its paths, with its gaps. */
static void test_audit_reports_libraries_that_miss_torch_gpus(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	char path[4096];
	const char *p = pf(path, "%s/torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl", wheels);
	ml_audit *a = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_audit_paths(&a, &p, 1, NULL, &err), 0);
	assert_int_equal(a->n_torch, 1);
	const ml_torch_wheel *w = &a->torch[0];
	assert_string_equal(w->library, "torch/lib/libtorch_cuda.so");
	assert_string_equal(w->torch_version, "2.8.0+cu128");
	assert_string_equal(w->cuda_source, "torch/version.py");
	assert_true(ml_is_sha256_hex(w->sha256));
	assert_null(w->known); /* not a package-index build */
	assert_int_equal(w->n_gaps, 1);
	assert_string_equal(w->gaps[0].library, "torch/lib/libtorch_cuda_linalg.so");
	assert_string_equal(names(w->gaps[0].missing, w->gaps[0].n_missing), "sm_120");
	ml_audit_free(a);
}

/* --- manifests take their torch facts from the table ------------------------ */

/* A manifest pinning torch with the given hash, after header lines. */
static const char *write_manifest(const char *header, const char *version, const char *sha256)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/mlsetup-test-torch-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%storch==%s --hash=sha256:%s\n", header, version, sha256);
	fclose(f);
	return path;
}

static ml_manifest *open_manifest(const char *name_or_path)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_manifest_open(&mf, name_or_path, &err), 0);
	return mf;
}

/* The shipped manifests carry no torch_sass/torch_ptx: their code is the
 * table's for their torch wheels, every one of which the table knows, and
 * their cuda header says what the table says. */
static void test_shipped_manifests_take_torch_code_from_the_table(void **state)
{
	(void)state;
	ML_LINUX_ONLY("the shipped Windows manifests name torch's code in their headers");
	static const struct {
		const char *manifest, *torch;
	} shipped[] = {{"requirements.txt", "2.6.0"}, {"requirements_blackwell.txt", "2.8.0"}};
	for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		ml_manifest *mf = open_manifest(shipped[i].manifest);
		const ml_torch_build *b = build_of(shipped[i].torch);
		assert_null(ml_requirements_meta(mf->reqs, "torch_sass"));
		assert_null(ml_requirements_meta(mf->reqs, "torch_ptx"));
		assert_true(mf->has_gpu_header);
		assert_int_equal(mf->n_code, b->n_sass + b->n_ptx);
		assert_string_equal(names(mf->code, b->n_sass), names(b->sass, b->n_sass));
		assert_string_equal(mf->cuda, b->cuda);
		size_t torch_hashes = 0;
		for (size_t r = 0; r < mf->reqs->n_reqs; r++) {
			const ml_requirement *req = &mf->reqs->reqs[r];
			if (strcmp(req->normalized, "torch") != 0)
				continue;
			for (size_t h = 0; h < req->n_hashes; h++) {
				/* the linux-aarch64 wheels are CPU-only builds the
				 * table (linux-x86_64) does not list: they change
				 * nothing (the cpu_only_platforms header covers them) */
				const ml_file_info *f = ml_manifest_file(mf, req->sha256[h]);
				assert_non_null(f);
				if (strstr(f->filename, "_aarch64.")) {
					assert_null(ml_torch_build_lookup(req->sha256[h]));
					continue;
				}
				assert_ptr_equal(ml_torch_build_lookup(req->sha256[h]), b);
				torch_hashes++;
			}
		}
		assert_true(torch_hashes >= 5);
		ml_manifest_free(mf);
	}
}

/* A user's manifest pinning any known build gets its code, CUDA version
 * and minimum drivers without a header. */
static void test_user_manifest_without_header_gets_code_cuda_and_driver(void **state)
{
	(void)state;
	const ml_torch_build *b = build_of("2.9.0");
	const char *path = write_manifest("", "2.9.0", b->files[0].sha256);
	ml_manifest *mf = open_manifest(path);
	unlink(path);
	assert_true(mf->has_gpu_header);
	assert_string_equal(names(mf->code, mf->n_code), names(b->sass, b->n_sass));
	assert_string_equal(mf->cuda, "12.8");
	assert_string_equal(mf->min_driver_linux, ml_toolkit_min_driver("12.8", false));
	char why[256];
	assert_true(ml_arch_runs_on(mf->code, mf->n_code, 12, 0, why, sizeof why));
	assert_false(ml_arch_runs_on(mf->code, mf->n_code, 6, 1, why, sizeof why));
	ml_manifest_free(mf);

	b = build_of("2.15.0"); /* CUDA 13.2: 13.2's own minimum */
	path = write_manifest("", "2.15.0", b->files[0].sha256);
	mf = open_manifest(path);
	unlink(path);
	assert_string_equal(mf->cuda, b->cuda);
	assert_string_equal(mf->min_driver_linux, "595.45.04");
	ml_manifest_free(mf);
}

/* Header lines stay a user's override; unknown hashes leave the manifest
 * as it was (the GPU fit cannot be judged). */
static void test_headers_override_and_unknown_hashes_change_nothing(void **state)
{
	(void)state;
	const ml_torch_build *b = build_of("2.8.0");
	const char *path = write_manifest("# mlsetup: torch_sass = sm_90\n# mlsetup: cuda = 12.4\n",
	                                  "2.8.0", b->files[0].sha256);
	ml_manifest *mf = open_manifest(path);
	unlink(path);
	assert_string_equal(names(mf->code, mf->n_code), "sm_90");
	assert_string_equal(mf->cuda, "12.4");
	ml_manifest_free(mf);

	char zeros[65];
	memset(zeros, '0', 64);
	zeros[64] = '\0';
	path = write_manifest("", "2.8.0", zeros);
	mf = open_manifest(path);
	unlink(path);
	assert_false(mf->has_gpu_header);
	assert_int_equal(mf->n_code, 0);
	assert_null(mf->cuda);
	ml_manifest_free(mf);
}

/* The metadata readers on their own: what counts as torch/version.py's
 * `cuda`, and when METADATA decides instead. */
static const char *cuda_of(const char *version_py, const char *metadata)
{
	static char cuda[16];
	ml_wheel_meta m = {version_py ? strdup(version_py) : NULL,
	                   metadata ? strdup(metadata) : NULL, NULL};
	ml_audit a;
	memset(&a, 0, sizeof a);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(
	        ml_torch_wheel_add(&a, "/nonexistent/torch-1.0-py3-none-any.whl", &m, 0, &err), 0);
	assert_int_equal(a.n_torch, 1);
	snprintf(cuda, sizeof cuda, "%s", a.torch[0].build.cuda);
	ml_torch_wheel_release(&a.torch[0]);
	free(a.torch);
	ml_wheel_meta_release(&m);
	return cuda;
}

static void test_version_py_and_metadata_readers(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PY);
	static const char cu12[] = "Name: torch\nVersion: 2.5.1\n"
	                           "Requires-Dist: nvidia-cublas-cu12==12.4.5.8\n";
	assert_string_equal(cuda_of("cuda: Optional[str] = \"12.6\"\n", NULL), "12.6");
	assert_string_equal(cuda_of("cuda='12.1'\r\n", NULL), "12.1");
	assert_string_equal(cuda_of("cuda = None\n", cu12), ""); /* version.py wins */
	/* not an assignment of cuda, or not a CUDA version: METADATA decides */
	assert_string_equal(cuda_of("cuda_home = '12.8'\ncuda linux= '2.8'\n", cu12), "12");
	assert_string_equal(cuda_of("cuda = 'abc'\n", cu12), "12");
	assert_string_equal(cuda_of("cuda = '12.8' # comment\n", cu12), "12");
	assert_string_equal(cuda_of(NULL,
	                            "Name: torch\nRequires-Dist: cuda-toolkit[cublas]==13.0.2; "
	                            "platform_system == \"Linux\"\nRequires-Dist: nvidia-x-cu13\n"),
	                    "13.0");
	/* Requires-Dist after the headers' end is the body, not a dependency */
	assert_string_equal(cuda_of(NULL, "Name: torch\n\nRequires-Dist: nvidia-x-cu12\n"), "");
}

int main(void)
{
	const struct CMUnitTest table[] = {
	        cmocka_unit_test(test_table_loads_oldest_first_with_files),
	        cmocka_unit_test(test_lookup_finds_a_build_by_any_of_its_wheel_hashes),
	        cmocka_unit_test(test_builds_carry_what_facts_md_measured),
	        cmocka_unit_test(test_audited_entries_are_unchanged),
	        cmocka_unit_test(test_find_takes_the_highest_build_tag_and_matches_the_local_label),
	        cmocka_unit_test(test_backend_names_the_flavour),
	        cmocka_unit_test(test_get_by_version_backend_and_platform),
	        cmocka_unit_test(test_every_backend_of_2_15_0),
	        cmocka_unit_test(test_a_derived_cu126_build_lists_sm_50_and_sm_70),
	        cmocka_unit_test(test_a_derived_build_without_code_says_so),
	        cmocka_unit_test(test_min_driver_comes_from_the_driver_table),
	        cmocka_unit_test(test_build_json_names_cuda_code_and_drivers),
	        cmocka_unit_test(test_shipped_manifests_take_torch_code_from_the_table),
	        cmocka_unit_test(test_user_manifest_without_header_gets_code_cuda_and_driver),
	        cmocka_unit_test(test_headers_override_and_unknown_hashes_change_nothing),
	};
	const struct CMUnitTest from_wheels[] = {
	        cmocka_unit_test(test_cu128_wheel_of_the_pytorch_index),
	        cmocka_unit_test(test_cuda_version_from_metadata_when_version_py_has_none),
	        cmocka_unit_test(test_cpu_only_and_rocm_wheels_have_no_cuda),
	        cmocka_unit_test(test_a_wheel_that_is_not_torch_is_refused),
	        cmocka_unit_test(test_version_py_and_metadata_readers),
	        cmocka_unit_test(test_audit_reports_libraries_that_miss_torch_gpus),
	};
	int failed = cmocka_run_group_tests_name("table", table, NULL, NULL);
	failed +=
	        cmocka_run_group_tests_name("from wheels", from_wheels, make_wheels, remove_wheels);
	return failed ? 1 : 0;
}
