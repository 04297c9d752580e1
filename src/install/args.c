/*
 * args.c - requirements given as arguments (`mlsetup install torch
 * "numpy<2"`, as pip and uv take them): each is read as one PEP 508 line
 * of a requirements file (an argument that is not one is refused, named),
 * and together they become a requirements file in a temporary directory
 * that the run plans from as its manifest, then removes. Everything else
 * is as for `--manifest FILE`: pip resolves it, a torch left open gets the
 * build for this machine (src/plan/torch_plan.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void args_close(char *dir);

/* Checks o's requirements and writes them as DIR/requirements.txt; fills
 * *own as o with that file as its manifest. */
static int args_open(ml_install_opts *own, char *dir, size_t dir_sz, char *path, size_t path_sz,
                     const ml_install_opts *o, ml_err *err)
{
	dir[0] = '\0';
	if (o->manifest || o->project || o->n_manifests)
		return ml_err_set(
		        err, ML_EUSAGE,
		        "requirements given as arguments (%s ...) cannot be combined with "
		        "--manifest or --project",
		        o->requirements[0]);
	ml_buf text = {0};
	int rc = 0;
	for (size_t i = 0; !rc && i < o->n_requirements; i++) {
		const char *a = o->requirements[i];
		ml_requirements *one = NULL;
		ml_err e = ML_ERR_INIT;
		/* one requirement per argument: no options, no line breaks */
		if (!*a || a[0] == '-' || strpbrk(a, "\r\n"))
			rc = ml_err_set(err, ML_EUSAGE,
			                "'%s' is not a requirement (PEP 508: torch, "
			                "'torch>=2.8', 'numpy<2')",
			                a);
		else if (ml_requirements_parse(&one, "the command line", a, strlen(a), 0, &e) ||
		         one->n_reqs != 1)
			rc = ml_err_set(err, ML_EUSAGE, "'%s' is not a requirement: %s", a,
			                one ? "not exactly one" : e.msg);
		ml_requirements_free(one);
		if (!rc && (ml_buf_puts(&text, a) || ml_buf_puts(&text, "\n")))
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = ml_fs_mktempdir(dir, dir_sz, "args", err);
	if (!rc && (size_t)snprintf(path, path_sz, "%s/requirements.txt", dir) >= path_sz)
		rc = ml_err_set(err, ML_EIO, "temporary path too long: '%s'", dir);
	if (!rc) {
		int e = ml_fs_write_atomic(path, text.data, text.len, 0644);
		if (e)
			rc = ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	}
	ml_buf_release(&text);
	if (rc) {
		args_close(dir);
		return rc;
	}
	*own = *o;
	own->manifest = path;
	own->requirements = NULL;
	own->n_requirements = 0;
	return 0;
}

static void args_close(char *dir)
{
	if (dir && dir[0]) {
		ml_fs_rm_tree(dir);
		dir[0] = '\0';
	}
}

int mli_args_run(ml_install_result *res, const ml_install_opts *o,
                 int (*run)(ml_install_result *, const ml_install_opts *, ml_err *), ml_err *err)
{
	if (!o->n_requirements)
		return run(res, o, err);
	ml_install_opts own;
	char dir[4096], path[4096];
	int rc = args_open(&own, dir, sizeof(dir), path, sizeof(path), o, err);
	if (rc) {
		memset(res, 0, sizeof(*res));
		return rc;
	}
	rc = run(res, &own, err);
	args_close(dir);
	return rc;
}
