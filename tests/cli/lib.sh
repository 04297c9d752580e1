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
# as "#" comments on failure). Helpers: with_gpus, json, expect_exit.
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
# Hermetic by default: no fake GPUs unless a test asks, no colour.
unset MLSETUP_FAKE_NVIDIA
export NO_COLOR=1
test_count=0
test_failed=0

test_expect_success() {
	test_count=$((test_count + 1))
	out="$TRASH/.out.$test_count"
	if (cd "$TRASH" && eval "$2") >"$out" 2>&1; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/# /' "$out"
	fi
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
