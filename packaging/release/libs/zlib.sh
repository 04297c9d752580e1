# zlib: its own configure script, static library only.
build() {
	./configure --static --prefix="$PREFIX" --libdir="$PREFIX/lib"
	make -j "$JOBS" libz.a
	make install-libs install-headers 2>/dev/null || make install
	rm -f "$PREFIX"/lib/libz.so*
}
