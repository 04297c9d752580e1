#!/bin/sh
# install.sh - installs the mlsetup release binary for this machine.
#
#   curl -LsSf URL/install.sh | sh
#   wget -qO- URL/install.sh | sh
#   curl -LsSf URL/install.sh | sh -s -- install --require-gpu   (install, then run mlsetup ARGS)
#
# Environment:
#   MLSETUP_DOWNLOAD_URL  where mlsetup-<target> and SHA256SUMS are (default:
#                         the release this script came with, if it names one)
#   MLSETUP_INSTALL_DIR   where mlsetup goes (default: ~/.local/bin)
#
# Linux on x86_64 or aarch64 with glibc 2.17 or newer. The binary's sha256
# is checked against SHA256SUMS, which catches corrupted and truncated
# downloads; it does not prove who published them (that would need signed
# checksums). Nothing is installed unless the check passes: the binary
# goes to a temporary file in the install directory and is renamed into
# place.
#
# Every line of code is inside a function, and the only command is the call
# on the last line, which ends in a marker that mlsetup_install_sh checks:
# a download cut short anywhere defines some functions, or fails to parse,
# and runs nothing.

ml_release_url() {
	# written by `make release RELEASE_URL=...`; empty: MLSETUP_DOWNLOAD_URL is required
	printf '%s' ''
}

ml_say() {
	printf 'mlsetup-install: %s\n' "$*" >&2
}

ml_fail() {
	printf 'mlsetup-install: error: %s\n' "$*" >&2
	ml_cleanup
	exit 1
}

ml_cleanup() {
	if [ -n "${ml_tmpfile:-}" ]; then
		rm -f "$ml_tmpfile"
		ml_tmpfile=
	fi
	if [ -n "${ml_tmpdir:-}" ]; then
		rm -rf "$ml_tmpdir"
		ml_tmpdir=
	fi
}

ml_have() {
	command -v "$1" >/dev/null 2>&1
}

# Sets ml_target to the release binary for this machine, or refuses.
ml_detect_target() {
	ml_os=$(uname -s 2>/dev/null) || ml_fail "cannot run uname to learn the operating system"
	ml_cpu=$(uname -m 2>/dev/null) || ml_fail "cannot run uname to learn the CPU"
	case $ml_os in
	Linux) ;;
	Darwin) ml_fail "macOS is not supported: mlsetup sets up NVIDIA GPU machines running Linux" ;;
	*) ml_fail "unsupported operating system '$ml_os': mlsetup's release binaries are for Linux" ;;
	esac
	case $ml_cpu in
	x86_64 | amd64) ml_arch=x86_64 ;;
	aarch64 | arm64) ml_arch=aarch64 ;;
	i?86 | x86 | armv* | arm | ppc | mips | s390) ml_fail "32-bit systems ($ml_cpu) are not supported: the release binaries are for 64-bit x86_64 and aarch64" ;;
	*) ml_fail "unsupported CPU '$ml_cpu': the release binaries are for x86_64 and aarch64" ;;
	esac
	if ml_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null) && [ -n "$ml_glibc" ]; then
		ml_glibc=${ml_glibc#glibc }
		ml_glibc_major=${ml_glibc%%.*}
		ml_glibc_minor=${ml_glibc#*.}
		ml_glibc_minor=${ml_glibc_minor%%.*}
		case $ml_glibc_major$ml_glibc_minor in
		*[!0-9]* | '') ml_fail "cannot read the glibc version ('$ml_glibc')" ;;
		esac
		if [ "$ml_glibc_major" -lt 2 ] || { [ "$ml_glibc_major" -eq 2 ] && [ "$ml_glibc_minor" -lt 17 ]; }; then
			ml_fail "glibc $ml_glibc is too old: the release binaries need glibc 2.17 or newer"
		fi
	elif (ldd --version 2>&1 || true) | grep -qi musl; then
		ml_fail "musl libc (Alpine and similar) is not supported: the release binaries need glibc 2.17 or newer"
	else
		ml_fail "cannot tell which C library this system has (getconf GNU_LIBC_VERSION failed): the release binaries need glibc 2.17 or newer"
	fi
	ml_target=$ml_arch-linux-gnu
}

# Picks curl or wget.
ml_detect_downloader() {
	if ml_have curl; then
		ml_dl=curl
	elif ml_have wget; then
		ml_dl=wget
	else
		ml_fail "neither curl nor wget is installed: install one of them and run this again"
	fi
}

# ml_download URL FILE
ml_download() {
	case $ml_dl in
	curl) curl -fsSL --retry 3 -o "$2" "$1" ;;
	wget) wget -q -O "$2" "$1" ;;
	esac || ml_fail "cannot download $1 (with $ml_dl)"
}

# Prints the sha256 of FILE with whichever tool this system has.
ml_sha256() {
	if ml_have sha256sum; then
		sha256sum "$1" | cut -d ' ' -f 1
	elif ml_have shasum; then
		shasum -a 256 "$1" | cut -d ' ' -f 1
	elif ml_have openssl; then
		openssl dgst -sha256 <"$1" | sed 's/^.*= *//'
	else
		ml_fail "no sha256sum, shasum or openssl here to check the download with"
	fi
}

mlsetup_install_sh() {
	# The last argument is the marker the script's last line adds; without
	# it the script was cut short.
	if [ $# -eq 0 ]; then
		ml_fail "this copy of install.sh is incomplete (cut short while downloading?); download it again"
	fi
	eval "ml_last=\${$#}"
	[ "$ml_last" = mlsetup-install-sh-complete ] ||
		ml_fail "this copy of install.sh is incomplete (cut short while downloading?); download it again"
	ml_n=$# ml_i=0
	for ml_arg in "$@"; do
		shift
		ml_i=$((ml_i + 1))
		[ "$ml_i" -lt "$ml_n" ] && set -- "$@" "$ml_arg"
	done

	ml_tmpfile= ml_tmpdir=
	trap 'ml_cleanup' EXIT
	trap 'ml_cleanup; exit 130' INT
	trap 'ml_cleanup; exit 143' TERM

	ml_url=${MLSETUP_DOWNLOAD_URL:-$(ml_release_url)}
	[ -n "$ml_url" ] ||
		ml_fail "MLSETUP_DOWNLOAD_URL is not set and this install.sh names no release: set it to the URL that holds mlsetup-<target> and SHA256SUMS"
	ml_url=${ml_url%/}
	ml_dir=${MLSETUP_INSTALL_DIR:-}
	if [ -z "$ml_dir" ]; then
		[ -n "${HOME:-}" ] || ml_fail "HOME is not set: set MLSETUP_INSTALL_DIR to the directory to install mlsetup into"
		ml_dir=$HOME/.local/bin
	fi

	ml_detect_target
	ml_detect_downloader
	ml_name=mlsetup-$ml_target

	mkdir -p "$ml_dir" 2>/dev/null || ml_fail "cannot create the install directory $ml_dir"
	[ -w "$ml_dir" ] || ml_fail "cannot write to the install directory $ml_dir: choose another with MLSETUP_INSTALL_DIR"
	ml_tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-install.XXXXXX") ||
		ml_fail "cannot create a temporary directory in ${TMPDIR:-/tmp}"
	ml_tmpfile=$(mktemp "$ml_dir/.mlsetup.XXXXXX" 2>/dev/null) ||
		ml_fail "cannot write to the install directory $ml_dir: choose another with MLSETUP_INSTALL_DIR"

	ml_say "downloading $ml_name from $ml_url"
	ml_download "$ml_url/SHA256SUMS" "$ml_tmpdir/SHA256SUMS"
	ml_want=$(awk -v n="$ml_name" '$2 == n || $2 == "*" n { print $1; exit }' "$ml_tmpdir/SHA256SUMS")
	case $ml_want in
	*[!0-9a-f]*) ml_want= ;;
	*) [ ${#ml_want} -eq 64 ] || ml_want= ;;
	esac
	[ -n "$ml_want" ] || ml_fail "$ml_url/SHA256SUMS has no sha256 for $ml_name"
	ml_download "$ml_url/$ml_name" "$ml_tmpfile"
	ml_got=$(ml_sha256 "$ml_tmpfile")
	[ "$ml_got" = "$ml_want" ] ||
		ml_fail "$ml_name does not match SHA256SUMS (sha256 $ml_got, expected $ml_want): a corrupted or truncated download; nothing was installed"
	chmod 755 "$ml_tmpfile" || ml_fail "cannot make $ml_tmpfile executable"
	"$ml_tmpfile" --version >/dev/null 2>&1 ||
		ml_fail "the downloaded $ml_name does not run on this system; nothing was installed"
	mv -f "$ml_tmpfile" "$ml_dir/mlsetup" || ml_fail "cannot move mlsetup into $ml_dir"
	ml_tmpfile=
	ml_cleanup
	# The first line of --version, without a pipe into head: head's early
	# exit would hit mlsetup with SIGPIPE while it is still running.
	ml_version=$("$ml_dir/mlsetup" --version 2>/dev/null) || ml_version=
	ml_version=${ml_version%%
*}
	ml_say "installed $ml_dir/mlsetup ($ml_version)"
	case ":${PATH:-}:" in
	*":$ml_dir:"*) ;;
	*)
		ml_say "$ml_dir is not on your PATH; to use mlsetup by name, run"
		ml_say "  export PATH=\"$ml_dir:\$PATH\""
		ml_say "and add that line to ~/.profile (or your shell's startup file)"
		;;
	esac
	if [ $# -gt 0 ]; then
		trap - EXIT INT TERM
		exec "$ml_dir/mlsetup" "$@"
	fi
}

mlsetup_install_sh "$@" mlsetup-install-sh-complete
