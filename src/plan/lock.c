/*
 * lock.c - `mlsetup lock`'s stage work: resolve loose requirements with
 * pip's own resolver once per target platform/Python (no home-made
 * resolver), merge the closures, adding PEP 508 markers where they differ,
 * and render a pinned, hashed manifest that `pip install --require-hashes
 * -r` also accepts. The index lookups for the hashes of every wheel of each
 * pinned version are done by the fetch stage (ml_fetch_lock_files, with its
 * index client) and recorded with ml_lock_pkg_add_file().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* What each platform means to pip and to PEP 508 markers. */
static const struct {
	const char *platform;
	const char *pip_arch; /* manylinux arch suffix or full tag */
	bool manylinux;       /* expand manylinux_2_Y tags */
	const char *marker;   /* PEP 508 expression for this platform */
} platforms[] = {
        {"linux-x86_64", "x86_64", true,
         "sys_platform == \"linux\" and platform_machine == \"x86_64\""},
        {"linux-aarch64", "aarch64", true,
         "sys_platform == \"linux\" and platform_machine == \"aarch64\""},
        {"windows-x86_64", "win_amd64", false,
         "sys_platform == \"win32\" and platform_machine == \"AMD64\""},
        {"darwin-aarch64", "macosx_11_0_arm64", false,
         "sys_platform == \"darwin\" and platform_machine == \"arm64\""},
};
#define N_PLATFORMS          (sizeof(platforms) / sizeof(platforms[0]))
#define GLIBC_BASELINE_MINOR 28 /* manylinux_2_28: RHEL 8, Debian 10, Ubuntu 20.04 */

static int platform_index(const char *p)
{
	for (size_t i = 0; i < N_PLATFORMS; i++)
		if (strcmp(platforms[i].platform, p) == 0)
			return (int)i;
	return -1;
}

int ml_lock_add_target(ml_lock *lk, const char *platform, const char *python, ml_err *err)
{
	int a, b;
	char tail;
	if (platform_index(platform) < 0) {
		ml_err_set(err, ML_EUSAGE, "unknown platform '%s'", platform);
		ml_err_hint(err,
		            "use linux-x86_64, linux-aarch64, windows-x86_64 or darwin-aarch64");
		return ML_EUSAGE;
	}
	if (sscanf(python, "%d.%d%c", &a, &b, &tail) != 2 || a != 3 || b < 0 || b > 99)
		return ml_err_set(err, ML_EUSAGE, "python '%s' is not a 3.Y version", python);
	if (lk->n_targets >= sizeof(lk->targets) / sizeof(lk->targets[0]))
		return ml_err_set(err, ML_EUSAGE, "too many lock targets (at most 32)");
	for (size_t i = 0; i < lk->n_targets; i++)
		if (!strcmp(lk->targets[i].platform, platform) && lk->targets[i].py_major == a &&
		    lk->targets[i].py_minor == b)
			return 0;
	ml_lock_target *t = &lk->targets[lk->n_targets++];
	ml_strlcpy(t->platform, platform, sizeof(t->platform));
	t->py_major = a;
	t->py_minor = b;
	return 0;
}

/* True when one platform tag ("manylinux_2_17_x86_64") installs on the
 * lock platform pi: manylinux/musllinux/linux tags of the same arch on
 * Linux, win_amd64 on Windows, macosx arm64/universal2 on macOS, "any"
 * everywhere. */
static bool tag_fits(size_t pi, const char *tag, size_t len)
{
	char t[128];
	if (len >= sizeof(t))
		return false;
	memcpy(t, tag, len);
	t[len] = '\0';
	if (!strcmp(t, "any"))
		return true;
	const char *arch = platforms[pi].pip_arch;
	if (platforms[pi].manylinux) {
		size_t al = strlen(arch);
		bool arch_ok =
		        len > al + 1 && t[len - al - 1] == '_' && !strcmp(t + len - al, arch);
		return arch_ok && (ml_startswith(t, "manylinux") ||
		                   ml_startswith(t, "musllinux_") || ml_startswith(t, "linux_"));
	}
	if (ml_startswith(arch, "macosx_"))
		return ml_startswith(t, "macosx_") &&
		       (strstr(t, "_arm64") || strstr(t, "_universal2"));
	return !strcmp(t, arch);
}

bool ml_lock_wheel_fits(const ml_lock *lk, const char *platform_tags)
{
	for (size_t t = 0; t < lk->n_targets; t++) {
		int pi = platform_index(lk->targets[t].platform);
		for (const char *p = platform_tags; pi >= 0 && *p;) {
			size_t len = strcspn(p, ".");
			if (tag_fits((size_t)pi, p, len))
				return true;
			p += len + (p[len] == '.');
		}
	}
	return false;
}

static ml_lock_pkg *find_or_add_pkg(ml_lock *lk, const char *name, const char *version)
{
	char norm[256];
	if (ml_name_normalize(norm, sizeof(norm), name) != 0)
		return NULL;
	for (size_t i = 0; i < lk->n_pkgs; i++)
		if (!strcmp(lk->pkgs[i].normalized, norm) &&
		    !ml_version_cmp(lk->pkgs[i].version, version))
			return &lk->pkgs[i];
	ml_lock_pkg *p = realloc(lk->pkgs, (lk->n_pkgs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	lk->pkgs = p;
	p = &lk->pkgs[lk->n_pkgs];
	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	p->normalized = strdup(norm);
	p->version = strdup(version);
	if (!p->name || !p->normalized || !p->version) {
		free(p->name);
		free(p->normalized);
		free(p->version);
		return NULL;
	}
	lk->n_pkgs++;
	return p;
}

static int add_chosen(ml_lock_pkg *p, const char *sha)
{
	for (size_t i = 0; i < p->n_chosen; i++)
		if (!strcmp(p->chosen[i], sha))
			return 0;
	char **c = realloc(p->chosen, (p->n_chosen + 1) * sizeof(*c));
	if (!c)
		return ML_ENOMEM;
	p->chosen = c;
	if (!(c[p->n_chosen] = strdup(sha)))
		return ML_ENOMEM;
	p->n_chosen++;
	return 0;
}

int ml_lock_pkg_add_file(ml_lock_pkg *pkg, const char *filename, const char *url,
                         const char *sha256, int64_t size)
{
	for (size_t i = 0; i < pkg->n_files; i++)
		if (!strcmp(pkg->files[i].sha256, sha256))
			return 0;
	ml_lock_file *f = realloc(pkg->files, (pkg->n_files + 1) * sizeof(*f));
	if (!f)
		return ML_ENOMEM;
	pkg->files = f;
	f = &pkg->files[pkg->n_files];
	f->url = url ? strdup(url) : NULL;
	if (!(f->filename = strdup(filename)) || (url && !f->url)) {
		free(f->filename);
		free(f->url);
		return ML_ENOMEM;
	}
	ml_strlcpy(f->sha256, sha256, sizeof(f->sha256));
	f->size = size;
	pkg->n_files++;
	return 0;
}

/* Reads pip's installation report into lk for target bit t. */
static int read_report(ml_lock *lk, size_t t, const char *path, ml_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ml_os_read_file(&text, &len, NULL, path, 256u * 1024 * 1024, err);
	if (rc)
		return rc;
	cJSON *doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (!doc)
		return ml_err_set(err, ML_EPARSE, "pip's report '%s' is not valid JSON", path);
	const cJSON *install = cJSON_GetObjectItemCaseSensitive(doc, "install"), *it;
	if (!cJSON_IsArray(install))
		rc = ml_err_set(err, ML_EPARSE, "pip's report has no install list");
	cJSON_ArrayForEach(it, install)
	{
		if (rc)
			break;
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *di = cJSON_GetObjectItemCaseSensitive(it, "download_info");
		const char *name =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
		const char *ver =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "version"));
		const cJSON *hashes = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(di, "archive_info"), "hashes");
		const char *sha =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hashes, "sha256"));
		if (!name || !ver || !sha || strlen(sha) != 64) {
			rc = ml_err_set(err, ML_EPARSE,
			                "pip's report lists a package without "
			                "name, version or sha256");
			break;
		}
		ml_lock_pkg *p = find_or_add_pkg(lk, name, ver);
		if (!p || add_chosen(p, sha)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		p->targets |= 1u << t;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "requested")))
			p->requested = true;
	}
	cJSON_Delete(doc);
	return rc;
}

int ml_lock_resolve(ml_lock *lk, size_t t, const ml_lock_pip_opts *o, ml_err *err)
{
	const ml_lock_target *tg = &lk->targets[t];
	int pi = platform_index(tg->platform);
	ml_pip_run r;
	int rc = ml_pip_run_begin(&r, o->python ? o->python : "python3", "lock", err);
	if (rc)
		return rc;
	char pyver[16], abi[16], tags[40][64];
	size_t nt = 0;
	snprintf(pyver, sizeof(pyver), "%d.%d", tg->py_major, tg->py_minor);
	snprintf(abi, sizeof(abi), "cp%d%d", tg->py_major, tg->py_minor);
	const char *target_args[] = {
	        "--implementation", "cp", "--python-version", pyver, "--abi", abi};
	for (size_t i = 0; i < sizeof(target_args) / sizeof(target_args[0]); i++)
		ml_pip_run_arg(&r, target_args[i]);
	if (platforms[pi].manylinux) {
		for (int y = GLIBC_BASELINE_MINOR; y >= 17; y--)
			snprintf(tags[nt++], 64, "manylinux_2_%d_%s", y, platforms[pi].pip_arch);
		snprintf(tags[nt++], 64, "manylinux2014_%s", platforms[pi].pip_arch);
		if (!strcmp(platforms[pi].pip_arch, "x86_64")) {
			snprintf(tags[nt++], 64, "manylinux2010_%s", platforms[pi].pip_arch);
			snprintf(tags[nt++], 64, "manylinux1_%s", platforms[pi].pip_arch);
		}
		snprintf(tags[nt++], 64, "linux_%s", platforms[pi].pip_arch);
	} else {
		snprintf(tags[nt++], 64, "%s", platforms[pi].pip_arch);
	}
	for (size_t i = 0; i < nt; i++) {
		ml_pip_run_arg(&r, "--platform");
		ml_pip_run_arg(&r, tags[i]);
	}
	for (size_t i = 0; i < o->n_index_args; i++)
		ml_pip_run_arg(&r, o->index_args[i]);
	ml_pip_run_arg(&r, "-r");
	ml_pip_run_arg(&r, o->input_path);

	char *output = NULL;
	int status = 0;
	rc = ml_pip_run_exec(&r, &output, &status, err);
	if (!rc && status != 0) {
		size_t len = strlen(output);
		const char *tailp = len > 1500 ? output + len - 1500 : output;
		rc = ml_err_set(err, ML_EFAIL,
		                "pip could not resolve '%s' for CPython %s on %s:\n%s",
		                o->name ? o->name : o->input_path, pyver, tg->platform, tailp);
		ml_err_hint(err, "fix the input requirements or the index options; pip's own "
		                 "message is above");
	}
	free(output);
	if (!rc)
		rc = read_report(lk, t, r.report, err);
	ml_pip_run_end(&r);
	return rc;
}

static int cmp_pkg(const void *a, const void *b)
{
	const ml_lock_pkg *x = a, *y = b;
	int c = strcmp(x->normalized, y->normalized);
	return c ? c : ml_version_cmp(x->version, y->version);
}

/* Writes the PEP 508 marker for a package present in the targets of mask,
 * or nothing when it is in every target. */
static void render_marker(ml_buf *b, const ml_lock *lk, uint32_t mask)
{
	uint32_t all = lk->n_targets >= 32 ? UINT32_MAX : (1u << lk->n_targets) - 1;
	if ((mask & all) == all)
		return;
	ml_buf_puts(b, " ; ");
	int clauses = 0;
	ml_buf m = ML_BUF_INIT;
	for (size_t pi = 0; pi < N_PLATFORMS; pi++) {
		uint32_t on_plat = 0;
		for (size_t t = 0; t < lk->n_targets; t++)
			if (!strcmp(lk->targets[t].platform, platforms[pi].platform))
				on_plat |= 1u << t;
		if (!(on_plat & mask))
			continue;
		if ((on_plat & mask) == on_plat) {
			ml_buf_printf(&m, "%s(%s)", clauses++ ? " or " : "", platforms[pi].marker);
			continue;
		}
		for (size_t t = 0; t < lk->n_targets; t++)
			if ((on_plat & mask) & (1u << t))
				ml_buf_printf(&m, "%s(%s and python_version == \"%d.%d\")",
				              clauses++ ? " or " : "", platforms[pi].marker,
				              lk->targets[t].py_major, lk->targets[t].py_minor);
	}
	/* One clause needs no parentheses. */
	const char *s = ml_buf_cstr(&m);
	if (clauses == 1 && s[0] == '(') {
		ml_buf_add(b, s + 1, strlen(s) - 2);
	} else {
		ml_buf_puts(b, s);
	}
	ml_buf_release(&m);
}

static int check_pkg(const ml_lock_pkg *p, ml_err *err)
{
	if (!p->n_files) {
		ml_err_set(err, ML_EFAIL, "the index lists no wheel for %s %s", p->name,
		           p->version);
		ml_err_hint(err, "check the index options; mlsetup installs wheels only");
		return ML_EFAIL;
	}
	for (size_t f = 0; f < p->n_files; f++)
		if (p->files[f].size < 0) {
			ml_err_set(err, ML_EFAIL, "the size of %s is unknown",
			           p->files[f].filename);
			ml_err_hint(err,
			            "the index gave no size and the file server no Content-Length");
			return ML_EFAIL;
		}
	for (size_t c = 0; c < p->n_chosen; c++) {
		bool found = false;
		for (size_t f = 0; f < p->n_files && !found; f++)
			found = !strcmp(p->files[f].sha256, p->chosen[c]);
		if (!found) {
			ml_err_set(err, ML_EINTEGRITY,
			           "pip chose a file of %s %s with sha256 %s that the index does "
			           "not list",
			           p->name, p->version, p->chosen[c]);
			ml_err_hint(err, "pip and mlsetup must read the same index; pass the same "
			                 "--index-url to both");
			return ML_EINTEGRITY;
		}
	}
	return 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const ml_lock_file *)a)->filename, ((const ml_lock_file *)b)->filename);
}

int ml_lock_render(char **out, const ml_lock *lk, const ml_requirements *input, const char *command,
                   ml_err *err)
{
	for (size_t i = 0; i < lk->n_pkgs; i++) {
		int rc = check_pkg(&lk->pkgs[i], err);
		if (rc)
			return rc;
		qsort(lk->pkgs[i].files, lk->pkgs[i].n_files, sizeof(ml_lock_file), cmp_file);
	}
	qsort(lk->pkgs, lk->n_pkgs, sizeof(*lk->pkgs), cmp_pkg);
	ml_buf b = ML_BUF_INIT;
	ml_buf_printf(&b, "# Generated by `%s`.\n", command);
	ml_buf_puts(&b, "# Do not edit by hand: change the input and run the command again.\n# "
	                "Resolved by pip for:");
	for (size_t t = 0; t < lk->n_targets; t++)
		ml_buf_printf(&b, "%s CPython %d.%d on %s", t ? "," : "", lk->targets[t].py_major,
		              lk->targets[t].py_minor, lk->targets[t].platform);
	ml_buf_puts(&b, ".\n#\n");
	for (size_t i = 0; i < input->n_meta; i++)
		if (strcmp(input->meta[i].key, "requested") != 0)
			ml_buf_printf(&b, "# mlsetup: %s = %s\n", input->meta[i].key,
			              input->meta[i].value);
	ml_buf_puts(&b, "# mlsetup: requested =");
	for (size_t i = 0; i < lk->n_pkgs; i++)
		if (lk->pkgs[i].requested &&
		    (i == 0 || strcmp(lk->pkgs[i].normalized, lk->pkgs[i - 1].normalized)))
			ml_buf_printf(&b, " %s", lk->pkgs[i].normalized);
	ml_buf_puts(&b, "\n\n");
	if (input->index_url)
		ml_buf_printf(&b, "--index-url %s\n", input->index_url);
	for (size_t i = 0; i < input->n_extra; i++)
		ml_buf_printf(&b, "--extra-index-url %s\n", input->extra_index_urls[i]);
	for (size_t i = 0; i < input->n_find_links; i++)
		ml_buf_printf(&b, "--find-links %s\n", input->find_links[i]);
	for (size_t i = 0; i < input->n_trusted; i++)
		ml_buf_printf(&b, "--trusted-host %s\n", input->trusted_hosts[i]);
	if (input->index_url || input->n_extra || input->n_find_links || input->n_trusted)
		ml_buf_puts(&b, "\n");
	for (size_t i = 0; i < lk->n_pkgs; i++) {
		const ml_lock_pkg *p = &lk->pkgs[i];
		ml_buf_printf(&b, "%s==%s", p->normalized, p->version);
		render_marker(&b, lk, p->targets);
		for (size_t f = 0; f < p->n_files; f++)
			ml_buf_printf(&b, " \\\n    --hash=sha256:%s", p->files[f].sha256);
		ml_buf_puts(&b, "\n");
	}
	ml_buf_puts(&b, "\n# Wheel files by sha256, for `mlsetup plan` (pip ignores comments):\n");
	for (size_t i = 0; i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			ml_buf_printf(&b, "# mlsetup-file: %s %lld %s\n",
			              lk->pkgs[i].files[f].sha256,
			              (long long)lk->pkgs[i].files[f].size,
			              lk->pkgs[i].files[f].filename);
	if (!b.data)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	*out = ml_buf_detach(&b);
	return *out ? 0 : ml_err_set(err, ML_ENOMEM, "out of memory");
}

void ml_lock_release(ml_lock *lk)
{
	if (!lk)
		return;
	for (size_t i = 0; i < lk->n_pkgs; i++) {
		ml_lock_pkg *p = &lk->pkgs[i];
		free(p->name);
		free(p->normalized);
		free(p->version);
		for (size_t c = 0; c < p->n_chosen; c++)
			free(p->chosen[c]);
		free(p->chosen);
		for (size_t f = 0; f < p->n_files; f++) {
			free(p->files[f].filename);
			free(p->files[f].url);
		}
		free(p->files);
	}
	free(lk->pkgs);
	lk->pkgs = NULL;
	lk->n_pkgs = 0;
	lk->n_targets = 0;
}

int ml_lock_add_targets(ml_lock *lk, const char *const *pythons, size_t n_pythons,
                        const char *const *plats_given, size_t n_platforms,
                        const ml_requirements *input, ml_err *err)
{
	char pys[256] = "", plats[256] = "";
	for (size_t i = 0; i < n_pythons; i++)
		snprintf(pys + strlen(pys), sizeof(pys) - strlen(pys), " %s", pythons[i]);
	for (size_t i = 0; i < n_platforms; i++)
		snprintf(plats + strlen(plats), sizeof(plats) - strlen(plats), " %s",
		         plats_given[i]);
	const char *hp = ml_requirements_meta(input, "python");
	const char *hpl = ml_requirements_meta(input, "platforms");
	ml_strlcpy(pys, n_pythons ? pys : hp ? hp : "3.12", sizeof(pys));
	ml_strlcpy(plats, n_platforms ? plats : hpl ? hpl : "linux-x86_64", sizeof(plats));
	char *s1 = NULL, *s2 = NULL;
	for (char *pl = strtok_r(plats, " ,", &s1); pl; pl = strtok_r(NULL, " ,", &s1)) {
		char copy[256];
		ml_strlcpy(copy, pys, sizeof(copy));
		for (char *py = strtok_r(copy, " ,", &s2); py; py = strtok_r(NULL, " ,", &s2)) {
			int rc = ml_lock_add_target(lk, pl, py, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}
