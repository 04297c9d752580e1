/*
 * netrc.c - credentials from ~/.netrc (or $NETRC), read the way libcurl's
 * CURL_NETRC_OPTIONAL reads them for every HTTP request of mlsetup, for the
 * transports that are not libcurl (libgit2's, in git.c), so that a host's
 * credentials reach a git clone exactly where they reach an index page.
 *
 * The format (the inetutils ftp(1) manual, as libcurl takes it): tokens
 * separated by blanks and newlines, "machine NAME" starting an entry,
 * "default" the entry for every other host, "login", "password" and
 * "account" (ignored) inside an entry, "macdef NAME" followed by a macro
 * body that runs to the next empty line. A token may be quoted with
 * double quotes (libcurl 7.84 and newer), with \" and \\ inside.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

#define NETRC_MAX_BYTES (1u << 20)

/* The next token of *p (quoted or bare) into tok (sz bytes); *p moves past
 * it. Returns false at the end. A "macdef" body is skipped by the caller. */
static bool next_token(const char **p, char *tok, size_t sz)
{
	const char *s = *p;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s) {
		*p = s;
		return false;
	}
	size_t n = 0;
	if (*s == '"') {
		for (s++; *s && *s != '"'; s++) {
			if (*s == '\\' && s[1])
				s++;
			if (n + 1 < sz)
				tok[n++] = *s;
		}
		if (*s == '"')
			s++;
	} else {
		for (; *s && !isspace((unsigned char)*s); s++)
			if (n + 1 < sz)
				tok[n++] = *s;
	}
	tok[n] = '\0';
	*p = s;
	return true;
}

/* Skips a macdef body: up to and including the next empty line. */
static void skip_macro(const char **p)
{
	const char *s = strchr(*p, '\n');
	while (s && s[1] && s[1] != '\n')
		s = strchr(s + 1, '\n');
	*p = s ? s + 1 + (s[1] == '\n') : *p + strlen(*p);
}

/* Looks host up in the netrc text. */
static bool lookup(const char *text, const char *host, const char *user, char *login,
                   char *password, size_t sz)
{
	char tok[1024], l[1024] = "", pw[1024] = "";
	bool in = false, is_default = false, found = false;
	bool have_pw = false;
	const char *p = text;
	/* an entry ends where the next "machine" or "default" begins */
	for (;;) {
		bool more = next_token(&p, tok, sizeof(tok));
		bool starts = more && (!strcmp(tok, "machine") || !strcmp(tok, "default"));
		if (!more || starts) {
			if (in && have_pw && (!user || !strcmp(l, user))) {
				/* a machine entry wins over default, which only counts
				 * when no machine entry matched */
				ml_strlcpy(login, l, sz);
				ml_strlcpy(password, pw, sz);
				found = true;
				if (!is_default)
					return true;
			}
			if (!more)
				return found;
			in = false;
			l[0] = pw[0] = '\0';
			have_pw = false;
			is_default = !strcmp(tok, "default");
			if (is_default) {
				in = !found;
			} else {
				if (!next_token(&p, tok, sizeof(tok)))
					return found;
				in = strcasecmp(tok, host) == 0;
			}
			continue;
		}
		if (!strcmp(tok, "macdef")) {
			next_token(&p, tok, sizeof(tok)); /* its name */
			skip_macro(&p);
		} else if (!strcmp(tok, "login") || !strcmp(tok, "password") ||
		           !strcmp(tok, "account")) {
			char which = tok[0];
			if (!next_token(&p, tok, sizeof(tok)))
				return found;
			if (which == 'l')
				ml_strlcpy(l, tok, sizeof(l));
			else if (which == 'p') {
				ml_strlcpy(pw, tok, sizeof(pw));
				have_pw = true;
			}
		}
	}
}

bool ml_netrc_lookup(const char *host, const char *user, char *login, char *password, size_t sz)
{
	if (!host || !host[0] || !login || !password || !sz)
		return false;
	login[0] = password[0] = '\0';
	char path[4096];
	const char *env = getenv("NETRC");
	if (env && env[0]) {
		ml_strlcpy(path, env, sizeof(path));
	} else {
		const char *home = getenv("HOME");
		if (!home || !home[0] || ml_pathf(path, sizeof(path), "%s/.netrc", home))
			return false;
	}
	char *text = NULL;
	size_t len = 0;
	ml_err ignored = ML_ERR_INIT;
	if (ml_os_read_file(&text, &len, NULL, path, NETRC_MAX_BYTES, &ignored) != 0)
		return false;
	bool ok = lookup(text, host, user, login, password, sz);
	for (volatile char *c = text; c < text + len; c++)
		*c = 0; /* the passwords do not outlive the lookup in freed memory */
	free(text);
	if (!ok)
		login[0] = password[0] = '\0';
	return ok;
}
