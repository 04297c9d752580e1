# libgit2: the system's (here: our) http-parser and zlib, since Debian strips
# the bundled copies in deps/; no SSH, NTLM, GSSAPI or iconv; no tests,
# examples or command-line tool.
# Linux: HTTPS through OpenSSL, regcomp for regular expressions.
# Windows: HTTPS through WinHTTP (the system's TLS and certificate store),
# PCRE2 for regular expressions (Windows has no regcomp), the built-in
# SHA-256 (not the Win32 CryptoAPI/CNG one).
build() {
	case $TARGET in
	*-windows-*)
		# libgit2 1.5 assumes MinGW lacks winhttp.h and an import library
		# and builds its own from deps/winhttp, which Debian's source
		# leaves out; MinGW-w64 (zig's) has both, so take the path other
		# Windows compilers take (-lwinhttp).
		sed -i 's|^\tif(MINGW)$|\tif(MINGW AND EXISTS "${PROJECT_SOURCE_DIR}/deps/winhttp")|' \
			cmake/SelectWinHTTP.cmake
		grep -q 'deps/winhttp")$' cmake/SelectWinHTTP.cmake ||
			{ echo "libgit2: SelectWinHTTP.cmake changed; revisit the MinGW patch" >&2; return 1; }
		# The version resource git2.rc is meant for git2.dll; in a static
		# library it would only need a resource compiler (windres).
		sed -i '/set(SRC_RC "git2.rc")/d' src/libgit2/CMakeLists.txt
		# pcre2.h declares dllimport functions unless PCRE2_STATIC
		CFLAGS="$CFLAGS -DPCRE2_STATIC"
		set -- -DUSE_HTTPS=WinHTTP -DUSE_WINHTTP=ON -DREGEX_BACKEND=pcre2 -DUSE_SHA256=Builtin
		;;
	*)
		set -- -DUSE_HTTPS=OpenSSL -DREGEX_BACKEND=regcomp
		;;
	esac
	cmake_build -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF \
		-DUSE_SSH=OFF -DUSE_SHA1=CollisionDetection \
		-DUSE_HTTP_PARSER=system -DUSE_BUNDLED_ZLIB=OFF \
		-DUSE_NTLMCLIENT=OFF -DUSE_GSSAPI=OFF -DUSE_ICONV=OFF -DUSE_NSEC=ON -DUSE_THREADS=ON "$@"
	case $TARGET in
	*-windows-*)
		# its .pc file leaves out winsock, which it links (ws2_32)
		sed -i 's|^Libs.private: .*|& -lws2_32|' "$PREFIX/lib/pkgconfig/libgit2.pc"
		;;
	esac
}
