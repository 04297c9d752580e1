/*
 * internal.h - what the detect stage's probes share: finding or adding a
 * GPU record by PCI bus id, appending probe records, and the probe entry
 * points that detect.c runs in order.
 */
#ifndef MLSETUP_DETECT_INTERNAL_H
#define MLSETUP_DETECT_INTERNAL_H

#include "mlsetup/detect.h"

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

/* The machine probe (OS, libc, CPU, memory, disk); records no probe entry. */
int ml_probe_os(ml_machine *m, const ml_detect_opts *o);
/* GPU probes: each fills what it can into m and appends exactly one probe
 * record. They return 0 or ML_ENOMEM; every other problem is recorded. */
int ml_probe_nvml(ml_machine *m, const ml_detect_opts *o);
int ml_probe_cuda(ml_machine *m, const ml_detect_opts *o);
int ml_probe_procfs(ml_machine *m, const ml_detect_opts *o);
int ml_probe_pci(ml_machine *m, const ml_detect_opts *o);
int ml_probe_smi(ml_machine *m, const ml_detect_opts *o);

#endif
