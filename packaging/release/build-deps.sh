#!/bin/sh
# build-deps.sh TARGET... - builds the static libraries of deps.lock for
# each target (x86_64-linux-gnu, aarch64-linux-gnu: against glibc 2.17;
# x86_64-windows-gnu: MinGW-w64 headers, the UCRT) with the pinned zig,
# and writes build/release/<target>/deps.mk (the
# install prefix and compiler wrappers the Makefile links mlsetup with) and
# build/release/<target>/mlsetup-release.h (the build's identity for
# --version).
#
# Libraries are built in the lock's order, each into its own prefix that
# starts as a copy of the previous one. A prefix is named by a key hashed
# from everything that went into it (toolchain, these scripts, the recipe,
# the pinned source, the previous key), so a warm cache rebuilds nothing
# and a changed recipe rebuilds that library and those after it.
. "$(dirname "$0")/lib.sh"

GLIBC=2.17 # the manylinux2014 baseline the torch wheels use
[ $# -gt 0 ] || rel_die "usage: build-deps.sh TARGET..."

ZIG=$(sh "$REL_DIR/toolchain.sh")
ZIGLIB=$(dirname "$ZIG")/lib
ZIG_VERSION=$("$ZIG" version)
export ZIG_GLOBAL_CACHE_DIR="$REL_CACHE/zig-cache" ZIG_LOCAL_CACHE_DIR="$REL_CACHE/zig-cache"
sh "$REL_DIR/sources.sh" fetch
for t in pkg-config cmake make perl dpkg-source; do
	command -v "$t" >/dev/null 2>&1 || rel_die "'$t' is needed for the release build; run packaging/release-deps.sh"
done

# Paths that must not end up in the binaries: the cache (sources, build
# trees, prefixes) and zig's own headers.
MAP="-ffile-prefix-map=$REL_CACHE=/mlsetup-release -ffile-prefix-map=$ZIGLIB=/zig"

# Flags every library is compiled with: position-independent, so that the
# objects fit a PIE as well as a fixed-address executable, and with stack
# canaries (zig leaves them off by default).
BASE_CFLAGS="-O2 -fPIC -fstack-protector-strong"

# zig's name for target $1: Linux targets carry the glibc baseline.
zig_target() {
	case $1 in
	*-linux-gnu) printf '%s.%s\n' "$1" "$GLIBC" ;;
	*) printf '%s\n' "$1" ;;
	esac
}

# Writes compiler wrappers (zcc, zc++, zar, zranlib) and a CMake toolchain
# file for target $1 into $REL_CACHE/tools/$1. Build systems see plain
# command names, so no path of this machine is recorded in what they
# generate. No library is C++, but nghttp2's CMake files insist on a
# working C++ compiler: for Linux the machine's own c++ passes, for Windows
# the toolchain names zc++ (zig builds its libc++ once, into its cache).
make_tools() {
	dir=$REL_CACHE/tools/$1
	arch=${1%%-*}
	case $1 in
	*-windows-*) system=Windows cxx="set(CMAKE_CXX_COMPILER zc++)" ;;
	*) system=Linux cxx= ;;
	esac
	mkdir -p "$dir/bin"
	for lang in cc c++; do
		cat >"$dir/bin/z$lang.new" <<EOF
#!/bin/sh
export ZIG_GLOBAL_CACHE_DIR="$ZIG_GLOBAL_CACHE_DIR" ZIG_LOCAL_CACHE_DIR="$ZIG_LOCAL_CACHE_DIR"
exec "$ZIG" $lang -target $(zig_target "$1") $MAP "\$@"
EOF
	done
	printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$ZIG" >"$dir/bin/zar.new"
	printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$ZIG" >"$dir/bin/zranlib.new"
	cat >"$dir/toolchain.cmake.new" <<EOF
set(CMAKE_SYSTEM_NAME $system)
set(CMAKE_SYSTEM_PROCESSOR $arch)
set(CMAKE_C_COMPILER zcc)
$cxx
set(CMAKE_AR "$dir/bin/zar" CACHE FILEPATH "")
set(CMAKE_RANLIB "$dir/bin/zranlib" CACHE FILEPATH "")
set(CMAKE_FIND_ROOT_PATH "\$ENV{PREFIX}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
EOF
	for f in bin/zcc bin/zc++ bin/zar bin/zranlib toolchain.cmake; do
		cmp -s "$dir/$f.new" "$dir/$f" 2>/dev/null && rm "$dir/$f.new" || mv "$dir/$f.new" "$dir/$f"
	done
	chmod +x "$dir/bin/zcc" "$dir/bin/zc++" "$dir/bin/zar" "$dir/bin/zranlib"
}

# Builds library $1 (lock line: name source version sha256) for target $2
# into $REL_CACHE/deps/$2/<name>-<key>, starting from prefix $3; prints
# the new prefix.
build_one() {
	name=$1 ver=$3 target=$5 prev=$6
	recipe=$REL_DIR/libs/$name.sh
	[ -f "$recipe" ] || rel_die "no recipe $recipe for '$name' in deps.lock"
	key=$({
		printf '%s\n' "$prev" "$name $2 $3 $4" "$ZIG_VERSION" "$(zig_target "$target")" "$BASE_CFLAGS" "$MAP"
		cat "$REL_DIR/libs/common.sh" "$recipe"
	} | rel_sha256_stdin | cut -c1-16)
	prefix=$REL_CACHE/deps/$target/$name-$key
	if [ -f "$prefix/.done" ]; then
		printf '%s\n' "$prefix"
		return 0
	fi
	work=$REL_CACHE/build/$target/$name
	rel_log "building $name $ver for $target"
	rm -rf "$prefix" "$work"
	mkdir -p "$prefix" "$work"
	if [ -n "$prev" ]; then
		cp -a "$prev/." "$prefix/"
		rm -f "$prefix/.done"
		# .pc and CMake files name their prefix: make them name this one
		grep -rlF "$prev" "$prefix/lib/pkgconfig" "$prefix/lib/cmake" 2>/dev/null |
			while read -r f; do sed -i "s|$prev|$prefix|g" "$f"; done
	fi
	sh "$REL_DIR/sources.sh" extract "$name" "$work/src" >&2
	started=$(date +%s)
	# The recipe runs with errexit: a failed step fails the library. (A
	# subshell tested by `if` or `||` would run with errexit off, whatever
	# it says, and a recipe whose last step passed would count as built.)
	set +e
	(
		set -e
		cd "$work/src"
		SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l debian/changelog -STimestamp)
		export SOURCE_DATE_EPOCH
		export PREFIX="$prefix" TARGET="$target" ARCH="${target%%-*}" JOBS="$REL_JOBS"
		export PATH="$REL_CACHE/tools/$target/bin:$PATH"
		export CC=zcc AR=zar RANLIB=zranlib
		export CFLAGS="$BASE_CFLAGS" CPPFLAGS="-I$prefix/include" LDFLAGS="-L$prefix/lib"
		export PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH=
		export TOOLCHAIN_FILE="$REL_CACHE/tools/$target/toolchain.cmake"
		export UPSTREAM_VERSION="$(rel_upstream_version "$ver")"
		. "$REL_DIR/libs/common.sh"
		. "$recipe"
		build
	) >"$work.log" 2>&1
	status=$?
	set -e
	if [ "$status" -ne 0 ]; then
		tail -n 60 "$work.log" >&2
		rm -rf "$prefix"
		rel_die "building $name for $target failed; the whole log is $work.log"
	fi
	rel_log "built $name for $target in $(($(date +%s) - started)) s"
	rm -rf "$work" "$work.log"
	: >"$prefix/.done"
	printf '%s\n' "$prefix"
}

for target in "$@"; do
	case $target in
	x86_64-linux-gnu | aarch64-linux-gnu | x86_64-windows-gnu) ;;
	*) rel_die "unsupported release target '$target' (x86_64-linux-gnu, aarch64-linux-gnu, x86_64-windows-gnu)" ;;
	esac
	make_tools "$target"
	prefix=
	debver=
	entries=$(rel_entries)
	while read -r name src ver sum; do
		prefix=$(build_one "$name" "$src" "$ver" "$sum" "$target" "$prefix")
		debver="$debver$name $ver
"
	done <<EOF
$entries
EOF
	# Every library the Makefile links (PKGS, passed as MLSETUP_RELEASE_PKGS)
	# must come from the lock, or the link would look for it in vain.
	for pc in ${MLSETUP_RELEASE_PKGS:-}; do
		PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH= pkg-config --exists "$pc" ||
			rel_die "the Makefile links '$pc', which no library in packaging/release/deps.lock provides: add it there (packaging/release/README.md, 'Adding a library')"
	done
	out=$REL_TOP/build/release/$target
	mkdir -p "$out"
	{
		echo "# generated by packaging/release/build-deps.sh"
		echo "REL_PREFIX_$target := $prefix"
		echo "REL_TOOLS_$target := $REL_CACHE/tools/$target/bin"
		echo "REL_MAP_$target := $MAP"
	} >"$out/deps.mk.new"
	{
		echo "/* generated by packaging/release/build-deps.sh */"
		echo "#define ML_BUILD_TARGET \"$target\""
		# a glibc baseline only where there is glibc (version.c leaves
		# it out of --version where this is not defined)
		case $target in
		*-linux-gnu) echo "#define ML_BUILD_GLIBC \"$GLIBC\"" ;;
		esac
		echo "#define ML_BUILD_ZIG \"$ZIG_VERSION\""
		echo "#define ML_BUILD_SUITE \"$(rel_suite)\""
		printf '%s' "$debver" | while read -r name ver; do
			[ -n "$name" ] || continue
			echo "#define ML_DEB_$(printf '%s' "$name" | tr 'a-z-' 'A-Z_') \"$ver\""
		done
	} >"$out/mlsetup-release.h.new"
	for f in deps.mk mlsetup-release.h; do
		cmp -s "$out/$f.new" "$out/$f" 2>/dev/null && rm "$out/$f.new" || mv "$out/$f.new" "$out/$f"
	done
done
