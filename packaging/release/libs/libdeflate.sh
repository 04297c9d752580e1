# libdeflate (whole-member inflation of wheels): the library's Makefile,
# the static library only (no shared library, no gzip program). For
# Windows the Makefile names it libdeflatestatic.lib; it is installed as
# libdeflate.a all the same, for -ldeflate.
build() {
	case $TARGET in
	*-windows-*) lib=libdeflatestatic.lib ;;
	*) lib=libdeflate.a ;;
	esac
	make -j "$JOBS" "$lib"
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	cp "$lib" "$PREFIX/lib/libdeflate.a"
	cp libdeflate.h "$PREFIX/include/"
	write_pc libdeflate "$UPSTREAM_VERSION" -ldeflate
}
