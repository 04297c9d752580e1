#!/bin/sh
# mlsetup cache dir|info|clean|prune|verify: where the cache is (flag,
# MLSETUP_CACHE_DIR, XDG_CACHE_HOME, HOME), what it holds, pruning what was
# not used for N days (every use refreshes a blob's time), cleaning.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 30000
make_wheel web beta 1.0 20000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta
make_manifest "$TRASH/a.txt" "$web_url" "$TRASH/web/files" alpha
HA=$(sha256sum "$TRASH/web/files/$(wheel_file alpha 1.0)" | cut -d" " -f1)
HB=$(sha256sum "$TRASH/web/files/$(wheel_file beta 1.0)" | cut -d" " -f1)

test_expect_success 'cache dir: --cache-dir, then MLSETUP_CACHE_DIR, XDG_CACHE_HOME, HOME' '
	expect_eq /x/flag "$("$MLSETUP" cache dir --cache-dir /x/flag)" &&
	expect_eq /x/env "$(MLSETUP_CACHE_DIR=/x/env "$MLSETUP" cache dir)" &&
	expect_eq /x/xdg/mlsetup "$(XDG_CACHE_HOME=/x/xdg "$MLSETUP" cache dir)" &&
	expect_eq /x/home/.cache/mlsetup "$(env -u XDG_CACHE_HOME HOME=/x/home "$MLSETUP" cache dir)" &&
	"$MLSETUP" cache dir --cache-dir /x/flag --json >j &&
	expect_eq mlsetup.cache/1 "$(json j "d[\"schema\"]")" &&
	expect_eq /x/flag "$(json j "d[\"cache_dir\"]")"
'
test_expect_success 'cache info counts files, index pages and bytes' '
	dl -r m.txt -d out >/dev/null &&
	"$MLSETUP" cache info --cache-dir cache >info &&
	grep -q "^files     2 " info && grep -q "^index     2 pages" info &&
	"$MLSETUP" cache info --cache-dir cache --json >j &&
	expect_eq 2 "$(json j "d[\"contents\"][\"blobs\"]")" &&
	expect_eq $(( $(wc -c <web/files/$(wheel_file alpha 1.0)) + $(wc -c <web/files/$(wheel_file beta 1.0)) )) "$(json j "d[\"contents\"][\"blob_bytes\"]")"
'
test_expect_success 'prune keeps what was used recently' '
	"$MLSETUP" cache prune --days 1 --cache-dir cache >p &&
	grep -q "removed 0 files" p &&
	test -f cache/blobs/sha256/$(echo $HA | cut -c1-2)/$HA
'
test_expect_success 'prune removes blobs and pages unused for longer than --days' '
	find cache/blobs cache/index -type f -exec touch -d "-40 days" {} + &&
	dl -r a.txt -d out2 >/dev/null &&
	"$MLSETUP" cache prune --days 30 --cache-dir cache --json >j &&
	expect_eq 1 "$(json j "d[\"removed\"][\"blobs\"]")" &&
	test -f cache/blobs/sha256/$(echo $HA | cut -c1-2)/$HA &&
	test ! -e cache/blobs/sha256/$(echo $HB | cut -c1-2)/$HB &&
	test ! -e cache/locks/$HB.lock &&
	expect_eq 2 "$(json j "d[\"removed\"][\"index_pages\"]")"
'
test_expect_success 'prune --days takes a number' '
	expect_exit 2 "$MLSETUP" cache prune --days soon --cache-dir cache 2>err &&
	grep -q "\-\-days takes a number" err
'
test_expect_success 'unpacked wheel trees: counted, pruned with their wheel, read-only or not' '
	H0=0000000000000000000000000000000000000000000000000000000000000000 &&
	for h in $H0 $HA; do
		mkdir -p cache/unpacked/sha256/$h/pkg &&
		printf 12345 >cache/unpacked/sha256/$h/pkg/mod.py &&
		chmod 0444 cache/unpacked/sha256/$h/pkg/mod.py &&
		chmod 0555 cache/unpacked/sha256/$h/pkg cache/unpacked/sha256/$h || return 1
	done &&
	"$MLSETUP" cache info --cache-dir cache --json >j &&
	expect_eq 2 "$(json j "d[\"contents\"][\"unpacked_wheels\"]")" &&
	expect_eq 10 "$(json j "d[\"contents\"][\"unpacked_bytes\"]")" &&
	touch -h -d "-40 days" cache/unpacked/sha256/$H0 cache/unpacked/sha256/$HA &&
	"$MLSETUP" cache prune --days 30 --cache-dir cache --json >j &&
	expect_eq 1 "$(json j "d[\"removed\"][\"unpacked_wheels\"]")" &&
	test ! -e cache/unpacked/sha256/$H0 &&
	test -d cache/unpacked/sha256/$HA
'
test_expect_success 'clean removes everything' '
	"$MLSETUP" cache clean --cache-dir cache >c &&
	grep -q "^removed 1 files" c &&
	test -z "$(find cache -type f ! -name .lock)" &&
	test ! -e cache/unpacked &&
	"$MLSETUP" cache info --cache-dir cache --json >j &&
	expect_eq 0 "$(json j "d[\"contents\"][\"blobs\"]")"
'
test_expect_success 'unknown action and missing action are usage errors' '
	expect_exit 2 "$MLSETUP" cache frob 2>err && grep -q "unknown cache action" err &&
	expect_exit 2 "$MLSETUP" cache 2>err && grep -q "dir, info, clean, prune or verify" err
'
test_done
