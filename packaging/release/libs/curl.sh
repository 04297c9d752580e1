# libcurl: HTTP/1.1, HTTP/2 (nghttp2) and FILE, zlib for Content-Encoding;
# no other protocol (not HTTP_ONLY: mlsetup needs file://), no LDAP, SSH,
# RTMP, PSL, IDN, brotli, GSSAPI, NTLM. No CA path is compiled in (the
# build machine's would be wrong elsewhere): mlsetup names the bundle it
# finds (src/core/ca.c).
#
# Linux: TLS is OpenSSL's, whose defaults under /etc/ssl are the fallback.
# poll() is known to work on Linux; the check that would prove it cannot
# run in a cross build, and without it libcurl falls back to select() and
# its 1,024-descriptor limit.
#
# Windows: TLS is Schannel's (the system's certificate store unless
# mlsetup names a bundle; Schannel implies SSPI, which libcurl loads at run
# time), no OpenSSL. Windows has no poll(); libcurl waits with winsock's
# own calls there (WSAEventSelect in curl_multi_wait). File names are UTF-8
# (ENABLE_UNICODE: libcurl converts them to the wide-character API).
# nghttp2.h needs NGHTTP2_STATICLIB to declare a static library's
# functions, and curl.h needs CURL_STATICLIB, which the .pc file gets.
# curl 7.88's test for ioctlsocket(FIONBIO) passes an int * for a u_long *,
# which zig's clang rejects: every Windows has it, so it is given
# (without it libcurl has no way to make a socket non-blocking).
build() {
	case $TARGET in
	*-windows-*)
		CFLAGS="$CFLAGS -DNGHTTP2_STATICLIB"
		set -- -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF -DENABLE_UNICODE=ON \
			-DHAVE_IOCTLSOCKET_FIONBIO=1
		;;
	*)
		set -- -DCURL_USE_OPENSSL=ON -DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON \
			-DCURL_CA_FALLBACK=ON -DHAVE_POLL_FINE=1
		;;
	esac
	cmake_build -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF \
		-DUSE_NGHTTP2=ON -DCURL_ZLIB=ON -DCURL_BROTLI=OFF \
		-DCURL_ZSTD=OFF -DUSE_LIBIDN2=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
		-DCURL_USE_GSSAPI=OFF -DUSE_LIBRTMP=OFF -DENABLE_ARES=OFF \
		-DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_DISABLE_FTP=ON \
		-DCURL_DISABLE_DICT=ON -DCURL_DISABLE_TELNET=ON -DCURL_DISABLE_TFTP=ON \
		-DCURL_DISABLE_POP3=ON -DCURL_DISABLE_IMAP=ON -DCURL_DISABLE_SMTP=ON \
		-DCURL_DISABLE_GOPHER=ON -DCURL_DISABLE_MQTT=ON -DCURL_DISABLE_SMB=ON \
		-DCURL_DISABLE_RTSP=ON -DCURL_DISABLE_NTLM=ON \
		-DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none \
		-DENABLE_THREADED_RESOLVER=ON "$@"
	case $TARGET in
	*-windows-*)
		sed -i 's|^Cflags: .*|& -DCURL_STATICLIB|' "$PREFIX/lib/pkgconfig/libcurl.pc"
		;;
	*)
		grep -q '^#define HAVE_POLL_FINE 1' _build/lib/curl_config.h ||
			{ echo "libcurl was configured without HAVE_POLL_FINE" >&2; return 1; }
		;;
	esac
	# libcurl.pc lists the compiler's implicit libraries by their path in
	# zig's cache; zig links those itself
	sed -i -e 's# [^ ]*/zig-cache/[^ ]*\.a##g' "$PREFIX/lib/pkgconfig/libcurl.pc"
}
