/*
 * win_skip.h - how a unit test that only means something on Linux says so
 * when the test program is built for Windows (make check-windows runs the
 * unit tests under wine). Elsewhere these are no-ops, so the Linux tests
 * are unchanged.
 *
 *   ML_LINUX_ONLY("why"): at the top of a cmocka test: on Windows prints
 *   "# Linux only: why" and skips the test (tests/run-tests.sh takes the
 *   last "# ..." line before cmocka's SKIP as the reason).
 *   ML_LINUX_ONLY_PROGRAM("why"): for a test program that cannot be built
 *   for Windows: on Windows, its whole text is replaced by a main() that
 *   reports "1..0 # SKIP Linux only: why" (one skip). Use it as
 *     #ifdef _WIN32
 *     ML_LINUX_ONLY_PROGRAM("why")
 *     #else
 *     ...the test program...
 *     #endif
 */
#ifndef MLSETUP_TEST_WIN_SKIP_H
#define MLSETUP_TEST_WIN_SKIP_H

#include <stdio.h>

#ifdef _WIN32
#define ML_LINUX_ONLY(why)                                                                         \
	do {                                                                                       \
		printf("# Linux only: %s\n", why);                                                 \
		fflush(stdout);                                                                    \
		skip();                                                                            \
	} while (0)
#define ML_LINUX_ONLY_PROGRAM(why)                                                                 \
	int main(void)                                                                             \
	{                                                                                          \
		printf("1..0 # SKIP Linux only: %s\n", why);                                       \
		return 0;                                                                          \
	}
#else
#define ML_LINUX_ONLY(why)                                                                         \
	do {                                                                                       \
	} while (0)
#endif

#endif
