#!/bin/sh
# make_torch_builds.py (`make torch-builds`) against the loopback index:
# one entry per (version, local label, build tag, platform) from
# --min-version on, the code and CUDA version `mlsetup audit` reads from
# one downloaded wheel per build, the sha256 of every wheel file of the
# build as the index lists them, no URL in the output, and builds already
# in the table kept without a download. Wheels: tests/fixtures/
# make_torch_wheels.py (synthetic, with the fatbin fixtures as CUDA code).
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
python3 "$FIXTURES/make_torch_wheels.py" "$TRASH/web/files"
# A second Python version of the +cu128 build: other bytes, same build.
python3 - "$TRASH/web/files" <<'EOF'
import shutil, sys, zipfile
d = sys.argv[1]
src = d + "/torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl"
dst = d + "/torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl"
shutil.copy(src, dst)
with zipfile.ZipFile(dst, "a") as z:
    z.comment = b"cp312"
EOF

gen() {
	python3 "$top/manifests/make_torch_builds.py" --mlsetup "$MLSETUP" \
		--index-url "$web_url" "$@"
}

# builds FILE: one line per build, "version+local build cuda sass / ptx / files".
builds() {
	python3 - "$1" <<'EOF'
import json, sys
for b in json.load(open(sys.argv[1]))["builds"]:
    print("%s%s %s %s %s / %s / %d" % (b["version"], "+" + b["local"] if b["local"] else "",
          b["build_tag"] or "-", b["cuda"], " ".join(b["sass"]) or "none",
          " ".join(b["ptx"]) or "none", len(b["files"])))
EOF
}

test_expect_success 'one entry per Linux x86_64 build from 2.6 on, with the audited code' '
	gen -o t.json 2>err &&
	builds t.json >got &&
	cat >want <<-\EOF &&
	2.6.0+rocm6.2.4 - None none / none / 1
	2.8.0+cu128 - 12.8 sm_80 sm_120 / compute_120 / 2
	2.9.0+cu130 - 13.9 sm_100f / none / 1
	2.11.0 - 13.0 sm_120 / none / 1
	EOF
	diff -u want got &&
	expect_eq mlsetup.torch-builds/1 "$(json t.json "d[\"schema\"]")" &&
	expect_eq "linux-x86_64" "$(json t.json "\" \".join(sorted(set(b[\"platform\"] for b in d[\"builds\"])))")" &&
	expect_eq "torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl" "$(json t.json "d[\"builds\"][1][\"audited\"][\"filename\"]")" &&
	expect_eq "torch/lib/libtorch_cuda_linalg.so:sm_120" "$(json t.json "\" \".join(p[\"library\"] + \":\" + \",\".join(p[\"missing\"]) for p in d[\"builds\"][1][\"partial\"])")" &&
	expect_eq 2.8.0+cu128 "$(json t.json "d[\"builds\"][1][\"torch_version\"]")" &&
	grep -q "4 builds (4 audited now, 4 downloaded, 0 kept)" err &&
	! grep -q "http" t.json
'
test_expect_success 'every file hash is the index'"'"'s, and the build'"'"'s Python versions share one entry' '
	gen -o t.json 2>/dev/null &&
	for f in "$TRASH"/web/files/torch-2.8.0+cu128-*; do
		h=$(sha256sum "$f" | cut -d" " -f1) &&
		grep -q "\"sha256\": \"$h\"" t.json || return 1
	done &&
	expect_eq "torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl" \
		"$(json t.json "\" \".join(f[\"filename\"] for f in d[\"builds\"][1][\"files\"])")"
'
test_expect_success 'a second run keeps what it has: no download, same bytes; --full audits again' '
	gen -o t.json 2>/dev/null &&
	cp t.json before.json &&
	faults web "{}" &&
	gen -o t.json 2>err &&
	grep -q "4 builds (0 audited now, 0 downloaded, 4 kept)" err &&
	cmp before.json t.json &&
	expect_eq 0 "$(requests web "/files/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl")" &&
	gen -o t.json --full 2>err &&
	grep -q "4 audited now, 4 downloaded" err &&
	cmp before.json t.json
'
test_expect_success '--min-version and --local: older builds left out, a local copy used when its hash matches' '
	mkdir -p local &&
	cp "$TRASH"/web/files/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl local/ &&
	gen -o m1.json --min-version 2.9 --local local 2>err &&
	expect_eq "2.9.0 2.11.0" "$(json m1.json "\" \".join(b[\"version\"] for b in d[\"builds\"])")" &&
	grep -q "2 audited now, 1 downloaded" err &&
	echo junk >>local/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl &&
	gen -o m2.json --min-version 2.9 --local local 2>err &&
	grep -q "2 audited now, 2 downloaded" err
'
test_expect_success '--platform windows-x86_64: that platform'"'"'s builds only' '
	gen -o w.json --platform windows-x86_64 2>/dev/null &&
	expect_eq "2.7.0+cu128 - 12.8 sm_80 sm_120 / compute_120 / 1" "$(builds w.json)" &&
	expect_eq windows-x86_64 "$(json w.json "d[\"builds\"][0][\"platform\"]")"
'
test_expect_success 'a download whose bytes differ from the index'"'"'s hash stops the run, table untouched' '
	gen -o t.json 2>/dev/null &&
	cp t.json keep.json &&
	faults web "{\"torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl\": \"flip_byte\"}" &&
	test_when_finished "faults web {}" &&
	! gen -o t.json --full 2>err &&
	grep -q "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl: sha256 mismatch" err &&
	cmp keep.json t.json
'
test_done
