/*
 * test_winenv.c - specs for the Windows venv layout (src/env/wheel.c,
 * venv.c; CPython's sysconfig "nt" scheme and its venv module on
 * Windows): the layout's directories, a wheel installed into Scripts\ and
 * Lib\site-packages with entry points and "#!python" scripts as .exe
 * launchers listed in RECORD, names Windows cannot create refused before
 * anything is written, and ml_venv_create() with a fake
 * interpreter tree (files of known bytes) for each way CPython's venv
 * finds python.exe. Pure file writing: runs on Linux (stand-in launcher
 * programs) and under wine (make check-windows) alike.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "env_testutil.h"
#include "mlsetup/env.h"
#include "../../src/env/internal.h"

/* Stand-ins for the launcher programs: "MZ" and a filler per kind. */
static unsigned char g_console[64], g_gui[80];

typedef struct fx {
	char *tmp;
	int seq;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof *f);
	f->tmp = tmpdir_new("winenv");
	if (!f->tmp)
		return -1;
	memset(g_console, 0xcc, sizeof g_console);
	memset(g_gui, 0xdd, sizeof g_gui);
	g_console[0] = g_gui[0] = 'M';
	g_console[1] = g_gui[1] = 'Z';
	ml_winlauncher_set_base(ML_WINLAUNCHER_CONSOLE, g_console, sizeof g_console);
	ml_winlauncher_set_base(ML_WINLAUNCHER_GUI, g_gui, sizeof g_gui);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	ml_winlauncher_set_base(ML_WINLAUNCHER_CONSOLE, NULL, 0);
	ml_winlauncher_set_base(ML_WINLAUNCHER_GUI, NULL, 0);
	rm_rf(f->tmp);
	free(f->tmp);
	free(f);
	return 0;
}

/* Writes text to <dir>/<rel>, making directories. */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[4096], parent[4096];
	const char *base;
	pf(path, "%s/%s", dir, rel);
	assert_int_equal(ml_fs_split_path(parent, sizeof parent, &base, path), 0);
	assert_int_equal(ml_fs_mkdirs(parent, 0755), 0);
	assert_int_equal(ml_fs_write_file(path, text, strlen(text), 0644, false, false), 0);
}

static char *file_in(const char *root, const char *rel, size_t *len)
{
	char path[4096];
	char *s = slurp(pf(path, "%s/%s", root, rel), len);
	if (!s)
		fail_msg("missing %s", path);
	return s;
}

/* The file's bytes equal b's. */
static void assert_file_is(const char *root, const char *rel, const ml_buf *b)
{
	size_t n = 0;
	char *s = file_in(root, rel, &n);
	if (n != b->len || memcmp(s, b->data, n) != 0)
		fail_msg("%s: %zu bytes, expected %zu", rel, n, b->len);
	free(s);
}

static bool is_dir(const char *root, const char *rel)
{
	char path[4096];
	struct stat st;
	return stat(pf(path, "%s/%s", root, rel), &st) == 0 && S_ISDIR(st.st_mode);
}

static ml_env_layout win_env(fx *f, const char *final_root)
{
	char root[4096];
	pf(root, "%s/env-%d", f->tmp, f->seq++);
	assert_int_equal(ml_fs_mkdirs(root, 0755), 0);
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	if (ml_env_layout_init_os(&env, root, final_root ? final_root : root, "3.12",
	                          ML_ENV_WINDOWS, &err) != 0)
		fail_msg("%s", err.msg);
	return env;
}

/* --- the layout ------------------------------------------------------------------------- */

static void test_windows_layout_is_cpythons_nt_scheme(void **state)
{
	(void)state;
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_env_layout_init_os(&env, "C:/s/.venv.stage", "C:\\w\\.venv", "3.12",
	                                       ML_ENV_WINDOWS, &err),
	                 0);
	assert_int_equal(env.os, ML_ENV_WINDOWS);
	assert_string_equal(env.site_packages, "Lib/site-packages");
	assert_string_equal(env.scripts, "Scripts");
	assert_string_equal(env.python, "Scripts/python.exe");
	assert_string_equal(env.root, "C:/s/.venv.stage");
	assert_int_equal(ml_env_layout_init_os(&env, "/s", "/w", "3.12", ML_ENV_WINDOWS, &err), 0);

	assert_int_equal(ml_env_layout_init_os(&env, "/s", "/w/", "3.11", ML_ENV_POSIX, &err), 0);
	assert_int_equal(env.os, ML_ENV_POSIX);
	assert_string_equal(env.site_packages, "lib/python3.11/site-packages");
	assert_string_equal(env.scripts, "bin");
	assert_string_equal(env.python, "bin/python");
	assert_string_equal(env.final_root, "/w");
	/* A drive letter is absolute only to Windows. */
	assert_int_equal(ml_env_layout_init_os(&env, "C:/s", "C:/w", "3.11", ML_ENV_POSIX, &err),
	                 ML_EFAIL);
	assert_int_equal(ml_env_layout_init_os(&env, "C:s", "C:/w", "3.11", ML_ENV_WINDOWS, &err),
	                 ML_EFAIL);
	assert_int_equal(ml_env_layout_init_os(&env, "/s", "/w", "3.11", (ml_env_os)7, &err),
	                 ML_EFAIL);

	/* The native one follows the build. */
	assert_int_equal(ml_env_layout_init(&env, "/s", "/w", "3.11", &err), 0);
#ifdef _WIN32
	assert_int_equal(env.os, ML_ENV_WINDOWS);
#else
	assert_int_equal(env.os, ML_ENV_POSIX);
#endif
}

/* --- a wheel in the Windows layout -------------------------------------------------------- */

/* Writes the unpacked wheel NAME 1.0 (what ml_wheel_unpack leaves in the
 * cache: unpacked.json and tree/) holding files[0..n) as {path, text},
 * with RECORD rows for them and a made-up sha256 of 64 times digit. */
static void put_unpacked(const char *dir, const char *name, const char *const (*files)[2], size_t n,
                         char digit)
{
	char tree[4096], rel[512], json[1024], sha[65];
	pf(tree, "%s/tree", dir);
	ml_buf rec = ML_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		put(tree, files[i][0], files[i][1]);
		assert_int_equal(ml_buf_printf(&rec, "%s,sha256=AAAA,%zu\n", files[i][0],
		                               strlen(files[i][1])),
		                 0);
	}
	assert_int_equal(ml_buf_printf(&rec, "%s-1.0.dist-info/RECORD,,\n", name), 0);
	assert_int_equal(ml_buf_add(&rec, "", 1), 0);
	snprintf(rel, sizeof rel, "%s-1.0.dist-info/RECORD", name);
	put(tree, rel, rec.data);
	ml_buf_release(&rec);
	memset(sha, digit, 64);
	sha[64] = '\0';
	snprintf(json, sizeof json,
	         "{\"schema\":\"mlsetup.unpacked/1\",\"wheel\":\"%s-1.0-py3-none-any.whl\","
	         "\"sha256\":\"%s\",\"name\":\"%s\",\"version\":\"1.0\","
	         "\"dist_info\":\"%s-1.0.dist-info\",\"root_is_purelib\":true,\"files\":%zu,"
	         "\"bytes\":0}\n",
	         name, sha, name, name, n);
	put(dir, "unpacked.json", json);
}

/* A hand-made unpacked wheel "demo 1.0" (what ml_wheel_unpack leaves in
 * the cache: a marker and tree/): a package, an extra purelib module,
 * console and GUI entry points, "#!python" and "#!pythonw" scripts, a
 * plain .cmd script, a header and a data file. */
static void make_unpacked(const char *dir)
{
	static const char *const files[][2] = {
	        {"demo/__init__.py", "def main():\n    return 0\n"},
	        {"demo/gui.py", "def run():\n    return 0\n"},
	        {"demo-1.0.dist-info/METADATA",
	         "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
	        {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"},
	        {"demo-1.0.dist-info/entry_points.txt",
	         "[console_scripts]\ndemo-cli = demo:main\n[gui_scripts]\ndemo-gui = "
	         "demo.gui:run\n"},
	        {"demo-1.0.data/purelib/demo_extra.py", "X = 1\n"},
	        {"demo-1.0.data/scripts/demo-tool.py", "#!python\nprint('tool')\n"},
	        {"demo-1.0.data/scripts/winw", "#!pythonw\nimport demo\n"},
	        {"demo-1.0.data/scripts/plain.cmd", "@echo plain\r\n"},
	        {"demo-1.0.data/headers/demo.h", "#define DEMO 1\n"},
	        {"demo-1.0.data/data/share/demo/readme.txt", "read me\n"},
	};
	put_unpacked(dir, "demo", files, sizeof files / sizeof files[0], '0');
}

/* RECORD's row for an installed file of these bytes. */
static void assert_recorded(const char *record, const char *path, const ml_buf *b)
{
	uint8_t d[32];
	char b64[64], row[4200];
	assert_int_equal(ml_sha256_buf(d, b->data, b->len), 0);
	assert_int_equal(mle_b64url(b64, sizeof b64, d, 32), 0);
	snprintf(row, sizeof row, "%s,sha256=%s,%zu\n", path, b64, b->len);
	if (!strstr(record, row))
		fail_msg("RECORD lacks '%s':\n%s", row, record);
}

static void test_wheel_scripts_become_exe_launchers_in_scripts(void **state)
{
	fx *f = *state;
	char dir[4096];
	pf(dir, "%s/unpacked", f->tmp);
	make_unpacked(dir);
	ml_env_layout env = win_env(f, "C:/envs/demo");
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_install_unpacked(&r, dir, &env, NULL, &err) != 0)
		fail_msg("install: %s", err.msg);
	assert_string_equal(r.name, "demo");

	const char *sp = "Lib/site-packages";
	char rel[4096];
	size_t n = 0;
	char *s = file_in(env.root, pf(rel, "%s/demo/__init__.py", sp), NULL);
	free(s);
	s = file_in(env.root, pf(rel, "%s/demo_extra.py", sp), NULL);
	assert_string_equal(s, "X = 1\n");
	free(s);
	s = file_in(env.root, "include/site/python3.12/demo/demo.h", NULL);
	assert_string_equal(s, "#define DEMO 1\n");
	free(s);
	s = file_in(env.root, "share/demo/readme.txt", NULL);
	free(s);
	s = file_in(env.root, "Scripts/plain.cmd", &n);
	assert_string_equal(s, "@echo plain\r\n");
	free(s);
	assert_false(is_dir(env.root, "bin"));
	assert_false(exists(pf(rel, "%s/Scripts/demo-tool.py", env.root)));
	assert_false(exists(pf(rel, "%s/Scripts/winw", env.root)));
	assert_false(exists(pf(rel, "%s/Scripts/demo-cli", env.root)));

	/* The same bytes as winlauncher.c makes for each: console entry
	 * points and "#!python" run python.exe, GUI ones and "#!pythonw"
	 * pythonw.exe, named relative to Scripts\. */
	ml_buf cli = ML_BUF_INIT, gui = ML_BUF_INIT, tool = ML_BUF_INIT, winw = ML_BUF_INIT;
	static const char tool_py[] = "#!python\nprint('tool')\n",
	                  winw_py[] = "#!pythonw\nimport demo\n";
	assert_int_equal(ml_winlauncher_entry_point(&cli, g_console, sizeof g_console, "python.exe",
	                                            "demo", "main", &err),
	                 0);
	assert_int_equal(ml_winlauncher_entry_point(&gui, g_gui, sizeof g_gui, "pythonw.exe",
	                                            "demo.gui", "run", &err),
	                 0);
	assert_int_equal(ml_winlauncher_script(&tool, g_console, sizeof g_console, "python.exe",
	                                       tool_py, sizeof tool_py - 1, &err),
	                 0);
	assert_int_equal(ml_winlauncher_script(&winw, g_gui, sizeof g_gui, "pythonw.exe", winw_py,
	                                       sizeof winw_py - 1, &err),
	                 0);
	assert_file_is(env.root, "Scripts/demo-cli.exe", &cli);
	assert_file_is(env.root, "Scripts/demo-gui.exe", &gui);
	assert_file_is(env.root, "Scripts/demo-tool.exe", &tool);
	assert_file_is(env.root, "Scripts/winw.exe", &winw);

	/* RECORD names them from site-packages, with hash and size. */
	char *record = file_in(env.root, pf(rel, "%s/demo-1.0.dist-info/RECORD", sp), NULL);
	assert_recorded(record, "../../Scripts/demo-cli.exe", &cli);
	assert_recorded(record, "../../Scripts/demo-gui.exe", &gui);
	assert_recorded(record, "../../Scripts/demo-tool.exe", &tool);
	assert_recorded(record, "../../Scripts/winw.exe", &winw);
	ml_buf plain = ML_BUF_INIT;
	assert_int_equal(ml_buf_puts(&plain, "@echo plain\r\n"), 0);
	assert_recorded(record, "../../Scripts/plain.cmd", &plain);
	ml_buf_release(&plain);
	assert_non_null(strstr(record, "demo/__init__.py,sha256=AAAA,"));
	assert_non_null(strstr(record, "../../include/site/python3.12/demo/demo.h,"));
	assert_non_null(strstr(record, "../../share/demo/readme.txt,"));
	assert_null(strstr(record, "bin/"));
	assert_null(strstr(record, "demo-tool.py"));
	free(record);
	ml_buf_release(&cli);
	ml_buf_release(&gui);
	ml_buf_release(&tool);
	ml_buf_release(&winw);
}

/* "clash" 1.0: a console entry point "clash" and two "#!python" scripts,
 * "clash.py" and "tool" / "tool.py", whose .exe names collide. */
static void make_clashing(const char *dir)
{
	static const char *const files[][2] = {
	        {"clash/__init__.py", "def main():\n    return 0\n"},
	        {"clash-1.0.dist-info/METADATA",
	         "Metadata-Version: 2.1\nName: clash\nVersion: 1.0\n"},
	        {"clash-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"},
	        {"clash-1.0.dist-info/entry_points.txt", "[console_scripts]\nclash = clash:main\n"},
	        {"clash-1.0.data/scripts/clash.py", "#!python\nprint('script')\n"},
	        {"clash-1.0.data/scripts/tool", "#!python\nprint('tool')\n"},
	        {"clash-1.0.data/scripts/tool.py", "#!python\nprint('tool.py')\n"},
	};
	put_unpacked(dir, "clash", files, sizeof files / sizeof files[0], '1');
}

/* Times RECORD names path. */
static int rows_of(const char *record, const char *path)
{
	int n = 0;
	size_t pl = strlen(path);
	for (const char *l = record; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		n += strncmp(l, path, pl) == 0 && l[pl] == ',';
	return n;
}

static void test_scripts_whose_exe_is_taken_stay_plain_scripts(void **state)
{
	fx *f = *state;
	char dir[4096], rel[4096];
	pf(dir, "%s/clash", f->tmp);
	make_clashing(dir);
	ml_env_layout env = win_env(f, "C:/envs/clash");
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_install_unpacked(&r, dir, &env, NULL, &err) != 0)
		fail_msg("install: %s", err.msg);

	/* clash.exe is the entry point's launcher, not the script's */
	ml_buf cli = ML_BUF_INIT, tool = ML_BUF_INIT;
	static const char tool_src[] = "#!python\nprint('tool')\n";
	assert_int_equal(ml_winlauncher_entry_point(&cli, g_console, sizeof g_console, "python.exe",
	                                            "clash", "main", &err),
	                 0);
	assert_file_is(env.root, "Scripts/clash.exe", &cli);
	/* the first of "tool" and "tool.py" (RECORD's order) has tool.exe */
	assert_int_equal(ml_winlauncher_script(&tool, g_console, sizeof g_console, "python.exe",
	                                       tool_src, sizeof tool_src - 1, &err),
	                 0);
	assert_file_is(env.root, "Scripts/tool.exe", &tool);
	/* the others stay as they came, under their own names */
	char *s = file_in(env.root, "Scripts/clash.py", NULL);
	assert_string_equal(s, "#!python\nprint('script')\n");
	free(s);
	s = file_in(env.root, "Scripts/tool.py", NULL);
	assert_string_equal(s, "#!python\nprint('tool.py')\n");
	free(s);
	assert_false(exists(pf(rel, "%s/Scripts/tool", env.root)));

	/* one RECORD row per installed file */
	char *record = file_in(env.root, "Lib/site-packages/clash-1.0.dist-info/RECORD", NULL);
	assert_recorded(record, "../../Scripts/clash.exe", &cli);
	assert_recorded(record, "../../Scripts/tool.exe", &tool);
	assert_int_equal(rows_of(record, "../../Scripts/clash.exe"), 1);
	assert_int_equal(rows_of(record, "../../Scripts/tool.exe"), 1);
	assert_int_equal(rows_of(record, "../../Scripts/clash.py"), 1);
	assert_int_equal(rows_of(record, "../../Scripts/tool.py"), 1);
	free(record);
	ml_buf_release(&cli);
	ml_buf_release(&tool);
}

/* --- names Windows cannot create ------------------------------------------------------ */

/* True when the directory holds nothing. */
static bool empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = false;
	closedir(d);
	return empty;
}

/* "win" 1.0 unpacked at <tmp>/<tag>: its package, the given entry points
 * (entry_points.txt text, or NULL) and the extra files (NULL-terminated
 * {path, text} pairs). */
static void make_win(fx *f, char *dir, const char *tag, const char *entry_points,
                     const char *const (*extra)[2])
{
	const char *files[16][2] = {
	        {"win/__init__.py", "def main():\n    return 0\n"},
	        {"win-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: win\nVersion: 1.0\n"},
	        {"win-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"},
	};
	size_t n = 3;
	if (entry_points) {
		files[n][0] = "win-1.0.dist-info/entry_points.txt";
		files[n++][1] = entry_points;
	}
	for (size_t i = 0; extra && extra[i][0] && n < 16; i++, n++) {
		files[n][0] = extra[i][0];
		files[n][1] = extra[i][1];
	}
	pf(dir, "%s/%s", f->tmp, tag);
	put_unpacked(dir, "win", (const char *const(*)[2])files, n, '2');
}

/* Installing into a Windows layout refuses what Windows cannot create
 * as named, before anything is written: the names only installing
 * makes (entry points, the .exe of a "#!python" script) on every host;
 * the wheel's own file names (which Windows cannot even hold in the
 * unpacked tree) where the tree can be made, on Linux. The rules:
 * ml_entry_windows_check(), and names one after case folding. */
static void test_windows_install_refuses_names_windows_cannot_create(void **state)
{
	fx *f = *state;
	static const struct {
		const char *tag, *entry_points, *extra[3][2], *says;
		bool posix_only; /* the tree itself holds such a name */
	} cases[] = {
	        {"ep-aux",
	         "[console_scripts]\naux = win:main\n",
	         {{NULL}},
	         "console_scripts entry point 'aux' refused on Windows: 'aux' is the device AUX",
	         false},
	        {"ep-com1",
	         "[gui_scripts]\nCOM1.pyw = win:main\n",
	         {{NULL}},
	         "gui_scripts entry point 'COM1.pyw' refused on Windows",
	         false},
	        {"ep-colon",
	         "[console_scripts]\nx:ads = win:main\n",
	         {{NULL}},
	         "entry point 'x:ads' refused on Windows: 'x:ads' has a ':'",
	         false},
	        {"ep-dot",
	         "[console_scripts]\ntool. = win:main\n",
	         {{NULL}},
	         "entry point 'tool.' refused on Windows: 'tool.' ends in a dot",
	         false},
	        {"ep-case",
	         "[console_scripts]\nTool = win:main\ntool = win:main\n",
	         {{NULL}},
	         "entries 'Scripts/Tool.exe' and 'Scripts/tool.exe' are one name after Unicode "
	         "NFC normalization and case folding (Windows folds case)",
	         false},
	        {"script-case",
	         "[console_scripts]\ntool = win:main\n",
	         {{"win-1.0.data/scripts/Tool.py", "#!python\nprint(1)\n"}, {NULL}},
	         "'Scripts/tool.exe' and 'Scripts/Tool.exe' are one name",
	         false},
#ifndef _WIN32
	        {"file-con",
	         NULL,
	         {{"win/CON.py", "X = 1\n"}, {NULL}},
	         "entry 'win/CON.py' refused on Windows: 'CON.py' is the device CON",
	         true},
	        {"file-dot",
	         NULL,
	         {{"win/mod.py.", "X = 1\n"}, {NULL}},
	         "entry 'win/mod.py.' refused on Windows",
	         true},
	        {"file-ads",
	         NULL,
	         {{"win/x.py:ads", "X = 1\n"}, {NULL}},
	         "entry 'win/x.py:ads' refused on Windows",
	         true},
	        {"file-case",
	         NULL,
	         {{"win/Foo.py", "X = 1\n"}, {"win/foo.py", "X = 2\n"}, {NULL}},
	         "entries 'win/Foo.py' and 'win/foo.py' are one name",
	         true},
	        {"file-record",
	         NULL,
	         {{"win-1.0.dist-info/record", "x\n"}, {NULL}},
	         "'win-1.0.dist-info/RECORD' are one name",
	         true},
	        {"script-con",
	         NULL,
	         {{"win-1.0.data/scripts/con.py", "#!python\nprint(1)\n"}, {NULL}},
	         "entry 'win-1.0.data/scripts/con.py' refused on Windows",
	         true},
#endif
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char dir[4096];
		make_win(f, dir, cases[i].tag, cases[i].entry_points, cases[i].extra);
		ml_env_layout env = win_env(f, "C:/envs/win");
		ml_wheel_result r;
		ml_err err = ML_ERR_INIT;
		int rc = ml_wheel_install_unpacked(&r, dir, &env, NULL, &err);
		if (rc != ML_EINTEGRITY || !strstr(err.msg, cases[i].says))
			fail_msg("%s: rc %d: %s", cases[i].tag, rc, err.msg);
		if (!empty_dir(env.root))
			fail_msg("%s: something was written into the environment", cases[i].tag);
		printf("# %s: %s\n", cases[i].tag, err.msg);

		/* A POSIX environment takes it (but two entry points that
		 * differ only in case are two files only where case is kept). */
		if (!cases[i].posix_only)
			continue;
		char root[4096];
		pf(root, "%s/posix-%d", f->tmp, f->seq++);
		assert_int_equal(ml_fs_mkdirs(root, 0755), 0);
		ml_env_layout posix;
		assert_int_equal(
		        ml_env_layout_init_os(&posix, root, root, "3.12", ML_ENV_POSIX, &err), 0);
		if (ml_wheel_install_unpacked(&r, dir, &posix, NULL, &err) != 0)
			fail_msg("%s in a POSIX layout: %s", cases[i].tag, err.msg);
	}
}

/* The twins: names close to the rules that Windows takes install, entry
 * points and scripts as .exe launchers. */
static void test_windows_install_takes_the_names_windows_takes(void **state)
{
	fx *f = *state;
	static const char *const extra[][2] = {
	        {"win/cone.py", "X = 1\n"},
	        {"win/icon.py", "X = 2\n"},
	        {"win/console.py", "X = 3\n"},
	        {"win/COM0.py", "X = 4\n"},
	        {"win-1.0.data/scripts/auxtool.py", "#!python\nprint(1)\n"},
	        {NULL, NULL},
	};
	char dir[4096], path[4096];
	make_win(f, dir, "twin", "[console_scripts]\nauxiliary = win:main\nconsole = win:main\n",
	         extra);
	ml_env_layout env = win_env(f, "C:/envs/win");
	ml_wheel_result r;
	ml_err err = ML_ERR_INIT;
	if (ml_wheel_install_unpacked(&r, dir, &env, NULL, &err) != 0)
		fail_msg("install: %s", err.msg);
	static const char *const want[] = {"Lib/site-packages/win/cone.py",
	                                   "Lib/site-packages/win/icon.py",
	                                   "Lib/site-packages/win/console.py",
	                                   "Lib/site-packages/win/COM0.py",
	                                   "Scripts/auxiliary.exe",
	                                   "Scripts/console.exe",
	                                   "Scripts/auxtool.exe"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!exists(pf(path, "%s/%s", env.root, want[i])))
			fail_msg("no %s", want[i]);
}

/* --- ml_venv_create in the Windows layout ----------------------------------------------- */

/* A fake interpreter tree at <tmp>/py-N (python.exe "PY", pythonw.exe
 * "PYW", python3.dll, python3XY.dll, vcruntime140.dll, LICENSE.txt) and
 * its probe answers. */
static ml_python_info fake_python(fx *f, char *home, int minor)
{
	pf(home, "%s/py-%d", f->tmp, f->seq++);
	char dll[64];
	snprintf(dll, sizeof dll, "python3%d.dll", minor);
	put(home, "python.exe", "PY");
	put(home, "pythonw.exe", "PYW");
	put(home, "python3.dll", "DLL3");
	put(home, dll, "DLLXY");
	put(home, "VCRUNTIME140.DLL", "VCR");
	put(home, "LICENSE.txt", "license");
	ml_python_info py;
	memset(&py, 0, sizeof py);
	snprintf(py.implementation, sizeof py.implementation, "cpython");
	py.is_cpython = true;
	py.major = 3;
	py.minor = minor;
	py.micro = 4;
	snprintf(py.version, sizeof py.version, "3.%d.4", minor);
	snprintf(py.xy, sizeof py.xy, "3.%d", minor);
	pf(py.executable, "%s/python.exe", home);
	pf(py.prefix, "%s", home);
	pf(py.base_prefix, "%s", home);
	return py;
}

static ml_env_layout win_env_xy(fx *f, const char *final_root, const char *xy)
{
	char root[4096];
	pf(root, "%s/env-%d", f->tmp, f->seq++);
	assert_int_equal(ml_fs_mkdirs(root, 0755), 0);
	ml_env_layout env;
	ml_err err = ML_ERR_INIT;
	if (ml_env_layout_init_os(&env, root, final_root, xy, ML_ENV_WINDOWS, &err) != 0)
		fail_msg("%s", err.msg);
	return env;
}

static void backslashed(char *dst, const char *src)
{
	size_t i = 0;
	for (; src[i]; i++)
		dst[i] = src[i] == '/' ? '\\' : src[i];
	dst[i] = '\0';
}

static void assert_text(const char *root, const char *rel, const char *want)
{
	char *s = file_in(root, rel, NULL);
	if (strcmp(s, want) != 0)
		fail_msg("%s is\n%s\nexpected\n%s", rel, s, want);
	free(s);
}

static void venv(const ml_env_layout *env, const ml_python_info *py, const char *prompt)
{
	ml_venv_opts o = {.prompt = prompt};
	ml_err err = ML_ERR_INIT;
	if (ml_venv_create(env, py, &o, &err) != 0)
		fail_msg("venv: %s", err.msg);
}

static void test_venv_313_copies_the_venv_launchers(void **state)
{
	fx *f = *state;
	char home[4096], bs[4096], want[16384 + 512];
	ml_python_info py = fake_python(f, home, 13);
	put(home, "Lib/venv/scripts/nt/venvlauncher.exe", "VL");
	put(home, "Lib/venv/scripts/nt/venvwlauncher.exe", "VWL");
	put(home, "Lib/venv/scripts/nt/python.exe", "OLD");
	ml_env_layout env = win_env_xy(f, "C:/envs/demo", "3.13");
	venv(&env, &py, NULL);

	backslashed(bs, home);
	snprintf(want, sizeof want,
	         "home = %s\n"
	         "include-system-site-packages = false\n"
	         "version = 3.13.4\n"
	         "executable = %s\\python.exe\n"
	         "command = %s\\python.exe -m venv --without-pip C:\\envs\\demo\n"
	         "mlsetup = %s\n",
	         bs, bs, bs, ML_VERSION);
	assert_text(env.root, "pyvenv.cfg", want);
	assert_text(env.root, "Scripts/python.exe", "VL");
	assert_text(env.root, "Scripts/pythonw.exe", "VWL");
	char path[4096];
	assert_false(exists(pf(path, "%s/Scripts/python3.dll", env.root)));
	assert_true(is_dir(env.root, "Lib/site-packages"));
	assert_true(is_dir(env.root, "Include"));
	assert_false(is_dir(env.root, "bin"));
	assert_false(exists(pf(path, "%s/lib64", env.root)));
	assert_text(env.root, ".gitignore",
	            "# created by mlsetup: nothing here belongs in git\n*\n");

	char *bat = file_in(env.root, "Scripts/activate.bat", NULL);
	assert_non_null(strstr(bat, "@echo off\r\n"));
	assert_non_null(strstr(bat, "set \"VIRTUAL_ENV=C:\\envs\\demo\"\r\n"));
	assert_non_null(strstr(bat, "set \"VIRTUAL_ENV_PROMPT=(demo) \"\r\n"));
	assert_non_null(strstr(bat, "set \"PATH=C:\\envs\\demo\\Scripts;%PATH%\"\r\n"));
	assert_non_null(strstr(bat, "set PYTHONHOME=\r\n"));
	free(bat);
	char *de = file_in(env.root, "Scripts/deactivate.bat", NULL);
	assert_non_null(
	        strstr(de, "if defined _OLD_VIRTUAL_PATH set \"PATH=%_OLD_VIRTUAL_PATH%\"\r\n"));
	assert_non_null(strstr(de, "set VIRTUAL_ENV=\r\n"));
	free(de);
	char *ps = file_in(env.root, "Scripts/Activate.ps1", NULL);
	assert_non_null(strstr(ps, "$env:VIRTUAL_ENV = 'C:\\envs\\demo'\n"));
	assert_non_null(strstr(ps, "(Join-Path $env:VIRTUAL_ENV 'Scripts')"));
	assert_non_null(strstr(ps, "# Scripts/Activate.ps1 - "));
	assert_null(strstr(ps, "'bin'"));
	free(ps);
}

static void test_venv_312_copies_the_launchers_named_python_exe(void **state)
{
	fx *f = *state;
	char home[4096];
	ml_python_info py = fake_python(f, home, 12);
	put(home, "Lib/venv/scripts/nt/python.exe", "NT-PY");
	put(home, "Lib/venv/scripts/nt/pythonw.exe", "NT-PYW");
	ml_env_layout env = win_env_xy(f, "C:/envs/demo", "3.12");
	venv(&env, &py, NULL);
	assert_text(env.root, "Scripts/python.exe", "NT-PY");
	assert_text(env.root, "Scripts/pythonw.exe", "NT-PYW");
	char path[4096];
	assert_false(exists(pf(path, "%s/Scripts/python3.dll", env.root)));
}

static void test_venv_without_launchers_copies_the_interpreter_and_dlls(void **state)
{
	fx *f = *state;
	char home[4096], path[4096];
	ml_python_info py = fake_python(f, home, 11);
	ml_env_layout env = win_env_xy(f, "C:/envs/old", "3.11");
	venv(&env, &py, "work");
	assert_text(env.root, "Scripts/python.exe", "PY");
	assert_text(env.root, "Scripts/pythonw.exe", "PYW");
	assert_text(env.root, "Scripts/python3.dll", "DLL3");
	assert_text(env.root, "Scripts/python311.dll", "DLLXY");
	assert_text(env.root, "Scripts/VCRUNTIME140.DLL", "VCR");
	assert_false(exists(pf(path, "%s/Scripts/LICENSE.txt", env.root)));
	char *bat = file_in(env.root, "Scripts/activate.bat", NULL);
	assert_non_null(strstr(bat, "set \"VIRTUAL_ENV_PROMPT=(work) \"\r\n"));
	free(bat);
}

static void test_venv_paths_are_quoted_for_cmd_and_a_quote_is_refused(void **state)
{
	fx *f = *state;
	char home[4096];
	ml_python_info py = fake_python(f, home, 12);
	ml_env_layout env = win_env_xy(f, "C:/a%PATH%b/it's", "3.12");
	venv(&env, &py, NULL);
	char *bat = file_in(env.root, "Scripts/activate.bat", NULL);
	assert_non_null(strstr(bat, "set \"VIRTUAL_ENV=C:\\a%%PATH%%b\\it's\"\r\n"));
	assert_non_null(strstr(bat, "set \"PATH=C:\\a%%PATH%%b\\it's\\Scripts;%PATH%\"\r\n"));
	free(bat);
	char *ps = file_in(env.root, "Scripts/Activate.ps1", NULL);
	assert_non_null(strstr(ps, "$env:VIRTUAL_ENV = 'C:\\a%PATH%b\\it''s'\n"));
	free(ps);

	ml_env_layout env2 = win_env_xy(f, "C:/envs/q", "3.12");
	ml_venv_opts o = {.prompt = "say \"hi\""};
	ml_err err = ML_ERR_INIT;
	assert_int_equal(ml_venv_create(&env2, &py, &o, &err), ML_EFAIL);
	assert_non_null(strstr(err.msg, "cmd.exe"));
	/* A missing interpreter is named. */
	ml_env_layout env3 = win_env_xy(f, "C:/envs/r", "3.12");
	char gone[4096];
	pf(gone, "%s/python.exe", home);
	assert_int_equal(remove(gone), 0);
	assert_int_equal(ml_venv_create(&env3, &py, NULL, &err), ML_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_windows_layout_is_cpythons_nt_scheme),
	        cmocka_unit_test(test_wheel_scripts_become_exe_launchers_in_scripts),
	        cmocka_unit_test(test_scripts_whose_exe_is_taken_stay_plain_scripts),
	        cmocka_unit_test(test_windows_install_refuses_names_windows_cannot_create),
	        cmocka_unit_test(test_windows_install_takes_the_names_windows_takes),
	        cmocka_unit_test(test_venv_313_copies_the_venv_launchers),
	        cmocka_unit_test(test_venv_312_copies_the_launchers_named_python_exe),
	        cmocka_unit_test(test_venv_without_launchers_copies_the_interpreter_and_dlls),
	        cmocka_unit_test(test_venv_paths_are_quoted_for_cmd_and_a_quote_is_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
