/*
 * head.c - learns file sizes with HTTP HEAD requests (Content-Length), for
 * indexes whose pages don't carry PEP 700 sizes (PEP 503 HTML has none).
 * One libcurl handle serves all URLs so connections are reused. The same
 * rules as every other request apply: TLS 1.2+ with verification, plain
 * http only where ml_http_insecure_allowed() says so, no https -> http
 * redirect, errors through ml_http_fail().
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "internal.h"

int ml_http_sizes(int64_t *sizes, char *const *urls, size_t n, char *const *trusted_hosts,
                  size_t n_trusted, const char *cert, ml_err *err)
{
	CURL *h = curl_easy_init();
	if (!h)
		return ml_err_set(err, ML_ENOMEM, "cannot create an HTTP handle");
	int rc = 0;
	char errbuf[CURL_ERROR_SIZE];
	for (size_t i = 0; i < n && !rc; i++) {
		sizes[i] = -1;
		if (strncmp(urls[i], "https://", 8) != 0 &&
		    !ml_http_insecure_allowed(urls[i], trusted_hosts, n_trusted)) {
			char red[1024];
			ml_url_redact(red, sizeof(red), urls[i]);
			rc = ml_err_set(err, ML_ENET, "refusing plain http for '%s'", red);
			ml_err_hint(err, "use https, or --trusted-host HOST for a trusted host");
			break;
		}
		errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_URL, urls[i]);
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
		/* Redirects may only stay on https when the request started there. */
		curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
		                 strncmp(urls[i], "https://", 8) == 0 ? "https" : "http,https");
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https,file");
		curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 30L);
		curl_easy_setopt(h, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(h, CURLOPT_USERAGENT, "mlsetup/" ML_VERSION);
		if (cert || ml_os_ca_file())
			curl_easy_setopt(h, CURLOPT_CAINFO, cert ? cert : ml_os_ca_file());
		if (!cert && ml_os_ca_dir())
			curl_easy_setopt(h, CURLOPT_CAPATH, ml_os_ca_dir());
		CURLcode cc = curl_easy_perform(h);
		long status = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (cc != CURLE_OK || (status && (status < 200 || status >= 300))) {
			rc = ml_http_fail(err, NULL, (int)cc, status, urls[i], errbuf);
			break;
		}
		curl_off_t len = -1;
		if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) == CURLE_OK &&
		    len >= 0)
			sizes[i] = (int64_t)len;
	}
	curl_easy_cleanup(h);
	return rc;
}
