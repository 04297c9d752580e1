/*
 * uvtool.c - where the resolver of files that pin no hashes comes from.
 * uv's resolver (src/plan/uv.c) reads a wheel's metadata with range
 * requests where pip downloads the wheel, so mlsetup prefers it: the uv
 * wheel pinned in manifests/resolver.json (version, file name, size and
 * sha256 for the platform mlsetup runs on) is fetched once per cache by
 * the interpreter's pip, from the run's indexes (pip knows the default
 * one), checked by size and sha256, and unpacked as any wheel into the
 * cache (ml_wheel_unpack: RECORD checked); later runs find it there and
 * fetch nothing. pip's resolver stays the fallback, said once, when uv
 * cannot be had (offline, no cache, the index does not serve it, a
 * platform without a pin) or fails.
 *
 * MLSETUP_RESOLVER=pip resolves with pip only; MLSETUP_UV=PATH runs that
 * uv instead of the pinned one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/env.h"

/* The platform this mlsetup binary runs on, as resolver.json keys it. */
#if defined(_WIN32)
#define HOST_KEY "windows-x86_64"
#define UV_EXE   "uv.exe"
#elif defined(__aarch64__)
#define HOST_KEY "linux-aarch64"
#define UV_EXE   "uv"
#else
#define HOST_KEY "linux-x86_64"
#define UV_EXE   "uv"
#endif

/* The pin of this platform's uv wheel. */
typedef struct uv_pin {
	char version[32];
	char platform_tag[64];
	char filename[256];
	char sha256[65];
	double size;
} uv_pin;

static int load_pin(uv_pin *pin, ml_err *err)
{
	const ml_embedded_file *f = ml_embedded_find("resolver.json");
	cJSON *doc = f ? cJSON_ParseWithLength(f->data, f->size) : NULL;
	const cJSON *uv = cJSON_GetObjectItemCaseSensitive(doc, "uv");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(uv, "wheels"), HOST_KEY);
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(uv, "version"));
	const char *tag = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "platform_tag"));
	const char *fn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "filename"));
	const char *sha = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "sha256"));
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(w, "size");
	int rc = 0;
	if (!doc || !v || !tag || !fn || !sha || !cJSON_IsNumber(size) ||
	    ml_sha256_hex_normalize(pin->sha256, sha) != 0)
		rc = ml_err_set(err, ML_ENOENT, "resolver.json pins no uv wheel for %s", HOST_KEY);
	if (!rc) {
		ml_strlcpy(pin->version, v, sizeof(pin->version));
		ml_strlcpy(pin->platform_tag, tag, sizeof(pin->platform_tag));
		ml_strlcpy(pin->filename, fn, sizeof(pin->filename));
		pin->size = size->valuedouble;
	}
	cJSON_Delete(doc);
	return rc;
}

/* The uv executable in the unpacked tree of the pinned wheel. */
static int exe_path(mli_uv *u, const char *root, const uv_pin *pin, ml_err *err)
{
	char tree[sizeof(u->path)];
	int rc = ml_wheel_unpacked_tree(tree, sizeof(tree), root, pin->sha256);
	if (rc)
		return ml_err_set(err, ML_EIO, "cache path too long");
	if ((size_t)snprintf(u->path, sizeof(u->path), "%s/uv-%s.data/scripts/" UV_EXE, tree,
	                     pin->version) >= sizeof(u->path))
		return ml_err_set(err, ML_EIO, "cache path too long");
	return 0;
}

/* Fetches the pinned wheel with python's pip into a temporary directory,
 * checks its size, and unpacks it into the cache (which checks its
 * sha256 and RECORD). */
static int fetch(mli_provider *x, const char *python, const uv_pin *pin, ml_err *err)
{
	const char *root = ml_cache_root(x->cache);
	char dir[4096], req[64], wheel[4400];
	int rc = ml_fs_mktempdir(dir, sizeof(dir), "uv", err);
	if (rc)
		return rc;
	snprintf(req, sizeof(req), "uv==%s", pin->version);
	mli_say(x->ev, ML_EV_STEP,
	        "fetching uv %s, the resolver, once into the cache (%s, %.1f MiB, sha256 %.12s…)",
	        pin->version, pin->filename, pin->size / 1048576.0, pin->sha256);
	const char *argv[64] = {python, "-m",           "pip",    "download",
	                        "--no-deps",  "--only-binary=:all:", "--platform",
	                        pin->platform_tag, "--dest", dir, "--no-input",
	                        "--disable-pip-version-check", "--quiet"};
	size_t n = 13;
	char *idx[32];
	size_t n_idx = x->cfg ? ml_index_config_pip_args(idx, 32, x->cfg) : 0;
	for (size_t i = 0; i < n_idx && n < 62; i++)
		argv[n++] = idx[i];
	argv[n++] = req;
	argv[n] = NULL;
	char *out = NULL;
	int status = 0;
	rc = ml_os_run_output(&out, &status, argv, 64 * 1024, 10 * 60, err);
	if (!rc && status != 0) {
		size_t len = strlen(out);
		rc = ml_err_set(err, ML_EFAIL, "pip could not download %s: %s", req,
		                len > 400 ? out + len - 400 : out);
	}
	free(out);
	struct stat st;
	snprintf(wheel, sizeof(wheel), "%s/%s", dir, pin->filename);
	if (!rc && stat(wheel, &st) != 0)
		rc = ml_err_set(err, ML_ENOENT, "pip downloaded no %s", pin->filename);
	if (!rc && (double)st.st_size != pin->size)
		rc = ml_err_set(err, ML_EINTEGRITY, "%s is %lld bytes, the pin says %.0f",
		                pin->filename, (long long)st.st_size, pin->size);
	ml_unpacked up;
	if (!rc)
		rc = ml_wheel_unpack(&up, root, wheel, pin->sha256, NULL, err);
	ml_fs_rm_tree(dir);
	return rc;
}

/* Runs `uv --version`; fills u->version from "uv 0.13.9 (...)". */
static int ask_version(mli_uv *u, ml_err *err)
{
	const char *argv[] = {u->path, "--version", NULL};
	char *out = NULL;
	int status = 0;
	int rc = ml_os_run_capture(&out, &status, argv, 4096, 30, err);
	if (!rc && (status != 0 || sscanf(out, "uv %31s", u->version) != 1))
		rc = ml_err_set(err, ML_EFAIL, "'%s --version' did not answer as uv does",
		                u->path);
	free(out);
	return rc;
}

/* Finds or fetches uv into u; returns 0, or why not (err). */
static int find(mli_uv *u, mli_provider *x, const char *python, ml_err *err)
{
	const char *given = getenv("MLSETUP_UV");
	if (given && *given) {
		ml_strlcpy(u->path, given, sizeof(u->path));
		return ask_version(u, err);
	}
	if (x->fo.offline)
		return ml_err_set(err, ML_ENOENT, "--offline: uv is not fetched");
	if (!x->cache)
		return ml_err_set(err, ML_ENOENT, "no cache to keep uv in");
	uv_pin pin;
	int rc = load_pin(&pin, err);
	const char *root = ml_cache_root(x->cache);
	if (!rc && !ml_wheel_unpacked_ready(root, pin.sha256))
		rc = fetch(x, python, &pin, err);
	if (!rc)
		rc = exe_path(u, root, &pin, err);
	if (!rc)
		ml_strlcpy(u->version, pin.version, sizeof(u->version));
	return rc;
}

const ml_uv_tool *mli_uv_tool(mli_provider *x, const char *python)
{
	mli_uv *u = &x->uv;
	if (u->tried)
		return u->tool.path ? &u->tool : NULL;
	u->tried = true;
	const char *choice = getenv("MLSETUP_RESOLVER");
	if (choice && !strcmp(choice, "pip"))
		return NULL;
	ml_err e = ML_ERR_INIT;
	if (find(u, x, python, &e) != 0) {
		mli_say(x->ev, ML_EV_STEP, "uv, the faster resolver, cannot be had (%s): pip resolves",
		        e.msg);
		return NULL;
	}
	if (x->cache)
		snprintf(u->cache_dir, sizeof(u->cache_dir), "%s/uv", ml_cache_root(x->cache));
	u->tool = (ml_uv_tool){u->path, u->version, x->cache ? u->cache_dir : NULL};
	return &u->tool;
}
