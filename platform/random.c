/*
 * random.c - random names for temporary files and directories
 * (ml_random_hex), on every platform, and on Windows the random bytes
 * under them (ml_os_random over BCryptGenRandom; Linux's, the getrandom(2)
 * system call or /dev/urandom, stays with the other raw system calls in
 * platform/linux/os.c). It is the bottom of the platform layer and calls
 * nothing of mlsetup's, so that the Windows compatibility layer
 * (platform/windows/compat.c: mkdtemp, mkstemp) can name its files with
 * it as every stage does. Contracts in core.h.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <bcrypt.h>
#endif
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "mlsetup/core.h"

#ifdef _WIN32
int ml_os_random(void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n > 0) {
		ULONG chunk = n > 0x10000000 ? 0x10000000 : (ULONG)n;
		if (BCryptGenRandom(NULL, p, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
			return -EIO;
		p += chunk;
		n -= chunk;
	}
	return 0;
}
#endif

void ml_random_hex(char *dst, size_t nbytes)
{
	static const char hx[] = "0123456789abcdef";
	uint8_t r[16];
	if (nbytes > sizeof r)
		nbytes = sizeof r;
	if (ml_os_random(r, nbytes) != 0) { /* time and pid are enough for names */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		             ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)dst;
		for (size_t i = 0; i < nbytes; i++, x = x * 6364136223846793005u + 1)
			r[i] = (uint8_t)(x >> 56);
	}
	for (size_t i = 0; i < nbytes; i++) {
		dst[2 * i] = hx[r[i] >> 4];
		dst[2 * i + 1] = hx[r[i] & 15];
	}
	dst[2 * nbytes] = '\0';
}
