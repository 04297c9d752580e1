#!/bin/sh
# Several sources per file, tried in order: the primary index, the extra
# indexes, --find-links directories and pages, file:// URLs. A source that
# fails (network or integrity) hands over to the next one.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mkdir -p "$TRASH/extra"
mirror_start primary
mirror_start extra
make_wheel primary alpha 1.0 100000
make_wheel primary beta 1.0 20000
cp "$TRASH/primary/files/"* "$TRASH/extra/files/"
make_wheel extra solo 1.0 10000
A=$(wheel_file alpha 1.0)
B=$(wheel_file beta 1.0)
X=$(wheel_file solo 1.0)
make_manifest "$TRASH/m.txt" "$primary_url" "$TRASH/primary/files" alpha beta
mkdir -p "$TRASH/wheels" && cp "$TRASH/primary/files/$A" "$TRASH/wheels/"
make_manifest "$TRASH/x.txt" "$primary_url" "$TRASH/extra/files" solo

test_expect_success 'a project only on the extra index comes from there' '
	dl -r x.txt -d out --extra-index-url "$extra_url" &&
	same_file out/$X extra/files/$X &&
	expect_eq 1 "$(requests primary /simple/solo/)" &&
	expect_eq 1 "$(requests extra /files/$X)"
'
test_expect_success 'primary fails for good: the extra index serves it' '
	rm -rf cache out &&
	faults primary "{\"$A\": \"status:503\"}" && faults extra "{}" &&
	dl -r m.txt -d out --extra-index-url "$extra_url" 2>err &&
	same_file out/$A primary/files/$A &&
	expect_eq 3 "$(requests primary /files/$A)" &&
	expect_eq 1 "$(requests extra /files/$A)" &&
	expect_eq 1 "$(requests primary /files/$B)" &&
	expect_eq 0 "$(requests extra /files/$B)" &&
	grep -q "trying the next source" err &&
	no_parts
'
test_expect_success 'primary serves altered bytes: refused, then a find-links copy is used' '
	rm -rf cache out &&
	faults primary "{\"$A\": \"flip_byte\"}" &&
	dl -r m.txt -d out --find-links wheels 2>err &&
	same_file out/$A primary/files/$A &&
	grep -q "hash mismatch for .$A.*trying the next source" err &&
	no_parts
'
test_expect_success 'every source fails: the integrity failure decides the exit code' '
	rm -rf cache out &&
	faults primary "{\"$A\": \"flip_byte\"}" &&
	faults extra "{\"$A\": \"status:503\"}" &&
	expect_exit 3 dl -r m.txt -d out --extra-index-url "$extra_url" --retries 0 2>err &&
	grep -q "^error: hash mismatch for .$A." err &&
	no_parts
'
test_expect_success '--no-index with a find-links directory (file:// sources)' '
	rm -rf cache out &&
	faults primary "{}" &&
	cp primary/files/$B wheels/ &&
	dl -r m.txt -d out --no-index --find-links wheels &&
	same_file out/$A primary/files/$A && same_file out/$B primary/files/$B &&
	expect_eq 0 "$(requests primary /simple/alpha/)"
'
test_expect_success 'a find-links URL given as file://' '
	rm -rf cache out &&
	dl -r m.txt -d out --no-index --find-links "file://$TRASH/wheels" &&
	same_file out/$A primary/files/$A
'
test_expect_success 'a find-links HTML page over http' '
	rm -rf cache out &&
	dl -r m.txt -d out --no-index --find-links "${primary_url}alpha/" \
		--find-links "${primary_url}beta/" &&
	same_file out/$A primary/files/$A &&
	expect_eq 1 "$(requests primary /files/$A)"
'
test_expect_success 'a DIR made by download is itself a find-links source' '
	rm -rf cache out2 &&
	dl -r m.txt -d out2 --no-index --find-links out/index.html &&
	same_file out2/$A primary/files/$A && same_file out2/$B primary/files/$B &&
	rm -rf cache out3 &&
	dl -r m.txt -d out3 --no-index --find-links out &&
	same_file out3/$A primary/files/$A
'
test_expect_success 'a manifest --find-links line is taken relative to the manifest' '
	rm -rf cache out4 && mkdir -p sub &&
	{ echo "--no-index"; echo "--find-links ../wheels"; grep -v "^--index-url" m.txt; } >sub/m.txt &&
	dl -r sub/m.txt -d out4 &&
	same_file out4/$A primary/files/$A
'
test_done
