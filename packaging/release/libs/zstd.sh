# zstd: the library's Makefile; decompression of legacy (pre-0.8) frames is
# left out.
build() {
	make -C lib -j "$JOBS" libzstd.a ZSTD_LEGACY_SUPPORT=0 ZSTD_NO_UNUSED_FUNCTIONS=1
	make -C lib install-static install-includes install-pc PREFIX="$PREFIX" LIBDIR="$PREFIX/lib"
}
