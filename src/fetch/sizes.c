/*
 * sizes.c - learns file sizes from the file servers, for indexes whose
 * pages carry none (PEP 503 HTML has no PEP 700 "size") and pins without
 * sizes. Many requests run at once on one libcurl multi handle (as the
 * downloads of download.c do), sharing DNS, TLS sessions and connections;
 * each handle is set up by mlf_http_configure() like every other request
 * of mlsetup (timeouts, proxies, netrc, TLS), and redirects are followed
 * here, hop by hop, each target checked by ml_http_policy_check().
 *
 * Each URL is asked with HEAD first. A server that refuses HEAD (405
 * Method Not Allowed, 501 Not Implemented: some serve GET only) or sends
 * no length is asked for one byte (GET, "Range: bytes=0-0") and the
 * complete length read from its Content-Range; where that tells nothing
 * either, the size stays unknown (-1) and the download learns it: the
 * install goes on. Only a failure of the HEAD request itself (no
 * connection, timeout, certificate, 404, ...) is an error, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "internal.h"

#define MAX_REDIRECTS  10
#define MAX_BODY_BYTES (64u * 1024) /* of a 206 or an error page; more is not read */
#define POLL_MS        100

typedef enum step {
	STEP_HEAD,  /* HEAD: Content-Length */
	STEP_RANGE, /* GET bytes=0-0: Content-Range's complete length */
} step;

/* One URL's requests. */
typedef struct probe {
	char *url; /* current target (after redirects), owned */
	int hops;
	step st;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	long status;         /* of the response being received */
	char *content_range; /* its Content-Range, or NULL */
	size_t body;         /* body bytes seen */
	bool stopped;        /* stopped on purpose: the headers said enough */
} probe;

typedef struct sizer {
	int64_t *sizes;
	probe *p;
	size_t n;
	const ml_fetch_opts *o;
	CURLM *multi;
	CURLSH *share;
	size_t active;
	int rc;       /* the failure of the lowest URL index, or 0 */
	size_t rc_at; /* its index */
	ml_err err;
} sizer;

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *data)
{
	probe *p = data;
	size_t n = size * nmemb;
	char *v;
	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		/* a new response (1xx, a proxy's CONNECT, the final one) */
		const char *sp = memchr(ptr, ' ', n);
		p->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		free(p->content_range);
		p->content_range = NULL;
		p->body = 0;
	} else if ((v = mlf_header_value(ptr, n, "Content-Range"))) {
		free(p->content_range);
		p->content_range = v;
	}
	return n;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *data)
{
	(void)ptr;
	probe *p = data;
	size_t n = size * nmemb;
	/* a 200 to the ranged GET is the whole file: its length is known */
	if ((p->st == STEP_RANGE && p->status == 200) || p->body + n > MAX_BODY_BYTES) {
		p->stopped = true;
		return 0;
	}
	p->body += n;
	return n;
}

/* Records failure rc (err e) of URL i when it is the first by index. */
static void failed(sizer *s, size_t i, int rc, const ml_err *e)
{
	if (s->rc && s->rc_at <= i)
		return;
	s->rc = rc;
	s->rc_at = i;
	s->err = *e;
}

static void transfer_end(sizer *s, probe *p)
{
	if (p->h) {
		curl_multi_remove_handle(s->multi, p->h);
		curl_easy_cleanup(p->h);
		p->h = NULL;
		s->active--;
	}
	free(p->content_range);
	p->content_range = NULL;
}

/* Starts p's request of its current step at p->url. */
static int start(sizer *s, probe *p, ml_err *err)
{
	p->status = 0;
	p->body = 0;
	p->stopped = false;
	p->errbuf[0] = '\0';
	if (!(p->h = curl_easy_init()))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	CURLcode c = (CURLcode)mlf_http_configure(p->h, &s->o->http, p->errbuf);
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (c == CURLE_OK)                                                                 \
			c = curl_easy_setopt(p->h, opt, val);                                      \
	} while (0)
	SET(CURLOPT_URL, p->url);
	SET(CURLOPT_PRIVATE, p);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, p);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, p);
	if (s->share)
		SET(CURLOPT_SHARE, s->share);
	if (p->st == STEP_HEAD)
		SET(CURLOPT_NOBODY, 1L);
	else
		SET(CURLOPT_RANGE, "0-0");
#undef SET
	if (c != CURLE_OK || curl_multi_add_handle(s->multi, p->h) != CURLM_OK) {
		curl_easy_cleanup(p->h);
		p->h = NULL;
		return ml_err_set(err, ML_EFAIL, "cannot set up a libcurl transfer: %s",
		                  curl_easy_strerror(c));
	}
	s->active++;
	return 0;
}

/* Moves p to the ranged GET at its current URL. */
static void ask_range(sizer *s, probe *p, size_t i)
{
	ml_err e = ML_ERR_INIT;
	p->st = STEP_RANGE;
	p->hops = 0;
	int rc = start(s, p, &e);
	if (rc == ML_ENOMEM)
		failed(s, i, rc, &e); /* anything else: unknown, the download learns it */
}

/* The complete length the ranged GET's answer gives, or -1. */
static int64_t range_size(const probe *p, long status, curl_off_t len)
{
	long long first, last, complete;
	if ((status == 206 || status == 416) && p->content_range &&
	    mlf_content_range_parse(p->content_range, &first, &last, &complete) && complete >= 0)
		return (int64_t)complete;
	if (status == 200 && len >= 0)
		return (int64_t)len;
	return -1;
}

static bool is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* Follows a redirect of p to loc (NULL: none given). Returns true when
 * the next hop started; else fills e. */
static bool follow(sizer *s, probe *p, const char *loc, long status, ml_err *e)
{
	char shown[1024];
	ml_url_redact(shown, sizeof(shown), p->url);
	if (!loc || !loc[0]) {
		ml_err_set(e, ML_ENET, "'%s' answered HTTP %ld without a Location", shown, status);
		return false;
	}
	if (++p->hops > MAX_REDIRECTS) {
		ml_err_set(e, ML_ENET, "too many redirects (more than %d) fetching '%s'",
		           MAX_REDIRECTS, shown);
		return false;
	}
	if (ml_http_policy_check(loc, p->url, s->o->http.trusted_hosts, s->o->http.n_trusted, e))
		return false;
	char *next = strdup(loc);
	if (!next) {
		ml_err_set(e, ML_ENOMEM, "out of memory");
		return false;
	}
	free(p->url);
	p->url = next;
	return start(s, p, e) == 0;
}

/* A request of URL i finished with code. */
static void finished(sizer *s, size_t i, CURLcode code)
{
	probe *p = &s->p[i];
	long status = 0;
	curl_off_t len = -1;
	char *loc = NULL, *redirect = NULL;
	curl_easy_getinfo(p->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(p->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	if (code == CURLE_WRITE_ERROR && p->stopped)
		code = CURLE_OK;
	if (code == CURLE_OK && is_redirect(status) &&
	    curl_easy_getinfo(p->h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
		redirect = strdup(loc);
	bool file = strncasecmp(p->url, "file:", 5) == 0;
	int64_t from_range = p->st == STEP_RANGE ? range_size(p, status, len) : -1;
	transfer_end(s, p);

	ml_err e = ML_ERR_INIT;
	if (code == CURLE_OK && is_redirect(status)) {
		if (!follow(s, p, redirect, status, &e) && p->st == STEP_HEAD)
			failed(s, i, e.code ? e.code : ML_ENET, &e);
	} else if (p->st == STEP_RANGE) {
		s->sizes[i] = from_range; /* -1: the download learns it */
	} else if (code == CURLE_OK && (file || (status >= 200 && status < 300))) {
		if (len >= 0)
			s->sizes[i] = (int64_t)len;
		else
			ask_range(s, p, i);
	} else if (code == CURLE_OK && (status == 405 || status == 501)) {
		ask_range(s, p, i);
	} else {
		int rc = ml_http_fail(&e, NULL, (int)code, status, p->url, p->errbuf);
		failed(s, i, rc, &e);
	}
	free(redirect);
}

/* Starts URL i: its first request, once its URL passes the policy. */
static void begin(sizer *s, size_t i, const char *url)
{
	probe *p = &s->p[i];
	ml_err e = ML_ERR_INIT;
	int rc =
	        ml_http_policy_check(url, NULL, s->o->http.trusted_hosts, s->o->http.n_trusted, &e);
	if (!rc && !(p->url = strdup(url)))
		rc = ml_err_set(&e, ML_ENOMEM, "out of memory");
	if (!rc)
		rc = start(s, p, &e);
	if (rc)
		failed(s, i, rc, &e);
}

int ml_http_sizes(int64_t *sizes, char *const *urls, size_t n, const ml_fetch_opts *o, ml_err *err)
{
	ml_fetch_opts defaults = ML_FETCH_OPTS_INIT;
	for (size_t i = 0; i < n; i++)
		sizes[i] = -1;
	if (n == 0)
		return 0;
	int rc = mlf_http_init(err);
	if (rc)
		return rc;
	sizer s = {0};
	s.sizes = sizes;
	s.n = n;
	s.o = o ? o : &defaults;
	size_t jobs = s.o->jobs > 0 ? (size_t)s.o->jobs : ML_FETCH_JOBS;
	s.p = calloc(n, sizeof(*s.p));
	s.multi = curl_multi_init();
	s.share = curl_share_init();
	if (!s.p || !s.multi) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (s.share) {
		curl_share_setopt(s.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(s.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	}
	curl_multi_setopt(s.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(s.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)jobs);
	size_t next = 0;
	for (;;) {
		/* after a failure, no new URL starts; those running finish */
		while (!s.rc && next < n && s.active < jobs) {
			begin(&s, next, urls[next]);
			next++;
		}
		if (s.active == 0)
			break;
		int running = 0;
		curl_multi_perform(s.multi, &running);
		CURLMsg *m;
		int left;
		bool any = false;
		while ((m = curl_multi_info_read(s.multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			char *priv = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
			if (priv) {
				finished(&s, (size_t)((probe *)priv - s.p), m->data.result);
				any = true;
			}
		}
		if (!any && s.active)
			curl_multi_poll(s.multi, NULL, 0, POLL_MS, NULL);
	}
	if (s.rc) {
		*err = s.err;
		err->code = s.rc;
		rc = s.rc;
	}
out:
	for (size_t i = 0; s.p && i < n; i++) {
		transfer_end(&s, &s.p[i]);
		free(s.p[i].url);
	}
	if (s.multi)
		curl_multi_cleanup(s.multi);
	if (s.share)
		curl_share_cleanup(s.share);
	free(s.p);
	return rc;
}
