/*
 * progress.c - draws progress for the front end: on a terminal, one line
 * per active transfer and a total bar, redrawn in place at most ten times
 * a second and erased at the end; elsewhere a plain line every few
 * seconds; nothing with -q, --json or --no-progress. Stages never draw:
 * they report through callbacks and the command turns those into
 * ml_progress_state (docs/ARCHITECTURE.md: stages never print). While a terminal
 * display is up, the live status line (live.c) steps aside.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "mlsetup/out.h"

#define TTY_PERIOD_S   0.1
#define PLAIN_PERIOD_S 5.0
#define MAX_LINES      8

typedef enum mode { MODE_SILENT, MODE_TTY, MODE_PLAIN } mode;

struct ml_progress {
	mode mode;
	int drawn;       /* lines on screen now (terminal) */
	double last;     /* monotonic seconds of the last draw */
	bool notes_only; /* silent display that still shows notes */
	bool is_static;  /* the fallback display used when out of memory */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int term_width(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* "12.3 MiB" style: bytes in B, KiB, MiB or GiB. */
static void human_bytes(char *dst, size_t sz, double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;
	while (b >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		b /= 1024;
		u++;
	}
	snprintf(dst, sz, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

static void bar(char *dst, size_t width, double frac)
{
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	size_t fill = (size_t)(frac * (double)width + 0.5);
	for (size_t i = 0; i < width; i++)
		dst[i] = i < fill ? '#' : '-';
	dst[width] = '\0';
}

ml_progress *ml_progress_new(bool enabled)
{
	static ml_progress silent = {MODE_SILENT, 0, 0, false, true};
	const ml_out_opts *o = ml_out_get();
	ml_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return &silent;
	if (o->verbosity < 0) {
		p->mode = MODE_SILENT;
	} else if (!enabled || o->json) {
		p->mode = MODE_SILENT;
		p->notes_only = true;
	} else {
		const char *term = getenv("TERM");
		p->mode = isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0)
		                  ? MODE_TTY
		                  : MODE_PLAIN;
	}
	if (p->mode == MODE_TTY)
		ml_live_suspend(true);
	p->last = now_s();
	return p;
}

/* Moves the cursor to the first drawn line and erases from there down. */
static void erase(ml_progress *p)
{
	if (p->drawn > 0)
		fprintf(stderr, "\r\033[%dA\033[J", p->drawn);
	p->drawn = 0;
}

/* Writes text cut to width-1 columns (so the terminal never wraps it),
 * then a newline. Counts bytes, which is exact for the ASCII we draw and
 * errs on the short side for UTF-8 labels. */
static void put_line(const char *text, int width)
{
	fprintf(stderr, "%.*s\n", width - 1, text);
}

/* One line: "<head> [bar] <tail>", the bar filling what the terminal
 * width leaves (at least 10 columns). */
static void put_bar_line(const char *head, double frac, const char *tail, int width)
{
	char line[1024], bb[256];
	int room = width - 1 - (int)strlen(head) - (int)strlen(tail) - 4;
	if (room > 40)
		room = 40;
	if (room < 10)
		room = 10;
	bar(bb, (size_t)room, frac);
	snprintf(line, sizeof(line), "%s [%s] %s", head, bb, tail);
	put_line(line, width);
}

static void draw_tty(ml_progress *p, const ml_progress_state *s)
{
	int width = term_width();
	char head[256], tail[256], a[32], b[32], r[32], eta[32];
	erase(p);
	size_t shown = s->n_lines < MAX_LINES ? s->n_lines : MAX_LINES;
	int lw = width / 2 - 2;
	if (lw > 60)
		lw = 60;
	for (size_t i = 0; i < shown; i++) {
		const ml_progress_line *l = &s->lines[i];
		human_bytes(a, sizeof(a), (double)l->done);
		human_bytes(b, sizeof(b), l->total > 0 ? (double)l->total : 0);
		snprintf(head, sizeof(head), "  %-*.*s", lw, lw, l->label ? l->label : "");
		if (l->attempt > 1)
			snprintf(tail, sizeof(tail), "%9s / %-9s (try %d)", a, b, l->attempt);
		else
			snprintf(tail, sizeof(tail), "%9s / %-9s", a, b);
		put_bar_line(head, l->total > 0 ? (double)l->done / (double)l->total : 0, tail,
		             width);
		p->drawn++;
	}
	if (s->n_lines > shown) {
		snprintf(head, sizeof(head), "  ... and %zu more", s->n_lines - shown);
		put_line(head, width);
		p->drawn++;
	}
	human_bytes(a, sizeof(a), (double)s->bytes_done);
	human_bytes(b, sizeof(b), (double)s->bytes_total);
	human_bytes(r, sizeof(r), s->rate);
	if (s->rate > 0 && s->bytes_total > s->bytes_done) {
		long left = (long)((double)(s->bytes_total - s->bytes_done) / s->rate + 0.5);
		snprintf(eta, sizeof(eta), "ETA %ld:%02ld", left / 60, left % 60);
	} else {
		snprintf(eta, sizeof(eta), "ETA -:--");
	}
	snprintf(head, sizeof(head), "%s %zu/%zu", s->title ? s->title : "", s->items_done,
	         s->items_total);
	snprintf(tail, sizeof(tail), "%9s / %-9s %9s/s  %s", a, b, r, eta);
	put_bar_line(head, s->bytes_total ? (double)s->bytes_done / (double)s->bytes_total : 0,
	             tail, width);
	p->drawn++;
	fflush(stderr);
}

static void draw_plain(const ml_progress_state *s)
{
	char a[32], b[32], r[32];
	human_bytes(a, sizeof(a), (double)s->bytes_done);
	human_bytes(b, sizeof(b), (double)s->bytes_total);
	human_bytes(r, sizeof(r), s->rate);
	fprintf(stderr, "%s: %zu/%zu files, %s of %s, %s/s\n", s->title ? s->title : "progress",
	        s->items_done, s->items_total, a, b, r);
	fflush(stderr);
}

void ml_progress_update(ml_progress *p, const ml_progress_state *s)
{
	if (!p || !s || p->mode == MODE_SILENT)
		return;
	double t = now_s();
	if (t - p->last < (p->mode == MODE_TTY ? TTY_PERIOD_S : PLAIN_PERIOD_S))
		return;
	p->last = t;
	ml_out_lock();
	if (p->mode == MODE_TTY)
		draw_tty(p, s);
	else
		draw_plain(s);
	ml_out_unlock();
}

void ml_progress_note(ml_progress *p, const char *text)
{
	if (!p || !text || ml_out_get()->verbosity < 0)
		return;
	if (p->mode == MODE_SILENT && !p->notes_only)
		return;
	ml_out_lock();
	if (p->mode == MODE_TTY)
		erase(p);
	fprintf(stderr, "%s\n", text);
	fflush(stderr);
	ml_out_unlock();
	if (p->mode == MODE_TTY)
		p->last = 0; /* redraw below the note at the next update */
}

void ml_progress_finish(ml_progress *p)
{
	if (!p)
		return;
	if (p->mode == MODE_TTY) {
		ml_out_lock();
		erase(p);
		fflush(stderr);
		ml_out_unlock();
		ml_live_suspend(false);
	}
	if (!p->is_static)
		free(p);
}
