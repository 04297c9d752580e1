#!/bin/sh
# tests/device/run.sh, the prepared real-GPU check, run here against the
# simulated GPUs (fake NVML and libcuda on LD_LIBRARY_PATH, the fake
# nvidia-smi on PATH): its JSON result says detect agrees with nvidia-smi,
# the driver-level SAXPY passed on every GPU and the audits ran; and it
# reports a failure when nvidia-smi disagrees with NVML, when a GPU is
# missing, when the SAXPY faults, and when there is no mlsetup to run.
. "$(dirname "$0")/lib.sh"
RUN="$top/tests/device/run.sh"
FB="$FIXTURES/fatbin"

# A site-packages with the stub torch and one CUDA library in it, for the
# torch steps; a directory standing in for the machine's CUDA libraries.
mkdir -p "$TRASH/site/torch/lib" "$TRASH/cuda/lib64"
cp -R "$FIXTURES/stub_torch/torch/." "$TRASH/site/torch/"
cp "$FB/sass_ptx.so" "$TRASH/site/torch/lib/libtorch_cuda.so"
cp "$FB/sass_only.so" "$TRASH/cuda/lib64/libcublas.so.12"

# device FILE SMI_FILE [RESULT]: the script with NVML and libcuda simulating
# tests/fixtures/gpus/FILE and nvidia-smi answering from SMI_FILE (a path).
device() {
	mkdir -p "$TRASH/smi" &&
		printf '#!/bin/sh\nMLSETUP_FAKE_NVIDIA="%s" exec "%s" "$@"\n' "$2" \
			"$SHIMS/bin/nvidia-smi" >"$TRASH/smi/nvidia-smi" &&
		chmod +x "$TRASH/smi/nvidia-smi" &&
		PATH="$TRASH/smi:$PATH" PYTHONPATH="$TRASH/site" MLSETUP="${DEVICE_MLSETUP-$MLSETUP}" \
			MLSETUP_DEVICE_CUDA_LIBS="$TRASH/cuda/lib64 $SHIMS/libcuda.so.1" \
			MLSETUP_DEVICE_VERIFY_ARGS="--smoke-size 8 --alloc-mib 1" \
			MLSETUP_STUB_TORCH_DEVICES="NVIDIA GeForce RTX 3090=8.6;NVIDIA GeForce RTX 5090=12.0" \
			with_gpus "$1" sh "$RUN" ${3:+"$3"}
}

# step RESULT NAME KEY: a key of the named step in the result.
step() {
	json "$1" "[s for s in d[\"steps\"] if s[\"name\"] == \"$2\"][0][\"$3\"]"
}

test_expect_success 'two simulated GPUs: detect agrees, SAXPY on both, audits ran, ok' '
	device mixed-3090-5090.json "$FIXTURES/gpus/mixed-3090-5090.json" r.json >out 2>err &&
	expect_eq mlsetup.device-check/1 "$(json r.json "d[\"schema\"]")" &&
	expect_eq true "$(json r.json "d[\"ok\"]")" &&
	expect_eq "[]" "$(json r.json "d[\"problems\"]")" &&
	json r.json "d[\"date\"]" | grep -q "^20[0-9-]*T[0-9:]*Z$" &&
	expect_eq "given: MLSETUP=$MLSETUP" "$(json r.json "d[\"mlsetup\"][\"how\"]")" &&
	json r.json "d[\"mlsetup\"][\"version\"]" | grep -q "^mlsetup " &&
	expect_eq "[\"NVIDIA GeForce RTX 3090\", \"NVIDIA GeForce RTX 5090\"]" "$(json r.json "d[\"host\"][\"gpus\"]")" &&
	expect_eq "nvidia-smi detect torch-import saxpy audit-cuda-libs audit-cuda-libs-arch audit-torch audit-torch-arch audit-fixtures torch-choice" \
		"$(json r.json "\" \".join(s[\"name\"] for s in d[\"steps\"])")" &&
	expect_eq "pass pass pass pass pass pass pass pass pass pass" \
		"$(json r.json "\" \".join(s[\"status\"] for s in d[\"steps\"])")" &&
	expect_eq "[\"$MLSETUP\", \"detect\", \"--json\"]" "$(step r.json detect command)" &&
	expect_eq 0 "$(step r.json detect exit_code)" &&
	json r.json "[s[\"seconds\"] >= 0 and s[\"timeout_s\"] <= 120 for s in d[\"steps\"]]" | grep -qv false &&
	expect_eq "570.124.04 570.124.04" "$(json r.json "\" \".join(s[\"fields\"][k][\"driver_version\"] for s in d[\"steps\"] if s[\"name\"] == \"detect\" for k in (\"mlsetup\", \"nvidia_smi\"))")" &&
	expect_eq "8.6 12.0" "$(json r.json "\" \".join(g[\"compute_cap\"] for g in d[\"steps\"][1][\"fields\"][\"nvidia_smi\"][\"gpus\"])")" &&
	expect_eq "8.6 12.0" "$(json r.json "\" \".join(g[\"compute_capability\"] for g in d[\"steps\"][1][\"fields\"][\"mlsetup\"][\"gpus\"])")" &&
	expect_eq "verify --python python3 --json --no-progress --smoke-size 8 --alloc-mib 1" \
		"$(json r.json "\" \".join(d[\"steps\"][3][\"command\"][1:])")" &&
	expect_eq "0:pass 1:pass" "$(json r.json "\" \".join(\"%d:%s\" % (g[\"index\"], g[\"status\"]) for g in d[\"steps\"][3][\"fields\"][\"gpus\"])")" &&
	expect_eq "[\"sm_86\", \"sm_120\"] detected 2" "$(json r.json "\" \".join(str(x) for x in (json.dumps(d[\"steps\"][4][\"fields\"][\"devices\"]), d[\"steps\"][4][\"fields\"][\"devices_from\"], d[\"steps\"][4][\"fields\"][\"libraries_scanned\"]))")" &&
	expect_eq "--arch sm_86,sm_120" "$(json r.json "\" \".join(d[\"steps\"][5][\"command\"][3:5])")" &&
	expect_eq "{\"sm_86\": true, \"sm_120\": false}" "$(json r.json "d[\"steps\"][4][\"fields\"][\"runs_on\"]")" &&
	expect_eq "$TRASH/site" "$(step r.json audit-torch command | python3 -c "import json,sys; print(json.load(sys.stdin)[-1])")" &&
	expect_eq 1 "$(json r.json "d[\"steps\"][6][\"fields\"][\"libraries_with_cuda\"]")" &&
	expect_eq "[]" "$(json r.json "d[\"steps\"][8][\"fields\"][\"mismatches\"]")" &&
	test "$(json r.json "d[\"steps\"][8][\"fields\"][\"answers_checked\"]")" -ge 19 &&
	expect_eq "8.5.0 8.5.0" "$(json r.json "\" \".join([d[\"steps\"][9][\"fields\"][\"version\"], d[\"steps\"][9][\"fields\"][\"expected\"][0]])")" &&
	expect_eq "--torch-index-url" "$(json r.json "d[\"steps\"][9][\"command\"][-2]")" &&
	grep -q "device-check: ok in" out
'
test_expect_success 'nvidia-smi reports another compute capability: detect fails, exit 1' '
	python3 -c "import json,sys; d = json.load(open(sys.argv[1])); d[\"gpus\"][1][\"cc\"] = \"10.0\"; json.dump(d, open(\"smi.json\", \"w\"))" \
		"$FIXTURES/gpus/mixed-3090-5090.json" &&
	expect_exit 1 device mixed-3090-5090.json "$TRASH/smi.json" r.json >out 2>err &&
	expect_eq false "$(json r.json "d[\"ok\"]")" &&
	expect_eq fail "$(step r.json detect status)" &&
	step r.json detect reason | grep -q "GPU 1 compute capability 12.0, nvidia-smi says 10.0" &&
	expect_eq false "$(json r.json "d[\"steps\"][1][\"fields\"][\"agree\"][\"compute_capability\"]")" &&
	expect_eq pass "$(step r.json saxpy status)" &&
	grep -q "device-check: FAILED" out
'
test_expect_success 'a GPU nvidia-smi lists that NVML and CUDA do not: detect and SAXPY fail' '
	expect_exit 1 device rtx3090-550.json "$FIXTURES/gpus/mixed-3090-5090.json" r.json >out 2>err &&
	expect_eq false "$(json r.json "d[\"ok\"]")" &&
	step r.json detect reason | grep -q "1 GPUs, nvidia-smi lists 2" &&
	step r.json detect reason | grep -q "driver 550" &&
	expect_eq fail "$(step r.json saxpy status)" &&
	step r.json saxpy reason | grep -q "1 of 1 GPUs passed (nvidia-smi lists 2)"
'
test_expect_success 'the SAXPY kernel faults (CUDA_ERROR_LAUNCH_FAILED): saxpy fails, exit 1' '
	expect_exit 1 device smoke-launch-error.json "$FIXTURES/gpus/smoke-launch-error.json" r.json >out 2>err &&
	expect_eq pass "$(step r.json detect status)" &&
	expect_eq fail "$(step r.json saxpy status)" &&
	step r.json saxpy reason | grep -q "CUDA_ERROR_LAUNCH_FAILED" &&
	expect_eq false "$(json r.json "d[\"ok\"]")"
'
test_expect_success 'no mlsetup that runs: nothing checked, the result says why, exit 1' '
	DEVICE_MLSETUP="$TRASH/missing/mlsetup" expect_exit 1 \
		device h100-570.json "$FIXTURES/gpus/h100-570.json" r.json >out 2>err &&
	expect_eq false "$(json r.json "d[\"ok\"]")" &&
	expect_eq "[]" "$(json r.json "d[\"steps\"]")" &&
	json r.json "d[\"problems\"][0]" | grep -q "no mlsetup binary: MLSETUP=.* does not run"
'
test_expect_success 'an H100, no argument: the result is $OUT/device-result.json, ok' '
	mkdir o &&
	OUT="$TRASH/o" device h100-570.json "$FIXTURES/gpus/h100-570.json" >out 2>err &&
	expect_eq true "$(json o/device-result.json "d[\"ok\"]")" &&
	expect_eq "[\"NVIDIA H100 80GB HBM3\"]" "$(json o/device-result.json "d[\"host\"][\"gpus\"]")" &&
	expect_eq "--arch sm_90" "$(step o/device-result.json audit-torch-arch command | python3 -c "import json,sys; print(\" \".join(json.load(sys.stdin)[3:5]))")" &&
	test "$(step o/device-result.json audit-fixtures fields | python3 -c "import json,sys; print(json.load(sys.stdin)[\"answers_checked\"])")" -ge 19 &&
	expect_eq pass "$(step o/device-result.json torch-choice status)" &&
	step o/device-result.json torch-choice reason | grep -q "^torch 9.0.0+cu126 (cu126) for sm_90 with driver 570"
'
test_expect_success 'the judge works the choice out itself: a driver nvidia-smi says is newer fails torch-choice' '
	python3 -c "import json,sys; d = json.load(open(sys.argv[1])); d[\"driver\"] = \"595.45.04\"; json.dump(d, open(\"smi595.json\", \"w\"))" \
		"$FIXTURES/gpus/h100-570.json" &&
	expect_exit 1 device h100-570.json "$TRASH/smi595.json" r.json >out 2>err &&
	expect_eq fail "$(step r.json torch-choice status)" &&
	step r.json torch-choice reason | grep -q "chose 9.0.0+cu126, the rule gives 9.0.0" &&
	expect_eq "[\"9.0.0\", \"default\", \"13.0\"]" "$(json r.json "json.dumps([s for s in d[\"steps\"] if s[\"name\"] == \"torch-choice\"][0][\"fields\"][\"expected\"])")"
'
test_done
