/*
 * machine.c - builds the ml_machine record every probe fills: finding or
 * adding a GPU by its PCI bus id (normalized here), appending probe
 * records, "first source wins" strings, and freeing the record. The probes
 * (os_info.c, os_windows.c, nvml.c, cuda.c, procfs.c, pci.c, smi.c) and
 * detect.c, which runs them, use it; it uses none of them.
 */
#include <ctype.h>
#include <stdarg.h>
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
