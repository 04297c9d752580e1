/*
 * test_provider.c - specs for completing a plan through a provider
 * (src/plan/complete.c: ml_plan_complete(), ml_candidate_audit_torch()),
 * with a fake provider written here: no index, no file server, no pip,
 * no network and no cache. The fake records what plan asked and answers
 * from tables the tests fill: files named by hash only are found among
 * what the sources list (the first source's file with a URL, sized when
 * the source gave no size), a requirement nobody has a file for is
 * ML_EINTEGRITY naming what is offered or ML_ENOENT, a manifest that pins
 * no hashes is pinned by the resolver's answer (or by a kept lock, without
 * asking it) and its files sized, offline asks no server, and a project
 * candidate's torch build is learnt by fetching and auditing its wheel.
 *
 * Tests run from the repository root (tests/run-tests.sh does that).
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

#include "env_testutil.h"
#include "mlsetup/plan.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define SHA_T "1111111111111111111111111111111111111111111111111111111111111111"
#define FILES "https://files.example.invalid/"

/* One file the fake's sources list for a project. */
typedef struct listed {
	const char *project, *filename, *url, *sha256;
	int64_t size;
} listed;

/* The fake provider: its answers, and what plan asked. */
typedef struct fake {
	/* answers */
	const listed *list; /* terminated by a NULL project */
	bool project_unknown;
	int list_rc; /* a source that failed */
	int64_t size;
	const char *pick_url, *pick_sha256;
	int fetch_rc, audit_rc;
	const char *sass; /* the audited build's SASS, "sm_86" */
	/* what was asked */
	int n_list, n_sizes, n_resolve, n_fetch, n_audit;
	char listed_name[64];
	char sized_url[256];
	char python[256], target_desc[128], input_path[256];
	char fetched[256], audited[256];
	char notes[4096];
} fake;

static int fake_list(ml_project_listing *q, size_t n, void *data, ml_err *err)
{
	fake *f = data;
	f->n_list++;
	for (size_t i = 0; i < n; i++) {
		snprintf(f->listed_name, sizeof(f->listed_name), "%s", q[i].name);
		if (f->list_rc) {
			q[i].rc = f->list_rc;
			ml_err_set(&q[i].err, f->list_rc, "the index answered HTTP 503");
			continue;
		}
		q[i].project_seen = !f->project_unknown;
		for (const listed *l = f->list; l && l->project; l++) {
			if (strcmp(l->project, q[i].name) != 0 || f->project_unknown)
				continue;
			q[i].files = realloc(q[i].files, (q[i].n_files + 1) * sizeof(*q[i].files));
			ml_listed_file *lf = &q[i].files[q[i].n_files++];
			lf->filename = strdup(l->filename);
			lf->url = l->url ? strdup(l->url) : NULL;
			lf->sha256 = l->sha256 ? strdup(l->sha256) : NULL;
			lf->size = l->size;
		}
	}
	(void)err;
	return 0;
}

static int fake_sizes(int64_t *sizes, char *const *urls, size_t n, void *data, ml_err *err)
{
	fake *f = data;
	f->n_sizes++;
	for (size_t i = 0; i < n; i++) {
		sizes[i] = f->size;
		snprintf(f->sized_url, sizeof(f->sized_url), "%s", urls[i]);
	}
	(void)err;
	return 0;
}

static int fake_resolve(ml_resolution *out, const ml_resolve_request *rq, void *data, ml_err *err)
{
	fake *f = data;
	f->n_resolve++;
	snprintf(f->python, sizeof(f->python), "%s", rq->python);
	snprintf(f->target_desc, sizeof(f->target_desc), "%s", rq->target_desc);
	snprintf(f->input_path, sizeof(f->input_path), "%s", rq->input_path);
	if (!f->pick_url)
		return ml_err_set(err, ML_EFAIL, "the resolver was not to be asked");
	if (rq->note)
		rq->note(ML_PLAN_NOTE_STEP, "resolving with the fake", rq->note_data);
	out->picks = calloc(1, sizeof(*out->picks));
	out->n_picks = 1;
	out->picks[0].name = strdup("alpha");
	out->picks[0].version = strdup("1.0");
	out->picks[0].url = strdup(f->pick_url);
	snprintf(out->picks[0].sha256, sizeof(out->picks[0].sha256), "%s", f->pick_sha256);
	out->picks[0].requested = true;
	snprintf(out->resolver.version, sizeof(out->resolver.version), "fake 1.0");
	out->resolver.has_pip = true;
	return 0;
}

static int fake_fetch(char *path, size_t sz, const ml_artifact *a, void *data, ml_err *err)
{
	fake *f = data;
	f->n_fetch++;
	snprintf(f->fetched, sizeof(f->fetched), "%s", a->filename);
	if (f->fetch_rc)
		return ml_err_set(err, f->fetch_rc, "no source serves %s", a->filename);
	snprintf(path, sz, "/blobs/%s", a->sha256);
	return 0;
}

static int fake_audit(ml_torch_build *out, const char *path, void *data, ml_err *err)
{
	fake *f = data;
	f->n_audit++;
	snprintf(f->audited, sizeof(f->audited), "%s", path);
	if (f->audit_rc)
		return ml_err_set(err, f->audit_rc, "no libtorch_cuda.so in it");
	memset(out, 0, sizeof(*out));
	snprintf(out->version, sizeof(out->version), "2.9.0");
	snprintf(out->local, sizeof(out->local), "cu129");
	snprintf(out->cuda, sizeof(out->cuda), "12.9");
	snprintf(out->platform, sizeof(out->platform), "linux-x86_64");
	assert_int_equal(ml_cuda_arch_parse(&out->sass[0], f->sass), 0);
	out->n_sass = 1;
	return 0;
}

static void fake_note(ml_plan_note_kind kind, const char *text, void *data)
{
	fake *f = data;
	size_t l = strlen(f->notes);
	snprintf(f->notes + l, sizeof(f->notes) - l, "%s: %s\n",
	         kind == ML_PLAN_NOTE_WARNING ? "warning" : "step", text);
}

static ml_plan_provider provider(fake *f)
{
	return (ml_plan_provider){.list_files = fake_list,
	                          .file_sizes = fake_sizes,
	                          .resolve = fake_resolve,
	                          .fetch_file = fake_fetch,
	                          .audit_wheel = fake_audit,
	                          .note = fake_note,
	                          .note_data = f,
	                          .data = f};
}

/* --- fixture ------------------------------------------------------------------- */

typedef struct fx {
	char *tmp;
	char cache[4096];
	ml_machine m;
	ml_gpu gpus[1];
	fake f;
	ml_plan *p;
} fx;

static int setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	x->tmp = tmpdir_new("provider");
	if (!x->tmp)
		return -1;
	pf(x->cache, "%s/cache", x->tmp);
	unsetenv("MLSETUP_PYTHON_PINS");
	unsetenv("MLSETUP_CACHE_DIR");
	unsetenv("PIP_REQUIRE_HASHES");
	/* Linux x86_64, glibc 2.36, an RTX 3090 on an R550 driver. */
	ml_machine *m = &x->m;
	snprintf(m->os.name, sizeof(m->os.name), "linux");
	snprintf(m->os.arch, sizeof(m->os.arch), "x86_64");
	snprintf(m->os.libc_kind, sizeof(m->os.libc_kind), "glibc");
	snprintf(m->os.libc_version, sizeof(m->os.libc_version), "2.36");
	snprintf(m->driver.version, sizeof(m->driver.version), "550.127.05");
	snprintf(m->target_dir, sizeof(m->target_dir), "%s", x->tmp);
	m->disk_free_mib = 500 * 1024;
	m->gpus = x->gpus;
	m->n_gpus = 1;
	snprintf(x->gpus[0].name, sizeof(x->gpus[0].name), "NVIDIA GeForce RTX 3090");
	x->gpus[0].cc_major = 8;
	x->gpus[0].cc_minor = 6;
	x->f.size = -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fx *x = *state;
	ml_plan_free(x->p);
	rm_rf(x->tmp);
	free(x->tmp);
	free(x);
	return 0;
}

/* Plans the manifest text (written as name in the test's directory) for
 * CPython 3.12 on the fixture's machine. */
static ml_plan *plan_text(fx *x, const char *name, const char *text)
{
	char path[4096], target[4096];
	pf(path, "%s/%s", x->tmp, name);
	FILE *w = fopen(path, "w");
	assert_non_null(w);
	fputs(text, w);
	fclose(w);
	ml_plan_opts o = ML_PLAN_OPTS_INIT;
	o.python = "3.12";
	o.manifest = path;
	o.target = pf(target, "%s/.venv", x->tmp);
	o.cache_dir = x->cache;
	o.offline = true;
	ml_err err = ML_ERR_INIT;
	int rc = ml_plan_make(&x->p, &x->m, &o, &err);
	if (rc)
		fail_msg("ml_plan_make: %s", err.msg);
	assert_non_null(x->p->selection->manifest);
	return x->p;
}

static const ml_artifact *artifact(const ml_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, name) == 0)
			return &p->files[i];
	fail_msg("no %s in the plan", name);
	return NULL;
}

/* alpha named by the manifest, beta by its hash only. */
static const char hashed[] = "# mlsetup: python = 3.12\n"
                             "# mlsetup: platforms = linux-x86_64\n"
                             "alpha==1.0 --hash=sha256:" SHA_A "\n"
                             "beta==2.0 --hash=sha256:" SHA_B "\n"
                             "# mlsetup-file: " SHA_A " 1234 alpha-1.0-py3-none-any.whl\n";

/* --- files named by hash only ---------------------------------------------------- */

static void test_a_file_named_by_hash_only_is_found_among_what_the_sources_list(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "m.txt", hashed);
	assert_int_equal(p->n_unknown, 1);
	assert_false(ml_plan_is_complete(p));
	const listed list[] = {
	        /* another version, another hash, a file without URL: passed over */
	        {"beta", "beta-1.0-py3-none-any.whl", FILES "beta-1.0-py3-none-any.whl", SHA_C, 5},
	        {"beta", "beta-2.0-py3-none-any.whl", NULL, SHA_B, 6},
	        /* the file with the hash: the source gives no size */
	        {"beta", "beta-2.0-py3-none-any.whl", FILES "beta-2.0-py3-none-any.whl", SHA_B, -1},
	        /* the same hash from a later source: the first one wins */
	        {"beta", "beta-2.0-py3-none-any.whl", "file:///mirror/beta-2.0-py3-none-any.whl",
	         SHA_B, 99},
	        {NULL, NULL, NULL, NULL, 0}};
	x->f.list = list;
	x->f.size = 777;
	ml_plan_provider pv = provider(&x->f);
	ml_plan_completion done;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, &done, &err), 0);
	assert_int_equal(x->f.n_list, 1);
	assert_string_equal(x->f.listed_name, "beta"); /* alpha is named: not asked */
	assert_int_equal(x->f.n_sizes, 1);
	assert_string_equal(x->f.sized_url, FILES "beta-2.0-py3-none-any.whl");
	assert_int_equal(x->f.n_resolve, 0);
	assert_non_null(strstr(x->f.notes, "step: asking the indexes which files the 1 hashed "
	                                   "requirement names\n"));
	assert_false(done.resolved || done.lock_reused || done.unresolved);
	const ml_artifact *beta = artifact(p, "beta");
	assert_string_equal(beta->filename, "beta-2.0-py3-none-any.whl");
	assert_string_equal(beta->sha256, SHA_B);
	assert_int_equal(beta->size, 777);
	assert_string_equal(beta->url, FILES "beta-2.0-py3-none-any.whl");
	assert_int_equal(artifact(p, "alpha")->size, 1234);
	assert_true(ml_plan_is_complete(p));
	assert_int_equal(p->total_bytes, 1234 + 777);
}

static void test_no_listed_file_with_the_hash_names_what_the_sources_offer(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "m.txt", hashed);
	const listed list[] = {
	        {"beta", "beta-2.0-py3-none-any.whl", FILES "beta-2.0-py3-none-any.whl", SHA_C, 5},
	        {"beta", "beta-2.0.tar.gz", FILES "beta-2.0.tar.gz", NULL, 5},
	        {"beta", "beta-3.0-py3-none-any.whl", FILES "beta-3.0-py3-none-any.whl", SHA_C, 5},
	        {NULL, NULL, NULL, NULL, 0}};
	x->f.list = list;
	ml_plan_provider pv = provider(&x->f);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, NULL, &err), ML_EINTEGRITY);
	assert_non_null(strstr(err.msg, "line 4: no file of beta 2.0 has one of the 1 hash the "
	                                "requirement lists (" SHA_B "); the indexes offer "
	                                "beta-2.0-py3-none-any.whl (sha256 " SHA_C
	                                "), beta-2.0.tar.gz (sha256 not given)"));
	assert_null(strstr(err.msg, "beta-3.0")); /* of another version */
	assert_int_equal(x->f.n_sizes, 0);
}

static void test_a_project_no_source_knows_is_not_found(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "m.txt", hashed);
	x->f.project_unknown = true;
	ml_plan_provider pv = provider(&x->f);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, NULL, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "beta is on none of the indexes or --find-links"));
	/* offline: the sources are local, and the message says so */
	pv.offline = true;
	err = (ml_err)ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, NULL, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "local --find-links locations (--offline)"));
}

static void test_a_failed_source_is_the_error_when_no_file_was_found(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "m.txt", hashed);
	x->f.list_rc = ML_ENET;
	ml_plan_provider pv = provider(&x->f);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, NULL, &err), ML_ENET);
	assert_string_equal(err.msg, "the index answered HTTP 503");
	assert_int_equal(p->n_unknown, 1); /* nothing learnt */
}

static void test_offline_no_server_is_asked_for_a_size(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "m.txt", hashed);
	const listed list[] = {
	        {"beta", "beta-2.0-py3-none-any.whl", FILES "beta-2.0-py3-none-any.whl", SHA_B, -1},
	        {NULL, NULL, NULL, NULL, 0}};
	x->f.list = list;
	ml_plan_provider pv = provider(&x->f);
	pv.offline = true;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, NULL, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "the size of 'beta-2.0-py3-none-any.whl' is unknown and "
	                                "--offline forbids asking the file server"));
	assert_int_equal(x->f.n_sizes, 0);
}

/* --- a file that pins no hashes --------------------------------------------------- */

static const char loose[] = "# mlsetup: python = 3.12\n"
                            "alpha==1.0\n";

static void test_a_file_without_hashes_is_pinned_by_the_resolver_and_sized(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "loose.txt", loose);
	assert_true(p->needs_resolution);
	x->f.pick_url = FILES "alpha-1.0-py3-none-any.whl";
	x->f.pick_sha256 = SHA_A;
	x->f.size = 4321;
	ml_plan_provider pv = provider(&x->f);
	ml_plan_complete_opts o = {.python = "/opt/py/bin/python3", .python_version = "3.12.8"};
	ml_plan_completion done;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, &o, &done, &err), 0);
	assert_int_equal(x->f.n_resolve, 1);
	assert_string_equal(x->f.python, "/opt/py/bin/python3");
	assert_string_equal(x->f.target_desc, "CPython 3.12.8 on linux-x86_64");
	assert_non_null(strstr(x->f.input_path, "loose.txt"));
	assert_non_null(strstr(x->f.notes, "step: resolving with the fake\n"));
	assert_true(done.resolved);
	assert_false(done.lock_reused);
	assert_string_equal(done.resolver.version, "fake 1.0");
	assert_true(p->selection->manifest->resolved);
	/* pip's files come without sizes: their servers are asked */
	assert_int_equal(x->f.n_sizes, 1);
	assert_string_equal(x->f.sized_url, FILES "alpha-1.0-py3-none-any.whl");
	const ml_artifact *a = artifact(p, "alpha");
	assert_string_equal(a->filename, "alpha-1.0-py3-none-any.whl");
	assert_string_equal(a->sha256, SHA_A);
	assert_int_equal(a->size, 4321);
	assert_true(a->requested);
	assert_true(ml_plan_is_complete(p));
}

static void test_offline_a_resolved_file_of_unknown_size_is_not_sized(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "loose.txt", loose);
	x->f.pick_url = FILES "alpha-1.0-py3-none-any.whl";
	x->f.pick_sha256 = SHA_A;
	ml_plan_provider pv = provider(&x->f);
	pv.offline = true;
	ml_plan_complete_opts o = {.python = "/opt/py/bin/python3", .python_version = "3.12.8"};
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, &o, NULL, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "the size of 'alpha-1.0-py3-none-any.whl' is unknown and "
	                                "--offline forbids asking its server"));
	assert_int_equal(x->f.n_sizes, 0);
}

static void test_without_an_interpreter_a_file_without_hashes_waits(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "loose.txt", loose);
	ml_plan_provider pv = provider(&x->f);
	ml_plan_completion done;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, NULL, &done, &err), 0);
	assert_true(done.unresolved);
	assert_true(p->needs_resolution);
	assert_int_equal(x->f.n_resolve + x->f.n_list + x->f.n_sizes, 0);
	assert_non_null(strstr(x->f.notes, "warning: '"));
	assert_non_null(strstr(x->f.notes, "loose.txt' does not pin hashes: its files are known "
	                                   "once pip of the environment's interpreter resolves "
	                                   "it"));
}

static void test_a_kept_lock_pins_the_file_and_the_resolver_is_not_asked(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "loose.txt", loose);
	char lock[4096];
	pf(lock, "%s/kept.pylock.toml", x->tmp);
	FILE *w = fopen(lock, "w");
	assert_non_null(w);
	fputs("lock-version = \"1.0\"\n"
	      "[[packages]]\n"
	      "name = \"alpha\"\n"
	      "version = \"1.0\"\n"
	      "wheels = [{url = \"" FILES "alpha-1.0-py3-none-any.whl\", size = 2468, "
	      "hashes = {sha256 = \"" SHA_A "\"}}]\n",
	      w);
	fclose(w);
	ml_plan_provider pv = provider(&x->f);
	ml_plan_complete_opts o = {
	        .python = "/opt/py/bin/python3", .python_version = "3.12.8", .resolved_lock = lock};
	ml_plan_completion done;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, &o, &done, &err), 0);
	assert_true(done.lock_reused);
	assert_false(done.resolved);
	assert_int_equal(x->f.n_resolve + x->f.n_sizes, 0); /* the lock gives the size */
	assert_non_null(strstr(x->f.notes, "the lock of its first install, "));
	const ml_artifact *a = artifact(p, "alpha");
	assert_string_equal(a->sha256, SHA_A);
	assert_int_equal(a->size, 2468);
	assert_true(ml_plan_is_complete(p));
}

static void test_a_lock_that_is_not_there_is_resolved_again(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "loose.txt", loose);
	char lock[4096];
	pf(lock, "%s/none.pylock.toml", x->tmp);
	x->f.pick_url = FILES "alpha-1.0-py3-none-any.whl";
	x->f.pick_sha256 = SHA_A;
	x->f.size = 1;
	ml_plan_provider pv = provider(&x->f);
	ml_plan_complete_opts o = {
	        .python = "/py", .python_version = "3.12.8", .resolved_lock = lock};
	ml_plan_completion done;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_plan_complete(p, &x->m, &pv, &o, &done, &err), 0);
	assert_false(done.lock_reused);
	assert_true(done.resolved);
	assert_int_equal(x->f.n_resolve, 1);
}

/* --- a project candidate's torch build ------------------------------------------------ */

/* torch pinned by a hash the table of known builds does not have. */
static const char torch_text[] =
        "# mlsetup: python = 3.12\n"
        "# mlsetup: platforms = linux-x86_64\n"
        "torch==2.9.0 --hash=sha256:" SHA_T "\n"
        "# mlsetup-file: " SHA_T " 1000 torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl\n";

static void test_a_candidate_torch_build_is_learnt_from_its_audited_wheel(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "requirements.txt", torch_text);
	assert_false(p->selection->manifest->has_gpu_header);
	const char *why = NULL;
	const ml_artifact *a = ml_plan_torch_wheel(p, false, &why);
	assert_non_null(a);
	ml_candidate c;
	memset(&c, 0, sizeof(c));
	c.name = strdup("requirements.txt");
	x->f.sass = "sm_86";
	ml_plan_provider pv = provider(&x->f);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_candidate_audit_torch(&c, p, a, &pv, &err), 0);
	assert_string_equal(x->f.fetched, "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl");
	assert_string_equal(x->f.audited, "/blobs/" SHA_T);
	assert_non_null(strstr(x->f.notes, "step: auditing "
	                                   "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl of "
	                                   "requirements.txt"));
	assert_string_equal(c.source, "audit");
	assert_false(c.broken);
	const ml_manifest *mf = p->selection->manifest;
	assert_true(mf->has_gpu_header);
	assert_string_equal(mf->cuda, "12.9");
	assert_int_equal(mf->n_code, 1);
	assert_int_equal(mf->code[0].major, 8);
	assert_int_equal(mf->code[0].minor, 6);
	ml_candidate_release(&c);
}

static void test_a_candidate_whose_wheel_cannot_be_had_is_passed_over(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "requirements.txt", torch_text);
	const char *why = NULL;
	const ml_artifact *a = ml_plan_torch_wheel(p, false, &why);
	ml_candidate c;
	memset(&c, 0, sizeof(c));
	c.name = strdup("requirements.txt");
	x->f.fetch_rc = ML_ENET;
	ml_plan_provider pv = provider(&x->f);
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_candidate_audit_torch(&c, p, a, &pv, &err), 0);
	assert_true(c.broken);
	assert_string_equal(c.reason, "its torch wheel cannot be fetched: no source serves "
	                              "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl");
	assert_int_equal(x->f.n_audit, 0);
	assert_false(p->selection->manifest->has_gpu_header);
	/* fetched, but not readable */
	x->f.fetch_rc = 0;
	x->f.audit_rc = ML_EPARSE;
	assert_int_equal(ml_candidate_audit_torch(&c, p, a, &pv, &err), 0);
	assert_string_equal(c.reason,
	                    "its torch wheel cannot be audited: no libtorch_cuda.so in it");
	ml_candidate_release(&c);
}

static void test_a_torch_wheel_of_unknown_size_is_not_audited_offline(void **state)
{
	fx *x = *state;
	ml_plan *p = plan_text(x, "requirements.txt",
	                       "# mlsetup: python = 3.12\n"
	                       "torch==2.9.0 --hash=sha256:" SHA_T "\n");
	const char *why = NULL;
	assert_null(ml_plan_torch_wheel(p, false, &why)); /* named by hash only */
	assert_string_equal(why, "its torch wheel for this platform is unknown");
	assert_null(ml_plan_torch_wheel(p, true, &why));
	assert_string_equal(why, "offline, and its torch wheel is unknown here");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(
	                test_a_file_named_by_hash_only_is_found_among_what_the_sources_list, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(
	                test_no_listed_file_with_the_hash_names_what_the_sources_offer, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(test_a_project_no_source_knows_is_not_found, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_failed_source_is_the_error_when_no_file_was_found, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_offline_no_server_is_asked_for_a_size, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_file_without_hashes_is_pinned_by_the_resolver_and_sized, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(
	                test_offline_a_resolved_file_of_unknown_size_is_not_sized, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_without_an_interpreter_a_file_without_hashes_waits, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_kept_lock_pins_the_file_and_the_resolver_is_not_asked, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(test_a_lock_that_is_not_there_is_resolved_again,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_candidate_torch_build_is_learnt_from_its_audited_wheel, setup,
	                teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_candidate_whose_wheel_cannot_be_had_is_passed_over, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_a_torch_wheel_of_unknown_size_is_not_audited_offline, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
