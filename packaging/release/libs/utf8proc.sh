# utf8proc (Unicode NFC and case folding of wheel file names): the library
# only, no tests. Its .pc file says -DUTF8PROC_EXPORTS, which on Windows
# would declare the functions dllimport/dllexport; a static library's
# users need -DUTF8PROC_STATIC there (its own build defines that).
build() {
	cmake_build -DUTF8PROC_INSTALL=ON -DUTF8PROC_ENABLE_TESTING=OFF
	case $TARGET in
	*-windows-*) sed -i 's/-DUTF8PROC_EXPORTS/-DUTF8PROC_STATIC/' "$PREFIX/lib/pkgconfig/libutf8proc.pc" ;;
	esac
}
