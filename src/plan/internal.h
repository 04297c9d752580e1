/*
 * internal.h - what the plan stage's files share and no other folder
 * needs: the table of known torch builds, selection's own entry points,
 * lock targets, the interpreter search and the one builder of pip's
 * command line. Unit tests include it to test those pieces directly. (The
 * packaging standards the plan reads with are in mlsetup/pkg.h.)
 */
#ifndef MLSETUP_PLAN_INTERNAL_H
#define MLSETUP_PLAN_INTERNAL_H

#include "mlsetup/plan.h"

/* --- used only inside src/plan (moved from mlsetup/plan.h) ----------------- */

/* Adds a target: platform "os-arch" as above and python "X.Y". Returns 0,
 * ML_EUSAGE (unknown platform, bad version, more than 32 targets). */
int ml_lock_add_target(ml_lock *lk, const char *platform, const char *python, ml_err *err);

/* Returns the recorded file info for a sha256 (lower-case hex), or NULL. */
const ml_file_info *ml_manifest_file(const ml_manifest *mf, const char *sha256);

/* Chooses the manifest for machine m with the rules in the embedded
 * selection.json: a manifest fits when (1) every GPU can run its torch
 * build (ml_arch_runs_on over torch_sass + torch_ptx), (2) the driver meets
 * the manifest's minimum for this OS, or is at least the CUDA minor-version
 * floor and new enough for the GPU's architecture (then with a warning),
 * and (3) OS, CPU architecture and Python version are supported. The
 * preference list is tried in order; no NVIDIA GPU selects the no_gpu
 * manifest with GPU checks skipped. With opts->manifest the choice is
 * forced, and rules that fail become loud warnings. Returns 0 and a
 * selection (whose manifest may be NULL: nothing fits, exit 6), or
 * ML_ENOENT / ML_EPARSE (a manifest or the rules could not be read) or
 * ML_ENOMEM. Caller owns *out; free with ml_selection_free(). */
int ml_select(ml_selection **out, const ml_machine *m, const ml_select_opts *opts, ml_err *err);

/* Frees a selection and its manifest; accepts NULL. */
void ml_selection_free(ml_selection *s);

/* Sets *out (when non-NULL) to the table's builds, oldest version first
 * (per version the default index's, then the variant indexes'), and
 * returns how many there are (0 when the table is broken). Static. */
size_t ml_torch_builds(const ml_torch_build **out);

/* The driver-table row (detect.h, ml_toolkit_driver_find()) whose minimum
 * code built with CUDA toolkit `cuda` needs: its own (*exact true), else
 * the newest older toolkit of the same major, a lower bound (*exact
 * false: a newer toolkit never needs an older driver). NULL when neither
 * is in the table (then the major's minor-version floor is the only
 * bound). The one place ml_torch_build_min_driver() and selection's
 * driver rule take that row from. Static. */
const ml_toolkit_driver *ml_cuda_driver_row(const char *cuda, bool *exact);

/* Returns 0 when the embedded table is present and well-formed (schema
 * "mlsetup.torch-builds/2"; each build with a PEP 440 version, a platform,
 * a backend, an index (default: audited; variant: derived, its backend as
 * local label), a source of one of the three kinds, a dotted or empty cuda,
 * architecture names of the right kind (null only for a derived CUDA
 * build), and for audited builds files with a name and a sha256 that no
 * other file of the table has), else ML_EPARSE with the reason in err;
 * every lookup then answers NULL / 0. */
int ml_torch_builds_check(ml_err *err);

/* manifest.c: the OS mlsetup was built for, as detect names it
 * (ml_machine.os.name: "linux", "windows" or "darwin"); a static string.
 * Whose shipped manifests a name means, and whose rules the remedies
 * (ml_manifest_covering, ml_shipped_build_range) use. */
const char *ml_plan_build_os(void);

/* One installation a PEP 514 registry key describes
 * (Software\Python\<company>\<tag>), as read from the registry: UTF-8
 * strings the caller owns; a value that is missing is NULL. */
typedef struct ml_python_reg {
	const char *company;         /* "PythonCore", "ContinuumAnalytics", "PyLauncher" */
	const char *tag;             /* "3.12", "3.12-32" */
	const char *executable_path; /* InstallPath\ExecutablePath */
	const char *install_path;    /* InstallPath\(Default), a directory */
} ml_python_reg;

/* pyfind.c: the paths ml_python_find_system() tries, in order, for the
 * PATH value path, appended to *list as NUL-terminated strings. POSIX:
 * python3.19 .. python3.8 and python3 in each absolute PATH directory
 * (split on ':'), then in /usr/local/bin and /usr/bin. windows: python.exe
 * and python3.exe in each absolute PATH directory (split on ';'; a drive
 * path or a UNC path), then the interpreters the registry names (reg[0..
 * n_reg), in the order given: PEP 514 "Backwards Compatibility" and
 * "Sample Code" read HKCU before HKLM), then python.org's install
 * directories <local_appdata>/Programs/Python/Python3NN and
 * <program_files>/Python3NN, joined with backslashes (NN 19 down to 8;
 * either root may be NULL). From the registry (PEP 514 "InstallPath"): a
 * key's ExecutablePath, or when it has none, <install_path>\python.exe;
 * the "PyLauncher" company is skipped (PEP 514: it is not an
 * interpreter), and so is an entry whose path is not absolute. reg is
 * ignored on POSIX and may be NULL when n_reg is 0. Relative entries ("",
 * ".") are never searched. Returns 0 or ML_ENOMEM. */
int ml_python_candidates(ml_buf *list, const char *path, bool windows, const ml_python_reg *reg,
                         size_t n_reg, const char *local_appdata, const char *program_files);

/* --- one pip dry run (src/plan/pip.c): the one builder of its command line */

#define ML_PIP_RUN_MAX_ARGS 200

/* `python -m pip install --dry-run --ignore-installed --no-input
 * --disable-pip-version-check --target DIR/target --report
 * DIR/report.json --only-binary=:all:` in a temporary directory DIR, to
 * which the caller appends its own options (target tags, index options,
 * -r FILE) before running it. Resolution (pip.c) and locking (lock.c)
 * both run pip this way. */
typedef struct ml_pip_run {
	char dir[4096];    /* the temporary directory; "" when none */
	char target[4200]; /* DIR/target (pip installs nothing there) */
	char report[4200]; /* DIR/report.json, pip's installation report */
	char input[4200];  /* DIR/requirements.txt, for input given as text */
	const char *argv[ML_PIP_RUN_MAX_ARGS];
	size_t n;
	bool overflow; /* an argument did not fit */
} ml_pip_run;

/* Makes the temporary directory of a resolver's run ($TMPDIR, else %TEMP%
 * on Windows, else /tmp; named "mlsetup-<what>.XXXXXX") and the paths in
 * it, with an empty argv (uv.c fills it). Returns 0 or ML_EIO (err says
 * which directory). */
int ml_resolver_run_begin(ml_pip_run *r, const char *what, ml_err *err);

/* ml_resolver_run_begin() and the fixed part of pip's argv, run with
 * python. Returns 0 or ML_EIO. */
int ml_pip_run_begin(ml_pip_run *r, const char *python, const char *what, ml_err *err);

/* Appends one argument (not copied: it must live until the run); one that
 * does not fit makes ml_pip_run_exec() fail. */
void ml_pip_run_arg(ml_pip_run *r, const char *arg);

/* Runs pip (ml_os_run_output(): at most 1 MiB of output kept, 30 minutes):
 * *output (caller frees) and *status as there. Returns 0, ML_EUSAGE (too
 * many arguments), or ml_os_run_output()'s errors. */
int ml_pip_run_exec(ml_pip_run *r, char **output, int *status, ml_err *err);

/* A resolver (tool: "pip", "uv") that exited non-zero on input for target:
 * sets err to "TOOL could not resolve 'INPUT' for TARGET:" and the last
 * 1500 bytes of its output (may be NULL), with the hint to fix the
 * requirements or the index options. Returns ML_EFAIL. */
int ml_resolver_failed(ml_err *err, const char *tool, const char *input, const char *target,
                       const char *output);

/* Removes the temporary directory. */
void ml_pip_run_end(ml_pip_run *r);

/* Sends a note of kind through pv (printf-style; cut at 1400 bytes);
 * nothing when pv has no note callback (listing.c). */
void ml_plan_note(const ml_plan_provider *pv, ml_plan_note_kind kind, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Writes "<base>/<backend>/" into dst (sz bytes, cut to fit): the PEP 503
 * index of one backend's torch builds, base's trailing slashes dropped
 * (torch_choice.c). */
void ml_torch_variant_url(char *dst, size_t sz, const char *base, const char *backend);

/* --- a torch build for a file that leaves torch open (torch_plan.c) --- */

/* Step 0 of ml_plan_complete() (plan.h): chooses p->torch_choice when p's
 * file leaves torch open, listing through pv and auditing wheels no table
 * knows; says what it does through pv->note. Returns 0 (also when nothing
 * is to be chosen), ML_EUNSUPPORTED (nothing runs here, or the named
 * backend's build does not; err says why and what would), what a listing
 * returns, or ML_ENOMEM. */
int ml_plan_torch_choose(ml_plan *p, const ml_machine *m, const ml_plan_provider *pv,
                         const ml_plan_complete_opts *o, ml_err *err);

/* The resolver's extra arguments for p's torch choice: "torch==<version>"
 * and, for a variant index's build, "--extra-index-url" and its URL.
 * *out (NULL and *n 0 when nothing was chosen) is the caller's: free each
 * string and the array. Returns 0 or ML_ENOMEM. */
int ml_plan_torch_resolve_args(char ***out, size_t *n, const ml_plan *p);

#endif
