/*
 * download.c - the parallel download engine: gets a list of files into the
 * content-addressed cache, each one proven by size and SHA-256 before it
 * is renamed into the store.
 *
 * One thread drives a libcurl multi handle. Each file is a small state
 * machine (job): wait for its blob lock, check the cache, then request its
 * sources in order. Bytes stream through SHA-256 into a .part file under
 * <cache>/tmp and never past the expected size; a retry resumes from what
 * was received (Range + If-Range), a server that ignores Range restarts
 * the file, and a Content-Range that does not continue it throws the
 * partial file away. Redirects are followed here, hop by hop, so every
 * target passes the same transport policy as the first URL. Failures are
 * described by ml_http_fail(), the one table shared with http.c.
 *
 * Segments: one TCP connection carries about its window over the round
 * trip, so on a long path the largest files (torch, cuDNN) set the
 * install's length. A file of at least SEG_MIN_BYTES is asked for in
 * SEG_COUNT ranges on as many HTTP/1.1 connections: the job's own
 * transfer takes the first range, hashing as it goes; once the server
 * has answered it with 206 and a validator, a segment transfer per other
 * range (Range + If-Range, on the URL the redirects led to) writes its
 * bytes at their offset in the same .part file. Once the first range is
 * in, the engine loop hashes the rest from the .part file as its bytes
 * arrive, a step of HASH_STEP bytes per round (so the other transfers
 * never wait on a whole file's hashing, and little is left when the last
 * range comes), and the size and sha256 are checked over the assembled
 * bytes as for any file. Anything
 * unexpected from a segment (a 200, another Content-Range, three failed
 * tries) ends the segments: the job's own transfer then fetches the rest
 * as without them. MLSETUP_SEGMENTS=N sets the ranges per file (1: none),
 * MLSETUP_SEGMENT_MIN_BYTES the threshold.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "internal.h"

#define MAX_REDIRECTS     10
#define BACKOFF_BASE_S    0.5
#define BACKOFF_MAX_S     30.0
#define RETRY_AFTER_MAX_S 120.0
#define LOCK_POLL_S       0.1
#define PROGRESS_PERIOD_S 0.1 /* at most 10 calls a second */
#define RATE_WINDOW_S     2.0
#define RATE_SAMPLES      32
#define BUFFER_BYTES      (256L * 1024)
#define HASH_STEP         ((uint64_t)32 << 20) /* a segmented file's hashing per round */
#define HASH_CHUNK        ((size_t)1 << 20)    /* ... read this much at a time */
#define MIN_PROGRESS      (64u * 1024) /* bytes a failed request must add to be "progress" */
#define MAX_REQUESTS      100          /* per source, progress or not */

typedef enum job_state {
	JOB_PENDING,    /* not started */
	JOB_WAIT_LOCK,  /* another process holds the blob lock */
	JOB_ACTIVE,     /* a transfer is running */
	JOB_WAIT_RETRY, /* backing off before the next request */
	JOB_DONE,
	JOB_FAILED,
} job_state;

#define SEG_MIN_BYTES (64LL << 20) /* files at least this large are segmented */
#define SEG_COUNT     4            /* ranges per segmented file, the job's own included */
#define SEG_TRIES     3            /* requests per segment before the job goes on alone */

/* What CURLOPT_PRIVATE points at: a job or a segment, told by kind. */
enum { KIND_JOB = 1, KIND_SEGMENT = 2 };

struct job;

/* One range of a segmented file, fetched beside the job's own transfer. */
typedef struct segment {
	int kind; /* KIND_SEGMENT */
	struct job *j;
	CURL *h;
	struct curl_slist *headers;
	uint64_t off, end; /* the range [off, end) */
	uint64_t got;      /* bytes of it written at off */
	long status;
	char *content_range;
	bool began, bad, done;
	int tries;
	char errbuf[CURL_ERROR_SIZE];
} segment;

/* One file's progress through the engine. */
typedef struct job {
	int kind; /* KIND_JOB */
	ml_download *d;
	job_state st;
	double not_before; /* monotonic seconds: next lock try / retry */
	bool lock_noted;
	ml_cache_lock *lock;

	size_t url_idx;   /* current source */
	int url_attempts; /* requests to it (redirect hops not counted) */
	int fails;        /* failed requests to it that made no progress */
	uint64_t best;    /* the furthest its bytes ever got */
	char *cur_url;    /* current target (after redirects), owned */
	int hops;

	int64_t expect; /* bytes the file has: d->size, or while that is unknown
	                 * (-1) what a server declared, else -1 */
	int64_t cap;    /* while expect is unknown, the most bytes accepted */

	int fd; /* the .part file, -1 before the first request */
	char part[PATH_MAX];
	ml_sha256 *md;
	uint64_t have;   /* bytes in the .part file, all hashed */
	char *validator; /* strong ETag or Last-Modified of the response that gave them */

	/* the running transfer */
	CURL *h;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	bool sent_range;
	long status; /* of the response being received, from its status line */
	char *location, *etag, *last_modified, *content_range, *retry_after;
	bool began, discard, cut, integrity, restart, io_error;
	bool ignored_range; /* a Range request got 200: started over */
	ml_err cb_err;      /* what a callback decided */

	bool had_integrity;
	ml_err integrity_err; /* the first integrity failure, kept for the end */
	ml_err last_err;
	int last_code;

	/* segments (see the top of the file) */
	uint64_t seg_from; /* while segmented: the job's own range ends here; else 0 */
	segment *segs;
	size_t n_segs;
	bool seg_started; /* the segment transfers were started */
	bool seg_wait;    /* the job's own range is in: waiting for the segments */
	bool seg_off;     /* segments ended for this file (unsupported or failed) */
	bool seg_ready;   /* a callback saw the 206 the segments wait for */
	bool seg_kill;    /* a callback saw that the segments must end */
	uint64_t seg_hashed; /* while seg_wait: the file is hashed up to here */
} job;

typedef struct engine {
	job *jobs;
	job **order; /* largest first */
	size_t n;
	ml_cache *cache;
	const ml_fetch_opts *o;
	int jobs_max, retries;
	CURLM *multi;
	CURLSH *share;
	double t0, last_progress;
	uint64_t net_bytes;
	double rate_t[RATE_SAMPLES];
	uint64_t rate_b[RATE_SAMPLES];
	size_t rate_i;
	ml_fetch_active *active;
	bool swept; /* the one look for cached files is done */
	int seg_count;     /* ranges per segmented file (1: no segments) */
	long long seg_min; /* the smallest file segmented, bytes */
} engine;

/* --- small helpers ---------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double random_unit(void)
{
	uint32_t r;
	if (ml_os_random(&r, sizeof(r)) != 0)
		r = (uint32_t)(now_s() * 1e9);
	return (double)r / 4294967296.0;
}

static bool is_file_url(const char *u)
{
	return strncasecmp(u, "file:", 5) == 0;
}

static void free_response_fields(job *j)
{
	free(j->location);
	free(j->etag);
	free(j->last_modified);
	free(j->content_range);
	free(j->retry_after);
	j->location = j->etag = j->last_modified = j->content_range = j->retry_after = NULL;
}

/* --- ml_download helpers ------------------------------------------------------------- */

int ml_download_init(ml_download *d, const char *name, const char *sha256, int64_t size,
                     ml_err *err)
{
	if (ml_sha256_hex_normalize(d->sha256, sha256) != 0)
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 digest",
		                  sha256 ? sha256 : "");
	free(d->name);
	d->name = strdup(name ? name : d->sha256);
	if (!d->name)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	d->size = size;
	d->url_used = -1;
	return 0;
}

int ml_download_add_url(ml_download *d, const char *url, ml_err *err)
{
	for (size_t i = 0; i < d->n_urls; i++)
		if (strcmp(d->urls[i], url) == 0)
			return 0;
	char **v = realloc(d->urls, (d->n_urls + 1) * sizeof(*v));
	if (!v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	d->urls = v;
	if (!(v[d->n_urls] = strdup(url)))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	d->n_urls++;
	return 0;
}

void ml_download_release(ml_download *d)
{
	if (!d)
		return;
	free(d->name);
	for (size_t i = 0; i < d->n_urls; i++)
		free(d->urls[i]);
	free(d->urls);
	memset(d, 0, sizeof(*d));
	d->url_used = -1;
}

/* --- progress ------------------------------------------------------------------- */

static double rate_now(engine *e, double t)
{
	/* oldest sample inside the window */
	double t_old = t;
	uint64_t b_old = e->net_bytes;
	for (size_t k = 0; k < RATE_SAMPLES; k++) {
		size_t i = (e->rate_i + k) % RATE_SAMPLES;
		if (e->rate_t[i] > 0 && t - e->rate_t[i] <= RATE_WINDOW_S && e->rate_t[i] < t_old) {
			t_old = e->rate_t[i];
			b_old = e->rate_b[i];
		}
	}
	return t - t_old > 0.05 ? (double)(e->net_bytes - b_old) / (t - t_old) : 0.0;
}

static void report(engine *e, const char *note, bool final)
{
	double t = now_s();
	if (!note && !final && t - e->last_progress < PROGRESS_PERIOD_S)
		return;
	if (!note) {
		e->rate_t[e->rate_i] = t;
		e->rate_b[e->rate_i] = e->net_bytes;
		e->rate_i = (e->rate_i + 1) % RATE_SAMPLES;
		e->last_progress = t;
	}
	if (!e->o->on_progress)
		return;
	ml_fetch_progress p = {0};
	p.n_items = e->n;
	for (size_t i = 0; i < e->n; i++) {
		job *j = e->order[i];
		uint64_t sz = j->expect > 0 ? (uint64_t)j->expect : 0; /* unknown: 0 */
		p.total_bytes += sz;
		if (j->st == JOB_DONE) {
			p.n_done++;
			p.done_bytes += sz;
			if (j->d->from_cache)
				p.n_from_cache++;
		} else if (j->st == JOB_FAILED) {
			p.n_failed++;
		} else if (j->st == JOB_ACTIVE || j->st == JOB_WAIT_RETRY) {
			p.done_bytes += j->have;
			e->active[p.n_active++] =
			        (ml_fetch_active){j->d->name, j->have, j->expect, j->url_attempts};
		}
	}
	p.net_bytes = e->net_bytes;
	p.elapsed_s = t - e->t0;
	p.rate = rate_now(e, t);
	p.active = e->active;
	p.note = note;
	p.final = final;
	e->o->on_progress(&p, e->o->progress_data);
}

static void notef(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void notef(engine *e, const char *fmt, ...)
{
	if (!e->o->on_progress)
		return;
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	report(e, buf, false);
}

/* --- the partial file ---------------------------------------------------------------- */

static int part_reset(job *j)
{
	j->have = 0;
	j->expect = j->d->size; /* what an earlier response declared no longer holds */
	free(j->validator);
	j->validator = NULL;
	if (j->fd >= 0 && ftruncate(j->fd, 0) != 0)
		return -1;
	if (j->md && ml_sha256_reset(j->md) != 0)
		return -1;
	return 0;
}

static void part_discard(job *j)
{
	if (j->fd >= 0 || j->part[0])
		ml_cache_tmp_discard(j->fd, j->part);
	j->fd = -1;
	j->part[0] = '\0';
	j->have = 0;
	j->expect = j->d->size;
	free(j->validator);
	j->validator = NULL;
}

/* --- libcurl callbacks ---------------------------------------------------------------- */

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	job *j = userdata;
	size_t n = size * nmemb;
	char *v;
	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		/* a new response (1xx, a redirect, the final one) */
		free_response_fields(j);
		const char *sp = memchr(ptr, ' ', n);
		j->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		j->began = j->discard = false;
		return n;
	}
	char **slot = NULL;
	static const char *const names[] = {"Location", "ETag", "Last-Modified", "Content-Range",
	                                    "Retry-After"};
	char **slots[] = {&j->location, &j->etag, &j->last_modified, &j->content_range,
	                  &j->retry_after};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !slot; i++)
		if ((v = mlf_header_value(ptr, n, names[i]))) {
			slot = slots[i];
			free(*slot);
			*slot = v;
		}
	return n;
}

static void set_integrity(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_integrity(job *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char msg[sizeof(j->cb_err.msg)];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	j->integrity = true;
	ml_err_set(&j->cb_err, ML_EINTEGRITY, "%s", msg);
	ml_err_hint(&j->cb_err,
	            "the source does not serve the file the manifest pins; if the manifest is "
	            "right, the index, a mirror or a proxy is altering files");
}

/* A file of unknown size takes the size a server declares (total), once
 * it is within the cap. Returns false (an integrity failure set) when it
 * is not. */
static bool adopt_size(job *j, long long total, const char *shown)
{
	if (total > j->cap) {
		set_integrity(j,
		              "'%s' from '%s' has %lld bytes, more than the %lld a file of unknown "
		              "size may have",
		              j->d->name, shown, total, (long long)j->cap);
		return false;
	}
	j->expect = total;
	return true;
}

/* Decides what to do with the body of the response now arriving. Returns
 * false when the transfer must stop at once. */
static bool begin_body(job *j)
{
	j->began = true;
	long st = j->status;
	const ml_download *d = j->d;
	char shown[1024];
	ml_url_redact(shown, sizeof(shown), j->cur_url);
	if (is_file_url(j->cur_url))
		st = 200;
	if (st < 200 || st >= 300) {
		j->discard = true; /* a redirect or an error page: judged when done */
		return true;
	}
	curl_off_t cl = -1;
	curl_easy_getinfo(j->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	if (st == 206) {
		long long a, b, t;
		if (!mlf_content_range_parse(j->content_range, &a, &b, &t) || a < 0) {
			ml_err_set(&j->cb_err, ML_ENET,
			           "'%s' answered 206 without a usable Content-Range ('%s')", shown,
			           j->content_range ? j->content_range : "");
			j->restart = true;
			return false;
		}
		if (t >= 0 && j->expect < 0 && !adopt_size(j, t, shown))
			return false;
		if (t >= 0 && t != j->expect) {
			set_integrity(
			        j,
			        "size mismatch for '%s' from '%s': the server has %lld bytes, "
			        "expected %lld",
			        d->name, shown, t, (long long)j->expect);
			return false;
		}
		if ((uint64_t)a != j->have || b < a || (j->expect >= 0 && b >= j->expect)) {
			ml_err_set(&j->cb_err, ML_ENET,
			           "'%s' answered 'Content-Range: %s' to a request from byte %llu; "
			           "discarded the partial file",
			           shown, j->content_range, (unsigned long long)j->have);
			j->restart = true;
			return false;
		}
		if (j->seg_from && !j->seg_started)
			j->seg_ready = true; /* the server serves ranges: start the others */
	} else {
		if (j->seg_from) { /* no ranges after all: this body is the whole file */
			j->seg_from = 0;
			j->seg_kill = true;
		}
		if (j->have > 0)
			j->ignored_range = true;
		if (j->have > 0 && part_reset(j) != 0) {
			j->io_error = true;
			ml_err_set(&j->cb_err, ML_EIO, "cannot truncate '%s': %s", j->part,
			           strerror(errno));
			return false;
		}
		if (cl >= 0 && j->expect < 0 && !adopt_size(j, cl, shown))
			return false;
		if (cl >= 0 && cl != j->expect) {
			set_integrity(
			        j,
			        "size mismatch for '%s' from '%s': the server sends %lld bytes, "
			        "expected %lld%s",
			        d->name, shown, (long long)cl, (long long)j->expect,
			        cl > j->expect ? " (extra data appended?)" : "");
			return false;
		}
	}
	free(j->validator);
	j->validator = NULL;
	if (j->etag && strncmp(j->etag, "W/", 2) != 0)
		j->validator = strdup(j->etag);
	else if (j->last_modified)
		j->validator = strdup(j->last_modified);
	return true;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	job *j = userdata;
	size_t n = size * nmemb;
	if (!j->began && !begin_body(j))
		return 0;
	if (j->discard)
		return n;
	/* never past the expected size; a file of unknown size never past
	 * the cap, so an endless body cannot fill the disk */
	bool known = j->expect >= 0;
	uint64_t room = (uint64_t)(j->seg_from ? (int64_t)j->seg_from
	                                      : known ? j->expect
	                                              : j->cap) -
	                j->have;
	size_t take = n < room ? n : (size_t)room;
	size_t off = 0;
	while (off < take) {
		ssize_t w = pwrite(j->fd, ptr + off, take - off, (off_t)(j->have + off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			j->io_error = true;
			ml_err_set(&j->cb_err, ML_EIO, "cannot write '%s': %s", j->part,
			           strerror(w < 0 ? errno : ENOSPC));
			ml_err_hint(&j->cb_err, "free disk space in the cache, or choose another "
			                        "with --cache-dir");
			return 0;
		}
		off += (size_t)w;
	}
	if (take && ml_sha256_update(j->md, ptr, take) != 0) {
		j->io_error = true;
		ml_err_set(&j->cb_err, ML_EIO, "cannot hash '%s'", j->d->name);
		return 0;
	}
	j->have += take;
	j->d->bytes += n;
	if (take < n && !known) {
		char shown[1024];
		ml_url_redact(shown, sizeof(shown), j->cur_url);
		set_integrity(j,
		              "'%s' from '%s' goes on past %lld bytes, the most a file of unknown "
		              "size may have",
		              j->d->name, shown, (long long)j->cap);
		return 0;
	}
	if (take < n) {
		j->cut = true; /* more than the expected size: stop here */
		return 0;
	}
	return n;
}

/* --- requests -------------------------------------------------------------------------- */

/* The policy (mlf_http_configure, from o->http) and what a download adds:
 * its URL, HTTP/2 (or HTTP/1.1 with h1: a connection of its own), large
 * buffers, headers and callbacks, priv as CURLOPT_PRIVATE. No
 * Accept-Encoding: the bytes are hashed as the server stores them. Shared
 * by a job's transfers and its segments'. */
static int easy_setup(engine *e, CURL *h, const char *url, void *priv, bool h1,
                      struct curl_slist *headers, curl_write_callback body,
                      curl_write_callback header, void *data, char *errbuf)
{
	CURLcode c = (CURLcode)mlf_http_configure(h, &e->o->http, errbuf);
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (c == CURLE_OK)                                                                 \
			c = curl_easy_setopt(h, opt, val);                                         \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PRIVATE, priv);
	SET(CURLOPT_HTTP_VERSION, h1 ? (long)CURL_HTTP_VERSION_1_1 : (long)CURL_HTTP_VERSION_2TLS);
	/* HTTP/2 comes only through TLS (ALPN): there, wait for the first
	 * connection to a host and multiplex over it; over plain http/1.1
	 * waiting would put every transfer on one connection */
	SET(CURLOPT_PIPEWAIT, !h1 && strncasecmp(url, "https:", 6) == 0 ? 1L : 0L);
	SET(CURLOPT_BUFFERSIZE, BUFFER_BYTES);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_WRITEFUNCTION, body);
	SET(CURLOPT_WRITEDATA, data);
	SET(CURLOPT_HEADERFUNCTION, header);
	SET(CURLOPT_HEADERDATA, data);
	if (e->share)
		SET(CURLOPT_SHARE, e->share);
#undef SET
	return c == CURLE_OK ? 0 : -1;
}

/* Removes and frees a transfer's handle and its header list. */
static void easy_end(engine *e, CURL **h, struct curl_slist **headers)
{
	if (*h) {
		curl_multi_remove_handle(e->multi, *h);
		curl_easy_cleanup(*h);
		*h = NULL;
	}
	curl_slist_free_all(*headers);
	*headers = NULL;
}

static int handle_setup(engine *e, job *j)
{
	return easy_setup(e, j->h, j->cur_url, j, j->seg_from != 0, j->headers, on_body, on_header,
	                  j, j->errbuf);
}

static void transfer_end(engine *e, job *j)
{
	easy_end(e, &j->h, &j->headers);
	free_response_fields(j);
}

static int segs_plan(engine *e, job *j);

/* Starts one request for j at j->cur_url, resuming from j->have (up to
 * j->seg_from, the end of its own range, while the file is segmented). */
static int start_request(engine *e, job *j, ml_err *err)
{
	if (j->fd < 0) {
		int rc = ml_cache_tmp_create(&j->fd, j->part, sizeof(j->part), e->cache, err);
		if (rc)
			return rc;
		if (!j->md && !(j->md = ml_sha256_new()))
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		if (part_reset(j) != 0)
			return ml_err_set(err, ML_EIO, "cannot prepare '%s'", j->part);
	}
	if (is_file_url(j->cur_url) && j->have > 0 && part_reset(j) != 0)
		return ml_err_set(err, ML_EIO, "cannot truncate '%s': %s", j->part,
		                  strerror(errno));
	j->status = 0;
	j->began = j->discard = j->cut = j->integrity = j->restart = j->io_error = false;
	j->ignored_range = false;
	j->errbuf[0] = '\0';
	ml_err_clear(&j->cb_err);
	j->sent_range = false;
	if (j->have == 0 && !j->seg_from && !j->seg_off && e->seg_count > 1 && j->d->size > 0 &&
	    j->d->size >= e->seg_min && j->expect == j->d->size && !is_file_url(j->cur_url) &&
	    segs_plan(e, j) != 0)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (j->have > 0 || j->seg_from) {
		char range[64];
		if (j->seg_from)
			snprintf(range, sizeof(range), "Range: bytes=%llu-%llu",
			         (unsigned long long)j->have, (unsigned long long)j->seg_from - 1);
		else
			snprintf(range, sizeof(range), "Range: bytes=%llu-",
			         (unsigned long long)j->have);
		struct curl_slist *l = curl_slist_append(j->headers, range);
		if (!l)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		j->headers = l;
		if (j->validator) {
			char *ir = ml_asprintf("If-Range: %s", j->validator);
			l = ir ? curl_slist_append(j->headers, ir) : NULL;
			free(ir);
			if (!l)
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			j->headers = l;
		}
		j->sent_range = true;
	}
	if (!(j->h = curl_easy_init()) || handle_setup(e, j) != 0) {
		transfer_end(e, j);
		return ml_err_set(err, ML_EFAIL, "cannot set up a libcurl transfer");
	}
	if (curl_multi_add_handle(e->multi, j->h) != CURLM_OK) {
		transfer_end(e, j);
		return ml_err_set(err, ML_EFAIL, "cannot start a libcurl transfer");
	}
	j->d->attempts++;
	j->st = JOB_ACTIVE;
	return 0;
}

/* Moves j to its next usable source and starts it, or fails j. */
static void next_source(engine *e, job *j, bool first);

static void segs_stop(engine *e, job *j);

static void job_fail(engine *e, job *j)
{
	segs_stop(e, j);
	part_discard(j);
	ml_cache_unlock(j->lock);
	j->lock = NULL;
	j->st = JOB_FAILED;
	ml_download *d = j->d;
	if (j->had_integrity) {
		d->result = ML_EINTEGRITY;
		d->err = j->integrity_err;
	} else {
		d->result = j->last_code ? j->last_code : ML_ENOENT;
		d->err = j->last_err;
		if (!j->last_code) {
			ml_err_set(&d->err, ML_ENOENT,
			           "'%s' is not in the cache and no source has it", d->name);
			ml_err_hint(&d->err,
			            e->o->offline ? "run without --offline, or add a --find-links "
			                            "directory that has it"
			                          : "check the index options and the manifest");
		}
	}
	d->err.code = d->result;
}

static void job_done(engine *e, job *j)
{
	ml_cache_unlock(j->lock);
	j->lock = NULL;
	j->st = JOB_DONE;
	j->expect = j->d->size; /* learned now, where it was unknown */
	j->d->done = true;
	j->d->result = 0;
	ml_err_clear(&j->d->err);
	if (e->o->on_file)
		e->o->on_file((size_t)(j - e->jobs), j->d, e->o->file_data);
}

/* Records a failed request; retries it when allowed, else moves on. */
static void request_failed(engine *e, job *j, int code, const ml_err *why, bool retryable,
                           double retry_after_s)
{
	j->last_code = code;
	j->last_err = *why;
	if (code == ML_EINTEGRITY && !j->had_integrity) {
		j->had_integrity = true;
		j->integrity_err = *why;
	}
	int n_req = j->url_attempts;
	/* a request that moved the file forward by a real amount costs no
	 * retry: a big wheel on a link that breaks every few minutes still
	 * completes, while a server that never gets further runs out */
	if (j->have >= j->best + MIN_PROGRESS) {
		j->best = j->have;
	} else {
		j->fails++;
	}
	if (retryable && j->fails <= e->retries && n_req < MAX_REQUESTS) {
		double cap = BACKOFF_BASE_S;
		for (int k = 1; k < j->fails && cap < BACKOFF_MAX_S; k++)
			cap *= 2;
		if (cap > BACKOFF_MAX_S)
			cap = BACKOFF_MAX_S;
		double delay = cap / 2 + random_unit() * cap / 2; /* "equal jitter" */
		if (retry_after_s > 0)
			delay = retry_after_s < RETRY_AFTER_MAX_S ? retry_after_s
			                                          : RETRY_AFTER_MAX_S;
		j->st = JOB_WAIT_RETRY;
		j->not_before = now_s() + delay;
		notef(e, "retrying %s in %.1f s (%d of %d retries used): %s", j->d->name, delay,
		      j->fails, e->retries, why->msg);
		return;
	}
	if (retryable) {
		size_t l = strlen(j->last_err.msg);
		if (n_req > 1)
			snprintf(j->last_err.msg + l, sizeof(j->last_err.msg) - l,
			         " (after %d requests)", n_req);
		if (!j->last_err.hint[0])
			ml_err_hint(&j->last_err,
			            "the server or the network kept failing; try again "
			            "later, raise --retries, or use another index");
	}
	if (j->url_idx + 1 < j->d->n_urls)
		notef(e, "%s; trying the next source", j->last_err.msg);
	next_source(e, j, false);
}

static void next_source(engine *e, job *j, bool first)
{
	segs_stop(e, j); /* a new source: its ranges are asked anew */
	j->seg_off = false;
	if (!first)
		j->url_idx++;
	if (j->have > 0 || j->fd >= 0)
		part_reset(j);
	ml_download *d = j->d;
	for (; j->url_idx < d->n_urls; j->url_idx++) {
		const char *u = d->urls[j->url_idx];
		if (e->o->offline && !is_file_url(u))
			continue;
		ml_err why = ML_ERR_INIT;
		int rc = ml_http_policy_check(u, NULL, e->o->http.trusted_hosts,
		                              e->o->http.n_trusted, &why);
		if (rc) {
			j->last_code = rc;
			j->last_err = why;
			continue;
		}
		free(j->cur_url);
		if (!(j->cur_url = strdup(u))) {
			j->last_code = ml_err_set(&j->last_err, ML_ENOMEM, "out of memory");
			break;
		}
		j->url_attempts = 1;
		j->fails = 0;
		j->best = 0;
		j->hops = 0;
		rc = start_request(e, j, &why);
		if (rc == 0)
			return;
		j->last_code = rc;
		j->last_err = why;
		if (rc == ML_EIO || rc == ML_ENOMEM)
			break;
	}
	job_fail(e, j);
}

/* Checks the complete .part file and commits it, or fails the source. */
static void finish_file(engine *e, job *j)
{
	ml_download *d = j->d;
	char shown[1024];
	ml_url_redact(shown, sizeof(shown), j->cur_url);
	uint8_t md[32];
	char actual[65] = "";
	if (ml_sha256_final(j->md, md) == 0)
		ml_hex_encode(actual, md, 32);
	if (strcmp(actual, d->sha256) != 0) {
		ml_err why = ML_ERR_INIT;
		ml_err_set(&why, ML_EINTEGRITY,
		           "hash mismatch for '%s' from '%s': expected sha256 %s, got %s", d->name,
		           shown, d->sha256, actual[0] ? actual : "(none)");
		ml_err_hint(&why, "the source does not serve the file the manifest pins; if the "
		                  "manifest is right, the index, a mirror or a proxy is altering "
		                  "files");
		request_failed(e, j, ML_EINTEGRITY, &why, false, 0);
		return;
	}
	ml_err why = ML_ERR_INIT;
	int rc = ml_cache_blob_commit(d->path, sizeof(d->path), e->cache, j->fd, j->part, d->sha256,
	                              &why);
	if (rc) {
		part_discard(j);
		j->last_code = rc;
		j->last_err = why;
		job_fail(e, j);
		return;
	}
	close(j->fd);
	j->fd = -1;
	j->part[0] = '\0';
	if (d->size < 0)
		d->size = (int64_t)j->have; /* learned: the bytes the hash proved */
	d->url_used = (int)j->url_idx;
	/* where it came from, for lock files written later (best effort) */
	(void)ml_cache_origin_put(e->cache, d->sha256, d->urls[j->url_idx], NULL);
	job_done(e, j);
}

/* Seconds a Retry-After value asks for (delta-seconds or an HTTP-date),
 * 0 when absent or unreadable. RFC 9110 §10.2.3. */
static double retry_after_s(const char *v)
{
	if (!v || !v[0])
		return 0;
	char *end;
	long s = strtol(v, &end, 10);
	if (end != v && *end == '\0')
		return s > 0 ? (double)s : 0;
	time_t when = curl_getdate(v, NULL);
	if (when < 0)
		return 0;
	double d = difftime(when, time(NULL));
	return d > 0 ? d : 0;
}

/* --- segments ---------------------------------------------------------------------------- */

/* Splits j's file into e->seg_count ranges: the job's own is the first
 * (j->seg_from marks its end), a segment for each other. 0 or -1 (out of
 * memory). */
static int segs_plan(engine *e, job *j)
{
	uint64_t size = (uint64_t)j->d->size;
	size_t k = (size_t)e->seg_count;
	j->segs = calloc(k - 1, sizeof(*j->segs));
	if (!j->segs)
		return -1;
	j->n_segs = k - 1;
	j->seg_from = size / k;
	for (size_t i = 1; i < k; i++) {
		segment *g = &j->segs[i - 1];
		g->kind = KIND_SEGMENT;
		g->j = j;
		g->off = size * i / k;
		g->end = i + 1 == k ? size : size * (i + 1) / k;
	}
	return 0;
}

static void seg_end(engine *e, segment *g)
{
	easy_end(e, &g->h, &g->headers);
	free(g->content_range);
	g->content_range = NULL;
}

/* Ends and frees j's segments and their state: the file is one range
 * again (done, or for the job's own transfer to finish). */
static void segs_free(engine *e, job *j)
{
	for (size_t i = 0; i < j->n_segs; i++)
		seg_end(e, &j->segs[i]);
	free(j->segs);
	j->segs = NULL;
	j->n_segs = 0;
	j->seg_from = 0;
	j->seg_hashed = 0;
	j->seg_started = j->seg_ready = j->seg_kill = j->seg_wait = false;
}

/* Ends j's segments for good: the job's own transfer fetches the rest. */
static void segs_stop(engine *e, job *j)
{
	segs_free(e, j);
	j->seg_off = true;
}

static size_t seg_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	segment *g = userdata;
	size_t n = size * nmemb;
	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		const char *sp = memchr(ptr, ' ', n);
		g->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		free(g->content_range);
		g->content_range = NULL;
	} else if (n > 14 && strncasecmp(ptr, "Content-Range:", 14) == 0) {
		size_t l = n - 14;
		const char *v = ptr + 14;
		while (l && (*v == ' ' || *v == '\t'))
			v++, l--;
		while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
			l--;
		free(g->content_range);
		g->content_range = strndup(v, l);
	}
	return n;
}

/* A segment's body: only a 206 for exactly the bytes asked, of a file of
 * the expected size, is written (at its offset); anything else ends the
 * transfer and marks the segment bad. */
static size_t seg_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	segment *g = userdata;
	job *j = g->j;
	size_t n = size * nmemb;
	if (!g->began) {
		g->began = true;
		long long a, b, t;
		if (g->status != 206 || !mlf_content_range_parse(g->content_range, &a, &b, &t) ||
		    (uint64_t)a != g->off + g->got || (uint64_t)b + 1 != g->end ||
		    t != j->d->size) {
			g->bad = true;
			return 0;
		}
	}
	uint64_t room = g->end - g->off - g->got;
	size_t take = n < room ? n : (size_t)room;
	size_t w = 0;
	while (w < take) {
		ssize_t r = pwrite(j->fd, ptr + w, take - w, (off_t)(g->off + g->got + w));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			g->bad = true;
			return 0;
		}
		w += (size_t)r;
	}
	g->got += take;
	j->d->bytes += n;
	return take < n ? 0 : n;
}

/* Starts (or resumes) segment g: its range from what it has, If-Range the
 * validator of the job's own 206, on the URL that answered it, HTTP/1.1
 * (a connection of its own). 0, or -1 when libcurl refuses. */
static int seg_start(engine *e, segment *g)
{
	job *j = g->j;
	char range[96];
	snprintf(range, sizeof(range), "Range: bytes=%llu-%llu",
	         (unsigned long long)(g->off + g->got), (unsigned long long)g->end - 1);
	g->headers = curl_slist_append(NULL, range);
	if (g->headers && j->validator) {
		char *ir = ml_asprintf("If-Range: %s", j->validator);
		struct curl_slist *l = ir ? curl_slist_append(g->headers, ir) : NULL;
		free(ir);
		if (!l)
			return -1;
		g->headers = l;
	}
	g->began = g->bad = false;
	g->status = 0;
	g->errbuf[0] = '\0';
	CURL *h = g->h = curl_easy_init();
	if (!g->headers || !h)
		return -1;
	int c = easy_setup(e, h, j->cur_url, g, true, g->headers, seg_body, seg_header, g,
	                   g->errbuf);
	if (c != 0 || curl_multi_add_handle(e->multi, h) != CURLM_OK)
		return -1;
	g->tries++;
	return 0;
}

/* The engine loop's look at j's segments after a round of transfers:
 * starts them once the job's own 206 came, ends them when told. */
static void segs_tend(engine *e, job *j)
{
	if (j->seg_kill) {
		segs_stop(e, j);
		return;
	}
	if (!j->seg_ready || j->seg_started || !j->segs)
		return;
	j->seg_ready = false;
	j->seg_started = true;
	for (size_t i = 0; i < j->n_segs; i++)
		if (seg_start(e, &j->segs[i]) != 0) {
			notef(e, "cannot start the segments of %s: fetching it on one connection",
			      j->d->name);
			segs_stop(e, j);
			return;
		}
}

/* A segment's transfer finished. */
static void seg_done(engine *e, segment *g, CURLcode code)
{
	job *j = g->j;
	long status = 0;
	curl_easy_getinfo(g->h, CURLINFO_RESPONSE_CODE, &status);
	bool bad = g->bad;
	seg_end(e, g);
	if (code == CURLE_OK && !bad && g->got == g->end - g->off) {
		g->done = true;
	} else if (!bad && status != 200 && g->tries < SEG_TRIES && seg_start(e, g) == 0) {
		return; /* resumed from what it has */
	} else {
		char shown[1024];
		ml_url_redact(shown, sizeof(shown), j->cur_url);
		notef(e, "'%s' did not serve the byte ranges of %s as asked (HTTP %ld%s%s): "
		      "fetching the rest on one connection",
		      shown, j->d->name, status, g->errbuf[0] ? ", " : "", g->errbuf);
		bool waiting = j->seg_wait;
		uint64_t hashed = waiting ? j->seg_hashed : 0;
		segs_stop(e, j);
		if (hashed > j->have)
			j->have = hashed; /* on disk and hashed: the rest starts there */
		if (waiting) { /* the job's own range is in: it fetches the rest */
			ml_err why = ML_ERR_INIT;
			int rc = start_request(e, j, &why);
			if (rc) {
				j->last_code = rc;
				j->last_err = why;
				job_fail(e, j);
			}
		}
		return;
	}
	/* the engine loop hashes what came (segs_hash_some) */
}

/* While j's first range is in (seg_wait): hashes at most HASH_STEP more
 * bytes of the file from the .part file, as far as they have arrived;
 * when the whole file is hashed and every range is in, checks and commits
 * it as any file (finish_file). Returns true when it hashed or finished
 * something (the loop should come back at once), false when it waits for
 * bytes. */
static bool segs_hash_some(engine *e, job *j)
{
	if (!j->seg_wait || !j->segs)
		return false;
	uint64_t at = j->seg_hashed, size = (uint64_t)j->d->size, step = 0;
	char *buf = NULL;
	bool ok = true;
	while (ok && at < size && step < HASH_STEP) {
		const segment *g = NULL;
		for (size_t i = 0; i < j->n_segs && !g; i++)
			if (j->segs[i].off <= at && at < j->segs[i].end)
				g = &j->segs[i];
		uint64_t avail = g ? g->off + g->got : 0;
		if (!g || avail <= at)
			break; /* its bytes are still coming */
		if (!buf && !(buf = malloc(HASH_CHUNK))) {
			ok = false;
			break;
		}
		uint64_t left = avail - at < HASH_STEP - step ? avail - at : HASH_STEP - step;
		size_t want = left < HASH_CHUNK ? (size_t)left : HASH_CHUNK;
		ssize_t r = pread(j->fd, buf, want, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		ok = r > 0 && ml_sha256_update(j->md, buf, (size_t)r) == 0;
		at += ok ? (uint64_t)r : 0;
		step += ok ? (uint64_t)r : 0;
	}
	free(buf);
	j->seg_hashed = at;
	if (!ok) {
		segs_free(e, j);
		j->last_code = ML_EIO;
		ml_err_set(&j->last_err, ML_EIO, "cannot read back '%s' to hash it", j->part);
		job_fail(e, j);
		return true;
	}
	bool all = at == size;
	for (size_t i = 0; all && i < j->n_segs; i++)
		all = j->segs[i].done;
	if (!all)
		return step > 0;
	segs_free(e, j);
	j->have = size;
	finish_file(e, j);
	return true;
}

/* A transfer finished (CURLMSG_DONE). */
static void transfer_done(engine *e, job *j, CURLcode code)
{
	ml_download *d = j->d;
	long status = 0;
	curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &status);
	char *redirect = NULL;
	if (code == CURLE_OK && status >= 300 && status < 400) {
		char *loc = NULL;
		curl_easy_getinfo(j->h, CURLINFO_REDIRECT_URL, &loc);
		redirect = loc ? strdup(loc) : NULL;
	}
	double ra = retry_after_s(j->retry_after);
	if (code == CURLE_OK && !j->began && status >= 200 && status < 300)
		begin_body(j); /* an empty body: still judge the headers */
	ml_err why = j->cb_err;
	char shown[1024];
	ml_url_redact(shown, sizeof(shown), j->cur_url);
	transfer_end(e, j);
	if (j->ignored_range)
		notef(e, "'%s' ignored the Range request; fetched %s from the start", shown,
		      d->name);

	if (j->io_error) {
		j->last_code = why.code ? why.code : ML_EIO;
		j->last_err = why;
		job_fail(e, j);
	} else if (j->integrity) {
		request_failed(e, j, ML_EINTEGRITY, &why, false, 0);
	} else if (j->restart) {
		segs_stop(e, j); /* the file starts over: on one connection */
		part_reset(j);   /* the next request starts from byte 0 */
		request_failed(e, j, ML_ENET, &why, true, 0.0);
	} else if (j->seg_from && code == CURLE_OK && !j->discard && status == 206 &&
	           j->have == j->seg_from) {
		/* the job's own range is in; the file is done when the segments are */
		j->seg_wait = true;
		j->seg_hashed = j->have;
		j->st = JOB_ACTIVE;
		if (!j->seg_started) /* the 206 came, the segments did not start */
			j->seg_ready = true;
	} else if (j->cut || (code == CURLE_OK && !j->discard &&
	                      (j->expect < 0 || j->have == (uint64_t)j->expect) &&
	                      (status == 0 || (status >= 200 && status < 300)))) {
		/* complete, or (size unknown, none declared) ended: the hash judges */
		finish_file(e, j);
	} else if (code == CURLE_OK && status >= 300 && status < 400) {
		if (!redirect || !redirect[0]) {
			ml_err_set(&why, ML_ENET, "'%s' answered HTTP %ld without a Location",
			           shown, status);
			request_failed(e, j, ML_ENET, &why, false, 0);
		} else if (++j->hops > MAX_REDIRECTS) {
			ml_err_set(&why, ML_ENET, "too many redirects (more than %d) fetching '%s'",
			           MAX_REDIRECTS, shown);
			request_failed(e, j, ML_ENET, &why, false, 0);
		} else if (ml_http_policy_check(redirect, j->cur_url, e->o->http.trusted_hosts,
		                                e->o->http.n_trusted, &why) != 0) {
			request_failed(e, j, why.code, &why, false, 0);
		} else {
			free(j->cur_url);
			j->cur_url = redirect;
			redirect = NULL;
			int rc = start_request(e, j, &why);
			if (rc) {
				j->last_code = rc;
				j->last_err = why;
				job_fail(e, j);
			}
		}
	} else if (code == CURLE_OK && status >= 400) {
		if (j->seg_from) /* perhaps the ranges: the next request asks for it all */
			segs_stop(e, j);
		ml_http_failure f;
		int rc = ml_http_fail(&why, &f, CURLE_OK, status, j->cur_url, NULL);
		request_failed(e, j, rc, &why, f.retryable, f.retryable ? ra : 0);
	} else if (code == CURLE_OK && status != 0 && (status < 200 || status >= 300)) {
		ml_err_set(&why, ML_ENET, "'%s' answered HTTP %ld", shown, status);
		request_failed(e, j, ML_ENET, &why, false, 0);
	} else if (code == CURLE_OK && is_file_url(j->cur_url)) {
		set_integrity(
		        j, "size mismatch for '%s' at '%s': the file has %llu bytes, expected %lld",
		        d->name, shown, (unsigned long long)j->have, (long long)j->expect);
		request_failed(e, j, ML_EINTEGRITY, &j->cb_err, false, 0);
	} else if (code == CURLE_OK) {
		/* the body ended early with an orderly close: resume */
		ml_err_set(&why, ML_ENET,
		           "'%s' closed the connection after %llu of %lld bytes of '%s'", shown,
		           (unsigned long long)j->have, (long long)j->expect, d->name);
		request_failed(e, j, ML_ENET, &why, true, 0);
	} else {
		ml_http_failure f;
		int rc = ml_http_fail(&why, &f, (int)code, status, j->cur_url, j->errbuf);
		if (code == CURLE_PARTIAL_FILE || code == CURLE_RECV_ERROR ||
		    code == CURLE_OPERATION_TIMEDOUT) {
			size_t l = strlen(why.msg);
			if (j->expect >= 0)
				snprintf(why.msg + l, sizeof(why.msg) - l, ", at byte %llu of %lld",
				         (unsigned long long)j->have, (long long)j->expect);
			else
				snprintf(why.msg + l, sizeof(why.msg) - l, ", at byte %llu",
				         (unsigned long long)j->have);
		}
		request_failed(e, j, rc, &why, f.retryable && !f.tls_rejected, 0);
	}
	free(redirect);
}

/* --- scheduling -------------------------------------------------------------------------- */

/* Tries to start a job that has no transfer yet: lock, cache, first source.
 * Returns true when it took a transfer slot. */
static bool job_begin(engine *e, job *j, double t)
{
	ml_download *d = j->d;
	if (!j->lock) {
		ml_err why = ML_ERR_INIT;
		if (ml_cache_blob_lock(&j->lock, e->cache, d->sha256, false, &why) != 0) {
			j->last_code = why.code;
			j->last_err = why;
			job_fail(e, j);
			return false;
		}
		if (!j->lock) {
			if (!j->lock_noted)
				notef(e, "waiting for another mlsetup process to finish %s",
				      d->name);
			j->lock_noted = true;
			j->st = JOB_WAIT_LOCK;
			j->not_before = t + LOCK_POLL_S;
			return false;
		}
	}
	bool corrupted = false;
	ml_err why = ML_ERR_INIT;
	int rc = ml_cache_blob_get(d->path, sizeof(d->path), e->cache, d->sha256, d->size,
	                           &corrupted, &why);
	if (rc == 0) {
		struct stat st;
		if (d->size < 0 && stat(d->path, &st) == 0)
			d->size = (int64_t)st.st_size; /* the blob the hash proved */
		d->from_cache = true;
		job_done(e, j);
		return false;
	}
	if (corrupted) {
		d->repaired = true;
		notef(e, "%s; fetching it again", why.msg);
	} else if (rc != ML_ENOENT) {
		j->last_code = rc;
		j->last_err = why;
		job_fail(e, j);
		return false;
	}
	next_source(e, j, true);
	return j->st == JOB_ACTIVE;
}

static void schedule(engine *e, size_t *n_active)
{
	double t = now_s();
	for (size_t i = 0; i < e->n && (size_t)*n_active < (size_t)e->jobs_max; i++) {
		job *j = e->order[i];
		if (j->not_before > t)
			continue;
		if (j->st == JOB_PENDING || j->st == JOB_WAIT_LOCK) {
			if (job_begin(e, j, t))
				(*n_active)++;
		} else if (j->st == JOB_WAIT_RETRY) {
			ml_err why = ML_ERR_INIT;
			j->url_attempts++;
			int rc = start_request(e, j, &why);
			if (rc == 0) {
				(*n_active)++;
			} else {
				j->last_code = rc;
				j->last_err = why;
				job_fail(e, j);
			}
		}
	}
	/* cached files need no slot: settle them without waiting for one
	 * (looked for once; later arrivals are found when a slot frees) */
	if (e->swept)
		return;
	e->swept = true;
	for (size_t i = 0; i < e->n; i++) {
		job *j = e->order[i];
		if (j->st != JOB_PENDING)
			continue;
		char p[PATH_MAX];
		if (ml_cache_blob_path(p, sizeof(p), ml_cache_root(e->cache), j->d->sha256) == 0 &&
		    access(p, F_OK) == 0 && job_begin(e, j, t))
			(*n_active)++;
	}
}

static int by_size_desc(const void *a, const void *b)
{
	const job *x = *(const job *const *)a, *y = *(const job *const *)b;
	if (x->d->size != y->d->size)
		return x->d->size < y->d->size ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* ml_fetch_opts.stop said so: every item not done yet fails as not
 * fetched (engine_release abandons the transfers and their parts). */
static void stop_open_jobs(engine *e)
{
	for (size_t i = 0; i < e->n; i++) {
		job *j = &e->jobs[i];
		if (j->st == JOB_DONE || j->st == JOB_FAILED)
			continue;
		j->st = JOB_FAILED;
		j->d->result = ml_err_set(&j->d->err, ML_EFAIL, "'%s' was not fetched: stopped",
		                          j->d->name ? j->d->name : "?");
	}
}

static void engine_release(engine *e)
{
	for (size_t i = 0; i < e->n; i++) {
		job *j = &e->jobs[i];
		transfer_end(e, j);
		segs_stop(e, j);
		part_discard(j);
		ml_cache_unlock(j->lock);
		ml_sha256_free(j->md);
		free(j->cur_url);
		free(j->validator);
	}
	if (e->multi)
		curl_multi_cleanup(e->multi);
	if (e->share)
		curl_share_cleanup(e->share);
	free(e->jobs);
	free(e->order);
	free(e->active);
}

int ml_fetch_result(const ml_download *items, size_t n, ml_err *err)
{
	size_t n_failed = 0;
	const ml_download *first = NULL;
	bool integrity = false;
	for (size_t i = 0; i < n; i++) {
		if (items[i].done)
			continue;
		n_failed++;
		if (!first)
			first = &items[i];
		if (items[i].result == ML_EINTEGRITY && !integrity) {
			integrity = true;
			first = &items[i];
		}
	}
	int rc = 0;
	if (n_failed == 1) {
		*err = first->err;
		rc = first->result ? first->result : ML_EFAIL;
		err->code = rc;
	} else if (n_failed > 1) {
		rc = first->result ? first->result : ML_EFAIL;
		ml_err_set(err, rc, "%zu of %zu files could not be fetched; first: %s", n_failed, n,
		           first->err.msg);
		ml_err_hint(err, "%s", first->err.hint);
	}
	return rc;
}

int ml_fetch_all(ml_download *items, size_t n, ml_cache *c, const ml_fetch_opts *o, ml_err *err)
{
	ml_fetch_opts defaults = ML_FETCH_OPTS_INIT;
	if (!o)
		o = &defaults;
	if (n == 0)
		return 0;
	int rc = mlf_http_init(err);
	if (rc)
		return rc;
	engine e = {0};
	e.o = o;
	e.cache = c;
	e.n = n;
	e.jobs_max = o->jobs > 0 ? o->jobs : ML_FETCH_JOBS;
	e.retries = o->retries >= 0 ? o->retries : ML_FETCH_RETRIES;
	const char *sc = getenv("MLSETUP_SEGMENTS"), *sm = getenv("MLSETUP_SEGMENT_MIN_BYTES");
	e.seg_count = sc && *sc ? atoi(sc) : SEG_COUNT;
	if (e.seg_count < 1)
		e.seg_count = 1;
	if (e.seg_count > 16)
		e.seg_count = 16;
	e.seg_min = sm && *sm ? atoll(sm) : SEG_MIN_BYTES;
	if (e.seg_min < 1)
		e.seg_min = 1;
	e.jobs = calloc(n, sizeof(*e.jobs));
	e.order = calloc(n, sizeof(*e.order));
	e.active = calloc(n, sizeof(*e.active));
	e.multi = curl_multi_init();
	e.share = curl_share_init();
	if (!e.jobs || !e.order || !e.active || !e.multi) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (e.share) {
		curl_share_setopt(e.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(e.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	}
	curl_multi_setopt(e.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(e.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)e.jobs_max);
	for (size_t i = 0; i < n; i++) {
		job *j = &e.jobs[i];
		j->kind = KIND_JOB;
		j->d = &items[i];
		j->fd = -1;
		e.order[i] = j;
		ml_download *d = j->d;
		d->attempts = 0;
		d->bytes = 0;
		if (d->done) {
			j->st = JOB_DONE; /* settled by the caller (ml_fetch_resolve) */
			if (o->on_file)
				o->on_file(i, d, o->file_data);
			continue;
		}
		d->result = 0;
		d->from_cache = false;
		d->url_used = -1;
		d->path[0] = '\0';
		ml_err_clear(&d->err);
		j->expect = d->size;
		j->cap = d->max_size > 0 ? d->max_size : ML_FETCH_UNSIZED_MAX_BYTES;
		if (strlen(d->sha256) != 64) {
			j->st = JOB_FAILED;
			d->result = ml_err_set(&d->err, ML_EFAIL,
			                       "'%s' has no sha256 to check it against",
			                       d->name ? d->name : "?");
		}
	}
	qsort(e.order, n, sizeof(*e.order), by_size_desc);
	e.t0 = e.last_progress = now_s();
	report(&e, NULL, false);

	for (;;) {
		size_t n_active = 0, n_open = 0;
		double next = 0;
		for (size_t i = 0; i < n; i++) {
			job *j = &e.jobs[i];
			if (j->st == JOB_ACTIVE)
				n_active++;
			if (j->st != JOB_DONE && j->st != JOB_FAILED) {
				n_open++;
				if (j->st != JOB_ACTIVE && (next == 0 || j->not_before < next))
					next = j->not_before;
			}
		}
		if (n_open == 0)
			break;
		if (o->stop && o->stop(o->stop_data)) {
			stop_open_jobs(&e);
			break;
		}
		schedule(&e, &n_active);
		int running = 0;
		curl_multi_perform(e.multi, &running);
		CURLMsg *m;
		int left;
		bool finished = false;
		while ((m = curl_multi_info_read(e.multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			finished = true;
			char *priv = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
			if (priv && *(int *)(void *)priv == KIND_SEGMENT)
				seg_done(&e, (segment *)(void *)priv, m->data.result);
			else if (priv)
				transfer_done(&e, (job *)(void *)priv, m->data.result);
		}
		for (size_t i = 0; i < n; i++)
			if (e.jobs[i].seg_ready || e.jobs[i].seg_kill)
				segs_tend(&e, &e.jobs[i]);
		bool hashed = false; /* a step of a segmented file's hashing */
		for (size_t i = 0; i < n; i++)
			if (e.jobs[i].seg_wait && segs_hash_some(&e, &e.jobs[i]))
				hashed = true;
		uint64_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += e.jobs[i].d->bytes;
		e.net_bytes = total;
		report(&e, NULL, false);
		int wait_ms = 100;
		double t = now_s();
		if (next > 0 && next > t && (next - t) * 1000 < wait_ms)
			wait_ms = (int)((next - t) * 1000) + 1;
		if (finished || hashed)
			continue; /* a slot is free, or hashing goes on: no waiting */
		if (running > 0 || n_active > 0)
			curl_multi_poll(e.multi, NULL, 0, wait_ms, NULL);
		else if (next > t)
			usleep((useconds_t)wait_ms * 1000);
	}
	report(&e, NULL, true);
	rc = ml_fetch_result(items, n, err);
out:
	engine_release(&e);
	return rc;
}
