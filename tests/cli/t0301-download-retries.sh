#!/bin/sh
# Retries (docs/reliability.md "Network"): 500, 500, then 200 succeeds; 503
# forever fails after exactly retries+1 requests with exit 4; 429 waits for
# Retry-After; other 4xx are not retried. No .part file is left behind.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 100000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)

test_expect_success '500, 500, then 200: succeeds on the third request' '
	faults web "{\"$A\": \"status:500x2\"}" &&
	dl -r m.txt -d out --json >j &&
	same_file out/$A web/files/$A &&
	expect_eq 3 "$(requests web /files/$A)" &&
	expect_eq 3 "$(json j "d[\"files\"][0][\"attempts\"]")" &&
	no_parts
'
test_expect_success '503 forever: exactly retries+1 requests, exit 4, message and hint' '
	rm -rf cache out &&
	faults web "{\"$A\": \"status:503\"}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	expect_eq 3 "$(requests web /files/$A)" &&
	grep -q "error: .*files/$A.* answered HTTP 503 (after 3 requests)" err &&
	grep -q "^hint: " err &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success '--retries 0 means one request' '
	faults web "{\"$A\": \"status:503\"}" &&
	expect_exit 4 dl -r m.txt -d out --retries 0 2>err &&
	expect_eq 1 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success '429 with Retry-After: waits that long, then succeeds' '
	faults web "{\"$A\": [\"status:429x1\", \"retry_after:2\"]}" &&
	start=$(date +%s) &&
	dl -r m.txt -d out 2>err &&
	end=$(date +%s) &&
	test $((end - start)) -ge 2 &&
	expect_eq 2 "$(requests web /files/$A)" &&
	same_file out/$A web/files/$A &&
	no_parts
'
test_expect_success '408 is retried too' '
	rm -rf cache out &&
	faults web "{\"$A\": \"status:408x1\"}" &&
	dl -r m.txt -d out &&
	expect_eq 2 "$(requests web /files/$A)"
'
test_expect_success '403 is not retried: one request, exit 4' '
	rm -rf cache out &&
	faults web "{\"$A\": \"status:403\"}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	expect_eq 1 "$(requests web /files/$A)" &&
	grep -q "refused access (HTTP 403)" err &&
	no_parts
'
test_expect_success '404 on the file is not retried: one request, exit 1' '
	faults web "{\"$A\": \"status:404\"}" &&
	expect_exit 1 dl -r m.txt -d out 2>err &&
	expect_eq 1 "$(requests web /files/$A)" &&
	grep -q "not found (HTTP 404)" err &&
	no_parts
'
test_expect_success 'a 503 on the index page is retried too' '
	rm -rf cache out &&
	faults web "{\"/simple/alpha/\": \"status:503x2\"}" &&
	dl -r m.txt -d out &&
	expect_eq 3 "$(requests web /simple/alpha/)" &&
	same_file out/$A web/files/$A
'
test_expect_success 'an index that keeps failing: exit 4 naming the page' '
	rm -rf cache out &&
	faults web "{\"/simple/alpha/\": \"status:503\"}" &&
	expect_exit 4 dl -r m.txt -d out 2>err &&
	expect_eq 3 "$(requests web /simple/alpha/)" &&
	grep -q "simple/alpha/.*503 (after 3 requests)" err
'
test_expect_success 'a connection refused is a network error (exit 4)' '
	sed "s|$web_url|http://127.0.0.1:9/simple/|" m.txt >dead.txt &&
	expect_exit 4 dl -r dead.txt -d out --retries 0 2>err &&
	grep -q "127.0.0.1:9" err
'
test_done
