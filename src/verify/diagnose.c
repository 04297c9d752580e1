/*
 * diagnose.c - from smoke results to a verdict: every check, machine-wide
 * and per GPU, with a status, the cause a failure is attributed to, what was
 * seen and what to do. The causes (docs/verify.md):
 *
 *   no kernel image   the build has no code for the GPU: names the GPU's
 *                     architecture and the shipped manifest whose
 *                     torch_sass/torch_ptx header covers it (ml_arch_runs_on),
 *                     or says the GPU is newer than (or dropped by) every
 *                     shipped build and what would cover it
 *   driver too old    names the minimum driver (the driver table,
 *                     manifests/drivers.json, through detect.h)
 *   CPU-only build    torch without CUDA on a machine with a GPU
 *   GPU not visible   CUDA_VISIBLE_DEVICES (a MIG UUID CUDA does not find),
 *                     a container without the GPU runtime (no /dev/nvidia*,
 *                     or no libcuda.so.1), WSL without
 *                     /usr/lib/wsl/lib/libcuda.so.1, no driver, MIG mode
 *                     without a MIG device
 *   driver broken     the CUDA stub library, library/kernel module mismatch
 *   system not ready  CUDA error 802 on an NVSwitch system: start the Fabric
 *                     Manager of the driver's version
 *   GPU busy          CUDA error 46, exclusive-process compute mode: free
 *                     the GPU or set the default compute mode
 *   bf16 failing      on a GPU with bf16 in hardware (compute capability
 *                     8.0+): the CUDA libraries torch loads are the suspect
 *   wrong results, out of memory, import errors, anything else
 *
 * The exit code is derived from the verdict here and nowhere else.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mlsetup/plan.h"
#include "internal.h"

#define MAX_GPUS 64

const char *ml_cause_name(ml_cause c)
{
	static const char *const names[] = {
	        "none",
	        "no_kernel_image",
	        "driver_too_old",
	        "cpu_only_build",
	        "gpu_not_visible",
	        "driver_broken",
	        "wrong_results",
	        "oom",
	        "import_error",
	        "system_not_ready",
	        "gpu_busy",
	        "precision_failed",
	        "other",
	};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "other";
}

/* vsnprintf into dst (sz bytes): text is cut to fit, on purpose. */
static void put(char *dst, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *dst, size_t sz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, sz, fmt, ap);
	va_end(ap);
}

/* --- building the verdict ----------------------------------------------- */

struct ctx {
	const ml_diagnose_opts *o;
	ml_verdict *v;
	int oom;
};

/* Appends a check to (*arr, *n); returns it, or NULL when out of memory
 * (recorded in c->oom). */
static ml_check *add(struct ctx *c, ml_check **arr, size_t *n, const char *name, ml_check_status st,
                     ml_cause cause, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static ml_check *add(struct ctx *c, ml_check **arr, size_t *n, const char *name, ml_check_status st,
                     ml_cause cause, const char *fmt, ...)
{
	ml_check *grown = realloc(*arr, (*n + 1) * sizeof(*grown));
	if (!grown) {
		c->oom = ML_ENOMEM;
		return NULL;
	}
	*arr = grown;
	ml_check *k = &grown[(*n)++];
	memset(k, 0, sizeof(*k));
	ml_strlcpy(k->name, name, sizeof(k->name));
	k->status = st;
	k->cause = st == ML_CHECK_FAIL || st == ML_CHECK_WARN ? cause : ML_CAUSE_NONE;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->detail, sizeof(k->detail), fmt, ap);
	va_end(ap);
	return k;
}

static ml_check *add_machine(struct ctx *c, const char *name, ml_check_status st, ml_cause cause,
                             const char *detail)
{
	return add(c, &c->v->checks, &c->v->n_checks, name, st, cause, "%s", detail);
}

static bool windows(const struct ctx *c)
{
	return c->o->machine && strcmp(c->o->machine->os.name, "windows") == 0;
}

static size_t machine_gpus(const struct ctx *c)
{
	return c->o->machine ? c->o->machine->n_gpus : 0;
}

static bool exists(const struct ctx *c, const char *path)
{
	char p[4096];
	return ml_os_rooted(p, sizeof(p), c->o->root, path) == 0 && access(p, F_OK) == 0;
}

/* --- remedies ----------------------------------------------------------- */

/* The installed manifest, when the caller named one; NULL otherwise. */
static ml_manifest *installed_manifest(const struct ctx *c)
{
	ml_manifest *mf = NULL;
	ml_err err = ML_ERR_INIT;
	if (c->o->manifest && ml_manifest_open(&mf, c->o->manifest, &err) != 0)
		mf = NULL;
	return mf;
}

/* "torch 2.6.0 (CUDA 12.4)" or "" from the framework result. */
static void torch_label(char *dst, size_t sz, const struct ctx *c)
{
	const ml_framework_result *f = c->o->framework;
	if (f && f->torch_version[0])
		put(dst, sz, "torch %s%s%s%s", f->torch_version, f->torch_cuda[0] ? " (CUDA " : "",
		    f->torch_cuda, f->torch_cuda[0] ? ")" : "");
	else
		ml_strlcpy(dst, "the installed build", sz);
}

/* Names the shipped manifest that covers compute capability major.minor
 * (ml_manifest_covering(), other than the installed one) in name, and its
 * torch, CUDA and minimum driver in about. Returns true when there is one. */
static bool covering_manifest(char *name, size_t name_sz, char *about, size_t about_sz,
                              const struct ctx *c, int major, int minor)
{
	ml_manifest *mf = NULL;
	if (ml_manifest_covering(&mf, major, minor, c->o->manifest, NULL) != 0 || !mf)
		return false;
	const char *drv = windows(c) ? mf->min_driver_windows : mf->min_driver_linux;
	ml_strlcpy(name, mf->name, name_sz);
	put(about, about_sz, "torch %s, CUDA %s%s%s%s", mf->torch ? mf->torch : "?",
	    mf->cuda ? mf->cuda : "?", drv ? ", driver " : "", drv ? drv : "",
	    drv ? " or newer" : "");
	ml_manifest_free(mf);
	return true;
}

/* "no kernel image" remedy for a GPU of compute capability major.minor. */
static void remedy_no_kernel(char *dst, size_t sz, const struct ctx *c, const char *gpu, int major,
                             int minor)
{
	char sm[16], label[128], name[128], about[160];
	ml_cc_sm(sm, sizeof(sm), major, minor);
	const char *arch = ml_cc_architecture(major, minor);
	torch_label(label, sizeof(label), c);
	if (major < 0) {
		put(dst, sz, "install a torch build with code for this GPU's architecture");
		return;
	}
	if (covering_manifest(name, sizeof(name), about, sizeof(about), c, major, minor)) {
		put(dst, sz,
		    "%s is %s%s%s; %s has no kernels for it. The shipped manifest %s (%s) "
		    "covers %s: mlsetup install --manifest %s",
		    gpu[0] ? gpu : "this GPU", arch[0] ? arch : "", arch[0] ? ", " : "", sm, label,
		    name, about, sm, name);
		return;
	}
	ml_build_range r;
	if (ml_shipped_build_range(&r, major, minor, NULL) != 0)
		r.fit = ML_BUILDS_GAP;
	if (r.fit == ML_BUILDS_NEWER)
		put(dst, sz,
		    "%s (%s) is newer than the CUDA builds of mlsetup's manifests: the newest, "
		    "%s (torch %s, CUDA %s), has SASS up to %s and %s%s. It needs a torch build "
		    "with SASS for %s (from a CUDA toolkit newer than %s) or PTX it can JIT "
		    "(compute_%d%d or older), and an NVIDIA driver new enough for both: install "
		    "one with --manifest PATH",
		    gpu[0] ? gpu : "this GPU", sm, r.newest,
		    r.newest_torch[0] ? r.newest_torch : "?",
		    r.newest_cuda[0] ? r.newest_cuda : "?",
		    r.newest_sass[0] ? r.newest_sass : "none",
		    r.newest_ptx[0] ? "PTX up to " : "no PTX", r.newest_ptx, sm,
		    r.newest_cuda[0] ? r.newest_cuda : "the builds'", major, minor);
	else if (r.fit == ML_BUILDS_OLDER)
		put(dst, sz,
		    "%s is %s%s%s and no manifest shipped with mlsetup covers it: current "
		    "PyTorch builds dropped this GPU generation (the oldest shipped build, %s, "
		    "starts at %s); install a build that still supports it with --manifest "
		    "PATH, or use a CPU-only environment",
		    gpu[0] ? gpu : "this GPU", arch[0] ? arch : "", arch[0] ? ", " : "", sm,
		    r.oldest, r.oldest_code);
	else
		put(dst, sz,
		    "%s is %s%s%s and no manifest shipped with mlsetup covers it: install a "
		    "torch build whose arch list includes %s (or PTX for an older "
		    "architecture), e.g. with --manifest PATH",
		    gpu[0] ? gpu : "this GPU", arch[0] ? arch : "", arch[0] ? ", " : "", sm, sm);
}

/* The minimum driver the installed code needs: the manifest's, else the
 * one torch's CUDA version needs, else the one mlsetup's manifests need for
 * the machine's GPUs. "" when none is known. */
static void min_driver(char *dst, size_t sz, char *why, size_t why_sz, const struct ctx *c)
{
	dst[0] = why[0] = '\0';
	ml_manifest *mf = installed_manifest(c);
	const char *m = mf ? (windows(c) ? mf->min_driver_windows : mf->min_driver_linux) : NULL;
	if (m) {
		ml_strlcpy(dst, m, sz);
		put(why, why_sz, "the minimum of %s", mf->name);
		ml_manifest_free(mf);
		return;
	}
	ml_manifest_free(mf);
	/* torch's CUDA version: its row of the driver table, or (a toolkit
	 * the table lacks) the lower bound a build of it gets */
	const ml_framework_result *f = c->o->framework;
	ml_torch_build tb = {0};
	bool at_least = false;
	if (f)
		ml_strlcpy(tb.cuda, f->torch_cuda, sizeof(tb.cuda));
	const char *t = ml_torch_build_min_driver(&tb, windows(c), &at_least);
	if (t) {
		ml_strlcpy(dst, t, sz);
		put(why, why_sz, "torch is built with CUDA %s%s", f->torch_cuda,
		    at_least ? "; a lower bound: mlsetup's driver table has no row for it" : "");
		return;
	}
	const ml_machine *mm = c->o->machine;
	for (size_t i = 0; mm && i < mm->n_gpus; i++) {
		const char *need = ml_min_driver_for_cc(mm->gpus[i].cc_major, mm->gpus[i].cc_minor,
		                                        windows(c));
		if (need && (!dst[0] || ml_driver_version_cmp(need, dst) > 0)) {
			ml_strlcpy(dst, need, sz);
			put(why, why_sz, "what mlsetup's manifests need for %s",
			    mm->gpus[i].name[0] ? mm->gpus[i].name : "this GPU");
		}
	}
}

/* The CUDA version torch found the driver to support, from its "The NVIDIA
 * driver on your system is too old (found version 11040)" (c10/cuda/
 * CUDAFunctions.cpp device_count_impl(): cudaDriverGetVersion, 1000 * major
 * + 10 * minor) as "11.4" into dst; "" when the framework did not say. */
static void found_cuda(char *dst, size_t sz, const struct ctx *c)
{
	dst[0] = '\0';
	const ml_framework_result *f = c->o->framework;
	const char *at = f ? strstr(f->cuda_error, "(found version ") : NULL;
	if (!at && f)
		at = strstr(f->detail, "(found version ");
	int v = 0;
	if (at && sscanf(at, "(found version %d)", &v) == 1 && v >= 1000)
		put(dst, sz, "%d.%d", v / 1000, v % 1000 / 10);
}

static void remedy_driver(char *dst, size_t sz, const struct ctx *c)
{
	char need[32], why[160], cuda[16], has[64] = "";
	min_driver(need, sizeof(need), why, sizeof(why), c);
	found_cuda(cuda, sizeof(cuda), c);
	const char *have = c->o->machine ? c->o->machine->driver.version : "";
	if (have[0] || cuda[0])
		put(has, sizeof(has), "; this machine has %s%s%s", have[0] ? have : "a driver",
		    cuda[0] ? ", for CUDA " : "", cuda[0] ? cuda : "");
	if (cuda[0])
		ml_strlcpy(has + strlen(has), " at most", sizeof(has) - strlen(has));
	if (need[0])
		put(dst, sz, "update the NVIDIA driver to %s or newer (%s)%s", need, why, has);
	else
		put(dst, sz, "update the NVIDIA driver%s", has);
}

/* CUDA error 802 "system not yet initialized": on an NVSwitch system (HGX
 * and DGX boards) CUDA waits for the Fabric Manager, which must run at
 * exactly the driver's version (NVIDIA Fabric Manager User Guide). */
static void remedy_fabric_manager(char *dst, size_t sz, const struct ctx *c)
{
	const char *have = c->o->machine ? c->o->machine->driver.version : "";
	char branch[16] = "";
	if (have[0])
		put(branch, sizeof(branch), "%.*s", (int)strcspn(have, "."), have);
	put(dst, sz,
	    "CUDA is waiting for the NVIDIA Fabric Manager: on an NVSwitch system (HGX/DGX "
	    "boards with A100, H100, H200 or B200) it must run before CUDA can start. Install "
	    "the Fabric Manager of exactly the driver's version (%s%s%s), start it (sudo "
	    "systemctl enable --now nvidia-fabricmanager) and check `systemctl status "
	    "nvidia-fabricmanager` and `nvidia-smi -q | grep -A 2 Fabric`",
	    have[0] ? have : "see nvidia-smi",
	    branch[0] ? "; Debian/Ubuntu: nvidia-fabricmanager-" : "", branch);
}

/* CUDA error 46: the device is in exclusive-process or prohibited compute
 * mode (cuda.h CUDA_ERROR_DEVICE_UNAVAILABLE) and another process holds it.
 * index is the GPU's, or -1 for every GPU. */
static void remedy_busy(char *dst, size_t sz, int index)
{
	char opt[16] = "";
	if (index >= 0)
		put(opt, sizeof(opt), "-i %d ", index);
	put(dst, sz,
	    "the GPU refuses a new CUDA context: it is in exclusive-process (or prohibited) "
	    "compute mode and another process holds it. See which process with `nvidia-smi` "
	    "and the mode with `nvidia-smi %s-q -d COMPUTE`; stop that process, or set the "
	    "default compute mode: sudo nvidia-smi %s-c DEFAULT",
	    opt, opt);
}

/* The first detected GPU that supports MIG: compute capability 8.0 (A100,
 * A30), 9.x (H100, H200, GH200) or 10.x (B200, B300), the data-center parts
 * of the NVIDIA MIG User Guide's supported GPUs (12.0 has MIG only on RTX
 * PRO boards, which the capability cannot tell from GeForce). NULL: none. */
static const ml_gpu *mig_capable_gpu(const struct ctx *c)
{
	const ml_machine *m = c->o->machine;
	for (size_t i = 0; m && i < m->n_gpus; i++) {
		const ml_gpu *g = &m->gpus[i];
		if ((g->cc_major == 8 && g->cc_minor == 0) || g->cc_major == 9 || g->cc_major == 10)
			return g;
	}
	return NULL;
}

/* Does libcuda.so.1 fail to load? The driver smoke test could not dlopen
 * it, or torch said "Found no NVIDIA driver on your system". */
static bool no_driver_library(const struct ctx *c)
{
	const ml_smoke_result *d = c->o->driver;
	const ml_framework_result *f = c->o->framework;
	return (d && d->status == ML_CHECK_SKIP && strcmp(d->step, "dlopen") == 0) ||
	       (f && (ml_fw_says_no_driver_library(f->cuda_error) ||
	              ml_fw_says_no_driver_library(f->detail)));
}

/* Why is no GPU visible although the machine has one? Fills detail and
 * remedy; returns the cause. */
static ml_cause why_invisible(char *detail, size_t dsz, char *remedy, size_t rsz,
                              const struct ctx *c)
{
	const ml_machine *m = c->o->machine;
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	const ml_gpu *mig = mig_capable_gpu(c);
	if (cvd && strncmp(cvd, "MIG-", 4) == 0) {
		put(detail, dsz,
		    "CUDA_VISIBLE_DEVICES='%.100s' names a MIG device that CUDA does not find",
		    cvd);
		put(remedy, rsz,
		    "list the MIG devices with `nvidia-smi -L` and set CUDA_VISIBLE_DEVICES to one "
		    "of their MIG-... UUIDs; if none is listed, create one (sudo nvidia-smi mig "
		    "-cgi <profile> -C); in a container, the MIG device must be passed in too "
		    "(NVIDIA_VISIBLE_DEVICES)");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (cvd) {
		put(detail, dsz, "CUDA_VISIBLE_DEVICES='%s' hides every GPU from CUDA", cvd);
		put(remedy, rsz,
		    "unset CUDA_VISIBLE_DEVICES, or list the GPUs to use "
		    "(CUDA_VISIBLE_DEVICES=0)%s",
		    mig ? "; with MIG mode on, list the MIG devices' UUIDs "
		          "(CUDA_VISIBLE_DEVICES=MIG-..., from `nvidia-smi -L`)"
		        : "");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (m && m->os.wsl && !exists(c, "/usr/lib/wsl/lib/libcuda.so.1")) {
		put(detail, dsz,
		    "WSL without the NVIDIA driver libraries: /usr/lib/wsl/lib/libcuda.so.1 is "
		    "missing");
		put(remedy, rsz,
		    "install the NVIDIA driver for Windows (it brings WSL support; do not "
		    "install a Linux driver inside WSL), then run `wsl --shutdown` and reopen");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	bool dev =
	        exists(c, "/dev/nvidiactl") || exists(c, "/dev/nvidia0") || exists(c, "/dev/dxg");
	bool no_lib = no_driver_library(c);
	if (m && m->os.container && (!dev || no_lib)) {
		put(detail, dsz, "%s container without the GPU runtime: %s",
		    m->os.container_kind[0] ? m->os.container_kind : "a",
		    !dev ? "no /dev/nvidia* devices"
		         : "/dev/nvidia* are there, but not the driver's library libcuda.so.1");
		put(remedy, rsz,
		    "start the container with GPU access: docker run --gpus all (NVIDIA "
		    "Container Toolkit), podman run --device nvidia.com/gpu=all (CDI), or "
		    "request nvidia.com/gpu in Kubernetes");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (m && m->n_gpus && !m->driver.version[0]) {
		put(detail, dsz, "NVIDIA GPU present, but no NVIDIA driver is loaded");
		if (!ml_machine_driver_advice(remedy, rsz, m))
			put(remedy, rsz, "install the NVIDIA driver");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (!dev && !(m && m->os.wsl)) {
		put(detail, dsz, "the NVIDIA device files /dev/nvidia* are missing");
		put(remedy, rsz,
		    "load the driver (sudo modprobe nvidia, or reboot after installing it); "
		    "check `nvidia-smi`");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (no_lib && !(m && m->os.wsl)) {
		put(detail, dsz,
		    "the NVIDIA kernel module%s%s is loaded, but not its library libcuda.so.1",
		    m && m->driver.version[0] ? " " : "", m ? m->driver.version : "");
		put(remedy, rsz,
		    "install the NVIDIA driver's user-space libraries of the same version as the "
		    "kernel module (they bring libcuda.so.1) and run sudo ldconfig; check with "
		    "`ldconfig -p | grep libcuda` and `nvidia-smi`");
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	if (mig) {
		/* NVIDIA MIG User Guide: with MIG mode on, CUDA enumerates only MIG
		 * devices, and none exists until one is created. */
		put(detail, dsz,
		    "CUDA sees no GPU although %zu %s detected; %s (sm_%d%d) supports MIG, and "
		    "with MIG mode on CUDA sees only MIG devices",
		    machine_gpus(c), machine_gpus(c) == 1 ? "was" : "were", mig->name,
		    mig->cc_major, mig->cc_minor);
		put(remedy, rsz,
		    "run `nvidia-smi -L`: if GPU %d shows MIG mode without MIG devices, create one "
		    "(sudo nvidia-smi mig -i %d -cgi <profile> -C) and set CUDA_VISIBLE_DEVICES to "
		    "its MIG-... UUID, or turn MIG off (sudo nvidia-smi -i %d -mig 0, then reset "
		    "the GPU); else check the kernel log (dmesg) for NVIDIA errors",
		    mig->index, mig->index, mig->index);
		return ML_CAUSE_GPU_NOT_VISIBLE;
	}
	put(detail, dsz, "CUDA sees no GPU although %zu %s detected", machine_gpus(c),
	    machine_gpus(c) == 1 ? "was" : "were");
	put(remedy, rsz,
	    "check `nvidia-smi` and the kernel log (dmesg) for NVIDIA errors; reboot after a "
	    "driver update");
	return ML_CAUSE_GPU_NOT_VISIBLE;
}

/* --- machine-wide checks ------------------------------------------------- */

static void check_driver(struct ctx *c)
{
	const ml_smoke_result *d = c->o->driver;
	ml_check *k;
	char detail[512], remedy[512];
	if (d->status != ML_CHECK_SKIP && !d->step[0]) {
		add_machine(c, "cuda_driver", ML_CHECK_PASS, ML_CAUSE_NONE, d->detail);
		return;
	}
	if (d->status == ML_CHECK_SKIP) {
		if (!machine_gpus(c)) {
			add_machine(c, "cuda_driver", ML_CHECK_SKIP, ML_CAUSE_NONE, d->detail);
			return;
		}
		ml_cause cause = why_invisible(detail, sizeof(detail), remedy, sizeof(remedy), c);
		k = add(c, &c->v->checks, &c->v->n_checks, "cuda_driver", ML_CHECK_FAIL, cause,
		        "%.200s; %.300s", d->detail, detail);
		if (k)
			ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
		return;
	}
	/* A failure before the GPUs: dlsym or a CUresult of cuInit or
	 * cuDeviceGetCount. */
	ml_cause cause = ML_CAUSE_OTHER;
	remedy[0] = '\0';
	switch (d->cuda_error) {
	case 35: /* CUDA_ERROR_INSUFFICIENT_DRIVER */
	case 222:
		cause = ML_CAUSE_DRIVER_TOO_OLD;
		remedy_driver(remedy, sizeof(remedy), c);
		break;
	case 802: /* CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized" */
		cause = ML_CAUSE_SYSTEM_NOT_READY;
		remedy_fabric_manager(remedy, sizeof(remedy), c);
		break;
	case 46: /* CUDA_ERROR_DEVICE_UNAVAILABLE */
		cause = ML_CAUSE_GPU_BUSY;
		remedy_busy(remedy, sizeof(remedy), -1);
		break;
	case 34: /* CUDA_ERROR_STUB_LIBRARY */
		cause = ML_CAUSE_DRIVER_BROKEN;
		put(remedy, sizeof(remedy),
		    "the CUDA toolkit's stub libcuda.so was loaded instead of the driver's: "
		    "remove the stubs directory from LD_LIBRARY_PATH; in a container, start it "
		    "with GPU access (docker run --gpus all)");
		break;
	case 803: /* CUDA_ERROR_SYSTEM_DRIVER_MISMATCH */
		cause = ML_CAUSE_DRIVER_BROKEN;
		put(remedy, sizeof(remedy),
		    "the driver library and the loaded kernel module differ in version: reboot "
		    "(or reload the nvidia module) after a driver update, and remove any "
		    "cuda-compat directory from LD_LIBRARY_PATH");
		break;
	case 804: /* CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE */
		cause = ML_CAUSE_DRIVER_BROKEN;
		put(remedy, sizeof(remedy),
		    "a forward-compatibility libcuda (cuda-compat) is in use on a GPU that does "
		    "not support it: remove it from LD_LIBRARY_PATH and install a newer driver");
		break;
	case 0:
		if (strcmp(d->step, "dlsym") == 0) {
			cause = ML_CAUSE_DRIVER_BROKEN;
			put(remedy, sizeof(remedy),
			    "%s is not a usable CUDA driver library (no %s): reinstall the "
			    "NVIDIA driver",
			    d->library, d->missing_symbol);
		}
		break;
	default:
		put(remedy, sizeof(remedy),
		    "check `nvidia-smi` and the kernel log (dmesg) for NVIDIA errors; reboot "
		    "after a driver update");
		break;
	}
	k = add_machine(c, "cuda_driver", ML_CHECK_FAIL, cause, d->detail);
	if (k)
		ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
}

/* The framework's machine-wide checks; returns false when torch did not
 * get as far as the GPUs. */
static void check_framework(struct ctx *c)
{
	const ml_framework_result *f = c->o->framework;
	ml_check *k;
	char detail[512], remedy[512];
	const ml_fw_check *imp = NULL, *cpu = NULL;
	for (size_t i = 0; i < f->n_checks; i++) {
		if (strcmp(f->checks[i].name, "import") == 0)
			imp = &f->checks[i];
		else if (strcmp(f->checks[i].name, "cpu_matmul") == 0)
			cpu = &f->checks[i];
	}
	if (f->cls == ML_FW_IMPORT_ERROR || !imp) {
		k = add_machine(c, "torch_import", ML_CHECK_FAIL,
		                f->cls == ML_FW_IMPORT_ERROR ? ML_CAUSE_IMPORT_ERROR
		                                             : ML_CAUSE_OTHER,
		                f->detail);
		if (k)
			put(k->remedy, sizeof(k->remedy),
			    "%s: reinstall the environment (mlsetup install) so every wheel and "
			    "its CUDA libraries are in place%s",
			    f->cls == ML_FW_IMPORT_ERROR ? "torch does not import"
			                                 : "the smoke script gave no result",
			    f->output ? "; the interpreter's output is in the report" : "");
		return;
	}
	add(c, &c->v->checks, &c->v->n_checks, "torch_import", ML_CHECK_PASS, ML_CAUSE_NONE,
	    "torch %s from %s", f->torch_version, f->torch_path);
	if (cpu) {
		k = add(c, &c->v->checks, &c->v->n_checks, "cpu_matmul", cpu->status,
		        cpu->cls == ML_FW_WRONG_RESULTS ? ML_CAUSE_WRONG_RESULTS : ML_CAUSE_OTHER,
		        "%s", cpu->detail);
		if (k && cpu->status == ML_CHECK_FAIL)
			put(k->remedy, sizeof(k->remedy),
			    "torch computes wrong results on the CPU: reinstall the environment");
	}
	bool has_gpu = machine_gpus(c) > 0 || (c->o->driver && c->o->driver->n_gpus > 0);
	if (f->cls == ML_FW_CPU_ONLY_BUILD) {
		if (!has_gpu && !c->o->require_gpu) {
			add_machine(c, "torch_cuda", ML_CHECK_SKIP, ML_CAUSE_NONE, f->detail);
			return;
		}
		k = add_machine(c, "torch_cuda", ML_CHECK_FAIL, ML_CAUSE_CPU_ONLY_BUILD, f->detail);
		if (k)
			put(k->remedy, sizeof(k->remedy),
			    "this machine has an NVIDIA GPU but torch %s has no CUDA: install "
			    "a CUDA build (mlsetup install picks the manifest for this GPU)",
			    f->torch_version);
		return;
	}
	if (f->cls == ML_FW_DRIVER_TOO_OLD) {
		k = add_machine(c, "torch_cuda", ML_CHECK_FAIL, ML_CAUSE_DRIVER_TOO_OLD, f->detail);
		if (k)
			remedy_driver(k->remedy, sizeof(k->remedy), c);
		return;
	}
	bool unusable = !f->cuda_available || f->device_count <= 0;
	if (unusable && f->cls == ML_FW_SYSTEM_NOT_READY) {
		k = add_machine(c, "torch_cuda", ML_CHECK_FAIL, ML_CAUSE_SYSTEM_NOT_READY,
		                f->detail);
		if (k)
			remedy_fabric_manager(k->remedy, sizeof(k->remedy), c);
		return;
	}
	if (unusable && f->cls == ML_FW_DEVICES_BUSY) {
		k = add_machine(c, "torch_cuda", ML_CHECK_FAIL, ML_CAUSE_GPU_BUSY, f->detail);
		if (k)
			remedy_busy(k->remedy, sizeof(k->remedy), -1);
		return;
	}
	if (f->cls == ML_FW_CUDA_UNAVAILABLE) {
		if (!has_gpu && !c->o->require_gpu) {
			add_machine(c, "torch_cuda", ML_CHECK_SKIP, ML_CAUSE_NONE, f->detail);
			return;
		}
		ml_cause cause = why_invisible(detail, sizeof(detail), remedy, sizeof(remedy), c);
		k = add(c, &c->v->checks, &c->v->n_checks, "torch_cuda", ML_CHECK_FAIL, cause,
		        "%.250s; %.250s", f->detail, detail);
		if (k)
			ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
		return;
	}
	if (f->gpu_checks_skipped && !f->cuda_available) {
		/* Timed out or crashed after the CPU checks. */
		k = add_machine(c, "torch_cuda", ML_CHECK_FAIL, ML_CAUSE_OTHER, f->detail);
		if (k)
			put(k->remedy, sizeof(k->remedy),
			    "run the environment's python and `import torch; "
			    "torch.cuda.is_available()` to see the error");
		return;
	}
	add(c, &c->v->checks, &c->v->n_checks, "torch_cuda", ML_CHECK_PASS, ML_CAUSE_NONE,
	    "torch %s (CUDA %s) sees %d GPU%s", f->torch_version, f->torch_cuda, f->device_count,
	    f->device_count == 1 ? "" : "s");
}

/* --- per-GPU checks ------------------------------------------------------ */

static ml_verdict_gpu *gpu_slot(struct ctx *c, int index, const char *name, int major, int minor)
{
	ml_verdict *v = c->v;
	for (size_t i = 0; i < v->n_gpus; i++) {
		if (v->gpus[i].index == index) {
			if (!v->gpus[i].name[0] && name)
				ml_strlcpy(v->gpus[i].name, name, sizeof(v->gpus[i].name));
			if (v->gpus[i].cc_major < 0 && major >= 0) {
				v->gpus[i].cc_major = major;
				v->gpus[i].cc_minor = minor;
			}
			return &v->gpus[i];
		}
	}
	ml_verdict_gpu *grown = realloc(v->gpus, (v->n_gpus + 1) * sizeof(*grown));
	if (!grown) {
		c->oom = ML_ENOMEM;
		return NULL;
	}
	v->gpus = grown;
	/* Keep index order. */
	size_t at = v->n_gpus;
	while (at > 0 && v->gpus[at - 1].index > index) {
		v->gpus[at] = v->gpus[at - 1];
		at--;
	}
	ml_verdict_gpu *g = &v->gpus[at];
	memset(g, 0, sizeof(*g));
	g->index = index;
	ml_strlcpy(g->name, name ? name : "", sizeof(g->name));
	g->cc_major = major;
	g->cc_minor = minor;
	v->n_gpus++;
	return g;
}

static ml_check *add_gpu(struct ctx *c, ml_verdict_gpu *g, const char *name, ml_check_status st,
                         ml_cause cause, const char *detail)
{
	return add(c, &g->checks, &g->n_checks, name, st, cause, "%s", detail);
}

/* The prebuilt test kernel was refused and its portable PTX ran: the
 * driver is older than the toolkit that built the kernel (the "release
 * X.Y" of ml_smoke_kernel_desc()). */
static void remedy_kernel_driver(char *dst, size_t sz, const struct ctx *c)
{
	char cuda[16] = "";
	const char *rel = strstr(ml_smoke_kernel_desc(), "release ");
	if (rel)
		sscanf(rel + 8, "%15[0-9.]", cuda);
	const char *need = ml_toolkit_min_driver(cuda, windows(c));
	if (need)
		put(dst, sz,
		    "nothing needed for torch; a driver for CUDA %s (%s or newer) would load "
		    "mlsetup's prebuilt test kernel without JIT",
		    cuda, need);
	else
		put(dst, sz,
		    "nothing needed for torch; a driver for CUDA %s would load mlsetup's "
		    "prebuilt test kernel without JIT",
		    cuda[0] ? cuda : "the kernel's toolkit");
}

static void check_driver_gpu(struct ctx *c, const ml_smoke_gpu *s)
{
	ml_verdict_gpu *g = gpu_slot(c, s->index, s->name, s->cc_major, s->cc_minor);
	if (!g)
		return;
	if (s->status != ML_CHECK_FAIL) {
		/* WARN: the fatbin was refused and the portable PTX ran. The
		 * fatbin has SASS from sm_75 up and PTX compute_121, so from
		 * Turing on only a driver older than its toolkit refuses it. */
		bool pre_turing = s->cc_major >= 0 && s->cc_major * 10 + s->cc_minor < 75;
		ml_check *k =
		        add_gpu(c, g, "driver_saxpy", s->status,
		                pre_turing ? ML_CAUSE_NONE : ML_CAUSE_DRIVER_TOO_OLD, s->detail);
		if (k && s->status == ML_CHECK_WARN && !pre_turing)
			remedy_kernel_driver(k->remedy, sizeof(k->remedy), c);
		return;
	}
	ml_cause cause = ML_CAUSE_OTHER;
	char remedy[512] = "";
	char sm[16];
	ml_cc_sm(sm, sizeof(sm), s->cc_major, s->cc_minor);
	if (strcmp(s->step, "compare") == 0) {
		cause = ML_CAUSE_WRONG_RESULTS;
		put(remedy, sizeof(remedy),
		    "the GPU computed wrong results: look for Xid errors in the kernel log "
		    "(dmesg) and ECC errors (nvidia-smi -q -d ECC), undo overclocking, reset the "
		    "GPU (nvidia-smi -r) or reboot; if it persists, the GPU may be faulty");
	} else {
		switch (s->cuda_error) {
		case 209: /* CUDA_ERROR_NO_BINARY_FOR_GPU */
			cause = ML_CAUSE_NO_KERNEL_IMAGE;
			put(remedy, sizeof(remedy),
			    "the code loaded has neither SASS nor PTX usable on %s (%s): load "
			    "code built for it",
			    s->name[0] ? s->name : "this GPU", sm);
			break;
		case 218: /* CUDA_ERROR_INVALID_PTX */
		case 222: /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
		case 35:
			cause = ML_CAUSE_DRIVER_TOO_OLD;
			remedy_driver(remedy, sizeof(remedy), c);
			break;
		case 2: /* CUDA_ERROR_OUT_OF_MEMORY */
			cause = ML_CAUSE_OOM;
			put(remedy, sizeof(remedy),
			    "GPU memory is exhausted: see which processes hold it (nvidia-smi) "
			    "and stop them");
			break;
		case 46: /* CUDA_ERROR_DEVICE_UNAVAILABLE: "CUDA-capable device(s)
		          * is/are busy or unavailable" (cuGetErrorString) */
			cause = ML_CAUSE_GPU_BUSY;
			remedy_busy(remedy, sizeof(remedy), s->index);
			break;
		case 802: /* CUDA_ERROR_SYSTEM_NOT_READY */
			cause = ML_CAUSE_SYSTEM_NOT_READY;
			remedy_fabric_manager(remedy, sizeof(remedy), c);
			break;
		case 700: /* CUDA_ERROR_ILLEGAL_ADDRESS */
		case 702: /* CUDA_ERROR_LAUNCH_TIMEOUT */
		case 719: /* CUDA_ERROR_LAUNCH_FAILED */
			put(remedy, sizeof(remedy),
			    "a kernel faulted on a known-good test: look for Xid errors in the "
			    "kernel log (dmesg), reset the GPU (nvidia-smi -r) or reboot");
			break;
		default:
			put(remedy, sizeof(remedy),
			    "check `nvidia-smi` and the kernel log (dmesg) for NVIDIA errors");
			break;
		}
	}
	ml_check *k = add_gpu(c, g, "driver_saxpy", ML_CHECK_FAIL, cause, s->detail);
	if (k)
		ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
}

/* The remedy for a bf16 matmul that failed (class OTHER) on a GPU with
 * bf16 in hardware: the GPU can do it, so the libraries torch loads are
 * the suspect, and fp16 is the way to train meanwhile. */
static void remedy_bf16(char *dst, size_t sz, const ml_fw_gpu *fg, const ml_fw_check *failed)
{
	char sm[16];
	ml_cc_sm(sm, sizeof(sm), fg->cc_major, fg->cc_minor);
	const char *arch = ml_cc_architecture(fg->cc_major, fg->cc_minor);
	const ml_fw_check *fp16 = ml_fw_gpu_check(fg, "fp16_matmul");
	const char *lib = getenv("LD_LIBRARY_PATH");
	bool cublas = strstr(failed->detail, "CUBLAS") != NULL;
	put(dst, sz,
	    "%s (%s%s%s) has bf16 in hardware (compute capability 8.0 or newer), so the failure "
	    "is in the %s torch loads%s: %s%.120s%sreinstall the environment (mlsetup install) "
	    "so torch gets the CUDA libraries it was built with%s",
	    fg->name[0] ? fg->name : "this GPU", arch, arch[0] ? ", " : "", sm,
	    cublas ? "cuBLAS" : "CUDA libraries",
	    fp16 && fp16->status == ML_CHECK_PASS ? " (fp16 works)" : "",
	    lib && lib[0] ? "LD_LIBRARY_PATH is set (" : "", lib && lib[0] ? lib : "",
	    lib && lib[0] ? "): remove other CUDA installations from it, and " : "",
	    fp16 && fp16->status == ML_CHECK_PASS
	            ? "; meanwhile train in fp16 (torch.autocast(\"cuda\", "
	              "dtype=torch.float16))"
	            : "");
}

static void check_framework_gpu(struct ctx *c, const ml_fw_gpu *fg)
{
	ml_verdict_gpu *g = gpu_slot(c, fg->index, fg->name, fg->cc_major, fg->cc_minor);
	if (!g)
		return;
	bool kernel_failed = false, all_passed = true;
	for (size_t i = 0; i < fg->n_checks; i++) {
		kernel_failed |= fg->checks[i].cls == ML_FW_NO_KERNEL_IMAGE;
		all_passed &= fg->checks[i].status != ML_CHECK_FAIL;
	}
	ml_check *k;
	if (fg->arch_ok) {
		add_gpu(c, g, "torch_arch", ML_CHECK_PASS, ML_CAUSE_NONE, fg->arch_why);
	} else {
		k = add(c, &g->checks, &g->n_checks, "torch_arch",
		        kernel_failed || !all_passed ? ML_CHECK_FAIL : ML_CHECK_WARN,
		        ML_CAUSE_NO_KERNEL_IMAGE,
		        "torch.cuda.get_arch_list() has no code for it: %s", fg->arch_why);
		if (k)
			remedy_no_kernel(k->remedy, sizeof(k->remedy), c, fg->name, fg->cc_major,
			                 fg->cc_minor);
	}
	for (size_t i = 0; i < fg->n_checks; i++) {
		const ml_fw_check *fc = &fg->checks[i];
		ml_cause cause = ML_CAUSE_OTHER;
		switch (fc->cls) {
		case ML_FW_NO_KERNEL_IMAGE:
			cause = ML_CAUSE_NO_KERNEL_IMAGE;
			break;
		case ML_FW_OOM:
			cause = ML_CAUSE_OOM;
			break;
		case ML_FW_WRONG_RESULTS:
			cause = ML_CAUSE_WRONG_RESULTS;
			break;
		case ML_FW_DRIVER_TOO_OLD:
			cause = ML_CAUSE_DRIVER_TOO_OLD;
			break;
		case ML_FW_CUDA_UNAVAILABLE:
			cause = ML_CAUSE_GPU_NOT_VISIBLE;
			break;
		case ML_FW_SYSTEM_NOT_READY:
			cause = ML_CAUSE_SYSTEM_NOT_READY;
			break;
		case ML_FW_DEVICES_BUSY:
			cause = ML_CAUSE_GPU_BUSY;
			break;
		default:
			/* The framework result fails bf16 only on a GPU with bf16
			 * in hardware (ml_smoke_framework). */
			if (strcmp(fc->name, "bf16_matmul") == 0)
				cause = ML_CAUSE_PRECISION_FAILED;
			break;
		}
		k = add_gpu(c, g, fc->name, fc->status, cause, fc->detail);
		if (!k || fc->status != ML_CHECK_FAIL)
			continue;
		switch (cause) {
		case ML_CAUSE_NO_KERNEL_IMAGE:
			remedy_no_kernel(k->remedy, sizeof(k->remedy), c, fg->name, fg->cc_major,
			                 fg->cc_minor);
			break;
		case ML_CAUSE_OOM:
			put(k->remedy, sizeof(k->remedy),
			    "GPU memory is exhausted: stop the processes holding it (nvidia-smi), "
			    "or verify with a smaller allocation");
			break;
		case ML_CAUSE_WRONG_RESULTS:
			put(k->remedy, sizeof(k->remedy),
			    "the GPU result differs from the CPU's: look for Xid and ECC errors "
			    "(dmesg, nvidia-smi -q -d ECC), undo overclocking, reset the GPU; "
			    "compare with `mlsetup verify` on another GPU");
			break;
		case ML_CAUSE_DRIVER_TOO_OLD:
			remedy_driver(k->remedy, sizeof(k->remedy), c);
			break;
		case ML_CAUSE_PRECISION_FAILED:
			remedy_bf16(k->remedy, sizeof(k->remedy), fg, fc);
			break;
		case ML_CAUSE_SYSTEM_NOT_READY:
			remedy_fabric_manager(k->remedy, sizeof(k->remedy), c);
			break;
		case ML_CAUSE_GPU_BUSY:
			remedy_busy(k->remedy, sizeof(k->remedy), fg->index);
			break;
		case ML_CAUSE_GPU_NOT_VISIBLE: {
			/* "invalid device ordinal" and kin on a device CUDA listed. */
			const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
			put(k->remedy, sizeof(k->remedy),
			    "CUDA lost or does not have device %d: check CUDA_VISIBLE_DEVICES "
			    "(%s%s%s) against `nvidia-smi -L`; with MIG mode on, list the MIG "
			    "devices' UUIDs (CUDA_VISIBLE_DEVICES=MIG-...)",
			    fg->index, cvd ? "'" : "unset", cvd ? cvd : "", cvd ? "'" : "");
			break;
		}
		default:
			put(k->remedy, sizeof(k->remedy),
			    "run the check by hand in the environment's python to see the "
			    "full error");
			break;
		}
	}
}

/* --- the verdict --------------------------------------------------------- */

static void summarize(ml_verdict *v)
{
	size_t total = v->n_checks, failed = 0, warned = 0;
	const ml_check *first = NULL;
	const ml_verdict_gpu *first_gpu = NULL;
	for (size_t i = 0; i < v->n_checks; i++) {
		failed += v->checks[i].status == ML_CHECK_FAIL;
		warned += v->checks[i].status == ML_CHECK_WARN;
		if (!first && v->checks[i].status == ML_CHECK_FAIL)
			first = &v->checks[i];
	}
	for (size_t g = 0; g < v->n_gpus; g++) {
		total += v->gpus[g].n_checks;
		for (size_t i = 0; i < v->gpus[g].n_checks; i++) {
			const ml_check *k = &v->gpus[g].checks[i];
			failed += k->status == ML_CHECK_FAIL;
			warned += k->status == ML_CHECK_WARN;
			if (!first && k->status == ML_CHECK_FAIL) {
				first = k;
				first_gpu = &v->gpus[g];
			}
		}
	}
	v->status = failed ? ML_CHECK_FAIL : warned ? ML_CHECK_WARN : ML_CHECK_PASS;
	v->cause = first ? first->cause : ML_CAUSE_NONE;
	if (first && first_gpu)
		put(v->summary, sizeof(v->summary), "GPU %d (%s) %s failed: %.300s",
		    first_gpu->index, first_gpu->name, first->name, first->detail);
	else if (first)
		put(v->summary, sizeof(v->summary), "%s failed: %.400s", first->name,
		    first->detail);
	else
		put(v->summary, sizeof(v->summary),
		    "%zu checks on %zu GPU%s: %zu passed or skipped%s", total, v->n_gpus,
		    v->n_gpus == 1 ? "" : "s", total - warned,
		    warned ? ", some with warnings" : "");
}

static bool gpu_check_ran(const ml_verdict *v)
{
	for (size_t g = 0; g < v->n_gpus; g++) {
		for (size_t i = 0; i < v->gpus[g].n_checks; i++) {
			if (v->gpus[g].checks[i].status != ML_CHECK_SKIP)
				return true;
		}
	}
	return false;
}

int ml_diagnose(ml_verdict **out, const ml_diagnose_opts *opts, ml_err *err)
{
	ml_diagnose_opts o = ML_DIAGNOSE_OPTS_INIT;
	if (opts)
		o = *opts;
	struct ctx c = {&o, calloc(1, sizeof(ml_verdict)), 0};
	if (!c.v)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	if (o.driver)
		check_driver(&c);
	if (o.framework)
		check_framework(&c);
	for (size_t i = 0; o.driver && i < o.driver->n_gpus && i < MAX_GPUS; i++)
		check_driver_gpu(&c, &o.driver->gpus[i]);
	for (size_t i = 0; o.framework && i < o.framework->n_gpus && i < MAX_GPUS; i++)
		check_framework_gpu(&c, &o.framework->gpus[i]);
	/* GPUs detect found that no smoke test could reach. */
	bool ran = o.driver || o.framework;
	if (ran && !c.v->n_gpus && machine_gpus(&c)) {
		char detail[512], remedy[512];
		ml_cause cause = ML_CAUSE_GPU_NOT_VISIBLE;
		/* A machine-wide failure with a cause of its own (802, a driver
		 * too old, a broken driver) is why CUDA reached no GPU. */
		const ml_check *why = NULL;
		for (size_t i = 0; !why && i < c.v->n_checks; i++) {
			const ml_check *k = &c.v->checks[i];
			if (k->status == ML_CHECK_FAIL &&
			    (k->cause == ML_CAUSE_SYSTEM_NOT_READY ||
			     k->cause == ML_CAUSE_DRIVER_TOO_OLD ||
			     k->cause == ML_CAUSE_DRIVER_BROKEN || k->cause == ML_CAUSE_GPU_BUSY))
				why = k;
		}
		if (why) {
			cause = why->cause;
			put(detail, sizeof(detail), "CUDA cannot reach it: %s failed (%s)",
			    why->name, ml_cause_name(why->cause));
			ml_strlcpy(remedy, why->remedy, sizeof(remedy));
		} else {
			why_invisible(detail, sizeof(detail), remedy, sizeof(remedy), &c);
		}
		for (size_t i = 0; i < machine_gpus(&c) && i < MAX_GPUS; i++) {
			const ml_gpu *mg = &o.machine->gpus[i];
			ml_verdict_gpu *g =
			        gpu_slot(&c, mg->index, mg->name, mg->cc_major, mg->cc_minor);
			ml_check *k =
			        g ? add_gpu(&c, g, "gpu_visible", ML_CHECK_FAIL, cause, detail)
			          : NULL;
			if (k)
				ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
		}
	}
	if (o.require_gpu && !gpu_check_ran(c.v)) {
		char detail[512], remedy[512];
		if (machine_gpus(&c)) {
			why_invisible(detail, sizeof(detail), remedy, sizeof(remedy), &c);
		} else {
			put(detail, sizeof(detail), "no NVIDIA GPU was found on this machine");
			put(remedy, sizeof(remedy),
			    "run on a machine with an NVIDIA GPU, or drop --require-gpu");
		}
		ml_check *k = add(&c, &c.v->checks, &c.v->n_checks, "gpu_required", ML_CHECK_FAIL,
		                  ML_CAUSE_GPU_NOT_VISIBLE, "--require-gpu: no GPU check ran: %s",
		                  detail);
		if (k)
			ml_strlcpy(k->remedy, remedy, sizeof(k->remedy));
	}
	if (c.oom) {
		ml_verdict_free(c.v);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	summarize(c.v);
	*out = c.v;
	return 0;
}

void ml_verdict_free(ml_verdict *v)
{
	if (!v)
		return;
	free(v->checks);
	for (size_t i = 0; i < v->n_gpus; i++)
		free(v->gpus[i].checks);
	free(v->gpus);
	free(v);
}

static bool any_cause(const ml_check *k, size_t n, ml_cause cause)
{
	for (size_t i = 0; i < n; i++) {
		if (k[i].status == ML_CHECK_FAIL && k[i].cause == cause)
			return true;
	}
	return false;
}

int ml_verdict_exit_code(const ml_verdict *v)
{
	if (!v)
		return ML_EXIT_FAILED;
	if (v->status != ML_CHECK_FAIL)
		return ML_EXIT_OK;
	bool old = any_cause(v->checks, v->n_checks, ML_CAUSE_DRIVER_TOO_OLD);
	for (size_t g = 0; !old && g < v->n_gpus; g++)
		old = any_cause(v->gpus[g].checks, v->gpus[g].n_checks, ML_CAUSE_DRIVER_TOO_OLD);
	return old ? ml_exit_code(ML_EUNSUPPORTED) : ml_exit_code(ML_EGPU);
}

/* --- JSON ----------------------------------------------------------------- */

static cJSON *checks_json(const ml_check *k, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < n; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", k[i].name);
		cJSON_AddStringToObject(j, "status", ml_check_status_name(k[i].status));
		if (k[i].cause != ML_CAUSE_NONE)
			cJSON_AddStringToObject(j, "cause", ml_cause_name(k[i].cause));
		else
			cJSON_AddNullToObject(j, "cause");
		cJSON_AddStringToObject(j, "detail", k[i].detail);
		if (k[i].remedy[0])
			cJSON_AddStringToObject(j, "remedy", k[i].remedy);
		else
			cJSON_AddNullToObject(j, "remedy");
		cJSON_AddItemToArray(arr, j);
	}
	return arr;
}

cJSON *ml_verdict_to_json(const ml_verdict *v)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "status", ml_check_status_name(v->status));
	if (v->cause != ML_CAUSE_NONE)
		cJSON_AddStringToObject(j, "cause", ml_cause_name(v->cause));
	else
		cJSON_AddNullToObject(j, "cause");
	cJSON_AddNumberToObject(j, "exit_code", ml_verdict_exit_code(v));
	cJSON_AddStringToObject(j, "summary", v->summary);
	cJSON_AddItemToObject(j, "checks", checks_json(v->checks, v->n_checks));
	cJSON *gpus = cJSON_AddArrayToObject(j, "gpus");
	for (size_t i = 0; gpus && i < v->n_gpus; i++) {
		const ml_verdict_gpu *g = &v->gpus[i];
		cJSON *o = cJSON_CreateObject();
		char cc[16];
		cJSON_AddNumberToObject(o, "index", g->index);
		cJSON_AddStringToObject(o, "name", g->name);
		ml_cc_format(cc, sizeof(cc), g->cc_major, g->cc_minor);
		if (cc[0])
			cJSON_AddStringToObject(o, "cc", cc);
		else
			cJSON_AddNullToObject(o, "cc");
		cJSON_AddItemToObject(o, "checks", checks_json(g->checks, g->n_checks));
		cJSON_AddItemToArray(gpus, o);
	}
	if (!gpus) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}
