#!/bin/sh
# Load: four `mlsetup install` runs of one manifest into four targets at
# once, sharing one cache (--cache-dir) and one interpreter directory, as
# several users or a job scheduler on one machine do. All succeed, each
# environment is complete (its marker, its report), every file is
# downloaded once between them (the per-blob lock makes the others wait and
# take it from the cache; the wheels are unpacked once, under the unpacked
# tree's own lock), and `mlsetup cache verify` finds nothing wrong. Then
# the same with one of the four killed with SIGKILL at a random moment:
# the others succeed, the killed target holds nothing or a complete
# environment (never a marker over missing files), a rerun completes it,
# the cache verifies, and what the killed run left (a .part, an unpacked
# or interpreter staging directory, an environment's staging directory) is
# cleaned up by the runs after it.
#
# The moment of the kill comes from a seed, printed first ("# seed N");
# MLSETUP_TEST_SEED=N replays it.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
# A wheel of 120 files of 32 KiB (4 MiB, incompressible) beside the
# fixture wheels, so downloading, unpacking and linking take long enough
# for the runs to overlap in each.
mkdir -p "$TRASH/bigsrc/bigpkg"
python3 - "$TRASH/bigsrc/bigpkg" <<-'EOF'
import os, random, sys
rnd = random.Random(7)
open(os.path.join(sys.argv[1], "__init__.py"), "w").write("")
for i in range(120):
    open(os.path.join(sys.argv[1], "part%03d.bin" % i), "wb").write(rnd.randbytes(32768))
EOF
wheel_from_dir bigpkg 1.0 py3-none-any "$TRASH/bigsrc" "$TRASH/web/files"
WHEELS="$GOOD_WHEELS bigpkg-1.0-py3-none-any.whl"
wheel_manifest "$TRASH/m.txt" $WHEELS
ARCH=$(cd "$TRASH/web/files" && ls cpython-*)
FILES="$WHEELS $ARCH"

# The wheels are served at 1.5 MB/s and the 15 MB interpreter archive at
# 8 MB/s (2 to 3 s each), so four runs started together all want every
# file while one of them is still downloading it.
slow_all() {
	s='{'
	for f in $WHEELS; do s="$s\"$f\": \"slow:1500000\", "; done
	faults web "$s\"$ARCH\": \"slow:8000000\"}"
}

SEED=${MLSETUP_TEST_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d " ")}
echo "# seed $SEED (MLSETUP_TEST_SEED=$SEED replays this run)"
# The run to kill (1..4) and when (0.2 to 5.5 s after the start): downloads,
# unpacking, the interpreter, linking and the commit all lie in that span.
set -- $(python3 -c "import random, sys; r = random.Random(int(sys.argv[1])); print(r.randint(1, 4), round(r.uniform(0.2, 5.5), 2))" "$SEED")
VICTIM=$1 DELAY=$2
echo "# kill: run $VICTIM after $DELAY s"

# complete ENV: the environment works, its marker and its report are there
# and the report says ok.
complete() {
	env_works "$1" && "$1/bin/python" -c "import bigpkg, datapkg" &&
	expect_eq ok "$(json "$1/mlsetup-report.json" "d[\"status\"]")"
}

# nothing_or_complete ENV: ENV does not exist, or it is complete - its
# report "ok", or "unverified" when the kill came after the commit, while
# the run verified it (the report it committed with).
nothing_or_complete() {
	[ ! -e "$1" ] && return 0
	test -f "$1/.mlsetup-complete" || { echo "$1 exists without its marker" >&2; return 1; }
	case $(json "$1/mlsetup-report.json" "d[\"status\"]") in
	unverified) env_works "$1" && "$1/bin/python" -c "import bigpkg, datapkg" ;;
	*) complete "$1" ;;
	esac
}

# leftovers: lists what crashed runs may leave (downloads in progress,
# unpacked trees and interpreters being written, environments' staging).
leftovers() {
	find "$TRASH/cache/tmp" -name "*.part" 2>/dev/null
	find "$TRASH/cache/unpacked/sha256" -maxdepth 1 \( -name "*.tmp-*" -o -name "*.trash-*" \) 2>/dev/null
	find "$XDG_DATA_HOME/mlsetup/pythons" -maxdepth 1 \( -name ".*.stage-*" -o -name ".*.trash-*" \) 2>/dev/null
	ls -a "$TRASH" | grep -E '\.mlsetup-(stage|old)-' || true
}

test_expect_success 'four installs at once, one cache: all succeed, each complete' '
	slow_all &&
	for i in 1 2 3 4; do
		{ inst --manifest m.txt --target "$TRASH/env$i" >out$i 2>err$i; echo $? >rc$i; } &
	done &&
	wait &&
	for i in 1 2 3 4; do
		expect_eq 0 "$(cat rc$i)" || { cat out$i err$i; return 1; }
		complete "$TRASH/env$i" || return 1
	done
'
# Counted twice: by the mirror (requests for each file) and by the runs
# themselves (their "N downloaded" add up to one download per file). Each
# wheel was unpacked into the cache by one run and found there by the
# three others (the reports' unpacked_cache_hits).
test_expect_success 'every file was downloaded once between them, each wheel unpacked once' '
	for f in $FILES; do
		n=$(requests web /files/$f) &&
		expect_eq 1 "$n" || { echo "$f requested $n times"; return 1; }
	done &&
	sed -n "s/^packages .*: \([0-9]*\) downloaded .*/\1/p" out1 out2 out3 out4 >dls &&
	expect_eq 4 "$(grep -c . dls)" &&
	expect_eq "$(echo $FILES | wc -w)" "$(awk "{ s += \$1 } END { print s }" dls)" &&
	hits=0 &&
	for i in 1 2 3 4; do
		hits=$((hits + $(json "$TRASH/env$i/mlsetup-report.json" "d[\"counters\"][\"unpacked_cache_hits\"]")))
	done &&
	expect_eq $((3 * $(echo $WHEELS | wc -w))) $hits
'
test_expect_success 'the cache verifies, nothing partial is left' '
	"$MLSETUP" cache verify --cache-dir cache >v &&
	grep -q "checked $(echo $FILES | wc -w) files.*: 0 corrupted" v &&
	expect_eq "" "$(leftovers)"
'
test_expect_success "one of four killed with SIGKILL (run $VICTIM after $DELAY s): the others succeed" '
	rm -rf cache "$TRASH"/env* &&
	XDG_DATA_HOME="$TRASH/data-k" && export XDG_DATA_HOME &&
	slow_all &&
	for i in 1 2 3 4; do
		if [ $i -eq $VICTIM ]; then
			(inst_exec --manifest m.txt --target "$TRASH/env$i" >out$i 2>err$i) &
			victim=$!
		else
			{ inst --manifest m.txt --target "$TRASH/env$i" >out$i 2>err$i; echo $? >rc$i; } &
		fi
	done &&
	sleep $DELAY &&
	{ kill -9 $victim 2>/dev/null || echo "run $VICTIM had ended before the kill"; } &&
	wait &&
	for i in 1 2 3 4; do
		[ $i -eq $VICTIM ] && continue
		expect_eq 0 "$(cat rc$i)" || { cat out$i err$i; return 1; }
		complete "$TRASH/env$i" || return 1
	done &&
	echo "left by the kill: $(leftovers)" &&
	nothing_or_complete "$TRASH/env$VICTIM" &&
	"$MLSETUP" cache verify --cache-dir cache >v &&
	grep -q ": 0 corrupted" v &&
	# at most twice: the download of the killed run, and the one that took over
	for f in $FILES; do
		n=$(requests web /files/$f) &&
		test "$n" -le 2 || { echo "$f requested $n times"; return 1; }
	done
'
test_expect_success 'a rerun of the killed one completes it; the runs after clean up' '
	XDG_DATA_HOME="$TRASH/data-k" && export XDG_DATA_HOME &&
	faults web "{}" &&
	{ inst --manifest m.txt --target "$TRASH/env$VICTIM" >out 2>err || { cat out err; false; }; } &&
	complete "$TRASH/env$VICTIM" &&
	"$MLSETUP" cache verify --cache-dir cache >v &&
	grep -q ": 0 corrupted" v &&
	# A .part is swept by any run that opens the cache once no one has
	# written to it for a minute (t0309): made older, the next install
	# (into a new target; the rerun target is up to date and opens no
	# cache) removes it.
	find cache/tmp -name "*.part" -exec touch -d "-2 minutes" {} + &&
	inst --manifest m.txt --target "$TRASH/env5" >out 2>err &&
	complete "$TRASH/env5" &&
	expect_eq "" "$(leftovers)"
'
test_done
