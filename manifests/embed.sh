#!/bin/sh
# embed.sh OUT.c FILE... - writes a C file that embeds each FILE (the
# shipped manifests, interpreter pins, selection rules and driver table,
# the smoke-test kernel and the torch smoke script: EMBED_FILES in the
# Makefile) as a byte array, with a table {name, data, size} that
# ml_embedded_find() (src/core/embedded.c) looks base names up in. Every
# array is 64-byte aligned (the CUDA driver expects that of images given
# to cuModuleLoadData) and ends with a NUL after its size bytes. Two files
# with the same base name are an error. POSIX sh + od, so building needs
# no extra tool.
set -eu
out=$1
shift
seen=" "
for f in "$@"; do
	name=$(basename "$f")
	case $name in
	*[!A-Za-z0-9._-]*)
		echo "embed.sh: '$f': base name must be letters, digits, '.', '_', '-'" >&2
		exit 1
		;;
	esac
	case $seen in
	*" $name "*)
		echo "embed.sh: '$f': another file is already embedded as '$name'" >&2
		exit 1
		;;
	esac
	seen="$seen$name "
done
tmp="$out.tmp"
{
	echo "/* Written by manifests/embed.sh at build time; do not edit. */"
	echo "#include <stddef.h>"
	echo "#include \"mlsetup/core.h\""
	i=0
	for f in "$@"; do
		echo "static _Alignas(64) const unsigned char f$i[] = {"
		od -An -v -tx1 "$f" | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//' \
			-e '/^$/d' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
		echo "0x00};"
		i=$((i + 1))
	done
	echo "const ml_embedded_file ml_embedded_files[] = {"
	i=0
	for f in "$@"; do
		size=$(wc -c <"$f" | tr -d ' ')
		echo "	{\"$(basename "$f")\", (const char *)f$i, $size},"
		i=$((i + 1))
	done
	echo "	{NULL, NULL, 0},"
	echo "};"
} >"$tmp"
mv "$tmp" "$out"
