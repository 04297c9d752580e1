/*
 * audit_ui.c - an audit as people read it: the rendering of `mlsetup
 * audit`'s human output (the JSON document comes from the library,
 * ml_audit_to_json()). Nothing here decides anything: states, reasons and
 * the outcome come from the audit.
 */
#include <stdio.h>
#include <string.h>

#include "audit_ui.h"
#include "mlsetup/detect.h"
#include "mlsetup/plan.h"

/* Prints s with control characters (from file or member names) as '?'. */
static void safe_copy(char *dst, size_t sz, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < sz; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	dst[i] = '\0';
}

static void arch_list(char *dst, size_t sz, const ml_cuda_arch *v, size_t n)
{
	size_t len = 0;
	dst[0] = '\0';
	if (n == 0) {
		snprintf(dst, sz, "none");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char nm[32];
		if (ml_cuda_arch_format(nm, sizeof nm, &v[i]))
			snprintf(nm, sizeof nm, "?");
		int w = snprintf(dst + len, sz - len, "%s%s", i ? " " : "", nm);
		if (w < 0 || (size_t)w >= sz - len)
			return;
		len += (size_t)w;
	}
}

/* The code that is not executable fatbin: embedded containers (loaded by
 * the library itself; they count), relocatable device code (never loaded)
 * and kernel-less architectures; a line each, only when there is some. */
static void print_other_code(const ml_fatbin_list *c)
{
	char sass[1024], ptx[1024];
	if (c->n_embedded_sass || c->n_embedded_ptx) {
		arch_list(sass, sizeof sass, c->embedded_sass, c->n_embedded_sass);
		arch_list(ptx, sizeof ptx, c->embedded_ptx, c->n_embedded_ptx);
		ml_say("  embedded (loaded by the library at run time): SASS %s; PTX %s", sass,
		       ptx);
	}
	if (c->n_relocatable_sass || c->n_relocatable_ptx) {
		arch_list(sass, sizeof sass, c->relocatable_sass, c->n_relocatable_sass);
		arch_list(ptx, sizeof ptx, c->relocatable_ptx, c->n_relocatable_ptx);
		ml_say("  relocatable (device-link input, never loaded): SASS %s; PTX %s", sass,
		       ptx);
	}
	if (c->n_kernelless) {
		arch_list(sass, sizeof sass, c->kernelless, c->n_kernelless);
		ml_say("  kernel-less (no kernels in these cubins): %s", sass);
	}
	if (c->n_kernelless_ptx) {
		arch_list(ptx, sizeof ptx, c->kernelless_ptx, c->n_kernelless_ptx);
		ml_say("  kernel-less (no .entry in these PTX modules): %s", ptx);
	}
	if (c->n_merc)
		ml_say("  %zu cubin%s read carry Mercury sections (.nv.merc.*, CUDA 13)", c->n_merc,
		       c->n_merc == 1 ? "" : "s");
	if (c->n_unreadable)
		ml_say("  %zu cubin%s or PTX module%s could not be read (counted as holding "
		       "kernels)",
		       c->n_unreadable, c->n_unreadable == 1 ? "" : "s",
		       c->n_unreadable == 1 ? "" : "s");
}

/* The driver part of a torch build's line: "needs driver ≥ 570.26
 * (Linux)"; both OSes when the wheel's platform names neither; a lower
 * bound or an unknown minimum says why. */
static void driver_needs(char *dst, size_t sz, const ml_torch_build *b)
{
	bool lin = strncmp(b->platform, "linux", 5) == 0,
	     win = strncmp(b->platform, "windows", 7) == 0;
	if (!lin && !win)
		lin = win = true;
	const char *os[2] = {"Linux", "Windows"};
	bool want[2] = {lin, win}, lower = false, unknown = false;
	size_t len = (size_t)snprintf(dst, sz, "needs driver");
	for (int i = 0; i < 2 && len < sz; i++) {
		if (!want[i])
			continue;
		bool at_least = false;
		const char *v = ml_torch_build_min_driver(b, i == 1, &at_least);
		lower |= at_least;
		unknown |= !v;
		len += (size_t)snprintf(dst + len, sz - len, "%s ≥ %s (%s)%s",
		                        i == 1 && lin ? "," : "", v ? v : "?", os[i],
		                        at_least ? " at least" : "");
	}
	if (len < sz && (lower || unknown))
		snprintf(dst + len, sz - len, " (mlsetup's driver table has %s for CUDA %s)",
		         lower ? "no row" : "no minimum", b->cuda);
}

/* One line per torch wheel: its CUDA version, the SASS and PTX of torch's
 * own CUDA library and the driver that needs; then the libraries that
 * miss some of those GPUs, and whether mlsetup's table knows the file. */
static void print_torch_wheels(const ml_audit *a)
{
	const char *b = ml_c("bold"), *r = ml_c("reset"), *y = ml_c("yellow");
	char name[1024], sass[1024], ptx[1024], drv[512], lib[512];
	for (size_t i = 0; i < a->n_torch; i++) {
		const ml_torch_wheel *w = &a->torch[i];
		const ml_torch_build *tb = &w->build;
		const char *slash = strrchr(w->path, '/');
		safe_copy(name, sizeof name, slash ? slash + 1 : w->path);
		arch_list(sass, sizeof sass, tb->sass, tb->n_sass);
		arch_list(ptx, sizeof ptx, tb->ptx, tb->n_ptx);
		if (w->hip[0] && !tb->cuda[0])
			ml_say("%s%s%s: ROCm build (HIP %s), no CUDA code", b, name, r, w->hip);
		else if (!tb->cuda[0] && tb->n_sass + tb->n_ptx == 0)
			ml_say("%s%s%s: CPU-only build (CUDA none), needs no NVIDIA driver", b,
			       name, r);
		else {
			driver_needs(drv, sizeof drv, tb);
			ml_say("%s%s%s: CUDA %s%s, SASS %s, PTX %s, %s", b, name, r,
			       tb->cuda[0] ? tb->cuda : "unknown",
			       tb->cuda[0] && !strchr(tb->cuda, '.') ? ".x" : "", sass, ptx, drv);
		}
		for (size_t g = 0; g < w->n_gaps; g++) {
			safe_copy(lib, sizeof lib, w->gaps[g].library);
			arch_list(sass, sizeof sass, w->gaps[g].missing, w->gaps[g].n_missing);
			ml_say("  %s%s: no code for %s%s (what it does fails on those GPUs)", y,
			       lib, sass, r);
		}
		if (w->known)
			ml_say("  in mlsetup's torch-build table: torch %s%s%s%s%s (%s)%s",
			       w->known->version, w->known->local[0] ? "+" : "", w->known->local,
			       w->known->build_tag[0] ? ", build " : "", w->known->build_tag,
			       w->known->platform,
			       w->known_agrees
			               ? ""
			               : ", which says other CUDA or code: regenerate it (make "
			                 "torch-builds)");
	}
}

void ml_cli_print_audit(const ml_audit *a, bool detected)
{
	const char *b = ml_c("bold"), *r = ml_c("reset"), *red = ml_c("red"), *g = ml_c("green"),
	           *y = ml_c("yellow");
	char path[4096], msg[512], sass[1024], ptx[1024], sm[32];
	for (size_t i = 0; i < a->n_files; i++) {
		const ml_audit_file *f = &a->files[i];
		safe_copy(path, sizeof path, f->path);
		safe_copy(msg, sizeof msg, f->error_msg);
		if (f->error && !f->has_code) {
			ml_say("%s%s%s: %serror:%s %s", b, path, r, red, r, msg);
			continue;
		}
		arch_list(sass, sizeof sass, f->code.sass, f->code.n_sass);
		arch_list(ptx, sizeof ptx, f->code.ptx, f->code.n_ptx);
		char extra[64] = "";
		if (f->code.n_compressed)
			snprintf(extra, sizeof extra, " (%zu compressed)", f->code.n_compressed);
		ml_say("%s%s%s: SASS %s; PTX %s%s", b, path, r, sass, ptx, extra);
		print_other_code(&f->code);
		if (f->error)
			ml_say("  %serror:%s %s", red, r, msg);
		for (size_t d = 0; f->has_code && d < a->n_devices; d++) {
			ml_cuda_arch_format(sm, sizeof sm, &a->devices[d]);
			const ml_audit_answer *an = &f->answers[d];
			if (an->state == ML_AUDIT_RUNS)
				ml_say("  %s: %sruns%s (%s)", sm, g, r, an->why);
			else if (an->state == ML_AUDIT_UNVERIFIED)
				ml_say("  %s: %sunverified:%s %s", sm, y, r, an->why);
			else if (an->state == ML_AUDIT_NOT_FOR_GPU)
				ml_say("  %s: %snot for this GPU:%s %s", sm, y, r,
				       an->why + (strncmp(an->why, "not for this GPU: ", 18) ? 0
				                                                             : 18));
			else
				ml_say("  %s: %sdoes NOT run:%s %s", sm, red, r, an->why);
			/* torch's own check, where it judges otherwise than NVIDIA */
			if (an->torch_checked && an->torch_runs != an->runs)
				ml_say("    torch's own check %s: %s",
				       an->torch_runs ? "accepts it" : "would warn", an->torch_why);
		}
	}
	print_torch_wheels(a);
	char errs[64] = "", unver[128] = "";
	if (a->n_errors)
		snprintf(errs, sizeof errs, ", %s%zu could not be audited%s", red, a->n_errors, r);
	if (a->n_unverified)
		snprintf(unver, sizeof unver,
		         ", %s%zu unverified%s (no kernels visible; stored in another form)", y,
		         a->n_unverified, r);
	ml_say("%ssummary%s: %zu librar%s scanned, %zu with CUDA code%s%s", b, r, a->n_scanned,
	       a->n_scanned == 1 ? "y" : "ies", a->n_with_code, unver, errs);
	for (size_t i = 0; i < a->n_files; i++)
		if (a->files[i].unverified) {
			safe_copy(path, sizeof path, a->files[i].path);
			ml_say("  unverified: %s", path);
		}
	if (a->n_devices == 0)
		ml_say("  no GPU detected to answer for; name one with --arch sm_XY");
	bool conditional = false;
	for (size_t i = 0; i < a->n_files; i++)
		for (size_t d = 0; a->files[i].has_code && d < a->n_devices; d++)
			conditional |= a->files[i].answers[d].conditional;
	if (a->driver_cuda)
		ml_say("  PTX judged for driver %s (CUDA %d.%d)", a->driver[0] ? a->driver : "?",
		       a->driver_cuda / 1000, (a->driver_cuda % 1000) / 10);
	else if (conditional)
		ml_say("  no driver known: PTX counts where a driver new enough could JIT it, as "
		       "said per library (--driver VERSION judges by one)");
	for (size_t d = 0; d < a->n_devices; d++) {
		ml_cuda_arch_format(sm, sizeof sm, &a->devices[d]);
		if (a->overall[d].runs)
			ml_say("  %s%s: %sruns%s: %s", sm, detected ? " (detected)" : "", g, r,
			       a->overall[d].why);
		else
			ml_say("  %s%s: %sdoes NOT run%s: %s", sm, detected ? " (detected)" : "",
			       red, r, a->overall[d].why);
	}
}
