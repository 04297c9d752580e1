#!/bin/sh
# The loopback index in PyTorch's layout, for choosing a torch build: the
# synthetic builds of tests/fixtures/make_torch_layout.py (fatbins from
# tests/fixtures/fatbin/make_torch_fatbins.sh) laid out by
# tests/mirror/torch_layout.py (testlib.sh: torch_layout) as the package
# index (/simple/) plus one PEP 503 index per backend (/whl/<backend>/),
# each listing its own +<backend> files; `mlsetup audit` reads the code each
# fixture build was made with; pip, pointed at one backend's index, gets
# that backend's build. No plan logic: the layout only.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

torch_layout web

# files URL: the file names a PEP 503 page links, sorted, one per line.
files() {
	curl -sf "$1" | python3 -c '
import html.parser, sys, urllib.parse
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            print(urllib.parse.unquote(href.split("#")[0].rsplit("/", 1)[-1]))
P().feed(sys.stdin.read())' | sort
}

# built WHEEL: "backend cuda sass / ptx" of a torch wheel, as mlsetup audit reads it.
built() {
	"$MLSETUP" audit --json "$TRASH/web/wheels/$1" |
		python3 -c 'import json, sys
b = json.load(sys.stdin)["torch_wheels"][0]["torch_build"]
print(b["backend"], b["cuda"], " ".join(b["sass"]) or "none", "/", " ".join(b["ptx"]) or "none")'
}

L=cp312-cp312-manylinux_2_28_x86_64.whl
W=cp312-cp312-win_amd64.whl

test_expect_success 'the default index lists the package index'"'"'s builds, each backend its own +<backend> files' '
	printf "%s\n" "torch-8.5.0-$L" "torch-9.0.0-$L" "torch-9.0.0-$W" >want &&
	files "${web_url}torch/" >got &&
	diff -u want got &&
	printf "%s\n" "torch-8.5.0+cu126-$L" "torch-9.0.0+cu126-$L" >want &&
	files "${web_torch_url}cu126/torch/" >got &&
	diff -u want got &&
	printf "%s\n" "torch-9.0.0+cu130-$L" "torch-9.0.0+cu130-$W" >want &&
	files "${web_torch_url}cu130/torch/" >got &&
	diff -u want got &&
	printf "%s\n" "torch-8.5.0+cpu-$L" "torch-9.0.0+cpu-$L" "torch-9.0.0+cpu-$W" >want &&
	files "${web_torch_url}cpu/torch/" >got &&
	diff -u want got &&
	printf "%s\n" "torch-8.5.0+cu128-$L" "torch-9.0.0+cu128-$W" >want &&
	files "${web_torch_url}cu128/torch/" >got &&
	diff -u want got &&
	printf "%s\n" "torchvision-0.85.0+cu126-$L" "torchvision-0.90.0+cu126-$L" >want &&
	files "${web_torch_url}cu126/torchvision/" >got &&
	diff -u want got &&
	expect_eq "torch torchaudio torchvision" "$(curl -sf "${web_torch_url}cu126/" | grep -o ">torch[a-z]*<" | tr -d "<>" | tr "\n" " " | sed "s/ $//")"
'
test_expect_success 'a backend without builds is 404, a page without its slash is redirected' '
	expect_eq 404 "$(curl -s -o /dev/null -w "%{http_code}" "${web_torch_url}cu124/torch/")" &&
	expect_eq 404 "$(curl -s -o /dev/null -w "%{http_code}" "${web_torch_url}cu126/nothing/")" &&
	expect_eq 404 "$(curl -s --path-as-is -o /dev/null -w "%{http_code}" "${web_torch_url}../files/torch/")" &&
	expect_eq "301 ${web_torch_url}cu126/" "$(curl -s -o /dev/null -w "%{http_code} %{redirect_url}" "${web_torch_url}cu126")" &&
	expect_eq 301 "$(curl -s -o /dev/null -w "%{http_code}" "${web_torch_url}cu126/Torch/")"
'
test_expect_success 'every link of a backend page resolves to its file, with the hash the page gives' '
	for page in cu126/torch/ cu130/torch/ cpu/torchaudio/ "$web_url"torch/; do
		case $page in http*) url=$page ;; *) url=$web_torch_url$page ;; esac &&
		curl -sf "$url" >page.html &&
		python3 -c "
import html.parser, sys, urllib.parse
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get(\"href\") if tag == \"a\" else None
        if href:
            link, _, frag = href.partition(\"#\")
            print(urllib.parse.urljoin(sys.argv[1], link), frag.split(\"=\")[1])
P().feed(open(\"page.html\").read())" "$url" >links &&
		test -s links &&
		while read -r link sha; do
			curl -sf -o f.whl "$link" &&
			expect_eq "$sha" "$(sha256sum f.whl | cut -d" " -f1)" || return 1
		done <links || return 1
	done &&
	json_page=$(curl -sf -H "Accept: application/vnd.pypi.simple.v1+json" "${web_torch_url}cu126/torch/") &&
	expect_eq "../torch-9.0.0%2Bcu126-$L" "$(echo "$json_page" | python3 -c "import json, sys; print(json.load(sys.stdin)[\"files\"][1][\"url\"])")"
'
test_expect_success 'mlsetup audit of each fixture build gives the code it was made with' '
	expect_eq "cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-9.0.0-$L")" &&
	expect_eq "cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-8.5.0-$L")" &&
	expect_eq "cpu None none / none" "$(built "torch-9.0.0-$W")" &&
	expect_eq "cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 / none" "$(built "torch-9.0.0+cu126-$L")" &&
	expect_eq "cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 / none" "$(built "torch-8.5.0+cu126-$L")" &&
	expect_eq "cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-9.0.0+cu130-$L")" &&
	expect_eq "cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-9.0.0+cu130-$W")" &&
	expect_eq "cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-9.0.0+cu128-$W")" &&
	expect_eq "cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 / none" "$(built "torch-8.5.0+cu128-$L")" &&
	expect_eq "cpu None none / none" "$(built "torch-9.0.0+cpu-$L")" &&
	expect_eq "cpu None none / none" "$(built "torch-9.0.0+cpu-$W")" &&
	expect_eq "cpu None none / none" "$(built "torch-8.5.0+cpu-$L")" &&
	expect_eq 12 "$(ls "$TRASH"/web/wheels/torch-*.whl | wc -l | tr -d " ")"
'
test_expect_success 'the builds differ where the simulated GPUs need them to' '
	w=$TRASH/web/wheels &&
	expect_exit 5 "$MLSETUP" audit --arch 7.0 "$w/torch-9.0.0-$L" >out &&
	grep -q "sm_70: does NOT run" out &&
	grep -q "needs driver ≥ 580.65.06 (Linux)" out &&
	"$MLSETUP" audit --arch 7.0 --arch 6.1 "$w/torch-9.0.0+cu126-$L" >out &&
	grep -q "needs driver ≥ 560.28.03 (Linux)" out &&
	expect_exit 5 "$MLSETUP" audit --arch 12.0 "$w/torch-9.0.0+cu126-$L" >/dev/null &&
	expect_exit 5 "$MLSETUP" audit --arch 6.1 "$w/torch-8.5.0-$L" >/dev/null &&
	"$MLSETUP" audit --arch 7.0 --arch 12.0 "$w/torch-8.5.0-$L" >out &&
	grep -q "needs driver ≥ 570.26 (Linux)" out &&
	"$MLSETUP" audit --arch 12.0 "$w/torch-9.0.0+cu128-$W" >out &&
	grep -q "torch_cuda.dll: SASS sm_70" out &&
	grep -q "needs driver ≥ 570.65 (Windows)" out &&
	"$MLSETUP" audit --arch 12.0 "$w/torch-9.0.0-$W" >out &&
	grep -q "CPU-only build (CUDA none)" out
'
# pip as a user of PyTorch's indexes runs it: --index-url BASE/<backend>/.
pipdl() {
	python3 -m pip download --disable-pip-version-check --no-cache-dir --quiet \
		--python-version 3.12 --platform manylinux_2_28_x86_64 --only-binary=:all: "$@"
}
test_expect_success 'pip, pointed at whl/cu126, downloads torch==9.0.0+cu126 from it; a companion pulls its torch' '
	pipdl --no-deps --index-url "${web_torch_url}cu126/" -d dl "torch==9.0.0+cu126" &&
	expect_eq "torch-9.0.0+cu126-$L" "$(ls dl)" &&
	cmp dl/"torch-9.0.0+cu126-$L" "$TRASH/web/wheels/torch-9.0.0+cu126-$L" &&
	pipdl --index-url "${web_torch_url}cu126/" -d dl2 "torchvision==0.85.0+cu126" &&
	expect_eq "torch-8.5.0+cu126-$L torchvision-0.85.0+cu126-$L" "$(ls dl2 | tr "\n" " " | sed "s/ $//")" &&
	test_must_fail pipdl --no-deps --index-url "$web_url" -d dl3 "torch==9.0.0+cu126" 2>err &&
	grep -q "No matching distribution found for torch==9.0.0+cu126" err &&
	pipdl --no-deps --index-url "$web_url" -d dl4 torch &&
	expect_eq "torch-9.0.0-$L" "$(ls dl4)"
'
test_expect_success 'make_torch_builds.py over the default index: its builds audited, 9.0.0'"'"'s variants from its release table (no release notes know these versions)' '
	python3 "$top/manifests/make_torch_builds.py" --mlsetup "$MLSETUP" --index-url "$web_url" \
		--min-version 8 -o t.json 2>err &&
	python3 -c "
import json, sys
for b in json.load(open(sys.argv[1]))[\"builds\"]:
    print(b[\"version\"], b[\"index\"], b[\"backend\"], b[\"cuda\"], \" \".join(b[\"sass\"]), b[\"source\"].split(\" \")[0])
" t.json >got &&
	cat >want <<-\EOF &&
	8.5.0 default cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 audited
	9.0.0 default cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 audited
	9.0.0 variant cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 release
	9.0.0 variant cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 release
	9.0.0 variant cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 release
	EOF
	diff -u want got
'
test_done
