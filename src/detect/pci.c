/*
 * pci.c - probe 4: a scan of /sys/bus/pci/devices for NVIDIA display
 * controllers (vendor 0x10de, class 0x0300xx VGA or 0x0302xx 3D). It finds
 * GPUs even when no NVIDIA driver is loaded; the built-in PCI id table
 * (pci_ids.c) then gives the name and compute capability. The kernel
 * driver bound to each device (nvidia, nouveau, vfio-pci) is reported.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Reads a sysfs hex attribute ("0x10de\n"). Returns 0 or -1. */
static int read_hex(unsigned long *out, const char *root, const char *dev, const char *attr)
{
	char path[512];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	char *text = NULL;
	if (ml_os_read_file(&text, NULL, root, path, 64, NULL) != 0)
		return -1;
	char *end = NULL;
	unsigned long v = strtoul(text, &end, 16);
	int ok = end != text && (*end == '\0' || *end == '\n');
	free(text);
	if (!ok)
		return -1;
	*out = v;
	return 0;
}

/* Name of the kernel driver bound to the device, "" when none. */
static void bound_driver(char *dst, size_t dstsz, const char *root, const char *dev)
{
	char rel[512], path[PATH_MAX], target[PATH_MAX];
	dst[0] = '\0';
	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/driver", dev);
	if (ml_os_rooted(path, sizeof(path), root, rel) != 0)
		return;
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	const char *base = strrchr(target, '/');
	ml_strlcpy(dst, base ? base + 1 : target, dstsz);
}

/* Records one PCI device when it is an NVIDIA display controller.
 * Returns 0 or ML_ENOMEM; *found is incremented for each GPU added. */
static int scan_device(ml_machine *m, const char *root, const char *dev, ml_buf *note, int *found)
{
	unsigned long vendor = 0, cls = 0, devid = 0;
	if (read_hex(&vendor, root, dev, "vendor") != 0 || vendor != 0x10de ||
	    read_hex(&cls, root, dev, "class") != 0 ||
	    ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
		return 0;
	if (read_hex(&devid, root, dev, "device") != 0 || devid > 0xffff) {
		ml_buf_printf(note, "; %s: unreadable device id", dev);
		return 0;
	}
	ml_gpu *g = ml_machine_gpu(m, dev, (int)m->n_gpus, "pci");
	if (!g)
		return ML_ENOMEM;
	if (!g->pci_device_id)
		g->pci_device_id = (uint32_t)devid;
	char drv[64];
	bound_driver(drv, sizeof(drv), root, dev);
	const ml_pci_gpu *known = ml_pci_lookup((uint16_t)devid);
	ml_buf_printf(note, "; %s 10de:%04lx %s, kernel driver %s", dev, devid,
	              known ? known->name : "(not in mlsetup's PCI id table)",
	              drv[0] ? drv : "none");
	(*found)++;
	return 0;
}

int ml_probe_pci(ml_machine *m, const ml_detect_opts *o)
{
#ifdef _WIN32
	return ml_probe_pci_windows(m, o);
#endif
	char dirpath[PATH_MAX];
	struct dirent **list = NULL;
	int n = -1;
	if (ml_os_rooted(dirpath, sizeof(dirpath), o->root, "/sys/bus/pci/devices") == 0)
		n = scandir(dirpath, &list, NULL, alphasort);
	if (n < 0)
		return ml_machine_probe(m, "pci", ML_PROBE_FAILED, "cannot list %s", dirpath);
	ml_buf note = ML_BUF_INIT;
	int rc = 0, found = 0;
	for (int i = 0; i < n; i++) {
		if (!rc && list[i]->d_name[0] != '.')
			rc = scan_device(m, o->root, list[i]->d_name, &note, &found);
		free(list[i]);
	}
	free(list);
	if (!rc)
		rc = ml_machine_probe(m, "pci", found ? ML_PROBE_OK : ML_PROBE_FAILED,
		                      "%d NVIDIA display device%s%s", found, found == 1 ? "" : "s",
		                      ml_buf_cstr(&note));
	ml_buf_release(&note);
	return rc;
}
