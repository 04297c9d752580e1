/*
 * unzip.c - extracting a wheel with our own zip reader (PKWARE APPNOTE
 * 6.3.x): the central directory is read and checked by zipscan.c, every
 * name is checked before anything is written, then every member is
 * decoded whole - its sizes are known from the central directory - and
 * checked: a deflate stream must fill exactly the declared size (inflation
 * stops there, so nothing is written past it), end exactly at the
 * member's compressed size, and give the central directory's CRC-32. The
 * sha256 a wheel's RECORD is checked against is computed on the inflated
 * bytes in the same pass; nothing is read back.
 *
 * Inflation uses libdeflate, which decodes a whole member in one call
 * (measured against zlib on the torch stack's wheels: tests/bench/README.md).
 * Small members go through a buffer of the thread's; large ones inflate
 * straight into their output file, allocated (fallocate, so a full disk is
 * an error here, not a SIGBUS later) and mapped. A member the size of
 * libtorch_cuda.so (860 MiB) would then count fully in this process's
 * resident set while the kernel's page cache holds it anyway, so a
 * trimmer thread drops the mapped pages from the process every few
 * milliseconds (MADV_DONTNEED: for shared file mappings the data stays in
 * the file and a later access just maps the page again). Where a file
 * cannot be allocated or mapped, zlib inflates it in 1 MiB windows with a
 * hard stop at the declared size; a wheel's own bytecode, which is
 * checked but never written, is decoded the same way.
 *
 * The members of a large wheel are shared among threads: the calling
 * thread hands them out, largest first, and starts a helper for each free
 * slot of the caller's thread budget (mle_slots) while enough bytes remain
 * to share. Helpers give their slot back when the queue is empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zlib.h>

#include "internal.h"

#define SMALL_MAX   ((uint64_t)1 << 20)  /* members up to this inflate into a buffer */
#define WINDOW      ((size_t)1 << 20)    /* hashing and streaming window, bytes */
#define TRIM_NS     (5 * 1000 * 1000L)   /* trimmer period */
#define TRIM_MIN    ((uint64_t)16 << 20) /* mapped bytes worth a trimmer */
#define HELPER_MIN  ((uint64_t)16 << 20) /* queued bytes worth another thread */
#define MAX_THREADS 64

/* --- the trimmer ------------------------------------------------------------------ */

/* Keeps the resident set small while large members are mapped: every
 * TRIM_NS it drops the pages of the mapped wheel and of every registered
 * output mapping from this process. Registration, removal and munmap of an
 * output happen under mu, so the trimmer never touches an address range
 * after it was unmapped (and possibly reused). */
typedef struct trimmer {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, running;
	pthread_t th;
	void *in;
	size_t in_len;
	struct {
		void *p;
		size_t n;
	} out[MAX_THREADS];
} trimmer;

static void *trim_main(void *arg)
{
	trimmer *t = arg;
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TRIM_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
		if (t->stop)
			break;
		madvise(t->in, t->in_len, MADV_DONTNEED);
		for (size_t i = 0; i < MAX_THREADS; i++)
			if (t->out[i].p)
				madvise(t->out[i].p, t->out[i].n, MADV_DONTNEED);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static void trim_start(trimmer *t, void *in, size_t in_len)
{
	t->in = in;
	t->in_len = in_len;
	t->running = pthread_create(&t->th, NULL, trim_main, t) == 0;
}

static void trim_stop(trimmer *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	t->running = false;
}

/* --- shared state ------------------------------------------------------------------ */

typedef struct member {
	size_t idx;  /* index in the central directory */
	size_t list; /* index in res->files (central-directory order of files) */
	char *path;  /* normalized */
	unsigned mode;
	bool drop; /* a wheel's own bytecode: checked, not written */
} member;

typedef struct uz {
	const mle_zip *z;
	const uint8_t *map; /* the wheel, mapped read-only */
	size_t map_len;
	int rootfd;
	const ml_extract_opts *o;
	const char *what;
	member *files; /* regular files in hand-out order: largest first */
	size_t n_files;
	ml_extracted_file *listed; /* list_files: n_files slots */
	trimmer trim;
	mle_slots *slots;
	int max_threads;

	pthread_mutex_t mu; /* guards everything below */
	size_t next;        /* next position of files[] to hand out */
	uint64_t queued;    /* declared bytes of the members not handed out */
	bool failed;
	size_t first_failed; /* lowest failed position */
	ml_err ferr;         /* its error */
	uint64_t bytes, n_written, n_cleared, n_dropped;
	int running, most_running;
	pthread_t helpers[MAX_THREADS];
	size_t n_helpers;
} uz;

/* One thread's tools. */
typedef struct worker {
	uz *u;
	int id; /* 0: the calling thread */
	struct libdeflate_decompressor *d;
	ml_sha256 *md;
	uint8_t *buf;
	size_t cap;
	char parent[ML_PATH_MAX];
	int parent_fd;
} worker;

static int fail(ml_err *err, const char *what, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(ml_err *err, const char *what, int code, const char *fmt, ...)
{
	char m[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	ml_err_set(err, code, "archive '%s': %s", what, m);
	if (code == ML_EINTEGRITY)
		ml_err_hint(err, "the archive is refused and nothing from it is installed; "
		                 "report it to whoever published it");
	return code;
}

/* --- decoding one member ---------------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Adds n bytes to the member's CRC-32 and (list_files) sha256. */
static void sum(worker *w, uint32_t *crc, const uint8_t *p, size_t n)
{
	*crc = libdeflate_crc32(*crc, p, n);
	if (w->u->o->list_files)
		ml_sha256_update(w->md, p, n);
}

static int crc_check(const uz *u, const member *m, uint32_t crc, ml_err *err)
{
	uint32_t want = u->z->v[m->idx].crc;
	if (crc != want)
		return fail(err, u->what, ML_EINTEGRITY,
		            "entry '%s' fails its CRC-32 check (the central directory says %08x, "
		            "the data gives %08x)",
		            m->path, (unsigned)want, (unsigned)crc);
	return 0;
}

static int overlong(const uz *u, const member *m, ml_err *err)
{
	return fail(err, u->what, ML_EINTEGRITY,
	            "entry '%s' expands past its declared size of %llu bytes (stopped there)",
	            m->path, (unsigned long long)u->z->v[m->idx].usize);
}

static int result_of(const uz *u, const member *m, enum libdeflate_result r, size_t in_used,
                     ml_err *err)
{
	const mle_zip_entry *e = &u->z->v[m->idx];
	switch (r) {
	case LIBDEFLATE_SUCCESS:
		if (in_used != e->csize)
			return fail(err, u->what, ML_EINTEGRITY,
			            "entry '%s' has bytes after the end of its deflate stream",
			            m->path);
		return 0;
	case LIBDEFLATE_INSUFFICIENT_SPACE:
		return overlong(u, m, err);
	case LIBDEFLATE_SHORT_OUTPUT:
		return fail(err, u->what, ML_EINTEGRITY,
		            "entry '%s' holds fewer bytes than its declared size of %llu", m->path,
		            (unsigned long long)e->usize);
	default:
		return fail(err, u->what, ML_EINTEGRITY, "entry '%s' is not valid deflate data",
		            m->path);
	}
}

/* Decodes the member in windows: stored bytes are copied, deflate is
 * inflated with zlib, never more than the declared size (one more byte of
 * output is asked for, into a scratch byte, only to see whether the
 * stream would go on). Writes to fd unless it is -1 (dropped members).
 * Returns 0 or ML_E*. */
static int decode_stream(worker *w, const member *m, int fd, ml_err *err)
{
	uz *u = w->u;
	const mle_zip_entry *e = &u->z->v[m->idx];
	const uint8_t *in = u->map + e->data_offset;
	uint32_t crc = 0;
	int e_io = 0;
	if (e->method == 0) {
		for (uint64_t pos = 0; pos < e->usize;) {
			size_t n = e->usize - pos < WINDOW ? (size_t)(e->usize - pos) : WINDOW;
			sum(w, &crc, in + pos, n);
			if (fd >= 0 && (e_io = write_all(fd, in + pos, n, pos)))
				return fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
				            strerror(-e_io));
			pos += n;
		}
		return crc_check(u, m, crc, err);
	}
	if (w->cap < WINDOW) {
		uint8_t *b = realloc(w->buf, WINDOW);
		if (!b)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		w->buf = b;
		w->cap = WINDOW;
	}
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, -15) != Z_OK)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	uint64_t pos = 0, in_left = e->csize;
	const uint8_t *next_in = in;
	for (;;) {
		if (zs.avail_in == 0 && in_left) {
			uInt k = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
			zs.next_in = (Bytef *)next_in;
			zs.avail_in = k;
			next_in += k;
			in_left -= k;
		}
		uint8_t scratch;
		bool probing = pos == e->usize;
		size_t room =
		        probing ? 1 : (e->usize - pos < WINDOW ? (size_t)(e->usize - pos) : WINDOW);
		zs.next_out = probing ? &scratch : w->buf;
		zs.avail_out = (uInt)room;
		int z = inflate(&zs, Z_NO_FLUSH);
		size_t got = room - zs.avail_out;
		if (probing && got) {
			rc = overlong(u, m, err);
			break;
		}
		if (got) {
			sum(w, &crc, w->buf, got);
			if (fd >= 0 && (e_io = write_all(fd, w->buf, got, pos))) {
				rc = fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
				          strerror(-e_io));
				break;
			}
			pos += got;
		}
		if (z == Z_STREAM_END) {
			if (pos != e->usize)
				rc = result_of(u, m, LIBDEFLATE_SHORT_OUTPUT, 0, err);
			else if (zs.avail_in || in_left)
				rc = result_of(u, m, LIBDEFLATE_SUCCESS, 0, err);
			else
				rc = crc_check(u, m, crc, err);
			break;
		}
		if (z == Z_MEM_ERROR) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		/* With room for output and input left, zlib always progresses:
		 * Z_BUF_ERROR means the stream ran out of input (truncated). */
		if (z != Z_OK) {
			rc = result_of(u, m, LIBDEFLATE_BAD_DATA, 0, err);
			break;
		}
	}
	inflateEnd(&zs);
	return rc;
}

/* Opens the parent directory of path (cached per thread) and points
 * *leaf at the last component. Returns a descriptor or a negative ML_E*. */
static int parent_of(worker *w, const char *path, const char **leaf, ml_err *err)
{
	const char *slash = strrchr(path, '/');
	size_t dn = slash ? (size_t)(slash - path) : 0;
	*leaf = slash ? slash + 1 : path;
	if (w->parent_fd >= 0 && strlen(w->parent) == dn && memcmp(w->parent, path, dn) == 0)
		return w->parent_fd;
	char dir[ML_PATH_MAX];
	memcpy(dir, path, dn);
	dir[dn] = '\0';
	int fd = mle_open_dir(w->u->rootfd, dir);
	if (fd < 0) {
		if (fd == -ELOOP || fd == -ENOTDIR)
			return fail(err, w->u->what, ML_EINTEGRITY,
			            "entry path '%s' passes through a symbolic link or a file",
			            dir);
		return fail(err, w->u->what, ML_EIO, "cannot write '%s': %s", dir, strerror(-fd));
	}
	if (w->parent_fd >= 0)
		close(w->parent_fd);
	w->parent_fd = fd;
	memcpy(w->parent, dir, dn + 1);
	return fd;
}

/* A large member: inflated straight into its allocated, mapped file.
 * Returns 1 when the file cannot be allocated or mapped here (the caller
 * streams instead), else 0 or ML_E*. */
static int decode_mapped(worker *w, const member *m, int fd, uint32_t *crc, ml_err *err)
{
	uz *u = w->u;
	const mle_zip_entry *e = &u->z->v[m->idx];
	/* fallocate(2), not posix_fallocate(): where the file system cannot
	 * allocate, glibc's emulation would write every block. */
	if (fallocate(fd, 0, 0, (off_t)e->usize) != 0) {
		if (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)
			return 1;
		return fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
		            strerror(errno));
	}
	uint8_t *out = mmap(NULL, e->usize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (out == MAP_FAILED)
		return 1;
	pthread_mutex_lock(&u->trim.mu);
	u->trim.out[w->id].p = out;
	u->trim.out[w->id].n = e->usize;
	pthread_mutex_unlock(&u->trim.mu);

	size_t in_used = 0;
	enum libdeflate_result lr = libdeflate_deflate_decompress_ex(
	        w->d, u->map + e->data_offset, e->csize, out, e->usize, &in_used, NULL);
	int rc = result_of(u, m, lr, in_used, err);
	/* The pages just read go at once; the trimmer covers the inflation. */
	uintptr_t a = ((uintptr_t)(u->map + e->data_offset)) & ~(uintptr_t)4095;
	madvise((void *)a, (size_t)((uintptr_t)(u->map + e->data_offset + e->csize) - a),
	        MADV_DONTNEED);
	for (uint64_t pos = 0; !rc && pos < e->usize; pos += WINDOW) {
		size_t n = e->usize - pos < WINDOW ? (size_t)(e->usize - pos) : WINDOW;
		sum(w, crc, out + pos, n);
		madvise(out + pos, n, MADV_DONTNEED);
	}

	pthread_mutex_lock(&u->trim.mu);
	u->trim.out[w->id].p = NULL;
	munmap(out, e->usize);
	pthread_mutex_unlock(&u->trim.mu);
	return rc;
}

/* Decodes, checks and (unless dropped) writes one member. */
static int do_member(worker *w, const member *m, ml_err *err)
{
	uz *u = w->u;
	const mle_zip_entry *e = &u->z->v[m->idx];
	if (e->method != 0 && e->method != 8)
		return fail(err, u->what, ML_EINTEGRITY,
		            "entry '%s' uses compression method %u; wheels are read with stored "
		            "(0) and deflate (8) only",
		            m->path, (unsigned)e->method);
	if (e->method == 0 && e->csize != e->usize)
		return fail(err, u->what, ML_EINTEGRITY,
		            "stored entry '%s' declares %llu bytes but holds %llu", m->path,
		            (unsigned long long)e->usize, (unsigned long long)e->csize);
	if (u->o->list_files && ml_sha256_reset(w->md) != 0)
		return ml_err_set(err, ML_ENOMEM, "out of memory");

	bool exec = (m->mode & 0111) != 0;
	int fd = -1, rc = 0;
	uint32_t crc = 0;
	if (m->drop) {
		rc = decode_stream(w, m, -1, err);
		goto done;
	}
	const char *leaf;
	int pfd = parent_of(w, m->path, &leaf, err);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, leaf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return fail(err, u->what, ML_EINTEGRITY,
			            "entry '%s' collides with an earlier entry", m->path);
		return fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
		            strerror(errno));
	}
	if (e->usize > SMALL_MAX && e->method == 8) {
		rc = decode_mapped(w, m, fd, &crc, err);
		if (rc == 1)
			rc = decode_stream(w, m, fd, err);
		else if (!rc)
			rc = crc_check(u, m, crc, err);
	} else if (e->usize > SMALL_MAX) {
		rc = decode_stream(w, m, fd, err);
	} else {
		const uint8_t *data = u->map + e->data_offset;
		if (e->method == 8) {
			if (w->cap < e->usize || !w->buf) {
				size_t c = e->usize > WINDOW ? (size_t)e->usize : WINDOW;
				uint8_t *b = realloc(w->buf, c);
				if (!b) {
					rc = ml_err_set(err, ML_ENOMEM, "out of memory");
					goto done;
				}
				w->buf = b;
				w->cap = c;
			}
			size_t in_used = 0;
			enum libdeflate_result lr = libdeflate_deflate_decompress_ex(
			        w->d, data, e->csize, w->buf, e->usize, &in_used, NULL);
			if ((rc = result_of(u, m, lr, in_used, err)))
				goto done;
			data = w->buf;
		}
		sum(w, &crc, data, (size_t)e->usize);
		if ((rc = crc_check(u, m, crc, err)))
			goto done;
		int e_io = write_all(fd, data, (size_t)e->usize, 0);
		if (e_io)
			rc = fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
			          strerror(-e_io));
	}
done:
	if (!rc && fd >= 0) {
		mode_t mode = u->o->read_only ? (exec ? 0555 : 0444) : (exec ? 0755 : 0644);
		if (fchmod(fd, mode) != 0)
			rc = fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path,
			          strerror(errno));
	}
	if (fd >= 0 && close(fd) != 0 && !rc)
		rc = fail(err, u->what, ML_EIO, "cannot write '%s': %s", m->path, strerror(errno));
	if (rc)
		return rc;
	if (u->o->list_files) {
		ml_extracted_file *f = &u->listed[m->list];
		if (ml_sha256_final(w->md, f->sha256) != 0)
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		if (!(f->path = strdup(m->path)))
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		f->size = e->usize;
		f->executable = exec;
		f->dropped = m->drop;
	}
	pthread_mutex_lock(&u->mu);
	if (m->drop) {
		u->n_dropped++;
	} else {
		u->bytes += e->usize;
		u->n_written++;
		u->n_cleared += (m->mode & 07000) != 0;
	}
	pthread_mutex_unlock(&u->mu);
	return 0;
}

/* --- the threads ------------------------------------------------------------------------- */

static void *helper_main(void *arg);

/* Starts one more helper when a slot is free (the calling thread only). */
static void maybe_help(uz *u)
{
	if (!u->slots || u->n_helpers + 1 >= (size_t)u->max_threads ||
	    mle_slots_take(u->slots, 1) != 1)
		return;
	worker *w = calloc(1, sizeof *w);
	if (w) {
		w->u = u;
		w->id = (int)u->n_helpers + 1;
		w->parent_fd = -1;
	}
	pthread_mutex_lock(&u->mu);
	bool ok = w && pthread_create(&u->helpers[u->n_helpers], NULL, helper_main, w) == 0;
	if (ok)
		u->n_helpers++;
	pthread_mutex_unlock(&u->mu);
	if (!ok) {
		free(w);
		mle_slots_give(u->slots, 1);
	}
}

static void run_worker(worker *w)
{
	uz *u = w->u;
	ml_err err = ML_ERR_INIT;
	w->d = libdeflate_alloc_decompressor();
	w->md = ml_sha256_new();
	bool tools = w->d && w->md;
	pthread_mutex_lock(&u->mu);
	if (++u->running > u->most_running)
		u->most_running = u->running;
	pthread_mutex_unlock(&u->mu);
	for (;;) {
		pthread_mutex_lock(&u->mu);
		if (u->failed || u->next >= u->n_files) {
			pthread_mutex_unlock(&u->mu);
			break;
		}
		size_t pos = u->next++;
		u->queued -= u->z->v[u->files[pos].idx].usize;
		bool share = w->id == 0 && u->queued >= HELPER_MIN && u->next < u->n_files;
		pthread_mutex_unlock(&u->mu);
		if (share)
			maybe_help(u);
		int rc = tools ? do_member(w, &u->files[pos], &err)
		               : ml_err_set(&err, ML_ENOMEM, "out of memory");
		if (rc) {
			pthread_mutex_lock(&u->mu);
			if (!u->failed || pos < u->first_failed) {
				u->first_failed = pos;
				u->ferr = err;
			}
			u->failed = true;
			pthread_mutex_unlock(&u->mu);
		}
	}
	pthread_mutex_lock(&u->mu);
	u->running--;
	pthread_mutex_unlock(&u->mu);
	libdeflate_free_decompressor(w->d);
	ml_sha256_free(w->md);
	free(w->buf);
	if (w->parent_fd >= 0)
		close(w->parent_fd);
}

static void *helper_main(void *arg)
{
	worker *w = arg;
	uz *u = w->u;
	run_worker(w);
	free(w);
	mle_slots_give(u->slots, 1);
	return NULL;
}

/* --- before anything is written: every name ----------------------------------------- */

static ml_entry_type zip_type(const mle_zip_entry *ze)
{
	unsigned mode = mle_zip_unix_mode(ze);
	ml_entry_type t = ML_ENTRY_FILE;
	if (ze->name_len && ze->name[ze->name_len - 1] == '/')
		t = ML_ENTRY_DIR;
	switch (mode & 0170000) {
	case 0:
	case 0100000:
		break;
	case 0040000:
		t = ML_ENTRY_DIR;
		break;
	case 0120000:
		t = ML_ENTRY_SYMLINK;
		break;
	default:
		t = ML_ENTRY_OTHER;
	}
	return t;
}

static int cmp_size_desc(const void *a, const void *b, void *arg)
{
	const mle_zip *z = arg;
	const member *x = a, *y = b;
	uint64_t sx = z->v[x->idx].usize, sy = z->v[y->idx].usize;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Checks every name, creates the directories, fills u->files. */
static int plan_entries(uz *u, ml_extract_result *res, char **norms, ml_err *err)
{
	const mle_zip *z = u->z;
	mle_map central = MLE_MAP_INIT;
	ml_entry_type *types = calloc(z->n ? z->n : 1, sizeof *types);
	char *norm = malloc(ML_PATH_MAX);
	int rc = 0;
	if (!types || !norm) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	size_t n_files = 0;
	for (size_t i = 0; i < z->n; i++) {
		const mle_zip_entry *ze = &z->v[i];
		ml_entry_type t = zip_type(ze);
		ml_err sub = ML_ERR_INIT;
		rc = ml_entry_check(norm, ML_PATH_MAX, ze->name, ze->name_len, t, NULL, 0, 0, &sub);
		if (rc) {
			ml_err_set(err, rc, "archive '%s': %s", u->what, sub.msg);
			ml_err_hint(err, "the archive is refused and nothing from it is "
			                 "installed; report it to whoever published it");
			goto out;
		}
		if (u->o->windows_names &&
		    (rc = ml_entry_windows_check(norm, strlen(norm), NULL, &sub))) {
			ml_err_set(err, rc, "archive '%s': %s", u->what, sub.msg);
			ml_err_hint(err, "the archive is refused and nothing from it is "
			                 "installed; report it to whoever published it");
			goto out;
		}
		if (!(ze->flags & 0x0800))
			for (size_t k = 0; k < ze->name_len; k++)
				if ((unsigned char)ze->name[k] >= 0x80) {
					rc = fail(
					        err, u->what, ML_EINTEGRITY,
					        "entry '%s' has a non-ASCII name not marked UTF-8 "
					        "(ambiguous encoding)",
					        norm);
					goto out;
				}
		if (!(norms[i] = strdup(norm))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		types[i] = t;
		int r = mle_map_put(&central, norm, i, NULL);
		if (r < 0) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			goto out;
		}
		if (r == 0) {
			rc = fail(err, u->what, ML_EINTEGRITY, "duplicate entry '%s'", norm);
			goto out;
		}
		n_files += t == ML_ENTRY_FILE;
	}
	/* A file that is also the directory of another entry. */
	for (size_t i = 0; i < z->n; i++) {
		const char *p = norms[i];
		for (const char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
			size_t idx;
			snprintf(norm, ML_PATH_MAX, "%.*s", (int)(s - p), p);
			if (mle_map_get(&central, norm, &idx) && types[idx] != ML_ENTRY_DIR) {
				rc = fail(err, u->what, ML_EINTEGRITY,
				          "entry '%s' is a file and the directory of '%s'", norm,
				          p);
				goto out;
			}
		}
	}
	ml_err sub = ML_ERR_INIT;
	/* Windows folds case whatever the probe says (NTFS's default; the
	 * probe could meet a per-directory case-sensitive one). */
	bool fold = u->o->windows_names || mle_dir_folds_case(u->rootfd);
	if ((rc = ml_entry_names_check((const char *const *)norms, z->n, fold, &sub))) {
		if (rc == ML_EINTEGRITY)
			fail(err, u->what, rc, "%s%s", sub.msg,
			     u->o->windows_names ? " (Windows folds case)"
			     : fold              ? " (the file system here folds case)"
			                         : "");
		else
			*err = sub;
		goto out;
	}

	/* Directories, in archive order; files' parents are made as needed. */
	for (size_t i = 0; i < z->n; i++) {
		if (types[i] != ML_ENTRY_DIR)
			continue;
		if (!norms[i][0])
			continue; /* the root itself */
		res->n_dirs++;
		int fd = mle_open_dir(u->rootfd, norms[i]);
		if (fd < 0) {
			rc = fd == -ELOOP || fd == -ENOTDIR
			             ? fail(err, u->what, ML_EINTEGRITY,
			                    "directory entry '%s' collides with an earlier entry",
			                    norms[i])
			             : fail(err, u->what, ML_EIO, "cannot write '%s': %s", norms[i],
			                    strerror(-fd));
			goto out;
		}
		close(fd);
	}
	u->files = calloc(n_files ? n_files : 1, sizeof *u->files);
	if (!u->files) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < z->n; i++) {
		if (types[i] != ML_ENTRY_FILE)
			continue;
		member *m = &u->files[u->n_files];
		m->idx = i;
		m->list = u->n_files++;
		m->path = norms[i];
		m->mode = mle_zip_unix_mode(&z->v[i]);
		m->drop = u->o->drop_pycache && mle_is_own_bytecode(norms[i]);
		u->queued += z->v[i].usize;
	}
	qsort_r(u->files, u->n_files, sizeof *u->files, cmp_size_desc, (void *)z);
out:
	mle_map_release(&central);
	free(types);
	free(norm);
	return rc;
}

/* --- the entry point ----------------------------------------------------------------------- */

int mle_unzip(ml_extract_result *res, int fd, uint64_t size, int rootfd, const ml_extract_opts *o,
              uint64_t max_bytes, uint64_t max_entries, mle_slots *slots, const char *what,
              ml_err *err)
{
	mle_zip z = {NULL, 0, 0};
	int rc = mle_zip_scan(&z, fd, size, max_entries, what, err);
	if (rc)
		return rc;
	res->n_entries = z.n;
	if (z.total_usize > max_bytes) {
		mle_zip_release(&z);
		return fail(err, what, ML_EINTEGRITY,
		            "expands past the cap of %llu bytes (an archive bomb?)",
		            (unsigned long long)max_bytes);
	}
	uz u;
	memset(&u, 0, sizeof u);
	u.z = &z;
	u.rootfd = rootfd;
	u.o = o;
	u.what = what;
	u.slots = slots;
	u.max_threads = o->threads > MAX_THREADS ? MAX_THREADS : (o->threads < 1 ? 1 : o->threads);
	char **norms = calloc(z.n ? z.n : 1, sizeof *norms);
	bool mu = false, tmu = false, tcv = false;
	if (!norms) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	mu = pthread_mutex_init(&u.mu, NULL) == 0;
	tmu = pthread_mutex_init(&u.trim.mu, NULL) == 0;
	tcv = pthread_cond_init(&u.trim.cv, NULL) == 0;
	if (!mu || !tmu || !tcv) {
		rc = ml_err_set(err, ML_EFAIL, "cannot create a mutex");
		goto out;
	}
	if ((rc = plan_entries(&u, res, norms, err)))
		goto out;
	if (o->list_files && u.n_files && !(u.listed = calloc(u.n_files, sizeof *u.listed))) {
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		goto out;
	}
	if (size) {
		void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			rc = fail(err, what, ML_EIO, "cannot map the archive: %s", strerror(errno));
			goto out;
		}
		u.map = map;
		u.map_len = size;
		if (size + z.total_usize >= TRIM_MIN)
			trim_start(&u.trim, map, size);
	}
	worker w0;
	memset(&w0, 0, sizeof w0);
	w0.u = &u;
	w0.parent_fd = -1;
	run_worker(&w0);
	for (size_t i = 0; i < u.n_helpers; i++)
		pthread_join(u.helpers[i], NULL);
	trim_stop(&u.trim);
	if (u.failed) {
		rc = u.ferr.code ? u.ferr.code : ML_EFAIL;
		*err = u.ferr;
		goto out;
	}
	res->bytes += u.bytes;
	res->n_files += u.n_written;
	res->n_modes_cleared += u.n_cleared;
	res->n_dropped += u.n_dropped;
	res->n_threads = (uint64_t)u.most_running;
	if (o->list_files) {
		res->files = u.listed;
		res->n_listed = u.n_files;
		u.listed = NULL;
	}
out:
	if (u.map)
		munmap((void *)u.map, u.map_len);
	if (u.listed) {
		for (size_t i = 0; i < u.n_files; i++)
			free(u.listed[i].path);
		free(u.listed);
	}
	if (norms)
		for (size_t i = 0; i < z.n; i++)
			free(norms[i]);
	free(norms);
	free(u.files);
	if (mu)
		pthread_mutex_destroy(&u.mu);
	if (tmu)
		pthread_mutex_destroy(&u.trim.mu);
	if (tcv)
		pthread_cond_destroy(&u.trim.cv);
	mle_zip_release(&z);
	return rc;
}
