# http-parser (libgit2's HTTP parser; Debian removes libgit2's bundled copy):
# one source file.
build() {
	$CC $CFLAGS -c http_parser.c -o http_parser.o
	$AR rcs libhttp_parser.a http_parser.o
	mkdir -p "$PREFIX/include" "$PREFIX/lib"
	cp http_parser.h "$PREFIX/include/"
	cp libhttp_parser.a "$PREFIX/lib/"
	write_pc http_parser "$UPSTREAM_VERSION" -lhttp_parser
}
