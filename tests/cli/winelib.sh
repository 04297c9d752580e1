# winelib.sh - set-up shared by the tests that run Windows programs under
# wine (t0921, t0930-t0933). Source after lib.sh. Sets EXE (the Windows
# mlsetup.exe: build/release/x86_64-windows-gnu/mlsetup.exe from `make
# release`, or $MLSETUP_WINDOWS_EXE) and quiets wine.

EXE=${MLSETUP_WINDOWS_EXE:-$top/build/release/x86_64-windows-gnu/mlsetup.exe}
export WINEDEBUG=-all

# winpath PATH: the Windows form of an absolute path under wine (/ is Z:).
winpath() {
	printf 'Z:%s' "$1" | tr / '\\'
}

# wine_prefix NAME: runs the test file in the wine prefix build/NAME,
# made once (exports WINEPREFIX, sets SYS32 to its System32) and without
# the fake driver DLLs in System32. Before any block: without wine, EXE
# or the prefix the file is skipped, a failure under release-check
# (release_skip_all).
wine_prefix() {
	export WINEPREFIX="$top/build/$1"
	SYS32="$WINEPREFIX/drive_c/windows/system32"
	command -v wine >/dev/null 2>&1 ||
		release_skip_all "wine is not installed (packaging/release-deps.sh installs it)"
	[ -f "$EXE" ] || release_skip_all "no $EXE (make release, or set MLSETUP_WINDOWS_EXE)"
	if [ ! -d "$SYS32" ]; then
		wineboot -i >/dev/null 2>&1
		wineserver -w
	fi
	[ -d "$SYS32" ] || release_skip_all "cannot create the wine prefix $WINEPREFIX"
	rm -f "$SYS32/nvml.dll" "$SYS32/nvcuda.dll"
}
