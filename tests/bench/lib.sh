# lib.sh - what the install benchmarks share (bench_install.sh, bench_ab.sh,
# bench_small.sh, bench_real.sh, bench_concurrent.sh); sourced, not run:
#
#   top=$(cd "$(dirname "$0")/../.." && pwd)
#   . "$top/tests/bench/lib.sh"
#
# It sets M (mlsetup binary, MLSETUP= overrides), PY (the interpreter every
# tool installs onto, PY= overrides) and defines:
#
#   bench_hermetic            no pip, uv or mlsetup settings from the caller
#   bench_serve ROOT DIR      serve DIR's wheels from the loopback test index
#                             (tests/mirror/server.py); sets SRV and IDX
#   bench_manifests DIR CORPUS  DIR/{full,small,medium}.txt from
#                             manifests/requirements.txt
#   bench_uv                  sets UV: UV=, else uv installed from the package
#                             index into $W/uvtool (once)
#   bench_order ROUND TOOL... the tools, rotated by ROUND (alternating order)
#   bench_fs                  with FRESH_FS=1: a new, empty ext4 file system
#                             for the next tool's installs; sets FS (where
#                             caches and targets go; $W without FRESH_FS)
#   bench_run TOOL SC MAN TGT one timed install (below); appends to $TIMES
#   bench_median              median of the numbers on standard input
#   bench_table TIMES MAN     Markdown table: cold/warm/no-op medians per tool
#   bench_stage_table STAGES  Markdown table: mlsetup's cold stages per manifest
#   bench_facts               Markdown list: the machine and the tool versions
#   bench_report TIMES LABEL STAGES HEADING  the three above, in that order
#
# Cleanup: an EXIT trap stops the server and calls bench_on_exit, which a
# script may redefine after sourcing this file. INT and TERM exit (status
# 130/143), which runs the EXIT trap.

M=${MLSETUP:-$top/build/mlsetup}
PY=${PY:-/usr/bin/python3.11}
SRV=
FS_DEV=
bench_on_exit() { :; }
bench_cleanup() {
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null || true
		wait "$SRV" 2>/dev/null || true
		SRV=
	fi
	bench_on_exit
	bench_fs_release
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ -x "$M" ] || {
	echo "no mlsetup binary at $M (run make, or set MLSETUP)" >&2
	exit 1
}
[ -x /usr/bin/time ] || {
	echo "needs /usr/bin/time (GNU time) for wall, CPU and peak RSS" >&2
	exit 1
}

# bench_hermetic: every tool gets its index, cache and options from the
# command line only.
bench_hermetic() {
	unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX PIP_TRUSTED_HOST \
		PIP_REQUIRE_HASHES PIP_NO_CACHE_DIR PIP_CACHE_DIR PIP_COMPILE \
		MLSETUP_INDEX_URL MLSETUP_CACHE_DIR \
		UV_INDEX_URL UV_DEFAULT_INDEX UV_INDEX UV_EXTRA_INDEX_URL UV_FIND_LINKS UV_NO_INDEX \
		UV_CACHE_DIR UV_NO_CACHE UV_COMPILE_BYTECODE UV_LINK_MODE UV_CONCURRENT_DOWNLOADS \
		UV_CONCURRENT_INSTALLS UV_PYTHON UV_CONFIG_FILE
	export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 UV_NO_CONFIG=1
}

# bench_serve ROOT DIR: hard-links (or copies) DIR/*.whl into ROOT/files,
# starts the loopback index on ROOT and requests each project page once;
# sets SRV (its pid) and IDX (its URL).
bench_serve() {
	rm -rf "$1" && mkdir -p "$1/files"
	for f in "$2"/*.whl; do
		ln "$f" "$1/files/" 2>/dev/null || cp "$f" "$1/files/"
	done
	python3 "$top/tests/mirror/server.py" --root "$1" --port-file "$1/port" 2>"$1/server.log" &
	SRV=$!
	_n=0
	while [ ! -s "$1/port" ]; do
		_n=$((_n + 1))
		if [ $_n -gt 300 ] || ! kill -0 "$SRV" 2>/dev/null; then
			echo "the loopback index did not start:" >&2
			cat "$1/server.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	IDX="http://127.0.0.1:$(cat "$1/port")/simple/"
	# Every project page once, untimed: the mirror hashes each file for its
	# page on first request (2 s for the 3 GB corpus), which the first timed
	# install would otherwise pay.
	python3 - "$IDX" <<'PY' || exit 1
import re, sys, urllib.parse, urllib.request
idx = sys.argv[1]
root = urllib.request.urlopen(idx).read().decode()
for href in re.findall(r'href="([^"]+)"', root):
    urllib.request.urlopen(urllib.parse.urljoin(idx, href)).read()
PY
}

# bench_manifests DIR CORPUS: writes DIR/full.txt (manifests/requirements.txt
# as it is), DIR/small.txt (its 10 smallest wheels, by their files in
# CORPUS) and DIR/medium.txt (everything but torch, triton and the nvidia-*
# CUDA libraries), each with the manifest's own "# mlsetup" lines.
bench_manifests() {
	python3 - "$top/manifests/requirements.txt" "$1" "$2" <<'PY'
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
}

# bench_uv: sets UV. UV=PATH wins; else uv from the package index (pip's
# configured one), installed once into its own tool environment $W/uvtool.
bench_uv() {
	if [ -z "${UV:-}" ]; then
		[ -x "$W/uvtool/bin/uv" ] || { "$PY" -m venv "$W/uvtool" && "$W/uvtool/bin/pip" install -q uv; }
		UV="$W/uvtool/bin/uv"
	fi
	[ -x "$UV" ] || {
		echo "no uv at $UV" >&2
		exit 1
	}
}

# bench_fs: where the next tool's caches and targets go, in FS. Without
# FRESH_FS=1 that is $W. With FRESH_FS=1 (root, loop devices) it is a new
# ext4 file system of FS_SIZE (default 2G) mounted at $W/fs, made for each
# call: ext4 avoids reusing an inode freed in the last minutes and scans for
# one instead, so on a shared file system each tool pays for the files the
# previous run deleted (perf: 78 % of a small-files install in
# recently_deleted, find_inode_bit, find_get_block_common). The loop device
# uses direct I/O, so the image's pages are not cached twice.
bench_fs() {
	FS=$W
	[ "${FRESH_FS:-0}" = 1 ] || return 0
	bench_fs_release
	mkdir -p "$W/fs"
	rm -f "$W/fs.img"
	truncate -s "${FS_SIZE:-2G}" "$W/fs.img" &&
		mkfs.ext4 -q -F "$W/fs.img" &&
		FS_DEV=$(losetup --find --show --direct-io=on "$W/fs.img") &&
		mount "$FS_DEV" "$W/fs" || {
		echo "FRESH_FS=1: cannot make and mount a file system at $W/fs (needs root and loop devices)" >&2
		exit 1
	}
	FS=$W/fs
}

# bench_fs_release: unmounts and removes bench_fs's file system, if any.
bench_fs_release() {
	[ -n "$FS_DEV" ] || return 0
	umount "$W/fs" 2>/dev/null || true
	losetup -d "$FS_DEV" 2>/dev/null || true
	FS_DEV=
	rm -f "$W/fs.img"
}

# bench_order ROUND TOOL...: the tools rotated left by ROUND-1, so that over
# the rounds each goes first equally often (round 1: as given).
bench_order() {
	_r=$((($1 - 1) % ($# - 1)))
	shift
	while [ "$_r" -gt 0 ]; do
		_t=$1
		shift
		set -- "$@" "$_t"
		_r=$((_r - 1))
	done
	echo "$@"
}

# bench_run TOOL SCENARIO MANIFEST TARGET: one install of MANIFEST into
# TARGET from $IDX onto $PY (a cold one after sync and SETTLE seconds),
# timed by /usr/bin/time, with the tool's cache
# in ${FS:-$W}/cache-TOOL (uv's venv step included, so a cold run has no cached
# interpreter facts either); the commands are the ones
# tests/bench/README.md lists.
# Appends "LABEL SCENARIO MANIFEST-NAME wall user sys maxrss_kb ROUND" to
# $TIMES (LABEL: $LABEL or TOOL; ROUND: $ROUND or 0) and, for mlsetup,
# "SCENARIO MANIFEST-NAME fetch_s install_s total_s bytes_extracted
# downloaded_bytes" from its report to $STAGES. A failed install stops
# the script with the tool's last lines of output.
bench_run() {
	_tool=$1 _sc=$2 _man=$3 _tgt=$4
	_cache="${FS:-$W}/cache-$_tool"
	case $_tool in
	mlsetup)
		set -- "$M" install --manifest "$_man" --python "$PY" --target "$_tgt" \
			--cache-dir "$_cache" --index-url "$IDX" --no-progress --no-verify
		;;
	pip)
		set -- sh -c '[ -x "$1/bin/python" ] || "$2" -m venv "$1"
			PIP_CACHE_DIR="$3" "$1/bin/python" -m pip install -q --require-hashes --no-deps -r "$4" --index-url "$5"' \
			sh "$_tgt" "$PY" "$_cache" "$_man" "$IDX"
		;;
	uv)
		set -- sh -c 'export UV_CACHE_DIR="$4"
			[ -x "$1/bin/python" ] || "$2" -q venv "$1" --python "$3"
			"$2" -q pip install --require-hashes --no-deps -r "$5" --index-url "$6" --python "$1/bin/python"' \
			sh "$_tgt" "$UV" "$PY" "$_cache" "$_man" "$IDX"
		;;
	*)
		echo "bench_run: unknown tool $_tool" >&2
		exit 2
		;;
	esac
	# A cold run starts from settled memory: what the last run left dirty
	# is written out (sync), and the pages the runs before freed have had
	# SETTLE seconds (default 10; 0 skips) to go back to the host. On a VM
	# that returns free memory (this one, free page reporting), a page
	# touched the first time costs about 1.5 s of CPU per GB, one reused
	# within a second or two a tenth of that: without the pause, a tool
	# started right after a 5-8 GB rm -rf gets those pages cheap, by luck
	# of the order (measured: uv 16 s of system time after one, 23 s from
	# settled memory).
	if [ "$_sc" = cold ] && [ "${SETTLE:-10}" != 0 ]; then
		sync
		sleep "${SETTLE:-10}"
	fi
	/usr/bin/time -f "%e %U %S %M" -o "$W/t" "$@" >"$W/last.log" 2>&1 || {
		echo "${LABEL:-$_tool} $_sc $(basename "$_man") failed:" >&2
		tail -5 "$W/last.log" >&2
		exit 1
	}
	echo "${LABEL:-$_tool} $_sc $(basename "$_man" .txt) $(tail -1 "$W/t") ${ROUND:-0}" >>"$TIMES"
	if [ "$_tool" = mlsetup ] && [ -n "${STAGES:-}" ] && [ -f "$_tgt/mlsetup-report.json" ]; then
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["stages"]; c=d["counters"]; print(sys.argv[2], sys.argv[3], s["fetch_s"], s["install_s"], s["total_s"], c["bytes_extracted"], c["downloaded_bytes"])' \
			"$_tgt/mlsetup-report.json" "$_sc" "$(basename "$_man" .txt)" >>"$STAGES"
	fi
}

# bench_median: the median of the numbers on standard input, one a line.
bench_median() {
	sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# bench_table TIMES MANIFEST-NAME: the Markdown table of bench_run's rows
# for that manifest: per scenario (cold, warm, noop) and tool (mlsetup
# first), the medians of wall, CPU (user+sys) and peak RSS, the wall time
# against mlsetup's, and every run's wall time in the order they ran.
bench_table() {
	python3 - "$1" "$2" <<'PY'
import statistics as st, sys
times, man = sys.argv[1:3]
rows = [l.split() for l in open(times) if l.split()[2:3] == [man]]
tools = []
for r in rows:
    if r[0] not in tools:
        tools.append(r[0])
order = ("mlsetup", "uv", "pip")
tools.sort(key=lambda t: order.index(t) if t in order else len(order))
def vals(tool, sc, col):
    return [float(r[col]) for r in rows if r[0] == tool and r[1] == sc]
print("| scenario | tool | runs | wall s | CPU s (user+sys) | peak RSS MiB | wall vs %s | wall s, each run |" % tools[0])
print("|---|---|---|---|---|---|---|---|")
for sc in ("cold", "warm", "noop"):
    if not vals(tools[0], sc, 3):
        continue
    base = st.median(vals(tools[0], sc, 3))
    for tool in tools:
        w = vals(tool, sc, 3)
        if not w:
            continue
        cpu = [u + s for u, s in zip(vals(tool, sc, 4), vals(tool, sc, 5))]
        ratio = st.median(w) / base if base > 0 else float("inf")
        print("| %s | %s | %d | %.2f | %.2f | %.0f | %.2fx | %s |" % (
            sc, tool, len(w), st.median(w), st.median(cpu),
            st.median(vals(tool, sc, 6)) / 1024, ratio, ", ".join("%.2f" % x for x in w)))
PY
}

# bench_stage_table STAGES: mlsetup's time per stage on a cold install, and
# its bytes, medians per manifest (smallest first).
bench_stage_table() {
	python3 - "$1" <<'PY'
import statistics as st, sys
srows = [l.split() for l in open(sys.argv[1]) if l.startswith("cold ")]
print("| manifest | fetch s | install (extract+link) s | total s | downloaded MiB | extracted MiB |")
print("|---|---|---|---|---|---|")
for man in sorted({x[1] for x in srows}, key=lambda n: max(float(x[5]) for x in srows if x[1] == n)):
    r = [x for x in srows if x[1] == man]
    m = lambda i: st.median(float(x[i]) for x in r)
    print("| %s | %.2f | %.2f | %.2f | %.0f | %.0f |" % (man, m(2), m(3), m(4), m(6) / 2**20, m(5) / 2**20))
PY
}

# bench_report TIMES LABEL STAGES HEADING: the medians table (rows labelled
# LABEL), HEADING over mlsetup's stage table, then the machine facts.
bench_report() {
	bench_table "$1" "$2"
	echo
	echo "$4"
	echo
	bench_stage_table "$3"
	echo
	bench_facts
}

# bench_facts: the machine and the tools, as a Markdown list (the load
# average is the one at the time of the call).
bench_facts() {
	echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores$(grep -qw sha_ni /proc/cpuinfo && echo ' (SHA-NI)'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(uname -sr)"
	echo "- work directory: $W on $(df -PT "$W" | awk 'NR == 2 { print $2 }'), $(df -Ph "$W" | awk 'NR == 2 { print $4 }') free; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ "${FRESH_FS:-0}" = 1 ]; then
		echo "- caches and targets: a new ext4 file system (FS_SIZE ${FS_SIZE:-2G}, loop device with direct I/O) for each tool's cold, warm and no-op runs (FRESH_FS=1)"
	else
		echo "- caches and targets: under the work directory, deleted after each tool's runs"
	fi
	echo "- interpreter: $PY ($("$PY" --version 2>&1))"
	echo "- mlsetup: $("$M" --version 2>&1 | head -1)"
	[ -n "${UV:-}" ] && echo "- uv: $("$UV" --version 2>&1)"
	echo "- pip: $("$PY" -c 'import ensurepip; print(ensurepip.version())' 2>&1) (what \`$PY -m venv\` puts in each pip environment)"
}
