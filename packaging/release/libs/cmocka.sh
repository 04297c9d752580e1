# cmocka (the unit tests, cross-built for Windows and run under wine; the
# release binaries do not link it): its CMake files always build a shared
# library, so only the static target is built and installed by hand.
build() {
	cmake_configure -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF \
		-DWITH_CMOCKERY_SUPPORT=OFF -DPICKY_DEVELOPER=OFF
	cmake --build _build --target cmocka-static -j "$JOBS"
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	cp _build/src/libcmocka-static.a "$PREFIX/lib/libcmocka.a"
	cp include/cmocka.h include/cmocka_pbc.h "$PREFIX/include/"
	write_pc cmocka "$UPSTREAM_VERSION" -lcmocka
}
