/*
 * project.c - a user's project as input: what --project names (a local
 * directory, or a git URL with an optional @REV, pip's "git+" form
 * included) and which of its requirements files are the candidates, in
 * preference order. Reads files only; cloning is the fetch stage's
 * (src/fetch/git.c), choosing among the candidates the install pipeline's
 * (src/install/project.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

void ml_project_source_release(ml_project_source *src)
{
	if (!src)
		return;
	free(src->path);
	free(src->url);
	free(src->user);
	free(src->password);
	free(src->rev);
	free(src->name);
	memset(src, 0, sizeof(*src));
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int ml_project_source_parse(ml_project_source *out, const char *spec, ml_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return ml_err_set(err, ML_EUSAGE, "--project needs a directory or a git URL");
	const char *u = spec;
	bool git_plus = strncmp(u, "git+", 4) == 0;
	if (git_plus)
		u += 4;
	const char *sep = strstr(u, "://");
	if (!sep) {
		if (git_plus)
			return ml_err_set(err, ML_EUSAGE,
			                  "project URL 'git+%.200s' names no scheme (git+https://, "
			                  "git+file://)",
			                  u);
		out->path = strdup(spec);
		return out->path ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	size_t sl = (size_t)(sep - u);
	static const char *const schemes[] = {"https", "http", "file", "ssh"};
	bool known = false;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(*schemes); i++)
		if (strlen(schemes[i]) == sl && strncmp(u, schemes[i], sl) == 0)
			known = true;
	if (!known) {
		ml_err_set(err, ML_EUSAGE, "project URL scheme '%.*s' is not supported",
		           sl > 32 ? 32 : (int)sl, u);
		ml_err_hint(err, "use https://, http://, file:// or ssh:// (also pip's git+https:// "
		                 "and git+file://), or a local directory");
		return ML_EUSAGE;
	}
	out->git = true;
	memcpy(out->scheme, u, sl);
	out->scheme[sl] = '\0';
	const char *auth = sep + 3;
	const char *path = strchr(auth, '/');
	if (!path || !path[1]) {
		const char *h = auth;
		for (const char *c = auth; *c && *c != '/'; c++)
			if (*c == '@')
				h = c + 1;
		ml_err_set(err, ML_EUSAGE, "project URL '%s://%.*s' names no repository path",
		           out->scheme, (int)strcspn(h, "/"), h);
		ml_project_source_release(out);
		return ML_EUSAGE;
	}
	/* credentials: userinfo of the authority, taken out of the URL */
	const char *at = NULL;
	for (const char *c = auth; c < path; c++)
		if (*c == '@')
			at = c;
	const char *host = auth;
	if (at) {
		const char *colon = memchr(auth, ':', (size_t)(at - auth));
		if (colon) {
			out->user = dupn(auth, (size_t)(colon - auth));
			out->password = dupn(colon + 1, (size_t)(at - colon - 1));
		} else {
			out->user = dupn(auth, (size_t)(at - auth));
		}
		host = at + 1;
		if (!out->user || (colon && !out->password))
			goto nomem;
	}
	/* @REV: after the last '@' of the path */
	const char *rev = strrchr(path, '@');
	size_t pl = rev ? (size_t)(rev - path) : strlen(path);
	if (rev) {
		if (!rev[1]) {
			ml_err_set(err, ML_EUSAGE, "project URL '%s://%.*s%.*s@' has an empty REV",
			           out->scheme, (int)(path - host), host, (int)pl, path);
			ml_err_hint(err, "put a commit, tag or branch after '@', or drop the '@'");
			ml_project_source_release(out);
			return ML_EUSAGE;
		}
		if (!(out->rev = strdup(rev + 1)))
			goto nomem;
	}
	out->url = ml_asprintf("%s://%.*s%.*s", out->scheme, (int)(path - host), host, (int)pl,
	                       path);
	if (!out->url)
		goto nomem;
	/* the repository name: the last segment, without ".git" */
	size_t e = pl;
	while (e > 1 && path[e - 1] == '/')
		e--;
	size_t b = e;
	while (b > 0 && path[b - 1] != '/')
		b--;
	size_t nl = e - b;
	if (nl >= 4 && strncmp(path + e - 4, ".git", 4) == 0)
		nl -= 4;
	if (nl == 0 || (nl == 1 && path[b] == '.') || (nl == 2 && !strncmp(path + b, "..", 2))) {
		ml_err_set(err, ML_EUSAGE, "project URL '%s' names no repository", out->url);
		ml_err_hint(err, "the URL's path must end in the repository's name "
		                 "(https://host/owner/name.git)");
		ml_project_source_release(out);
		return ML_EUSAGE;
	}
	if (!(out->name = dupn(path + b, nl)))
		goto nomem;
	return 0;
nomem:
	ml_project_source_release(out);
	return ml_err_set(err, ML_ENOMEM, "out of memory");
}

/* True when the requirements file at path names torch, following -r. */
static bool requires_torch(const char *path)
{
	ml_requirements *r = NULL;
	if (ml_requirements_load_tree(&r, path, 0, NULL) != 0)
		return false;
	bool yes = false;
	for (size_t i = 0; i < r->n_reqs && !yes; i++)
		yes = strcmp(r->reqs[i].normalized, "torch") == 0;
	ml_requirements_free(r);
	return yes;
}

static int push(char ***list, size_t *n, char *s)
{
	if (!s)
		return ML_ENOMEM;
	char **p = realloc(*list, (*n + 1) * sizeof(*p));
	if (!p) {
		free(s);
		return ML_ENOMEM;
	}
	*list = p;
	p[(*n)++] = s;
	return 0;
}

static void free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* [tool.mlsetup] manifests of dir/pyproject.toml: 1 when it names them (the
 * list filled), 0 when it does not, < 0 on an error (err set). */
static int from_pyproject(char ***list, size_t *n, const char *dir, ml_err *err)
{
	char *pp = ml_asprintf("%s/pyproject.toml", dir);
	if (!pp)
		return ML_ENOMEM;
	FILE *f = fopen(pp, "rb");
	if (!f) {
		free(pp);
		return 0;
	}
	ml_buf text = ML_BUF_INIT;
	char chunk[8192];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0 && text.len < (16u << 20))
		ml_buf_add(&text, chunk, k);
	bool bad = ferror(f);
	fclose(f);
	int rc = 0;
	ml_toml *doc = NULL;
	if (bad) {
		ml_err_set(err, ML_EIO, "cannot read '%s'", pp);
		rc = ML_EIO;
	} else if (ml_toml_parse(&doc, pp, text.data ? text.data : "", text.len, err) != 0) {
		rc = ML_EPARSE;
	}
	ml_buf_release(&text);
	const ml_toml *tool = rc ? NULL : ml_toml_get(doc, "tool");
	const ml_toml *mt = ml_toml_get(tool, "mlsetup");
	const ml_toml *ms = ml_toml_get(mt, "manifests");
	if (!rc && ms) {
		if (ms->kind != ML_TOML_ARRAY || ms->n == 0) {
			ml_err_set(err, ML_EPARSE,
			           "'%s' line %d: [tool.mlsetup] manifests must be a non-empty array "
			           "of file names",
			           pp, ms->line);
			rc = ML_EPARSE;
		}
		for (size_t i = 0; !rc && i < ms->n; i++) {
			const ml_toml *v = ms->items[i];
			if (v->kind != ML_TOML_STRING || !v->len || strlen(v->str) != v->len) {
				ml_err_set(err, ML_EPARSE,
				           "'%s' line %d: [tool.mlsetup] manifests[%zu] is not a file "
				           "name",
				           pp, v->line, i);
				rc = ML_EPARSE;
				break;
			}
			char *path = v->str[0] == '/' ? strdup(v->str)
			                              : ml_asprintf("%s/%s", dir, v->str);
			if (!path) {
				rc = ML_ENOMEM;
				break;
			}
			if (!is_file(path)) {
				ml_err_set(err, ML_ENOENT,
				           "'%s' line %d: manifest '%s' of [tool.mlsetup] does not "
				           "exist",
				           pp, v->line, v->str);
				free(path);
				rc = ML_ENOENT;
				break;
			}
			if (push(list, n, path)) {
				rc = ML_ENOMEM;
				break;
			}
		}
		if (!rc)
			rc = 1;
	}
	ml_toml_free(doc);
	free(pp);
	return rc;
}

int ml_project_candidates(char ***out, size_t *n_out, bool *no_torch, const char *dir,
                          ml_err *err)
{
	*out = NULL;
	*n_out = 0;
	*no_torch = false;
	char **list = NULL;
	size_t n = 0;
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return ml_err_set(err, ML_ENOENT, "project directory '%s' %s", dir,
		                  errno == ENOENT ? "does not exist" : "is not a directory");
	int rc = from_pyproject(&list, &n, dir, err);
	if (rc < 0) {
		free_list(list, n);
		return rc == ML_ENOMEM ? ml_err_set(err, ML_ENOMEM, "out of memory") : rc;
	}
	if (rc == 1) {
		bool any = false;
		for (size_t i = 0; i < n; i++)
			any = any || requires_torch(list[i]);
		*no_torch = !any;
		*out = list;
		*n_out = n;
		return 0;
	}
	DIR *d = opendir(dir);
	if (!d)
		return ml_err_set(err, ML_EIO, "cannot read project directory '%s': %s", dir,
		                  strerror(errno));
	char **others = NULL;
	size_t n_others = 0;
	struct dirent *de;
	rc = 0;
	while (!rc && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, "requirements.txt") == 0 ||
		    fnmatch("requirements*.txt", de->d_name, FNM_PERIOD) != 0)
			continue;
		rc = push(&others, &n_others, strdup(de->d_name));
	}
	closedir(d);
	if (rc) {
		free_list(others, n_others);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (n_others)
		qsort(others, n_others, sizeof(*others), cmp_str);
	char *main_path = ml_asprintf("%s/requirements.txt", dir);
	bool has_main = main_path && is_file(main_path);
	bool main_torch = has_main && requires_torch(main_path);
	if (has_main)
		rc = push(&list, &n, main_path);
	else
		free(main_path);
	bool any_torch = main_torch;
	for (size_t i = 0; !rc && i < n_others; i++) {
		char *p = ml_asprintf("%s/%s", dir, others[i]);
		if (!p) {
			rc = ML_ENOMEM;
			break;
		}
		if (!is_file(p) || !requires_torch(p)) {
			free(p);
			continue;
		}
		any_torch = true;
		rc = push(&list, &n, p);
	}
	free_list(others, n_others);
	if (rc) {
		free_list(list, n);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (n == 0) {
		ml_err_set(err, ML_ENOENT,
		           "project '%s' has no requirements.txt, no requirements*.txt that "
		           "requires torch, and no [tool.mlsetup] manifests in pyproject.toml",
		           dir);
		ml_err_hint(err, "add a requirements.txt, or name the candidates with --manifest");
		return ML_ENOENT;
	}
	*no_torch = !any_torch;
	*out = list;
	*n_out = n;
	return 0;
}

void ml_candidate_release(ml_candidate *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->path);
	free(c->reason);
	free(c->torch_file);
	free(c->sass);
	free(c->ptx);
	memset(c, 0, sizeof(*c));
}

void ml_project_info_free(ml_project_info *p)
{
	if (!p)
		return;
	free(p->url);
	free(p->rev);
	free(p->path);
	free(p);
}
