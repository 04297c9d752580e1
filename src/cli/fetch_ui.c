/*
 * fetch_ui.c - turns the fetch stage's progress callbacks into redraws of
 * the progress display (core/progress.c draws; stages never print).
 */
#include <stdio.h>

#include "fetch_ui.h"

void ml_fetch_ui_progress(const ml_fetch_progress *p, void *data)
{
	ml_fetch_ui *ui = data;
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
