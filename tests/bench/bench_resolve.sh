#!/bin/sh
# bench_resolve.sh - how long `mlsetup plan` of a loose project takes on
# the real package index, against `uv pip compile` of the same input, both
# cold, side by side (issue: resolve like uv). Run by hand, needs the
# network:
#
#   make build/mlsetup && sh tests/bench/bench_resolve.sh [RUNS]
#
# The project is REQS (default "torch==2.15.0 numpy", one requirement per
# word) in $W/proj/requirements.txt. Each round, in alternating order:
#
#   uv pip compile     fresh --cache-dir, --python $PY, wheels only
#   mlsetup (uv)       plan --project, fresh --cache-dir, uv already had
#                      (MLSETUP_UV: the tool fetched once, as uv is
#                      installed once on the other side)
#   mlsetup (first)    the same with nothing had: the uv wheel is fetched
#                      into the fresh cache first
#   mlsetup (pip)      MLSETUP_RESOLVER=pip: the resolution before uv
#
# --torch-index-url none keeps PyTorch's own indexes (out of reach here)
# out of the timing. Prints a Markdown table of the medians and every
# run, then the machine's facts.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
W=${W:-/tmp/mlsetup-bench-resolve}
mkdir -p "$W"
. "$top/tests/bench/lib.sh"
RUNS=${1:-3}
REQS=${REQS:-torch==2.15.0 numpy}
bench_hermetic
# The machine's CA bundle for pip, as its own configuration gives it.
[ -n "${SSL_CERT_FILE:-}" ] && export PIP_CERT="$SSL_CERT_FILE"
bench_uv
mkdir -p "$W/proj"
printf '%s\n' $REQS >"$W/proj/requirements.txt"
TIMES=$W/times
: >"$TIMES"

# Seed: uv fetched once into a cache of its own.
rm -rf "$W/seed"
"$M" plan --project "$W/proj" --cache-dir "$W/seed" --python "$PY" --torch-index-url none \
	>/dev/null 2>&1
SEEDED_UV=$(ls -d "$W"/seed/unpacked/sha256/*/tree/uv-*.data/scripts/uv)

# timed NAME CMD...: one run of CMD, its wall seconds appended to $TIMES.
timed() {
	name=$1
	shift
	t0=$(date +%s.%N)
	"$@" >"$W/out" 2>&1 || {
		echo "$name failed:" >&2
		tail -5 "$W/out" >&2
		exit 1
	}
	echo "$name $(echo "$(date +%s.%N) - $t0" | bc)" >>"$TIMES"
}

run_uv() {
	rm -rf "$W/uvc"
	timed uv "$UV" pip compile --quiet --no-config --no-python-downloads --cache-dir "$W/uvc" \
		--python "$PY" --only-binary :all: "$W/proj/requirements.txt" -o "$W/uv.txt"
}
run_ml() {
	rm -rf "$W/mc"
	timed "mlsetup-$1" env ${2:+"$2"} "$M" plan --project "$W/proj" --cache-dir "$W/mc" \
		--python "$PY" --torch-index-url none
}
i=0
while [ $i -lt "$RUNS" ]; do
	for tool in $(bench_order $i uv ml-uv ml-first ml-pip); do
		case $tool in
		uv) run_uv ;;
		ml-uv) run_ml uv "MLSETUP_UV=$SEEDED_UV" ;;
		ml-first) run_ml first "" ;;
		ml-pip) run_ml pip MLSETUP_RESOLVER=pip ;;
		esac
	done
	i=$((i + 1))
done

echo "### plan of a loose project ($REQS) vs uv pip compile, cold, medians of $RUNS"
echo
python3 - "$TIMES" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
runs = {}
for name, t in rows:
    runs.setdefault(name, []).append(float(t))
uv = st.median(runs["uv"])
print("| tool | median (s) | / uv pip compile | runs (s) |")
print("|------|-----------:|-----------------:|----------|")
for name in ("uv", "mlsetup-uv", "mlsetup-first", "mlsetup-pip"):
    m = st.median(runs[name])
    label = {"uv": "uv pip compile", "mlsetup-uv": "mlsetup plan (uv had)",
             "mlsetup-first": "mlsetup plan (first run: fetches uv)",
             "mlsetup-pip": "mlsetup plan (pip, MLSETUP_RESOLVER=pip)"}[name]
    print("| %s | %.2f | %.2fx | %s |" % (label, m, m / uv, " ".join("%.2f" % t for t in runs[name])))
PY
echo
bench_facts
