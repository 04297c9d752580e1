/*
 * fetch.h - the fetch stage: get every byte, proven correct.
 *
 * This header holds, each in its own source file under src/fetch/:
 *
 *   http.c           a small synchronous HTTP(S)/file GET on libcurl's easy
 *                    interface, with mlsetup's transport policy (TLS 1.2 or
 *                    newer, no https -> http redirects, plain http only for
 *                    loopback or trusted hosts), and the URL helpers every
 *                    message and index page needs (redaction, RFC 3986
 *                    resolution)
 *   index.c          the package-index client: PEP 503 HTML and PEP 691 JSON
 *                    project pages, and pip's --find-links locations
 *   index_sources.c  which indexes to ask, and why: command-line flags,
 *                    environment, pip's configuration files, the manifest,
 *                    and finally pip's own built-in default
 *
 * Index URLs never come from C literals (DESIGN.md "Rules of the road"):
 * ml_index_config_resolve() is the only place they are decided.
 *
 * Stages don't print: every function here reports through its ml_err.
 * Every message that contains a URL passes it through ml_url_redact()
 * first, so no password or token is ever shown.
 */
#ifndef MLSETUP_FETCH_H
#define MLSETUP_FETCH_H

#include "mlsetup/core.h"

/* --- URLs (src/fetch/http.c) ---------------------------------------------- */

/* Writes url into dst (dstsz bytes, always NUL-terminated, truncated when
 * it does not fit) with the userinfo of its authority - "user",
 * "user:password" or a token - replaced by "***": "u:p@host/simple/" after
 * the scheme becomes "***@host/simple/". Strings that are not URLs (local
 * paths) are copied unchanged. url may be NULL ("").
 * RFC 3986 §3.2.1 (userinfo). */
void ml_url_redact(char *dst, size_t dstsz, const char *url);

/* Resolves the reference ref (absolute "https://h/x.whl", network-path
 * "//h/x", absolute-path "/x.whl", or relative "../../packages/x.whl",
 * "x.whl?y", "#frag") against the absolute URL base, following RFC 3986
 * §5.2 (including §5.2.4 dot-segment removal). The fragment of ref is kept;
 * percent-encoding is left as written. Sets *out to a new string (caller
 * frees with free()). Returns 0, ML_EPARSE when base has no scheme, or
 * ML_ENOMEM. */
int ml_url_resolve(char **out, const char *base, const char *ref, ml_err *err);

/* Returns true when url may be fetched without TLS: a file:// URL, or a URL
 * whose host is loopback (127.0.0.0/8, ::1, "localhost") or appears in
 * trusted (n entries, each "host" - any port - or "host:port" /
 * "[v6addr]:port", compared case-insensitively, like pip's
 * --trusted-host). An https URL is answered by the same host rule; callers
 * only ask for plain http ones. Returns false for NULL or unparsable URLs. */
bool ml_http_insecure_allowed(const char *url, char *const *trusted, size_t n);

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
	char *const *trusted_hosts;    /* hosts allowed over plain http (--trusted-host) */
	size_t n_trusted;
	const char *cert;         /* CA bundle (PEM) path; NULL: $SSL_CERT_FILE, else system */
	size_t max_bytes;         /* body limit in bytes; 0 means 256 MiB */
	ml_http_failure *failure; /* optional; filled when ml_http_get fails */
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

/* GETs req->url into *out (set only on success). Follows at most 10
 * redirects (301, 302, 303, 307, 308), checking each hop itself: an
 * https -> http downgrade is refused, and so is a redirect to anything but
 * http(s). Plain http is refused unless ml_http_insecure_allowed() says
 * yes (hint: --trusted-host). TLS 1.2 or newer with peer and host
 * verification always on, CA bundle from req->cert, else $SSL_CERT_FILE /
 * $SSL_CERT_DIR, else libcurl's default. Proxies from the usual
 * environment variables (libcurl: http_proxy, https_proxy, no_proxy,
 * ALL_PROXY). Credentials from user:password@ in the URL or from ~/.netrc
 * ($NETRC when set; optional). Connect timeout 10 s; a transfer slower than
 * 1 byte/s for 30 s is abandoned. Also reads file:// URLs (libcurl's file
 * protocol).
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

/* Frees what r holds and zeroes it. Accepts NULL. */
void ml_http_response_release(ml_http_response *r);

/* The one table from a libcurl result and HTTP status to an ML_E* code and
 * message, shared with the download engine so both say the same thing:
 * describes the failure of fetching url in err, fills *failure when
 * non-NULL, and returns ML_ENET, ML_ENOENT or ML_EFAIL as ml_http_get
 * documents. curl_code is a CURLcode (0 when the transfer worked and only
 * the status is bad); errbuf is libcurl's CURLOPT_ERRORBUFFER text or NULL. */
int ml_http_fail(ml_err *err, ml_http_failure *failure, int curl_code, long status, const char *url,
                 const char *errbuf);

/* --- package index client (src/fetch/index.c) ------------------------------ */

/* One distribution file on an index page (PEP 503 anchor / PEP 691 "files"
 * entry). */
typedef struct ml_index_file {
	char *filename;             /* "torch-2.6.0-cp312-cp312-manylinux_2_28_x86_64.whl" */
	char *url;                  /* absolute, fragment removed, percent-encoding as sent */
	char *sha256;               /* 64 lower-case hex digits, or NULL when not given */
	char *requires_python;      /* PEP 345 specifier (">=3.9"), entities decoded; or NULL */
	int64_t size;               /* bytes, -1 when unknown (PEP 700 "size") */
	bool yanked;                /* PEP 592 */
	char *yanked_reason;        /* PEP 592 reason, or NULL (also when yanked without one) */
	bool has_core_metadata;     /* PEP 658/714: <url>.metadata is served */
	char *core_metadata_sha256; /* its sha256 (lower-case hex), or NULL */
} ml_index_file;

/* One project's files as an index (or a --find-links location) lists them. */
typedef struct ml_project {
	char *name; /* PEP 503 normalized; NULL only from ml_index_parse_html() */
	ml_index_file *files;
	size_t n_files;
} ml_project;

/* Where to ask. Borrowed pointers. */
typedef struct ml_index_source {
	const char *url;            /* index base ("…/simple/"), or a --find-links location */
	char *const *trusted_hosts; /* --trusted-host entries */
	size_t n_trusted;
	const char *cert; /* CA bundle path, or NULL */
} ml_index_source;

/* Frees a project and everything it holds. Accepts NULL. */
void ml_project_free(ml_project *p);

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

/* --- index sources (src/fetch/index_sources.c) ------------------------------ */

/* Index options from the command line. Borrowed pointers; zero-initialize
 * (ML_INDEX_FLAGS_INIT) and set what the user gave. */
typedef struct ml_index_flags {
	const char *index_url;         /* --index-url / -i */
	char *const *extra_index_urls; /* --extra-index-url, repeatable */
	size_t n_extra;
	char *const *find_links; /* --find-links / -f, repeatable */
	size_t n_find_links;
	bool no_index;              /* --no-index */
	char *const *trusted_hosts; /* --trusted-host, repeatable */
	size_t n_trusted;
	const char *cert;    /* --cert */
	const char *command; /* pip config section read after [global]: "install"
	                        (NULL) or "download" */
} ml_index_flags;

#define ML_INDEX_FLAGS_INIT                                                                        \
	{                                                                                          \
		0                                                                                  \
	}

/* The indexes to use and where each value came from. Every string is owned
 * by the config; origins are human text such as "--index-url",
 * "MLSETUP_INDEX_URL", "PIP_INDEX_URL", "pip config /etc/pip.conf",
 * "manifest", "pip default". */
typedef struct ml_index_config {
	char *index_url; /* NULL when no_index */
	char **extra_index_urls;
	char **extra_origins; /* parallel to extra_index_urls */
	size_t n_extra;       /* 0 when no_index */
	char **find_links;
	char **find_links_origins; /* parallel to find_links */
	size_t n_find_links;
	bool no_index;
	char **trusted_hosts;
	size_t n_trusted;
	char *cert;        /* CA bundle path, or NULL */
	char *cert_origin; /* NULL when cert is NULL */
	char *origin;      /* where index_url came from; with no_index, where that came from */
} ml_index_config;

/* Decides the indexes, the pip way, with mlsetup's own settings on top.
 * For single values (index URL, cert, no-index) the first source that sets
 * one wins, highest first:
 *   1. flags (may be NULL)
 *   2. MLSETUP_INDEX_URL (index URL only)
 *   3. PIP_INDEX_URL, PIP_NO_INDEX, PIP_CERT
 *   4. pip's configuration files (pip docs "Configuration"): site-wide
 *      $XDG_CONFIG_DIRS/pip/pip.conf (default /etc/xdg) then /etc/pip.conf;
 *      per-user ~/.pip/pip.conf then $XDG_CONFIG_HOME/pip/pip.conf
 *      (default ~/.config/pip/pip.conf), skipped when $PIP_CONFIG_FILE
 *      names an existing file; $VIRTUAL_ENV/pip.conf; then
 *      $PIP_CONFIG_FILE. Later files override earlier ones; [global]
 *      items from all files come first, then the command's section
 *      ([install], or [download]) from all files, as pip orders them.
 *      PIP_CONFIG_FILE=/dev/null (os.devnull) skips every file.
 *   5. the manifest's --index-url (manifest_index_url, may be NULL)
 *   6. pip's built-in default, asked of `python -c 'from
 *      pip._internal.models.index import PyPI; print(PyPI.simple_url)'`
 *      (python: interpreter path or name, NULL means "python3"; 30 s),
 *      only when nothing above set an index URL and no_index is false.
 * Lists (extra index URLs, find-links, trusted hosts) follow pip: a
 * higher environment/config layer replaces a lower one for the same key
 * (MLSETUP_EXTRA_INDEX_URL over PIP_EXTRA_INDEX_URL over the config
 * files), and the command line is appended before it; the manifest's
 * --extra-index-url lines (manifest_extra, n_manifest_extra) come last.
 * Duplicates are dropped. Environment and config list values are split
 * on whitespace (so multi-line config values work); booleans accept pip's
 * words (1/0, yes/no, true/false, on/off). With no_index, index_url is
 * NULL and there are no extra index URLs. Environment variables are read
 * with getenv; file locations honour HOME, XDG_CONFIG_HOME,
 * XDG_CONFIG_DIRS and VIRTUAL_ENV.
 *
 * Sets *out (caller frees with ml_index_config_free()). Returns 0,
 * ML_EPARSE (a malformed pip.conf, with file:line), ML_EUSAGE (an index URL
 * that is not a URL, a bad boolean; the message names its origin), ML_EIO
 * (an unreadable config file), ML_ENOENT (no index configured anywhere and
 * pip could not be asked), ML_ENOMEM. */
int ml_index_config_resolve(ml_index_config **out, const ml_index_flags *flags,
                            const char *manifest_index_url, char *const *manifest_extra,
                            size_t n_manifest_extra, const char *python, ml_err *err);

/* Frees a config and everything it holds. Accepts NULL. */
void ml_index_config_free(ml_index_config *c);

#endif /* MLSETUP_FETCH_H */
