# lz4 (fatbin decompression): the library's Makefile, static only.
build() {
	case $TARGET in
	*-windows-*)
		# The Makefile compiles all sources in one call, which zig does
		# only for ELF ("coff does not support linking multiple objects
		# into one"): its per-object rule, then the same archive.
		objs=$(cd lib && for f in *.c; do printf '%s ' "${f%.c}.o"; done)
		# shellcheck disable=SC2086
		make -C lib -j "$JOBS" $objs
		# shellcheck disable=SC2086
		(cd lib && $AR rcs liblz4.a $objs)
		;;
	*) make -C lib -j "$JOBS" liblz4.a ;;
	esac
	make -C lib install BUILD_SHARED=no PREFIX="$PREFIX" LIBDIR="$PREFIX/lib"
}
