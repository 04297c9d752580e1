#!/bin/sh
# The command line contract: help, version, usage errors (exit 2), and a
# write error on stdout failing the run.
. "$(dirname "$0")/lib.sh"

test_expect_success 'no command prints usage on stderr and exits 2' '
	expect_exit 2 "$MLSETUP" >out 2>err &&
	test ! -s out && grep -q "usage: mlsetup" err
'
test_expect_success 'unknown command exits 2 naming it' '
	expect_exit 2 "$MLSETUP" frobnicate 2>err &&
	grep -q "unknown command .frobnicate." err && grep -q "usage:" err
'
test_expect_success 'unknown option exits 2 with the command usage' '
	expect_exit 2 "$MLSETUP" detect --frob 2>err &&
	grep -q "unknown option .--frob." err && grep -q "mlsetup detect" err
'
test_expect_success 'option missing its value exits 2' '
	expect_exit 2 "$MLSETUP" detect --target 2>err &&
	grep -q "needs a value" err
'
test_expect_success 'bad --color value exits 2' '
	expect_exit 2 "$MLSETUP" --color=purple detect 2>err &&
	grep -q "auto, always or never" err
'
test_expect_success '--help lists commands and exit codes' '
	"$MLSETUP" --help >out &&
	grep -q "^  detect" out && grep -q "exit codes" out && grep -q "6  unsupported" out
'
test_expect_success 'help COMMAND and COMMAND --help show the same text' '
	"$MLSETUP" help detect >a && "$MLSETUP" detect --help >b && cmp a b &&
	grep -q "usage: mlsetup detect" a
'
test_expect_success 'help for an unknown command is a usage error' '
	expect_exit 2 "$MLSETUP" help nosuch 2>err
'
test_expect_success '--version shows version, commit and library versions' '
	"$MLSETUP" --version >out &&
	grep -q "^mlsetup [0-9]" out && grep -q "commit" out &&
	for lib in libcurl libarchive openssl cjson libgit2 zstd lz4 zlib libdeflate utf8proc; do
		grep -q "$lib" out || exit 1
	done
'
test_expect_success '--version --json is a versioned document' '
	"$MLSETUP" --version --json >out &&
	expect_eq mlsetup.version/1 "$(json out "d[\"schema\"]")" &&
	json out "d[\"libraries\"][\"libcurl\"]" | grep -q OpenSSL &&
	json out "d[\"build\"]" | grep -q . &&
	expect_eq false "$(json out "\"build\" in d[\"libraries\"]")"
'
test_expect_success 'a write error on stdout fails the run' '
	if [ -w /dev/full ]; then
		expect_exit 1 "$MLSETUP" detect --sysroot "$SYSROOTS/empty" >/dev/full 2>err &&
		grep -q "cannot write" err
	fi
'
test_expect_success 'global options work after the command too' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" --json >out &&
	expect_eq mlsetup.detect/1 "$(json out "d[\"schema\"]")"
'
test_done
