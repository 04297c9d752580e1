#!/bin/sh
# The hostile-wheel rows where what matters is what gets installed (issue
# 13), through `mlsetup install` from the loopback index, each wheel built
# by tests/fixtures/make_hostile_wheels.py with the tests' interpreter:
#   - a member whose deflate stream goes on far past its declared 24 bytes
#     is refused with nothing written past them (the install runs with a
#     file size limit of 1 MiB; the stream holds 256 MiB);
#   - a data descriptor that disagrees with the central directory is
#     refused;
#   - a precompiled __pycache__ .pyc that differs from its source is not
#     installed, its RECORD rows are gone, and importing runs the source;
#   - a decomposed (NFD) file name installs as written and imports; two
#     names that are one after NFC are refused; names that differ only in
#     case install where the file system keeps case;
#   - an entry whose Info-ZIP Unicode Path extra field (0x7075) names
#     another file than its header - ../../../../tmp/evil.py, another file
#     of the wheel (local header only), another file with a stale CRC-32 -
#     is refused naming the entry and the other name; fields that agree
#     install;
#   - a .pth file that ends the interpreter makes compiling the bytecode
#     fail: the install stops before its commit, the environment that was
#     there is untouched;
#   - names Windows cannot create (CON.py, mod.py., x.py:ads, an entry
#     point named aux) install here: the Windows rules apply to Windows
#     environments only (t0931 refuses them under wine).
# A refused wheel exits 3 and leaves the environment that was there, a
# sentinel beside it and the cache as they were.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS
"$SYSPY" "$top/tests/fixtures/make_hostile_wheels.py" "$TRASH/hostile" >/dev/null
cp "$TRASH"/hostile/*.whl "$TRASH/web/files/"
echo "outside the target" >"$TRASH/sentinel"
SITE="lib/python$PYXY/site-packages"

test_expect_success 'setup: a complete environment exists' '
	inst --manifest m.txt --target "$TRASH/env" >/dev/null 2>&1 &&
	env_works "$TRASH/env" &&
	tree_hash "$TRASH/env" >"$TRASH/env.hash"
'

# with_fsize BYTES CMD...: runs CMD with the file size limit BYTES; a write
# past it fails with EFBIG instead of killing the process.
with_fsize() {
	python3 -c 'import os, resource, signal, sys
n = int(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (n, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
os.execvp(sys.argv[2], sys.argv[2:])' "$@"
}

# refused WHEEL SAYS [WRAPPER...]: installing WHEEL beside the good wheels
# exits 3 naming it and saying SAYS; nothing changed.
refused() {
	w=$1 says=$2
	shift 2
	wheel_manifest "$TRASH/h.txt" $GOOD_WHEELS "$w" &&
	expect_exit 3 "$@" "$MLSETUP" install --sysroot "$SYSROOTS/empty" \
		--cache-dir "$TRASH/cache" --python-pins "$TRASH/pins.json" \
		--python-mirror "http://127.0.0.1:$web_port/files" --no-progress --retries 1 \
		--connect-timeout 2 --low-speed-time 2 \
		--manifest h.txt --target "$TRASH/env" >out 2>err &&
	grep -q "$w" err && grep -q "$says" err &&
	expect_eq "$(cat "$TRASH/env.hash")" "$(tree_hash "$TRASH/env")" &&
	expect_eq "outside the target" "$(cat "$TRASH/sentinel")" &&
	no_staging "$TRASH" && no_parts &&
	test -z "$(find "$TRASH/cache/unpacked" -maxdepth 3 -name "*.tmp-*")"
}

test_expect_success 'a deflate stream past its declared size is refused, nothing written past it' '
	refused overlong-1.0-py3-none-any.whl "expands past its declared size of 24 bytes" \
		with_fsize 1048576
'
test_expect_success 'a data descriptor that disagrees with the central directory is refused' '
	refused descmismatch-1.0-py3-none-any.whl "data descriptor that disagrees"
'
test_expect_success 'two names that are one after NFC normalization are refused' '
	refused nfcpkg-1.0-py3-none-any.whl "one name after Unicode NFC normalization"
'
test_expect_success 'a shipped .pyc that does not match RECORD is refused' '
	refused pycbad-1.0-py3-none-any.whl "does not match its RECORD hash"
'
upath_says="has an Info-ZIP Unicode Path extra field (0x7075) in its"
test_expect_success 'a Unicode Path field naming ../../../../tmp/evil.py is refused, both names said' '
	refused upathevil-1.0-py3-none-any.whl \
		"entry .upathevil/__init__.py. $upath_says central header that names .\.\./\.\./\.\./\.\./tmp/evil\.py." &&
	# What Info-ZIP lists is the other name: the fixture bites.
	unzip -l web/files/upathevil-1.0-py3-none-any.whl >listed &&
	grep -q "\.\./\.\./\.\./\.\./tmp/evil\.py" listed
'
test_expect_success 'a Unicode Path field (local header) naming another file of the wheel is refused' '
	refused upathother-1.0-py3-none-any.whl \
		"entry .upathother/__init__.py. $upath_says local header that names .upathother/other\.py."
'
test_expect_success 'a Unicode Path field with a stale CRC-32 naming another file is refused' '
	refused upathstale-1.0-py3-none-any.whl \
		"entry .upathstale/__init__.py. $upath_says central header that names .upathstale/stale\.py."
'
test_expect_success 'Unicode Path fields that name their own entries install' '
	wheel_manifest "$TRASH/u.txt" $GOOD_WHEELS upathok-1.0-py3-none-any.whl &&
	inst --manifest u.txt --target "$TRASH/envu" >out 2>err &&
	expect_eq agreed "$("$TRASH/envu/bin/python" -c "import upathok; print(upathok.VALUE)")"
'
test_expect_success 'names Windows cannot create install here (the Windows rules are for Windows)' '
	wheel_manifest "$TRASH/w.txt" $GOOD_WHEELS winconpkg-1.0-py3-none-any.whl \
		windotpkg-1.0-py3-none-any.whl winadspkg-1.0-py3-none-any.whl \
		winauxpkg-1.0-py3-none-any.whl winokpkg-1.0-py3-none-any.whl &&
	inst --manifest w.txt --target "$TRASH/envw" >out 2>err &&
	test -f "$TRASH/envw/$SITE/winconpkg/CON.py" &&
	test -f "$TRASH/envw/$SITE/windotpkg/mod.py." &&
	test -f "$TRASH/envw/$SITE/winadspkg/x.py:ads" &&
	test -x "$TRASH/envw/bin/aux" && test -x "$TRASH/envw/bin/auxiliary"
'

test_expect_success 'the wheel'"'"'s own .pyc is not installed: the source runs' '
	wheel_manifest "$TRASH/p.txt" $GOOD_WHEELS pycpkg-1.0-py3-none-any.whl &&
	PYTHONDONTWRITEBYTECODE=1 inst --manifest p.txt --target "$TRASH/envp" \
		--no-compile-bytecode >out 2>err &&
	! test -e "$TRASH/envp/$SITE/pycpkg/__pycache__" &&
	! grep -q "\.pyc" "$TRASH/envp/$SITE/pycpkg-1.0.dist-info/RECORD" &&
	grep -q "^pycpkg/__init__.py,sha256=" "$TRASH/envp/$SITE/pycpkg-1.0.dist-info/RECORD" &&
	expect_eq source "$("$TRASH/envp/bin/python" -c "import pycpkg; print(pycpkg.VALUE)")" &&
	# Unpacked as it is, the wheel runs its bytecode: the fixture bites.
	mkdir plain && (cd plain && unzip -q ../web/files/pycpkg-1.0-py3-none-any.whl) &&
	expect_eq bytecode "$(cd plain && "$SYSPY" -c "import pycpkg; print(pycpkg.VALUE)")"
'
test_expect_success 'with --compile-bytecode the .pyc is compiled from the installed source' '
	PYTHONDONTWRITEBYTECODE=1 inst --manifest p.txt --target "$TRASH/envc" --compile-bytecode \
		--no-verify >out 2>err &&
	test -n "$(ls "$TRASH/envc/$SITE/pycpkg/__pycache__/")" &&
	expect_eq source "$("$TRASH/envc/bin/python" -c "import pycpkg; print(pycpkg.VALUE)")"
'
# An install that verifies compiles first (its import check then reads
# bytecode), in the staging tree, naming the paths the files have once in
# place; with --no-verify nothing is compiled.
test_expect_success 'an install that verifies compiles the bytecode, for the final paths' '
	PYTHONDONTWRITEBYTECODE=1 inst --manifest p.txt --target "$TRASH/envb" >out 2>err &&
	pyc=$(ls "$TRASH/envb/$SITE/pycpkg/__pycache__/"__init__.*.pyc) &&
	"$SYSPY" -c "import marshal, sys; print(marshal.loads(open(sys.argv[1], \"rb\").read()[16:]).co_filename)" \
		"$pyc" >named &&
	expect_eq "$TRASH/envb/$SITE/pycpkg/__init__.py" "$(cat named)" &&
	expect_eq source "$("$TRASH/envb/bin/python" -c "import pycpkg; print(pycpkg.VALUE)")" &&
	PYTHONDONTWRITEBYTECODE=1 inst --manifest p.txt --target "$TRASH/envnv" --no-verify >out 2>err &&
	! test -e "$TRASH/envnv/$SITE/pycpkg/__pycache__"
'
test_expect_success 'a file that does not compile to bytecode is said and runs from source' '
	wheel_manifest "$TRASH/p2.txt" $GOOD_WHEELS py2pkg-1.0-py3-none-any.whl &&
	PYTHONDONTWRITEBYTECODE=1 inst --manifest p2.txt --target "$TRASH/envp2" -v >out 2>err &&
	grep -q "1 file did not compile to bytecode and will run from source (first: [^ ]*/py2pkg/legacy.py: SyntaxError: Missing parentheses .* (line 1))" err &&
	test -n "$(ls "$TRASH/envp2/$SITE/py2pkg/__pycache__/"__init__.*.pyc)" &&
	expect_eq fine "$("$TRASH/envp2/bin/python" -c "import py2pkg; print(py2pkg.VALUE)")"
'
test_expect_success 'bytecode that cannot be compiled at all fails the install before the commit' '
	wheel_manifest "$TRASH/pc.txt" $GOOD_WHEELS pthcrash-1.0-py3-none-any.whl &&
	tree_hash "$TRASH/env" >"$TRASH/env.before" &&
	(
		export MLSETUP_TEST_PTH_EXIT=1 &&
		expect_exit 1 inst --manifest pc.txt --target "$TRASH/env" >out 2>err
	) &&
	grep -q "compiling the bytecode failed (status 7): the environment.s interpreter ended without a word" err &&
	grep -q "^hint: .*a .pth file or sitecustomize.*nothing was installed" err &&
	tree_hash "$TRASH/env" >"$TRASH/env.after" &&
	cmp -s "$TRASH/env.before" "$TRASH/env.after" &&
	! test -e "$TRASH/env/$SITE/pthcrash.pth" &&
	env_works "$TRASH/env" &&
	test -z "$(ls -a "$TRASH" | grep -i "stag\|\.tmp")" &&
	inst --manifest pc.txt --target "$TRASH/env" >out 2>err &&
	expect_eq ok "$("$TRASH/env/bin/python" -c "import pthcrash; print(pthcrash.VALUE)")"
'
test_expect_success 'a decomposed (NFD) file name installs as written and imports' '
	wheel_manifest "$TRASH/n.txt" $GOOD_WHEELS nfdpkg-1.0-py3-none-any.whl &&
	inst --manifest n.txt --target "$TRASH/envn" >out 2>err &&
	nfd=$(printf "cafe\314\201.py") &&
	test -f "$TRASH/envn/$SITE/nfdpkg/$nfd" &&
	grep -q "^nfdpkg/$nfd,sha256=" "$TRASH/envn/$SITE/nfdpkg-1.0.dist-info/RECORD" &&
	expect_eq nfd "$("$TRASH/envn/bin/python" -c "import importlib; print(importlib.import_module(\"nfdpkg.cafe\u0301\").VALUE)")"
'
test_expect_success 'names that differ only in case install where the file system keeps case' '
	touch "$TRASH/case-probe" && folds=no &&
	if test -e "$TRASH/CASE-PROBE"; then folds=yes; fi &&
	wheel_manifest "$TRASH/c.txt" $GOOD_WHEELS casepkg-1.0-py3-none-any.whl &&
	if test $folds = yes; then
		expect_exit 3 inst --manifest c.txt --target "$TRASH/envk" >out 2>err &&
		grep -q "case folding" err
	else
		inst --manifest c.txt --target "$TRASH/envk" >out 2>err &&
		expect_eq Foo "$("$TRASH/envk/bin/python" -c "import casepkg.Foo as m; print(m.VALUE)")" &&
		expect_eq foo "$("$TRASH/envk/bin/python" -c "import casepkg.foo as m; print(m.VALUE)")"
	fi
'
test_done
