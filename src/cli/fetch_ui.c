/*
 * fetch_ui.c - turns the fetch stage's progress reports (forwarded by the
 * pipelines as FETCH events) into redraws of the progress display
 * (core/progress.c draws; stages never print).
 */
#include <stdio.h>

#include "fetch_ui.h"

static void show_progress(ml_fetch_ui *ui, const ml_fetch_progress *p)
{
	if (!ui->display)
		ui->display = ml_progress_new(ui->enabled);
	if (p->note) {
		char line[1400];
		snprintf(line, sizeof(line), "warning: %s", p->note);
		ml_progress_note(ui->display, line);
		return;
	}
	ml_progress_state s = {0};
	s.title = ui->title ? ui->title : "downloading";
	s.items_done = p->n_done;
	s.items_total = p->n_items;
	s.bytes_done = p->done_bytes;
	s.bytes_total = p->total_bytes;
	s.rate = p->rate;
	size_t n = p->n_active < ML_FETCH_UI_LINES ? p->n_active : ML_FETCH_UI_LINES;
	for (size_t i = 0; i < n; i++)
		ui->lines[i] = (ml_progress_line){p->active[i].name, p->active[i].have,
		                                  p->active[i].size, p->active[i].attempt};
	s.lines = ui->lines;
	s.n_lines = n;
	if (!p->final)
		ml_progress_update(ui->display, &s);
}

void ml_fetch_ui_finish(ml_fetch_ui *ui)
{
	ml_progress_finish(ui->display);
	ui->display = NULL;
}

void ml_fetch_ui_event(ml_fetch_ui *ui, const ml_install_event *ev)
{
	if (ev->stage != ML_STAGE_FETCH && ev->stage != ML_STAGE_INTERPRETER)
		return;
	if (ev->kind == ML_EV_FETCH) {
		const char *title = ui->title;
		if (ev->stage == ML_STAGE_INTERPRETER)
			ui->title = "downloading the interpreter";
		show_progress(ui, ev->fetch);
		ui->title = title;
	} else if (ev->kind == ML_EV_STAGE_END)
		ml_fetch_ui_finish(ui);
	else if (ev->kind == ML_EV_FETCH_FAILED) {
		ml_fetch_ui_finish(ui);
		ml_report_error(ev->err);
	}
}
