/*
 * procfs.c - probe 3: the NVIDIA kernel module's files. The driver version
 * comes from /sys/module/nvidia/version, else from the first line of
 * /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
 * Module  550.54.14 ..." or "... Open Kernel Module for x86_64  580.95.05
 * ..."); each /proc/driver/nvidia/gpus/<bus id>/information file gives a
 * GPU's model, UUID and bus location. Files are read under opts->root.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PROC_MAX (64 * 1024)

/* True when s is a driver version: digits and dots, starting with digits,
 * at least one dot ("550.54.14", "570.26"). */
static bool is_driver_version(const char *s)
{
	if (!isdigit((unsigned char)s[0]))
		return false;
	bool dot = false;
	for (; *s; s++) {
		if (*s == '.')
			dot = true;
		else if (!isdigit((unsigned char)*s))
			return false;
	}
	return dot && s[-1] != '.';
}

int ml_parse_nvrm_version(char *dst, size_t dstsz, const char *text)
{
	if (!text)
		return ML_EPARSE;
	const char *nl = strchr(text, '\n');
	size_t line_len = nl ? (size_t)(nl - text) : strlen(text);
	char line[512];
	if (line_len >= sizeof(line))
		line_len = sizeof(line) - 1;
	memcpy(line, text, line_len);
	line[line_len] = '\0';
	const char *km = strstr(line, "Kernel Module");
	if (!km)
		return ML_EPARSE;
	char *save = NULL;
	char rest[512];
	ml_strlcpy(rest, km + strlen("Kernel Module"), sizeof(rest));
	for (char *tok = strtok_r(rest, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (is_driver_version(tok)) {
			if (strlen(tok) >= dstsz)
				return ML_EPARSE;
			ml_strlcpy(dst, tok, dstsz);
			return 0;
		}
	}
	return ML_EPARSE;
}

/* Reads one gpus/<bus>/information file into a GPU record. Returns 0,
 * ML_EPARSE (recorded by the caller) or ML_ENOMEM. */
static int read_information(ml_machine *m, const char *root, const char *dir, ml_buf *note)
{
	char path[512];
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", dir);
	char *text = NULL;
	if (ml_os_read_file(&text, NULL, root, path, PROC_MAX, NULL) != 0) {
		ml_buf_printf(note, "; %s unreadable", path);
		return 0;
	}
	char model[96] = "", uuid[96] = "", bus[64] = "";
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *key = ml_strtrim(line), *val = ml_strtrim(colon + 1);
		if (strcmp(key, "Model") == 0)
			ml_strlcpy(model, val, sizeof(model));
		else if (strcmp(key, "GPU UUID") == 0)
			ml_strlcpy(uuid, val, sizeof(uuid));
		else if (strcmp(key, "Bus Location") == 0)
			ml_strlcpy(bus, val, sizeof(bus));
	}
	free(text);
	char norm[32];
	const char *bus_src = bus[0] ? bus : dir;
	if (ml_pci_bus_id_normalize(norm, sizeof(norm), bus_src) != 0 || !model[0]) {
		ml_buf_printf(note, "; %s malformed (no %s)", path,
		              !model[0] ? "Model line" : "valid Bus Location");
		return ML_EPARSE;
	}
	ml_gpu *g = ml_machine_gpu(m, norm, (int)m->n_gpus, "procfs");
	if (!g)
		return ML_ENOMEM;
	ml_fill_str(g->name, sizeof(g->name), model);
	if (ml_startswith(uuid, "GPU-"))
		ml_fill_str(g->uuid, sizeof(g->uuid), uuid);
	return 0;
}

int ml_probe_procfs(ml_machine *m, const ml_detect_opts *o)
{
#ifdef _WIN32
	return ml_machine_probe(m, "procfs", ML_PROBE_SKIPPED, "no /proc on Windows");
#endif
	ml_buf note = ML_BUF_INIT;
	char version[32] = "";
	const char *from = NULL;
	char *text = NULL;
	if (ml_os_read_file(&text, NULL, o->root, "/sys/module/nvidia/version", 256, NULL) == 0) {
		m->driver.kernel_module = true;
		char *v = ml_strtrim(text);
		if (is_driver_version(v) && strlen(v) < sizeof(version)) {
			ml_strlcpy(version, v, sizeof(version));
			from = "/sys/module/nvidia/version";
		} else {
			ml_buf_puts(&note, "; /sys/module/nvidia/version malformed");
		}
		free(text);
		text = NULL;
	}
	if (ml_os_read_file(&text, NULL, o->root, "/proc/driver/nvidia/version", PROC_MAX, NULL) ==
	    0) {
		m->driver.kernel_module = true;
		char v[32];
		if (ml_parse_nvrm_version(v, sizeof(v), text) == 0) {
			if (!version[0]) {
				ml_strlcpy(version, v, sizeof(version));
				from = "/proc/driver/nvidia/version";
			}
		} else {
			ml_buf_puts(&note, "; /proc/driver/nvidia/version malformed");
		}
		free(text);
	}
	if (version[0] && !m->driver.version[0]) {
		ml_strlcpy(m->driver.version, version, sizeof(m->driver.version));
		ml_strlcpy(m->driver.source, "procfs", sizeof(m->driver.source));
	}

	int rc = 0, found = 0;
	char dirpath[4096];
	DIR *d = NULL;
	if (ml_os_rooted(dirpath, sizeof(dirpath), o->root, "/proc/driver/nvidia/gpus") == 0)
		d = opendir(dirpath);
	if (d) {
		/* Sorted for a stable order across filesystems. */
		struct dirent **list = NULL;
		closedir(d);
		int n = scandir(dirpath, &list, NULL, alphasort);
		for (int i = 0; i < n; i++) {
			if (list[i]->d_name[0] != '.' && !rc) {
				int r = read_information(m, o->root, list[i]->d_name, &note);
				if (r == 0)
					found++;
				else if (r == ML_ENOMEM)
					rc = r;
			}
			free(list[i]);
		}
		free(list);
	}
	if (!rc) {
		if (!version[0] && !found)
			rc = ml_machine_probe(m, "procfs", ML_PROBE_FAILED,
			                      "no NVIDIA kernel module files (/sys/module/nvidia, "
			                      "/proc/driver/nvidia)%s",
			                      ml_buf_cstr(&note));
		else
			rc = ml_machine_probe(
			        m, "procfs", ML_PROBE_OK, "driver %s from %s, %d GPU%s%s",
			        version[0] ? version : "unknown", from ? from : "nowhere", found,
			        found == 1 ? "" : "s", ml_buf_cstr(&note));
	}
	ml_buf_release(&note);
	return rc;
}
