/*
 * os.c (Linux) - the operating-system interface core.h declares: reading
 * files under a root directory, dlopen, spawning a program with a timeout
 * and captured output, free disk space and CPU count, and the system calls
 * that the oldest glibc mlsetup supports (2.17, the manylinux2014 baseline)
 * has no wrapper for, and where each distribution keeps its CA certificates.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mlsetup/core.h"
#include "../os_common.h"

extern char **environ;

int ml_os_init(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return 0;
}

void *ml_os_dlopen(const char *const *names, char *loaded_name, size_t loaded_sz, ml_err *err)
{
	/* Report the loader's message for the first (primary) name: the
	 * fallbacks are alternative locations of the same library. */
	char first[512] = "no library names given";
	for (size_t i = 0; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			if (loaded_name)
				ml_strlcpy(loaded_name, names[i], loaded_sz);
			return h;
		}
		const char *e = dlerror();
		if (i == 0)
			ml_strlcpy(first, e ? e : "unknown loader error", sizeof(first));
	}
	ml_err_set(err, ML_ENOENT, "%s", first);
	return NULL;
}

void *ml_os_dlsym(void *handle, const char *symbol)
{
	return handle ? dlsym(handle, symbol) : NULL;
}

void ml_os_dlclose(void *handle)
{
	if (handle)
		dlclose(handle);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_child(char **out, int *status, const char *const *argv, size_t max_bytes,
                     int timeout_s, bool with_stderr, struct ml_os_lines *lines, ml_err *err)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return ml_err_set(err, ML_EIO, "pipe: %s", strerror(errno));

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if (with_stderr)
		posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (e != 0) {
		close(pfd[0]);
		return ml_err_set(err, ML_ENOENT, "cannot run '%s': %s", argv[0], strerror(e));
	}

	ml_buf b = ML_BUF_INIT;
	long long deadline = now_ms() + (long long)timeout_s * 1000;
	int rc = 0;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			rc = ml_err_set(err, ML_EFAIL, "'%s' did not finish within %d s", argv[0],
			                timeout_s);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd p = {pfd[0], POLLIN, 0};
		int pr = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (pr < 0 && errno != EINTR) {
			rc = ml_err_set(err, ML_EIO, "poll: %s", strerror(errno));
			kill(pid, SIGKILL);
			break;
		}
		if (pr <= 0)
			continue;
		char chunk[4096];
		ssize_t n = read(pfd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (lines)
			ml_os_lines_feed(lines, chunk, (size_t)n);
		if (lines && lines->restart_s) { /* a new phase with its own limit */
			timeout_s = lines->restart_s;
			deadline = now_ms() + (long long)timeout_s * 1000;
			lines->restart_s = 0;
		}
		size_t keep = b.len >= max_bytes ? 0 : (size_t)n;
		if (keep > max_bytes - b.len)
			keep = max_bytes - b.len;
		if (keep && ml_buf_add(&b, chunk, keep)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			kill(pid, SIGKILL);
			break;
		}
	}
	close(pfd[0]);
	if (lines && lines->len && !rc)
		ml_os_lines_feed(lines, "\n", 1);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (rc) {
		ml_buf_release(&b);
		return rc;
	}
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	*out = ml_buf_detach(&b);
	if (!*out)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	return 0;
}

int ml_os_run_lines(char **out, int *status, const char *const *argv, size_t max_bytes,
                    int timeout_s, ml_os_line_fn on_line, void *data, ml_err *err)
{
	struct ml_os_lines l = {on_line, data, "", 0, 0};
	return run_child(out, status, argv, max_bytes, timeout_s, true, &l, err);
}

static int run_capture(char **out, int *status, const char *const *argv, size_t max_bytes,
                       int timeout_s, bool with_stderr, ml_err *err)
{
	return run_child(out, status, argv, max_bytes, timeout_s, with_stderr, NULL, err);
}

bool ml_os_in_use(char *which, size_t which_sz, const char *dir)
{
	(void)which, (void)which_sz, (void)dir;
	return false; /* a file in use is moved and replaced like any other */
}

int ml_os_disk_free_mib(uint64_t *out, const char *path, ml_err *err)
{
	char p[PATH_MAX];
	ml_strlcpy(p, path && *path ? path : ".", sizeof(p));
	struct statvfs st;
	while (statvfs(p, &st) != 0) {
		if (errno != ENOENT)
			return ml_err_set(err, ML_EIO, "cannot stat filesystem of '%s': %s", p,
			                  strerror(errno));
		char *slash = strrchr(p, '/');
		if (!slash)
			ml_strlcpy(p, ".", sizeof(p));
		else if (slash == p)
			p[1] = '\0';
		else
			*slash = '\0';
	}
	*out = (uint64_t)st.f_bavail * st.f_frsize / (1024 * 1024);
	return 0;
}

int ml_os_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int ml_os_run_capture(char **out, int *status, const char *const *argv, size_t max_bytes,
                      int timeout_s, ml_err *err)
{
	return run_capture(out, status, argv, max_bytes, timeout_s, false, err);
}

int ml_os_run_output(char **out, int *status, const char *const *argv, size_t max_bytes,
                     int timeout_s, ml_err *err)
{
	return run_capture(out, status, argv, max_bytes, timeout_s, true, err);
}

int ml_os_random(void *buf, size_t n)
{
	unsigned char *p = buf;
	size_t got = 0;
#ifdef SYS_getrandom
	while (got < n) {
		long r = syscall(SYS_getrandom, p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
#endif
	if (got == n)
		return 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

long long ml_os_copy_file_range(int in_fd, int out_fd, size_t n)
{
#ifdef SYS_copy_file_range
	long r;
	do
		r = syscall(SYS_copy_file_range, in_fd, NULL, out_fd, NULL, n, 0u);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -(long long)errno : (long long)r;
#else
	(void)in_fd, (void)out_fd, (void)n;
	return -ENOSYS;
#endif
}

/* CA bundles, most common first: Debian/Ubuntu (and Gentoo, Arch's
 * compatibility link); RHEL/CentOS/Fedora/Amazon Linux and the file it
 * links to; openSUSE/SLES and the file it links to; Arch (p11-kit); Alpine
 * and others. */
static const char *const ca_files[] = {
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/ca-bundle.pem",
        "/var/lib/ca-certificates/ca-bundle.pem",
        "/etc/ca-certificates/extracted/tls-ca-bundle.pem",
        "/etc/ssl/cert.pem",
        "/etc/pki/tls/cacert.pem",
        NULL,
};

/* Hashed certificate directories (c_rehash / update-ca-certificates). */
static const char *const ca_dirs[] = {
        "/etc/ssl/certs",
        "/var/lib/ca-certificates/openssl",
        "/etc/pki/tls/certs",
        NULL,
};

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v && v[0] ? v : NULL;
}

static const char *first_existing(const char *const *paths, bool dir)
{
	struct stat st;
	for (size_t i = 0; paths[i]; i++)
		if (stat(paths[i], &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			return paths[i];
	return NULL;
}

const char *ml_os_ca_file(void)
{
	const char *env = env_nonempty("SSL_CERT_FILE");
	if (env)
		return env;
	if (env_nonempty("SSL_CERT_DIR"))
		return NULL;
	return first_existing(ca_files, false);
}

const char *ml_os_ca_dir(void)
{
	const char *env = env_nonempty("SSL_CERT_DIR");
	if (env)
		return env;
	if (env_nonempty("SSL_CERT_FILE") || first_existing(ca_files, false))
		return NULL;
	return first_existing(ca_dirs, true);
}
