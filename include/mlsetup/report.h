/*
 * report.h - the report stage: tell people and programs what an install
 * did, and remember it in the environment.
 *
 * An install ends by building the "mlsetup.report/1" document from what
 * every stage returned (ml_report_build) and, when it put a new
 * environment in place, writing it to <target>/mlsetup-report.json
 * (ml_report_write, atomically). Later runs read it back (ml_report_read):
 * the next install compares it with its plan to see that there is nothing
 * to do (ml_report_matches_plan), verify and doctor learn which manifest
 * the environment came from (ml_report_manifest).
 *
 * Source: src/report/report.c. Nothing here prints.
 */
#ifndef MLSETUP_REPORT_H
#define MLSETUP_REPORT_H

#include "mlsetup/core.h"
#include "mlsetup/detect.h"
#include "mlsetup/env.h"
#include "mlsetup/plan.h"
#include "mlsetup/verify.h"

struct cJSON;

/* The report's file name inside an environment, and its schema. */
#define ML_REPORT_FILE   "mlsetup-report.json"
#define ML_REPORT_SCHEMA "mlsetup.report/1"

/* Everything an install report says. Every pointer is borrowed for the
 * call; NULL (or 0) means "this part was not reached" and leaves the part
 * out (or empty), so a failed run reports what it got to. */
typedef struct ml_report_input {
	int status;                     /* 0, or the ML_E* code the run failed with */
	const ml_err *err;              /* the failure when status != 0 (msg, hint) */
	const char *target;             /* the environment's absolute path; NULL: "" */
	const ml_machine *machine;      /* detect's answer */
	const ml_plan *plan;            /* the plan, with plan->n_files wheels */
	const ml_python_info *python;   /* the interpreter (version "" when unknown) */
	bool python_already_unpacked;   /* the pinned interpreter was unpacked before */
	const char *python_source;      /* "managed", "system", "path"; NULL: left out */
	const char *python_reason;      /* why that interpreter (a fallback), or NULL */
	const ml_wheel_result *wheels;  /* plan->n_files install results, in plan order */
	const bool *from_cache;         /* plan->n_files: the wheel came from the cache */
	const char *const *stage_names; /* "detect", "plan", ... (key "<name>_s") */
	const double *stage_seconds;    /* seconds per stage, parallel to stage_names */
	size_t n_stages;
	uint64_t downloaded_files, downloaded_bytes, files_from_cache; /* fetch counters */
	const struct cJSON *verification;   /* the import check (copied in) */
	const ml_audit *audit_before_build; /* the audit of the downloaded wheels */
	const ml_verification *gpu;         /* the GPU checks of the environment */
	const ml_project_info *project;     /* the project the manifest came from */
	bool unverified; /* status 0, but the run has not verified the environment
	                  * yet: the report it commits with, which its final one
	                  * replaces (one killed meanwhile leaves this) */
} ml_report_input;

#define ML_REPORT_INPUT_INIT                                                                       \
	{                                                                                          \
		0                                                                                  \
	}

/* Builds the "mlsetup.report/1" document: schema, mlsetup_version, status
 * ("ok" / "failed", with error and hint when failed / "unverified", see
 * in->unverified), target, machine
 * (ml_machine_to_json), plan (ml_plan_to_json), python {version,
 * executable, already_unpacked, source, reason}, installed[] {name, version, filename,
 * sha256, size (bytes), requested, from_cache, unpacked_cache_hit,
 * bytes_extracted, link_method}, stages {<name>_s..., total_s} (seconds),
 * counters {downloaded_files, downloaded_bytes, files_from_cache,
 * unpacked_cache_hits, bytes_extracted, files_linked, files_reflinked,
 * files_hardlinked, files_copied}, and when present project
 * (ml_project_info_add_json: url, rev, commit, path), verification,
 * audit_before_build (ml_audit_to_json) and gpu_verification
 * (ml_verification_add_json). Returns a new cJSON object (caller frees
 * with cJSON_Delete) or NULL when out of memory. */
struct cJSON *ml_report_build(const ml_report_input *in);

/* Writes doc, pretty-printed and newline-terminated, to
 * <target>/mlsetup-report.json with ml_fs_write_atomic() (temporary file,
 * fsync, rename): readers see the old report or the new one, never a mix.
 * Returns 0, ML_ENOMEM, or ML_EIO (err names the file). */
int ml_report_write(const char *target, const struct cJSON *doc, ml_err *err);

/* A report read back from an environment. Opaque. */
typedef struct ml_report ml_report;

/* Reads and parses <target>/mlsetup-report.json (at most 64 MiB). Caller
 * owns *out; free with ml_report_free(). Returns 0, ML_ENOENT (no report
 * there), ML_EIO, ML_EPARSE (not JSON, or its schema is not
 * "mlsetup.report/1"), ML_ENOMEM. */
int ml_report_read(ml_report **out, const char *target, ml_err *err);

/* The name of the manifest the environment was built from (plan.manifest.
 * name: "requirements.txt" or the path given), owned by r; NULL when the
 * report does not say. */
const char *ml_report_manifest(const ml_report *r);

/* True when the report shows a successful build (status "ok") of exactly
 * plan p: the same manifest name, the same interpreter version and the same
 * set of wheel sha256 digests (order ignored). Then an install of p into
 * that environment has nothing to do. False for NULL arguments, a failed
 * report or a plan without a manifest. */
bool ml_report_matches_plan(const ml_report *r, const ml_plan *p);

/* Frees a report; accepts NULL. */
void ml_report_free(ml_report *r);

/* --- the environment's lock file (src/report/pylock.c) ----------------------- */

/* The lock file every install writes into its environment (PEP 751). */
#define ML_PYLOCK_FILE "pylock.toml"

/* What the environment's lock file says. Borrowed pointers. */
typedef struct ml_pylock_input {
	const ml_plan *plan;          /* the manifest and every installed wheel */
	const char *const *urls;      /* plan->n_files: the URL each wheel is served from
	                               * (NULL entries: unknown); NULL: none known */
	const ml_python_info *python; /* the interpreter */
	const char *python_source;    /* "managed", "system" or "path"; may be NULL */
	const char *python_reason;    /* why this interpreter, or NULL */
	const ml_machine *machine;    /* platform, GPUs and driver; may be NULL */
	const char *commit;           /* the project commit of the manifest, or NULL */
} ml_pylock_input;

#define ML_PYLOCK_INPUT_INIT                                                                       \
	{                                                                                          \
		0                                                                                  \
	}

/* Renders a PEP 751 lock file (lock-version "1.0", created-by "mlsetup",
 * requires-python "==X.Y.*"): one [[packages]] per installed wheel in
 * name order with its [[packages.wheels]] name, url (userinfo removed;
 * left out where unknown, counted in *n_without_url), size (left out
 * where unknown: no server told it before the download) and
 * hashes.sha256, then [tool.mlsetup]: manifest, manifest-embedded,
 * commit, requested (the packages named in the manifest's input),
 * platform, libc, driver, gpus (name, compute-capability, uuid);
 * [tool.mlsetup.python]: version, implementation, executable, source,
 * reason; [tool.mlsetup.header]: the manifest's `# mlsetup:` header, so a
 * lock read back selects and audits like its manifest. *out is a new
 * string (caller frees). Returns 0 or ML_ENOMEM. */
int ml_pylock_render(char **out, const ml_pylock_input *in, size_t *n_without_url, ml_err *err);

/* Renders the lock file and writes it to <dir>/pylock.toml atomically
 * (ml_fs_write_atomic). Returns 0, ML_ENOMEM or ML_EIO. */
int ml_pylock_write(const char *dir, const ml_pylock_input *in, size_t *n_without_url, ml_err *err);

/* Renders a lock file as a hashed requirements file (`mlsetup export
 * --format requirements`): its [tool.mlsetup.header] as `# mlsetup:`
 * lines and requested, then each package pinned with == (its marker
 * kept) followed by --hash=sha256: of every wheel, and a `# mlsetup-file:`
 * line per wheel of known size, so plan names the files offline. *out is a
 * new string (caller frees). Returns 0, ML_EUNSUPPORTED (a package with no
 * wheel) or ML_ENOMEM. */
int ml_pylock_to_requirements(char **out, const ml_pylock *pl, ml_err *err);

/* Writes the commit (40 hex digits) that HEAD of the git repository
 * holding the file at path points at into out (libgit2, searching up from
 * the file's directory). Returns 0, or ML_ENOENT when path is in no
 * repository or HEAD names no commit yet. */
int ml_project_commit(char out[41], const char *path);

#endif /* MLSETUP_REPORT_H */
