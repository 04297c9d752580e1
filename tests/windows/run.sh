#!/bin/sh
# run.sh [UNIT_DIR] - the Windows build under wine (`make check-windows`):
#   1. builds tests/windows/compat_smoke.c for x86_64-windows-gnu with the
#      release zig (no third-party library needed) and runs it;
#   2. with UNIT_DIR (the Makefile's build/release/x86_64-windows-gnu/unit,
#      holding tests/test_*.exe), runs those unit tests through
#      tests/run-tests.sh under wine, which ends with
#      "N passed, N failed, N skipped" (the smoke test counts as one).
# Without zig or wine it skips and says why (exit 0); with
# MLSETUP_RELEASE_CHECK=1 (make release-check) that is a failure.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
unit=${1:-}
zig=${ZIG:-$HOME/.cache/mlsetup-release/zig/0.17.1/ziglang/zig}
missing() {
	if [ -n "${MLSETUP_RELEASE_CHECK:-}" ]; then
		echo "check-windows: FAIL: $1 (required under release-check)" >&2
		exit 1
	fi
	echo "SKIP windows ($1)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}
[ -x "$zig" ] || missing "no zig at $zig: sh packaging/release/toolchain.sh"
command -v wine >/dev/null 2>&1 || missing "no wine: apt-get install wine wine64"
export WINEDEBUG=-all
out=$top/build/win-smoke
mkdir -p "$out"
cd "$top" || exit 1
# The first wine run of a fresh prefix sets it up and says so: done here,
# so that it is not part of a test's output.
wineboot -i >/dev/null 2>&1
smoke=0
"$zig" cc -target x86_64-windows-gnu -std=c11 -D_GNU_SOURCE -DUNICODE -D_UNICODE -Iinclude \
	-Iplatform/windows/include -include platform/windows/compat.h \
	-Wall -Wextra -Werror -Wno-unused-parameter -O1 -o "$out/compat_smoke.exe" \
	tests/windows/compat_smoke.c src/core/fs.c src/core/str.c src/core/err.c \
	platform/windows/compat.c platform/windows/os.c platform/os_common.c platform/random.c -lbcrypt -lshell32 -ladvapi32 -lws2_32 &&
	wine "$out/compat_smoke.exe" >"$out/compat_smoke.log" 2>&1 || smoke=1
if [ -z "$unit" ]; then
	cat "$out/compat_smoke.log" 2>/dev/null
	exit $smoke
fi
if [ $smoke -eq 0 ]; then
	echo "PASS compat_smoke"
else
	echo "FAIL compat_smoke"
	sed 's/^/    /' "$out/compat_smoke.log" 2>/dev/null
fi
res=$(mktemp "${TMPDIR:-/tmp}/mlsetup-win.XXXXXX")
trap 'rm -f "$res"' EXIT
# run-tests.sh's lines but its last, which is printed with the smoke
# test added
MLSETUP_TEST_RUNNER=wine sh tests/run-tests.sh "$unit" |
	awk 'NR > 1 { print prev; fflush() } { prev = $0 } END { print prev >"/dev/stderr" }' 2>"$res"
last=$(tail -n 1 "$res")
case $last in *" passed, "*" failed, "*" skipped") ;; *)
	echo "check-windows: tests/run-tests.sh ended without its summary: $last" >&2
	exit 1
	;;
esac
p=${last%% passed*}
rest=${last#* passed, }
f=${rest%% failed*}
s=${rest#* failed, }
s=${s%% skipped*}
if [ $smoke -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); fi
echo "$p passed, $f failed, $s skipped"
[ $smoke -eq 0 ] && [ "$f" -eq 0 ]
