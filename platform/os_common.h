/*
 * os_common.h - what platform/linux/os.c and platform/windows/os.c share
 * (platform/os_common.c); only those two include it.
 */
#ifndef MLSETUP_PLATFORM_OS_COMMON_H
#define MLSETUP_PLATFORM_OS_COMMON_H

#include "mlsetup/core.h"

/* A child's output cut into lines for an ml_os_line_fn. */
struct ml_os_lines {
	ml_os_line_fn fn; /* NULL: lines are not wanted */
	void *data;
	char line[1024];
	size_t len;
	int restart_s; /* the last positive answer of fn not yet acted on, else 0 */
};

/* Feeds n bytes of a child's output: calls l->fn for each line completed
 * by a '\n', without it or a '\r' before it (CR LF from Windows' text
 * mode), cut to 1023 bytes. A last line without '\n' is sent by feeding
 * "\n". A positive answer of l->fn is kept in l->restart_s for the caller
 * to restart its deadline with. */
void ml_os_lines_feed(struct ml_os_lines *l, const char *chunk, size_t n);

#endif
