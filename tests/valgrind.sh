#!/bin/sh
# valgrind.sh BINARY - runs detect (and the cheap commands) under valgrind
# memcheck in every simulated scenario; fails on any memory error or any
# definite/indirect leak (exit 99); the command's own exit code is not judged here. Prints "N passed, N failed".
set -u
bin=${1:-build/mlsetup}
top=$(cd "$(dirname "$0")/.." && pwd)
S="$top/tests/fixtures/sysroot"
G="$top/tests/fixtures/gpus"
SH="$top/build/shims"
passed=0
failed=0
vg() {
	name=$1
	shift
	if env "$@" valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --error-exitcode=99 "$top/$bin" \
		${VG_ARGS} >/dev/null 2>"$top/build/valgrind-$name.log" || [ $? -ne 99 ]; then
		passed=$((passed + 1))
		echo "ok - $name"
	else
		failed=$((failed + 1))
		echo "not ok - $name (see build/valgrind-$name.log)"
		cat "$top/build/valgrind-$name.log"
	fi
}
VG_ARGS="detect --json" vg live-json MLSETUP_VG=1
VG_ARGS="detect" vg live-human MLSETUP_VG=1
for root in empty proprietary open-module pci-only pci-nouveau wsl malformed; do
	VG_ARGS="detect --no-smi --json --sysroot $S/$root" vg "sysroot-$root" MLSETUP_VG=1
done
for f in rtx5090 mixed-3090-5090 nvml-init-error missing-cc-symbol; do
	VG_ARGS="detect --no-smi --sysroot $S/empty" vg "gpus-$f" LD_LIBRARY_PATH="$SH" \
		MLSETUP_FAKE_NVIDIA="$G/$f.json"
done
VG_ARGS="detect --sysroot $S/empty --json" vg smi-fallback LD_LIBRARY_PATH="$SH" \
	PATH="$SH/bin:$PATH" MLSETUP_FAKE_NVIDIA="$G/all-fail-smi-ok.json"
for f in rtx5090 rtx5090-550 mixed-3090-5090 k80 rtx3090-535; do
	VG_ARGS="plan --json --python 3.12 --sysroot $S/empty" vg "plan-$f" LD_LIBRARY_PATH="$SH" \
		MLSETUP_FAKE_NVIDIA="$G/$f.json"
done
VG_ARGS="plan --python 3.12 --manifest requirements --sysroot $S/empty" vg plan-forced \
	LD_LIBRARY_PATH="$SH" MLSETUP_FAKE_NVIDIA="$G/rtx5090.json"
VG_ARGS="plan --offline" vg plan-live MLSETUP_VG=1
VG_ARGS="--version" vg version MLSETUP_VG=1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
