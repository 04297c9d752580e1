#!/bin/sh
# mlsetup.exe under wine finds an interpreter that is neither on PATH nor
# in python.org's default folders through the registry, as PEP 514 has
# installers register it: HKCU\Software\Python\<Company>\<Tag>\InstallPath
# (ExecutablePath, or the default value + python.exe), then HKLM in the
# 64-bit and the 32-bit view; the PyLauncher company is not an interpreter.
# The interpreter is SIMULATED: build/launcher/stub-python.exe
# (tests/helpers/stub_python.c) answers the search's probe (src/plan/
# pyfind.c) and the interpreter probe (src/env/python.c) as CPython 3.12.8
# would; `plan --offline --json --python-preference only-system` then
# says which one it planned with. The keys live under the company
# MlsetupTestCo and PyLauncher and are deleted after each block.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/winelib.sh"

L="$top/build/launcher"
wine_prefix wineprefix-t0930
[ -f "$L/stub-python.exe" ] ||
	release_skip_all "no build/launcher/stub-python.exe: the pinned zig is not in the release cache (sh packaging/release/toolchain.sh, then make check)"

HKCU='HKCU\Software\Python\MlsetupTestCo'
HKLM='HKLM\Software\Python\MlsetupTestCo'
# The prefix is the tests' own: no real Python launcher registered there.
LAUNCHER='HKCU\Software\Python\PyLauncher'

# unregister: deletes every key this test writes (a missing one is fine).
unregister() {
	wine reg delete "$HKCU" /f >/dev/null 2>&1
	wine reg delete "$HKLM" /f /reg:64 >/dev/null 2>&1
	wine reg delete "$HKLM" /f /reg:32 >/dev/null 2>&1
	wine reg delete "$LAUNCHER" /f >/dev/null 2>&1
	return 0
}
unregister

# The simulated interpreters, in folders on no search path of mlsetup's.
for d in user machine64 machine32 launcher; do
	mkdir -p "$TRASH/$d" && cp "$L/stub-python.exe" "$TRASH/$d/python.exe"
done
W=$(winpath "$TRASH")

# plan_system: plan with only the machine's interpreters; stdout without
# CRs in out.json, stderr in err.
plan_system() {
	wine "$EXE" plan --offline --json --python-preference only-system >out.raw 2>err.raw
	rc=$?
	tr -d '\r' <out.raw >out.json
	tr -d '\r' <err.raw >err
	return $rc
}

# planned: the interpreter the plan is for, "<source> <path>".
planned() {
	json out.json 'd["python"]["source"] + " " + d["python"].get("path", "")'
}

test_expect_success 'nothing registered: no interpreter on this machine' '
	expect_exit 6 plan_system &&
	grep -q "no CPython found on this machine (PATH, the registry (PEP 514)" err
'

test_expect_success 'HKCU ExecutablePath: the registered interpreter is planned with' '
	test_when_finished unregister &&
	wine reg add "$HKCU\\3.12\\InstallPath" /ve /d "$W\\user\\" /f >/dev/null &&
	wine reg add "$HKCU\\3.12\\InstallPath" /v ExecutablePath /d "$W\\user\\python.exe" \
		/f >/dev/null &&
	{ plan_system || { cat err; false; }; } &&
	expect_eq "system $W\\user\\python.exe" "$(planned)" &&
	expect_eq 3.12.8 "$(json out.json "d[\"python\"][\"version\"]")"
'

test_expect_success 'HKLM 32-bit view, no ExecutablePath: InstallPath\python.exe' '
	test_when_finished unregister &&
	wine reg add "$HKLM\\3.12-32\\InstallPath" /ve /d "$W\\machine32" /f /reg:32 >/dev/null &&
	{ plan_system || { cat err; false; }; } &&
	expect_eq "system $W\\machine32\\python.exe" "$(planned)"
'

test_expect_success 'HKCU before HKLM 64-bit before HKLM 32-bit (PEP 514)' '
	test_when_finished unregister &&
	wine reg add "$HKLM\\3.12-32\\InstallPath" /ve /d "$W\\machine32" /f /reg:32 >/dev/null &&
	wine reg add "$HKLM\\3.12\\InstallPath" /ve /d "$W\\machine64" /f /reg:64 >/dev/null &&
	{ plan_system || { cat err; false; }; } &&
	expect_eq "system $W\\machine64\\python.exe" "$(planned)" &&
	wine reg add "$HKCU\\3.12\\InstallPath" /ve /d "$W\\user" /f >/dev/null &&
	{ plan_system || { cat err; false; }; } &&
	expect_eq "system $W\\user\\python.exe" "$(planned)"
'

test_expect_success 'the PyLauncher company is not an interpreter' '
	test_when_finished unregister &&
	wine reg add "$LAUNCHER\\3.12\\InstallPath" /ve /d "$W\\launcher" /f >/dev/null &&
	wine reg add "$LAUNCHER\\3.12\\InstallPath" /v ExecutablePath \
		/d "$W\\launcher\\python.exe" /f >/dev/null &&
	expect_exit 6 plan_system
'

test_expect_success 'a relative ExecutablePath is never run' '
	test_when_finished unregister &&
	wine reg add "$HKCU\\3.12\\InstallPath" /ve /d "$W\\user" /f >/dev/null &&
	wine reg add "$HKCU\\3.12\\InstallPath" /v ExecutablePath /d "user\\python.exe" \
		/f >/dev/null &&
	expect_exit 6 plan_system
'

# many_reg: writes many.reg: 300 tags whose InstallPath key has no value,
# then one with the user folder as InstallPath's default value.
many_reg() {
	python3 - "$W" >many.reg <<'EOF'
import sys
key = "HKEY_CURRENT_USER\\Software\\Python\\MlsetupTestCo\\"
lines = ["REGEDIT4", ""]
for i in range(100, 400):
    lines += ["[%s%d\\InstallPath]" % (key, i), ""]
user = (sys.argv[1] + "\\user").replace("\\", "\\\\")
lines += ["[%s999\\InstallPath]" % key, '@="%s"' % user, ""]
sys.stdout.write("\r\n".join(lines))
EOF
}

test_expect_success 'tags without a path do not use up the room for the one that has it' '
	test_when_finished unregister &&
	many_reg &&
	wine reg import many.reg >/dev/null 2>&1 &&
	{ plan_system || { cat err; false; }; } &&
	expect_eq "system $W\\user\\python.exe" "$(planned)"
'

unregister
test_done
