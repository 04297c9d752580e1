#!/bin/sh
# bench_ab.sh BASE_MLSETUP [RUNS] - one mlsetup build against another on the
# cold install of bench_install.sh's corpus (the real wheels of
# manifests/requirements.txt, served from the loopback test index): empty
# cache, new target, --no-verify, the two binaries alternating (which goes
# first too), RUNS runs each (default 3). Prints both medians and their ratio (this build / BASE).
# For a refactoring that must not cost speed (issue 10: within 5 %).
# Needs the corpus bench_install.sh downloads (CORPUS=DIR or its default
# place) and /usr/bin/python3.11. Not part of make check.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
A=${1:?usage: bench_ab.sh BASE_MLSETUP [RUNS]}
B=$M
[ -x "$A" ] || { echo "no mlsetup binary at $A" >&2; exit 2; }
RUNS=${2:-3}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-install}
CORPUS=${CORPUS:-$W/corpus}
MANIFEST=${MANIFEST:-$top/manifests/requirements.txt}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS: run bench_install.sh once" >&2; exit 2; }
W="$W/ab"
mkdir -p "$W"
bench_on_exit() { rm -rf "$W/cache-mlsetup" "$W/env"; }
bench_hermetic
bench_serve "$W/root" "$CORPUS"

TIMES="$W/times"
: >"$TIMES"
ROUND=1
while [ $ROUND -le "$RUNS" ]; do
	for LABEL in $(bench_order $ROUND base this); do
		[ "$LABEL" = base ] && M=$A || M=$B
		rm -rf "$W/cache-mlsetup" "$W/env"
		bench_run mlsetup cold "$MANIFEST" "$W/env"
	done
	ROUND=$((ROUND + 1))
done
runs() { awk -v l="$1" '$1 == l { print $4 }' "$TIMES"; }
a=$(runs base | bench_median)
b=$(runs this | bench_median)
printf 'base   %s: %.2f s (median of %d; runs %s)\nthis   %s: %.2f s (median of %d; runs %s)\nratio this/base %.3f\n' \
	"$A" "$a" "$RUNS" "$(runs base | tr '\n' ' ')" "$B" "$b" "$RUNS" "$(runs this | tr '\n' ' ')" \
	"$(echo "$b / $a" | bc -l)"
