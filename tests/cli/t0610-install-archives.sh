#!/bin/sh
# Every Archives row of docs/reliability.md through `mlsetup install`: a hostile
# wheel (pinned by its true hash, so it passes download verification) is
# refused with exit 3 at extraction; a sentinel outside the target and the
# environment that was already there stay byte-identical; nothing is left
# behind. Also the Integrity rows that reach install: a flipped byte in the
# index's copy and a wheel whose files don't match its RECORD.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS
python3 "$top/tests/fixtures/make_bad_archives.py" "$TRASH/bad" >/dev/null
echo "outside the target" >"$TRASH/sentinel"

test_expect_success 'setup: a complete environment exists' '
	inst --manifest m.txt --target "$TRASH/env" >/dev/null 2>&1 &&
	env_works "$TRASH/env" &&
	tree_hash "$TRASH/env" >"$TRASH/env.hash"
'

# refused_install WHEELFILE: serve WHEELFILE as evil-1.0-py3-none-any.whl
# next to the good wheels; install must exit 3 and change nothing.
refused_install() {
	cp "$1" "$TRASH/web/files/evil-1.0-py3-none-any.whl" &&
	wheel_manifest "$TRASH/evil.txt" $GOOD_WHEELS evil-1.0-py3-none-any.whl &&
	expect_exit 3 inst --manifest evil.txt --target "$TRASH/env" >out 2>err &&
	grep -q "evil-1.0-py3-none-any.whl" err &&
	expect_eq "$(cat "$TRASH/env.hash")" "$(tree_hash "$TRASH/env")" &&
	expect_eq "outside the target" "$(cat "$TRASH/sentinel")" &&
	no_staging "$TRASH" && no_parts &&
	test -z "$(find "$TRASH/cache/unpacked" -maxdepth 3 -name "*.tmp-*")" &&
	test ! -e "$TRASH/x" && test ! -e /tmp/x-mlsetup-evil
}

# Every hostile wheel-format case the generator marks "refused".
while IFS="$(printf '\t')" read -r file kind a b verdict what; do
	[ "$kind" = wheel ] && [ "$verdict" = refused ] || continue
	c_file=$file
	test_expect_success "refused, exit 3, env untouched: $what ($file)" \
		'refused_install "$TRASH/bad/$c_file"'
done <"$TRASH/bad/cases.tsv"

for w in badrecord unlisted badsize md5record ghost; do
	c_w=$w
	test_expect_success "wheel whose files do not match its RECORD is refused: $w" \
		'refused_install "$TRASH/wheels/$c_w-1.0-py3-none-any.whl"'
done

test_expect_success 'a flipped byte in the served wheel is refused before extraction' '
	rm -rf "$TRASH/cache" &&
	wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS &&
	cp web/files/purepkg-1.0-py3-none-any.whl purepkg.orig &&
	test_when_finished "cp purepkg.orig web/files/purepkg-1.0-py3-none-any.whl" &&
	python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,\"rb\").read()); b[len(b)//2]^=1; open(p,\"wb\").write(b)" web/files/purepkg-1.0-py3-none-any.whl &&
	expect_exit 3 inst --manifest m.txt --target "$TRASH/env" --reinstall >out 2>err &&
	grep -q "purepkg-1.0-py3-none-any.whl" err && grep -qi "sha256" err &&
	expect_eq "$(cat "$TRASH/env.hash")" "$(tree_hash "$TRASH/env")" &&
	no_staging "$TRASH" && no_parts &&
	cp purepkg.orig web/files/purepkg-1.0-py3-none-any.whl
'
test_expect_success 'a wheel in the cache edited on disk is detected on use and fetched again' '
	inst --manifest m.txt --target "$TRASH/envc" >/dev/null 2>&1 &&
	h=$(sha256sum web/files/purepkg-1.0-py3-none-any.whl | cut -d" " -f1) &&
	blob="$TRASH/cache/blobs/sha256/$(echo $h | cut -c1-2)/$h" &&
	chmod u+w "$blob" && printf x >>"$blob" &&
	# Only a wheel that is not unpacked yet is read from its blob.
	rm -rf "$TRASH/cache/unpacked/sha256/$h" &&
	inst --manifest m.txt --target "$TRASH/envc2" >/dev/null 2>err &&
	env_works "$TRASH/envc2" &&
	expect_eq "$h" "$(sha256sum "$blob" | cut -d" " -f1)"
'
test_done
