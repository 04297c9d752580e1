/*
 * test_pylock.c - specs for PEP 751 lock files: reading what pip lock,
 * uv export and mlsetup write (src/pkg/pylock.c), refusing what is not
 * a lock with the file and line, writing the environment's lock
 * (src/report/pylock.c) so that it reads back to the same wheels, and
 * turning a lock into a hashed requirements file that hash mode accepts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlsetup/report.h"
#include "../../src/pkg/internal.h"

#define H(c)                                                                                       \
	c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c  \
	        c c c c c c c c c c c c c c c c c c c
#define HA H("a")
#define HB H("b")

static ml_pylock *parse_ok(const char *text)
{
	ml_pylock *pl = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_pylock_parse(&pl, "p.toml", "/locks", text, strlen(text), &err) != 0)
		fail_msg("parse failed: %s\n--- text:\n%s", err.msg, text);
	return pl;
}

static ml_err parse_bad(const char *text)
{
	ml_pylock *pl = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_pylock_parse(&pl, "p.toml", "/locks", text, strlen(text), &err) != ML_EPARSE)
		fail_msg("expected ML_EPARSE for:\n%s", text);
	assert_null(pl);
	return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("'%s' does not contain '%s'", haystack, needle);
}

static char *read_fixture(const char *name)
{
	char path[256], *text = NULL;
	snprintf(path, sizeof(path), "tests/fixtures/producers/%s", name);
	if (ml_os_read_file(&text, NULL, NULL, path, 1 << 20, NULL) != 0)
		fail_msg("cannot read %s", path);
	return text;
}

static void test_reads_uv_export(void **state)
{
	(void)state;
	char *text = read_fixture("pylock.uv.toml");
	ml_pylock *pl = parse_ok(text);
	assert_string_equal(pl->created_by, "uv");
	assert_string_equal(pl->requires_python, ">=3.11");
	assert_int_equal(pl->n_pkgs, 2);
	const ml_pylock_package *d = &pl->pkgs[0];
	assert_string_equal(d->normalized, "datapkg");
	assert_string_equal(d->version, "0.5");
	assert_string_equal(d->marker, "sys_platform == 'linux'");
	assert_string_equal(d->index, "http://127.0.0.1:8765/simple/");
	assert_int_equal(d->n_wheels, 1);
	assert_string_equal(d->wheels[0].filename, "datapkg-0.5-py3-none-any.whl");
	assert_string_equal(d->wheels[0].url,
	                    "http://127.0.0.1:8765/files/datapkg-0.5-py3-none-any.whl");
	assert_int_equal(d->wheels[0].size, 2526);
	assert_string_equal(d->wheels[0].sha256,
	                    "92d9bdbee3503a7b80ca3d3ce1517d8d7d2997ea68630383f42080ba8ad70ad1");
	assert_null(d->source_kind);
	ml_pylock_free(pl);
	free(text);
}

static void test_reads_pip_lock_without_sizes(void **state)
{
	(void)state;
	char *text = read_fixture("pylock.pip.toml");
	ml_pylock *pl = parse_ok(text);
	assert_string_equal(pl->created_by, "pip");
	assert_null(pl->requires_python);
	assert_int_equal(pl->n_pkgs, 2);
	assert_int_equal(pl->pkgs[1].wheels[0].size, -1);
	assert_string_equal(pl->pkgs[1].wheels[0].filename, "purepkg-1.0-py3-none-any.whl");
	ml_pylock_free(pl);
	free(text);
}

static void test_paths_names_and_other_sources(void **state)
{
	(void)state;
	ml_pylock *pl =
	        parse_ok("lock-version = \"1.0\"\n"
	                 "environments = [\"sys_platform == 'linux'\"]\n"
	                 "[[packages]]\n"
	                 "name = \"Pure_Pkg\"\n"
	                 "version = \"1.0\"\n"
	                 "wheels = [{path = \"wh/pure_pkg-1.0-py3-none-any.whl\", "
	                 "hashes = {sha256 = \"" HA "\"}},\n"
	                 "  {url = \"https://h/x/pure_pkg-1.0%2Blocal-py3-none-any.whl?x=1\", "
	                 "hashes = {sha256 = \"" HB "\", md5 = \"00\"}}]\n"
	                 "[[packages]]\n"
	                 "name = \"src-only\"\n"
	                 "version = \"2.0\"\n"
	                 "sdist = {url = \"https://h/src-only-2.0.tar.gz\", hashes = {sha256 "
	                 "= \"" HA "\"}}\n");
	assert_int_equal(pl->n_environments, 1);
	const ml_pylock_package *p = &pl->pkgs[0];
	assert_string_equal(p->normalized, "pure-pkg");
	assert_string_equal(p->wheels[0].url, "file:///locks/wh/pure_pkg-1.0-py3-none-any.whl");
	assert_string_equal(p->wheels[1].filename, "pure_pkg-1.0+local-py3-none-any.whl");
	assert_string_equal(pl->pkgs[1].source_kind, "sdist");
	assert_int_equal(pl->pkgs[1].n_wheels, 0);
	ml_pylock_free(pl);
}

static void test_refuses_what_is_no_lock_naming_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *says;
	} cases[] = {
	        {"[[packages]]\nname = \"x\"\n", "line 1: no lock-version"},
	        {"lock-version = \"2.0\"\n", "line 1: lock-version '2.0' is not supported"},
	        {"lock-version = 1\n", "line 1: 'lock-version' must be a string"},
	        {"lock-version = \"1.0\"\n\n[[packages]]\nversion = \"1\"\n",
	         "line 3: a package has no name"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nwheels = [{url = "
	         "\"https://h/x-1-py3-none-any.whl\", hashes = {sha256 = \"" HA "\"}}]\n",
	         "line 2: 'x' has wheels but no version"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = "
	         "\"1\"\n[[packages.wheels]]\nurl = \"https://h/x-1-py3-none-any.whl\"\n",
	         "line 5: wheel 'x-1-py3-none-any.whl' has no hashes table"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = "
	         "\"1\"\n[[packages.wheels]]\nurl = \"https://h/x-1-py3-none-any.whl\"\nhashes = "
	         "{sha512 = \"ab\"}\n",
	         "line 7: wheel 'x-1-py3-none-any.whl' has no sha256 hash"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nwheels = "
	         "[{name = \"x.whl\", hashes = {sha256 = \"" HA "\"}}]\n",
	         "line 5: a wheel of 'x' has neither url nor path"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nmarker = "
	         "\"os_nme == 'nt'\"\n",
	         "line 2: invalid marker"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"not a "
	         "version\"\n",
	         "line 2: 'x' has an invalid version"},
	        {"lock-version = \"1.0\"\nrequires-python = \"3.11+\"\n",
	         "line 2: requires-python '3.11+' is not a version specifier"},
	        {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nname = \"y\"\n",
	         "line 4: key 'name' is defined twice"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ml_err e = parse_bad(cases[i].text);
		assert_contains(e.msg, "lock file ");
		assert_contains(e.msg, "p.toml");
		assert_contains(e.msg, cases[i].says);
	}
}

/* --- the environment's lock ---------------------------------------------------- */

typedef struct plan_fx {
	ml_manifest manifest;
	ml_requirements reqs;
	ml_kv meta[2];
	ml_selection selection;
	ml_artifact files[2];
	ml_plan plan;
	ml_python_info python;
	ml_machine machine;
} plan_fx;

static void plan_fx_init(plan_fx *f)
{
	memset(f, 0, sizeof(*f));
	f->meta[0] = (ml_kv){"cuda", "12.4", 1};
	f->meta[1] = (ml_kv){"requested", "purepkg", 2};
	f->reqs.meta = f->meta;
	f->reqs.n_meta = 2;
	f->manifest.name = "proj/req \"x\".txt";
	f->manifest.reqs = &f->reqs;
	f->selection.manifest = &f->manifest;
	f->files[0] = (ml_artifact){.name = "purepkg",
	                            .version = "1.0",
	                            .filename = "purepkg-1.0-py3-none-any.whl",
	                            .sha256 = HA,
	                            .size = 100,
	                            .requested = true,
	                            .url = "https://u:secret@h/purepkg-1.0-py3-none-any.whl"};
	f->files[1] = (ml_artifact){.name = "datapkg",
	                            .version = "0.5",
	                            .filename = "datapkg-0.5-py3-none-any.whl",
	                            .sha256 = HB,
	                            .size = 200};
	f->plan.selection = &f->selection;
	f->plan.files = f->files;
	f->plan.n_files = 2;
	strcpy(f->python.version, "3.11.7");
	strcpy(f->python.xy, "3.11");
	strcpy(f->python.implementation, "cpython");
	strcpy(f->python.executable, "/usr/bin/python3.11");
	strcpy(f->machine.os.name, "linux");
	strcpy(f->machine.os.arch, "x86_64");
	strcpy(f->machine.driver.version, "570.86.15");
	f->machine.n_gpus = 1;
	f->machine.gpus = calloc(1, sizeof(ml_gpu));
	strcpy(f->machine.gpus[0].name, "NVIDIA H100");
	f->machine.gpus[0].cc_major = 9;
}

static void test_written_lock_reads_back_to_the_same_wheels(void **state)
{
	(void)state;
	plan_fx f;
	plan_fx_init(&f);
	const char *urls[2] = {f.files[0].url, NULL};
	ml_pylock_input in = ML_PYLOCK_INPUT_INIT;
	in.plan = &f.plan;
	in.urls = urls;
	in.python = &f.python;
	in.python_source = "system";
	in.python_reason = "the host could not be reached";
	in.machine = &f.machine;
	in.commit = "0123456789abcdef0123456789abcdef01234567";
	char *text = NULL;
	size_t missing = 9;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_pylock_render(&text, &in, &missing, &err), 0);
	assert_int_equal(missing, 1);
	assert_null(strstr(text, "secret"));
	/* a wheel without a URL is no valid lock wheel: give it one */
	ml_buf b = ML_BUF_INIT;
	const char *cut = strstr(text, "name = \"datapkg-0.5-py3-none-any.whl\"\n");
	assert_non_null(cut);
	cut += strlen("name = \"datapkg-0.5-py3-none-any.whl\"\n");
	ml_buf_add(&b, text, (size_t)(cut - text));
	ml_buf_puts(&b, "url = \"https://h/datapkg-0.5-py3-none-any.whl\"\n");
	ml_buf_puts(&b, cut);
	ml_pylock *pl = parse_ok(ml_buf_cstr(&b));
	assert_string_equal(pl->created_by, "mlsetup");
	assert_string_equal(pl->requires_python, "==3.11.*");
	assert_int_equal(pl->n_pkgs, 2);
	assert_string_equal(pl->pkgs[0].name, "datapkg"); /* name order */
	assert_string_equal(pl->pkgs[1].wheels[0].url, "https://h/purepkg-1.0-py3-none-any.whl");
	assert_int_equal(pl->pkgs[1].wheels[0].size, 100);
	assert_string_equal(pl->pkgs[1].wheels[0].sha256, HA);
	const ml_toml *tool = ml_toml_get(ml_toml_get(pl->doc, "tool"), "mlsetup");
	assert_string_equal(ml_toml_get_string(tool, "manifest"), "proj/req \"x\".txt");
	assert_string_equal(ml_toml_get_string(tool, "commit"),
	                    "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(ml_toml_get_string(tool, "driver"), "570.86.15");
	assert_string_equal(ml_toml_get(tool, "requested")->items[0]->str, "purepkg");
	assert_string_equal(
	        ml_toml_get_string(ml_toml_get(tool, "gpus")->items[0], "compute-capability"),
	        "9.0");
	const ml_toml *py = ml_toml_get(tool, "python");
	assert_string_equal(ml_toml_get_string(py, "source"), "system");
	assert_string_equal(ml_toml_get_string(py, "reason"), "the host could not be reached");
	assert_string_equal(ml_toml_get_string(ml_toml_get(tool, "header"), "cuda"), "12.4");
	/* and as hashed requirements that hash mode accepts */
	char *req = NULL;
	assert_int_equal(ml_pylock_to_requirements(&req, pl, &err), 0);
	ml_requirements *r = NULL;
	if (ml_requirements_parse(&r, "x.txt", req, strlen(req), ML_REQ_HASH_MODE, &err) != 0)
		fail_msg("%s\n%s", err.msg, req);
	assert_int_equal(r->n_reqs, 2);
	assert_string_equal(r->reqs[1].version, "1.0");
	assert_string_equal(r->reqs[1].sha256[0], HA);
	assert_string_equal(ml_requirements_meta(r, "cuda"), "12.4");
	assert_string_equal(ml_requirements_meta(r, "requested"), "purepkg");
	assert_non_null(strstr(req, "# mlsetup-file: " HA " 100 purepkg-1.0-py3-none-any.whl\n"));
	ml_requirements_free(r);
	free(req);
	ml_pylock_free(pl);
	ml_buf_release(&b);
	free(text);
	free(f.machine.gpus);
}

/* A size no server told (-1) is left out of the lock, which reads back
 * with the size unknown; never "size = -1", which no lock reader takes. */
static void test_unknown_size_is_left_out(void **state)
{
	(void)state;
	plan_fx f;
	plan_fx_init(&f);
	f.files[1].size = -1;
	f.files[1].url = "https://h/datapkg-0.5-py3-none-any.whl";
	const char *urls[2] = {f.files[0].url, f.files[1].url};
	ml_pylock_input in = ML_PYLOCK_INPUT_INIT;
	in.plan = &f.plan;
	in.urls = urls;
	in.python = &f.python;
	in.machine = &f.machine;
	char *text = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_pylock_render(&text, &in, NULL, &err), 0);
	assert_null(strstr(text, "size = -1"));
	assert_non_null(strstr(text, "size = 100\n"));
	ml_pylock *pl = parse_ok(text);
	assert_int_equal(pl->pkgs[0].wheels[0].size, -1); /* datapkg, name order */
	assert_int_equal(pl->pkgs[1].wheels[0].size, 100);
	ml_pylock_free(pl);
	free(text);
	free(f.machine.gpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_reads_uv_export),
	        cmocka_unit_test(test_reads_pip_lock_without_sizes),
	        cmocka_unit_test(test_paths_names_and_other_sources),
	        cmocka_unit_test(test_refuses_what_is_no_lock_naming_the_line),
	        cmocka_unit_test(test_written_lock_reads_back_to_the_same_wheels),
	        cmocka_unit_test(test_unknown_size_is_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
