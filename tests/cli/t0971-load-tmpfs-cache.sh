#!/bin/sh
# A cache on another file system than the target: a tmpfs mounted in the
# test's directory holds the cache, the target is on disk. Hard links
# cannot cross file systems, so the wheels' files are copied out of the
# unpacked cache: the install succeeds, says so once (one line for the
# whole install, not one per wheel or file), and the environment's files
# match their RECORD. The same install with the cache on the target's file
# system hard-links and says nothing. Mounting needs root (CI runs as
# root); elsewhere the file skips and says why.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
[ "$(id -u)" -eq 0 ] || test_skip_all "mounting a tmpfs needs root (id -u is $(id -u))"
mkdir -p "$TRASH/tmpfs"
mount -t tmpfs -o size=256m mlsetup-test "$TRASH/tmpfs" 2>"$TRASH/mount.err" ||
	test_skip_all "cannot mount a tmpfs: $(cat "$TRASH/mount.err")"
# Unmounted before $TRASH is removed, also when the test is interrupted.
EXIT_HOOKS="$EXIT_HOOKS; umount \"\$TRASH/tmpfs\" 2>/dev/null || umount -l \"\$TRASH/tmpfs\""
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS
NOTICE="are on different file systems: [0-9]* files were copied from the cache instead of hard-linked"

# counter ENV NAME: the report's counters.NAME.
counter() {
	json "$1/mlsetup-report.json" "d[\"counters\"][\"$2\"]"
}

test_expect_success 'the tmpfs and the target are on different file systems' '
	expect_eq tmpfs "$(stat -f -c %T tmpfs)" &&
	test "$(stat -c %d tmpfs)" != "$(stat -c %d .)"
'
test_expect_success 'cache on tmpfs, target on disk: installs, says once that it copies' '
	{ inst --manifest m.txt --cache-dir "$TRASH/tmpfs/cache" --target "$TRASH/env" >out 2>err ||
		{ cat out err; false; }; } &&
	cat err &&
	expect_eq 1 "$(grep -c "$NOTICE" err)" &&
	grep -q "^warning: the cache $TRASH/tmpfs/cache and the target $TRASH/env $NOTICE" err &&
	test "$(counter env files_copied)" -gt 0 &&
	expect_eq 0 "$(counter env files_hardlinked)" &&
	expect_eq "$(counter env files_linked)" "$(counter env files_copied)" &&
	grep -q " $(counter env files_copied) files were copied" err &&
	env_works "$TRASH/env" &&
	record_ok "$TRASH/env"
'
test_expect_success 'a second target from the same (now warm) tmpfs cache: the same, once' '
	{ inst --manifest m.txt --cache-dir "$TRASH/tmpfs/cache" --target "$TRASH/env2" >out 2>err ||
		{ cat out err; false; }; } &&
	grep -q "3 from the cache" out &&
	expect_eq 1 "$(grep -c "$NOTICE" err)" &&
	env_works "$TRASH/env2" && record_ok "$TRASH/env2"
'
test_expect_success 'the cache on the target'"'"'s file system: hard links, no notice' '
	{ inst --manifest m.txt --cache-dir "$TRASH/cache" --target "$TRASH/env3" >out 2>err ||
		{ cat out err; false; }; } &&
	! grep -q "different file systems" err &&
	test "$(counter env3 files_hardlinked)" -gt 0 &&
	expect_eq 0 "$(counter env3 files_copied)" &&
	env_works "$TRASH/env3" && record_ok "$TRASH/env3"
'
test_expect_success 'the tmpfs cache verifies' '
	"$MLSETUP" cache verify --cache-dir tmpfs/cache >v &&
	grep -q ": 0 corrupted" v
'
test_done
