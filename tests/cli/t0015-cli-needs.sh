#!/bin/sh
# main() provides what each command declares it needs: a command that
# needs the network is refused under --offline before it does anything;
# install's target lock is taken by main() before the command runs, so a
# busy target stops it before any other work.
. "$(dirname "$0")/lib.sh"

test_expect_success 'lock needs the network: refused under --offline, exit 2, nothing written' '
	echo "numpy" >in.txt &&
	expect_exit 2 "$MLSETUP" lock in.txt -o out.txt --offline 2>err &&
	grep -q "error: .lock. needs the network, and --offline was given" err &&
	grep -q "hint: run it without --offline" err &&
	test ! -e out.txt
'
test_expect_success '--offline is a global option: before the command too, help still works' '
	expect_exit 2 "$MLSETUP" --offline lock in.txt -o out.txt 2>err &&
	grep -q "needs the network" err &&
	"$MLSETUP" --offline lock --help >out && grep -q "usage: mlsetup lock" out
'
test_expect_success 'commands that need no network accept --offline' '
	"$MLSETUP" detect --sysroot "$SYSROOTS/empty" --offline --json >out &&
	expect_eq mlsetup.detect/1 "$(json out "d[\"schema\"]")"
'
test_expect_success 'install: the target lock comes first, a busy target fails at once' '
	{ flock "$TRASH/.busy.mlsetup-lock" sleep 3 & } &&
	holder=$! &&
	sleep 0.5 &&
	expect_exit 1 "$MLSETUP" install --sysroot "$SYSROOTS/empty" --manifest nosuch.txt \
		--target "$TRASH/busy" --no-wait 2>err &&
	grep -q "installing into" err && ! grep -q "nosuch" err &&
	wait $holder && test ! -e "$TRASH/busy"
'
test_expect_success 'a usage error found while running still shows the usage' '
	echo "x==1 --hash=sha256:$(printf %064d 0)" >m.txt &&
	expect_exit 2 "$MLSETUP" download -r m.txt -d o --platform nope 2>err &&
	grep -q "OS-ARCH" err && grep -q "hint: usage: mlsetup download" err
'
test_done
