# libdeflate (whole-member inflation of wheels): the library's Makefile,
# the static library only (no shared library, no gzip program).
build() {
	make -j "$JOBS" libdeflate.a
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	cp libdeflate.a "$PREFIX/lib/"
	cp libdeflate.h "$PREFIX/include/"
	write_pc libdeflate "$UPSTREAM_VERSION" -ldeflate
}
