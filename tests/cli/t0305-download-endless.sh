#!/bin/sh
# An endless body (docs/reliability.md "Network") is cut at the expected size:
# the right bytes followed by junk give the right file; junk from the
# first byte is refused by the hash (exit 3). Nothing past the expected
# size is ever stored.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 300000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha
A=$(wheel_file alpha 1.0)
SIZE=$(wc -c <"$TRASH/web/files/$A" | tr -d " ")

test_expect_success 'the file then junk forever: cut at the expected size, correct' '
	faults web "{\"$A\": \"endless\"}" &&
	start=$(date +%s) &&
	dl -r m.txt -d out --json >j 2>err &&
	end=$(date +%s) &&
	test $((end - start)) -lt 10 &&
	same_file out/$A web/files/$A &&
	expect_eq 1 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'junk forever from the first byte: refused by the hash, exit 3' '
	rm -rf cache out &&
	faults web "{\"$A\": \"endless_junk\"}" &&
	expect_exit 3 dl -r m.txt -d out 2>err &&
	grep -q "hash mismatch for .$A. from .*expected sha256 $(sha256sum web/files/$A | cut -d" " -f1), got [0-9a-f]\{64\}" err &&
	expect_eq 1 "$(requests web /files/$A)" &&
	test ! -e out/$A &&
	test -z "$(find cache/blobs -type f)" &&
	no_parts
'
test_done
