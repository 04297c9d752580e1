/*
 * venv.c - PEP 405 virtual environments: pyvenv.cfg, the bin/python links
 * to the base interpreter, the site-packages directory, and activate
 * scripts for bash/zsh, fish, csh/tcsh and PowerShell.
 *
 * The environment is written in env->root (the staging directory) but
 * every path written into a file names env->final_root, where the
 * environment will live once committed. The activate scripts are our
 * own; each quotes the environment path for its shell's single-quote
 * rules, so no path can break out of its string.
 */
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

/* Appends tmpl with @ENV@ and @PROMPT@ replaced by the quoted values and
 * @PATH@ by the raw environment path (comments only). */
static int expand(ml_buf *out, const char *tmpl, int (*quote)(ml_buf *, const char *),
                  const char *env, const char *prompt)
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
        "# bin/Activate.ps1 - enter the Python environment at @PATH@.\n"
        "# Use it from PowerShell by dot-sourcing it:  . bin/Activate.ps1\n"
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
        "$env:PATH = (Join-Path $env:VIRTUAL_ENV 'bin') + [System.IO.Path]::PathSeparator + "
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
	ml_buf b = ML_BUF_INIT;
	if (expand(&b, tmpl, quote, env->final_root, prompt)) {
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
	if (py->executable[0] != '/' || has_control(py->executable) || has_control(env->final_root))
		return ml_err_set(err, ML_EFAIL, "cannot write a venv for '%s' at '%s'",
		                  py->executable, env->final_root);
	char prompt[300];
	const char *name = opts && opts->prompt ? opts->prompt : NULL;
	if (!name) {
		const char *s = strrchr(env->final_root, '/');
		name = s && s[1] ? s + 1 : env->final_root;
	}
	if (has_control(name))
		return ml_err_set(err, ML_EFAIL, "prompt '%s' contains a control character", name);
	snprintf(prompt, sizeof prompt, "(%.280s) ", name);

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
	ml_buf cfg = ML_BUF_INIT;
	if (ml_buf_printf(&cfg,
	                  "home = %s\n"
	                  "include-system-site-packages = false\n"
	                  "version = %s\n"
	                  "executable = %s\n"
	                  "command = %s -m venv --without-pip %s\n"
	                  "mlsetup = %s\n",
	                  home, py->version, py->executable, py->executable, env->final_root,
	                  ML_VERSION)) {
		ml_buf_release(&cfg);
		return ml_err_set(err, ML_ENOMEM, "out of memory");
	}
	rc = put(env, "pyvenv.cfg", cfg.data, cfg.len, 0644, err);
	ml_buf_release(&cfg);
	if (rc)
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
