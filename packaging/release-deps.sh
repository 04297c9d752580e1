#!/bin/sh
# release-deps.sh - installs what `make release` and `make release-check`
# need beyond packaging/deps.sh, for release builders and CI only (the
# README's main job never runs this on a user's machine):
#   the release build: cmake, make, perl, pkg-config, dpkg-dev (dpkg-source
#     unpacks Debian's source packages and applies their patches), patch,
#     xz-utils and bzip2 (their tarballs), python3 and pip (zig comes from
#     the package index), and the pinned zig itself, fetched into the
#     release cache (packaging/release/toolchain.sh);
#   the release and installer tests: qemu-user with libc6-arm64-cross (runs
#     the aarch64 binary), binutils (readelf), and the shells and tools
#     install.sh is tested under: dash, bash, zsh, busybox, curl, wget;
#     wine and wine64 (run the x86_64-windows-gnu build and its tests; the
#     command is `wine`).
# Debian/Ubuntu only (apt-get); elsewhere it prints the package names.
set -eu
cd "$(dirname "$0")/.."

DEB_PKGS="cmake make perl pkg-config dpkg-dev patch xz-utils bzip2 python3 python3-pip binutils qemu-user libc6-arm64-cross dash bash zsh busybox curl wget ca-certificates wine wine64"

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
		echo "error: need root to install packages; run as root or install sudo" >&2
		exit 1
	fi
}

if ! command -v apt-get >/dev/null 2>&1; then
	echo "release-deps.sh: no apt-get here; install these (Debian names) with your package manager:"
	echo "  $DEB_PKGS"
	exit 1
fi
missing=""
for p in $DEB_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# pip may come with the machine's own Python rather than from apt
case " $missing " in
*" python3-pip "*) python3 -m pip --version >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ python3-pip//') ;;
esac
if [ -n "$missing" ]; then
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2086
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
else
	echo "release-deps.sh: all packages already installed"
fi
zig=$(sh packaging/release/toolchain.sh)
echo "release-deps.sh: zig $("$zig" version) in the release cache ($zig)"
