/*
 * stage_ui.c - turns the pipelines' events and verify's steps into what a
 * person sees while they run (stage_ui.h). Decides only what to say and
 * when; core/live.c draws the live line and core/progress.c the download
 * bars (docs/ARCHITECTURE.md: the library reports, the front end draws).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stage_ui.h"
#include "verify_ui.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ml_stage_ui_start(ml_stage_ui *ui, bool enabled)
{
	memset(ui, 0, sizeof(*ui));
	ui->mode = ml_live_start(enabled);
	ui->fetch.enabled = enabled;
	ui->fetch.title = "downloading";
}

/* A finished step as a permanent line: "  pass  SAXPY on GPU 0 (0.1 s)". */
static void step_line(ml_check_status st, const char *name, double secs)
{
	if (ml_live_mode_now() != ML_LIVE_TTY)
		return;
	const char *color = st == ML_CHECK_FAIL   ? ml_c("red")
	                    : st == ML_CHECK_WARN ? ml_c("yellow")
	                    : st == ML_CHECK_PASS ? ml_c("green")
	                                          : ml_c("dim");
	ml_live_print("  %s%-4s%s  %s (%.1f s)", color, ml_check_status_name(st), ml_c("reset"),
	              name, secs);
}

void ml_stage_ui_begin(ml_stage_ui *ui, const char *stage)
{
	ui->stage = stage;
	ui->t0 = now_s();
	if (ui->mode == ML_LIVE_PLAIN)
		ml_live_print("mlsetup: %s: started", stage);
	else if (ui->mode == ML_LIVE_TTY)
		ml_live_begin(stage);
}

/* Ends the wheels task, if it runs, with a line saying how far it got. */
static void end_wheels(ml_stage_ui *ui, int rc)
{
	if (!ui->wheels)
		return;
	ui->wheels = false;
	double secs = ml_live_end();
	char text[128];
	snprintf(text, sizeof(text), "%zu of %zu wheels unpacked and linked", ui->n_done,
	         ui->n_total);
	step_line(rc || ui->n_done < ui->n_total ? ML_CHECK_FAIL : ML_CHECK_PASS, text, secs);
}

void ml_stage_ui_end(ml_stage_ui *ui, int rc)
{
	if (!ui->stage)
		return;
	end_wheels(ui, rc);
	double secs = now_s() - ui->t0;
	if (ui->mode == ML_LIVE_PLAIN)
		ml_live_print("mlsetup: %s: %s %.1f s", ui->stage, rc ? "failed after" : "done in",
		              secs);
	else if (ui->mode == ML_LIVE_TTY)
		ml_live_end();
	ui->stage = NULL;
}

void ml_stage_ui_step(const ml_verify_step *step, void *data)
{
	ml_stage_ui *ui = data;
	if (ui->mode != ML_LIVE_TTY)
		return;
	if (!step->done) {
		ml_live_begin(step->name);
		return;
	}
	ml_live_end();
	step_line(step->status, step->name, step->seconds);
}

/* What a check's name means to people. */
static const char *check_title(const char *name)
{
	if (strcmp(name, "audit before build") == 0)
		return "auditing the wheels' CUDA code";
	if (strcmp(name, "imports") == 0)
		return "importing every package";
	if (strcmp(name, "gpu") == 0)
		return "GPU checks";
	return name;
}

static void on_wheel(ml_stage_ui *ui, const ml_install_event *ev)
{
	if (ui->mode != ML_LIVE_TTY)
		return;
	if (!ui->wheels) {
		ui->wheels = true;
		ml_live_begin("");
	}
	ui->n_done = ev->n_done;
	ui->n_total = ev->n_total;
	char text[128];
	snprintf(text, sizeof(text), "%zu of %zu wheels unpacked and linked", ev->n_done,
	         ev->n_total);
	ml_live_text(text);
}

void ml_stage_ui_event(const ml_install_event *ev, void *data)
{
	ml_stage_ui *ui = data;
	ml_fetch_ui_event(&ui->fetch, ev);
	switch (ev->kind) {
	case ML_EV_STAGE_BEGIN:
		ml_stage_ui_begin(ui, ml_install_stage_name(ev->stage));
		break;
	case ML_EV_STAGE_END:
		ml_stage_ui_end(ui, ev->rc);
		break;
	case ML_EV_MACHINE:
		ml_cli_print_machine(ev->machine);
		break;
	case ML_EV_PLAN:
		ml_cli_print_manifest(ev->plan, ev->text);
		break;
	case ML_EV_STEP:
		if (ui->mode == ML_LIVE_TTY)
			ml_live_text(ev->text);
		break;
	case ML_EV_WARNING:
		ml_warn("%s", ev->text);
		break;
	case ML_EV_DETAIL:
		ml_verbose("%s", ev->text);
		break;
	case ML_EV_WHEEL:
		on_wheel(ui, ev);
		break;
	case ML_EV_CHECK_BEGIN:
		if (ui->mode == ML_LIVE_TTY)
			ml_live_begin(check_title(ev->text));
		break;
	case ML_EV_CHECK_END:
		if (ui->mode == ML_LIVE_TTY) {
			double secs = ml_live_end();
			if (!ev->verification) /* the GPU checks' steps have their lines */
				step_line(ev->ok ? ML_CHECK_PASS : ML_CHECK_FAIL,
				          check_title(ev->text), secs);
		}
		if (ev->verification)
			ml_cli_print_verification(ev->verification);
		break;
	case ML_EV_VERIFY_STEP:
		ml_stage_ui_step(ev->verify_step, ui);
		break;
	case ML_EV_FETCH:
	case ML_EV_FETCH_FAILED:
		break; /* the download bars' (fetch_ui) */
	}
}

void ml_stage_ui_finish(ml_stage_ui *ui)
{
	ml_fetch_ui_finish(&ui->fetch);
	ml_live_stop();
}

void ml_cli_print_machine(const ml_machine *m)
{
	char gpus[1024] = "";
	size_t at = 0;
	/* Runs of the same GPU as "2x NAME (sm_XY)". */
	for (size_t i = 0; i < m->n_gpus && at < sizeof(gpus);) {
		size_t j = i + 1;
		while (j < m->n_gpus && strcmp(m->gpus[j].name, m->gpus[i].name) == 0 &&
		       m->gpus[j].cc_major == m->gpus[i].cc_major &&
		       m->gpus[j].cc_minor == m->gpus[i].cc_minor)
			j++;
		char sm[16], count[24] = "";
		ml_cc_sm(sm, sizeof(sm), m->gpus[i].cc_major, m->gpus[i].cc_minor);
		if (j - i > 1)
			snprintf(count, sizeof(count), "%zux ", j - i);
		at += (size_t)snprintf(gpus + at, sizeof(gpus) - at, "%s%s%s (%s)", i ? ", " : "",
		                       count, m->gpus[i].name, sm);
		i = j;
	}
	char cuda[32] = "";
	if (m->driver.cuda_version > 0)
		snprintf(cuda, sizeof(cuda), " (CUDA %d.%d)", m->driver.cuda_version / 1000,
		         m->driver.cuda_version % 1000 / 10);
	/* "glibc 2.36"; where there is no libc to name (Windows), the OS */
	char sys[160];
	if (m->os.libc_kind[0])
		snprintf(sys, sizeof(sys), "%s %s", m->os.libc_kind, m->os.libc_version);
	else
		snprintf(sys, sizeof(sys), "%s",
		         m->os.distro_pretty[0] ? m->os.distro_pretty : m->os.kernel);
	ml_say("%smachine%s   %s-%s, %s, driver %s%s; %s", ml_c("bold"), ml_c("reset"),
	       m->os.name, m->os.arch, sys, m->driver.version[0] ? m->driver.version : "none",
	       cuda,
	       m->n_gpus ? gpus : "no NVIDIA GPU");
}

void ml_cli_print_manifest(const ml_plan *p, const char *reason)
{
	const ml_manifest *mf = p->selection->manifest;
	if (!mf)
		return;
	bool why = reason && reason[0];
	const ml_project_info *pj = p->project;
	if (pj)
		ml_say("%sproject%s   %s%s%s%s%s in %s%s", ml_c("bold"), ml_c("reset"), pj->url,
		       pj->rev ? " @ " : "", pj->rev ? pj->rev : "", pj->commit[0] ? ", commit " : "",
		       pj->commit, pj->path,
		       pj->checkout_reused ? " (the checkout there reused: clean, at that commit)"
		                           : "");
	for (size_t i = 0; i < p->n_candidates; i++)
		ml_say("  %s %s", p->candidates[i].chosen ? "*" : "-", p->candidates[i].reason);
	ml_say("%smanifest%s  %s%s%s%s%s%s", ml_c("bold"), ml_c("reset"), mf->name,
	       mf->summary ? " - " : "", mf->summary ? mf->summary : "", why ? " (" : "",
	       why ? reason : "", why ? ")" : "");
}
