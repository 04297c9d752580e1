# OpenSSL: libcrypto and libssl only, no loadable modules or engines, no
# legacy ciphers or protocols mlsetup never speaks. OPENSSLDIR is /etc/ssl,
# where most distributions keep certificates (mlsetup still finds the CA
# bundle itself: ml_os_ca_file()). The library records its prefix (modules
# and engines directories), so it is configured for /usr/local, like any
# build, and staged into $PREFIX: no path of this machine gets in.
# On Windows (OpenSSL's mingw64 target) mlsetup uses libcrypto's digests
# only, TLS being Schannel's (curl) and WinHTTP's (libgit2); the /usr/local
# and /etc/ssl compiled in name nothing there. Its .pc files list the
# Windows libraries it needs (ws2_32, gdi32, crypt32).
build() {
	# it needs none of the other libraries, and would record these flags
	# (with the prefix's path) in OpenSSL_version(OPENSSL_CFLAGS)
	unset CPPFLAGS LDFLAGS
	case $TARGET in
	x86_64-linux-gnu) os=linux-x86_64 ;;
	aarch64-linux-gnu) os=linux-aarch64 ;;
	x86_64-windows-gnu) os=mingw64 ;;
	esac
	./Configure "$os" --prefix=/usr/local --libdir=lib --openssldir=/etc/ssl \
		no-shared no-module no-engine no-dso no-tests no-legacy no-comp \
		no-ssl3 no-dtls no-srp no-psk no-idea no-mdc2 no-rc5 no-seed no-whirlpool \
		no-camellia no-aria no-sm2 no-sm3 no-sm4 no-gost no-ui-console \
		no-weak-ssl-ciphers no-ec2m no-rfc3779 no-ct no-cms no-ts no-srtp \
		CC="$CC" AR="$AR" RANLIB="$RANLIB" CFLAGS="$CFLAGS"
	make -j "$JOBS" build_libs
	make install_dev DESTDIR="$PWD/_stage"
	cp -R _stage/usr/local/. "$PREFIX/"
	sed -i "s|^prefix=/usr/local\$|prefix=$PREFIX|" "$PREFIX"/lib/pkgconfig/libcrypto.pc \
		"$PREFIX"/lib/pkgconfig/libssl.pc "$PREFIX"/lib/pkgconfig/openssl.pc
	rm -rf "$PREFIX/lib/cmake/OpenSSL" # names /usr/local; FindOpenSSL needs none
}
