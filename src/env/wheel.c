/*
 * wheel.c - installing wheels (PEP 427; packaging.python.org "Binary
 * distribution format"), in two steps so a warm install decompresses
 * nothing:
 *
 *   ml_wheel_unpack()            wheel -> <cache>/unpacked/sha256/<hash>/,
 *                                once per machine, verified against RECORD
 *   ml_wheel_install_unpacked()  unpacked tree -> an environment, by
 *                                reflink, hardlink or copy, plus the files an
 *                                installer writes itself (scripts with
 *                                "#!python" rewritten, console launchers,
 *                                INSTALLER, REQUESTED, RECORD)
 *
 * The unpacked cache's files are read-only (0444/0555), so an environment
 * that hardlinks them cannot change the cache by editing a file in place
 * (root ignores those bits: there, a reflink or copy is the only
 * protection). Files the installer writes into an environment are always
 * new inodes: an existing path is unlinked first, never opened for
 * writing, since it may be a hardlink into the cache.
 */
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <linux/fs.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/pkg.h"

#define MARKER_NAME   "unpacked.json"
#define MARKER_SCHEMA "mlsetup.unpacked/1"
#define MAX_META      ((size_t)64 << 20) /* RECORD and friends, bytes */
#define MAX_SCRIPT    ((size_t)64 << 20)

const char *ml_link_method_name(ml_link_method m)
{
	switch (m) {
	case ML_LINK_REFLINK:
		return "reflink";
	case ML_LINK_HARDLINK:
		return "hardlink";
	case ML_LINK_COPY:
		return "copy";
	default:
		return "auto";
	}
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

bool mle_is_absolute(const char *p, ml_env_os os)
{
	if (!p)
		return false;
	if (p[0] == '/')
		return true;
	return os == ML_ENV_WINDOWS &&
	       ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
	       (p[2] == '/' || p[2] == '\\');
}

int ml_env_layout_init(ml_env_layout *out, const char *root, const char *final_root,
                       const char *python_xy, ml_err *err)
{
	return ml_env_layout_init_os(out, root, final_root, python_xy, ML_ENV_OS_NATIVE, err);
}

int ml_env_layout_init_os(ml_env_layout *out, const char *root, const char *final_root,
                          const char *python_xy, ml_env_os os, ml_err *err)
{
	ml_env_layout l;
	memset(&l, 0, sizeof l);
	if (os != ML_ENV_POSIX && os != ML_ENV_WINDOWS)
		return ml_err_set(err, ML_EFAIL, "unknown environment layout %d", (int)os);
	if (!mle_is_absolute(root, os) || !mle_is_absolute(final_root, os))
		return ml_err_set(err, ML_EFAIL, "environment paths must be absolute ('%s', '%s')",
		                  root ? root : "", final_root ? final_root : "");
	if (has_control(root) || has_control(final_root))
		return ml_err_set(err, ML_EFAIL,
		                  "environment path '%s' contains a control character", final_root);
	if (ml_strlcpy(l.root, root, sizeof l.root) >= sizeof l.root - 256 ||
	    ml_strlcpy(l.final_root, final_root, sizeof l.final_root) >= sizeof l.final_root - 256)
		return ml_err_set(err, ML_EFAIL, "environment path '%s' is too long", final_root);
	size_t n = strlen(l.root);
	while (n > 1 && l.root[n - 1] == '/')
		l.root[--n] = '\0';
	n = strlen(l.final_root);
	while (n > 1 && l.final_root[n - 1] == '/')
		l.final_root[--n] = '\0';
	const char *p = python_xy;
	bool ok = p && p[0] == '3' && p[1] == '.' && p[2] >= '0' && p[2] <= '9';
	for (size_t i = 3; ok && p[i]; i++)
		ok = p[i] >= '0' && p[i] <= '9' && i < 5;
	if (!ok)
		return ml_err_set(err, ML_EFAIL, "'%s' is not a Python 3.N version",
		                  python_xy ? python_xy : "");
	snprintf(l.python_xy, sizeof l.python_xy, "%s", python_xy);
	l.os = os;
	if (os == ML_ENV_WINDOWS) {
		snprintf(l.site_packages, sizeof l.site_packages, "Lib/site-packages");
		snprintf(l.scripts, sizeof l.scripts, "Scripts");
		snprintf(l.python, sizeof l.python, "Scripts/python.exe");
	} else {
		snprintf(l.site_packages, sizeof l.site_packages, "lib/python%s/site-packages",
		         python_xy);
		snprintf(l.scripts, sizeof l.scripts, "bin");
		snprintf(l.python, sizeof l.python, "bin/python");
	}
	*out = l;
	return 0;
}

/* --- small file helpers ------------------------------------------------------------ */

static int read_small(char **out, size_t *len, const char *path, size_t max, ml_err *err)
{
	size_t n = 0;
	int rc = ml_os_read_file(out, &n, NULL, path, max + 1, err);
	if (rc)
		return rc;
	if (n > max) {
		free(*out);
		*out = NULL;
		return ml_err_set(err, ML_EINTEGRITY, "'%s' is larger than %zu bytes", path, max);
	}
	if (len)
		*len = n;
	return 0;
}

static int join(char *dst, size_t sz, const char *a, const char *b)
{
	int n = snprintf(dst, sz, "%s/%s", a, b);
	return (n < 0 || (size_t)n >= sz) ? ML_EFAIL : 0;
}

/* "sha256=<b64>" of n bytes (PEP 376 RECORD). Returns 0 or ML_ENOMEM. */
static int record_hash_mem(char *dst, size_t sz, const void *data, size_t n)
{
	uint8_t d[32];
	int rc = ml_sha256_buf(d, data, n);
	if (rc)
		return rc;
	memcpy(dst, "sha256=", 7);
	return mle_b64url(dst + 7, sz - 7, d, 32);
}

/* --- the unpacked cache's marker ------------------------------------------------------ */

static int write_marker(const char *dir, const ml_unpacked *u, const char *filename,
                        const char *sha256, ml_err *err)
{
	cJSON *o = cJSON_CreateObject();
	char *txt = NULL;
	int rc = 0;
	if (!o || !cJSON_AddStringToObject(o, "schema", MARKER_SCHEMA) ||
	    !cJSON_AddStringToObject(o, "wheel", filename) ||
	    !cJSON_AddStringToObject(o, "sha256", sha256) ||
	    !cJSON_AddStringToObject(o, "name", u->name) ||
	    !cJSON_AddStringToObject(o, "version", u->version) ||
	    !cJSON_AddStringToObject(o, "dist_info", u->dist_info) ||
	    !cJSON_AddBoolToObject(o, "root_is_purelib", u->root_is_purelib) ||
	    !cJSON_AddNumberToObject(o, "files", (double)u->n_files) ||
	    !cJSON_AddNumberToObject(o, "bytes", (double)u->bytes_extracted) ||
	    !(txt = cJSON_PrintUnformatted(o))) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	char path[ML_PATH_MAX];
	if (join(path, sizeof path, dir, MARKER_NAME)) {
		rc = ml_err_set(err, ML_EFAIL, "path too long: '%s'", dir);
		goto out;
	}
	size_t n = strlen(txt);
	txt[n] = '\n';
	int w = ml_fs_write_file(path, txt, n + 1, 0444, true, false); /* see ml_wheel_unpack */
	if (w)
		rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-w));
out:
	cJSON_free(txt);
	cJSON_Delete(o);
	return rc;
}

/* Reads <dir>/unpacked.json into *u (dir, name, version, dist_info,
 * purelib, n_files). Returns 0, ML_ENOENT (no marker) or ML_EPARSE. */
static int read_marker(ml_unpacked *u, const char *dir, const char *sha256, ml_err *err)
{
	char path[ML_PATH_MAX], *txt = NULL;
	size_t len = 0;
	if (join(path, sizeof path, dir, MARKER_NAME))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", dir);
	int rc = read_small(&txt, &len, path, 1 << 16, err);
	if (rc)
		return rc == ML_ENOENT ? ML_ENOENT : ML_EPARSE;
	cJSON *o = cJSON_ParseWithLength(txt, len);
	free(txt);
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(o, "schema");
	const cJSON *sha = cJSON_GetObjectItemCaseSensitive(o, "sha256");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "version");
	const cJSON *di = cJSON_GetObjectItemCaseSensitive(o, "dist_info");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, MARKER_SCHEMA) != 0 ||
	    !cJSON_IsString(name) || !cJSON_IsString(ver) || !cJSON_IsString(di) ||
	    !cJSON_IsString(sha) || (sha256 && strcmp(sha->valuestring, sha256) != 0)) {
		cJSON_Delete(o);
		return ml_err_set(err, ML_EPARSE, "'%s' is not an mlsetup unpacked-wheel marker",
		                  path);
	}
	ml_unpacked r;
	memset(&r, 0, sizeof r);
	ml_strlcpy(r.dir, dir, sizeof r.dir);
	ml_strlcpy(r.name, name->valuestring, sizeof r.name);
	ml_strlcpy(r.version, ver->valuestring, sizeof r.version);
	ml_strlcpy(r.dist_info, di->valuestring, sizeof r.dist_info);
	r.root_is_purelib = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "root_is_purelib"));
	r.n_files = cJSON_IsNumber(files) ? (uint64_t)files->valuedouble : 0;
	cJSON_Delete(o);
	if (strchr(r.dist_info, '/') || strcmp(r.dist_info, "..") == 0 || !r.dist_info[0])
		return ml_err_set(err, ML_EPARSE, "'%s' names a bad .dist-info", path);
	*u = r;
	return 0;
}

/* --- checking an extracted wheel --------------------------------------------------- */

static bool is_signature(const char *path, const char *di)
{
	size_t n = strlen(di);
	if (strncmp(path, di, n) != 0 || path[n] != '/')
		return false;
	const char *b = path + n + 1;
	return strcmp(b, "RECORD") == 0 || strcmp(b, "RECORD.jws") == 0 ||
	       strcmp(b, "RECORD.p7s") == 0;
}

/* Compares one RECORD hash ("algo=b64") with the file. */
static int check_hash(const ml_record_row *row, const ml_extracted_file *f, const char *tree,
                      const char *what, ml_err *err)
{
	const char *eq = strchr(row->hash, '=');
	char algo[16];
	size_t an = eq ? (size_t)(eq - row->hash) : 0;
	if (!eq || an == 0 || an >= sizeof algo)
		return ml_err_set(err, ML_EINTEGRITY,
		                  "wheel '%s': RECORD hash of '%s' is malformed", what, row->path);
	memcpy(algo, row->hash, an);
	algo[an] = '\0';
	uint8_t d[64];
	unsigned dl = 32;
	if (strcmp(algo, "sha256") == 0) {
		memcpy(d, f->sha256, 32);
	} else if ((strcmp(algo, "sha384") == 0 || strcmp(algo, "sha512") == 0) && f->dropped) {
		return 0; /* not installed: only its sha256 was computed, and CRC-32 checked */
	} else if (strcmp(algo, "sha384") == 0 || strcmp(algo, "sha512") == 0) {
		char path[ML_PATH_MAX];
		if (join(path, sizeof path, tree, f->path))
			return ml_err_set(err, ML_EFAIL, "path too long");
		int rc = ml_digest_file(d, &dl, NULL, -1, path, algo, err);
		if (rc)
			return rc;
	} else {
		ml_err_set(err, ML_EINTEGRITY,
		           "wheel '%s': RECORD hashes '%s' with %s, which is not allowed (sha256 "
		           "or better, PEP 427)",
		           what, row->path, algo);
		ml_err_hint(err, "rebuild the wheel with a current build backend");
		return ML_EINTEGRITY;
	}
	char b64[100];
	mle_b64url(b64, sizeof b64, d, dl);
	if (strcmp(b64, eq + 1) != 0) {
		ml_err_set(err, ML_EINTEGRITY,
		           "wheel '%s': '%s' does not match its RECORD hash (%s=%s, file has %s)",
		           what, row->path, algo, eq + 1, b64);
		ml_err_hint(err, "the wheel was modified after it was built; do not install it");
		return ML_EINTEGRITY;
	}
	return 0;
}

/* Splits "<name>-<version>.dist-info". */
static bool split_dist_info(char *name, size_t nsz, char *ver, size_t vsz, const char *di)
{
	size_t n = strlen(di);
	if (n <= 10 || strcmp(di + n - 10, ".dist-info") != 0)
		return false;
	const char *dash = NULL;
	for (const char *p = di; p < di + n - 10; p++)
		if (*p == '-')
			dash = p;
	if (!dash || dash == di || (size_t)(dash - di) >= nsz ||
	    (size_t)(di + n - 10 - dash - 1) >= vsz || dash + 1 == di + n - 10)
		return false;
	memcpy(name, di, (size_t)(dash - di));
	name[dash - di] = '\0';
	memcpy(ver, dash + 1, (size_t)(di + n - 10 - dash - 1));
	ver[di + n - 10 - dash - 1] = '\0';
	return true;
}

/* Checks the extracted wheel in tree (res lists its files) against its
 * file name, WHEEL and RECORD; fills name/version/dist_info/purelib. */
static int check_wheel(ml_unpacked *u, const char *tree, const ml_extract_result *res,
                       const ml_wheel_name *wn, const char *what, ml_err *err)
{
	int rc = 0;
	char di[384] = "";
	ml_record *rec = NULL;
	mle_map rows = MLE_MAP_INIT;
	bool *used = NULL;
	char *txt = NULL;
	size_t len = 0;

	for (size_t i = 0; i < res->n_listed; i++) {
		const char *p = res->files[i].path, *s = strchr(p, '/');
		if (!s || s - p <= 10 || strncmp(s - 10, ".dist-info", 10) != 0)
			continue;
		size_t n = (size_t)(s - p);
		if (!di[0] && n < sizeof di) {
			memcpy(di, p, n);
			di[n] = '\0';
		} else if (strlen(di) != n || strncmp(di, p, n) != 0) {
			return ml_err_set(err, ML_EINTEGRITY,
			                  "wheel '%s' has more than one .dist-info directory",
			                  what);
		}
	}
	char dname[256], dver[128], norm_a[256], norm_b[256];
	if (!di[0] || !split_dist_info(dname, sizeof dname, dver, sizeof dver, di))
		return ml_err_set(err, ML_EINTEGRITY,
		                  "wheel '%s' has no <name>-<version>.dist-info directory", what);
	if (ml_name_normalize(norm_a, sizeof norm_a, dname) ||
	    ml_name_normalize(norm_b, sizeof norm_b, wn->name) || strcmp(norm_a, norm_b) != 0 ||
	    ml_version_cmp(dver, wn->version) != 0)
		return ml_err_set(err, ML_EINTEGRITY,
		                  "wheel '%s': its .dist-info directory '%s' does not match the "
		                  "file name (PEP 427)",
		                  what, di);

	/* WHEEL */
	char path[ML_PATH_MAX];
	ml_wheel_meta meta;
	if (ml_pathf(path, sizeof path, "%s/%s/WHEEL", tree, di))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", tree);
	if ((rc = read_small(&txt, &len, path, 1 << 20, err)))
		return rc == ML_ENOENT ? ml_err_set(err, ML_EINTEGRITY,
		                                    "wheel '%s' has no %s/WHEEL", what, di)
		                       : rc;
	rc = ml_wheel_meta_parse(&meta, txt, len, err);
	free(txt);
	txt = NULL;
	if (rc) {
		char m[sizeof err->msg];
		ml_strlcpy(m, err->msg, sizeof m);
		return ml_err_set(err, ML_EPARSE, "wheel '%s': %s", what, m);
	}
	if (meta.version_major != 1) {
		ml_err_set(err, ML_EUNSUPPORTED,
		           "wheel '%s' uses Wheel-Version %d.%d; mlsetup installs version 1 wheels "
		           "only (PEP 427)",
		           what, meta.version_major, meta.version_minor);
		ml_err_hint(err, "pin a release of the package whose wheel uses Wheel-Version 1.x");
		return ML_EUNSUPPORTED;
	}

	/* RECORD */
	if (ml_pathf(path, sizeof path, "%s/%s/RECORD", tree, di))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", tree);
	if ((rc = read_small(&txt, &len, path, MAX_META, err)))
		return rc == ML_ENOENT ? ml_err_set(err, ML_EINTEGRITY,
		                                    "wheel '%s' has no %s/RECORD", what, di)
		                       : rc;
	rc = ml_record_parse(&rec, txt, len, err);
	free(txt);
	if (rc) {
		char m[sizeof err->msg];
		ml_strlcpy(m, err->msg, sizeof m);
		return ml_err_set(err, rc == ML_ENOMEM ? ML_ENOMEM : ML_EINTEGRITY,
		                  "wheel '%s': %s", what, m);
	}
	if (!(used = calloc(rec->n ? rec->n : 1, 1))) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rec->n; i++) {
		int r = mle_map_put(&rows, rec->rows[i].path, i, NULL);
		if (r < 0) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		if (r == 0) {
			rc = ml_err_set(err, ML_EINTEGRITY, "wheel '%s': RECORD lists '%s' twice",
			                what, rec->rows[i].path);
			goto out;
		}
	}
	for (size_t i = 0; i < res->n_listed; i++) {
		const ml_extracted_file *f = &res->files[i];
		if (is_signature(f->path, di))
			continue;
		size_t idx;
		if (!mle_map_get(&rows, f->path, &idx)) {
			ml_err_set(err, ML_EINTEGRITY,
			           "wheel '%s': '%s' is not listed in its RECORD", what, f->path);
			ml_err_hint(err, "a file was added to the wheel after it was built; do not "
			                 "install it");
			rc = ML_EINTEGRITY;
			goto out;
		}
		const ml_record_row *row = &rec->rows[idx];
		used[idx] = true;
		if (!row->hash[0]) {
			rc = ml_err_set(err, ML_EINTEGRITY,
			                "wheel '%s': RECORD has no hash for '%s'", what, f->path);
			goto out;
		}
		if (row->size < 0 || (uint64_t)row->size != f->size) {
			rc = ml_err_set(err, ML_EINTEGRITY,
			                "wheel '%s': '%s' is %llu bytes, RECORD says %lld", what,
			                f->path, (unsigned long long)f->size, (long long)row->size);
			ml_err_hint(err,
			            "the wheel was modified after it was built; do not install it");
			goto out;
		}
		if ((rc = check_hash(row, f, tree, what, err)))
			goto out;
	}
	for (size_t i = 0; i < rec->n; i++) {
		if (used[i] || !rec->rows[i].hash[0] || is_signature(rec->rows[i].path, di))
			continue;
		rc = ml_err_set(err, ML_EINTEGRITY,
		                "wheel '%s': RECORD lists '%s', which the wheel does not hold",
		                what, rec->rows[i].path);
		goto out;
	}

	/* .data/<scheme>/ */
	char data[400];
	snprintf(data, sizeof data, "%.*s.data/", (int)(strlen(di) - 10), di);
	size_t dl = strlen(data);
	for (size_t i = 0; i < res->n_listed; i++) {
		const char *p = res->files[i].path;
		if (strncmp(p, data, dl) != 0)
			continue;
		const char *s = p + dl, *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : 0;
		static const char *const schemes[] = {"purelib", "platlib", "scripts", "headers",
		                                      "data"};
		bool ok = false;
		for (size_t k = 0; k < 5 && e; k++)
			ok |= strlen(schemes[k]) == n && strncmp(schemes[k], s, n) == 0;
		if (!ok) {
			rc = ml_err_set(err, ML_EINTEGRITY,
			                "wheel '%s': '%s' is not under a known .data scheme "
			                "(purelib, platlib, scripts, headers, data)",
			                what, p);
			goto out;
		}
	}
	ml_strlcpy(u->name, dname, sizeof u->name);
	ml_strlcpy(u->version, dver, sizeof u->version);
	ml_strlcpy(u->dist_info, di, sizeof u->dist_info);
	u->root_is_purelib = meta.root_is_purelib;
out:
	mle_map_release(&rows);
	free(used);
	ml_record_free(rec);
	return rc;
}

int ml_wheel_unpack(ml_unpacked *out, const char *cache_dir, const char *wheel_path,
                    const char *sha256, const ml_unpack_opts *opts, ml_err *err)
{
	int threads = opts && opts->threads > 1 ? opts->threads : 1;
	mle_slots slots;
	if (mle_slots_init(&slots, threads - 1) != 0)
		return ml_err_set(err, ML_EFAIL, "cannot create a mutex");
	int rc = mle_wheel_unpack(out, cache_dir, wheel_path, sha256, opts, &slots, err);
	mle_slots_release(&slots);
	return rc;
}

int mle_wheel_unpack(ml_unpacked *out, const char *cache_dir, const char *wheel_path,
                     const char *sha256, const ml_unpack_opts *opts, mle_slots *slots, ml_err *err)
{
	ml_unpack_opts o = opts ? *opts : (ml_unpack_opts)ML_UNPACK_OPTS_INIT;
	if (!ml_is_sha256_hex(sha256))
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 (64 lower-case hex digits)",
		                  sha256 ? sha256 : "");
	const char *filename = o.filename;
	if (!filename) {
		const char *s = strrchr(wheel_path, '/');
		filename = s ? s + 1 : wheel_path;
	}
	ml_wheel_name wn;
	int rc = ml_wheel_filename_parse(&wn, filename, err);
	if (rc)
		return rc;

	char base[ML_PATH_MAX], final[ML_PATH_MAX], lockp[ML_PATH_MAX], tmp[ML_PATH_MAX];
	char tree[ML_PATH_MAX], prefix[96], rnd[17];
	if (snprintf(base, sizeof base, "%s/unpacked/sha256", cache_dir) >= (int)sizeof base - 200)
		return ml_err_set(err, ML_EFAIL, "cache path too long: '%s'", cache_dir);
	ml_pathf(final, sizeof final, "%s/%s", base, sha256);
	ml_pathf(lockp, sizeof lockp, "%s/%s.lock", base, sha256);
	ml_unpacked u;
	ml_err quiet = ML_ERR_INIT;
	if (read_marker(&u, final, sha256, &quiet) == 0) {
		u.cache_hit = true;
		*out = u;
		return 0;
	}
	int lockfd = -1;
	if ((rc = mle_lock_in_dir(&lockfd, base, lockp, err)))
		return rc;
	tmp[0] = '\0';
	ml_extract_result res = {0};
	if (read_marker(&u, final, sha256, &quiet) == 0) { /* another process finished it */
		u.cache_hit = true;
		*out = u;
		goto out;
	}
	/* Under the lock, anything else with our hash's name is debris. */
	struct stat st;
	if (lstat(final, &st) == 0) {
		ml_random_hex(rnd, 8);
		ml_pathf(tmp, sizeof tmp, "%s/%s.trash-%s", base, sha256, rnd);
		if (rename(final, tmp) != 0 && ml_fs_rm_tree(final) != 0) {
			rc = ml_err_set(err, ML_EIO, "cannot remove the incomplete '%s'", final);
			tmp[0] = '\0';
			goto out;
		}
		ml_fs_rm_tree(tmp);
		tmp[0] = '\0';
	}
	snprintf(prefix, sizeof prefix, "%s.tmp-", sha256);
	ml_fs_rm_prefixed(base, prefix);
	snprintf(prefix, sizeof prefix, "%s.trash-", sha256);
	ml_fs_rm_prefixed(base, prefix);

	/* Bytes are verified before any parser sees them: here, unless the
	 * caller hashed this file a moment ago (the download that wrote it
	 * hashed every byte it wrote; a cache lookup hashed the blob). A
	 * second pass over a torch stack's 3 GB cost 2 s of CPU. */
	char hex[65];
	if (!o.sha256_checked) {
		if ((rc = ml_sha256_file(hex, NULL, wheel_path, err)))
			goto out;
		if (strcmp(hex, sha256) != 0) {
			rc = ml_err_set(err, ML_EINTEGRITY, "wheel '%s' has sha256 %s, expected %s",
			                filename, hex, sha256);
			ml_err_hint(err,
			            "the cached file is damaged; run 'mlsetup cache clean' and "
			            "install again");
			goto out;
		}
	}

	ml_random_hex(rnd, 8);
	ml_pathf(tmp, sizeof tmp, "%s/%s.tmp-%s", base, sha256, rnd);
	ml_pathf(tree, sizeof tree, "%s/tree", tmp);
	if (mkdir(tmp, 0755) != 0) {
		rc = ml_err_set(err, ML_EIO, "cannot create '%s': %s", tmp, strerror(errno));
		tmp[0] = '\0';
		goto out;
	}
	ml_extract_opts xo = ML_EXTRACT_OPTS_INIT;
	xo.kind = ML_ARCHIVE_WHEEL;
	xo.max_bytes = o.max_bytes;
	xo.max_entries = o.max_entries;
	xo.read_only = true;
	xo.list_files = true;
	xo.drop_pycache = true;
	xo.threads = o.threads;
	xo.windows_names = ML_ENV_OS_NATIVE == ML_ENV_WINDOWS;
	if ((rc = mle_archive_extract(&res, wheel_path, tree, &xo, slots, err)))
		goto out;
	memset(&u, 0, sizeof u);
	if ((rc = check_wheel(&u, tree, &res, &wn, filename, err)))
		goto out;
	u.bytes_extracted = res.bytes;
	u.n_files = res.n_files;
	/* No flush here, neither syncfs nor fsync of the marker and the
	 * directories: flushing once per wheel serialised the workers on the
	 * disk (60 syncfs for the torch stack; later 5 fsyncs per wheel, which
	 * cost a many-small-wheels install half its time). Durability comes
	 * from the one sync before an environment is committed
	 * (ml_env_stage_commit syncs the file system the cache shares); a
	 * marker a power loss tore is not read as one (the directory is
	 * unpacked again), and every use of the tree checks each file's type
	 * and size against RECORD, which catches the truncated files a power
	 * loss leaves. Process crashes (kill -9) need no sync: the marker is
	 * written after the tree and the directory appears by rename. */
	if ((rc = write_marker(tmp, &u, filename, sha256, err)))
		goto out;
	if (rename(tmp, final) != 0) {
		rc = ml_err_set(err, ML_EIO, "cannot move '%s' into place: %s", tmp,
		                strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	ml_strlcpy(u.dir, final, sizeof u.dir);
	u.cache_hit = false;
	*out = u;
out:
	ml_extract_result_release(&res);
	if (tmp[0])
		ml_fs_rm_tree(tmp);
	close(lockfd);
	return rc;
}

/* --- placing files in an environment ---------------------------------------------- */

typedef struct placer {
	const ml_env_layout *env;
	ml_link_method forced;
	bool no_reflink, no_hardlink;
	char lastdir[ML_PATH_MAX];
	ml_wheel_result *res;
	ml_err *err;
	/* Windows layout: the Scripts/NAME.exe paths this wheel's launchers
	 * took (entry points first, then "#!python" scripts) */
	mle_map launchers;
} placer;

/* Creates the parent directories of dst. */
static int ensure_parent(placer *pl, const char *dst)
{
	const char *s = strrchr(dst, '/');
	size_t n = (size_t)(s - dst);
	if (strlen(pl->lastdir) == n && strncmp(pl->lastdir, dst, n) == 0)
		return 0;
	char dir[ML_PATH_MAX];
	memcpy(dir, dst, n);
	dir[n] = '\0';
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(pl->err, ML_EIO, "cannot create directory '%s': %s", dir,
		                  strerror(-e));
	memcpy(pl->lastdir, dir, n + 1);
	return 0;
}

/* One attempt with one method. Returns 0 or -errno. */
static int try_place(ml_link_method m, const char *src, const char *dst, mode_t mode)
{
	if (m == ML_LINK_HARDLINK)
		return link(src, dst) == 0 ? 0 : -errno;
	int sfd = open(src, O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return -errno;
	int dfd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dfd < 0) {
		int e = errno;
		close(sfd);
		return -e;
	}
	int rc = 0;
	if (m == ML_LINK_REFLINK)
		rc = ioctl(dfd, FICLONE, sfd) == 0 ? 0 : -errno;
	else
		rc = ml_fs_copy_fd(dfd, sfd);
	if (!rc && fchmod(dfd, mode) != 0)
		rc = -errno;
	if (close(dfd) != 0 && !rc)
		rc = -errno;
	close(sfd);
	if (rc)
		unlink(dst);
	return rc;
}

/* A name beside dst that no other worker or process uses. */
static void temp_beside(char *tmp, size_t sz, const char *dst)
{
	static _Atomic unsigned long counter;
	snprintf(tmp, sz, "%s.mlsetup-new-%ld-%lu", dst, (long)getpid(), ++counter);
}

/* The error for a failed replacement of dst (-errno e). */
static int replace_failed(placer *pl, const char *dst, int e)
{
	if (e == -EISDIR || e == -ENOTEMPTY || e == -EEXIST)
		return ml_err_set(pl->err, ML_EIO, "cannot install '%s': a directory is in the way",
		                  dst);
	return ml_err_set(pl->err, ML_EIO, "cannot replace '%s': %s", dst, strerror(-e));
}

/* Moves tmp over dst (rename: atomic, so wheels that ship the same path,
 * like the nvidia-* wheels' shared nvidia/__init__.py, can be installed by
 * parallel workers; the last one wins, as with pip). */
static int replace_with(placer *pl, const char *tmp, const char *dst)
{
	if (rename(tmp, dst) != 0) {
		int e = -errno;
		unlink(tmp);
		return replace_failed(pl, dst, e);
	}
	pl->res->n_overwritten++;
	return 0;
}

/* Places src (in the unpacked cache) at dst, replacing a file another
 * wheel placed there. */
static int place_file(placer *pl, const char *src, const char *dst, bool exec)
{
	int rc = ensure_parent(pl, dst);
	if (rc)
		return rc;
	mode_t mode = exec ? 0755 : 0644;
	ml_link_method order[3];
	size_t n = 0;
	if (pl->forced != ML_LINK_AUTO) {
		order[n++] = pl->forced;
	} else {
		if (!pl->no_reflink)
			order[n++] = ML_LINK_REFLINK;
		if (!pl->no_hardlink)
			order[n++] = ML_LINK_HARDLINK;
		order[n++] = ML_LINK_COPY;
	}
	char tmp[ML_PATH_MAX + 64];
	int e = 0;
	for (size_t i = 0; i < n; i++) {
		bool replacing = false;
		e = try_place(order[i], src, dst, mode);
		if (e == -EEXIST) {
			temp_beside(tmp, sizeof tmp, dst);
			e = try_place(order[i], src, tmp, mode);
			replacing = true;
		}
		if (e == 0) {
			if (replacing && (rc = replace_with(pl, tmp, dst)))
				return rc;
			pl->res->n_linked++;
			if (order[i] == ML_LINK_REFLINK)
				pl->res->n_reflinked++;
			else if (order[i] == ML_LINK_HARDLINK)
				pl->res->n_hardlinked++;
			else
				pl->res->n_copied++;
			if (order[i] > pl->res->method)
				pl->res->method = order[i];
			return 0;
		}
		/* Methods this pair of file systems cannot do are not tried again
		 * for this wheel. */
		if (order[i] == ML_LINK_REFLINK && pl->forced == ML_LINK_AUTO)
			pl->no_reflink = true;
		if (order[i] == ML_LINK_HARDLINK && e != -EMLINK && pl->forced == ML_LINK_AUTO) {
			pl->no_hardlink = true;
			if (!pl->res->hardlink_errno)
				pl->res->hardlink_errno = -e;
		}
	}
	return ml_err_set(pl->err, ML_EIO, "cannot install '%s' (%s): %s", dst,
	                  ml_link_method_name(n ? order[n - 1] : ML_LINK_COPY), strerror(-e));
}

/* Writes new content at dst (a new inode, replacing what is there). */
static int write_new(placer *pl, const char *dst, const void *data, size_t n, mode_t mode)
{
	int rc = ensure_parent(pl, dst);
	if (rc)
		return rc;
	/* No fsync per file: ml_env_stage_commit() syncs the whole stage. A
	 * path another wheel wrote is replaced atomically, as place_file()
	 * does. */
	int e = ml_fs_write_file(dst, data, n, mode, true, false);
	if (e == -EEXIST) {
		if ((e = ml_fs_write_atomic_nosync(dst, data, n, mode)) != 0)
			return replace_failed(pl, dst, e);
		pl->res->n_overwritten++;
	}
	if (e != 0)
		return ml_err_set(pl->err, ML_EIO, "cannot write '%s': %s", dst, strerror(-e));
	pl->res->n_written++;
	return 0;
}

/* --- scripts and launchers -------------------------------------------------------------- */

/* Appends the interpreter line(s) for python: "#!<python> <args>\n", or,
 * when the path has a space or is longer than 127 bytes (the kernel's
 * limit on older systems), a /bin/sh line that execs python with the
 * script; Python reads the second line as a string literal. */
static int add_shebang(ml_buf *b, const char *python, const char *args, ml_err *err)
{
	bool sh = strchr(python, ' ') || strchr(python, '\t') || strlen(python) > 127;
	if (!sh)
		return ml_buf_printf(b, "#!%s%s%s\n", python, *args ? " " : "", args)
		               ? ml_err_set(err, ML_ENOMEM, "out of memory")
		               : 0;
	if (strpbrk(python, "'\\\n\r"))
		return ml_err_set(err, ML_EFAIL,
		                  "cannot write a launcher for python '%s': quotes or backslashes "
		                  "in a long path",
		                  python);
	if (ml_buf_printf(b, "#!/bin/sh\n'''exec' '%s'%s%s \"$0\" \"$@\"\n' '''\n", python,
	                  *args ? " " : "", args))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return 0;
}

/* PEP 427 "Recommended installer features": a script whose first line
 * starts with "#!python" (or "#!pythonw") gets the environment's python. */
static int rewrite_script(ml_buf *out, const char *data, size_t n, const char *python, ml_err *err)
{
	if (n < 8 || memcmp(data, "#!python", 8) != 0)
		return ml_buf_add(out, data, n) ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
	const char *nl = memchr(data, '\n', n);
	size_t line_end = nl ? (size_t)(nl - data) : n;
	size_t rest = nl ? line_end + 1 : n;
	size_t i = 8;
	if (i < line_end && data[i] == 'w')
		i++;
	char args[256] = "";
	if (i < line_end && (data[i] == ' ' || data[i] == '\t')) {
		size_t s = i, e = line_end;
		while (s < e && (data[s] == ' ' || data[s] == '\t'))
			s++;
		while (e > s && (data[e - 1] == ' ' || data[e - 1] == '\t' || data[e - 1] == '\r'))
			e--;
		if (e - s >= sizeof args || memchr(data + s, '\'', e - s))
			e = s; /* drop arguments we cannot carry safely */
		memcpy(args, data + s, e - s);
		args[e - s] = '\0';
	}
	int rc = add_shebang(out, python, args, err);
	if (rc)
		return rc;
	return ml_buf_add(out, data + rest, n - rest) ? ml_err_set(err, ML_ENOMEM, "out of memory")
	                                              : 0;
}

static int launcher(ml_buf *out, const char *python, const char *module, const char *attr,
                    ml_err *err)
{
	char head[256];
	size_t hn = strcspn(attr, ".");
	memcpy(head, attr, hn);
	head[hn] = '\0';
	int rc = add_shebang(out, python, "", err);
	if (rc)
		return rc;
	if (ml_buf_printf(
	            out,
	            "# -*- coding: utf-8 -*-\n"
	            "import re\n"
	            "import sys\n"
	            "from %s import %s\n"
	            "if __name__ == \"__main__\":\n"
	            "    sys.argv[0] = re.sub(r\"(-script\\.pyw|\\.exe)?$\", \"\", sys.argv[0])\n"
	            "    sys.exit(%s())\n",
	            module, head, attr))
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return 0;
}

/* A Windows layout's .data/scripts file sub (already read: data, n bytes)
 * whose first line is "#!python" or "#!pythonw" becomes <name>.exe, a
 * launcher (console or GUI) running the environment's python.exe or
 * pythonw.exe, as pip does on Windows; rel and recp (ML_PATH_MAX bytes)
 * get the .exe's name. The interpreter is named relative to the .exe's
 * directory ("python.exe", "../python.exe" one level down), so it is
 * right in the staging directory and once in place, wherever that is.
 * Any other file is installed as it is. */
static int windows_script(ml_buf *out, char *rel, char *recp, const char *data, size_t n,
                          const char *sub, mle_map *taken, ml_err *err)
{
	ml_winlauncher_kind kind;
	if (!ml_winlauncher_script_kind(data, n, &kind))
		return ml_buf_add(out, data, n) ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
	char interp[ML_PATH_MAX] = "", exe[300];
	for (const char *p = sub; *p; p++)
		if (*p == '/' && strlen(interp) + 3 < sizeof interp - 16)
			strcat(interp, "../");
	strcat(interp, kind == ML_WINLAUNCHER_GUI ? "pythonw.exe" : "python.exe");
	const char *b = strrchr(sub, '/');
	b = b ? b + 1 : sub;
	const unsigned char *base = NULL;
	size_t base_len = 0;
	int rc;
	if ((rc = ml_winlauncher_exe_name(exe, sizeof exe, b, err)))
		return rc;
	/* rel and recp end with sub: its last component becomes exe. */
	size_t bl = strlen(b);
	char *r = rel + strlen(rel) - bl, *q = recp + strlen(recp) - bl;
	char exe_rel[ML_PATH_MAX];
	if ((size_t)(r - rel) + strlen(exe) >= ML_PATH_MAX ||
	    (size_t)(q - recp) + strlen(exe) >= ML_PATH_MAX)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", sub);
	snprintf(exe_rel, sizeof exe_rel, "%.*s%s", (int)(r - rel), rel, exe);
	/* An entry point or another script of this wheel has that .exe
	 * ("foo" and "foo.py"): this one stays a plain script under its own
	 * name, as pip leaves every script on Windows, and nothing is
	 * overwritten. */
	int put = mle_map_put(taken, exe_rel, 0, NULL);
	if (put < 0)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (put == 0)
		return ml_buf_add(out, data, n) ? ml_err_set(err, ML_ENOMEM, "out of memory") : 0;
	if ((rc = ml_winlauncher_base(&base, &base_len, kind, err)) ||
	    (rc = ml_winlauncher_script(out, base, base_len, interp, data, n, err)))
		return rc;
	strcpy(r, exe);
	strcpy(q, exe);
	return 0;
}

static bool script_name_ok(const char *s)
{
	if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '/' || *s == '\\')
			return false;
	return true;
}

/* --- installing ------------------------------------------------------------------------- */

/* True for the RECORD rows of files a wheel's tree holds that are not
 * installed from it: the signatures and the INSTALLER and REQUESTED of its
 * .dist-info di (this installer writes its own), and the wheel's own
 * bytecode (unpacking dropped it; trees unpacked before may hold it:
 * Python would run it instead of the source). */
static bool row_not_installed(const char *p, const char *di)
{
	size_t din = strlen(di);
	if (strncmp(p, di, din) == 0 && p[din] == '/' &&
	    (is_signature(p, di) || strcmp(p + din + 1, "INSTALLER") == 0 ||
	     strcmp(p + din + 1, "REQUESTED") == 0))
		return true;
	return mle_is_own_bytecode(p);
}

/* --- Windows names ------------------------------------------------------------------------ */

typedef struct name_list {
	char **v;
	size_t n, cap;
} name_list;

static int names_add(name_list *l, const char *a, const char *b)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->v, c * sizeof *v);
		if (!v)
			return ML_ENOMEM;
		l->v = v;
		l->cap = c;
	}
	size_t na = strlen(a), nb = b ? strlen(b) : 0;
	char *s = malloc(na + nb + 2);
	if (!s)
		return ML_ENOMEM;
	memcpy(s, a, na);
	if (b) {
		s[na] = '/';
		memcpy(s + na + 1, b, nb + 1);
	} else {
		s[na] = '\0';
	}
	l->v[l->n++] = s;
	return 0;
}

static void names_release(name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* A Windows layout: every name installing this wheel (.dist-info di,
 * unpacked at tree, RECORD rec) creates is checked before anything is
 * written, with the rules Windows imposes (ml_entry_windows_check()):
 * each installed file's path in the wheel, each console or GUI entry
 * point's name and its Scripts .exe, each "#!python" script's .exe; and
 * names that are one after case folding (NTFS folds case;
 * ml_entry_names_check() with fold_case) are refused among the wheel's
 * paths (with the .dist-info files this installer writes) and among what
 * the Scripts directory gets, named as install_launchers() and
 * windows_script() name them. A Windows build checked the wheel's own
 * paths when it unpacked them (ml_extract_opts.windows_names); they are
 * checked again here for a tree unpacked without them, with the names
 * that only installing makes. Names that are not file names at all are
 * left to the installing code that reports them. Returns 0,
 * ML_EINTEGRITY (err names the entry or entry point and the rule),
 * ML_EPARSE (entry_points.txt), ML_EIO, ML_ENOMEM. */
static int windows_names_check(const char *tree, const char *di, const ml_record *rec,
                               const ml_env_layout *env, ml_err *err)
{
	name_list paths = {NULL, 0, 0}, scripts = {NULL, 0, 0};
	mle_map taken = MLE_MAP_INIT;
	ml_entry_points *ep = NULL;
	char *txt = NULL, *path = malloc(ML_PATH_MAX), *rel = malloc(ML_PATH_MAX);
	ml_err sub = ML_ERR_INIT;
	const char *fold = "";
	int rc = 0;
	if (!path || !rel) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(path, ML_PATH_MAX, "%s/%s/entry_points.txt", tree, di);
	if (access(path, F_OK) == 0) {
		size_t len = 0;
		if ((rc = read_small(&txt, &len, path, 1 << 20, err)))
			goto out;
		rc = ml_entry_points_parse(&ep, txt, len, err);
		free(txt);
		txt = NULL;
		if (rc)
			goto out;
		for (size_t i = 0; i < ep->n; i++) {
			const ml_entry_point *p = &ep->v[i];
			if (strcmp(p->group, "console_scripts") != 0 &&
			    strcmp(p->group, "gui_scripts") != 0)
				continue;
			if (!script_name_ok(p->name))
				continue; /* install_launchers() says so */
			char noun[64], exe[300];
			snprintf(noun, sizeof noun, "%s entry point", p->group);
			if ((rc = ml_entry_windows_check(p->name, strlen(p->name), noun, &sub)) ||
			    (rc = ml_winlauncher_exe_name(exe, sizeof exe, p->name, &sub)) ||
			    (rc = ml_entry_windows_check(exe, strlen(exe), noun, &sub)))
				goto refused;
			if (names_add(&scripts, env->scripts, exe)) {
				rc = ML_ENOMEM;
				goto nomem;
			}
			if (mle_map_put(&taken, scripts.v[scripts.n - 1], 0, NULL) < 0) {
				rc = ML_ENOMEM;
				goto nomem;
			}
		}
	}
	char scripts_dir[400];
	snprintf(scripts_dir, sizeof scripts_dir, "%.*s.data/scripts/", (int)(strlen(di) - 10), di);
	size_t sdl = strlen(scripts_dir);
	for (size_t i = 0; i < rec->n; i++) {
		const char *p = rec->rows[i].path;
		ml_err quiet = ML_ERR_INIT;
		if (!rec->rows[i].hash[0] || row_not_installed(p, di) ||
		    ml_entry_check(NULL, 0, p, strlen(p), ML_ENTRY_FILE, NULL, 0, 0, &quiet) != 0)
			continue; /* the installing loop says what is wrong with it */
		if ((rc = ml_entry_windows_check(p, strlen(p), NULL, &sub)))
			goto refused;
		if (names_add(&paths, p, NULL)) {
			rc = ML_ENOMEM;
			goto nomem;
		}
		if (strncmp(p, scripts_dir, sdl) != 0 || !p[sdl])
			continue;
		/* A script: Scripts/<sub>, or Scripts/<dir/>NAME.exe for a
		 * "#!python" one whose .exe nothing took before (windows_script). */
		const char *subp = p + sdl, *leaf = strrchr(subp, '/');
		leaf = leaf ? leaf + 1 : subp;
		snprintf(rel, ML_PATH_MAX, "%s/%s", env->scripts, subp);
		size_t sl = 0;
		bool exe_script = false;
		if (join(path, ML_PATH_MAX, tree, p) == 0 &&
		    read_small(&txt, &sl, path, MAX_SCRIPT, &quiet) == 0)
			exe_script = ml_winlauncher_script_kind(txt, sl, NULL);
		free(txt);
		txt = NULL;
		char exe[300];
		if (exe_script && ml_winlauncher_exe_name(exe, sizeof exe, leaf, &quiet) == 0) {
			if ((rc = ml_entry_windows_check(exe, strlen(exe), "script", &sub)))
				goto refused;
			size_t keep = strlen(rel) - strlen(leaf);
			if (keep + strlen(exe) < ML_PATH_MAX) {
				char *exe_rel = rel + keep;
				char saved[300];
				ml_strlcpy(saved, exe_rel, sizeof saved);
				strcpy(exe_rel, exe);
				int put = mle_map_put(&taken, rel, 0, NULL);
				if (put < 0) {
					rc = ML_ENOMEM;
					goto nomem;
				}
				if (put == 0)
					strcpy(exe_rel, saved);
			}
		}
		if (names_add(&scripts, rel, NULL)) {
			rc = ML_ENOMEM;
			goto nomem;
		}
	}
	static const char *const own[] = {"INSTALLER", "REQUESTED", "RECORD"};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (names_add(&paths, di, own[i])) {
			rc = ML_ENOMEM;
			goto nomem;
		}
	fold = " (Windows folds case)";
	if ((rc = ml_entry_names_check((const char *const *)paths.v, paths.n, true, &sub)) ||
	    (rc = ml_entry_names_check((const char *const *)scripts.v, scripts.n, true, &sub)))
		goto refused;
	goto out;
refused:
	if (rc == ML_EINTEGRITY) {
		ml_err_set(err, rc, "%s%s", sub.msg, fold);
		ml_err_hint(err, "the wheel cannot be installed on Windows as it is; report it to "
		                 "whoever published it");
	} else {
		*err = sub;
	}
	goto out;
nomem:
	rc = ml_err_set(err, ML_ENOMEM, "out of memory");
out:
	names_release(&paths);
	names_release(&scripts);
	mle_map_release(&taken);
	ml_entry_points_free(ep);
	free(txt);
	free(path);
	free(rel);
	return rc;
}

typedef struct rec_out {
	ml_record r;
	size_t cap;
} rec_out;

static int rec_add(rec_out *ro, const char *path, const char *hash, int64_t size)
{
	if (ro->r.n == ro->cap) {
		size_t c = ro->cap ? ro->cap * 2 : 64;
		ml_record_row *v = realloc(ro->r.rows, c * sizeof *v);
		if (!v)
			return ML_ENOMEM;
		ro->r.rows = v;
		ro->cap = c;
	}
	ml_record_row *row = &ro->r.rows[ro->r.n];
	row->path = strdup(path);
	row->hash = strdup(hash);
	row->size = size;
	if (!row->path || !row->hash) {
		free(row->path);
		free(row->hash);
		return ML_ENOMEM;
	}
	ro->r.n++;
	return 0;
}

static void rec_release(rec_out *ro)
{
	for (size_t i = 0; i < ro->r.n; i++) {
		free(ro->r.rows[i].path);
		free(ro->r.rows[i].hash);
	}
	free(ro->r.rows);
}

/* Writes new content into the environment and lists it in RECORD. */
static int emit(placer *pl, rec_out *ro, const char *dst_rel, const char *rec_path,
                const void *data, size_t n, mode_t mode)
{
	char dst[ML_PATH_MAX], hash[100];
	if (join(dst, sizeof dst, pl->env->root, dst_rel))
		return ml_err_set(pl->err, ML_EFAIL, "path too long: '%s'", dst_rel);
	int rc = write_new(pl, dst, data, n, mode);
	if (rc)
		return rc;
	return record_hash_mem(hash, sizeof hash, data, n) ||
	                       rec_add(ro, rec_path, hash, (int64_t)n)
	               ? ml_err_set(pl->err, ML_ENOMEM, "out of memory")
	               : 0;
}

static int install_launchers(placer *pl, rec_out *ro, const char *tree, const char *di,
                             const char *up, const char *python, ml_err *err)
{
	char path[ML_PATH_MAX], *txt = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/%s/entry_points.txt", tree, di);
	if (access(path, F_OK) != 0)
		return 0;
	int rc = read_small(&txt, &len, path, 1 << 20, err);
	if (rc)
		return rc;
	ml_entry_points *ep = NULL;
	rc = ml_entry_points_parse(&ep, txt, len, err);
	free(txt);
	if (rc)
		return rc;
	ml_buf b = ML_BUF_INIT;
	for (size_t i = 0; i < ep->n && !rc; i++) {
		const ml_entry_point *p = &ep->v[i];
		if (strcmp(p->group, "console_scripts") != 0 &&
		    strcmp(p->group, "gui_scripts") != 0)
			continue;
		char module[512], attr[512], rel[ML_PATH_MAX], recp[ML_PATH_MAX];
		if (!script_name_ok(p->name)) {
			rc = ml_err_set(err, ML_EPARSE,
			                "%s: entry point name '%.200s' is not a file name", di,
			                p->name);
			break;
		}
		if ((rc = ml_entry_point_split(module, sizeof module, attr, sizeof attr, p->value,
		                               err)))
			break;
		b.len = 0;
		char name[300];
		if (pl->env->os == ML_ENV_WINDOWS) {
			/* pip's way on Windows: Scripts\<name>.exe, console
			 * entry points run python.exe, GUI ones pythonw.exe. */
			bool gui = strcmp(p->group, "gui_scripts") == 0;
			const unsigned char *base = NULL;
			size_t base_len = 0;
			if ((rc = ml_winlauncher_base(
			             &base, &base_len,
			             gui ? ML_WINLAUNCHER_GUI : ML_WINLAUNCHER_CONSOLE, err)) ||
			    (rc = ml_winlauncher_entry_point(&b, base, base_len,
			                                     gui ? "pythonw.exe" : "python.exe",
			                                     module, attr, err)) ||
			    (rc = ml_winlauncher_exe_name(name, sizeof name, p->name, err)))
				break;
		} else {
			if ((rc = launcher(&b, python, module, attr, err)))
				break;
			snprintf(name, sizeof name, "%s", p->name);
		}
		snprintf(rel, sizeof rel, "%s/%s", pl->env->scripts, name);
		snprintf(recp, sizeof recp, "%s%s/%s", up, pl->env->scripts, name);
		if (pl->env->os == ML_ENV_WINDOWS &&
		    mle_map_put(&pl->launchers, rel, 0, NULL) < 0) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		rc = emit(pl, ro, rel, recp, b.data, b.len, 0755);
	}
	ml_buf_release(&b);
	ml_entry_points_free(ep);
	return rc;
}

int ml_wheel_install_unpacked(ml_wheel_result *out, const char *unpacked_dir,
                              const ml_env_layout *env, const ml_wheel_install_opts *opts,
                              ml_err *err)
{
	ml_wheel_install_opts o = opts ? *opts : (ml_wheel_install_opts)ML_WHEEL_INSTALL_OPTS_INIT;
	ml_unpacked u;
	int rc = read_marker(&u, unpacked_dir, NULL, err);
	if (rc)
		return rc == ML_ENOENT
		               ? ml_err_set(err, ML_EINTEGRITY,
		                            "'%s' is not a complete unpacked wheel", unpacked_dir)
		               : rc;
	ml_wheel_result *res = calloc(1, sizeof *res);
	char *tree = malloc(ML_PATH_MAX), *src = malloc(ML_PATH_MAX), *dst = malloc(ML_PATH_MAX);
	char *rel = malloc(ML_PATH_MAX), *recp = malloc(ML_PATH_MAX);
	placer pl = {env, o.link, false, false, "", res, err, MLE_MAP_INIT};
	rec_out ro = {{NULL, 0}, 0};
	ml_record *rec = NULL;
	char *txt = NULL;
	ml_buf script = ML_BUF_INIT;
	if (!res || !tree || !src || !dst || !rel || !recp) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	ml_strlcpy(res->name, u.name, sizeof res->name);
	ml_strlcpy(res->version, u.version, sizeof res->version);
	ml_strlcpy(res->dist_info, u.dist_info, sizeof res->dist_info);
	snprintf(tree, ML_PATH_MAX, "%s/tree", unpacked_dir);

	/* "../../../" from site-packages up to the environment root. */
	char up[64] = "";
	for (const char *p = env->site_packages; *p; p++)
		if (*p == '/')
			strcat(up, "../");
	strcat(up, "../");
	char python[ML_PATH_MAX + 40];
	snprintf(python, sizeof python, "%s/%s", env->final_root, env->python);
	char data[400];
	snprintf(data, sizeof data, "%.*s.data/", (int)(strlen(u.dist_info) - 10), u.dist_info);
	size_t dl = strlen(data);

	size_t len = 0;
	snprintf(src, ML_PATH_MAX, "%s/%s/RECORD", tree, u.dist_info);
	if ((rc = read_small(&txt, &len, src, MAX_META, err)))
		goto out;
	rc = ml_record_parse(&rec, txt, len, err);
	free(txt);
	txt = NULL;
	if (rc)
		goto out;
	/* On Windows every name is checked before anything is written. */
	if (env->os == ML_ENV_WINDOWS &&
	    (rc = windows_names_check(tree, u.dist_info, rec, env, err)))
		goto out;
	/* Entry points first: on Windows a script whose .exe one of them
	 * takes stays a plain script (windows_script). */
	if ((rc = install_launchers(&pl, &ro, tree, u.dist_info, up, python, err)))
		goto out;
	for (size_t i = 0; i < rec->n; i++) {
		const ml_record_row *row = &rec->rows[i];
		const char *p = row->path;
		/* Its row goes too: the signatures, INSTALLER and REQUESTED
		 * are this installer's to write, the wheel's own bytecode is
		 * not installed. */
		if (row_not_installed(p, u.dist_info))
			continue;
		if (join(src, ML_PATH_MAX, tree, p)) {
			rc = ml_err_set(err, ML_EFAIL, "path too long: '%s'", p);
			goto out;
		}
		struct stat st;
		if (!row->hash[0])
			continue; /* unpack allowed hash-less rows only for absent files */
		ml_err sub_err = ML_ERR_INIT;
		if (ml_entry_check(NULL, 0, p, strlen(p), ML_ENTRY_FILE, NULL, 0, 0, &sub_err) !=
		    0) {
			rc = ml_err_set(err, ML_EINTEGRITY, "unpacked wheel '%s': %s", unpacked_dir,
			                sub_err.msg);
			goto out;
		}
		if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode) || row->size < 0 ||
		    (uint64_t)st.st_size != (uint64_t)row->size) {
			ml_err_set(err, ML_EINTEGRITY,
			           "unpacked wheel '%s': '%s' is missing or changed in the cache",
			           unpacked_dir, p);
			ml_err_hint(err, "remove '%s' and install again", unpacked_dir);
			rc = ML_EINTEGRITY;
			goto out;
		}
		bool exec = (st.st_mode & 0111) != 0;
		enum { SITE, SCRIPT, OTHER } kind = SITE;
		const char *sub = p;
		if (strncmp(p, data, dl) == 0) {
			const char *scheme = p + dl, *slash = strchr(scheme, '/');
			if (!slash) {
				rc = ml_err_set(err, ML_EINTEGRITY, "unknown .data scheme in '%s'",
				                p);
				goto out;
			}
			sub = slash + 1;
			size_t sn = (size_t)(slash - scheme);
			if (sn == 7 &&
			    (!strncmp(scheme, "purelib", 7) || !strncmp(scheme, "platlib", 7))) {
				kind = SITE;
			} else if (sn == 7 && !strncmp(scheme, "scripts", 7)) {
				kind = SCRIPT;
				snprintf(rel, ML_PATH_MAX, "%s/%s", env->scripts, sub);
			} else if (sn == 7 && !strncmp(scheme, "headers", 7)) {
				kind = OTHER;
				snprintf(rel, ML_PATH_MAX, "include/site/python%s/%s/%s",
				         env->python_xy, u.name, sub);
			} else if (sn == 4 && !strncmp(scheme, "data", 4)) {
				kind = OTHER;
				snprintf(rel, ML_PATH_MAX, "%s", sub);
			} else {
				rc = ml_err_set(err, ML_EINTEGRITY, "unknown .data scheme in '%s'",
				                p);
				goto out;
			}
		}
		if (kind == SITE) {
			snprintf(rel, ML_PATH_MAX, "%s/%s", env->site_packages, sub);
			snprintf(recp, ML_PATH_MAX, "%s", sub);
		} else {
			snprintf(recp, ML_PATH_MAX, "%s%s", up, rel);
		}
		if (kind == SCRIPT) {
			size_t sl = 0;
			script.len = 0;
			if ((rc = read_small(&txt, &sl, src, MAX_SCRIPT, err)))
				goto out;
			if (env->os == ML_ENV_WINDOWS)
				rc = windows_script(&script, rel, recp, txt, sl, sub, &pl.launchers,
				                    err);
			else
				rc = rewrite_script(&script, txt, sl, python, err);
			free(txt);
			txt = NULL;
			if (rc || (rc = emit(&pl, &ro, rel, recp, script.data ? script.data : "",
			                     script.len, 0755)))
				goto out;
			continue;
		}
		if (join(dst, ML_PATH_MAX, env->root, rel)) {
			rc = ml_err_set(err, ML_EFAIL, "path too long: '%s'", rel);
			goto out;
		}
		if ((rc = place_file(&pl, src, dst, exec)))
			goto out;
		if (rec_add(&ro, recp, row->hash, row->size)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
	}

	/* The installer's own files in .dist-info (PEP 376). */
	char relp[ML_PATH_MAX], recn[600];
	snprintf(relp, sizeof relp, "%s/%s/INSTALLER", env->site_packages, u.dist_info);
	snprintf(recn, sizeof recn, "%s/INSTALLER", u.dist_info);
	if ((rc = emit(&pl, &ro, relp, recn, "mlsetup\n", 8, 0644)))
		goto out;
	if (o.requested) {
		snprintf(relp, sizeof relp, "%s/%s/REQUESTED", env->site_packages, u.dist_info);
		snprintf(recn, sizeof recn, "%s/REQUESTED", u.dist_info);
		if ((rc = emit(&pl, &ro, relp, recn, "", 0, 0644)))
			goto out;
	}
	snprintf(recn, sizeof recn, "%s/RECORD", u.dist_info);
	ml_buf rb = ML_BUF_INIT;
	if (rec_add(&ro, recn, "", -1) || ml_record_format(&rb, &ro.r)) {
		ml_buf_release(&rb);
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(relp, sizeof relp, "%s/%s/RECORD", env->site_packages, u.dist_info);
	if (join(dst, ML_PATH_MAX, env->root, relp) == 0)
		rc = write_new(&pl, dst, rb.data, rb.len, 0644);
	ml_buf_release(&rb);
	if (rc)
		goto out;
	*out = *res;
out:
	ml_buf_release(&script);
	mle_map_release(&pl.launchers);
	rec_release(&ro);
	ml_record_free(rec);
	free(txt);
	free(res);
	free(tree);
	free(src);
	free(dst);
	free(rel);
	free(recp);
	return rc;
}

bool ml_wheel_unpacked_ready(const char *cache_dir, const char *sha256)
{
	char path[ML_PATH_MAX];
	struct stat st;
	if (!cache_dir || !ml_is_sha256_hex(sha256) ||
	    snprintf(path, sizeof path, "%s/unpacked/sha256/%s/%s", cache_dir, sha256,
	             MARKER_NAME) >= (int)sizeof path)
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int ml_wheel_unpacked_tree(char *dst, size_t dstsz, const char *cache_dir, const char *sha256)
{
	if (!cache_dir || !sha256 || !ml_is_sha256_hex(sha256))
		return ML_EFAIL;
	return ml_pathf(dst, dstsz, "%s/unpacked/sha256/%s/tree", cache_dir, sha256);
}
