#!/bin/sh
# uv as the resolver of files that pin no hashes (src/plan/uv.c,
# src/install/uvtool.c): the uv wheel that manifests/resolver.json pins is
# fetched once into the cache from the run's index (here the loopback one,
# which serves the real wheel: packaging/deps.sh downloads it), checked by
# size and sha256, and resolves as pip does: ranges, markers, -r and -c,
# an extra index's local version, each file's sha256 from the index. A uv
# wheel that is not the pinned one is refused and pip resolves, said once;
# MLSETUP_RESOLVER=pip and MLSETUP_UV choose.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
[ "$(uname -m)" = x86_64 ] || test_skip_all "the uv wheel of this test is pinned for x86_64"
UVWHEEL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uv"]["wheels"]["linux-x86_64"]["filename"])' \
	"$top/manifests/resolver.json")
UVDIR=${MLSETUP_TEST_WHEELS:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mlsetup-tests/wheels}
[ -f "$UVDIR/$UVWHEEL" ] ||
	test_skip_all "no $UVWHEEL in $UVDIR (packaging/deps.sh downloads it from the package index)"
unset MLSETUP_RESOLVER
PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_CACHE_DIR PIP_NO_INPUT PIP_DISABLE_PIP_VERSION_CHECK
install_setup
mirror_start extra
mirror_start bad
cp "$UVDIR/$UVWHEEL" "$TRASH/web/files/"
# a wheel pip takes as uv 0.13.9 that is not the pinned one
python3 - "$TRASH/bad/files/$UVWHEEL" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    di = "uv-0.13.9.dist-info/"
    z.writestr(di + "METADATA", "Metadata-Version: 2.1\nName: uv\nVersion: 0.13.9\n")
    z.writestr(di + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n")
    z.writestr("uv-0.13.9.data/scripts/uv", "#!/bin/sh\necho uv 0.13.9\n")
    z.writestr(di + "RECORD", "")
EOF
dep_wheel web appkg 1.0 verpkg "purepkg>=1.0" 'winlib; sys_platform == "win32"'
dep_wheel web verpkg 1.0
dep_wheel web verpkg 2.0
dep_wheel web gpupkg 2.8.0
dep_wheel extra gpupkg 2.8.0+cu128
dep_wheel bad verpkg 1.0
sha() { sha256sum "$1" | cut -d" " -f1; }

# plan_py ARGS...: plan with the test CPython, cache $TRASH/cache.
plan_py() {
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" --python "$SYSPY" "$@"
}

test_expect_success 'the first resolution fetches the pinned uv once, checks it, and uv resolves' '
	printf "platpkg\n" >base.txt &&
	printf "verpkg<2\n" >constraints.txt &&
	printf -- "--index-url %s\n-r base.txt\n-c constraints.txt\nappkg>=1 ; python_version >= \"3.8\"\n" "$web_url" >loose.txt &&
	plan_py --manifest loose.txt >out 2>err &&
	cat out err >log &&
	plan_py --json --manifest loose.txt >plan.json &&
	expect_eq "uv 0.13.9" "$(json plan.json "d[\"resolver\"][\"tool\"] + \" \" + d[\"resolver\"][\"version\"]")" &&
	grep -q "fetching uv 0.13.9, the resolver, once into the cache ($UVWHEEL" log &&
	grep -q "resolving .loose.txt. with uv 0.13.9 for CPython" log &&
	grep -q "does not pin hashes: uv 0.13.9 resolved it" log &&
	test_must_fail grep -q "with pip" log &&
	test -x "$(ls -d "$TRASH"/cache/unpacked/sha256/*/tree/uv-0.13.9.data/scripts/uv)" &&
	expect_eq "appkg-1.0 platpkg-2.0 purepkg-1.0 verpkg-1.0" \
		"$(json plan.json "\" \".join(sorted(f[\"filename\"].split(\"-py\")[0].split(\"-cp\")[0] for f in d[\"files\"]))")" &&
	for w in appkg-1.0-py3-none-any.whl verpkg-1.0-py3-none-any.whl; do
		grep -q "$(sha "$TRASH/web/files/$w")" plan.json || exit 1
	done
'

test_expect_success 'the next resolution finds uv in the cache and fetches nothing' '
	rm -rf "$TRASH/cache/resolved" &&
	plan_py --manifest loose.txt >out 2>&1 &&
	test_must_fail grep -q "fetching uv" out &&
	grep -q "with uv 0.13.9" out
'

test_expect_success 'install with uv: the environment and its report as with pip, requested marked' '
	inst --python "$SYSPY" --manifest loose.txt --target "$TRASH/env" --no-verify >out 2>err &&
	"$TRASH/env/bin/python" -c "import appkg, verpkg, purepkg, platpkg; assert verpkg.VERSION == \"1.0\"" &&
	grep -q "does not pin hashes: uv 0.13.9 of" err &&
	expect_eq "[\"appkg\", \"platpkg\"]" \
		"$(json "$TRASH/env/mlsetup-report.json" "sorted(w[\"name\"] for w in d[\"installed\"] if w[\"requested\"])")"
'

test_expect_success 'an extra index with local versions: the +cu128 file comes from there' '
	printf -- "--index-url %s\n--extra-index-url %s\ngpupkg==2.8.0+cu128\n" "$web_url" "$extra_url" >local.txt &&
	plan_py --json --manifest local.txt >plan.json 2>err &&
	expect_eq uv "$(json plan.json "d[\"resolver\"][\"tool\"]")" &&
	expect_eq "$(sha "$TRASH/extra/files/gpupkg-2.8.0+cu128-py3-none-any.whl")" \
		"$(json plan.json "d[\"files\"][0][\"sha256\"]")"
'

test_expect_success 'uv and pip resolve to the same files' '
	MLSETUP_RESOLVER=pip plan_py --json --manifest loose.txt >pip.json 2>err &&
	expect_eq pip "$(json pip.json "d[\"resolver\"][\"tool\"]")" &&
	plan_py --json --manifest loose.txt >uv.json 2>err &&
	expect_eq uv "$(json uv.json "d[\"resolver\"][\"tool\"]")" &&
	expect_eq "$(json pip.json "sorted(f[\"sha256\"] for f in d[\"files\"])")" \
		"$(json uv.json "sorted(f[\"sha256\"] for f in d[\"files\"])")"
'

test_expect_success 'an index whose uv wheel is not the pinned one: refused, pip resolves, said once' '
	printf -- "--index-url %s\nverpkg\n" "$bad_url" >bad.txt &&
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache-bad" --python "$SYSPY" \
		--manifest bad.txt >out 2>&1 &&
	grep -q "uv, the faster resolver, cannot be had ($UVWHEEL is [0-9]* bytes, the pin says 17606939)" out &&
	expect_eq 1 "$(grep -c "cannot be had" out)" &&
	grep -q "with pip" out &&
	test_must_fail ls -d "$TRASH"/cache-bad/unpacked/sha256/*/tree/uv-0.13.9.data 2>/dev/null
'

test_expect_success 'MLSETUP_UV names the uv to run; one that is not uv falls back to pip' '
	uv=$(ls -d "$TRASH"/cache/unpacked/sha256/*/tree/uv-0.13.9.data/scripts/uv) &&
	MLSETUP_UV="$uv" "$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache-given" \
		--python "$SYSPY" --manifest loose.txt >out 2>&1 &&
	grep -q "with uv 0.13.9" out &&
	test_must_fail grep -q "fetching uv" out &&
	MLSETUP_UV=/bin/false "$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache-false" \
		--python "$SYSPY" --manifest loose.txt >out 2>&1 &&
	grep -q "cannot be had (./bin/false --version. did not answer as uv does)" out &&
	grep -q "with pip" out
'

test_done
