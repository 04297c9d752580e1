#!/bin/sh
# bench_extract.sh CORPUS_DIR - extraction speed: `bsdtar -x` of every wheel
# in CORPUS_DIR, one after another, against mlsetup's install stage on the
# same wheels (extract into the unpacked cache, RECORD check of every file,
# link into the environment) with --jobs 1 and with the default (one job
# per core). mlsetup's fetch is taken from a local --find-links directory
# and reported separately (the report's stage times). Not part of make check.
# Needs bsdtar (Debian: libarchive-tools) and /usr/bin/python3.11.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
M=${MLSETUP:-$top/build/mlsetup}
C=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-bench-extract.XXXXXX")
trap 'rm -rf "$W"' EXIT
export PIP_CONFIG_FILE=/dev/null
t0=$(date +%s.%N)
for w in "$C"/*.whl; do
	mkdir -p "$W/bsdtar/$(basename "$w")"
	bsdtar -xf "$w" -C "$W/bsdtar/$(basename "$w")"
done
t1=$(date +%s.%N)
bsd=$(echo "$t1 - $t0" | bc)
rm -rf "$W/bsdtar"
for jobs in 1 0; do
	rm -rf "$W/cache" "$W/env"
	set -- --jobs 1
	[ "$jobs" = 0 ] && set --
	"$M" install --manifest "$top/manifests/requirements.txt" --python /usr/bin/python3.11 \
		--target "$W/env" --cache-dir "$W/cache" --no-index --find-links "$C" \
		--no-progress --no-verify "$@" >/dev/null
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d["stages"]["install_s"], d["counters"]["bytes_extracted"])' \
		"$W/env/mlsetup-report.json" "$jobs" >>"$W/res"
done
python3 - "$bsd" "$W/res" <<'PY'
import sys
bsd = float(sys.argv[1])
rows = [l.split() for l in open(sys.argv[2])]
print("| extractor | wall s | vs bsdtar |")
print("|---|---|---|")
print("| bsdtar -x, one wheel after another | %.2f | 1.00x |" % bsd)
for jobs, s, b in rows:
    label = "mlsetup install stage, --jobs 1" if jobs == "1" else "mlsetup install stage, default jobs"
    print("| %s (%.0f MiB extracted, RECORD-checked, linked) | %.2f | %.2fx |" % (label, int(b) / 2**20, float(s), float(s) / bsd))
PY
