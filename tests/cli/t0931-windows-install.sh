#!/bin/sh
# `mlsetup.exe install` under wine builds a Windows environment, with a
# SIMULATED interpreter: there is no Windows CPython on this machine, so
# the pinned "python-build-standalone" archive the loopback mirror serves
# holds build/launcher/stub-python.exe (tests/helpers/stub_python.c) as
# python\python.exe and as the venv launcher in Lib\venv\scripts\nt\. The
# stub answers mlsetup's interpreter probe like CPython 3.12.8 (in text
# mode, CR LF) and otherwise only reports how it was started; it runs no
# Python, so installs here pass --no-verify (the import check needs a real
# interpreter). What is real: the fetch of the interpreter with the wheels,
# its unpacking under %LOCALAPPDATA%, the probe, the Windows venv layout
# (Scripts\, Lib\site-packages, pyvenv.cfg, python.exe copied from the
# venv launcher), entry points and "#!python" scripts as .exe launchers
# with RECORD rows, the staged commit, the report, a second run that finds
# nothing to do, and a failed reinstall that leaves the environment as it
# was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/winelib.sh"
. "$top/tests/mirror/testlib.sh"

L="$top/build/launcher"
wine_prefix wineprefix-t0930
[ -f "$L/stub-python.exe" ] && [ -f "$L/stub-pythonw.exe" ] ||
	release_skip_all "no build/launcher stubs: the pinned zig is not in the release cache (sh packaging/release/toolchain.sh, then make check)"

# %LOCALAPPDATA% of the prefix (wine sets it; a value from here is not
# passed on), without this test's interpreter, so it is unpacked afresh.
APPDATA_DIR=$(winepath -u "$(wine cmd /c echo %LOCALAPPDATA% | tr -d '\r')" 2>/dev/null)
[ -d "$APPDATA_DIR" ] || release_skip_all "no %LOCALAPPDATA% in the wine prefix $WINEPREFIX"
PYDIR="$APPDATA_DIR/mlsetup/pythons/cpython-3.12.8-windows-x86_64-test"
rm -rf "$PYDIR"

# win ARGS...: mlsetup.exe install-ish command under wine; stdout without
# CRs in out, stderr in err.
win() {
	wine "$EXE" "$@" >out.raw 2>err.raw
	rc=$?
	tr -d '\r' <out.raw >out
	tr -d '\r' <err.raw >err
	return $rc
}

mirror_start web
python3 "$top/tests/fixtures/make_wheels.py" "$TRASH/wheels" --python 3.12 >/dev/null
for w in purepkg-1.0-py3-none-any.whl datapkg-0.5-py3-none-any.whl; do
	cp "$TRASH/wheels/$w" "$TRASH/web/files/"
done

# The simulated interpreter archive, laid out as python-build-standalone's
# Windows install_only archives are (python\python.exe, python\Lib\...).
ARCH=cpython-3.12.8-mlsetup-test-x86_64-pc-windows-msvc-install_only.tar.gz
python3 - "$TRASH/web/files/$ARCH" "$L" <<'EOF'
import io, sys, tarfile
out, stubs = sys.argv[1], sys.argv[2]
py = open(stubs + "/stub-python.exe", "rb").read()
pyw = open(stubs + "/stub-pythonw.exe", "rb").read()
files = {"python/python.exe": py, "python/pythonw.exe": pyw,
         "python/Lib/venv/scripts/nt/python.exe": py,
         "python/Lib/venv/scripts/nt/pythonw.exe": pyw,
         "python/Lib/os.py": b"# simulated\n"}
with tarfile.open(out, "w:gz") as t:
    for name, data in sorted(files.items()):
        ti = tarfile.TarInfo(name)
        ti.size, ti.mode, ti.mtime = len(data), 0o755, 0
        t.addfile(ti, io.BytesIO(data))
EOF
cat >"$TRASH/pins.json" <<EOF
{"schema": "mlsetup.python/1", "default": "3.12", "pythons": [
 {"name": "cpython-3.12.8-windows-x86_64-test", "version": "3.12.8", "os": "windows",
  "arch": "x86_64", "libc": "none", "sha256": "$(sha256sum "$TRASH/web/files/$ARCH" | cut -d' ' -f1)",
  "size": $(wc -c <"$TRASH/web/files/$ARCH" | tr -d ' '),
  "url": "https://example.org/python-build-standalone/releases/download/$ARCH"}]}
EOF

# manifest OUT WHEEL...: a hashed manifest of those wheels for Windows.
manifest() {
	out=$1
	shift
	{
		echo "# mlsetup: python = 3.12"
		echo "# mlsetup: platforms = windows-x86_64"
		printf "# mlsetup: requested ="
		for w in "$@"; do printf " %s" "${w%%-*}"; done
		echo
		echo "--index-url $web_url"
		for w in "$@"; do
			f="$TRASH/web/files/$w"
			v=${w#*-}
			echo "${w%%-*}==${v%%-*} --hash=sha256:$(sha256sum "$f" | cut -d' ' -f1)"
		done
		for w in "$@"; do
			f="$TRASH/web/files/$w"
			echo "# mlsetup-file: $(sha256sum "$f" | cut -d' ' -f1) $(wc -c <"$f" | tr -d ' ') $w"
		done
	} >"$out"
}
manifest "$TRASH/m.txt" purepkg-1.0-py3-none-any.whl datapkg-0.5-py3-none-any.whl

# inst ARGS...: install with this test's pins, mirror and cache.
inst() {
	win install --manifest m.txt --target env --cache-dir cache --python-pins pins.json \
		--python-mirror "http://127.0.0.1:$web_port/files" --no-progress --no-verify \
		--retries 1 --connect-timeout 2 --low-speed-time 2 "$@"
}

# tree_sum DIR: one hash over every path and file content under DIR.
tree_sum() {
	(cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum)
}

test_expect_success 'install: a Windows venv from the pinned (simulated) interpreter' '
	{ inst || { cat err; false; }; } &&
	cmp "$L/stub-python.exe" "$PYDIR/python/python.exe" &&
	test -f "$PYDIR/.mlsetup-complete" &&
	cmp "$L/stub-python.exe" env/Scripts/python.exe &&
	cmp "$L/stub-pythonw.exe" env/Scripts/pythonw.exe &&
	tr -d "\r" <env/pyvenv.cfg >cfg &&
	grep -qx "version = 3.12.8" cfg &&
	grep -q "^home = .*\\\\mlsetup\\\\pythons\\\\cpython-3.12.8-windows-x86_64-test\\\\python$" cfg &&
	test -f env/Lib/site-packages/purepkg/__init__.py &&
	test -d env/Lib/site-packages/purepkg-1.0.dist-info &&
	test -f env/Scripts/activate.bat && test -f env/Scripts/Activate.ps1 &&
	test ! -e env/bin && test ! -e env/lib &&
	test -f env/.mlsetup-complete &&
	test -f env/mlsetup-report.json &&
	expect_eq 3.12.8 "$(json env/mlsetup-report.json "d[\"python\"][\"version\"]")" &&
	ls -a . | grep -v "^\.mlsetup\|^\.\.\?$" >/dev/null &&
	test -z "$(ls -a | grep "^\.env\.mlsetup-\(stage\|old\)")"
'

test_expect_success 'entry points and #!python scripts are .exe launchers with RECORD rows' '
	for s in purepkg-hello purepkg-gui datapkg-run datapkg-unbuffered; do
		test -f env/Scripts/$s.exe || { echo "no Scripts/$s.exe"; return 1; }
	done &&
	test ! -e env/Scripts/purepkg-hello &&
	tr -d "\r" <env/Lib/site-packages/purepkg-1.0.dist-info/RECORD >record &&
	grep -q "^\.\./\.\./Scripts/purepkg-hello\.exe,sha256=" record &&
	tr -d "\r" <env/Lib/site-packages/datapkg-0.5.dist-info/RECORD >record2 &&
	grep -q "^\.\./\.\./Scripts/datapkg-run\.exe,sha256=" record2
'

test_expect_success 'a console launcher runs Scripts\python.exe with itself and the arguments' '
	wine env/Scripts/purepkg-hello.exe "a b" "q\"uote" >run.raw 2>&1 &&
	tr -d "\r" <run.raw >run &&
	grep -q "^exe=\[.*\\\\env\\\\Scripts\\\\python.exe\]$" run &&
	grep -q "^argv\[1\]=\[.*\\\\env\\\\Scripts\\\\purepkg-hello.exe\]$" run &&
	grep -qx "argv\[2\]=\[a b\]" run &&
	grep -qx "argv\[3\]=\[q\"uote\]" run
'

test_expect_success 'a second install finds nothing to do and changes nothing' '
	tree_sum env >before &&
	inst &&
	cat out err >both &&
	grep -q "is up to date" both &&
	tree_sum env >after &&
	cmp before after
'

test_expect_success 'a reinstall that fails (a wheel does not match its hash) leaves the environment as it was' '
	tree_sum env >before &&
	cp web/files/purepkg-1.0-py3-none-any.whl purepkg.good &&
	test_when_finished "cp purepkg.good web/files/purepkg-1.0-py3-none-any.whl" &&
	printf x >>web/files/purepkg-1.0-py3-none-any.whl &&
	rm -rf cache &&
	expect_exit 3 inst --reinstall &&
	grep -q "purepkg" err &&
	tree_sum env >after &&
	cmp before after &&
	test -z "$(ls -a | grep "^\.env\.mlsetup-\(stage\|old\)")"
'

test_expect_success 'a reinstall builds a new environment in its place' '
	inst --reinstall --json &&
	cmp "$L/stub-python.exe" env/Scripts/python.exe &&
	test -f env/Scripts/purepkg-hello.exe &&
	test -z "$(ls -a | grep "^\.env\.mlsetup-\(stage\|old\)")"
'

# Names Windows cannot create as named (tests/fixtures/make_hostile_wheels.py):
# each wheel is refused with the entry named, exit 3, before anything is
# written - the environment, the cache and the directory around stay as
# they were; the twin with names close to the rules installs.
python3 "$top/tests/fixtures/make_hostile_wheels.py" "$TRASH/hostile" >/dev/null
for w in winconpkg windotpkg winadspkg winauxpkg casepkg winokpkg; do
	cp "$TRASH/hostile/$w-1.0-py3-none-any.whl" "$TRASH/web/files/"
done

# win_refused WHEEL SAYS: installing WHEEL beside purepkg into env exits 3
# saying SAYS (a grep pattern) and changes nothing.
win_refused() {
	manifest "$TRASH/h.txt" purepkg-1.0-py3-none-any.whl "$1" &&
	tree_sum env >before &&
	win install --manifest h.txt --target env --cache-dir cache --python-pins pins.json \
		--python-mirror "http://127.0.0.1:$web_port/files" --no-progress --no-verify \
		--retries 1 --connect-timeout 2 --low-speed-time 2 --reinstall;
	rc=$?
	cat err &&
	expect_eq 3 $rc &&
	grep -q "$1" err &&
	grep -q "$2" err &&
	tree_sum env >after &&
	cmp before after &&
	test -z "$(ls -a | grep "^\.env\.mlsetup-\(stage\|old\)")" &&
	test -z "$(find cache/unpacked -maxdepth 3 -name "*.tmp-*")"
}

test_expect_success 'windows: CON.py (a device name with an extension) is refused, nothing written' '
	win_refused winconpkg-1.0-py3-none-any.whl \
		"entry .winconpkg/CON.py. refused on Windows: .CON.py. is the device CON"
'
test_expect_success 'windows: mod.py. (a trailing dot) is refused, nothing written' '
	win_refused windotpkg-1.0-py3-none-any.whl \
		"entry .windotpkg/mod.py\.. refused on Windows: .mod.py\.. ends in a dot"
'
test_expect_success 'windows: x.py:ads (an NTFS alternate data stream) is refused, nothing written' '
	win_refused winadspkg-1.0-py3-none-any.whl \
		"entry .winadspkg/x.py:ads. refused on Windows: .x.py:ads. has a .:."
'
test_expect_success 'windows: two names that differ only in case are refused, nothing written' '
	win_refused casepkg-1.0-py3-none-any.whl \
		"entries .casepkg/Foo.py. and .casepkg/foo.py. are one name after .*case folding (Windows folds case)"
'
test_expect_success 'windows: an entry point named aux (its launcher would be the AUX device) is refused' '
	win_refused winauxpkg-1.0-py3-none-any.whl \
		"console_scripts entry point .aux. refused on Windows: .aux. is the device AUX"
'
test_expect_success 'windows: the twin (cone.py, icon.py, console.py, entry point auxiliary) installs' '
	manifest "$TRASH/ok.txt" purepkg-1.0-py3-none-any.whl winokpkg-1.0-py3-none-any.whl &&
	{ win install --manifest ok.txt --target env-ok --cache-dir cache --python-pins pins.json \
		--python-mirror "http://127.0.0.1:$web_port/files" --no-progress --no-verify \
		--retries 1 --connect-timeout 2 --low-speed-time 2 || { cat err; false; }; } &&
	for f in cone.py icon.py console.py; do
		test -f env-ok/Lib/site-packages/winokpkg/$f || { echo "no $f"; return 1; }
	done &&
	test -f env-ok/Scripts/auxiliary.exe && test -f env-ok/Scripts/console.exe
'

test_expect_success 'a reinstall while a program holds a launcher open says so and changes nothing' '
	tree_sum env >before &&
	rm -f held.log &&
	{ STUB_PYTHON_HOLD="env\\Scripts\\purepkg-hello.exe" STUB_PYTHON_LOG=held.log \
		STUB_PYTHON_SLEEP=30000 wine env/Scripts/python.exe & } &&
	holder=$! &&
	test_when_finished "kill $holder 2>/dev/null; wait $holder 2>/dev/null; true" &&
	i=0 &&
	while [ ! -s held.log ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done &&
	expect_exit 1 inst --reinstall &&
	grep -q "is in use: a running program holds .Scripts/purepkg-hello.exe. open" err &&
	grep -q "close what runs from it" err &&
	tree_sum env >after &&
	cmp before after &&
	test -z "$(ls -a | grep "^\.env\.mlsetup-\(stage\|old\)")"
'

test_expect_success 'the shipped Windows manifest (no hashes, no index named): pip'"'"'s default index is asked of the environment'"'"'s interpreter' '
	STUB_PIP_INDEX_URL=$web_url test_must_fail win install --target env2 --cache-dir cache \
		--python-pins pins.json --python-mirror "http://127.0.0.1:$web_port/files" \
		--no-progress --retries 0 --connect-timeout 2 &&
	grep -q "^manifest  requirements.txt - .*(Windows)" out &&
	grep -q "cpython-3.12.8-windows-x86_64-test/python/python.exe. answered no pip version" err &&
	! grep -q "could not tell pip" err &&
	test ! -e env2 &&
	test -z "$(ls -a | grep "^\.env2\.mlsetup-\(stage\|old\)")"
'

test_expect_success 'verify without a driver: nvcuda.dll is looked for in System32 only' '
	expect_exit 5 win verify --target env --json &&
	json out "d[\"driver_smoke\"][\"detail\"]" >detail &&
	grep -qi "system32/nvcuda.dll" detail
'

WIN="$top/build/shims-windows"
if [ ! -f "$WIN/nvml.dll" ] || [ ! -f "$WIN/nvcuda.dll" ]; then
	release_skip "no build/shims-windows: run make shims-windows"
fi
test_expect_success 'verify on a fake RTX 5090: the saxpy kernel through nvcuda.dll, the framework check through Scripts\python.exe' '
	cp "$WIN/nvml.dll" "$WIN/nvcuda.dll" "$SYS32/" &&
	test_when_finished "rm -f \"$SYS32/nvml.dll\" \"$SYS32/nvcuda.dll\"" &&
	expect_exit 5 env MLSETUP_FAKE_NVIDIA="$(winpath "$FIXTURES/gpus/win-rtx5090-572.json")" \
		wine "$EXE" verify --target env --json >out.raw 2>err &&
	tr -d "\r" <out.raw >out &&
	expect_eq pass "$(json out "d[\"driver_smoke\"][\"status\"]")" &&
	expect_eq "NVIDIA GeForce RTX 5090" "$(json out "d[\"driver_smoke\"][\"gpus\"][0][\"name\"]")" &&
	expect_eq 12.0 "$(json out "d[\"driver_smoke\"][\"gpus\"][0][\"cc\"]")" &&
	json out "d[\"framework\"][\"output\"]" >fw &&
	expect_eq env/Scripts/python.exe "$(json out "d[\"python\"]")" &&
	grep -q "mlsetup.torch_smoke/1" fw &&
	grep -qx "wargv\[3\]=\[--size\]" fw &&
	expect_eq import_error "$(json out "d[\"verdict\"][\"cause\"]")"
'

test_done
