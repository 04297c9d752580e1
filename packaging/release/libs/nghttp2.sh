# nghttp2: the library only (HTTP/2 for libcurl).
# Windows: nghttp2.h declares its functions dllimport unless
# NGHTTP2_STATICLIB is defined, so its .pc file says so there (libcurl's
# build is told in curl.sh). MinGW-w64 has clock_gettime() and
# GetTickCount64(), and nghttp2 1.52's nghttp2_time.c then calls a
# function it only defines without GetTickCount64: it is told that there
# is no clock_gettime(), so it takes its Windows path (GetTickCount64).
build() {
	sys=
	case $TARGET in
	*-windows-*) sys=-DHAVE_CLOCK_GETTIME=OFF ;;
	esac
	cmake_build -DENABLE_LIB_ONLY=ON -DENABLE_STATIC_LIB=ON -DENABLE_SHARED_LIB=OFF \
		-DENABLE_DOC=OFF -DENABLE_EXAMPLES=OFF -DENABLE_HPACK_TOOLS=OFF -DENABLE_APP=OFF \
		-DWITH_LIBXML2=OFF -DWITH_JEMALLOC=OFF -DENABLE_PYTHON_BINDINGS=OFF $sys
	case $TARGET in
	*-windows-*) sed -i 's|^Cflags: .*|& -DNGHTTP2_STATICLIB|' "$PREFIX/lib/pkgconfig/libnghttp2.pc" ;;
	esac
}
