#!/bin/sh
# Windows script launchers (platform/windows/launcher/launcher.c, written
# by src/env/winlauncher.c through tests/helpers/mkwinlauncher) under wine,
# running a SIMULATED interpreter: build/launcher/stub-python.exe
# (tests/helpers/stub_python.c) copied in as Scripts\python.exe, which only
# reports the command line it got, as the C runtime and as
# CommandLineToArgvW split it. Checks that arguments with spaces, quotes,
# backslashes and empty ones arrive intact, that the interpreter gets the
# .exe itself as its script, that exit codes come back, non-ASCII paths,
# the GUI variant, "#!python" scripts, that killing the launcher ends the
# interpreter (its job object), and the launcher's own errors. The payload is also
# run by the real python3 on Linux: it is a zip whose __main__.py calls the
# entry point.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/winelib.sh"

L="$top/build/launcher"
# the test helper of this build, else the sanitizer build's (the release
# suite runs against a binary alone)
MK="$MLSETUP_BUILD/helpers/mkwinlauncher"
[ -x "$MK" ] || MK="$top/build/asan/helpers/mkwinlauncher"

if ! command -v wine >/dev/null 2>&1; then
	release_skip_all "wine is not installed (packaging/release-deps.sh installs it)"
fi
if [ ! -f "$L/launcher-console.exe" ] || [ ! -f "$L/stub-python.exe" ]; then
	release_skip_all "no build/launcher: the pinned zig is not in the release cache (sh packaging/release/toolchain.sh, then make check)"
fi
if [ ! -x "$MK" ]; then
	release_skip_all "no $MK (make check builds it)"
fi

# A venv-like tree: Scripts\python.exe (the stub) and the launchers, which
# name "python.exe" relative to their own directory.
setup_env() {
	mkdir -p env/Scripts &&
	cp "$L/stub-python.exe" env/Scripts/python.exe &&
	cp "$L/stub-pythonw.exe" env/Scripts/pythonw.exe &&
	"$MK" "$L/launcher-console.exe" env/Scripts/foo.exe python.exe entry "pkg.mod:main" &&
	"$MK" "$L/launcher-gui.exe" env/Scripts/foo-gui.exe pythonw.exe entry "pkg.mod:gui"
}

# args FILE: the stub's argument lines, without CRs (wine writes CRLF).
args() {
	tr -d '\r' <"$1" | grep -E '^(w?argv\[|argc=)'
}

# expect_args OUT EXE ARG...: the stub's report OUT shows the launcher EXE
# as the script and exactly ARG... after it, split alike by the C runtime
# and by CommandLineToArgvW.
expect_args() {
	out=$1 exe=$2
	shift 2
	{
		printf 'argc=%d\n' $(($# + 2))
		for v in argv wargv; do
			printf '%s[1]=[%s]\n' $v "$(winpath "$exe")"
			i=2
			for a in "$@"; do
				printf '%s[%d]=[%s]\n' $v $i "$a"
				i=$((i + 1))
			done
		done
	} >expected &&
	args "$out" | grep -v '^w\{0,1\}argv\[0\]' >got &&
	diff -u expected got
}

test_expect_success 'console launcher: arguments with spaces, quotes, backslashes arrive intact' '
	setup_env &&
	wine env/Scripts/foo.exe "a b" "say \"hi\"" "back\\slash\\" "dir with\\ space\\" "" \
		"tab	x" "\\\"" "*" >out 2>err &&
	cat out err &&
	expect_args out "$PWD/env/Scripts/foo.exe" "a b" "say \"hi\"" "back\\slash\\" \
		"dir with\\ space\\" "" "tab	x" "\\\"" "*" &&
	tr -d "\r" <out | grep -qxF "exe=[$(winpath "$PWD/env/Scripts/python.exe")]"
'

test_expect_success 'console launcher: no arguments, and the exit code comes back' '
	setup_env &&
	wine env/Scripts/foo.exe >out 2>err &&
	expect_args out "$PWD/env/Scripts/foo.exe" &&
	STUB_PYTHON_EXIT=7 expect_exit 7 wine env/Scripts/foo.exe x >out 2>err &&
	expect_args out "$PWD/env/Scripts/foo.exe" x &&
	STUB_PYTHON_EXIT=255 expect_exit 255 wine env/Scripts/foo.exe >out 2>err
'

test_expect_success 'the command line after the program name is passed verbatim' '
	setup_env &&
	wine env/Scripts/foo.exe "a  b" c >out 2>err &&
	tr -d "\r" <out | grep "^cmdline=" >cmdline &&
	grep -qF "\"$(winpath "$PWD/env/Scripts/python.exe")\" \"$(winpath "$PWD/env/Scripts/foo.exe")\" \"a  b\" c]" cmdline
'

test_expect_success 'a launcher in a directory with spaces (a quoted program name)' '
	setup_env &&
	mkdir -p "my env/Scripts" &&
	cp env/Scripts/python.exe env/Scripts/foo.exe "my env/Scripts/" &&
	wine "my env/Scripts/foo.exe" "a b" c "" >out 2>err &&
	expect_args out "$PWD/my env/Scripts/foo.exe" "a b" c "" &&
	tr -d "\r" <out | grep -qxF "exe=[$(winpath "$PWD/my env/Scripts/python.exe")]"
'

test_expect_success 'non-ASCII directories, interpreter path and arguments (UTF-16 side)' '
	export LC_ALL=C.UTF-8 &&
	setup_env &&
	mkdir -p "ünï env/Scripts" "Pythön 3" &&
	cp env/Scripts/python.exe env/Scripts/foo.exe "ünï env/Scripts/" &&
	cp env/Scripts/python.exe "Pythön 3/" &&
	wine "ünï env/Scripts/foo.exe" "ärg ü" "€" >out 2>err &&
	tr -d "\r" <out | grep "^wargv" >got &&
	printf "wargv[%d]=[%s]\n" 0 "$(winpath "$PWD/ünï env/Scripts/python.exe")" \
		1 "$(winpath "$PWD/ünï env/Scripts/foo.exe")" 2 "ärg ü" 3 "€" >expected &&
	diff -u expected got &&
	"$MK" "$L/launcher-console.exe" abs.exe "$(winpath "$PWD/Pythön 3/python.exe")" entry "pkg.mod:main" &&
	wine abs.exe >out 2>err &&
	tr -d "\r" <out | grep -qxF "exe=[$(winpath "$PWD/Pythön 3/python.exe")]"
'

test_expect_success 'GUI launcher runs pythonw.exe with the same arguments' '
	setup_env &&
	STUB_PYTHON_LOG=$(winpath "$PWD/gui.log") STUB_PYTHON_EXIT=3 \
		expect_exit 3 wine env/Scripts/foo-gui.exe "a b" "say \"hi\"" "" >out 2>err &&
	expect_args gui.log "$PWD/env/Scripts/foo-gui.exe" "a b" "say \"hi\"" "" &&
	tr -d "\r" <gui.log | grep -qxF "exe=[$(winpath "$PWD/env/Scripts/pythonw.exe")]"
'

test_expect_success 'an absolute interpreter path with a space' '
	setup_env &&
	mkdir -p "other dir" && cp "$L/stub-python.exe" "other dir/python.exe" &&
	"$MK" "$L/launcher-console.exe" abs.exe "$(winpath "$PWD/other dir/python.exe")" entry "pkg.mod:main" &&
	wine abs.exe "x y" >out 2>err &&
	expect_args out "$PWD/abs.exe" "x y" &&
	tr -d "\r" <out | grep -qxF "exe=[$(winpath "$PWD/other dir/python.exe")]"
'

test_expect_success '#!python script: a launcher whose payload is the script' '
	setup_env &&
	printf "#!python\nimport sys\nprint(\"script\", sys.argv[1:])\nsys.exit(4)\n" >tool.py &&
	"$MK" "$L/launcher-console.exe" env/Scripts/tool.exe python.exe script tool.py &&
	wine env/Scripts/tool.exe "p q" >out 2>err &&
	expect_args out "$PWD/env/Scripts/tool.exe" "p q" &&
	expect_exit 4 python3 env/Scripts/tool.exe "p q" >py.out &&
	grep -qxF "script ['"'"'p q'"'"']" py.out
'

test_expect_success 'the payload runs the entry point under a real Python' '
	setup_env &&
	mkdir -p site/pkg && : >site/pkg/__init__.py &&
	printf "import sys\ndef main():\n    for a in sys.argv:\n        print(\"[%%s]\" %% a)\n    return 3\n" >site/pkg/mod.py &&
	PYTHONPATH=site expect_exit 3 python3 "$PWD/env/Scripts/foo.exe" "a b" "say \"hi\"" "" >py.out &&
	printf "[%s]\n" "$PWD/env/Scripts/foo" "a b" "say \"hi\"" "" >expected &&
	diff -u expected py.out
'

# pids_with STRING: the processes whose command line contains STRING.
pids_with() {
	for d in /proc/[0-9]*; do
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$1" && echo "${d#/proc/}"
	done
	return 0
}

test_expect_success 'killing the launcher ends the interpreter (kill-on-close job)' '
	setup_env &&
	{ STUB_PYTHON_SLEEP=60000 wine env/Scripts/foo.exe >out 2>err & } &&
	lpid=$! &&
	test_when_finished "kill -9 $lpid 2>/dev/null; true" &&
	i=0 &&
	while ! grep -q "^argc=" out && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done &&
	cpid=$(pids_with "$(winpath "$PWD/env/Scripts/python.exe")") &&
	test -n "$cpid" &&
	test_when_finished "kill -9 $cpid 2>/dev/null; true" &&
	kill -9 $lpid &&
	i=0 &&
	while kill -0 $cpid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 $cpid 2>/dev/null
'

test_expect_success 'launcher errors: no payload, missing interpreter' '
	setup_env &&
	cp "$L/launcher-console.exe" bare.exe &&
	expect_exit 101 wine bare.exe >out 2>err &&
	grep "launcher: no script is attached to" err &&
	"$MK" "$L/launcher-console.exe" env/Scripts/lost.exe missing.exe entry "pkg.mod:main" &&
	expect_exit 101 wine env/Scripts/lost.exe >out 2>err &&
	grep -F "launcher: cannot run: $(winpath "$PWD/env/Scripts/missing.exe") (error 2)" err
'

test_done
