#!/bin/sh
# link-smoke.sh TARGET [URL] - links link-smoke.c, statically, against
# TARGET's release prefix (build/release/TARGET/deps.mk, written by
# build-deps.sh) with the pkg-config --static flags of the libraries the
# Makefile's PKGS names, and runs it: natively for this machine's target,
# under wine for Windows, under qemu-user for aarch64 on another machine.
# With a URL, the program also fetches it with libcurl. Exits with the
# program's status. For whoever changes a recipe: a library that builds but
# does not link (a missing system library in a .pc file) shows up here.
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || rel_die "usage: link-smoke.sh TARGET [URL]"
t=$1
shift
mk=$REL_TOP/build/release/$t/deps.mk
[ -f "$mk" ] || rel_die "no $mk: run packaging/release/build-deps.sh $t first"
prefix=$(sed -n "s|^REL_PREFIX_$t := ||p" "$mk")
tools=$(sed -n "s|^REL_TOOLS_$t := ||p" "$mk")
pkgs=$(sed -n 's/^PKGS *:= *//p' "$REL_TOP/Makefile")
# shellcheck disable=SC2086
flags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH='' pkg-config --static --cflags --libs $pkgs) ||
	rel_die "pkg-config does not know every library of PKGS ($pkgs) in $prefix"
out=$REL_TOP/build/release/$t/link-smoke
run=
case $t in
*-windows-*)
	out=$out.exe sys=
	command -v wine >/dev/null 2>&1 || rel_die "wine is needed to run $out; run packaging/release-deps.sh"
	run=wine
	;;
*)
	sys="-ldl -lpthread" # as the Makefile links mlsetup
	[ "${t%%-*}" = "$(uname -m)" ] || run="qemu-${t%%-*} -L /usr/${t%%-*}-linux-gnu"
	;;
esac
# shellcheck disable=SC2086
"$tools/zcc" -std=c11 -O2 -Wall -Wextra -Werror -o "$out" "$REL_DIR/link-smoke.c" $flags $sys ||
	rel_die "link-smoke.c does not build against $prefix"
rel_log "running $out${run:+ under ${run%% *}}"
# shellcheck disable=SC2086
WINEDEBUG=${WINEDEBUG:--all} exec $run "$out" "$@"
