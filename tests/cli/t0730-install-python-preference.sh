#!/bin/sh
# Interpreter choice, --python-preference (uv's names). managed (the
# default) downloads the pinned interpreter and, only when that download
# fails for a network reason (here: the interpreter host is a closed
# loopback port), uses a fitting CPython found on the machine, saying so
# loudly and recording it in the report and the lock; only-managed never
# falls back (exit 4); a host that answers 404 is no network reason;
# system plans with the machine's CPython before any download, and
# only-system never downloads.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS
# The test CPython is found first: its directory leads PATH.
PATH="$(dirname "$SYSPY"):$PATH"
export PATH
# A loopback port nothing listens on: connection refused.
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# down ARGS...: install with the interpreter host unreachable.
down() {
	"$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$CLOSED/files" \
		--no-progress --retries 1 --connect-timeout 2 --low-speed-time 2 "$@"
}
archive_requests() {
	requests web "/files/cpython-$PYXY-mlsetup-test-x86_64-unknown-linux-gnu-install_only.tar.gz"
}

test_expect_success 'managed: the host unreachable, a fitting CPython here is used, loudly' '
	down --manifest m.txt --target "$TRASH/env" >out 2>err &&
	env_works "$TRASH/env" &&
	grep -q "^warning: the pinned interpreter cpython-.* could not be fetched (.*): using CPython .* found at $SYSPY instead" err &&
	grep -q "only-managed forbids this" err &&
	r="$TRASH/env/mlsetup-report.json" &&
	expect_eq "$SYSPY" "$(json "$r" "d[\"python\"][\"executable\"]")" &&
	expect_eq system "$(json "$r" "d[\"python\"][\"source\"]")" &&
	json "$r" "d[\"python\"][\"reason\"]" | grep -q "could not be fetched" &&
	grep -q "^home = $(dirname "$SYSPY")" "$TRASH/env/pyvenv.cfg"
'
test_expect_success 'the lock file records which interpreter and why' '
	"$SYSPY" -c "import sys, tomllib
p = tomllib.load(open(sys.argv[1], \"rb\"))[\"tool\"][\"mlsetup\"][\"python\"]
assert p[\"source\"] == \"system\", p
assert p[\"executable\"] == sys.argv[2], p
assert \"could not be fetched\" in p[\"reason\"], p" "$TRASH/env/pylock.toml" "$SYSPY"
'
test_expect_success 'the same install again, the host still unreachable, is a no-op' '
	tree_hash "$TRASH/env" >before &&
	down --manifest m.txt --target "$TRASH/env" >out 2>err &&
	grep -q "is up to date" out &&
	expect_eq "$(cat before)" "$(tree_hash "$TRASH/env")"
'
test_expect_success 'only-managed never falls back: exit 4, nothing built' '
	expect_exit 4 down --manifest m.txt --target "$TRASH/env2" \
		--python-preference only-managed 2>err &&
	! grep -q "found at" err && test ! -e "$TRASH/env2" && no_staging "$TRASH"
'
test_expect_success 'a host that answers (404) is no network reason: no fallback' '
	expect_exit 1 "$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$web_port/nothing" \
		--no-progress --retries 1 --manifest m.txt --target "$TRASH/env3" 2>err &&
	! grep -q "found at" err && test ! -e "$TRASH/env3"
'
test_expect_success 'managed with the host reachable downloads the pinned interpreter' '
	faults web "{}" &&
	inst --manifest m.txt --target "$TRASH/env4" >out 2>err &&
	expect_eq managed "$(json "$TRASH/env4/mlsetup-report.json" "d[\"python\"][\"source\"]")" &&
	test "$(archive_requests)" -ge 1 && ! grep -q "could not be fetched" err
'
test_expect_success 'system: the CPython here is planned before any download' '
	faults web "{}" &&
	XDG_DATA_HOME="$TRASH/data-system" inst --manifest m.txt --target "$TRASH/env5" \
		--python-preference system >out 2>err &&
	expect_eq 0 "$(archive_requests)" &&
	r="$TRASH/env5/mlsetup-report.json" &&
	expect_eq "$SYSPY" "$(json "$r" "d[\"python\"][\"executable\"]")" &&
	expect_eq system "$(json "$r" "d[\"python\"][\"source\"]")" &&
	! grep -q "could not be fetched" err &&
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --python-pins "$TRASH/pins.json" \
		--manifest m.txt --python-preference system >plan.out 2>&1 &&
	grep -q "^python    .* ($SYSPY, found on this machine)" plan.out
'
test_expect_success 'only-system never downloads; a manifest for another Python is forced loudly' '
	faults web "{}" &&
	XDG_DATA_HOME="$TRASH/data-only" inst --manifest m.txt --target "$TRASH/env6" \
		--python-preference only-system >out 2>err &&
	expect_eq "$SYSPY" "$(json "$TRASH/env6/mlsetup-report.json" "d[\"python\"][\"executable\"]")" &&
	sed "s/^# mlsetup: python = .*/# mlsetup: python = 3.99/" "$TRASH/m.txt" >"$TRASH/m399.txt" &&
	XDG_DATA_HOME="$TRASH/data-only" inst --manifest m399.txt --target "$TRASH/env7" \
		--python-preference only-system >out 2>err &&
	grep -q "warning: Python $PYXY is not supported (manifest: 3.99)" err &&
	expect_eq 0 "$(archive_requests)"
'
test_expect_success 'an unknown preference is a usage error' '
	expect_exit 2 down --manifest m.txt --python-preference newest 2>err &&
	grep -q "unknown python preference" err
'
test_done
