/*
 * detect.c - runs the detect stage: the machine probe, then the GPU probe
 * chain (NVML, CUDA driver API, procfs, PCI scan, nvidia-smi), each run
 * only while some GPU or driver fact is still unknown. The result is one
 * ml_machine with a probe record for every probe, run or skipped.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void ml_fill_str(char *dst, size_t dstsz, const char *src)
{
	if (!dst[0] && src && *src)
		ml_strlcpy(dst, src, dstsz);
}

int ml_machine_probe(ml_machine *m, const char *source, ml_probe_status st, const char *fmt, ...)
{
	ml_probe *p = realloc(m->probes, (m->n_probes + 1) * sizeof(*p));
	if (!p)
		return ML_ENOMEM;
	m->probes = p;
	p = &m->probes[m->n_probes++];
	memset(p, 0, sizeof(*p));
	ml_strlcpy(p->source, source, sizeof(p->source));
	p->status = st;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	return 0;
}

ml_gpu *ml_machine_gpu(ml_machine *m, const char *bus_id, int index, const char *source)
{
	char norm[32] = "";
	if (bus_id && ml_pci_bus_id_normalize(norm, sizeof(norm), bus_id) != 0)
		norm[0] = '\0';
	for (size_t i = 0; i < m->n_gpus; i++) {
		ml_gpu *g = &m->gpus[i];
		if (norm[0] ? strcmp(g->pci_bus_id, norm) == 0
		            : (!g->pci_bus_id[0] && g->index == index))
			return g;
	}
	ml_gpu *gs = realloc(m->gpus, (m->n_gpus + 1) * sizeof(*gs));
	if (!gs)
		return NULL;
	m->gpus = gs;
	ml_gpu *g = &m->gpus[m->n_gpus];
	memset(g, 0, sizeof(*g));
	g->index = index >= 0 ? index : (int)m->n_gpus;
	g->cc_major = g->cc_minor = -1;
	ml_strlcpy(g->pci_bus_id, norm, sizeof(g->pci_bus_id));
	ml_strlcpy(g->source, source, sizeof(g->source));
	m->n_gpus++;
	return g;
}

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

void ml_machine_free(ml_machine *m)
{
	if (!m)
		return;
	free(m->gpus);
	free(m->probes);
	free(m);
}

/* Parses 1..maxd hex digits at *p into *out, advancing *p. */
static bool hex_field(const char **p, unsigned maxd, unsigned *out)
{
	unsigned v = 0, n = 0;
	for (; n < maxd && isxdigit((unsigned char)**p); n++, (*p)++)
		v = v * 16 + (unsigned)(isdigit((unsigned char)**p)
		                                ? **p - '0'
		                                : (tolower((unsigned char)**p) - 'a' + 10));
	*out = v;
	return n > 0 && !isxdigit((unsigned char)**p);
}

int ml_pci_bus_id_normalize(char *dst, size_t dstsz, const char *in)
{
	/* [domain:]bus:device.function, domain up to 8 hex digits (NVML pads
	 * to 8, sysfs uses 4), bus 2, device 2 (< 0x20), function 0-7. */
	unsigned f[4] = {0, 0, 0, 0};
	if (!in)
		return ML_EPARSE;
	int colons = 0;
	for (const char *c = in; *c; c++)
		colons += *c == ':';
	const char *p = in;
	unsigned i = colons == 2 ? 0 : 1;
	if (colons != 1 && colons != 2)
		return ML_EPARSE;
	for (; i < 4; i++) {
		static const unsigned width[4] = {8, 2, 2, 1};
		static const char sep[4] = {':', ':', '.', '\0'};
		if (!hex_field(&p, width[i], &f[i]) || *p != sep[i])
			return ML_EPARSE;
		if (sep[i])
			p++;
	}
	if (f[0] > 0xffff || f[2] > 0x1f || f[3] > 7)
		return ML_EPARSE;
	int n = snprintf(dst, dstsz, "%04x:%02x:%02x.%x", f[0], f[1], f[2], f[3]);
	return (n < 0 || (size_t)n >= dstsz) ? ML_EPARSE : 0;
}
