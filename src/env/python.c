/*
 * python.c - interpreters: unpacking a python-build-standalone archive
 * (install_only / install_only_stripped, tar.gz or tar.zst with a python/
 * root directory; docs/nvidia-and-python-facts.md, "Python packaging") into mlsetup's data
 * directory once per machine, and asking an interpreter what it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Printed one value per line: implementation, major, minor, micro, real
 * executable, prefix, base prefix. */
static const char probe_src[] = "import os, sys\n"
                                "v = sys.version_info\n"
                                "print(sys.implementation.name)\n"
                                "print(v[0]); print(v[1]); print(v[2])\n"
                                "print(os.path.realpath(sys.executable))\n"
                                "print(sys.prefix)\n"
                                "print(getattr(sys, 'base_prefix', sys.prefix))\n";

int ml_python_probe(ml_python_info *out, const char *python, ml_err *err)
{
	if (strchr(python, '/') && access(python, X_OK) != 0) {
		int e = errno;
		ml_err_set(err, e == ENOENT || e == ENOTDIR ? ML_ENOENT : ML_EFAIL,
		           "cannot run the interpreter '%s': %s", python, strerror(e));
		ml_err_hint(err, "pass --python with the path of a CPython 3 interpreter");
		return e == ENOENT || e == ENOTDIR ? ML_ENOENT : ML_EFAIL;
	}
	const char *argv[] = {python, "-I", "-c", probe_src, NULL};
	char *text = NULL;
	int status = 0;
	int rc = ml_os_run_capture(&text, &status, argv, 1 << 16, 30, err);
	if (rc)
		return rc;
	ml_python_info info;
	memset(&info, 0, sizeof info);
	char *lines[7] = {0};
	size_t nl = 0;
	for (char *s = text; nl < 7 && s && *s;) {
		char *e = strchr(s, '\n');
		if (e)
			*e = '\0';
		lines[nl++] = s;
		s = e ? e + 1 : NULL;
	}
	if (status != 0 || nl != 7) {
		ml_err_set(err, ML_EFAIL,
		           "'%s' is not a working Python interpreter (it exited with status %d "
		           "and %zu lines of output to the probe)",
		           python, status, nl);
		ml_err_hint(err, "pass --python with the path of a CPython 3 interpreter");
		free(text);
		return ML_EFAIL;
	}
	ml_strlcpy(info.implementation, lines[0], sizeof info.implementation);
	info.is_cpython = strcmp(lines[0], "cpython") == 0;
	info.major = atoi(lines[1]);
	info.minor = atoi(lines[2]);
	info.micro = atoi(lines[3]);
	snprintf(info.version, sizeof info.version, "%d.%d.%d", info.major, info.minor, info.micro);
	snprintf(info.xy, sizeof info.xy, "%d.%d", info.major, info.minor);
	bool fits = ml_strlcpy(info.executable, lines[4], sizeof info.executable) <
	                    sizeof info.executable &&
	            ml_strlcpy(info.prefix, lines[5], sizeof info.prefix) < sizeof info.prefix &&
	            ml_strlcpy(info.base_prefix, lines[6], sizeof info.base_prefix) <
	                    sizeof info.base_prefix;
	free(text);
	if (!fits || info.major < 2 || !mle_is_absolute(info.executable, ML_ENV_OS_NATIVE))
		return ml_err_set(err, ML_EFAIL,
		                  "'%s' answered the probe with something unreadable", python);
	*out = info;
	return 0;
}

int ml_python_dir(char *dst, size_t dstsz, const char *override)
{
	int n;
	const char *v;
	if (override && *override)
		n = snprintf(dst, dstsz, "%s", override);
#ifdef _WIN32
	else if ((v = getenv("LOCALAPPDATA")) && *v) {
		n = snprintf(dst, dstsz, "%s/mlsetup/pythons", v);
		for (char *c = dst; n > 0 && (size_t)n < dstsz && *c; c++)
			if (*c == '\\')
				*c = '/';
	}
#endif
	else if ((v = getenv("XDG_DATA_HOME")) && *v == '/')
		n = snprintf(dst, dstsz, "%s/mlsetup/pythons", v);
	else if ((v = getenv("HOME")) && *v)
		n = snprintf(dst, dstsz, "%s/.local/share/mlsetup/pythons", v);
	else
		return ML_EFAIL;
	return (n < 0 || (size_t)n >= dstsz) ? ML_EFAIL : 0;
}

static int interpreter_path(char *out, size_t out_sz, const char *dir, ml_err *err)
{
	char p[ML_PATH_MAX];
	int n = snprintf(p, sizeof p, "%s/" ML_PYTHON_ARCHIVE_EXE, dir);
	if (n < 0 || (size_t)n >= sizeof p || ml_strlcpy(out, p, out_sz) >= out_sz)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", dir);
	return 0;
}

int ml_python_unpack(char *out, size_t out_sz, const char *archive_path, const char *sha256,
                     const char *dest_root, const char *name, ml_err *err)
{
	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0 || name[0] == '.')
		return ml_err_set(err, ML_EFAIL, "interpreter name '%s' is not a plain name",
		                  name ? name : "");
	if (sha256 && !ml_is_sha256_hex(sha256))
		return ml_err_set(err, ML_EFAIL, "'%s' is not a sha256 (64 lower-case hex digits)",
		                  sha256);
	char final[ML_PATH_MAX], marker[ML_PATH_MAX], lockp[ML_PATH_MAX], stage[ML_PATH_MAX];
	char trash[ML_PATH_MAX], probe[ML_PATH_MAX], prefix[300], rnd[17];
	if (snprintf(final, sizeof final, "%s/%s", dest_root, name) >= (int)sizeof final - 64)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", dest_root);
	if (ml_pathf(marker, sizeof marker, "%s/%s", final, ML_ENV_MARKER) ||
	    ml_pathf(lockp, sizeof lockp, "%s/.%s.lock", dest_root, name))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", dest_root);
	struct stat st;
	if (lstat(marker, &st) == 0 && S_ISREG(st.st_mode))
		return interpreter_path(out, out_sz, final, err);

	int lockfd = -1, e;
	int rc = mle_lock_in_dir(&lockfd, dest_root, lockp, err);
	if (rc)
		return rc;
	stage[0] = '\0';
	if (lstat(marker, &st) == 0 && S_ISREG(st.st_mode)) {
		rc = interpreter_path(out, out_sz, final, err);
		goto out;
	}
	if (lstat(final, &st) == 0) { /* incomplete: a crashed run or a stranger */
		ml_random_hex(rnd, 8);
		ml_pathf(trash, sizeof trash, "%s/.%s.trash-%s", dest_root, name, rnd);
		if (rename(final, trash) != 0) {
			rc = ml_err_set(err, ML_EFAIL,
			                "'%s' is in the way and cannot be moved aside: %s", final,
			                strerror(errno));
			goto out;
		}
		ml_fs_rm_tree(trash);
	}
	/* Leftovers of crashed runs (stale: we hold the lock). */
	snprintf(prefix, sizeof prefix, ".%s.stage-", name);
	ml_fs_rm_prefixed(dest_root, prefix);
	snprintf(prefix, sizeof prefix, ".%s.trash-", name);
	ml_fs_rm_prefixed(dest_root, prefix);
	if (sha256) {
		char hex[65];
		if ((rc = ml_sha256_file(hex, NULL, archive_path, err)))
			goto out;
		if (strcmp(hex, sha256) != 0) {
			rc = ml_err_set(err, ML_EINTEGRITY,
			                "interpreter archive '%s' has sha256 %s, expected %s",
			                archive_path, hex, sha256);
			ml_err_hint(err,
			            "the file is damaged or not the pinned one; download it again");
			goto out;
		}
	}
	ml_random_hex(rnd, 8);
	ml_pathf(stage, sizeof stage, "%s/.%s.stage-%s", dest_root, name, rnd);
	ml_extract_opts xo = ML_EXTRACT_OPTS_INIT;
	xo.kind = ML_ARCHIVE_INTERPRETER;
	if ((rc = ml_archive_extract(NULL, archive_path, stage, &xo, err))) {
		stage[0] = '\0'; /* removed by the extractor */
		goto out;
	}
	ml_pathf(probe, sizeof probe, "%s/" ML_PYTHON_ARCHIVE_EXE, stage);
	bool runnable = stat(probe, &st) == 0 && S_ISREG(st.st_mode);
#ifndef _WIN32
	runnable = runnable && (st.st_mode & 0111); /* Windows: python.exe has no such bit */
#endif
	if (!runnable) {
		rc = ml_err_set(err, ML_EINTEGRITY,
		                "interpreter archive '%s' has no " ML_PYTHON_ARCHIVE_EXE
		                " (expected a python-build-standalone install_only archive "
		                "for this OS)",
		                archive_path);
		goto out;
	}
	if ((e = ml_fs_sync_tree(stage))) {
		rc = ml_err_set(err, ML_EIO, "cannot sync '%s': %s", stage, strerror(-e));
		goto out;
	}
	char sm[ML_PATH_MAX + 32], content[128];
	ml_pathf(sm, sizeof sm, "%s/%s", stage, ML_ENV_MARKER);
	int cn = snprintf(content, sizeof content, "sha256=%s\n", sha256 ? sha256 : "unchecked");
	if ((e = ml_fs_write_file(sm, content, (size_t)cn, 0644, true, true)) ||
	    (e = ml_fs_fsync_path(stage)) || (rename(stage, final) != 0 && (e = -errno))) {
		rc = ml_err_set(err, ML_EIO, "cannot put '%s' in place: %s", final, strerror(-e));
		goto out;
	}
	stage[0] = '\0';
	ml_fs_fsync_path(dest_root);
	rc = interpreter_path(out, out_sz, final, err);
out:
	if (stage[0])
		ml_fs_rm_tree(stage);
	close(lockfd);
	return rc;
}
