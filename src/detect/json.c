/*
 * json.c - the detect stage's results as data for the front end: the
 * "mlsetup.detect/1" JSON document and the one-line driver advice.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

static const char *probe_status_name(ml_probe_status s)
{
	return s == ML_PROBE_OK ? "ok" : s == ML_PROBE_FAILED ? "failed" : "skipped";
}

/* Appends advice about a GPU whose PCI device id the built-in table does
 * not know and whose compute capability no probe reported: names the id
 * and the bus, so the user can look the GPU up. */
static void advise_unknown_id(char *dst, size_t dstsz, const ml_machine *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		if (g->cc_major >= 0 || !g->pci_device_id ||
		    ml_pci_lookup((uint16_t)g->pci_device_id))
			continue;
		size_t l = strlen(dst);
		snprintf(dst + l, dstsz - l,
		         "%sNVIDIA GPU with PCI id 10de:%04x at %s is not in mlsetup's table: its "
		         "compute capability is unknown until the NVIDIA driver reports it; %s",
		         l ? "; " : "", (unsigned)g->pci_device_id,
		         g->pci_bus_id[0] ? g->pci_bus_id : "an unknown bus",
		         m->driver.version[0]
		                 ? "check that nvidia-smi lists it"
		                 : "install the NVIDIA driver and run mlsetup detect again");
		return;
	}
}

bool ml_machine_driver_advice(char *dst, size_t dstsz, const ml_machine *m)
{
	dst[0] = '\0';
	const ml_gpu *worst = NULL;
	const char *need = NULL;
	bool windows = strcmp(m->os.name, "windows") == 0;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		const char *min = ml_min_driver_for_cc(g->cc_major, g->cc_minor, windows);
		if (min && (!need || ml_driver_version_cmp(min, need) > 0)) {
			need = min;
			worst = g;
		}
	}
	if (worst) {
		char sm[16];
		bool beyond = false;
		ml_cc_sm(sm, sizeof(sm), worst->cc_major, worst->cc_minor);
		ml_arch_first_toolkit(worst->cc_major, worst->cc_minor, &beyond);
		const char *name = worst->name[0] ? worst->name : "NVIDIA GPU";
		const char *arch =
		        worst->architecture[0] ? worst->architecture : "unknown architecture";
		const char *note = beyond ? " (at least: mlsetup's driver table does not know "
		                            "this GPU's architecture)"
		                          : "";
		if (!m->driver.version[0])
			snprintf(dst, dstsz,
			         "%s (%s, %s) found, no NVIDIA driver loaded: install driver %s or "
			         "newer%s",
			         name, arch, sm, need, note);
		else if (ml_driver_version_cmp(m->driver.version, need) < 0)
			snprintf(dst, dstsz,
			         "%s (%s, %s) needs driver %s or newer%s; this machine has %s: "
			         "upgrade the driver",
			         name, arch, sm, need, note, m->driver.version);
	}
	advise_unknown_id(dst, dstsz, m);
	return dst[0] != '\0';
}

static cJSON *os_json(const ml_machine *m)
{
	cJSON *os = cJSON_CreateObject();
	cJSON_AddStringToObject(os, "name", m->os.name);
	cJSON *distro = cJSON_AddObjectToObject(os, "distro");
	cJSON_AddStringToObject(distro, "id", m->os.distro_id);
	cJSON_AddStringToObject(distro, "version", m->os.distro_version);
	cJSON_AddStringToObject(distro, "pretty_name", m->os.distro_pretty);
	cJSON_AddStringToObject(os, "kernel", m->os.kernel);
	cJSON_AddStringToObject(os, "arch", m->os.arch);
	cJSON *libc = cJSON_AddObjectToObject(os, "libc");
	cJSON_AddStringToObject(libc, "kind", m->os.libc_kind);
	cJSON_AddStringToObject(libc, "version", m->os.libc_version);
	cJSON_AddBoolToObject(os, "wsl", m->os.wsl);
	cJSON_AddBoolToObject(os, "container", m->os.container);
	if (m->os.container)
		cJSON_AddStringToObject(os, "container_kind", m->os.container_kind);
	else
		cJSON_AddNullToObject(os, "container_kind");
	return os;
}

static cJSON *gpu_json(const ml_gpu *g)
{
	char cc[16], sm[16], devid[16];
	ml_cc_format(cc, sizeof(cc), g->cc_major, g->cc_minor);
	ml_cc_sm(sm, sizeof(sm), g->cc_major, g->cc_minor);
	snprintf(devid, sizeof(devid), "0x%04x", g->pci_device_id);
	cJSON *j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "index", g->index);
	cJSON_AddStringToObject(j, "name", g->name);
	cJSON_AddStringToObject(j, "compute_capability", cc);
	cJSON_AddStringToObject(j, "sm", sm);
	cJSON_AddStringToObject(j, "architecture", g->architecture);
	cJSON_AddNumberToObject(j, "memory_mib", (double)g->memory_mib);
	cJSON_AddStringToObject(j, "pci_bus_id", g->pci_bus_id);
	cJSON_AddStringToObject(j, "pci_device_id", g->pci_device_id ? devid : "");
	cJSON_AddStringToObject(j, "uuid", g->uuid);
	cJSON_AddStringToObject(j, "source", g->source);
	if (g->driver_model[0])
		cJSON_AddStringToObject(j, "driver_model", g->driver_model);
	else
		cJSON_AddNullToObject(j, "driver_model");
	ml_precision pr;
	ml_gpu_precision(&pr, g->cc_major, g->cc_minor);
	if (pr.known) {
		cJSON *f = cJSON_AddObjectToObject(j, "features");
		cJSON_AddBoolToObject(f, "bf16", pr.bf16);
		cJSON_AddBoolToObject(f, "tf32", pr.tf32);
		cJSON_AddBoolToObject(f, "fp8", pr.fp8);
		cJSON_AddBoolToObject(f, "fp4", pr.fp4);
		cJSON_AddBoolToObject(f, "flash_attention_2", pr.flash_attention_2);
		cJSON_AddStringToObject(j, "recommended_dtype", pr.recommended_dtype);
	} else {
		cJSON_AddNullToObject(j, "features");
		cJSON_AddNullToObject(j, "recommended_dtype");
	}
	return j;
}

cJSON *ml_machine_to_json(const ml_machine *m)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "schema", "mlsetup.detect/1");
	cJSON_AddItemToObject(root, "os", os_json(m));
	cJSON *cpu = cJSON_AddObjectToObject(root, "cpu");
	cJSON_AddStringToObject(cpu, "model", m->cpu_model);
	cJSON_AddNumberToObject(cpu, "cores", m->cpu_cores);
	cJSON_AddNumberToObject(root, "memory_mib", (double)m->memory_mib);
	cJSON_AddNumberToObject(root, "disk_free_mib", (double)m->disk_free_mib);
	cJSON_AddStringToObject(root, "target_dir", m->target_dir);

	cJSON *drv = cJSON_AddObjectToObject(root, "driver");
	char cuda[16] = "";
	if (m->driver.cuda_version)
		snprintf(cuda, sizeof(cuda), "%d.%d", m->driver.cuda_version / 1000,
		         (m->driver.cuda_version % 1000) / 10);
	if (m->driver.version[0])
		cJSON_AddStringToObject(drv, "version", m->driver.version);
	else
		cJSON_AddNullToObject(drv, "version");
	if (cuda[0])
		cJSON_AddStringToObject(drv, "cuda_version", cuda);
	else
		cJSON_AddNullToObject(drv, "cuda_version");
	cJSON_AddStringToObject(drv, "source", m->driver.source);
	cJSON_AddStringToObject(drv, "cuda_version_source", m->driver.cuda_source);
	cJSON_AddBoolToObject(drv, "kernel_module_loaded", m->driver.kernel_module);

	cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
	for (size_t i = 0; i < m->n_gpus; i++)
		cJSON_AddItemToArray(gpus, gpu_json(&m->gpus[i]));
	cJSON *probes = cJSON_AddArrayToObject(root, "probes");
	for (size_t i = 0; i < m->n_probes; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "source", m->probes[i].source);
		cJSON_AddBoolToObject(p, "ok", m->probes[i].status == ML_PROBE_OK);
		cJSON_AddStringToObject(p, "status", probe_status_name(m->probes[i].status));
		cJSON_AddStringToObject(p, "detail", m->probes[i].detail);
		cJSON_AddItemToArray(probes, p);
	}
	cJSON *advice = cJSON_AddArrayToObject(root, "advice");
	char line[512];
	if (ml_machine_driver_advice(line, sizeof(line), m))
		cJSON_AddItemToArray(advice, cJSON_CreateString(line));
	return root;
}
