/*
 * live.c - the live status line (out.h, "live status"): what runs now and
 * for how long, at the bottom of a terminal. The text of the running tasks
 * is kept here; a thread started with the first task redraws the line ten
 * times a second so that its seconds move while the work blocks (a smoke
 * test, a download), and every other writer to the terminal takes the
 * output lock, which erases the line first (live.h). Off a terminal this
 * file draws nothing; the front end prints plain lines with
 * ml_live_print().
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "mlsetup/out.h"

#define MAX_DEPTH 4
#define PERIOD_S  0.1 /* at most 10 redraws a second (curl's rate) */

struct task {
	char text[256];
	double t0; /* monotonic seconds when it began */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;
static bool g_cv_ready;
static pthread_t g_thread;
static bool g_thread_on, g_stop;
static ml_live_mode g_mode = ML_LIVE_SILENT;
static struct task g_tasks[MAX_DEPTH];
static int g_depth;     /* tasks running; may exceed MAX_DEPTH */
static bool g_drawn;    /* the live line is on the screen */
static int g_suspended; /* terminal progress displays drawn now */
static double g_last;   /* when the line was last drawn */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The terminal's real width: the live line must never wrap, or erasing it
 * would leave its first row behind ($COLUMNS may be stale). */
static int tty_width(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* Bytes of s that hold its first `cols` UTF-8 code points. */
static size_t prefix_bytes(const char *s, size_t cols)
{
	size_t i = 0, n = 0;
	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == cols)
			break;
	}
	return i;
}

static void erase_locked(void)
{
	if (!g_drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	g_drawn = false;
}

/* "OUTER: INNER... 12.3 s", cut to the terminal's width less one column. */
static void draw_locked(void)
{
	if (g_mode != ML_LIVE_TTY || g_depth == 0 || g_suspended)
		return;
	double t = now_s();
	if (t - g_last < PERIOD_S)
		return;
	int shown = g_depth < MAX_DEPTH ? g_depth : MAX_DEPTH;
	const struct task *outer = &g_tasks[0], *inner = &g_tasks[shown - 1];
	char line[640];
	if (shown > 1)
		snprintf(line, sizeof(line), "%s: %s... %.1f s", outer->text, inner->text,
		         t - inner->t0);
	else
		snprintf(line, sizeof(line), "%s... %.1f s", outer->text, t - outer->t0);
	size_t n = prefix_bytes(line, (size_t)tty_width() - 1);
	fprintf(stderr, "\r%.*s\033[K", (int)n, line);
	fflush(stderr);
	g_drawn = true;
	g_last = t;
}

void ml_out_lock(void)
{
	pthread_mutex_lock(&g_mu);
	erase_locked();
}

void ml_out_unlock(void)
{
	draw_locked();
	pthread_mutex_unlock(&g_mu);
}

void ml_live_suspend(bool on)
{
	pthread_mutex_lock(&g_mu);
	if (on) {
		erase_locked();
		g_suspended++;
	} else if (g_suspended > 0) {
		g_suspended--;
		draw_locked();
	}
	pthread_mutex_unlock(&g_mu);
}

ml_live_mode ml_live_start(bool enabled)
{
	const ml_out_opts *o = ml_out_get();
	const char *term = getenv("TERM");
	ml_live_mode m = ML_LIVE_SILENT;
	if (enabled && !o->json && o->verbosity >= 0)
		m = isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0) ? ML_LIVE_TTY
		                                                                  : ML_LIVE_PLAIN;
	pthread_mutex_lock(&g_mu);
	g_mode = m;
	pthread_mutex_unlock(&g_mu);
	return m;
}

ml_live_mode ml_live_mode_now(void)
{
	/* Without the lock: out.c asks while holding it. The mode is set
	 * once, by ml_live_start(), before any task runs. */
	return g_mode;
}

/* Redraws the line every PERIOD_S while tasks run, until ml_live_stop(). */
static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_mu);
	while (!g_stop) {
		draw_locked();
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)(PERIOD_S * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g_cv, &g_mu, &ts);
	}
	pthread_mutex_unlock(&g_mu);
	return NULL;
}

/* Starts the thread at the first task on a terminal (lock held). Without
 * one (no memory, no threads) the line is still drawn at every change. */
static void start_ticker_locked(void)
{
	if (g_thread_on || g_mode != ML_LIVE_TTY)
		return;
	if (!g_cv_ready) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (pthread_cond_init(&g_cv, &ca) != 0) {
			pthread_condattr_destroy(&ca);
			return;
		}
		pthread_condattr_destroy(&ca);
		g_cv_ready = true;
	}
	g_stop = false;
	g_thread_on = pthread_create(&g_thread, NULL, ticker, NULL) == 0;
}

void ml_live_begin(const char *text)
{
	pthread_mutex_lock(&g_mu);
	if (g_depth < MAX_DEPTH) {
		struct task *t = &g_tasks[g_depth];
		snprintf(t->text, sizeof(t->text), "%s", text ? text : "");
		t->t0 = now_s();
	}
	g_depth++;
	start_ticker_locked();
	draw_locked();
	pthread_mutex_unlock(&g_mu);
}

void ml_live_text(const char *text)
{
	pthread_mutex_lock(&g_mu);
	if (g_depth > 0 && g_depth <= MAX_DEPTH)
		snprintf(g_tasks[g_depth - 1].text, sizeof(g_tasks[0].text), "%s",
		         text ? text : "");
	draw_locked();
	pthread_mutex_unlock(&g_mu);
}

double ml_live_end(void)
{
	pthread_mutex_lock(&g_mu);
	double secs = 0;
	if (g_depth > 0) {
		g_depth--;
		if (g_depth < MAX_DEPTH)
			secs = now_s() - g_tasks[g_depth].t0;
	}
	if (g_depth == 0)
		erase_locked();
	draw_locked();
	pthread_mutex_unlock(&g_mu);
	return secs;
}

void ml_live_print(const char *fmt, ...)
{
	pthread_mutex_lock(&g_mu);
	if (g_mode != ML_LIVE_SILENT) {
		erase_locked();
		va_list ap;
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
		fflush(stderr);
		draw_locked();
	}
	pthread_mutex_unlock(&g_mu);
}

void ml_live_stop(void)
{
	pthread_mutex_lock(&g_mu);
	bool join = g_thread_on;
	g_stop = true;
	if (g_cv_ready)
		pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_mu);
	if (join)
		pthread_join(g_thread, NULL);
	pthread_mutex_lock(&g_mu);
	g_thread_on = false;
	g_depth = 0;
	erase_locked();
	pthread_mutex_unlock(&g_mu);
}
