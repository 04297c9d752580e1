#!/bin/sh
# embed.sh OUT.c FILE... - writes a C file that embeds each FILE (the
# shipped manifests, interpreter pins, selection rules and driver table,
# the smoke-test kernel and the torch smoke script: EMBED_FILES in the
# Makefile) as a byte array, with a table {name, data, size} that
# ml_embedded_find() (src/core/embedded.c) looks names up in. A file's name
# is its base name, except in a folder of manifests/ (the manifests of one
# OS, manifests/windows/requirements.txt): there it keeps that folder
# ("windows/requirements.txt"), so each OS's set has the same names. Every
# array is 64-byte aligned (the CUDA driver expects that of images given
# to cuModuleLoadData) and ends with a NUL after its size bytes. Two files
# with the same name are an error. POSIX sh + od, so building needs
# no extra tool.
set -eu
out=$1
shift
# embed_name FILE: the name FILE is embedded as.
embed_name() {
	dir=$(dirname "$1")
	case $(basename "$(dirname "$dir")") in
	manifests) echo "$(basename "$dir")/$(basename "$1")" ;;
	*) basename "$1" ;;
	esac
}
seen=" "
for f in "$@"; do
	name=$(embed_name "$f")
	case $name in
	*[!A-Za-z0-9._/-]* | /* | */*/* | */)
		echo "embed.sh: '$f': name '$name' must be letters, digits, '.', '_', '-' (and one folder of manifests/)" >&2
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
		echo "	{\"$(embed_name "$f")\", (const char *)f$i, $size},"
		i=$((i + 1))
	done
	echo "	{NULL, NULL, 0},"
	echo "};"
} >"$tmp"
mv "$tmp" "$out"
