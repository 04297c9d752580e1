#!/bin/sh
# verify reports each GPU's matmul speed per dtype in TFLOP/s (human and
# JSON), and judges bf16 by the GPU: a bf16 matmul failing on a GPU with
# bf16 in hardware (A100, H100) is a failed GPU check (exit 5) whose
# diagnosis names the GPU; on a Volta it is expected (exit 0). The stub
# torch runs the matmuls on a simulated clock at MLSETUP_STUB_TORCH_TFLOPS.
. "$(dirname "$0")/lib.sh"
E="$SYSROOTS/empty"
STUB="$top/tests/fixtures/stub_torch"

# verify_stub FIXTURE DEVICES ARGS...: verify with the stub torch on the
# simulated GPUs (python3 --python: no environment needed).
verify_stub() {
	f=$1 devices=$2
	shift 2
	PYTHONPATH="$STUB" MLSETUP_STUB_TORCH_DEVICES="$devices" with_gpus "$f" \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$E" --python python3 \
		--no-progress "$@"
}

test_expect_success 'verify: each dtype'"'"'s matmul speed per GPU in TFLOP/s' '
	MLSETUP_STUB_TORCH_TFLOPS="fp32=51.2,fp16=756,bf16=740" \
		verify_stub h100-570.json "NVIDIA H100 80GB HBM3=9.0" >out 2>err &&
	grep -q "^  gpu 0: NVIDIA H100 80GB HBM3 (sm_90)" out &&
	grep -q "^    matmul speed         fp32 51.2 TFLOP/s · fp16 756 TFLOP/s · bf16 740 TFLOP/s\$" out &&
	grep -q "fp32_matmul    pass  8 x 8: .* (mean of [0-9]* runs after a warm-up), 51.2 TFLOP/s" out &&
	MLSETUP_STUB_TORCH_TFLOPS="fp32=51.2,fp16=756,bf16=740" \
		verify_stub h100-570.json "NVIDIA H100 80GB HBM3=9.0" --json >j &&
	json j "[(m[\"dtype\"], m[\"status\"], m[\"n\"], round(float(m[\"tflops\"]), 3)) for m in d[\"framework\"][\"gpus\"][0][\"matmul\"]]" >mm &&
	expect_eq "[[\"fp32\", \"pass\", 8, 51.2], [\"fp16\", \"pass\", 8, 756.0], [\"bf16\", \"pass\", 8, 740.0]]" "$(cat mm)" &&
	json j "[c[\"tflops\"] is None for c in d[\"framework\"][\"gpus\"][0][\"checks\"]]" >nulls &&
	expect_eq "[false, false, false, true, true]" "$(cat nulls)"
'
test_expect_success 'verify: bf16 failing on an A100 fails the GPU check, exit 5, naming the GPU' '
	MLSETUP_STUB_TORCH=bf16_fails expect_exit 5 verify_stub a100-570.json "NVIDIA A100-SXM4-80GB=8.0" >out 2>err &&
	grep -q "^    bf16_matmul    fail  RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED" out &&
	grep -q "remedy: NVIDIA A100-SXM4-80GB (Ampere, sm_80) has bf16 in hardware" out &&
	grep -q "matmul speed         fp32 10.0 TFLOP/s · fp16 40.0 TFLOP/s · bf16 failed" out &&
	grep -q "^verdict   fail GPU 0 (NVIDIA A100-SXM4-80GB) bf16_matmul failed" out &&
	grep -q "hint: NVIDIA A100-SXM4-80GB (Ampere, sm_80) has bf16 in hardware" err
'
test_expect_success 'verify --json: bf16 failing on an H100 is cause precision_failed, exit 5' '
	MLSETUP_STUB_TORCH=bf16_fails expect_exit 5 verify_stub h100-570.json "NVIDIA H100 80GB HBM3=9.0" --json >j 2>err &&
	expect_eq precision_failed "$(json j "d[\"verdict\"][\"cause\"]")" &&
	expect_eq 5 "$(json j "d[\"verdict\"][\"exit_code\"]")" &&
	json j "[k[\"remedy\"] for k in d[\"verdict\"][\"gpus\"][0][\"checks\"] if k[\"name\"] == \"bf16_matmul\"][0]" |
		grep -q "NVIDIA H100 80GB HBM3 (Hopper, sm_90) has bf16 in hardware" &&
	expect_eq "[\"fail\", null]" "$(json j "[d[\"framework\"][\"gpus\"][0][\"matmul\"][2][k] for k in (\"status\", \"tflops\")]")"
'
test_expect_success 'verify: the same torch on a V100 (no bf16 in hardware) passes, exit 0' '
	MLSETUP_STUB_TORCH=bf16_fails verify_stub v100-570.json "Tesla V100-SXM2-16GB=7.0" >out 2>err &&
	grep -q "^    bf16_matmul    skip  bf16 needs compute capability 8.0 or newer" out &&
	grep -q "matmul speed         fp32 10.0 TFLOP/s · fp16 40.0 TFLOP/s · bf16 skipped" out &&
	! grep -q "^verdict   fail" out
'
test_done
