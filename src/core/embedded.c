/*
 * embedded.c - looks up the data files compiled into the binary
 * (manifests/embed.sh writes the table into build/gen/embedded.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/core.h"

const ml_embedded_file *ml_embedded_find(const char *name)
{
	for (const ml_embedded_file *f = ml_embedded_files; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

const ml_embedded_file *ml_embedded_require(const char *name)
{
	const ml_embedded_file *f = ml_embedded_find(name);
	if (!f) {
		fprintf(stderr, "mlsetup: broken build: embedded file '%s' missing\n", name);
		abort();
	}
	return f;
}
