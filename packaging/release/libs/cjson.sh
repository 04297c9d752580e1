# cJSON: the library only. On Windows cJSON.h declares its functions
# __declspec(dllexport) unless told otherwise: there the library and its
# users get CJSON_HIDE_SYMBOLS (plain declarations, for a static library).
build() {
	sym=
	case $TARGET in
	*-windows-*) sym="-DENABLE_PUBLIC_SYMBOLS=OFF -DENABLE_HIDDEN_SYMBOLS=ON" ;;
	esac
	# shellcheck disable=SC2086
	cmake_build -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=OFF -DENABLE_TARGET_EXPORT=OFF \
		-DENABLE_CUSTOM_COMPILER_FLAGS=OFF -DBUILD_SHARED_AND_STATIC_LIBS=OFF $sym
	case $TARGET in
	*-windows-*) sed -i 's|^Cflags: .*|& -DCJSON_HIDE_SYMBOLS|' "$PREFIX/lib/pkgconfig/libcjson.pc" ;;
	esac
}
