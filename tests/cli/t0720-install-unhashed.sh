#!/bin/sh
# Requirements files that do not pin hashes install too: pinned without
# hashes, and loose (ranges, markers, -r/-c includes, an extra index with
# local versions like 2.8.0+cu128) are resolved with pip's resolver, run
# by the environment's own interpreter (a distribution's Python under PEP
# 668 gets --break-system-packages for the dry run only), wheels only;
# the resolution is saved as a lock (said loudly, with its path) and every
# byte is checked against it. A conflict relays pip's reason; -e, paths
# and VCS lines, --require-hashes and an interpreter without pip are
# refused with the file, the line and the fix.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
"$SYSPY" -c 'import sys
from pip import __version__ as v
sys.exit(tuple(int(x) for x in v.split(".")[:2]) < (22, 2))' 2>/dev/null ||
	test_skip_all "the test CPython $SYSPY has no pip >= 22.2 (its pip resolves)"
# Hermetic pip: no cache, no questions, no version check.
PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_CACHE_DIR PIP_NO_INPUT PIP_DISABLE_PIP_VERSION_CHECK
install_setup
mirror_start extra

# appkg needs verpkg (1.0 and 2.0 on the index) and purepkg; needsnew
# needs verpkg >= 2; gpupkg 2.8.0 is on the index, 2.8.0+cu128 only on
# the extra index; winlib is for Windows only.
dep_wheel web appkg 1.0 verpkg "purepkg>=1.0" 'winlib; sys_platform == "win32"'
dep_wheel web verpkg 1.0
dep_wheel web verpkg 2.0
dep_wheel web needsnew 1.0 "verpkg>=2.0"
dep_wheel web gpupkg 2.8.0
dep_wheel extra gpupkg 2.8.0+cu128
sha() { sha256sum "$1" | cut -d" " -f1; }

# unh ARGS...: install with the test CPython, whose pip resolves.
unh() {
	inst --python "$SYSPY" "$@"
}

test_expect_success 'a pinned file without hashes installs, every byte checked against pip' '
	printf -- "--index-url %s\npurepkg==1.0\nplatpkg==2.0\ndatapkg==0.5\n" "$web_url" >pinned.txt &&
	unh --manifest pinned.txt --target "$TRASH/env" >out 2>err &&
	env_works "$TRASH/env" &&
	grep -q "warning: .pinned.txt. does not pin hashes: pip [0-9.]* of $(readlink -f "$SYSPY")" err &&
	grep -q "resolved it for CPython" err &&
	lock=$(sed -n "s/.*saved as the lock \([^ ]*\.pylock\.toml\).*/\1/p" err) &&
	test -f "$lock" && case "$lock" in "$TRASH/cache/resolved/pinned.txt-"*) ;; *) exit 1 ;; esac &&
	for w in $GOOD_WHEELS; do
		grep -q "$(sha "$TRASH/web/files/$w")" "$lock" &&
		grep -q "$(sha "$TRASH/web/files/$w")" "$TRASH/env/pylock.toml" || exit 1
	done
'
test_expect_success 'the PEP 668 Python is used as it is: pip ran a dry run only' '
	if test -f "$("$SYSPY" -c "import sysconfig; print(sysconfig.get_path(\"stdlib\"))")/EXTERNALLY-MANAGED"; then
		grep -q "(externally managed, PEP 668: --break-system-packages for the dry run only)" err
	fi &&
	! "$SYSPY" -c "import platpkg" 2>/dev/null
'
test_expect_success 'a loose file: ranges, markers, -r and -c, transitive pins' '
	printf "platpkg\n" >base.txt &&
	printf "verpkg<2\n" >constraints.txt &&
	printf -- "--index-url %s\n-r base.txt\n-c constraints.txt\nappkg>=1 ; python_version >= \"3.8\"\n" "$web_url" >loose.txt &&
	unh --manifest loose.txt --target "$TRASH/env2" >out 2>err &&
	"$TRASH/env2/bin/python" -c "import appkg, verpkg, purepkg, platpkg; assert verpkg.VERSION == \"1.0\"" &&
	! "$TRASH/env2/bin/python" -c "import winlib" 2>/dev/null &&
	expect_eq "[\"appkg\", \"platpkg\", \"purepkg\", \"verpkg\"]" \
		"$(json "$TRASH/env2/mlsetup-report.json" "sorted(w[\"name\"] for w in d[\"installed\"])")" &&
	expect_eq "[\"appkg\", \"platpkg\"]" \
		"$(json "$TRASH/env2/mlsetup-report.json" "sorted(w[\"name\"] for w in d[\"installed\"] if w[\"requested\"])")"
'
test_expect_success 'an extra index with local versions: the +cu128 file comes from there' '
	printf -- "--index-url %s\n--extra-index-url %s\ngpupkg==2.8.0+cu128\n" "$web_url" "$extra_url" >local.txt &&
	unh --manifest local.txt --target "$TRASH/env3" >out 2>err &&
	expect_eq "2.8.0+cu128" "$("$TRASH/env3/bin/python" -c "import gpupkg; print(gpupkg.VERSION)")" &&
	grep -q "url = \"http://127.0.0.1:$extra_port/files/gpupkg-2.8.0%2Bcu128-py3-none-any.whl\"" "$TRASH/env3/pylock.toml" &&
	expect_eq "$(sha "$TRASH/extra/files/gpupkg-2.8.0+cu128-py3-none-any.whl")" \
		"$(json "$TRASH/env3/mlsetup-report.json" "d[\"installed\"][0][\"sha256\"]")"
'
test_expect_success 'the saved lock installs the same files again' '
	lock=$(sed -n "s/.*saved as the lock \([^ ]*\.pylock\.toml\).*/\1/p" err) &&
	inst --manifest "$lock" --target "$TRASH/env4" >out 2>err &&
	expect_eq "$(json "$TRASH/env3/mlsetup-report.json" "[w[\"sha256\"] for w in d[\"installed\"]]")" \
		"$(json "$TRASH/env4/mlsetup-report.json" "[w[\"sha256\"] for w in d[\"installed\"]]")"
'
test_expect_success 'a conflict relays pip'"'"'s reason with the packages, and builds nothing' '
	printf -- "--index-url %s\nneedsnew\nverpkg<2.0\n" "$web_url" >conflict.txt &&
	expect_exit 1 unh --manifest conflict.txt --target "$TRASH/env5" 2>err &&
	grep -q "pip could not resolve .conflict.txt." err &&
	grep -q "needsnew 1.0 depends on verpkg>=2.0" err &&
	test ! -e "$TRASH/env5" && no_staging "$TRASH"
'
test_expect_success 'plan resolves with the interpreter it names and writes only to the cache' '
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache-plan" \
		--python "$SYSPY" --manifest loose.txt --target "$TRASH/penv" >out 2>err &&
	grep -q "verpkg-1.0-py3-none-any.whl" out &&
	grep -q "appkg-1.0-py3-none-any.whl" out &&
	ls "$TRASH/cache-plan/resolved/" | grep -q "^loose.txt-.*\.pylock\.toml$" &&
	grep -q "^lock      $TRASH/cache-plan/resolved/loose.txt-.*\.pylock\.toml (.loose.txt. does not pin hashes" out &&
	test ! -e "$TRASH/penv"
'
test_expect_success 'plan without the interpreter at hand says the files wait for pip' '
	XDG_DATA_HOME="$TRASH/nodata" "$MLSETUP" plan --sysroot "$SYSROOTS/empty" \
		--python-pins "$TRASH/pins.json" --cache-dir "$TRASH/cache-plan" \
		--manifest loose.txt >out 2>err &&
	grep -q "^files     not known yet: .loose.txt. does not pin hashes" out &&
	XDG_DATA_HOME="$TRASH/nodata" "$MLSETUP" plan --sysroot "$SYSROOTS/empty" \
		--python-pins "$TRASH/pins.json" --manifest loose.txt --json >plan.json 2>err &&
	expect_eq true "$(json plan.json "d[\"needs_resolution\"]")"
'
test_expect_success 'download of a file without hashes says how to pin it' '
	expect_exit 6 "$MLSETUP" download --sysroot "$SYSROOTS/empty" -r loose.txt -d dl \
		--python "$PYXY" --cache-dir "$TRASH/cache-dl" --no-progress 2>err &&
	grep -q "does not pin hashes" err && grep -q "mlsetup lock loose.txt" err
'
test_expect_success '--require-hashes and PIP_REQUIRE_HASHES refuse a file without hashes' '
	expect_exit 1 unh --manifest pinned.txt --require-hashes --target "$TRASH/env6" 2>err &&
	grep -q "pinned.txt'"'"' line 2: '"'"'purepkg'"'"' has no --hash" err &&
	grep -q "require-hashes" err &&
	PIP_REQUIRE_HASHES=1 expect_exit 1 unh --manifest pinned.txt --target "$TRASH/env6" 2>err &&
	grep -q "has no --hash" err && test ! -e "$TRASH/env6"
'
test_expect_success '-e, paths and VCS lines name the file and line and how to get a wheel' '
	printf "purepkg\n-e ./src\n" >editable.txt &&
	expect_exit 1 unh --manifest editable.txt --target "$TRASH/env7" 2>err &&
	grep -q "editable.txt'"'"' line 2: editable installs (-e) are not supported" err &&
	grep -q "pip wheel" err &&
	printf "purepkg\n\nmine @ git+https://example.org/mine.git\n" >vcs.txt &&
	printf "./dist/mine-1.0-py3-none-any.whl\n" >inner.txt &&
	printf "purepkg\n-r inner.txt\n" >outer.txt &&
	expect_exit 1 unh --manifest vcs.txt --target "$TRASH/env7" 2>err &&
	grep -q "vcs.txt'"'"' line 3: '"'"'mine'"'"' is a VCS requirement" err &&
	expect_exit 1 unh --manifest outer.txt --target "$TRASH/env7" 2>err &&
	grep -q "inner.txt'"'"' line 1: invalid requirement" err &&
	grep -q "find-links" err && test ! -e "$TRASH/env7"
'
# A pinned interpreter that ships pip, as python-build-standalone's do:
# the test archive with a pip wheel unpacked into it (the distribution's
# copy, or the one ensurepip bundles).
PIP_WHEEL=$(ls /usr/share/python-wheels/pip-*.whl \
	"$("$SYSPY" -c 'import ensurepip, os; print(os.path.dirname(ensurepip.__file__))' 2>/dev/null)"/_bundled/pip-*.whl \
	2>/dev/null | head -1)
[ -n "$PIP_WHEEL" ] || test_skip "no pip wheel on this machine to put into the test interpreter"
test_expect_success 'the default: the pinned interpreter resolves with the pip it ships' '
	a="cpython-$PYXY-pip-x86_64-unknown-linux-gnu-install_only.tar.gz" &&
	set -- $(PIP_WHEEL="$PIP_WHEEL" sh "$top/tests/fixtures/make_python_archive.sh" \
		"$TRASH/web/files/$a" "$SYSPY") &&
	v=$("$SYSPY" -c "import sys; print(\"%d.%d.%d\" % sys.version_info[:3])") &&
	cat >pins-pip.json <<-EOF &&
	{"schema": "mlsetup.python/1", "default": "$PYXY", "pythons": [
	 {"name": "cpython-$v-linux-x86_64-gnu-pip", "version": "$v", "os": "linux",
	  "arch": "x86_64", "libc": "gnu", "sha256": "$1", "size": $2,
	  "url": "https://example.org/python-build-standalone/releases/download/$a"}]}
	EOF
	XDG_DATA_HOME="$TRASH/data-pip" inst --python-pins pins-pip.json --manifest loose.txt \
		--target "$TRASH/env9" >out 2>err &&
	"$TRASH/env9/bin/python" -c "import appkg, verpkg" &&
	r="$TRASH/env9/mlsetup-report.json" &&
	expect_eq managed "$(json "$r" "d[\"python\"][\"source\"]")" &&
	grep -q "does not pin hashes: pip [0-9.]* of $TRASH/data-pip/mlsetup/pythons/cpython-$v-linux-x86_64-gnu-pip/python/bin/python$PYXY .*resolved it" err
'
test_expect_success 'an interpreter without pip is a clear error with the fix' '
	expect_exit 1 inst --manifest pinned.txt --target "$TRASH/env8" 2>err &&
	grep -q "has no pip" err &&
	grep -q "ensurepip" err && test ! -e "$TRASH/env8"
'
test_done
