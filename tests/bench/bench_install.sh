#!/bin/sh
# bench_install.sh [RUNS] - mlsetup install vs `python -m venv` + pip vs
# `uv venv` + `uv pip install`, all with --require-hashes --no-deps from the
# same loopback index serving the real wheels of manifests/requirements.txt
# for this platform, on the same interpreter. Cold (empty caches, new
# target), warm (caches populated, new target) and no-op (same target
# again), RUNS runs each (default 3), tools alternating; wall, CPU and peak
# memory from /usr/bin/time, reported as medians and ratios. Also mlsetup's
# time per stage and how it grows with the corpus (small, medium, full).
# Not part of make check. Needs: build/mlsetup, /usr/bin/time, the network
# once (to download the corpus through pip's configured index, or
# CORPUS=DIR of the wheels), and uv (UV=path, else installed from the
# package index into $W/uvtool). Writes tests/bench/results-install.md.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
M=${MLSETUP:-$top/build/mlsetup}
RUNS=${1:-3}
PY=${PY:-/usr/bin/python3.11}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-install}
OUTMD="$top/tests/bench/results-install.md"
mkdir -p "$W"
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# 1. The corpus: the manifest's wheels for CPython 3.11 on this platform.
if [ -z "${CORPUS:-}" ]; then
	CORPUS="$W/corpus"
	[ -d "$CORPUS" ] || "$M" download -r requirements.txt -d "$CORPUS" --python 3.11 --no-progress
fi
rm -rf "$W/root" && mkdir -p "$W/root/files"
for f in "$CORPUS"/*.whl; do ln "$f" "$W/root/files/" 2>/dev/null || cp "$f" "$W/root/files/"; done
rm -f "$W/port"
python3 "$top/tests/mirror/server.py" --root "$W/root" --port-file "$W/port" 2>/dev/null &
SRV=$!
while [ ! -s "$W/port" ]; do sleep 0.1; done
IDX="http://127.0.0.1:$(cat "$W/port")/simple/"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX MLSETUP_INDEX_URL MLSETUP_CACHE_DIR
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1

# Manifests: the full one, and subsets (small: the 10 smallest wheels;
# medium: everything but torch and the nvidia-* CUDA libraries).
python3 - "$top/manifests/requirements.txt" "$W" "$CORPUS" <<'PY'
import os, re, sys
src, w, corpus = sys.argv[1:4]
text = open(src).read()
blocks = re.findall(r"^([a-z0-9][^\n]*?==[^\n]*(?:\n    --hash[^\n]*)*)", text, re.M)
head = [l for l in text.splitlines() if l.startswith("# mlsetup:")]
files = [l for l in text.splitlines() if l.startswith("# mlsetup-file:")]
sizes = {f: os.path.getsize(os.path.join(corpus, f)) for f in os.listdir(corpus) if f.endswith(".whl")}
def name(b): return b.split("==")[0]
def size(b):
    n = name(b).replace("-", "_")
    return sum(s for f, s in sizes.items() if f.lower().startswith(n + "-"))
def write(path, bs):
    open(path, "w").write("\n".join(head + [b.rstrip(" \\") for b in bs] + files) + "\n")
write(os.path.join(w, "full.txt"), blocks)
write(os.path.join(w, "small.txt"), sorted(blocks, key=size)[:10])
write(os.path.join(w, "medium.txt"), [b for b in blocks if not name(b).startswith(("nvidia-", "torch", "triton"))])
PY

# uv from the package index, into its own tool environment.
if [ -z "${UV:-}" ]; then
	[ -x "$W/uvtool/bin/uv" ] || { "$PY" -m venv "$W/uvtool" && "$W/uvtool/bin/pip" install -q uv; }
	UV="$W/uvtool/bin/uv"
fi

# run TOOL SCENARIO MANIFEST TARGET: one timed install; appends
# "tool scenario manifest wall user sys maxrss_kb" to $W/times.
run() {
	tool=$1 sc=$2 man=$3 tgt=$4
	case $tool in
	mlsetup) set -- "$M" install --manifest "$man" --python "$PY" --target "$tgt" \
			--cache-dir "$W/cache-mlsetup" --index-url "$IDX" --no-progress --no-verify ;;
	pip) set -- sh -c "[ -x '$tgt/bin/python' ] || '$PY' -m venv '$tgt'; PIP_CACHE_DIR='$W/cache-pip' '$tgt/bin/python' -m pip install -q --require-hashes --no-deps -r '$man' --index-url '$IDX'" ;;
	uv) set -- sh -c "[ -x '$tgt/bin/python' ] || '$UV' -q venv '$tgt' --python '$PY'; UV_CACHE_DIR='$W/cache-uv' '$UV' -q pip install --require-hashes --no-deps -r '$man' --index-url '$IDX' --python '$tgt/bin/python'" ;;
	esac
	/usr/bin/time -f "%e %U %S %M" -o "$W/t" "$@" >"$W/last.log" 2>&1 || {
		echo "$tool $sc failed:" >&2
		tail -5 "$W/last.log" >&2
		exit 1
	}
	echo "$tool $sc $(basename "$man" .txt) $(cat "$W/t")" >>"$W/times"
	if [ "$tool" = mlsetup ] && [ -f "$tgt/mlsetup-report.json" ]; then
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["stages"]; c=d["counters"]; print(sys.argv[2], sys.argv[3], s["fetch_s"], s["install_s"], s["total_s"], c["bytes_extracted"], c["downloaded_bytes"])' \
			"$tgt/mlsetup-report.json" "$sc" "$(basename "$man" .txt)" >>"$W/stages"
	fi
}

: >"$W/times"
: >"$W/stages"
for i in $(seq "$RUNS"); do
	for tool in mlsetup uv pip; do
		rm -rf "$W/cache-$tool" "$W/env-$tool"
		run $tool cold "$W/full.txt" "$W/env-$tool"
		rm -rf "$W/env-$tool-2"
		run $tool warm "$W/full.txt" "$W/env-$tool-2"
		run $tool noop "$W/full.txt" "$W/env-$tool-2"
		rm -rf "$W/env-$tool" "$W/env-$tool-2"
	done
done
for size in small medium; do
	for i in $(seq "$RUNS"); do
		rm -rf "$W/cache-mlsetup" "$W/env-s"
		run mlsetup cold "$W/$size.txt" "$W/env-s"
	done
done
rm -rf "$W/env-s" "$W/cache-mlsetup"

python3 - "$W/times" "$W/stages" "$OUTMD" "$RUNS" <<'PY'
import statistics as st, sys, os, platform, subprocess
times, stages, out, runs = sys.argv[1:5]
rows = [l.split() for l in open(times)]
def med(tool, sc, man, col):
    v = [float(r[col]) for r in rows if r[0] == tool and r[1] == sc and r[2] == man]
    return st.median(v) if v else float("nan")
L = []
L.append("## install: mlsetup vs pip vs uv (medians of %s runs, one session)\n" % runs)
L.append("| scenario | tool | wall s | CPU s (user+sys) | peak RSS MiB | wall vs mlsetup |")
L.append("|---|---|---|---|---|---|")
for sc in ("cold", "warm", "noop"):
    base = med("mlsetup", sc, "full", 3)
    for tool in ("mlsetup", "uv", "pip"):
        w = med(tool, sc, "full", 3); cpu = med(tool, sc, "full", 4) + med(tool, sc, "full", 5)
        L.append("| %s | %s | %.2f | %.2f | %.0f | %.2fx |" % (sc, tool, w, cpu, med(tool, sc, "full", 6) / 1024, w / base))
srows = [l.split() for l in open(stages)]
L.append("\n## mlsetup by stage and corpus (cold, medians)\n")
L.append("| corpus | fetch s | install (extract+link) s | total s | downloaded MiB | extracted MiB |")
L.append("|---|---|---|---|---|---|")
for man in ("small", "medium", "full"):
    r = [x for x in srows if x[0] == "cold" and x[1] == man]
    if not r: continue
    m = lambda i: st.median(float(x[i]) for x in r)
    L.append("| %s | %.2f | %.2f | %.2f | %.0f | %.0f |" % (man, m(2), m(3), m(4), m(6) / 2**20, m(5) / 2**20))
L.append("\nMachine: %s, %d cores, %s; Python %s." % (platform.platform(), os.cpu_count(), subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip(), platform.python_version()))
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
