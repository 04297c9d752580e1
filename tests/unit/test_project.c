/*
 * test_project.c - specs for a project as input (src/plan/project.c):
 * what --project names (a directory, or a git URL with pip's git+ form,
 * credentials taken out and @REV after the last '@' of the path) and the
 * order of a project's candidate requirements files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlsetup/plan.h"

static void parse_ok(ml_project_source *s, const char *spec)
{
	ml_err err = ML_ERR_INIT;
	if (ml_project_source_parse(s, spec, &err) != 0)
		fail_msg("'%s' refused: %s", spec, err.msg);
}

static void expect_str(const char *want, const char *got)
{
	if (!want) {
		if (got)
			fail_msg("expected NULL, got '%s'", got);
		return;
	}
	if (!got)
		fail_msg("expected '%s', got NULL", want);
	assert_string_equal(want, got);
}

/* spec -> url, rev, name, user, password */
static void check_url(const char *spec, const char *url, const char *rev, const char *name,
                      const char *user, const char *password)
{
	ml_project_source s;
	parse_ok(&s, spec);
	assert_true(s.git);
	assert_null(s.path);
	expect_str(url, s.url);
	expect_str(rev, s.rev);
	expect_str(name, s.name);
	expect_str(user, s.user);
	expect_str(password, s.password);
	ml_project_source_release(&s);
}

static void test_git_urls_and_revs(void **state)
{
	(void)state;
	check_url("https://host/owner/thesis.git", "https://host/owner/thesis.git", NULL, "thesis",
	          NULL, NULL);
	check_url("https://host/owner/thesis.git@v1.2", "https://host/owner/thesis.git", "v1.2",
	          "thesis", NULL, NULL);
	check_url("git+https://host/owner/thesis@main", "https://host/owner/thesis", "main",
	          "thesis", NULL, NULL);
	check_url("file:///srv/repos/thesis.git@0123abc", "file:///srv/repos/thesis.git", "0123abc",
	          "thesis", NULL, NULL);
	check_url("git+file:///srv/repos/thesis/", "file:///srv/repos/thesis/", NULL, "thesis",
	          NULL, NULL);
	/* the last '@' of the path: a path with '@' in it keeps the earlier ones */
	check_url("https://host/a@b/thesis.git@feature/x", "https://host/a@b/thesis.git",
	          "feature/x", "thesis", NULL, NULL);
	/* credentials come out of the URL; '@' of the authority is not a REV */
	check_url("https://user:tok3n@host/o/thesis.git", "https://host/o/thesis.git", NULL,
	          "thesis", "user", "tok3n");
	check_url("https://tok3n@host:8443/o/thesis.git@v1", "https://host:8443/o/thesis.git", "v1",
	          "thesis", "tok3n", NULL);
	check_url("http://127.0.0.1:8080/thesis.git", "http://127.0.0.1:8080/thesis.git", NULL,
	          "thesis", NULL, NULL);
	check_url("ssh://git@host/o/thesis.git@v2", "ssh://host/o/thesis.git", "v2", "thesis",
	          "git", NULL);
}

static void test_directories(void **state)
{
	(void)state;
	ml_project_source s;
	parse_ok(&s, "./thesis");
	assert_false(s.git);
	assert_string_equal("./thesis", s.path);
	assert_null(s.url);
	ml_project_source_release(&s);
	parse_ok(&s, "/home/me/thesis@not-a-rev");
	assert_false(s.git);
	assert_string_equal("/home/me/thesis@not-a-rev", s.path);
	ml_project_source_release(&s);
}

static void refused(const char *spec, const char *needle)
{
	ml_project_source s;
	ml_err err = ML_ERR_INIT;
	int rc = ml_project_source_parse(&s, spec, &err);
	if (rc != ML_EUSAGE)
		fail_msg("'%s': expected ML_EUSAGE, got %d", spec, rc);
	if (!strstr(err.msg, needle))
		fail_msg("'%s': message '%s' lacks '%s'", spec, err.msg, needle);
	if (strstr(err.msg, "s3cret"))
		fail_msg("'%s': message shows the password: %s", spec, err.msg);
}

static void test_bad_urls_name_the_problem(void **state)
{
	(void)state;
	refused("ftp://host/x.git", "scheme 'ftp' is not supported");
	refused("git+ssh2://host/x.git", "scheme 'ssh2' is not supported");
	refused("git+thesis", "names no scheme");
	refused("https://host/x.git@", "has an empty REV");
	refused("https://u:s3cret@host", "names no repository path");
	refused("https://u:s3cret@host/", "names no repository path");
	refused("https://host/.git", "names no repository");
	refused("", "--project needs");
}

/* --- candidates ----------------------------------------------------------- */

static char dir[256];

static void put(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void expect_candidates(const char *want, bool want_no_torch)
{
	char **list = NULL;
	size_t n = 0;
	bool no_torch = false;
	ml_err err = ML_ERR_INIT;
	if (ml_project_candidates(&list, &n, &no_torch, dir, &err) != 0)
		fail_msg("candidates failed: %s", err.msg);
	char got[1024] = "";
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(list[i], '/');
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
		         base ? base + 1 : list[i]);
		free(list[i]);
	}
	free(list);
	assert_string_equal(want, got);
	assert_int_equal(want_no_torch, no_torch);
}

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/mlsetup-test-project.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	return ml_fs_rm_tree(dir) == 0 ? 0 : -1;
}

static void test_candidate_order(void **state)
{
	(void)state;
	put("requirements.txt", "torch==2.6.0\nnumpy==1.26.4\n");
	put("requirements_blackwell.txt", "-r requirements-base.txt\ntorch==2.8.0\n");
	put("requirements-base.txt", "numpy==1.26.4\n");
	put("requirements_a100.txt", "-r requirements-torch.txt\n"); /* torch via -r */
	put("requirements-torch.txt", "torch==2.7.1\n");
	put("requirements-dev.txt", "pytest==8.0\n"); /* no torch: not a candidate */
	put("requirements.in", "torch\n");            /* not *.txt */
	put("Requirements_x.txt", "torch\n");         /* bytewise: the name differs */
	/* requirements.txt first, then the others that require torch, bytewise */
	expect_candidates("requirements.txt requirements-torch.txt requirements_a100.txt "
	                  "requirements_blackwell.txt",
	                  false);
	/* [tool.mlsetup] manifests win, in their order */
	put("pyproject.toml",
	    "[project]\nname = \"t\"\n[tool.mlsetup]\n"
	    "manifests = [\"requirements_blackwell.txt\", \"requirements.txt\"]\n");
	expect_candidates("requirements_blackwell.txt requirements.txt", false);
	put("pyproject.toml", "[tool.mlsetup]\nmanifests = \"requirements.txt\"\n");
	char **list = NULL;
	size_t n = 0;
	bool nt;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ML_EPARSE, ml_project_candidates(&list, &n, &nt, dir, &err));
	assert_non_null(
	        strstr(err.msg, "line 2: [tool.mlsetup] manifests must be a non-empty array"));
	/* A cloned project's pyproject.toml is untrusted: nesting past the TOML
	 * reader's bound (a dotted key of 300 parts, fuzz_toml's finding) is
	 * refused naming the file and the line. */
	char deep[2048] = "[project]\nk";
	for (int i = 0; i < 300; i++)
		strcat(deep, ".k");
	strcat(deep, " = 1\n");
	put("pyproject.toml", deep);
	assert_int_equal(ML_EPARSE, ml_project_candidates(&list, &n, &nt, dir, &err));
	assert_non_null(strstr(err.msg, "pyproject.toml' line 2: nested more than 64 levels deep"));
	put("pyproject.toml", "[tool.other]\nx = 1\n"); /* no [tool.mlsetup]: the files decide */
	expect_candidates("requirements.txt requirements-torch.txt requirements_a100.txt "
	                  "requirements_blackwell.txt",
	                  false);
}

static void test_no_torch_anywhere(void **state)
{
	(void)state;
	put("requirements.txt", "numpy==1.26.4\n");
	put("requirements-dev.txt", "pytest==8.0\n");
	expect_candidates("requirements.txt", true);
	char p[512];
	snprintf(p, sizeof(p), "%s/requirements.txt", dir);
	unlink(p);
	char **list = NULL;
	size_t n = 0;
	bool nt;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ML_ENOENT, ml_project_candidates(&list, &n, &nt, dir, &err));
	assert_non_null(strstr(err.msg, "has no requirements.txt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_git_urls_and_revs),
	        cmocka_unit_test(test_directories),
	        cmocka_unit_test(test_bad_urls_name_the_problem),
	        cmocka_unit_test_setup_teardown(test_candidate_order, make_dir, remove_dir),
	        cmocka_unit_test_setup_teardown(test_no_torch_anywhere, make_dir, remove_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
