# PCRE2 (libgit2's regular expressions on Windows, which has no regcomp;
# built for every target to keep the lock one list, but only Windows'
# libgit2 links it): the 8-bit library only, no JIT, no pcre2grep, tests
# or documentation.
build() {
	cmake_build -DBUILD_STATIC_LIBS=ON -DPCRE2_BUILD_PCRE2_8=ON -DPCRE2_BUILD_PCRE2_16=OFF \
		-DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_STATIC_PIC=ON -DPCRE2_SUPPORT_JIT=OFF \
		-DPCRE2_SUPPORT_UNICODE=ON -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF \
		-DPCRE2_SUPPORT_LIBBZ2=OFF -DPCRE2_SUPPORT_LIBZ=OFF -DPCRE2_SUPPORT_LIBEDIT=OFF \
		-DPCRE2_SUPPORT_LIBREADLINE=OFF -DPCRE2_SHOW_REPORT=OFF
	rm -rf "$PREFIX/share/doc/pcre2" "$PREFIX/share/man"
}
