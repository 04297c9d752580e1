/*
 * platform.c - planning for another machine (`mlsetup download
 * --platform OS-ARCH`): the detected machine is made to describe the other
 * platform, so the plan picks that platform's wheels by the usual PEP 425 /
 * PEP 600 rules; and for other GPUs (`plan --gpu sm_70,sm_120 --driver
 * 550.54.15`: a cluster's login node planning for its compute nodes), so
 * that selection and the torch choice judge those GPUs and that driver.
 */
#include <stdio.h>
#include <stdlib.h>
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

int ml_plan_set_gpus(ml_machine *m, const char *gpus, const char *driver, ml_err *err)
{
	if (driver) {
		size_t n = strlen(driver);
		if (!n || n >= sizeof(m->driver.version) || strspn(driver, "0123456789.") != n ||
		    driver[0] == '.' || !ml_driver_cuda_version(driver))
			return ml_err_set(err, ML_EUSAGE,
			                  "--driver takes an NVIDIA driver version (550.54.15, "
			                  "595.45.04), not '%s'",
			                  driver);
	}
	ml_gpu *v = NULL;
	size_t n = 0;
	if (gpus && strcmp(gpus, "none") != 0) {
		const char *p = gpus;
		while (*p) {
			size_t l = strcspn(p, ",");
			char one[16];
			ml_cuda_arch a;
			if (l >= sizeof(one)) {
				free(v);
				return ml_err_set(err, ML_EUSAGE,
				                  "--gpu: '%.*s' is no compute capability", (int)l,
				                  p);
			}
			memcpy(one, p, l);
			one[l] = '\0';
			ml_gpu *w = realloc(v, (n + 1) * sizeof(*w));
			if (!w) {
				free(v);
				return ml_err_set(err, ML_ENOMEM, "out of memory");
			}
			v = w;
			if (ml_cuda_device_parse(&a, one) != 0) {
				free(v);
				return ml_err_set(
				        err, ML_EUSAGE,
				        "--gpu takes compute capabilities (sm_70,sm_120 or "
				        "7.0,12.0), or none; not '%s'",
				        one);
			}
			ml_gpu *g = &v[n];
			memset(g, 0, sizeof(*g));
			g->index = (int)n++;
			g->cc_major = a.major;
			g->cc_minor = a.minor;
			snprintf(g->name, sizeof(g->name), "GPU given with --gpu");
			ml_strlcpy(g->architecture, ml_cc_architecture(a.major, a.minor),
			           sizeof(g->architecture));
			ml_strlcpy(g->source, "--gpu", sizeof(g->source));
			p += l;
			if (*p == ',')
				p++;
		}
	}
	if (gpus) {
		free(m->gpus);
		m->gpus = v;
		m->n_gpus = n;
	}
	if (driver) {
		ml_strlcpy(m->driver.version, driver, sizeof(m->driver.version));
		m->driver.cuda_version = ml_driver_cuda_version(driver);
		ml_strlcpy(m->driver.source, "--driver", sizeof(m->driver.source));
		ml_strlcpy(m->driver.cuda_source, "driver-table", sizeof(m->driver.cuda_source));
	}
	return 0;
}
