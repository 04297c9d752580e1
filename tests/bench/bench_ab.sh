#!/bin/sh
# bench_ab.sh BASE_MLSETUP [RUNS] - one mlsetup build against another on the
# cold install of bench_install.sh's corpus (the real wheels of
# manifests/requirements.txt, served from the loopback test index): empty
# cache, new target, --no-verify, the two binaries alternating, RUNS runs
# each (default 3). Prints both medians and their ratio (this build / BASE).
# For a refactoring that must not cost speed (issue 10: within 5 %).
# Needs the corpus bench_install.sh downloads (CORPUS=DIR or its default
# place) and /usr/bin/python3.11. Not part of make check.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
A=$1
B=${MLSETUP:-$top/build/mlsetup}
RUNS=${2:-3}
PY=${PY:-/usr/bin/python3.11}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-install}
CORPUS=${CORPUS:-$W/corpus}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS: run bench_install.sh once" >&2; exit 2; }
SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$W/ab"' EXIT INT TERM
rm -rf "$W/abroot" && mkdir -p "$W/abroot/files"
for f in "$CORPUS"/*.whl; do ln "$f" "$W/abroot/files/" 2>/dev/null || cp "$f" "$W/abroot/files/"; done
rm -f "$W/abport"
python3 "$top/tests/mirror/server.py" --root "$W/abroot" --port-file "$W/abport" 2>/dev/null &
SRV=$!
while [ ! -s "$W/abport" ]; do sleep 0.1; done
IDX="http://127.0.0.1:$(cat "$W/abport")/simple/"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX MLSETUP_INDEX_URL MLSETUP_CACHE_DIR
cold() { # BINARY: prints the wall seconds of one cold install
	rm -rf "$W/ab" && mkdir -p "$W/ab"
	s=$(date +%s.%N)
	"$1" install --manifest "$top/manifests/requirements.txt" --python "$PY" \
		--target "$W/ab/env" --cache-dir "$W/ab/cache" --index-url "$IDX" \
		--no-progress --no-verify >/dev/null 2>"$W/ab.err" || { cat "$W/ab.err" >&2; exit 1; }
	echo "$(date +%s.%N) - $s" | bc
}
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
: >"$W/ab.a"
: >"$W/ab.b"
i=0
while [ $i -lt "$RUNS" ]; do
	cold "$A" >>"$W/ab.a"
	cold "$B" >>"$W/ab.b"
	i=$((i + 1))
done
a=$(med <"$W/ab.a")
b=$(med <"$W/ab.b")
printf 'base   %s: %.2f s (median of %d; runs %s)\nthis   %s: %.2f s (median of %d; runs %s)\nratio this/base %.3f\n' \
	"$A" "$a" "$RUNS" "$(tr '\n' ' ' <"$W/ab.a")" "$B" "$b" "$RUNS" "$(tr '\n' ' ' <"$W/ab.b")" \
	"$(echo "$b / $a" | bc -l)"
