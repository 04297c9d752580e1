#!/bin/sh
# Atomic environments: SIGKILL at random moments of `mlsetup install`
# never leaves a "complete" marker over a broken environment, and the next
# run always ends with a complete, correct one; two installs into one target
# wait for each other; --no-wait fails cleanly; a failed install leaves the
# environment that was there byte-identical.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS

test_expect_success 'SIGKILL at random moments: every next run completes the environment' '
	i=0 &&
	while [ $i -lt 12 ]; do
		i=$((i + 1))
		# Every third round starts from an empty cache and a new interpreter
		# dir, so kills also land in downloads and unpacking. (Old interpreter
		# dirs stay: the environment from the round before links to one.)
		if [ $((i % 3)) -eq 1 ]; then
			rm -rf "$TRASH/cache"
			XDG_DATA_HOME="$TRASH/data-$i"
			export XDG_DATA_HOME
		fi
		# inst_exec: $! is mlsetup itself, not a subshell around it
		(inst_exec --manifest m.txt --target "$TRASH/kenv" >/dev/null 2>&1) &
		pid=$!
		sleep "$(python3 -c "import random; print(random.uniform(0.01, 1.2))")"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		if [ -f "$TRASH/kenv/.mlsetup-complete" ]; then
			env_works "$TRASH/kenv" || { echo "round $i: complete marker over a broken env"; exit 1; }
		fi
		inst --manifest m.txt --target "$TRASH/kenv" >out 2>err ||
			{ echo "round $i: the run after the kill failed"; cat err; exit 1; }
		env_works "$TRASH/kenv" || { echo "round $i: not correct after rerun"; exit 1; }
		no_staging "$TRASH" || exit 1
	done
'
test_expect_success 'two concurrent installs into one target: one waits, both succeed' '
	inst --manifest m.txt --target "$TRASH/cenv" >o1 2>e1 &
	p1=$!
	inst --manifest m.txt --target "$TRASH/cenv" >o2 2>e2 &
	p2=$!
	wait $p1 && wait $p2 &&
	env_works "$TRASH/cenv" && no_staging "$TRASH"
'
test_expect_success '--no-wait fails cleanly while another install holds the target' '
	{ flock "$TRASH/.cenv.mlsetup-lock" sleep 3 & } &&
	holder=$! &&
	test_when_finished "kill $holder 2>/dev/null; wait $holder 2>/dev/null; true" &&
	sleep 0.5 &&
	tree_hash "$TRASH/cenv" >before &&
	expect_exit 1 inst --manifest m.txt --target "$TRASH/cenv" --no-wait 2>err &&
	grep -q "installing into" err &&
	wait $holder &&
	expect_eq "$(cat before)" "$(tree_hash "$TRASH/cenv")"
'
test_expect_success 'a failed install (index unreachable) leaves the old environment byte-identical' '
	tree_hash "$TRASH/cenv" >before &&
	rm -rf "$TRASH/cache" &&
	cp m.txt dead.txt && sed -i "s#127.0.0.1:$web_port#127.0.0.1:9#" dead.txt &&
	expect_exit 4 inst --manifest dead.txt --target "$TRASH/cenv" --retries 0 2>err &&
	expect_eq "$(cat before)" "$(tree_hash "$TRASH/cenv")" &&
	no_staging "$TRASH" && no_parts
'
test_expect_success 'a read-only target directory fails cleanly, the old environment intact' '
	mkdir -p ro && inst --manifest m.txt --target "$TRASH/ro/env" >/dev/null 2>&1 &&
	tree_hash "$TRASH/ro/env" >before &&
	chmod a-w ro &&
	test_when_finished "chmod u+w \"$TRASH/ro\"" &&
	if [ "$(id -u)" -eq 0 ]; then
		echo "# root ignores directory permissions; checking only that the env survives" &&
		inst --manifest m.txt --target "$TRASH/ro/env" >/dev/null 2>&1
	else
		! inst --manifest m.txt --target "$TRASH/ro/env" >/dev/null 2>err
	fi &&
	chmod u+w ro &&
	env_works "$TRASH/ro/env"
'
test_done
