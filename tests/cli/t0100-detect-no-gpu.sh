#!/bin/sh
# detect on a machine without NVIDIA GPUs: reports the machine, says "no
# NVIDIA GPU found", lists every probe, exits 0.
. "$(dirname "$0")/lib.sh"

test_expect_success 'live machine: human output and exit 0' '
	"$MLSETUP" detect >out &&
	grep -q "^machine" out && grep -q "libc " out && grep -q "cpu " out &&
	grep -q "memory " out && grep -q "MiB free at" out
'
test_expect_success 'live machine JSON carries the machine facts' '
	"$MLSETUP" detect --json >out &&
	expect_eq mlsetup.detect/1 "$(json out "d[\"schema\"]")" &&
	expect_eq linux "$(json out "d[\"os\"][\"name\"]")" &&
	json out "d[\"os\"][\"arch\"]" | grep -Eq "^(x86_64|aarch64)$" &&
	json out "d[\"os\"][\"libc\"][\"kind\"]" | grep -Eq "^(glibc|musl)$" &&
	test "$(json out "d[\"cpu\"][\"cores\"]")" -ge 1 &&
	test "$(json out "d[\"memory_mib\"]")" -gt 0 &&
	test "$(json out "d[\"disk_free_mib\"]")" -gt 0
'
test_expect_success 'no GPU: says so, driver null, every probe recorded in order' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" >out &&
	grep -q "no NVIDIA GPU found" out &&
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" --json >j &&
	expect_eq "[]" "$(json j "d[\"gpus\"]")" &&
	expect_eq null "$(json j "d[\"driver\"][\"version\"]")" &&
	expect_eq "nvml cuda procfs pci nvidia-smi" "$(json j "\" \".join(p[\"source\"] for p in d[\"probes\"])")" &&
	expect_eq "[]" "$(json j "d[\"advice\"]")"
'
test_expect_success 'distro comes from etc/os-release under the sysroot' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" --json >j &&
	expect_eq ubuntu "$(json j "d[\"os\"][\"distro\"][\"id\"]")" &&
	expect_eq 24.04 "$(json j "d[\"os\"][\"distro\"][\"version\"]")"
'
test_expect_success 'WSL layout is recognised' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/wsl" --json >j &&
	expect_eq true "$(json j "d[\"os\"][\"wsl\"]")" &&
	expect_eq 5.15.167.4-microsoft-standard-WSL2 "$(json j "d[\"os\"][\"kernel\"]")"
'
test_expect_success 'shims present but no fake GPU file: NVML says driver not loaded' '
	LD_LIBRARY_PATH="$SHIMS" "$MLSETUP" detect --sysroot "$SYSROOTS/empty" --json >j &&
	json j "d[\"probes\"][0][\"detail\"]" | grep -q "(9)" &&
	expect_eq "[]" "$(json j "d[\"gpus\"]")"
'
test_expect_success '--target reports free space at a directory that does not exist yet' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" --target "$TRASH/not/yet/env" --json >j &&
	test "$(json j "d[\"disk_free_mib\"]")" -gt 0
'
test_done
