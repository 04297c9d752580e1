/*
 * index_sources.c - which package indexes to ask, and why.
 *
 * The one place index URLs are decided (docs/ARCHITECTURE.md: never from C
 * literals). Layers, highest first: command-line flags, MLSETUP_* and then
 * PIP_* environment variables, pip's configuration files read where and in
 * the order pip reads them (pip docs "Configuration"), the manifest's own
 * --index-url / --extra-index-url lines, and last pip's built-in default,
 * asked of pip itself. Every value keeps its origin so `plan` can say
 * where it came from.
 *
 * The INI reader follows Python's configparser as pip uses it: sections,
 * "key = value" or "key: value", full-line '#'/';' comments, indented
 * continuation lines joined with newlines, no inline comments.
 */
#include <ctype.h>
#include <errno.h>
#ifndef _WIN32
#include <pwd.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define PIP_DEFAULT_TIMEOUT_S 30
#define PIP_CONF_MAX          ((size_t)1 << 20)
#ifdef _WIN32
#define DEVNULL "nul" /* pip's os.devnull there */
#else
#define DEVNULL "/dev/null"
#endif

/* --- lists with origins -------------------------------------------------------- */

typedef struct strlist {
	char **v;
	char **origin;
	size_t n, cap;
} strlist;

static void strlist_release(strlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]);
		free(l->origin[i]);
	}
	free(l->v);
	free(l->origin);
	memset(l, 0, sizeof(*l));
}

/* Appends v (n bytes) unless already present. Returns 0 or ML_ENOMEM. */
static int strlist_add(strlist *l, const char *v, size_t n, const char *origin)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == n && strncmp(l->v[i], v, n) == 0)
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv)
			return ML_ENOMEM;
		l->v = nv;
		char **no = realloc(l->origin, cap * sizeof(*no));
		if (!no)
			return ML_ENOMEM;
		l->origin = no;
		l->cap = cap;
	}
	char *a = strndup(v, n), *b = strdup(origin);
	if (!a || !b) {
		free(a);
		free(b);
		return ML_ENOMEM;
	}
	l->v[l->n] = a;
	l->origin[l->n] = b;
	l->n++;
	return 0;
}

/* Appends every whitespace-separated word of text (pip splits list values
 * from the environment and config files this way). */
static int strlist_add_words(strlist *l, const char *text, const char *origin)
{
	const char *p = text;
	while (p && *p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		size_t n = 0;
		while (p[n] && !isspace((unsigned char)p[n]))
			n++;
		if (n && strlist_add(l, p, n, origin))
			return ML_ENOMEM;
		p += n;
	}
	return 0;
}

/* Removes v from the list (the main index is not an extra one too). */
static void strlist_remove(strlist *l, const char *v)
{
	for (size_t i = 0; v && i < l->n;) {
		if (strcmp(l->v[i], v) != 0) {
			i++;
			continue;
		}
		free(l->v[i]);
		free(l->origin[i]);
		memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof(char *));
		memmove(l->origin + i, l->origin + i + 1, (l->n - i - 1) * sizeof(char *));
		l->n--;
	}
}

/* --- pip's settings ------------------------------------------------------------ */

/* The index-related pip options, by pip's key names. */
enum { K_INDEX_URL, K_EXTRA_INDEX_URL, K_FIND_LINKS, K_TRUSTED_HOST, K_NO_INDEX, K_CERT, K_COUNT };

static const struct {
	const char *key; /* pip option name without "--" */
	const char *env; /* PIP_ environment variable */
} pip_keys[K_COUNT] = {
        [K_INDEX_URL] = {"index-url", "PIP_INDEX_URL"},
        [K_EXTRA_INDEX_URL] = {"extra-index-url", "PIP_EXTRA_INDEX_URL"},
        [K_FIND_LINKS] = {"find-links", "PIP_FIND_LINKS"},
        [K_TRUSTED_HOST] = {"trusted-host", "PIP_TRUSTED_HOST"},
        [K_NO_INDEX] = {"no-index", "PIP_NO_INDEX"},
        [K_CERT] = {"cert", "PIP_CERT"},
};

/* One value per key; a later layer replaces an earlier one, as in pip. */
typedef struct pip_settings {
	char *value[K_COUNT];
	char *origin[K_COUNT];
} pip_settings;

static void pip_settings_release(pip_settings *s)
{
	for (int k = 0; k < K_COUNT; k++) {
		free(s->value[k]);
		free(s->origin[k]);
	}
}

static int pip_set(pip_settings *s, int k, const char *value, const char *origin)
{
	char *v = strdup(value), *o = strdup(origin);
	if (!v || !o) {
		free(v);
		free(o);
		return ML_ENOMEM;
	}
	free(s->value[k]);
	free(s->origin[k]);
	s->value[k] = v;
	s->origin[k] = o;
	return 0;
}

/* pip's key normalization: lower case, '_' -> '-', leading "--" dropped.
 * Returns the K_* index or -1 for keys this stage does not use. */
static int pip_key(const char *raw)
{
	char k[64];
	size_t n = 0;
	if (strncmp(raw, "--", 2) == 0)
		raw += 2;
	for (; raw[n] && n < sizeof(k) - 1; n++)
		k[n] = raw[n] == '_' ? '-' : (char)tolower((unsigned char)raw[n]);
	k[n] = '\0';
	for (int i = 0; i < K_COUNT; i++)
		if (strcmp(k, pip_keys[i].key) == 0)
			return i;
	return -1;
}

/* --- a small INI reader ----------------------------------------------------------- */

typedef struct ini_item {
	char *section;
	int key; /* K_* */
	char *value;
} ini_item;

typedef struct ini_file {
	char *path;
	char *origin; /* "pip config <path>" */
	ini_item *items;
	size_t n, cap;
} ini_file;

static void ini_file_release(ini_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->items[i].section);
		free(f->items[i].value);
	}
	free(f->items);
	free(f->path);
	free(f->origin);
	memset(f, 0, sizeof(*f));
}

static ini_item *ini_add(ini_file *f)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		ini_item *it = realloc(f->items, cap * sizeof(*it));
		if (!it)
			return NULL;
		f->items = it;
		f->cap = cap;
	}
	ini_item *it = &f->items[f->n++];
	memset(it, 0, sizeof(*it));
	return it;
}

/* Parses text (configparser rules, see the top of this file) into f,
 * keeping only the keys pip_key() knows. Returns 0, ML_EPARSE (file:line)
 * or ML_ENOMEM. */
static int ini_parse(ini_file *f, char *text, ml_err *err)
{
	char *section = NULL;
	bool in_value = false; /* the last key line may go on on indented lines */
	ini_item *cur = NULL;  /* its item, NULL when the key is not one we keep */
	int lineno = 0, rc = 0;
	char *save = NULL;
	for (char *line = text; line && rc == 0; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (s != line && in_value) {
			if (cur) {
				char *nv = ml_asprintf("%s\n%s", cur->value, ml_strtrim(s));
				if (!nv) {
					rc = ML_ENOMEM;
					break;
				}
				free(cur->value);
				cur->value = nv;
			}
			continue;
		}
		cur = NULL;
		in_value = false;
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (!close) {
				rc = ml_err_set(err, ML_EPARSE,
				                "pip config '%s' line %d: unclosed section header",
				                f->path, lineno);
				break;
			}
			*close = '\0';
			free(section);
			section = strdup(ml_strtrim(s + 1));
			if (!section)
				rc = ML_ENOMEM;
			continue;
		}
		size_t d = strcspn(s, "=:");
		if (s[d] == '\0') {
			rc = ml_err_set(err, ML_EPARSE,
			                "pip config '%s' line %d: expected 'key = value'", f->path,
			                lineno);
			break;
		}
		if (!section) {
			rc = ml_err_set(err, ML_EPARSE,
			                "pip config '%s' line %d: key outside a [section]", f->path,
			                lineno);
			break;
		}
		s[d] = '\0';
		int k = pip_key(ml_strtrim(s));
		in_value = true;
		if (k < 0)
			continue;
		ini_item *it = ini_add(f);
		if (!it) {
			rc = ML_ENOMEM;
			break;
		}
		it->key = k;
		it->section = strdup(section);
		it->value = strdup(ml_strtrim(s + d + 1));
		if (!it->section || !it->value)
			rc = ML_ENOMEM;
		cur = it;
	}
	free(section);
	if (rc == ML_ENOMEM)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return rc;
}

/* Reads one config file; a missing file leaves f empty. */
static int ini_load(ini_file *f, const char *path, ml_err *err)
{
	f->path = strdup(path);
	f->origin = ml_asprintf("pip config %s", path);
	if (!f->path || !f->origin)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	char *text = NULL;
	ml_err e = ML_ERR_INIT;
	int rc = ml_os_read_file(&text, NULL, NULL, path, PIP_CONF_MAX, &e);
	if (rc == ML_ENOENT)
		return 0;
	if (rc) {
		ml_err_set(err, rc, "cannot read pip config '%s': %s", path, e.msg);
		return rc;
	}
	rc = ini_parse(f, text, err);
	free(text);
	return rc;
}

/* --- where pip looks ------------------------------------------------------------------- */

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0])
		return h;
#ifdef _WIN32
	h = getenv("USERPROFILE");
	return h && h[0] ? h : "C:/";
#else
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
#endif
}

static bool env_set(const char *name)
{
	const char *v = getenv(name);
	return v && v[0];
}

static bool is_blank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

/* The config files pip reads, in pip's order (later overrides earlier):
 * site-wide, per-user (unless PIP_CONFIG_FILE names an existing file),
 * the active virtualenv's, then PIP_CONFIG_FILE. */
static int config_paths(strlist *out)
{
#ifdef _WIN32
	/* pip on Windows: %ProgramData%\pip\pip.ini, then the legacy
	 * %USERPROFILE%\pip\pip.ini and %APPDATA%\pip\pip.ini, then the
	 * virtualenv's pip.ini, then PIP_CONFIG_FILE. */
	const char *pd = getenv("ProgramData"), *ad = getenv("APPDATA");
	const char *env_file = getenv("PIP_CONFIG_FILE");
	struct stat st;
	char *site = ml_asprintf("%s/pip/pip.ini", is_blank(pd) ? "C:/ProgramData" : pd);
	int rc = !site || strlist_add(out, site, strlen(site), "site") ? ML_ENOMEM : 0;
	free(site);
	if (rc)
		return rc;
	if (!(env_file && env_file[0] && stat(env_file, &st) == 0)) {
		char *legacy = ml_asprintf("%s/pip/pip.ini", home_dir());
		char *user = is_blank(ad) ? NULL : ml_asprintf("%s/pip/pip.ini", ad);
		rc = !legacy || strlist_add(out, legacy, strlen(legacy), "user") ||
		                     (user && strlist_add(out, user, strlen(user), "user"))
		             ? ML_ENOMEM
		             : 0;
		free(legacy);
		free(user);
		if (rc)
			return rc;
	}
	const char *venv = getenv("VIRTUAL_ENV");
	if (venv && venv[0]) {
		char *path = ml_asprintf("%s/pip.ini", venv);
		rc = !path || strlist_add(out, path, strlen(path), "venv") ? ML_ENOMEM : 0;
		free(path);
		if (rc)
			return rc;
	}
	if (env_file && env_file[0] && strlist_add(out, env_file, strlen(env_file), "env"))
		return ML_ENOMEM;
	return 0;
#else
	const char *dirs = getenv("XDG_CONFIG_DIRS");
	if (is_blank(dirs))
		dirs = "/etc/xdg";
	for (const char *p = dirs; *p;) {
		size_t n = strcspn(p, ":");
		if (n) {
			char *path = ml_asprintf("%.*s/pip/pip.conf", (int)n, p);
			if (!path || strlist_add(out, path, strlen(path), "site"))
				goto nomem;
			free(path);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	if (strlist_add(out, "/etc/pip.conf", strlen("/etc/pip.conf"), "site"))
		return ML_ENOMEM;

	const char *env_file = getenv("PIP_CONFIG_FILE");
	struct stat st;
	if (!(env_file && env_file[0] && stat(env_file, &st) == 0)) {
		const char *home = home_dir();
		const char *xdg = getenv("XDG_CONFIG_HOME");
		char *legacy = ml_asprintf("%s/.pip/pip.conf", home);
		char *user = is_blank(xdg) ? ml_asprintf("%s/.config/pip/pip.conf", home)
		                           : ml_asprintf("%s/pip/pip.conf", xdg);
		int rc = (!legacy || !user || strlist_add(out, legacy, strlen(legacy), "user") ||
		          strlist_add(out, user, strlen(user), "user"))
		                 ? ML_ENOMEM
		                 : 0;
		free(legacy);
		free(user);
		if (rc)
			return rc;
	}
	const char *venv = getenv("VIRTUAL_ENV");
	if (venv && venv[0]) {
		char *path = ml_asprintf("%s/pip.conf", venv);
		if (!path || strlist_add(out, path, strlen(path), "venv"))
			goto nomem;
		free(path);
	}
	if (env_file && env_file[0] && strlist_add(out, env_file, strlen(env_file), "env"))
		return ML_ENOMEM;
	return 0;
nomem:
	return ML_ENOMEM;
#endif
}

/* Fills s from pip's config files and then PIP_* variables. */
static int load_pip_settings(pip_settings *s, const char *command, ml_err *err)
{
	int rc = 0;
	strlist paths = {0};
	ini_file *files = NULL;
	size_t nfiles = 0;
	const char *env_file = getenv("PIP_CONFIG_FILE");
	if (!(env_file && strcmp(env_file, DEVNULL) == 0)) {
		if (config_paths(&paths)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		files = calloc(paths.n ? paths.n : 1, sizeof(*files));
		if (!files) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		for (; nfiles < paths.n; nfiles++) {
			rc = ini_load(&files[nfiles], paths.v[nfiles], err);
			if (rc) {
				nfiles++;
				goto out;
			}
		}
	}
	/* [global] from every file, then the command's section from every
	 * file: pip's _get_ordered_configuration_items order */
	const char *sections[2] = {"global", command && command[0] ? command : "install"};
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nfiles; i++)
			for (size_t j = 0; j < files[i].n; j++) {
				const ini_item *it = &files[i].items[j];
				if (strcmp(it->section, sections[pass]) != 0)
					continue;
				if (pip_set(s, it->key, it->value, files[i].origin)) {
					rc = ml_err_set(err, ML_ENOMEM, "out of memory");
					goto out;
				}
			}
	for (int k = 0; k < K_COUNT; k++)
		if (env_set(pip_keys[k].env) &&
		    pip_set(s, k, getenv(pip_keys[k].env), pip_keys[k].env)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
out:
	for (size_t i = 0; i < nfiles; i++)
		ini_file_release(&files[i]);
	free(files);
	strlist_release(&paths);
	return rc;
}

/* pip's strtobool. Returns 0 (value set) or ML_EUSAGE. */
static int parse_bool(bool *out, const char *v, const char *what, const char *origin, ml_err *err)
{
	static const char *const yes[] = {"y", "yes", "t", "true", "on", "1"};
	static const char *const no[] = {"n", "no", "f", "false", "off", "0"};
	char t[16];
	ml_strlcpy(t, v, sizeof(t));
	ml_strtrim(t);
	for (size_t i = 0; i < 6; i++) {
		if (strcasecmp(t, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(t, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	ml_err_set(err, ML_EUSAGE, "invalid value '%s' for %s (from %s)", v, what, origin);
	ml_err_hint(err, "use one of: 1/0, yes/no, true/false, on/off");
	return ML_EUSAGE;
}

static int check_index_url(const char *url, const char *origin, ml_err *err)
{
	if (strstr(url, "://"))
		return 0;
	char shown[512];
	ml_url_redact(shown, sizeof(shown), url);
	ml_err_set(err, ML_EUSAGE, "index URL '%s' (from %s) is not a URL", shown, origin);
	ml_err_hint(err, "index URLs look like https://host/simple/; for a local directory of "
	                 "wheels use --find-links DIR");
	return ML_EUSAGE;
}

/* Asks pip for its built-in index URL. */
static int ask_pip_default(char **out, const char *python, ml_err *err)
{
#ifdef _WIN32
	const char *py = python && python[0] ? python : "python"; /* no python3 there */
#else
	const char *py = python && python[0] ? python : "python3";
#endif
	const char *argv[] = {py, "-c",
	                      "from pip._internal.models.index import PyPI; print(PyPI.simple_url)",
	                      NULL};
	char *text = NULL;
	int status = -1;
	ml_err e = ML_ERR_INIT;
	int rc = ml_os_run_capture(&text, &status, argv, 4096, PIP_DEFAULT_TIMEOUT_S, &e);
	if (rc == 0 && status == 0) {
		ml_strtrim(text);
		if (strncmp(text, "http://", 7) == 0 || strncmp(text, "https://", 8) == 0) {
			*out = text;
			return 0;
		}
	}
	free(text);
	ml_err_set(err, ML_ENOENT,
	           "no package index configured, and '%s' could not tell pip's default%s%s", py,
	           rc ? ": " : "", rc ? e.msg : "");
	ml_err_hint(err, "pass --index-url URL or set PIP_INDEX_URL (or use --no-index with "
	                 "--find-links DIR)");
	return ML_ENOENT;
}

static int take_list(char ***v, char ***origins, size_t *n, strlist *l)
{
	if (origins) {
		*origins = l->origin;
	} else {
		for (size_t i = 0; i < l->n; i++)
			free(l->origin[i]);
		free(l->origin);
	}
	*v = l->v;
	*n = l->n;
	memset(l, 0, sizeof(*l));
	return 0;
}

void ml_index_config_free(ml_index_config *c)
{
	if (!c)
		return;
	strlist l = {c->extra_index_urls, c->extra_origins, c->n_extra, c->n_extra};
	strlist_release(&l);
	l = (strlist){c->find_links, c->find_links_origins, c->n_find_links, c->n_find_links};
	strlist_release(&l);
	for (size_t i = 0; i < c->n_trusted; i++)
		free(c->trusted_hosts[i]);
	free(c->trusted_hosts);
	free(c->index_url);
	free(c->cert);
	free(c->cert_origin);
	free(c->origin);
	free(c);
}

static int dup_pair(char **v, char **o, const char *value, const char *origin)
{
	*v = strdup(value);
	*o = strdup(origin);
	return *v && *o ? 0 : ML_ENOMEM;
}

int ml_index_config_resolve(ml_index_config **out, const ml_index_flags *flags,
                            const char *manifest_index_url, char *const *manifest_extra,
                            size_t n_manifest_extra, const char *python, ml_err *err)
{
	static const ml_index_flags none = ML_INDEX_FLAGS_INIT;
	if (!flags)
		flags = &none;
	pip_settings ps = {0};
	strlist extra = {0}, links = {0}, trusted = {0};
	ml_index_config *c = calloc(1, sizeof(*c));
	int rc = c ? load_pip_settings(&ps, flags->command, err)
	           : ml_err_set(err, ML_ENOMEM, "out of memory");
	if (rc)
		goto out;
	int nomem = 0;

	/* no-index */
	if (flags->no_index) {
		c->no_index = true;
		if (!(c->origin = strdup("--no-index")))
			nomem = 1;
	} else if (ps.value[K_NO_INDEX]) {
		rc = parse_bool(&c->no_index, ps.value[K_NO_INDEX], "no-index",
		                ps.origin[K_NO_INDEX], err);
		if (rc)
			goto out;
		if (c->no_index && !(c->origin = strdup(ps.origin[K_NO_INDEX])))
			nomem = 1;
	}

	/* the index URL */
	const char *mlsetup_url = getenv("MLSETUP_INDEX_URL");
	if (!c->no_index) {
		const char *v = NULL, *o = NULL;
		if (flags->index_url && flags->index_url[0]) {
			v = flags->index_url;
			o = "--index-url";
		} else if (mlsetup_url && mlsetup_url[0]) {
			v = mlsetup_url;
			o = "MLSETUP_INDEX_URL";
		} else if (ps.value[K_INDEX_URL] && ps.value[K_INDEX_URL][0]) {
			v = ps.value[K_INDEX_URL];
			o = ps.origin[K_INDEX_URL];
		} else if (manifest_index_url && manifest_index_url[0]) {
			v = manifest_index_url;
			o = "manifest";
		}
		if (v) {
			char *t = strdup(v);
			if (!t || dup_pair(&c->index_url, &c->origin, ml_strtrim(t), o))
				nomem = 1;
			free(t);
			if (!nomem && (rc = check_index_url(c->index_url, o, err)))
				goto out;
		}
	}

	/* extra index URLs: command line, then one environment/config layer,
	 * then the manifest's */
	if (!c->no_index) {
		for (size_t i = 0; i < flags->n_extra; i++)
			nomem |= strlist_add_words(&extra, flags->extra_index_urls[i],
			                           "--extra-index-url");
		const char *mx = getenv("MLSETUP_EXTRA_INDEX_URL");
		if (mx && !is_blank(mx))
			nomem |= strlist_add_words(&extra, mx, "MLSETUP_EXTRA_INDEX_URL");
		else if (ps.value[K_EXTRA_INDEX_URL])
			nomem |= strlist_add_words(&extra, ps.value[K_EXTRA_INDEX_URL],
			                           ps.origin[K_EXTRA_INDEX_URL]);
		for (size_t i = 0; i < n_manifest_extra; i++)
			nomem |= strlist_add_words(&extra, manifest_extra[i], "manifest");
		strlist_remove(&extra, c->index_url);
		for (size_t i = 0; !nomem && i < extra.n; i++)
			if ((rc = check_index_url(extra.v[i], extra.origin[i], err)))
				goto out;
	}

	for (size_t i = 0; i < flags->n_find_links; i++)
		nomem |= strlist_add_words(&links, flags->find_links[i], "--find-links");
	if (ps.value[K_FIND_LINKS])
		nomem |= strlist_add_words(&links, ps.value[K_FIND_LINKS], ps.origin[K_FIND_LINKS]);

	for (size_t i = 0; i < flags->n_trusted; i++)
		nomem |= strlist_add_words(&trusted, flags->trusted_hosts[i], "--trusted-host");
	if (ps.value[K_TRUSTED_HOST])
		nomem |= strlist_add_words(&trusted, ps.value[K_TRUSTED_HOST],
		                           ps.origin[K_TRUSTED_HOST]);

	if (flags->cert && flags->cert[0])
		nomem |= dup_pair(&c->cert, &c->cert_origin, flags->cert, "--cert");
	else if (ps.value[K_CERT] && !is_blank(ps.value[K_CERT]))
		nomem |= dup_pair(&c->cert, &c->cert_origin, ps.value[K_CERT], ps.origin[K_CERT]);
	if (c->cert)
		ml_strtrim(c->cert);

	if (nomem) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}

	if (!c->no_index && !c->index_url) {
		rc = ask_pip_default(&c->index_url, python, err);
		if (rc)
			goto out;
		if (!(c->origin = strdup("pip default"))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		strlist_remove(&extra, c->index_url);
	}

	take_list(&c->extra_index_urls, &c->extra_origins, &c->n_extra, &extra);
	take_list(&c->find_links, &c->find_links_origins, &c->n_find_links, &links);
	take_list(&c->trusted_hosts, NULL, &c->n_trusted, &trusted);
	*out = c;
	c = NULL;
out:
	ml_index_config_free(c);
	strlist_release(&extra);
	strlist_release(&links);
	strlist_release(&trusted);
	pip_settings_release(&ps);
	return rc;
}
