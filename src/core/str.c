/*
 * str.c - growable byte buffers and the few string helpers C lacks,
 * ml_pathf() (snprintf for paths) among them. It uses nothing but the C
 * library, so the platform layer (platform/) can use it too.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/core.h"

static int buf_grow(ml_buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len - 1)
		return ML_ENOMEM;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return ML_ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int ml_buf_add(ml_buf *b, const void *data, size_t n)
{
	if (buf_grow(b, n))
		return ML_ENOMEM;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int ml_buf_puts(ml_buf *b, const char *s)
{
	return ml_buf_add(b, s, strlen(s));
}

int ml_buf_printf(ml_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_grow(b, (size_t)n))
		return ML_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *ml_buf_cstr(const ml_buf *b)
{
	return b->data ? b->data : "";
}

char *ml_buf_detach(ml_buf *b)
{
	char *p = b->data ? b->data : strdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void ml_buf_release(ml_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

size_t ml_strlcpy(char *dst, const char *src, size_t dstsz)
{
	size_t n = strlen(src);
	if (dstsz) {
		size_t c = n < dstsz - 1 ? n : dstsz - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

char *ml_strtrim(char *s)
{
	char *start = s;
	while (*start && isspace((unsigned char)*start))
		start++;
	size_t n = strlen(start);
	while (n && isspace((unsigned char)start[n - 1]))
		n--;
	memmove(s, start, n);
	s[n] = '\0';
	return s;
}

bool ml_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

char *ml_asprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = malloc((size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

char *ml_pep503_normalize(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '-' || c == '_' || c == '.') {
			if (j == 0 || d[j - 1] != '-')
				d[j++] = '-';
		} else {
			d[j++] = (char)tolower((unsigned char)c);
		}
	}
	d[j] = '\0';
	return d;
}

int ml_pathf(char *dst, size_t dstsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(dst, dstsz, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= dstsz) ? ML_EFAIL : 0;
}
