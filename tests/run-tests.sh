#!/bin/sh
# run-tests.sh BUILD_DIR - runs every unit test binary (cmocka, TAP output)
# and every CLI test script, reads each one's TAP, and ends with the line
# "N passed, N failed, N skipped". Exits non-zero when anything failed.
#   TESTS="t0100 test_pci_ids" limits the run to matching names.
#   MLSETUP_TEST_RUNNER="wine" runs each unit test binary through that
#   command, and only the unit tests (BUILD_DIR/tests/test_*, .exe files
#   too): tests/windows/run.sh runs the Windows build's this way. Output
#   lines may end in CRLF there; the CR is ignored.
#   MLSETUP_TEST_TIMEOUT=SECONDS (default 900) ends a test program that runs
#   longer, and its whole process group, as one failure that says so: a
#   hung test costs minutes, never the whole CI run. Each result line ends
#   with the program's wall time, so a slow one is seen in any log.
#
# What counts as what (TAP 13):
#   ok N - desc                       passed
#   ok N # skip desc (reason)         skipped (lib.sh's test_skip; any
#   ok N - desc # SKIP reason         "# skip" directive, any case)
#   not ok N # SKIP name              skipped: cmocka's skip(); the reason
#                                     is the last "# ..." line the test
#                                     printed before it
#   not ok N - desc                   failed
#   1..0 # SKIP reason                the whole program skipped: counts as
#                                     ONE skip (lib.sh's test_skip_all)
# A program that exits non-zero without a "not ok" line, or that reports
# no result at all (neither a test nor a skip plan), is one failure. A skip
# is never counted as a pass or a failure, and its reason is always shown.
set -u
build=${1:-build/asan}
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
skipped=0
log=$(mktemp "${TMPDIR:-/tmp}/mlsetup-tests.XXXXXX")
sum=$(mktemp "${TMPDIR:-/tmp}/mlsetup-tests-sum.XXXXXX")
trap 'rm -f "$log" "$sum"' EXIT

selected() {
	[ -z "${TESTS:-}" ] && return 0
	for p in $TESTS; do case "$1" in *"$p"*) return 0 ;; esac; done
	return 1
}

# tap_summary: reads TAP on stdin; prints "OK BAD SKIP SKIPALL" on the
# first line, then one line per skip (its description and reason), or the
# skip-all reason.
tap_summary() {
	awk '
	function skip_reason(s,   r) {
		# The text after a "# skip" directive (TAP 13: case-insensitive,
		# "skipped" too); "" when the line has none.
		if (!match(s, /#[ \t]*[Ss][Kk][Ii][Pp][A-Za-z]*([ \t]|$)/))
			return ""
		r = substr(s, RSTART + RLENGTH)
		sub(/^[ \t]+/, "", r)
		return r == "" ? "(no reason given)" : r
	}
	/^ok [0-9]/ {
		r = skip_reason($0)
		if (r != "") { skips[++nskip] = r } else ok++
		comment = ""
		next
	}
	/^not ok [0-9]/ {
		r = skip_reason($0)
		if (r != "") {
			# cmocka: "not ok 2 # SKIP test_name"; the test says why on a
			# "# ..." line before it.
			skips[++nskip] = r ": " (comment != "" ? comment : "(no reason given)")
		} else bad++
		comment = ""
		next
	}
	/^1\.\.0([ \t]|$)/ {
		r = skip_reason($0)
		if (r != "") { skipall = 1; allreason = r }
		next
	}
	/^#/ { comment = $0; sub(/^#[ \t]*/, "", comment); next }
	END {
		printf "%d %d %d %d\n", ok, bad, nskip, skipall
		if (skipall) print allreason
		for (i = 1; i <= nskip; i++) print skips[i]
	}'
}

limit=${MLSETUP_TEST_TIMEOUT:-900}

# run NAME DIR CMD...: runs CMD in DIR under the time limit, its output in
# $log, then counts it.
run() {
	name=$1 dir=$2
	shift 2
	t0=$(date +%s)
	(cd "$dir" && exec timeout -k 10 "$limit" "$@") >"$log" 2>&1
	status=$?
	secs=$(($(date +%s) - t0))
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		echo "not ok - $name timed out after $limit s (MLSETUP_TEST_TIMEOUT) and was killed" >>"$log"
	fi
	count "$name" "$status"
}

count() { # name, exit status; reads TAP from $log
	name=$1 status=$2
	tr -d '\r' <"$log" | tap_summary >"$sum"
	read -r ok bad skip skipall <"$sum"
	if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1 # crashed or exited non-zero without reporting a failing test
		echo "not ok - $name exited with status $status" >>"$log"
	fi
	if [ "$bad" -eq 0 ] && [ "$ok" -eq 0 ] && [ "$skip" -eq 0 ] && [ "$skipall" -eq 0 ]; then
		bad=1 # "PASS (0)" would hide a test that never ran
		echo "not ok - $name reported no test results" >>"$log"
	fi
	if [ "$bad" -ne 0 ]; then
		failed=$((failed + bad))
		passed=$((passed + ok))
		skipped=$((skipped + skip))
		echo "FAIL $name ($ok passed, $bad failed, $skip skipped) ${secs}s"
		sed 's/^/    /' "$log"
	elif [ "$skipall" -ne 0 ] && [ "$ok" -eq 0 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name (all: $(sed -n 2p "$sum")) ${secs}s"
	else
		passed=$((passed + ok))
		skipped=$((skipped + skip))
		word=PASS
		[ "$ok" -eq 0 ] && word=SKIP
		if [ "$skip" -eq 0 ]; then
			echo "$word $name ($ok) ${secs}s"
		elif [ "$skip" -eq 1 ]; then
			echo "$word $name ($ok, 1 skipped: $(sed -n 2p "$sum")) ${secs}s"
		else
			echo "$word $name ($ok, $skip skipped) ${secs}s"
			sed -n '2,$s/^/    skipped: /p' "$sum"
		fi
	fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp}

runner=${MLSETUP_TEST_RUNNER:-}
for t in "$top/$build"/tests/test_*; do
	[ -x "$t" ] || continue
	case $t in *.pdb) continue ;; esac
	name=$(basename "$t" .exe)
	selected "$name" || continue
	run "$name" "$top" env CMOCKA_MESSAGE_OUTPUT=TAP $runner "$t"
done

if [ -z "$runner" ]; then
	for t in "$top"/tests/cli/t[0-9]*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		selected "$name" || continue
		run "$name" "$top" env MLSETUP_BUILD="$top/$build" sh "$t"
	done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
