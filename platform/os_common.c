/*
 * os_common.c - the parts of core.h's operating-system interface that are
 * the same on Linux and Windows (compat.h maps the POSIX calls there): a
 * path under a root directory, reading a small file whole, and cutting a
 * child's output into lines (os_common.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlsetup/core.h"
#include "os_common.h"

/* '/', and on Windows '\' too. */
static bool is_sep(char c)
{
#ifdef _WIN32
	return c == '/' || c == '\\';
#else
	return c == '/';
#endif
}

int ml_os_rooted(char *dst, size_t dstsz, const char *root, const char *path)
{
	int n;
	if (!root || !*root || strcmp(root, "/") == 0) {
		n = snprintf(dst, dstsz, "%s", path);
	} else {
		bool root_slash = is_sep(root[strlen(root) - 1]);
		bool path_slash = is_sep(path[0]);
		n = snprintf(dst, dstsz, "%s%s%s", root, (!root_slash && !path_slash) ? "/" : "",
		             (root_slash && path_slash) ? path + 1 : path);
	}
	return (n < 0 || (size_t)n >= dstsz) ? ML_EFAIL : 0;
}

int ml_os_read_file(char **out, size_t *out_len, const char *root, const char *path,
                    size_t max_bytes, ml_err *err)
{
	char full[PATH_MAX];
	if (ml_os_rooted(full, sizeof(full), root, path))
		return ml_err_set(err, ML_EIO, "path too long: '%s'", path);
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return ml_err_set(err, e == ENOENT || e == ENOTDIR ? ML_ENOENT : ML_EIO,
		                  "cannot open '%s': %s", full, strerror(e));
	}
	ml_buf b = ML_BUF_INIT;
	char chunk[4096];
	int rc = 0;
	while (b.len < max_bytes) {
		size_t want = max_bytes - b.len < sizeof(chunk) ? max_bytes - b.len : sizeof(chunk);
		ssize_t n = read(fd, chunk, (unsigned)want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* Windows' C runtime opens a directory, then fails to read
			 * it with EBADF */
			bool dir = errno == EISDIR || errno == EBADF;
			rc = ml_err_set(err, ML_EIO, "cannot read '%s': %s", full,
			                dir ? "is a directory" : strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (ml_buf_add(&b, chunk, (size_t)n)) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory reading '%s'", full);
			break;
		}
	}
	close(fd);
	if (rc) {
		ml_buf_release(&b);
		return rc;
	}
	size_t len = b.len;
	char *data = ml_buf_detach(&b);
	if (!data)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	*out = data;
	if (out_len)
		*out_len = len;
	return 0;
}

void ml_os_lines_feed(struct ml_os_lines *l, const char *chunk, size_t n)
{
	for (size_t i = 0; l->fn && i < n; i++) {
		if (chunk[i] == '\n') {
			if (l->len && l->line[l->len - 1] == '\r')
				l->len--;
			l->line[l->len] = '\0';
			int restart = l->fn(l->line, l->data);
			if (restart > 0)
				l->restart_s = restart;
			l->len = 0;
		} else if (l->len + 1 < sizeof(l->line)) {
			l->line[l->len++] = chunk[i];
		}
	}
}
