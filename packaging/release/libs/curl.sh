# libcurl: HTTP/1.1, HTTP/2 (nghttp2) and FILE over OpenSSL, zlib for
# Content-Encoding; no other protocol (not HTTP_ONLY: mlsetup needs
# file://), no LDAP, SSH, RTMP, PSL, IDN, brotli, GSSAPI, NTLM. No CA path
# is compiled in (the build machine's would be wrong elsewhere): mlsetup
# names the bundle it finds (src/core/ca.c), and OpenSSL's defaults under
# /etc/ssl are the fallback. poll() is known to work on Linux; the check
# that would prove it cannot run in a cross build, and without it libcurl
# falls back to select() and its 1,024-descriptor limit.
build() {
	cmake_build -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF \
		-DCURL_USE_OPENSSL=ON -DUSE_NGHTTP2=ON -DCURL_ZLIB=ON -DCURL_BROTLI=OFF \
		-DCURL_ZSTD=OFF -DUSE_LIBIDN2=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
		-DCURL_USE_GSSAPI=OFF -DUSE_LIBRTMP=OFF -DENABLE_ARES=OFF \
		-DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_DISABLE_FTP=ON \
		-DCURL_DISABLE_DICT=ON -DCURL_DISABLE_TELNET=ON -DCURL_DISABLE_TFTP=ON \
		-DCURL_DISABLE_POP3=ON -DCURL_DISABLE_IMAP=ON -DCURL_DISABLE_SMTP=ON \
		-DCURL_DISABLE_GOPHER=ON -DCURL_DISABLE_MQTT=ON -DCURL_DISABLE_SMB=ON \
		-DCURL_DISABLE_RTSP=ON -DCURL_DISABLE_NTLM=ON -DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON \
		-DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_CA_FALLBACK=ON \
		-DENABLE_THREADED_RESOLVER=ON -DHAVE_POLL_FINE=1
	grep -q '^#define HAVE_POLL_FINE 1' _build/lib/curl_config.h ||
		{ echo "libcurl was configured without HAVE_POLL_FINE" >&2; return 1; }
	# libcurl.pc lists the compiler's implicit libraries by their path in
	# zig's cache; zig links those itself
	sed -i -e 's# [^ ]*/zig-cache/[^ ]*\.a##g' "$PREFIX/lib/pkgconfig/libcurl.pc"
}
