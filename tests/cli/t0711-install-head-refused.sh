#!/bin/sh
# A PEP 503 index that serves GET only: its pages give no sizes (HTML), and
# it answers HEAD with 501 Not Implemented or 405 Method Not Allowed. A
# hashed requirements file without `# mlsetup-file:` lines names files by
# hash only, so their sizes must be asked of the server: a one-byte ranged
# GET gives them; where the server refuses that too, the download learns
# them. Either way the install succeeds, and every file is still proven
# by its hash.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup

sha() { sha256sum "$TRASH/web/files/$1" | cut -d" " -f1; }
P=purepkg-1.0-py3-none-any.whl
cat >"$TRASH/hashed.txt" <<EOF
--index-url $web_url
datapkg==0.5 --hash=sha256:$(sha datapkg-0.5-py3-none-any.whl)
platpkg==2.0 --hash=sha256:$(sha "$PLATWHL")
purepkg==1.0 --hash=sha256:$(sha $P)
EOF

for code in 501 405; do
	test_expect_success "HEAD answered $code by a PEP 503 index: sized by a ranged GET, installed" '
		faults web "{\"*\": [\"html_only\", \"head_status:'$code'\"]}" &&
		inst --manifest hashed.txt --target "$TRASH/env'$code'" \
			--cache-dir "$TRASH/cache'$code'" >out 2>err &&
		env_works "$TRASH/env'$code'" &&
		expect_eq 3 "$(json "$TRASH/env'$code'/mlsetup-report.json" "len(d[\"installed\"])")" &&
		expect_eq 1 "$(requests web "/files/$P range")" &&
		expect_eq 3 "$(requests web "/files/$P")"
	'
done
test_expect_success 'HEAD 405 and every ranged GET refused: the download learns the sizes' '
	faults web "{\"*\": [\"html_only\", \"head_status:405\", \"range_status:501\"]}" &&
	inst --manifest hashed.txt --target "$TRASH/envdl" --cache-dir "$TRASH/cachedl" \
		>out 2>err &&
	env_works "$TRASH/envdl" &&
	expect_eq 3 "$(json "$TRASH/envdl/mlsetup-report.json" "len(d[\"installed\"])")" &&
	# the sizes the download learned are in the lock
	grep -A4 "name = \"purepkg-1.0-py3-none-any.whl\"" "$TRASH/envdl/pylock.toml" |
		grep -q "^size = $(wc -c <"$TRASH/web/files/$P" | tr -d " ")\$"
'
test_expect_success 'a file of unknown size is still proven by its hash: a tampered one fails' '
	faults web "{\"*\": [\"html_only\", \"head_status:405\", \"range_status:501\"],
		\"$P\": \"flip_byte\"}" &&
	expect_exit 3 inst --manifest hashed.txt --target "$TRASH/envbad" \
		--cache-dir "$TRASH/cachebad" >out 2>err &&
	grep -q "hash mismatch for .$P." err &&
	test ! -e "$TRASH/envbad" && no_staging "$TRASH"
'
test_done
