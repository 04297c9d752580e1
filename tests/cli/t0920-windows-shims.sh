#!/bin/sh
# The fake driver as Windows DLLs (`make shims-windows`: nvml.dll,
# nvcuda.dll), loaded by full path by tests/shims/win_probe.exe under wine,
# and nvmlDeviceGetDriverModel in both builds: Windows answers WDDM unless
# the fixture says "driver_model", Linux NVML_ERROR_NOT_SUPPORTED (3).
. "$(dirname "$0")/lib.sh"

WIN="$top/build/shims-windows"
export WINEDEBUG=-all

# winpath PATH: the Windows form of an absolute path under wine (/ is Z:).
winpath() {
	printf 'Z:%s' "$1" | tr / '\\'
}

# probe [JSON]: runs win_probe.exe on the two DLLs with JSON (a fixture
# path, may be empty) as the machine; output in probe.out, exit status kept.
probe() {
	MLSETUP_FAKE_NVIDIA=${1:+$(winpath "$1")} wine "$WIN/win_probe.exe" \
		"$(winpath "$WIN/nvml.dll")" "$(winpath "$WIN/nvcuda.dll")" >probe.out 2>probe.err
	rc=$?
	tr -d '\r' <probe.out >probe.txt
	cat probe.txt probe.err
	return $rc
}

# driver_model SO JSON: nvmlDeviceGetDriverModel of GPU 0 through the Linux
# shim SO, as "rc current pending".
driver_model() {
	MLSETUP_FAKE_NVIDIA=$2 python3 -c '
import ctypes, sys
l = ctypes.CDLL(sys.argv[1])
assert l.nvmlInit_v2() == 0
d = ctypes.c_void_p()
assert l.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(d)) == 0
c, p = ctypes.c_int(-1), ctypes.c_int(-1)
rc = l.nvmlDeviceGetDriverModel(d, ctypes.byref(c), ctypes.byref(p))
print(rc, c.value, p.value)' "$1"
}

test_expect_success 'Linux NVML: driver model not supported unless the fixture sets one' '
	expect_eq "3 -1 -1" "$(driver_model "$SHIMS/libnvidia-ml.so.1" "$FIXTURES/gpus/rtx5090.json")" &&
	sed "s/\"WDDM\"/\"TCC\"/" "$FIXTURES/gpus/win-rtx5090-572.json" >tcc.json &&
	expect_eq "0 1 1" "$(driver_model "$SHIMS/libnvidia-ml.so.1" tcc.json)"
'

test_expect_success 'Linux NVML: a bad driver_model is refused with a message' '
	sed "s/\"WDDM\"/\"wddm\"/" "$FIXTURES/gpus/win-rtx5090-572.json" >bad.json &&
	expect_exit 9 env MLSETUP_FAKE_NVIDIA=bad.json python3 -c "
import ctypes, sys
sys.exit(ctypes.CDLL(sys.argv[1]).nvmlInit_v2())" "$SHIMS/libnvidia-ml.so.1" 2>err &&
	grep "gpus\[0\]: \"driver_model\" must be \"WDDM\", \"TCC\" or \"MCDM\"" err
'

if ! command -v wine >/dev/null 2>&1; then
	release_skip "wine is not installed (packaging/release-deps.sh installs it)"
elif [ ! -f "$WIN/win_probe.exe" ]; then
	release_skip "no build/shims-windows: run make shims-windows"
fi
test_expect_success 'Windows DLLs by full path: RTX 5090 on driver 572.83' '
	probe "$FIXTURES/gpus/win-rtx5090-572.json" &&
	grep -qx "driver = 572.83" probe.txt &&
	grep -qx "nvml.count = 1" probe.txt &&
	grep -qx "nvml.gpu0.name = NVIDIA GeForce RTX 5090" probe.txt &&
	grep -qx "nvml.gpu0.cc = 12.0" probe.txt &&
	grep -qx "nvml.gpu0.driver_model = 0 0" probe.txt &&
	grep -qx "cuda.version = 12080" probe.txt &&
	grep -qx "cuda.count = 1" probe.txt &&
	grep -qx "cuda.gpu0.cc = 12.0" probe.txt
'

if ! command -v wine >/dev/null 2>&1; then
	release_skip "wine is not installed (packaging/release-deps.sh installs it)"
elif [ ! -f "$WIN/win_probe.exe" ]; then
	release_skip "no build/shims-windows: run make shims-windows"
fi
test_expect_success 'Windows DLLs: WDDM by default, TCC when set; no JSON is no driver' '
	sed "s/, \"driver_model\": \"WDDM\"//" "$FIXTURES/gpus/win-rtx5090-572.json" >default.json &&
	! grep driver_model default.json &&
	probe "$PWD/default.json" &&
	grep -qx "nvml.gpu0.driver_model = 0 0" probe.txt &&
	sed "s/\"WDDM\"/\"TCC\"/" "$FIXTURES/gpus/win-rtx5090-572.json" >tcc.json &&
	probe "$PWD/tcc.json" &&
	grep -qx "nvml.gpu0.driver_model = 1 1" probe.txt &&
	expect_exit 1 probe "" &&
	grep -qx "nvmlInit_v2 = 9" probe.txt &&
	grep -qx "cuInit = 100" probe.txt
'

test_done
