#!/bin/sh
# mlsetup bundle: a directory with the binary, every candidate manifest,
# their wheels as a static PEP 503 index, the interpreter archive and an
# install.sh. Bundled from the loopback index, which is then stopped: the
# bundle installs with no index reachable (with its interpreter archive, or
# with --python PATH), refuses damaged bytes, and the same directory served
# by a plain static web server is an index for `mlsetup install`.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m1.txt" purepkg-1.0-py3-none-any.whl "$PLATWHL"
wheel_manifest "$TRASH/m2.txt" purepkg-1.0-py3-none-any.whl datapkg-0.5-py3-none-any.whl
web_pid=${MIRROR_PIDS##* }

# bundle ARGS...: mlsetup bundle of the two manifests from the loopback index.
bundle() {
	bundle_web --manifest m1.txt --manifest m2.txt "$@"
}

test_expect_success 'bundle writes the binary, manifests, wheels, index and interpreter' '
	bundle -o B >out 2>err &&
	test -x B/mlsetup && test -x B/install.sh &&
	same_file "$MLSETUP" B/mlsetup &&
	same_file m1.txt B/manifests/m1.txt && same_file m2.txt B/manifests/m2.txt &&
	for w in $GOOD_WHEELS; do same_file "web/files/$w" "B/files/$w" || exit 1; done &&
	arch=$(ls web/files | grep "^cpython-") &&
	same_file "web/files/$arch" "B/python/$arch" &&
	same_file pins.json B/python/pins.json &&
	grep -q "bundle $TRASH/B: 2 plans for linux-x86_64, 3 wheels" out &&
	no_staging "$TRASH"
'
# make release-check runs this against the release binary: no warning there.
test_expect_success 'a development build is bundled with a warning, a release build without' '
	if "$MLSETUP" --version | grep -q "^  build  *release "; then
		! grep -q "not a release build" err &&
		expect_eq true "$(json B/bundle.json "d[\"mlsetup\"][\"release\"]")"
	else
		grep -q "warning: the bundled mlsetup is not a release build" err &&
		expect_eq false "$(json B/bundle.json "d[\"mlsetup\"][\"release\"]")"
	fi
'
test_expect_success 'the static index lists each project and links each file by sha256' '
	for p in purepkg platpkg datapkg; do grep -q "href=\"$p/\"" B/simple/index.html || exit 1; done &&
	h=$(sha256sum B/files/purepkg-1.0-py3-none-any.whl | cut -d" " -f1) &&
	grep -q "href=\"../../files/purepkg-1.0-py3-none-any.whl#sha256=$h\"" \
		B/simple/purepkg/index.html &&
	expect_eq 1 "$(grep -c "<a " B/simple/purepkg/index.html)" &&
	grep -q "href=\"datapkg-0.5-py3-none-any.whl#sha256=" B/files/index.html
'
test_expect_success 'bundle.json records every plan with the sha256 of each file' '
	expect_eq mlsetup.bundle/1 "$(json B/bundle.json "d[\"schema\"]")" &&
	expect_eq linux-x86_64 "$(json B/bundle.json "d[\"platform\"]")" &&
	expect_eq "$PYXY" "$(json B/bundle.json "d[\"python\"]")" &&
	json B/bundle.json "\" \".join(p[\"manifest\"] + \":\" + f[\"path\"] for p in d[\"plans\"] for f in p[\"files\"])" >plans &&
	expect_eq "m1.txt:files/purepkg-1.0-py3-none-any.whl m1.txt:files/$PLATWHL m2.txt:files/purepkg-1.0-py3-none-any.whl m2.txt:files/datapkg-0.5-py3-none-any.whl" "$(cat plans)" &&
	json B/bundle.json "\"\\n\".join(f[\"sha256\"] + \"  B/\" + f[\"path\"] for p in d[\"plans\"] for f in p[\"files\"])" >sums &&
	sha256sum -c sums &&
	expect_eq "$(sha256sum B/mlsetup | cut -d" " -f1)" "$(json B/bundle.json "d[\"mlsetup\"][\"sha256\"]")"
'
test_expect_success 'with the index stopped, install.sh installs from the bundle alone' '
	kill "$web_pid" && sleep 0.2 &&
	! curl -s -o /dev/null "$web_url" &&
	binst B --target "$TRASH/env" >out 2>err &&
	env_works "$TRASH/env" &&
	"$TRASH/env/bin/python" -c "import purepkg, platpkg" &&
	r="$TRASH/env/mlsetup-report.json" &&
	expect_eq ok "$(json "$r" "d[\"status\"]")" &&
	case "$("$TRASH/env/bin/python" -c "import sys; print(sys.base_prefix)")" in
	"$TRASH/data/mlsetup/pythons/"*) ;; *) exit 1 ;; esac
'
test_expect_success 'install.sh --python PATH uses an interpreter of the machine' '
	binst B --python "$SYSPY" --target "$TRASH/env2" >out 2>err &&
	"$TRASH/env2/bin/python" -c "import purepkg, platpkg" &&
	expect_eq "$("$SYSPY" -c "import sys; print(sys.base_prefix)")" \
		"$("$TRASH/env2/bin/python" -c "import sys; print(sys.base_prefix)")"
'
test_expect_success 'install.sh --manifest picks another bundled manifest' '
	binst B --manifest "$TRASH/B/manifests/m2.txt" --target "$TRASH/env3" >out 2>err &&
	"$TRASH/env3/bin/python" -c "import purepkg, datapkg" &&
	! "$TRASH/env3/bin/python" -c "import platpkg" 2>/dev/null
'
test_expect_success 'a damaged binary is refused before anything runs' '
	cp -R B Bbin && printf x >>Bbin/mlsetup &&
	expect_exit 1 binst Bbin --target "$TRASH/env4" 2>err &&
	grep -q "Bbin/mlsetup.* does not match the bundle" err &&
	test ! -e "$TRASH/env4"
'
test_expect_success 'a damaged wheel is refused by mlsetup (exit 3), nothing installed' '
	cp -R B Bwhl && rm -rf "$TRASH/icache" &&
	python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,\"rb\").read()); b[len(b)//2]^=1; open(p,\"wb\").write(b)" \
		Bwhl/files/purepkg-1.0-py3-none-any.whl &&
	expect_exit 3 binst Bwhl --target "$TRASH/env5" 2>err &&
	test ! -e "$TRASH/env5" && no_staging "$TRASH"
'
test_expect_success 'an incomplete install.sh runs nothing' '
	cp -R B Bcut && head -c 1500 B/install.sh >Bcut/install.sh &&
	! sh Bcut/install.sh --target "$TRASH/env6" 2>err &&
	test ! -e "$TRASH/env6"
'
test_expect_success 'the bundle served by a static web server is an index for install' '
	{ python3 - "$TRASH/B" "$TRASH/http.port" 2>/dev/null <<-EOF &
	import functools, http.server, os, sys
	h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
	s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
	open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
	os.rename(sys.argv[2] + ".tmp", sys.argv[2])
	s.serve_forever()
	EOF
	} &&
	pid=$! &&
	test_when_finished "kill $pid" &&
	url="http://127.0.0.1:$(port_of http.port)" &&
	"$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/hcache" --no-progress \
		--index-url "$url/simple/" --python-mirror "$url/python" \
		--python-pins B/python/pins.json --manifest B/manifests/m1.txt \
		--target "$TRASH/env7" >out 2>err &&
	"$TRASH/env7/bin/python" -c "import purepkg, platpkg" &&
	expect_eq 2 "$(json "$TRASH/env7/mlsetup-report.json" "d[\"counters\"][\"downloaded_files\"]")"
'
test_expect_success 'a bundle needs a new or empty directory' '
	mkdir -p full && : >full/x &&
	expect_exit 2 bundle --offline -o full 2>err &&
	grep -q "exists and is not an empty directory" err &&
	mkdir empty && bundle --offline -o empty >/dev/null 2>&1 && test -x empty/install.sh
'
test_expect_success 'without the interpreter archive the bundle warns, and install needs --python' '
	bundle --offline --cache-dir "$TRASH/ncache" -o Bnopy \
		--find-links "$TRASH/wheels" >out 2>err &&
	grep -q "warning: the bundle holds no interpreter for CPython $PYXY" err &&
	test ! -d Bnopy/python/cpython* &&
	expect_exit 1 binst Bnopy --target "$TRASH/env8" 2>err &&
	grep -q "no interpreter archive for CPython $PYXY.*--python PATH" err &&
	binst Bnopy --python "$SYSPY" --target "$TRASH/env8" >out 2>err &&
	"$TRASH/env8/bin/python" -c "import purepkg, platpkg"
'
test_expect_success 'a failed bundle leaves nothing behind' '
	expect_exit 1 bundle --offline --cache-dir "$TRASH/ecache" -o Bfail 2>err &&
	test ! -e Bfail && no_staging "$TRASH"
'
test_expect_success 'a platform no manifest has wheels for is exit 6' '
	expect_exit 6 "$MLSETUP" bundle --offline --sysroot "$SYSROOTS/empty" \
		--cache-dir "$TRASH/bcache" --python-pins "$TRASH/pins.json" --manifest m1.txt \
		--python "$PYXY" --no-progress --platform linux-aarch64 -o Barm 2>err &&
	grep -q "no manifest has wheels for CPython $PYXY on linux-aarch64" err &&
	test ! -e Barm
'
test_expect_success 'without --manifest the shipped manifests are the candidates' '
	# offline, and the wheels of the shipped manifests are not in this cache: exit 1
	expect_exit 1 "$MLSETUP" bundle --offline --sysroot "$SYSROOTS/empty" \
		--cache-dir "$TRASH/scache" --no-progress --python 3.12 -o Bship >out 2>err &&
	grep -q "bundling requirements.txt for CPython 3.12" out &&
	grep -q "accelerate-1.2.1-py3-none-any.whl" err && test ! -e Bship
'
test_done
