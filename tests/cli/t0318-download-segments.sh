#!/bin/sh
# Segmented downloads (src/fetch/download.c, "Segments"): a file at or above
# the threshold (MLSETUP_SEGMENT_MIN_BYTES, here 1 MB) is asked for in
# ranges (MLSETUP_SEGMENTS, default 4) on connections of their own; the
# bytes land in one .part file and the size and sha256 are checked over the
# assembled file. A server that ignores Range, a wrong Content-Range, a
# reset in the middle or a changed file end in the right bytes or a clear
# failure, never a corrupt blob; smaller files go on one request as before.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
mirror_start other
make_wheel web alpha 1.0 2000000
make_wheel web small 1.0 200000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha small
A=$(wheel_file alpha 1.0)
S=$(wheel_file small 1.0)
cp "$TRASH/web/files/$A" "$TRASH/other/files/"
MLSETUP_SEGMENT_MIN_BYTES=1000000
export MLSETUP_SEGMENT_MIN_BYTES

test_expect_success 'a large file comes in 4 ranges on 4 connections; a small one in one request' '
	faults web "{}" &&
	dl -r m.txt -d out --json >j 2>err &&
	same_file out/$A web/files/$A &&
	same_file out/$S web/files/$S &&
	expect_eq 4 "$(requests web /files/$A)" &&
	expect_eq 4 "$(requests web "/files/$A range")" &&
	expect_eq 3 "$(requests web "/files/$A if-range")" &&
	expect_eq 0 "$(requests web "/files/$S range")" &&
	test "$(requests web /_connections)" -ge 5 &&
	got=$(json j "d[\"files\"][[f[\"filename\"] for f in d[\"files\"]].index(\"$A\")][\"bytes_downloaded\"]") &&
	expect_eq "$(wc -c <web/files/$A | tr -d " ")" "$got" &&
	no_parts
'

test_expect_success 'MLSETUP_SEGMENTS=1: one request, as before' '
	rm -rf cache out &&
	faults web "{}" &&
	MLSETUP_SEGMENTS=1 dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 1 "$(requests web /files/$A)" &&
	expect_eq 0 "$(requests web "/files/$A range")"
'

test_expect_success 'a server that ignores Range: the first answer is the whole file, one request' '
	rm -rf cache out &&
	faults web "{\"$A\": \"ignore_range\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 1 "$(requests web /files/$A)" &&
	no_parts
'

test_expect_success 'a wrong Content-Range: ranges given up, the whole file on one request' '
	rm -rf cache out &&
	faults web "{\"$A\": \"wrong_content_range\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	grep -q "Content-Range" err &&
	no_parts
'

test_expect_success 'a connection reset in one range: that range resumes, right hash' '
	rm -rf cache out &&
	faults web "{\"$A\": \"reset_at:60%\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 5 "$(requests web /files/$A)" &&
	expect_eq 5 "$(requests web "/files/$A range")" &&
	no_parts
'

test_expect_success 'a reset in the first range: the job'"'"'s own transfer resumes, right hash' '
	rm -rf cache out &&
	faults web "{\"$A\": \"reset_at:10%\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 5 "$(requests web /files/$A)" &&
	no_parts
'

# The last range keeps breaking, slowly, so the first three are in and
# hashed (with part of the fourth) when it is given up after three tries:
# the job's own transfer resumes where the hashing got, past every range
# start, not from the end of its own range.
test_expect_success 'a range given up after the rest was partly hashed: the file resumes from there' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"slow:4000000\", \"reset_after_from:75%:150000:500000\"]}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	size=$(wc -c <web/files/$A | tr -d " ") &&
	curl -s "http://127.0.0.1:$web_port/_stats" >stats.json &&
	python3 - "$A" "$size" stats.json >starts <<-\EOF &&
	import json, sys
	name, size = sys.argv[1], int(sys.argv[2])
	stats = json.load(open(sys.argv[3]))
	pre = "/files/%s from " % name
	starts = sorted(int(k[len(pre):]) for k in stats if k.startswith(pre) for _ in range(stats[k]))
	print(" ".join(str(x) for x in starts))
	EOF
	python3 - "$size" "$(cat starts)" <<-\EOF
	import sys
	size, starts = int(sys.argv[1]), [int(x) for x in sys.argv[2].split()]
	retries = {size * 3 // 4 + k * 150000 for k in range(3)}
	late = [x for x in starts if x > size * 3 // 4 and x not in retries]
	assert size * 2 // 4 in starts and starts.count(size // 4) == 1, starts
	assert late, "no resume past the ranges: %s" % starts
	EOF
'

test_expect_success 'Range answered with HTTP 500: asked again whole, right hash' '
	rm -rf cache out &&
	faults web "{\"$A\": \"range_status:500\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	no_parts
'

test_expect_success 'a redirect: every range goes to where it led' '
	rm -rf cache out &&
	faults other "{}" &&
	faults web "{\"$A\": \"redirect:http://127.0.0.1:$other_port/files/$A\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 1 "$(requests web /files/$A)" &&
	expect_eq 4 "$(requests other "/files/$A range")" &&
	no_parts
'

test_expect_success 'a file whose bytes differ from the pin: hash mismatch, nothing kept' '
	rm -rf cache out &&
	faults web "{}" &&
	cp web/files/$A saved.whl &&
	printf "X" | dd of=web/files/$A bs=1 seek=1500000 conv=notrunc 2>/dev/null &&
	expect_exit 3 dl -r m.txt -d out --retries 0 2>err &&
	grep -q "hash mismatch for .$A." err &&
	test ! -e out/$A &&
	no_parts &&
	cp saved.whl web/files/$A
'

test_done
