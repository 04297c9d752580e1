#!/bin/sh
# Live progress in a real terminal (a tmux pane of fixed size): the machine
# and the manifest lines are on screen before the loopback index has served
# any file (the index holds every file back until the test lets it go);
# a verify step is on screen, its seconds moving, while the stub torch
# blocks inside its smoke test; the live line is gone at the end. Long
# errors and hints wrap at word boundaries to the pane's width. Every
# ordering comes from events: files the index and the stub torch create,
# and what the pane shows; the waits only bound how long a failure takes.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

command -v tmux >/dev/null 2>&1 || test_skip_all "tmux is not installed"
have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_from_dir torch 2.6.0 py3-none-any "$top/tests/fixtures/stub_torch" "$TRASH/web/files"
# A second index over the same files that holds every file request back
# until $TRASH/hold exists.
mirror_start held --hold-file "$TRASH/hold"
cp "$TRASH"/web/files/* "$TRASH/held/files/"
wheel_manifest "$TRASH/torch.txt" purepkg-1.0-py3-none-any.whl torch-2.6.0-py3-none-any.whl
sed "s#$web_url#$held_url#" "$TRASH/torch.txt" >"$TRASH/torch-held.txt"

printf 'set -g remain-on-exit on\nset -g history-limit 5000\n' >"$TRASH/tmux.conf"
# tmux_run NAME WIDTH HEIGHT SCRIPT: runs the shell script in a detached
# session of that size on a tmux server of its own (socket $TRASH/NAME.tmux,
# never the user's).
tmux_run() {
	tmux -S "$TRASH/$1.tmux" -f "$TRASH/tmux.conf" new-session -d -s "$1" -x "$2" -y "$3" \
		"sh $4"
}
# tmux_kill NAME: ends that server and what runs in it.
tmux_kill() {
	tmux -S "$TRASH/$1.tmux" kill-server 2>/dev/null
	:
}
# screen NAME: what the session's pane shows now (history included, rows
# the terminal wrapped joined).
screen() {
	tmux -S "$TRASH/$1.tmux" capture-pane -p -J -S - -t "$1"
}
screen_has() {
	screen "$1" | grep -q "$2"
}
# wait_for LIMIT_S CMD...: runs CMD until it succeeds; fails after about
# LIMIT_S seconds. The limit only bounds a failing run.
wait_for() {
	n=$(($1 * 10))
	shift
	while ! "$@"; do
		n=$((n - 1))
		if [ "$n" -le 0 ]; then
			echo "gave up waiting for: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}
# The seconds the live line shows for the step $2 in session $1.
step_seconds() {
	screen "$1" | sed -n "s/.*$2\.\.\. \([0-9][0-9]*\.[0-9]\) s.*/\1/p" | tail -1
}
seconds_moved() {
	s=$(step_seconds "$1" "$2")
	test -n "$s" && test "$s" != "$3"
}

cat >"$TRASH/install.sh" <<EOF
cd "$TRASH" || exit 1
export LD_LIBRARY_PATH="$SHIMS" MLSETUP_FAKE_NVIDIA="$FIXTURES/gpus/rtx3090-550.json"
export MLSETUP_STUB_TORCH=healthy MLSETUP_STUB_TORCH_BLOCK="$TRASH/torch-go"
export XDG_DATA_HOME="$XDG_DATA_HOME" PIP_CONFIG_FILE=/dev/null NO_COLOR=1
export ASAN_OPTIONS="$ASAN_OPTIONS"
unset COLUMNS PIP_INDEX_URL PIP_EXTRA_INDEX_URL MLSETUP_INDEX_URL
"$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \\
	--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$held_port/files" \\
	--manifest torch-held.txt --target "$TRASH/tty-env" --smoke-size 8 --alloc-mib 1
echo "exit=\$?" >"$TRASH/install.rc"
EOF

test_expect_success 'terminal: machine and manifest first, a live verify step, exit 0' '
	test_when_finished "touch \"$TRASH/hold\" \"$TRASH/torch-go\"; tmux_kill inst" &&
	tmux_run inst 150 60 "$TRASH/install.sh" &&
	# The index holds the first file anyone asks for: nothing is served.
	wait_for 300 test -f "$TRASH/hold.waiting" &&
	wait_for 20 screen_has inst "^machine   linux-x86_64, .*NVIDIA GeForce RTX 3090 (sm_86)" &&
	wait_for 20 screen_has inst "^manifest  torch-held.txt (chosen by --manifest)" &&
	test ! -f "$TRASH/hold" &&
	screen inst >held.txt &&
	touch "$TRASH/hold" &&
	# The stub torch has begun its first GPU kernel and waits.
	wait_for 300 test -f "$TRASH/torch-go.started" &&
	wait_for 20 screen_has inst "verify: fp32 matmul on GPU 0\.\.\. [0-9]*\.[0-9] s" &&
	first=$(step_seconds inst "fp32 matmul on GPU 0") &&
	wait_for 20 seconds_moved inst "fp32 matmul on GPU 0" "$first" &&
	screen inst >blocked.txt &&
	test ! -f "$TRASH/torch-go" &&
	touch "$TRASH/torch-go" &&
	wait_for 300 test -f "$TRASH/install.rc" &&
	expect_eq exit=0 "$(cat "$TRASH/install.rc")" &&
	screen inst >final.txt &&
	# While blocked, the finished steps were lines above the live one (the
	# import check runs beside the GPU checks and is said after them).
	grep -q "^  pass  SAXPY on GPU 0 (" blocked.txt &&
	grep -q "^  pass  importing torch (" blocked.txt &&
	grep -q "^  pass  2 of 2 wheels unpacked and linked (" blocked.txt &&
	# At the end: the verdict and the summary, no live line left behind,
	# and the machine line came first.
	grep -q "^  pass  fp32 matmul on GPU 0 (" final.txt &&
	grep -q "^  pass  importing every package (" final.txt &&
	grep -q "^verdict   pass" final.txt &&
	grep -q "^environment  $TRASH/tty-env" final.txt &&
	! grep -q "\.\.\. [0-9]*\.[0-9] s" final.txt &&
	grep -n "" final.txt | grep -m1 "^[0-9]*:machine " | grep -q "^[12]:" &&
	test -f "$TRASH/tty-env/.mlsetup-complete"
'

cat >"$TRASH/verify.sh" <<EOF
cd "$TRASH" || exit 1
export NO_COLOR=1 ASAN_OPTIONS="$ASAN_OPTIONS"
unset COLUMNS
"$MLSETUP" verify --sysroot "$SYSROOTS/empty" --target "$TRASH/no-such-environment"
echo "exit=\$?" >"$TRASH/verify.rc"
EOF

test_expect_success 'terminal: an error and its hint wrap at word boundaries to the width' '
	test_when_finished "tmux_kill narrow" &&
	tmux_run narrow 40 30 "$TRASH/verify.sh" &&
	wait_for 120 test -f "$TRASH/verify.rc" &&
	expect_eq exit=1 "$(cat "$TRASH/verify.rc")" &&
	tmux -S "$TRASH/narrow.tmux" capture-pane -p -S - -t narrow >narrow.txt &&
	# "hint: give --target DIR of an environment, or --python PATH" is
	# wider than 40 columns: it wraps between words, the rest indented
	# under the text after "hint: ".
	grep -q "^hint: give --target DIR of an$" narrow.txt &&
	grep -q "^      environment, or --python PATH$" narrow.txt &&
	grep -q "^error: no environment at" narrow.txt &&
	! awk "length > 40" narrow.txt | grep -q .
'
test_done
