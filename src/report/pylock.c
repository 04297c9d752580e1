/*
 * pylock.c - the environment's own lock file, <env>/pylock.toml (PEP 751,
 * lock-version 1.0): every installed wheel with its URL, size and sha256,
 * the interpreter and why it was chosen, and a [tool.mlsetup] table with
 * the manifest, its project commit, its `# mlsetup:` header, the GPUs and
 * the driver. `mlsetup install --manifest <env>/pylock.toml` rebuilds the
 * same environment elsewhere; `mlsetup export` turns it back into a
 * hashed requirements file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "mlsetup/fetch.h"
#include "mlsetup/report.h"

/* A TOML basic string. */
static void toml_str(ml_buf *b, const char *s)
{
	ml_buf_puts(b, "\"");
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':
			ml_buf_puts(b, "\\\"");
			break;
		case '\\':
			ml_buf_puts(b, "\\\\");
			break;
		case '\n':
			ml_buf_puts(b, "\\n");
			break;
		case '\t':
			ml_buf_puts(b, "\\t");
			break;
		case '\r':
			ml_buf_puts(b, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				ml_buf_printf(b, "\\u%04x", *p);
			else
				ml_buf_add(b, p, 1);
		}
	}
	ml_buf_puts(b, "\"");
}

/* A TOML key: bare when it can be, else quoted. */
static void toml_key(ml_buf *b, const char *k)
{
	bool bare = *k != '\0';
	for (const char *p = k; *p && bare; p++)
		bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';
	if (bare)
		ml_buf_puts(b, k);
	else
		toml_str(b, k);
}

static void kv_str(ml_buf *b, const char *key, const char *value)
{
	toml_key(b, key);
	ml_buf_puts(b, " = ");
	toml_str(b, value);
	ml_buf_puts(b, "\n");
}

int ml_project_commit(char out[41], const char *path)
{
	char dir[4096];
	const char *base;
	if (!path || ml_fs_split_path(dir, sizeof(dir), &base, path) != 0)
		return ML_ENOENT;
	git_libgit2_init();
	git_repository *repo = NULL;
	git_oid oid;
	int rc = ML_ENOENT;
	if (git_repository_open_ext(&repo, dir[0] ? dir : ".", 0, NULL) == 0 &&
	    git_reference_name_to_id(&oid, repo, "HEAD") == 0) {
		git_oid_tostr(out, 41, &oid);
		rc = 0;
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

static int cmp_index(const void *a, const void *b, void *files)
{
	const ml_artifact *f = files;
	return strcmp(f[*(const size_t *)a].name, f[*(const size_t *)b].name);
}

/* The packages in name order (indexes into plan->files). */
static size_t *sorted_files(const ml_plan *p)
{
	size_t *ix = calloc(p->n_files ? p->n_files : 1, sizeof(*ix));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < p->n_files; i++)
		ix[i] = i;
	qsort_r(ix, p->n_files, sizeof(*ix), cmp_index, p->files);
	return ix;
}

static void tool_table(ml_buf *b, const ml_pylock_input *in)
{
	const ml_plan *p = in->plan;
	const ml_manifest *mf = p->selection ? p->selection->manifest : NULL;
	ml_buf_puts(b, "\n[tool.mlsetup]\n");
	if (mf) {
		kv_str(b, "manifest", mf->name);
		ml_buf_printf(b, "manifest-embedded = %s\n", mf->embedded ? "true" : "false");
	}
	if (in->commit)
		kv_str(b, "commit", in->commit);
	ml_buf_puts(b, "requested = [");
	bool first = true;
	for (size_t i = 0; i < p->n_files; i++) {
		if (!p->files[i].requested)
			continue;
		ml_buf_puts(b, first ? "" : ", ");
		toml_str(b, p->files[i].name);
		first = false;
	}
	ml_buf_puts(b, "]\n");
	const ml_machine *m = in->machine;
	if (m) {
		ml_buf_printf(b, "platform = \"%s-%s\"\n", m->os.name, m->os.arch);
		if (m->os.libc_kind[0])
			ml_buf_printf(b, "libc = \"%s %s\"\n", m->os.libc_kind, m->os.libc_version);
		if (m->driver.version[0])
			kv_str(b, "driver", m->driver.version);
		ml_buf_puts(b, "gpus = [");
		for (size_t i = 0; i < m->n_gpus; i++) {
			const ml_gpu *g = &m->gpus[i];
			ml_buf_puts(b, i ? ", { name = " : "{ name = ");
			toml_str(b, g->name);
			if (g->cc_major >= 0)
				ml_buf_printf(b, ", compute-capability = \"%d.%d\"", g->cc_major,
				              g->cc_minor);
			if (g->uuid[0]) {
				ml_buf_puts(b, ", uuid = ");
				toml_str(b, g->uuid);
			}
			ml_buf_puts(b, " }");
		}
		ml_buf_puts(b, "]\n");
	}
	if (in->python) {
		ml_buf_puts(b, "\n[tool.mlsetup.python]\n");
		kv_str(b, "version", in->python->version);
		kv_str(b, "implementation", in->python->implementation);
		kv_str(b, "executable", in->python->executable);
		if (in->python_source)
			kv_str(b, "source", in->python_source);
		if (in->python_reason && in->python_reason[0])
			kv_str(b, "reason", in->python_reason);
	}
	if (mf && mf->reqs && mf->reqs->n_meta) {
		ml_buf_puts(b, "\n[tool.mlsetup.header]\n");
		for (size_t i = 0; i < mf->reqs->n_meta; i++)
			if (strcmp(mf->reqs->meta[i].key, "requested") != 0)
				kv_str(b, mf->reqs->meta[i].key, mf->reqs->meta[i].value);
	}
}

int ml_pylock_render(char **out, const ml_pylock_input *in, size_t *n_without_url, ml_err *err)
{
	const ml_plan *p = in->plan;
	size_t *ix = sorted_files(p), missing = 0;
	if (!ix)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_buf b = ML_BUF_INIT;
	ml_buf_printf(&b,
	              "# The environment as mlsetup %s installed it: every wheel with its URL, "
	              "size and\n# sha256 (PEP 751). Rebuild it elsewhere with\n#   mlsetup "
	              "install --manifest pylock.toml\n",
	              ML_VERSION);
	ml_buf_puts(&b, "lock-version = \"1.0\"\ncreated-by = \"mlsetup\"\n");
	if (in->python && in->python->xy[0])
		ml_buf_printf(&b, "requires-python = \"==%s.*\"\n", in->python->xy);
	for (size_t k = 0; k < p->n_files; k++) {
		const ml_artifact *a = &p->files[ix[k]];
		const char *url = in->urls ? in->urls[ix[k]] : NULL;
		ml_buf_puts(&b, "\n[[packages]]\n");
		kv_str(&b, "name", a->name);
		kv_str(&b, "version", a->version);
		ml_buf_puts(&b, "\n[[packages.wheels]]\n");
		kv_str(&b, "name", a->filename);
		if (url && url[0]) {
			char clean[4096];
			ml_url_strip_userinfo(clean, sizeof(clean), url);
			kv_str(&b, "url", clean);
		} else {
			missing++;
		}
		if (a->size >= 0) /* PEP 751: optional; unknown where no server told it */
			ml_buf_printf(&b, "size = %lld\n", (long long)a->size);
		ml_buf_printf(&b, "hashes = { sha256 = \"%s\" }\n", a->sha256);
	}
	tool_table(&b, in);
	free(ix);
	if (!b.data)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (n_without_url)
		*n_without_url = missing;
	*out = ml_buf_detach(&b);
	return 0;
}

int ml_pylock_write(const char *dir, const ml_pylock_input *in, size_t *n_without_url, ml_err *err)
{
	char *text = NULL, path[4200];
	int rc = ml_pylock_render(&text, in, n_without_url, err);
	if (rc)
		return rc;
	if (ml_pathf(path, sizeof(path), "%s/%s", dir, ML_PYLOCK_FILE)) {
		free(text);
		return ml_err_set(err, ML_EIO, "path too long: '%s'", dir);
	}
	int e = ml_fs_write_atomic(path, text, strlen(text), 0644);
	free(text);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	return 0;
}

/* --- export -------------------------------------------------------------------------- */

int ml_pylock_to_requirements(char **out, const ml_pylock *pl, ml_err *err)
{
	ml_buf b = ML_BUF_INIT;
	const ml_toml *tool = ml_toml_get(ml_toml_get(pl->doc, "tool"), "mlsetup");
	const ml_toml *hdr = ml_toml_get(tool, "header");
	ml_buf_printf(&b,
	              "# Exported by mlsetup %s from '%s': every package pinned with == and\n# the "
	              "sha256 of its wheels (pip install --require-hashes -r FILE accepts it).\n",
	              ML_VERSION, pl->path);
	for (size_t i = 0; hdr && hdr->kind == ML_TOML_TABLE && i < hdr->n; i++)
		if (hdr->items[i]->kind == ML_TOML_STRING && strcmp(hdr->keys[i], "requested") &&
		    !strchr(hdr->keys[i], '\n') && !strchr(hdr->items[i]->str, '\n'))
			ml_buf_printf(&b, "# mlsetup: %s = %s\n", hdr->keys[i], hdr->items[i]->str);
	const ml_toml *rq = ml_toml_get(tool, "requested");
	if (rq && rq->kind == ML_TOML_ARRAY) {
		ml_buf_puts(&b, "# mlsetup: requested =");
		for (size_t i = 0; i < rq->n; i++)
			if (rq->items[i]->kind == ML_TOML_STRING)
				ml_buf_printf(&b, " %s", rq->items[i]->str);
		ml_buf_puts(&b, "\n");
	}
	ml_buf_puts(&b, "\n");
	for (size_t i = 0; i < pl->n_pkgs; i++) {
		const ml_pylock_package *p = &pl->pkgs[i];
		if (!p->n_wheels) {
			ml_buf_release(&b);
			ml_err_set(err, ML_EUNSUPPORTED,
			           "lock file '%s' line %d: %s has no wheel (only %s)", pl->path,
			           p->line, p->name, p->source_kind);
			ml_err_hint(err, "a hashed requirements file of wheels cannot name it");
			return ML_EUNSUPPORTED;
		}
		ml_buf_printf(&b, "%s==%s", p->normalized, p->version);
		if (p->marker)
			ml_buf_printf(&b, " ; %s", p->marker);
		for (size_t w = 0; w < p->n_wheels; w++)
			ml_buf_printf(&b, " \\\n    --hash=sha256:%s", p->wheels[w].sha256);
		ml_buf_puts(&b, "\n");
	}
	ml_buf_puts(&b, "\n# Wheel files by sha256, for `mlsetup plan` (pip ignores comments):\n");
	for (size_t i = 0; i < pl->n_pkgs; i++)
		for (size_t w = 0; w < pl->pkgs[i].n_wheels; w++)
			if (pl->pkgs[i].wheels[w].size >= 0 &&
			    !strchr(pl->pkgs[i].wheels[w].filename, ' '))
				ml_buf_printf(&b, "# mlsetup-file: %s %lld %s\n",
				              pl->pkgs[i].wheels[w].sha256,
				              (long long)pl->pkgs[i].wheels[w].size,
				              pl->pkgs[i].wheels[w].filename);
	if (!b.data)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	*out = ml_buf_detach(&b);
	return 0;
}
