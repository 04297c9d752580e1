/*
 * internal.h - what the fetch stage's source files share and no other
 * folder needs: the synchronous HTTP GET (http.c) and its request and
 * response types, the package-index client (index.c: PEP 503 / PEP 691
 * pages, --find-links), the cache's blob, page and temporary-file calls
 * (cache.c), and one index lookup with retries (mlf_lookup). Unit tests
 * and fuzz targets include it to test those pieces directly.
 */
#ifndef MLSETUP_FETCH_INTERNAL_H
#define MLSETUP_FETCH_INTERNAL_H

#include "mlsetup/fetch.h"

/* --- HTTP GET (src/fetch/http.c) -------------------------------------------- */

/* PEP 691 "Version + Format Selection": the Accept header for project
 * pages, preferring JSON and falling back to PEP 503 HTML. */
#define ML_HTTP_ACCEPT_INDEX                                                                       \
	"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "         \
	"text/html;q=0.01"

/* Why a request failed, for callers that decide on retries. */
typedef struct ml_http_failure {
	int curl_code;     /* CURLcode, 0 when the transfer itself worked */
	long status;       /* last HTTP status seen, 0 when none */
	bool retryable;    /* true for resolve/connect/timeouts/resets, 408, 429 and 5xx */
	bool tls_rejected; /* the server's certificate was refused: never retry */
} ml_http_failure;

/* One GET. Only url is required; zero-initialize (ML_HTTP_REQUEST_INIT)
 * and set what you need. Borrowed pointers; nothing is kept after the call. */
typedef struct ml_http_request {
	const char *url;               /* http://, https:// or file:// */
	const char *accept;            /* Accept header, or NULL */
	const char *if_none_match;     /* ETag from an earlier response, or NULL */
	const char *if_modified_since; /* Last-Modified from an earlier response, or NULL */
	ml_http_opts http;             /* trusted hosts, CA bundle, timeouts */
	size_t max_bytes;              /* body limit in bytes; 0 means 256 MiB */
	ml_http_failure *failure;      /* optional; filled when ml_http_get fails */
} ml_http_request;

#define ML_HTTP_REQUEST_INIT                                                                       \
	{                                                                                          \
		0                                                                                  \
	}

/* A finished response. Release with ml_http_response_release(). */
typedef struct ml_http_response {
	long status;         /* 200, 206, 304...; a file:// read reports 200 */
	ml_buf body;         /* decoded body (gzip/deflate undone), bytes */
	char *content_type;  /* as sent, parameters included; NULL when none (file://) */
	char *effective_url; /* URL of the final response after redirects */
	char *etag;          /* ETag header, or NULL */
	char *last_modified; /* Last-Modified header, or NULL */
} ml_http_response;

/* How to fetch index pages: optional settings for ml_index_project_opts()
 * and ml_find_links_project_opts(). Zero-initialize (ML_INDEX_OPTS_INIT)
 * and set what you need. Borrowed pointers. */
typedef struct ml_index_opts {
	/* Project pages are kept here with their ETag / Last-Modified and
	 * asked for again with If-None-Match / If-Modified-Since (RFC 9110
	 * §13.1); NULL: no page cache. */
	struct ml_cache *cache;
	long connect_timeout_s;   /* 0: ML_FETCH_CONNECT_TIMEOUT_S */
	long low_speed_time_s;    /* 0: ML_FETCH_LOW_SPEED_TIME_S */
	ml_http_failure *failure; /* optional; filled when the page fetch fails */
} ml_index_opts;

#define ML_INDEX_OPTS_INIT                                                                         \
	{                                                                                          \
		NULL, 0, 0, NULL                                                                   \
	}

/* Asks one source (an index base URL, or a --find-links location when
 * find_links) for project name with ml_index_project_opts /
 * ml_find_links_project_opts (cfg's trusted hosts and cert, c as the page
 * cache, o's timeouts), retrying retryable failures o->retries times (< 0:
 * ML_FETCH_RETRIES) with exponential backoff (0.5 s doubling, at most 8 s); each retry is
 * announced through note(data, text) when note is non-NULL. A rejected
 * certificate is never retried. Returns what the lookup returns (0,
 * ML_ENOENT when the source does not have the project, ML_ENET, ...). */
int mlf_lookup(ml_project **out, const char *url, bool find_links, const char *name,
               const ml_index_config *cfg, ml_cache *c, const ml_fetch_opts *o,
               void (*note)(void *data, const char *text), void *data, ml_err *err);

/* One source an index lookup asks: an index URL or a --find-links
 * location. */
typedef struct mlf_source {
	const char *url; /* borrowed from the index configuration */
	bool find_links;
} mlf_source;

/* The sources of cfg in the order pip asks them: the primary index, the
 * extra indexes, then the --find-links locations; offline, only the local
 * find-links locations. Sets *out (caller frees the array, not the URLs)
 * and *n. Returns 0 or ML_ENOMEM. lookup.c. */
int mlf_sources(mlf_source **out, size_t *n, const ml_index_config *cfg, bool offline);

/* True for an http: or https: URL (one --offline may not use). lookup.c. */
bool mlf_is_remote(const char *url);

/* Most lookups made at once. */
#define MLF_LOOKUP_THREADS 8

/* Calls job(data, i) once for each i in [0, n), on up to
 * MLF_LOOKUP_THREADS threads that take the next index as they finish;
 * where no thread can be started, on this one. Returns when all are done.
 * job must touch only what index i owns (or lock). lookup.c. */
void mlf_each_parallel(size_t n, void (*job)(void *data, size_t i), void *data);

/* Frees what one index file entry owns (filename, url, sha256,
 * requires_python, yanked_reason, core_metadata_sha256); not f itself.
 * index.c. */
void mlf_index_file_release(ml_index_file *f);

/* --- used only inside src/fetch (moved from mlsetup/fetch.h) --------------- */

/* Moves a verified partial file into the store as blob sha256: chmod
 * 0444, rename(part_path -> blobs/sha256/<2>/<64>); no flush (every use of
 * a blob hashes it again, see ml_cache_blob_get). The caller has checked size and hash; fd stays
 * open (the caller closes it). When the blob already exists (another process was first) the partial
 * file is removed and the existing blob kept. Writes the blob path into blob_path (pathsz bytes).
 * Returns 0 or ML_EIO. */
int ml_cache_blob_commit(char *blob_path, size_t pathsz, ml_cache *c, int fd, const char *part_path,
                         const char *sha256, ml_err *err);

/* Looks the blob sha256 (64 lower-case hex digits) up and proves it: its
 * size must be `size` bytes (when size >= 0) and its SHA-256 (OpenSSL EVP,
 * FIPS 180-4) must match. On success writes its path into path (pathsz
 * bytes) and sets its mtime to now (the "last used" time prune reads).
 * A blob that fails the check is removed (only if no other process has
 * replaced it meanwhile); then *corrupted (may be NULL) is set and err
 * says what was wrong. Returns 0, ML_ENOENT (absent, or corrupted and
 * removed), ML_EIO (unreadable), ML_ENOMEM. */
int ml_cache_blob_get(char *path, size_t pathsz, ml_cache *c, const char *sha256, int64_t size,
                      bool *corrupted, ml_err *err);

/* Takes the download lock of blob sha256 (flock on locks/<sha256>.lock):
 * waiting for it when wait is true, else returning at once. Returns 0 with
 * *out set to the held lock (release with ml_cache_unlock()), or 0 with
 * *out NULL when wait is false and another process holds it; ML_EIO,
 * ML_ENOMEM. */
int ml_cache_blob_lock(ml_cache_lock **out, ml_cache *c, const char *sha256, bool wait,
                       ml_err *err);

/* Records where blob sha256 was fetched from (its URL, userinfo removed
 * with ml_url_strip_userinfo) in <cache>/origins/<2 hex>/<64 hex>, so a
 * later run that finds the blob in the cache can still say where it is
 * served (a lock file names every wheel's URL). Written atomically
 * without fsync: a torn record reads as missing. Returns 0, ML_EFAIL (not
 * a sha256), ML_EIO. */
int ml_cache_origin_put(ml_cache *c, const char *sha256, const char *url, ml_err *err);

/* Reads the stored index page for (url, accept) into *out: body,
 * content_type, etag and last_modified (status 200; effective_url is url).
 * Caller releases with ml_http_response_release(). Returns 0, ML_ENOENT
 * (none stored, or the stored copy is damaged), ML_ENOMEM. */
int ml_cache_page_get(ml_http_response *out, ml_cache *c, const char *url, const char *accept,
                      ml_err *err);

/* Stores the page r (its body, content type and validators) as the answer
 * to (url, accept), atomically but without fsync
 * (ml_fs_write_atomic_nosync(): body, then the meta that vouches for it;
 * ml_cache_page_get() checks the body against the meta, so a page torn by
 * a crash reads as missing and is fetched again). Pages without an ETag or
 * Last-Modified are not stored (they could not be revalidated). URLs are
 * used only as hash input: no credentials reach the disk. Returns 0,
 * ML_EIO or ML_ENOMEM. */
int ml_cache_page_put(ml_cache *c, const char *url, const char *accept, const ml_http_response *r,
                      ml_err *err);

/* Creates a new, empty <cache>/tmp/<random>.part (O_EXCL, 0644) for a
 * download in progress, locked with flock so sweeps know it is alive.
 * Writes its path into path (pathsz bytes) and its descriptor (read/write)
 * into *fd. The caller either commits it (ml_cache_blob_commit) or
 * discards it (ml_cache_tmp_discard). Returns 0, ML_EIO. */
int ml_cache_tmp_create(int *fd, char *path, size_t pathsz, ml_cache *c, ml_err *err);

/* Closes fd (when >= 0) and removes the partial file at path (when
 * non-NULL and non-empty). Cannot fail. */
void ml_cache_tmp_discard(int fd, const char *path);

/* Releases and frees a lock. Accepts NULL. */
void ml_cache_unlock(ml_cache_lock *l);

/* Lists the files of project `name` at a pip --find-links location
 * (src->url): a local directory, a file:// URL of one, a single local
 * file, a local .html page, or an http(s) URL of an HTML page (fetched
 * with src's trusted hosts and cert). A file belongs to the project when
 * it is a wheel whose first file-name component, PEP 503-normalized, equals
 * the normalized name (PEP 427 "File name convention"), or an sdist
 * (.tar.gz, .zip, ...) whose normalized stem is "<name>-<digit>...". Local
 * files get a file:// URL, their size from stat and their sha256 computed
 * (OpenSSL EVP), sorted by file name; pages keep what the page says. Sets
 * *out (caller frees with ml_project_free(); n_files may be 0). Returns 0,
 * ML_ENOENT (the location does not exist / HTTP 404), ML_EIO (unreadable
 * file or directory), ML_ENET, ML_EPARSE, ML_ENOMEM. */
int ml_find_links_project(ml_project **out, const ml_index_source *src, const char *name,
                          ml_err *err);

/* ml_find_links_project() with settings o (NULL: the defaults), as for
 * ml_index_project_opts(); the page cache applies to http(s) pages. */
int ml_find_links_project_opts(ml_project **out, const ml_index_source *src, const char *name,
                               const ml_index_opts *o, ml_err *err);

/* The one table from a libcurl result and HTTP status to an ML_E* code and
 * message, shared with the download engine so both say the same thing:
 * describes the failure of fetching url in err, fills *failure when
 * non-NULL, and returns ML_ENET, ML_ENOENT or ML_EFAIL as ml_http_get
 * documents. curl_code is a CURLcode (0 when the transfer worked and only
 * the status is bad); errbuf is libcurl's CURLOPT_ERRORBUFFER text or NULL. */
int ml_http_fail(ml_err *err, ml_http_failure *failure, int curl_code, long status, const char *url,
                 const char *errbuf);

/* GETs req->url into *out (set only on success), on a handle configured
 * by mlf_http_configure() from req->http, so every rule of the transport
 * policy (ml_http_opts) applies. Follows at most 10 redirects (301, 302,
 * 303, 307, 308), checking each hop itself: an https -> http downgrade is
 * refused, and so is a redirect to anything but http(s). Plain http is
 * refused unless ml_http_insecure_allowed() says yes (hint:
 * --trusted-host). Decodes gzip/deflate bodies. Also reads file:// URLs
 * (libcurl's file protocol).
 *
 * Success is any 2xx, and 304 (empty body). Returns 0, or:
 *   ML_ENOENT  HTTP 404 or 410, or a missing file:// path
 *   ML_ENET    resolve/connect failure, timeout, reset, 5xx and other 4xx,
 *              a refused redirect or plain-http URL, a rejected
 *              certificate (message says "certificate ... was rejected";
 *              failure->tls_rejected is set and callers must not retry)
 *   ML_EFAIL   invalid URL or unsupported scheme, body over max_bytes
 *   ML_ENOMEM
 * Every URL in messages is redacted (ml_url_redact). Thread-safe: each call
 * uses its own libcurl handle; curl_global_init runs once (pthread_once). */
int ml_http_get(ml_http_response *out, const ml_http_request *req, ml_err *err);

/* Initializes libcurl once for the process (curl_global_init, under
 * pthread_once). Returns 0, or ML_EFAIL with err saying why. */
int mlf_http_init(ml_err *err);

/* THE one place that configures a libcurl easy handle (CURL *, passed as
 * void * so that this header needs no curl.h) for a request of mlsetup:
 * index pages (ml_http_get), downloads (ml_fetch_all) and sizes
 * (ml_http_sizes) all come here, so none can drift from the policy:
 *   - TLS 1.2 or newer (CURLOPT_SSLVERSION), peer and host verification
 *     on, the CA bundle o->cert, else $SSL_CERT_FILE / $SSL_CERT_DIR, else
 *     the system's (ml_os_ca_file(), ml_os_ca_dir());
 *   - protocols http, https and file; libcurl follows no redirect itself
 *     (CURLOPT_FOLLOWLOCATION 0, redirect protocols http and https only):
 *     callers follow them hop by hop under ml_http_policy_check();
 *   - proxies from the environment as libcurl reads them (http_proxy,
 *     https_proxy / HTTPS_PROXY, ALL_PROXY), never for ml_http_noproxy()'s
 *     hosts (CURLOPT_NOPROXY);
 *   - credentials from the URL, else ~/.netrc or $NETRC (optional);
 *   - connect timeout o->connect_timeout_s, and a transfer below 1 byte/s
 *     for o->low_speed_time_s abandoned (<= 0: the ML_FETCH_* defaults);
 *   - user agent "mlsetup/VERSION", no signals (NOSIGNAL), errors into
 *     errbuf (CURL_ERROR_SIZE bytes; may be NULL).
 * The caller sets the URL, headers, callbacks and sharing. o may be NULL
 * (the defaults). Returns 0, or the CURLcode of the option libcurl
 * refused. */
int mlf_http_configure(void *curl, const ml_http_opts *o, char *errbuf);

/* The proxy libcurl uses for url under the policy above, for transports
 * that are not libcurl (libgit2): the scheme's variable (https_proxy, then
 * HTTPS_PROXY, for https; http_proxy for http), else ALL_PROXY /
 * all_proxy; none when url's host is in ml_http_noproxy()'s list (a host
 * name matches itself and its subdomains, an address itself or a CIDR
 * range; "*" matches every host). Writes it into buf (sz bytes) and
 * returns buf, or returns NULL for no proxy (also for file:// and
 * unparsable URLs, and when it does not fit). */
const char *ml_http_proxy_for(char *buf, size_t sz, const char *url);

/* True when host (a name, or an IPv4/IPv6 address without brackets) is in
 * the comma-separated no_proxy list as libcurl matches it (see
 * ml_http_proxy_for()). */
bool ml_http_noproxy_match(const char *list, const char *host);

/* Writes the host of url's authority (lower case, IPv6 brackets removed)
 * into host (sz bytes). Returns false when url has none or it does not
 * fit. */
bool mlf_url_host(char *host, size_t sz, const char *url);

/* Finds the credentials ~/.netrc (or $NETRC when set) gives for host, as
 * libcurl's CURL_NETRC_OPTIONAL reads the file: the first "machine HOST"
 * entry (host compared case-insensitively) whose login is user (any
 * login when user is NULL), else the "default" entry; "macdef" bodies are
 * skipped. Writes login and password (each sz bytes). Returns true when
 * an entry with a password was found. */
bool ml_netrc_lookup(const char *host, const char *user, char *login, char *password, size_t sz);

/* The value of header `name` (case-insensitive) when the header line
 * (n bytes, as libcurl's header callback gets it) is that header, without
 * surrounding blanks and line end, as a new string; NULL when it is
 * another header (or out of memory). */
char *mlf_header_value(const char *line, size_t n, const char *name);

/* Parses a Content-Range value (RFC 9110 §14.4): "bytes FIRST-LAST/COMPLETE"
 * or "bytes * /COMPLETE" (unsatisfied range, written without the blank),
 * COMPLETE "*" when unknown. Sets *first and *last (-1 for the unsatisfied
 * form) and *complete (-1 when "*"). Returns false when malformed. */
bool mlf_content_range_parse(const char *s, long long *first, long long *last, long long *complete);

/* Returns true when url may be fetched without TLS: a file:// URL, or a URL
 * whose host is loopback (127.0.0.0/8, ::1, "localhost") or appears in
 * trusted (n entries, each "host" - any port - or "host:port" /
 * "[v6addr]:port", compared case-insensitively, like pip's
 * --trusted-host). An https URL is answered by the same host rule; callers
 * only ask for plain http ones. Returns false for NULL or unparsable URLs. */
bool ml_http_insecure_allowed(const char *url, char *const *trusted, size_t n);

/* The CURLOPT_NOPROXY value every mlsetup request uses: $no_proxy (else
 * $NO_PROXY) plus the loopback hosts, which never go through a proxy.
 * Returns buf (sz bytes) or a static string; valid until the next call
 * with the same buf. */
const char *ml_http_noproxy(char *buf, size_t sz);

/* Checks url against the transport policy ml_http_get() applies to every
 * URL and redirect hop: only http, https and file URLs; plain http only
 * where ml_http_insecure_allowed() says yes; and, when `from` (the URL that
 * redirected here) is non-NULL, no https -> http downgrade and no redirect
 * to anything but http(s). Returns 0, ML_ENET (refused: the message names
 * both URLs, redacted, and the hint the remedy) or ML_EFAIL (unsupported
 * scheme). */
int ml_http_policy_check(const char *url, const char *from, char *const *trusted, size_t n,
                         ml_err *err);

/* Frees what r holds and zeroes it. Accepts NULL. */
void ml_http_response_release(ml_http_response *r);

/* Parses a PEP 503 HTML page (text, len bytes) whose URL is base_url:
 * every <a href> becomes a file (a <base href> changes the base, as in
 * pip) except links to directories (URL path ending in '/'). The filename
 * is the last path segment of the URL, percent-decoded, as pip takes it
 * (PEP 503 asks the anchor text to be the same); "#sha256=<hex>" in the
 * href gives
 * the hash (other hash names are ignored); data-requires-python is
 * HTML-entity-decoded ("&gt;=3.9" -> ">=3.9"); data-yanked marks a PEP 592
 * yank, its value the reason; data-core-metadata / data-dist-info-metadata
 * ("true" or "sha256=<hex>") PEP 658/714 metadata. A PEP 629
 * <meta name="pypi:repository-version"> with major version other than 1 is
 * refused. out->name is NULL (HTML pages don't state it). Returns 0,
 * ML_EPARSE or ML_ENOMEM. */
int ml_index_parse_html(ml_project **out, const char *base_url, const char *text, size_t len,
                        ml_err *err);

/* Parses a PEP 691 JSON project page (text, len bytes, need not be
 * NUL-terminated) whose URL is base_url. Reads "name" and, per file,
 * "filename", "url" (resolved against base_url, fragment dropped),
 * "hashes"."sha256", "size", "requires-python", "yanked" (true/false or a
 * reason string, PEP 592), "core-metadata" or the older
 * "dist-info-metadata" (true/false or a hashes object, PEP 658/714).
 * "meta"."api-version" must have major version 1 when present. Sets *out
 * (caller frees with ml_project_free()). Returns 0, ML_EPARSE (not JSON,
 * a file without filename or url, a sha256 that is not 64 hex digits,
 * unsupported API version) or ML_ENOMEM. */
int ml_index_parse_json(ml_project **out, const char *base_url, const char *text, size_t len,
                        ml_err *err);

/* Fetches and parses one project page: GET <src->url>/<normalized name>/
 * (PEP 503 "normalized name", with the trailing slash PEP 503 asks for;
 * for a file:// index whose page is a directory, its index.html) with the
 * PEP 691 Accept header (ML_HTTP_ACCEPT_INDEX), then parses by
 * Content-Type: application/vnd.pypi.simple.v1+json as PEP 691 JSON;
 * text/html or application/vnd.pypi.simple.v1+html as PEP 503 HTML; no
 * Content-Type (file://) by sniffing for '{'. Relative file URLs resolve
 * against the page's URL after redirects. Sets *out (caller frees with
 * ml_project_free()); out->name is the normalized name. Returns 0,
 * ML_ENOENT (no such project on this index: HTTP 404/410), ML_ENET (see
 * ml_http_get), ML_EPARSE (malformed page, unknown content type, or an API
 * major version other than 1), ML_EFAIL, ML_ENOMEM. */
int ml_index_project(ml_project **out, const ml_index_source *src, const char *name, ml_err *err);

/* ml_index_project() with settings o (NULL: the defaults). With o->cache,
 * an http(s) page is stored with its ETag / Last-Modified and later asked
 * for with If-None-Match / If-Modified-Since; a 304 answer reuses the
 * stored page (RFC 9110 §13.1.1-2, §15.4.5); a page cache failure never
 * fails the call. o->failure receives the transport failure (retryable,
 * TLS) for callers that retry. Same returns as ml_index_project(). */
int ml_index_project_opts(ml_project **out, const ml_index_source *src, const char *name,
                          const ml_index_opts *o, ml_err *err);

/* Frees a project and everything it holds. Accepts NULL. */
void ml_project_free(ml_project *p);

/* Resolves the reference ref (absolute "https://h/x.whl", network-path
 * "//h/x", absolute-path "/x.whl", or relative "../../packages/x.whl",
 * "x.whl?y", "#frag") against the absolute URL base, following RFC 3986
 * §5.2 (including §5.2.4 dot-segment removal). The fragment of ref is kept;
 * percent-encoding is left as written. Sets *out to a new string (caller
 * frees with free()). Returns 0, ML_EPARSE when base has no scheme, or
 * ML_ENOMEM. */
int ml_url_resolve(char **out, const char *base, const char *ref, ml_err *err);

#endif
