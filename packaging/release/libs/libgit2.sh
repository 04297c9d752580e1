# libgit2: HTTPS through OpenSSL, the system's (here: our) http-parser,
# zlib and regcomp, since Debian strips the bundled copies in deps/; no
# SSH, NTLM, GSSAPI or iconv; no tests, examples or command-line tool.
build() {
	cmake_build -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF \
		-DUSE_SSH=OFF -DUSE_HTTPS=OpenSSL -DUSE_SHA1=CollisionDetection \
		-DUSE_HTTP_PARSER=system -DREGEX_BACKEND=regcomp -DUSE_BUNDLED_ZLIB=OFF \
		-DUSE_NTLMCLIENT=OFF -DUSE_GSSAPI=OFF -DUSE_ICONV=OFF -DUSE_NSEC=ON -DUSE_THREADS=ON
}
