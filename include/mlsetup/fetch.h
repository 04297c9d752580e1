/*
 * fetch.h - the fetch stage: get every byte, proven correct.
 *
 * This header holds, each in its own source file under src/fetch/:
 *
 *   http.c           mlsetup's transport policy, configured into every
 *                    libcurl handle by one function (TLS 1.2 or newer, no
 *                    https -> http redirects, plain http only for loopback
 *                    or trusted hosts, proxies, netrc, timeouts), a small
 *                    synchronous HTTP(S)/file GET, and the URL helpers
 *                    every message and index page needs (redaction,
 *                    RFC 3986 resolution)
 *   sizes.c          file sizes from the file servers (HEAD, else a ranged
 *                    GET), many at once
 *   index.c          the package-index client: PEP 503 HTML and PEP 691 JSON
 *                    project pages, and pip's --find-links locations
 *   index_sources.c  which indexes to ask, and why: command-line flags,
 *                    environment, pip's configuration files, the manifest,
 *                    and finally pip's own built-in default
 *   cache.c          the content-addressed cache shared by every mlsetup
 *                    process of a user: verified blobs, partial downloads,
 *                    index pages with their validators, locks, clean/prune
 *   download.c       the parallel download engine (libcurl multi): many
 *                    verified transfers at once, with retries and resume
 *   resolve.c        where each file of a plan can be fetched from: the
 *                    indexes and --find-links locations, matched by sha256
 *   provider.c       what the plan asks while it completes a plan: the
 *                    files the sources list for a project, and pip's
 *                    resolution of a file that pins no hashes
 *   git.c            a project's git repository checked out at a revision
 *                    (libgit2)
 *
 * Index URLs never come from C literals (docs/ARCHITECTURE.md, "The rules"):
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

/* Writes url into dst (dstsz bytes, truncated when it does not fit) with
 * the userinfo of its authority removed: "https://u:p@host/x" becomes
 * "https://host/x" (for URLs written into files others read, such as a
 * lock file). Strings that are not URLs are copied unchanged. */
void ml_url_strip_userinfo(char *dst, size_t dstsz, const char *url);

/* --- the transport policy (src/fetch/http.c) ---------------------------------- */

/* The defaults of the fetch options, in one place: the option structs
 * below, the command line's help (src/cli/fetch_opts.c) and every request
 * take them from here. */
#define ML_FETCH_JOBS              16 /* transfers at once */
#define ML_FETCH_RETRIES           3  /* extra requests per source after a retryable failure */
#define ML_FETCH_CONNECT_TIMEOUT_S 10 /* seconds to wait for a connection */
#define ML_FETCH_LOW_SPEED_TIME_S  30 /* seconds below 1 byte/s before a transfer is abandoned */

/* What a caller chooses of the transport policy every libcurl request of
 * mlsetup follows (index pages, downloads, sizes; src/fetch/http.c
 * configures each handle from it, in one function). The rest of the
 * policy is fixed: TLS 1.2 or newer with peer and host verification; http,
 * https and file URLs only; redirects followed by mlsetup hop by hop (at
 * most 10, each target checked by ml_http_policy_check(), never https ->
 * http); proxies from http_proxy / https_proxy / ALL_PROXY, never for
 * $no_proxy / $NO_PROXY hosts or loopback (ml_http_noproxy()); credentials
 * from the URL or ~/.netrc ($NETRC); user agent "mlsetup/VERSION".
 * Borrowed pointers; zero means the default. */
typedef struct ml_http_opts {
	char *const *trusted_hosts; /* --trusted-host: plain http allowed */
	size_t n_trusted;
	const char *cert;       /* CA bundle (PEM); NULL: $SSL_CERT_FILE / $SSL_CERT_DIR, else
	                         * the system's (ml_os_ca_file(), ml_os_ca_dir()) */
	long connect_timeout_s; /* <= 0: ML_FETCH_CONNECT_TIMEOUT_S */
	long low_speed_time_s;  /* abandon a transfer below 1 byte/s for this long;
	                         * <= 0: ML_FETCH_LOW_SPEED_TIME_S */
} ml_http_opts;

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

struct ml_cache;

/* Where to ask. Borrowed pointers. */
typedef struct ml_index_source {
	const char *url;            /* index base ("…/simple/"), or a --find-links location */
	char *const *trusted_hosts; /* --trusted-host entries */
	size_t n_trusted;
	const char *cert; /* CA bundle path, or NULL */
} ml_index_source;

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
	/* For a requirements file that leaves torch open (plan.h,
	 * ml_plan_complete_opts): --torch-index-url (the base of PyTorch's
	 * per-backend indexes, "none" for none) and --torch-backend
	 * ("auto", "cpu", "cu126", ...). NULL: the defaults. */
	const char *torch_index_url;
	const char *torch_backend;
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
 *      (python: interpreter path or name, NULL means "python3", on Windows "python"; 30 s),
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

/* --- the cache (src/fetch/cache.c) ------------------------------------------- */

/* The content-addressed cache (docs/ARCHITECTURE.md, "The cache"):
 *
 *   <cache>/blobs/sha256/<2 hex>/<64 hex>  verified files, read-only (0444),
 *                                          mtime = last use (for prune)
 *   <cache>/tmp/<16 hex>.part              downloads in progress, each
 *                                          flock()ed by its writer
 *   <cache>/index/<2 hex>/<64 hex>.{body,meta}  index pages + validators
 *   <cache>/locks/<64 hex>.lock            per-blob download locks
 *   <cache>/origins/<2 hex>/<64 hex>       the URL each blob was fetched from
 *   <cache>/.lock                          cache-wide lock: shared by every
 *                                          user of the cache, exclusive for
 *                                          clean and prune
 *
 * Several mlsetup processes may use one cache at once: entries appear only
 * by rename(2) of a complete, verified file (not flushed: a blob is
 * hashed again on every use, and index pages are checked against their
 * meta on every read), a per-blob lock makes a second process wait for the first
 * one's download instead of repeating it, and every use of a blob hashes
 * it again. An opaque handle; all functions take it from one thread. */
typedef struct ml_cache ml_cache;

typedef enum ml_cache_mode {
	ML_CACHE_SHARED = 0,    /* normal use: waits while a clean/prune runs */
	ML_CACHE_EXCLUSIVE = 1, /* clean/prune: fails at once if the cache is in use */
} ml_cache_mode;

/* Opens (creating as needed, mode 0755) the cache at dir (see
 * ml_cache_dir() for the default) and takes the cache-wide lock: shared
 * (blocking while an exclusive holder runs) or exclusive (non-blocking).
 * Removes `.part` files left by dead processes (unlocked and unchanged for
 * a minute). Sets *out (caller closes with ml_cache_close(), which releases
 * the lock). Returns 0, ML_EIO (cannot create or lock; the message names
 * the path) or ML_EFAIL (exclusive wanted but the cache is in use: hint
 * says to wait), ML_ENOMEM. */
int ml_cache_open(ml_cache **out, const char *dir, ml_cache_mode mode, ml_err *err);

/* Releases the lock and frees c. Accepts NULL. */
void ml_cache_close(ml_cache *c);

/* The cache directory (owned by c). */
const char *ml_cache_root(const ml_cache *c);

/* A held per-blob lock. */
typedef struct ml_cache_lock ml_cache_lock;

/* Reads the URL recorded for blob sha256 into url (sz bytes). Returns 0,
 * or ML_ENOENT when none is recorded (or it does not fit). */
int ml_cache_origin_get(char *url, size_t sz, ml_cache *c, const char *sha256);

/* Counts (entries and bytes) per kind of cache entry. */
typedef struct ml_cache_stats {
	uint64_t blobs, blob_bytes;
	uint64_t pages, page_bytes;        /* index pages (body + validators) */
	uint64_t parts, part_bytes;        /* partial downloads in <cache>/tmp */
	uint64_t unpacked, unpacked_bytes; /* wheels unpacked by the env stage
	                                    * (<cache>/unpacked/sha256/<hash>/) */
} ml_cache_stats;

/* Fills *out with what the cache holds now. Returns 0 or ML_EIO. */
int ml_cache_stats_get(ml_cache_stats *out, ml_cache *c, ml_err *err);

/* Removes every blob, index page, partial download, lock file and
 * unpacked wheel tree (environments keep their hard-linked copies). Needs a
 * cache opened ML_CACHE_EXCLUSIVE. *removed (may be NULL) counts what went.
 * Returns 0, ML_EFAIL (not exclusive) or ML_EIO. */
int ml_cache_clean(ml_cache *c, ml_cache_stats *removed, ml_err *err);

/* Removes blobs and index pages not used for `days` days (mtime older than
 * now - days * 86400 s; every use of an entry sets its mtime), the lock
 * files of blobs that are gone, and unpacked wheel trees whose blob is gone
 * and that were made before the cutoff. Needs ML_CACHE_EXCLUSIVE. *removed
 * (may be NULL) counts what went. Returns 0, ML_EFAIL or ML_EIO. */
int ml_cache_prune(ml_cache *c, unsigned days, ml_cache_stats *removed, ml_err *err);

/* Hashes every blob and removes each whose content does not match its
 * name. *checked and *removed (may be NULL) count blobs and bytes.
 * Returns 0 (whether or not something was removed) or ML_EIO. */
int ml_cache_verify(ml_cache *c, ml_cache_stats *checked, ml_cache_stats *removed, ml_err *err);

/* --- the download engine (src/fetch/download.c) ------------------------------ */

/* The most bytes a download of unknown size may bring (ml_download.size
 * -1): 16 GiB, the most a wheel may hold unpacked (ML_WHEEL_MAX_BYTES,
 * env.h), so no wheel archive is larger. A body that goes on past it
 * fails that source, its partial file removed: an endless body cannot
 * fill the disk. */
#define ML_FETCH_UNSIZED_MAX_BYTES ((int64_t)16 << 30)

/* One file to get into the cache. Fill the inputs with ml_download_init()
 * and ml_download_add_url() (or ml_fetch_resolve()), release with
 * ml_download_release(). */
typedef struct ml_download {
	/* in */
	char *name;       /* display name, normally the file name; owned */
	char **urls;      /* sources, tried in order (http, https, file); owned */
	size_t n_urls;    /* may be 0 when the blob is expected in the cache */
	char sha256[65];  /* 64 lower-case hex digits */
	int64_t size;     /* bytes, exact; -1: unknown (no server told it), learned
	                   * from the download (set once done) */
	int64_t max_size; /* while the size is unknown, the most bytes accepted;
	                   * <= 0: ML_FETCH_UNSIZED_MAX_BYTES */
	/* out */
	char path[4096]; /* the verified blob in the cache, once done */
	bool done;       /* path holds the verified file */
	int result;      /* 0 or the ML_E* code of the failure; see err */
	ml_err err;      /* why this file failed (redacted URLs) */
	bool from_cache; /* was in the cache already, verified on use */
	bool repaired;   /* a corrupted cached copy was removed and fetched again */
	int attempts;    /* requests made, all sources */
	uint64_t bytes;  /* bytes received over the network, all attempts */
	int url_used;    /* index into urls of the source that delivered, -1 */
} ml_download;

/* Sets the inputs of a zeroed d: name, sha256 (64 hex digits, any case;
 * stored lower case) and size (bytes, or -1 when unknown). Returns 0,
 * ML_EFAIL (not a sha256) or ML_ENOMEM. */
int ml_download_init(ml_download *d, const char *name, const char *sha256, int64_t size,
                     ml_err *err);

/* Appends a source URL (copied) unless d already has it. Returns 0 or
 * ML_ENOMEM. */
int ml_download_add_url(ml_download *d, const char *url, ml_err *err);

/* Frees what d owns and zeroes it. Accepts NULL. */
void ml_download_release(ml_download *d);

/* One transfer in progress, for progress display. */
typedef struct ml_fetch_active {
	const char *name; /* owned by the ml_download */
	uint64_t have;    /* bytes of the file received so far (resumed part included) */
	int64_t size;     /* bytes; -1 while unknown */
	int attempt;      /* 1 for the first request */
} ml_fetch_active;

/* What ml_fetch_all() reports to its progress callback. Every pointer is
 * valid only during the call. */
typedef struct ml_fetch_progress {
	size_t n_items, n_done, n_failed, n_from_cache;
	uint64_t total_bytes; /* sum of all sizes, bytes */
	uint64_t done_bytes;  /* finished files (cached ones too) + received of active */
	uint64_t net_bytes;   /* received over the network in this call */
	double elapsed_s;     /* seconds since the call began */
	double rate;          /* network bytes per second, averaged over ~2 s */
	const ml_fetch_active *active;
	size_t n_active;
	const char *note; /* a one-line event ("retrying ... after HTTP 503"), or NULL */
	bool final;       /* the last call: every item finished */
} ml_fetch_progress;

/* How to fetch: the options install, download and bundle share (their
 * option structs nest one, as libgit2's clone options nest
 * git_fetch_options; the command line parses them in one table,
 * src/cli/fetch_opts.c). Initialize with ML_FETCH_OPTS_INIT (every field
 * its default) and set fields. */
typedef struct ml_fetch_opts {
	int jobs;          /* concurrent transfers; <= 0: ML_FETCH_JOBS (install
	                    * also unpacks this many wheels at once; <= 0 there:
	                    * one per CPU) */
	int retries;       /* extra requests per source after retryable failures
	                    * that made no progress; < 0: ML_FETCH_RETRIES */
	ml_http_opts http; /* timeouts, trusted hosts, CA bundle */
	bool offline;      /* use only the cache and file:// sources */
	/* Called at most 10 times a second while transfers run, at once for
	 * notes, and once at the end with final set. May be NULL. */
	void (*on_progress)(const ml_fetch_progress *p, void *data);
	void *progress_data;
	/* Called on the calling thread for each item the moment it is done:
	 * its verified blob is at d->path (index: its place in items[]),
	 * so a caller can start reading it while the others still download.
	 * Items already done when ml_fetch_all() starts are reported first,
	 * in order. May be NULL. */
	void (*on_file)(size_t index, const ml_download *d, void *data);
	void *file_data;
	/* Asked on the calling thread between rounds of transfers (at least
	 * every 100 ms while they run; from any thread's point of view a
	 * plain poll, so it must be thread-safe itself): true stops the
	 * fetch - transfers in flight are abandoned (their partial files
	 * removed), and every item not done yet fails with "not fetched:
	 * stopped". May be NULL. */
	bool (*stop)(void *data);
	void *stop_data;
} ml_fetch_opts;

#define ML_FETCH_OPTS_INIT                                                                         \
	{                                                                                          \
		.retries = -1                                                                      \
	}

/* Sets fo's trusted hosts and CA bundle to cfg's (cfg NULL: none), the
 * index configuration every request of a command follows. sources.c. */
void ml_fetch_opts_use_index(ml_fetch_opts *fo, const ml_index_config *cfg);

/* --- sizes (src/fetch/sizes.c) ------------------------------------------------ */

/* Learns the size in bytes of the file at each urls[i], for indexes whose
 * pages give none (PEP 503 HTML has no PEP 700 "size") and pins without
 * sizes: o->jobs requests at a time (<= 0: ML_FETCH_JOBS) on one libcurl
 * multi handle whose connections they share, each under o->http's
 * transport policy (timeouts included), redirects checked hop by hop as
 * ml_http_get() checks them. Per URL:
 *   1. HEAD: the Content-Length of a 2xx answer is the size (file:// too);
 *   2. a HEAD answered 405 or 501 (a server that serves GET only), or a
 *      2xx without Content-Length: GET with "Range: bytes=0-0" (RFC 9110
 *      §14.2): the complete length of a 206's Content-Range or of a 416's
 *      unsatisfied range, or the Content-Length of a 200 (its body is not
 *      read);
 *   3. whatever else that GET gets: sizes[i] = -1, unknown; the download
 *      learns it (ml_fetch_all() takes files of unknown size).
 * o may be NULL (the defaults); its offline flag, retries and callbacks
 * are not used. Returns 0 (every sizes[i] set, -1 where unknown), or the
 * first failure of a HEAD request by URL order as ml_http_fail() maps it:
 * ML_ENET (connect failure, timeout, rejected certificate, refused
 * redirect or plain http, another status), ML_ENOENT (404, 410), ML_EFAIL;
 * or ML_ENOMEM. After a failure no further request starts; sizes not
 * learned are -1. */
int ml_http_sizes(int64_t *sizes, char *const *urls, size_t n, const ml_fetch_opts *o, ml_err *err);

/* Gets every item into the cache c, proven: a blob already there is
 * re-hashed on use (a corrupted one is removed and fetched again); the
 * rest are downloaded with the libcurl multi interface, o->jobs at a time,
 * largest first, over reused connections (HTTP/2 multiplexing with
 * CURLOPT_PIPEWAIT where the server offers it over TLS). Each transfer
 * streams through SHA-256 (OpenSSL EVP) into <cache>/tmp/<random>.part,
 * stops at the expected size, and is renamed into the store only after
 * size and hash match. Per source URL, in order:
 *   - TLS 1.2+, verification on; plain http only as ml_http_insecure_allowed
 *     allows; redirects are followed hop by hop (at most 10) under
 *     ml_http_policy_check(), so https -> http is refused;
 *   - retryable failures (connect errors, resets, timeouts, HTTP/2 stream
 *     errors, a body cut short, 408, 429, 5xx; see ml_http_fail) are retried
 *     up to o->retries times with exponential backoff (0.5 s doubling, at
 *     most 30 s) and jitter, honouring Retry-After (at most 120 s); a
 *     failed request that still moved the file 64 KiB past the furthest
 *     point reached costs no retry (at most 100 requests per source), so
 *     "503 forever" makes exactly retries+1 requests while a large file on
 *     a link that keeps breaking still completes; a rejected certificate
 *     and other 4xx are not retried;
 *   - a retry resumes with Range + If-Range (RFC 9110 §14.2, §13.1.5) from
 *     the bytes already verified-in-progress; a 200 answer restarts from
 *     zero; a Content-Range that does not continue the file (or a 416)
 *     discards the partial file and the next request starts over;
 *   - integrity: a Content-Length or Content-Range total other than the
 *     expected size, or a finished body whose SHA-256 differs, fails this
 *     source with ML_EINTEGRITY (message: file, URL, expected and actual);
 *     a body without a length is cut at the expected size and judged by
 *     its hash; the next source is tried;
 *   - a file of unknown size (size -1) takes the size the server declares
 *     (Content-Length, a Content-Range's complete length) and is checked
 *     against it from then on, like a known one; with none declared, the
 *     body runs to its end and its SHA-256 alone decides; either way it
 *     may not pass max_size bytes (ML_EINTEGRITY for that source), and the
 *     hash is checked before the file leaves tmp/, as for every file.
 *     Once done, size holds the verified file's size.
 * Another process downloading the same blob is waited for (per-blob lock),
 * then its result is used. Nothing unverified ever leaves tmp/, and no
 * .part file is left behind. Items whose `done` is already set (as
 * ml_fetch_resolve() leaves files it verified in the cache) are counted as
 * they are and not checked again. c must be an open cache; items and o are
 * borrowed; runs on the calling thread. Fills each item's outputs. Returns 0 when
 * every item is done; else ML_EINTEGRITY when some item failed for
 * integrity, otherwise the first failed item's code (ML_ENET, ML_ENOENT,
 * ML_EIO, ...), with err summarising ("2 of 50 files could not be
 * fetched") and each item's err saying why. ML_ENOMEM / ML_EFAIL for
 * setup failures. */
int ml_fetch_all(ml_download *items, size_t n, ml_cache *c, const ml_fetch_opts *o, ml_err *err);

/* The result ml_fetch_all() gives for items[0..n) as they are now: 0 when
 * every item is done; else ML_EINTEGRITY when some item failed for
 * integrity, otherwise the first failed item's code, with err set to that
 * item's err (one failure) or to a summary ("2 of 50 files could not be
 * fetched; first: ..."). For a caller that fetched more items than it
 * judges together. */
int ml_fetch_result(const ml_download *items, size_t n, ml_err *err);

/* --- where the plan's files come from (src/fetch/resolve.c) ------------------ */

struct ml_plan;

/* Prepares items[0 .. plan->n_files) (zeroed by the caller, one per plan
 * file, in plan order) for ml_fetch_all(): name = file name, sha256, size.
 * A file already in the cache is verified (ml_cache_blob_get: size and
 * sha256) and marked done/from_cache; a corrupted copy is removed
 * (`repaired`). For every other file its project is looked up, in order,
 * on the primary index, the extra indexes and the --find-links locations
 * of cfg (ml_index_project_opts / ml_find_links_project_opts, with c as
 * the page cache, so pages are revalidated with conditional requests),
 * several projects at a time, retrying retryable failures like
 * ml_fetch_all. Every listed file whose sha256 equals the plan's (or,
 * where a page gives no hash, whose file name is the plan's) adds its URL,
 * in source order. A file whose plan artifact names its URL (a->url: a
 * lock file, pip's resolution) is fetched from there, and its project is
 * not looked up. With o->offline only the cache, local --find-links
 * locations and file:// URLs are used. A source that fails is ignored when another one
 * lists the file. Outcomes for files found nowhere, each recorded in the
 * item's result and err so callers can list every one:
 *   ML_EINTEGRITY  a source lists the file name with another sha256
 *                  (message names both hashes): the call returns this
 *                  first;
 *   ML_ENET / ML_EPARSE / ...  a source failed (network, TLS, a bad page)
 *                  and none had the file: the call returns that code;
 *   ML_ENOENT      nobody lists it: err names the package and file, and
 *                  the call's err lists them all ("N files are neither in
 *                  the cache nor in --find-links: ..." when offline).
 * Plan files without a recorded name or hash (no `# mlsetup-file:` line)
 * are ML_EFAIL; one of unknown size (-1: no server told it) is fetched
 * with size -1, which ml_fetch_all() learns. cfg may be NULL (no sources: cache only). Returns
 * 0, ML_EINTEGRITY, ML_ENOENT, ML_ENET, ML_EPARSE, ML_EFAIL, ML_ENOMEM. */
int ml_fetch_resolve(ml_download *items, const struct ml_plan *plan, const ml_index_config *cfg,
                     ml_cache *c, const ml_fetch_opts *o, ml_err *err);

/* --- what plan asks of the sources (src/fetch/provider.c) ----------------------- */

/* The install pipeline binds these, with ml_http_sizes() and the
 * downloads, into the provider a plan is completed through
 * (ml_plan_provider, plan.h). */

struct ml_project_listing;
struct ml_resolution;
struct ml_resolve_request;

/* Asks every source of cfg (the primary index, the extra indexes, then
 * the --find-links locations; offline: local --find-links only) for each
 * project q[i].name of q[0..n), several at a time with ml_fetch_resolve's
 * retries and c as the page cache (may be NULL), and records in q[i]
 * every file each source lists (filename, url, sha256, size as the page
 * gives them), sources in that order, whether some source knows the
 * project, and the first source that failed (q[i].rc, q[i].err; a source
 * that does not have the project is no failure). The caller releases
 * each q[i] (ml_project_listing_release()). o may be NULL (defaults).
 * Returns 0, or ML_ENOMEM. */
int ml_fetch_list_projects(struct ml_project_listing *q, size_t n, const ml_index_config *cfg,
                           ml_cache *c, const ml_fetch_opts *o, ml_err *err);

/* uv, the resolver preferred where it can be had (src/install/uvtool.c
 * finds or fetches it). */
typedef struct ml_uv_tool {
	const char *path;      /* the uv executable; NULL: pip resolves */
	const char *version;   /* "0.13.9" */
	const char *cache_dir; /* uv's cache (in mlsetup's), or NULL: uv's own */
} ml_uv_tool;

/* With uv (uv->path set): ml_uv_resolve() first, told the same sources
 * and extra arguments, with a STEP note naming uv's version; a failure
 * other than ML_ENOMEM becomes a STEP note ("uv 0.13.9 did not
 * resolve ...: pip resolves it") and pip resolves as below. Otherwise, or
 * then: resolves rq's requirements file with the pip of rq->python, told the
 * sources of cfg (ml_index_config_pip_args(); cfg may be NULL: pip's
 * own): ml_pip_probe(), a STEP note through rq->note naming pip's version
 * and the target, ml_pip_resolve() (with --break-system-packages for an
 * externally managed interpreter, PEP 668, for the dry run only); a pick
 * from a local file:// URL pip gives no hash for is hashed here. Fills
 * *out (its picks are the caller's: ml_pip_picks_free()). Returns 0, or
 * what ml_pip_probe() and ml_pip_resolve() return (ML_ENOENT without pip,
 * ML_EFAIL, ML_EPARSE, ML_EIO, ML_ENOMEM). */
int ml_fetch_resolve_requirements(struct ml_resolution *out, const struct ml_resolve_request *rq,
                                  const ml_index_config *cfg, const ml_uv_tool *uv,
                                  ml_err *err);

/* --- a manifest's index sources (src/fetch/sources.c) ----------------------- */

struct ml_requirements;

/* The one place that turns a manifest, the command line and the
 * environment into index sources, for every command that fetches a
 * manifest's files (install, download), so they cannot disagree. The
 * manifest's own options join the flags as pip joins a requirements
 * file's options to its command line: its --find-links locations (a
 * relative path is taken from the manifest's directory, manifest_path, as
 * pip does, when it exists there) and --trusted-host hosts are appended,
 * its --no-index holds unless the flags give an --index-url, its
 * --index-url and --extra-index-url lines are the "manifest" layer of
 * ml_index_config_resolve(). manifest_path may be NULL (an embedded
 * manifest: paths are taken as written). With offline, a configuration
 * that names no index at all is no error: the sources are then the
 * --find-links locations only (no_index). python is the interpreter whose
 * pip tells its built-in index when nothing names one (NULL: "python3",
 * on Windows "python", from PATH). Sets *out (caller frees with
 * ml_index_config_free()). Returns what ml_index_config_resolve() returns. */
int ml_index_config_for_manifest(ml_index_config **out, const ml_index_flags *flags,
                                 const struct ml_requirements *manifest, const char *manifest_path,
                                 bool offline, const char *python, ml_err *err);

/* --- placing verified files in a directory (src/fetch/place.c) --------------- */

/* Puts every item whose `done` is set into dir (created with its parents
 * when missing and some item is done) under its name: a hard link to the
 * verified cache blob where the file system allows, else a copy, either
 * way by ml_fs_link_or_copy() (temporary name and rename), so dir never
 * holds a partial file. With index, then writes dir/index.html (atomically,
 * ml_fs_write_atomic): a PEP 503 page linking every placed file with a
 * "#sha256=" fragment, names sorted, so dir works as a pip --find-links
 * source both as a directory and as a page. Returns 0, ML_EIO (err names
 * the path) or ML_ENOMEM. */
int ml_fetch_place(const char *dir, const ml_download *items, size_t n, bool index, ml_err *err);

/* Writes a static PEP 503 "simple" repository over the done items, which
 * ml_fetch_place() put in dir/files_rel: dir/simple/index.html lists every
 * project, dir/simple/<project>/index.html (PEP 503 normalized name, from
 * the wheel file name's distribution) links each of its files as
 * ../../<files_rel>/<name>#sha256=<hex>. Every link is relative, so the
 * tree is an index wherever dir is: a file:// --index-url, or any static
 * web server that answers a directory with its index.html. Items of the
 * same name and sha256 are listed once. Names are sorted; pages are
 * written atomically (ml_fs_write_atomic). Returns 0, ML_EINTEGRITY (two
 * items of one name and different sha256), ML_EIO (err names the path) or
 * ML_ENOMEM. */
int ml_fetch_place_simple(const char *dir, const char *files_rel, const ml_download *items,
                          size_t n, ml_err *err);

/* --- the files of a lock (src/fetch/lock_files.c) ---------------------------- */

struct ml_lock;

/* What ml_fetch_lock_files() reports while it works. May be NULL. */
typedef struct ml_lock_files_opts {
	/* A line for people: detail false for a step ("asking the file
	 * server for 3 sizes the index did not give"), true for detail
	 * ("numpy: 42 files"). */
	void (*on_note)(const char *text, bool detail, void *data);
	void *data;
} ml_lock_files_opts;

/* Records, for every pinned (name, version) of lk, every wheel file of that
 * version the sources of cfg list (the primary index, the extra indexes,
 * then the --find-links locations; PEP 691 JSON, PEP 503 HTML), when it
 * has a sha256 and installs on one of lk's targets (ml_lock_wheel_fits);
 * one lookup per project. Sizes a page does not give (PEP 503 HTML has
 * none) are asked of the file server with HEAD requests (ml_http_sizes).
 * *n_yanked (may be NULL) counts recorded files the index marks yanked
 * (PEP 592; used because pinned with ==). A project missing from a source
 * is skipped. Returns 0, or the first failing source's code (ML_ENET,
 * ML_EPARSE, ...), ML_ENOMEM. */
int ml_fetch_lock_files(struct ml_lock *lk, const ml_index_config *cfg, const ml_lock_files_opts *o,
                        size_t *n_yanked, ml_err *err);

/* Writes pip's index options for cfg into args (at most cap entries,
 * pointing into cfg): --no-index, --index-url URL, --extra-index-url URL...,
 * --find-links LOC..., --trusted-host HOST..., --cert FILE. Returns how
 * many were written. */
size_t ml_index_config_pip_args(char **args, size_t cap, const ml_index_config *cfg);

/* --- a project's git repository (src/fetch/git.c) ------------------------------ */

struct ml_project_source;

/* What ml_git_checkout() did. */
typedef struct ml_git_checkout_result {
	char commit[41]; /* the commit now checked out (REV resolved) */
	bool reused;     /* dir already was a clean checkout of the URL at REV */
} ml_git_checkout_result;

/* Puts a checkout of the git repository src names (src->git) at dir, at
 * src->rev (a commit id, full or abbreviated, a tag or a branch of the
 * remote; none: the remote's default branch), cloned with libgit2 under
 * the rules libcurl's requests follow (ml_http_opts) as far as libgit2
 * takes them: the proxy ml_http_proxy_for() names for the URL (http:// and
 * https:// proxies; none for no_proxy hosts and loopback); the system's CA
 * certificates (ml_git_init()) and, on Linux, http->cert's besides
 * (libgit2's certificate store is process-wide and only grows, so --cert
 * adds to the system's there, where libcurl takes it alone; Windows:
 * WinHTTP and the Windows store). http may be NULL; its timeouts and
 * trusted hosts are not used (libgit2 1.5 has no connect timeout).
 * Credentials come from the URL (src->user, src->password), the
 * environment (MLSETUP_GIT_USERNAME, MLSETUP_GIT_PASSWORD or
 * MLSETUP_GIT_TOKEN), else ~/.netrc or $NETRC for the URL's host
 * (ml_netrc_lookup, as libcurl reads it), and for ssh:// from the SSH
 * agent; they are never printed or written (the URL libgit2 sees has
 * none). An ssh:// URL needs a libgit2 built with SSH (ML_EUNSUPPORTED
 * otherwise).
 *
 * An existing dir is reused when it is a git checkout whose origin is the
 * URL, with no changes to tracked files, and HEAD is REV's commit (REV is
 * looked up locally first, then after fetching origin); otherwise it is
 * never touched (ML_EFAIL naming what differs) unless replace is set
 * (a checkout of mlsetup's own, in the cache), when it is cloned afresh.
 * A clone is made beside dir and renamed into place when REV is checked
 * out, so a failure leaves no half checkout. REV is checked out detached.
 * Returns 0; ML_EUSAGE (REV names no commit, tag or branch); ML_EFAIL;
 * ML_ENET (the repository cannot be reached or read: libgit2's reason,
 * without credentials); ML_EUNSUPPORTED; ML_EIO; ML_ENOMEM. */
int ml_git_checkout(ml_git_checkout_result *out, const struct ml_project_source *src,
                    const char *dir, bool replace, const ml_http_opts *http, ml_err *err);

#endif /* MLSETUP_FETCH_H */
