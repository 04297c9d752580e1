#!/bin/sh
# mlsetup download: fetches exactly the plan's wheels from a loopback index
# into DIR with an index.html, reuses the verified cache on the next run,
# revalidates index pages with conditional requests, and reports JSON.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 300000
make_wheel web beta 1.0 40000
make_wheel web gamma 1.0 1000
make_wheel web unrelated 1.0 1000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta gamma
A=$(wheel_file alpha 1.0)
B=$(wheel_file beta 1.0)
G=$(wheel_file gamma 1.0)

test_expect_success 'downloads exactly the planned files, verified, into DIR' '
	dl -r m.txt -d out >stdout 2>stderr &&
	ls out | sort >got &&
	printf "%s\n" "$A" "$B" "$G" index.html | sort >want &&
	cmp want got &&
	same_file out/$A web/files/$A && same_file out/$B web/files/$B &&
	same_file out/$G web/files/$G &&
	grep -q "^saved out/$A" stdout &&
	grep -q "3 files" stdout &&
	expect_eq 1 "$(requests web /files/$A)" &&
	no_parts
'
test_expect_success 'the cache holds each file under its sha256' '
	for f in $A $B $G; do
		h=$(sha256sum web/files/$f | cut -d" " -f1) &&
		test -f cache/blobs/sha256/$(echo $h | cut -c1-2)/$h || return 1
	done
'
test_expect_success 'DIR/index.html is a PEP 503 page with sha256 fragments' '
	python3 - out/index.html "$TRASH/out" <<-EOF
	import hashlib, os, re, sys
	page = open(sys.argv[1]).read()
	links = re.findall(r"<a href=\"([^\"#]+)#sha256=([0-9a-f]{64})\">([^<]+)</a>", page)
	assert len(links) == 3, links
	for href, h, text in links:
	    assert href == text
	    data = open(os.path.join(sys.argv[2], href), "rb").read()
	    assert hashlib.sha256(data).hexdigest() == h, href
	EOF
'
if python3 -m pip --version >/dev/null 2>&1; then
	test_expect_success 'pip accepts DIR/index.html as a --find-links page' '
		PIP_CONFIG_FILE=/dev/null python3 -m pip download -q --no-deps --no-index \
			--disable-pip-version-check --no-cache-dir \
			--find-links out/index.html -d pipout alpha==1.0 beta==1.0 &&
		same_file pipout/$A web/files/$A && same_file pipout/$B web/files/$B
	'
fi
test_expect_success 'a second run uses the cache and fetches nothing' '
	faults web "{}" &&
	dl -r m.txt -d out2 --json >j &&
	expect_eq mlsetup.download/1 "$(json j "d[\"schema\"]")" &&
	expect_eq true "$(json j "d[\"ok\"]")" &&
	expect_eq 3 "$(json j "d[\"totals\"][\"from_cache\"]")" &&
	expect_eq 0 "$(json j "d[\"totals\"][\"bytes_downloaded\"]")" &&
	expect_eq 0 "$(requests web /files/$A)" &&
	expect_eq 0 "$(requests web /simple/alpha/)" &&
	same_file out2/$A web/files/$A
'
test_expect_success 'index pages are revalidated with conditional requests (304)' '
	rm -rf cache/blobs &&
	faults web "{}" &&
	dl -r m.txt -d out3 >/dev/null &&
	expect_eq 1 "$(requests web /simple/alpha/)" &&
	expect_eq 1 "$(requests "web" "/simple/alpha/ 304")" &&
	same_file out3/$A web/files/$A
'
test_expect_success 'JSON names every file with its hash, size and source' '
	rm -rf cache &&
	dl -r m.txt -d out4 --json >j &&
	expect_eq 3 "$(json j "len(d[\"files\"])")" &&
	expect_eq "$(wc -c <web/files/$A | tr -d " ")" "$(json j "[f[\"size\"] for f in d[\"files\"] if f[\"name\"] == \"alpha\"][0]")" &&
	expect_eq ok "$(json j "d[\"files\"][0][\"status\"]")" &&
	json j "d[\"files\"][0][\"url\"]" | grep -q "^http://127.0.0.1:$web_port/files/" &&
	expect_eq "$(sha256sum web/files/$A | cut -d" " -f1)" "$(json j "[f[\"sha256\"] for f in d[\"files\"] if f[\"name\"] == \"alpha\"][0]")"
'
test_expect_success '--json keeps stdout to the JSON document' '
	dl -r m.txt -d out5 --json >j 2>/dev/null &&
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" j
'
test_expect_success 'files in DIR are placed whole, by link or copy' '
	test "$(stat -c %h out/$A)" -ge 1 &&
	! ls -a out | grep -q "\.tmp$"
'
test_expect_success '--platform plans for another machine' '
	sed "s/platforms = linux-x86_64/platforms = linux-x86_64 linux-aarch64/" m.txt >ma.txt &&
	dl -r ma.txt -d outa --platform linux-aarch64 --json >j &&
	expect_eq linux-aarch64 "$(json j "d[\"platform\"]")" &&
	same_file outa/$A web/files/$A
'
test_expect_success 'usage errors: -r and -d are required, bad numbers refused' '
	expect_exit 2 "$MLSETUP" download -d out 2>err && grep -q "\-r MANIFEST is required" err &&
	expect_exit 2 "$MLSETUP" download -r m.txt 2>err && grep -q "\-d DIR is required" err &&
	expect_exit 2 "$MLSETUP" download -r m.txt -d o --jobs 0 2>err &&
	expect_exit 2 "$MLSETUP" download -r m.txt -d o --platform nope 2>err &&
	grep -q "OS-ARCH" err
'
test_expect_success 'a missing manifest is an error naming it' '
	expect_exit 1 dl -r nosuch.txt -d out 2>err &&
	grep -q "nosuch.txt" err
'
test_expect_success 'a project the index does not have is reported by name' '
	mkdir -p elsewhere/files && make_wheel elsewhere zeta 1.0 100 &&
	make_manifest m3.txt "$web_url" "$TRASH/elsewhere/files" zeta &&
	expect_exit 1 dl -r m3.txt -d out6 2>err &&
	grep -q "zeta" err && grep -q "hint:" err &&
	no_parts
'
test_expect_success 'index lookups share connections: far fewer than one per project' '
	projs="" &&
	for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do
		make_wheel web many$i 1.0 500 && projs="$projs many$i" || exit 1
	done &&
	make_manifest "$TRASH/many.txt" "$web_url" "$TRASH/web/files" $projs &&
	curl -s -X POST "http://127.0.0.1:$web_port/_reset" >/dev/null &&
	dl -r many.txt -d outmany --jobs 1 --cache-dir "$TRASH/manycache" >/dev/null 2>&1 &&
	expect_eq 1 "$(requests web /simple/many01/)" &&
	expect_eq 1 "$(requests web /simple/many24/)" &&
	n=$(requests web /_connections) &&
	echo "connections: $n" &&
	test "$n" -le 12
'
test_done
