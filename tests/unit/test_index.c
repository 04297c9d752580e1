/*
 * test_index.c - unit tests for the fetch stage's index client: URL
 * redaction and resolution, the plain-http policy, PEP 691 JSON and PEP 503
 * HTML project pages (tests/fixtures/index/), --find-links directories,
 * where index URLs come from (flags, environment, pip.conf files written
 * into a temporary HOME), the transport policy's helpers (Content-Range,
 * no_proxy matching, the proxy for libgit2, netrc), and, end to end, pages,
 * sizes (HEAD, the ranged GET after 405/501) and files of unknown size
 * fetched from the loopback test index tests/mirror/server.py (skipped
 * without python3; the https cases also need the openssl command).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#endif

#include <cmocka.h>
#include "win_skip.h"
#include <openssl/evp.h>

#include "mlsetup/fetch.h"
#include "../../src/fetch/internal.h"

#define FIXTURES "tests/fixtures/index/"
#define PAGE_URL "https://index.example.org/simple/ml-demo/"

/* --- helpers --------------------------------------------------------------- */

static char tmp_root[1024];

static char *slurp(const char *path, size_t *len)
{
	char *text = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_os_read_file(&text, len, NULL, path, 1 << 20, &err), 0);
	return text;
}

static void mkdirs(const char *path)
{
	char p[PATH_MAX];
	ml_strlcpy(p, path, sizeof(p));
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

static void write_file(const char *path, const char *text)
{
	char dir[PATH_MAX];
	ml_strlcpy(dir, path, sizeof(dir));
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(dir);
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A fresh directory under the group's temporary root. */
static const char *fresh_dir(const char *name)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp_root, name);
	mkdirs(path);
	return path;
}

#ifndef _WIN32
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}
#endif

static void sha256_hex(char hex[65], const void *data, size_t n)
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_Digest(data, n, md, &len, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static bool have_program(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		return false;
	char dir[PATH_MAX];
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, n ? p : ".", name);
		if (access(dir, X_OK) == 0)
			return true;
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

static const ml_index_file *find_file(const ml_project *p, const char *filename)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].filename, filename) == 0)
			return &p->files[i];
	fail_msg("no file '%s' on the page", filename);
	return NULL;
}

static ml_project *parse_fixture(const char *name, bool json)
{
	size_t len;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	char *text = slurp(path, &len);
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = json ? ml_index_parse_json(&p, PAGE_URL, text, len, &err)
	              : ml_index_parse_html(&p, PAGE_URL, text, len, &err);
	if (rc)
		fail_msg("%s: %s", name, err.msg);
	free(text);
	return p;
}

#define W_X86 "ml_demo-2.6.0-cp312-cp312-manylinux_2_28_x86_64.whl"
#define W_ARM "ml_demo-2.6.0-cp312-cp312-manylinux_2_28_aarch64.whl"
#define W_WIN "ml_demo-2.6.0-cp312-cp312-win_amd64.whl"
#define W_CU  "ml_demo-2.6.0+cu124-cp312-cp312-manylinux_2_28_x86_64.whl"
#define W_MAC "ml_demo-2.5.0-cp312-none-macosx_11_0_arm64.whl"
#define SDIST "ml_demo-2.4.0.tar.gz"

/* --- URLs -------------------------------------------------------------------- */

static void test_url_redaction_hides_password(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
	        {"https://alice:s3cret@index.example.org/simple/",
	         "https://***@index.example.org/simple/"},
	        {"https://ghp_token@index.example.org/simple/",
	         "https://***@index.example.org/simple/"},
	        {"http://u:p:q@127.0.0.1:8080/x?y=1#z", "http://***@127.0.0.1:8080/x?y=1#z"},
	        {"https://u%40corp:p%40ss@[::1]:443/", "https://***@[::1]:443/"},
	        {"https://index.example.org/simple/", "https://index.example.org/simple/"},
	        {"https://index.example.org/a@b/", "https://index.example.org/a@b/"},
	        {"/srv/wheels", "/srv/wheels"},
	        {"file:///srv/wheels", "file:///srv/wheels"},
	        {"", ""},
	};
	char buf[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ml_url_redact(buf, sizeof(buf), cases[i].in);
		assert_string_equal(buf, cases[i].out);
		assert_null(strstr(buf, "s3cret"));
	}
	ml_url_redact(buf, sizeof(buf), NULL);
	assert_string_equal(buf, "");
	char tiny[12];
	ml_url_redact(tiny, sizeof(tiny), "https://a:b@host.example.org/");
	assert_string_equal(tiny, "https://***");
}

/* RFC 3986 §5.4.1 and §5.4.2, base "http://a/b/c/d;p?q". */
static void test_url_resolve_follows_rfc3986_examples(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	        {"g:h", "g:h"},
	        {"g", "http://a/b/c/g"},
	        {"./g", "http://a/b/c/g"},
	        {"g/", "http://a/b/c/g/"},
	        {"/g", "http://a/g"},
	        {"//g", "http://g"},
	        {"?y", "http://a/b/c/d;p?y"},
	        {"g?y", "http://a/b/c/g?y"},
	        {"#s", "http://a/b/c/d;p?q#s"},
	        {"g#s", "http://a/b/c/g#s"},
	        {"g?y#s", "http://a/b/c/g?y#s"},
	        {";x", "http://a/b/c/;x"},
	        {"g;x", "http://a/b/c/g;x"},
	        {"g;x?y#s", "http://a/b/c/g;x?y#s"},
	        {"", "http://a/b/c/d;p?q"},
	        {".", "http://a/b/c/"},
	        {"./", "http://a/b/c/"},
	        {"..", "http://a/b/"},
	        {"../", "http://a/b/"},
	        {"../g", "http://a/b/g"},
	        {"../..", "http://a/"},
	        {"../../", "http://a/"},
	        {"../../g", "http://a/g"},
	        {"../../../g", "http://a/g"},
	        {"../../../../g", "http://a/g"},
	        {"/./g", "http://a/g"},
	        {"/../g", "http://a/g"},
	        {"g.", "http://a/b/c/g."},
	        {".g", "http://a/b/c/.g"},
	        {"g..", "http://a/b/c/g.."},
	        {"..g", "http://a/b/c/..g"},
	        {"./../g", "http://a/b/g"},
	        {"./g/.", "http://a/b/c/g/"},
	        {"g/./h", "http://a/b/c/g/h"},
	        {"g/../h", "http://a/b/c/h"},
	        {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
	        {"g;x=1/../y", "http://a/b/c/y"},
	        {"g?y/./x", "http://a/b/c/g?y/./x"},
	        {"g?y/../x", "http://a/b/c/g?y/../x"},
	        {"g#s/./x", "http://a/b/c/g#s/./x"},
	        {"g#s/../x", "http://a/b/c/g#s/../x"},
	        {"http:g", "http:g"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_url_resolve(&out, "http://a/b/c/d;p?q", cases[i][0], &err), 0);
		if (strcmp(out, cases[i][1]) != 0)
			fail_msg("'%s' resolved to '%s', expected '%s'", cases[i][0], out,
			         cases[i][1]);
		free(out);
	}
	char *out = (char *)"untouched";
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_url_resolve(&out, "relative/base", "x", &err), ML_EPARSE);
	assert_string_equal(out, "untouched");
}

static void test_plain_http_refused_for_non_loopback_host(void **state)
{
	(void)state;
	char *trusted[] = {"mirror.corp.example", "packages.lan:8080", "[fd00::5]:3141"};
	assert_false(ml_http_insecure_allowed("http://index.example.org/simple/", NULL, 0));
	assert_false(ml_http_insecure_allowed("http://127.0.0.1.evil.example/simple/", NULL, 0));
	assert_false(ml_http_insecure_allowed("http://localhost.evil.example/", NULL, 0));
	assert_false(ml_http_insecure_allowed("http://10.0.0.1/", NULL, 0));
	assert_false(ml_http_insecure_allowed("http://[::2]/", NULL, 0));
	assert_false(ml_http_insecure_allowed(NULL, trusted, 3));
	assert_false(ml_http_insecure_allowed("not a url", trusted, 3));

	assert_true(ml_http_insecure_allowed("http://127.0.0.1:8080/simple/", NULL, 0));
	assert_true(ml_http_insecure_allowed("http://127.1.2.3/simple/", NULL, 0));
	assert_true(ml_http_insecure_allowed("http://[::1]:3141/simple/", NULL, 0));
	assert_true(ml_http_insecure_allowed("http://LOCALHOST/simple/", NULL, 0));
	assert_true(ml_http_insecure_allowed("http://user:pw@localhost:9/simple/", NULL, 0));
	assert_true(ml_http_insecure_allowed("file:///srv/simple/", NULL, 0));

	/* --trusted-host: "host" covers every port, "host:port" only that one */
	assert_true(ml_http_insecure_allowed("http://mirror.corp.example/simple/", trusted, 3));
	assert_true(ml_http_insecure_allowed("http://Mirror.Corp.Example:81/simple/", trusted, 3));
	assert_true(ml_http_insecure_allowed("http://packages.lan:8080/simple/", trusted, 3));
	assert_false(ml_http_insecure_allowed("http://packages.lan/simple/", trusted, 3));
	assert_false(ml_http_insecure_allowed("http://packages.lan:8081/simple/", trusted, 3));
	assert_true(ml_http_insecure_allowed("http://[fd00::5]:3141/simple/", trusted, 3));
	assert_false(ml_http_insecure_allowed("http://[fd00::5]/simple/", trusted, 3));
	assert_false(ml_http_insecure_allowed("http://corp.example/simple/", trusted, 3));
}

static void test_http_get_refuses_plain_http_before_connecting(void **state)
{
	(void)state;
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	ml_http_failure failure;
	req.url = "http://bob:hunter2@index.example.org/simple/ml-demo/";
	req.failure = &failure;
	ml_http_response r = {.status = 12345};
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_http_get(&r, &req, &err), ML_ENET);
	assert_int_equal(r.status, 12345);
	assert_non_null(strstr(err.msg, "refusing plain http"));
	assert_non_null(strstr(err.msg, "'http://***@index.example.org/simple/ml-demo/'"));
	assert_null(strstr(err.msg, "hunter2"));
	assert_non_null(strstr(err.hint, "--trusted-host index.example.org"));
	assert_false(failure.retryable);

	req.url = "ftp://index.example.org/simple/";
	assert_int_equal(ml_http_get(&r, &req, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "unsupported URL"));
}

static void test_http_get_reads_file_urls(void **state)
{
	(void)state;
	const char *dir = fresh_dir("fileurl");
	char path[PATH_MAX], url[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/page.html", dir);
	write_file(path, "<a href=\"x-1.0-py3-none-any.whl\">x</a>\n");
	snprintf(url, sizeof(url), "file://%s", path);

	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	ml_http_response r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(ml_buf_cstr(&r.body), "<a href=\"x-1.0-py3-none-any.whl\">x</a>\n");
	assert_string_equal(r.effective_url, url);
	ml_http_response_release(&r);
	ml_http_response_release(NULL);

	snprintf(url, sizeof(url), "file://%s/missing.html", dir);
	assert_int_equal(ml_http_get(&r, &req, &err), ML_ENOENT);

	req.max_bytes = 8;
	snprintf(url, sizeof(url), "file://%s", path);
	assert_int_equal(ml_http_get(&r, &req, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "larger than"));
}

static void test_http_failure_table(void **state)
{
	(void)state;
	ml_http_failure f;
	ml_err err = ML_ERR_INIT;
	const char *url = "https://u:pw@index.example.org/simple/x/";
	assert_int_equal(ml_http_fail(&err, &f, 0, 404, url, NULL), ML_ENOENT);
	assert_false(f.retryable);
	assert_null(strstr(err.msg, "pw@"));
	assert_int_equal(ml_http_fail(&err, &f, 0, 503, url, NULL), ML_ENET);
	assert_true(f.retryable);
	assert_int_equal(ml_http_fail(&err, &f, 0, 429, url, NULL), ML_ENET);
	assert_true(f.retryable);
	assert_int_equal(ml_http_fail(&err, &f, 0, 401, url, NULL), ML_ENET);
	assert_false(f.retryable);
	assert_non_null(strstr(err.hint, "netrc"));
	assert_int_equal(ml_http_fail(&err, &f, 60 /* CURLE_PEER_FAILED_VERIFICATION */, 0, url,
	                              "SSL certificate problem: certificate has expired"),
	                 ML_ENET);
	assert_true(f.tls_rejected);
	assert_false(f.retryable);
	assert_non_null(strstr(err.msg, "certificate"));
	assert_non_null(strstr(err.msg, "was rejected"));
	assert_int_equal(ml_http_fail(&err, &f, 7 /* CURLE_COULDNT_CONNECT */, 0, url, NULL),
	                 ML_ENET);
	assert_true(f.retryable);
	assert_false(f.tls_rejected);
	assert_int_equal(ml_http_fail(&err, &f, 56 /* CURLE_RECV_ERROR */, 0, url, NULL), ML_ENET);
	assert_true(f.retryable);
}

/* --- PEP 691 JSON and PEP 503 HTML pages ------------------------------------- */

/* --- the transport policy's helpers --------------------------------------- */

static void test_content_range_parse(void **state)
{
	(void)state;
	long long a, b, t;
	assert_true(mlf_content_range_parse("bytes 0-0/1234", &a, &b, &t));
	assert_true(a == 0 && b == 0 && t == 1234);
	assert_true(mlf_content_range_parse("bytes 100-199/*", &a, &b, &t));
	assert_true(a == 100 && b == 199 && t == -1);
	assert_true(mlf_content_range_parse("bytes */5000", &a, &b, &t)); /* a 416's */
	assert_true(a == -1 && b == -1 && t == 5000);
	assert_false(mlf_content_range_parse("bytes=0-0/1", &a, &b, &t));
	assert_false(mlf_content_range_parse("items 0-0/1", &a, &b, &t));
	assert_false(mlf_content_range_parse("bytes 0-/1", &a, &b, &t));
	assert_false(mlf_content_range_parse(NULL, &a, &b, &t));
}

static void test_noproxy_matches_as_libcurl_does(void **state)
{
	(void)state;
	const char *list = "example.org, .corp.net,10.0.0.0/8,::1,[fe80::1],192.168.1.7";
	assert_true(ml_http_noproxy_match(list, "example.org"));
	assert_true(ml_http_noproxy_match(list, "Files.EXAMPLE.org"));
	assert_true(ml_http_noproxy_match(list, "example.org."));
	assert_false(ml_http_noproxy_match(list, "badexample.org"));
	assert_false(ml_http_noproxy_match(list, "example.org.evil.net"));
	assert_true(ml_http_noproxy_match(list, "corp.net"));
	assert_true(ml_http_noproxy_match(list, "a.b.corp.net"));
	assert_true(ml_http_noproxy_match(list, "10.200.3.4"));
	assert_false(ml_http_noproxy_match(list, "11.0.0.1"));
	assert_true(ml_http_noproxy_match(list, "192.168.1.7"));
	assert_false(ml_http_noproxy_match(list, "192.168.1.70"));
	assert_true(ml_http_noproxy_match(list, "::1"));
	assert_true(ml_http_noproxy_match(list, "fe80::1"));
	assert_false(ml_http_noproxy_match(list, "fe80::2"));
	assert_true(ml_http_noproxy_match("*", "anything.example"));
	assert_false(ml_http_noproxy_match("", "example.org"));
	assert_false(ml_http_noproxy_match(NULL, "example.org"));
}

static void unset_proxies(void)
{
	static const char *const vars[] = {"http_proxy", "https_proxy", "HTTPS_PROXY",
	                                   "all_proxy",  "ALL_PROXY",   "no_proxy",
	                                   "NO_PROXY",   "HTTP_PROXY"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void test_proxy_for_follows_the_http_rules(void **state)
{
	(void)state;
	char buf[256];
	unset_proxies();
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "https://git.example.org/r.git"));
	setenv("https_proxy", "http://proxy.example:3128", 1);
#ifndef _WIN32
	/* libcurl ignores HTTP_PROXY (CGI's HTTP_ header); so do we. On Windows
	 * environment names ignore case, so there it is http_proxy itself. */
	setenv("HTTP_PROXY", "http://never.example:1", 1);
#endif
	setenv("no_proxy", "internal.example", 1);
	assert_string_equal(ml_http_proxy_for(buf, sizeof(buf), "https://git.example.org/r.git"),
	                    "http://proxy.example:3128");
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "https://src.internal.example/r.git"));
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "https://127.0.0.1:8443/r.git"));
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "http://git.example.org/r.git"));
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "file:///srv/r.git"));
	setenv("ALL_PROXY", "socks5h://all.example:1080", 1);
	assert_string_equal(ml_http_proxy_for(buf, sizeof(buf), "http://git.example.org/r.git"),
	                    "socks5h://all.example:1080");
	unsetenv("https_proxy");
	setenv("HTTPS_PROXY", "http://upper.example:8080", 1);
	assert_string_equal(ml_http_proxy_for(buf, sizeof(buf), "https://git.example.org/r.git"),
	                    "http://upper.example:8080");
	unsetenv("no_proxy"); /* first: on Windows it is the same variable */
	setenv("NO_PROXY", "*", 1);
	assert_null(ml_http_proxy_for(buf, sizeof(buf), "https://git.example.org/r.git"));
	unset_proxies();
}

static void test_netrc_lookup_reads_like_libcurl(void **state)
{
	(void)state;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/netrc", tmp_root);
	write_file(path, "# a comment line\n"
	                 "machine git.example.org login alice password s3cret\n"
	                 "macdef init\n  cd /pub\n  machine evil.example login x password y\n"
	                 "\n"
	                 "machine Other.Example\n  login bob\n  password \"two words\"\n"
	                 "machine git.example.org login carol password c4rol\n"
	                 "default login anon password guest\n");
	setenv("NETRC", path, 1);
	char login[128], pass[128];
	assert_true(ml_netrc_lookup("git.example.org", NULL, login, pass, sizeof(login)));
	assert_string_equal(login, "alice");
	assert_string_equal(pass, "s3cret");
	assert_true(ml_netrc_lookup("git.example.org", "carol", login, pass, sizeof(login)));
	assert_string_equal(pass, "c4rol");
	assert_true(ml_netrc_lookup("other.example", NULL, login, pass, sizeof(login)));
	assert_string_equal(login, "bob");
	assert_string_equal(pass, "two words");
	/* the macro body is not an entry; the default covers every other host */
	assert_true(ml_netrc_lookup("evil.example", NULL, login, pass, sizeof(login)));
	assert_string_equal(login, "anon");
	assert_string_equal(pass, "guest");
	write_file(path, "machine a.example login u password p\n");
	assert_false(ml_netrc_lookup("b.example", NULL, login, pass, sizeof(login)));
	assert_false(ml_netrc_lookup("a.example", "someone", login, pass, sizeof(login)));
	unlink(path);
	assert_false(ml_netrc_lookup("a.example", NULL, login, pass, sizeof(login)));
	unsetenv("NETRC");
}

static void test_json_page_lists_files_with_sha256_and_size(void **state)
{
	(void)state;
	ml_project *p = parse_fixture("ml-demo.json", true);
	assert_string_equal(p->name, "ml-demo");
	assert_int_equal(p->n_files, 6);
	assert_string_equal(p->files[0].filename, W_X86);

	const ml_index_file *f = find_file(p, W_X86);
	assert_string_equal(f->sha256,
	                    "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");
	assert_int_equal(f->size, 766642012);
	assert_string_equal(f->requires_python, ">=3.9");
	assert_false(f->yanked);
	assert_false(f->has_core_metadata);

	f = find_file(p, W_ARM); /* upper-case hex is lower-cased */
	assert_string_equal(f->sha256,
	                    "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d");
	assert_int_equal(f->size, 99531648);

	f = find_file(p, W_WIN);
	assert_true(f->has_core_metadata);
	assert_string_equal(f->core_metadata_sha256,
	                    "62c66a7a5dd70c3146618063c344e531e6d4b59e379808443ce962b3abd63c5a");

	f = find_file(p, W_CU); /* older "dist-info-metadata" key */
	assert_true(f->has_core_metadata);
	assert_null(f->core_metadata_sha256);

	f = find_file(p, W_MAC); /* no hash, no size */
	assert_null(f->sha256);
	assert_int_equal(f->size, -1);
	ml_project_free(p);
	ml_project_free(NULL);
}

static void test_relative_urls_resolve_against_page_url(void **state)
{
	(void)state;
	for (int json = 0; json < 2; json++) {
		ml_project *p = parse_fixture(json ? "ml-demo.json" : "ml-demo.html", json);
		/* "../../packages/...": relative to the page */
		assert_string_equal(find_file(p, W_X86)->url,
		                    "https://index.example.org/packages/ca/97/" W_X86);
		/* "/packages/...": absolute path on the page's host */
		assert_string_equal(find_file(p, W_ARM)->url,
		                    "https://index.example.org/packages/3e/23/" W_ARM);
		/* absolute URL on another host; the #sha256= fragment is dropped */
		assert_string_equal(find_file(p, W_WIN)->url,
		                    "https://files.example.org/mirror/" W_WIN);
		/* percent-encoding stays as the index wrote it */
		assert_string_equal(find_file(p, W_CU)->url,
		                    "https://index.example.org/packages/18/ac/"
		                    "ml_demo-2.6.0%2Bcu124-cp312-cp312-manylinux_2_28_x86_64.whl");
		ml_project_free(p);
	}
}

static void test_yanked_reason_is_kept(void **state)
{
	(void)state;
	ml_project *p = parse_fixture("ml-demo.json", true);
	const ml_index_file *f = find_file(p, W_MAC);
	assert_true(f->yanked);
	assert_string_equal(f->yanked_reason, "broken CUDA kernels on sm_120");
	f = find_file(p, SDIST); /* "yanked": true, no reason */
	assert_true(f->yanked);
	assert_null(f->yanked_reason);
	assert_false(find_file(p, W_X86)->yanked);
	ml_project_free(p);

	p = parse_fixture("ml-demo.html", false);
	f = find_file(p, W_MAC);
	assert_true(f->yanked);
	assert_string_equal(f->yanked_reason, "broken CUDA kernels on sm_120 & sm_100");
	f = find_file(p, SDIST); /* bare data-yanked */
	assert_true(f->yanked);
	assert_null(f->yanked_reason);
	assert_false(find_file(p, W_X86)->yanked);
	ml_project_free(p);
}

static void test_html_fallback_decodes_requires_python_entities(void **state)
{
	(void)state;
	ml_project *p = parse_fixture("ml-demo.html", false);
	assert_null(p->name);
	assert_int_equal(p->n_files, 6); /* the commented-out anchor is not a file */
	assert_string_equal(find_file(p, W_X86)->requires_python, ">=3.9");
	assert_string_equal(find_file(p, W_ARM)->requires_python, ">=3.9,<3.14");
	assert_string_equal(find_file(p, W_WIN)->requires_python, ">=3.9");
	assert_string_equal(find_file(p, W_CU)->requires_python, ">=3.9");
	assert_null(find_file(p, SDIST)->requires_python);
	/* the rest of what the page says */
	const ml_index_file *f = find_file(p, W_ARM);
	assert_string_equal(f->sha256,
	                    "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d");
	assert_int_equal(f->size, -1);
	assert_null(find_file(p, W_MAC)->sha256);
	f = find_file(p, W_WIN);
	assert_true(f->has_core_metadata);
	assert_string_equal(f->core_metadata_sha256,
	                    "62c66a7a5dd70c3146618063c344e531e6d4b59e379808443ce962b3abd63c5a");
	assert_true(find_file(p, W_CU)->has_core_metadata);
	/* the file name comes from the URL, percent-decoded */
	assert_string_equal(p->files[3].filename, W_CU);
	ml_project_free(p);
}

static void test_html_base_tag_changes_base_and_skips_directories(void **state)
{
	(void)state;
	ml_project *p = parse_fixture("base-tag.html", false);
	assert_int_equal(p->n_files, 1);
	assert_string_equal(p->files[0].filename, "ml_demo-2.6.0-py3-none-any.whl");
	assert_string_equal(p->files[0].url,
	                    "https://files.example.org/wheels/ml_demo-2.6.0-py3-none-any.whl");
	assert_null(p->files[0].sha256); /* only md5 given */
	ml_project_free(p);
}

/* Fuzz finding (fuzz_index): an href whose last segment decodes to a NUL
 * byte gave a file with an empty name; such a link is no file. */
static void test_html_link_whose_name_decodes_to_nul_is_no_file(void **state)
{
	(void)state;
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	const char *html = "<a href=%00000000000001516676695cl\n"
	                   "<a href=\"x-1.0-py3-none-any%00.whl\">x</a>\n"
	                   "<a href=\"y-1.0-py3-none-any.whl\">y</a>\n";
	assert_int_equal(ml_index_parse_html(&p, PAGE_URL, html, strlen(html), &err), 0);
	assert_int_equal(p->n_files, 1);
	assert_string_equal(p->files[0].filename, "y-1.0-py3-none-any.whl");
	ml_project_free(p);
}

static void test_pages_with_unknown_api_major_version_are_refused(void **state)
{
	(void)state;
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	const char *json = "{\"meta\": {\"api-version\": \"2.0\"}, \"name\": \"x\", \"files\": []}";
	assert_int_equal(ml_index_parse_json(&p, PAGE_URL, json, strlen(json), &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "2.0"));
	const char *html = "<html><head><meta name=\"pypi:repository-version\" content=\"2.0\">"
	                   "</head><body></body></html>";
	assert_int_equal(ml_index_parse_html(&p, PAGE_URL, html, strlen(html), &err), ML_EPARSE);
	assert_null(p);

	const char *ok = "{\"meta\": {\"api-version\": \"1.4\"}, \"name\": \"X_Y\", \"files\": []}";
	assert_int_equal(ml_index_parse_json(&p, PAGE_URL, ok, strlen(ok), &err), 0);
	assert_string_equal(p->name, "x-y");
	assert_int_equal(p->n_files, 0);
	ml_project_free(p);
}

static void test_malformed_json_pages_are_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
	        "",
	        "[]",
	        "{\"files\": ",
	        "{\"name\": \"x\"}",
	        "{\"files\": [{\"url\": \"x-1.0.tar.gz\"}]}",
	        "{\"files\": [{\"filename\": \"x-1.0.tar.gz\"}]}",
	        "{\"files\": [{\"filename\": \"x-1.0.tar.gz\", \"url\": \"x-1.0.tar.gz\", "
	        "\"hashes\": {\"sha256\": \"abc\"}}]}",
	        "{\"files\": [{\"filename\": \"x-1.0.tar.gz\", \"url\": \"x-1.0.tar.gz\", "
	        "\"core-metadata\": {\"sha256\": \"zz\"}}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ml_project *p = NULL;
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_index_parse_json(&p, PAGE_URL, bad[i], strlen(bad[i]), &err),
		                 ML_EPARSE);
		assert_null(p);
		assert_non_null(strstr(err.msg, "index.example.org"));
	}
	/* a malformed #sha256= in HTML too */
	const char *html = "<a href=\"x-1.0.tar.gz#sha256=12345\">x</a>";
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_parse_html(&p, PAGE_URL, html, strlen(html), &err), ML_EPARSE);
	/* while odd but harmless HTML is fine */
	html = "<a>no href</a><a href=''>empty</a><a href=x-1.0.tar.gz data-yanked=old>x</a "
	       "<p>unclosed";
	assert_int_equal(ml_index_parse_html(&p, PAGE_URL, html, strlen(html), &err), 0);
	assert_int_equal(p->n_files, 1);
	assert_string_equal(p->files[0].url, PAGE_URL "x-1.0.tar.gz");
	assert_string_equal(p->files[0].yanked_reason, "old");
	ml_project_free(p);
}

/* --- find-links and file:// indexes ------------------------------------------- */

static void test_find_links_directory_lists_matching_files_with_sha256(void **state)
{
	(void)state;
	const char *dir = fresh_dir("wheels dir");
	char path[PATH_MAX];
	static const char *const names[] = {
	        "ML_Demo-2.6.0-py3-none-any.whl",
	        "ml_demo-2.5.0-cp312-cp312-linux_x86_64.whl",
	        "ml-demo-2.4.0.tar.gz",
	        "ml_demo_extra-1.0-py3-none-any.whl",
	        "ml-demo-extra-1.0.tar.gz",
	        "other-1.0-py3-none-any.whl",
	        "ml_demo-notes.txt",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		write_file(path, names[i]);
	}
	snprintf(path, sizeof(path), "%s/ml_demo-0.1-py3-none-any.whl", dir);
	mkdirs(path); /* a directory is not a file */

	ml_index_source src = {dir, NULL, 0, NULL};
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_find_links_project(&p, &src, "ML.Demo", &err), 0);
	assert_string_equal(p->name, "ml-demo");
	assert_int_equal(p->n_files, 3);
	/* sorted by file name (byte order) */
	assert_string_equal(p->files[0].filename, "ML_Demo-2.6.0-py3-none-any.whl");
	assert_string_equal(p->files[1].filename, "ml-demo-2.4.0.tar.gz");
	assert_string_equal(p->files[2].filename, "ml_demo-2.5.0-cp312-cp312-linux_x86_64.whl");
	char hex[65];
	sha256_hex(hex, "ml-demo-2.4.0.tar.gz", strlen("ml-demo-2.4.0.tar.gz"));
	assert_string_equal(p->files[1].sha256, hex);
	assert_int_equal(p->files[1].size, (int64_t)strlen("ml-demo-2.4.0.tar.gz"));
	assert_non_null(strstr(p->files[1].url, "/wheels%20dir/ml-demo-2.4.0.tar.gz"));
	assert_true(ml_startswith(p->files[1].url, "file:///"));
	ml_project_free(p);

	/* the same through a file:// URL */
	ml_buf b = ML_BUF_INIT;
	ml_buf_puts(&b, "file://");
	for (const char *c = dir; *c; c++) {
		if (*c == ' ')
			ml_buf_puts(&b, "%20");
		else
			ml_buf_add(&b, c, 1);
	}
	src.url = ml_buf_cstr(&b);
	assert_int_equal(ml_find_links_project(&p, &src, "ml_demo_extra", &err), 0);
	assert_int_equal(p->n_files, 2);
	assert_string_equal(p->files[0].filename, "ml-demo-extra-1.0.tar.gz");
	ml_project_free(p);
	ml_buf_release(&b);

	/* a project with nothing there is not an error */
	src.url = dir;
	assert_int_equal(ml_find_links_project(&p, &src, "absent", &err), 0);
	assert_int_equal(p->n_files, 0);
	ml_project_free(p);

	snprintf(path, sizeof(path), "%s/does-not-exist", dir);
	src.url = path;
	p = NULL;
	assert_int_equal(ml_find_links_project(&p, &src, "ml-demo", &err), ML_ENOENT);
	assert_null(p);
	assert_non_null(strstr(err.msg, "does not exist"));
}

static void test_find_links_html_page_is_filtered_by_project(void **state)
{
	(void)state;
	const char *dir = fresh_dir("links-page");
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/links.html", dir);
	write_file(path,
	           "<html><body>\n"
	           "<a href=\"https://files.example.org/ml_demo-1.0-py3-none-any.whl\">a</a>\n"
	           "<a href=\"sub/other-1.0-py3-none-any.whl\">b</a>\n"
	           "<a href=\"sub/ml-demo-0.9.zip#sha256="
	           "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb\">c</a>\n"
	           "</body></html>\n");
	ml_index_source src = {path, NULL, 0, NULL};
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_find_links_project(&p, &src, "ml-demo", &err), 0);
	assert_int_equal(p->n_files, 2);
	assert_string_equal(p->files[0].url,
	                    "https://files.example.org/ml_demo-1.0-py3-none-any.whl");
	assert_string_equal(p->files[1].filename, "ml-demo-0.9.zip");
	assert_true(ml_startswith(p->files[1].url, "file:///"));
	assert_non_null(strstr(p->files[1].url, "/links-page/sub/ml-demo-0.9.zip"));
	assert_non_null(p->files[1].sha256);
	ml_project_free(p);
}

static void test_file_index_directory_serves_project_pages(void **state)
{
	(void)state;
	const char *dir = fresh_dir("file-index/simple/ml-demo");
	char path[PATH_MAX], url[PATH_MAX];
	snprintf(path, sizeof(path), "%s/index.html", dir);
	size_t len;
	char *text = slurp(FIXTURES "ml-demo.html", &len);
	write_file(path, text);
	free(text);
	snprintf(url, sizeof(url), "file://%s/file-index/simple", tmp_root);
	ml_index_source src = {url, NULL, 0, NULL};
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_project(&p, &src, "ML_Demo", &err), 0);
	assert_string_equal(p->name, "ml-demo");
	assert_int_equal(p->n_files, 6);
	char expect[PATH_MAX + 64];
	snprintf(expect, sizeof(expect), "file://%s/file-index/packages/ca/97/" W_X86, tmp_root);
	assert_string_equal(find_file(p, W_X86)->url, expect);
	ml_project_free(p);

	p = NULL;
	assert_int_equal(ml_index_project(&p, &src, "no-such-project", &err), ML_ENOENT);
	assert_null(p);
	assert_non_null(strstr(err.msg, "project 'no-such-project' not found"));
}

/* --- where index URLs come from ------------------------------------------------ */

/* The config tests write pip's files where pip on Linux reads them; pip on
 * Windows reads pip.ini elsewhere (index_sources.c), so they skip there. */
#define NO_PIP_CONF "pip.conf at its Linux places (Windows reads pip.ini)"

static int config_case; /* a fresh HOME per test */

static void clean_env(void)
{
	static const char *const vars[] = {
	        "PIP_INDEX_URL",    "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
	        "PIP_TRUSTED_HOST", "PIP_NO_INDEX",        "PIP_CERT",
	        "PIP_CONFIG_FILE",  "MLSETUP_INDEX_URL",   "MLSETUP_EXTRA_INDEX_URL",
	        "VIRTUAL_ENV",      "XDG_CONFIG_HOME",
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	char home[PATH_MAX];
	snprintf(home, sizeof(home), "%s/home%d", tmp_root, ++config_case);
	mkdirs(home);
	setenv("HOME", home, 1);
	char xdg[PATH_MAX];
	snprintf(xdg, sizeof(xdg), "%s/xdg%d", tmp_root, config_case);
	mkdirs(xdg);
	setenv("XDG_CONFIG_DIRS", xdg, 1);
}

static void home_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", getenv("HOME"), rel);
	write_file(path, text);
}

static ml_index_config *resolve(const ml_index_flags *flags, const char *manifest_url,
                                char *const *mx, size_t nmx, const char *python)
{
	ml_index_config *c = NULL;
	ml_err err = ML_ERR_INIT;
	int rc = ml_index_config_resolve(&c, flags, manifest_url, mx, nmx, python, &err);
	if (rc)
		fail_msg("ml_index_config_resolve: %s (%s)", err.msg, err.hint);
	return c;
}

static void test_config_priority_flags_over_env_over_pip_conf(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PIP_CONF);
	clean_env();
	home_file(".config/pip/pip.conf", "[global]\n"
	                                  "index-url = https://conf.example.org/simple/\n"
	                                  "extra-index-url =\n"
	                                  "    https://conf-extra1.example.org/simple/\n"
	                                  "    https://conf-extra2.example.org/simple/\n"
	                                  "trusted-host = conf.example.org\n"
	                                  "cert = /conf/ca.pem\n");
	char *manifest_extra[] = {"https://manifest-extra.example.org/simple/"};

	/* pip.conf alone */
	ml_index_config *c = resolve(NULL, "https://manifest.example.org/simple/", manifest_extra,
	                             1, "/nonexistent/python");
	char origin[PATH_MAX];
	snprintf(origin, sizeof(origin), "pip config %s/.config/pip/pip.conf", getenv("HOME"));
	assert_string_equal(c->index_url, "https://conf.example.org/simple/");
	assert_string_equal(c->origin, origin);
	assert_int_equal(c->n_extra, 3);
	assert_string_equal(c->extra_index_urls[0], "https://conf-extra1.example.org/simple/");
	assert_string_equal(c->extra_index_urls[1], "https://conf-extra2.example.org/simple/");
	assert_string_equal(c->extra_origins[1], origin);
	assert_string_equal(c->extra_index_urls[2], "https://manifest-extra.example.org/simple/");
	assert_string_equal(c->extra_origins[2], "manifest");
	assert_int_equal(c->n_trusted, 1);
	assert_string_equal(c->trusted_hosts[0], "conf.example.org");
	assert_string_equal(c->cert, "/conf/ca.pem");
	assert_string_equal(c->cert_origin, origin);
	assert_false(c->no_index);
	ml_index_config_free(c);

	/* PIP_* over pip.conf */
	setenv("PIP_INDEX_URL", "https://pipenv.example.org/simple/", 1);
	setenv("PIP_EXTRA_INDEX_URL",
	       "https://pipenv-extra1.example.org/simple/  "
	       "https://pipenv-extra2.example.org/simple/",
	       1);
	setenv("PIP_CERT", "/env/ca.pem", 1);
	c = resolve(NULL, NULL, NULL, 0, NULL);
	assert_string_equal(c->index_url, "https://pipenv.example.org/simple/");
	assert_string_equal(c->origin, "PIP_INDEX_URL");
	assert_int_equal(c->n_extra, 2);
	assert_string_equal(c->extra_index_urls[1], "https://pipenv-extra2.example.org/simple/");
	assert_string_equal(c->extra_origins[1], "PIP_EXTRA_INDEX_URL");
	assert_string_equal(c->cert, "/env/ca.pem");
	assert_string_equal(c->cert_origin, "PIP_CERT");
	ml_index_config_free(c);

	/* MLSETUP_* over PIP_* */
	setenv("MLSETUP_INDEX_URL", "http://127.0.0.1:3141/simple/", 1);
	setenv("MLSETUP_EXTRA_INDEX_URL", "http://127.0.0.1:3142/simple/", 1);
	c = resolve(NULL, NULL, NULL, 0, NULL);
	assert_string_equal(c->index_url, "http://127.0.0.1:3141/simple/");
	assert_string_equal(c->origin, "MLSETUP_INDEX_URL");
	assert_int_equal(c->n_extra, 1);
	assert_string_equal(c->extra_index_urls[0], "http://127.0.0.1:3142/simple/");
	assert_string_equal(c->extra_origins[0], "MLSETUP_EXTRA_INDEX_URL");
	ml_index_config_free(c);

	/* flags over everything; command-line lists come first */
	char *extra[] = {"https://flag-extra.example.org/simple/"};
	char *trusted[] = {"flag.example.org:8080"};
	char *links[] = {"/srv/wheels"};
	ml_index_flags flags = ML_INDEX_FLAGS_INIT;
	flags.index_url = "https://flag.example.org/simple/";
	flags.extra_index_urls = extra;
	flags.n_extra = 1;
	flags.trusted_hosts = trusted;
	flags.n_trusted = 1;
	flags.find_links = links;
	flags.n_find_links = 1;
	flags.cert = "/flag/ca.pem";
	c = resolve(&flags, "https://manifest.example.org/simple/", manifest_extra, 1, NULL);
	assert_string_equal(c->index_url, "https://flag.example.org/simple/");
	assert_string_equal(c->origin, "--index-url");
	assert_int_equal(c->n_extra, 3);
	assert_string_equal(c->extra_index_urls[0], "https://flag-extra.example.org/simple/");
	assert_string_equal(c->extra_origins[0], "--extra-index-url");
	assert_string_equal(c->extra_index_urls[1], "http://127.0.0.1:3142/simple/");
	assert_string_equal(c->extra_index_urls[2], "https://manifest-extra.example.org/simple/");
	assert_int_equal(c->n_trusted, 2);
	assert_string_equal(c->trusted_hosts[0], "flag.example.org:8080");
	assert_string_equal(c->trusted_hosts[1], "conf.example.org");
	assert_int_equal(c->n_find_links, 1);
	assert_string_equal(c->find_links[0], "/srv/wheels");
	assert_string_equal(c->find_links_origins[0], "--find-links");
	assert_string_equal(c->cert, "/flag/ca.pem");
	assert_string_equal(c->cert_origin, "--cert");
	ml_index_config_free(c);
	ml_index_config_free(NULL);
	clean_env();
}

static void test_config_files_in_pip_order(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PIP_CONF);
	clean_env();
	/* legacy ~/.pip/pip.conf is overridden by the XDG user file ... */
	home_file(".pip/pip.conf", "[global]\nindex-url = https://legacy.example.org/simple/\n"
	                           "find-links = /legacy/wheels\n");
	char xdg_home[PATH_MAX];
	snprintf(xdg_home, sizeof(xdg_home), "%s/xdg-home", getenv("HOME"));
	setenv("XDG_CONFIG_HOME", xdg_home, 1);
	home_file("xdg-home/pip/pip.conf",
	          "# user file\n"
	          "[global]\n"
	          "; pip's key spelling may vary\n"
	          "INDEX_URL: https://user.example.org/simple/\n"
	          "[install]\n"
	          "extra-index-url = https://install.example.org/simple/\n"
	          "[download]\n"
	          "extra-index-url = https://download.example.org/simple/\n");
	ml_index_config *c = resolve(NULL, NULL, NULL, 0, NULL);
	assert_string_equal(c->index_url, "https://user.example.org/simple/");
	assert_int_equal(c->n_extra, 1);
	assert_string_equal(c->extra_index_urls[0], "https://install.example.org/simple/");
	assert_int_equal(c->n_find_links, 1);
	assert_string_equal(c->find_links[0], "/legacy/wheels");
	ml_index_config_free(c);

	ml_index_flags flags = ML_INDEX_FLAGS_INIT;
	flags.command = "download";
	c = resolve(&flags, NULL, NULL, 0, NULL);
	assert_string_equal(c->extra_index_urls[0], "https://download.example.org/simple/");
	ml_index_config_free(c);

	/* ... which an active virtualenv's pip.conf overrides, and
	 * [install] in any file beats [global] in every file */
	char venv[PATH_MAX];
	snprintf(venv, sizeof(venv), "%s/venv", getenv("HOME"));
	setenv("VIRTUAL_ENV", venv, 1);
	home_file("venv/pip.conf", "[global]\nindex-url = https://venv.example.org/simple/\n"
	                           "extra-index-url = https://venv-global.example.org/simple/\n");
	c = resolve(NULL, NULL, NULL, 0, NULL);
	assert_string_equal(c->index_url, "https://venv.example.org/simple/");
	assert_non_null(strstr(c->origin, "/venv/pip.conf"));
	assert_string_equal(c->extra_index_urls[0], "https://install.example.org/simple/");
	ml_index_config_free(c);

	/* PIP_CONFIG_FILE comes last, and when it exists the user files are
	 * not read at all */
	char envfile[PATH_MAX];
	snprintf(envfile, sizeof(envfile), "%s/env.conf", getenv("HOME"));
	write_file(envfile, "[global]\nno-index = yes\n");
	setenv("PIP_CONFIG_FILE", envfile, 1);
	c = resolve(NULL, NULL, NULL, 0, NULL);
	assert_true(c->no_index);
	assert_null(c->index_url);
	assert_int_equal(c->n_extra, 0);
	assert_int_equal(c->n_find_links, 0); /* the legacy user file was skipped */
	char origin[PATH_MAX + 16];
	snprintf(origin, sizeof(origin), "pip config %s", envfile);
	assert_string_equal(c->origin, origin);
	ml_index_config_free(c);
	clean_env();
}

static void test_pip_config_file_devnull_disables_config(void **state)
{
	(void)state;
	clean_env();
	home_file(".config/pip/pip.conf",
	          "[global]\nindex-url = https://user.example.org/simple/\n");
	setenv("PIP_CONFIG_FILE", "/dev/null", 1);
	ml_index_config *c = resolve(NULL, "https://manifest.example.org/simple/", NULL, 0, NULL);
	assert_string_equal(c->index_url, "https://manifest.example.org/simple/");
	assert_null(c->cert); /* not even /etc/pip.conf was read */
	ml_index_config_free(c);

	/* environment variables still count */
	setenv("PIP_INDEX_URL", "https://env.example.org/simple/", 1);
	c = resolve(NULL, "https://manifest.example.org/simple/", NULL, 0, NULL);
	assert_string_equal(c->index_url, "https://env.example.org/simple/");
	ml_index_config_free(c);
	clean_env();
}

static void test_manifest_index_url_used_when_nothing_else(void **state)
{
	(void)state;
	clean_env();
	setenv("PIP_CONFIG_FILE", "/dev/null", 1);
	char *mx[] = {"https://manifest-extra.example.org/simple/",
	              "https://manifest.example.org/simple/"};
	ml_index_config *c =
	        resolve(NULL, "https://manifest.example.org/simple/", mx, 2, "/nonexistent/python");
	assert_string_equal(c->index_url, "https://manifest.example.org/simple/");
	assert_string_equal(c->origin, "manifest");
	/* the main index is not listed again as an extra one */
	assert_int_equal(c->n_extra, 1);
	assert_string_equal(c->extra_index_urls[0], "https://manifest-extra.example.org/simple/");
	assert_string_equal(c->extra_origins[0], "manifest");
	ml_index_config_free(c);
	clean_env();
}

static void test_pip_default_asked_when_nothing_configured(void **state)
{
	(void)state;
	ML_LINUX_ONLY("the fake python is a #!/bin/sh script, which Windows cannot run");
	clean_env();
	setenv("PIP_CONFIG_FILE", "/dev/null", 1);
	char py[PATH_MAX];
	snprintf(py, sizeof(py), "%s/fake-python", getenv("HOME"));
	write_file(py, "#!/bin/sh\n"
	               "[ \"$1\" = -c ] || exit 3\n"
	               "case \"$2\" in *PyPI.simple_url*) ;; *) exit 4 ;; esac\n"
	               "echo '  http://127.0.0.1:9/pip-default/simple/  '\n");
	chmod(py, 0755);
	ml_index_config *c = resolve(NULL, NULL, NULL, 0, py);
	assert_string_equal(c->index_url, "http://127.0.0.1:9/pip-default/simple/");
	assert_string_equal(c->origin, "pip default");
	ml_index_config_free(c);

	/* no pip to ask: a clear error */
	ml_err err = ML_ERR_INIT;
	c = NULL;
	assert_int_equal(
	        ml_index_config_resolve(&c, NULL, NULL, NULL, 0, "/nonexistent/python", &err),
	        ML_ENOENT);
	assert_null(c);
	assert_non_null(strstr(err.msg, "no package index configured"));
	assert_non_null(strstr(err.hint, "--index-url"));

	/* --no-index: pip is not asked */
	ml_index_flags flags = ML_INDEX_FLAGS_INIT;
	flags.no_index = true;
	c = resolve(&flags, "https://manifest.example.org/simple/", NULL, 0, "/nonexistent/python");
	assert_true(c->no_index);
	assert_null(c->index_url);
	assert_string_equal(c->origin, "--no-index");
	ml_index_config_free(c);
	clean_env();
}

static void test_config_errors_name_their_origin(void **state)
{
	(void)state;
	ML_LINUX_ONLY(NO_PIP_CONF);
	clean_env();
	ml_index_config *c = NULL;
	ml_err err = ML_ERR_INIT;
	home_file(".config/pip/pip.conf", "[global]\nindex-url = https://ok.example.org/simple/\n"
	                                  "this line has no delimiter\n");
	assert_int_equal(ml_index_config_resolve(&c, NULL, NULL, NULL, 0, NULL, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "line 3"));
	assert_non_null(strstr(err.msg, ".config/pip/pip.conf"));

	home_file(".config/pip/pip.conf", "index-url = https://ok.example.org/simple/\n");
	assert_int_equal(ml_index_config_resolve(&c, NULL, NULL, NULL, 0, NULL, &err), ML_EPARSE);
	assert_non_null(strstr(err.msg, "line 1"));

	home_file(".config/pip/pip.conf", "[global]\nno-index = perhaps\n");
	assert_int_equal(ml_index_config_resolve(&c, NULL, NULL, NULL, 0, NULL, &err), ML_EUSAGE);
	assert_non_null(strstr(err.msg, "perhaps"));
	assert_non_null(strstr(err.msg, "pip config"));

	home_file(".config/pip/pip.conf", "[global]\n");
	setenv("PIP_INDEX_URL", "index.example.org/simple", 1);
	assert_int_equal(ml_index_config_resolve(&c, NULL, NULL, NULL, 0, NULL, &err), ML_EUSAGE);
	assert_non_null(strstr(err.msg, "PIP_INDEX_URL"));
	assert_null(c);
	clean_env();
}

/* --- the loopback mirror -------------------------------------------------------- */

typedef struct mirror {
	pid_t pid;
	int port;
	char root[PATH_MAX];
} mirror;

static mirror http_mirror, https_mirror;
static bool have_python, have_openssl;
static char cert_pem[PATH_MAX];

#define WHEEL       "demo_pkg-1.0-py3-none-any.whl"
#define WHEEL_BYTES "PK\003\004 not really a zip, but bytes with a known sha256\n"

#ifdef _WIN32
/* The mirror is a python3 server run with fork() and exec: not on Windows
 * (need_mirror() skips those tests there). */
static int mirror_start(mirror *m, const char *root, bool https)
{
	(void)m;
	(void)root;
	(void)https;
	return -1;
}

static void mirror_stop(mirror *m)
{
	(void)m;
}
#else
static int mirror_start(mirror *m, const char *root, bool https)
{
	char port_file[PATH_MAX + 16], key[PATH_MAX];
	snprintf(m->root, sizeof(m->root), "%s", root);
	snprintf(port_file, sizeof(port_file), "%s/port", root);
	snprintf(key, sizeof(key), "%s/key.pem", tmp_root);
	unlink(port_file);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		if (!getenv("MLSETUP_TEST_VERBOSE"))
			dup2(null, 2);
		if (https)
			execlp("python3", "python3", "tests/mirror/server.py", "--root", root,
			       "--port-file", port_file, "--https", "--cert", cert_pem, "--key",
			       key, (char *)NULL);
		else
			execlp("python3", "python3", "tests/mirror/server.py", "--root", root,
			       "--port-file", port_file, (char *)NULL);
		_exit(127);
	}
	m->pid = pid;
	for (int i = 0; i < 400; i++) { /* up to 20 s */
		FILE *f = fopen(port_file, "r");
		if (f) {
			int ok = fscanf(f, "%d", &m->port);
			fclose(f);
			if (ok == 1 && m->port > 0)
				return 0;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			m->pid = 0;
			return -1;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void mirror_stop(mirror *m)
{
	if (m->pid <= 0)
		return;
	kill(m->pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		int st;
		if (waitpid(m->pid, &st, WNOHANG) == m->pid) {
			m->pid = 0;
			return;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(m->pid, SIGKILL);
	waitpid(m->pid, NULL, 0);
	m->pid = 0;
}
#endif

static void mirror_faults(const mirror *m, const char *json)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/faults.json", m->root);
	if (json)
		write_file(path, json);
	else
		unlink(path);
}

static void mirror_url(char *dst, size_t sz, const mirror *m, const char *path)
{
	snprintf(dst, sz, "%s://127.0.0.1:%d%s", m == &https_mirror ? "https" : "http", m->port,
	         path);
}

static void need_mirror(const mirror *m)
{
	ML_LINUX_ONLY("the loopback mirror is a python3 server started with fork()");
	if (!have_python) {
		printf("# no python3 to run the loopback mirror\n");
		skip();
	}
	if (m == &https_mirror && !have_openssl) {
		printf("# openssl could not make the test certificate\n");
		skip();
	}
	if (m->pid <= 0)
		fail_msg("the loopback mirror did not start (run with MLSETUP_TEST_VERBOSE=1)");
}

static void fill_root(const char *root)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/files/" WHEEL, root);
	write_file(path, WHEEL_BYTES);
	snprintf(path, sizeof(path), "%s/files/" WHEEL ".requires-python", root);
	write_file(path, ">=3.9\n");
	snprintf(path, sizeof(path), "%s/files/demo-pkg-0.9.tar.gz", root);
	write_file(path, "old sdist\n");
	snprintf(path, sizeof(path), "%s/files/demo-pkg-0.9.tar.gz.yanked", root);
	write_file(path, "bad release\n");
}

static void test_mirror_json_page_sha256_matches_file(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	char index[256];
	mirror_url(index, sizeof(index), &http_mirror, "/simple");
	ml_index_source src = {index, NULL, 0, NULL};
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	/* "Demo.Pkg" -> /simple/demo-pkg/ */
	assert_int_equal(ml_index_project(&p, &src, "Demo.Pkg", &err), 0);
	assert_string_equal(p->name, "demo-pkg");
	assert_int_equal(p->n_files, 2);
	const ml_index_file *f = find_file(p, WHEEL);
	char hex[65];
	sha256_hex(hex, WHEEL_BYTES, strlen(WHEEL_BYTES));
	assert_string_equal(f->sha256, hex);
	assert_int_equal(f->size, (int64_t)strlen(WHEEL_BYTES));
	assert_string_equal(f->requires_python, ">=3.9");
	char expect[256];
	mirror_url(expect, sizeof(expect), &http_mirror, "/files/" WHEEL);
	assert_string_equal(f->url, expect);
	f = find_file(p, "demo-pkg-0.9.tar.gz");
	assert_true(f->yanked);
	assert_string_equal(f->yanked_reason, "bad release");

	/* the file itself: same bytes, same hash */
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = find_file(p, WHEEL)->url;
	ml_http_response r;
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, strlen(WHEEL_BYTES));
	sha256_hex(hex, r.body.data, r.body.len);
	assert_string_equal(hex, find_file(p, WHEEL)->sha256);
	char etag[80];
	snprintf(etag, sizeof(etag), "\"%s\"", hex);
	assert_string_equal(r.etag, etag);
	assert_non_null(r.last_modified);

	/* and a conditional GET comes back 304 */
	ml_http_response r2;
	req.if_none_match = r.etag;
	assert_int_equal(ml_http_get(&r2, &req, &err), 0);
	assert_int_equal(r2.status, 304);
	assert_int_equal(r2.body.len, 0);
	ml_http_response_release(&r2);
	ml_http_response_release(&r);
	ml_project_free(p);
}

static void test_mirror_html_page_via_http_get(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	char url[256];
	mirror_url(url, sizeof(url), &http_mirror, "/simple/Demo_Pkg"); /* redirected */
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	req.accept = "text/html";
	ml_http_response r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	assert_true(ml_startswith(r.content_type, "text/html"));
	char expect[256];
	mirror_url(expect, sizeof(expect), &http_mirror, "/simple/demo-pkg/");
	assert_string_equal(r.effective_url, expect);

	ml_project *p = NULL;
	assert_int_equal(ml_index_parse_html(&p, r.effective_url, r.body.data, r.body.len, &err),
	                 0);
	const ml_index_file *f = find_file(p, WHEEL);
	char hex[65];
	sha256_hex(hex, WHEEL_BYTES, strlen(WHEEL_BYTES));
	assert_string_equal(f->sha256, hex);
	assert_string_equal(f->requires_python, ">=3.9");
	mirror_url(expect, sizeof(expect), &http_mirror, "/files/" WHEEL);
	assert_string_equal(f->url, expect);
	assert_true(find_file(p, "demo-pkg-0.9.tar.gz")->yanked);
	ml_project_free(p);
	ml_http_response_release(&r);
}

static void test_mirror_missing_project_and_server_errors(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	char index[256];
	mirror_url(index, sizeof(index), &http_mirror, "/simple/");
	ml_index_source src = {index, NULL, 0, NULL};
	ml_project *p = NULL;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_index_project(&p, &src, "nothing-here", &err), ML_ENOENT);
	assert_null(p);

	/* 500 twice, then fine: the caller sees retryable failures */
	mirror_faults(&http_mirror, "{\"" WHEEL "\": \"status:500x2\"}");
	char url[256];
	mirror_url(url, sizeof(url), &http_mirror, "/files/" WHEEL);
	ml_http_failure failure;
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	req.failure = &failure;
	ml_http_response r;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ml_http_get(&r, &req, &err), ML_ENET);
		assert_int_equal(failure.status, 500);
		assert_true(failure.retryable);
		assert_non_null(strstr(err.msg, "HTTP 500"));
	}
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	ml_http_response_release(&r);

	/* a 503 on the project page */
	mirror_faults(&http_mirror, "{\"/simple/demo-pkg/\": \"status:503\"}");
	assert_int_equal(ml_index_project(&p, &src, "demo-pkg", &err), ML_ENET);
	assert_non_null(strstr(err.msg, "503"));

	/* a reset in the middle of the body */
	mirror_faults(&http_mirror, "{\"" WHEEL "\": \"reset_at:10\"}");
	assert_int_equal(ml_http_get(&r, &req, &err), ML_ENET);
	assert_true(failure.retryable);
	mirror_faults(&http_mirror, NULL);

	/* the stats saw every request to the file */
	mirror_url(url, sizeof(url), &http_mirror, "/_stats");
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	assert_non_null(strstr(ml_buf_cstr(&r.body), "\"/files/" WHEEL "\": "));
	ml_http_response_release(&r);
}

static void test_mirror_self_signed_certificate_is_rejected(void **state)
{
	(void)state;
	need_mirror(&https_mirror);
	char url[256];
	mirror_url(url, sizeof(url), &https_mirror, "/simple/demo-pkg/");
	ml_http_failure failure;
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	req.failure = &failure;
	ml_http_response r;
	ml_err err = ML_ERR_INIT;
	unsetenv("SSL_CERT_DIR");
	unsetenv("SSL_CERT_FILE");
	assert_int_equal(ml_http_get(&r, &req, &err), ML_ENET);
	assert_true(failure.tls_rejected);
	assert_false(failure.retryable);
	assert_non_null(strstr(err.msg, "certificate"));
	assert_non_null(strstr(err.msg, "rejected"));
	assert_non_null(strstr(err.hint, "--cert"));

	/* trusted through --cert, it works */
	req.http.cert = cert_pem;
	req.accept = ML_HTTP_ACCEPT_INDEX;
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	assert_true(ml_startswith(r.content_type, "application/vnd.pypi.simple.v1+json"));
	ml_http_response_release(&r);

	/* and so does SSL_CERT_FILE */
	setenv("SSL_CERT_FILE", cert_pem, 1);
	req.http.cert = NULL;
	assert_int_equal(ml_http_get(&r, &req, &err), 0);
	ml_http_response_release(&r);
	unsetenv("SSL_CERT_FILE");
}

static void test_mirror_https_redirect_to_http_is_refused(void **state)
{
	(void)state;
	need_mirror(&https_mirror);
	need_mirror(&http_mirror);
	char target[256], json[512], url[256];
	mirror_url(target, sizeof(target), &http_mirror, "/files/" WHEEL);
	snprintf(json, sizeof(json), "{\"" WHEEL "\": \"redirect_http:%s\"}", target);
	mirror_faults(&https_mirror, json);
	mirror_url(url, sizeof(url), &https_mirror, "/files/" WHEEL);
	ml_http_request req = ML_HTTP_REQUEST_INIT;
	req.url = url;
	req.http.cert = cert_pem;
	ml_http_response r;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_http_get(&r, &req, &err), ML_ENET);
	assert_non_null(strstr(err.msg, "refusing redirect"));
	assert_non_null(strstr(err.msg, url));
	assert_non_null(strstr(err.msg, target));
	mirror_faults(&https_mirror, NULL);
}

/* --- setup ------------------------------------------------------------------------ */

/* ml_http_sizes on one URL of the mirror with faults (NULL: none). */
static int size_of(int64_t *size, const char *path, const char *faults, ml_err *err)
{
	mirror_faults(&http_mirror, faults);
	char url[256];
	mirror_url(url, sizeof(url), &http_mirror, path);
	char *urls[1] = {url};
	ml_fetch_opts fo = ML_FETCH_OPTS_INIT;
	fo.http.connect_timeout_s = 5;
	fo.http.low_speed_time_s = 5;
	int rc = ml_http_sizes(size, urls, 1, &fo, err);
	mirror_faults(&http_mirror, NULL);
	return rc;
}

static void test_sizes_head_then_ranged_get(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	const int64_t n = (int64_t)strlen(WHEEL_BYTES);
	int64_t size = 0;
	ml_err err = ML_ERR_INIT;
	/* HEAD: Content-Length */
	assert_int_equal(size_of(&size, "/files/" WHEEL, NULL, &err), 0);
	assert_int_equal(size, n);
	/* a server that serves GET only: one byte, Content-Range's length */
	assert_int_equal(size_of(&size, "/files/" WHEEL, "{\"*\": \"head_status:501\"}", &err), 0);
	assert_int_equal(size, n);
	assert_int_equal(size_of(&size, "/files/" WHEEL, "{\"*\": \"head_status:405\"}", &err), 0);
	assert_int_equal(size, n);
	/* the Range ignored: the 200's Content-Length, its body not read */
	assert_int_equal(size_of(&size, "/files/" WHEEL,
	                         "{\"*\": [\"head_status:501\", \"ignore_range\"]}", &err),
	                 0);
	assert_int_equal(size, n);
	/* HEAD without a length, then the ranged GET */
	assert_int_equal(size_of(&size, "/files/" WHEEL, "{\"*\": \"no_length\"}", &err), 0);
	assert_int_equal(size, n);
	/* nothing tells: unknown, and no error (the download learns it) */
	size = 0;
	assert_int_equal(size_of(&size, "/files/" WHEEL,
	                         "{\"*\": [\"head_status:405\", \"range_status:501\"]}", &err),
	                 0);
	assert_int_equal(size, -1);
	assert_int_equal(size_of(&size, "/files/" WHEEL,
	                         "{\"*\": [\"head_status:501\", \"ignore_range\", \"no_length\"]}",
	                         &err),
	                 0);
	assert_int_equal(size, -1);
	/* a redirect is followed hop by hop */
	assert_int_equal(size_of(&size, "/files/" WHEEL,
	                         "{\"/files/" WHEEL "\": \"redirect:/files/" WHEEL "x1\"}", &err),
	                 0);
	assert_int_equal(size, n);
	/* failures of the HEAD request stay failures */
	assert_int_equal(size_of(&size, "/files/nothing.whl", NULL, &err), ML_ENOENT);
	assert_int_equal(size_of(&size, "/files/" WHEEL, "{\"*\": \"head_status:403\"}", &err),
	                 ML_ENET);
	assert_non_null(strstr(err.msg, "HTTP 403"));
}

static void test_sizes_many_at_once_and_policy(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	char a[256], b[256], file[PATH_MAX + 16], path[PATH_MAX];
	mirror_url(a, sizeof(a), &http_mirror, "/files/" WHEEL);
	mirror_url(b, sizeof(b), &http_mirror, "/files/demo-pkg-0.9.tar.gz");
	snprintf(path, sizeof(path), "%s/local.bin", tmp_root);
	write_file(path, "12345");
	snprintf(file, sizeof(file), "file://%s", path);
	char *urls[] = {a, b, file, a};
	int64_t sizes[4];
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_http_sizes(sizes, urls, 4, NULL, &err), 0);
	assert_int_equal(sizes[0], (int64_t)strlen(WHEEL_BYTES));
	assert_int_equal(sizes[1], (int64_t)strlen("old sdist\n"));
	assert_int_equal(sizes[2], 5);
	assert_int_equal(sizes[3], sizes[0]);
	/* plain http to a host that is neither loopback nor trusted: refused
	 * before any connection, as for every request */
	char *refused[] = {a, "http://files.example.invalid/x.whl"};
	assert_int_equal(ml_http_sizes(sizes, refused, 2, NULL, &err), ML_ENET);
	assert_non_null(strstr(err.msg, "refusing plain http"));
	assert_int_equal(ml_http_sizes(sizes, NULL, 0, NULL, &err), 0);
}

/* ml_fetch_all of the mirror's wheel with its size unknown (-1). */
static int fetch_unsized(ml_download *d, const char *faults, int64_t max_size, ml_err *err)
{
	char dir[PATH_MAX + 32], url[256];
	static int round;
	snprintf(dir, sizeof(dir), "%s/unsized-cache-%d", tmp_root, ++round);
	ml_cache *c = NULL;
	assert_int_equal(ml_cache_open(&c, dir, ML_CACHE_SHARED, err), 0);
	char hex[65];
	sha256_hex(hex, WHEEL_BYTES, strlen(WHEEL_BYTES));
	memset(d, 0, sizeof(*d));
	assert_int_equal(ml_download_init(d, WHEEL, hex, -1, err), 0);
	d->max_size = max_size;
	mirror_url(url, sizeof(url), &http_mirror, "/files/" WHEEL);
	assert_int_equal(ml_download_add_url(d, url, err), 0);
	mirror_faults(&http_mirror, faults);
	ml_fetch_opts fo = ML_FETCH_OPTS_INIT;
	fo.retries = 0;
	fo.http.low_speed_time_s = 5;
	int rc = ml_fetch_all(d, 1, c, &fo, err);
	mirror_faults(&http_mirror, NULL);
	ml_cache_close(c);
	return rc;
}

static void test_fetch_of_unknown_size_is_learned_checked_and_capped(void **state)
{
	(void)state;
	need_mirror(&http_mirror);
	const int64_t n = (int64_t)strlen(WHEEL_BYTES);
	ml_download d;
	ml_err err = ML_ERR_INIT;
	/* the server's Content-Length is taken, the hash proves the bytes */
	assert_int_equal(fetch_unsized(&d, NULL, 0, &err), 0);
	assert_true(d.done);
	assert_int_equal(d.size, n);
	ml_download_release(&d);
	/* no length at all: the body's end, then the hash */
	assert_int_equal(fetch_unsized(&d, "{\"*\": \"no_length\"}", 0, &err), 0);
	assert_int_equal(d.size, n);
	ml_download_release(&d);
	/* an unknown size does not weaken the hash check */
	assert_int_equal(fetch_unsized(&d, "{\"*\": [\"no_length\", \"flip_byte\"]}", 0, &err),
	                 ML_EINTEGRITY);
	assert_false(d.done);
	assert_non_null(strstr(d.err.msg, "hash mismatch"));
	ml_download_release(&d);
	/* capped: a declared length over the cap, and an endless body */
	assert_int_equal(fetch_unsized(&d, NULL, 16, &err), ML_EINTEGRITY);
	assert_non_null(strstr(d.err.msg, "more than the 16"));
	ml_download_release(&d);
	assert_int_equal(fetch_unsized(&d, "{\"*\": \"endless_junk\"}", 4096, &err), ML_EINTEGRITY);
	assert_non_null(strstr(d.err.msg, "goes on past 4096 bytes"));
	assert_true(d.bytes < 1024 * 1024); /* stopped there, not at the 5-minute limit */
	ml_download_release(&d);
}

static int group_setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmp_root, sizeof(tmp_root), "%s/mlsetup-test-index.XXXXXX",
	         t && t[0] ? t : "/tmp");
	if (!mkdtemp(tmp_root))
		return -1;
#ifdef _WIN32
	have_python = false; /* see mirror_start() */
#else
	have_python = have_program("python3") && access("tests/mirror/server.py", R_OK) == 0;
#endif
	have_openssl = have_program("openssl");
	if (!have_python)
		return 0;
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/mirror-http", tmp_root);
	fill_root(root);
	mirror_start(&http_mirror, root, false);
	if (have_openssl) {
		char cmd[3 * PATH_MAX];
		snprintf(cert_pem, sizeof(cert_pem), "%s/cert.pem", tmp_root);
		snprintf(
		        cmd, sizeof(cmd),
		        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		        "-keyout '%s/key.pem' -out '%s' -days 2 -subj /CN=127.0.0.1 "
		        "-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
		        tmp_root, cert_pem);
		have_openssl = system(cmd) == 0;
	}
	if (have_openssl) {
		snprintf(root, sizeof(root), "%s/mirror-https", tmp_root);
		fill_root(root);
		mirror_start(&https_mirror, root, true);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	mirror_stop(&http_mirror);
	mirror_stop(&https_mirror);
#ifdef _WIN32
	if (tmp_root[0])
		ml_fs_rm_tree(tmp_root);
#else
	if (tmp_root[0])
		nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
#endif
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_url_redaction_hides_password),
	        cmocka_unit_test(test_url_resolve_follows_rfc3986_examples),
	        cmocka_unit_test(test_plain_http_refused_for_non_loopback_host),
	        cmocka_unit_test(test_http_get_refuses_plain_http_before_connecting),
	        cmocka_unit_test(test_http_get_reads_file_urls),
	        cmocka_unit_test(test_http_failure_table),
	        cmocka_unit_test(test_content_range_parse),
	        cmocka_unit_test(test_noproxy_matches_as_libcurl_does),
	        cmocka_unit_test(test_proxy_for_follows_the_http_rules),
	        cmocka_unit_test(test_netrc_lookup_reads_like_libcurl),
	        cmocka_unit_test(test_json_page_lists_files_with_sha256_and_size),
	        cmocka_unit_test(test_relative_urls_resolve_against_page_url),
	        cmocka_unit_test(test_yanked_reason_is_kept),
	        cmocka_unit_test(test_html_fallback_decodes_requires_python_entities),
	        cmocka_unit_test(test_html_base_tag_changes_base_and_skips_directories),
	        cmocka_unit_test(test_html_link_whose_name_decodes_to_nul_is_no_file),
	        cmocka_unit_test(test_pages_with_unknown_api_major_version_are_refused),
	        cmocka_unit_test(test_malformed_json_pages_are_refused),
	        cmocka_unit_test(test_find_links_directory_lists_matching_files_with_sha256),
	        cmocka_unit_test(test_find_links_html_page_is_filtered_by_project),
	        cmocka_unit_test(test_file_index_directory_serves_project_pages),
	        cmocka_unit_test(test_config_priority_flags_over_env_over_pip_conf),
	        cmocka_unit_test(test_config_files_in_pip_order),
	        cmocka_unit_test(test_pip_config_file_devnull_disables_config),
	        cmocka_unit_test(test_manifest_index_url_used_when_nothing_else),
	        cmocka_unit_test(test_pip_default_asked_when_nothing_configured),
	        cmocka_unit_test(test_config_errors_name_their_origin),
	        cmocka_unit_test(test_mirror_json_page_sha256_matches_file),
	        cmocka_unit_test(test_mirror_html_page_via_http_get),
	        cmocka_unit_test(test_mirror_missing_project_and_server_errors),
	        cmocka_unit_test(test_mirror_self_signed_certificate_is_rejected),
	        cmocka_unit_test(test_mirror_https_redirect_to_http_is_refused),
	        cmocka_unit_test(test_sizes_head_then_ranged_get),
	        cmocka_unit_test(test_sizes_many_at_once_and_policy),
	        cmocka_unit_test(test_fetch_of_unknown_size_is_learned_checked_and_capped),
	};
	return cmocka_run_group_tests_name("index", tests, group_setup, group_teardown);
}
