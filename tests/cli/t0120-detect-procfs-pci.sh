#!/bin/sh
# detect without NVML/libcuda: the kernel module's /proc and /sys files and
# the PCI scan, read from fixture trees through --sysroot.
. "$(dirname "$0")/lib.sh"

if have_system_nvml; then
	test_skip_all "this machine has a real libnvidia-ml.so.1: NVML cannot be missing here"
fi

test_expect_success 'NVML missing, proprietary module: driver and GPU from procfs and PCI' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/proprietary" --no-smi --json >j &&
	json j "d[\"probes\"][0][\"detail\"]" | grep -q "libnvidia-ml.so.1 not loadable" &&
	expect_eq ok "$(json j "d[\"probes\"][2][\"status\"]")" &&
	expect_eq 550.54.14 "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq procfs "$(json j "d[\"driver\"][\"source\"]")" &&
	expect_eq 12.4 "$(json j "d[\"driver\"][\"cuda_version\"]")" &&
	expect_eq driver-table "$(json j "d[\"driver\"][\"cuda_version_source\"]")" &&
	expect_eq 1 "$(json j "len(d[\"gpus\"])")" &&
	expect_eq "NVIDIA GeForce RTX 3090" "$(json j "d[\"gpus\"][0][\"name\"]")" &&
	expect_eq sm_86 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq 0x2204 "$(json j "d[\"gpus\"][0][\"pci_device_id\"]")" &&
	expect_eq GPU-5b0c8f5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f "$(json j "d[\"gpus\"][0][\"uuid\"]")" &&
	expect_eq true "$(json j "d[\"driver\"][\"kernel_module_loaded\"]")"
'
test_expect_success 'the NVIDIA audio function on the same card is not a GPU' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/proprietary" --no-smi --json >j &&
	expect_eq "0000:01:00.0" "$(json j "\" \".join(g[\"pci_bus_id\"] for g in d[\"gpus\"])")"
'
test_expect_success 'open kernel module version line and a 3D-class H100' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/open-module" --no-smi --json >j &&
	expect_eq 580.95.05 "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq 13.0 "$(json j "d[\"driver\"][\"cuda_version\"]")" &&
	expect_eq sm_90 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq Hopper "$(json j "d[\"gpus\"][0][\"architecture\"]")" &&
	expect_eq "NVIDIA H100 80GB HBM3" "$(json j "d[\"gpus\"][0][\"name\"]")"
'
test_expect_success 'driver not loaded, only a PCI id: names the GPU and the driver to install' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/pci-only" --no-smi --json >j &&
	expect_eq null "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq 1 "$(json j "len(d[\"gpus\"])")" &&
	expect_eq sm_120 "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	expect_eq pci "$(json j "d[\"gpus\"][0][\"source\"]")" &&
	json j "d[\"advice\"][0]" | grep -q "RTX 5090 (Blackwell, sm_120) found, no NVIDIA driver loaded: install driver 570.26 or newer" &&
	"$MLSETUP" detect --sysroot "$SYSROOTS/pci-only" --no-smi >out &&
	grep -q "install driver 570.26 or newer" out &&
	grep -q "RTX 5090: compute capability 12.0 (sm_120, Blackwell), memory unknown, 0000:01:00.0$" out
'
test_expect_success 'an NVIDIA id missing from the table is still listed, with nouveau named' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/pci-nouveau" --no-smi --json >j &&
	expect_eq 1 "$(json j "len(d[\"gpus\"])")" &&
	expect_eq 0xfffe "$(json j "d[\"gpus\"][0][\"pci_device_id\"]")" &&
	expect_eq "" "$(json j "d[\"gpus\"][0][\"sm\"]")" &&
	json j "d[\"probes\"][3][\"detail\"]" | grep -q "kernel driver nouveau"
'
test_expect_success 'malformed /proc and /sys files are reported, never fatal' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/malformed" --no-smi --json >j &&
	json j "d[\"probes\"][2][\"detail\"]" >procfs &&
	grep -q "/sys/module/nvidia/version malformed" procfs &&
	grep -q "/proc/driver/nvidia/version malformed" procfs &&
	grep -q "information malformed" procfs &&
	json j "d[\"probes\"][3][\"detail\"]" | grep -q "unreadable device id" &&
	expect_eq null "$(json j "d[\"driver\"][\"version\"]")" &&
	"$MLSETUP" detect --sysroot "$SYSROOTS/malformed" >out
'
test_expect_success 'an old driver next to a Blackwell GPU gets upgrade advice' '
	mkdir -p root && cp -R "$SYSROOTS/pci-only/." root/ &&
	mkdir -p root/sys/module/nvidia && echo 550.54.14 >root/sys/module/nvidia/version &&
	"$MLSETUP" detect --sysroot root --no-smi --json >j &&
	json j "d[\"advice\"][0]" | grep -q "needs driver 570.26 or newer; this machine has 550.54.14: upgrade the driver"
'
test_done
