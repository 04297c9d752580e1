/*
 * bundle.c - the bundle pipeline (`mlsetup bundle -o DIR`): a directory
 * that installs offline with its own mlsetup, and that is, copied to any
 * static web server, the index and interpreter mirror of a whole fleet.
 * Every candidate manifest (the given ones, a project's requirements files
 * found as install finds them, or the shipped ones) is planned for the
 * platform (the machine that bundles may have no GPU: the target chooses at
 * install); one that pins no hashes is locked first with pip for the
 * platform and every Python bundled (the lock pipeline), so that the
 * bundle carries hashes for every file. Its wheels are
 * fetched and proven through the download pipeline into DIR/files/, a
 * static PEP 503 tree is written over them (DIR/simple/), the pinned
 * interpreter archive goes where a --python-mirror of DIR/python serves it,
 * and DIR/install.sh (packaging/bundle-install.sh, embedded) runs the
 * bundled binary on all of it. DIR/bundle.json records what is in it. The
 * directory is built beside DIR and renamed into place when complete.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/version.h"

/* One manifest x Python plan. */
typedef struct plan_run {
	const char *manifest; /* as given, a project's candidate, or a shipped name */
	size_t m;             /* its index in bundle.manifests */
	const char *python;   /* X.Y, or NULL: the pins' default */
	ml_install_download_result dl;
	int rc; /* 0, or ML_EUNSUPPORTED: left out */
	ml_err err;
} plan_run;

/* The lock made of a manifest that pins no hashes, or why there is none. */
typedef struct lock_state {
	char *path; /* the locked manifest in the stage (owned); NULL: none */
	int rc;     /* 0, or the failure of locking it (err says why) */
	ml_err err;
} lock_state;

typedef struct bundle {
	const ml_install_bundle_opts *o;
	ml_install_bundle_result *res;
	mli_events ev;
	char stage[ML_PATH_MAX]; /* the directory being built; "" when none */
	const char **manifests;
	size_t n_manifests;
	cJSON *selection; /* owns the shipped names */
	char **cands;     /* owns a project's candidates */
	size_t n_cands;
	ml_project_info *project; /* --project, or NULL */
	lock_state *locks;        /* one per manifest */
	plan_run *runs;
	size_t n_runs;
	ml_buf sums;     /* "sha256  path" lines for install.sh */
	char python[8];  /* the X.Y of the first plan: install.sh's default */
	ml_buf archives; /* the X.Y of every bundled interpreter, space separated */
	ml_buf choice;   /* install.sh's candidates, space separated ("": the shipped ones) */
} bundle;

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A name install.sh may quote and the bundle may hold: letters, digits,
 * '.', '_', '-', not starting with '.'. */
static bool safe_name(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._-", *s)))
			return false;
	return true;
}

/* DIR may be made: missing, or an empty directory. */
static int dest_usable(const char *dest, ml_err *err)
{
	struct stat st;
	if (lstat(dest, &st) != 0)
		return errno == ENOENT ? 0
		                       : ml_err_set(err, ML_EIO, "cannot use '%s': %s", dest,
		                                    strerror(errno));
	bool empty = false;
	DIR *d = S_ISDIR(st.st_mode) ? opendir(dest) : NULL;
	if (d) {
		struct dirent *e;
		empty = true;
		while (empty && (e = readdir(d)) != NULL)
			empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		closedir(d);
	}
	if (empty)
		return 0;
	ml_err_set(err, ML_EUSAGE, "'%s' exists and is not an empty directory", dest);
	ml_err_hint(err, "name a new directory with -o, or remove this one first");
	return ML_EUSAGE;
}

/* Makes the staging directory beside dest. */
static int stage_make(bundle *b, ml_err *err)
{
	char parent[ML_PATH_MAX], hex[17];
	const char *base = NULL;
	if (ml_fs_split_path(parent, sizeof(parent), &base, b->o->dest))
		return ml_err_set(err, ML_EUSAGE, "'%s' is not a directory name", b->o->dest);
	int e = ml_fs_mkdirs(parent, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", parent, strerror(-e));
	ml_random_hex(hex, 8);
	if (ml_pathf(b->stage, sizeof(b->stage), "%s/.%s.mlsetup-stage-%s", parent, base, hex))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", b->o->dest);
	if (mkdir(b->stage, 0755) != 0) {
		int en = errno;
		b->stage[0] = '\0';
		return ml_err_set(err, ML_EIO, "cannot create a directory beside '%s': %s",
		                  b->o->dest, strerror(en));
	}
	return 0;
}

/* The project's candidates, as install finds them (src/install/project.c):
 * the --manifest values, found in the project when not as given, else its
 * own requirements files; a git URL is checked out into the cache. */
static int project_candidates(bundle *b, ml_err *err)
{
	const ml_install_bundle_opts *o = b->o;
	ml_project_source src;
	char dir[4096];
	bool no_torch = false;
	int rc = ml_project_source_parse(&src, o->project, err);
	if (rc)
		return rc;
	ml_http_opts http = o->fetch.http;
	http.cert = o->index.cert; /* the command line's: the manifests come later */
	rc = mli_project_locate(&b->project, dir, sizeof(dir), &src, NULL, o->cache_dir, &http,
	                        &b->ev, err);
	ml_project_source_release(&src);
	if (!rc)
		rc = mli_project_list(&b->cands, &b->n_cands, &no_torch, dir, o->manifests,
		                      o->n_manifests, err);
	if (rc)
		return rc;
	ml_buf names = ML_BUF_INIT;
	for (size_t i = 0; i < b->n_cands; i++)
		ml_buf_printf(&names, "%s%s", i ? ", " : "", base_name(b->cands[i]));
	mli_say(&b->ev, ML_EV_STEP, "project %s%s%s%s%s: candidates %s", b->project->url,
	        b->project->rev ? " @ " : "", b->project->rev ? b->project->rev : "",
	        b->project->commit[0] ? ", commit " : "", b->project->commit, ml_buf_cstr(&names));
	ml_buf_release(&names);
	return 0;
}

/* The candidate manifests: a project's, the given ones, or every manifest
 * the embedded selection rules can choose (preference order, then
 * no_gpu). */
static int candidates(bundle *b, ml_err *err)
{
	const ml_install_bundle_opts *o = b->o;
	int rc = o->project ? project_candidates(b, err) : 0;
	if (rc)
		return rc;
	size_t cap = o->project ? b->n_cands : o->n_manifests ? o->n_manifests : 17;
	b->manifests = calloc(cap, sizeof(*b->manifests));
	b->locks = calloc(cap, sizeof(*b->locks));
	if (!b->manifests || !b->locks)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (o->project) {
		for (size_t i = 0; i < b->n_cands; i++)
			b->manifests[b->n_manifests++] = b->cands[i];
	} else if (o->n_manifests) {
		for (size_t i = 0; i < o->n_manifests; i++)
			b->manifests[b->n_manifests++] = o->manifests[i];
	} else {
		const ml_embedded_file *f = ml_embedded_find("selection.json");
		b->selection = f ? cJSON_ParseWithLength(f->data, f->size) : NULL;
		if (!b->selection)
			return ml_err_set(err, ML_EPARSE,
			                  "embedded selection.json is missing or "
			                  "invalid");
		const cJSON *e;
		const cJSON *pref = cJSON_GetObjectItemCaseSensitive(b->selection, "preference");
		cJSON_ArrayForEach(e, pref) if (cJSON_IsString(e) && b->n_manifests < cap - 1)
		        b->manifests[b->n_manifests++] = e->valuestring;
		const char *ng = cJSON_GetStringValue(
		        cJSON_GetObjectItemCaseSensitive(b->selection, "no_gpu"));
		bool seen = !ng;
		for (size_t i = 0; !seen && i < b->n_manifests; i++)
			seen = strcmp(b->manifests[i], ng) == 0;
		if (!seen)
			b->manifests[b->n_manifests++] = ng;
	}
	for (size_t i = 0; i < b->n_manifests; i++) {
		const char *n = base_name(b->manifests[i]);
		if (!safe_name(n)) {
			ml_err_set(err, ML_EUSAGE,
			           "manifest '%s': a bundle takes names of letters, "
			           "digits, '.', '_' and '-' only",
			           b->manifests[i]);
			ml_err_hint(err, "copy the manifest to such a name");
			return ML_EUSAGE;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(base_name(b->manifests[j]), n) == 0) {
				ml_err_set(err, ML_EUSAGE, "manifests '%s' and '%s' have one name",
				           b->manifests[j], b->manifests[i]);
				ml_err_hint(err,
				            "a bundle keeps manifests by file name: rename one");
				return ML_EUSAGE;
			}
	}
	return 0;
}

/* Runs the download pipeline for r, the manifest at path, into files. */
static int download(bundle *b, plan_run *r, const char *path, const char *files)
{
	const ml_install_bundle_opts *o = b->o;
	ml_install_download_opts d = ML_INSTALL_DOWNLOAD_OPTS_INIT;
	d.manifest = path;
	d.dest = files;
	d.python = r->python;
	d.platform = b->res->platform;
	d.python_pins = o->python_pins;
	d.cache_dir = o->cache_dir;
	d.sysroot = o->sysroot;
	d.index = o->index;
	d.fetch = o->fetch;
	d.offline = o->offline;
	d.on_event = o->on_event;
	d.event_data = o->event_data;
	r->err = (ml_err)ML_ERR_INIT;
	return r->rc = ml_install_download(&r->dl, &d, &r->err);
}

/* Locks manifest m, which pins no hashes, with pip for the platform and
 * every Python bundled (xy when none is named) through the lock pipeline
 * (ml_install_lock) into stage/.locked/NAME; b->locks[m].path gets it.
 * The banner names the bundle command that makes it, never a staging
 * path, credentials or index URLs. Returns 0 or what ml_install_lock()
 * returns (ML_EFAIL: pip could not resolve it for a target, or a package
 * has no wheel for it). */
static int lock_manifest(bundle *b, size_t m, const ml_manifest *mf, const char *xy, ml_err *err)
{
	const ml_install_bundle_opts *o = b->o;
	const char *given = b->manifests[m];
	char dir[ML_PATH_MAX], out[ML_PATH_MAX], in[ML_PATH_MAX];
	if (ml_pathf(dir, sizeof(dir), "%s/.locked", b->stage) ||
	    ml_pathf(out, sizeof(out), "%s/%s", dir, base_name(given)) ||
	    ml_pathf(in, sizeof(in), "%s.in", out))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", b->stage);
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	/* A shipped manifest without hashes (the Windows set) is no file
	 * here: pip reads a copy of the embedded text. */
	const ml_embedded_file *ef =
	        mf->embedded ? ml_embedded_find(mf->embedded_name ? mf->embedded_name : mf->name)
	                     : NULL;
	if (mf->embedded && !ef)
		return ml_err_set(err, ML_EFAIL, "no shipped manifest '%s' in this build",
		                  mf->name);
	if (ef && (e = ml_fs_write_file(in, ef->data, ef->size, 0644, false, false)) != 0)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", in, strerror(-e));
	const char *const *pys = o->n_pythons ? o->pythons : &xy;
	size_t n_pys = o->n_pythons ? o->n_pythons : 1;
	const char *platform = b->res->platform;
	ml_buf cmd = ML_BUF_INIT, pyl = ML_BUF_INIT;
	const char *rel = given;
	if (b->project) {
		size_t pl = strlen(b->project->path);
		if (strncmp(given, b->project->path, pl) == 0 && given[pl] == '/')
			rel = given + pl + 1;
		ml_buf_printf(&cmd, "mlsetup bundle --project %s%s%s", b->project->url,
		              b->project->rev ? "@" : "", b->project->rev ? b->project->rev : "");
	} else {
		ml_buf_puts(&cmd, "mlsetup bundle");
	}
	ml_buf_printf(&cmd, " --manifest %s --platform %s", rel, platform);
	for (size_t i = 0; i < n_pys; i++) {
		ml_buf_printf(&cmd, " --python %s", pys[i]);
		ml_buf_printf(&pyl, "%s%s", i ? ", " : "", pys[i]);
	}
	mli_say(&b->ev, ML_EV_STEP,
	        "%s pins no hashes: locking it with pip for CPython %s on %s; the bundle "
	        "carries the lock",
	        given, ml_buf_cstr(&pyl), platform);
	ml_install_lock_opts lo = ML_INSTALL_LOCK_OPTS_INIT;
	lo.input = ef ? in : given;
	lo.name = given;
	lo.output = out;
	lo.resolver = o->resolver;
	lo.pythons = pys;
	lo.n_pythons = n_pys;
	lo.platforms = &platform;
	lo.n_platforms = 1;
	lo.index = o->index;
	lo.command = ml_buf_cstr(&cmd);
	lo.on_event = o->on_event;
	lo.event_data = o->event_data;
	ml_install_lock_result lr;
	int rc = cmd.data && pyl.data ? ml_install_lock(&lr, &lo, err)
	                              : ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_buf_release(&cmd);
	ml_buf_release(&pyl);
	if (!rc && !(b->locks[m].path = strdup(out)))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (!rc)
		b->res->n_locked++;
	return rc;
}

/* Plans and fetches run r (manifest m); one that pins no hashes is locked
 * first. Returns 0 with r->rc ML_EUNSUPPORTED for a plan left out, or the
 * failure that ends the bundle. */
static int plan_one(bundle *b, plan_run *r, size_t m, const char *files, ml_err *err)
{
	if (!download(b, r, b->locks[m].path ? b->locks[m].path : r->manifest, files) ||
	    r->rc != ML_EUNSUPPORTED || !r->dl.plan || !r->dl.plan->needs_resolution)
		return 0;
	if (b->o->offline) {
		ml_err_set(&r->err, ML_EUNSUPPORTED,
		           "manifest '%s' pins no hashes and --offline forbids locking it with pip",
		           r->manifest);
		return 0;
	}
	if (!b->locks[m].path && !b->locks[m].rc) {
		b->locks[m].err = (ml_err)ML_ERR_INIT;
		b->locks[m].rc = lock_manifest(b, m, r->dl.plan->selection->manifest,
		                               r->dl.plan->python.xy, &b->locks[m].err);
	}
	if (b->locks[m].rc == ML_EFAIL) { /* not for this platform: left out */
		r->err = b->locks[m].err;
		return 0;
	}
	if (b->locks[m].rc) {
		*err = b->locks[m].err;
		return b->locks[m].rc;
	}
	ml_install_download_result_release(&r->dl);
	download(b, r, b->locks[m].path, files);
	return 0;
}

/* Plans and fetches every manifest x Python into stage/files. */
static int plan_all(bundle *b, ml_err *err)
{
	const ml_install_bundle_opts *o = b->o;
	size_t n_py = o->n_pythons ? o->n_pythons : 1;
	b->runs = calloc(b->n_manifests * n_py, sizeof(*b->runs));
	if (!b->runs)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	char files[ML_PATH_MAX];
	if (ml_pathf(files, sizeof(files), "%s/files", b->stage))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", b->stage);
	for (size_t m = 0; m < b->n_manifests; m++) {
		bool named = false;
		for (size_t p = 0; p < n_py; p++) {
			plan_run *r = &b->runs[b->n_runs++];
			r->manifest = b->manifests[m];
			r->m = m;
			r->python = o->n_pythons ? o->pythons[p] : NULL;
			r->err = (ml_err)ML_ERR_INIT;
			mli_say(&b->ev, ML_EV_STEP, "bundling %s for %s%s on %s", r->manifest,
			        r->python ? "CPython " : "the default Python",
			        r->python ? r->python : "", b->res->platform);
			int rc = plan_one(b, r, m, files, err);
			if (rc)
				return rc;
			if (r->rc == ML_EUNSUPPORTED) {
				mli_say(&b->ev, ML_EV_WARNING, "left out of the bundle: %s",
				        r->err.msg);
				b->res->n_skipped++;
				continue;
			}
			if (r->rc) {
				*err = r->err;
				return r->rc;
			}
			b->res->n_plans++;
			if (!b->python[0])
				ml_strlcpy(b->python, r->dl.plan->python.xy, sizeof(b->python));
			/* install.sh's candidates, when not the shipped ones */
			if ((o->n_manifests || o->project) && !named)
				ml_buf_printf(&b->choice, "%s%s", b->choice.len ? " " : "",
				              base_name(r->manifest));
			named = true;
		}
	}
	if (b->res->n_plans)
		return 0;
	ml_err_set(err, ML_EUNSUPPORTED, "no manifest has wheels for %s%s%s",
	           o->n_pythons == 1 ? "CPython " : "", o->n_pythons == 1 ? o->pythons[0] : "",
	           o->n_pythons == 1 ? " on " : "");
	size_t l = strlen(err->msg);
	snprintf(err->msg + l, sizeof(err->msg) - l, "%s", b->res->platform);
	ml_err_hint(err, "bundle for another --platform or --python, or name a manifest built "
	                 "for it with --manifest");
	return ML_EUNSUPPORTED;
}

/* files/index.html over every plan's files, and the simple/ tree. */
static int place_index(bundle *b, ml_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n_runs; i++)
		n += b->runs[i].rc ? 0 : b->runs[i].dl.n_items;
	ml_download *all = calloc(n ? n : 1, sizeof(*all));
	if (!all)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < b->n_runs; i++)
		for (size_t j = 0; !b->runs[i].rc && j < b->runs[i].dl.n_items; j++)
			all[k++] = b->runs[i].dl.items[j]; /* borrowed: never released */
	char files[ML_PATH_MAX];
	int rc = ml_pathf(files, sizeof(files), "%s/files", b->stage)
	                 ? ml_err_set(err, ML_EIO, "path too long: '%s'", b->stage)
	                 : 0;
	if (!rc)
		rc = ml_fetch_place_simple(b->stage, "files", all, k, err);
	if (!rc)
		rc = ml_fetch_place(files, all, k, true, err);
	/* count each file once */
	for (size_t i = 0; !rc && i < k; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(all[j].sha256, all[i].sha256) == 0;
		if (!seen) {
			b->res->n_files++;
			b->res->bytes += (uint64_t)all[i].size;
		}
	}
	free(all);
	return rc;
}

/* Writes data to stage/rel (mode), adding its sha256 to the checked sums
 * when sum is set; *hex gets the sha256. */
static int put_file(bundle *b, const char *rel, const void *data, size_t n, unsigned mode, bool sum,
                    char hex[65], ml_err *err)
{
	char path[ML_PATH_MAX], dir[ML_PATH_MAX];
	const char *base;
	if (ml_pathf(path, sizeof(path), "%s/%s", b->stage, rel) ||
	    ml_fs_split_path(dir, sizeof(dir), &base, path))
		return ml_err_set(err, ML_EIO, "path too long in '%s'", b->stage);
	int e = ml_fs_mkdirs(dir, 0755);
	if (!e)
		e = ml_fs_write_file(path, data, n, mode, true, false);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	if (ml_sha256_hex_buf(hex, data, n))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (sum)
		ml_buf_printf(&b->sums, "%s  %s\n", hex, rel);
	return 0;
}

/* Copies each planned manifest into stage/manifests/; records them. */
static int copy_manifests(bundle *b, cJSON *list, ml_err *err)
{
	for (size_t i = 0; i < b->n_runs; i++) {
		plan_run *r = &b->runs[i];
		if (r->rc)
			continue;
		bool done = false;
		for (size_t j = 0; j < i && !done; j++)
			done = !b->runs[j].rc && b->runs[j].manifest == r->manifest;
		if (done)
			continue;
		const ml_manifest *mf = r->dl.plan->selection->manifest;
		char *text = NULL;
		size_t len = 0;
		const ml_embedded_file *f =
		        mf->embedded ? ml_embedded_find(mf->embedded_name) : NULL;
		int rc = 0;
		if (mf->embedded && !f)
			return ml_err_set(err, ML_ENOENT, "manifest '%s' is not in this build",
			                  mf->name);
		if (!f && (rc = ml_os_read_file(&text, &len, NULL, mf->name, 16u << 20, err)) != 0)
			return rc;
		char rel[400], hex[65];
		snprintf(rel, sizeof(rel), "manifests/%s", base_name(r->manifest));
		rc = put_file(b, rel, f ? f->data : text, f ? f->size : len, 0644, true, hex, err);
		free(text);
		if (rc)
			return rc;
		cJSON *m = cJSON_CreateObject();
		cJSON_AddItemToArray(list, m);
		cJSON_AddStringToObject(m, "name", r->manifest);
		cJSON_AddStringToObject(m, "path", rel);
		cJSON_AddStringToObject(m, "sha256", hex);
		cJSON_AddBoolToObject(m, "shipped", mf->embedded);
		/* pinned here by pip: the file as given pins no hashes */
		cJSON_AddBoolToObject(m, "locked", b->locks[r->m].path != NULL);
		if (mf->summary)
			cJSON_AddStringToObject(m, "summary", mf->summary);
	}
	return 0;
}

/* The path under a --python-mirror where an interpreter URL's archive is
 * served: what follows ".../releases/download/" (or, for other URLs, the
 * path after the host), percent-decoded: the part interpreter.c keeps
 * when it puts a mirror in front. *raw points at it, still encoded.
 * Returns 0, or ML_EFAIL for a path that is empty or leaves the
 * directory. */
static int mirror_path(char *dst, size_t sz, const char **raw, const char *url, ml_err *err)
{
	const char *rest = strstr(url, "/releases/download/");
	if (rest) {
		rest += strlen("/releases/download/");
	} else {
		const char *host = strstr(url, "://");
		rest = host ? strchr(host + 3, '/') : NULL;
		rest = rest ? rest + 1 : "";
	}
	*raw = rest;
	size_t n = 0;
	for (const char *p = rest; *p && *p != '?' && *p != '#'; p++) {
		int c = (unsigned char)*p;
		if (c == '%' && p[1] && p[2]) {
			char h[3] = {p[1], p[2], 0};
			c = (int)strtol(h, NULL, 16);
			p += 2;
		}
		if (n + 1 >= sz || c == 0 || c == '\\')
			return ml_err_set(err, ML_EFAIL,
			                  "interpreter URL '%s' names no usable path", url);
		dst[n++] = (char)c;
	}
	dst[n] = '\0';
	/* every segment non-empty and not . or .. */
	for (const char *s = dst;;) {
		size_t l = strcspn(s, "/");
		if (l == 0 || (l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
			return ml_err_set(err, ML_EFAIL,
			                  "interpreter URL '%s' names no usable path", url);
		if (!s[l])
			break;
		s += l + 1;
	}
	return 0;
}

/* Fetches the pinned archive of pp into the cache and places it at
 * stage/python/<mirror path>. */
static int fetch_interpreter(bundle *b, ml_cache *cache, const ml_python_plan *pp, char *rel,
                             size_t relsz, ml_err *err)
{
	const ml_install_bundle_opts *o = b->o;
	const char *raw;
	char sub[1024], url[4096];
	int rc = mirror_path(sub, sizeof(sub), &raw, pp->url, err);
	if (rc)
		return rc;
	const char *mirror = o->python_mirror ? o->python_mirror : getenv("MLSETUP_PYTHON_MIRROR");
	if (mirror && *mirror) {
		size_t ml = strlen(mirror);
		while (ml && mirror[ml - 1] == '/')
			ml--;
		rc = ml_pathf(url, sizeof(url), "%.*s/%s", (int)ml, mirror, raw);
	} else {
		rc = ml_pathf(url, sizeof(url), "%s", pp->url);
	}
	if (rc || ml_pathf(rel, relsz, "python/%s", sub))
		return ml_err_set(err, ML_EFAIL, "interpreter URL too long");
	int64_t size = pp->size;
	if (size < 0 && o->offline)
		return ml_err_set(err, ML_ENOENT,
		                  "its size is not pinned and --offline forbids "
		                  "asking the server");
	/* trusted hosts and cert: the command line's (the index configuration
	 * is a manifest's, not the interpreter's) */
	ml_fetch_opts fo;
	mli_fetch_opts_for(&fo, &o->fetch, NULL, o->offline, &b->ev);
	fo.http.trusted_hosts = o->index.trusted_hosts;
	fo.http.n_trusted = o->index.n_trusted;
	fo.http.cert = o->index.cert;
	/* a size the server does not tell stays -1: the download learns it */
	char *urls[1] = {url};
	if (size < 0 && (rc = ml_http_sizes(&size, urls, 1, &fo, err)) != 0)
		return rc;
	ml_download d;
	memset(&d, 0, sizeof(d));
	rc = ml_download_init(&d, base_name(sub), pp->sha256, size, err);
	if (!rc)
		rc = ml_download_add_url(&d, url, err);
	if (!rc && (rc = ml_fetch_all(&d, 1, cache, &fo, err)) != 0 && d.err.msg[0])
		*err = d.err;
	char dst[ML_PATH_MAX], dir[ML_PATH_MAX];
	const char *base;
	if (!rc && (ml_pathf(dst, sizeof(dst), "%s/%s", b->stage, rel) ||
	            ml_fs_split_path(dir, sizeof(dir), &base, dst)))
		rc = ml_err_set(err, ML_EFAIL, "interpreter path too long");
	int e = 0;
	if (!rc && ((e = ml_fs_mkdirs(dir, 0755)) != 0 ||
	            (e = ml_fs_link_or_copy(d.path, dst, NULL)) != 0))
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", dst, strerror(-e));
	ml_download_release(&d);
	return rc;
}

/* Bundles the interpreter archive of each Python planned; one that cannot
 * be fetched is a warning. */
static int bundle_interpreters(bundle *b, cJSON *have, cJSON *missing, ml_err *err)
{
	char cdir[ML_PATH_MAX];
	ml_cache *cache = NULL;
	if (ml_cache_dir(cdir, sizeof(cdir), b->o->cache_dir) != 0) {
		ml_err_set(err, ML_EFAIL, "no cache directory: HOME is not set");
		ml_err_hint(err, "pass --cache-dir DIR or set MLSETUP_CACHE_DIR");
		return ML_EFAIL;
	}
	int rc = ml_cache_open(&cache, cdir, ML_CACHE_SHARED, err);
	for (size_t i = 0; !rc && i < b->n_runs; i++) {
		if (b->runs[i].rc)
			continue;
		const ml_python_plan *pp = &b->runs[i].dl.plan->python;
		bool done = false;
		for (size_t j = 0; j < i && !done; j++)
			done = !b->runs[j].rc && strcmp(b->runs[j].dl.plan->python.xy, pp->xy) == 0;
		if (done)
			continue;
		char rel[1200];
		ml_err e2 = ML_ERR_INIT;
		mli_stage_begin(&b->ev, ML_STAGE_INTERPRETER);
		int frc = pp->url && pp->url[0]
		                  ? fetch_interpreter(b, cache, pp, rel, sizeof(rel), &e2)
		                  : ml_err_set(&e2, ML_ENOENT, "no archive is pinned for it");
		mli_stage_end(&b->ev, NULL, frc);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(frc ? missing : have, x);
		cJSON_AddStringToObject(x, "python", pp->xy);
		cJSON_AddStringToObject(x, "name", pp->pin_name ? pp->pin_name : "");
		if (frc) {
			cJSON_AddStringToObject(x, "reason", e2.msg);
			mli_say(&b->ev, ML_EV_WARNING,
			        "the bundle holds no interpreter for CPython %s (%s): %s; install "
			        "from it with --python PATH, a CPython %s of the target machine",
			        pp->xy, pp->pin_name ? pp->pin_name : "not pinned", e2.msg, pp->xy);
			if (frc == ML_ENOMEM)
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			continue;
		}
		cJSON_AddStringToObject(x, "version", pp->version);
		cJSON_AddStringToObject(x, "path", rel);
		cJSON_AddStringToObject(x, "sha256", pp->sha256);
		b->res->n_interpreters++;
		ml_buf_printf(&b->archives, "%s%s", b->archives.len ? " " : "", pp->xy);
	}
	ml_cache_close(cache);
	return rc;
}

/* python/pins.json: the pins the plans used. */
static int write_pins(bundle *b, cJSON *rec, ml_err *err)
{
	const char *path = b->o->python_pins;
	if (!path || !*path)
		path = getenv("MLSETUP_PYTHON_PINS");
	char *text = NULL;
	size_t len = 0;
	const ml_embedded_file *f = NULL;
	if (path && *path) {
		int rc = ml_os_read_file(&text, &len, NULL, path, 4u << 20, err);
		if (rc)
			return rc;
	} else if (!(f = ml_embedded_find("python.json"))) {
		return ml_err_set(err, ML_ENOENT, "python.json is not in this build");
	}
	char hex[65];
	int rc = put_file(b, "python/pins.json", f ? f->data : text, f ? f->size : len, 0644, true,
	                  hex, err);
	free(text);
	if (!rc) {
		cJSON *p = cJSON_AddObjectToObject(rec, "python_pins");
		cJSON_AddStringToObject(p, "path", "python/pins.json");
		cJSON_AddStringToObject(p, "sha256", hex);
	}
	return rc;
}

/* DIR/mlsetup: a copy of the running binary. */
static int copy_self(bundle *b, cJSON *rec, ml_err *err)
{
	const char *self = b->o->self ? b->o->self : "/proc/self/exe";
	char real[PATH_MAX], dst[ML_PATH_MAX];
	if (!realpath(self, real))
		return ml_err_set(err, ML_EIO, "cannot find the mlsetup binary '%s': %s", self,
		                  strerror(errno));
	if (ml_pathf(dst, sizeof(dst), "%s/mlsetup", b->stage))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", b->stage);
	int in = open(real, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return ml_err_set(err, ML_EIO, "cannot read '%s': %s", real, strerror(errno));
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0755);
	int e = out < 0 ? -errno : ml_fs_copy_fd(out, in);
	if (out >= 0 && close(out) != 0 && !e)
		e = -errno;
	close(in);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", dst, strerror(-e));
	char hex[65];
	uint64_t size = 0;
	int rc = ml_sha256_file(hex, &size, dst, err);
	if (rc)
		return rc;
	ml_buf_printf(&b->sums, "%s  mlsetup\n", hex);
	const char *build = ml_version_build();
	b->res->release_binary = strncmp(build, "release ", 8) == 0;
	cJSON *m = cJSON_AddObjectToObject(rec, "mlsetup");
	cJSON_AddStringToObject(m, "path", "mlsetup");
	cJSON_AddStringToObject(m, "version", ML_VERSION);
	cJSON_AddStringToObject(m, "commit", ml_version_commit());
	cJSON_AddStringToObject(m, "build", build);
	cJSON_AddBoolToObject(m, "release", b->res->release_binary);
	cJSON_AddStringToObject(m, "sha256", hex);
	cJSON_AddNumberToObject(m, "size", (double)size);
	if (!b->res->release_binary)
		mli_say(&b->ev, ML_EV_WARNING,
		        "the bundled mlsetup is not a release build (%s): it needs the shared "
		        "libraries of this machine (libcurl, libarchive, OpenSSL, cJSON, libgit2, "
		        "zstd, lz4, zlib, libdeflate, utf8proc) on every target; bundle with a "
		        "release binary for machines without them",
		        build);
	return 0;
}

/* Writes tmpl (n bytes) into out with every key of kv (pairs of "@KEY@",
 * value) replaced by its value. Returns 0 or ML_ENOMEM. */
static int expand(ml_buf *out, const char *tmpl, size_t n, const char *const *kv, size_t n_kv)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		bool hit = false;
		for (size_t k = 0; k + 1 < n_kv && !hit; k += 2) {
			size_t l = strlen(kv[k]);
			if (i + l <= n && memcmp(tmpl + i, kv[k], l) == 0) {
				rc = ml_buf_puts(out, kv[k + 1]);
				i += l;
				hit = true;
			}
		}
		if (!hit)
			rc = ml_buf_add(out, tmpl + i++, 1);
	}
	return rc ? ML_ENOMEM : 0;
}

/* DIR/install.sh from the embedded template. */
static int write_install_sh(bundle *b, ml_err *err)
{
	const ml_embedded_file *f = ml_embedded_find("bundle-install.sh");
	if (!f)
		return ml_err_set(err, ML_ENOENT, "bundle-install.sh is not in this build");
	/* the sums without their last newline: the here-document adds one */
	char *sums = strdup(ml_buf_cstr(&b->sums));
	if (!sums)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t sl = strlen(sums);
	if (sl && sums[sl - 1] == '\n')
		sums[sl - 1] = '\0';
	const char *kv[] = {
	        "@SUMS@",   sums,      "@MANIFESTS@", ml_buf_cstr(&b->choice),
	        "@PYTHON@", b->python, "@ARCHIVES@",  ml_buf_cstr(&b->archives),
	};
	ml_buf out = ML_BUF_INIT;
	int rc = expand(&out, f->data, f->size, kv, sizeof(kv) / sizeof(kv[0]));
	char hex[65];
	rc = rc ? ml_err_set(err, ML_ENOMEM, "out of memory")
	        : put_file(b, "install.sh", out.data, out.len, 0755, false, hex, err);
	ml_buf_release(&out);
	free(sums);
	return rc;
}

/* Each plan, as the record lists it. */
static void record_plans(bundle *b, cJSON *plans)
{
	for (size_t i = 0; i < b->n_runs; i++) {
		plan_run *r = &b->runs[i];
		cJSON *p = cJSON_CreateObject();
		cJSON_AddItemToArray(plans, p);
		cJSON_AddStringToObject(p, "manifest", base_name(r->manifest));
		if (r->rc) {
			cJSON_AddStringToObject(p, "python", r->python ? r->python : "");
			cJSON_AddStringToObject(p, "status", "left out");
			cJSON_AddStringToObject(p, "reason", r->err.msg);
			continue;
		}
		const ml_plan *pl = r->dl.plan;
		cJSON_AddStringToObject(p, "python", pl->python.xy);
		cJSON_AddStringToObject(p, "status", "ok");
		cJSON *files = cJSON_AddArrayToObject(p, "files");
		for (size_t j = 0; j < r->dl.n_items; j++) {
			const ml_download *d = &r->dl.items[j];
			char rel[512];
			snprintf(rel, sizeof(rel), "files/%s", d->name);
			cJSON *f = cJSON_CreateObject();
			cJSON_AddItemToArray(files, f);
			cJSON_AddStringToObject(f, "name", pl->files[j].name);
			cJSON_AddStringToObject(f, "version",
			                        pl->files[j].version ? pl->files[j].version : "");
			cJSON_AddStringToObject(f, "path", rel);
			cJSON_AddStringToObject(f, "sha256", d->sha256);
			cJSON_AddNumberToObject(f, "size", (double)d->size);
		}
	}
}

/* Puts the finished stage at dest. */
static int commit(bundle *b, ml_err *err)
{
	int e = ml_fs_sync_tree(b->stage);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot sync '%s': %s", b->stage, strerror(-e));
	rmdir(b->o->dest); /* an empty directory may be there; anything else stays */
	if (rename(b->stage, b->o->dest) != 0) {
		int en = errno;
		if (en == EEXIST || en == ENOTEMPTY)
			return dest_usable(b->o->dest, err)
			               ? ML_EUSAGE
			               : ml_err_set(err, ML_EIO, "cannot create '%s'", b->o->dest);
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", b->o->dest, strerror(en));
	}
	b->stage[0] = '\0';
	if (!realpath(b->o->dest, b->res->dest))
		ml_strlcpy(b->res->dest, b->o->dest, sizeof(b->res->dest));
	return 0;
}

/* This machine's platform, or opts->platform, as "os-arch". */
static int platform_of(bundle *b, ml_err *err)
{
	if (b->o->platform) {
		ml_strlcpy(b->res->platform, b->o->platform, sizeof(b->res->platform));
		return 0;
	}
	ml_machine *m = NULL;
	ml_detect_opts d = ML_DETECT_OPTS_INIT;
	d.root = b->o->sysroot;
	d.target_dir = ".";
	d.no_smi = true;
	int rc = ml_detect(&m, &d, err);
	if (!rc)
		snprintf(b->res->platform, sizeof(b->res->platform), "%s-%s", m->os.name,
		         m->os.arch);
	ml_machine_free(m);
	return rc;
}

static int run(bundle *b, ml_err *err)
{
	ml_install_bundle_result *res = b->res;
	cJSON *rec = cJSON_CreateObject();
	if (!rec)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	res->record = rec;
	int rc = dest_usable(b->o->dest, err);
	if (!rc)
		rc = candidates(b, err);
	if (!rc)
		rc = platform_of(b, err);
	if (!rc)
		rc = stage_make(b, err);
	if (!rc)
		rc = plan_all(b, err);
	if (!rc)
		rc = place_index(b, err);
	cJSON_AddStringToObject(rec, "schema", "mlsetup.bundle/1");
	cJSON_AddStringToObject(rec, "platform", res->platform);
	cJSON_AddStringToObject(rec, "python", b->python);
	cJSON_AddStringToObject(rec, "index", "simple/");
	cJSON_AddStringToObject(rec, "find_links", "files/index.html");
	cJSON_AddStringToObject(rec, "python_mirror", "python/");
	if (b->project)
		ml_project_info_add_json(rec, "project", b->project);
	cJSON *manifests = cJSON_AddArrayToObject(rec, "manifests");
	if (!rc)
		rc = copy_manifests(b, manifests, err);
	if (!rc && b->res->n_locked) { /* the locks are in manifests/ now */
		char locked[ML_PATH_MAX];
		int e = ml_pathf(locked, sizeof(locked), "%s/.locked", b->stage)
		                ? -ENAMETOOLONG
		                : ml_fs_rm_tree(locked);
		if (e)
			rc = ml_err_set(err, ML_EIO, "cannot remove '%s': %s", locked,
			                strerror(-e));
	}
	cJSON *have = cJSON_AddArrayToObject(rec, "interpreters");
	cJSON *missing = cJSON_AddArrayToObject(rec, "missing_interpreters");
	if (!rc)
		rc = bundle_interpreters(b, have, missing, err);
	if (!rc)
		rc = write_pins(b, rec, err);
	if (!rc)
		rc = copy_self(b, rec, err);
	if (!rc) {
		record_plans(b, cJSON_AddArrayToObject(rec, "plans"));
		cJSON *t = cJSON_AddObjectToObject(rec, "totals");
		cJSON_AddNumberToObject(t, "plans", (double)res->n_plans);
		cJSON_AddNumberToObject(t, "left_out", (double)res->n_skipped);
		cJSON_AddNumberToObject(t, "files", (double)res->n_files);
		cJSON_AddNumberToObject(t, "bytes", (double)res->bytes);
		cJSON_AddNumberToObject(t, "interpreters", (double)res->n_interpreters);
		rc = write_install_sh(b, err);
	}
	if (!rc) {
		char *text = cJSON_Print(rec);
		char hex[65];
		rc = text ? put_file(b, "bundle.json", text, strlen(text), 0644, false, hex, err)
		          : ml_err_set(err, ML_ENOMEM, "out of memory");
		free(text);
	}
	if (!rc)
		rc = commit(b, err);
	return rc;
}

int ml_install_bundle(ml_install_bundle_result *res, const ml_install_bundle_opts *o, ml_err *err)
{
	memset(res, 0, sizeof(*res));
#ifdef _WIN32
	/* A bundle carries install.sh and a copy of /proc/self/exe. */
	(void)o;
	return ml_err_set(err, ML_EUNSUPPORTED, "making a bundle is not supported on Windows yet");
#endif
	double t0 = mli_now();
	bundle b;
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.res = res;
	b.ev = (mli_events){o->on_event, o->event_data, ML_STAGE_FETCH, t0};
	b.sums = (ml_buf)ML_BUF_INIT;
	b.archives = (ml_buf)ML_BUF_INIT;
	b.choice = (ml_buf)ML_BUF_INIT;
	int rc = o->dest && *o->dest ? run(&b, err)
	                             : ml_err_set(err, ML_EUSAGE, "no bundle directory given");
	if (b.stage[0])
		ml_fs_rm_tree(b.stage);
	for (size_t i = 0; i < b.n_runs; i++)
		ml_install_download_result_release(&b.runs[i].dl);
	free(b.runs);
	for (size_t i = 0; b.locks && i < b.n_manifests; i++)
		free(b.locks[i].path);
	free(b.locks);
	free(b.manifests);
	for (size_t i = 0; i < b.n_cands; i++)
		free(b.cands[i]);
	free(b.cands);
	ml_project_info_free(b.project);
	cJSON_Delete(b.selection);
	ml_buf_release(&b.choice);
	ml_buf_release(&b.sums);
	ml_buf_release(&b.archives);
	res->seconds = mli_now() - t0;
	return rc;
}

void ml_install_bundle_result_release(ml_install_bundle_result *res)
{
	if (!res)
		return;
	cJSON_Delete(res->record);
	memset(res, 0, sizeof(*res));
}
