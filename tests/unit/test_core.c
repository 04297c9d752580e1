/*
 * test_core.c - specs for the one copy of each file-system and digest
 * helper every stage shares (src/core/fs.c, src/core/digest.c): mkdir -p,
 * rm -rf that never follows a link, atomic writes, link-or-copy, flock
 * locks, path splitting and formatting; SHA-256 (FIPS 180-4 vectors) of
 * buffers, files and streams, other digests by name, and hex.
 *
 * Where a spec needs a permission to be refused and the tests run as
 * root (who passes every permission check), that part runs in a child
 * process that has dropped to an unprivileged user.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef _WIN32
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#endif

#include <cmocka.h>
#include "win_skip.h"

#include "env_testutil.h"
#include "mlsetup/core.h"

#define NOBODY      65534
#define NO_SYMLINKS "symbolic links: wine 8's CreateSymbolicLinkW reports success and makes none"

/* FIPS 180-4 examples (NIST CSRC "Examples with intermediate values"). */
#define SHA256_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA256_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA384_ABC                                                                                 \
	"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca1" \
	"34c825a7"
#define SHA512_ABC                                                                                 \
	"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23" \
	"a3feebbd454d4423643ce80e2a9ac94fa54ca49f"

typedef struct fx {
	char *tmp;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("core");
	if (!f->tmp)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	rm_rf(f->tmp);
	free(f->tmp);
	free(f);
	return 0;
}

static void put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Number of entries in dir besides "." and "..", -1 when unreadable. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static ino_t inode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/* Runs fn(arg) in a child process (as user nobody when drop_root) and
 * returns its result (0 = the spec held; at most 63), or skips when fn or
 * the drop says 77: the system cannot do what the spec needs. */
#ifdef _WIN32
/* Windows has neither fork() nor user nobody (nor enforces a directory's
 * read-only mode): those specs skip. */
static int in_child(int (*fn)(const char *), const char *arg, bool drop_root)
{
	(void)fn;
	(void)arg;
	(void)drop_root;
	ML_LINUX_ONLY("runs the spec in a fork()ed child");
	return -1;
}

static int unprivileged(int (*fn)(const char *), const char *arg)
{
	(void)fn;
	(void)arg;
	ML_LINUX_ONLY("POSIX permissions (a read-only directory, as user nobody)");
	return -1;
}
#else
static int in_child(int (*fn)(const char *), const char *arg, bool drop_root)
{
	fflush(stdout);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (drop_root &&
		    (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
			_exit(77);
		int rc = fn(arg);
		_exit(rc == 77 ? 77 : rc & 0x3f);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	return WEXITSTATUS(st);
}

/* Runs fn(arg) where permissions are enforced: directly when not root,
 * else in a child that dropped to user nobody. */
static int unprivileged(int (*fn)(const char *), const char *arg)
{
	return geteuid() != 0 ? fn(arg) : in_child(fn, arg, true);
}
#endif

/* Asserts that the file at path holds exactly want. */
static void assert_contents(const char *path, const char *want)
{
	char *got = slurp(path, NULL);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* A directory under the fixture that user nobody may write. */
static void shared_dir(char *out, const fx *f, const char *name)
{
	pf(out, "%s/%s", f->tmp, name);
	assert_int_equal(mkdir(out, 0777), 0);
	assert_int_equal(chmod(out, 0777), 0);
	assert_int_equal(chmod(f->tmp, 0755), 0);
}

/* --- mkdir -p ------------------------------------------------------------------ */

static void test_mkdirs_creates_nested_directories(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/a/b/c/d", f->tmp);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	assert_true(is_dir(p));
	pf(p, "%s/trailing/slash//", f->tmp);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	pf(p, "%s/trailing/slash", f->tmp);
	assert_true(is_dir(p));
}

static void test_mkdirs_accepts_an_existing_directory(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/x/y", f->tmp);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	assert_int_equal(ml_fs_mkdirs(f->tmp, 0755), 0);
}

static void test_mkdirs_refuses_an_existing_file(void **state)
{
	fx *f = *state;
	char p[4096], q[4096];
	pf(p, "%s/file", f->tmp);
	put(p, "x");
	assert_int_equal(ml_fs_mkdirs(p, 0755), -ENOTDIR);
	pf(q, "%s/file/below", f->tmp);
	assert_int_equal(ml_fs_mkdirs(q, 0755), -ENOTDIR);
	assert_int_equal(ml_fs_mkdirs("", 0755), -ENOENT);
}

/* --- rm -rf -------------------------------------------------------------------- */

static void test_rm_tree_removes_a_tree_and_accepts_a_missing_one(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/t/a/b", f->tmp);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	pf(p, "%s/t/a/b/file", f->tmp);
	put(p, "x");
	pf(p, "%s/t/top", f->tmp);
	put(p, "y");
	pf(p, "%s/t", f->tmp);
	assert_int_equal(ml_fs_rm_tree(p), 0);
	assert_false(exists(p));
	assert_int_equal(ml_fs_rm_tree(p), 0);
	pf(p, "%s/plain", f->tmp);
	put(p, "z");
	assert_int_equal(ml_fs_rm_tree(p), 0);
	assert_false(exists(p));
}

static void test_rm_tree_never_follows_a_symlink(void **state)
{
	ML_LINUX_ONLY(NO_SYMLINKS);
	fx *f = *state;
	char outside[4096], keep[4096], tree[4096], link[4096];
	pf(outside, "%s/outside", f->tmp);
	assert_int_equal(mkdir(outside, 0755), 0);
	pf(keep, "%s/outside/precious", f->tmp);
	put(keep, "keep me");
	pf(tree, "%s/tree/sub", f->tmp);
	assert_int_equal(ml_fs_mkdirs(tree, 0755), 0);
	pf(link, "%s/tree/sub/to-outside", f->tmp);
	assert_int_equal(symlink(outside, link), 0);
	pf(link, "%s/tree/to-outside-top", f->tmp);
	assert_int_equal(symlink(outside, link), 0);

	pf(tree, "%s/tree", f->tmp);
	assert_int_equal(ml_fs_rm_tree(tree), 0);
	assert_false(exists(tree));
	assert_true(exists(keep));
	assert_int_equal(entries(outside), 1);

	/* a link given as the path itself goes, not what it points at */
	pf(link, "%s/link-itself", f->tmp);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(ml_fs_rm_tree(link), 0);
	assert_false(exists(link));
	assert_true(exists(keep));
}

static int rm_read_only_tree(const char *dir)
{
	char p[4096];
	pf(p, "%s/ro/a/b", dir);
	if (ml_fs_mkdirs(p, 0755))
		return 1;
	pf(p, "%s/ro/a/b/file", dir);
	if (ml_fs_write_file(p, "x", 1, 0444, true, false))
		return 2;
	pf(p, "%s/ro/a/b", dir);
	chmod(p, 0555);
	pf(p, "%s/ro/a", dir);
	chmod(p, 0555);
	pf(p, "%s/ro", dir);
	chmod(p, 0555);
	pf(p, "%s/ro/a/b/new", dir);
	if (open(p, O_WRONLY | O_CREAT | O_EXCL, 0644) >= 0)
		return 3; /* the tree was not read-only after all */
	pf(p, "%s/ro", dir);
	if (ml_fs_rm_tree(p) != 0)
		return 4;
	return exists(p) ? 5 : 0;
}

static void test_rm_tree_removes_a_read_only_tree(void **state)
{
	fx *f = *state;
	char dir[4096];
	shared_dir(dir, f, "rm-ro");
	assert_int_equal(unprivileged(rm_read_only_tree, dir), 0);
}

static void test_rm_prefixed_removes_only_matching_entries(void **state)
{
	fx *f = *state;
	char p[4096], dir[4096];
	pf(dir, "%s/pre", f->tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	pf(p, "%s/.x.stage-1/deep", dir);
	assert_int_equal(ml_fs_mkdirs(p, 0755), 0);
	pf(p, "%s/.x.stage-2", dir);
	put(p, "file");
	pf(p, "%s/.x.stag", dir);
	put(p, "too short to match");
	pf(p, "%s/x.stage-3", dir);
	put(p, "no dot");
	assert_int_equal(ml_fs_rm_prefixed(dir, ".x.stage-"), 2);
	assert_int_equal(entries(dir), 2);
	pf(p, "%s/.x.stag", dir);
	assert_true(exists(p));
	pf(p, "%s/x.stage-3", dir);
	assert_true(exists(p));
	/* "." and ".." never match, even a prefix of "." */
	assert_int_equal(ml_fs_rm_prefixed(dir, "."), 1);
	assert_true(is_dir(dir));
	assert_true(is_dir(f->tmp));
	pf(p, "%s/x.stage-3", dir);
	assert_true(exists(p));
	pf(p, "%s/missing", f->tmp);
	assert_int_equal(ml_fs_rm_prefixed(p, "x"), 0);
}

/* --- writes -------------------------------------------------------------------- */

static void test_write_atomic_replaces_contents_and_leaves_no_temp(void **state)
{
	fx *f = *state;
	char dir[4096], p[4096];
	pf(dir, "%s/w", f->tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	pf(p, "%s/file", dir);
	assert_int_equal(ml_fs_write_atomic(p, "first", 5, 0644), 0);
	assert_contents(p, "first");
	assert_int_equal(ml_fs_write_atomic(p, "second, longer", 14, 0600), 0);
	assert_contents(p, "second, longer");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
#ifndef _WIN32 /* Windows keeps no POSIX mode, only read-only or not */
	assert_int_equal(st.st_mode & 0777, 0600);
#endif
	assert_int_equal(entries(dir), 1);
	/* the same without fsync */
	assert_int_equal(ml_fs_write_atomic_nosync(p, "third", 5, 0644), 0);
	assert_contents(p, "third");
	assert_int_not_equal(inode_of(p), st.st_ino); /* a new file, renamed in */
	assert_int_equal(entries(dir), 1);
}

static void test_write_atomic_replaces_a_symlink_not_its_target(void **state)
{
	ML_LINUX_ONLY(NO_SYMLINKS);
	fx *f = *state;
	char target[4096], p[4096];
	pf(target, "%s/target", f->tmp);
	put(target, "untouched");
	pf(p, "%s/link", f->tmp);
	assert_int_equal(symlink(target, p), 0);
	assert_int_equal(ml_fs_write_atomic(p, "new", 3, 0644), 0);
	assert_contents(target, "untouched");
	assert_contents(p, "new");
}

static int write_into_read_only_dir(const char *dir)
{
	char ro[4096], p[4096];
	pf(ro, "%s/ro", dir);
	if (mkdir(ro, 0755) != 0)
		return 1;
	pf(p, "%s/file", ro);
	if (ml_fs_write_atomic(p, "old", 3, 0644) != 0)
		return 2;
	chmod(ro, 0555);
	int rc = ml_fs_write_atomic(p, "new contents", 12, 0644);
	chmod(ro, 0755);
	if (rc != -EACCES)
		return 3;
	char *got = slurp(p, NULL);
	bool same = got && strcmp(got, "old") == 0;
	free(got);
	if (!same)
		return 4;
	return entries(ro) == 1 ? 0 : 5;
}

static void test_write_atomic_failure_leaves_old_file_and_no_temp(void **state)
{
	fx *f = *state;
	char dir[4096];
	shared_dir(dir, f, "w-ro");
	assert_int_equal(unprivileged(write_into_read_only_dir, dir), 0);
}

/* In a child limited to files of 4 bytes: the write of the temporary
 * file fails half way. */
static int write_past_the_size_limit(const char *path)
{
#ifdef _WIN32
	(void)path;
	return 77; /* no RLIMIT_FSIZE */
#else
	struct rlimit rl = {4, 4};
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 77;
	return -ml_fs_write_atomic(path, "far more than four bytes", 24, 0644);
#endif
}

static void test_write_atomic_removes_a_temp_it_could_not_finish(void **state)
{
	fx *f = *state;
	char dir[4096], p[4096];
	pf(dir, "%s/w-big", f->tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	pf(p, "%s/file", dir);
	assert_int_equal(ml_fs_write_atomic(p, "old", 3, 0644), 0);
	assert_int_equal(in_child(write_past_the_size_limit, p, false), EFBIG);
	assert_contents(p, "old");
	assert_int_equal(entries(dir), 1);
}

static void test_write_file_excl_refuses_an_existing_file(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/excl", f->tmp);
	assert_int_equal(ml_fs_write_file(p, "a", 1, 0644, true, true), 0);
	assert_int_equal(ml_fs_write_file(p, "b", 1, 0644, true, false), -EEXIST);
	assert_int_equal(ml_fs_write_file(p, "cc", 2, 0644, false, false), 0);
	assert_contents(p, "cc");
}

/* --- link or copy -------------------------------------------------------------- */

static void test_link_or_copy_links_on_one_file_system(void **state)
{
	fx *f = *state;
	char dir[4096], src[4096], dst[4096];
	pf(dir, "%s/l", f->tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	pf(src, "%s/src", dir);
	put(src, "payload");
	pf(dst, "%s/dst", dir);
	put(dst, "old");
	bool linked = false;
	assert_int_equal(ml_fs_link_or_copy(src, dst, &linked), 0);
	assert_true(linked);
	assert_int_equal(inode_of(src), inode_of(dst));
	assert_contents(dst, "payload");
	/* the second call finds dst already is src: nothing to do */
	linked = false;
	assert_int_equal(ml_fs_link_or_copy(src, dst, &linked), 0);
	assert_true(linked);
	assert_int_equal(inode_of(src), inode_of(dst));
	assert_int_equal(entries(dir), 2);
}

static void test_link_or_copy_copies_across_file_systems(void **state)
{
	ML_LINUX_ONLY("copies to /dev/shm, a second file system");
	fx *f = *state;
	struct stat a, b;
	if (stat("/dev/shm", &a) != 0 || stat(f->tmp, &b) != 0 || a.st_dev == b.st_dev ||
	    access("/dev/shm", W_OK) != 0)
		skip(); /* no second file system to copy across */
	char *other = malloc(4096);
	snprintf(other, 4096, "/dev/shm/mlsetup-core-XXXXXX");
	assert_non_null(mkdtemp(other));
	char src[4096], dst[4096];
	pf(src, "%s/src", f->tmp);
	put(src, "across");
	pf(dst, "%s/dst", other);
	bool linked = true;
	int rc = ml_fs_link_or_copy(src, dst, &linked);
	char *got = slurp(dst, NULL);
	int n = entries(other);
	rm_rf(other);
	free(other);
	assert_int_equal(rc, 0);
	assert_false(linked);
	assert_non_null(got);
	assert_string_equal(got, "across");
	free(got);
	assert_int_equal(n, 1);
}

static void test_link_or_copy_failure_leaves_dst_whole(void **state)
{
	fx *f = *state;
	char dir[4096], src[4096], dst[4096];
	pf(dir, "%s/lf", f->tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	/* a directory: stat works, link and reading it fail */
	pf(src, "%s/src-dir", dir);
	assert_int_equal(mkdir(src, 0755), 0);
	pf(dst, "%s/dst", dir);
	put(dst, "old");
	assert_true(ml_fs_link_or_copy(src, dst, NULL) < 0);
	assert_contents(dst, "old");
	assert_int_equal(entries(dir), 2);
	pf(src, "%s/missing", dir);
	assert_int_equal(ml_fs_link_or_copy(src, dst, NULL), -ENOENT);
}

static void test_copy_fd_copies_from_the_offset(void **state)
{
	fx *f = *state;
	char src[4096], dst[4096];
	pf(src, "%s/cs", f->tmp);
	put(src, "0123456789");
	pf(dst, "%s/cd", f->tmp);
	int in = open(src, O_RDONLY);
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(in >= 0 && out >= 0);
	assert_int_equal(lseek(in, 4, SEEK_SET), 4);
	assert_int_equal(ml_fs_copy_fd(out, in), 0);
	close(in);
	close(out);
	assert_contents(dst, "456789");
}

/* --- locks --------------------------------------------------------------------- */

static void test_lock_excludes_a_second_holder_until_unlocked(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/x.lock", f->tmp);
	int a = -1, b = -1;
	assert_int_equal(ml_fs_lock(&a, p, false), 0);
	assert_true(a >= 0);
	assert_int_equal(ml_fs_lock(&b, p, false), -EWOULDBLOCK);
	assert_int_equal(ml_fs_lock_shared(&b, p, false), -EWOULDBLOCK);
	ml_fs_unlock(a);
	assert_int_equal(ml_fs_lock(&b, p, false), 0);
	ml_fs_unlock(b);
	ml_fs_unlock(-1);
}

static void test_shared_locks_coexist_and_exclude_an_exclusive_one(void **state)
{
	fx *f = *state;
	char p[4096];
	pf(p, "%s/s.lock", f->tmp);
	int a = -1, b = -1, c = -1;
	assert_int_equal(ml_fs_lock_shared(&a, p, false), 0);
	assert_int_equal(ml_fs_lock_shared(&b, p, true), 0);
	assert_int_equal(ml_fs_lock(&c, p, false), -EWOULDBLOCK);
	ml_fs_unlock(a);
	assert_int_equal(ml_fs_lock(&c, p, false), -EWOULDBLOCK);
	ml_fs_unlock(b);
	assert_int_equal(ml_fs_lock(&c, p, false), 0);
	ml_fs_unlock(c);
}

static void test_lock_refuses_a_symlink(void **state)
{
	ML_LINUX_ONLY(NO_SYMLINKS);
	fx *f = *state;
	char target[4096], p[4096];
	pf(target, "%s/lock-target", f->tmp);
	pf(p, "%s/lock-link", f->tmp);
	assert_int_equal(symlink(target, p), 0);
	int fd = -1;
	assert_int_equal(ml_fs_lock(&fd, p, false), -ELOOP);
	assert_false(exists(target));
}

/* --- paths --------------------------------------------------------------------- */

static void test_split_path_cases(void **state)
{
	(void)state;
	static const struct {
		const char *path, *dir, *base;
	} ok[] = {
	        {"/a/b", "/a", "b"},
	        {"/x", "/", "x"},
	        {"b", ".", "b"},
	        {"a/b/c", "a/b", "c"},
	        {"/a/b.tar.gz", "/a", "b.tar.gz"},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char dir[64];
		const char *base = NULL;
		assert_int_equal(ml_fs_split_path(dir, sizeof dir, &base, ok[i].path), 0);
		assert_string_equal(dir, ok[i].dir);
		assert_string_equal(base, ok[i].base);
	}
	char dir[8];
	const char *base = NULL;
	assert_int_equal(ml_fs_split_path(dir, sizeof dir, &base, ""), ML_EFAIL);
	assert_int_equal(ml_fs_split_path(dir, sizeof dir, &base, "/a/"), ML_EFAIL);
	assert_int_equal(ml_fs_split_path(dir, sizeof dir, &base, "/a-long-dir/x"), ML_EFAIL);
	assert_int_equal(ml_fs_split_path(dir, 1, &base, "x"), ML_EFAIL);
}

static void test_pathf_reports_overflow(void **state)
{
	(void)state;
	char p[8];
	assert_int_equal(ml_pathf(p, sizeof p, "%s/%s", "ab", "cd"), 0);
	assert_string_equal(p, "ab/cd");
	assert_int_equal(ml_pathf(p, sizeof p, "%s/%s", "abcd", "efg"), ML_EFAIL);
	assert_int_equal(ml_pathf(p, sizeof p, "%s", "1234567"), 0);
	assert_int_equal(ml_pathf(p, sizeof p, "%s", "12345678"), ML_EFAIL);
}

static void test_random_hex_is_lower_hex_of_the_asked_length(void **state)
{
	(void)state;
	char a[33], b[33];
	ml_random_hex(a, 16);
	ml_random_hex(b, 16);
	assert_int_equal(strlen(a), 32);
	assert_int_equal(strspn(a, "0123456789abcdef"), 32);
	assert_string_not_equal(a, b);
	ml_random_hex(a, 3);
	assert_int_equal(strlen(a), 6);
}

/* --- digests ------------------------------------------------------------------- */

static void test_sha256_known_vectors(void **state)
{
	(void)state;
	char hex[65];
	assert_int_equal(ml_sha256_hex_buf(hex, "", 0), 0);
	assert_string_equal(hex, SHA256_EMPTY);
	assert_int_equal(ml_sha256_hex_buf(hex, "abc", 3), 0);
	assert_string_equal(hex, SHA256_ABC);
	uint8_t d[32];
	assert_int_equal(ml_sha256_buf(d, "abc", 3), 0);
	assert_int_equal(d[0], 0xba);
	assert_int_equal(d[31], 0xad);
}

static void test_sha256_stream_equals_one_shot(void **state)
{
	(void)state;
	uint8_t data[10000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 131 + 7);
	uint8_t whole[32], parts[32];
	assert_int_equal(ml_sha256_buf(whole, data, sizeof data), 0);
	ml_sha256 *h = ml_sha256_new();
	assert_non_null(h);
	static const size_t cuts[] = {0, 1, 63, 64, 65, 4096, 9999, 10000};
	size_t at = 0;
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		assert_int_equal(ml_sha256_update(h, data + at, cuts[i] - at), 0);
		at = cuts[i];
	}
	assert_int_equal(ml_sha256_final(h, parts), 0);
	assert_memory_equal(whole, parts, 32);
	/* final resets: the next digest starts from nothing */
	assert_int_equal(ml_sha256_update(h, "abc", 3), 0);
	assert_int_equal(ml_sha256_final(h, parts), 0);
	char hex[65];
	ml_hex_encode(hex, parts, 32);
	assert_string_equal(hex, SHA256_ABC);
	ml_sha256_free(h);
	ml_sha256_free(NULL);
}

static void test_sha256_reset_forgets_what_was_added(void **state)
{
	(void)state;
	ml_sha256 *h = ml_sha256_new();
	assert_non_null(h);
	assert_int_equal(ml_sha256_update(h, "partial download", 16), 0);
	assert_int_equal(ml_sha256_reset(h), 0);
	uint8_t d[32];
	assert_int_equal(ml_sha256_final(h, d), 0);
	char hex[65];
	ml_hex_encode(hex, d, 32);
	assert_string_equal(hex, SHA256_EMPTY);
	ml_sha256_free(h);
}

static void test_sha256_file_hashes_a_file_and_sizes_it(void **state)
{
	fx *f = *state;
	char p[4096], hex[65];
	pf(p, "%s/abc", f->tmp);
	put(p, "abc");
	uint64_t size = 0;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_sha256_file(hex, &size, p, &err), 0);
	assert_string_equal(hex, SHA256_ABC);
	assert_int_equal(size, 3);
	pf(p, "%s/empty", f->tmp);
	put(p, "");
	assert_int_equal(ml_sha256_file(hex, NULL, p, &err), 0);
	assert_string_equal(hex, SHA256_EMPTY);
	pf(p, "%s/missing", f->tmp);
	assert_int_equal(ml_sha256_file(hex, NULL, p, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "missing"));
	/* an open descriptor, from its offset; it stays open */
	pf(p, "%s/xabc", f->tmp);
	put(p, "xabc");
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 1, SEEK_SET), 1);
	assert_int_equal(ml_sha256_fd(hex, &size, fd, p, &err), 0);
	assert_string_equal(hex, SHA256_ABC);
	assert_int_equal(size, 3);
	assert_int_equal(close(fd), 0);
}

static void test_digest_file_other_digests_and_an_open_descriptor(void **state)
{
	fx *f = *state;
	char p[4096], hex[129];
	pf(p, "%s/abc2", f->tmp);
	put(p, "xxabc");
	uint8_t d[64];
	unsigned len = 0;
	uint64_t size = 0;
	ml_err err = ML_ERR_INIT;
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 2, SEEK_SET), 2); /* from the current offset */
	assert_int_equal(ml_digest_file(d, &len, &size, fd, p, "sha384", &err), 0);
	close(fd);
	assert_int_equal(len, 48);
	assert_int_equal(size, 3);
	ml_hex_encode(hex, d, len);
	assert_string_equal(hex, SHA384_ABC);
	pf(p, "%s/abc3", f->tmp);
	put(p, "abc");
	assert_int_equal(ml_digest_file(d, &len, NULL, -1, p, "sha512", &err), 0);
	assert_int_equal(len, 64);
	ml_hex_encode(hex, d, len);
	assert_string_equal(hex, SHA512_ABC);
	assert_int_equal(ml_digest_file(d, &len, NULL, -1, p, "no-such-digest", &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "no-such-digest"));
}

static void test_is_sha256_hex_edge_cases(void **state)
{
	(void)state;
	char s[80];
	assert_true(ml_is_sha256_hex(SHA256_ABC));
	assert_false(ml_is_sha256_hex(NULL));
	assert_false(ml_is_sha256_hex(""));
	memcpy(s, SHA256_ABC, 63);
	s[63] = '\0';
	assert_false(ml_is_sha256_hex(s)); /* 63 digits */
	sf(s, sizeof s, "%s0", SHA256_ABC);
	assert_false(ml_is_sha256_hex(s)); /* 65 digits */
	sf(s, sizeof s, "%s", SHA256_ABC);
	s[10] = 'A';
	assert_false(ml_is_sha256_hex(s)); /* upper case */
	s[10] = 'g';
	assert_false(ml_is_sha256_hex(s));
	s[10] = '/';
	assert_false(ml_is_sha256_hex(s));
}

static void test_sha256_hex_normalize_lowers_and_checks(void **state)
{
	(void)state;
	char up[80], out[65] = "untouched";
	sf(up, sizeof up, "%s", SHA256_ABC);
	for (char *p = up; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	assert_int_equal(ml_sha256_hex_normalize(out, up), 0);
	assert_string_equal(out, SHA256_ABC);
	assert_int_equal(ml_sha256_hex_normalize(out, SHA256_EMPTY), 0);
	assert_string_equal(out, SHA256_EMPTY);
	sf(out, sizeof out, "untouched");
	up[5] = 'G';
	assert_int_equal(ml_sha256_hex_normalize(out, up), ML_EFAIL);
	assert_int_equal(ml_sha256_hex_normalize(out, "abc"), ML_EFAIL);
	assert_int_equal(ml_sha256_hex_normalize(out, NULL), ML_EFAIL);
	assert_string_equal(out, "untouched");
}

static void test_hex_encode(void **state)
{
	(void)state;
	static const uint8_t d[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char hex[13];
	memset(hex, 'x', sizeof hex);
	ml_hex_encode(hex, d, sizeof d);
	assert_string_equal(hex, "00017f80abff");
	ml_hex_encode(hex, d, 0);
	assert_string_equal(hex, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_mkdirs_creates_nested_directories),
	        cmocka_unit_test(test_mkdirs_accepts_an_existing_directory),
	        cmocka_unit_test(test_mkdirs_refuses_an_existing_file),
	        cmocka_unit_test(test_rm_tree_removes_a_tree_and_accepts_a_missing_one),
	        cmocka_unit_test(test_rm_tree_never_follows_a_symlink),
	        cmocka_unit_test(test_rm_tree_removes_a_read_only_tree),
	        cmocka_unit_test(test_rm_prefixed_removes_only_matching_entries),
	        cmocka_unit_test(test_write_atomic_replaces_contents_and_leaves_no_temp),
	        cmocka_unit_test(test_write_atomic_replaces_a_symlink_not_its_target),
	        cmocka_unit_test(test_write_atomic_failure_leaves_old_file_and_no_temp),
	        cmocka_unit_test(test_write_atomic_removes_a_temp_it_could_not_finish),
	        cmocka_unit_test(test_write_file_excl_refuses_an_existing_file),
	        cmocka_unit_test(test_link_or_copy_links_on_one_file_system),
	        cmocka_unit_test(test_link_or_copy_copies_across_file_systems),
	        cmocka_unit_test(test_link_or_copy_failure_leaves_dst_whole),
	        cmocka_unit_test(test_copy_fd_copies_from_the_offset),
	        cmocka_unit_test(test_lock_excludes_a_second_holder_until_unlocked),
	        cmocka_unit_test(test_shared_locks_coexist_and_exclude_an_exclusive_one),
	        cmocka_unit_test(test_lock_refuses_a_symlink),
	        cmocka_unit_test(test_split_path_cases),
	        cmocka_unit_test(test_pathf_reports_overflow),
	        cmocka_unit_test(test_random_hex_is_lower_hex_of_the_asked_length),
	        cmocka_unit_test(test_sha256_known_vectors),
	        cmocka_unit_test(test_sha256_stream_equals_one_shot),
	        cmocka_unit_test(test_sha256_reset_forgets_what_was_added),
	        cmocka_unit_test(test_sha256_file_hashes_a_file_and_sizes_it),
	        cmocka_unit_test(test_digest_file_other_digests_and_an_open_descriptor),
	        cmocka_unit_test(test_is_sha256_hex_edge_cases),
	        cmocka_unit_test(test_sha256_hex_normalize_lowers_and_checks),
	        cmocka_unit_test(test_hex_encode),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
