/*
 * project.c - a user's project as the pipeline's input: the project found
 * or checked out (src/fetch/git.c), its candidate requirements files
 * listed (src/plan/project.c), and the first candidate chosen whose torch
 * build runs on every GPU here and whose CUDA build the driver can start,
 * judged by the rules the shipped manifests are chosen by
 * (ml_select_judge). What a torch build runs on comes from the table of
 * known builds (by the wheel's sha256), else from auditing the torch wheel
 * itself, fetched into the cache and read in place (the plan asks for
 * both through install's provider, resolve.c); a file that pins no hashes
 * is resolved by pip first to learn which torch wheel it means.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "mlsetup/report.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A --manifest path of a project: as given when it exists, else in the
 * project directory dir (when there is one). */
static int add_manifest_option(char ***list, size_t *n, const char *dir, const char *m)
{
	struct stat st;
	char p[4300];
	const char *path = m;
	if (dir && dir[0] && stat(m, &st) != 0 && m[0] != '/' &&
	    ml_pathf(p, sizeof(p), "%s/%s", dir, m) == 0 && stat(p, &st) == 0)
		path = p;
	char **l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l)
		return ML_ENOMEM;
	*list = l;
	if (!(l[*n] = strdup(path)))
		return ML_ENOMEM;
	(*n)++;
	return 0;
}

int mli_project_locate(ml_project_info **out, char *dir, size_t dir_sz,
                       const ml_project_source *src, const char *checkout, const char *cache_dir,
                       const ml_http_opts *http, mli_events *ev, ml_err *err)
{
	*out = NULL;
	ml_project_info *info = calloc(1, sizeof(*info));
	if (!info)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	int rc = 0;
	if (src->git) {
		if (checkout) {
			ml_strlcpy(dir, checkout, dir_sz);
		} else {
			/* a checkout of mlsetup's own, in the cache */
			char cache[4096], key[65];
			rc = ml_cache_dir(cache, sizeof(cache), cache_dir);
			if (!rc && ml_sha256_hex_buf(key, src->url, strlen(src->url)))
				rc = ML_ENOMEM;
			if (!rc &&
			    ml_pathf(dir, dir_sz, "%s/projects/%.16s-%s", cache, key, src->name))
				rc = ML_EFAIL;
			if (rc)
				rc = ml_err_set(err, ML_EFAIL,
				                "no cache directory for the project's checkout");
		}
		if (!rc) {
			mli_say(ev, ML_EV_STEP, "checking out %s%s%s into %s", src->url,
			        src->rev ? " at " : "", src->rev ? src->rev : "", dir);
			ml_git_checkout_result gr;
			rc = ml_git_checkout(&gr, src, dir, !checkout, http, err);
			if (!rc) {
				if (gr.reused)
					mli_say(ev, ML_EV_STEP,
					        "reusing the checkout in %s: clean, at commit %s",
					        dir, gr.commit);
				ml_strlcpy(info->commit, gr.commit, sizeof(info->commit));
				info->checkout_reused = gr.reused;
			}
		}
		if (!rc && (!(info->url = strdup(src->url)) ||
		            (src->rev && !(info->rev = strdup(src->rev)))))
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	} else {
		struct stat st;
		if (stat(src->path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = ml_err_set(err, ML_ENOENT, "project '%s' is not a directory%s",
			                src->path,
			                stat(src->path, &st) ? " (it does not exist)" : "");
			ml_err_hint(err, "give a project directory, or a git URL (https://, "
			                 "file://, git+https://..., with @REV for a revision)");
		} else if (ml_strlcpy(dir, src->path, dir_sz) >= dir_sz) {
			rc = ml_err_set(err, ML_EFAIL, "project path too long");
		} else {
			char probe[4200];
			if (ml_pathf(probe, sizeof(probe), "%s/.", src->path) != 0 ||
			    ml_project_commit(info->commit, probe) != 0)
				info->commit[0] = '\0';
			if (!(info->url = strdup(src->path)))
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	}
	if (!rc && !(info->path = strdup(dir)))
		rc = ml_err_set(err, ML_ENOMEM, "out of memory");
	if (rc) {
		ml_project_info_free(info);
		return rc;
	}
	*out = info;
	return 0;
}

int mli_project_list(char ***out, size_t *n_out, bool *no_torch, const char *dir,
                     const char *const *manifests, size_t n_manifests, ml_err *err)
{
	*out = NULL;
	*n_out = 0;
	*no_torch = false;
	if (!n_manifests)
		return ml_project_candidates(out, n_out, no_torch, dir, err);
	char **list = NULL;
	size_t n = 0;
	for (size_t i = 0; i < n_manifests; i++)
		if (add_manifest_option(&list, &n, dir, manifests[i])) {
			for (size_t k = 0; k < n; k++)
				free(list[k]);
			free(list);
			return ml_err_set(err, ML_ENOMEM, "out of memory");
		}
	*out = list;
	*n_out = n;
	return 0;
}

/* mli_project_open()'s work, for a project. */
static int open_project(mli_run *r, ml_err *err)
{
	const ml_install_opts *o = r->o;
	r->proj_opts = *o;
	r->o = &r->proj_opts;
	int rc = 0;
	if (o->project) {
		ml_project_source src;
		if ((rc = ml_project_source_parse(&src, o->project, err)) != 0)
			return rc;
		/* plan changes nothing: its checkouts live in the cache */
		const char *co = src.git ? (o->checkout ? o->checkout : src.name) : NULL;
		ml_http_opts http = o->fetch.http;
		http.cert = o->index.cert; /* the index configuration comes later */
		rc = mli_project_locate(&r->project, r->proj_dir, sizeof(r->proj_dir), &src,
		                        r->planning ? NULL : co, o->cache_dir, &http, &r->ev, err);
		/* plan shows the target install would use */
		if (!rc && ml_pathf(r->proj_target, sizeof(r->proj_target), "%s/.venv",
		                    src.git ? co : src.path))
			rc = ml_err_set(err, ML_EFAIL, "project path too long");
		ml_project_source_release(&src);
		if (rc)
			return rc;
		if (!o->target)
			r->proj_opts.target = r->proj_target;
	}
	const char *const *ms = o->n_manifests > 1 ? o->manifests : &o->manifest;
	size_t n_ms = o->n_manifests > 1 ? o->n_manifests : o->manifest && o->project ? 1 : 0;
	bool no_torch = false;
	if ((rc = mli_project_list(&r->cands, &r->n_cands, &no_torch, r->proj_dir, ms, n_ms, err)))
		return rc;
	if (no_torch)
		mli_say(&r->ev, ML_EV_STEP,
		        "no requirements file of the project requires torch: %s is "
		        "installed, and the GPU checks do not apply",
		        base_name(r->cands[0]));
	return 0;
}

int mli_project_open(mli_run *r, ml_err *err)
{
	if (!mli_is_project(r->o))
		return 0; /* a manifest, not a project: nothing to check out */
	return MLI_STAGE(r, ML_STAGE_FETCH, open_project(r, err));
}

void mli_project_release(mli_run *r)
{
	for (size_t i = 0; i < r->n_cands; i++)
		free(r->cands[i]);
	free(r->cands);
	r->cands = NULL;
	r->n_cands = 0;
	ml_project_info_free(r->project);
	r->project = NULL;
}

static const ml_requirement *torch_req(const ml_manifest *mf)
{
	for (size_t i = 0; mf->reqs && i < mf->reqs->n_reqs; i++)
		if (strcmp(mf->reqs->reqs[i].normalized, "torch") == 0)
			return &mf->reqs->reqs[i];
	return NULL;
}

/* Opens the cache and the index configuration of r->res->plan's manifest,
 * anew for each candidate (their --index-url lines differ). */
static int sources(mli_run *r, ml_err *err)
{
	ml_index_config_free(r->cfg);
	r->cfg = NULL;
	int rc = 0;
	if (!r->cache)
		rc = ml_cache_open(&r->cache, r->res->plan->cache_dir, ML_CACHE_SHARED, err);
	return rc ? rc : mli_index_config(r, err);
}

/* "the candidate cannot be judged" reasons go here; the GPU rule then
 * warns that the build is unknown. A candidate that failed (pip could not
 * resolve it, its wheel could not be fetched or read) is marked broken:
 * it is passed over, never a fallback. */
static int unjudged(ml_candidate *c, bool broken, const char *fmt, const char *detail)
{
	char *reason = ml_asprintf(fmt, detail);
	int rc = reason ? ml_candidate_unjudged(c, broken, reason) : ML_ENOMEM;
	free(reason);
	return rc;
}

static int unknown(ml_candidate *c, const char *fmt, const char *detail)
{
	return unjudged(c, false, fmt, detail);
}

static int failed(ml_candidate *c, const char *fmt, const char *detail)
{
	return unjudged(c, true, fmt, detail);
}

/* Learns the torch build of candidate plan p (r->res->plan is p): by the
 * table, else by auditing its torch wheel. A candidate that cannot be
 * resolved or fetched gets a reason and stays unjudged (returns 0); only
 * running out of memory fails. */
static int learn_torch(mli_run *r, ml_plan *p, const ml_requirement *req, ml_candidate *c,
                       ml_err *err)
{
	ml_manifest *mf = p->selection->manifest;
	const ml_install_opts *o = r->o;
	ml_err e = ML_ERR_INIT;
	int rc = 0;
	char plat[64];
	snprintf(plat, sizeof(plat), "%s-%s", r->res->machine->os.name, r->res->machine->os.arch);
	if (p->needs_resolution) {
		if (o->offline) {
			const ml_torch_build *b =
			        req->version ? ml_torch_build_find(req->version, plat) : NULL;
			if (b) {
				ml_strlcpy(c->source, "table", sizeof(c->source));
				return ml_manifest_set_torch_build(mf, b, err);
			}
			return unknown(c,
			               "offline, and the table of known torch builds has no build "
			               "for '%s' (pip would have to resolve it)",
			               req->version        ? req->version
			               : req->specifier[0] ? req->specifier
			                                   : "torch, unpinned");
		}
		char managed[4096];
		const char *python = mli_plan_python(&p->python, managed, sizeof(managed));
		if (!python && !r->planning) {
			rc = sources(r, &e);
			if (!rc)
				rc = MLI_STAGE(r, ML_STAGE_INTERPRETER, mli_interpreter(r, &e));
			p = r->res->plan; /* a fallback interpreter plans again */
			mf = p->selection->manifest;
			if (rc)
				return rc == ML_ENOMEM
				       ? (err ? (void)(*err = e) : (void)0),
				       rc
				       : unknown(c,
				                 "the interpreter that would resolve "
				                 "it could not be had: %s",
				                 e.msg);
			python = r->interpreter;
		}
		if (!python)
			return unknown(
			        c,
			        "%s: pip of the environment's interpreter must resolve it to "
			        "learn its torch wheel; give --python PATH (or install once)",
			        "not resolved");
		if (!r->res->python.version[0] &&
		    (rc = ml_python_probe(&r->res->python, python, &e)))
			return failed(c, "its interpreter does not run: %s", e.msg);
		if (!r->res->python_source[0])
			ml_strlcpy(r->res->python_source, p->python.path ? "path" : "managed",
			           sizeof(r->res->python_source));
		if ((rc = sources(r, &e)) == 0)
			rc = MLI_STAGE(r, ML_STAGE_PLAN, mli_resolve(r, python, &e));
		if (rc)
			return rc == ML_ENOMEM ? ((err ? (void)(*err = e) : (void)0), rc)
			                       : failed(c, "it cannot be resolved: %s", e.msg);
		if ((rc = ml_manifest_torch_facts(mf, err)) != 0)
			return rc;
		if (mf->has_gpu_header) {
			ml_strlcpy(c->source, "table", sizeof(c->source));
			return 0;
		}
	} else if (!ml_plan_is_complete(p) && !o->offline) {
		if ((rc = sources(r, &e)) == 0)
			rc = MLI_STAGE(r, ML_STAGE_PLAN, mli_resolve(r, NULL, &e));
		if (rc)
			return rc == ML_ENOMEM ? ((err ? (void)(*err = e) : (void)0), rc)
			                       : failed(c, "its files cannot be found: %s", e.msg);
	}
	const char *why = NULL;
	const ml_artifact *a = ml_plan_torch_wheel(p, o->offline, &why);
	if (!a)
		return unknown(c, "%s", why);
	if (!r->cache && (rc = ml_cache_open(&r->cache, p->cache_dir, ML_CACHE_SHARED, &e)))
		return failed(c, "the cache cannot be opened: %s", e.msg);
	/* this candidate's sources; offline too: its wheel may be on a local
	 * --find-links (a bundle's files/) */
	if ((rc = sources(r, &e)) != 0)
		return failed(c, "%s", e.msg);
	/* the plan fetches and audits it through install's provider */
	ml_plan_provider pv;
	mli_provider x;
	mli_provider_for(&pv, &x, r);
	return ml_candidate_audit_torch(c, p, a, &pv, err);
}

/* "sm_75 sm_80" of the code entries of one kind. */
static char *code_list(const ml_cuda_arch *code, size_t n, bool ptx)
{
	ml_buf b = ML_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		char name[32];
		if (code[i].ptx != ptx || ml_cuda_arch_format(name, sizeof(name), &code[i]))
			continue;
		ml_buf_printf(&b, "%s%s", b.len ? " " : "", name);
	}
	char *s = strdup(b.len ? ml_buf_cstr(&b) : "");
	ml_buf_release(&b);
	return s;
}

/* Records what is known of the candidate's torch build. */
static int record_torch(ml_candidate *c, const ml_plan *p)
{
	const ml_manifest *mf = p->selection->manifest;
	if (!mf->has_gpu_header)
		return 0;
	c->has_torch = true;
	if (!c->source[0])
		ml_strlcpy(c->source, "header", sizeof(c->source));
	ml_strlcpy(c->torch_version, mf->torch ? mf->torch : "", sizeof(c->torch_version));
	const ml_artifact *a = NULL;
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, "torch") == 0)
			a = &p->files[i];
	if (!c->torch_version[0] && a) {
		ml_strlcpy(c->torch_version, a->version, sizeof(c->torch_version));
	}
	if (a && a->filename && !(c->torch_file = strdup(a->filename)))
		return ML_ENOMEM;
	if (a)
		ml_strlcpy(c->torch_sha256, a->sha256, sizeof(c->torch_sha256));
	ml_strlcpy(c->cuda, mf->cuda ? mf->cuda : "", sizeof(c->cuda));
	c->sass = code_list(mf->code, mf->n_code, false);
	c->ptx = code_list(mf->code, mf->n_code, true);
	return c->sass && c->ptx ? 0 : ML_ENOMEM;
}

/* Why a judged candidate was taken or passed over, in one line. */
static int describe(ml_candidate *c, const ml_selection *s, const ml_machine *m, bool fits,
                    bool has_torch_req)
{
	if (c->reason && !c->has_torch && has_torch_req) { /* unjudged: say so */
		char *r = ml_asprintf("%s: torch's build is not known (%s)%s", c->name, c->reason,
		                      c->broken ? ": passed over" : "");
		free(c->reason);
		c->reason = r;
		return r ? 0 : ML_ENOMEM;
	}
	ml_buf b = ML_BUF_INIT;
	const char *tv = c->torch_version[0] ? c->torch_version : "?";
	if (!has_torch_req) {
		ml_buf_printf(&b, "%s: requires no torch: the GPU checks do not apply", c->name);
	} else if (fits) {
		ml_buf_printf(&b, "%s: torch %s runs on %s", c->name, tv,
		              m->n_gpus ? "every GPU here" : "this machine (no NVIDIA GPU)");
		for (size_t i = 0; i < s->n_reasons; i++)
			if (!strcmp(s->reasons[i].rule, "gpu"))
				ml_buf_printf(&b, "; %s", s->reasons[i].detail);
	}
	for (size_t i = 0; !fits && i < s->n_reasons; i++) {
		const ml_reason *rs = &s->reasons[i];
		if (rs->verdict != ML_RULE_FAIL)
			continue;
		if (!strcmp(rs->rule, "gpu")) {
			/* "NVIDIA GeForce RTX 5090 (sm_120): ..." -> the sm name */
			const char *open = strrchr(rs->detail, '(');
			const char *close = open ? strchr(open, ')') : NULL;
			char sm[32] = "";
			if (open && close && close - open < 30)
				snprintf(sm, sizeof(sm), "%.*s", (int)(close - open - 1), open + 1);
			const char *first = c->sass && *c->sass ? c->sass : NULL;
			const char *last = first ? strrchr(first, ' ') : NULL;
			ml_buf_printf(&b, "%s%s: torch %s has no %s code (", b.len ? "; " : "",
			              c->name, tv, sm[0] ? sm : "usable");
			if (first)
				ml_buf_printf(&b, "SASS %.*s%s%s", (int)strcspn(first, " "), first,
				              last ? "\u2026" : "", last ? last + 1 : "");
			else
				ml_buf_puts(&b, "no SASS");
			ml_buf_printf(&b, ", %s%s)", c->ptx && *c->ptx ? "PTX " : "no PTX",
			              c->ptx ? c->ptx : "");
			break; /* one line: the first GPU that fails says it */
		}
		ml_buf_printf(&b, "%s%s: %s", b.len ? "; " : "", c->name, rs->detail);
		break;
	}
	if (!b.len)
		ml_buf_printf(&b, "%s: does not fit", c->name);
	free(c->reason);
	c->reason = strdup(ml_buf_cstr(&b));
	ml_buf_release(&b);
	return c->reason ? 0 : ML_ENOMEM;
}

int mli_project_choose(mli_run *r, ml_err *err)
{
	ml_install_result *res = r->res;
	const ml_machine *m = res->machine;
	ml_candidate *cands = calloc(r->n_cands, sizeof(*cands));
	if (!cands)
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	ml_plan *chosen = NULL, *last = NULL, *fallback = NULL;
	size_t fallback_i = 0;
	int rc = 0;
	size_t i;
	for (i = 0; i < r->n_cands && !rc; i++) {
		ml_candidate *c = &cands[i];
		if (!(c->path = strdup(r->cands[i])) || !(c->name = strdup(base_name(c->path)))) {
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			break;
		}
		if (chosen) {
			c->reason =
			        ml_asprintf("%s: not considered: %s comes first and fits", c->name,
			                    base_name(chosen->selection->manifest->name));
			if (!c->reason)
				rc = ml_err_set(err, ML_ENOMEM, "out of memory");
			continue;
		}
		ml_plan_opts po;
		mli_plan_opts(&po, r->o);
		po.manifest = c->path;
		ml_plan *p = NULL;
		rc = MLI_STAGE(r, ML_STAGE_PLAN, ml_plan_make(&p, m, &po, err));
		if (rc)
			break; /* a broken candidate: its error names the file and line */
		res->plan = p;
		const ml_requirement *req = torch_req(p->selection->manifest);
		bool has_req = req != NULL;
		if (req && !p->selection->manifest->has_gpu_header)
			rc = learn_torch(r, p, req, c, err);
		p = res->plan;
		res->plan = NULL;
		if (!rc)
			rc = record_torch(c, p);
		ml_select_opts so = ML_SELECT_OPTS_INIT;
		so.python_version = p->python.xy;
		bool fits = false;
		if (!rc)
			rc = ml_select_judge(p->selection, m, &so,
			                     i == 0 ? "the project's first candidate, and it fits"
			                            : "fits; the candidates before it do not",
			                     &fits, err);
		/* with GPUs, a build not known to run is only a fallback */
		bool unknown_build = has_req && !c->has_torch && m->n_gpus > 0;
		if (c->broken)
			fits = false;
		if (!rc)
			rc = describe(c, p->selection, m, fits, has_req);
		if (rc) {
			ml_plan_free(p);
			break;
		}
		mli_say(&r->ev, ML_EV_STEP, "candidate %s", c->reason);
		if (fits && !unknown_build) {
			c->chosen = true;
			chosen = p;
		} else if (fits && !fallback) {
			fallback = p;
			fallback_i = i;
		} else {
			ml_plan_free(last);
			last = p;
		}
	}
	if (!rc && !chosen && fallback) {
		chosen = fallback;
		fallback = NULL;
		cands[fallback_i].chosen = true;
		char *why = ml_asprintf("%s; taken: no candidate is known to run here, and nothing "
		                        "rules this one out",
		                        cands[fallback_i].reason);
		if (!why)
			rc = ml_err_set(err, ML_ENOMEM, "out of memory");
		free(cands[fallback_i].reason);
		cands[fallback_i].reason = why;
	}
	ml_plan_free(fallback);
	if (chosen) {
		ml_plan_free(last);
		last = NULL;
	}
	ml_cache_close(r->cache);
	r->cache = NULL;
	ml_index_config_free(r->cfg);
	r->cfg = NULL;
	if (rc) {
		for (size_t k = 0; k < r->n_cands; k++)
			ml_candidate_release(&cands[k]);
		free(cands);
		ml_plan_free(chosen);
		ml_plan_free(last);
		return rc;
	}
	ml_plan *p = chosen ? chosen : last;
	if (!chosen) {
		ml_selection *s = p->selection;
		ml_manifest_free(s->manifest);
		s->manifest = NULL;
		ml_buf why = ML_BUF_INIT;
		for (size_t k = 0; k < r->n_cands; k++)
			ml_buf_printf(&why, "%s%s", k ? "; " : "",
			              cands[k].reason ? cands[k].reason : "");
		snprintf(s->problem, sizeof(s->problem), "no candidate of the project fits: %s",
		         ml_buf_cstr(&why));
		ml_buf_release(&why);
		snprintf(s->remedy, sizeof(s->remedy),
		         "add a requirements file whose torch build has code for these GPUs (and "
		         "name it in [tool.mlsetup] manifests, or pass it with --manifest), or "
		         "force one with a single --manifest FILE");
	} else {
		/* a fallback interpreter plans again with the chosen file */
		r->proj_opts.manifest = chosen->selection->manifest->name;
	}
	p->candidates = cands;
	p->n_candidates = r->n_cands;
	p->project = r->project;
	r->project = NULL;
	res->plan = p;
	return 0;
}
