#!/bin/sh
# verify explains each known failure class from what the CUDA driver (the
# fake libcuda: a CUresult) and torch (the stub: the text torch prints)
# report, with its exit code: an NVSwitch system without its Fabric Manager
# (error 802), a GPU in exclusive-process mode held elsewhere (46), MIG mode
# without a MIG device, a container without the GPU runtime, and a driver
# too old for the build (exit 6).
. "$(dirname "$0")/lib.sh"
STUB="$top/tests/fixtures/stub_torch"

# verify_with MODE SYSROOT ARGS...: verify with the stub torch in MODE
# (python3 --python: no environment needed), /proc, /sys and /dev read
# under tests/fixtures/sysroot/SYSROOT.
verify_with() {
	mode=$1 root=$2
	shift 2
	PYTHONPATH="$STUB" MLSETUP_STUB_TORCH=$mode "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 \
		--sysroot "$SYSROOTS/$root" --python python3 --no-progress "$@"
}
# remedy_of FILE SCOPE NAME: the remedy of the check NAME in the verdict of
# the JSON document FILE, machine-wide (SCOPE "machine") or of GPU 0 ("gpu").
remedy_of() {
	case $2 in
	machine) json "$1" "[k[\"remedy\"] for k in d[\"verdict\"][\"checks\"] if k[\"name\"] == \"$3\"][0]" ;;
	gpu) json "$1" "[k[\"remedy\"] for k in d[\"verdict\"][\"gpus\"][0][\"checks\"] if k[\"name\"] == \"$3\"][0]" ;;
	esac
}

test_expect_success 'error 802 on an NVSwitch system: the Fabric Manager, exit 5' '
	MLSETUP_STUB_TORCH_DEVICES="NVIDIA H100 80GB HBM3=9.0" expect_exit 5 with_gpus hgx-h100-no-fabric-manager.json \
		verify_with system_not_ready nvidia-devices --json >j 2>err &&
	expect_eq system_not_ready "$(json j "d[\"verdict\"][\"cause\"]")" &&
	json j "d[\"driver_smoke\"][\"detail\"]" | grep -q "cuInit: CUDA_ERROR_SYSTEM_NOT_READY (802): system not yet initialized" &&
	expect_eq system_not_ready "$(json j "d[\"framework\"][\"class\"]")" &&
	json j "d[\"framework\"][\"detail\"]" | grep -q "Error 802: system not yet initialized" &&
	remedy_of j machine torch_cuda >remedy &&
	grep -q "Fabric Manager of exactly the driver.s version (550.54.15; Debian/Ubuntu: nvidia-fabricmanager-550)" remedy &&
	grep -q "systemctl enable --now nvidia-fabricmanager" remedy &&
	grep -q "hint: CUDA is waiting for the NVIDIA Fabric Manager" err
'
test_expect_success 'error 46 on an exclusive-process GPU: free it or set DEFAULT, exit 5' '
	MLSETUP_STUB_TORCH_DEVICES="NVIDIA A100-SXM4-80GB=8.0" expect_exit 5 with_gpus a100-exclusive-busy.json \
		verify_with devices_busy nvidia-devices --json >j 2>err &&
	expect_eq gpu_busy "$(json j "d[\"verdict\"][\"cause\"]")" &&
	expect_eq 46 "$(json j "d[\"driver_smoke\"][\"gpus\"][0][\"error\"][\"code\"]")" &&
	remedy_of j gpu driver_saxpy | grep -q "sudo nvidia-smi -i 0 -c DEFAULT" &&
	remedy_of j gpu fp32_matmul | grep -q "exclusive-process" &&
	json j "[k[\"detail\"] for k in d[\"verdict\"][\"gpus\"][0][\"checks\"] if k[\"name\"] == \"fp32_matmul\"][0]" |
		grep -q "CUDA error: all CUDA-capable devices are busy or unavailable"
'
test_expect_success 'MIG mode without a MIG device: create one, CUDA_VISIBLE_DEVICES=MIG-..., exit 5' '
	expect_exit 5 with_gpus a100-mig-no-instance.json \
		verify_with cuda_unavailable nvidia-devices --json >j 2>err &&
	expect_eq gpu_not_visible "$(json j "d[\"verdict\"][\"cause\"]")" &&
	json j "d[\"framework\"][\"cuda_error\"]" | grep -q "No CUDA GPUs are available" &&
	remedy_of j machine torch_cuda >remedy &&
	grep -q "nvidia-smi -L" remedy && grep -q "sudo nvidia-smi mig -i 0 -cgi <profile> -C" remedy &&
	grep -q "set CUDA_VISIBLE_DEVICES to its MIG-... UUID" remedy
'
test_expect_success 'a MIG UUID CUDA does not find is named, exit 5' '
	CUDA_VISIBLE_DEVICES=MIG-4f1c2a4b-5d6e-7f80-91a2-b3c4d5e6f708 expect_exit 5 with_gpus a100-mig-no-instance.json \
		verify_with cuda_unavailable nvidia-devices >out 2>err &&
	grep -q "CUDA_VISIBLE_DEVICES=.MIG-4f1c2a4b-5d6e-7f80-91a2-b3c4d5e6f708. names a MIG device that CUDA does not find" out &&
	grep -q "remedy: list the MIG devices with .nvidia-smi -L." out
'
test_expect_success 'a driver too old for the build: the minimum, what it supports, exit 6' '
	MLSETUP_STUB_TORCH_DEVICES="NVIDIA GeForce RTX 3090=8.6" expect_exit 6 with_gpus rtx3090-520.json \
		verify_with driver_too_old empty --json >j 2>err &&
	expect_eq driver_too_old "$(json j "d[\"verdict\"][\"cause\"]")" &&
	remedy_of j machine torch_cuda >remedy &&
	grep -q "update the NVIDIA driver to 550.54.14 or newer (torch is built with CUDA 12.4)" remedy &&
	grep -q "this machine has 520.61.05, for CUDA 11.4 at most" remedy
'
if ldconfig -p 2>/dev/null | grep -q "libcuda.so.1"; then
	echo "# skipping the container tests: this machine has a real libcuda.so.1"
	test_done
	exit
fi
test_expect_success 'a container without the GPU runtime: --gpus all, exit 5' '
	expect_exit 5 verify_with no_driver container-no-gpu-runtime --json >j 2>err &&
	expect_eq gpu_not_visible "$(json j "d[\"verdict\"][\"cause\"]")" &&
	json j "d[\"framework\"][\"cuda_error\"]" | grep -q "Found no NVIDIA driver on your system" &&
	json j "[k[\"detail\"] for k in d[\"verdict\"][\"checks\"] if k[\"name\"] == \"torch_cuda\"][0]" |
		grep -q "docker container without the GPU runtime: no /dev/nvidia\* devices" &&
	remedy_of j machine torch_cuda | grep -q "docker run --gpus all (NVIDIA Container Toolkit)" &&
	expect_eq "NVIDIA A100-SXM4-80GB" "$(json j "d[\"verdict\"][\"gpus\"][0][\"name\"]")"
'
test_expect_success 'a container given /dev/nvidia* but not libcuda.so.1: --gpus all, exit 5' '
	expect_exit 5 verify_with no_driver container-no-libcuda >out 2>err &&
	grep -q "/dev/nvidia\* are there, but not the driver.s library libcuda.so.1" out &&
	grep -q "remedy: start the container with GPU access: docker run --gpus all" out
'
test_done
