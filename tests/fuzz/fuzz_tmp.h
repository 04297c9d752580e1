/*
 * fuzz_tmp.h - where the fuzz targets that write files (fuzz_entry_check,
 * fuzz_unzip, fuzz_wheel, fuzz_pylock) make their per-process directory:
 * $TMPDIR when set, else /dev/shm when it is writable (a memory file
 * system: each execution creates and removes files, several times faster
 * there than on a disk's file system), else /tmp.
 */
#ifndef MLSETUP_FUZZ_TMP_H
#define MLSETUP_FUZZ_TMP_H

#include <stdlib.h>
#include <unistd.h>

/* The directory to work under; static, never NULL. */
static inline const char *fuzz_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	if (t && *t)
		return t;
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

#endif
