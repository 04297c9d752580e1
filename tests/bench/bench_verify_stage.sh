#!/bin/sh
# bench_verify_stage.sh BASE NEW [RUNS] [MANIFEST] - a fresh `mlsetup
# install` with its verify by two builds, side by side, and (UV=path) uv
# doing the same job: each run installs MANIFEST (default
# manifests/requirements.txt, the README's main job) from a warm cache into
# a new target, BASE, NEW (and uv) alternating, RUNS rounds (default 3).
# mlsetup's stage seconds come from each run's mlsetup-report.json; uv's
# job is `uv venv` + `uv pip install --compile-bytecode -r MANIFEST` +
# importing every top-level module the mlsetup run checked, in one
# interpreter. Prints every run, the medians and their ratios.
# The caches (CACHE, default /tmp/bench-verify-cache; UV_BENCH_CACHE,
# default CACHE-uv) are filled by a first run when empty; PYTHON (default
# python3.11 on PATH) is the interpreter. Not part of make check; no timed
# assertion anywhere.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
base=$1
new=$2
runs=${3:-3}
manifest=${4:-$top/manifests/requirements.txt}
cache=${CACHE:-/tmp/bench-verify-cache}
uvcache=${UV_BENCH_CACHE:-$cache-uv}
py=${PYTHON:-$(command -v python3.11)}
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-verify.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
now() { date +%s.%N; }
one() { # one BIN LABEL: one fresh install; appends "LABEL verify install wall" to $W/times
	rm -rf "$W/env"
	s=$(now)
	"$1" install -q --manifest "$manifest" --cache-dir "$cache" --target "$W/env" \
		--python "$py" --no-progress >"$W/log" 2>&1 || { cat "$W/log" >&2; exit 1; }
	wall=$(echo "$(now) - $s" | bc)
	"$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))
s = r["stages"]
print(sys.argv[2], "%.2f" % s["verify_s"], "%.2f" % s["install_s"], sys.argv[3])
with open(sys.argv[4], "w") as f:
    f.write(" ".join(sorted({m["module"] for m in r["verification"]["imports"]})))' \
		"$W/env/mlsetup-report.json" "$2" "$wall" "$W/modules" >>"$W/times"
}
uv_one() { # uv_one: uv's job; appends "uv import install wall"
	rm -rf "$W/uvenv"
	s=$(now)
	"$UV" venv -q -p "$py" "$W/uvenv" >"$W/log" 2>&1 || { cat "$W/log" >&2; exit 1; }
	"$UV" pip install -q --cache-dir "$uvcache" --compile-bytecode --python "$W/uvenv/bin/python" \
		-r "$manifest" >>"$W/log" 2>&1 || { cat "$W/log" >&2; exit 1; }
	m=$(now)
	"$W/uvenv/bin/python" -c 'import importlib, sys
for n in sys.argv[1:]:
    try:
        importlib.import_module(n)
    except Exception as e:
        print(n, e, file=sys.stderr)' $(cat "$W/modules") >>"$W/log" 2>&1
	e=$(now)
	echo "uv $(echo "$e - $m" | bc) $(echo "$m - $s" | bc) $(echo "$e - $s" | bc)" >>"$W/times"
}
[ -d "$cache" ] || one "$base" warmup
: >"$W/times"
one "$new" warmup # the module list for uv
[ -z "${UV:-}" ] || [ -d "$uvcache" ] || uv_one
: >"$W/times"
i=0
while [ "$i" -lt "$runs" ]; do
	one "$base" base
	one "$new" new
	[ -z "${UV:-}" ] || uv_one
	i=$((i + 1))
done
"$py" - "$W/times" "$base" "$new" "${UV:-}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
names = {"base": sys.argv[2], "new": sys.argv[3], "uv": sys.argv[4]}
for label in ("base", "new", "uv"):
    got = [r for r in rows if r[0] == label]
    if not got:
        continue
    col = lambda k: [float(r[k]) for r in got]
    med[label] = [statistics.median(col(k)) for k in (1, 2, 3)]
    what = "import check" if label == "uv" else "verify stage"
    print("%-4s %s" % (label, names[label]))
    for k, title in ((1, what), (2, "install (uv: venv + install)"), (3, "whole run (wall)")):
        print("     %-30s %s  median %.2f" % (title + " s:", " ".join("%.2f" % x for x in col(k)), med[label][k - 1]))
print("verify stage, new / base: %.2fx" % (med["new"][0] / med["base"][0]))
print("whole run, new / base: %.2fx" % (med["new"][2] / med["base"][2]))
if "uv" in med:
    print("whole run, new / uv: %.2fx" % (med["new"][2] / med["uv"][2]))
PY
