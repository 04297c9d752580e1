/*
 * stage.c - atomic environments (docs/ARCHITECTURE.md, "The rules",
 * docs/reliability.md, "Crashes, resources, concurrency"): a lock per target, a
 * staging directory beside it, and a commit that syncs the new tree,
 * writes the completion marker into it last, and swaps it into place with
 * one rename, so the target always holds a complete environment (the old
 * one or the new one) whatever moment a run is killed at.
 *
 * Names beside target T in its parent directory:
 *   .T.mlsetup-lock        the flock; holds the owner's pid
 *   .T.mlsetup-stage-XXXX  a staging directory being built
 *   .T.mlsetup-old-XXXX    the previous environment, moved aside by a commit
 *                          on a file system without RENAME_EXCHANGE
 * Only a run holding the lock creates or removes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include "internal.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

struct ml_envlock {
	int fd;
	char target[ML_PATH_MAX]; /* absolute */
	char parent[ML_PATH_MAX];
	char base[256];
};

static int do_renameat2(int olddir, const char *oldp, int newdir, const char *newp, unsigned fl)
{
#if defined(_WIN32)
	/* MoveFileExW: RENAME_NOREPLACE only; no exchange, so commits take
	 * the move-aside path (3c below). */
	return ml_win_renameat2(olddir, oldp, newdir, newp, fl);
#elif defined(SYS_renameat2)
	return (int)syscall(SYS_renameat2, olddir, oldp, newdir, newp, fl);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Makes target absolute: its parent directories are created and resolved
 * (realpath), the last component kept as written. */
static int resolve_target(struct ml_envlock *l, const char *target, ml_err *err)
{
	char tmp[ML_PATH_MAX];
	if (!target || !*target)
		return ml_err_set(err, ML_EFAIL, "no target directory given");
	size_t n = ml_strlcpy(tmp, target, sizeof tmp);
	if (n >= sizeof tmp)
		return ml_err_set(err, ML_EFAIL, "target path too long: '%s'", target);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	const char *base;
	char dir[ML_PATH_MAX];
	if (ml_fs_split_path(dir, sizeof dir, &base, tmp) || !*base || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || strlen(base) > 200)
		return ml_err_set(err, ML_EFAIL, "target '%s' must name a directory to create",
		                  target);
	int e = ml_fs_mkdirs(dir, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", dir, strerror(-e));
	char real[ML_PATH_MAX];
	if (!realpath(dir, real))
		return ml_err_set(err, ML_EIO, "cannot resolve '%s': %s", dir, strerror(errno));
	ml_strlcpy(l->parent, real, sizeof l->parent);
	ml_strlcpy(l->base, base, sizeof l->base);
	int w = snprintf(l->target, sizeof l->target, "%s%s%s", real, strcmp(real, "/") ? "/" : "",
	                 base);
	if (w < 0 || (size_t)w >= sizeof l->target - 64)
		return ml_err_set(err, ML_EFAIL, "target path too long: '%s'", target);
	return 0;
}

int ml_env_lock(ml_envlock **out, const char *target, bool wait, ml_err *err)
{
	struct ml_envlock *l = calloc(1, sizeof *l);
	if (!l)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	l->fd = -1;
	int rc = resolve_target(l, target, err);
	if (rc) {
		free(l);
		return rc;
	}
	char path[ML_PATH_MAX];
	if (ml_pathf(path, sizeof path, "%s/.%s.mlsetup-lock", l->parent, l->base)) {
		free(l);
		return ml_err_set(err, ML_EFAIL, "target path too long: '%s'", target);
	}
	int e = ml_fs_lock(&l->fd, path, wait);
	if (e == -EWOULDBLOCK) {
		char pid[32] = "";
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, pid, sizeof pid - 1);
			close(fd);
			pid[n > 0 ? n : 0] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
		}
		ml_err_set(err, ML_EFAIL, "another mlsetup%s%s%s is installing into '%s'",
		           pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", l->target);
		ml_err_hint(err,
		            "wait for it to finish, or run again without --no-wait to wait for it");
		free(l);
		return ML_EFAIL;
	}
	if (e) {
		ml_err_set(err, ML_EFAIL, "cannot lock '%s': %s", path, strerror(-e));
		free(l);
		return ML_EFAIL;
	}
	char pid[32];
	int pn = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, pid, (size_t)pn, 0) < 0) {
		/* the pid is only for messages */
	}
	*out = l;
	return 0;
}

const char *ml_env_lock_target(const ml_envlock *lock)
{
	return lock->target;
}

void ml_env_unlock(ml_envlock *lock)
{
	if (!lock)
		return;
	if (lock->fd >= 0) {
		if (ftruncate(lock->fd, 0) != 0) {
			/* best effort: an old pid in the file only shows in messages */
		}
		close(lock->fd);
	}
	free(lock);
}

bool ml_env_is_complete(const char *target)
{
	struct stat st;
	char path[ML_PATH_MAX];
	if (lstat(target, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	if (snprintf(path, sizeof path, "%s/%s", target, ML_ENV_MARKER) >= (int)sizeof path)
		return false;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Cleans up after crashed runs: puts a complete moved-aside environment
 * back when the target is missing, then removes every stage and old
 * directory. Returns how many were removed. */
static int cleanup(ml_env_stage *s, const struct ml_envlock *l)
{
	char stage_p[300], old_p[300];
	snprintf(stage_p, sizeof stage_p, ".%s.mlsetup-stage-", l->base);
	snprintf(old_p, sizeof old_p, ".%s.mlsetup-old-", l->base);
	int pfd = open(l->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	struct stat st;
	bool target_missing =
	        fstatat(pfd, l->base, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
	DIR *d = fdopendir(dup(pfd));
	if (!d) {
		close(pfd);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, old_p, strlen(old_p)) == 0 && target_missing) {
			char marker[ML_PATH_MAX];
			snprintf(marker, sizeof marker, "%s/%s", de->d_name, ML_ENV_MARKER);
			if (fstatat(pfd, marker, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && renameat(pfd, de->d_name, pfd, l->base) == 0) {
				target_missing = false;
				s->recovered = true;
				fsync(pfd);
			}
		}
	}
	closedir(d);
	close(pfd);
	return ml_fs_rm_prefixed(l->parent, stage_p) + ml_fs_rm_prefixed(l->parent, old_p);
}

/* Returns 0 when target (base in the directory pfd) may be replaced by a
 * new environment: it is missing, an empty directory, or an environment
 * (it has the completion marker or a pyvenv.cfg). Anything else - a file,
 * a symlink, a project directory given as --target by mistake - is
 * refused, so a commit can never delete someone's files. */
static int check_replaceable(int pfd, const char *base, const char *target, ml_err *err)
{
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		return ml_err_set(err, ML_EIO, "cannot inspect '%s': %s", target, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		ml_err_set(err, ML_EFAIL, "'%s' exists and is not a directory", target);
		ml_err_hint(err, "remove it or choose another --target");
		return ML_EFAIL;
	}
	int dfd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ml_err_set(err, ML_EIO, "cannot open '%s': %s", target, strerror(errno));
	if (fstatat(dfd, ML_ENV_MARKER, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    fstatat(dfd, "pyvenv.cfg", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(dfd);
		return 0;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return ml_err_set(err, ML_EIO, "cannot read '%s': %s", target, strerror(errno));
	}
	bool empty = true;
	struct dirent *de;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	if (empty)
		return 0;
	ml_err_set(err, ML_EFAIL,
	           "'%s' exists and is not a Python environment; mlsetup will not replace it",
	           target);
	ml_err_hint(err, "remove it yourself, or choose another --target");
	return ML_EFAIL;
}

int ml_env_stage_begin(ml_env_stage **out, const ml_envlock *lock, ml_err *err)
{
	ml_env_stage *s = calloc(1, sizeof *s);
	if (!s)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_strlcpy(s->target, lock->target, sizeof s->target);
	s->n_stale_removed = cleanup(s, lock);
	int pfd = open(lock->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = pfd < 0 ? ml_err_set(err, ML_EIO, "cannot open '%s': %s", lock->parent,
	                              strerror(errno))
	                 : check_replaceable(pfd, lock->base, s->target, err);
	if (pfd >= 0)
		close(pfd);
	if (rc) {
		free(s);
		return rc;
	}
	for (int attempt = 0; attempt < 8; attempt++) {
		char rnd[17];
		ml_random_hex(rnd, 6);
		if (ml_pathf(s->path, sizeof s->path, "%s/.%s.mlsetup-stage-%s", lock->parent,
		             lock->base, rnd)) {
			errno = ENAMETOOLONG;
			break;
		}
		if (mkdir(s->path, 0755) == 0) {
			chmod(s->path, 0755);
			*out = s;
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	ml_err_set(err, ML_EIO, "cannot create a staging directory beside '%s': %s", s->target,
	           strerror(e));
	if (e == EACCES || e == EROFS)
		ml_err_hint(err, "choose a --target in a directory you can write to");
	free(s);
	return ML_EIO;
}

static const char in_use_hint[] =
        "close what runs from it - python.exe, its scripts, notebooks and Jupyter kernels, "
        "an editor's language server - and run mlsetup again; the environment is unchanged";

/* The old environment at target could not be moved aside (errno e).
 * Windows refuses to rename a directory while a process holds a file in
 * it open - a python.exe, a script launcher, a loaded .pyd or DLL - and
 * says "access denied" (EACCES here) or "sharing violation"; say that
 * plainly, with what to close. Returns ML_EIO (in use: ML_EFAIL). */
static int aside_failed(const char *target, int e, ml_err *err)
{
#ifdef _WIN32
	bool in_use = e == EACCES || e == EBUSY;
#else
	bool in_use = e == EBUSY;
#endif
	if (!in_use)
		return ml_err_set(err, ML_EIO, "cannot move '%s' aside: %s", target, strerror(e));
	ml_err_set(err, ML_EFAIL,
	           "the environment at '%s' is in use: a running program holds one of its "
	           "files open (%s)",
	           target, strerror(e));
	ml_err_hint(err, "%s", in_use_hint);
	return ML_EFAIL;
}

int ml_env_stage_commit(ml_env_stage *s, ml_err *err)
{
	if (s->committed)
		return ml_err_set(err, ML_EFAIL, "stage '%s' was already committed", s->path);
	char parent[ML_PATH_MAX], marker[ML_PATH_MAX + 32];
	const char *base, *sbase;
	if (ml_fs_split_path(parent, sizeof parent, &base, s->target))
		return ml_err_set(err, ML_EFAIL, "bad target '%s'", s->target);
	sbase = strrchr(s->path, '/') + 1;

	/* 1. Everything in the stage is durable before the marker exists. */
	int e = ml_fs_sync_tree(s->path);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot sync '%s': %s", s->path, strerror(-e));
	/* 2. The marker, last, and durable. */
	snprintf(marker, sizeof marker, "%s/%s", s->path, ML_ENV_MARKER);
	ml_buf m = ML_BUF_INIT;
	ml_buf_printf(&m, "mlsetup %s\ntarget %s\n", ML_VERSION, s->target);
	e = ml_fs_write_file(marker, ml_buf_cstr(&m), m.len, 0644, false, true);
	ml_buf_release(&m);
	if (e || (e = ml_fs_fsync_path(s->path)))
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", marker, strerror(-e));

	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return ml_err_set(err, ML_EIO, "cannot open '%s': %s", parent, strerror(errno));
	int rc = check_replaceable(pfd, base, s->target, err);
	if (rc)
		goto out;
	struct stat st;
	char busy[ML_PATH_MAX];
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT) {
			rc = ml_err_set(err, ML_EIO, "cannot inspect '%s': %s", s->target,
			                strerror(errno));
			goto out;
		}
		/* 3a. No target: one rename (never over something that
		 * appeared meanwhile). */
		int r = do_renameat2(pfd, sbase, pfd, base, RENAME_NOREPLACE);
		if (r != 0 && (errno == ENOSYS || errno == EINVAL))
			r = renameat(pfd, sbase, pfd, base);
		if (r != 0) {
			rc = ml_err_set(err, ML_EIO, "cannot rename '%s' to '%s': %s", s->path,
			                s->target, strerror(errno));
			goto out;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		rc = ml_err_set(err, ML_EFAIL, "'%s' exists and is not a directory", s->target);
		ml_err_hint(err, "remove it or choose another --target");
		goto out;
	} else if (ml_os_in_use(busy, sizeof busy, s->target)) {
		/* Windows: a running program holds a file of it; moving the
		 * environment aside would fail, or leave a half-removed one */
		ml_err_set(err, ML_EFAIL,
		           "the environment at '%s' is in use: a running program holds '%s' "
		           "open",
		           s->target, busy);
		ml_err_hint(err, "%s", in_use_hint);
		rc = ML_EFAIL;
		goto out;
	} else if (do_renameat2(pfd, sbase, pfd, base, RENAME_EXCHANGE) == 0) {
		/* 3b. Swapped atomically: the old environment is now at the
		 * stage's name. */
		fsync(pfd);
		ml_fs_rm_tree_at(pfd, sbase);
	} else if (errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP) {
		/* 3c. No exchange here: move the old one aside, put the new
		 * one in, put the old one back if that fails. A crash in
		 * between is repaired by the next ml_env_stage_begin(). */
		char old[300], rnd[17];
		ml_random_hex(rnd, 6);
		snprintf(old, sizeof old, ".%s.mlsetup-old-%s", base, rnd);
		if (renameat(pfd, base, pfd, old) != 0) {
			rc = aside_failed(s->target, errno, err);
			goto out;
		}
		if (renameat(pfd, sbase, pfd, base) != 0) {
			int e2 = errno;
			renameat(pfd, old, pfd, base);
			rc = ml_err_set(err, ML_EIO, "cannot rename '%s' to '%s': %s", s->path,
			                s->target, strerror(e2));
			goto out;
		}
		fsync(pfd);
		ml_fs_rm_tree_at(pfd, old);
	} else {
		rc = ml_err_set(err, ML_EIO, "cannot swap '%s' into '%s': %s", s->path, s->target,
		                strerror(errno));
		goto out;
	}
	fsync(pfd);
	s->committed = true;
out:
	close(pfd);
	return rc;
}

void ml_env_stage_abort(ml_env_stage *s)
{
	if (!s)
		return;
	if (!s->committed)
		ml_fs_rm_tree(s->path);
	free(s);
}
