/*
 * out.c - decides between human text, JSON and silence for everything the
 * front end shows, by the settings main() applied (out_opts.c); stages
 * hand it data and never print themselves. Text
 * for people goes through the output lock (live.h), so that it lands above
 * the live status line; warnings, errors and hints are wrapped to the
 * terminal's width when they go to one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "live.h"
#include "mlsetup/out.h"

void ml_say(const char *fmt, ...)
{
	if (ml_out_get()->json || ml_out_get()->verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	ml_out_lock();
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	if (ml_live_mode_now() == ML_LIVE_TTY)
		fflush(stdout); /* before the live line is drawn again on stderr */
	ml_out_unlock();
	va_end(ap);
}

void ml_verbose(const char *fmt, ...)
{
	if (ml_out_get()->verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	ml_out_lock();
	fputs("verbose: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	ml_out_unlock();
	va_end(ap);
}

int ml_term_width(int fd)
{
	const char *env = getenv("COLUMNS");
	char *end = NULL;
	long c = env ? strtol(env, &end, 10) : 0;
	if (env && end != env && !*end && c >= 20 && c <= 10000)
		return (int)c;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* Appends to a bounded buffer, counting what did not fit as snprintf does. */
typedef struct wbuf {
	char *dst;
	size_t sz, len;
} wbuf;

static void wput(wbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, b->len++)
		if (b->len + 1 < b->sz)
			b->dst[b->len] = s[i];
}

static void wspaces(wbuf *b, int n)
{
	for (int i = 0; i < n; i++)
		wput(b, " ", 1);
}

static bool is_cont(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

/* Code points in s[0..n). */
static int cols(const char *s, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += !is_cont(s[i]);
	return c;
}

/* Bytes of s[0..n) that hold its first k code points. */
static size_t bytes_for(const char *s, size_t n, int k)
{
	size_t i = 0;
	for (int c = 0; i < n; i++) {
		if (!is_cont(s[i]) && c++ == k)
			break;
	}
	return i;
}

size_t ml_wrap(char *dst, size_t sz, const char *text, int width, int used, int indent)
{
	wbuf b = {dst, sz, 0};
	if (width < 2)
		width = 2;
	if (indent < 0 || indent > width / 2)
		indent = 0;
	int col = used > 0 ? used : 0;
	bool has_word = false; /* the current line holds a word */
	const char *p = text ? text : "";
	while (*p) {
		if (*p == '\n') {
			wput(&b, "\n", 1);
			wspaces(&b, indent);
			col = indent;
			has_word = false;
			p++;
			continue;
		}
		size_t n = strcspn(p, " \n");
		if (n == 0) { /* a run of spaces */
			size_t s = strspn(p, " ");
			size_t wn = strcspn(p + s, " \n");
			int w = cols(p + s, wn);
			if (wn == 0) {
				/* spaces before a newline or the end: dropped */
			} else if (col + (int)s + w <= width) {
				wspaces(&b, (int)s);
				col += (int)s;
			} else if (has_word) {
				wput(&b, "\n", 1);
				wspaces(&b, indent);
				col = indent;
				has_word = false;
			}
			p += s;
			continue;
		}
		int w = cols(p, n);
		if (col + w <= width) {
			wput(&b, p, n);
			col += w;
			has_word = true;
			p += n;
			continue;
		}
		/* A word longer than what is left of an empty line: cut it. */
		if (has_word || col >= width) {
			wput(&b, "\n", 1);
			wspaces(&b, indent);
			col = indent;
			has_word = false;
			continue;
		}
		size_t take = bytes_for(p, n, width - col);
		wput(&b, p, take);
		p += take;
		col = width;
		has_word = true;
	}
	if (sz)
		dst[b.len < sz ? b.len : sz - 1] = '\0';
	return b.len;
}

/* Prints "<prefix><msg>" and a newline on stderr; wrapped to the
 * terminal's width, continuation lines under the text, when stderr is a
 * terminal. Lock held by the caller. */
static void put_message(const char *prefix, const char *msg)
{
	if (!isatty(STDERR_FILENO)) {
		fprintf(stderr, "%s%s\n", prefix, msg);
		return;
	}
	int width = ml_term_width(STDERR_FILENO);
	int used = (int)strlen(prefix);
	size_t n = ml_wrap(NULL, 0, msg, width, used, used);
	char *w = malloc(n + 1);
	if (w)
		ml_wrap(w, n + 1, msg, width, used, used);
	fprintf(stderr, "%s%s\n", prefix, w ? w : msg);
	free(w);
}

void ml_warn(const char *fmt, ...)
{
	if (ml_out_get()->verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	ml_out_lock();
	put_message("warning: ", n >= 0 && msg ? msg : fmt);
	fflush(stderr);
	ml_out_unlock();
	if (n >= 0)
		free(msg);
}

void ml_report_error(const ml_err *err)
{
	ml_out_lock();
	put_message("error: ", err->msg[0] ? err->msg : ml_strerror(err->code));
	if (err->hint[0])
		put_message("hint: ", err->hint);
	fflush(stderr);
	ml_out_unlock();
}

int ml_out_json(const struct cJSON *doc)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return ML_ENOMEM;
	int rc = (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF) ? ML_EIO : 0;
	cJSON_free(text);
	return rc;
}

int ml_out_finish(void)
{
	int rc = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = ML_EIO;
	if (fclose(stdout) != 0 && errno != EBADF)
		rc = ML_EIO;
	return rc;
}
