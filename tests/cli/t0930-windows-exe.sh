#!/bin/sh
# The Windows binary (build/release/x86_64-windows-gnu/mlsetup.exe from
# `make release`, or $MLSETUP_WINDOWS_EXE) under wine, in a wine prefix of
# its own (build/wineprefix-t0930, made once): detect says windows and
# sees no GPU; with the fake nvml.dll / nvcuda.dll (`make shims-windows`)
# in that prefix's System32, an RTX 5090 on driver 572.83 plans the
# Blackwell manifest and an RTX 3090 on 551.61 the CUDA 12.4 one; a
# nvml.dll in the current directory is never loaded (DLL planting);
# download fetches a manifest's wheels from the loopback mirror; a torch
# left open is chosen for the simulated RTX 5090 (the +cu128 build).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/winelib.sh"
. "$top/tests/mirror/testlib.sh"

WIN="$top/build/shims-windows"
wine_prefix wineprefix-t0930

# win [JSON] ARGS...: runs mlsetup.exe with JSON (a path, may be empty) as
# the fake machine; stdout without CRs in out.json, stderr in err.
win() {
	f=$1
	shift
	MLSETUP_FAKE_NVIDIA=${f:+$(winpath "$f")} wine "$EXE" "$@" >out.raw 2>err
	rc=$?
	tr -d '\r' <out.raw >out.json
	return $rc
}

test_expect_success 'detect --json: os windows, no NVIDIA GPU, nvml.dll looked for in System32' '
	win "" detect --json &&
	expect_eq windows "$(json out.json "d[\"os\"][\"name\"]")" &&
	expect_eq "[]" "$(json out.json "d[\"gpus\"]")" &&
	json out.json "[p[\"detail\"] for p in d[\"probes\"] if p[\"source\"] == \"nvml\"][0]" >nvml &&
	grep -qi "system32/nvml.dll" nvml
'

test_expect_success 'plan --offline --json runs without a GPU' '
	win "" plan --offline --json &&
	json out.json "d[\"manifest\"][\"name\"]" >name &&
	test -s name && ! grep -qx None name
'

test_expect_success 'a nvml.dll in the current directory is not loaded' '
	if [ ! -f "$WIN/nvml.dll" ]; then echo "# no $WIN/nvml.dll"; exit 0; fi &&
	cp "$WIN/nvml.dll" "$WIN/nvcuda.dll" . &&
	win "$FIXTURES/gpus/win-rtx5090-572.json" detect --json &&
	expect_eq "[]" "$(json out.json "d[\"gpus\"]")"
'

if [ ! -f "$WIN/nvml.dll" ] || [ ! -f "$WIN/nvcuda.dll" ]; then
	release_skip "no build/shims-windows: run make shims-windows"
fi
test_expect_success 'System32 fakes: RTX 5090 on 572.83 plans the Blackwell manifest, WDDM' '
	cp "$WIN/nvml.dll" "$WIN/nvcuda.dll" "$SYS32/" &&
	win "$FIXTURES/gpus/win-rtx5090-572.json" detect --json &&
	expect_eq 572.83 "$(json out.json "d[\"driver\"][\"version\"]")" &&
	expect_eq WDDM "$(json out.json "d[\"gpus\"][0][\"driver_model\"]")" &&
	win "$FIXTURES/gpus/win-rtx5090-572.json" plan --offline --json &&
	expect_eq requirements_blackwell.txt "$(json out.json "d[\"manifest\"][\"name\"]")"
'

if [ ! -f "$WIN/nvml.dll" ] || [ ! -f "$WIN/nvcuda.dll" ]; then
	release_skip "no build/shims-windows: run make shims-windows"
fi
test_expect_success 'System32 fakes: RTX 3090 on 551.61 plans the CUDA 12.4 manifest' '
	cp "$WIN/nvml.dll" "$WIN/nvcuda.dll" "$SYS32/" &&
	sed -e "s/572.83/551.61/; s/12080/12040/; s/RTX 5090/RTX 3090/; s/\"12.0\"/\"8.6\"/" \
		-e "s/0x2b85/0x2204/; s/32607/24576/" "$FIXTURES/gpus/win-rtx5090-572.json" >3090.json &&
	win "$PWD/3090.json" plan --offline --json &&
	expect_eq 12.4 "$(json out.json "d[\"manifest\"][\"cuda\"]")" &&
	expect_eq 551.61 "$(json out.json "d[\"machine\"][\"driver\"]")"
'
rm -f "$SYS32/nvml.dll" "$SYS32/nvcuda.dll"

mirror_start web
make_wheel web alpha 1.0 300000
make_wheel web beta 1.0 1000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta
sed "s/platforms = linux-x86_64/platforms = windows-x86_64/" "$TRASH/m.txt" >"$TRASH/mw.txt"
test_expect_success 'download: the wheels from the loopback mirror, verified, then from the cache' '
	win "" download --python 3.12 --cache-dir "$TRASH/cache" --no-progress -r mw.txt -d out &&
	for f in $(wheel_file alpha 1.0) $(wheel_file beta 1.0); do
		cmp out/$f web/files/$f || return 1
	done &&
	test -f out/index.html &&
	win "" download --python 3.12 --cache-dir "$TRASH/cache" --no-progress --json -r mw.txt -d out2 &&
	expect_eq true "$(json out.json "d[\"ok\"]")" &&
	expect_eq 1 "$(requests web /files/$(wheel_file alpha 1.0))"
'

test_expect_success 'audit: a real PE DLL with an nvcc fatbin, read by mlsetup.exe' '
	cp "$FIXTURES/fatbin/real_pe.dll" . &&
	win "" audit --json --arch sm_120 real_pe.dll &&
	expect_eq "[\"sm_80\", \"sm_120\"]" "$(json out.json "d[\"files\"][0][\"sass\"]")" &&
	expect_eq "[\"compute_120\"]" "$(json out.json "d[\"files\"][0][\"ptx\"]")" &&
	expect_exit 5 win "" audit --arch sm_90 real_pe.dll
'

# The torch choice under wine: the loopback index in PyTorch's layout
# (tests/fixtures/make_torch_layout.py), whose default-index Windows torch
# is CPU-only; an RTX 5090 on 572.83 (CUDA 12.8) must get the +cu128 build.
torch_layout tl
test_expect_success 'Windows, RTX 5090 + 572: plan torch chooses the +cu128 build, never the CPU-only one' '
	cp "$WIN/nvml.dll" "$WIN/nvcuda.dll" "$SYS32/" &&
	test_when_finished "rm -f \"$SYS32/nvml.dll\" \"$SYS32/nvcuda.dll\"" &&
	win "$FIXTURES/gpus/win-rtx5090-572.json" plan --json --python 3.12 \
		--cache-dir "$TRASH/tcache" --index-url "$tl_url" --torch-index-url "$tl_torch_url" \
		torch &&
	expect_eq "9.0.0+cu128" "$(json out.json "d[\"torch_choice\"][\"version\"]")" &&
	json out.json "[r[\"reason\"] for r in d[\"torch_choice\"][\"rejected\"] if r[\"version\"] == \"9.0.0\"][0]" >why &&
	grep -q "CPU-only build" why
'

test_done
