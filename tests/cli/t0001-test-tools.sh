#!/bin/sh
# The test tools themselves: lib.sh's test_when_finished (cleanup after a
# block, pass or fail), test_skip and test_skip_all, and how
# tests/run-tests.sh counts: a skip is never a pass or a failure and always
# shows its reason, a program that reports nothing fails, and the last line
# is "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"

# script NAME: writes stdin, after a line sourcing lib.sh, to
# $TRASH/sub/NAME.sh.
script() {
	mkdir -p "$TRASH/sub"
	{
		echo ". '$top/tests/cli/lib.sh'"
		cat
	} >"$TRASH/sub/$1.sh"
}

script cleanup <<'EOF'
test_expect_success 'passes' '
	test_when_finished "echo first >>\"$LOG\"" &&
	test_when_finished "echo second >>\"$LOG\"" &&
	true
'
test_expect_success 'fails' '
	test_when_finished "echo after-fail >>\"$LOG\"" &&
	false
'
test_expect_success 'exits' '
	test_when_finished "echo after-exit >>\"$LOG\"" &&
	exit 3
'
test_expect_success 'cleanup fails' '
	test_when_finished "false" &&
	test_when_finished "echo still-runs >>\"$LOG\"" &&
	true
'
test_expect_success 'cleanup sees the block state' '
	mkdir -p ro && chmod a-w ro &&
	test_when_finished "chmod u+w ro && echo restored >>\"$LOG\"" &&
	true
'
test_expect_success 'and the next block finds it restored' '
	test -w ro && touch ro/x
'
test_done
EOF

test_expect_success 'test_when_finished runs after a passing block, last registered first' '
	LOG="$TRASH/log" && export LOG &&
	expect_exit 1 sh sub/cleanup.sh >out 2>&1 &&
	grep -q "^ok 1 - passes" out &&
	sed -n 1,2p log >got && printf "second\nfirst\n" >want && cmp want got
'
test_expect_success 'it runs after a failing block and after exit, which still fail' '
	grep -q "^not ok 2 - fails" out && grep -q "^not ok 3 - exits" out &&
	sed -n 3,4p log >got && printf "after-fail\nafter-exit\n" >want && cmp want got
'
test_expect_success 'a failing cleanup fails the block; the others still run' '
	grep -q "^not ok 4 - cleanup fails" out &&
	sed -n 5p log | grep -q "^still-runs$"
'
test_expect_success 'cleanup runs in the block, so the next block starts clean' '
	grep -q "^ok 5 - cleanup sees the block state" out &&
	grep -q "^ok 6 - and the next block finds it restored" out &&
	sed -n 6p log | grep -q "^restored$"
'
test_expect_success 'test_when_finished outside a block is refused' '
	script outside <<-\EOF &&
	test_when_finished "echo nope" || echo refused
	EOF
	sh sub/outside.sh >out 2>&1 &&
	grep -q "^refused$" out && grep -q "outside test_expect_success" out && ! grep -q nope out
'
test_expect_success 'test_skip reports the next block as skipped, with its reason, and does not run it' '
	script skip <<-\EOF &&
	test_skip "no frobnicator here"
	test_expect_success "frobnicates" "touch \"$MARK\""
	test_expect_success "runs" "true"
	test_done
	EOF
	MARK="$TRASH/ran" sh sub/skip.sh >out 2>&1 &&
	grep -q "^ok 1 # skip frobnicates (no frobnicator here)$" out &&
	grep -q "^ok 2 - runs$" out &&
	test ! -e "$TRASH/ran"
'
test_expect_success 'test_skip_all prints a TAP skip plan and exits 0 before any block' '
	script skipall <<-\EOF &&
	test_skip_all "no CPython here"
	test_expect_success "never" "touch \"$MARK\""
	test_done
	EOF
	MARK="$TRASH/ran-all" sh sub/skipall.sh >out 2>&1 &&
	printf "1..0 # SKIP no CPython here\n" >want && cmp want out &&
	test ! -e "$TRASH/ran-all"
'

# fake NAME STATUS: an executable "unit test" NAME in the fake build
# directory that prints stdin (its TAP) and exits with STATUS.
fake() {
	mkdir -p "$TRASH/build/tests"
	{
		echo "#!/bin/sh"
		echo "cat <<'TAP'"
		cat
		echo "TAP"
		echo "exit $2"
	} >"$TRASH/build/tests/$1"
	chmod +x "$TRASH/build/tests/$1"
}
# runner: tests/run-tests.sh on the fake build directory only.
runner() {
	rel=$(python3 -c "import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))" \
		"$TRASH/build" "$top") &&
	TESTS=test_fake sh "$top/tests/run-tests.sh" "$rel"
}

test_expect_success 'run-tests.sh: passes, skips with their reasons, last line counts each' '
	rm -rf "$TRASH/build" &&
	fake test_fake_pass 0 <<-\EOF &&
	1..3
	ok 1 - a
	ok 2 # skip b (no foo)
	ok 3 - c # SKIP no bar
	EOF
	fake test_fake_cmocka 0 <<-\EOF &&
	1..2
	ok 1 - a
	# no python3 for the mirror
	not ok 2 # SKIP test_b
	# ok - test_fake_cmocka
	EOF
	fake test_fake_skipall 0 <<-\EOF &&
	1..0 # SKIP no CPython >= 3.11 found
	EOF
	runner >out 2>&1 &&
	grep -q "^PASS test_fake_cmocka (1, 1 skipped: test_b: no python3 for the mirror) [0-9]*s$" out &&
	grep -q "^PASS test_fake_pass (1, 2 skipped) [0-9]*s$" out &&
	grep -q "^    skipped: b (no foo)$" out && grep -q "^    skipped: no bar$" out &&
	grep -q "^SKIP test_fake_skipall (all: no CPython >= 3.11 found) [0-9]*s$" out &&
	expect_eq "2 passed, 0 failed, 4 skipped" "$(tail -1 out)"
'
test_expect_success 'run-tests.sh: a failure, a crash and a silent program fail; exit 1' '
	rm -rf "$TRASH/build" &&
	fake test_fake_fail 1 <<-\EOF &&
	ok 1 - a
	not ok 2 - b
	EOF
	fake test_fake_crash 134 <<-\EOF &&
	ok 1 - a
	EOF
	fake test_fake_silent 0 <<-\EOF &&
	1..0
	EOF
	expect_exit 1 runner >out 2>&1 &&
	grep -q "^FAIL test_fake_fail (1 passed, 1 failed, 0 skipped) [0-9]*s$" out &&
	grep -q "^FAIL test_fake_crash (1 passed, 1 failed, 0 skipped) [0-9]*s$" out &&
	grep -q "exited with status 134" out &&
	grep -q "^FAIL test_fake_silent (0 passed, 1 failed, 0 skipped) [0-9]*s$" out &&
	grep -q "reported no test results" out &&
	expect_eq "2 passed, 3 failed, 0 skipped" "$(tail -1 out)"
'
test_expect_success 'run-tests.sh: a program past MLSETUP_TEST_TIMEOUT is killed, with its children, and fails' '
	rm -rf "$TRASH/build" &&
	mkdir -p "$TRASH/build/tests" &&
	cat >"$TRASH/build/tests/test_fake_hang" <<-\EOF &&
	#!/bin/sh
	echo 1..2
	echo ok 1 - a
	sleep 300 &
	echo $! >"$HANG_CHILD"
	wait
	EOF
	chmod +x "$TRASH/build/tests/test_fake_hang" &&
	export HANG_CHILD="$TRASH/child" MLSETUP_TEST_TIMEOUT=2 &&
	expect_exit 1 runner >out 2>&1 &&
	grep -q "^FAIL test_fake_hang (1 passed, 1 failed, 0 skipped) [0-9]*s$" out &&
	grep -q "timed out after 2 s" out &&
	child=$(cat "$TRASH/child") && i=0 &&
	while kill -0 "$child" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 "$child" 2>/dev/null &&
	expect_eq "1 passed, 1 failed, 0 skipped" "$(tail -1 out)"
'
script chain <<'EOF'
test_expect_success 'broken chain' '
	false
	echo ran >>ran-here
'
test_expect_success 'whole chain' '
	true &&
	echo ran-whole >>"$LOG"
'
test_expect_success 'chain through a loop and a subshell' '
	for x in a b; do
		echo "$x" >>"$LOG" || return 1
	done &&
	(cd . && true)
'
test_expect_success 'test_must_fail' '
	test_must_fail false &&
	test_must_fail sh -c "exit 5" &&
	! test_must_fail true &&
	! test_must_fail sh -c "kill -SEGV \$\$" &&
	! test_must_fail sh -c "exit 127"
'
test_expect_success 'the broken block never ran' '
	test ! -e ran-here
'
test_done
EOF

test_expect_success 'a block whose commands are not all joined with && fails unrun (chain lint)' '
	LOG="$TRASH/chainlog" && export LOG && : >"$LOG" &&
	expect_exit 1 sh sub/chain.sh >out 2>&1 &&
	grep -q "^not ok 1 - broken chain" out &&
	grep -q "broken &&-chain" out &&
	grep -q "^ok 2 - whole chain" out &&
	grep -q "^ok 3 - chain through a loop and a subshell" out &&
	grep -q "^ok 5 - the broken block never ran" out && grep -qx ran-whole "$LOG" &&
	test "$(grep -cx a "$LOG")" = 1
'
test_expect_success 'test_must_fail wants a failure, not success, a crash or a missing program' '
	grep -q "^ok 4 - test_must_fail" out
'
test_done
