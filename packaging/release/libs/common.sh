# common.sh - helpers for the recipes in this folder (sourced inside the
# unpacked source tree, after build-deps.sh has exported TARGET, ARCH,
# PREFIX, JOBS, CC/AR/RANLIB (zig wrappers on PATH), CFLAGS, CPPFLAGS,
# LDFLAGS, PKG_CONFIG_LIBDIR, TOOLCHAIN_FILE, UPSTREAM_VERSION and
# SOURCE_DATE_EPOCH).
#
# A recipe defines build(), which installs one static library, its headers
# and a pkg-config file into $PREFIX. Shared libraries, programs, tests and
# documentation are not built.

# cmake_configure [CMAKE OPTION...]: configures the tree in _build with the
# zig toolchain file (a cross build, for both targets, so no configure check
# runs a program and the result does not depend on the build machine).
cmake_configure() {
	cmake -S . -B _build -G "Unix Makefiles" \
		-DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN_FILE" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="$CFLAGS -DNDEBUG" \
		-DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_PREFIX_PATH="$PREFIX" -DBUILD_SHARED_LIBS=OFF \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@"
}

# cmake_build [CMAKE OPTION...]: configures, builds and installs the tree.
cmake_build() {
	cmake_configure "$@"
	cmake --build _build -j "$JOBS"
	cmake --install _build
}

# write_pc NAME VERSION LIBS [REQUIRES] [LIBS_PRIVATE]: a pkg-config file
# for a library whose own build writes none.
write_pc() {
	mkdir -p "$PREFIX/lib/pkgconfig"
	cat >"$PREFIX/lib/pkgconfig/$1.pc" <<PC
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: $1
Description: $1 (static, mlsetup release build)
Version: $2
Requires.private: ${4:-}
Libs: -L\${libdir} $3
Libs.private: ${5:-}
Cflags: -I\${includedir}
PC
}
