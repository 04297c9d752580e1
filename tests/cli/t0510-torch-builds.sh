#!/bin/sh
# make_torch_builds.py (`make torch-builds`) against the loopback index:
# one entry per (version, local label, build tag, platform) from
# --min-version on, the code and CUDA version `mlsetup audit` reads from
# one downloaded wheel per build, the sha256 of every wheel file of the
# build as the index lists them, no URL in the output, and builds already
# in the table kept without a download (these with --no-variants); then the
# variant indexes' builds derived for the same releases: from a release's
# own arch table (PYTORCH_RELEASES_CODE_CC, read by byte ranges or from a
# --local wheel), else from the release notes, a cpu build each, and
# --offline, which asks no index. Wheels: tests/fixtures/
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

# gen ARGS: the package index's builds only; gen_all ARGS: with the derived ones.
gen() {
	gen_all --no-variants "$@"
}
gen_all() {
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

# derived FILE: one line per derived build, "version platform backend cuda sass | source".
derived() {
	python3 - "$1" <<'EOF'
import json, sys
for b in json.load(open(sys.argv[1]))["builds"]:
    if b["index"] == "variant":
        print("%s %s %s %s %s | %s" % (b["version"], b["platform"], b["backend"], b["cuda"],
              "unknown" if b["sass"] is None else " ".join(b["sass"]) or "none", b["source"]))
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
	expect_eq mlsetup.torch-builds/2 "$(json t.json "d[\"schema\"]")" &&
	expect_eq "cu128 cu130 rocm6.2.4" "$(json t.json "\" \".join(sorted(set(b[\"backend\"] for b in d[\"builds\"])))")" &&
	expect_eq "default" "$(json t.json "\" \".join(sorted(set(b[\"index\"] for b in d[\"builds\"])))")" &&
	h=$(sha256sum "$TRASH/web/files/torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl" | cut -d" " -f1) &&
	expect_eq "audited torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl $h" "$(json t.json "d[\"builds\"][1][\"source\"]")" &&
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
TABLE="release table torch 2.11.0 torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC"
W211=torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl
test_expect_success 'derived: the variant builds of each release, from its arch table or its release notes' '
	gen_all -o v.json 2>err &&
	grep -q "4 builds (4 audited now, 4 downloaded, 0 kept) and 17 derived variant builds" err &&
	derived v.json >got &&
	cat >want <<-EOF &&
	2.6.0 linux-x86_64 cpu None none | release notes
	2.6.0 linux-x86_64 cu118 11.8 unknown | release notes
	2.6.0 linux-x86_64 cu124 12.4 unknown | release notes
	2.6.0 linux-x86_64 cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 | release notes
	2.8.0 linux-x86_64 cpu None none | release notes
	2.8.0 linux-x86_64 cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 | release notes
	2.8.0 linux-x86_64 cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 | release notes
	2.8.0 linux-x86_64 cu129 12.9 unknown | release notes
	2.9.0 linux-x86_64 cpu None none | release notes
	2.9.0 linux-x86_64 cu126 12.6 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 | release notes
	2.9.0 linux-x86_64 cu128 12.8 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 | release notes
	2.9.0 linux-x86_64 cu129 12.9 unknown | release notes
	2.9.0 linux-x86_64 cu130 13.0 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 | release notes
	2.11.0 linux-x86_64 cpu None none | release notes
	2.11.0 linux-x86_64 cu126 12.6 sm_50 sm_70 | $TABLE
	2.11.0 linux-x86_64 cu130 13.0 sm_75 sm_120 | $TABLE
	2.11.0 linux-aarch64 cu126 12.6 sm_80 | $TABLE
	EOF
	diff -u want got &&
	gen -o t.json 2>/dev/null &&
	python3 -c "import json, sys; a = [b for b in json.load(open(sys.argv[1]))[\"builds\"] if b[\"index\"] == \"default\"]; assert a == json.load(open(sys.argv[2]))[\"builds\"]" v.json t.json &&
	expect_eq "2.6.0 2.6.0 2.6.0 2.6.0 2.6.0" "$(json v.json "\" \".join(b[\"version\"] for b in d[\"builds\"][:5])")" &&
	expect_eq "[]" "$(json v.json "d[\"builds\"][2][\"files\"]")" &&
	expect_eq cu118 "$(json v.json "d[\"builds\"][2][\"local\"]")" &&
	! grep -q "http" v.json
'
test_expect_success 'derived: a release table read by byte ranges, never the whole wheel; again with the same bytes' '
	gen_all -o v.json 2>/dev/null &&
	cp v.json before.json &&
	faults web "{}" &&
	gen_all -o v.json 2>/dev/null &&
	cmp before.json v.json &&
	n=$(requests web "/files/$W211 range") &&
	test "$n" -gt 0 &&
	expect_eq $((n + 1)) "$(requests web "/files/$W211")"
'
test_expect_success '--offline asks no index: audited entries kept as they are, derived ones from --local wheels' '
	gen_all -o v.json 2>/dev/null &&
	cp v.json online.json &&
	mkdir -p loc &&
	cp "$TRASH/web/files/$W211" loc/ &&
	faults web "{}" &&
	gen_all -o v.json --offline --local loc 2>err &&
	cmp online.json v.json &&
	expect_eq 0 "$(requests web /simple/torch/)" &&
	expect_eq 0 "$(requests web "/files/$W211 range")" &&
	grep -q "4 builds (0 audited now, 0 downloaded, 4 kept) and 17 derived" err &&
	gen_all -o v.json --offline 2>err &&
	cmp online.json v.json &&
	grep -q "2.11.0: no wheel to read: its derived entries kept" err &&
	test_must_fail gen_all -o v.json --offline --full 2>err &&
	grep -q "no --check, no --full" err &&
	test_must_fail gen_all -o none.json --offline 2>err &&
	grep -q "has no audited builds to keep" err
'
test_expect_success '--local: a wheel of the release that is not the audited file still gives its table' '
	gen_all -o v.json 2>/dev/null &&
	cp v.json online.json &&
	mkdir -p other &&
	cp "$TRASH/web/files/$W211" other/torch-2.11.0-cp313-cp313-manylinux_2_28_x86_64.whl &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d[\"builds\"] = [b for b in d[\"builds\"] if b[\"index\"] == \"default\"]; json.dump(d, open(sys.argv[1], \"w\"))" v.json &&
	gen_all -o v.json --offline --local other 2>err &&
	grep -q "its release table read from torch-2.11.0-cp313" err &&
	derived v.json >got &&
	derived online.json >want &&
	diff -u want got
'
test_done
