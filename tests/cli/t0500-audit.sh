#!/bin/sh
# audit: the CUDA code in libraries, wheels (read in place) and whole
# environments, whether it runs on the GPUs asked about (--arch) or
# detected (fake NVML/libcuda shims), the JSON document, exit codes 0 / 5 /
# 1 / 2, and damaged fatbins reported without a crash. Fixtures:
# tests/fixtures/fatbin (README.md there).
. "$(dirname "$0")/lib.sh"
FB="$FIXTURES/fatbin"
E="$SYSROOTS/empty"

# make_wheel OUT.whl MEMBER=FIXTURE...: a wheel built with python's zipfile.
make_wheel() {
	python3 - "$@" <<'PY'
import sys, zipfile
out, pairs = sys.argv[1], sys.argv[2:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("demo/__init__.py", "")
    for p in pairs:
        member, src = p.split("=", 1)
        z.write(src, member)
    z.writestr("demo-1.0.dist-info/RECORD", "")
PY
}

test_expect_success 'a library: SASS and PTX lists, runs / does NOT run with the reason' '
	expect_exit 5 "$MLSETUP" audit --arch sm_89 --arch sm_120 "$FB/sass_only.so" >out 2>err &&
	grep -q "sass_only.so: SASS sm_75 sm_80 sm_86 sm_90; PTX none" out &&
	grep -q "  sm_89: runs (SASS sm_86 runs on 8.9)" out &&
	grep -q "  sm_120: does NOT run: sm_120: no SASS for major 12, no PTX ≤ 12.0" out &&
	grep -q "^summary: 1 library scanned, 1 with CUDA code" out &&
	grep -q "error: .*sass_only.so. cannot run on sm_120" err &&
	grep -q "^hint: " err
'
test_expect_success 'runs everywhere asked: exit 0; comma-separated and X.Y device names' '
	"$MLSETUP" audit --arch 9.0,sm_100,12.0 "$FB/sass_ptx.so" >out &&
	grep -q "SASS sm_90; PTX compute_90 (1 compressed)" out &&
	grep -q "  sm_100: runs (PTX compute_90 (ISA 9.0) can be JIT-compiled for 10.0 by a driver for CUDA ≥ 13.0)" out &&
	grep -q "  sm_120: runs" out &&
	grep -q "^  no driver known: PTX counts where a driver new enough could JIT it" out
'
test_expect_success 'JSON: schema, files[] with path, sass, ptx, runs_on, why; overall runs_on' '
	expect_exit 5 "$MLSETUP" audit --json --arch sm_120 --arch sm_86 "$FB/multi.so" "$FB/sass_only.so" >j &&
	expect_eq mlsetup.audit/1 "$(json j "d[\"schema\"]")" &&
	expect_eq "[\"sm_120\", \"sm_86\"]" "$(json j "d[\"devices\"]")" &&
	expect_eq arch "$(json j "d[\"devices_from\"]")" &&
	expect_eq 2 "$(json j "len(d[\"files\"])")" &&
	expect_eq "$FB/multi.so" "$(json j "d[\"files\"][0][\"path\"]")" &&
	expect_eq "[\"sm_80\", \"sm_120\"]" "$(json j "d[\"files\"][0][\"sass\"]")" &&
	expect_eq "[\"compute_120\"]" "$(json j "d[\"files\"][0][\"ptx\"]")" &&
	expect_eq 2 "$(json j "d[\"files\"][0][\"containers\"]")" &&
	expect_eq 1 "$(json j "d[\"files\"][0][\"compressed\"]")" &&
	expect_eq "{\"sm_120\": true, \"sm_86\": true}" "$(json j "d[\"files\"][0][\"runs_on\"]")" &&
	expect_eq "{\"sm_120\": false, \"sm_86\": true}" "$(json j "d[\"files\"][1][\"runs_on\"]")" &&
	expect_eq "SASS sm_80 runs on 8.6" "$(json j "d[\"files\"][0][\"why\"][\"sm_86\"]")" &&
	expect_eq null "$(json j "d[\"files\"][1][\"error\"]")" &&
	expect_eq "{\"sm_120\": false, \"sm_86\": true}" "$(json j "d[\"runs_on\"]")" &&
	expect_eq 2 "$(json j "d[\"libraries_scanned\"]")"
'
test_expect_success 'every fixture answers as the rule says (sm_90a only on 9.0, sm_100f on 10.x)' '
	for case in "sm90a.so 9.0 0" "sm90a.so 8.9 5" "sm90a.so 10.0 5" \
		"sm100f.so 10.0 0" "sm100f.so 10.3 0" "sm100f.so 12.0 5" "sm100f.so 9.0 5" \
		"ptx_only.so 12.0 0" "ptx_only.so 7.5 5" "ptx_zstd.so 12.1 0" "lz4.so 8.9 0" \
		"lz4.so 8.0 5" "sm120.so 12.1 0" "sm120.so 10.0 5" "multi.so 9.0 5" \
		"multi.so 12.1 0" "sass_only.so 8.9 0" "sass_only.so 12.0 5" "fake_pe.dll 12.0 0" \
		"real_pe.dll 8.6 0" "real_pe.dll 12.0 0" "real_pe.dll 12.1 0" "real_pe.dll 9.0 5"; do
		set -- $case &&
		expect_exit $3 "$MLSETUP" audit --arch "$2" "$FB/$1" >/dev/null 2>&1 || return 1
	done
'
test_expect_success 'a real Windows DLL (zig-linked PE32+): its .nv_fatb section is read' '
	"$MLSETUP" audit --json --arch sm_120 "$FB/real_pe.dll" >j &&
	expect_eq "[\"sm_80\", \"sm_120\"]" "$(json j "d[\"files\"][0][\"sass\"]")" &&
	expect_eq "[\"compute_120\"]" "$(json j "d[\"files\"][0][\"ptx\"]")" &&
	expect_eq 1 "$(json j "d[\"files\"][0][\"containers\"]")" &&
	expect_eq null "$(json j "d[\"files\"][0][\"error\"]")"
'
test_expect_success 'a wheel: library members read in place, named wheel!member' '
	make_wheel demo-1.0-py3-none-linux_x86_64.whl \
		"demo/lib/libdemo_cuda.so=$FB/sass_only.so" \
		"demo/lib/libptx.so.12=$FB/ptx_only.so" \
		"demo/_C.cpython-312-x86_64-linux-gnu.so=$FB/multi.so" \
		"demo/data/readme.txt=$FB/sm120.so" &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_120 demo-1.0-py3-none-linux_x86_64.whl >j &&
	expect_eq 3 "$(json j "d[\"libraries_scanned\"]")" &&
	expect_eq "demo-1.0-py3-none-linux_x86_64.whl!demo/lib/libdemo_cuda.so" "$(json j "d[\"files\"][0][\"path\"]")" &&
	expect_eq "false true true" "$(json j "\" \".join(str(f[\"runs_on\"][\"sm_120\"]).lower() for f in d[\"files\"])")" &&
	expect_eq "[\"compute_80\"]" "$(json j "d[\"files\"][1][\"ptx\"]")" &&
	! ls demo 2>/dev/null
'
test_expect_success 'control characters in member names are not printed raw' '
	python3 -c "import sys, zipfile; z = zipfile.ZipFile(\"evil-1.0-py3-none-any.whl\", \"w\"); z.write(sys.argv[1], \"demo/\x1b[31mevil\n.so\"); z.close()" "$FB/sass_only.so" &&
	expect_exit 5 "$MLSETUP" audit --arch sm_120 evil-1.0-py3-none-any.whl >out 2>err &&
	grep -q "whl!demo/?\[31mevil?.so: SASS sm_75" out &&
	! grep -q "$(printf "\033")" out err
'
test_expect_success 'an environment: every library under site-packages, each once despite links' '
	sp=env/lib/python3.12/site-packages &&
	mkdir -p $sp/torch/lib $sp/numpy env/bin &&
	touch env/pyvenv.cfg &&
	cp "$FB/sass_only.so" $sp/torch/lib/libtorch_cuda.so &&
	cp "$FB/ptx_only.so" $sp/torch/lib/libcudart.so.12 &&
	cp "$FB/sm120.so" $sp/torch/_C.cpython-312-x86_64-linux-gnu.so &&
	cp /bin/true $sp/numpy/_core.cpython-312-x86_64-linux-gnu.so &&
	ln -s lib env/lib64 &&
	ln -s ../../../.. $sp/torch/loop &&
	ln -s libcudart.so.12 $sp/torch/lib/libcudart.so &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_120 env >j &&
	expect_eq 4 "$(json j "d[\"libraries_scanned\"]")" &&
	expect_eq 3 "$(json j "d[\"libraries_with_cuda\"]")" &&
	expect_eq 3 "$(json j "len(d[\"files\"])")" &&
	expect_eq "$sp/torch/_C.cpython-312-x86_64-linux-gnu.so $sp/torch/lib/libcudart.so.12 $sp/torch/lib/libtorch_cuda.so" \
		"$(json j "\" \".join(f[\"path\"] for f in d[\"files\"])")" &&
	expect_exit 5 "$MLSETUP" audit --all --arch sm_120 env >out 2>/dev/null &&
	grep -q "numpy/_core.cpython-312-x86_64-linux-gnu.so: SASS none; PTX none" out &&
	grep -q "^summary: 4 libraries scanned, 3 with CUDA code" out
'
test_expect_success '--arch defaults to the detected GPUs (fake RTX 5090: sm_120)' '
	expect_exit 5 with_gpus rtx5090.json "$MLSETUP" audit --sysroot "$E" --json "$FB/sass_only.so" >j &&
	expect_eq "[\"sm_120\"]" "$(json j "d[\"devices\"]")" &&
	expect_eq detected "$(json j "d[\"devices_from\"]")" &&
	with_gpus rtx5090.json "$MLSETUP" audit --sysroot "$E" "$FB/sm120.so" >out &&
	grep -q "  sm_120 (detected): runs" out &&
	with_gpus mixed-3090-5090.json "$MLSETUP" audit --sysroot "$E" --json "$FB/multi.so" >j &&
	expect_eq "[\"sm_86\", \"sm_120\"]" "$(json j "d[\"devices\"]")"
'
test_expect_success 'no GPU and no --arch: lists the code, answers nothing, exit 0' '
	echo "{\"driver\": \"570.124.04\", \"cuda\": 12080, \"gpus\": []}" >none.json &&
	LD_LIBRARY_PATH="$SHIMS" MLSETUP_FAKE_NVIDIA="$TRASH/none.json" \
		"$MLSETUP" audit --sysroot "$E" "$FB/sass_only.so" >out &&
	grep -q "SASS sm_75 sm_80 sm_86 sm_90" out &&
	grep -q "no GPU detected to answer for" out
'
test_expect_success 'damaged and hostile fatbins: reported as malformed, exit 1, no crash' '
	for f in bad_trunc_entry_header.so bad_entry_header_huge.so bad_payload_overflow.so \
		bad_fat_size_past_end.so bad_zero_sizes.so bad_zero_container.so \
		bad_truncated_file.so bad_section_table.so; do
		expect_exit 1 "$MLSETUP" audit --arch sm_90 "$FB/$f" >out 2>err &&
		grep -q "malformed CUDA fatbin" out || return 1
	done &&
	expect_exit 1 "$MLSETUP" audit --json --arch sm_90 "$FB/bad_zero_sizes.so" >j &&
	json j "d[\"files\"][0][\"error\"]" | grep -q "header size 0 outside 64..4096" &&
	expect_exit 5 "$MLSETUP" audit --arch sm_90 "$FB/bad_magic.so" >out 2>&1 &&
	grep -q "SASS sm_80; PTX none" out && grep -q "magic 0xdeadbeef" out
'
test_expect_success 'unreadable paths exit 1 and name the path; a GPU failure wins (5)' '
	expect_exit 1 "$MLSETUP" audit --arch sm_90 nothere.so "$FB/sass_ptx.so" >out 2>err &&
	grep -q "cannot open .nothere.so.: No such file or directory" err &&
	expect_exit 5 "$MLSETUP" audit --arch sm_120 nothere.so "$FB/sass_only.so" >out 2>err
'
test_expect_success 'usage errors exit 2' '
	expect_exit 2 "$MLSETUP" audit --arch sm_90 2>err &&
	grep -q "no PATH to audit" err &&
	expect_exit 2 "$MLSETUP" audit --arch compute_90 "$FB/sm120.so" 2>err &&
	grep -q "is not a GPU" err &&
	expect_exit 2 "$MLSETUP" audit --arch sm_90a "$FB/sm120.so" 2>/dev/null &&
	expect_exit 2 "$MLSETUP" audit --arch "" "$FB/sm120.so" 2>/dev/null &&
	expect_exit 2 "$MLSETUP" audit --bogus "$FB/sm120.so" 2>/dev/null &&
	"$MLSETUP" help audit | grep -q "mlsetup audit PATH" &&
	"$MLSETUP" --help | grep -q "^  audit "
'
test_expect_success 'fatbins kept in .data (as cuFFT 11.2 does): embedded, not executable, and they count' '
	fb="$top/tests/fuzz/corpus/fuzz_fatbin/sass_only.fatbin" &&
	{
		echo "/* fatbin bytes in .data, outside .nv_fatbin */"
		echo "__attribute__((aligned(8))) unsigned char kernels[] = {"
		od -An -v -tx1 "$fb" | sed -e "s/  */ /g" -e "s/^ //" -e "/^\$/d" -e "s/\([0-9a-f][0-9a-f]\)/0x\1,/g"
		echo "0};"
	} >data.c &&
	cc -shared -fPIC -o libdatafat.so data.c &&
	readelf -SW libdatafat.so | grep -q " .data " &&
	! readelf -SW libdatafat.so | grep -q nv_fatbin &&
	"$MLSETUP" audit --arch sm_86 --json libdatafat.so >j &&
	expect_eq "" "$(json j "\" \".join(d[\"files\"][0][\"sass\"])")" &&
	expect_eq "sm_75 sm_80 sm_86 sm_90" "$(json j "\" \".join(d[\"files\"][0][\"embedded\"][\"sass\"])")" &&
	expect_eq true "$(json j "d[\"runs_on\"][\"sm_86\"]")" &&
	"$MLSETUP" audit --arch sm_86 --json "$FB/data_fatbin.so" >j &&
	expect_eq "[\"sm_75\"]" "$(json j "d[\"files\"][0][\"sass\"]")" &&
	expect_eq "[\"sm_75\"]" "$(json j "d[\"files\"][0][\"kernelless\"]")" &&
	expect_eq "{\"sass\": [\"sm_80\", \"sm_86\"], \"ptx\": [\"compute_86\"]}" "$(json j "d[\"files\"][0][\"embedded\"]")" &&
	expect_exit 5 "$MLSETUP" audit --arch sm_75 "$FB/data_fatbin.so" >/dev/null 2>&1
'
test_expect_success 'kernel-less cubins (plain, LZ4, zstd): unverified, not counted, exit 0' '
	for f in kernelless.so kernelless_lz4.so kernelless_zstd.so; do
		"$MLSETUP" audit --json --arch sm_86 --arch sm_90 "$FB/$f" >j &&
		expect_eq "{\"sm_86\": \"unverified\", \"sm_90\": \"unverified\"}" "$(json j "d[\"files\"][0][\"runs_on\"]")" &&
		expect_eq "no kernels visible; stored in another form" "$(json j "d[\"files\"][0][\"why\"][\"sm_90\"]")" &&
		expect_eq "[\"sm_75\"]" "$(json j "d[\"files\"][0][\"kernelless\"]")" &&
		expect_eq "[\"sm_75\"]" "$(json j "d[\"files\"][0][\"sass\"]")" &&
		expect_eq 1 "$(json j "d[\"libraries_unverified\"]")" &&
		expect_eq "[\"$FB/$f\"]" "$(json j "d[\"unverified\"]")" &&
		expect_eq "{\"sm_86\": true, \"sm_90\": true}" "$(json j "d[\"runs_on\"]")" || return 1
	done &&
	"$MLSETUP" audit --arch sm_120 "$FB/kernelless_lz4.so" "$FB/sm120.so" >out &&
	expect_exit 5 "$MLSETUP" audit --arch sm_120 "$FB/kernelless.so" "$FB/sass_only.so" >out 2>err &&
	grep -q "sass_only.so. cannot run on sm_120" err &&
	! grep -q "kernelless.so. cannot" err &&
	expect_exit 5 "$MLSETUP" audit --arch sm_75 "$FB/mixed_kernelless.so" >/dev/null 2>&1 &&
	"$MLSETUP" audit --arch sm_86 "$FB/mixed_kernelless.so" >/dev/null
'
test_expect_success 'relocatable code (__nv_relfatbin) is listed apart and never counted' '
	expect_exit 5 "$MLSETUP" audit --json --arch sm_75 --arch sm_90 "$FB/reloc_linked.so" >j &&
	expect_eq "[\"sm_75\"]" "$(json j "d[\"files\"][0][\"sass\"]")" &&
	expect_eq "[]" "$(json j "d[\"files\"][0][\"ptx\"]")" &&
	expect_eq "{\"sass\": [\"sm_75\"], \"ptx\": [\"compute_90\"]}" "$(json j "d[\"files\"][0][\"relocatable\"]")" &&
	expect_eq "{\"sm_75\": true, \"sm_90\": false}" "$(json j "d[\"files\"][0][\"runs_on\"]")" &&
	"$MLSETUP" audit --json --arch sm_90 "$FB/reloc_only.so" >j &&
	expect_eq "unverified" "$(json j "d[\"files\"][0][\"runs_on\"][\"sm_90\"]")" &&
	json j "d[\"files\"][0][\"why\"][\"sm_90\"]" | grep -q "only relocatable device code"
'
test_expect_success 'people see unverified, embedded, relocatable and kernel-less code' '
	"$MLSETUP" audit --arch sm_86 "$FB/kernelless.so" "$FB/data_fatbin.so" >out &&
	grep -q "^  kernel-less (no kernels in these cubins): sm_75$" out &&
	grep -q "^  sm_86: unverified: no kernels visible; stored in another form$" out &&
	grep -q "^  embedded (loaded by the library at run time): SASS sm_80 sm_86; PTX compute_86$" out &&
	grep -q "^summary: 2 libraries scanned, 2 with CUDA code, 1 unverified (no kernels visible; stored in another form)$" out &&
	grep -q "^  unverified: $FB/kernelless.so$" out &&
	! grep -q "does NOT run" out &&
	expect_exit 5 "$MLSETUP" audit --arch sm_90 "$FB/reloc_linked.so" >out 2>/dev/null &&
	grep -q "^  relocatable (device-link input, never loaded): SASS sm_75; PTX compute_90$" out
'
test_expect_success 'a wheel like nvidia-cufft / nvidia-nccl: unverified cufftw, NCCL without executable PTX' '
	make_wheel nvidia_demo-1.0-py3-none-manylinux2014_x86_64.whl \
		"nvidia/cufft/lib/libcufftw.so.11=$FB/kernelless_lz4.so" \
		"nvidia/cufft/lib/libcufft.so.11=$FB/data_fatbin.so" \
		"nvidia/nccl/lib/libnccl.so.2=$FB/reloc_linked.so" &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_86 nvidia_demo-1.0-py3-none-manylinux2014_x86_64.whl >j &&
	expect_eq "unverified true false" "$(json j "\" \".join(str(f[\"runs_on\"][\"sm_86\"]).lower() for f in d[\"files\"])")" &&
	expect_eq 3 "$(json j "d[\"libraries_with_cuda\"]")" &&
	expect_eq 1 "$(json j "d[\"libraries_unverified\"]")" &&
	expect_exit 5 "$MLSETUP" audit --arch sm_120 nvidia_demo-1.0-py3-none-manylinux2014_x86_64.whl >out 2>err &&
	grep -q "libnccl.so.2. cannot run on sm_120" err &&
	! grep -q "libcufftw" err
'
test_expect_success 'unreadable compressed cubins count as holding kernels (no error, no crash)' '
	for f in bad_lz4_payload.so bad_zstd_size.so; do
		"$MLSETUP" audit --json --arch sm_75 "$FB/$f" >j &&
		expect_eq 1 "$(json j "d[\"files\"][0][\"unreadable_cubins\"]")" &&
		expect_eq null "$(json j "d[\"files\"][0][\"error\"]")" &&
		expect_eq "{\"sm_75\": true}" "$(json j "d[\"files\"][0][\"runs_on\"]")" &&
		expect_exit 5 "$MLSETUP" audit --arch sm_86 "$FB/$f" >/dev/null 2>&1 || return 1
	done
'
test_expect_success 'a torch wheel gets one line: CUDA version, SASS/PTX of libtorch_cuda.so, driver' '
	python3 "$FIXTURES/make_torch_wheels.py" tw &&
	"$MLSETUP" audit --arch sm_80 tw/torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl >out &&
	grep -q "^torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl: CUDA 12.8, SASS sm_80 sm_120, PTX compute_120, needs driver ≥ 570.26 (Linux)$" out &&
	grep -q "^  torch/lib/libtorch_cuda_linalg.so: no code for sm_120 (what it does fails on those GPUs)$" out &&
	! grep -q "torch-build table" out &&
	"$MLSETUP" audit --arch sm_120 tw/torch-2.7.0+cu128-cp312-cp312-win_amd64.whl >out &&
	grep -q "^torch-2.7.0+cu128-cp312-cp312-win_amd64.whl: CUDA 12.8, SASS sm_80 sm_120, PTX compute_120, needs driver ≥ 570.65 (Windows)$" out
'
test_expect_success 'CPU-only and ROCm builds say so; CUDA from METADATA; toolkits the driver table lacks' '
	python3 "$FIXTURES/make_torch_wheels.py" tw &&
	"$MLSETUP" audit --arch sm_90 tw/torch-2.8.0-cp311-none-macosx_11_0_arm64.whl \
		tw/torch-2.6.0+rocm6.2.4-cp311-cp311-linux_x86_64.whl >out &&
	grep -q "^torch-2.8.0-cp311-none-macosx_11_0_arm64.whl: CPU-only build (CUDA none), needs no NVIDIA driver$" out &&
	grep -q "^torch-2.6.0+rocm6.2.4-cp311-cp311-linux_x86_64.whl: ROCm build (HIP 6.2.41134-65d174c3e), no CUDA code$" out &&
	"$MLSETUP" audit --arch sm_120 tw/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl >out &&
	grep -q "^torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl: CUDA 13.0, SASS sm_120, PTX none, needs driver ≥ 580.65.06 (Linux)$" out &&
	"$MLSETUP" audit --arch sm_100 tw/torch-2.9.0+cu130-cp311-cp311-linux_x86_64.whl >out &&
	grep -q "CUDA 13.9, SASS sm_100f, PTX none, needs driver ≥ 595.71.05 (Linux) at least (mlsetup.s driver table has no row for CUDA 13.9)$" out &&
	expect_exit 5 "$MLSETUP" audit --arch sm_120 tw/torch-2.5.1-1-cp311-cp311-manylinux1_x86_64.whl >out 2>/dev/null &&
	grep -q ": CUDA 12.x, SASS sm_75 sm_80 sm_86 sm_90, PTX none, needs driver ≥ 525.60.13 (Linux) at least" out
'
test_expect_success 'JSON: torch_wheels[] with torch_build, sha256, cuda_source, gaps; none for other wheels' '
	python3 "$FIXTURES/make_torch_wheels.py" tw &&
	w=tw/torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_80 "$w" tw/notorch-1.0-py3-none-any.whl >j 2>/dev/null &&
	expect_eq 1 "$(json j "len(d[\"torch_wheels\"])")" &&
	expect_eq "$w" "$(json j "d[\"torch_wheels\"][0][\"path\"]")" &&
	expect_eq "$(sha256sum "$w" | cut -d" " -f1)" "$(json j "d[\"torch_wheels\"][0][\"sha256\"]")" &&
	expect_eq "2.8.0 cu128 linux-x86_64 12.8" "$(json j "\" \".join(d[\"torch_wheels\"][0][\"torch_build\"][k] for k in (\"version\", \"local\", \"platform\", \"cuda\"))")" &&
	expect_eq "[\"sm_80\", \"sm_120\"]" "$(json j "d[\"torch_wheels\"][0][\"torch_build\"][\"sass\"]")" &&
	expect_eq "[\"compute_120\"]" "$(json j "d[\"torch_wheels\"][0][\"torch_build\"][\"ptx\"]")" &&
	expect_eq 570.26 "$(json j "d[\"torch_wheels\"][0][\"torch_build\"][\"min_driver\"][\"linux\"]")" &&
	expect_eq 570.65 "$(json j "d[\"torch_wheels\"][0][\"torch_build\"][\"min_driver\"][\"windows\"]")" &&
	expect_eq torch/version.py "$(json j "d[\"torch_wheels\"][0][\"cuda_source\"]")" &&
	expect_eq torch/lib/libtorch_cuda.so "$(json j "d[\"torch_wheels\"][0][\"library\"]")" &&
	expect_eq 2.8.0+cu128 "$(json j "d[\"torch_wheels\"][0][\"torch_version\"]")" &&
	expect_eq "[{\"library\": \"torch/lib/libtorch_cuda_linalg.so\", \"missing\": [\"sm_120\"]}]" "$(json j "d[\"torch_wheels\"][0][\"gaps\"]")" &&
	expect_eq null "$(json j "d[\"torch_wheels\"][0][\"known\"]")" &&
	"$MLSETUP" audit --json --arch sm_120 tw/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl >j &&
	expect_eq "METADATA: cuda-toolkit==13.0.2" "$(json j "d[\"torch_wheels\"][0][\"cuda_source\"]")" &&
	"$MLSETUP" audit --json --arch sm_120 "$FB/sm120.so" >j &&
	expect_eq "[]" "$(json j "d[\"torch_wheels\"]")"
'
test_expect_success 'torch wheels inside an audited directory are found too' '
	python3 "$FIXTURES/make_torch_wheels.py" tw &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_120 tw >j 2>/dev/null &&
	expect_eq 7 "$(json j "len(d[\"torch_wheels\"])")"
'
test_expect_success '--driver: PTX counts only where that driver can JIT its ISA (nvcc 13.0 writes 9.0)' '
	expect_exit 5 "$MLSETUP" audit --arch sm_89 --driver 550.54.15 "$FB/ptx_only.so" >out 2>err &&
	grep -q "  sm_89: does NOT run: sm_89: no SASS for major 8, PTX compute_80 (ISA 9.0) needs a driver for CUDA ≥ 13.0 to JIT it, and this driver supports CUDA 12.4" out &&
	grep -q "^  PTX judged for driver 550.54.15 (CUDA 12.4)" out &&
	grep -q "error: .*ptx_only.so. cannot run on sm_89" err &&
	"$MLSETUP" audit --arch sm_89 --driver 580.95.05 "$FB/ptx_only.so" >out &&
	grep -q "  sm_89: runs (PTX compute_80 (ISA 9.0) can be JIT-compiled for 8.9)" out &&
	"$MLSETUP" audit --json --arch sm_89 --driver 580.95.05 "$FB/ptx_only.so" >j &&
	expect_eq "{\"version\": \"580.95.05\", \"cuda\": \"13.0\"}" "$(json j "d[\"driver\"]")" &&
	expect_eq "{\"compute_80\": \"9.0\"}" "$(json j "d[\"files\"][0][\"ptx_isa\"]")" &&
	expect_eq "{\"sm_89\": \"compute_80\"}" "$(json j "d[\"files\"][0][\"runs_by\"]")" &&
	expect_exit 2 "$MLSETUP" audit --arch sm_89 --driver banana "$FB/ptx_only.so" 2>err &&
	grep -q "driver .banana. is not an NVIDIA driver version" err
'
test_expect_success 'the detected driver judges PTX: fake RTX 5090 on 570 (CUDA 12.8) cannot JIT ISA 9.0' '
	expect_exit 5 with_gpus rtx5090.json "$MLSETUP" audit --sysroot "$E" "$FB/ptx_only.so" >out &&
	grep -q "needs a driver for CUDA ≥ 13.0 to JIT it, and this driver supports CUDA 12.8" out &&
	grep -q "^  PTX judged for driver 570.124.04 (CUDA 12.8)" out &&
	with_gpus rtx5090.json "$MLSETUP" audit --sysroot "$E" --driver 580.95.05 "$FB/ptx_only.so" >out &&
	grep -q "  sm_120 (detected): runs" out
'
test_expect_success 'kernel-less PTX and cubins (as cuDNN 9.26 libcudnn_ext.so.9): unverified everywhere, exit 0' '
	"$MLSETUP" audit --arch sm_75,sm_90,sm_120,sm_121 "$FB/kernelless_all.so" "$FB/ptx_kernelless.so" >out &&
	grep -q "^  kernel-less (no .entry in these PTX modules): compute_121$" out &&
	grep -q "^  kernel-less (no kernels in these cubins): sm_80 sm_120f$" out &&
	grep -q "  sm_75: unverified: no kernels visible; stored in another form" out &&
	grep -q "2 unverified" out &&
	"$MLSETUP" audit --json --arch sm_90 "$FB/kernelless_all.so" >j &&
	expect_eq "[\"sm_80\", \"sm_120f\", \"compute_121\"]" "$(json j "d[\"files\"][0][\"kernelless\"]")" &&
	expect_eq "{\"sm_90\": \"unverified\"}" "$(json j "d[\"files\"][0][\"state\"]")" &&
	expect_eq "{\"sm_90\": \"unverified\"}" "$(json j "d[\"files\"][0][\"runs_on\"]")"
'
test_expect_success 'a library below its documented minimum (cuSPARSELt, 8.0+) is not for that GPU, and fails nothing' '
	mkdir -p lt && cp "$FB/sass_only.so" lt/libcusparseLt.so.0 &&
	"$MLSETUP" audit --arch sm_70 lt >out &&
	grep -q "  sm_70: not for this GPU: cuSPARSELt supports compute capability 8.0 and newer" out &&
	grep -q "1 not for this GPU" out &&
	cp "$FB/sass_only.so" lt/libcublas.so.12 &&
	expect_exit 5 "$MLSETUP" audit --arch sm_70 lt 2>err &&
	grep -q "libcublas.so.12. cannot run on sm_70" err
'
test_expect_success 'torch own library: torch judgement shown beside NVIDIA one, named first when it fails' '
	mkdir -p sp/torch/lib sp/aaa && cp "$FB/sass_only.so" sp/torch/lib/libtorch_cuda.so &&
	echo "cuda = \"12.8\"" >sp/torch/version.py &&
	"$MLSETUP" audit --arch 8.7 sp >out &&
	grep -q "  sm_87: runs (SASS sm_86 runs on 8.7)" out &&
	grep -q "^    torch.s own check would warn: torch accepts no code of this build for 8.7" out &&
	"$MLSETUP" audit --json --arch 8.7 sp >j &&
	expect_eq false "$(json j "d[\"files\"][0][\"torch_check\"][\"sm_87\"][\"runs\"]")" &&
	cp "$FB/sm120.so" sp/aaa/libcublas.so.12 && cp "$FB/sm120.so" sp/torch/lib/libtorch_cuda.so &&
	expect_exit 5 "$MLSETUP" audit --json --arch sm_90 sp >j 2>err &&
	grep -q "torch/lib/libtorch_cuda.so. cannot run on sm_90: .*(2 libraries cannot: libtorch_cuda.so, libcublas.so.12)" err &&
	expect_eq "libtorch_cuda.so" "$(json j "d[\"failing\"][\"sm_90\"][0].split(\"/\")[-1]")"
'
test_done
