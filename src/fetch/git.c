/*
 * git.c - a project's git repository, checked out at a revision: cloned
 * with libgit2 beside the target directory and renamed into place, or an
 * existing checkout reused when it is clean and already there. Credentials
 * reach libgit2 through its callback only, never inside a URL, so no
 * message can show them.
 *
 * libgit2 has its own HTTP transport, so the rules every libcurl request
 * follows (http.c) are given to it here: the same proxy for the same URL
 * (ml_http_proxy_for: https_proxy / http_proxy / ALL_PROXY, never for
 * no_proxy hosts or loopback; libgit2 speaks to HTTP proxies only), the
 * CA bundle of --cert on top of the system's (ml_git_init), and the
 * credentials ~/.netrc (or $NETRC) gives the host when neither the URL nor
 * MLSETUP_GIT_* does.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "internal.h"
#include "mlsetup/plan.h"

/* What one clone or fetch of src uses besides its URL. */
typedef struct cred_state {
	const ml_project_source *src;
	int tries;
	char proxy[1024];               /* the proxy for src->url, "" for none */
	char login[256], password[256]; /* from netrc, when it was read */
} cred_state;

/* The proxy libcurl would use for src's URL, as libgit2 takes it (an
 * http:// or https:// URL; a bare "host:port" is http). A SOCKS proxy
 * libgit2 cannot use: the clone goes direct, as it always did. */
static void find_proxy(cred_state *cs)
{
	char p[sizeof(cs->proxy)];
	const char *v = ml_http_proxy_for(p, sizeof(p), cs->src->url);
	cs->proxy[0] = '\0';
	if (!v)
		return;
	if (!strstr(v, "://"))
		snprintf(cs->proxy, sizeof(cs->proxy), "http://%s", v);
	else if (!strncasecmp(v, "http://", 7) || !strncasecmp(v, "https://", 8))
		ml_strlcpy(cs->proxy, v, sizeof(cs->proxy));
}

/* The credentials netrc gives url's host (for user, when the URL named
 * one), as libcurl's CURL_NETRC_OPTIONAL finds them for HTTP requests. */
static bool netrc_for(cred_state *cs, const char *url, const char *user)
{
	char host[256];
	return mlf_url_host(host, sizeof(host), url) &&
	       ml_netrc_lookup(host, user, cs->login, cs->password, sizeof(cs->login));
}

static int credentials(git_credential **out, const char *url, const char *user_from_url,
                       unsigned int allowed, void *payload)
{
	cred_state *cs = payload;
	if (cs->tries++ > 0)
		return GIT_EAUTH; /* the ones we have were refused: no loop */
	const char *user = cs->src->user ? cs->src->user : getenv("MLSETUP_GIT_USERNAME");
	const char *pass = cs->src->password ? cs->src->password : getenv("MLSETUP_GIT_PASSWORD");
	if (!pass)
		pass = getenv("MLSETUP_GIT_TOKEN");
	/* the URL's and the environment's first, then netrc's, as for HTTP */
	if (!pass && (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) &&
	    netrc_for(cs, url, user ? user : user_from_url)) {
		user = cs->login;
		pass = cs->password;
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(
		        out, user ? user : user_from_url ? user_from_url : "git");
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && (user || pass))
		return git_credential_userpass_plaintext_new(out, user ? user : "git",
		                                             pass ? pass : "");
	return GIT_PASSTHROUGH;
}

static const char *git_msg(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown error";
}

/* The commit REV names in repo: a remote branch, a tag, a local branch or
 * a commit id (full or abbreviated). */
static int resolve_rev(git_oid *out, git_repository *repo, const char *rev)
{
	char spec[600];
	const char *forms[] = {"refs/remotes/origin/%s", "refs/tags/%s", "refs/heads/%s", "%s"};
	for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
		snprintf(spec, sizeof(spec), forms[i], rev);
		git_object *obj = NULL, *commit = NULL;
		if (git_revparse_single(&obj, repo, spec) != 0)
			continue;
		int rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
		git_object_free(obj);
		if (rc == 0) {
			git_oid_cpy(out, git_object_id(commit));
			git_object_free(commit);
			return 0;
		}
	}
	return -1;
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	bool empty = true;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* True when tracked files differ from HEAD (untracked files, such as an
 * environment inside the checkout, do not count). */
static bool dirty(git_repository *repo)
{
	git_status_options so;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	git_status_list *st = NULL;
	if (git_status_list_new(&st, repo, &so) != 0)
		return true;
	bool d = git_status_list_entrycount(st) > 0;
	git_status_list_free(st);
	return d;
}

/* Credentials and proxy of a fetch or clone. */
static void fetch_setup(git_fetch_options *fo, cred_state *cs)
{
	fo->callbacks.credentials = credentials;
	fo->callbacks.payload = cs;
	find_proxy(cs);
	if (cs->proxy[0]) {
		fo->proxy_opts.type = GIT_PROXY_SPECIFIED;
		fo->proxy_opts.url = cs->proxy;
	} else {
		fo->proxy_opts.type = GIT_PROXY_NONE;
	}
}

/* Forgets what netrc gave (the passwords do not outlive the clone). */
static void cred_clear(cred_state *cs)
{
	for (volatile char *c = cs->password; c < cs->password + sizeof(cs->password); c++)
		*c = 0;
}

/* Why an existing dir cannot be reused ("" when it can); fills out. */
static int try_reuse(ml_git_checkout_result *out, const ml_project_source *src, const char *dir,
                     char *why, size_t whysz)
{
	why[0] = '\0';
	git_repository *repo = NULL;
	if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
		snprintf(why, whysz, "it is not a git checkout");
		return 0;
	}
	git_remote *origin = NULL;
	const char *url = NULL;
	if (git_remote_lookup(&origin, repo, "origin") == 0)
		url = git_remote_url(origin);
	git_oid head, want;
	if (!url || strcmp(url, src->url) != 0) {
		snprintf(why, whysz, "it is a checkout of '%s', not of '%s'", url ? url : "(no origin)",
		         src->url);
	} else if (dirty(repo)) {
		snprintf(why, whysz, "it has changes to tracked files");
	} else if (git_reference_name_to_id(&head, repo, "HEAD") != 0) {
		snprintf(why, whysz, "it has no commit checked out");
	} else if (src->rev) {
		bool found = resolve_rev(&want, repo, src->rev) == 0;
		if (!found) { /* REV may be newer than the checkout: ask origin */
			cred_state cs = {.src = src};
			git_fetch_options fo;
			git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
			fetch_setup(&fo, &cs);
			if (git_remote_fetch(origin, NULL, &fo, NULL) == 0)
				found = resolve_rev(&want, repo, src->rev) == 0;
			cred_clear(&cs);
		}
		char h[41];
		git_oid_tostr(h, sizeof(h), &head);
		if (!found)
			snprintf(why, whysz, "REV '%s' names no commit, tag or branch there", src->rev);
		else if (!git_oid_equal(&want, &head))
			snprintf(why, whysz, "it is at commit %s, not at '%s' (%.12s)", h, src->rev,
			         git_oid_tostr_s(&want));
	}
	if (!why[0]) {
		git_oid_tostr(out->commit, sizeof(out->commit), &head);
		out->reused = true;
	}
	git_remote_free(origin);
	git_repository_free(repo);
	return 0;
}

/* Clones src into tmp and checks REV out there; *commit gets its id. */
static int clone_at(char commit[41], const ml_project_source *src, const char *tmp, ml_err *err)
{
	cred_state cs = {.src = src};
	git_clone_options co;
	git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
	fetch_setup(&co.fetch_opts, &cs);
	git_repository *repo = NULL;
	int cloned = git_clone(&repo, src->url, tmp, &co);
	cred_clear(&cs);
	if (cloned != 0) {
		ml_err_set(err, ML_ENET, "cannot clone '%s': %s", src->url, git_msg());
		ml_err_hint(err,
		            cs.tries ? "check the credentials (in the URL, MLSETUP_GIT_USERNAME "
		                       "and MLSETUP_GIT_TOKEN, or ~/.netrc)"
		                     : "check the URL and that the repository can be reached");
		return ML_ENET;
	}
	git_oid want;
	int rc = 0;
	if (src->rev) {
		if (resolve_rev(&want, repo, src->rev) != 0) {
			ml_err_set(err, ML_EUSAGE,
			           "REV '%s' names no commit, tag or branch of '%s'", src->rev,
			           src->url);
			ml_err_hint(err, "the text after the last '@' of the URL is the revision");
			rc = ML_EUSAGE;
		} else {
			git_object *obj = NULL;
			git_checkout_options ck;
			git_checkout_options_init(&ck, GIT_CHECKOUT_OPTIONS_VERSION);
			ck.checkout_strategy = GIT_CHECKOUT_FORCE;
			if (git_object_lookup(&obj, repo, &want, GIT_OBJECT_COMMIT) != 0 ||
			    git_checkout_tree(repo, obj, &ck) != 0 ||
			    git_repository_set_head_detached(repo, &want) != 0)
				rc = ml_err_set(err, ML_EIO, "cannot check out '%s' of '%s': %s",
				                src->rev, src->url, git_msg());
			git_object_free(obj);
		}
	} else if (git_reference_name_to_id(&want, repo, "HEAD") != 0) {
		rc = ml_err_set(err, ML_EFAIL, "'%s' has no commit on its default branch", src->url);
	}
	if (!rc)
		git_oid_tostr(commit, 41, &want);
	git_repository_free(repo);
	return rc;
}

int ml_git_checkout(ml_git_checkout_result *out, const ml_project_source *src, const char *dir,
                    bool replace, const ml_http_opts *http, ml_err *err)
{
	memset(out, 0, sizeof(*out));
	int rc = ml_git_init(err);
	if (rc)
		return rc;
#ifndef _WIN32 /* WinHTTP verifies against the Windows store: no CA file */
	const char *cert = http ? http->cert : NULL;
	if (cert && cert[0] && git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, cert, NULL) < 0) {
		ml_err_set(err, ML_EFAIL, "cannot load CA certificates from '%s': %s", cert,
		           git_msg());
		ml_err_hint(err, "--cert takes a PEM bundle of CA certificates");
		return ML_EFAIL;
	}
#else
	(void)http;
#endif
	if (!strcmp(src->scheme, "ssh") && !(git_libgit2_features() & GIT_FEATURE_SSH)) {
		ml_err_set(err, ML_EUNSUPPORTED,
		           "'%s': this mlsetup's libgit2 was built without SSH support", src->url);
		ml_err_hint(err, "use the repository's https:// URL (a token in the URL or in "
		                 "MLSETUP_GIT_TOKEN), or clone it yourself and give the directory");
		return ML_EUNSUPPORTED;
	}
	struct stat st;
	bool exists = lstat(dir, &st) == 0;
	if (exists && !(S_ISDIR(st.st_mode) && dir_empty(dir))) {
		char why[700];
		try_reuse(out, src, dir, why, sizeof(why));
		if (!why[0])
			return 0;
		if (!replace) {
			ml_err_set(err, ML_EFAIL, "'%s' exists and %s: not overwritten", dir, why);
			ml_err_hint(err, "give --checkout DIR for a fresh checkout elsewhere, or move "
			                 "'%s' aside",
			            dir);
			return ML_EFAIL;
		}
	}
	char parent[4096];
	const char *base;
	if (ml_fs_split_path(parent, sizeof(parent), &base, dir) != 0)
		return ml_err_set(err, ML_EFAIL, "checkout path too long: '%s'", dir);
	if (parent[0] && (rc = ml_fs_mkdirs(parent, 0755)) != 0)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", parent, strerror(-rc));
	char *tmp = ml_asprintf("%s%s.mlsetup-clone-%s-%ld", parent, parent[0] ? "/" : "", base,
	                        (long)getpid());
	if (!tmp)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_fs_rm_tree(tmp);
	rc = clone_at(out->commit, src, tmp, err);
	if (!rc && exists)
		rc = ml_fs_rm_tree(dir) == 0 ? 0 : ml_err_set(err, ML_EIO, "cannot replace '%s'", dir);
	if (!rc && rename(tmp, dir) != 0)
		rc = ml_err_set(err, ML_EIO, "cannot move the checkout to '%s': %s", dir,
		                strerror(errno));
	if (rc)
		ml_fs_rm_tree(tmp);
	free(tmp);
	return rc;
}
