# lz4 (fatbin decompression): the library's Makefile, static only.
build() {
	make -C lib -j "$JOBS" liblz4.a
	make -C lib install BUILD_SHARED=no PREFIX="$PREFIX" LIBDIR="$PREFIX/lib"
}
