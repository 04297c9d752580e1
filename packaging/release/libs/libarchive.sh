# libarchive: the library only, with zlib and zstd as its only compression
# libraries (mlsetup reads zip, tar, tar.gz and tar.zst); no crypto, XML,
# ACL, extended attributes or other codecs.
# Its CMake files build a shared and a static library from the same sources
# and install both: only the static one is built and installed here.
build() {
	cmake_configure -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
		-DENABLE_ZLIB=ON -DENABLE_ZSTD=ON -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LZMA=OFF \
		-DENABLE_BZip2=OFF -DENABLE_LIBB2=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF \
		-DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF -DENABLE_CNG=OFF -DENABLE_ACL=OFF \
		-DENABLE_XATTR=OFF -DENABLE_ICONV=ON -DENABLE_TAR=OFF -DENABLE_CPIO=OFF \
		-DENABLE_CAT=OFF -DENABLE_TEST=OFF -DENABLE_COVERAGE=OFF -DENABLE_WERROR=OFF
	cmake --build _build --target archive_static -j "$JOBS"
	mkdir -p "$PREFIX/lib/pkgconfig" "$PREFIX/include"
	cp _build/libarchive/libarchive.a "$PREFIX/lib/"
	cp libarchive/archive.h libarchive/archive_entry.h "$PREFIX/include/"
	cp _build/build/pkgconfig/libarchive.pc "$PREFIX/lib/pkgconfig/"
}
