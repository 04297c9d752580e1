/*
 * smi.c - probe 5, the last resort: nvidia-smi --query-gpu=... in CSV. Used
 * when the libraries could not be loaded from this process (for instance a
 * 32-bit/64-bit mismatch or an unusual install location that only the
 * tool's own RPATH finds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SMI_QUERY                                                                                  \
	"--query-gpu=index,name,compute_cap,memory.total,pci.bus_id,pci.device_id,uuid,"           \
	"driver_version"

enum { F_INDEX, F_NAME, F_CC, F_MEM, F_BUS, F_DEVID, F_UUID, F_DRIVER, F_COUNT };

/* Splits a CSV line on ", " into at most F_COUNT trimmed fields. */
static int split_fields(char *line, char **f)
{
	int n = 0;
	char *p = line;
	while (n < F_COUNT) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		f[n++] = ml_strtrim(p);
		if (!comma)
			break;
		p = comma + 1;
	}
	return n;
}

static bool field_known(const char *s)
{
	return s[0] && s[0] != '[' && strcmp(s, "N/A") != 0;
}

int ml_probe_smi(ml_machine *m, const ml_detect_opts *o)
{
	(void)o;
	const char *argv[] = {"nvidia-smi", SMI_QUERY, "--format=csv,noheader,nounits", NULL};
	char *text = NULL;
	int status = 0;
	ml_err err = ML_ERR_INIT;
	if (ml_os_run_capture(&text, &status, argv, 256 * 1024, 15, &err) != 0)
		return ml_machine_probe(m, "nvidia-smi", ML_PROBE_FAILED, "%s", err.msg);
	if (status != 0) {
		char first[200] = "";
		sscanf(text, "%199[^\n]", first);
		free(text);
		return ml_machine_probe(m, "nvidia-smi", ML_PROBE_FAILED,
		                        "exited with status %d%s%s", status, first[0] ? ": " : "",
		                        first);
	}
	int rc = 0, found = 0, bad = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[F_COUNT];
		if (split_fields(line, f) != F_COUNT || !field_known(f[F_INDEX])) {
			bad++;
			continue;
		}
		int index = atoi(f[F_INDEX]);
		ml_gpu *g = ml_machine_gpu(m, field_known(f[F_BUS]) ? f[F_BUS] : NULL, index,
		                           "nvidia-smi");
		if (!g) {
			rc = ML_ENOMEM;
			break;
		}
		found++;
		if (field_known(f[F_NAME]))
			ml_fill_str(g->name, sizeof(g->name), f[F_NAME]);
		int major, minor;
		if (g->cc_major < 0 && sscanf(f[F_CC], "%d.%d", &major, &minor) == 2 &&
		    major >= 0 && minor >= 0) {
			g->cc_major = major;
			g->cc_minor = minor;
		}
		if (!g->memory_mib && field_known(f[F_MEM]))
			g->memory_mib = strtoull(f[F_MEM], NULL, 10);
		unsigned long id = field_known(f[F_DEVID]) ? strtoul(f[F_DEVID], NULL, 16) : 0;
		if (!g->pci_device_id && (id & 0xffff) == 0x10de)
			g->pci_device_id = (uint32_t)(id >> 16);
		if (field_known(f[F_UUID]))
			ml_fill_str(g->uuid, sizeof(g->uuid), f[F_UUID]);
		if (field_known(f[F_DRIVER]) && !m->driver.version[0]) {
			ml_strlcpy(m->driver.version, f[F_DRIVER], sizeof(m->driver.version));
			ml_strlcpy(m->driver.source, "nvidia-smi", sizeof(m->driver.source));
		}
	}
	free(text);
	if (rc)
		return rc;
	return ml_machine_probe(m, "nvidia-smi", found ? ML_PROBE_OK : ML_PROBE_FAILED,
	                        "%d GPU%s listed%s", found, found == 1 ? "" : "s",
	                        bad ? ", some lines malformed" : "");
}
