/*
 * detect.c - runs the detect stage: the machine probe, then the GPU probe
 * chain (NVML, CUDA driver API, procfs, PCI scan, nvidia-smi), each run
 * only while some GPU or driver fact is still unknown. The result is one
 * ml_machine with a probe record for every probe, run or skipped (the
 * record's builders, which every probe uses too: machine.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* True when nothing the later probes could add is missing. */
static bool gpu_facts_complete(const ml_machine *m)
{
	if (!m->driver.version[0] || !m->driver.cuda_version || m->n_gpus == 0)
		return false;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		if (!g->name[0] || g->cc_major < 0 || !g->memory_mib || !g->pci_bus_id[0] ||
		    !g->pci_device_id || !g->uuid[0])
			return false;
	}
	return true;
}

static int cmp_gpu_bus(const void *a, const void *b)
{
	const ml_gpu *x = a, *y = b;
	if (!x->pci_bus_id[0] || !y->pci_bus_id[0])
		return x->index - y->index;
	return strcmp(x->pci_bus_id, y->pci_bus_id);
}

/* Fills what is derivable from facts already known: architecture from the
 * compute capability, compute capability and name from the PCI id table,
 * the CUDA version from the driver branch. */
static void derive_facts(ml_machine *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		ml_gpu *g = &m->gpus[i];
		const ml_pci_gpu *pg =
		        g->pci_device_id ? ml_pci_lookup((uint16_t)g->pci_device_id) : NULL;
		if (pg) {
			ml_fill_str(g->name, sizeof(g->name), pg->name);
			if (g->cc_major < 0) {
				g->cc_major = pg->cc_major;
				g->cc_minor = pg->cc_minor;
			}
		}
		ml_fill_str(g->architecture, sizeof(g->architecture),
		            ml_cc_architecture(g->cc_major, g->cc_minor));
	}
	if (m->driver.version[0] && !m->driver.cuda_version) {
		m->driver.cuda_version = ml_driver_cuda_version(m->driver.version);
		if (m->driver.cuda_version)
			ml_strlcpy(m->driver.cuda_source, "driver-table",
			           sizeof(m->driver.cuda_source));
	}
}

typedef int (*probe_fn)(ml_machine *, const ml_detect_opts *);

static const struct {
	const char *source;
	probe_fn run;
} gpu_probes[] = {
        {"nvml", ml_probe_nvml}, {"cuda", ml_probe_cuda},      {"procfs", ml_probe_procfs},
        {"pci", ml_probe_pci},   {"nvidia-smi", ml_probe_smi},
};

int ml_detect(ml_machine **out, const ml_detect_opts *opts, ml_err *err)
{
	ml_detect_opts defaults = ML_DETECT_OPTS_INIT;
	const ml_detect_opts *o = opts ? opts : &defaults;
	ml_machine *m = calloc(1, sizeof(*m));
	if (!m)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = ml_probe_os(m, o);
	for (size_t i = 0; !rc && i < sizeof(gpu_probes) / sizeof(gpu_probes[0]); i++) {
		derive_facts(m);
		if (gpu_facts_complete(m))
			rc = ml_machine_probe(m, gpu_probes[i].source, ML_PROBE_SKIPPED,
			                      "not needed: every fact is known");
		else if (o->no_smi && gpu_probes[i].run == ml_probe_smi)
			rc = ml_machine_probe(m, gpu_probes[i].source, ML_PROBE_SKIPPED,
			                      "disabled");
		else
			rc = gpu_probes[i].run(m, o);
	}
	if (rc) {
		ml_machine_free(m);
		return ml_err_set(err, ML_ENOMEM, "out of memory during detection");
	}
	derive_facts(m);
	if (m->n_gpus > 1)
		qsort(m->gpus, m->n_gpus, sizeof(*m->gpus), cmp_gpu_bus);
	for (size_t i = 0; i < m->n_gpus; i++)
		m->gpus[i].index = (int)i;
	*out = m;
	return 0;
}
