#!/bin/sh
# Installs mlsetup's build and test dependencies from the distribution's
# package manager: libcurl (OpenSSL flavour), libarchive, OpenSSL, cJSON,
# libgit2, zstd, lz4, libdeflate and zlib (wheel inflation), utf8proc
# (Unicode normalization of wheel file names), cmocka, plus the compiler,
# pkg-config and valgrind, clang with libFuzzer (make fuzz, the fuzz smoke
# .ci/run runs; Debian's runtime libraries are only recommended by clang,
# so libclang-rt-dev is named), and every tool the tests drive: python3 (test
# index, fixtures, the interpreter the install tests build from), pip
# (lock's resolver, the checks of what lock and install write), curl and
# openssl (mirror control, test certificates), zip/unzip, zstd, nghttpd
# (HTTP/2 test), flock, tmux (install driven in a terminal), git
# (smart-HTTP tests) and nginx (a fleet installing from a bundle it serves;
# the test starts its own on loopback, so the system's service that
# Debian's package starts on port 80 is stopped and disabled again when
# this script installed it).
# On systems without apt-get or dnf it prints the package names to install.
set -eu

DEB_PKGS="build-essential pkg-config libcurl4-openssl-dev libarchive-dev libssl-dev libcjson-dev libgit2-dev libzstd-dev liblz4-dev libdeflate-dev zlib1g-dev libutf8proc-dev libcmocka-dev valgrind clang libclang-rt-dev python3 python3-pip zip unzip curl openssl zstd nghttp2-server util-linux tmux git nginx"
RPM_PKGS="gcc make pkgconf-pkg-config libcurl-devel libarchive-devel openssl-devel cjson-devel libgit2-devel libzstd-devel lz4-devel libdeflate-devel zlib-devel utf8proc-devel libcmocka-devel valgrind clang compiler-rt python3 python3-pip zip unzip curl openssl zstd nghttp2 util-linux tmux git nginx"

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
		echo "error: need root to install packages; run as root or install sudo" >&2
		exit 1
	fi
}

if command -v apt-get >/dev/null 2>&1; then
	missing=""
	for p in $DEB_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		echo "deps.sh: all packages already installed"
	else
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		# shellcheck disable=SC2086
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
		case " $missing " in
		*" nginx "*)
			if command -v systemctl >/dev/null 2>&1; then
				as_root systemctl disable --now nginx >/dev/null 2>&1 || true
			fi
			;;
		esac
	fi
elif command -v dnf >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	as_root dnf install -y $RPM_PKGS
else
	echo "deps.sh: no apt-get or dnf here; install these with your package manager:"
	echo "  Debian/Ubuntu names: $DEB_PKGS"
	echo "  Fedora/RHEL names:   $RPM_PKGS"
	exit 1
fi

# The uv wheel manifests/resolver.json pins for this machine, for the test
# of uv as the resolver (tests/cli/t0725-uv-resolver.sh serves it on its
# loopback index), kept outside the tree so that `make clean` keeps it.
# From the package index through pip; without it that test is skipped.
top=$(cd "$(dirname "$0")/.." && pwd)
uvdir=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mlsetup-tests/wheels
uvspec=$(python3 - "$top/manifests/resolver.json" "$(uname -m)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["uv"]
w = d["wheels"].get("linux-" + sys.argv[2])
if w:
    print("%s %s uv==%s" % (w["filename"], w["platform_tag"], d["version"]))
PY
)
if [ -n "$uvspec" ]; then
	set -- $uvspec
	if [ ! -f "$uvdir/$1" ]; then
		mkdir -p "$uvdir"
		python3 -m pip download -q --no-deps --only-binary=:all: --platform "$2" \
			--dest "$uvdir" "$3" ||
			echo "deps.sh: could not download $3 (t0725 will be skipped)" >&2
	fi
fi
