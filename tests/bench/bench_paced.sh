#!/bin/sh
# bench_paced.sh [RUNS] - a cold install of large wheels over paced
# connections: mlsetup install vs uv pip install, side by side, alternating,
# RUNS rounds (default 3), medians. The corpus is synthetic (SIZES_MIB,
# default "800 600 400 200 100 50 20 10": one wheel of each size, random
# bytes stored, valid wheels that any installer takes), served by the
# loopback index with every connection paced at RATE bytes/s (default
# 25 MiB/s: a long path's share, or a CDN's per-connection limit). Both
# tools install with hashes and without dependencies, into fresh targets
# with fresh caches, on the same interpreter (PY). Needs no network: the
# device script runs it on a many-core machine too (there the CPU does not
# bound the loopback server). Not part of make check.
#
#   MLSETUP=PATH UV=PATH PY=PATH RATE=BYTES SIZES_MIB="..." W=DIR
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-3}
M=${MLSETUP:-$top/build/mlsetup}
UV=${UV:-uv}
PY=${PY:-python3}
RATE=${RATE:-26214400}
SIZES_MIB=${SIZES_MIB:-800 600 400 200 100 50 20 10}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-paced}
rm -rf "$W"
mkdir -p "$W/root/files"
SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
export PIP_CONFIG_FILE=/dev/null UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never
unset UV_CACHE_DIR UV_INDEX_URL UV_EXTRA_INDEX_URL MLSETUP_INDEX_URL

# The corpus: one wheel per size, and the manifests of both tools.
python3 - "$W/root/files" $SIZES_MIB <<'EOF'
import base64, hashlib, os, sys, zipfile
out = sys.argv[1]
def row(arc, h, n):
    return "%s,sha256=%s,%d" % (arc, base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode(), n)
for i, mib in enumerate(sys.argv[2:]):
    dist = "big%02d" % i
    fn = os.path.join(out, "%s-1.0-py3-none-any.whl" % dist)
    di = "%s-1.0.dist-info" % dist
    rows = []
    with zipfile.ZipFile(fn, "w", zipfile.ZIP_STORED) as z:
        def small(arc, data):
            z.writestr(zipfile.ZipInfo(arc, (2024, 1, 1, 0, 0, 0)), data)
            rows.append(row(arc, hashlib.sha256(data), len(data)))
        small(dist + "/__init__.py", b"")
        h, total = hashlib.sha256(), 0
        with z.open(zipfile.ZipInfo(dist + "/data.bin", (2024, 1, 1, 0, 0, 0)), "w") as f:
            left = int(float(mib) * 1048576)
            while left:
                chunk = os.urandom(min(left, 1 << 22))
                f.write(chunk)
                h.update(chunk)
                total += len(chunk)
                left -= len(chunk)
        rows.append(row(dist + "/data.bin", h, total))
        small(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % dist).encode())
        small(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        rows.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (2024, 1, 1, 0, 0, 0)), "\n".join(rows) + "\n")
EOF
python3 "$top/tests/mirror/server.py" --root "$W/root" --port-file "$W/port" 2>"$W/server.log" &
SRV=$!
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
URL="http://127.0.0.1:$(cat "$W/port")/simple/"
python3 - "$W/root/files" "$RATE" >"$W/root/faults.json" <<'EOF'
import json, os, sys
print(json.dumps({f: "slow:%s" % sys.argv[2] for f in os.listdir(sys.argv[1])}))
EOF
{
	echo "--index-url $URL"
	for f in "$W"/root/files/*.whl; do
		n=$(basename "$f" | cut -d- -f1)
		echo "$n==1.0 --hash=sha256:$(sha256sum "$f" | cut -d" " -f1)"
	done
} >"$W/req.txt"
PYV=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
TOTAL=$(du -cm "$W"/root/files/*.whl | tail -1 | cut -f1)

# timed TOOL CMD...: wall seconds of CMD appended to $W/times as "TOOL S".
timed() {
	tool=$1
	shift
	t0=$(date +%s.%N)
	"$@" >"$W/out" 2>&1 || {
		echo "$tool failed:" >&2
		cat "$W/out" >&2
		exit 1
	}
	echo "$tool $(python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 2))" "$t0")" >>"$W/times"
}
run_mlsetup() {
	rm -rf "$W/c" "$W/e"
	timed "mlsetup$1" env ${2:+"$2"} "$M" install --manifest "$W/req.txt" --target "$W/e" \
		--cache-dir "$W/c" --python "$PY" --no-verify --no-progress
}
run_uv() {
	rm -rf "$W/uvc" "$W/uve"
	"$UV" venv -q -p "$PY" "$W/uve"
	timed uv "$UV" pip install -q --no-deps --require-hashes --cache-dir "$W/uvc" \
		--python "$W/uve/bin/python" -r "$W/req.txt"
}
: >"$W/times"
r=0
while [ $r -lt "$RUNS" ]; do
	case $((r % 3)) in
	0) run_mlsetup "" "" && run_uv && run_mlsetup "-1conn" MLSETUP_SEGMENTS=1 ;;
	1) run_uv && run_mlsetup "-1conn" MLSETUP_SEGMENTS=1 && run_mlsetup "" "" ;;
	2) run_mlsetup "-1conn" MLSETUP_SEGMENTS=1 && run_mlsetup "" "" && run_uv ;;
	esac
	r=$((r + 1))
done
echo "### cold install of $TOTAL MiB of wheels ($SIZES_MIB MiB), every connection paced at $((RATE / 1048576)) MiB/s, medians of $RUNS"
echo
python3 - "$W/times" <<'EOF'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    t, s = line.split()
    runs.setdefault(t, []).append(float(s))
uv = st.median(runs["uv"])
names = {"mlsetup": "mlsetup install (4 ranges per file of 64 MiB or more)",
         "mlsetup-1conn": "mlsetup install, MLSETUP_SEGMENTS=1 (one connection per file)",
         "uv": "uv pip install"}
print("| tool | median s | vs uv | runs s |")
print("|---|---:|---:|---|")
for t in ("mlsetup", "mlsetup-1conn", "uv"):
    m = st.median(runs[t])
    print("| %s | %.2f | %.2fx | %s |" % (names[t], m, m / uv, " ".join("%.2f" % x for x in runs[t])))
EOF
echo
echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(uname -sr)"
echo "- mlsetup: $("$M" --version 2>&1 | head -1); uv: $("$UV" --version 2>&1); interpreter $PY ($PYV)"
