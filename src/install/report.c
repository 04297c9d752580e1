/*
 * report.c - the run's report (mlsetup-report.json, src/report/): the
 * stages it is timed by, the document as far as the run got, and the
 * "unverified" report an environment is committed with (mli_build_env),
 * which the run's final report replaces (install.c).
 */
#include <cjson/cJSON.h>

#include "internal.h"
#include "mlsetup/report.h"

static const char *const stage_names[ML_STAGE_COUNT] = {"detect",      "plan",    "fetch",
                                                        "interpreter", "install", "verify"};

const char *ml_install_stage_name(ml_install_stage s)
{
	return (unsigned)s < ML_STAGE_COUNT ? stage_names[s] : "?";
}

cJSON *mli_report_build(mli_run *r, int rc, const ml_err *err, bool unverified)
{
	ml_install_result *res = r->res;
	cJSON *verification = res->imports ? ml_import_check_to_json(res->imports) : NULL;
	ml_report_input in = ML_REPORT_INPUT_INIT;
	in.status = rc;
	in.err = err;
	in.target = res->target;
	in.machine = res->machine;
	in.plan = res->plan;
	in.python = &res->python;
	in.python_already_unpacked = res->python_cached;
	in.python_source = res->python_source;
	in.python_reason = res->python_reason;
	in.wheels = res->wheels;
	in.from_cache = res->from_cache;
	in.stage_names = stage_names;
	in.stage_seconds = res->seconds;
	in.n_stages = ML_STAGE_COUNT;
	in.downloaded_files = res->n_downloaded;
	in.downloaded_bytes = res->bytes_downloaded;
	in.files_from_cache = res->n_from_cache;
	in.verification = verification;
	in.audit_before_build = res->audit;
	in.gpu = res->gpu;
	/* where the manifest came from (the plan holds it once chosen) */
	in.project = res->plan && res->plan->project ? res->plan->project : r->project;
	in.unverified = unverified;
	cJSON *doc = ml_report_build(&in);
	cJSON_Delete(verification);
	return doc;
}

int mli_write_report_unverified(mli_run *r, const char *dir, ml_err *err)
{
	cJSON *doc = mli_report_build(r, 0, NULL, true);
	if (!doc)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = ml_report_write(dir, doc, err);
	cJSON_Delete(doc);
	return rc;
}
