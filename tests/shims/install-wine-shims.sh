#!/bin/sh
# install-wine-shims.sh [DIR] - copies the Windows fake driver DLLs
# (nvml.dll, nvcuda.dll from `make shims-windows`; DIR defaults to
# build/shims-windows) into the wine prefix's System32, where Windows
# programs find the real ones, so a program under wine sees the machine
# named by MLSETUP_FAKE_NVIDIA (a Windows path: Z:\tmp\x.json). The prefix
# is ${WINEPREFIX:-$HOME/.wine}; it is created with `wineboot -i` when
# missing. Remove the two files from drive_c/windows/system32/ to undo.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$top/build/shims-windows}
prefix=${WINEPREFIX:-$HOME/.wine}
export WINEDEBUG=${WINEDEBUG:--all}

for f in nvml.dll nvcuda.dll; do
	[ -f "$dir/$f" ] || {
		echo "install-wine-shims.sh: no $dir/$f; run 'make shims-windows' first" >&2
		exit 1
	}
done
command -v wine >/dev/null 2>&1 || {
	echo "install-wine-shims.sh: wine is not installed" >&2
	exit 1
}
if [ ! -d "$prefix/drive_c/windows/system32" ]; then
	echo "install-wine-shims.sh: creating the wine prefix $prefix" >&2
	wineboot -i
	# wineboot returns before wineserver has written the prefix out.
	wineserver -w
fi
sys32=$prefix/drive_c/windows/system32
[ -d "$sys32" ] || {
	echo "install-wine-shims.sh: $sys32 is missing after wineboot" >&2
	exit 1
}
for f in nvml.dll nvcuda.dll; do
	cp "$dir/$f" "$sys32/$f.tmp"
	mv "$sys32/$f.tmp" "$sys32/$f"
	echo "installed $sys32/$f"
done
