#!/bin/sh
# bench_extract.sh CORPUS_DIR - extraction speed: `bsdtar -x` of every wheel
# in CORPUS_DIR, one after another, against mlsetup's install stage on the
# same wheels (extract into the unpacked cache, RECORD check of every file,
# link into the environment) with --jobs 1 and with the default (one job
# per core). mlsetup's fetch is taken from a local --find-links directory
# and reported separately (the report's stage times). With BASELINE=PATH
# (another mlsetup binary, e.g. one built from an older commit) that one is
# measured the same way, for a before/after table. Every mlsetup run also
# gives the whole process's CPU time and peak RSS (/usr/bin/time -v).
# RUNS=N (default 1) repeats every cell and prints medians. Not part of
# make check. Needs bsdtar (Debian: libarchive-tools), /usr/bin/time and
# /usr/bin/python3.11.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
M=${MLSETUP:-$top/build/mlsetup}
B=${BASELINE:-}
RUNS=${RUNS:-1}
C=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-bench-extract.XXXXXX")
trap 'rm -rf "$W"' EXIT
export PIP_CONFIG_FILE=/dev/null
: >"$W/res"
for run in $(seq "$RUNS"); do
	t0=$(date +%s.%N)
	for w in "$C"/*.whl; do
		mkdir -p "$W/bsdtar/$(basename "$w")"
		bsdtar -xf "$w" -C "$W/bsdtar/$(basename "$w")"
	done
	t1=$(date +%s.%N)
	echo "bsdtar 0 $(echo "$t1 - $t0" | bc) 0 0 0" >>"$W/res"
	rm -rf "$W/bsdtar"
	for bin in ${B:+baseline} mlsetup; do
		exe=$M
		[ "$bin" = baseline ] && exe=$B
		for jobs in 1 0; do
			rm -rf "$W/cache" "$W/env"
			set -- --jobs 1
			[ "$jobs" = 0 ] && set --
			/usr/bin/time -v -o "$W/time" "$exe" install --manifest \
				"$top/manifests/requirements.txt" --python /usr/bin/python3.11 \
				--target "$W/env" --cache-dir "$W/cache" --no-index --find-links "$C" \
				--no-progress --no-verify "$@" >/dev/null
			python3 - "$W/env/mlsetup-report.json" "$W/time" "$bin" "$jobs" >>"$W/res" <<-'PY'
			import json, re, sys
			d = json.load(open(sys.argv[1]))
			t = open(sys.argv[2]).read()
			num = lambda k: float(re.search(k + r": ([0-9.]+)", t).group(1))
			cpu = num("User time \(seconds\)") + num("System time \(seconds\)")
			rss = num("Maximum resident set size \(kbytes\)") / 1024
			print(sys.argv[3], sys.argv[4], d["stages"]["install_s"], cpu, rss,
			      d["counters"]["bytes_extracted"])
			PY
		done
	done
done
python3 - "$W/res" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    bin, jobs, s, cpu, rss, b = line.split()
    rows.setdefault((bin, jobs), []).append((float(s), float(cpu), float(rss), int(b)))
med = lambda v, i: statistics.median(x[i] for x in v)
bsd = med(rows[("bsdtar", "0")], 0)
print("| extractor | install stage wall s | process CPU s | peak RSS MiB | vs bsdtar |")
print("|---|---|---|---|---|")
print("| bsdtar -x, one wheel after another | %.2f | | | 1.00x |" % bsd)
for (bin, jobs), v in rows.items():
    if bin == "bsdtar":
        continue
    label = "%s install stage, %s (%.0f MiB extracted, RECORD-checked, linked)" % (
        "baseline" if bin == "baseline" else "mlsetup",
        "--jobs 1" if jobs == "1" else "default jobs", v[0][3] / 2**20)
    print("| %s | %.2f | %.2f | %.0f | %.2fx |" % (label, med(v, 0), med(v, 1), med(v, 2),
                                                  med(v, 0) / bsd))
PY
