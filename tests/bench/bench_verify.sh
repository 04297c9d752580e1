#!/bin/sh
# bench_verify.sh ENV [RUNS] - how long `mlsetup verify` of an environment
# takes against `import torch` alone with the environment's interpreter,
# alternating, RUNS rounds (default 5); prints the medians and their ratio.
# ENV: an environment with torch, e.g. made from the cache with
#   build/mlsetup install --manifest manifests/requirements.txt \
#       --python /usr/bin/python3.11 --target /tmp/v26
# On a machine without a GPU this is the CPU-only verify: the audit of the
# environment's CUDA libraries, the driver check (skipped) and the torch
# smoke test. Not part of make check; no timed assertion anywhere.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
M=${MLSETUP:-$top/build/mlsetup}
env=$1
runs=${2:-5}
[ -x "$env/bin/python" ] || { echo "no environment at $env" >&2; exit 2; }
t() { # prints the wall time of "$@" in seconds
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	echo "$(date +%s.%N) - $s" | bc
}
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
: >"${TMPDIR:-/tmp}/bv.imp"
: >"${TMPDIR:-/tmp}/bv.ver"
t "$env/bin/python" -c "import torch" >/dev/null # page cache warm for both
i=0
while [ $i -lt "$runs" ]; do
	t "$env/bin/python" -c "import torch" >>"${TMPDIR:-/tmp}/bv.imp"
	t "$M" verify --target "$env" --no-progress >>"${TMPDIR:-/tmp}/bv.ver"
	i=$((i + 1))
done
imp=$(med <"${TMPDIR:-/tmp}/bv.imp")
ver=$(med <"${TMPDIR:-/tmp}/bv.ver")
rm -f "${TMPDIR:-/tmp}/bv.imp" "${TMPDIR:-/tmp}/bv.ver"
printf 'import torch  %.2f s (median of %d)\nmlsetup verify %.2f s (median of %d)\nratio %.2f\n' \
	"$imp" "$runs" "$ver" "$runs" "$(echo "$ver / $imp" | bc -l)"
