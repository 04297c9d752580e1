/*
 * listing.c - what a provider's listing of a project holds, released: the
 * one helper complete.c (files named by hash only) and torch_plan.c (the
 * torch builds on offer) share, kept apart so that neither calls the
 * other for it.
 */
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
