#!/bin/sh
# Interrupted transfers (docs/reliability.md "Network"): a reset at 50% resumes
# with Range + If-Range and ends with the right hash; a server that ignores
# Range restarts the file from zero; a wrong Content-Range discards the
# partial file and starts over.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 2000000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)
SIZE=$(wc -c <"$TRASH/web/files/$A" | tr -d " ")

test_expect_success 'connection reset at 50%: resumes with Range, correct hash' '
	faults web "{\"$A\": \"reset_at:50%\"}" &&
	dl -r m.txt -d out --json >j 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 2 "$(requests web /files/$A)" &&
	expect_eq 1 "$(requests web "/files/$A range")" &&
	got=$(json j "d[\"files\"][0][\"bytes_downloaded\"]") &&
	test "$got" -lt $((SIZE + SIZE / 4)) &&
	no_parts
'
test_expect_success 'a resumed request carries If-Range with the validator' '
	expect_eq "$(requests web "/files/$A range")" "$(requests web "/files/$A if-range")"
'
test_expect_success 'server ignores Range: restarts from zero, correct hash' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"reset_at:50%x1\", \"ignore_range\"]}" &&
	dl -r m.txt -d out --json >j 2>err &&
	same_file out/$A web/files/$A &&
	grep -q "ignored the Range request" err &&
	got=$(json j "d[\"files\"][0][\"bytes_downloaded\"]") &&
	test "$got" -gt "$SIZE" &&
	no_parts
'
test_expect_success 'wrong Content-Range: partial file discarded, restarted' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"reset_at:50%x1\", \"wrong_content_range\"]}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	grep -q "Content-Range.*discarded the partial file" err &&
	expect_eq 3 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'wrong Content-Range every time, no retries left: fails, nothing kept' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"reset_at:50%\", \"wrong_content_range\"]}" &&
	expect_exit 4 dl -r m.txt -d out --retries 1 2>err &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success 'no progress after the first reset: exit 4 once retries run out' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"reset_at:50%\", \"ignore_range\"]}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	# the first request got half the file (progress, free); the next
	# three restart from zero and get no further: retries (2) + 1
	expect_eq 4 "$(requests web /files/$A)" &&
	grep -q "after 4 requests" err &&
	no_parts
'
test_expect_success 'a request that moves the file on costs no retry' '
	rm -rf cache out &&
	make_wheel web beta 1.0 4000000 &&
	make_manifest m2.txt "$web_url" "$TRASH/web/files" beta &&
	B=$(wheel_file beta 1.0) &&
	faults web "{\"$B\": \"reset_after:800000x4\"}" &&
	dl -r m2.txt -d out --retries 1 2>err &&
	same_file out/$B web/files/$B &&
	expect_eq 5 "$(requests web /files/$B)" &&
	expect_eq 4 "$(requests web "/files/$B range")" &&
	no_parts
'
test_done
