/*
 * mkwinlauncher.c - writes a Windows script launcher .exe with the env
 * stage's ml_winlauncher_*() functions, for tests that run it under wine
 * (tests/cli/t0921-windows-launcher.sh). A test tool, not part of mlsetup.
 *
 *   mkwinlauncher BASE.exe OUT.exe INTERPRETER entry MODULE:ATTR
 *   mkwinlauncher BASE.exe OUT.exe INTERPRETER script FILE
 *
 * BASE.exe is a launcher program (build/launcher/launcher-console.exe or
 * launcher-gui.exe); INTERPRETER is written into OUT.exe as given. Exits 0,
 * or 1 with the error on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsetup/core.h"
#include "../../src/env/internal.h"

static int slurp(ml_buf *b, const char *path)
{
	FILE *f = fopen(path, "rb");
	char chunk[65536];
	size_t n;

	if (!f) {
		perror(path);
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (ml_buf_add(b, chunk, n)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	ml_buf base = ML_BUF_INIT, out = ML_BUF_INIT, script = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;
	int rc;

	if (argc != 6 || (strcmp(argv[4], "entry") != 0 && strcmp(argv[4], "script") != 0)) {
		fprintf(stderr, "usage: mkwinlauncher BASE.exe OUT.exe INTERPRETER "
		                "(entry MODULE:ATTR | script FILE)\n");
		return 2;
	}
	if (slurp(&base, argv[1]))
		return 1;
	if (strcmp(argv[4], "entry") == 0) {
		char module[512], attr[512];

		rc = ml_entry_point_split(module, sizeof module, attr, sizeof attr, argv[5], &err);
		if (!rc)
			rc = ml_winlauncher_entry_point(&out, base.data, base.len, argv[3], module,
			                                attr, &err);
	} else {
		if (slurp(&script, argv[5]))
			return 1;
		rc = ml_winlauncher_script(&out, base.data, base.len, argv[3], script.data,
		                           script.len, &err);
	}
	if (rc) {
		fprintf(stderr, "mkwinlauncher: %s\n", err.msg);
		return 1;
	}
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) {
		perror(argv[2]);
		return 1;
	}
	ml_buf_release(&base);
	ml_buf_release(&out);
	ml_buf_release(&script);
	return 0;
}
