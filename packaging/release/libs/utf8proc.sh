# utf8proc (Unicode NFC and case folding of wheel file names): the library
# only, no tests.
build() {
	cmake_build -DUTF8PROC_INSTALL=ON -DUTF8PROC_ENABLE_TESTING=OFF
}
