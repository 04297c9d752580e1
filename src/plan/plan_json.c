/*
 * plan_json.c - the plan as data for the front end: the "mlsetup.plan/1"
 * JSON document that `plan --json` prints and install reports embed.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mlsetup/detect.h"
#include "internal.h"

static const char *verdict_name(ml_verdict_kind v)
{
	static const char *names[] = {"ok", "warn", "fail", "info"};
	return (unsigned)v < 4 ? names[v] : "info";
}

static cJSON *machine_summary(const ml_machine *m)
{
	cJSON *j = cJSON_CreateObject();
	char plat[64];
	snprintf(plat, sizeof(plat), "%s-%s", m->os.name, m->os.arch);
	cJSON_AddStringToObject(j, "platform", plat);
	cJSON_AddStringToObject(j, "libc", m->os.libc_kind);
	cJSON_AddStringToObject(j, "libc_version", m->os.libc_version);
	if (m->driver.version[0])
		cJSON_AddStringToObject(j, "driver", m->driver.version);
	else
		cJSON_AddNullToObject(j, "driver");
	cJSON *gpus = cJSON_AddArrayToObject(j, "gpus");
	for (size_t i = 0; i < m->n_gpus; i++) {
		char sm[16];
		ml_cc_sm(sm, sizeof(sm), m->gpus[i].cc_major, m->gpus[i].cc_minor);
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "name", m->gpus[i].name);
		cJSON_AddStringToObject(g, "sm", sm);
		cJSON_AddItemToArray(gpus, g);
	}
	cJSON_AddNumberToObject(j, "disk_free_mib", (double)m->disk_free_mib);
	return j;
}

void ml_project_info_add_json(struct cJSON *obj, const char *key, const ml_project_info *p)
{
	cJSON *pj = cJSON_AddObjectToObject(obj, key);
	cJSON_AddStringToObject(pj, "url", p->url);
	if (p->rev)
		cJSON_AddStringToObject(pj, "rev", p->rev);
	else
		cJSON_AddNullToObject(pj, "rev");
	if (p->commit[0])
		cJSON_AddStringToObject(pj, "commit", p->commit);
	else
		cJSON_AddNullToObject(pj, "commit");
	cJSON_AddStringToObject(pj, "path", p->path);
}

cJSON *ml_plan_to_json(const ml_plan *p, const ml_machine *m)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	const ml_selection *s = p->selection;
	const ml_manifest *mf = s->manifest;
	cJSON_AddStringToObject(root, "schema", "mlsetup.plan/1");
	cJSON_AddItemToObject(root, "machine", machine_summary(m));
	cJSON *man = cJSON_AddObjectToObject(root, "manifest");
	if (mf && p->n_candidates) { /* a project's candidate: its file name, and its path */
		const char *slash = strrchr(mf->name, '/');
		cJSON_AddStringToObject(man, "name", slash ? slash + 1 : mf->name);
		cJSON_AddStringToObject(man, "path", mf->name);
		cJSON_AddStringToObject(man, "summary", mf->summary ? mf->summary : "");
		cJSON_AddBoolToObject(man, "embedded", mf->embedded);
	} else if (mf) {
		cJSON_AddStringToObject(man, "name", mf->name);
		cJSON_AddStringToObject(man, "summary", mf->summary ? mf->summary : "");
		cJSON_AddBoolToObject(man, "embedded", mf->embedded);
		/* the set it came from: "windows/requirements.txt" */
		if (mf->embedded_name)
			cJSON_AddStringToObject(man, "embedded_as", mf->embedded_name);
	} else {
		cJSON_AddNullToObject(man, "name");
	}
	if (mf) {
		if (mf->torch)
			cJSON_AddStringToObject(man, "torch", mf->torch);
		else
			cJSON_AddNullToObject(man, "torch");
		if (mf->cuda)
			cJSON_AddStringToObject(man, "cuda", mf->cuda);
		else
			cJSON_AddNullToObject(man, "cuda");
	}
	cJSON_AddBoolToObject(man, "overridden", s->overridden);
	cJSON_AddBoolToObject(root, "gpu_checks_skipped", s->gpu_checks_skipped);
	cJSON *reasons = cJSON_AddArrayToObject(root, "reasons");
	for (size_t i = 0; i < s->n_reasons; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "manifest", s->reasons[i].manifest);
		cJSON_AddStringToObject(r, "rule", s->reasons[i].rule);
		cJSON_AddStringToObject(r, "verdict", verdict_name(s->reasons[i].verdict));
		cJSON_AddStringToObject(r, "detail", s->reasons[i].detail);
		cJSON_AddItemToArray(reasons, r);
	}
	if (!mf) {
		cJSON_AddStringToObject(root, "problem", s->problem);
		cJSON_AddStringToObject(root, "remedy", s->remedy);
	}
	cJSON *py = cJSON_AddObjectToObject(root, "python");
	cJSON_AddStringToObject(py, "version", p->python.version);
	/* where the interpreter comes from: managed, system or path (one key:
	 * a JSON object's names are unique) */
	cJSON_AddStringToObject(py, "source",
	                        p->python.source[0] ? p->python.source
	                        : p->python.path    ? "path"
	                                            : "managed");
	if (p->python.path) {
		cJSON_AddStringToObject(py, "path", p->python.path);
	} else {
		cJSON_AddStringToObject(py, "name", p->python.pin_name ? p->python.pin_name : "");
		cJSON_AddStringToObject(py, "url", p->python.url ? p->python.url : "");
		cJSON_AddStringToObject(py, "sha256", p->python.sha256);
	}
	cJSON_AddStringToObject(root, "target", p->target);
	cJSON_AddStringToObject(root, "cache_dir", p->cache_dir);
	cJSON_AddBoolToObject(root, "needs_resolution", p->needs_resolution);
	/* a shipped manifest without hashes (the Windows set) */
	if (p->needs_resolution && mf && mf->embedded)
		cJSON_AddStringToObject(root, "resolution",
		                        "at first install: the shipped manifest pins versions "
		                        "without hashes; pip resolves it and install locks the "
		                        "hashes the indexes give (trust on first use) in "
		                        "<target>/pylock.toml");
	if (p->selection->manifest)
		cJSON_AddBoolToObject(root, "resolved", p->selection->manifest->resolved);
	/* the resolver that answered: uv where it could be had, else pip */
	if (p->resolver.tool[0]) {
		cJSON *rv = cJSON_AddObjectToObject(root, "resolver");
		cJSON_AddStringToObject(rv, "tool", p->resolver.tool);
		cJSON_AddStringToObject(rv, "version", p->resolver.version);
	}
	/* the torch build chosen for a file that leaves torch open */
	if (p->torch_choice)
		cJSON_AddItemToObject(root, "torch_choice",
		                      ml_torch_choice_to_json(p->torch_choice));
	cJSON *files = cJSON_AddArrayToObject(root, "files");
	for (size_t i = 0; i < p->n_files; i++) {
		const ml_artifact *a = &p->files[i];
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "name", a->name);
		cJSON_AddStringToObject(f, "version", a->version);
		if (a->filename) {
			cJSON_AddStringToObject(f, "filename", a->filename);
			cJSON_AddStringToObject(f, "sha256", a->sha256);
			cJSON_AddNumberToObject(f, "size", (double)a->size);
		} else {
			cJSON_AddNullToObject(f, "filename");
			cJSON_AddNullToObject(f, "sha256");
			cJSON_AddNullToObject(f, "size");
		}
		cJSON_AddBoolToObject(f, "requested", a->requested);
		cJSON_AddBoolToObject(f, "cached", a->cached);
		cJSON_AddItemToArray(files, f);
	}
	if (p->project)
		ml_project_info_add_json(root, "project", p->project);
	if (p->n_candidates) {
		cJSON *cs = cJSON_AddArrayToObject(root, "candidates");
		for (size_t i = 0; i < p->n_candidates; i++) {
			const ml_candidate *c = &p->candidates[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", c->name);
			cJSON_AddStringToObject(o, "path", c->path);
			cJSON_AddBoolToObject(o, "chosen", c->chosen);
			cJSON_AddStringToObject(o, "reason", c->reason ? c->reason : "");
			if (c->has_torch) {
				cJSON *t = cJSON_AddObjectToObject(o, "torch");
				cJSON_AddStringToObject(t, "version", c->torch_version);
				if (c->torch_file)
					cJSON_AddStringToObject(t, "file", c->torch_file);
				else
					cJSON_AddNullToObject(t, "file");
				if (c->torch_sha256[0])
					cJSON_AddStringToObject(t, "sha256", c->torch_sha256);
				else
					cJSON_AddNullToObject(t, "sha256");
				cJSON *sa = cJSON_AddArrayToObject(t, "sass");
				cJSON *pa = cJSON_AddArrayToObject(t, "ptx");
				for (int k = 0; k < 2; k++) {
					const char *v = k ? c->ptx : c->sass;
					while (v && *v) {
						size_t l = strcspn(v, " ");
						if (l) {
							char buf[64];
							snprintf(buf, sizeof(buf), "%.*s", (int)l,
							         v);
							cJSON_AddItemToArray(
							        k ? pa : sa,
							        cJSON_CreateString(buf));
						}
						v += l;
						v += strspn(v, " ");
					}
				}
				if (c->cuda[0])
					cJSON_AddStringToObject(t, "cuda", c->cuda);
				else
					cJSON_AddNullToObject(t, "cuda");
				cJSON_AddStringToObject(t, "source", c->source);
			} else {
				cJSON_AddNullToObject(o, "torch");
			}
			cJSON_AddItemToArray(cs, o);
		}
	}
	cJSON *sz = cJSON_AddObjectToObject(root, "sizes");
	cJSON_AddNumberToObject(sz, "total_bytes", (double)p->total_bytes);
	cJSON_AddNumberToObject(sz, "download_bytes", (double)p->download_bytes);
	cJSON_AddNumberToObject(sz, "disk_needed_bytes_estimate", (double)p->disk_needed_bytes);
	cJSON_AddNumberToObject(sz, "unknown_files", (double)p->n_unknown);
	cJSON *w = cJSON_AddArrayToObject(root, "warnings");
	for (size_t i = 0; i < s->n_warnings; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(s->warnings[i]));
	for (size_t i = 0; i < p->n_warnings; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(p->warnings[i]));
	return root;
}
