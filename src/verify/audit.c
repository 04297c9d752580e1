/*
 * audit.c - `mlsetup audit`'s stage: which CUDA code do these libraries,
 * wheels or environments carry, and does it run on these GPUs?
 *
 * Paths are turned into bytes (a library mapped read-only; each library
 * member of a wheel read into memory through libarchive's zip reader, one at
 * a time, never extracted; directory trees walked once per directory and
 * file), the bytes into fatbin lists (fatbin.c), and the lists into answers
 * by ml_arch_runs_on(), the one "will it run?" rule (plan.h). A file that
 * cannot be read or holds a malformed fatbin is recorded and the audit goes
 * on; ml_audit_status() turns the whole into one outcome. A torch wheel's
 * build (ml_torch_build_from_wheel) is what an audit of that one wheel
 * finds; torchbuild.c derives it from the members the audit hands over.
 */
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>

#define DEFAULT_MEMBER_CAP (2ull << 30) /* 2 GiB */
#define MAX_DEPTH          64           /* directory levels walked */

/* --- (device, inode) set: each directory and file is read once ------------ */

typedef struct seen_set {
	uint64_t *keys; /* pairs (dev, ino); ino 0 marks a free slot */
	size_t cap;     /* slots, a power of two */
	size_t n;
} seen_set;

static size_t seen_hash(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t h = (dev * 0x9E3779B97F4A7C15ull) ^ (ino * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static bool seen_find(const seen_set *s, uint64_t dev, uint64_t ino, size_t *slot)
{
	size_t i = seen_hash(dev, ino, s->cap);
	while (s->keys[2 * i + 1] != 0) {
		if (s->keys[2 * i] == dev && s->keys[2 * i + 1] == ino)
			return true;
		i = (i + 1) & (s->cap - 1);
	}
	*slot = i;
	return false;
}

/* Adds (dev, ino); sets *added to false when it was already there.
 * Returns 0 or ML_ENOMEM. */
static int seen_add(seen_set *s, const struct stat *st, bool *added)
{
	uint64_t dev = (uint64_t)st->st_dev, ino = (uint64_t)st->st_ino + 1; /* never 0 */
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *keys = calloc(cap * 2, sizeof *keys);
		if (!keys)
			return ML_ENOMEM;
		seen_set grown = {keys, cap, 0};
		for (size_t i = 0; i < s->cap; i++) {
			size_t slot;
			if (s->keys[2 * i + 1] != 0 &&
			    !seen_find(&grown, s->keys[2 * i], s->keys[2 * i + 1], &slot)) {
				keys[2 * slot] = s->keys[2 * i];
				keys[2 * slot + 1] = s->keys[2 * i + 1];
				grown.n++;
			}
		}
		free(s->keys);
		*s = grown;
	}
	size_t slot;
	*added = !seen_find(s, dev, ino, &slot);
	if (*added) {
		s->keys[2 * slot] = dev;
		s->keys[2 * slot + 1] = ino;
		s->n++;
	}
	return 0;
}

/* --- building the result ---------------------------------------------------- */

typedef struct audit_run {
	ml_audit *a;
	const ml_audit_opts *opts;
	uint64_t member_cap;
	seen_set seen;
	char *root; /* real path of the directory being walked */
	ml_err *err;
} audit_run;

static void file_release(ml_audit_file *f)
{
	free(f->path);
	ml_fatbin_list_release(&f->code);
	free(f->answers);
}

/* Moves *f into the result (or releases it when it is not to be kept).
 * Returns 0 or ML_ENOMEM. */
static int keep_file(audit_run *r, ml_audit_file *f)
{
	ml_audit *a = r->a;
	if (!f->has_code && !f->error && !r->opts->all) {
		file_release(f);
		return 0;
	}
	ml_audit_file *grown = realloc(a->files, (a->n_files + 1) * sizeof *grown);
	if (!grown) {
		file_release(f);
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	}
	a->files = grown;
	a->files[a->n_files++] = *f;
	if (f->error)
		a->n_errors++;
	return 0;
}

/* Records a path that could not be audited. Returns 0 or ML_ENOMEM. */
static int record_error(audit_run *r, const char *path, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int record_error(audit_run *r, const char *path, int code, const char *fmt, ...)
{
	ml_audit_file f = {.code = ML_FATBIN_LIST_INIT, .error = code};
	f.path = strdup(path);
	if (!f.path)
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f.error_msg, sizeof f.error_msg, fmt, ap);
	va_end(ap);
	return keep_file(r, &f);
}

const char *ml_audit_state_name(ml_audit_state s)
{
	switch (s) {
	case ML_AUDIT_RUNS:
		return "runs";
	case ML_AUDIT_FAILS:
		return "fails";
	case ML_AUDIT_UNVERIFIED:
		return "unverified";
	case ML_AUDIT_NOT_FOR_GPU:
		return "not_for_this_gpu";
	}
	return "?";
}

/* One device's answer for a file whose counted code is code[0..n): the
 * rules of ml_audit_state, in that order. */
static void answer_device(const ml_audit *a, const ml_audit_file *f, const ml_cuda_arch *code,
                          size_t n, const ml_cuda_arch *dev, ml_audit_answer *ans)
{
	ml_arch_query q = ML_ARCH_QUERY_INIT;
	q.dev_major = dev->major;
	q.dev_minor = dev->minor;
	q.driver_cuda = a->driver_cuda;
	ml_arch_verdict v;
	ans->runs = ml_arch_judge(&v, code, n, &q);
	ans->state = ans->runs ? ML_AUDIT_RUNS : ML_AUDIT_FAILS;
	ans->has_by = ans->runs;
	ans->by = v.by;
	ans->conditional = v.conditional;
	snprintf(ans->why, sizeof ans->why, "%s", v.why);
	const ml_cuda_library *lib = ans->runs ? NULL : ml_cuda_library_find(f->path);
	if (lib && (dev->major < lib->min_major ||
	            (dev->major == lib->min_major && dev->minor < lib->min_minor))) {
		ans->state = ML_AUDIT_NOT_FOR_GPU;
		if (snprintf(ans->why, sizeof ans->why,
		             "not for this GPU: %s supports compute capability %d.%d and newer, "
		             "and torch uses it only for %s (%s)",
		             lib->name, lib->min_major, lib->min_minor, lib->torch_uses, v.why) < 0)
			ans->why[0] = '\0';
	}
}

/* Answers every device for one file's code: what counts is its SASS and
 * PTX architectures that hold kernels (ml_audit_state). Without any, the
 * file is unverified. Returns 0 or ML_ENOMEM. */
static int answer(audit_run *r, ml_audit_file *f)
{
	const ml_audit *a = r->a;
	const ml_fatbin_list *c = &f->code;
	size_t n = c->n_with_kernels + c->n_ptx_with_entries;
	ml_cuda_arch *code = malloc((n ? n : 1) * sizeof *code);
	f->answers = calloc(a->n_devices ? a->n_devices : 1, sizeof *f->answers);
	if (!code || !f->answers) {
		free(code);
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < c->n_with_kernels; i++)
		code[k++] = c->with_kernels[i];
	for (size_t i = 0; i < c->n_ptx_with_entries; i++)
		code[k++] = c->ptx_with_entries[i];
	f->unverified = n == 0;
	bool counted_any = c->n_sass + c->n_ptx + c->n_embedded_sass + c->n_embedded_ptx > 0;
	for (size_t d = 0; d < a->n_devices; d++) {
		ml_audit_answer *ans = &f->answers[d];
		if (!f->unverified) {
			answer_device(a, f, code, n, &a->devices[d], ans);
			continue;
		}
		ans->runs = false;
		ans->state = ML_AUDIT_UNVERIFIED;
		snprintf(ans->why, sizeof ans->why, "%s",
		         counted_any
		                 ? ML_AUDIT_NO_KERNELS_WHY
		                 : "only relocatable device code (__nv_relfatbin), never loaded "
		                   "at run time");
	}
	free(code);
	return 0;
}

/* Scans one library's bytes and records the result under path. */
static int audit_bytes(audit_run *r, const char *path, const unsigned char *buf, size_t len)
{
	ml_audit_file f = {.code = ML_FATBIN_LIST_INIT};
	f.path = strdup(path);
	if (!f.path)
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	r->a->n_scanned++;
	ml_err e = ML_ERR_INIT;
	int rc = ml_fatbin_scan_image(&f.code, buf, len, &e);
	if (rc == ML_ENOMEM) {
		file_release(&f);
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	}
	if (rc) {
		f.error = rc;
		if (snprintf(f.error_msg, sizeof f.error_msg, "malformed CUDA fatbin: %s", e.msg) <
		    0)
			f.error_msg[0] = '\0'; /* longer messages are cut */
	}
	f.has_code = f.code.n_entries > 0;
	if (f.has_code) {
		r->a->n_with_code++;
		if ((rc = answer(r, &f)) != 0) {
			file_release(&f);
			return rc;
		}
		if (f.unverified)
			r->a->n_unverified++;
	}
	return keep_file(r, &f);
}

/* --- wheels ------------------------------------------------------------------- */

static bool ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	if (m > n)
		return false;
	for (size_t i = 0; i < m; i++)
		if (tolower((unsigned char)s[n - m + i]) != tolower((unsigned char)suffix[i]))
			return false;
	return true;
}

bool ml_audit_is_library_name(const char *name)
{
	if (!name)
		return false;
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	if (ends_with_ci(base, ".dll") || ends_with_ci(base, ".pyd"))
		return true;
	size_t n = strlen(base);
	if (n > 3 && strcmp(base + n - 3, ".so") == 0)
		return true;
	/* "*.so.N[.N...]": find a ".so." followed only by digits and dots. */
	for (const char *p = strstr(base, ".so."); p; p = strstr(p + 1, ".so.")) {
		const char *v = p + 4;
		bool ok = isdigit((unsigned char)*v);
		for (; ok && *v; v++)
			ok = isdigit((unsigned char)*v) || (*v == '.' && v[1] != '\0');
		if (ok && p > base)
			return true;
	}
	return false;
}

/* Reads the current member (at most cap bytes) into a new buffer; size is
 * what the archive declares (-1 unknown). One spare byte past the declared
 * size shows whether the member really ends there. */
static int read_member(unsigned char **out, size_t *out_len, struct archive *ar, int64_t size,
                       uint64_t cap, char *msg, size_t msgsz)
{
	size_t alloc = (size > 0 ? (size_t)size : (size_t)1 << 16) + 1, len = 0;
	unsigned char *buf = malloc(alloc);
	if (!buf)
		return ML_ENOMEM;
	for (;;) {
		if (len == alloc) {
			if (len > cap)
				break;
			size_t grow = alloc > (cap + 1) / 2 ? (size_t)cap + 1 : alloc * 2;
			unsigned char *g = realloc(buf, grow);
			if (!g) {
				free(buf);
				return ML_ENOMEM;
			}
			buf = g;
			alloc = grow;
		}
		la_ssize_t got = archive_read_data(ar, buf + len, alloc - len);
		if (got < 0) {
			snprintf(msg, msgsz, "cannot read member: %s", archive_error_string(ar));
			free(buf);
			return ML_EPARSE;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	if (len > cap) {
		free(buf);
		snprintf(msg, msgsz, "member is larger than the %llu MiB cap, not read",
		         (unsigned long long)(cap >> 20));
		return ML_EFAIL;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

/* Keeps the current member, a small metadata file, NUL-terminated in
 * *slot; one that cannot be read or is too large is left out (the wheel
 * is then not recognised as torch's by it). Returns 0 or ML_ENOMEM. */
static int keep_meta(audit_run *r, char **slot, struct archive *ar, struct archive_entry *ent)
{
	int64_t size = archive_entry_size_is_set(ent) ? archive_entry_size(ent) : -1;
	if (size > (int64_t)ML_WHEEL_META_MAX)
		return 0;
	unsigned char *buf = NULL;
	size_t len = 0;
	char msg[400];
	int rc = read_member(&buf, &len, ar, size, ML_WHEEL_META_MAX, msg, sizeof msg);
	if (rc == ML_ENOMEM)
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	if (rc)
		return 0;
	char *text = realloc(buf, len + 1);
	if (!text) {
		free(buf);
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	}
	text[len] = '\0';
	if (strlen(text) != len) { /* a NUL inside: not a text file */
		free(text);
		return 0;
	}
	*slot = text;
	return 0;
}

static int audit_wheel(audit_run *r, const char *path)
{
	struct archive *ar = archive_read_new();
	if (!ar)
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	archive_read_support_format_zip(ar);
	int rc = 0;
	ml_wheel_meta meta = {NULL, NULL, NULL};
	size_t first_file = r->a->n_files;
	if (archive_read_open_filename(ar, path, 1 << 16) != ARCHIVE_OK) {
		rc = record_error(r, path, ML_EPARSE, "cannot read wheel: %s",
		                  archive_error_string(ar));
		goto out;
	}
	struct archive_entry *ent;
	int ar_rc;
	while ((ar_rc = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ent);
		if (!name || archive_entry_filetype(ent) != AE_IFREG)
			continue;
		char **slot = ml_wheel_meta_slot(&meta, name);
		if (slot && !*slot) { /* torch/version.py, torch's METADATA and WHEEL */
			if ((rc = keep_meta(r, slot, ar, ent)) != 0)
				goto out;
			continue;
		}
		if (!ml_audit_is_library_name(name))
			continue;
		char *shown = ml_asprintf("%s!%s", path, name);
		if (!shown) {
			rc = ml_err_set(r->err, ML_ENOMEM, "out of memory");
			goto out;
		}
		int64_t size = archive_entry_size_is_set(ent) ? archive_entry_size(ent) : -1;
		unsigned char *buf = NULL;
		size_t len = 0;
		char msg[400] = "";
		int mrc;
		if (size > 0 && (uint64_t)size > r->member_cap) {
			snprintf(msg, sizeof msg,
			         "member is larger than the %llu MiB cap, not read",
			         (unsigned long long)(r->member_cap >> 20));
			mrc = ML_EFAIL;
		} else {
			mrc = read_member(&buf, &len, ar, size, r->member_cap, msg, sizeof msg);
		}
		if (mrc == ML_ENOMEM)
			rc = ml_err_set(r->err, ML_ENOMEM, "out of memory");
		else if (mrc)
			rc = record_error(r, shown, mrc, "%s", msg);
		else
			rc = audit_bytes(r, shown, buf, len);
		free(buf);
		free(shown);
		if (rc)
			goto out;
		if (mrc == ML_EPARSE)
			break; /* the archive's stream is broken; stop reading it */
	}
	if (ar_rc != ARCHIVE_EOF && ar_rc != ARCHIVE_OK)
		rc = record_error(r, path, ML_EPARSE, "cannot read wheel: %s",
		                  archive_error_string(ar));
	else if (!rc)
		rc = ml_torch_wheel_add(r->a, path, &meta, first_file, r->err);
out:
	ml_wheel_meta_release(&meta);
	archive_read_free(ar);
	return rc;
}

/* --- files and directories ------------------------------------------------------ */

/* Audits one regular file, already opened as fd (closed here). */
static int audit_fd(audit_run *r, const char *path, int fd, const struct stat *st)
{
	if ((uint64_t)st->st_size > SIZE_MAX) {
		close(fd);
		return record_error(r, path, ML_EIO, "cannot map '%s': too large", path);
	}
	size_t len = (size_t)st->st_size;
	const unsigned char *buf = NULL;
	if (len > 0) {
		void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			return record_error(r, path, ML_EIO, "cannot map '%s': %s", path,
			                    strerror(e));
		}
		buf = m;
	}
	close(fd);
	bool zip = ends_with_ci(path, ".whl") || (len >= 4 && (memcmp(buf, "PK\003\004", 4) == 0 ||
	                                                       memcmp(buf, "PK\005\006", 4) == 0));
	int rc = zip ? 0 : audit_bytes(r, path, buf, len);
	if (len > 0)
		munmap((void *)buf, len);
	if (zip)
		rc = audit_wheel(r, path);
	return rc;
}

static int audit_file(audit_run *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return record_error(r, path, e == ENOENT ? ML_ENOENT : ML_EIO,
		                    "cannot open '%s': %s", path, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return record_error(r, path, ML_EIO, "cannot stat '%s': %s", path, strerror(e));
	}
	return audit_fd(r, path, fd, &st);
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int walk(audit_run *r, const char *dir, int depth);

/* Is the real path of a linked directory inside the walk's root? */
static bool inside_root(const audit_run *r, const char *path)
{
	char *real = realpath(path, NULL);
	size_t n = r->root ? strlen(r->root) : 0;
	bool in = real && r->root &&
	          (strcmp(r->root, "/") == 0 ||
	           (strncmp(real, r->root, n) == 0 && (real[n] == '/' || real[n] == '\0')));
	free(real);
	return in;
}

/* Audits one directory entry of a walk (is_link: the entry itself is a
 * symbolic link). */
static int walk_entry(audit_run *r, const char *path, const char *name, bool is_link, int depth)
{
	struct stat st;
	bool lib = ml_audit_is_library_name(name), whl = ends_with_ci(name, ".whl");
	if (stat(path, &st) != 0) {
		if (!lib && !whl)
			return 0; /* a dangling link or a race we have no interest in */
		int e = errno;
		return record_error(r, path, e == ENOENT ? ML_ENOENT : ML_EIO,
		                    "cannot open '%s': %s", path, strerror(e));
	}
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && (lib || whl)))
		return 0;
	/* A link may name a library anywhere (the environment loads it), but
	 * a directory outside the tree (a link to / or $HOME) is not walked. */
	if (is_link && S_ISDIR(st.st_mode) && !inside_root(r, path))
		return 0;
	bool added;
	if (seen_add(&r->seen, &st, &added))
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	if (!added)
		return 0; /* a second link to something already read: loops end here */
	if (S_ISDIR(st.st_mode))
		return walk(r, path, depth + 1);
	return audit_file(r, path);
}

static int walk(audit_run *r, const char *dir, int depth)
{
	if (depth > MAX_DEPTH)
		return record_error(r, dir, ML_EFAIL,
		                    "directory '%s' is nested deeper than %d levels, not walked",
		                    dir, MAX_DEPTH);
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		return record_error(r, dir, ML_EIO, "cannot read directory '%s': %s", dir,
		                    strerror(e));
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **g = realloc(names, cap * sizeof *g);
			if (!g) {
				rc = ml_err_set(r->err, ML_ENOMEM, "out of memory");
				goto out;
			}
			names = g;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = ml_err_set(r->err, ML_ENOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof *names, cmp_names);
	size_t dl = strlen(dir);
	bool slash = dl > 0 && dir[dl - 1] == '/';
	/* Real files and directories first, then symbolic links, so that a
	 * library is named by its own path rather than by a link to it. */
	for (int links = 0; links < 2 && !rc; links++) {
		for (size_t i = 0; i < n && !rc; i++) {
			char *path = ml_asprintf("%s%s%s", dir, slash ? "" : "/", names[i]);
			if (!path) {
				rc = ml_err_set(r->err, ML_ENOMEM, "out of memory");
				break;
			}
			struct stat lst;
			bool is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
			if (is_link == (links == 1))
				rc = walk_entry(r, path, names[i], is_link, depth);
			free(path);
		}
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

static int audit_path(audit_run *r, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		int e = errno;
		return record_error(r, path, e == ENOENT ? ML_ENOENT : ML_EIO,
		                    "cannot open '%s': %s", path, strerror(e));
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return record_error(r, path, ML_EIO, "'%s' is not a regular file or directory",
		                    path);
	bool added;
	if (seen_add(&r->seen, &st, &added))
		return ml_err_set(r->err, ML_ENOMEM, "out of memory");
	if (!added)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return audit_file(r, path);
	free(r->root);
	if (!(r->root = realpath(path, NULL)))
		return record_error(r, path, ML_EIO, "cannot resolve '%s': %s", path,
		                    strerror(errno));
	return walk(r, path, 0);
}

/* --- the audit ------------------------------------------------------------------- */

/* Copies s into dst with control characters (from hostile file or member
 * names) replaced by '?', so that messages cannot drive a terminal. */
static const char *printable(char *dst, size_t sz, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < sz; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	dst[i] = '\0';
	return dst;
}

/* Is path one of torch's own libraries: ".../torch/lib/<file>" (a path or
 * a wheel member)? Their failures are named first: they are torch. */
static bool torch_own(const char *path)
{
	static const char dir[] = "torch/lib/";
	for (const char *p = strstr(path, dir); p; p = strstr(p + 1, dir))
		if ((p == path || p[-1] == '/' || p[-1] == '!') && !strchr(p + sizeof dir - 1, '/'))
			return true;
	return false;
}

/* The files failing on device d, in the order they are to be named:
 * torch's own libraries first, then the rest as met. Sets *n; returns a
 * new array of indexes into a->files (caller frees) or NULL when none
 * fails or out of memory (*n says which). */
static size_t *failing_files(const ml_audit *a, size_t d, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < a->n_files; i++)
		*n += a->files[i].has_code && a->files[i].answers[d].state == ML_AUDIT_FAILS;
	if (*n == 0)
		return NULL;
	size_t *idx = malloc(*n * sizeof *idx), k = 0;
	if (!idx)
		return NULL;
	for (int torch = 1; torch >= 0; torch--)
		for (size_t i = 0; i < a->n_files; i++) {
			const ml_audit_file *f = &a->files[i];
			if (f->has_code && f->answers[d].state == ML_AUDIT_FAILS &&
			    torch_own(f->path) == (torch == 1))
				idx[k++] = i;
		}
	return idx;
}

/* The first file to name for device d (torch's own first), or NULL. */
static const ml_audit_file *first_failing(const ml_audit *a, size_t d, size_t *bad)
{
	const ml_audit_file *first = NULL;
	*bad = 0;
	for (size_t i = 0; i < a->n_files; i++) {
		const ml_audit_file *f = &a->files[i];
		if (!f->has_code || f->answers[d].state != ML_AUDIT_FAILS)
			continue;
		if (!first || (torch_own(f->path) && !torch_own(first->path)))
			first = f;
		(*bad)++;
	}
	return first;
}

static void overall_answers(ml_audit *a)
{
	char shown[1024];
	for (size_t d = 0; d < a->n_devices; d++) {
		ml_audit_answer *o = &a->overall[d];
		char sm[32];
		if (ml_cuda_arch_format(sm, sizeof sm, &a->devices[d]))
			snprintf(sm, sizeof sm, "%d.%d", a->devices[d].major, a->devices[d].minor);
		size_t bad = 0, not_for = 0;
		const ml_audit_file *first = first_failing(a, d, &bad);
		for (size_t i = 0; i < a->n_files; i++)
			not_for += a->files[i].has_code &&
			           a->files[i].answers[d].state == ML_AUDIT_NOT_FOR_GPU;
		o->runs = bad == 0;
		o->state = o->runs ? ML_AUDIT_RUNS : ML_AUDIT_FAILS;
		size_t n = a->n_with_code, counted = n - a->n_unverified - not_for;
		char unv[160] = "";
		size_t ul = 0;
		if (a->n_unverified)
			ul = (size_t)snprintf(unv, sizeof unv, "; %zu unverified (%s)",
			                      a->n_unverified, ML_AUDIT_NO_KERNELS_WHY);
		if (not_for && ul < sizeof unv)
			snprintf(unv + ul, sizeof unv - ul, "; %zu not for this GPU", not_for);
		const char *libs = counted == 1 ? "library" : "libraries";
		int w;
		if (n == 0)
			w = snprintf(o->why, sizeof o->why, "no CUDA code found");
		else if (counted == 0)
			w = snprintf(o->why, sizeof o->why, "no library with visible kernels%s",
			             unv);
		else if (bad == 0)
			w = snprintf(o->why, sizeof o->why,
			             "%s %zu %s with CUDA code run%s on %s%s",
			             counted == 1 ? "the" : "all", counted, libs,
			             counted == 1 ? "s" : "", sm, unv);
		else
			w = snprintf(
			        o->why, sizeof o->why,
			        "%zu of %zu %s with CUDA code cannot run on %s%s; first: %s: %s",
			        bad, n, n == 1 ? "library" : "libraries", sm, unv,
			        printable(shown, sizeof shown, first->path), first->answers[d].why);
		if (w < 0)
			o->why[0] = '\0'; /* longer reasons are cut */
	}
}

int ml_audit_paths(ml_audit **out, const char *const *paths, size_t n_paths,
                   const ml_audit_opts *opts, ml_err *err)
{
	static const ml_audit_opts defaults = ML_AUDIT_OPTS_INIT;
	if (!opts)
		opts = &defaults;
	ml_audit *a = calloc(1, sizeof *a);
	uint64_t cap = opts->max_member_bytes ? opts->max_member_bytes : DEFAULT_MEMBER_CAP;
	if (cap > SIZE_MAX / 4)
		cap = SIZE_MAX / 4;
	audit_run r = {a, opts, cap, {NULL, 0, 0}, NULL, err};
	int rc = 0;
	if (!a)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	size_t nd = opts->n_devices;
	a->devices = calloc(nd ? nd : 1, sizeof *a->devices);
	a->overall = calloc(nd ? nd : 1, sizeof *a->overall);
	if (!a->devices || !a->overall) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	a->driver_cuda = opts->driver_cuda > 0 ? opts->driver_cuda : 0;
	if (opts->driver)
		ml_strlcpy(a->driver, opts->driver, sizeof a->driver);
	for (size_t i = 0; i < nd; i++) {
		ml_cuda_arch dev = {opts->devices[i].major, opts->devices[i].minor, 0, false, 0};
		bool dup = false;
		for (size_t k = 0; k < a->n_devices; k++)
			dup |= a->devices[k].major == dev.major && a->devices[k].minor == dev.minor;
		if (!dup)
			a->devices[a->n_devices++] = dev;
	}
	for (size_t i = 0; i < n_paths && !rc; i++)
		rc = audit_path(&r, paths[i]);
	if (!rc)
		rc = ml_torch_checks(a, err);
	if (!rc)
		overall_answers(a);
out:
	free(r.seen.keys);
	free(r.root);
	if (rc) {
		ml_audit_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

/* The last component of a path or of a wheel member name ("w.whl!a/b.so"). */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/'), *bang = strrchr(path, '!');
	const char *cut = bang && (!slash || bang > slash) ? bang : slash;
	return cut ? cut + 1 : path;
}

/* Appends to dst (sz bytes, NUL-terminated) the last path component of
 * each file failing on device d, torch's own libraries first: each name
 * once, at most eight, then "...". */
static void failing_names(char *dst, size_t sz, const ml_audit *a, size_t d)
{
	enum { MAX_NAMES = 8 };
	const char *seen[MAX_NAMES];
	size_t n_seen = 0, len = strlen(dst), n = 0;
	size_t *idx = failing_files(a, d, &n);
	for (size_t j = 0; idx && j < n; j++) {
		const char *base = base_name(a->files[idx[j]].path);
		bool dup = false;
		for (size_t k = 0; k < n_seen && !dup; k++)
			dup = strcmp(seen[k], base) == 0;
		if (dup)
			continue;
		char name[256];
		bool more = n_seen == MAX_NAMES;
		int w = snprintf(dst + len, sz - len, "%s%s", n_seen ? ", " : "",
		                 more ? "..." : printable(name, sizeof name, base));
		if (w < 0 || (size_t)w >= sz - len || more)
			break;
		len += (size_t)w;
		seen[n_seen++] = base;
	}
	free(idx);
}

int ml_audit_status(const ml_audit *a, ml_err *err)
{
	char shown[512];
	for (size_t d = 0; d < a->n_devices; d++) {
		if (a->overall[d].runs)
			continue;
		char sm[32];
		if (ml_cuda_arch_format(sm, sizeof sm, &a->devices[d]))
			snprintf(sm, sizeof sm, "%d.%d", a->devices[d].major, a->devices[d].minor);
		size_t bad = 0;
		const ml_audit_file *first = first_failing(a, d, &bad);
		if (!first)
			continue;
		char names[sizeof err->msg / 2] = "";
		if (bad > 1) {
			snprintf(names, sizeof names, " (%zu libraries cannot: ", bad);
			failing_names(names, sizeof names - 1, a, d);
			strcat(names, ")");
		}
		ml_err_set(err, ML_EGPU, "'%s' cannot run on %s: %s%s",
		           printable(shown, sizeof shown, first->path), sm, first->answers[d].why,
		           names);
		ml_err_hint(err,
		            "install a build that includes %s SASS or PTX for compute "
		            "capability %d.%d or lower",
		            sm, a->devices[d].major, a->devices[d].minor);
		return ML_EGPU;
	}
	if (a->n_errors) {
		for (size_t i = 0; i < a->n_files; i++) {
			if (!a->files[i].error)
				continue;
			if (a->n_errors == 1)
				ml_err_set(err, ML_EFAIL, "%s", a->files[i].error_msg);
			else
				ml_err_set(err, ML_EFAIL,
				           "%zu files could not be audited; first: %s", a->n_errors,
				           a->files[i].error_msg);
			return ML_EFAIL;
		}
	}
	return 0;
}

/* --- JSON ---------------------------------------------------------------------- */

static cJSON *arch_array(const ml_cuda_arch *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < n; i++) {
		char nm[32];
		if (ml_cuda_arch_format(nm, sizeof nm, &v[i]))
			snprintf(nm, sizeof nm, "?");
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(nm))) {
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* Adds "runs_on" and "why" objects keyed by device name: runs_on values
 * are true, false or "unverified". */
static bool add_answers(cJSON *obj, const ml_audit *a, const ml_audit_answer *ans)
{
	cJSON *runs = cJSON_AddObjectToObject(obj, "runs_on");
	cJSON *why = cJSON_AddObjectToObject(obj, "why");
	if (!runs || !why)
		return false;
	for (size_t d = 0; ans && d < a->n_devices; d++) {
		char sm[32];
		if (ml_cuda_arch_format(sm, sizeof sm, &a->devices[d]))
			snprintf(sm, sizeof sm, "%d.%d", a->devices[d].major, a->devices[d].minor);
		cJSON *v = ans[d].state == ML_AUDIT_UNVERIFIED
		                   ? cJSON_AddStringToObject(runs, sm,
		                                             ml_audit_state_name(ans[d].state))
		                   : cJSON_AddBoolToObject(runs, sm, ans[d].runs);
		if (!v || !cJSON_AddStringToObject(why, sm, ans[d].why))
			return false;
	}
	return true;
}

/* The device's key in answer objects: "sm_120". */
static void device_key(char *sm, size_t sz, const ml_audit *a, size_t d)
{
	if (ml_cuda_arch_format(sm, sz, &a->devices[d]))
		snprintf(sm, sz, "%d.%d", a->devices[d].major, a->devices[d].minor);
}

/* Adds a file's "state" {sm: "runs" | "fails" | "unverified" |
 * "not_for_this_gpu"}, "runs_by" {sm: "sm_120f" | "compute_52" | null} and,
 * for torch's own library, "torch_check" {sm: {"runs": bool, "why": text}}
 * (torch's own judgement, ml_arch_rules). */
static bool add_states(cJSON *obj, const ml_audit *a, const ml_audit_answer *ans)
{
	cJSON *state = cJSON_AddObjectToObject(obj, "state");
	cJSON *by = cJSON_AddObjectToObject(obj, "runs_by");
	if (!state || !by)
		return false;
	bool torch = false;
	for (size_t d = 0; ans && d < a->n_devices; d++) {
		char sm[32], nm[32];
		device_key(sm, sizeof sm, a, d);
		torch |= ans[d].torch_checked;
		if (!cJSON_AddStringToObject(state, sm, ml_audit_state_name(ans[d].state)))
			return false;
		cJSON *v = ans[d].has_by && ml_cuda_arch_format(nm, sizeof nm, &ans[d].by) == 0
		                   ? cJSON_AddStringToObject(by, sm, nm)
		                   : cJSON_AddNullToObject(by, sm);
		if (!v)
			return false;
	}
	if (!torch)
		return true;
	cJSON *tc = cJSON_AddObjectToObject(obj, "torch_check");
	for (size_t d = 0; tc && d < a->n_devices; d++) {
		char sm[32];
		device_key(sm, sizeof sm, a, d);
		cJSON *o = cJSON_AddObjectToObject(tc, sm);
		if (!o || !cJSON_AddBoolToObject(o, "runs", ans[d].torch_runs) ||
		    !cJSON_AddStringToObject(o, "why", ans[d].torch_why))
			return false;
	}
	return tc != NULL;
}

/* Adds "ptx_isa" {"compute_52": "8.7"}: the newest PTX ISA version read
 * per PTX architecture of the file (all places but relocatable). */
static bool add_ptx_isa(cJSON *obj, const ml_fatbin_list *c)
{
	cJSON *o = cJSON_AddObjectToObject(obj, "ptx_isa");
	for (size_t i = 0; o && i < c->n_entries; i++) {
		const ml_fatbin_entry *e = &c->entries[i];
		char nm[32], v[16];
		if (e->kind != ML_FATBIN_KIND_PTX || e->isa <= 0 ||
		    ml_cuda_arch_format(nm, sizeof nm, &e->arch))
			continue;
		snprintf(v, sizeof v, "%d.%d", e->isa / 10, e->isa % 10);
		cJSON *old = cJSON_GetObjectItemCaseSensitive(o, nm);
		if (old && strcmp(old->valuestring, v) >= 0)
			continue;
		if (old)
			cJSON_DeleteItemFromObjectCaseSensitive(o, nm);
		if (!cJSON_AddStringToObject(o, nm, v))
			return false;
	}
	return o != NULL;
}

/* Adds name: [architecture names]. */
static bool add_archs(cJSON *obj, const char *name, const ml_cuda_arch *v, size_t n)
{
	cJSON *arr = arch_array(v, n);
	if (!arr || !cJSON_AddItemToObject(obj, name, arr)) {
		cJSON_Delete(arr);
		return false;
	}
	return true;
}

/* Adds name: {"sass": [...], "ptx": [...]}. */
static bool add_code(cJSON *obj, const char *name, const ml_cuda_arch *sass, size_t n_sass,
                     const ml_cuda_arch *ptx, size_t n_ptx)
{
	cJSON *o = cJSON_AddObjectToObject(obj, name);
	return o && add_archs(o, "sass", sass, n_sass) && add_archs(o, "ptx", ptx, n_ptx);
}

/* Adds "kernelless": the SASS then the PTX architectures whose counted
 * entries hold no kernel ("sm_75", "compute_121"). */
static bool add_kernelless(cJSON *obj, const ml_fatbin_list *c)
{
	cJSON *arr = arch_array(c->kernelless, c->n_kernelless);
	cJSON *ptx = arch_array(c->kernelless_ptx, c->n_kernelless_ptx);
	bool ok = arr && ptx;
	for (cJSON *it = ptx ? ptx->child : NULL; ok && it; it = it->next)
		ok = cJSON_AddItemToArray(arr, cJSON_CreateString(it->valuestring));
	cJSON_Delete(ptx);
	if (!ok || !cJSON_AddItemToObject(obj, "kernelless", arr)) {
		cJSON_Delete(arr);
		return false;
	}
	return true;
}

/* Adds the top level's "failing" {sm: [paths]}: per device the files that
 * cannot run there, torch's own libraries first; and "driver" {version,
 * cuda} (null when the audit knew no driver). */
static bool add_failing_and_driver(cJSON *doc, const ml_audit *a)
{
	cJSON *failing = cJSON_AddObjectToObject(doc, "failing");
	for (size_t d = 0; failing && d < a->n_devices; d++) {
		char sm[32];
		device_key(sm, sizeof sm, a, d);
		cJSON *arr = cJSON_AddArrayToObject(failing, sm);
		size_t n = 0;
		size_t *idx = failing_files(a, d, &n);
		if (!arr || (n && !idx)) {
			free(idx);
			return false;
		}
		bool ok = true;
		for (size_t j = 0; ok && j < n; j++)
			ok = cJSON_AddItemToArray(arr, cJSON_CreateString(a->files[idx[j]].path));
		free(idx);
		if (!ok)
			return false;
	}
	if (!failing)
		return false;
	if (!a->driver_cuda && !a->driver[0])
		return cJSON_AddNullToObject(doc, "driver") != NULL;
	cJSON *drv = cJSON_AddObjectToObject(doc, "driver");
	char cuda[16] = "";
	if (a->driver_cuda)
		snprintf(cuda, sizeof cuda, "%d.%d", a->driver_cuda / 1000,
		         (a->driver_cuda % 1000) / 10);
	return drv &&
	       (a->driver[0] ? cJSON_AddStringToObject(drv, "version", a->driver)
	                     : cJSON_AddNullToObject(drv, "version")) &&
	       (cuda[0] ? cJSON_AddStringToObject(drv, "cuda", cuda)
	                : cJSON_AddNullToObject(drv, "cuda"));
}

static bool add_file(cJSON *files, const ml_audit *a, const ml_audit_file *f)
{
	const ml_fatbin_list *c = &f->code;
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(files, o)) {
		cJSON_Delete(o);
		return false;
	}
	return cJSON_AddStringToObject(o, "path", f->path) &&
	       add_archs(o, "sass", c->sass, c->n_sass) && add_archs(o, "ptx", c->ptx, c->n_ptx) &&
	       add_code(o, "embedded", c->embedded_sass, c->n_embedded_sass, c->embedded_ptx,
	                c->n_embedded_ptx) &&
	       add_code(o, "relocatable", c->relocatable_sass, c->n_relocatable_sass,
	                c->relocatable_ptx, c->n_relocatable_ptx) &&
	       add_kernelless(o, c) && add_ptx_isa(o, c) &&
	       cJSON_AddNumberToObject(o, "merc_cubins", (double)c->n_merc) &&
	       cJSON_AddNumberToObject(o, "containers", (double)c->n_containers) &&
	       cJSON_AddNumberToObject(o, "entries", (double)c->n_entries) &&
	       cJSON_AddNumberToObject(o, "compressed", (double)c->n_compressed) &&
	       cJSON_AddNumberToObject(o, "unreadable_cubins", (double)c->n_unreadable) &&
	       (f->error ? cJSON_AddStringToObject(o, "error", f->error_msg)
	                 : cJSON_AddNullToObject(o, "error")) &&
	       add_answers(o, a, f->has_code ? f->answers : NULL) &&
	       add_states(o, a, f->has_code ? f->answers : NULL);
}

static bool add_torch_wheel(cJSON *arr, const ml_torch_wheel *w)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return false;
	}
	cJSON *build = ml_torch_build_to_json(&w->build);
	if (!build || !cJSON_AddItemToObject(o, "torch_build", build)) {
		cJSON_Delete(build);
		return false;
	}
	cJSON *known = w->known ? ml_torch_build_to_json(w->known) : cJSON_CreateNull();
	if (!known || !cJSON_AddItemToObject(o, "known", known)) {
		cJSON_Delete(known);
		return false;
	}
	cJSON *gaps = cJSON_AddArrayToObject(o, "gaps");
	for (size_t i = 0; gaps && i < w->n_gaps; i++) {
		cJSON *g = cJSON_CreateObject();
		if (!g || !cJSON_AddItemToArray(gaps, g) ||
		    !cJSON_AddStringToObject(g, "library", w->gaps[i].library) ||
		    !add_archs(g, "missing", w->gaps[i].missing, w->gaps[i].n_missing))
			return false;
	}
	return gaps && cJSON_AddStringToObject(o, "path", w->path) &&
	       (w->sha256[0] ? cJSON_AddStringToObject(o, "sha256", w->sha256)
	                     : cJSON_AddNullToObject(o, "sha256")) &&
	       cJSON_AddStringToObject(o, "torch_version", w->torch_version) &&
	       cJSON_AddStringToObject(o, "hip", w->hip) &&
	       cJSON_AddStringToObject(o, "cuda_source", w->cuda_source) &&
	       cJSON_AddStringToObject(o, "library", w->library);
}

/* Adds "torch_wheels": one object per torch wheel audited. */
static bool add_torch_wheels(cJSON *doc, const ml_audit *a)
{
	cJSON *arr = cJSON_AddArrayToObject(doc, "torch_wheels");
	for (size_t i = 0; arr && i < a->n_torch; i++)
		if (!add_torch_wheel(arr, &a->torch[i]))
			return false;
	return arr != NULL;
}

cJSON *ml_audit_to_json(const ml_audit *a)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc || !cJSON_AddStringToObject(doc, "schema", "mlsetup.audit/1") ||
	    !add_archs(doc, "devices", a->devices, a->n_devices) ||
	    !cJSON_AddNumberToObject(doc, "libraries_scanned", (double)a->n_scanned) ||
	    !cJSON_AddNumberToObject(doc, "libraries_with_cuda", (double)a->n_with_code) ||
	    !cJSON_AddNumberToObject(doc, "libraries_unverified", (double)a->n_unverified) ||
	    !cJSON_AddNumberToObject(doc, "errors", (double)a->n_errors))
		goto fail;
	cJSON *unverified = cJSON_AddArrayToObject(doc, "unverified");
	cJSON *files = cJSON_AddArrayToObject(doc, "files");
	if (!unverified || !files)
		goto fail;
	for (size_t i = 0; i < a->n_files; i++) {
		const ml_audit_file *f = &a->files[i];
		if (f->unverified && !cJSON_AddItemToArray(unverified, cJSON_CreateString(f->path)))
			goto fail;
		if (!add_file(files, a, f))
			goto fail;
	}
	if (!add_answers(doc, a, a->overall) || !add_failing_and_driver(doc, a) ||
	    !add_torch_wheels(doc, a))
		goto fail;
	return doc;
fail:
	cJSON_Delete(doc);
	return NULL;
}

int ml_audit_merge(ml_audit *into, ml_audit *from, ml_err *err)
{
	if (into->n_devices != from->n_devices)
		return ml_err_set(err, ML_EFAIL, "audits of different devices cannot be merged");
	for (size_t d = 0; d < into->n_devices; d++)
		if (into->devices[d].major != from->devices[d].major ||
		    into->devices[d].minor != from->devices[d].minor)
			return ml_err_set(err, ML_EFAIL,
			                  "audits of different devices cannot be merged");
	size_t nf = into->n_files + from->n_files, nt = into->n_torch + from->n_torch;
	ml_audit_file *files = realloc(into->files, (nf ? nf : 1) * sizeof *files);
	if (!files)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	into->files = files;
	ml_torch_wheel *torch = realloc(into->torch, (nt ? nt : 1) * sizeof *torch);
	if (!torch)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	into->torch = torch;
	if (from->n_files)
		memcpy(files + into->n_files, from->files, from->n_files * sizeof *files);
	if (from->n_torch)
		memcpy(torch + into->n_torch, from->torch, from->n_torch * sizeof *torch);
	into->n_files = nf;
	into->n_torch = nt;
	into->n_scanned += from->n_scanned;
	into->n_with_code += from->n_with_code;
	into->n_unverified += from->n_unverified;
	into->n_errors += from->n_errors;
	overall_answers(into);
	from->n_files = from->n_torch = 0; /* moved */
	ml_audit_free(from);
	return 0;
}

void ml_audit_free(ml_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_files; i++)
		file_release(&a->files[i]);
	free(a->files);
	for (size_t i = 0; i < a->n_torch; i++)
		ml_torch_wheel_release(&a->torch[i]);
	free(a->torch);
	free(a->devices);
	free(a->overall);
	free(a);
}

/* --- one torch wheel's build, by an audit of it (torchbuild.c reads it) ------- */

int ml_torch_build_from_wheel(ml_torch_build *out, const char *path, ml_err *err)
{
	ml_audit *a = NULL;
	ml_audit_opts o = ML_AUDIT_OPTS_INIT;
	int rc = ml_audit_paths(&a, &path, 1, &o, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < a->n_files && a->n_torch == 0; i++)
		if (a->files[i].error && !a->files[i].has_code &&
		    strcmp(a->files[i].path, path) == 0) {
			rc = ml_err_set(err, a->files[i].error, "%s", a->files[i].error_msg);
			goto out;
		}
	if (a->n_torch == 0) {
		rc = ml_err_set(
		        err, ML_ENOENT,
		        "'%s' is not a torch wheel (no torch/version.py or torch dist-info)", path);
		goto out;
	}
	*out = a->torch[0].build;
	out->files = NULL;
	out->n_files = 0;
out:
	ml_audit_free(a);
	return rc;
}

size_t ml_verify_gpu_archs(ml_cuda_arch *out, size_t cap, const ml_machine *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_gpus && n < cap; i++)
		if (m->gpus[i].cc_major >= 0)
			out[n++] = (ml_cuda_arch){m->gpus[i].cc_major, m->gpus[i].cc_minor, 0,
			                          false, 0};
	return n;
}

void ml_audit_opts_machine(ml_audit_opts *o, ml_cuda_arch *devs, size_t cap, const ml_machine *m)
{
	o->devices = devs;
	o->n_devices = ml_verify_gpu_archs(devs, cap, m);
	o->driver_cuda = m->driver.cuda_version;
	o->driver = m->driver.version[0] ? m->driver.version : NULL;
}
