#!/bin/sh
# run.sh - builds tests/windows/compat_smoke.c for x86_64-windows-gnu with
# the release zig (no third-party library needed) and runs it under wine.
# Skips (exit 77, saying why) when zig or wine is missing.
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
zig=${ZIG:-$HOME/.cache/mlsetup-release/zig/0.17.1/ziglang/zig}
[ -x "$zig" ] || { echo "skip: no zig at $zig (sh packaging/release/toolchain.sh)"; exit 77; }
command -v wine >/dev/null 2>&1 || { echo "skip: no wine"; exit 77; }
out=$top/build/win-smoke
mkdir -p "$out"
cd "$top"
"$zig" cc -target x86_64-windows-gnu -std=c11 -D_GNU_SOURCE -DUNICODE -D_UNICODE -Iinclude \
	-Iplatform/windows/include -include platform/windows/compat.h \
	-Wall -Wextra -Werror -Wno-unused-parameter -O1 -o "$out/compat_smoke.exe" \
	tests/windows/compat_smoke.c src/core/fs.c src/core/str.c src/core/err.c \
	platform/windows/compat.c platform/windows/os.c -lbcrypt -lshell32 -ladvapi32 -lws2_32
WINEDEBUG=-all wine "$out/compat_smoke.exe"
