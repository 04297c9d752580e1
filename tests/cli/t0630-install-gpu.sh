#!/bin/sh
# install and verify on simulated GPUs: the downloaded wheels are audited
# before anything is extracted, so a GPU the manifest cannot run stops the
# install with the diagnosis (exit 5, --force overrides); after building,
# verify runs the driver smoke test (fake libcuda) and the framework smoke
# test (a stub torch wheel) and classifies each scenario with its exit code.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
# A binary wheel whose library has SASS sm_75 sm_80 sm_86 sm_90 only.
mkdir -p "$TRASH/cudalib/cudalib"
cp "$top/tests/fixtures/fatbin/sass_only.so" "$TRASH/cudalib/cudalib/libkernels.so"
echo "VALUE = 'cuda'" >"$TRASH/cudalib/cudalib/__init__.py"
wheel_from_dir cudalib 1.0 py3-none-manylinux2014_x86_64 "$TRASH/cudalib" "$TRASH/web/files"
CUDAWHL=cudalib-1.0-py3-none-manylinux2014_x86_64.whl
wheel_manifest "$TRASH/cuda.txt" purepkg-1.0-py3-none-any.whl "$CUDAWHL"
# The stub torch as a wheel, so verify's framework test has torch to run.
wheel_from_dir torch 2.6.0 py3-none-any "$top/tests/fixtures/stub_torch" "$TRASH/web/files"
wheel_manifest "$TRASH/torch.txt" purepkg-1.0-py3-none-any.whl torch-2.6.0-py3-none-any.whl

test_expect_success 'sm_120 GPU, wheels without sm_120 code: stops before extracting, exit 5' '
	expect_exit 5 with_gpus rtx5090.json inst --manifest cuda.txt --target "$TRASH/g1" 2>err &&
	grep -q "NVIDIA GeForce RTX 5090 (sm_120) cannot run the CUDA code" err &&
	grep -q "no kernel image is available" err &&
	grep -q "hint: install with --manifest requirements_blackwell.txt" err &&
	test ! -e "$TRASH/g1" && no_staging "$TRASH" &&
	h=$(sha256sum "web/files/$CUDAWHL" | cut -d" " -f1) &&
	test ! -e "$TRASH/cache/unpacked/sha256/$h"
'
test_expect_success 'the refusal stops the downloads still running' '
	wheel_manifest "$TRASH/cudaheld.txt" purepkg-1.0-py3-none-any.whl "$CUDAWHL" \
		datapkg-0.5-py3-none-any.whl &&
	faults web "{\"datapkg-0.5-py3-none-any.whl\": \"wait_for:held\"}" &&
	test_when_finished "touch \"$TRASH/web/held\"; faults web \"{}\"" &&
	{ { with_gpus rtx5090.json inst --manifest cudaheld.txt --target "$TRASH/gh" \
		--cache-dir "$TRASH/ghcache" --low-speed-time 120 >out 2>err; echo $? >rc; } & } &&
	pid=$! &&
	# Without the stop, the held download keeps the install waiting: give
	# it a minute (it needs about a second), then let the file go.
	i=0 && while [ ! -f rc ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	stopped=$(test -f rc && echo yes || echo no) &&
	touch "$TRASH/web/held" && wait $pid &&
	expect_eq yes "$stopped" &&
	expect_eq 5 "$(cat rc)" &&
	grep -q "NVIDIA GeForce RTX 5090 (sm_120) cannot run the CUDA code" err &&
	! grep -q "could not be fetched" err &&
	test ! -e "$TRASH/gh" && no_staging "$TRASH" &&
	test -z "$(ls "$TRASH/ghcache/tmp" 2>/dev/null)"
'
test_expect_success '--force builds anyway, with a warning' '
	with_gpus rtx5090.json inst --manifest cuda.txt --target "$TRASH/g2" --force >out 2>err &&
	grep -q "building anyway" err &&
	"$TRASH/g2/bin/python" -c "import cudalib"
'
test_expect_success 'an sm_86 GPU runs the same wheels: installs' '
	with_gpus rtx3090-550.json inst --manifest cuda.txt --target "$TRASH/g3" >out 2>err &&
	"$TRASH/g3/bin/python" -c "import cudalib" &&
	expect_eq true "$(json "$TRASH/g3/mlsetup-report.json" "d[\"audit_before_build\"][\"runs_on\"][\"sm_86\"]")"
'
test_expect_success 'install with torch runs the GPU checks and records the verdict' '
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json \
		inst --manifest torch.txt --smoke-size 8 --alloc-mib 1 --target "$TRASH/tenv" >out 2>err &&
	r="$TRASH/tenv/mlsetup-report.json" &&
	expect_eq pass "$(json "$r" "d[\"gpu_verification\"][\"verdict\"][\"status\"]")" &&
	grep -q "^verdict" out
'
test_expect_success 'verify: healthy torch on an sm_86 GPU passes, exit 0' '
	MLSETUP_STUB_TORCH=healthy with_gpus rtx3090-550.json \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" --json >j &&
	expect_eq mlsetup.verify/1 "$(json j "d[\"schema\"]")" &&
	expect_eq pass "$(json j "d[\"verdict\"][\"status\"]")" &&
	expect_eq pass "$(json j "d[\"driver_smoke\"][\"gpus\"][0][\"status\"]")"
'
test_expect_success 'verify: no kernel image on sm_120 fails with exit 5 naming the fix' '
	MLSETUP_STUB_TORCH=no_kernel_image expect_exit 5 with_gpus rtx5090.json \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" >out 2>err &&
	grep -q "requirements_blackwell.txt" out err &&
	grep -qi "no kernel image\|no_kernel_image" out
'
test_expect_success 'verify: a CPU-only torch build on a GPU machine fails with exit 5' '
	MLSETUP_STUB_TORCH=cpu_only expect_exit 5 with_gpus rtx3090-550.json \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" --json >j 2>err &&
	expect_eq cpu_only_build "$(json j "d[\"verdict\"][\"cause\"]")"
'
test_expect_success 'verify: wrong numerical results fail with exit 5' '
	MLSETUP_STUB_TORCH=wrong_results expect_exit 5 with_gpus rtx3090-550.json \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" --json >j 2>err &&
	expect_eq wrong_results "$(json j "d[\"verdict\"][\"cause\"]")"
'
test_expect_success 'verify: the CUDA driver failing the SAXPY launch fails with exit 5' '
	MLSETUP_STUB_TORCH=healthy expect_exit 5 with_gpus smoke-launch-error.json \
		"$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" --json >j 2>err &&
	json j "d[\"driver_smoke\"]" | grep -q "719"
'
test_expect_success 'verify without a GPU: CPU checks pass, GPU checks skipped, exit 0' '
	MLSETUP_STUB_TORCH=cuda_unavailable "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" \
		--target "$TRASH/tenv" >out &&
	grep -q "skip" out && grep -q "^verdict   pass" out
'
test_expect_success 'verify --require-gpu without a GPU: exit 5' '
	MLSETUP_STUB_TORCH=cuda_unavailable expect_exit 5 "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" \
		--target "$TRASH/tenv" --require-gpu >out 2>err &&
	grep -q "gpu_required" out
'
test_expect_success 'doctor prints findings: machine, the manifest that fits, the checks' '
	# nothing fits driver 550 on a Blackwell GPU: doctor says so, exit 6
	MLSETUP_STUB_TORCH=healthy expect_exit 6 with_gpus rtx5090-550.json "$MLSETUP" doctor \
		--smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/tenv" \
		>out 2>err &&
	grep -q "^machine" out && grep -q "^fits      nothing" out &&
	grep -q "570.26" out
'
test_expect_success 'verify on a directory that is no environment: exit 1 with a hint' '
	expect_exit 1 "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 --sysroot "$SYSROOTS/empty" --target "$TRASH/nothing" 2>err &&
	grep -q "no environment at" err && grep -q "hint:" err
'
test_expect_success '--gpu: a machine without a GPU builds for other GPUs, audited for them' '
	expect_exit 5 inst --manifest cuda.txt --gpu sm_120 --driver 595.45.04 \
		--target "$TRASH/gg1" 2>err &&
	grep -q "GPU given with --gpu (sm_120) cannot run the CUDA code" err &&
	test ! -e "$TRASH/gg1" &&
	inst --manifest cuda.txt --gpu sm_86 --driver 550.54.15 --target "$TRASH/gg2" >out 2>err &&
	test -d "$TRASH/gg2/lib" &&
	json "$TRASH/gg2/mlsetup-report.json" "d[\"machine\"][\"gpus\"][0][\"sm\"]" >sm &&
	expect_eq sm_86 "$(cat sm)"
'

test_expect_success '--gpu: the GPU checks are left to the machines that have them, and said so' '
	inst --manifest torch.txt --gpu sm_86 --target "$TRASH/gg3" >out 2>err &&
	grep -q "the GPU checks are for the GPUs given with --gpu (sm_86)" err &&
	grep -q "mlsetup verify --target" err
'

test_done
