#!/bin/sh
# bench_download.sh - times the download of the same 50 wheel files from the
# loopback test index (tests/mirror/server.py) three ways:
#
#   mlsetup   mlsetup download -r m.txt -d DIR (fresh cache each run)
#   curl      curl, one file after another (the URLs given, no index lookups)
#   pip       pip download --no-deps --index-url ... -d DIR -r reqs.txt (no cache)
#
# in two settings: the loopback as fast as it goes, and every connection
# capped at RATE bytes/s by the mirror (like a CDN's per-connection limit).
# Prints a Markdown table of median wall-clock seconds and ratios.
#
#   sh tests/bench/bench_download.sh [RUNS]      (default 3 runs per cell)
#   MLSETUP=path/to/mlsetup RATE=10485760 sh tests/bench/bench_download.sh
#
# Not part of `make check`. Needs python3, curl and pip.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
MLSETUP=${MLSETUP:-$top/build/mlsetup}
RUNS=${1:-3}
RATE=${RATE:-20971520} # 20 MiB/s per connection in the capped setting
W=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-bench.XXXXXX")
SERVER_PID=
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
# hermetic: no pip or mlsetup settings from the caller
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX PIP_TRUSTED_HOST PIP_CERT \
	MLSETUP_INDEX_URL MLSETUP_CACHE_DIR
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1

[ -x "$MLSETUP" ] || {
	echo "no mlsetup binary at $MLSETUP (run make, or set MLSETUP)" >&2
	exit 1
}

# --- the files: 20 x 1 MiB, 25 x 100 KiB, 5 x 20 MiB, real-looking wheels ---
mkdir -p "$W/root/files"
python3 - "$W/root/files" <<'EOF'
import os, sys, zipfile
d = sys.argv[1]
sizes = [1 << 20] * 20 + [100 << 10] * 25 + [20 << 20] * 5
for i, size in enumerate(sizes):
    name = "benchpkg%02d" % i
    fn = os.path.join(d, "%s-1.0.%d-py3-none-any.whl" % (name, i))
    with zipfile.ZipFile(fn, "w", zipfile.ZIP_STORED) as z:
        z.writestr("%s/__init__.py" % name, "")
        z.writestr("%s/blob.bin" % name, os.urandom(size))
        z.writestr("%s-1.0.%d.dist-info/METADATA" % (name, i),
                   "Metadata-Version: 2.1\nName: %s\nVersion: 1.0.%d\n" % (name, i))
        z.writestr("%s-1.0.%d.dist-info/WHEEL" % (name, i),
                   "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("%s-1.0.%d.dist-info/RECORD" % (name, i), "")
EOF
python3 "$top/tests/mirror/server.py" --root "$W/root" --port-file "$W/port" &
SERVER_PID=$!
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
PORT=$(cat "$W/port")
INDEX="http://127.0.0.1:$PORT/simple/"

# manifest (mlsetup), requirements (pip), URL list (curl)
{
	echo "# mlsetup: python = 3.12"
	echo "# mlsetup: platforms = linux-x86_64"
	echo "--index-url $INDEX"
	for f in "$W"/root/files/*.whl; do
		b=$(basename "$f")
		n=${b%%-*}
		v=$(echo "$b" | cut -d- -f2)
		echo "$n==$v --hash=sha256:$(sha256sum "$f" | cut -d' ' -f1)"
	done
	for f in "$W"/root/files/*.whl; do
		echo "# mlsetup-file: $(sha256sum "$f" | cut -d' ' -f1) $(wc -c <"$f" | tr -d ' ') $(basename "$f")"
	done
} >"$W/m.txt"
grep -v '^#' "$W/m.txt" | grep -v '^--' | sed 's/ --hash.*//' >"$W/reqs.txt"
for f in "$W"/root/files/*.whl; do
	echo "http://127.0.0.1:$PORT/files/$(basename "$f")"
done >"$W/urls.txt"
TOTAL=$(cat "$W"/root/files/*.whl | wc -c)
# warm the server: it hashes each file once, on the first index page that
# lists it; no tool should pay for that
sed 's/==.*//' "$W/reqs.txt" | while read -r n; do
	curl -sf -o /dev/null "$INDEX$n/"
done

now() { python3 -c 'import time; print("%.3f" % time.monotonic())'; }

run_mlsetup() {
	rm -rf "$W/cache" "$W/out"
	"$MLSETUP" download -q --no-progress --cache-dir "$W/cache" --python 3.12 \
		--platform linux-x86_64 -r "$W/m.txt" -d "$W/out"
}
run_curl() {
	rm -rf "$W/out" && mkdir -p "$W/out"
	while read -r u; do
		curl -sf -o "$W/out/$(basename "$u")" "$u"
	done <"$W/urls.txt"
}
run_pip() {
	rm -rf "$W/out"
	python3 -m pip download -q --no-cache-dir --no-deps --index-url "$INDEX" -d "$W/out" \
		-r "$W/reqs.txt"
}
check_out() {
	for f in "$W"/root/files/*.whl; do
		cmp -s "$f" "$W/out/$(basename "$f")" || {
			echo "bench: $1 did not produce $(basename "$f")" >&2
			exit 1
		}
	done
}

# median of RUNS timings of one tool, in seconds
measure() {
	tool=$1
	ts=""
	r=0
	while [ $r -lt "$RUNS" ]; do
		t0=$(now)
		"run_$tool" >/dev/null 2>&1 || {
			echo "bench: $tool failed" >&2
			"run_$tool" >&2 || echo "bench: $tool exit $?" >&2
			exit 1
		}
		t1=$(now)
		check_out "$tool"
		ts="$ts $(python3 -c "print('%.3f' % ($t1 - $t0))")"
		r=$((r + 1))
	done
	python3 -c 'import statistics,sys; print("%.2f" % statistics.median(map(float, sys.argv[1:])))' $ts
}

set_faults() {
	printf '%s\n' "$1" >"$W/root/faults.json"
}

capped_faults() {
	python3 - "$W/root/files" "$RATE" <<'EOF'
import json, os, sys
print(json.dumps({f: "slow:%s" % sys.argv[2] for f in os.listdir(sys.argv[1]) if f.endswith(".whl")}))
EOF
}

echo "files: $(ls "$W"/root/files/*.whl | wc -l), $(python3 -c "print('%.1f' % ($TOTAL / 1048576))") MiB; runs per cell: $RUNS (median)"
echo
echo "| setting | mlsetup (s) | curl sequential (s) | pip download (s) | curl / mlsetup | pip / mlsetup |"
echo "|---------|-------------|---------------------|------------------|----------------|---------------|"
for setting in loopback capped; do
	if [ $setting = capped ]; then
		set_faults "$(capped_faults)"
		label="$((RATE / 1048576)) MiB/s per connection"
	else
		set_faults "{}"
		label="loopback, uncapped"
	fi
	m=$(measure mlsetup)
	c=$(measure curl)
	p=$(measure pip)
	python3 -c 'import sys
m, c, p = map(float, sys.argv[2:5])
print("| %s | %.2f | %.2f | %.2f | %.1fx | %.1fx |" % (sys.argv[1], m, c, p, c / m, p / m))' \
		"$label" "$m" "$c" "$p"
done
echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr)"
echo "versions: $("$MLSETUP" --version | head -1); $(curl --version | head -1 | cut -d' ' -f1-2); pip $(python3 -m pip --version | cut -d' ' -f2); $(python3 --version)"
