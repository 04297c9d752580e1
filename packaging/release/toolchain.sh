#!/bin/sh
# toolchain.sh - puts the pinned zig (packaging/release/zig.txt) into the
# release cache, if it is not there yet, and prints the path of its `zig`.
#
# zig comes from the package index pip is configured for, as the ziglang
# wheel, checked against the sha256 pinned in zig.txt (pip's
# --require-hashes); the wheel is unpacked, not installed, so no Python
# environment is touched.
. "$(dirname "$0")/lib.sh"

ver=$(rel_zig_version)
[ -n "$ver" ] || rel_die "no ziglang==VERSION line in $REL_DIR/zig.txt"
dir=$REL_CACHE/zig/$ver
if [ ! -x "$dir/ziglang/zig" ]; then
	command -v python3 >/dev/null 2>&1 || rel_die "python3 is needed to fetch zig; run packaging/release-deps.sh"
	python3 -m pip --version >/dev/null 2>&1 ||
		rel_die "pip is needed to fetch zig from the package index; run packaging/release-deps.sh"
	mkdir -p "$REL_CACHE/zig"
	tmp=$(mktemp -d "$REL_CACHE/zig/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	rel_log "fetching zig $ver from the package index"
	python3 -m pip download --quiet --disable-pip-version-check --no-deps \
		--only-binary=:all: --require-hashes -r "$REL_DIR/zig.txt" -d "$tmp/dl" >&2 ||
		rel_die "could not download ziglang==$ver (pinned in packaging/release/zig.txt)"
	set -- "$tmp"/dl/ziglang-"$ver"-*.whl
	[ -f "$1" ] || rel_die "pip gave no ziglang $ver wheel for this machine"
	python3 -m zipfile -e "$1" "$tmp/unpacked" || rel_die "cannot unpack $1"
	chmod +x "$tmp/unpacked/ziglang/zig"
	"$tmp/unpacked/ziglang/zig" version >/dev/null || rel_die "the unpacked zig does not run"
	rm -rf "$dir"
	mv "$tmp/unpacked" "$dir"
fi
printf '%s\n' "$dir/ziglang/zig"
