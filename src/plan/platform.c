/*
 * platform.c - planning for another machine (`mlsetup download
 * --platform OS-ARCH`): the detected machine is made to describe the other
 * platform, so the plan picks that platform's wheels by the usual PEP 425 /
 * PEP 600 rules.
 */
#include <string.h>

#include "internal.h"

int ml_plan_set_platform(ml_machine *m, const char *platform, ml_err *err)
{
	char os[16], arch[16];
	const char *dash = strchr(platform, '-');
	if (!dash || (size_t)(dash - platform) >= sizeof(os) || strlen(dash + 1) >= sizeof(arch))
		goto bad;
	memcpy(os, platform, (size_t)(dash - platform));
	os[dash - platform] = '\0';
	ml_strlcpy(arch, dash + 1, sizeof(arch));
	if (strcmp(arch, "amd64") == 0)
		ml_strlcpy(arch, "x86_64", sizeof(arch));
	if (strcmp(arch, "arm64") == 0)
		ml_strlcpy(arch, "aarch64", sizeof(arch));
	if ((strcmp(os, "linux") && strcmp(os, "windows") && strcmp(os, "darwin")) ||
	    (strcmp(arch, "x86_64") && strcmp(arch, "aarch64")))
		goto bad;
	bool same = strcmp(os, m->os.name) == 0 && strcmp(arch, m->os.arch) == 0;
	ml_strlcpy(m->os.name, os, sizeof(m->os.name));
	ml_strlcpy(m->os.arch, arch, sizeof(m->os.arch));
	if (!same) {
		bool linux = strcmp(os, "linux") == 0;
		ml_strlcpy(m->os.libc_kind, linux ? "glibc" : "", sizeof(m->os.libc_kind));
		ml_strlcpy(m->os.libc_version, linux ? "2.28" : "", sizeof(m->os.libc_version));
	}
	return 0;
bad:
	return ml_err_set(err, ML_EUSAGE,
	                  "--platform takes OS-ARCH (linux, windows or darwin; x86_64 or "
	                  "aarch64), not '%s'",
	                  platform);
}
