# lib.sh - git-style shell test library for mlsetup's CLI tests.
#
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'description' '
#       cmd1 &&
#       cmd2
#   '
#   test_done
#
# Each block runs in a subshell inside a fresh scratch directory ($TRASH)
# and prints TAP ("ok N - ..." / "not ok N - ...", with the block's output
# as "#" comments on failure). Helpers: with_gpus, json, expect_exit,
# test_must_fail. Every block's commands must be joined with && (a chain
# lint checks it before the block runs, as git's test-lib does; set
# TEST_NO_CHAIN_LINT=1 to skip it while debugging).
#
# Inside a block, `test_when_finished 'cmd'` registers cleanup that runs
# when the block ends, passed or failed (git's semantics: in the block's
# shell, the last registered first; a failing cleanup fails the block), so
# a block that starts a server, makes a directory read-only or leaves an
# environment behind cannot trip the blocks after it.
#
# Skips are TAP too, and tests/run-tests.sh counts them as skipped, never as
# passed: `test_skip_all "reason"` (before any block) skips the whole file
# ("1..0 # SKIP reason"); `test_skip "reason"` skips the next block
# ("ok N # skip desc (reason)").
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
MLSETUP_BUILD=${MLSETUP_BUILD:-$top/build/asan}
MLSETUP="$MLSETUP_BUILD/mlsetup"
SHIMS="$top/build/shims"
FIXTURES="$top/tests/fixtures"
SYSROOTS="$FIXTURES/sysroot"
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-test.XXXXXX")
trap 'rm -rf "$TRASH"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan.supp}
# Hermetic by default: no fake GPUs unless a test asks, no colour.
unset MLSETUP_FAKE_NVIDIA
# Hermetic: a file that leaves torch open asks no index outside this
# machine for torch builds (PyTorch's own indexes are the default); a test
# of the choice names the loopback index with --torch-index-url.
export MLSETUP_TORCH_INDEX_URL=none
# Hermetic: files without hashes are resolved by pip, as a machine without
# uv resolves them; t0725 unsets it to test uv as the resolver (its wheel,
# fetched once into the cache from the run's index, there the loopback one).
export MLSETUP_RESOLVER=pip
unset MLSETUP_UV
export NO_COLOR=1
test_count=0
test_failed=0
test_skip_next=""
test_in_block=""

# test_expect_success DESC BODY: runs BODY in a subshell in $TRASH; passes
# when it returns 0 and every test_when_finished cleanup succeeds.
test_expect_success() {
	test_count=$((test_count + 1))
	if [ -n "$test_skip_next" ]; then
		echo "ok $test_count # skip $1 ($test_skip_next)"
		test_skip_next=""
		return 0
	fi
	out="$TRASH/.out.$test_count"
	# Chain lint (git's t/test-lib.sh): "(exit 117) && BODY" must end with
	# 117 without running anything; a command not joined to the chain with
	# && (a missing && at the end of a line) runs and changes the status,
	# so its failure could not have failed the block. Checked in a subshell
	# in a scratch directory (what such a command writes there is thrown
	# away); a broken chain fails the block without running it.
	if [ -z "${TEST_NO_CHAIN_LINT:-}" ]; then
		lint_dir="$TRASH/.chain-lint.$test_count"
		mkdir -p "$lint_dir"
		(cd "$lint_dir" && eval "(exit 117) && $2
(exit \$?)") >/dev/null 2>&1
		lint=$?
		rm -rf "$lint_dir"
		if [ "$lint" -ne 117 ]; then
			test_failed=$((test_failed + 1))
			echo "not ok $test_count - $1"
			echo "# broken &&-chain: a command of this block is not joined with && (lint status $lint, not 117)"
			return 0
		fi
	fi
	if (
		test_in_block=1
		test_cleanup=:
		# An EXIT trap, so cleanup also runs when the block calls exit.
		trap 'test_run_cleanup_ $?' EXIT
		cd "$TRASH" && eval "$2"
	) >"$out" 2>&1; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/# /' "$out"
	fi
}

# Runs the registered cleanup with the block's status in test_ret_ and
# exits with the block's status, or a failing cleanup's.
test_run_cleanup_() {
	test_ret_=$1
	trap - EXIT
	eval "$test_cleanup"
	exit "$test_ret_"
}

# test_when_finished CMD...: inside a block, runs CMD when the block ends.
test_when_finished() {
	if [ -z "$test_in_block" ]; then
		echo "error: test_when_finished outside test_expect_success" >&2
		return 1
	fi
	test_cleanup="{ $*
	} && (exit \"\$test_ret_\"); test_ret_=\$?; $test_cleanup"
}

# test_skip REASON: the next test_expect_success is not run and is
# reported as skipped with REASON.
test_skip() {
	test_skip_next=$1
}

# release_skip_all REASON: test_skip_all, except under `make
# release-check` (MLSETUP_RELEASE_CHECK set), where what is missing is the
# release tools' job (packaging/release-deps.sh, the Windows build): there
# it is one failure that says why.
release_skip_all() {
	if [ -n "${MLSETUP_RELEASE_CHECK:-}" ]; then
		echo "not ok 1 - release-check needs this test to run: $1"
		echo "1..1"
		exit 1
	fi
	test_skip_all "$1"
}

# release_skip REASON: test_skip for the next block, a failure of that
# block under `make release-check` (see release_skip_all).
release_skip() {
	if [ -n "${MLSETUP_RELEASE_CHECK:-}" ]; then
		test_expect_success "release-check needs this test to run: $1" "false"
		return
	fi
	test_skip "$1"
}

# test_skip_all REASON: before any block, skips the whole file: prints the
# TAP plan "1..0 # SKIP REASON" and exits 0.
test_skip_all() {
	if [ "$test_count" -ne 0 ]; then
		echo "error: test_skip_all after $test_count blocks" >&2
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# with_gpus FILE CMD...: runs CMD with the fake NVML/libcuda shims on the
# library path simulating the GPUs in tests/fixtures/gpus/FILE.
with_gpus() {
	f=$1
	shift
	LD_LIBRARY_PATH="$SHIMS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		MLSETUP_FAKE_NVIDIA="$FIXTURES/gpus/$f" "$@"
}

# json FILE EXPR: prints the Python expression EXPR evaluated with the
# parsed JSON document bound to d (e.g. json out.json 'd["gpus"][0]["sm"]').
json() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1" "$2"
}

# expect_exit CODE CMD...: runs CMD and fails unless it exits with CODE.
# test_must_fail CMD...: passes when CMD fails as a program should - an
# exit status from 1 to 125 - and fails when it succeeds, cannot be run
# (126, 127) or dies of a signal (> 128: a crash, an abort, a sanitizer's
# kill), as git's test_must_fail does. expect_exit names the exact code.
test_must_fail() {
	"$@"
	got=$?
	if [ "$got" -eq 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ "$got" -gt 125 ]; then
		echo "test_must_fail: command died or could not run (exit $got): $*" >&2
		return 1
	fi
	return 0
}

expect_exit() {
	want=$1
	shift
	"$@"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "expected exit $want, got $got: $*" >&2
		return 1
	fi
}

# expect_eq WANT GOT: fails with a message unless the strings are equal.
expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "expected '$1', got '$2'" >&2
		return 1
	fi
}

# have_system_nvml: true when the machine has a real NVML, which makes the
# "NVML missing" cases impossible to simulate.
have_system_nvml() {
	ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'
}
