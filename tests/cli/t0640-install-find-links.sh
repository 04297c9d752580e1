#!/bin/sh
# install and download take a manifest's own index options the same way
# (one shared function): a manifest carrying --no-index and a relative
# --find-links DIR installs with `mlsetup install --manifest` alone, DIR
# taken from the manifest's own directory as pip does, no index server
# involved; the same holds with --offline, and for download.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
# No index from the environment or pip's configuration files.
unset MLSETUP_INDEX_URL PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
PIP_CONFIG_FILE=/dev/null
export PIP_CONFIG_FILE

WHEELS="purepkg-1.0-py3-none-any.whl $PLATWHL"
python3 "$top/tests/fixtures/make_wheels.py" "$TRASH/wheels" --python "$PYXY" >/dev/null
mkdir -p "$TRASH/proj/reqs" "$TRASH/proj/wheelhouse" "$TRASH/run"
for w in $WHEELS; do cp "$TRASH/wheels/$w" "$TRASH/proj/wheelhouse/"; done
# proj/reqs/m.txt: the wheels of ../wheelhouse (proj/wheelhouse from the
# manifest's directory; from run/, where install runs, it would be the
# missing $TRASH/wheelhouse), hashed, with --no-index and no index URL.
{
	echo "# mlsetup: python = $PYXY"
	echo "# mlsetup: platforms = linux-x86_64"
	echo "# mlsetup: requested = purepkg platpkg"
	echo "--no-index"
	echo "--find-links ../wheelhouse"
	for w in $WHEELS; do
		h=$(sha256sum "$TRASH/wheels/$w" | cut -d" " -f1)
		echo "$(echo "$w" | cut -d- -f1)==$(echo "$w" | cut -d- -f2) --hash=sha256:$h"
	done
	for w in $WHEELS; do
		f="$TRASH/wheels/$w"
		echo "# mlsetup-file: $(sha256sum "$f" | cut -d" " -f1) $(wc -c <"$f" | tr -d " ") $w"
	done
} >"$TRASH/proj/reqs/m.txt"

# run_install ARGS...: install from run/ with proj/reqs/m.txt and an
# existing interpreter (nothing to download for it): no other source of
# files than the manifest's own.
run_install() {
	(cd "$TRASH/run" && "$MLSETUP" install --sysroot "$SYSROOTS/empty" \
		--manifest ../proj/reqs/m.txt --python "$SYSPY" --no-progress "$@")
}

test_expect_success 'the relative --find-links is not there from where install runs' '
	test ! -e "$TRASH/wheelhouse" && test -d "$TRASH/proj/reqs/../wheelhouse"
'
test_expect_success 'install --manifest alone takes the manifest find-links and no-index' '
	run_install --cache-dir "$TRASH/cache" --target "$TRASH/env" >out 2>err &&
	"$TRASH/env/bin/python" -c "import purepkg, platpkg" &&
	test -f "$TRASH/env/.mlsetup-complete" &&
	r="$TRASH/env/mlsetup-report.json" &&
	expect_eq ok "$(json "$r" "d[\"status\"]")" &&
	expect_eq 2 "$(json "$r" "d[\"counters\"][\"downloaded_files\"]")"
'
test_expect_success 'the files came from the find-links directory, as file:// sources' '
	r="$TRASH/env/mlsetup-report.json" &&
	expect_eq "[false, false]" "$(json "$r" "[w[\"from_cache\"] for w in d[\"installed\"]]")"
'
test_expect_success 'with --offline and an empty cache the local find-links still serve' '
	run_install --offline --cache-dir "$TRASH/cache2" --target "$TRASH/env2" >out 2>err &&
	"$TRASH/env2/bin/python" -c "import purepkg, platpkg"
'
test_expect_success 'without the find-links directory install names the missing files' '
	mv proj/wheelhouse proj/wheelhouse.away &&
	expect_exit 1 run_install --cache-dir "$TRASH/cache3" --target "$TRASH/env3" 2>err &&
	mv proj/wheelhouse.away proj/wheelhouse &&
	grep -q "purepkg" err && test ! -e "$TRASH/env3"
'
test_expect_success 'download reads the same manifest the same way' '
	"$MLSETUP" download --sysroot "$SYSROOTS/empty" -r proj/reqs/m.txt -d dl --python "$PYXY" \
		--cache-dir "$TRASH/cache4" --no-progress >/dev/null 2>err &&
	test -f dl/purepkg-1.0-py3-none-any.whl && test -f dl/index.html
'
test_done
