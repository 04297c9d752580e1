/*
 * listing.c - what complete.c (files named by hash only) and torch_plan.c
 * (the torch builds on offer) share of the provider: a note sent through
 * it, and a listing's release; kept apart so that neither calls the other
 * for them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void ml_project_listing_release(ml_project_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_files; i++) {
		free(l->files[i].filename);
		free(l->files[i].url);
		free(l->files[i].sha256);
	}
	free(l->files);
	l->files = NULL;
	l->n_files = 0;
	l->project_seen = false;
	l->rc = 0;
	l->err = (ml_err)ML_ERR_INIT;
}

void ml_plan_note(const ml_plan_provider *pv, ml_plan_note_kind kind, const char *fmt, ...)
{
	if (!pv->note)
		return;
	char text[1400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pv->note(kind, text, pv->note_data);
}
