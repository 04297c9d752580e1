/*
 * cmd_lock.c - `mlsetup lock INPUT.in -o OUT.txt`: regenerates a pinned,
 * hashed manifest from loose requirements. pip's own resolver picks the
 * versions once per target platform/Python; the index's JSON API (PEP 691,
 * PEP 503 HTML fallback) gives the sha256 and size of every wheel of each
 * pinned version. The `# mlsetup:` header is carried over from INPUT.in.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "index_opts.h"
#include "mlsetup/fetch.h"
#include "mlsetup/plan.h"

enum { OPT_OUTPUT = 'o', OPT_PYTHON = 1100, OPT_PLATFORM, OPT_RESOLVER };

struct lock_args {
	const char *output;
	const char *pythons[16];
	size_t n_pythons;
	const char *platforms[16];
	size_t n_platforms;
	const char *resolver; /* interpreter that runs pip */
	ml_cli_index ix;
};

static int on_option(int opt, const char *arg, void *data, ml_err *err)
{
	struct lock_args *a = data;
	int r = ml_cli_index_option(&a->ix, opt, arg, err);
	if (r)
		return r < 0 ? ML_EUSAGE : 0;
	if (opt == OPT_OUTPUT) {
		a->output = arg;
	} else if (opt == OPT_RESOLVER) {
		a->resolver = arg;
	} else if (opt == OPT_PYTHON || opt == OPT_PLATFORM) {
		const char **list = opt == OPT_PYTHON ? a->pythons : a->platforms;
		size_t *n = opt == OPT_PYTHON ? &a->n_pythons : &a->n_platforms;
		if (*n >= 16)
			return ml_err_set(err, ML_EUSAGE, "at most 16 --python/--platform values");
		list[(*n)++] = arg;
	}
	return 0;
}

/* Writes text to path through a temporary file and a rename, so a failed
 * run never leaves a half-written manifest. */
static int write_atomically(const char *path, const char *text, ml_err *err)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			unlink(tmp);
			return ml_err_set(err, ML_EIO, "cannot write '%s': %s", tmp, strerror(e));
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

/* Adds every wheel of each pinned version that `proj` lists. */
static int record_files(ml_lock *lk, const ml_project *proj, const char *normalized,
                        size_t *n_yanked)
{
	for (size_t f = 0; f < proj->n_files; f++) {
		const ml_index_file *fi = &proj->files[f];
		ml_wheel_name wn;
		if (!fi->sha256 || ml_wheel_filename_parse(&wn, fi->filename, NULL) != 0 ||
		    !ml_lock_wheel_fits(lk, wn.platform_tag))
			continue;
		for (size_t i = 0; i < lk->n_pkgs; i++) {
			ml_lock_pkg *p = &lk->pkgs[i];
			if (strcmp(p->normalized, normalized) ||
			    ml_version_cmp(p->version, wn.version))
				continue;
			if (fi->yanked)
				(*n_yanked)++;
			if (ml_lock_pkg_add_file(p, fi->filename, fi->url, fi->sha256, fi->size))
				return ML_ENOMEM;
		}
	}
	return 0;
}

/* Learns the sizes the index pages did not give (PEP 503 HTML has none)
 * with HEAD requests. */
static int fill_sizes(ml_lock *lk, const ml_index_config *cfg, ml_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			n += lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url;
	if (!n)
		return 0;
	char **urls = calloc(n, sizeof(*urls));
	int64_t *sizes = calloc(n, sizeof(*sizes));
	int rc = 0;
	if (!urls || !sizes) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	size_t k = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			if (lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url)
				urls[k++] = lk->pkgs[i].files[f].url;
	ml_say("asking the file server for %zu sizes the index did not give", n);
	rc = ml_http_sizes(sizes, urls, n, cfg->trusted_hosts, cfg->n_trusted, cfg->cert, err);
	k = 0;
	for (size_t i = 0; !rc && i < lk->n_pkgs; i++)
		for (size_t f = 0; f < lk->pkgs[i].n_files; f++)
			if (lk->pkgs[i].files[f].size < 0 && lk->pkgs[i].files[f].url)
				lk->pkgs[i].files[f].size = sizes[k++];
out:
	free(urls);
	free(sizes);
	return rc;
}

/* Asks every configured index and find-links location for the files of
 * each distinct project in the closure. */
static int collect_hashes(ml_lock *lk, const ml_index_config *cfg, ml_err *err)
{
	const char *sources[1 + ML_CLI_INDEX_MAX * 4];
	bool is_find_links[1 + ML_CLI_INDEX_MAX * 4];
	size_t ns = 0;
	if (cfg->index_url) {
		is_find_links[ns] = false;
		sources[ns++] = cfg->index_url;
	}
	for (size_t i = 0; i < cfg->n_extra && ns < 60; i++) {
		is_find_links[ns] = false;
		sources[ns++] = cfg->extra_index_urls[i];
	}
	for (size_t i = 0; i < cfg->n_find_links && ns < 60; i++) {
		is_find_links[ns] = true;
		sources[ns++] = cfg->find_links[i];
	}
	size_t n_yanked = 0;
	for (size_t i = 0; i < lk->n_pkgs; i++) {
		bool dup = false; /* one lookup per project, whatever its versions */
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(lk->pkgs[j].normalized, lk->pkgs[i].normalized);
		if (dup)
			continue;
		char *normalized = lk->pkgs[i].normalized;
		for (size_t s = 0; s < ns; s++) {
			ml_index_source src = {.url = sources[s],
			                       .trusted_hosts = cfg->trusted_hosts,
			                       .n_trusted = cfg->n_trusted,
			                       .cert = cfg->cert};
			ml_project *proj = NULL;
			ml_err e2 = ML_ERR_INIT;
			int rc = is_find_links[s]
			                 ? ml_find_links_project(&proj, &src, normalized, &e2)
			                 : ml_index_project(&proj, &src, normalized, &e2);
			if (rc == ML_ENOENT)
				continue; /* not on this index / location */
			if (rc) {
				*err = e2;
				return rc;
			}
			ml_verbose("%s: %zu files", normalized, proj->n_files);
			rc = record_files(lk, proj, normalized, &n_yanked);
			ml_project_free(proj);
			if (rc)
				return ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	}
	int rc = fill_sizes(lk, cfg, err);
	if (rc)
		return rc;
	if (n_yanked)
		ml_warn("%zu pinned file%s yanked on the index (used because pinned with ==)",
		        n_yanked, n_yanked == 1 ? " is" : "s are");
	return 0;
}

/* Builds pip's index arguments from the resolved configuration. */
static size_t pip_index_args(char **args, size_t cap, const ml_index_config *cfg)
{
	size_t n = 0;
	if (cfg->no_index && n + 1 <= cap)
		args[n++] = "--no-index";
	if (cfg->index_url && n + 2 <= cap) {
		args[n++] = "--index-url";
		args[n++] = cfg->index_url;
	}
	for (size_t i = 0; i < cfg->n_extra && n + 2 <= cap; i++) {
		args[n++] = "--extra-index-url";
		args[n++] = cfg->extra_index_urls[i];
	}
	for (size_t i = 0; i < cfg->n_find_links && n + 2 <= cap; i++) {
		args[n++] = "--find-links";
		args[n++] = cfg->find_links[i];
	}
	for (size_t i = 0; i < cfg->n_trusted && n + 2 <= cap; i++) {
		args[n++] = "--trusted-host";
		args[n++] = cfg->trusted_hosts[i];
	}
	if (cfg->cert && n + 2 <= cap) {
		args[n++] = "--cert";
		args[n++] = cfg->cert;
	}
	return n;
}

/* Adds the targets: --python/--platform, else the input's header. */
static int add_targets(ml_lock *lk, const struct lock_args *a, const ml_requirements *in,
                       ml_err *err)
{
	char pys[256] = "", plats[256] = "";
	for (size_t i = 0; i < a->n_pythons; i++)
		snprintf(pys + strlen(pys), sizeof(pys) - strlen(pys), " %s", a->pythons[i]);
	for (size_t i = 0; i < a->n_platforms; i++)
		snprintf(plats + strlen(plats), sizeof(plats) - strlen(plats), " %s",
		         a->platforms[i]);
	const char *hp = ml_requirements_meta(in, "python");
	const char *hpl = ml_requirements_meta(in, "platforms");
	ml_strlcpy(pys, a->n_pythons ? pys : hp ? hp : "3.12", sizeof(pys));
	ml_strlcpy(plats, a->n_platforms ? plats : hpl ? hpl : "linux-x86_64", sizeof(plats));
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

static int cmd_lock(ml_ctx *ctx, int argc, char **argv, ml_err *err)
{
	static const struct option opts[] = {
	        {"output", required_argument, NULL, OPT_OUTPUT},
	        {"python", required_argument, NULL, OPT_PYTHON},
	        {"platform", required_argument, NULL, OPT_PLATFORM},
	        {"resolver-python", required_argument, NULL, OPT_RESOLVER},
	        ML_CLI_INDEX_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	(void)ctx;
	struct lock_args a;
	memset(&a, 0, sizeof(a));
	int first;
	bool help;
	int rc = ml_cli_parse(&ml_cmd_lock, argc, argv, opts, on_option, &a, &first, &help, err);
	if (rc || help)
		return rc;
	if (argc - first != 1)
		return ml_cli_usage(&ml_cmd_lock, err, "lock takes exactly one INPUT file");
	if (!a.output)
		return ml_cli_usage(&ml_cmd_lock, err, "missing -o OUT.txt");
	const char *input = argv[first];

	ml_requirements *in = NULL;
	ml_index_config *cfg = NULL;
	ml_lock lk = ML_LOCK_INIT;
	char *text = NULL;
	ml_buf command = ML_BUF_INIT;
	if ((rc = ml_requirements_load(&in, input, 0, err)) != 0)
		goto out;
	if ((rc = add_targets(&lk, &a, in, err)) != 0)
		goto out;
	ml_index_flags flags;
	ml_cli_index_flags(&a.ix, &flags);
	rc = ml_index_config_resolve(&cfg, &flags, in->index_url, in->extra_index_urls, in->n_extra,
	                             a.resolver, err);
	if (rc)
		goto out;
	ml_verbose("index from %s", cfg->origin ? cfg->origin : "nowhere");
	char *pip_args[4 * ML_CLI_INDEX_MAX + 8];
	ml_lock_pip_opts po = {
	        a.resolver, input, pip_args,
	        pip_index_args(pip_args, sizeof(pip_args) / sizeof(pip_args[0]), cfg)};
	for (size_t t = 0; t < lk.n_targets; t++) {
		ml_say("resolving %s for CPython %d.%d on %s with pip", input,
		       lk.targets[t].py_major, lk.targets[t].py_minor, lk.targets[t].platform);
		fflush(stdout);
		if ((rc = ml_lock_resolve(&lk, t, &po, err)) != 0)
			goto out;
	}
	ml_say("looking up the wheels of %zu pinned versions", lk.n_pkgs);
	if ((rc = collect_hashes(&lk, cfg, err)) != 0)
		goto out;
	/* The command recorded in the banner names files as given, never index
	 * URLs (those come from the environment at run time). */
	ml_buf_printf(&command, "mlsetup lock %s -o %s", input, a.output);
	for (size_t i = 0; i < a.n_pythons; i++)
		ml_buf_printf(&command, " --python %s", a.pythons[i]);
	for (size_t i = 0; i < a.n_platforms; i++)
		ml_buf_printf(&command, " --platform %s", a.platforms[i]);
	if ((rc = ml_lock_render(&text, &lk, in, ml_buf_cstr(&command), err)) != 0)
		goto out;
	if ((rc = write_atomically(a.output, text, err)) != 0)
		goto out;
	size_t n_files = 0;
	for (size_t i = 0; i < lk.n_pkgs; i++)
		n_files += lk.pkgs[i].n_files;
	ml_say("wrote %s: %zu packages, %zu wheel hashes, %zu targets", a.output, lk.n_pkgs,
	       n_files, lk.n_targets);
out:
	free(text);
	ml_buf_release(&command);
	ml_lock_release(&lk);
	ml_index_config_free(cfg);
	ml_requirements_free(in);
	return rc;
}

const ml_command ml_cmd_lock = {
        "lock",
        cmd_lock,
        ML_NEED_NET,
        "regenerate a pinned, hashed manifest from loose requirements",
        "mlsetup lock INPUT.in -o OUT.txt [--python X.Y ...] [--platform OS-ARCH ...] "
        "[--resolver-python PATH] [index options]",
        "  -o, --output FILE       manifest to write (replaced atomically)\n"
        "  --python X.Y            target Python, repeatable (default: the input's python header)\n"
        "  --platform OS-ARCH      target platform, repeatable: linux-x86_64, linux-aarch64,\n"
        "                          windows-x86_64, darwin-aarch64 (default: the platforms header)\n"
        "  --resolver-python PATH  interpreter whose pip resolves (default "
        "python3)\n" ML_CLI_INDEX_HELP,
};
