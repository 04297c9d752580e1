#!/bin/sh
# The remedies for a GPU no shipped build covers say which way it misses:
# a GPU newer than every build (compute capability 13.0) is told what would
# cover it, never that builds "dropped" it; a GPU older than every build
# (Kepler) is told its generation was dropped. A GPU whose PCI id is not in
# mlsetup's table is named by its id and bus.
. "$(dirname "$0")/lib.sh"
E="$SYSROOTS/empty"
STUB="$top/tests/fixtures/stub_torch"

test_expect_success 'plan: a GPU newer than every build is told what would cover it' '
	expect_exit 6 with_gpus future-cc13.json "$MLSETUP" plan --json --sysroot "$E" --python 3.12 >j 2>err &&
	json j "d[\"problem\"]" >problem && json j "d[\"remedy\"]" >remedy &&
	grep -q "NVIDIA Future GPU (sm_130): it is newer than the CUDA builds of the shipped manifests" problem &&
	grep -q "requirements_blackwell.txt (torch 2.8.0, CUDA 12.8), has SASS up to sm_120 and no PTX" problem &&
	grep -q "SASS for sm_130 (from a CUDA toolkit newer than 12.8) or PTX it can JIT" remedy &&
	grep -q "driver new enough" remedy &&
	! grep -q "dropped" problem remedy err
'
test_expect_success 'plan: a GPU older than every build is told its generation was dropped' '
	expect_exit 6 with_gpus k80.json "$MLSETUP" plan --json --sysroot "$E" --python 3.12 >j 2>err &&
	json j "d[\"remedy\"]" | grep -q "current PyTorch builds dropped this GPU generation" &&
	! grep -q "newer than" j err
'
test_expect_success 'verify: no kernel image on a GPU newer than every build names what covers it' '
	PYTHONPATH="$STUB" MLSETUP_STUB_TORCH=no_kernel_image \
		MLSETUP_STUB_TORCH_DEVICES="NVIDIA Future GPU=13.0" \
		expect_exit 5 with_gpus future-cc13.json "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 \
		--sysroot "$E" --python python3 --json >j 2>err &&
	json j "[k[\"remedy\"] for k in d[\"verdict\"][\"gpus\"][0][\"checks\"] if k[\"name\"] == \"torch_arch\"][0]" >remedy &&
	grep -q "NVIDIA Future GPU (sm_130) is newer than the CUDA builds of mlsetup.s manifests" remedy &&
	grep -q "CUDA 12.8), has SASS up to sm_120" remedy &&
	grep -q "SASS for sm_130 (from a CUDA toolkit newer than 12.8) or PTX" remedy &&
	! grep -q "dropped" remedy
'
test_expect_success 'verify: no kernel image on a Kepler GPU says the generation was dropped' '
	PYTHONPATH="$STUB" MLSETUP_STUB_TORCH_DEVICES="Tesla K80=3.7" \
		expect_exit 5 with_gpus k80.json "$MLSETUP" verify --smoke-size 8 --alloc-mib 1 \
		--sysroot "$E" --python python3 --json >j 2>err &&
	json j "[k[\"remedy\"] for k in d[\"verdict\"][\"gpus\"][0][\"checks\"] if k[\"name\"] == \"torch_arch\"][0]" >remedy &&
	grep -q "Tesla K80 is Kepler, sm_37 and no manifest shipped with mlsetup covers it: current PyTorch builds dropped this GPU generation" remedy &&
	grep -q "requirements.txt, starts at sm_50" remedy
'
test_expect_success 'detect: a GPU newer than the driver table gets its newest rule as a lower bound' '
	with_gpus smoke-future-gpu-cuda124.json "$MLSETUP" detect --json --sysroot "$E" >j &&
	json j "d[\"advice\"][0]" | grep -q "NVIDIA Future GPU (unknown architecture, sm_130) needs driver 570.26 or newer (at least: mlsetup.s driver table does not know this GPU.s architecture)"
'
if have_system_nvml; then
	echo "# skipping the PCI tests: this machine has a real libnvidia-ml.so.1"
	test_done
	exit
fi
test_expect_success 'detect: a PCI id missing from the table is named with its bus' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/pci-unknown" --no-smi --json >j &&
	expect_eq 0x2ffe "$(json j "d[\"gpus\"][0][\"pci_device_id\"]")" &&
	json j "d[\"advice\"][0]" >advice &&
	grep -q "NVIDIA GPU with PCI id 10de:2ffe at 0000:01:00.0 is not in mlsetup.s table" advice &&
	grep -q "install the NVIDIA driver" advice &&
	json j "d[\"probes\"][3][\"detail\"]" | grep -q "0000:01:00.0 10de:2ffe (not in mlsetup.s PCI id table)" &&
	"$MLSETUP" detect --sysroot "$SYSROOTS/pci-unknown" --no-smi >out &&
	grep -q "PCI id 10de:2ffe at 0000:01:00.0" out
'
test_expect_success 'plan: the GPU rule names a GPU missing from the PCI table by id and bus' '
	"$MLSETUP" plan --json --sysroot "$SYSROOTS/pci-unknown" --python 3.12 >j 2>err &&
	json j "[r[\"detail\"] for r in d[\"reasons\"] if r[\"rule\"] == \"gpu\"][0]" |
		grep -q "NVIDIA GPU with PCI id 10de:2ffe at 0000:01:00.0 (unknown): compute capability unknown"
'
test_done
