/*
 * venv.c - PEP 405 virtual environments: pyvenv.cfg, the bin/python links
 * to the base interpreter, the site-packages directory, and activate
 * scripts for bash/zsh, fish, csh/tcsh and PowerShell; and the Windows
 * layout (Scripts\python.exe and pythonw.exe copied from the interpreter's
 * venv launchers, Lib\site-packages, activate.bat, deactivate.bat,
 * Activate.ps1), which CPython's venv module writes on Windows.
 *
 * The environment is written in env->root (the staging directory) but
 * every path written into a file names env->final_root, where the
 * environment will live once committed. The activate scripts are our
 * own; each quotes the environment path for its shell's single-quote
 * rules, so no path can break out of its string.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* --- quoting for each shell ----------------------------------------------------- */

/* POSIX sh: '...' with ' written as '\''. */
static int quote_sh(ml_buf *b, const char *s)
{
	int rc = ml_buf_puts(b, "'");
	for (; *s && !rc; s++)
		rc = *s == '\'' ? ml_buf_puts(b, "'\\''") : ml_buf_add(b, s, 1);
	return rc ? rc : ml_buf_puts(b, "'");
}

/* fish: '...' where only \\ and \' are escapes. */
static int quote_fish(ml_buf *b, const char *s)
{
	int rc = ml_buf_puts(b, "'");
	for (; *s && !rc; s++)
		rc = (*s == '\'' || *s == '\\') ? ml_buf_printf(b, "\\%c", *s)
		                                : ml_buf_add(b, s, 1);
	return rc ? rc : ml_buf_puts(b, "'");
}

/* csh: '...' with ' written as '\'' and history's ! escaped. */
static int quote_csh(ml_buf *b, const char *s)
{
	int rc = ml_buf_puts(b, "'");
	for (; *s && !rc; s++)
		rc = *s == '\''  ? ml_buf_puts(b, "'\\''")
		     : *s == '!' ? ml_buf_puts(b, "\\!")
		                 : ml_buf_add(b, s, 1);
	return rc ? rc : ml_buf_puts(b, "'");
}

/* PowerShell: '...' with every single quote doubled - including the
 * typographic ones (U+2018..U+201B), which PowerShell also accepts. */
static int quote_ps(ml_buf *b, const char *s)
{
	int rc = ml_buf_puts(b, "'");
	for (; *s && !rc; s++) {
		const unsigned char *u = (const unsigned char *)s;
		if (*s == '\'') {
			rc = ml_buf_puts(b, "''");
		} else if (u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0x98 && u[2] <= 0x9b) {
			rc = ml_buf_add(b, s, 3) || ml_buf_add(b, s, 3);
			s += 2;
		} else {
			rc = ml_buf_add(b, s, 1);
		}
	}
	return rc ? rc : ml_buf_puts(b, "'");
}

/* cmd.exe, inside set "NAME=...": the value is taken literally but for
 * %, written %% in a batch file; a '"' cannot be carried (the caller
 * refuses it first). */
static int quote_bat(ml_buf *b, const char *s)
{
	int rc = 0;
	for (; *s && !rc; s++)
		rc = *s == '%' ? ml_buf_puts(b, "%%") : ml_buf_add(b, s, 1);
	return rc;
}

/* Appends tmpl with @ENV@ and @PROMPT@ replaced by the quoted values,
 * @PATH@ by the raw environment path (comments only) and @SCRIPTS@ by the
 * scripts directory ("bin", "Scripts"). */
static int expand(ml_buf *out, const char *tmpl, int (*quote)(ml_buf *, const char *),
                  const char *env, const char *prompt, const char *scripts)
{
	const char *p = tmpl;
	int rc = 0;
	while (*p && !rc) {
		const char *at = strchr(p, '@');
		if (!at)
			return ml_buf_puts(out, p);
		rc = ml_buf_add(out, p, (size_t)(at - p));
		if (rc)
			break;
		if (strncmp(at, "@ENV@", 5) == 0) {
			rc = quote(out, env);
			p = at + 5;
		} else if (strncmp(at, "@PROMPT@", 8) == 0) {
			rc = quote(out, prompt);
			p = at + 8;
		} else if (strncmp(at, "@PATH@", 6) == 0) {
			rc = ml_buf_puts(out, env);
			p = at + 6;
		} else if (strncmp(at, "@SCRIPTS@", 9) == 0) {
			rc = ml_buf_puts(out, scripts);
			p = at + 9;
		} else {
			rc = ml_buf_add(out, "@", 1);
			p = at + 1;
		}
	}
	return rc;
}

/* --- the activate scripts -------------------------------------------------------------- */

static const char activate_sh[] =
        "# bin/activate - enter the Python environment at @PATH@.\n"
        "# Use it from bash or zsh with:  source bin/activate   (or: . bin/activate)\n"
        "# Running it as a program has no effect on your shell. Written by mlsetup.\n"
        "\n"
        "deactivate () {\n"
        "    if [ -n \"${_OLD_VIRTUAL_PATH+set}\" ]; then\n"
        "        PATH=\"$_OLD_VIRTUAL_PATH\"\n"
        "        export PATH\n"
        "        unset _OLD_VIRTUAL_PATH\n"
        "    fi\n"
        "    if [ -n \"${_OLD_VIRTUAL_PYTHONHOME+set}\" ]; then\n"
        "        PYTHONHOME=\"$_OLD_VIRTUAL_PYTHONHOME\"\n"
        "        export PYTHONHOME\n"
        "        unset _OLD_VIRTUAL_PYTHONHOME\n"
        "    fi\n"
        "    if [ -n \"${_OLD_VIRTUAL_PS1+set}\" ]; then\n"
        "        PS1=\"$_OLD_VIRTUAL_PS1\"\n"
        "        export PS1\n"
        "        unset _OLD_VIRTUAL_PS1\n"
        "    fi\n"
        "    unset VIRTUAL_ENV VIRTUAL_ENV_PROMPT\n"
        "    # commands may now resolve elsewhere: drop remembered locations\n"
        "    hash -r 2>/dev/null\n"
        "    if [ \"${1:-}\" != nondestructive ]; then\n"
        "        unset -f deactivate\n"
        "    fi\n"
        "}\n"
        "\n"
        "# leave whatever environment is active first\n"
        "deactivate nondestructive\n"
        "\n"
        "VIRTUAL_ENV=@ENV@\n"
        "export VIRTUAL_ENV\n"
        "VIRTUAL_ENV_PROMPT=@PROMPT@\n"
        "export VIRTUAL_ENV_PROMPT\n"
        "\n"
        "_OLD_VIRTUAL_PATH=\"$PATH\"\n"
        "PATH=\"$VIRTUAL_ENV/bin:$PATH\"\n"
        "export PATH\n"
        "\n"
        "if [ -n \"${PYTHONHOME+set}\" ]; then\n"
        "    _OLD_VIRTUAL_PYTHONHOME=\"$PYTHONHOME\"\n"
        "    unset PYTHONHOME\n"
        "fi\n"
        "\n"
        "if [ -z \"${VIRTUAL_ENV_DISABLE_PROMPT:-}\" ]; then\n"
        "    _OLD_VIRTUAL_PS1=\"${PS1:-}\"\n"
        "    PS1=\"$VIRTUAL_ENV_PROMPT${PS1:-}\"\n"
        "    export PS1\n"
        "fi\n"
        "\n"
        "hash -r 2>/dev/null\n";

static const char activate_fish[] =
        "# bin/activate.fish - enter the Python environment at @PATH@.\n"
        "# Use it from fish with:  source bin/activate.fish\n"
        "# Written by mlsetup.\n"
        "\n"
        "function deactivate -d 'Leave the Python environment'\n"
        "    if set -q _OLD_VIRTUAL_PATH\n"
        "        set -gx PATH $_OLD_VIRTUAL_PATH\n"
        "        set -e _OLD_VIRTUAL_PATH\n"
        "    end\n"
        "    if set -q _OLD_VIRTUAL_PYTHONHOME\n"
        "        set -gx PYTHONHOME $_OLD_VIRTUAL_PYTHONHOME\n"
        "        set -e _OLD_VIRTUAL_PYTHONHOME\n"
        "    end\n"
        "    if functions -q _mlsetup_old_fish_prompt\n"
        "        functions -e fish_prompt\n"
        "        functions -c _mlsetup_old_fish_prompt fish_prompt\n"
        "        functions -e _mlsetup_old_fish_prompt\n"
        "    end\n"
        "    set -e VIRTUAL_ENV\n"
        "    set -e VIRTUAL_ENV_PROMPT\n"
        "    if test \"$argv[1]\" != nondestructive\n"
        "        functions -e deactivate\n"
        "        functions -e _mlsetup_status\n"
        "    end\n"
        "end\n"
        "\n"
        "# leave whatever environment is active first\n"
        "deactivate nondestructive\n"
        "\n"
        "set -gx VIRTUAL_ENV @ENV@\n"
        "set -gx VIRTUAL_ENV_PROMPT @PROMPT@\n"
        "set -gx _OLD_VIRTUAL_PATH $PATH\n"
        "set -gx PATH \"$VIRTUAL_ENV/bin\" $PATH\n"
        "\n"
        "if set -q PYTHONHOME\n"
        "    set -gx _OLD_VIRTUAL_PYTHONHOME $PYTHONHOME\n"
        "    set -e PYTHONHOME\n"
        "end\n"
        "\n"
        "# sets $status for the old prompt to see\n"
        "function _mlsetup_status\n"
        "    return $argv[1]\n"
        "end\n"
        "\n"
        "if test -z \"$VIRTUAL_ENV_DISABLE_PROMPT\"; and functions -q fish_prompt\n"
        "    functions -c fish_prompt _mlsetup_old_fish_prompt\n"
        "    function fish_prompt\n"
        "        set -l last_status $status\n"
        "        printf '%s' \"$VIRTUAL_ENV_PROMPT\"\n"
        "        _mlsetup_status $last_status\n"
        "        _mlsetup_old_fish_prompt\n"
        "    end\n"
        "end\n";

static const char activate_csh[] =
        "# bin/activate.csh - enter the Python environment at @PATH@.\n"
        "# Use it from csh or tcsh with:  source bin/activate.csh\n"
        "# Written by mlsetup.\n"
        "\n"
        "alias deactivate 'test $?_OLD_VIRTUAL_PATH != 0 && setenv PATH \"$_OLD_VIRTUAL_PATH\" && "
        "unset _OLD_VIRTUAL_PATH; test $?_OLD_VIRTUAL_PYTHONHOME != 0 && setenv PYTHONHOME "
        "\"$_OLD_VIRTUAL_PYTHONHOME\" && unset _OLD_VIRTUAL_PYTHONHOME; rehash; test "
        "$?_OLD_VIRTUAL_PROMPT != 0 && set prompt=\"$_OLD_VIRTUAL_PROMPT\" && unset "
        "_OLD_VIRTUAL_PROMPT; unsetenv VIRTUAL_ENV; unsetenv VIRTUAL_ENV_PROMPT; test \"\\!:*\" != "
        "\"nondestructive\" && unalias deactivate'\n"
        "\n"
        "# leave whatever environment is active first\n"
        "deactivate nondestructive\n"
        "\n"
        "setenv VIRTUAL_ENV @ENV@\n"
        "setenv VIRTUAL_ENV_PROMPT @PROMPT@\n"
        "set _OLD_VIRTUAL_PATH=\"$PATH\"\n"
        "setenv PATH \"$VIRTUAL_ENV/bin:$PATH\"\n"
        "\n"
        "if ($?PYTHONHOME) then\n"
        "    set _OLD_VIRTUAL_PYTHONHOME=\"$PYTHONHOME\"\n"
        "    unsetenv PYTHONHOME\n"
        "endif\n"
        "\n"
        "if (! $?VIRTUAL_ENV_DISABLE_PROMPT) then\n"
        "    if ($?prompt) then\n"
        "        set _OLD_VIRTUAL_PROMPT=\"$prompt\"\n"
        "        set prompt=\"$VIRTUAL_ENV_PROMPT$prompt\"\n"
        "    endif\n"
        "endif\n"
        "\n"
        "rehash\n";

static const char activate_ps1[] =
        "# @SCRIPTS@/Activate.ps1 - enter the Python environment at @PATH@.\n"
        "# Use it from PowerShell by dot-sourcing it:  . @SCRIPTS@/Activate.ps1\n"
        "# Written by mlsetup.\n"
        "\n"
        "function global:deactivate([switch] $NonDestructive) {\n"
        "    if (Test-Path variable:global:_OLD_VIRTUAL_PATH) {\n"
        "        $env:PATH = $global:_OLD_VIRTUAL_PATH\n"
        "        Remove-Variable -Name _OLD_VIRTUAL_PATH -Scope Global\n"
        "    }\n"
        "    if (Test-Path variable:global:_OLD_VIRTUAL_PYTHONHOME) {\n"
        "        $env:PYTHONHOME = $global:_OLD_VIRTUAL_PYTHONHOME\n"
        "        Remove-Variable -Name _OLD_VIRTUAL_PYTHONHOME -Scope Global\n"
        "    }\n"
        "    if (Test-Path function:global:_mlsetup_old_prompt) {\n"
        "        Copy-Item -Path function:global:_mlsetup_old_prompt -Destination "
        "function:global:prompt\n"
        "        Remove-Item -Path function:global:_mlsetup_old_prompt\n"
        "    }\n"
        "    if (Test-Path env:VIRTUAL_ENV) { Remove-Item -Path env:VIRTUAL_ENV }\n"
        "    if (Test-Path env:VIRTUAL_ENV_PROMPT) { Remove-Item -Path env:VIRTUAL_ENV_PROMPT }\n"
        "    if (-not $NonDestructive) { Remove-Item -Path function:global:deactivate }\n"
        "}\n"
        "\n"
        "# leave whatever environment is active first\n"
        "deactivate -NonDestructive\n"
        "\n"
        "$env:VIRTUAL_ENV = @ENV@\n"
        "$env:VIRTUAL_ENV_PROMPT = @PROMPT@\n"
        "$global:_OLD_VIRTUAL_PATH = $env:PATH\n"
        "$env:PATH = (Join-Path $env:VIRTUAL_ENV '@SCRIPTS@') + [System.IO.Path]::PathSeparator + "
        "$env:PATH\n"
        "\n"
        "if (Test-Path env:PYTHONHOME) {\n"
        "    $global:_OLD_VIRTUAL_PYTHONHOME = $env:PYTHONHOME\n"
        "    Remove-Item -Path env:PYTHONHOME\n"
        "}\n"
        "\n"
        "if (-not $env:VIRTUAL_ENV_DISABLE_PROMPT -and (Test-Path function:prompt)) {\n"
        "    Copy-Item -Path function:prompt -Destination function:global:_mlsetup_old_prompt\n"
        "    function global:prompt {\n"
        "        Write-Host -NoNewline -ForegroundColor Green $env:VIRTUAL_ENV_PROMPT\n"
        "        _mlsetup_old_prompt\n"
        "    }\n"
        "}\n";

static int script_at(const ml_env_layout *env, const char *rel, const char *tmpl,
                     int (*quote)(ml_buf *, const char *), const char *root, const char *prompt,
                     ml_err *err);

/* --- creating the environment ---------------------------------------------------------- */

static int put(const ml_env_layout *env, const char *rel, const char *data, size_t n, mode_t mode,
               ml_err *err)
{
	char path[ML_PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", env->root, rel) >= (int)sizeof path)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", env->root);
	int e = ml_fs_write_file(path, data, n, mode, true, false);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot write '%s': %s", path, strerror(-e));
	return 0;
}

static int mk(const ml_env_layout *env, const char *rel, ml_err *err)
{
	char path[ML_PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", env->root, rel) >= (int)sizeof path)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", env->root);
	int e = ml_fs_mkdirs(path, 0755);
	if (e)
		return ml_err_set(err, ML_EIO, "cannot create '%s': %s", path, strerror(-e));
	return 0;
}

static int ln(const ml_env_layout *env, const char *target, const char *rel, ml_err *err)
{
	char path[ML_PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", env->root, rel) >= (int)sizeof path)
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", env->root);
	if (symlink(target, path) != 0)
		return ml_err_set(err, ML_EIO, "cannot create link '%s': %s", path,
		                  strerror(errno));
	return 0;
}

static int script(const ml_env_layout *env, const char *rel, const char *tmpl,
                  int (*quote)(ml_buf *, const char *), const char *prompt, ml_err *err)
{
	return script_at(env, rel, tmpl, quote, env->final_root, prompt, err);
}

static int script_at(const ml_env_layout *env, const char *rel, const char *tmpl,
                     int (*quote)(ml_buf *, const char *), const char *root, const char *prompt,
                     ml_err *err)
{
	ml_buf b = ML_BUF_INIT;
	if (expand(&b, tmpl, quote, root, prompt, env->scripts)) {
		ml_buf_release(&b);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	int rc = put(env, rel, b.data, b.len, 0644, err);
	ml_buf_release(&b);
	return rc;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* --- the Windows layout ----------------------------------------------------------------- */

static const char activate_bat[] =
        "@echo off\r\n"
        "rem Scripts\\activate.bat - enter the Python environment at @PATH@.\r\n"
        "rem Use it from cmd.exe:  Scripts\\activate.bat   Written by mlsetup.\r\n"
        "\r\n"
        "rem leave whatever environment is active first\r\n"
        "if defined _OLD_VIRTUAL_PROMPT set \"PROMPT=%_OLD_VIRTUAL_PROMPT%\"\r\n"
        "if defined _OLD_VIRTUAL_PYTHONHOME set \"PYTHONHOME=%_OLD_VIRTUAL_PYTHONHOME%\"\r\n"
        "if defined _OLD_VIRTUAL_PATH set \"PATH=%_OLD_VIRTUAL_PATH%\"\r\n"
        "\r\n"
        "set \"VIRTUAL_ENV=@ENV@\"\r\n"
        "set \"VIRTUAL_ENV_PROMPT=@PROMPT@\"\r\n"
        "if not defined PROMPT set \"PROMPT=$P$G\"\r\n"
        "set \"_OLD_VIRTUAL_PROMPT=%PROMPT%\"\r\n"
        "set \"PROMPT=%VIRTUAL_ENV_PROMPT%%PROMPT%\"\r\n"
        "set _OLD_VIRTUAL_PYTHONHOME=\r\n"
        "if defined PYTHONHOME set \"_OLD_VIRTUAL_PYTHONHOME=%PYTHONHOME%\"\r\n"
        "set PYTHONHOME=\r\n"
        "set \"_OLD_VIRTUAL_PATH=%PATH%\"\r\n"
        "set \"PATH=@ENV@\\Scripts;%PATH%\"\r\n";

static const char deactivate_bat[] =
        "@echo off\r\n"
        "rem Scripts\\deactivate.bat - leave the Python environment at @PATH@.\r\n"
        "rem Written by mlsetup.\r\n"
        "\r\n"
        "if defined _OLD_VIRTUAL_PROMPT set \"PROMPT=%_OLD_VIRTUAL_PROMPT%\"\r\n"
        "set _OLD_VIRTUAL_PROMPT=\r\n"
        "if defined _OLD_VIRTUAL_PYTHONHOME set \"PYTHONHOME=%_OLD_VIRTUAL_PYTHONHOME%\"\r\n"
        "set _OLD_VIRTUAL_PYTHONHOME=\r\n"
        "if defined _OLD_VIRTUAL_PATH set \"PATH=%_OLD_VIRTUAL_PATH%\"\r\n"
        "set _OLD_VIRTUAL_PATH=\r\n"
        "set VIRTUAL_ENV=\r\n"
        "set VIRTUAL_ENV_PROMPT=\r\n";

/* The last separator of path: '/', and in a Windows layout also '\'. */
static const char *last_sep(const char *path, bool win)
{
	const char *s = strrchr(path, '/');
	if (win) {
		const char *b = strrchr(path, '\\');
		if (b && (!s || b > s))
			s = b;
	}
	return s;
}

/* dst = src with '/' written '\' (Windows' own spelling, for the files
 * cmd.exe and people read). */
static void backslashes(char *dst, size_t dstsz, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < dstsz; i++)
		dst[i] = src[i] == '/' ? '\\' : src[i];
	dst[i] = '\0';
}

/* Copies the regular file src to <root>/rel. ML_ENOENT when src is
 * missing (err set). */
static int copy_in(const ml_env_layout *env, const char *src, const char *rel, ml_err *err)
{
	char *data = NULL;
	size_t n = 0;
	int rc = ml_os_read_file(&data, &n, NULL, src, (size_t)256 << 20, err);
	if (rc)
		return rc;
	rc = put(env, rel, data, n, 0755, err);
	free(data);
	return rc;
}

/* ".dll" in any case. */
static bool ends_dll(const char *s)
{
	return s[0] == '.' && (s[1] | 0x20) == 'd' && (s[2] | 0x20) == 'l' && (s[3] | 0x20) == 'l';
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}


/* Writes pyvenv.cfg (PEP 405) for an environment living at root, made
 * from the interpreter exe (version) in directory home: the keys
 * CPython's own venv writes, with the equivalent `python -m venv`
 * command, and the mlsetup version. */
static int pyvenv_cfg(const ml_env_layout *env, const char *home, const char *version,
                      const char *exe, const char *root, ml_err *err)
{
	ml_buf cfg = ML_BUF_INIT;
	if (ml_buf_printf(&cfg,
	                  "home = %s\n"
	                  "include-system-site-packages = false\n"
	                  "version = %s\n"
	                  "executable = %s\n"
	                  "command = %s -m venv --without-pip %s\n"
	                  "mlsetup = %s\n",
	                  home, version, exe, exe, root, ML_VERSION)) {
		ml_buf_release(&cfg);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	int rc = put(env, "pyvenv.cfg", cfg.data, cfg.len, 0644, err);
	ml_buf_release(&cfg);
	return rc;
}
/* Scripts\python.exe and pythonw.exe as CPython's venv makes them on
 * Windows (Lib/venv/__init__.py, setup_python): the redirecting launchers
 * the interpreter ships in Lib\venv\scripts\nt\ - venvlauncher.exe and
 * venvwlauncher.exe from 3.13 on, python.exe and pythonw.exe (the same
 * programs under their final names) before - which start the base
 * interpreter named by pyvenv.cfg's home. An interpreter without them
 * (older venv's way): copies of its own python.exe and pythonw.exe with
 * the DLLs beside them. */
static int windows_pythons(const ml_env_layout *env, const char *base, const char *home,
                           ml_err *err)
{
	static const char *const pairs[][2] = {
	        {"venvlauncher.exe", "venvwlauncher.exe"},
	        {"python.exe", "pythonw.exe"},
	};
	char src[ML_PATH_MAX], srcw[ML_PATH_MAX];
	for (size_t i = 0; i < 2; i++) {
		if (ml_pathf(src, sizeof src, "%s/Lib/venv/scripts/nt/%s", base, pairs[i][0]) ||
		    ml_pathf(srcw, sizeof srcw, "%s/Lib/venv/scripts/nt/%s", base, pairs[i][1]))
			return ml_err_set(err, ML_EFAIL, "path too long: '%s'", base);
		if (!is_file(src))
			continue;
		int rc = copy_in(env, src, "Scripts/python.exe", err);
		if (!rc && is_file(srcw))
			rc = copy_in(env, srcw, "Scripts/pythonw.exe", err);
		return rc;
	}
	/* No venv launcher: the interpreter itself, and its DLLs. */
	int rc;
	if (ml_pathf(src, sizeof src, "%s/python.exe", home))
		return ml_err_set(err, ML_EFAIL, "path too long: '%s'", home);
	if ((rc = copy_in(env, src, "Scripts/python.exe", err)))
		return rc;
	if (ml_pathf(srcw, sizeof srcw, "%s/pythonw.exe", home) == 0 && is_file(srcw) &&
	    (rc = copy_in(env, srcw, "Scripts/pythonw.exe", err)))
		return rc;
	DIR *d = opendir(home);
	if (!d)
		return ml_err_set(err, ML_EIO, "cannot list '%s': %s", home, strerror(errno));
	struct dirent *de;
	while (!rc && (de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		size_t n = strlen(name);
		if (n < 5 || !ends_dll(name + n - 4))
			continue;
		char rel[1100];
		if (ml_pathf(src, sizeof src, "%s/%s", home, name) || !is_file(src) ||
		    n > 1000)
			continue;
		snprintf(rel, sizeof rel, "Scripts/%s", name);
		rc = copy_in(env, src, rel, err);
	}
	closedir(d);
	return rc;
}

/* The Windows venv (CPython's "nt" scheme): pyvenv.cfg, Scripts\ with
 * python.exe, pythonw.exe, activate.bat, deactivate.bat, Activate.ps1,
 * Lib\site-packages\, Include\. Paths written into files use '\'. */
static int create_windows(const ml_env_layout *env, const ml_python_info *py, const char *prompt,
                          ml_err *err)
{
	if (strchr(env->final_root, '"') || strchr(prompt, '"'))
		return ml_err_set(err, ML_EFAIL,
		                  "cannot write a venv at '%s' with prompt '%s': cmd.exe cannot "
		                  "carry a '\"' in it",
		                  env->final_root, prompt);
	/* home_fs: the interpreter's directory as given, to read from;
	 * home: as written into pyvenv.cfg. */
	char home_fs[ML_PATH_MAX], home[ML_PATH_MAX], root[ML_PATH_MAX], exe[ML_PATH_MAX];
	const char *sep = last_sep(py->executable, true);
	snprintf(home_fs, sizeof home_fs, "%.*s", (int)(sep - py->executable), py->executable);
	if (strlen(home_fs) == 2) /* "C:" -> "C:/" */
		strcat(home_fs, "/");
	backslashes(home, sizeof home, home_fs);
	backslashes(exe, sizeof exe, py->executable);
	backslashes(root, sizeof root, env->final_root);
	const char *base = py->base_prefix[0] ? py->base_prefix : home_fs;

	int rc;
	if ((rc = mk(env, "Scripts", err)) || (rc = mk(env, "Include", err)) ||
	    (rc = mk(env, "Lib/site-packages", err)))
		return rc;
	if ((rc = pyvenv_cfg(env, home, py->version, exe, root, err)) ||
	    (rc = windows_pythons(env, base, home_fs, err)))
		return rc;
	static const char gitignore[] = "# created by mlsetup: nothing here belongs in git\n*\n";
	if ((rc = put(env, ".gitignore", gitignore, sizeof gitignore - 1, 0644, err)) ||
	    (rc = script_at(env, "Scripts/activate.bat", activate_bat, quote_bat, root, prompt,
	                    err)) ||
	    (rc = script_at(env, "Scripts/deactivate.bat", deactivate_bat, quote_bat, root, prompt,
	                    err)) ||
	    (rc = script_at(env, "Scripts/Activate.ps1", activate_ps1, quote_ps, root, prompt,
	                    err)))
		return rc;
	return 0;
}

int ml_venv_create(const ml_env_layout *env, const ml_python_info *py, const ml_venv_opts *opts,
                   ml_err *err)
{
	if (!py->is_cpython || py->major != 3)
		return ml_err_set(err, ML_EFAIL, "'%s' is %s %s; environments need CPython 3",
		                  py->executable, py->implementation, py->version);
	if (strcmp(py->xy, env->python_xy) != 0)
		return ml_err_set(err, ML_EFAIL,
		                  "interpreter is Python %s but the layout is for Python %s",
		                  py->xy, env->python_xy);
	bool win = env->os == ML_ENV_WINDOWS;
	if (!mle_is_absolute(py->executable, env->os) ||
	    has_control(py->executable) || has_control(env->final_root))
		return ml_err_set(err, ML_EFAIL, "cannot write a venv for '%s' at '%s'",
		                  py->executable, env->final_root);
	char prompt[300];
	const char *name = opts && opts->prompt ? opts->prompt : NULL;
	if (!name) {
		const char *s = last_sep(env->final_root, win);
		name = s && s[1] ? s + 1 : env->final_root;
	}
	if (has_control(name))
		return ml_err_set(err, ML_EFAIL, "prompt '%s' contains a control character", name);
	snprintf(prompt, sizeof prompt, "(%.280s) ", name);
	if (win)
		return create_windows(env, py, prompt, err);

	char home[ML_PATH_MAX], rel[128];
	const char *base;
	if (ml_fs_split_path(home, sizeof home, &base, py->executable))
		return ml_err_set(err, ML_EFAIL, "bad interpreter path '%s'", py->executable);
	int rc;
	snprintf(rel, sizeof rel, "lib/python%s/site-packages", py->xy);
	if ((rc = mk(env, "bin", err)) || (rc = mk(env, "include", err)) ||
	    (rc = mk(env, rel, err)))
		return rc;
	if (sizeof(void *) == 8 && (rc = ln(env, "lib", "lib64", err)))
		return rc;

	/* PEP 405: the interpreter finds pyvenv.cfg next to (or one level
	 * above) the executable it was started as. */
	if ((rc = pyvenv_cfg(env, home, py->version, py->executable, env->final_root, err)))
		return rc;

	char pyxy[32];
	snprintf(pyxy, sizeof pyxy, "bin/python%s", py->xy);
	if ((rc = ln(env, py->executable, "bin/python", err)) ||
	    (rc = ln(env, "python", "bin/python3", err)) || (rc = ln(env, "python", pyxy, err)))
		return rc;

	static const char gitignore[] = "# created by mlsetup: nothing here belongs in git\n*\n";
	if ((rc = put(env, ".gitignore", gitignore, sizeof gitignore - 1, 0644, err)) ||
	    (rc = script(env, "bin/activate", activate_sh, quote_sh, prompt, err)) ||
	    (rc = script(env, "bin/activate.fish", activate_fish, quote_fish, prompt, err)) ||
	    (rc = script(env, "bin/activate.csh", activate_csh, quote_csh, prompt, err)) ||
	    (rc = script(env, "bin/Activate.ps1", activate_ps1, quote_ps, prompt, err)))
		return rc;
	return 0;
}
