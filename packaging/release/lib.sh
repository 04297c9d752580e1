# lib.sh - shared by the release scripts (sourced, POSIX sh): where the
# release cache is, messages, and the pinned inputs (deps.lock, zig.txt).
#
# The cache lives outside the clone so that a second build on the same
# machine is warm: $MLSETUP_RELEASE_CACHE, else $XDG_CACHE_HOME or ~/.cache
# + /mlsetup-release. It holds
#   zig/<version>/        the unpacked ziglang wheel
#   zig-cache/            zig's own compilation cache
#   apt/                  the private apt configuration, state and cache
#   sources/<src>_<ver>/  verified Debian source packages
#   tools/<target>/       compiler wrappers and the CMake toolchain file
#   deps/<target>/<name>-<key>/  install prefix after <name> (and all before it)
#   build/<target>/<name>/       scratch build trees (removed after success)

set -eu

REL_DIR=$(cd "$(dirname "$0")" && pwd)
REL_TOP=$(cd "$REL_DIR/../.." && pwd)
REL_CACHE=${MLSETUP_RELEASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlsetup-release}
REL_LOCK=${MLSETUP_RELEASE_LOCK:-$REL_DIR/deps.lock}
REL_JOBS=${JOBS:-2}

rel_log() { printf 'release: %s\n' "$*" >&2; }
rel_die() {
	printf 'release: error: %s\n' "$*" >&2
	exit 1
}

# The Debian suite the lock pins ("# suite: bookworm").
rel_suite() {
	sed -n 's/^# suite: *\([a-z0-9-]*\).*/\1/p' "$REL_LOCK" | head -n 1
}

# Prints the lock's entries as "name source version sha256" lines.
rel_entries() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$REL_LOCK"
}

# The version of zig pinned in zig.txt ("ziglang==0.17.1").
rel_zig_version() {
	sed -n 's/^ziglang==\([0-9][0-9.]*\).*/\1/p' "$REL_DIR/zig.txt" | head -n 1
}

# sha256 of a file, with whichever tool is here.
rel_sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	else
		openssl dgst -sha256 -r "$1" | cut -d' ' -f1
	fi
}

# sha256 of standard input.
rel_sha256_stdin() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum | cut -d' ' -f1
	else
		openssl dgst -sha256 -r | cut -d' ' -f1
	fi
}

# Debian's upstream version: without epoch and Debian revision.
rel_upstream_version() {
	printf '%s\n' "$1" | sed -e 's/^[0-9]*://' -e 's/-[^-]*$//'
}

# The source directory name of a package's files in the cache: epoch dropped,
# as the file names drop it.
rel_source_dir() { # source version
	printf '%s/sources/%s_%s\n' "$REL_CACHE" "$1" "$(printf '%s' "$2" | sed 's/^[0-9]*://')"
}
