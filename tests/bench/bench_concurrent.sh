#!/bin/sh
# bench_concurrent.sh [ROUNDS] - four cold `mlsetup install` runs at once on
# one cache, timed against one cold install: the real wheels of
# manifests/requirements.txt for CPython 3.11 (bench_install's corpus and
# commands), served by the loopback index. Each round (default 3) times
# both, the order alternating: "one" is a single install with an empty
# cache into a new target; "four" starts four installs of the same
# manifest at the same moment into four new targets, one empty cache
# between them, and ends when the last one does. Every run must succeed;
# the index's request counts show how often each file was sent (once per
# round is what sharing the cache means), and the four reports how many
# bytes each run downloaded and extracted. Not part of make check. Needs
# build/mlsetup, /usr/bin/time and the corpus (CORPUS=DIR of the wheels,
# else downloaded once through pip's configured index).
#
#   N=4            installs at once
#   SET=full|medium|small   the manifest (bench_manifests; default full)
#   OUT=FILE       where the tables go (default tests/bench/results-concurrent.md)
#   W=DIR CORPUS=DIR PY=PATH MLSETUP=PATH
#
# Disk: the corpus (3 GB for full), and at most one cache (3 GB of wheels,
# 5.5 GB unpacked) with its targets (hard links into it) at a time.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
ROUNDS=${1:-3}
N=${N:-4}
SET=${SET:-full}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-concurrent}
OUTMD=${OUT:-$top/tests/bench/results-concurrent.md}
case $SET in small | medium | full) ;; *)
	echo "SET must be small, medium or full" >&2
	exit 2
	;;
esac
mkdir -p "$W"

if [ -z "${CORPUS:-}" ]; then
	CORPUS="$W/corpus"
	[ -d "$CORPUS" ] || "$M" download -r requirements.txt -d "$CORPUS" --python 3.11 --no-progress
fi
bench_hermetic
bench_serve "$W/root" "$CORPUS"
bench_manifests "$W" "$CORPUS"
MAN="$W/$SET.txt"
PORT=$(cat "$W/root/port")
bench_on_exit() { rm -rf "$W/cache" "$W"/env-*; }

# stats: the index's counts of requests for files: "FILES REQUESTS MAX"
# (distinct files asked for, requests for them, the most for one file).
stats() {
	curl -s "http://127.0.0.1:$PORT/_stats" | python3 -c '
import json, sys
d = {k: v for k, v in json.load(sys.stdin).items() if k.startswith("/files/") and " " not in k}
print(len(d), sum(d.values()), max(d.values(), default=0))'
}

# one_run LABEL I: mlsetup install of $MAN into $W/env-LABEL-I with the
# cache $W/cache, timed into $W/t-LABEL-I.
one_run() {
	/usr/bin/time -f "%e %U %S %M" -o "$W/t-$1-$2" \
		"$M" install --manifest "$MAN" --python "$PY" --target "$W/env-$1-$2" \
		--cache-dir "$W/cache" --index-url "$IDX" --no-progress --no-verify \
		>"$W/log-$1-$2" 2>&1
}

# scenario LABEL COUNT ROUND: COUNT cold installs at once (one cache);
# appends "LABEL ROUND wall cpu_sum maxrss_kb files requests max_per_file
# downloaded_bytes extracted_bytes" to $ROWS.
scenario() {
	rm -rf "$W/cache" "$W"/env-* "$W"/t-* "$W"/log-*
	sync
	curl -s -X POST "http://127.0.0.1:$PORT/_reset" >/dev/null
	t0=$(date +%s.%N)
	i=1
	pids=""
	while [ $i -le "$2" ]; do
		one_run "$1" $i &
		pids="$pids $!"
		i=$((i + 1))
	done
	failed=0
	for p in $pids; do wait "$p" || failed=1; done
	t1=$(date +%s.%N)
	if [ $failed -ne 0 ]; then
		echo "$1, round $3: an install failed:" >&2
		tail -n 5 "$W"/log-* >&2
		exit 1
	fi
	python3 - "$W" "$1" "$2" "$3" "$t0" "$t1" "$(stats)" >>"$ROWS" <<-'PY'
	import json, sys
	w, label, n, rnd, t0, t1, st = sys.argv[1:8]
	cpu = rss = dl = ex = 0
	for i in range(1, int(n) + 1):
	    wall, user, sys_, maxrss = open("%s/t-%s-%d" % (w, label, i)).read().split()[-4:]
	    cpu += float(user) + float(sys_)
	    rss = max(rss, int(maxrss))
	    c = json.load(open("%s/env-%s-%d/mlsetup-report.json" % (w, label, i)))["counters"]
	    dl += c["downloaded_bytes"]
	    ex += c["bytes_extracted"]
	print(label, rnd, "%.2f" % (float(t1) - float(t0)), "%.2f" % cpu, rss, st, int(dl), int(ex))
	PY
	tail -n 1 "$ROWS" >&2
	rm -rf "$W/cache" "$W"/env-*
}

ROWS="$W/rows"
: >"$ROWS"
ROUND=1
while [ $ROUND -le "$ROUNDS" ]; do
	for what in $(bench_order $ROUND one many); do
		case $what in
		one) scenario one 1 $ROUND ;;
		many) scenario "$N" "$N" $ROUND ;;
		esac
	done
	ROUND=$((ROUND + 1))
done

{
	echo "## $N concurrent cold installs on one cache vs one ($SET corpus, $ROUNDS rounds)"
	echo
	python3 - "$ROWS" "$N" <<-'PY'
	import statistics as st, sys
	rows = [l.split() for l in open(sys.argv[1])]
	n = sys.argv[2]
	def col(label, i):
	    return [float(r[i]) for r in rows if r[0] == label]
	one, many = col("one", 2), col(n, 2)
	print("| runs | wall s (median) | wall s, each round | CPU s, all runs (median) | peak RSS MiB (largest run) | file requests to the index (files / requests / most for one file) | downloaded MiB, all runs | extracted MiB, all runs |")
	print("|---|---|---|---|---|---|---|---|")
	for label, name in (("one", "1 install"), (n, "%s at once, one cache" % n)):
	    r = [x for x in rows if x[0] == label]
	    if not r:
	        continue
	    req = sorted({"%s / %s / %s" % (x[5], x[6], x[7]) for x in r})
	    print("| %s | %.2f | %s | %.2f | %.0f | %s | %.0f | %.0f |" % (
	        name, st.median(col(label, 2)), ", ".join("%.2f" % v for v in col(label, 2)),
	        st.median(col(label, 3)), max(col(label, 4)) / 1024, "; ".join(req),
	        st.median(col(label, 8)) / 2**20, st.median(col(label, 9)) / 2**20))
	if one and many:
	    print()
	    print("%s at once took %.2fx the wall time of one (medians: %.2f s vs %.2f s)." % (
	        n, st.median(many) / st.median(one), st.median(many), st.median(one)))
	PY
	echo
	bench_facts
} >"$OUTMD"
cat "$OUTMD"
