#!/bin/sh
# Integrity (docs/reliability.md "Integrity"): a flipped byte, a size off by one
# either way and appended junk are refused with exit 3 before anything
# reaches DIR or the cache, the message naming the file, the URL and both
# hashes or sizes; an index that lists another hash is refused without
# downloading; a cached file edited on disk is caught on use and fetched
# again. No .part file is ever left.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 200000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)
H=$(sha256sum "$TRASH/web/files/$A" | cut -d" " -f1)
SIZE=$(wc -c <"$TRASH/web/files/$A" | tr -d " ")
blob=cache/blobs/sha256/$(echo $H | cut -c1-2)/$H

nothing_kept() {
	test ! -e out/$A && test -z "$(find cache/blobs -type f 2>/dev/null)" && no_parts
}

test_expect_success 'one byte flipped: exit 3, file, URL, expected and actual hash' '
	faults web "{\"$A\": \"flip_byte\"}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "^error: hash mismatch for .$A. from .http://127.0.0.1:$web_port/files/$A.: expected sha256 $H, got [0-9a-f]\{64\}$" err &&
	grep -q "^hint: " err &&
	expect_eq 1 "$(requests web /files/$A)" &&
	nothing_kept
'
test_expect_success 'one byte short: exit 3, sizes named' '
	faults web "{\"$A\": \"shorten:1\"}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "size mismatch for .$A. from .*: the server sends $((SIZE - 1)) bytes, expected $SIZE" err &&
	nothing_kept
'
test_expect_success 'one byte long: exit 3' '
	faults web "{\"$A\": \"append:1\"}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "sends $((SIZE + 1)) bytes, expected $SIZE" err &&
	nothing_kept
'
test_expect_success 'junk appended: exit 3' '
	faults web "{\"$A\": \"append:4096\"}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "sends $((SIZE + 4096)) bytes, expected $SIZE (extra data appended?)" err &&
	nothing_kept
'
test_expect_success 'flipped byte without a Content-Length: hash decides, exit 3' '
	faults web "{\"$A\": [\"flip_byte\", \"endless\"]}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "hash mismatch for .$A." err &&
	nothing_kept
'
test_expect_success 'junk after the file without a Content-Length: cut at the size, kept' '
	faults web "{\"$A\": [\"append:4096\", \"endless\"]}" &&
	dl -r m.txt -d out 2>err &&
	same_file out/$A web/files/$A &&
	rm -rf out cache
'
test_expect_success 'integrity failures are not retried' '
	faults web "{\"$A\": \"flip_byte\"}" &&
	expect_exit 3 dl -r m.txt -d out --retries 3 2>err &&
	expect_eq 1 "$(requests web /files/$A)"
'
test_expect_success 'an index listing another hash for the file: exit 3, no download' '
	faults web "{}" &&
	cp web/files/$A saved.whl &&
	test_when_finished "cp saved.whl web/files/$A" &&
	chmod u+w web/files/$A && printf x >>web/files/$A &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "hash mismatch for .$A.: .*lists it with sha256 [0-9a-f]\{64\}, the manifest pins $H" err &&
	expect_eq 0 "$(requests web /files/$A)" &&
	nothing_kept
'
test_expect_success 'the good file still downloads' '
	faults web "{}" &&
	dl -r m.txt -d out &&
	same_file out/$A web/files/$A
'
test_expect_success 'cached file edited on disk: detected on use, fetched again' '
	test -f $blob &&
	test ! -w $blob -o "$(id -u)" = 0 &&
	chmod u+w $blob && printf "\\377" | dd of=$blob bs=1 seek=100 conv=notrunc 2>/dev/null &&
	faults web "{}" &&
	dl -r m.txt -d out2 2>err &&
	grep -q "warning: .*$H.* is corrupted" err &&
	same_file out2/$A web/files/$A &&
	test "$(sha256sum $blob | cut -d" " -f1)" = $H &&
	expect_eq 1 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'cached file of the wrong size: detected and fetched again' '
	chmod u+w $blob && printf junk >>$blob &&
	faults web "{}" &&
	dl -r m.txt -d out3 --json >j 2>err &&
	expect_eq true "$(json j "d[\"files\"][0][\"repaired\"]")" &&
	same_file out3/$A web/files/$A &&
	expect_eq 1 "$(requests web /files/$A)"
'
test_expect_success 'mlsetup cache verify finds and removes a corrupted blob (exit 3)' '
	"$MLSETUP" cache verify --cache-dir cache >out.txt &&
	grep -q "checked 1 files.*0 corrupted" out.txt &&
	chmod u+w $blob && printf x | dd of=$blob bs=1 seek=5 conv=notrunc 2>/dev/null &&
	expect_exit 3 "$MLSETUP" cache verify --cache-dir cache 2>err &&
	grep -q "1 cached files did not match" err &&
	test ! -e $blob
'
test_done
