#!/bin/sh
# --offline uses only the cache and local --find-links locations, never the
# network, and lists precisely the files it is missing.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 50000
make_wheel web beta 1.0 40000
make_wheel web gamma 1.0 30000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta gamma
A=$(wheel_file alpha 1.0)
B=$(wheel_file beta 1.0)
G=$(wheel_file gamma 1.0)

test_expect_success 'offline with an empty cache: every file listed as missing, exit 1' '
	faults web "{}" &&
	expect_exit 1 dl -r m.txt -d out --offline 2>err &&
	grep -q "^missing: alpha 1.0 (.$A." err &&
	grep -q "^missing: beta 1.0 (.$B." err &&
	grep -q "^missing: gamma 1.0 (.$G." err &&
	grep -q "^error: 3 files are neither in the cache nor in --find-links: $A, $B, $G" err &&
	grep -q "^hint: run without --offline" err &&
	expect_eq 0 "$(requests web /simple/alpha/)" &&
	test ! -e out/index.html
'
test_expect_success 'offline JSON marks each missing file' '
	expect_exit 1 dl -r m.txt -d out --offline --json >j 2>/dev/null &&
	expect_eq false "$(json j "d[\"ok\"]")" &&
	expect_eq "missing missing missing" "$(json j "\" \".join(f[\"status\"] for f in d[\"files\"])")"
'
test_expect_success 'offline with a local --find-links holding one file: lists only the others' '
	mkdir -p wheels && cp web/files/$B wheels/ &&
	expect_exit 1 dl -r m.txt -d out --offline --find-links wheels 2>err &&
	grep -q "^missing: alpha" err && grep -q "^missing: gamma" err &&
	! grep -q "^missing: beta" err &&
	grep -q "2 files are neither" err &&
	expect_eq 0 "$(requests web /simple/alpha/)"
'
test_expect_success 'online run fills the cache' '
	dl -r m.txt -d out >/dev/null
'
test_expect_success 'offline after that: everything from the cache, no request' '
	faults web "{}" &&
	dl -r m.txt -d out2 --offline --json >j &&
	expect_eq 3 "$(json j "d[\"totals\"][\"from_cache\"]")" &&
	same_file out2/$A web/files/$A &&
	expect_eq 0 "$(requests web /simple/alpha/)" &&
	expect_eq 0 "$(requests web /files/$A)"
'
test_expect_success 'offline with a corrupted cache entry and no local copy: missing' '
	H=$(sha256sum web/files/$A | cut -d" " -f1) &&
	b=cache/blobs/sha256/$(echo $H | cut -c1-2)/$H &&
	chmod u+w $b && printf x >>$b &&
	expect_exit 1 dl -r m.txt -d out3 --offline 2>err &&
	grep -q "warning: .* has [0-9]* bytes, expected" err &&
	grep -q "1 file is neither in the cache nor in --find-links: $A" err &&
	expect_eq 0 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'offline repairs it from a local --find-links copy' '
	cp web/files/$A wheels/ &&
	dl -r m.txt -d out4 --offline -f wheels &&
	same_file out4/$A web/files/$A &&
	expect_eq 0 "$(requests web /files/$A)"
'
test_done
