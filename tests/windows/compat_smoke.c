/*
 * compat_smoke.c - the Windows compatibility layer (platform/windows/)
 * under wine or Windows: UTF-8 and long paths, atomic replace, hard
 * links, directory descriptors, flock, pread/pwrite, mmap, running a
 * program, the argument quoting. Built and run by tests/windows/run.sh
 * (zig cc, no third-party library needed); prints "ok"/"FAIL" lines and
 * exits 1 when anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/core.h"

static int failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok   ");                                                           \
		} else {                                                                           \
			printf("FAIL ");                                                           \
			failed++;                                                                  \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
	} while (0)

static char *slurp(const char *path)
{
	char *text = NULL;
	return ml_os_read_file(&text, NULL, NULL, path, 1 << 20, NULL) == 0 ? text : NULL;
}

int main(int argc, char **argv)
{
	if (ml_os_init(&argc, &argv) != 0)
		return 2;
	if (argc > 1 && strcmp(argv[1], "--echo-args") == 0) {
		/* The child of the quoting test: one argument a line, bracketed. */
		for (int i = 2; i < argc; i++)
			printf("[%s]\n", argv[i]);
		return 7;
	}
	CHECK(true, "ml_os_init");
	const char *base = argc > 1 ? argv[1] : "C:/mlsetup-compat-smoke";
	ml_fs_rm_tree(base);

	/* UTF-8 names, and a path past MAX_PATH. */
	char deep[PATH_MAX];
	int n = snprintf(deep, sizeof deep, "%s/\xc3\xa9t\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac", base);
	while (n < 400)
		n += snprintf(deep + n, sizeof deep - (size_t)n, "/%s", "a-rather-long-directory-name");
	CHECK(ml_fs_mkdirs(deep, 0755) == 0, "mkdirs of a %d-byte UTF-8 path", n);
	char file[PATH_MAX];
	ml_pathf(file, sizeof file, "%s/f\xc3\xbc\xc3\xbc.txt", deep);
	CHECK(ml_fs_write_atomic(file, "one\n", 4, 0644) == 0, "write_atomic (new)");
	CHECK(ml_fs_write_atomic(file, "two\n", 4, 0644) == 0, "write_atomic over an existing file");
	CHECK(chmod(file, 0444) == 0 && access(file, W_OK) != 0, "chmod 0444 sets read-only");
	CHECK(ml_fs_write_atomic(file, "two\n", 4, 0644) == 0,
	      "write_atomic replaces a read-only file, as rename() does");
	char *t = slurp(file);
	CHECK(t && strcmp(t, "two\n") == 0, "read back: '%s'", t ? t : "(null)");
	free(t);

	CHECK(ml_fs_sync_tree(base) == 0, "sync_tree flushes every file under the directory");

	/* Hard link (same inode) and stat. */
	char link2[PATH_MAX];
	ml_pathf(link2, sizeof link2, "%s/link.txt", deep);
	bool linked = false;
	CHECK(ml_fs_link_or_copy(file, link2, &linked) == 0, "link_or_copy (linked=%d)", linked);
	struct stat a, b;
	CHECK(stat(file, &a) == 0 && stat(link2, &b) == 0 && (!linked || a.st_ino == b.st_ino),
	      "stat: same file index when linked, size %lld", (long long)a.st_size);

	/* Directory descriptors and listing. */
	DIR *d = opendir(deep);
	int entries = 0;
	bool saw_utf8 = false;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		entries++;
		saw_utf8 |= strcmp(e->d_name, "f\xc3\xbc\xc3\xbc.txt") == 0;
	}
	if (d)
		closedir(d);
	CHECK(entries == 4 && saw_utf8, "readdir: %d entries, UTF-8 name seen: %d", entries,
	      saw_utf8);
	int dfd = open(deep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	CHECK(dfd >= 0 && fstatat(dfd, "link.txt", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	              S_ISREG(st.st_mode),
	      "openat-style: fstatat through a directory descriptor");
	CHECK(dfd >= 0 && renameat(dfd, "link.txt", dfd, "moved.txt") == 0, "renameat");
	if (dfd >= 0)
		close(dfd);

	/* Locks: a second exclusive one is refused, then granted. */
	char lockp[PATH_MAX];
	ml_pathf(lockp, sizeof lockp, "%s/lock", base);
	int l1 = -1, l2 = -1;
	CHECK(ml_fs_lock(&l1, lockp, false) == 0, "lock");
	int r = ml_fs_lock(&l2, lockp, false);
	CHECK(r == -EWOULDBLOCK, "second lock refused (%d)", r);
	CHECK(write(l1, "pid\n", 4) == 4, "write to a locked file");
	ml_fs_unlock(l1);
	CHECK(ml_fs_lock(&l2, lockp, false) == 0, "lock after unlock");
	ml_fs_unlock(l2);

	/* pread / pwrite / mmap. */
	char big[PATH_MAX];
	ml_pathf(big, sizeof big, "%s/big.bin", base);
	int fd = open(big, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && pwrite(fd, "hello world", 11, 100) == 11, "pwrite at 100");
	char buf[16] = "";
	CHECK(fd >= 0 && pread(fd, buf, 5, 106) == 5 && memcmp(buf, "world", 5) == 0,
	      "pread at 106: '%.5s'", buf);
	void *m = fd >= 0 ? mmap(NULL, 111, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	CHECK(m != MAP_FAILED && memcmp((char *)m + 100, "hello", 5) == 0, "mmap");
	if (m != MAP_FAILED)
		munmap(m, 111);
	if (fd >= 0)
		close(fd);

	/* Running a program: argument quoting round-trips through cmd's echo
	 * of the command line is too lossy; use the exit status and output. */
	char *out = NULL;
	int status = -1;
	const char *args[] = {"cmd.exe", "/c", "echo", "hello", NULL};
	ml_err err = ML_ERR_INIT;
	r = ml_os_run_capture(&out, &status, args, 4096, 20, &err);
	CHECK(r == 0 && status == 0 && out && strstr(out, "hello"), "run cmd /c echo: rc %d '%s' %s",
	      r, out ? out : "", err.msg);
	free(out);
	/* Arguments survive CreateProcessW's one command line unchanged. */
	const char *echo[] = {argv[0], "--echo-args", "a b", "c\"d", "e\\", "f\\\"g", "",
	                      "\xc3\xbc \xe6\x97\xa5", "tab\there", NULL};
	r = ml_os_run_capture(&out, &status, echo, 4096, 20, &err);
	const char *want = "[a b]\n[c\"d]\n[e\\]\n[f\\\"g]\n[]\n[\xc3\xbc \xe6\x97\xa5]\n[tab\there]\n";
	CHECK(r == 0 && status == 7 && out && strcmp(out, want) == 0,
	      "argument quoting round-trips (status %d): %s", status, out ? out : err.msg);
	free(out);
	const char *none[] = {"no-such-program-xyz", NULL};
	r = ml_os_run_capture(&out, &status, none, 4096, 5, &err);
	CHECK(r == ML_ENOENT, "a missing program is ML_ENOENT (%d)", r);

	uint64_t mib = 0;
	CHECK(ml_os_disk_free_mib(&mib, deep, NULL) == 0 && mib > 0, "disk free %llu MiB",
	      (unsigned long long)mib);
	CHECK(ml_os_cpu_count() >= 1, "cpu count %d", ml_os_cpu_count());
	char real[PATH_MAX] = "";
	errno = 0;
	CHECK(realpath(base, real) != NULL && strchr(real, '\\') == NULL, "realpath: %s (%s)", real,
	      strerror(errno));
	CHECK(realpath(deep, real) != NULL && strchr(real, '\\') == NULL,
	      "realpath of a long path: %.60s... (%s)", real, strerror(errno));
	void *h = ml_os_dlopen((const char *const[]){"kernel32.dll", NULL}, NULL, 0, NULL);
	CHECK(h && ml_os_dlsym(h, "GetTickCount64"), "dlopen kernel32.dll from System32");
	ml_os_dlclose(h);
	h = ml_os_dlopen((const char *const[]){"sub/x.dll", NULL}, NULL, 0, &err);
	CHECK(!h, "a relative DLL path is refused: %s", err.msg);

	errno = 0;
	CHECK(close(12345) == -1 && errno == EBADF, "close of a descriptor never opened is EBADF");
	int wfd = open(big, O_WRONLY | O_CLOEXEC);
	CHECK(wfd >= 0 && fstat(wfd, &st) == 0 && st.st_size == 111, "fstat of a write-only descriptor");
	if (wfd >= 0)
		close(wfd);
	CHECK(ml_fs_rm_tree(base) == 0, "rm_tree");
	struct stat gone;
	CHECK(stat(base, &gone) != 0 && errno == ENOENT, "gone");
	printf("%s\n", failed ? "FAILED" : "all passed");
	return failed ? 1 : 0;
}
