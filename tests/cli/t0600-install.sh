#!/bin/sh
# mlsetup install end to end from the loopback index: a pinned interpreter
# (built from the system Python, served through --python-mirror), fixture
# wheels with entry points, .data/scripts, headers, purelib and platlib;
# the environment works, pip sees it, the report is written, and a second
# environment from the same manifest needs no download and no decompression.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS

test_expect_success 'install builds a working environment' '
	inst --manifest m.txt --target "$TRASH/env" >out 2>err &&
	env_works "$TRASH/env" &&
	grep -q "^environment  $TRASH/env" out &&
	no_staging "$TRASH" && no_parts
'
test_expect_success 'sys.prefix is the environment, sys.base_prefix the interpreter' '
	base=$("$TRASH/env/bin/python" -c "import sys; print(sys.base_prefix)") &&
	case "$base" in "$TRASH/data/mlsetup/pythons/"*) ;; *) echo "base_prefix $base"; exit 1 ;; esac &&
	grep -q "^include-system-site-packages = false" "$TRASH/env/pyvenv.cfg"
'
test_expect_success 'console and gui script launchers run' '
	expect_eq "purepkg-hello ok" "$("$TRASH/env/bin/purepkg-hello")" &&
	expect_eq "purepkg-gui ok" "$("$TRASH/env/bin/purepkg-gui")" &&
	head -1 "$TRASH/env/bin/purepkg-hello" | grep -q "^#!$TRASH/env/bin/python"
'
test_expect_success '.data/scripts get the environment python, headers and data land' '
	ls "$TRASH/env/bin" >bins &&
	for s in $(unzip -Z1 wheels/datapkg-0.5-py3-none-any.whl | sed -n "s#^datapkg-0.5.data/scripts/##p"); do
		test -x "$TRASH/env/bin/$s" || exit 1
		if head -c 20 "$TRASH/env/bin/$s" | grep -q "^#!"; then
			head -1 "$TRASH/env/bin/$s" | grep -vq "^#!python" || exit 1
		fi
	done &&
	test -n "$(ls "$TRASH/env/include/site/python$PYXY/datapkg" 2>/dev/null)"
'
test_expect_success 'pip inside the environment lists the packages, installed by mlsetup' '
	python3 -m pip --python "$TRASH/env/bin/python" list --format=json >pl 2>/dev/null &&
	json pl "sorted(p[\"name\"] for p in d)" | grep -q "datapkg" &&
	json pl "sorted(p[\"name\"] for p in d)" | grep -q "purepkg" &&
	json pl "sorted(p[\"name\"] for p in d)" | grep -q "platpkg" &&
	expect_eq mlsetup "$(cat "$TRASH"/env/lib/python$PYXY/site-packages/purepkg-1.0.dist-info/INSTALLER)" &&
	test -f "$TRASH"/env/lib/python$PYXY/site-packages/purepkg-1.0.dist-info/REQUESTED
'
test_expect_success 'the report names the machine, plan, files and stages' '
	r="$TRASH/env/mlsetup-report.json" &&
	expect_eq mlsetup.report/1 "$(json "$r" "d[\"schema\"]")" &&
	expect_eq ok "$(json "$r" "d[\"status\"]")" &&
	expect_eq 3 "$(json "$r" "len(d[\"installed\"])")" &&
	expect_eq pass "$(json "$r" "d[\"verification\"][\"status\"]")" &&
	expect_eq 4 "$(json "$r" "d[\"counters\"][\"downloaded_files\"]")" &&
	test "$(json "$r" "d[\"counters\"][\"bytes_extracted\"]")" -gt 0 &&
	expect_eq true "$(json "$r" "d[\"stages\"][\"fetch_s\"] >= 0 and d[\"stages\"][\"install_s\"] > 0")"
'
test_expect_success 'a second environment needs no download and no decompression' '
	inst --manifest m.txt --target "$TRASH/env2" >/dev/null 2>err &&
	env_works "$TRASH/env2" &&
	r="$TRASH/env2/mlsetup-report.json" &&
	expect_eq 0 "$(json "$r" "d[\"counters\"][\"downloaded_files\"]")" &&
	expect_eq 0 "$(json "$r" "d[\"counters\"][\"downloaded_bytes\"]")" &&
	expect_eq 0 "$(json "$r" "d[\"counters\"][\"bytes_extracted\"]")" &&
	expect_eq 3 "$(json "$r" "d[\"counters\"][\"unpacked_cache_hits\"]")" &&
	expect_eq true "$(json "$r" "d[\"python\"][\"already_unpacked\"]")"
'
test_expect_success 'installing the same plan again is a no-op that changes nothing' '
	tree_hash "$TRASH/env" >before &&
	inst --manifest m.txt --target "$TRASH/env" >out 2>&1 &&
	grep -q "is up to date" out &&
	expect_eq "$(cat before)" "$(tree_hash "$TRASH/env")"
'
test_expect_success '--reinstall replaces the environment and it still works' '
	echo stale >"$TRASH/env/stale-file" &&
	inst --manifest m.txt --target "$TRASH/env" --reinstall >/dev/null 2>&1 &&
	test ! -e "$TRASH/env/stale-file" &&
	env_works "$TRASH/env" && no_staging "$TRASH"
'
test_expect_success 'a changed plan (another manifest) rebuilds the environment' '
	wheel_manifest "$TRASH/m2.txt" purepkg-1.0-py3-none-any.whl "$PLATWHL" &&
	inst --manifest m2.txt --target "$TRASH/env" >out 2>&1 &&
	! grep -q "is up to date" out &&
	env_works "$TRASH/env" &&
	test ! -e "$TRASH"/env/lib/python$PYXY/site-packages/datapkg-0.5.dist-info
'
test_expect_success '--python PATH builds on an existing interpreter' '
	inst --manifest m.txt --python "$SYSPY" --target "$TRASH/env3" >/dev/null 2>&1 &&
	env_works "$TRASH/env3" &&
	grep -q "^home = $(dirname "$(readlink -f "$SYSPY")")" "$TRASH/env3/pyvenv.cfg"
'
test_expect_success '--json prints the report and nothing else on stdout' '
	inst --manifest m.txt --target "$TRASH/env4" --json >j 2>/dev/null &&
	expect_eq mlsetup.report/1 "$(json j "d[\"schema\"]")"
'
test_expect_success '--require-gpu on a machine without a GPU fails with exit 5 before fetching' '
	expect_exit 5 inst --manifest m.txt --target "$TRASH/env5" --require-gpu 2>err &&
	grep -q "no NVIDIA GPU found" err && test ! -e "$TRASH/env5"
'
test_expect_success 'wheels sharing a path (namespace __init__.py) install in parallel, warm too' '
	for i in 1 2 3 4 5 6 7 8; do
		mkdir -p "$TRASH/ns$i/ns/mod$i" &&
		echo "" >"$TRASH/ns$i/ns/__init__.py" &&
		echo "X = $i" >"$TRASH/ns$i/ns/mod$i/__init__.py" &&
		wheel_from_dir nspkg$i 1.0 py3-none-any "$TRASH/ns$i" "$TRASH/web/files" || exit 1
	done &&
	wheel_manifest "$TRASH/ns.txt" $(for i in 1 2 3 4 5 6 7 8; do echo nspkg$i-1.0-py3-none-any.whl; done) &&
	inst --manifest ns.txt --target "$TRASH/nsenv0" --jobs 8 >/dev/null 2>&1 &&
	for round in 1 2 3; do
		inst --manifest ns.txt --target "$TRASH/nsenv$round" --jobs 8 >out 2>err ||
			{ cat err; exit 1; }
		"$TRASH/nsenv$round/bin/python" -c "import ns.mod1, ns.mod8" || exit 1
	done
'
test_expect_success 'wheels are unpacked as they arrive, while others still download' '
	wheel_manifest "$TRASH/ov.txt" $GOOD_WHEELS &&
	hp=$(sha256sum web/files/purepkg-1.0-py3-none-any.whl | cut -d" " -f1) &&
	marker="$TRASH/ovcache/unpacked/sha256/$hp/unpacked.json" &&
	faults web "{\"datapkg-0.5-py3-none-any.whl\": \"wait_for:go\"}" &&
	test_when_finished "touch \"$TRASH/web/go\"; wait" &&
	{ inst --manifest ov.txt --target "$TRASH/ovenv" --cache-dir "$TRASH/ovcache" \
		--low-speed-time 60 >out 2>err & } &&
	pid=$! &&
	i=0 && while [ ! -f "$marker" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	unpacked_while_held=$(test -f "$marker" && echo yes || echo no) &&
	touch "$TRASH/web/go" &&
	wait $pid &&
	faults web "{}" &&
	expect_eq yes "$unpacked_while_held" &&
	env_works "$TRASH/ovenv" &&
	r="$TRASH/ovenv/mlsetup-report.json" &&
	expect_eq 0 "$(json "$r" "d[\"counters\"][\"unpacked_cache_hits\"]")"
'
test_expect_success 'the pinned interpreter is unpacked and the venv begun while wheels download' '
	wheel_manifest "$TRASH/ovpy.txt" $GOOD_WHEELS &&
	faults web "{\"datapkg-0.5-py3-none-any.whl\": \"wait_for:go2\"}" &&
	test_when_finished "touch \"$TRASH/web/go2\"; wait" &&
	{ XDG_DATA_HOME="$TRASH/ovdata" inst --manifest ovpy.txt --target "$TRASH/ovpyenv" \
		--cache-dir "$TRASH/ovpycache" --low-speed-time 60 >out 2>err & } &&
	pid=$! &&
	ready() {
		ls "$TRASH"/ovdata/mlsetup/pythons/*/.mlsetup-complete &&
			ls "$TRASH"/.ovpyenv.mlsetup-stage-*/pyvenv.cfg
	} >/dev/null 2>&1 &&
	i=0 && while ! ready && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	ready_while_held=$(ready && echo yes || echo no) &&
	touch "$TRASH/web/go2" &&
	wait $pid &&
	faults web "{}" &&
	expect_eq yes "$ready_while_held" &&
	env_works "$TRASH/ovpyenv" &&
	r="$TRASH/ovpyenv/mlsetup-report.json" &&
	expect_eq managed "$(json "$r" "d[\"python\"][\"source\"]")" &&
	expect_eq 4 "$(json "$r" "d[\"counters\"][\"downloaded_files\"]")"
'
test_expect_success 'the pinned interpreter downloads with the wheels, not before them' '
	wheel_manifest "$TRASH/ovpy3.txt" $GOOD_WHEELS &&
	hp=$(sha256sum web/files/purepkg-1.0-py3-none-any.whl | cut -d" " -f1) &&
	marker="$TRASH/ovpy3cache/unpacked/sha256/$hp/unpacked.json" &&
	arch=$(cd web/files && ls cpython-*) &&
	faults web "{\"$arch\": \"wait_for:go3\"}" &&
	test_when_finished "touch \"$TRASH/web/go3\"; wait" &&
	{ XDG_DATA_HOME="$TRASH/ovdata3" inst --manifest ovpy3.txt --target "$TRASH/ovpy3env" \
		--cache-dir "$TRASH/ovpy3cache" --low-speed-time 60 >out 2>err & } &&
	pid=$! &&
	i=0 && while [ ! -f "$marker" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	wheel_while_held=$(test -f "$marker" && echo yes || echo no) &&
	touch "$TRASH/web/go3" &&
	wait $pid &&
	faults web "{}" &&
	expect_eq yes "$wheel_while_held" &&
	env_works "$TRASH/ovpy3env"
'
test_expect_success 'no python3 on PATH and no index named: the pinned interpreter'"'"'s pip names it' '
	# a SIMULATED pip in the pinned interpreter: only the constant mlsetup
	# asks (pip._internal.models.index.PyPI.simple_url), set to this
	# test'"'"'s index, so that "pip'"'"'s default" stays on the loopback
	mkdir -p fakepip/pip/_internal/models &&
	: >fakepip/pip/__init__.py && : >fakepip/pip/_internal/__init__.py &&
	: >fakepip/pip/_internal/models/__init__.py &&
	printf "class PyPI:\n    simple_url = \"%s\"\n" "$web_url" \
		>fakepip/pip/_internal/models/index.py &&
	(cd fakepip && python3 -m zipfile -c ../fakepip.whl pip) &&
	arch=cpython-$PYXY-nopath-x86_64-unknown-linux-gnu-install_only.tar.gz &&
	set -- $(PIP_WHEEL="$TRASH/fakepip.whl" sh "$top/tests/fixtures/make_python_archive.sh" \
		"$TRASH/web/files/$arch" "$SYSPY") &&
	pyver=$("$SYSPY" -c "import sys; print(\"%d.%d.%d\" % sys.version_info[:3])") &&
	printf "%s\n" "{\"schema\": \"mlsetup.python/1\", \"default\": \"$PYXY\", \"pythons\": [" \
		" {\"name\": \"cpython-$pyver-nopath-test\", \"version\": \"$pyver\", \"os\": \"linux\"," \
		"  \"arch\": \"x86_64\", \"libc\": \"gnu\", \"sha256\": \"$1\", \"size\": $2," \
		"  \"url\": \"https://example.org/python-build-standalone/releases/download/$arch\"}]}" \
		>nopath-pins.json &&
	wheel_manifest "$TRASH/np.txt" $GOOD_WHEELS &&
	sed -i "/^--index-url /d" np.txt &&
	! grep -q index-url np.txt &&
	{ env PATH=/nonexistent XDG_DATA_HOME="$TRASH/npdata" "$MLSETUP" install \
		--sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/npcache" \
		--python-pins "$TRASH/nopath-pins.json" --python-mirror "http://127.0.0.1:$web_port/files" \
		--python-preference only-managed --no-progress --retries 1 --connect-timeout 2 \
		--manifest np.txt --target "$TRASH/npenv" >out 2>err ||
		{ cat err; false; }; } &&
	env_works "$TRASH/npenv" &&
	expect_eq managed "$(json "$TRASH/npenv/mlsetup-report.json" "d[\"python\"][\"source\"]")"
'
test_expect_success 'download, no python3 on PATH: the unpacked pinned interpreter'"'"'s pip names the index' '
	{ env PATH=/nonexistent XDG_DATA_HOME="$TRASH/npdata" \
		MLSETUP_PYTHON_PINS="$TRASH/nopath-pins.json" "$MLSETUP" download \
		--cache-dir "$TRASH/npdlcache" --no-progress --retries 1 --connect-timeout 2 \
		-r np.txt -d "$TRASH/npdl" >out 2>err ||
		{ cat err; false; }; } &&
	for w in $GOOD_WHEELS; do cmp "$TRASH/npdl/$w" "web/files/$w" || return 1; done
'
test_done
