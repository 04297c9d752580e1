/*
 * http.c - mlsetup's transport policy, set up in one place, and the
 * requests and URL helpers the fetch stage shares.
 *
 * The policy, in one place: mlf_http_configure() configures every libcurl
 * handle mlsetup makes (index pages here, downloads in download.c, sizes
 * in sizes.c) from one ml_http_opts: TLS 1.2 or newer with verification
 * always on, the CA bundle, protocols, proxies and NO_PROXY, netrc,
 * timeouts, user agent. Plain http only to loopback, file:// or
 * --trusted-host hosts; redirects are never followed by libcurl but by
 * each caller, hop by hop (at most 10), so that each target is checked
 * against the same policy (ml_http_policy_check) and an https -> http
 * downgrade is refused by name. Every request describes its failures
 * through one table (ml_http_fail), so all say the same thing about the
 * same failure. ml_http_proxy_for() tells transports that are not libcurl
 * (libgit2, git.c) the proxy the same rules give.
 *
 * Every URL that reaches a message goes through ml_url_redact().
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "internal.h"

#define MAX_REDIRECTS     10
#define DEFAULT_MAX_BYTES ((size_t)256 << 20)

/* --- URL pieces (RFC 3986 §3, Appendix B) ----------------------------------- */

/* Views into a URL string; lengths in bytes, "has_*" for empty-but-present. */
typedef struct url_parts {
	const char *scheme;
	size_t scheme_len;
	bool has_auth;
	const char *auth;
	size_t auth_len;
	const char *path;
	size_t path_len;
	bool has_query;
	const char *query; /* after '?' */
	size_t query_len;
	bool has_frag;
	const char *frag; /* after '#' */
	size_t frag_len;
} url_parts;

static bool scheme_char(char c, bool first)
{
	if (isalpha((unsigned char)c))
		return true;
	return !first && (isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.');
}

/* Splits s like RFC 3986 Appendix B's regular expression, accepting a
 * scheme only when it is made of scheme characters. */
static void url_split(url_parts *u, const char *s)
{
	memset(u, 0, sizeof(*u));
	const char *p = s;
	size_t n = strcspn(s, ":/?#");
	if (n > 0 && s[n] == ':') {
		bool ok = true;
		for (size_t i = 0; i < n; i++)
			ok = ok && scheme_char(s[i], i == 0);
		if (ok) {
			u->scheme = s;
			u->scheme_len = n;
			p = s + n + 1;
		}
	}
	if (p[0] == '/' && p[1] == '/') {
		u->has_auth = true;
		u->auth = p + 2;
		u->auth_len = strcspn(u->auth, "/?#");
		p = u->auth + u->auth_len;
	}
	u->path = p;
	u->path_len = strcspn(p, "?#");
	p += u->path_len;
	if (*p == '?') {
		u->has_query = true;
		u->query = p + 1;
		u->query_len = strcspn(u->query, "#");
		p = u->query + u->query_len;
	}
	if (*p == '#') {
		u->has_frag = true;
		u->frag = p + 1;
		u->frag_len = strlen(u->frag);
	}
}

static bool scheme_is(const url_parts *u, const char *name)
{
	return u->scheme && u->scheme_len == strlen(name) &&
	       strncasecmp(u->scheme, name, u->scheme_len) == 0;
}

/* Host (brackets removed, lower-cased) and port ("" when absent) of the
 * authority. Returns false when they do not fit or the authority is odd. */
static bool url_host_port(const url_parts *u, char *host, size_t hostsz, char *port, size_t portsz)
{
	if (!u->has_auth)
		return false;
	const char *a = u->auth, *end = u->auth + u->auth_len;
	for (const char *q = end; q > a; q--)
		if (q[-1] == '@') {
			a = q;
			break;
		}
	const char *h = a, *hend;
	const char *pstart = NULL;
	if (*a == '[') {
		h = a + 1;
		hend = memchr(h, ']', (size_t)(end - h));
		if (!hend)
			return false;
		if (hend + 1 < end) {
			if (hend[1] != ':')
				return false;
			pstart = hend + 2;
		}
	} else {
		hend = memchr(a, ':', (size_t)(end - a));
		if (hend)
			pstart = hend + 1;
		else
			hend = end;
	}
	size_t hl = (size_t)(hend - h);
	size_t pl = pstart ? (size_t)(end - pstart) : 0;
	if (hl == 0 || hl >= hostsz || pl >= portsz)
		return false;
	for (size_t i = 0; i < hl; i++)
		host[i] = (char)tolower((unsigned char)h[i]);
	host[hl] = '\0';
	if (pl)
		memcpy(port, pstart, pl);
	port[pl] = '\0';
	for (size_t i = 0; i < pl; i++)
		if (!isdigit((unsigned char)port[i]))
			return false;
	return true;
}

bool mlf_url_host(char *host, size_t sz, const char *url)
{
	url_parts u;
	char port[16];
	url_split(&u, url ? url : "");
	return url_host_port(&u, host, sz, port, sizeof(port));
}

/* The '@' that ends the userinfo of u's authority (the last one, as
 * RFC 3986 §3.2.1 allows '@' nowhere else there), or NULL when it has none. */
static const char *userinfo_end(const url_parts *u)
{
	if (u->has_auth)
		for (size_t i = u->auth_len; i > 0; i--)
			if (u->auth[i - 1] == '@')
				return u->auth + i - 1;
	return NULL;
}

void ml_url_redact(char *dst, size_t dstsz, const char *url)
{
	if (!dst || dstsz == 0)
		return;
	if (!url)
		url = "";
	url_parts u;
	url_split(&u, url);
	const char *at = userinfo_end(&u);
	if (!at) {
		ml_strlcpy(dst, url, dstsz);
		return;
	}
	snprintf(dst, dstsz, "%.*s***%s", (int)(u.auth - url), url, at);
}

void ml_url_strip_userinfo(char *dst, size_t dstsz, const char *url)
{
	if (!dst || dstsz == 0)
		return;
	if (!url)
		url = "";
	url_parts u;
	url_split(&u, url);
	const char *at = userinfo_end(&u);
	if (!at) {
		ml_strlcpy(dst, url, dstsz);
		return;
	}
	snprintf(dst, dstsz, "%.*s%s", (int)(u.auth - url), url, at + 1);
}

/* --- RFC 3986 §5.2 reference resolution ------------------------------------ */

/* §5.2.4 remove_dot_segments over path (n bytes), appended to out. */
static int remove_dot_segments(ml_buf *out, const char *path, size_t n)
{
	char *in = strndup(path, n);
	if (!in)
		return ML_ENOMEM;
	size_t start = out->len; /* never pop below what was there before */
	char *p = in;
	int rc = 0;
	while (*p && rc == 0) {
		if (strncmp(p, "../", 3) == 0) {
			p += 3;
		} else if (strncmp(p, "./", 2) == 0) {
			p += 2;
		} else if (strncmp(p, "/./", 3) == 0) {
			p += 2;
		} else if (strcmp(p, "/.") == 0) {
			p += 1;
			*p = '/';
		} else if (strncmp(p, "/../", 4) == 0 || strcmp(p, "/..") == 0) {
			if (p[3] == '/') {
				p += 3;
			} else {
				p += 2;
				*p = '/';
			}
			size_t i = out->len;
			while (i > start && out->data[i - 1] != '/')
				i--;
			if (i > start)
				i--;
			out->len = i;
			if (out->data)
				out->data[i] = '\0';
		} else if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
			break;
		} else {
			size_t seg = 1 + strcspn(p + 1, "/");
			if (*p != '/')
				seg = strcspn(p, "/");
			rc = ml_buf_add(out, p, seg);
			p += seg;
		}
	}
	free(in);
	return rc;
}

int ml_url_resolve(char **out, const char *base, const char *ref, ml_err *err)
{
	url_parts b, r;
	char shown[512];
	url_split(&b, base ? base : "");
	if (!b.scheme) {
		ml_url_redact(shown, sizeof(shown), base);
		return ml_err_set(err, ML_EPARSE, "base URL '%s' is not absolute", shown);
	}
	url_split(&r, ref ? ref : "");

	ml_buf t = ML_BUF_INIT;
	int rc = 0;
	const url_parts *auth_from, *query_from;
	if (r.scheme) {
		rc |= ml_buf_add(&t, r.scheme, r.scheme_len);
		auth_from = &r;
		query_from = &r;
	} else {
		rc |= ml_buf_add(&t, b.scheme, b.scheme_len);
		auth_from = r.has_auth ? &r : &b;
		query_from = &r;
	}
	rc |= ml_buf_puts(&t, ":");
	if (auth_from->has_auth) {
		rc |= ml_buf_puts(&t, "//");
		rc |= ml_buf_add(&t, auth_from->auth, auth_from->auth_len);
	}
	if (r.scheme || r.has_auth) {
		rc |= remove_dot_segments(&t, r.path, r.path_len);
	} else if (r.path_len == 0) {
		rc |= ml_buf_add(&t, b.path, b.path_len);
		if (!r.has_query)
			query_from = &b;
	} else if (r.path[0] == '/') {
		rc |= remove_dot_segments(&t, r.path, r.path_len);
	} else {
		/* §5.2.3 merge */
		ml_buf m = ML_BUF_INIT;
		if (b.has_auth && b.path_len == 0) {
			rc |= ml_buf_puts(&m, "/");
		} else {
			size_t keep = b.path_len;
			while (keep > 0 && b.path[keep - 1] != '/')
				keep--;
			rc |= ml_buf_add(&m, b.path, keep);
		}
		rc |= ml_buf_add(&m, r.path, r.path_len);
		if (rc == 0)
			rc |= remove_dot_segments(&t, m.data, m.len);
		ml_buf_release(&m);
	}
	if (query_from->has_query) {
		rc |= ml_buf_puts(&t, "?");
		rc |= ml_buf_add(&t, query_from->query, query_from->query_len);
	}
	if (r.has_frag) {
		rc |= ml_buf_puts(&t, "#");
		rc |= ml_buf_add(&t, r.frag, r.frag_len);
	}
	if (rc) {
		ml_buf_release(&t);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	char *s = ml_buf_detach(&t);
	if (!s)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	*out = s;
	return 0;
}

/* --- transport policy ------------------------------------------------------ */

static bool host_is_loopback(const char *host)
{
	if (strcmp(host, "localhost") == 0 || strcmp(host, "localhost.") == 0)
		return true;
	unsigned char a[16];
	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127;
	if (inet_pton(AF_INET6, host, a) == 1) {
		static const unsigned char lo[16] = {[15] = 1};
		static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
		if (memcmp(a, lo, 16) == 0)
			return true;
		return memcmp(a, mapped, 12) == 0 && a[12] == 127;
	}
	return false;
}

/* Does one --trusted-host entry ("host", "host:port", "[v6]:port") cover
 * host/port (port "" meaning the scheme's default)? */
static bool trusted_entry_matches(const char *entry, const char *host, const char *port,
                                  const char *default_port)
{
	char buf[300];
	if (snprintf(buf, sizeof(buf), "x://%s", entry) >= (int)sizeof(buf))
		return false;
	url_parts e;
	url_split(&e, buf);
	char eh[256], ep[16];
	if (!url_host_port(&e, eh, sizeof(eh), ep, sizeof(ep)))
		return false;
	if (strcmp(eh, host) != 0)
		return false;
	if (!ep[0])
		return true;
	return strcmp(ep, port[0] ? port : default_port) == 0;
}

bool ml_http_insecure_allowed(const char *url, char *const *trusted, size_t n)
{
	if (!url)
		return false;
	url_parts u;
	url_split(&u, url);
	if (scheme_is(&u, "file"))
		return true;
	char host[256], port[16];
	if (!url_host_port(&u, host, sizeof(host), port, sizeof(port)))
		return false;
	if (host_is_loopback(host))
		return true;
	const char *def = scheme_is(&u, "https") ? "443" : "80";
	for (size_t i = 0; i < n; i++)
		if (trusted && trusted[i] && trusted_entry_matches(trusted[i], host, port, def))
			return true;
	return false;
}

/* Checks one URL (the first or a redirect target) against the policy. */
static int check_url(const char *url, char *const *trusted, size_t n_trusted, ml_err *err)
{
	char shown[1024];
	url_parts u;
	url_split(&u, url);
	ml_url_redact(shown, sizeof(shown), url);
	if (scheme_is(&u, "https") || scheme_is(&u, "file"))
		return 0;
	if (!scheme_is(&u, "http"))
		return ml_err_set(
		        err, ML_EFAIL,
		        "unsupported URL '%s': only http, https and file URLs can be fetched",
		        shown);
	if (ml_http_insecure_allowed(url, trusted, n_trusted))
		return 0;
	char host[256] = "HOST", port[16];
	url_host_port(&u, host, sizeof(host), port, sizeof(port));
	ml_err_set(err, ML_ENET,
	           "refusing plain http to '%s': the host is neither loopback nor trusted", shown);
	ml_err_hint(err,
	            "use an https URL, or pass --trusted-host %s if you trust the network between "
	            "here and that host",
	            host);
	return ML_ENET;
}

/* Checks a redirect from `from` to `to`. */
static int check_redirect(const char *from, const char *to, char *const *trusted, size_t n_trusted,
                          ml_err *err)
{
	url_parts f, t;
	url_split(&f, from);
	url_split(&t, to);
	char a[512], b[512];
	ml_url_redact(a, sizeof(a), from);
	ml_url_redact(b, sizeof(b), to);
	if (scheme_is(&f, "https") && scheme_is(&t, "http")) {
		ml_err_set(err, ML_ENET, "refusing redirect from '%s' to plain http '%s'", a, b);
		ml_err_hint(err, "the server downgraded an https request; ask its operator to fix "
		                 "the redirect, or use the http URL directly if you trust it");
		return ML_ENET;
	}
	if (!scheme_is(&t, "http") && !scheme_is(&t, "https"))
		return ml_err_set(
		        err, ML_ENET,
		        "refusing redirect from '%s' to '%s': only http(s) targets are followed", a,
		        b);
	return check_url(to, trusted, n_trusted, err);
}

int ml_http_policy_check(const char *url, const char *from, char *const *trusted, size_t n,
                         ml_err *err)
{
	if (!url)
		return ml_err_set(err, ML_EFAIL, "no URL to fetch");
	return from ? check_redirect(from, url, trusted, n, err) : check_url(url, trusted, n, err);
}

/* --- the failure table ------------------------------------------------------ */

static bool curl_code_is_tls_rejection(int c)
{
	return c == CURLE_PEER_FAILED_VERIFICATION || c == CURLE_SSL_CACERT_BADFILE ||
	       c == CURLE_SSL_CERTPROBLEM || c == CURLE_SSL_PINNEDPUBKEYNOTMATCH ||
	       c == CURLE_SSL_INVALIDCERTSTATUS || c == CURLE_SSL_ISSUER_ERROR ||
	       c == CURLE_SSL_CRL_BADFILE;
}

int ml_http_fail(ml_err *err, ml_http_failure *failure, int curl_code, long status, const char *url,
                 const char *errbuf)
{
	char shown[1024];
	ml_url_redact(shown, sizeof(shown), url);
	const char *detail = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(curl_code);
	ml_http_failure f = {curl_code, status, false, false};
	int rc = ML_ENET;

	if (curl_code == CURLE_OK) {
		if (status == 404 || status == 410) {
			rc = ml_err_set(err, ML_ENOENT, "'%s' not found (HTTP %ld)", shown, status);
		} else if (status == 401 || status == 403) {
			ml_err_set(err, ML_ENET, "'%s' refused access (HTTP %ld)", shown, status);
			ml_err_hint(err, "put credentials in the URL "
			                 "(https://user:password@host/...) or in ~/.netrc");
		} else {
			f.retryable = status >= 500 || status == 408 || status == 429;
			ml_err_set(err, ML_ENET, "'%s' answered HTTP %ld", shown, status);
		}
	} else if (curl_code_is_tls_rejection(curl_code)) {
		f.tls_rejected = true;
		ml_err_set(err, ML_ENET, "the certificate of '%s' was rejected: %s", shown, detail);
		ml_err_hint(err,
		            "check the system clock and the host name; if the index uses a private "
		            "certificate authority, pass --cert FILE or set SSL_CERT_FILE");
	} else {
		switch (curl_code) {
		case CURLE_UNSUPPORTED_PROTOCOL:
		case CURLE_URL_MALFORMAT:
			rc = ml_err_set(err, ML_EFAIL, "cannot fetch '%s': %s", shown, detail);
			break;
		case CURLE_FILE_COULDNT_READ_FILE:
			rc = ml_err_set(err, ML_ENOENT, "cannot read '%s': %s", shown, detail);
			break;
		case CURLE_OUT_OF_MEMORY:
			rc = ml_err_set(err, ML_ENOMEM, "out of memory fetching '%s'", shown);
			break;
		case CURLE_LOGIN_DENIED:
		case CURLE_REMOTE_ACCESS_DENIED:
			ml_err_set(err, ML_ENET, "cannot fetch '%s': %s", shown, detail);
			break;
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_RESOLVE_PROXY:
			f.retryable = true;
			ml_err_set(err, ML_ENET, "cannot fetch '%s': %s", shown, detail);
			ml_err_hint(err, "check the network connection, DNS and proxy settings "
			                 "(https_proxy, no_proxy)");
			break;
		default:
			/* connect failures, timeouts, resets, truncated replies, TLS
			 * handshakes cut short: worth another try */
			f.retryable = true;
			ml_err_set(err, ML_ENET, "cannot fetch '%s': %s", shown, detail);
			break;
		}
	}
	if (failure)
		*failure = f;
	return rc;
}

/* Loopback hosts, which never go through a proxy (a proxy's 127.0.0.1 is
 * the proxy itself). CIDR entries need libcurl 7.86. */
#if LIBCURL_VERSION_NUM >= 0x075600
#define LOOPBACK_NOPROXY "localhost,127.0.0.0/8,::1"
#else
#define LOOPBACK_NOPROXY "localhost,127.0.0.1,::1"
#endif

/* no_proxy / NO_PROXY from the environment plus the loopback hosts, in
 * buf (size sz). Setting CURLOPT_NOPROXY replaces libcurl's own reading of
 * the variable, so it is repeated here. */
const char *ml_http_noproxy(char *buf, size_t sz)
{
	const char *env = getenv("no_proxy");
	if (!env || !env[0])
		env = getenv("NO_PROXY");
	if (env && strcmp(env, "*") == 0)
		return "*";
	if (!env || !env[0])
		return LOOPBACK_NOPROXY;
	if (snprintf(buf, sz, "%s,%s", env, LOOPBACK_NOPROXY) >= (int)sz)
		return env;
	return buf;
}

/* Does address a (af's length) lie in the network "net/bits" (or equal
 * the address net when there is no "/bits")? */
static bool cidr_match(int af, const unsigned char *a, const char *entry)
{
	char net[64];
	const char *slash = strchr(entry, '/');
	size_t nl = slash ? (size_t)(slash - entry) : strlen(entry);
	if (nl >= sizeof(net))
		return false;
	memcpy(net, entry, nl);
	net[nl] = '\0';
	unsigned char n[16];
	if (inet_pton(af, net, n) != 1)
		return false;
	int max = af == AF_INET ? 32 : 128;
	long bits = max;
	if (slash) {
		char *e;
		bits = strtol(slash + 1, &e, 10);
		if (e == slash + 1 || *e || bits < 0 || bits > max)
			return false;
	}
	for (long i = 0; i < bits; i++) {
		unsigned char m = (unsigned char)(0x80 >> (i % 8));
		if ((a[i / 8] & m) != (n[i / 8] & m))
			return false;
	}
	return true;
}

bool ml_http_noproxy_match(const char *list, const char *host)
{
	if (!list || !host || !host[0])
		return false;
	size_t hl = strlen(host);
	while (hl && host[hl - 1] == '.')
		hl--; /* "example.org." is "example.org" */
	unsigned char a[16];
	int af = inet_pton(AF_INET, host, a) == 1    ? AF_INET
	         : inet_pton(AF_INET6, host, a) == 1 ? AF_INET6
	                                             : 0;
	for (const char *p = list; *p;) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		char e[300];
		if (n == 0 || n >= sizeof(e)) {
			p += n;
			continue;
		}
		memcpy(e, p, n);
		e[n] = '\0';
		p += n;
		if (strcmp(e, "*") == 0)
			return true;
		if (af) {
			char *v = e;
			if (v[0] == '[') { /* "[::1]" */
				v++;
				char *rb = strchr(v, ']');
				if (rb)
					*rb = '\0';
			}
			if (cidr_match(af, a, v))
				return true;
			continue;
		}
		/* a name: itself or a subdomain; a leading '.' changes nothing */
		const char *d = e[0] == '.' ? e + 1 : e;
		size_t dl = strlen(d);
		while (dl && d[dl - 1] == '.')
			dl--;
		if (!dl || dl > hl || strncasecmp(host + hl - dl, d, dl) != 0)
			continue;
		if (dl == hl || host[hl - dl - 1] == '.')
			return true;
	}
	return false;
}

const char *ml_http_proxy_for(char *buf, size_t sz, const char *url)
{
	if (!url || !buf || !sz)
		return NULL;
	url_parts u;
	url_split(&u, url);
	char host[256], port[16];
	bool https = scheme_is(&u, "https");
	if ((!https && !scheme_is(&u, "http")) ||
	    !url_host_port(&u, host, sizeof(host), port, sizeof(port)))
		return NULL;
	char nbuf[2048];
	if (ml_http_noproxy_match(ml_http_noproxy(nbuf, sizeof(nbuf)), host))
		return NULL;
	/* libcurl's order: the scheme's variable (lower case first; never
	 * HTTP_PROXY, which a CGI environment sets from a request header),
	 * then ALL_PROXY */
	const char *names[] = {https ? "https_proxy" : "http_proxy", https ? "HTTPS_PROXY" : NULL,
	                       "all_proxy", "ALL_PROXY"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = names[i] ? getenv(names[i]) : NULL;
		if (v && v[0])
			return ml_strlcpy(buf, v, sz) < sz ? buf : NULL;
	}
	return NULL;
}

/* --- the one handle setup ------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

/* One share for every request this process makes through ml_http_get(),
 * from any thread: the DNS cache, TLS sessions and open connections, so
 * the index lookups of a plan (a page per project, several threads at a
 * time) resolve each host once and reuse their connections instead of a
 * new TCP and TLS handshake per page. curl checks a connection's TLS
 * settings (CA, verification) before reusing it. */
static CURLSH *share;
static pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ctx)
{
	(void)h;
	(void)access;
	(void)ctx;
	pthread_mutex_lock(&share_mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ctx)
{
	(void)h;
	(void)ctx;
	pthread_mutex_unlock(&share_mu[data]);
}

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (curl_init_rc != CURLE_OK || !(share = curl_share_init()))
		return; /* without a share every request connects anew */
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&share_mu[i], NULL);
	curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
}

int mlf_http_init(ml_err *err)
{
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return ml_err_set(err, ML_EFAIL, "cannot initialize libcurl: %s",
		                  curl_easy_strerror(curl_init_rc));
	return 0;
}

int mlf_http_configure(void *curl, const ml_http_opts *o, char *errbuf)
{
	static const ml_http_opts defaults = {0};
	if (!o)
		o = &defaults;
	CURL *h = curl;
	char nbuf[2048];
	const bool own_ca = o->cert && o->cert[0];
	const char *ca = own_ca ? o->cert : ml_os_ca_file();
	const char *capath = own_ca ? NULL : ml_os_ca_dir();
	const char *netrc = getenv("NETRC");
	CURLcode c = CURLE_OK;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (c == CURLE_OK)                                                                 \
			c = curl_easy_setopt(h, opt, val);                                         \
	} while (0)
	SET(CURLOPT_NOSIGNAL, 1L);
	if (errbuf)
		SET(CURLOPT_ERRORBUFFER, errbuf);
	/* redirects: followed by the caller, hop by hop */
	SET(CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https,file");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS | CURLPROTO_FILE));
	SET(CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* TLS */
	SET(CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca && ca[0])
		SET(CURLOPT_CAINFO, ca);
	if (capath && capath[0])
		SET(CURLOPT_CAPATH, capath);
	/* proxies: libcurl reads http_proxy, https_proxy, ALL_PROXY; the
	 * NO_PROXY list replaces its reading of no_proxy */
	SET(CURLOPT_NOPROXY, ml_http_noproxy(nbuf, sizeof(nbuf)));
	/* credentials: the URL's, else the netrc file's */
	SET(CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
	if (netrc && netrc[0])
		SET(CURLOPT_NETRC_FILE, netrc);
	/* timeouts */
	SET(CURLOPT_CONNECTTIMEOUT,
	    o->connect_timeout_s > 0 ? o->connect_timeout_s : (long)ML_FETCH_CONNECT_TIMEOUT_S);
	SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
	SET(CURLOPT_LOW_SPEED_TIME,
	    o->low_speed_time_s > 0 ? o->low_speed_time_s : (long)ML_FETCH_LOW_SPEED_TIME_S);
	SET(CURLOPT_USERAGENT, "mlsetup/" ML_VERSION);
#undef SET
	return (int)c;
}

/* --- the request ------------------------------------------------------------ */

/* What one transfer collects. */
typedef struct xfer {
	ml_buf body;
	size_t max_bytes;
	bool too_big;
	char *etag;
	char *last_modified;
} xfer;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	xfer *x = userdata;
	size_t n = size * nmemb;
	if (n > x->max_bytes - x->body.len) {
		x->too_big = true;
		return 0;
	}
	if (ml_buf_add(&x->body, ptr, n))
		return 0;
	return n;
}

char *mlf_header_value(const char *line, size_t n, const char *name)
{
	size_t nl = strlen(name);
	if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	const char *v = line + nl + 1;
	const char *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return strndup(v, (size_t)(end - v));
}

bool mlf_content_range_parse(const char *s, long long *first, long long *last, long long *complete)
{
	if (!s || strncasecmp(s, "bytes", 5) != 0)
		return false;
	s += 5;
	while (*s == ' ')
		s++;
	char *end;
	if (*s == '*') {
		*first = *last = -1;
		s++;
	} else {
		*first = strtoll(s, &end, 10);
		if (end == s || *end != '-')
			return false;
		s = end + 1;
		*last = strtoll(s, &end, 10);
		if (end == s)
			return false;
		s = end;
	}
	if (*s != '/')
		return false;
	s++;
	if (*s == '*') {
		*complete = -1;
		return true;
	}
	*complete = strtoll(s, &end, 10);
	return end != s;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	xfer *x = userdata;
	size_t n = size * nmemb;
	char *v;
	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		/* a new response (1xx, proxy CONNECT, the final one): start over */
		free(x->etag);
		free(x->last_modified);
		x->etag = x->last_modified = NULL;
	} else if ((v = mlf_header_value(ptr, n, "ETag"))) {
		free(x->etag);
		x->etag = v;
	} else if ((v = mlf_header_value(ptr, n, "Last-Modified"))) {
		free(x->last_modified);
		x->last_modified = v;
	}
	return n;
}

static void xfer_reset(xfer *x)
{
	ml_buf_release(&x->body);
	free(x->etag);
	free(x->last_modified);
	x->etag = x->last_modified = NULL;
	x->too_big = false;
}

static int add_header(struct curl_slist **list, const char *name, const char *value)
{
	if (!value)
		return 0;
	char *h = ml_asprintf("%s: %s", name, value);
	if (!h)
		return ML_ENOMEM;
	struct curl_slist *l = curl_slist_append(*list, h);
	free(h);
	if (!l)
		return ML_ENOMEM;
	*list = l;
	return 0;
}

/* The policy (mlf_http_configure) and what ml_http_get adds: the shared
 * connections, decoded bodies, its headers and callbacks. */
static int setup_handle(CURL *h, const ml_http_request *req, xfer *x, char *errbuf,
                        struct curl_slist *headers)
{
	int rc = mlf_http_configure(h, &req->http, errbuf);
	CURLcode c = (CURLcode)rc;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (c == CURLE_OK)                                                                 \
			c = curl_easy_setopt(h, opt, val);                                         \
	} while (0)
	if (share) {
		SET(CURLOPT_SHARE, share);
		SET(CURLOPT_MAXCONNECTS, 32L); /* idle ones kept for the next page */
	}
	SET(CURLOPT_ACCEPT_ENCODING, "");
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, x);
#undef SET
	return c == CURLE_OK ? 0 : (int)c;
}

static bool is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

int ml_http_get(ml_http_response *out, const ml_http_request *req, ml_err *err)
{
	if (!req || !req->url || !req->url[0])
		return ml_err_set(err, ML_EFAIL, "no URL to fetch");
	if (req->failure)
		memset(req->failure, 0, sizeof(*req->failure));
	int rc = check_url(req->url, req->http.trusted_hosts, req->http.n_trusted, err);
	if (rc || (rc = mlf_http_init(err)) != 0)
		return rc;

	xfer x = {ML_BUF_INIT, req->max_bytes ? req->max_bytes : DEFAULT_MAX_BYTES, false, NULL,
	          NULL};
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	char *url = strdup(req->url);
	CURL *h = curl_easy_init();
	if (!url || !h) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (add_header(&headers, "Accept", req->accept) ||
	    add_header(&headers, "If-None-Match", req->if_none_match) ||
	    add_header(&headers, "If-Modified-Since", req->if_modified_since)) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	int sc = setup_handle(h, req, &x, errbuf, headers);
	if (sc) {
		rc = ml_err_set(err, ML_EFAIL, "cannot set up libcurl: %s",
		                curl_easy_strerror((CURLcode)sc));
		goto out;
	}

	long status = 0;
	for (int hop = 0;; hop++) {
		xfer_reset(&x);
		errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_URL, url);
		CURLcode c = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (c != CURLE_OK) {
			if (x.too_big) {
				char shown[1024];
				ml_url_redact(shown, sizeof(shown), url);
				rc = ml_err_set(err, ML_EFAIL,
				                "'%s' is larger than the limit of %zu bytes", shown,
				                x.max_bytes);
				if (req->failure)
					*req->failure =
					        (ml_http_failure){(int)c, status, false, false};
			} else {
				rc = ml_http_fail(err, req->failure, (int)c, status, url, errbuf);
			}
			goto out;
		}
		if (!is_redirect(status))
			break;
		char *loc = NULL;
		curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
		char shown[1024];
		ml_url_redact(shown, sizeof(shown), url);
		if (!loc || !loc[0]) {
			rc = ml_err_set(err, ML_ENET, "'%s' answered HTTP %ld without a Location",
			                shown, status);
			goto out;
		}
		if (hop == MAX_REDIRECTS) {
			rc = ml_err_set(err, ML_ENET,
			                "too many redirects (more than %d) fetching '%s'",
			                MAX_REDIRECTS, shown);
			goto out;
		}
		rc = check_redirect(url, loc, req->http.trusted_hosts, req->http.n_trusted, err);
		if (rc)
			goto out;
		char *next = strdup(loc);
		if (!next) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		free(url);
		url = next;
	}

	if (status == 0)
		status = 200; /* file:// */
	if (!(status >= 200 && status < 300) && status != 304) {
		rc = ml_http_fail(err, req->failure, CURLE_OK, status, url, NULL);
		goto out;
	}

	char *ct = NULL, *eff = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
	ml_http_response r = {status, ML_BUF_INIT, NULL, NULL, x.etag, x.last_modified};
	r.content_type = ct ? strdup(ct) : NULL;
	r.effective_url = strdup(eff ? eff : url);
	x.etag = x.last_modified = NULL;
	r.body = x.body;
	x.body = (ml_buf)ML_BUF_INIT;
	if (!r.effective_url || (ct && !r.content_type) || ml_buf_add(&r.body, "", 0)) {
		ml_http_response_release(&r);
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	*out = r;
	rc = 0;
out:
	xfer_reset(&x);
	curl_slist_free_all(headers);
	if (h)
		curl_easy_cleanup(h);
	free(url);
	return rc;
}

void ml_http_response_release(ml_http_response *r)
{
	if (!r)
		return;
	ml_buf_release(&r->body);
	free(r->content_type);
	free(r->effective_url);
	free(r->etag);
	free(r->last_modified);
	memset(r, 0, sizeof(*r));
}
