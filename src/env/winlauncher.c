/*
 * winlauncher.c - the .exe files of a Windows environment's scripts: a
 * launcher program (platform/windows/launcher/launcher.c, built with zig
 * and embedded in the Windows mlsetup) with the interpreter's path and the
 * script appended.
 *
 * Layout of a script's foo.exe, written here and read by the launcher:
 *
 *   launcher program (launcher-console.exe or launcher-gui.exe)
 *   interpreter path, UTF-8, no NUL (absolute, or relative to the .exe's
 *       directory: "python.exe" for a venv's Scripts\)
 *   footer, 16 bytes: path length (uint32 little-endian), 0 (uint32),
 *       "mlsetupL"
 *   a zip archive holding __main__.py (stored, fixed 1980-01-01 time), its
 *       offsets relative to its own start, ending the file with an end of
 *       central directory record without a comment
 *
 * The launcher runs `"<interpreter>" "<foo.exe>" <its arguments verbatim>`;
 * Python runs a zip given as its script from __main__.py, whatever comes
 * before the zip (zipimport finds the archive from its end). Running the
 * .exe itself (rather than `-c CODE`) gives sys.argv[0] = the .exe, as
 * pip's launchers do, and needs no quoting of Python source on a command
 * line. The output depends only on the inputs.
 */
#include "internal.h"

#include <libdeflate.h>
#include <stdint.h>
#include <string.h>

#define FOOTER_MAGIC "mlsetupL"
/* The launcher accepts paths up to this many UTF-8 bytes (32767 UTF-16
 * units, at most 3 bytes each). */
#define MAX_INTERPRETER (3 * 32767)

static const char *const launcher_names[] = {
        [ML_WINLAUNCHER_CONSOLE] = "launcher-console.exe",
        [ML_WINLAUNCHER_GUI] = "launcher-gui.exe",
};

/* ml_winlauncher_set_base(): programs standing in for the embedded ones. */
static const unsigned char *override_data[2];
static size_t override_len[2];

void ml_winlauncher_set_base(ml_winlauncher_kind kind, const void *data, size_t len)
{
	if (kind != ML_WINLAUNCHER_CONSOLE && kind != ML_WINLAUNCHER_GUI)
		return;
	override_data[kind] = data;
	override_len[kind] = data ? len : 0;
}

int ml_winlauncher_base(const unsigned char **data, size_t *len, ml_winlauncher_kind kind,
                        ml_err *err)
{
	if (kind != ML_WINLAUNCHER_CONSOLE && kind != ML_WINLAUNCHER_GUI)
		return ml_err_set(err, ML_EFAIL, "unknown launcher kind %d", (int)kind);
	if (override_data[kind]) {
		*data = override_data[kind];
		*len = override_len[kind];
		return 0;
	}
	const ml_embedded_file *f = ml_embedded_find(launcher_names[kind]);
	if (!f)
		return ml_err_set(err, ML_ENOENT,
		                  "this mlsetup has no Windows script launcher '%s': only the "
		                  "Windows build embeds them",
		                  launcher_names[kind]);
	*data = (const unsigned char *)f->data;
	*len = f->size;
	return 0;
}

static void le16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)(v >> 8 & 0xff);
}

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)(v >> 8 & 0xff);
	p[2] = (unsigned char)(v >> 16 & 0xff);
	p[3] = (unsigned char)(v >> 24 & 0xff);
}

/* Appends a zip of one stored member, name = data (APPNOTE.TXT 4.3). */
static int add_zip(ml_buf *out, const char *name, const void *data, size_t n)
{
	enum { LOCAL = 30, CENTRAL = 46, END = 22 };
	size_t nl = strlen(name);
	uint32_t crc = libdeflate_crc32(0, data, n);
	unsigned char h[CENTRAL];
	/* DOS date 1980-01-01, time 00:00: no build time in the output. */
	const unsigned dos_date = 1u << 5 | 1u, dos_time = 0;

	memset(h, 0, sizeof h);
	le32(h, 0x04034b50u);
	le16(h + 4, 20); /* version needed: 2.0 */
	le16(h + 10, dos_time);
	le16(h + 12, dos_date);
	le32(h + 14, crc);
	le32(h + 18, (uint32_t)n);
	le32(h + 22, (uint32_t)n);
	le16(h + 26, (unsigned)nl);
	if (ml_buf_add(out, h, LOCAL) || ml_buf_add(out, name, nl) || ml_buf_add(out, data, n))
		return ML_ENOMEM;

	uint32_t cd_off = (uint32_t)(LOCAL + nl + n);
	memset(h, 0, sizeof h);
	le32(h, 0x02014b50u);
	le16(h + 4, 20); /* made by: MS-DOS, 2.0 */
	le16(h + 6, 20);
	le16(h + 12, dos_time);
	le16(h + 14, dos_date);
	le32(h + 16, crc);
	le32(h + 20, (uint32_t)n);
	le32(h + 24, (uint32_t)n);
	le16(h + 28, (unsigned)nl);
	/* local header offset 0: offsets count from the zip's own start */
	if (ml_buf_add(out, h, CENTRAL) || ml_buf_add(out, name, nl))
		return ML_ENOMEM;

	memset(h, 0, sizeof h);
	le32(h, 0x06054b50u);
	le16(h + 8, 1);
	le16(h + 10, 1);
	le32(h + 12, (uint32_t)(CENTRAL + nl));
	le32(h + 16, cd_off);
	return ml_buf_add(out, h, END) ? ML_ENOMEM : 0;
}

int ml_winlauncher_build(ml_buf *out, const void *base, size_t base_len, const char *interpreter,
                         const void *script, size_t script_len, ml_err *err)
{
	if (base_len < 64 || memcmp(base, "MZ", 2) != 0)
		return ml_err_set(err, ML_EFAIL,
		                  "the launcher program is not a Windows executable");
	size_t il = strlen(interpreter);
	if (il == 0 || il > MAX_INTERPRETER)
		return ml_err_set(
		        err, ML_EFAIL,
		        "cannot write a launcher for interpreter '%.200s': the path is %s",
		        interpreter, il ? "too long" : "empty");
	for (size_t i = 0; i < il; i++) {
		unsigned char c = (unsigned char)interpreter[i];
		/* Windows file names hold neither; the launcher quotes the
		 * path with '"'. */
		if (c < 0x20 || c == '"')
			return ml_err_set(
			        err, ML_EFAIL,
			        "cannot write a launcher for interpreter '%.200s': a quote "
			        "or control character in the path",
			        interpreter);
	}
	size_t last = il - 1;
	if (interpreter[last] == '\\' || interpreter[last] == '/')
		return ml_err_set(
		        err, ML_EFAIL,
		        "cannot write a launcher for interpreter '%.200s': the path names "
		        "a directory",
		        interpreter);
	/* Zip32 limits: everything must fit 32-bit sizes and offsets. */
	if (script_len > UINT32_MAX / 2)
		return ml_err_set(err, ML_EFAIL, "the script is too large for a launcher");

	unsigned char footer[16];
	le32(footer, (uint32_t)il);
	le32(footer + 4, 0);
	memcpy(footer + 8, FOOTER_MAGIC, 8);
	ml_buf b = ML_BUF_INIT;
	if (ml_buf_add(&b, base, base_len) || ml_buf_add(&b, interpreter, il) ||
	    ml_buf_add(&b, footer, sizeof footer) ||
	    add_zip(&b, "__main__.py", script, script_len)) {
		ml_buf_release(&b);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	ml_buf_release(out);
	*out = b;
	return 0;
}

int ml_winlauncher_entry_point(ml_buf *out, const void *base, size_t base_len,
                               const char *interpreter, const char *module, const char *attr,
                               ml_err *err)
{
	/* module and attr are dotted Python identifiers (ml_entry_point_split
	 * checks them); anything else would be Python source here. */
	for (const char *s = module; *s; s++)
		if (!(*s == '.' || *s == '_' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (unsigned char)*s >= 0x80))
			return ml_err_set(err, ML_EPARSE,
			                  "entry point module '%.200s' is not a "
			                  "dotted name",
			                  module);
	for (const char *s = attr; *s; s++)
		if (!(*s == '.' || *s == '_' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (unsigned char)*s >= 0x80))
			return ml_err_set(err, ML_EPARSE,
			                  "entry point attribute '%.200s' is not a "
			                  "dotted name",
			                  attr);
	if (!*module || !*attr)
		return ml_err_set(err, ML_EPARSE,
		                  "entry point '%.200s:%.200s' needs a module "
		                  "and an attribute",
		                  module, attr);
	size_t hn = strcspn(attr, ".");
	ml_buf py = ML_BUF_INIT;
	/* The script pip writes for an entry point; sys.argv[0] loses the
	 * .exe (or -script.pyw) so the program sees its command name. */
	int e = ml_buf_printf(&py,
	                      "# -*- coding: utf-8 -*-\n"
	                      "import re\n"
	                      "import sys\n"
	                      "from %s import %.*s\n"
	                      "if __name__ == \"__main__\":\n"
	                      "    sys.argv[0] = re.sub(r\"(-script\\.pyw|\\.exe)?$\", \"\", "
	                      "sys.argv[0])\n"
	                      "    sys.exit(%s())\n",
	                      module, (int)hn, attr, attr);
	if (e) {
		ml_buf_release(&py);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	int rc = ml_winlauncher_build(out, base, base_len, interpreter, py.data, py.len, err);
	ml_buf_release(&py);
	return rc;
}

bool ml_winlauncher_script_kind(const void *data, size_t n, ml_winlauncher_kind *kind)
{
	const char *s = data;
	if (n < 8 || memcmp(s, "#!python", 8) != 0)
		return false;
	bool gui = n > 8 && s[8] == 'w';
	size_t after = gui ? 9 : 8;
	/* "#!python3" or "#!python.exe" is not the placeholder. */
	if (n > after &&
	    !(s[after] == '\n' || s[after] == '\r' || s[after] == ' ' || s[after] == '\t'))
		return false;
	if (kind)
		*kind = gui ? ML_WINLAUNCHER_GUI : ML_WINLAUNCHER_CONSOLE;
	return true;
}

int ml_winlauncher_script(ml_buf *out, const void *base, size_t base_len, const char *interpreter,
                          const void *script, size_t script_len, ml_err *err)
{
	if (!ml_winlauncher_script_kind(script, script_len, NULL))
		return ml_err_set(
		        err, ML_EFAIL,
		        "the script does not start with \"#!python\": it needs no launcher");
	/* The script runs unchanged: its "#!python" line is a comment to
	 * Python, and keeping it keeps line numbers and a coding line on
	 * line 2 where PEP 263 looks for it. */
	return ml_winlauncher_build(out, base, base_len, interpreter, script, script_len, err);
}

int ml_winlauncher_exe_name(char *out, size_t out_sz, const char *name, ml_err *err)
{
	size_t n = strlen(name);
	const char *dot = strrchr(name, '.');
	/* pip (distlib) drops a ".py"-like extension: foo.py -> foo.exe. */
	if (dot && dot != name && strncmp(dot, ".py", 3) == 0)
		n = (size_t)(dot - name);
	if (n == 0 || n + 5 > out_sz)
		return ml_err_set(err, ML_EFAIL, "no launcher name for script '%.200s'", name);
	memcpy(out, name, n);
	memcpy(out + n, ".exe", 5);
	return 0;
}
