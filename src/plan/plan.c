/*
 * plan.c - turns a machine and the shipped manifests into a plan: which
 * interpreter, which manifest (select.c), and for every requirement the
 * exact wheel file for this platform and Python (PEP 425 priority, PEP 600
 * manylinux), with sizes, cache state and the disk space it needs. `plan`
 * prints it; `install` will carry it out. Nothing here changes the system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "mlsetup/detect.h"
#include "mlsetup/env.h"
#include "internal.h"

/* Estimated unpacked size of an environment, per byte of wheel: CUDA
 * libraries compress about 2:1 in wheels. An estimate, shown as such. */
#define UNPACKED_PER_WHEEL_BYTE 2

static int add_warning(ml_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_warning(ml_plan *p, const char *fmt, ...)
{
	char **w = realloc(p->warnings, (p->n_warnings + 1) * sizeof(*w));
	if (!w)
		return ML_ENOMEM;
	p->warnings = w;
	va_list ap;
	va_start(ap, fmt);
	char tmp[1024];
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (!(w[p->n_warnings] = strdup(tmp)))
		return ML_ENOMEM;
	p->n_warnings++;
	return 0;
}

static const char *const preference_names[] = {"managed", "system", "only-managed", "only-system"};

int ml_python_preference_parse(ml_python_preference *out, const char *s, ml_err *err)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, preference_names[i])) {
			*out = (ml_python_preference)i;
			return 0;
		}
	ml_err_set(err, ML_EUSAGE, "unknown python preference '%s'", s);
	ml_err_hint(err, "use managed, system, only-managed or only-system");
	return ML_EUSAGE;
}

static const char *pbs_libc(const ml_machine *m)
{
	if (strcmp(m->os.name, "linux") != 0)
		return "none";
	return strcmp(m->os.libc_kind, "musl") == 0 ? "musl" : "gnu";
}

/* Loads the interpreter pins: --python-pins, $MLSETUP_PYTHON_PINS, or the
 * embedded manifests/python.json. Returns a cJSON document or NULL (err). */
static cJSON *load_pins(const char *path, ml_err *err)
{
	if (!path || !*path)
		path = getenv("MLSETUP_PYTHON_PINS");
	if (path && *path) {
		char *text = NULL;
		size_t len = 0;
		if (ml_os_read_file(&text, &len, NULL, path, 4u << 20, err) != 0) {
			ml_err_hint(err, "check --python-pins / MLSETUP_PYTHON_PINS");
			return NULL;
		}
		cJSON *doc = cJSON_ParseWithLength(text, len);
		free(text);
		if (!doc)
			ml_err_set(err, ML_EPARSE, "interpreter pins '%s' are not valid JSON",
			           path);
		return doc;
	}
	const ml_embedded_file *f = ml_embedded_find("python.json");
	cJSON *doc = f ? cJSON_ParseWithLength(f->data, f->size) : NULL;
	if (!doc)
		ml_err_set(err, ML_EPARSE, "embedded python.json is missing or invalid");
	return doc;
}

static const char *pin_str(const cJSON *e, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, key));
}

/* Picks the newest pin of version py->xy (the pins' default when empty)
 * for this machine. */
static int choose_pin(ml_python_plan *py, const ml_machine *m, const char *pins_path, ml_err *err)
{
	cJSON *doc = load_pins(pins_path, err);
	if (!doc)
		return err ? err->code : ML_EPARSE;
	if (!py->xy[0]) {
		const char *d = pin_str(doc, "default");
		ml_strlcpy(py->xy, d ? d : "3.12", sizeof(py->xy));
	}
	const char *xy = py->xy;
	const cJSON *best = NULL, *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "pythons"))
	{
		const char *os = pin_str(e, "os"), *arch = pin_str(e, "arch");
		const char *libc = pin_str(e, "libc"), *ver = pin_str(e, "version");
		if (!os || !arch || !libc || !ver || strcmp(os, m->os.name) ||
		    strcmp(arch, m->os.arch) || strcmp(libc, pbs_libc(m)) ||
		    strncmp(ver, xy, strlen(xy)) || ver[strlen(xy)] != '.')
			continue;
		if (!best || ml_version_cmp(ver, pin_str(best, "version")) > 0)
			best = e;
	}
	int rc = 0;
	if (!best) {
		rc = ml_err_set(err, ML_EUNSUPPORTED,
		                "no pinned Python %s interpreter for %s-%s (%s libc)", xy,
		                m->os.name, m->os.arch, pbs_libc(m));
		ml_err_hint(err, "use --python PATH to build the environment on an existing "
		                 "interpreter");
	} else {
		const char *name = pin_str(best, "name"), *url = pin_str(best, "url");
		const char *sha = pin_str(best, "sha256");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(best, "size");
		ml_strlcpy(py->version, pin_str(best, "version"), sizeof(py->version));
		ml_strlcpy(py->sha256, sha ? sha : "", sizeof(py->sha256));
		py->size = cJSON_IsNumber(size) ? (int64_t)size->valuedouble : -1;
		py->pin_name = strdup(name ? name : "");
		py->url = strdup(url ? url : "");
		if (!py->pin_name || !py->url)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		else if (strlen(py->sha256) != 64)
			rc = ml_err_set(err, ML_EPARSE, "interpreter pin '%s' has no sha256", name);
	}
	cJSON_Delete(doc);
	return rc;
}

/* --python X.Y picks a pin; --python PATH asks that interpreter. */
static int choose_python(ml_python_plan *py, const ml_machine *m, const char *want,
                         const char *pins, ml_err *err)
{
	int a, b;
	char tail;
	struct stat st;
	py->size = -1;
	if (!want)
		return choose_pin(py, m, pins, err); /* the pins' default version */
	if (sscanf(want, "%d.%d%c", &a, &b, &tail) == 2 && stat(want, &st) != 0) {
		snprintf(py->xy, sizeof(py->xy), "%d.%d", a, b);
		return choose_pin(py, m, pins, err);
	}
	const char *argv[] = {want, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])",
	                      NULL};
	char *outp = NULL;
	int status = 0;
	ml_err e2 = ML_ERR_INIT;
	if (ml_os_run_capture(&outp, &status, argv, 4096, 30, &e2) != 0 || status != 0) {
		free(outp);
		ml_err_set(err, ML_EFAIL, "interpreter '%s' does not run%s%s", want,
		           e2.msg[0] ? ": " : "", e2.msg);
		ml_err_hint(err, "give --python X.Y for a pinned interpreter, or the path of a "
		                 "working python3");
		return ML_EFAIL;
	}
	int c;
	if (sscanf(outp, "%d.%d.%d", &a, &b, &c) != 3) {
		free(outp);
		return ml_err_set(err, ML_EFAIL, "interpreter '%s' printed no version", want);
	}
	free(outp);
	snprintf(py->version, sizeof(py->version), "%d.%d.%d", a, b, c);
	snprintf(py->xy, sizeof(py->xy), "%d.%d", a, b);
	py->path = strdup(want);
	return py->path ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
}

static bool in_words(const char *list, const char *word)
{
	if (!list)
		return false;
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == ','))
			return true;
	return false;
}

static void blob_cached(ml_artifact *a, const char *cache_dir)
{
	char path[4200];
	struct stat st;
	a->cached = a->sha256[0] &&
	            ml_cache_blob_path(path, sizeof(path), cache_dir, a->sha256) == 0 &&
	            stat(path, &st) == 0 && a->size >= 0 && st.st_size == a->size;
}

/* A lock file's package that has no wheel: what it has instead. */
static int no_wheel_in_lock(const ml_manifest *mf, const ml_requirement *r, ml_err *err)
{
	const char *kind = "nothing to install";
	for (size_t i = 0; mf->lock && i < mf->lock->n_pkgs; i++)
		if (mf->lock->pkgs[i].line == r->line && mf->lock->pkgs[i].source_kind)
			kind = mf->lock->pkgs[i].source_kind;
	ml_err_set(err, ML_EUNSUPPORTED,
	           "lock file '%s' line %d: %s %s has no wheel (only %s%s); mlsetup installs "
	           "wheels only",
	           mf->name, r->line, r->name, r->version ? r->version : "",
	           strcmp(kind, "nothing to install") ? "a " : "", kind);
	ml_err_hint(err,
	            "build a wheel (pip wheel %s%s%s -w wheelhouse), serve it from a "
	            "--find-links directory and lock again",
	            r->name, r->version ? "==" : "", r->version ? r->version : "");
	return ML_EUNSUPPORTED;
}

/* Chooses the wheel of one requirement with the best tag priority. */
static int choose_wheel(ml_plan *p, ml_artifact *a, const ml_manifest *mf, const ml_requirement *r,
                        char *const *tags, size_t n_tags, const char *target_desc, ml_err *err)
{
	bool any_info = false;
	if (mf->lock && r->n_hashes == 0)
		return no_wheel_in_lock(mf, r, err);
	for (size_t h = 0; h < r->n_hashes; h++) {
		const ml_file_info *fi = ml_manifest_file(mf, r->sha256[h]);
		if (!fi)
			continue;
		any_info = true;
		ml_wheel_name wn;
		if (ml_wheel_filename_parse(&wn, fi->filename, NULL) != 0)
			continue;
		int rank = ml_wheel_tag_rank(&wn, tags, n_tags);
		if (rank < 0 || (a->tag_rank >= 0 && rank >= a->tag_rank))
			continue;
		free(a->filename);
		free(a->url);
		a->url = NULL;
		if (!(a->filename = strdup(fi->filename)) ||
		    (fi->url && !(a->url = strdup(fi->url))))
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		ml_strlcpy(a->sha256, fi->sha256, sizeof(a->sha256));
		a->size = fi->size;
		a->tag_rank = rank;
	}
	if (!any_info) {
		p->n_unknown++;
		return 0;
	}
	if (a->tag_rank < 0) {
		ml_err_set(err, ML_EUNSUPPORTED,
		           "%s '%s' line %d: no wheel of %s %s installs on %s",
		           mf->lock ? "lock file" : "manifest", mf->name, r->line, r->name,
		           r->version ? r->version : "", target_desc);
		ml_err_hint(
		        err,
		        "pick a supported interpreter with --python, a manifest locked for this "
		        "platform (mlsetup lock --platform ...), or build a wheel (pip wheel "
		        "--no-deps %s==%s -w wheelhouse) and add --find-links wheelhouse",
		        r->name, r->version ? r->version : "VERSION");
		return ML_EUNSUPPORTED;
	}
	return 0;
}

static int plan_files(ml_plan *p, const ml_machine *m, ml_err *err)
{
	const ml_manifest *mf = p->selection->manifest;
	int maj = 0, min = 0, gmaj = 0, gmin = 0;
	sscanf(p->python.xy, "%d.%d", &maj, &min);
	sscanf(m->os.libc_version, "%d.%d", &gmaj, &gmin);
	ml_tag_target t = {m->os.name, m->os.arch, m->os.libc_kind, gmaj, gmin, maj, min};
	char **tags = NULL;
	size_t n_tags = 0;
	int rc = ml_tags_for(&tags, &n_tags, &t, err);
	if (rc)
		return rc;
	ml_marker_env env;
	if (ml_marker_env_for(&env, m->os.name, m->os.arch, maj, min) != 0) {
		ml_tags_free(tags, n_tags);
		return ml_err_set(err, ML_EUNSUPPORTED, "no marker environment for %s-%s Python %s",
		                  m->os.name, m->os.arch, p->python.xy);
	}
	env.python_full_version = env.implementation_version = p->python.version;
	char desc[160];
	snprintf(desc, sizeof(desc), "CPython %s on %s-%s (%s %s)", p->python.xy, m->os.name,
	         m->os.arch, m->os.libc_kind, m->os.libc_version);
	const char *requested = ml_requirements_meta(mf->reqs, "requested");
	/* a file that pins no hashes names its files once pip resolved it */
	p->needs_resolution = mf->resolve;
	if (mf->resolve) {
		ml_tags_free(tags, n_tags);
		return 0;
	}
	/* A lock for other environments (PEP 751 "environments") is refused
	 * before its files are judged. */
	bool env_ok = mf->n_environments == 0;
	for (size_t i = 0; !rc && i < mf->n_environments && !env_ok; i++)
		rc = ml_marker_eval(&env_ok, mf->environments[i], &env, err);
	if (!rc && !env_ok) {
		ml_err_set(err, ML_EUNSUPPORTED,
		           "lock file '%s' is for other environments than %s (its environments: "
		           "%s%s)",
		           mf->name, desc, mf->environments[0],
		           mf->n_environments > 1 ? ", ..." : "");
		ml_err_hint(err, "lock the project for this platform and Python");
		rc = ML_EUNSUPPORTED;
	}
	p->files = rc ? NULL : calloc(mf->reqs->n_reqs ? mf->reqs->n_reqs : 1, sizeof(*p->files));
	if (!rc && !p->files)
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < mf->reqs->n_reqs; i++) {
		const ml_requirement *r = &mf->reqs->reqs[i];
		bool applies = true;
		if (r->marker && (rc = ml_marker_eval(&applies, r->marker, &env, err)) != 0)
			break;
		if (!applies) {
			p->n_not_here++;
			continue;
		}
		ml_artifact *a = &p->files[p->n_files++];
		a->tag_rank = -1;
		a->size = -1;
		a->line = r->line;
		/* without a `requested` header every line was asked for, as
		 * pip marks every requirement of a -r file REQUESTED */
		a->requested = !requested || in_words(requested, r->normalized);
		a->name = strdup(r->normalized);
		a->version = strdup(r->version ? r->version : "");
		if (!a->name || !a->version) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		rc = choose_wheel(p, a, mf, r, tags, n_tags, desc, err);
		if (!rc && a->filename && a->size < 0)
			p->n_unsized++;
		if (!rc && a->size >= 0) {
			blob_cached(a, p->cache_dir);
			p->total_bytes += (uint64_t)a->size;
			if (!a->cached)
				p->download_bytes += (uint64_t)a->size;
		}
	}
	ml_tags_free(tags, n_tags);
	if (rc)
		return rc;
	/* hash-only files are named by the install pipeline, which asks the
	 * indexes (ml_install_plan, ml_install) and plans again */
	if (p->n_unknown)
		rc = add_warning(p,
		                 "%zu file%s could not be named or sized from the manifest (no "
		                 "mlsetup-file lines): the indexes say which file has each hash",
		                 p->n_unknown, p->n_unknown == 1 ? "" : "s");
	p->disk_needed_bytes = p->download_bytes + p->total_bytes * UNPACKED_PER_WHEEL_BYTE;
	uint64_t free_bytes = m->disk_free_mib * 1024 * 1024;
	if (!rc && m->disk_free_mib && p->disk_needed_bytes > free_bytes)
		rc = add_warning(
		        p,
		        "about %llu MiB of disk needed, only %llu MiB free at %s: free space "
		        "or choose another --target",
		        (unsigned long long)(p->disk_needed_bytes >> 20),
		        (unsigned long long)m->disk_free_mib, m->target_dir);
	return rc ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}

/* --- which interpreter (--python, --python-preference) ------------------ */

/* One interpreter the plan may be made for. */
typedef struct py_cand {
	char want[4096];    /* "X.Y" (a pin) or a path */
	const char *source; /* "managed", "system", "path" */
} py_cand;

typedef struct cand_list {
	py_cand *v;
	size_t n, cap;
} cand_list;

static int cand_add(cand_list *l, const char *want, const char *source)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].want, want))
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		py_cand *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return ML_ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	ml_strlcpy(l->v[l->n].want, want, sizeof(l->v[l->n].want));
	l->v[l->n++].source = source;
	return 0;
}

/* True when the newest pin of xy for this machine is unpacked already. */
static bool pin_installed(const cJSON *doc, const ml_machine *m, const char *xy)
{
	const cJSON *best = NULL, *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "pythons"))
	{
		const char *os = pin_str(e, "os"), *arch = pin_str(e, "arch");
		const char *libc = pin_str(e, "libc"), *ver = pin_str(e, "version");
		if (!os || !arch || !libc || !ver || strcmp(os, m->os.name) ||
		    strcmp(arch, m->os.arch) || strcmp(libc, pbs_libc(m)) ||
		    strncmp(ver, xy, strlen(xy)) || ver[strlen(xy)] != '.')
			continue;
		if (!best || ml_version_cmp(ver, pin_str(best, "version")) > 0)
			best = e;
	}
	char dir[4096], marker[4400];
	struct stat st;
	return best && pin_str(best, "name") && ml_python_dir(dir, sizeof(dir), NULL) == 0 &&
	       ml_pathf(marker, sizeof(marker), "%s/%s/%s", dir, pin_str(best, "name"),
	                ML_ENV_MARKER) == 0 &&
	       stat(marker, &st) == 0;
}

/* The pinned X.Y versions for this machine: installed ones first
 * (newest first), then the pins' default, then the rest, newest first. */
static int managed_cands(cand_list *l, const ml_machine *m, const char *pins, ml_err *err)
{
	cJSON *doc = load_pins(pins, err);
	if (!doc)
		return err ? err->code : ML_EPARSE;
	char xys[32][8];
	size_t n = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "pythons"))
	{
		const char *os = pin_str(e, "os"), *arch = pin_str(e, "arch");
		const char *libc = pin_str(e, "libc"), *ver = pin_str(e, "version");
		int a, b;
		if (!os || !arch || !libc || !ver || strcmp(os, m->os.name) ||
		    strcmp(arch, m->os.arch) || strcmp(libc, pbs_libc(m)) ||
		    sscanf(ver, "%d.%d", &a, &b) != 2 || n >= 32)
			continue;
		char xy[8];
		snprintf(xy, sizeof(xy), "%d.%d", a, b);
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = !strcmp(xys[i], xy);
		if (!seen)
			ml_strlcpy(xys[n++], xy, sizeof(xys[0]));
	}
	/* newest first */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ml_version_cmp(xys[j], xys[j - 1]) > 0; j--) {
			char t[8];
			memcpy(t, xys[j], sizeof(t));
			memcpy(xys[j], xys[j - 1], sizeof(t));
			memcpy(xys[j - 1], t, sizeof(t));
		}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (pin_installed(doc, m, xys[i]))
			rc = cand_add(l, xys[i], "managed");
	const char *d = pin_str(doc, "default");
	if (!rc)
		rc = cand_add(l, d ? d : "3.12", "managed");
	for (size_t i = 0; i < n && !rc; i++)
		rc = cand_add(l, xys[i], "managed");
	cJSON_Delete(doc);
	return rc ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
}

/* The CPython interpreters on this machine (of version xy when given). */
static int system_cands(cand_list *l, const char *xy, ml_err *err)
{
	ml_python_found *found = NULL;
	size_t n = 0;
	int rc = ml_python_find_system(&found, &n, err);
	for (size_t i = 0; !rc && i < n; i++)
		if (!xy || !strcmp(found[i].xy, xy))
			rc = cand_add(l, found[i].executable, "system") ? ML_ENOMEM : 0;
	free(found);
	return rc == ML_ENOMEM ? ml_err_set(err, ML_ENOMEM, "out of memory") : rc;
}

static bool is_xy(const char *s)
{
	int a, b;
	char tail;
	struct stat st;
	return s && sscanf(s, "%d.%d%c", &a, &b, &tail) == 2 && stat(s, &st) != 0;
}

/* Interpreters to plan with, in the order --python and
 * --python-preference ask for (uv's order). */
static int python_cands(cand_list *l, const ml_plan_opts *o, const ml_machine *m, ml_err *err)
{
	ml_python_preference pref = o->python_preference;
	bool system_first = pref == ML_PYTHON_SYSTEM || pref == ML_PYTHON_ONLY_SYSTEM;
	bool managed_ok = pref != ML_PYTHON_ONLY_SYSTEM;
	int rc = 0;
	if (o->python && !is_xy(o->python))
		return cand_add(l, o->python, "path") ? ml_err_set(err, ML_ENOMEM, "out of memory")
		                                      : 0;
	if (system_first)
		rc = system_cands(l, o->python, err);
	if (!rc && managed_ok && o->python)
		rc = cand_add(l, o->python, "managed") ? ml_err_set(err, ML_ENOMEM, "out of memory")
		                                       : 0;
	else if (!rc && managed_ok)
		rc = managed_cands(l, m, o->python_pins, err);
	if (!rc && l->n == 0) {
#ifdef _WIN32
		const char *looked = "PATH, the registry (PEP 514), python.org's folders";
#else
		const char *looked = "PATH, /usr/local/bin, /usr/bin";
#endif
		ml_err_set(err, ML_EUNSUPPORTED,
		           "no CPython%s%s found on this machine (%s), "
		           "and --python-preference only-system never downloads one",
		           o->python ? " " : "", o->python ? o->python : "", looked);
		ml_err_hint(err, "install one with the system's package manager, or use "
		                 "--python-preference managed");
		rc = ML_EUNSUPPORTED;
	}
	return rc;
}

/* Whether the interpreter of p fits its selection: a manifest was chosen
 * and no python rule of it failed (also when forced with --manifest).
 * *python_blocked says that the interpreter is what failed. */
static bool python_fits(const ml_plan *p, bool *python_blocked)
{
	const ml_selection *s = p->selection;
	*python_blocked = false;
	for (size_t i = 0; i < s->n_reasons; i++)
		if (!strcmp(s->reasons[i].rule, "python") &&
		    s->reasons[i].verdict == ML_RULE_FAIL &&
		    (!s->manifest || !strcmp(s->reasons[i].manifest, s->manifest->name)))
			*python_blocked = true;
	return s->manifest && !*python_blocked;
}

/* Plans for one interpreter candidate: the python and the selection. */
static int plan_for_python(ml_plan **out, const ml_machine *m, const ml_plan_opts *o,
                           const py_cand *c, ml_err *err)
{
	ml_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_strlcpy(p->target, o->target ? o->target : ".venv", sizeof(p->target));
	if (ml_cache_dir(p->cache_dir, sizeof(p->cache_dir), o->cache_dir) != 0)
		p->cache_dir[0] = '\0';
	int rc = choose_python(&p->python, m, c->want, o->python_pins, err);
	ml_strlcpy(p->python.source, c->source, sizeof(p->python.source));
	if (!rc) {
		ml_select_opts so = ML_SELECT_OPTS_INIT;
		so.manifest = o->manifest;
		so.python_version = p->python.xy;
		so.python_full = p->python.version[0] ? p->python.version : NULL;
		so.require_hashes = o->require_hashes;
		rc = ml_select(&p->selection, m, &so, err);
	}
	if (rc) {
		ml_plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int ml_plan_make(ml_plan **out, const ml_machine *m, const ml_plan_opts *opts, ml_err *err)
{
	ml_plan_opts defaults = ML_PLAN_OPTS_INIT;
	const ml_plan_opts *o = opts ? opts : &defaults;
	cand_list cands = {0};
	int rc = python_cands(&cands, o, m, err);
	ml_plan *p = NULL;
	/* the first interpreter that fits; when none does, the first one's
	 * plan says why (a system interpreter that does not run is skipped) */
	for (size_t i = 0; !rc && i < cands.n; i++) {
		ml_plan *q = NULL;
		ml_err e = ML_ERR_INIT;
		int qrc = plan_for_python(&q, m, o, &cands.v[i], &e);
		if (qrc) {
			if (!p && (i + 1 == cands.n || strcmp(cands.v[i].source, "system") != 0)) {
				*err = e;
				rc = qrc;
			}
			if (strcmp(cands.v[i].source, "system") != 0)
				break;
			continue;
		}
		bool blocked = false;
		bool fits = python_fits(q, &blocked);
		if (!p || fits) {
			ml_plan_free(p);
			p = q;
		} else {
			ml_plan_free(q);
		}
		if (fits || !blocked)
			break;
	}
	free(cands.v);
	if (!rc && !p)
		rc = ml_err_set(err, ML_EFAIL, "no interpreter to plan with");
	if (!rc && p->selection->manifest)
		rc = plan_files(p, m, err);
	if (rc) {
		ml_plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static void free_files(ml_plan *p)
{
	for (size_t i = 0; i < p->n_files; i++) {
		free(p->files[i].name);
		free(p->files[i].version);
		free(p->files[i].filename);
		free(p->files[i].url);
	}
	free(p->files);
	p->files = NULL;
	p->n_files = 0;
	for (size_t i = 0; i < p->n_warnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	p->warnings = NULL;
	p->n_warnings = 0;
}

int ml_plan_refile(ml_plan *p, const ml_machine *m, ml_err *err)
{
	free_files(p);
	p->n_not_here = p->n_unknown = p->n_unsized = 0;
	p->total_bytes = p->download_bytes = p->disk_needed_bytes = 0;
	if (!p->selection || !p->selection->manifest)
		return 0;
	return plan_files(p, m, err);
}

void ml_plan_free(ml_plan *p)
{
	if (!p)
		return;
	ml_selection_free(p->selection);
	free(p->python.path);
	free(p->python.pin_name);
	free(p->python.url);
	free_files(p);
	ml_project_info_free(p->project);
	for (size_t i = 0; i < p->n_candidates; i++)
		ml_candidate_release(&p->candidates[i]);
	free(p->candidates);
	ml_torch_choice_release(p->torch_choice);
	free(p->torch_choice);
	free(p);
}
