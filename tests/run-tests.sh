#!/bin/sh
# run-tests.sh BUILD_DIR - runs every unit test binary (cmocka, TAP output)
# and every CLI test script, counts TAP "ok"/"not ok" lines, and ends with
# the line "N passed, N failed". Exits non-zero when anything failed.
#   TESTS="t0100 test_pci_ids" limits the run to matching names.
set -u
build=${1:-build/asan}
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/mlsetup-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

selected() {
	[ -z "${TESTS:-}" ] && return 0
	for p in $TESTS; do case "$1" in *"$p"*) return 0 ;; esac; done
	return 1
}

count() { # name, exit status; reads TAP from $log
	name=$1 status=$2
	ok=$(grep -c '^ok ' "$log")
	bad=$(grep -c '^not ok ' "$log")
	if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1 # crashed or exited non-zero without reporting a failing test
		echo "not ok - $name exited with status $status"
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$bad" -ne 0 ]; then
		echo "FAIL $name ($ok passed, $bad failed)"
		sed 's/^/    /' "$log"
	else
		echo "PASS $name ($ok)"
	fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for t in "$top/$build"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	selected "$name" || continue
	(cd "$top" && CMOCKA_MESSAGE_OUTPUT=TAP "$t") >"$log" 2>&1
	count "$name" $?
done

for t in "$top"/tests/cli/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	selected "$name" || continue
	(cd "$top" && MLSETUP_BUILD="$top/$build" sh "$t") >"$log" 2>&1
	count "$name" $?
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
