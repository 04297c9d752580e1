/*
 * test_requirements.c - specs for manifests, pip's requirements-file format
 * (src/pkg/requirements.c): line joining and comments as pip does them,
 * options, `# mlsetup:` headers, hash mode, PEP 503 names, and error
 * messages that name file and line.
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

#include "mlsetup/pkg.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#define HA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HC "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static ml_requirements *parse_ok(const char *text, unsigned flags)
{
	ml_requirements *r = NULL;
	ml_err err = ML_ERR_INIT;
	if (ml_requirements_parse(&r, "x.txt", text, strlen(text), flags, &err) != 0)
		fail_msg("parse failed: %s (hint: %s)\n--- text:\n%s", err.msg, err.hint, text);
	return r;
}

/* Parses text expecting ML_EPARSE; returns the error. */
static ml_err parse_bad(const char *text, unsigned flags)
{
	ml_requirements *r = (ml_requirements *)0x1;
	ml_err err = ML_ERR_INIT;
	int rc = ml_requirements_parse(&r, "x.txt", text, strlen(text), flags, &err);
	if (rc != ML_EPARSE)
		fail_msg("expected ML_EPARSE, got %d for:\n%s", rc, text);
	if (r != (ml_requirements *)0x1)
		fail_msg("*out was written on failure");
	return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("'%s' does not contain '%s'", haystack, needle);
}

/* --- the format, as pip reads it ---------------------------------------- */

static void test_parses_a_pinned_requirement_with_hashes(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("numpy==1.26.4 --hash=sha256:" HA " --hash=sha256:" HB "\n",
	                              ML_REQ_HASH_MODE);
	assert_int_equal(r->n_reqs, 1);
	ml_requirement *q = &r->reqs[0];
	assert_string_equal(q->name, "numpy");
	assert_string_equal(q->normalized, "numpy");
	assert_string_equal(q->version, "1.26.4");
	assert_string_equal(q->specifier, "==1.26.4");
	assert_null(q->marker);
	assert_null(q->url);
	assert_int_equal(q->n_hashes, 2);
	assert_string_equal(q->sha256[0], HA);
	assert_string_equal(q->sha256[1], HB);
	assert_int_equal(q->line, 1);
	assert_string_equal(r->path, "x.txt");
	ml_requirements_free(r);
}

static void test_full_requirement_syntax(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("Torch_Audio [GPU , Extra.Two]==2.6.0+cu124 ; sys_platform "
	                              "== \"linux\" --hash sha256:" HA "\n",
	                              ML_REQ_HASH_MODE);
	ml_requirement *q = &r->reqs[0];
	assert_string_equal(q->name, "Torch_Audio");
	assert_string_equal(q->normalized, "torch-audio");
	assert_int_equal(q->n_extras, 2);
	assert_string_equal(q->extras[0], "gpu");
	assert_string_equal(q->extras[1], "extra-two");
	assert_string_equal(q->version, "2.6.0+cu124");
	assert_string_equal(q->marker, "sys_platform == \"linux\"");
	ml_requirements_free(r);
}

static void test_continuation_keeps_first_line_number(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("# header\n"
	                              "\n"
	                              "numpy==1.26.4 \\\n"
	                              "    --hash=sha256:" HA " \\\n"
	                              "    --hash=sha256:" HB "\n"
	                              "torch==2.6.0 \\\n"
	                              "    --hash=sha256:" HC "\n",
	                              ML_REQ_HASH_MODE);
	assert_int_equal(r->n_reqs, 2);
	assert_int_equal(r->reqs[0].line, 3);
	assert_int_equal(r->reqs[0].n_hashes, 2);
	assert_int_equal(r->reqs[1].line, 6);
	ml_requirements_free(r);
}

static void test_error_on_a_continued_line_names_its_first_line(void **state)
{
	(void)state;
	ml_err err = parse_bad("numpy==1.26.4 --hash=sha256:" HA "\n"
	                       "torch>=2.6 \\\n"
	                       "    --hash=sha256:" HB "\n",
	                       ML_REQ_HASH_MODE);
	assert_contains(err.msg, "line 2:");
}

static void test_comments_start_at_line_start_or_after_whitespace(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("# a comment\n"
	                              "   # an indented comment\n"
	                              "numpy==1.26.4 # trailing comment\n"
	                              "--index-url https://example.org/simple#not-a-comment\n",
	                              0);
	assert_int_equal(r->n_reqs, 1);
	assert_string_equal(r->reqs[0].specifier, "==1.26.4");
	assert_string_equal(r->index_url, "https://example.org/simple#not-a-comment");
	ml_requirements_free(r);
}

static void test_whole_line_comment_ends_a_continuation(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("numpy==1.26.4 \\\n"
	                              "  # the comment ends the requirement\n"
	                              "torch==2.6.0\n",
	                              0);
	assert_int_equal(r->n_reqs, 2);
	assert_int_equal(r->reqs[0].line, 1);
	assert_int_equal(r->reqs[1].line, 3);
	ml_requirements_free(r);
}

static void test_trailing_comment_with_backslash_swallows_the_next_line_as_pip_does(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("bar==2.0 # note \\\n"
	                              "baz==3.0\n"
	                              "qux==4.0\n",
	                              0);
	assert_int_equal(r->n_reqs, 2);
	assert_string_equal(r->reqs[0].name, "bar");
	assert_string_equal(r->reqs[1].name, "qux");
	assert_int_equal(r->reqs[1].line, 3);
	ml_requirements_free(r);
}

static void test_blank_lines_crlf_cr_and_missing_final_newline(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("\r\n\r\na==1\r\n\r\nb==2\rc==3\n\n\nd==4", 0);
	assert_int_equal(r->n_reqs, 4);
	assert_int_equal(r->reqs[0].line, 3);
	assert_int_equal(r->reqs[1].line, 5);
	assert_int_equal(r->reqs[2].line, 6);
	assert_int_equal(r->reqs[3].line, 9);
	ml_requirements_free(r);
}

static void test_utf8_bom_is_skipped(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("\xEF\xBB\xBFnumpy==1.0\n", 0);
	assert_string_equal(r->reqs[0].name, "numpy");
	ml_requirements_free(r);
}

static void test_empty_text_is_an_empty_manifest(void **state)
{
	ml_requirements *r = NULL;
	(void)state;
	assert_int_equal(ml_requirements_parse(&r, NULL, "", 0, ML_REQ_HASH_MODE, NULL), 0);
	assert_int_equal(r->n_reqs, 0);
	assert_null(r->path);
	assert_null(r->index_url);
	ml_requirements_free(r);
}

static void test_index_options_are_recorded(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("-i https://first.example/simple\n"
	                              "--index-url=https://download.pytorch.org/whl/cu124\n"
	                              "--extra-index-url https://index.example.org/simple\n"
	                              "--extra-index-url=https://mirror.example/simple\n"
	                              "-f ./wheels\n"
	                              "--find-links=https://example.org/links\n"
	                              "--no-index\n"
	                              "--trusted-host mirror.example --trusted-host other.example\n"
	                              "--require-hashes --prefer-binary --pre\n"
	                              "--only-binary :all:\n"
	                              "-ihttps://last.example/simple\n",
	                              0);
	assert_string_equal(r->index_url, "https://last.example/simple"); /* the last wins */
	assert_int_equal(r->n_extra, 2);
	assert_string_equal(r->extra_index_urls[0], "https://index.example.org/simple");
	assert_string_equal(r->extra_index_urls[1], "https://mirror.example/simple");
	assert_int_equal(r->n_find_links, 2);
	assert_string_equal(r->find_links[0], "./wheels");
	assert_string_equal(r->find_links[1], "https://example.org/links");
	assert_true(r->no_index);
	assert_int_equal(r->n_trusted, 2);
	assert_string_equal(r->trusted_hosts[1], "other.example");
	assert_true(r->require_hashes);
	assert_true(r->prefer_binary);
	assert_true(r->pre);
	assert_int_equal(r->n_only_binary, 1);
	assert_string_equal(r->only_binary[0], ":all:");
	assert_int_equal(r->n_reqs, 0);
	ml_requirements_free(r);
}

static void test_option_values_may_be_quoted(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("--index-url 'https://example.org/a b'\n"
	                              "--extra-index-url \"https://example.org/\\\"q\\\"\"\n",
	                              0);
	assert_string_equal(r->index_url, "https://example.org/a b");
	assert_string_equal(r->extra_index_urls[0], "https://example.org/\"q\"");
	ml_requirements_free(r);
}

static void test_hashes_are_lowercased_and_deduplicated(void **state)
{
	(void)state;
	ml_requirements *r =
	        parse_ok("numpy==1.0 --hash=SHA256:"
	                 "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	                 " --hash sha256:" HC "\n",
	                 ML_REQ_HASH_MODE);
	assert_int_equal(r->reqs[0].n_hashes, 1);
	assert_string_equal(r->reqs[0].sha256[0], HC);
	ml_requirements_free(r);
}

/* --- hashes -------------------------------------------------------------- */

static void test_rejects_md5_hash(void **state)
{
	(void)state;
	ml_err err = parse_bad("numpy==1.26.4 --hash=md5:0123456789abcdef0123456789abcdef\n", 0);
	assert_string_equal(err.msg, "manifest 'x.txt' line 1: md5 hashes are refused");
	assert_contains(err.hint, "--hash=sha256:");
	assert_int_equal(err.code, ML_EPARSE);
}

static void test_rejects_every_algorithm_but_sha256(void **state)
{
	static const char *const algos[] = {"sha1",   "sha224",  "sha384",
	                                    "sha512", "blake2b", "SHA1"};
	(void)state;
	for (size_t i = 0; i < N_OF(algos); i++) {
		char text[256];
		snprintf(text, sizeof text, "numpy==1.0 --hash=%s:abcdef\n", algos[i]);
		ml_err err = parse_bad(text, ML_REQ_HASH_MODE);
		assert_contains(err.msg, "hashes are refused");
	}
}

static void test_rejects_hash_that_is_not_64_hex_digits(void **state)
{
	static const char *const bad[] = {
	        "numpy==1.0 --hash=sha256:abc\n",
	        "numpy==1.0 --hash=sha256:" HA "a\n",
	        ("numpy==1.0 "
	         "--hash=sha256:"
	         "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n"),
	        "numpy==1.0 --hash=sha256:\n",
	};
	(void)state;
	for (size_t i = 0; i < N_OF(bad); i++) {
		ml_err err = parse_bad(bad[i], 0);
		assert_contains(err.msg, "is not 64 hex digits");
		assert_contains(err.hint, "64 hex digits");
	}
	ml_err err = parse_bad("numpy==1.0 --hash=" HA "\n", 0);
	assert_contains(err.msg, "malformed --hash");
}

static void test_hash_without_a_requirement_is_refused(void **state)
{
	(void)state;
	ml_err err = parse_bad("numpy==1.0\n--hash=sha256:" HA "\n", 0);
	assert_contains(err.msg, "line 2: '--hash' must follow a requirement on the same line");
	assert_contains(err.hint, "\\");
}

/* --- hash mode ------------------------------------------------------------ */

static void test_hash_mode_rejects_requirements_not_pinned_with_double_equals(void **state)
{
	static const struct {
		const char *line, *msg, *hint;
	} rows[] = {
	        {"numpy",
	         "'numpy' is not pinned with ==", "pin an exact version (numpy==<version>)"},
	        {"numpy>=1.26.4", "'numpy' is not pinned with == (found '>=1.26.4')",
	         "pin an exact version (numpy==1.26.4)"},
	        {"numpy~=1.26.4", "is not pinned with ==", "(numpy==1.26.4)"},
	        {"numpy==1.26.4,<2", "is not pinned with ==", "(numpy==1.26.4)"},
	        {"numpy==1.26.*", "is not pinned with == (found '==1.26.*')", "(numpy==<version>)"},
	        {"numpy===1.26.4",
	         "'numpy' is pinned with ===, not ==", "pin with == (numpy==1.26.4)"},
	        {"numpy @ https://example.org/numpy-1.26.4-cp312-cp312-linux_x86_64.whl",
	         "'numpy' is a direct reference (name @ url); hash mode needs name==version",
	         "numpy==<version>"},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		char text[512];
		snprintf(text, sizeof text, "# pins\n%s --hash=sha256:%s\n", rows[i].line, HA);
		ml_err err = parse_bad(text, ML_REQ_HASH_MODE);
		assert_contains(err.msg, "manifest 'x.txt' line 2: ");
		assert_contains(err.msg, rows[i].msg);
		assert_contains(err.hint, rows[i].hint);
	}
}

static void test_error_message_names_file_and_line_git_style(void **state)
{
	(void)state;
	ml_err err = parse_bad("\n\n\n\n\n\n\n\n\n\n\nnumpy>=1.26.4 --hash=sha256:" HA "\n",
	                       ML_REQ_HASH_MODE);
	assert_string_equal(err.msg, "manifest 'x.txt' line 12: 'numpy' is not pinned with == "
	                             "(found '>=1.26.4')");
	assert_string_equal(err.hint, "pin an exact version (numpy==1.26.4)");
}

static void test_hash_mode_requires_a_hash_per_requirement(void **state)
{
	(void)state;
	ml_err err =
	        parse_bad("numpy==1.26.4 --hash=sha256:" HA "\ntorch==2.6.0\n", ML_REQ_HASH_MODE);
	assert_string_equal(err.msg, "manifest 'x.txt' line 2: 'torch' has no --hash");
	assert_contains(err.hint, "--hash=sha256:");
}

static void test_hash_mode_rejects_duplicate_names_after_normalization(void **state)
{
	(void)state;
	ml_err err = parse_bad("Typing_Extensions==4.12.2 --hash=sha256:" HA "\n"
	                       "typing.extensions==4.12.2 --hash=sha256:" HB "\n",
	                       ML_REQ_HASH_MODE);
	assert_string_equal(err.msg, "manifest 'x.txt' line 2: 'typing.extensions' is listed twice "
	                             "(first on line 1)");
}

static void test_hash_mode_allows_one_name_under_different_markers(void **state)
{
	(void)state;
	ml_requirements *r =
	        parse_ok("torch==2.6.0+cu124 ; sys_platform == 'linux' --hash=sha256:" HA "\n"
	                 "torch==2.6.0 ; sys_platform == 'darwin' --hash=sha256:" HB "\n",
	                 ML_REQ_HASH_MODE);
	assert_int_equal(r->n_reqs, 2);
	assert_string_equal(r->reqs[1].marker, "sys_platform == 'darwin'");
	ml_requirements_free(r);
}

static void test_without_hash_mode_loose_requirements_are_accepted(void **state)
{
	(void)state;
	ml_requirements *r =
	        parse_ok("torch>=2.6\n"
	                 "numpy (>=1.26, <2)\n"
	                 "requests[socks]\n"
	                 "pkg @ https://example.org/pkg-1.0-py3-none-any.whl ; os_name == 'nt'\n"
	                 "numpy==1.26.*\n"
	                 "torch>=2.6\n",
	                 0);
	assert_int_equal(r->n_reqs, 6);
	assert_string_equal(r->reqs[0].specifier, ">=2.6");
	assert_null(r->reqs[0].version);
	assert_string_equal(r->reqs[1].specifier, ">=1.26,<2");
	assert_string_equal(r->reqs[2].specifier, "");
	assert_string_equal(r->reqs[2].extras[0], "socks");
	assert_string_equal(r->reqs[3].url, "https://example.org/pkg-1.0-py3-none-any.whl");
	assert_string_equal(r->reqs[3].marker, "os_name == 'nt'");
	assert_null(r->reqs[4].version);
	ml_requirements_free(r);
}

/* --- refusals ------------------------------------------------------------- */

static void test_rejects_unknown_and_unsupported_options(void **state)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
	        {"--frobnicate\n", "unknown option '--frobnicate'"},
	        {"-x foo\n", "unknown option '-x'"},
	        {"--index\n", "unknown option '--index'"},
	        {"-r other.txt\n", "nested requirement files (-r) are not supported"},
	        {"--requirement=other.txt\n", "nested requirement files (-r) are not supported"},
	        {"-c constraints.txt\n", "constraint files (-c) are not supported"},
	        {"-e ./src\n", "editable installs (-e) are not supported"},
	        {"--no-binary :all:\n", "--no-binary is refused"},
	        {"numpy==1.0 --global-option=x\n", "--global-option is refused"},
	        {"numpy==1.0 --config-settings=x\n", "--config-settings is refused"},
	        {"--no-index=yes\n", "option '--no-index' takes no value"},
	        {"--index-url\n", "option '--index-url' needs a value"},
	        {"numpy==1.0 --index-url https://x/\n",
	         "option '--index-url' cannot follow a requirement"},
	        {"numpy==1.0 --hash=sha256:" HA " scipy==1.0\n",
	         "unexpected 'scipy==1.0' among options"},
	        {"--index-url 'https://x/\n", "no closing quotation"},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		ml_err err = parse_bad(rows[i].text, 0);
		assert_contains(err.msg, "manifest 'x.txt' line 1: ");
		assert_contains(err.msg, rows[i].msg);
	}
}

static void test_rejects_malformed_requirements(void **state)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
	        {"./wheels/numpy-1.0-py3-none-any.whl\n", "expected a project name at column 1"},
	        {"numpy=1.0\n", "invalid version specifier '=1.0' for 'numpy'"},
	        {"numpy 1.0\n", "invalid version specifier '1.0'"},
	        {"numpy==1.0 scipy\n", "invalid version specifier '==1.0 scipy'"},
	        {"numpy[gpu\n", "expected ',' or ']' at column 10"},
	        {"numpy[,]\n", "expected an extra name at column 7"},
	        {"numpy-==1.0\n", "invalid version specifier '-==1.0'"},
	        {"numpy (>=1.0\n", "expected ')'"},
	        {"numpy @\n", "expected a URL after '@'"},
	        {"numpy @ https://x/y.whl junk\n", "expected ';' or the end"},
	        {"numpy==1.0 ;\n", "empty marker after ';'"},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		ml_err err = parse_bad(rows[i].text, 0);
		assert_contains(err.msg, "line 1: ");
		assert_contains(err.msg, rows[i].msg);
	}
}

static void test_wheels_only_paths_urls_and_vcs_are_refused_with_how_to_get_a_wheel(void **state)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
	        {"./src\n", "not a local path or URL"},
	        {"dist/numpy-1.0-py3-none-any.whl\n", "not a local path or URL"},
	        {"numpy-1.0-py3-none-any.whl\n", "not a local path or URL"},
	        {"https://h/numpy-1.0-py3-none-any.whl\n", "not a local path or URL"},
	        {"~/src/pkg\n", "not a local path or URL"},
	        {"pkg @ git+https://h/pkg.git@v1\n", "'pkg' is a VCS requirement"},
	        {"pkg @ file:///src/pkg\n", "'pkg' points at a local path"},
	        {"pkg @ https://h/pkg-1.0.tar.gz\n", "'pkg' points at a file that is no wheel"},
	};
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		ml_err err = parse_bad(rows[i].text, 0);
		assert_contains(err.msg, "manifest 'x.txt' line 1: ");
		assert_contains(err.msg, rows[i].msg);
		assert_true(strstr(err.hint, "pip wheel") || strstr(err.hint, "--find-links"));
	}
	ml_err err = parse_bad("-e ./src\n", 0);
	assert_contains(err.hint, "pip wheel --no-deps -w wheelhouse");
	ml_requirements *r =
	        parse_ok("pkg @ https://h/pkg-1.0-py3-none-any.whl#sha256=" HA "\n", 0);
	assert_string_equal(r->reqs[0].url, "https://h/pkg-1.0-py3-none-any.whl#sha256=" HA);
	ml_requirements_free(r);
}

static void test_includes_are_recorded_when_asked_for(void **state)
{
	(void)state;
	ml_requirements *r =
	        parse_ok("numpy>=1\n-r base.txt\n--constraint=pins.txt\n", ML_REQ_INCLUDES);
	assert_int_equal(r->n_includes, 2);
	assert_string_equal(r->includes[0].path, "base.txt");
	assert_false(r->includes[0].constraint);
	assert_int_equal(r->includes[0].line, 2);
	assert_string_equal(r->includes[1].path, "pins.txt");
	assert_true(r->includes[1].constraint);
	assert_int_equal(r->n_reqs, 1);
	ml_requirements_free(r);
	ml_err err = parse_bad("numpy>=1 -r base.txt\n", ML_REQ_INCLUDES);
	assert_contains(err.msg, "cannot follow a requirement");
}

static void test_rejects_bad_markers_naming_line_and_column(void **state)
{
	(void)state;
	ml_err err = parse_bad("numpy==1.0\nscipy==1.0 ; python_versio >= '3.9'\n", 0);
	assert_string_equal(err.msg, "manifest 'x.txt' line 2: invalid marker 'python_versio >= "
	                             "'3.9'': unknown variable 'python_versio' at column 1");
	assert_contains(err.hint, "python_version");
}

static void test_environment_variables_are_not_expanded(void **state)
{
	(void)state;
	ml_err err = parse_bad("--index-url https://${TOKEN}@example.org/simple\n", 0);
	assert_contains(err.msg, "environment variable '${TOKEN}' is not expanded");
	ml_requirements *r = parse_ok("--index-url https://example.org/${lower}/simple\n", 0);
	ml_requirements_free(r);
}

static void test_nul_byte_is_refused_with_its_line(void **state)
{
	ml_requirements *r = NULL;
	ml_err err = ML_ERR_INIT;
	static const char text[] = "a==1\nb==\0002\n";
	(void)state;
	assert_int_equal(ml_requirements_parse(&r, "x.txt", text, sizeof text - 1, 0, &err),
	                 ML_EPARSE);
	assert_string_equal(err.msg, "manifest 'x.txt' line 2: contains a NUL byte");
	assert_null(r);
}

static void test_messages_without_a_path_still_name_the_line(void **state)
{
	ml_requirements *r = NULL;
	ml_err err = ML_ERR_INIT;
	(void)state;
	assert_int_equal(ml_requirements_parse(&r, NULL, "\n-r x\n", 6, 0, &err), ML_EPARSE);
	assert_contains(err.msg, "manifest line 2: ");
}

/* --- headers ---------------------------------------------------------------- */

static void test_header_lines_are_collected_anywhere_in_order(void **state)
{
	(void)state;
	ml_requirements *r = parse_ok("# mlsetup: summary = PyTorch 2.6 for CUDA 12.4\n"
	                              "#mlsetup:cuda=12.4\n"
	                              "# an ordinary comment\n"
	                              "numpy==1.26.4 --hash=sha256:" HA "\n"
	                              "   #   mlsetup:   torch_sass =  sm_50 sm_60   \n"
	                              "# mlsetup: empty =\n"
	                              "numpy==2 # mlsetup: not = a header\n",
	                              0);
	assert_int_equal(r->n_meta, 4);
	assert_string_equal(r->meta[0].key, "summary");
	assert_string_equal(r->meta[0].value, "PyTorch 2.6 for CUDA 12.4");
	assert_int_equal(r->meta[0].line, 1);
	assert_string_equal(r->meta[1].key, "cuda");
	assert_string_equal(r->meta[1].value, "12.4");
	assert_string_equal(r->meta[2].key, "torch_sass");
	assert_string_equal(r->meta[2].value, "sm_50 sm_60");
	assert_int_equal(r->meta[2].line, 5);
	assert_string_equal(r->meta[3].value, "");
	assert_string_equal(ml_requirements_meta(r, "cuda"), "12.4");
	assert_null(ml_requirements_meta(r, "not"));
	assert_null(ml_requirements_meta(r, "CUDA")); /* keys are case-sensitive */
	assert_null(ml_requirements_meta(NULL, "cuda"));
	ml_requirements_free(r);
}

static void test_malformed_or_repeated_headers_are_refused(void **state)
{
	(void)state;
	ml_err err = parse_bad("# mlsetup: just words\n", 0);
	assert_string_equal(err.msg,
	                    "manifest 'x.txt' line 1: malformed header '# mlsetup: just words'");
	assert_contains(err.hint, "# mlsetup: key = value");
	err = parse_bad("# mlsetup: = value\n", 0);
	assert_contains(err.msg, "malformed header key");
	err = parse_bad("# mlsetup: bad key = value\n", 0);
	assert_contains(err.msg, "malformed header key 'bad key'");
	err = parse_bad("# mlsetup: cuda = 12.4\n\n# mlsetup: cuda = 12.8\n", 0);
	assert_string_equal(err.msg,
	                    "manifest 'x.txt' line 3: header 'cuda' repeated (first on line 1)");
}

/* --- names ------------------------------------------------------------------ */

static void test_name_normalize_follows_pep503(void **state)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
	        {"numpy", "numpy"},
	        {"Typing_Extensions", "typing-extensions"},
	        {"zope.interface", "zope-interface"},
	        {"Foo__Bar.-_baz", "foo-bar-baz"},
	        {"A-B", "a-b"},
	        {"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu12"},
	        {"", ""},
	};
	char buf[64];
	(void)state;
	for (size_t i = 0; i < N_OF(rows); i++) {
		assert_int_equal(ml_name_normalize(buf, sizeof buf, rows[i].in), 0);
		assert_string_equal(buf, rows[i].out);
	}
	assert_int_equal(ml_name_normalize(buf, 4, "abcdef"), ML_EFAIL);
	assert_string_equal(buf, "abc");
}

/* --- files ------------------------------------------------------------------ */

static void test_load_reads_a_file_and_names_it(void **state)
{
	char path[] = "/tmp/mlsetup-test-req-XXXXXX";
	(void)state;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "numpy==1.26.4 --hash=sha256:" HA "\nscipy>=1\n";
	assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	ml_requirements *r = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_requirements_load(&r, path, 0, &err), 0);
	assert_int_equal(r->n_reqs, 2);
	assert_string_equal(r->path, path);
	ml_requirements_free(r);
	r = NULL;
	assert_int_equal(ml_requirements_load(&r, path, ML_REQ_HASH_MODE, &err), ML_EPARSE);
	assert_contains(err.msg, path);
	assert_contains(err.msg, "line 2");
	assert_null(r);
	unlink(path);
	assert_int_equal(ml_requirements_load(&r, path, 0, &err), ML_ENOENT);
	assert_null(r);
}

static void test_free_accepts_null(void **state)
{
	(void)state;
	ml_requirements_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parses_a_pinned_requirement_with_hashes),
	        cmocka_unit_test(test_full_requirement_syntax),
	        cmocka_unit_test(test_continuation_keeps_first_line_number),
	        cmocka_unit_test(test_error_on_a_continued_line_names_its_first_line),
	        cmocka_unit_test(test_comments_start_at_line_start_or_after_whitespace),
	        cmocka_unit_test(test_whole_line_comment_ends_a_continuation),
	        cmocka_unit_test(
	                test_trailing_comment_with_backslash_swallows_the_next_line_as_pip_does),
	        cmocka_unit_test(test_blank_lines_crlf_cr_and_missing_final_newline),
	        cmocka_unit_test(test_utf8_bom_is_skipped),
	        cmocka_unit_test(test_empty_text_is_an_empty_manifest),
	        cmocka_unit_test(test_index_options_are_recorded),
	        cmocka_unit_test(test_option_values_may_be_quoted),
	        cmocka_unit_test(test_hashes_are_lowercased_and_deduplicated),
	        cmocka_unit_test(test_rejects_md5_hash),
	        cmocka_unit_test(test_rejects_every_algorithm_but_sha256),
	        cmocka_unit_test(test_rejects_hash_that_is_not_64_hex_digits),
	        cmocka_unit_test(test_hash_without_a_requirement_is_refused),
	        cmocka_unit_test(test_hash_mode_rejects_requirements_not_pinned_with_double_equals),
	        cmocka_unit_test(test_error_message_names_file_and_line_git_style),
	        cmocka_unit_test(test_hash_mode_requires_a_hash_per_requirement),
	        cmocka_unit_test(test_hash_mode_rejects_duplicate_names_after_normalization),
	        cmocka_unit_test(test_hash_mode_allows_one_name_under_different_markers),
	        cmocka_unit_test(test_without_hash_mode_loose_requirements_are_accepted),
	        cmocka_unit_test(test_rejects_unknown_and_unsupported_options),
	        cmocka_unit_test(test_rejects_malformed_requirements),
	        cmocka_unit_test(
	                test_wheels_only_paths_urls_and_vcs_are_refused_with_how_to_get_a_wheel),
	        cmocka_unit_test(test_includes_are_recorded_when_asked_for),
	        cmocka_unit_test(test_rejects_bad_markers_naming_line_and_column),
	        cmocka_unit_test(test_environment_variables_are_not_expanded),
	        cmocka_unit_test(test_nul_byte_is_refused_with_its_line),
	        cmocka_unit_test(test_messages_without_a_path_still_name_the_line),
	        cmocka_unit_test(test_header_lines_are_collected_anywhere_in_order),
	        cmocka_unit_test(test_malformed_or_repeated_headers_are_refused),
	        cmocka_unit_test(test_name_normalize_follows_pep503),
	        cmocka_unit_test(test_load_reads_a_file_and_names_it),
	        cmocka_unit_test(test_free_accepts_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
