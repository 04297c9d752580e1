#!/bin/sh
# Truncated bodies (docs/reliability.md "Network"), with and without a
# Content-Length: caught by the expected size, resumed on the next request;
# when the server always cuts the body, the run fails (exit 4) saying how
# many bytes came, and keeps nothing.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 500000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)
SIZE=$(wc -c <"$TRASH/web/files/$A" | tr -d " ")

test_expect_success 'truncated with Content-Length once: resumed, correct hash' '
	faults web "{\"$A\": \"truncatex1\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq 2 "$(requests web /files/$A)" &&
	expect_eq 1 "$(requests web "/files/$A range")" &&
	no_parts
'
test_expect_success 'truncated without Content-Length once: caught by size, resumed' '
	rm -rf cache out &&
	faults web "{\"$A\": \"truncate_no_lengthx1\"}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	grep -q "closed the connection after [0-9]* of $SIZE bytes" err &&
	expect_eq 2 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'always truncated with Content-Length: exit 4, nothing kept' '
	rm -rf cache out &&
	faults web "{\"$A\": \"truncate\"}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	grep -q "at byte [0-9]* of $SIZE (after [0-9]* requests)" err &&
	# each request brings half of what is left: free while that is more
	# than 64 KiB, then retries (2) + 1 more
	test "$(requests web /files/$A)" -ge 3 &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success 'always truncated without Content-Length: exit 4, nothing kept' '
	rm -rf cache out &&
	faults web "{\"$A\": \"truncate_no_length\"}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	grep -q "closed the connection after [0-9]* of $SIZE bytes" err &&
	test ! -e out/$A &&
	no_parts
'
test_done
