#!/bin/sh
# detect with simulated GPUs through the real dlopen path (fake NVML and
# libcuda on the library search path).
. "$(dirname "$0")/lib.sh"
E="$SYSROOTS/empty"

test_expect_success 'one RTX 5090: sm_120, 12.0, Blackwell, driver 570.124.04, CUDA 12.8' '
	with_gpus rtx5090.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	expect_eq 1 "$(json j "len(d[\"gpus\"])")" &&
	expect_eq sm_120 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq 12.0 "$(json j "d[\"gpus\"][0][\"compute_capability\"]")" &&
	expect_eq Blackwell "$(json j "d[\"gpus\"][0][\"architecture\"]")" &&
	expect_eq "NVIDIA GeForce RTX 5090" "$(json j "d[\"gpus\"][0][\"name\"]")" &&
	expect_eq 32607 "$(json j "d[\"gpus\"][0][\"memory_mib\"]")" &&
	expect_eq 0x2b85 "$(json j "d[\"gpus\"][0][\"pci_device_id\"]")" &&
	expect_eq GPU-8a4c2d1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e "$(json j "d[\"gpus\"][0][\"uuid\"]")" &&
	expect_eq 0000:01:00.0 "$(json j "d[\"gpus\"][0][\"pci_bus_id\"]")" &&
	expect_eq 570.124.04 "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq 12.8 "$(json j "d[\"driver\"][\"cuda_version\"]")" &&
	expect_eq nvml "$(json j "d[\"driver\"][\"source\"]")"
'
test_expect_success 'NVML answering everything: later probes are skipped, not run' '
	with_gpus rtx5090.json "$MLSETUP" detect --sysroot "$E" --json >j &&
	expect_eq ok "$(json j "d[\"probes\"][0][\"status\"]")" &&
	expect_eq "skipped skipped skipped skipped" "$(json j "\" \".join(p[\"status\"] for p in d[\"probes\"][1:])")" &&
	expect_eq "[]" "$(json j "d[\"advice\"]")"
'
test_expect_success 'human output names the GPU and its compute capability' '
	with_gpus rtx5090.json "$MLSETUP" detect --sysroot "$E" >out &&
	grep -q "NVIDIA GeForce RTX 5090: compute capability 12.0 (sm_120, Blackwell)" out &&
	grep -q "570.124.04 (CUDA 12.8)" out
'
test_expect_success 'mixed sm_86 + sm_120 lists both in PCI order' '
	with_gpus mixed-3090-5090.json "$MLSETUP" detect --sysroot "$E" --json >j &&
	expect_eq 2 "$(json j "len(d[\"gpus\"])")" &&
	expect_eq "sm_86 sm_120" "$(json j "\" \".join(g[\"sm\"] for g in d[\"gpus\"])")" &&
	expect_eq "Ampere Blackwell" "$(json j "\" \".join(g[\"architecture\"] for g in d[\"gpus\"])")" &&
	expect_eq "0 1" "$(json j "\" \".join(str(g[\"index\"]) for g in d[\"gpus\"])")"
'
test_expect_success 'NVML init error is reported and the CUDA driver API fills in' '
	with_gpus nvml-init-error.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	expect_eq failed "$(json j "d[\"probes\"][0][\"status\"]")" &&
	json j "d[\"probes\"][0][\"detail\"]" | grep -q "nvmlInit_v2 failed: .*(9)" &&
	expect_eq ok "$(json j "d[\"probes\"][1][\"status\"]")" &&
	expect_eq sm_80 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq "NVIDIA A100-SXM4-80GB" "$(json j "d[\"gpus\"][0][\"name\"]")" &&
	expect_eq 81920 "$(json j "d[\"gpus\"][0][\"memory_mib\"]")" &&
	expect_eq 12.4 "$(json j "d[\"driver\"][\"cuda_version\"]")" &&
	expect_eq cuda "$(json j "d[\"driver\"][\"cuda_version_source\"]")"
'
test_expect_success 'NVML functions that are unavailable are named; libcuda fills the gaps' '
	with_gpus missing-cc-symbol.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	json j "d[\"probes\"][0][\"detail\"]" | grep -q "nvmlDeviceGetCudaComputeCapability unavailable" &&
	expect_eq sm_89 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq Ada "$(json j "d[\"gpus\"][0][\"architecture\"]")" &&
	expect_eq 535.183.01 "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq 12.2 "$(json j "d[\"driver\"][\"cuda_version\"]")"
'
test_expect_success 'NVML and libcuda both failing: nvidia-smi is the last resort' '
	PATH="$SHIMS/bin:$PATH" with_gpus all-fail-smi-ok.json "$MLSETUP" detect --sysroot "$E" --json >j &&
	json j "d[\"probes\"][0][\"detail\"]" | grep -q "(18)" &&
	json j "d[\"probes\"][1][\"detail\"]" | grep -q "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)" &&
	expect_eq ok "$(json j "d[\"probes\"][4][\"status\"]")" &&
	expect_eq "NVIDIA GeForce RTX 4090" "$(json j "d[\"gpus\"][0][\"name\"]")" &&
	expect_eq sm_89 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq 0x2684 "$(json j "d[\"gpus\"][0][\"pci_device_id\"]")" &&
	expect_eq 560.35.03 "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq nvidia-smi "$(json j "d[\"driver\"][\"source\"]")" &&
	expect_eq 12.6 "$(json j "d[\"driver\"][\"cuda_version\"]")"
'
test_expect_success 'a broken fake GPU file looks like no driver, detection still exits 0' '
	echo "{not json" >bad.json &&
	LD_LIBRARY_PATH="$SHIMS" MLSETUP_FAKE_NVIDIA="$TRASH/bad.json" \
		"$MLSETUP" detect --sysroot "$E" --no-smi --json >j 2>err &&
	expect_eq "[]" "$(json j "d[\"gpus\"]")"
'
test_expect_success 'precision facts: simulated H100 has bf16, tf32, fp8, recommends bfloat16' '
	with_gpus h100-570.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	expect_eq true "$(json j "str(d[\"gpus\"][0][\"features\"][\"bf16\"]).lower()")" &&
	expect_eq true "$(json j "str(d[\"gpus\"][0][\"features\"][\"tf32\"]).lower()")" &&
	expect_eq true "$(json j "str(d[\"gpus\"][0][\"features\"][\"fp8\"]).lower()")" &&
	expect_eq false "$(json j "str(d[\"gpus\"][0][\"features\"][\"fp4\"]).lower()")" &&
	expect_eq true "$(json j "str(d[\"gpus\"][0][\"features\"][\"flash_attention_2\"]).lower()")" &&
	expect_eq bfloat16 "$(json j "d[\"gpus\"][0][\"recommended_dtype\"]")" &&
	with_gpus h100-570.json "$MLSETUP" detect --sysroot "$E" --no-smi >out &&
	grep -q "precision: bf16 tf32 fp8 · recommended dtype bfloat16 · FlashAttention 2: yes" out
'
test_expect_success 'precision facts: simulated V100 has no bf16 and recommends float16' '
	with_gpus v100.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	expect_eq sm_70 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq "False False False False False" "$(json j "\" \".join(str(d[\"gpus\"][0][\"features\"][k]) for k in (\"bf16\", \"tf32\", \"fp8\", \"fp4\", \"flash_attention_2\"))")" &&
	expect_eq float16 "$(json j "d[\"gpus\"][0][\"recommended_dtype\"]")" &&
	with_gpus v100.json "$MLSETUP" detect --sysroot "$E" --no-smi >out &&
	grep -q "recommended dtype float16 · FlashAttention 2: no" out &&
	with_gpus rtx5090.json "$MLSETUP" detect --sysroot "$E" --no-smi --json >j &&
	expect_eq true "$(json j "d[\"gpus\"][0][\"features\"][\"fp4\"]")"
'
test_done
