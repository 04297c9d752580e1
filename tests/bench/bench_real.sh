#!/bin/sh
# bench_real.sh [ROUNDS] - cold install from the real package index, mlsetup
# and uv back to back: the same hash-pinned manifest (--require-hashes
# --no-deps, mlsetup --no-verify: the commands of bench_install.sh), the
# same interpreter, the same index - the one pip is configured for, asked of
# pip at run time (PIP_INDEX_URL, pip's config files, else pip's built-in
# default), never written down here. ROUNDS rounds (default 3), the order
# alternating every round, every install cold: a fresh cache and a fresh
# target, both deleted right after the install is timed and checked, so
# the disk holds one tool's install at a time. Prints every round's times,
# the medians and their ratio; writes them to OUT.
#
# What the numbers include that bench_install.sh leaves out: the index's
# own latency and bandwidth (and its CDN's caches, warmed by whichever tool
# ran first - hence alternating). Expect more spread than on loopback, and
# run it on a quiet machine.
#
#   ROUNDS=N           as the argument
#   MANIFEST=FILE      a --require-hashes manifest (default
#                      manifests/requirements.txt: ~3 GB of wheels, ~5.5 GB
#                      installed; needs about 3x the wheels' size free)
#   PICK="a b c"       keep only these projects of MANIFEST (a quick check:
#                      PICK="idna six" ROUNDS=1)
#   TOOLS="mlsetup uv" the tools (pip may be added: "mlsetup uv pip")
#   OUT=FILE           default tests/bench/results-real.md
#   W=DIR UV=PATH PY=PATH MLSETUP=PATH
#
# Not part of make check. Needs the network, build/mlsetup, /usr/bin/time
# and uv (UV=path, else installed from the package index into $W/uvtool).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
ROUNDS=${1:-${ROUNDS:-3}}
MANIFEST=${MANIFEST:-$top/manifests/requirements.txt}
TOOLS=${TOOLS:-mlsetup uv}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-real}
OUTMD=${OUT:-$top/tests/bench/results-real.md}
mkdir -p "$W"
[ -f "$MANIFEST" ] || {
	echo "no manifest $MANIFEST" >&2
	exit 2
}

# The index pip would use for `pip install`: its environment, its config
# files (install section over global), else its built-in default. Asked
# before bench_hermetic clears pip's settings.
IDX=$("$PY" - <<'PY'
from pip._internal.configuration import Configuration
from pip._internal.models.index import PyPI
c = Configuration(isolated=False)
c.load()
items = dict(c.items())
url = (items.get(":env:.index-url") or items.get("install.index-url")
       or items.get("global.index-url") or PyPI.simple_url)
print(url.split()[0])
PY
)
# shown with its host (and any user name or password) masked
shown=$(echo "$IDX" | sed -E 's#^([a-z+]+://)[^/]*#\1<host>#')
case $IDX in http://* | https://*) ;; *)
	echo "pip's index URL is not http(s): $shown" >&2
	exit 1
	;;
esac
bench_uv
bench_hermetic
bench_on_exit() {
	for t in mlsetup uv pip; do rm -rf "$W/cache-$t" "$W/env-$t"; done
}

# The manifest, or the PICKed projects of it (their pins, hashes, and
# mlsetup-file lines).
man="$W/manifest.txt"
python3 - "$MANIFEST" "$man" "${PICK:-}" <<'PY'
import re, sys
src, out, pick = sys.argv[1], sys.argv[2], sys.argv[3].split()
text = open(src).read()
# requirement entries: a line starting with a name, with its continuation
# lines (the previous line ending in a backslash)
blocks, cont = [], False
for line in text.splitlines():
    if cont:
        blocks[-1] += "\n" + line
    elif re.match(r"[A-Za-z0-9]", line):
        blocks.append(line)
    else:
        continue
    cont = line.endswith("\\")
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
if pick:
    want = {norm(p) for p in pick}
    blocks = [b for b in blocks if norm(re.match(r"[A-Za-z0-9._-]+", b).group(0)) in want]
    found = {norm(re.match(r"[A-Za-z0-9._-]+", b).group(0)) for b in blocks}
    if want - found:
        sys.exit("PICK: not in the manifest: " + " ".join(sorted(want - found)))
    hashes = {h for b in blocks for h in re.findall(r"sha256:([0-9a-f]{64})", b)}
    head = [l for l in text.splitlines() if l.startswith("# mlsetup:")]
    files = [l for l in text.splitlines() if l.startswith("# mlsetup-file:") and l.split()[2] in hashes]
    text = "\n".join(head + [""] + [b.rstrip(" \\") for b in blocks] + files) + "\n"
open(out, "w").write(text)
# projects, and the bytes to download at most (the largest file of each pin)
sizes = {l.split()[2]: int(l.split()[3]) for l in text.splitlines() if l.startswith("# mlsetup-file:")}
need = sum(max([sizes.get(h, 0) for h in re.findall(r"sha256:([0-9a-f]{64})", b)] or [0]) for b in blocks)
print(len(blocks), need, file=open(out + ".facts", "w"))
PY
read -r npins wheel_bytes <"$man.facts"
# Room for one install at a time: the wheels, unpacked about twice their
# size, with a margin.
need_kb=$((wheel_bytes / 1024 * 3))
free_kb=$(df -Pk "$W" | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt "$need_kb" ] && [ -z "${FORCE:-}" ]; then
	echo "about $((need_kb / 1048576)) GiB needed in $W, $((free_kb / 1048576)) GiB free (FORCE=1 to try anyway)" >&2
	exit 1
fi
echo "index: $shown (pip's configuration); manifest: $MANIFEST${PICK:+ (PICK: $PICK)}, $npins pins, up to $((wheel_bytes / 1048576)) MiB of wheels"

# check TOOL ENV: every pin of the manifest whose marker holds here has its
# .dist-info in ENV (markers evaluated by pip's own packaging, on $PY: the
# interpreter ENV was made from).
check() {
	"$PY" -B - "$man" "$2" <<'PY' || {
import glob, os, re, sys
from pip._vendor.packaging.markers import Marker
man, env = sys.argv[1:3]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
pins = {}
for name, version, marker in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)[ \t]*(?:;([^\\\n]*))?", open(man).read(), re.M):
    if not marker.strip() or Marker(marker.strip()).evaluate():
        pins[norm(name)] = version.lower()
have = set()
for sp in glob.glob(os.path.join(env, "lib", "python*", "site-packages")):
    for d in os.listdir(sp):
        if d.endswith(".dist-info"):
            n, v = d[:-len(".dist-info")].rsplit("-", 1)
            have.add((norm(n), v.lower()))
missing = sorted("%s==%s" % p for p in pins.items() if p not in have)
if missing:
    sys.exit("missing: " + " ".join(missing))
print(len(pins), "pins installed", file=sys.stderr)
PY
		echo "$1 left an incomplete environment in $2" >&2
		exit 1
	}
}

TIMES="$W/times" STAGES="$W/stages"
: >"$TIMES"
: >"$STAGES"
: >"$W/order"
ROUND=1
# shellcheck disable=SC2086 # TOOLS is a list
while [ $ROUND -le "$ROUNDS" ]; do
	order=$(bench_order $ROUND $TOOLS)
	echo "$ROUND $order" >>"$W/order"
	for tool in $order; do
		rm -rf "$W/cache-$tool" "$W/env-$tool"
		bench_run "$tool" cold "$man" "$W/env-$tool"
		check "$tool" "$W/env-$tool"
		rm -rf "$W/cache-$tool" "$W/env-$tool"
		echo "round $ROUND: $tool $(tail -1 "$TIMES" | cut -d' ' -f4) s"
	done
	ROUND=$((ROUND + 1))
done

{
	echo "## cold install from the real index: $(echo "$TOOLS" | sed 's/ / vs /g') ($ROUNDS rounds, one session)"
	echo
	echo "Manifest: $(basename "$MANIFEST")${PICK:+ (only: $PICK)}, $npins pins, up to $((wheel_bytes / 1048576)) MiB of wheels; index: pip's configured one; every install with a fresh cache and target, the order alternating."
	echo
	python3 - "$TIMES" "$W/order" "$TOOLS" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
order = {l.split()[0]: l.split()[1:] for l in open(sys.argv[2])}
tools = sys.argv[3].split()
wall = lambda t, r: [float(x[3]) for x in rows if x[0] == t and x[7] == r]
print("| round | order | " + " | ".join("%s wall s" % t for t in tools) + " | " +
      " | ".join("%s / %s" % (t, tools[0]) for t in tools[1:]) + " |")
print("|---" * (2 + 2 * len(tools) - 1) + "|")
for r in sorted(order, key=int):
    w = {t: wall(t, r)[0] for t in tools}
    print("| %s | %s | %s | %s |" % (r, ", ".join(order[r]), " | ".join("%.2f" % w[t] for t in tools),
          " | ".join("%.2f" % (w[t] / w[tools[0]]) for t in tools[1:])))
med = {t: st.median(float(x[3]) for x in rows if x[0] == t) for t in tools}
print("| median | | %s | %s |" % (" | ".join("%.2f" % med[t] for t in tools),
      " | ".join("%.2f" % (med[t] / med[tools[0]]) for t in tools[1:])))
PY
	echo
	echo "Medians with CPU and memory:"
	echo
	bench_report "$TIMES" manifest "$STAGES" "mlsetup by stage (medians):"
} >"$OUTMD"
cat "$OUTMD"
