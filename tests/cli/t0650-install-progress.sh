#!/bin/sh
# Progress when nobody watches a terminal: install, verify and doctor print
# one plain line per stage start and end on stderr ("mlsetup: fetch:
# started", "mlsetup: fetch: done in 0.3 s", "failed after" when it
# failed), no escape codes; the machine and the manifest come first on
# stdout; -q and --no-progress silence the stage lines (errors still
# print); --json keeps stdout a JSON document and stderr free of them.
# (t0651 watches a real terminal.)
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_from_dir torch 2.6.0 py3-none-any "$top/tests/fixtures/stub_torch" "$TRASH/web/files"
wheel_manifest "$TRASH/torch.txt" purepkg-1.0-py3-none-any.whl torch-2.6.0-py3-none-any.whl
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS

# run ARGS...: inst without --no-progress, on a simulated RTX 3090 with a
# healthy stub torch.
run() {
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json \
		"$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$web_port/files" \
		--retries 1 --connect-timeout 2 --low-speed-time 2 --smoke-size 8 --alloc-mib 1 "$@"
}
ESC=$(printf "\033")

test_expect_success 'not a terminal: a plain line per stage start and end, in order' '
	run --manifest torch.txt --target "$TRASH/e1" >out 2>err &&
	! grep -q "$ESC" err && ! grep -q "$ESC" out &&
	grep "^mlsetup: " err >stages &&
	for st in detect plan fetch interpreter install verify; do
		grep -q "^mlsetup: $st: started$" stages &&
		grep -q "^mlsetup: $st: done in [0-9]*\.[0-9] s$" stages || exit 1
	done &&
	# Every start is followed by the end of the same stage.
	awk -F": " "/started\$/ { if (open) exit 1; open = \$2; next }
		{ if (\$2 != open) exit 1; open = \"\" }
		END { exit open != \"\" }" stages &&
	expect_eq detect "$(head -1 stages | cut -d: -f2 | tr -d " ")" &&
	# Which stages ran, in their order (fetch twice: the index, then the
	# wheels with the pinned interpreter, which is unpacked meanwhile; the
	# interpreter stage then only waits for that).
	expect_eq "detect plan fetch fetch interpreter verify install verify" \
		"$(grep started stages | cut -d: -f2 | tr -d " " | tr "\n" " " | sed "s/ \$//")"
'
test_expect_success 'the machine and the manifest with its reason come first on stdout' '
	run --manifest torch.txt --target "$TRASH/e2" >out 2>err &&
	sed -n 1p out | grep -q "^machine   linux-x86_64, .*, driver 550\.[0-9.]* (CUDA 12\.4); NVIDIA GeForce RTX 3090 (sm_86)$" &&
	sed -n 2p out | grep -q "^manifest  torch.txt (chosen by --manifest)$" &&
	grep -q "^environment  $TRASH/e2" out
'
test_expect_success 'a stage that fails says so, and the error still prints' '
	test_when_finished "faults web {}" &&
	faults web "{\"platpkg-2.0-$PYTAG-$PYTAG-linux_x86_64.whl\": \"status:404\"}" &&
	expect_exit 1 run --manifest m.txt --target "$TRASH/e3" --retries 0 >out 2>err &&
	expect_eq "mlsetup: fetch: failed after" "$(grep "^mlsetup: " err | tail -1 | sed "s/ [0-9.]* s\$//")" &&
	grep -q "^error: .*platpkg.* not found (HTTP 404)$" err &&
	test ! -e "$TRASH/e3"
'
test_expect_success '--no-progress: no stage lines' '
	run --manifest torch.txt --target "$TRASH/e4" --no-progress >out 2>err &&
	! grep -q "^mlsetup: " err &&
	grep -q "^machine " out
'
test_expect_success '-q: nothing at all on success' '
	run -q --manifest torch.txt --target "$TRASH/e5" >out 2>err &&
	test ! -s out && test ! -s err
'
test_expect_success '-q: a failure still prints its error, nothing else' '
	expect_exit 1 run -q --manifest no-such-manifest.txt --target "$TRASH/e6" >out 2>err &&
	test ! -s out &&
	grep -q "^error: " err && ! grep -q "^mlsetup: " err
'
test_expect_success '--json: stdout is the report, stderr has no stage lines' '
	run --json --manifest torch.txt --target "$TRASH/e7" >out 2>err &&
	expect_eq mlsetup.report/1 "$(json out "d[\"schema\"]")" &&
	! grep -q "^mlsetup: " err
'
test_expect_success 'an up-to-date environment: only detect and plan run' '
	run --manifest torch.txt --target "$TRASH/e1" >out 2>err &&
	grep -q "is up to date" out &&
	expect_eq "detect plan" "$(grep started err | cut -d: -f2 | tr -d " " | tr "\n" " " | sed "s/ \$//")"
'
test_expect_success 'verify and doctor: a plain line per stage; --json and -q without' '
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json "$MLSETUP" verify --smoke-size 8 \
		--alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/e1" >out 2>err &&
	expect_eq "mlsetup: detect: started" "$(sed -n 1p err)" &&
	grep -q "^mlsetup: verify: done in [0-9]*\.[0-9] s$" err &&
	grep -q "^verdict   pass" out &&
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json "$MLSETUP" doctor --smoke-size 8 \
		--alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/e1" >out 2>err &&
	grep -q "^mlsetup: plan: done in" err &&
	grep -q "^mlsetup: verify: done in" err &&
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json "$MLSETUP" verify --smoke-size 8 \
		--alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/e1" --json >out 2>err &&
	expect_eq mlsetup.verify/1 "$(json out "d[\"schema\"]")" &&
	test ! -s err &&
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json "$MLSETUP" verify --smoke-size 8 \
		--alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/e1" --no-progress >out 2>err &&
	test ! -s err &&
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json "$MLSETUP" -q verify --smoke-size 8 \
		--alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/e1" >out 2>err &&
	test ! -s err && test ! -s out
'
test_expect_success 'off a terminal, a long hint stays one line whatever COLUMNS says' '
	expect_exit 1 env COLUMNS=30 "$MLSETUP" install --sysroot "$SYSROOTS/empty" \
		--cache-dir "$TRASH/cache" --manifest no-such-manifest.txt --target "$TRASH/e8" \
		>out 2>err &&
	grep -q "^hint: use requirements.txt or requirements_blackwell.txt, or a path to a manifest file$" err
'
test_done
