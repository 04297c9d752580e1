# libarchive: the library only, with zlib and zstd as its only compression
# libraries (mlsetup reads zip, tar, tar.gz and tar.zst); no crypto, XML,
# ACL, extended attributes or other codecs.
# Its CMake files build a shared and a static library from the same sources
# and install both: only the static one is built and installed here.
# Windows: no iconv (libarchive converts names with the Windows API there),
# no CNG (random numbers come from CryptoAPI: advapi32), the Windows 10
# API; the static library is called libarchive_static.a there and is
# installed as libarchive.a, and archive.h needs LIBARCHIVE_STATIC (in the
# .pc file's Cflags.private, which pkg-config --static reads; also put in
# Cflags, for a plain --cflags).
# Its one check that runs a program (is zlib built with ZLIB_WINAPI?)
# cannot run in a cross build, and CMake 3.25 crashes on it: the answer is
# no (zlib.sh builds zlib without it), so the check is made to say so.
build() {
	case $TARGET in
	*-windows-*)
		sed -i 's|^\( *\)CHECK_C_SOURCE_RUNS("${SAMPLE_SOURCE}" ${VAR})$|\1SET(${VAR} 0)|' CMakeLists.txt
		grep -q 'SET(${VAR} 0)' CMakeLists.txt ||
			{ echo "libarchive: CMakeLists.txt changed; revisit the ZLIB_WINAPI patch" >&2; return 1; }
		set -- -DENABLE_ICONV=OFF -DWINDOWS_VERSION=WIN10
		;;
	*) set -- -DENABLE_ICONV=ON ;;
	esac
	cmake_configure -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
		-DENABLE_ZLIB=ON -DENABLE_ZSTD=ON -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LZMA=OFF \
		-DENABLE_BZip2=OFF -DENABLE_LIBB2=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF \
		-DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF -DENABLE_CNG=OFF -DENABLE_ACL=OFF \
		-DENABLE_XATTR=OFF -DENABLE_TAR=OFF -DENABLE_CPIO=OFF \
		-DENABLE_CAT=OFF -DENABLE_TEST=OFF -DENABLE_COVERAGE=OFF -DENABLE_WERROR=OFF "$@"
	cmake --build _build --target archive_static -j "$JOBS"
	mkdir -p "$PREFIX/lib/pkgconfig" "$PREFIX/include"
	case $TARGET in
	*-windows-*)
		cp _build/libarchive/libarchive_static.a "$PREFIX/lib/libarchive.a"
		sed -e 's|^Cflags: .*|& -DLIBARCHIVE_STATIC|' \
			-e 's|^Libs.private: .*|& -ladvapi32|' \
			_build/build/pkgconfig/libarchive.pc >"$PREFIX/lib/pkgconfig/libarchive.pc"
		;;
	*)
		cp _build/libarchive/libarchive.a "$PREFIX/lib/"
		cp _build/build/pkgconfig/libarchive.pc "$PREFIX/lib/pkgconfig/"
		;;
	esac
	cp libarchive/archive.h libarchive/archive_entry.h "$PREFIX/include/"
}
