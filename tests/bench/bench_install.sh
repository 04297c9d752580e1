#!/bin/sh
# bench_install.sh [RUNS] - mlsetup install vs `python -m venv` + pip vs
# `uv venv` + `uv pip install`, all with --require-hashes --no-deps from the
# same loopback index serving the real wheels of manifests/requirements.txt
# for this platform, on the same interpreter. Cold (empty caches, new
# target), warm (caches populated, new target) and no-op (same target
# again), RUNS runs each (default 3), the tools' order rotating every run;
# wall, CPU and peak memory from /usr/bin/time, reported as medians and
# ratios. Also mlsetup's time per stage and how it grows with the corpus
# (small, medium, full). Not part of make check. Needs: build/mlsetup,
# /usr/bin/time, the network once (to download the corpus through pip's
# configured index, or CORPUS=DIR of the wheels), and uv (UV=path, else
# installed from the package index into $W/uvtool).
#
#   SET=small|medium|full  the manifest the three tools install (default
#                          full; small: the 10 smallest wheels, for a
#                          quick check that the bench works)
#   OUT=FILE               where the tables go (default
#                          tests/bench/results-install.md)
#   W=DIR CORPUS=DIR UV=PATH PY=PATH MLSETUP=PATH
#   TOOLS="mlsetup uv"     the tools to run (default: mlsetup uv pip)
#   RATE=BYTES             every connection paced at RATE bytes/s by the
#                          mirror (slow:RATE on every file), as a long path
#                          or a CDN's per-connection limit would
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
RUNS=${1:-3}
SET=${SET:-full}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-install}
OUTMD=${OUT:-$top/tests/bench/results-install.md}
case $SET in small | medium | full) ;; *)
	echo "SET must be small, medium or full" >&2
	exit 2
	;;
esac
mkdir -p "$W"

# 1. The corpus: the manifest's wheels for CPython 3.11 on this platform
# (downloaded before the settings are cleared: pip's configured index).
if [ -z "${CORPUS:-}" ]; then
	CORPUS="$W/corpus"
	[ -d "$CORPUS" ] || "$M" download -r requirements.txt -d "$CORPUS" --python 3.11 --no-progress
fi
bench_hermetic
bench_serve "$W/root" "$CORPUS"

# Manifests: the full one, and subsets (small, medium): bench_manifests.
bench_manifests "$W" "$CORPUS"
TOOLS=${TOOLS:-mlsetup uv pip}
if [ -n "${RATE:-}" ]; then
	python3 - "$W/root/files" "$RATE" >"$W/root/faults.json" <<'PY'
import json, os, sys
print(json.dumps({f: "slow:%s" % sys.argv[2] for f in os.listdir(sys.argv[1])}))
PY
fi

bench_uv
bench_on_exit() { rm -rf "$W/cache-mlsetup" "$W/cache-uv" "$W/cache-pip" "$W"/env-*; }

TIMES="$W/times" STAGES="$W/stages"
: >"$TIMES"
: >"$STAGES"
ROUND=1
while [ $ROUND -le "$RUNS" ]; do
	# shellcheck disable=SC2086 # TOOLS is a word list
	for tool in $(bench_order $ROUND $TOOLS); do
		rm -rf "$W/cache-$tool" "$W/env-$tool"
		bench_run "$tool" cold "$W/$SET.txt" "$W/env-$tool"
		rm -rf "$W/env-$tool-2"
		bench_run "$tool" warm "$W/$SET.txt" "$W/env-$tool-2"
		bench_run "$tool" noop "$W/$SET.txt" "$W/env-$tool-2"
		rm -rf "$W/cache-$tool" "$W/env-$tool" "$W/env-$tool-2"
	done
	ROUND=$((ROUND + 1))
done
# mlsetup alone on the smaller corpora, for its per-stage growth.
for size in small medium; do
	[ $size = "$SET" ] && break
	i=1
	while [ $i -le "$RUNS" ]; do
		rm -rf "$W/cache-mlsetup" "$W/env-s"
		bench_run mlsetup cold "$W/$size.txt" "$W/env-s"
		i=$((i + 1))
	done
done
rm -rf "$W/env-s" "$W/cache-mlsetup"

{
	echo "## install: $TOOLS ($SET corpus, medians of $RUNS runs, one session${RATE:+, every connection paced at $((RATE / 1048576)) MiB/s})"
	echo
	bench_report "$TIMES" "$SET" "$STAGES" "## mlsetup by stage and corpus (cold, medians)"
} >"$OUTMD"
cat "$OUTMD"
