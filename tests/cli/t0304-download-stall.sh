#!/bin/sh
# Stalls (docs/reliability.md "Network"): headers then nothing, or one byte every
# 10 s, trip the low-speed timeout (--low-speed-time 1 here) and the next
# request resumes; a server that always stalls fails with exit 4. Every
# case finishes in seconds.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 200000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)

test_expect_success 'headers then a stall: low-speed timeout, retry succeeds' '
	faults web "{\"$A\": \"stall_after_headers:60x1\"}" &&
	start=$(date +%s) &&
	dl -r m.txt -d out 2>err &&
	end=$(date +%s) &&
	test $((end - start)) -lt 10 &&
	same_file out/$A web/files/$A &&
	expect_eq 2 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'one byte every 10 s: low-speed timeout, retry resumes' '
	rm -rf cache out &&
	faults web "{\"$A\": \"slow:0.1x1\"}" &&
	start=$(date +%s) &&
	dl -r m.txt -d out 2>err &&
	end=$(date +%s) &&
	test $((end - start)) -lt 10 &&
	same_file out/$A web/files/$A &&
	expect_eq 2 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'always stalling: exit 4 after retries+1 requests' '
	rm -rf cache out &&
	faults web "{\"$A\": \"stall_after_headers:60\"}" &&
	expect_exit 4 dl -r m.txt -d out --retries 1 2>err &&
	expect_eq 2 "$(requests web /files/$A)" &&
	grep -qi "timed\? \?out\|too slow\|slower" err &&
	test ! -e out/$A &&
	no_parts
'
test_done
