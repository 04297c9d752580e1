/*
 * internal.h - what the detect stage's probes share: finding or adding a
 * GPU record by PCI bus id, appending probe records (machine.c), the probe
 * entry points that detect.c runs in order, and the tables the probes read
 * (PCI ids, driver branches, precision rules).
 */
#ifndef MLSETUP_DETECT_INTERNAL_H
#define MLSETUP_DETECT_INTERNAL_H

#include "mlsetup/detect.h"

/* --- the machine record's builders (machine.c) ----------------------------- */

/* Returns the GPU with this bus id (normalized here), or appends a new
 * one, recording `source` as where it was first seen. When bus_id is NULL
 * or unparsable, the GPU at position `index` is used or added. Returns
 * NULL only on allocation failure. */
ml_gpu *ml_machine_gpu(ml_machine *m, const char *bus_id, int index, const char *source);

/* Appends a probe record with a printf-style detail. Returns 0 or ML_ENOMEM. */
int ml_machine_probe(ml_machine *m, const char *source, ml_probe_status st, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Copies src into dst only when dst is still empty ("first source wins"). */
void ml_fill_str(char *dst, size_t dstsz, const char *src);

/* --- the probes (detect.c runs them in order) ------------------------------ */

/* The machine probe (OS, libc, CPU, memory, disk); records no probe entry. */
int ml_probe_os(ml_machine *m, const ml_detect_opts *o);
/* GPU probes: each fills what it can into m and appends exactly one probe
 * record. They return 0 or ML_ENOMEM; every other problem is recorded. */
int ml_probe_nvml(ml_machine *m, const ml_detect_opts *o);
int ml_probe_cuda(ml_machine *m, const ml_detect_opts *o);
int ml_probe_procfs(ml_machine *m, const ml_detect_opts *o);
int ml_probe_pci(ml_machine *m, const ml_detect_opts *o);
int ml_probe_smi(ml_machine *m, const ml_detect_opts *o);

#ifdef _WIN32
/* Windows (src/detect/os_windows.c): the machine probe that replaces
 * /proc, /etc and uname (ml_probe_os() calls it), and the PCI probe over
 * SetupAPI's display adapters (ml_probe_pci() calls it). Same contracts
 * as the probes they stand in for. */
int ml_probe_os_windows(ml_machine *m, const ml_detect_opts *o);
int ml_probe_pci_windows(ml_machine *m, const ml_detect_opts *o);
#endif

/* A row of the PCI id table (src/detect/pci_ids.c). */
typedef struct ml_pci_gpu {
	uint16_t device_id; /* PCI device id (vendor 0x10de) */
	const char *name;   /* marketing name, "NVIDIA GeForce RTX 5090" */
	uint8_t cc_major, cc_minor;
} ml_pci_gpu;

/* One rule of the precision table: `feature` holds from compute capability
 * major.minor on. feature is "bf16", "tf32", "fp8", "fp4",
 * "flash_attention_2", or "dtype:<name>" for the recommended dtype (the
 * newest rule a GPU meets wins). Static strings. */
typedef struct ml_precision_rule {
	const char *feature;
	int major, minor;
	const char *source; /* where the rule comes from */
} ml_precision_rule;

/* --- used only inside src/detect (moved from mlsetup/detect.h) ------------- */

/* Parses the driver version out of /proc/driver/nvidia/version text: the
 * first dotted number after "Kernel Module" (proprietary and open module
 * lines). Returns 0 or ML_EPARSE. */
int ml_parse_nvrm_version(char *dst, size_t dstsz, const char *text);

/* Normalizes a PCI bus id ("00000000:01:00.0", "0000:01:00.0", "01:00.0")
 * to lower-case "dddd:bb:dd.f" (machine.c). Returns 0 or ML_EPARSE. */
int ml_pci_bus_id_normalize(char *dst, size_t dstsz, const char *in);

/* Looks a PCI device id up in the built-in table of NVIDIA GPUs (Turing
 * and newer plus common data-center parts). Returns a static entry or NULL. */
const ml_pci_gpu *ml_pci_lookup(uint16_t device_id);

/* Sets *out to the whole table (sorted by device_id, no duplicates) and
 * returns its length. Static data. */
size_t ml_pci_table(const ml_pci_gpu **out);

/* Sets *out to the precision rules (in table order) and returns how many
 * there are. Static data. */
size_t ml_precision_rules(const ml_precision_rule **out);

#endif
