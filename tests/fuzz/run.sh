#!/bin/sh
# run.sh smoke|long [TARGET...] - runs the libFuzzer targets `make fuzz`
# built into build/fuzz/ (clang, ASan + UBSan), one after the other, each
# as one process on one CPU, and prints per target the seconds it ran,
# libFuzzer's executions (its final stat::number_of_executed_units, from
# -print_final_stats=1) and its finding, then a summary line. Exits 1 when
# any target found something (a crash, a sanitizer report, a leak, a
# timeout of one input, an out-of-memory), or did not run.
#
#   smoke  FUZZ_SECONDS (default 3) per target on its committed corpus:
#          the check .ci/run runs after `make check` (make fuzz-smoke).
#   long   FUZZ_SECONDS per target, by default 3600 / the number of
#          targets rounded up: at least one CPU-hour in all (make
#          fuzz-long). New inputs accumulate in build/fuzz/corpus/<target>/
#          from one run to the next; the committed corpora are only read.
#
# Seeds: tests/fuzz/corpus/<target>/, and for fuzz_unzip and fuzz_wheel
# also the hostile wheels tests/fixtures/make_hostile_wheels.py writes
# (when python3 is there; fuzz_wheel's inputs are "file name\nwheel").
# Findings: each target stops at its first one, written to
# build/fuzz/findings/<target>/ (crash-*, leak-*, timeout-*, oom-*); the
# log of every run is build/fuzz/logs/<target>.log, the summary
# build/fuzz/<mode>.txt. Reproduce a finding with
# `build/fuzz/<target> build/fuzz/findings/<target>/crash-...`; once fixed,
# add the input to the target's corpus and a unit test (tests/fuzz/README.md).
set -u
mode=${1:-}
case "$mode" in
smoke | long) shift ;;
*)
	echo "usage: run.sh smoke|long [TARGET...]" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
out=build/fuzz

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)
fi
n=0
for t in $targets; do
	n=$((n + 1))
	if [ ! -x "$out/$t" ]; then
		echo "run.sh: $out/$t is not built; run make fuzz (clang with libFuzzer: packaging/deps.sh)" >&2
		exit 1
	fi
done

if [ -n "${FUZZ_SECONDS:-}" ]; then
	secs=$FUZZ_SECONDS
elif [ "$mode" = smoke ]; then
	secs=3
else
	secs=$(((3600 + n - 1) / n))
fi
case "$secs" in
'' | *[!0-9]*)
	echo "run.sh: FUZZ_SECONDS must be a number of seconds" >&2
	exit 2
	;;
esac

mkdir -p "$out/logs" "$out/findings"
hostile=""
if command -v python3 >/dev/null 2>&1; then
	hostile=$out/hostile
	rm -rf "$hostile" "$out/hostile-wheel"
	if python3 tests/fixtures/make_hostile_wheels.py "$hostile" >/dev/null 2>&1; then
		mkdir -p "$out/hostile-wheel"
		for w in "$hostile"/*.whl; do
			b=$(basename "$w")
			{ printf '%s\n' "$b" && cat "$w"; } >"$out/hostile-wheel/$b"
		done
	else
		echo "run.sh: make_hostile_wheels.py failed; fuzz_unzip and fuzz_wheel run on their corpora only" >&2
		hostile=""
	fi
else
	echo "run.sh: no python3: fuzz_unzip and fuzz_wheel run without the hostile wheels" >&2
fi

summary=$out/$mode.txt
: >"$summary"
say() {
	echo "$*"
	echo "$*" >>"$summary"
}
say "fuzz $mode: $n targets, $secs s each ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -m), $(clang --version | head -n 1))"
say "$(printf '%-20s %8s %14s  %s' target seconds executions finding)"
findings=0
total_execs=0
total_secs=0
for t in $targets; do
	if [ "$mode" = long ]; then
		work=$out/corpus/$t
	else
		work=$out/smoke/$t
		rm -rf "$work"
	fi
	mkdir -p "$work" "$out/findings/$t"
	extra=""
	if [ -n "$hostile" ]; then
		[ "$t" = fuzz_unzip ] && extra=$hostile
		[ "$t" = fuzz_wheel ] && extra=$out/hostile-wheel
	fi
	log=$out/logs/$t.log
	start=$(date +%s)
	# One process, one thread of fuzzing: -jobs/-workers are not used.
	# An input that runs for more than 60 s is a finding (timeout-*).
	# shellcheck disable=SC2086
	"$out/$t" -max_total_time="$secs" -print_final_stats=1 -timeout=60 \
		-artifact_prefix="$out/findings/$t/" "$work" "tests/fuzz/corpus/$t" $extra \
		>"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		result=none
	else
		findings=$((findings + 1))
		result=${found:-"exit $rc, see $log"}
		grep -m 1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error:)' "$log" | sed 's/^/    /' >&2
	fi
	total_execs=$((total_execs + ${execs:-0}))
	total_secs=$((total_secs + took))
	say "$(printf '%-20s %8s %14s  %s' "$t" "$took" "${execs:-?}" "$result")"
done
say "fuzz $mode: $n targets, $total_secs s, $total_execs executions, $findings with findings"
[ "$findings" -eq 0 ]
