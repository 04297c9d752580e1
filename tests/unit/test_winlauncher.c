/*
 * test_winlauncher.c - specs for the Windows script launchers' .exe files
 * (src/env/winlauncher.c): the layout the launcher program reads (payload
 * after the program, footer, a zip ending the file with __main__.py), the
 * script written for an entry point, "#!python" scripts, exe names and
 * refused inputs. The launcher program itself runs under wine in
 * tests/cli/t0921-windows-launcher.sh; here a fake program stands in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libdeflate.h>

#include "mlsetup/env.h"
#include "../../src/env/internal.h"

/* A stand-in launcher program: "MZ" and filler. */
static unsigned char g_base[200];

static int setup(void **state)
{
	(void)state;
	memset(g_base, 0xcc, sizeof g_base);
	g_base[0] = 'M';
	g_base[1] = 'Z';
	return 0;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static unsigned rd16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* What the launcher and zipimport read back from an .exe. */
typedef struct parsed {
	size_t zip_start;
	char interpreter[512];
	const unsigned char *script;
	size_t script_len;
} parsed;

/* Reads exe as the launcher does (end record -> zip start -> footer ->
 * path) and checks the zip as a reader that allows leading data does:
 * one stored member __main__.py with the right CRC, sizes and offsets. */
static void parse(const ml_buf *exe, parsed *p)
{
	const unsigned char *d = (const unsigned char *)exe->data;
	size_t n = exe->len;

	assert_true(n > 22 + 16);
	const unsigned char *end = d + n - 22;
	assert_int_equal(rd32(end), 0x06054b50u);
	assert_int_equal(rd16(end + 8), 1);
	assert_int_equal(rd16(end + 10), 1);
	assert_int_equal(rd16(end + 20), 0); /* no comment: the record ends the file */
	uint32_t cd_size = rd32(end + 12), cd_off = rd32(end + 16);
	p->zip_start = n - 22 - cd_size - cd_off;

	const unsigned char *footer = d + p->zip_start - 16;
	assert_memory_equal(footer + 8, "mlsetupL", 8);
	assert_int_equal(rd32(footer + 4), 0);
	uint32_t il = rd32(footer);
	assert_true(il < sizeof p->interpreter);
	memcpy(p->interpreter, footer - il, il);
	p->interpreter[il] = '\0';
	/* the program comes first, untouched */
	assert_int_equal((size_t)(footer - il - d), sizeof g_base);
	assert_memory_equal(d, g_base, sizeof g_base);

	const unsigned char *cd = d + p->zip_start + cd_off;
	assert_int_equal(rd32(cd), 0x02014b50u);
	assert_int_equal(rd16(cd + 10), 0); /* stored */
	assert_int_equal(rd16(cd + 28), 11);
	assert_memory_equal(cd + 46, "__main__.py", 11);
	assert_int_equal(cd_size, 46 + 11);
	uint32_t crc = rd32(cd + 16), size = rd32(cd + 24);
	assert_int_equal(rd32(cd + 20), size);
	const unsigned char *local = d + p->zip_start + rd32(cd + 42);
	assert_int_equal(rd32(local), 0x04034b50u);
	assert_int_equal(rd32(local + 14), crc);
	assert_int_equal(rd32(local + 18), size);
	assert_int_equal(rd16(local + 26), 11);
	assert_int_equal(rd16(local + 28), 0);
	assert_memory_equal(local + 30, "__main__.py", 11);
	p->script = local + 30 + 11;
	p->script_len = size;
	assert_int_equal(libdeflate_crc32(0, p->script, size), crc);
	assert_ptr_equal(p->script + size, cd);
}

static void test_layout_is_program_path_footer_zip(void **state)
{
	(void)state;
	ml_buf exe = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;
	const char script[] = "print('hi')\n";
	parsed p;

	assert_int_equal(ml_winlauncher_build(&exe, g_base, sizeof g_base, "python.exe", script,
	                                      strlen(script), &err),
	                 0);
	parse(&exe, &p);
	assert_string_equal(p.interpreter, "python.exe");
	assert_int_equal(p.script_len, strlen(script));
	assert_memory_equal(p.script, script, strlen(script));
	ml_buf_release(&exe);
}

static void test_output_depends_only_on_inputs(void **state)
{
	(void)state;
	ml_buf a = ML_BUF_INIT, b = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;
	const char *py = "C:\\Program Files\\Python 3.12\\python.exe";

	assert_int_equal(
	        ml_winlauncher_entry_point(&a, g_base, sizeof g_base, py, "pkg.mod", "main", &err),
	        0);
	/* out is replaced, not appended to */
	assert_int_equal(ml_buf_puts(&b, "junk"), 0);
	assert_int_equal(
	        ml_winlauncher_entry_point(&b, g_base, sizeof g_base, py, "pkg.mod", "main", &err),
	        0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	/* fixed DOS date 1980-01-01 00:00 in both headers */
	parsed p;
	parse(&a, &p);
	assert_string_equal(p.interpreter, py);
	const unsigned char *local = (const unsigned char *)a.data + p.zip_start;
	assert_int_equal(rd16(local + 10), 0);
	assert_int_equal(rd16(local + 12), 0x21);
	ml_buf_release(&a);
	ml_buf_release(&b);
}

static void test_entry_point_script_is_pips(void **state)
{
	(void)state;
	ml_buf exe = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;
	parsed p;

	assert_int_equal(ml_winlauncher_entry_point(&exe, g_base, sizeof g_base, "python.exe",
	                                            "pkg.cli", "app.run", &err),
	                 0);
	parse(&exe, &p);
	const char *want =
	        "# -*- coding: utf-8 -*-\n"
	        "import re\n"
	        "import sys\n"
	        "from pkg.cli import app\n"
	        "if __name__ == \"__main__\":\n"
	        "    sys.argv[0] = re.sub(r\"(-script\\.pyw|\\.exe)?$\", \"\", sys.argv[0])\n"
	        "    sys.exit(app.run())\n";
	assert_int_equal(p.script_len, strlen(want));
	assert_memory_equal(p.script, want, strlen(want));
	ml_buf_release(&exe);
}

static void test_bad_entry_points_are_refused(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
	        {"os; import shutil", "main"},
	        {"pkg", "main()"},
	        {"pkg", "a\nb"},
	        {"", "main"},
	        {"pkg", ""},
	        {"pkg\"", "main"},
	};
	ml_buf exe = ML_BUF_INIT;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ml_err err = ML_ERR_INIT;
		assert_int_equal(ml_winlauncher_entry_point(&exe, g_base, sizeof g_base,
		                                            "python.exe", bad[i][0], bad[i][1],
		                                            &err),
		                 ML_EPARSE);
		assert_non_null(strstr(err.msg, "entry point"));
	}
	ml_buf_release(&exe);
}

static void test_bad_interpreters_and_programs_are_refused(void **state)
{
	(void)state;
	static const struct {
		const char *path, *says;
	} bad[] = {
	        {"", "empty"},
	        {"C:\\a\"b\\python.exe", "quote"},
	        {"py\nthon.exe", "control character"},
	        {"C:\\env\\Scripts\\", "directory"},
	        {"C:/env/", "directory"},
	};
	ml_buf exe = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ml_err_clear(&err);
		assert_int_equal(ml_winlauncher_build(&exe, g_base, sizeof g_base, bad[i].path, "x",
		                                      1, &err),
		                 ML_EFAIL);
		assert_non_null(strstr(err.msg, bad[i].says));
	}
	char *huge = malloc(3 * 32767 + 2);
	assert_non_null(huge);
	memset(huge, 'a', 3 * 32767 + 1);
	huge[3 * 32767 + 1] = '\0';
	ml_err_clear(&err);
	assert_int_equal(ml_winlauncher_build(&exe, g_base, sizeof g_base, huge, "x", 1, &err),
	                 ML_EFAIL);
	assert_non_null(strstr(err.msg, "too long"));
	free(huge);

	ml_err_clear(&err);
	assert_int_equal(ml_winlauncher_build(&exe, "#!/bin/sh\n", 10, "python.exe", "x", 1, &err),
	                 ML_EFAIL);
	assert_non_null(strstr(err.msg, "not a Windows executable"));
	/* out is left alone on failure */
	assert_int_equal(ml_buf_puts(&exe, "before"), 0);
	assert_int_equal(ml_winlauncher_build(&exe, g_base, sizeof g_base, "", "x", 1, &err),
	                 ML_EFAIL);
	assert_string_equal(ml_buf_cstr(&exe), "before");
	ml_buf_release(&exe);
}

static void test_python_placeholder_scripts(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool launcher;
		ml_winlauncher_kind kind;
	} cases[] = {
	        {"#!python\nprint(1)\n", true, ML_WINLAUNCHER_CONSOLE},
	        {"#!python", true, ML_WINLAUNCHER_CONSOLE},
	        {"#!python -u\n", true, ML_WINLAUNCHER_CONSOLE},
	        {"#!pythonw\r\nimport tk\r\n", true, ML_WINLAUNCHER_GUI},
	        {"#!python3\n", false, ML_WINLAUNCHER_CONSOLE},
	        {"#!python.exe\n", false, ML_WINLAUNCHER_CONSOLE},
	        {"#!/usr/bin/env python\n", false, ML_WINLAUNCHER_CONSOLE},
	        {"@echo off\r\n", false, ML_WINLAUNCHER_CONSOLE},
	        {"", false, ML_WINLAUNCHER_CONSOLE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ml_winlauncher_kind k = (ml_winlauncher_kind)-1;
		bool is = ml_winlauncher_script_kind(cases[i].text, strlen(cases[i].text), &k);
		assert_int_equal(is, cases[i].launcher);
		if (is)
			assert_int_equal(k, cases[i].kind);
	}

	/* The payload is the script, unchanged. */
	const char *script = "#!python\n# -*- coding: latin-1 -*-\nprint(1)\n";
	ml_buf exe = ML_BUF_INIT;
	ml_err err = ML_ERR_INIT;
	parsed p;
	assert_int_equal(ml_winlauncher_script(&exe, g_base, sizeof g_base, "python.exe", script,
	                                       strlen(script), &err),
	                 0);
	parse(&exe, &p);
	assert_int_equal(p.script_len, strlen(script));
	assert_memory_equal(p.script, script, strlen(script));
	assert_int_equal(ml_winlauncher_script(&exe, g_base, sizeof g_base, "python.exe",
	                                       "echo hi\n", 8, &err),
	                 ML_EFAIL);
	assert_non_null(strstr(err.msg, "#!python"));
	ml_buf_release(&exe);
}

static void test_exe_names(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	        {"foo", "foo.exe"},   {"foo.py", "foo.exe"}, {"foo.pyw", "foo.exe"},
	        {"f2py", "f2py.exe"}, {"a.b.py", "a.b.exe"}, {"torchrun", "torchrun.exe"},
	        {"x.sh", "x.sh.exe"}, {".py", ".py.exe"},
	};
	char out[64];
	ml_err err = ML_ERR_INIT;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(ml_winlauncher_exe_name(out, sizeof out, cases[i][0], &err), 0);
		assert_string_equal(out, cases[i][1]);
	}
	assert_int_equal(ml_winlauncher_exe_name(out, 8, "foobar", &err), ML_EFAIL);
	assert_int_equal(ml_winlauncher_exe_name(out, sizeof out, "", &err), ML_EFAIL);
}

static void test_only_the_windows_build_embeds_launchers(void **state)
{
	(void)state;
	const unsigned char *data = NULL;
	size_t len = 0;
	ml_err err = ML_ERR_INIT;

#ifdef _WIN32
	for (int k = ML_WINLAUNCHER_CONSOLE; k <= ML_WINLAUNCHER_GUI; k++) {
		assert_int_equal(ml_winlauncher_base(&data, &len, (ml_winlauncher_kind)k, &err), 0);
		assert_true(len > 1024);
		assert_memory_equal(data, "MZ", 2);
	}
#else
	assert_int_equal(ml_winlauncher_base(&data, &len, ML_WINLAUNCHER_CONSOLE, &err), ML_ENOENT);
	assert_non_null(strstr(err.msg, "launcher-console.exe"));
	assert_non_null(strstr(err.msg, "Windows build"));
#endif
	assert_int_equal(ml_winlauncher_base(&data, &len, (ml_winlauncher_kind)7, &err), ML_EFAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_layout_is_program_path_footer_zip),
	        cmocka_unit_test(test_output_depends_only_on_inputs),
	        cmocka_unit_test(test_entry_point_script_is_pips),
	        cmocka_unit_test(test_bad_entry_points_are_refused),
	        cmocka_unit_test(test_bad_interpreters_and_programs_are_refused),
	        cmocka_unit_test(test_python_placeholder_scripts),
	        cmocka_unit_test(test_exe_names),
	        cmocka_unit_test(test_only_the_windows_build_embeds_launchers),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
