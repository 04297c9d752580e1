#!/bin/sh
# Progress: on a terminal, per-transfer lines and a total bar drawn with
# ANSI cursor movement and erased at the end; not on a terminal, plain
# lines only (no escape codes); nothing with -q, --json or --no-progress.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
make_wheel web alpha 1.0 300000
make_wheel web beta 1.0 300000
make_manifest "$TRASH/m.txt" "$web_url" "$TRASH/web/files" alpha beta
A=$(wheel_file alpha 1.0)
B=$(wheel_file beta 1.0)
slow="{\"$A\": \"slow:500000\", \"$B\": \"slow:500000\"}"

run() { # the test defaults without --no-progress
	"$MLSETUP" download --sysroot "$SYSROOTS/empty" --python 3.12 --cache-dir "$TRASH/cache" \
		--retries 2 "$@"
}

if command -v script >/dev/null 2>&1; then
	test_expect_success 'terminal: transfer lines and a total bar, redrawn and erased' '
		faults web "$slow" &&
		TERM=xterm script -qec "\"$MLSETUP\" download --sysroot \"$SYSROOTS/empty\" --python 3.12 --cache-dir \"$TRASH/cache\" -r m.txt -d out" tty.log </dev/null >/dev/null &&
		grep -q "downloading [0-9]/2 \[" tty.log &&
		grep -q "$A" tty.log &&
		grep -q "MiB/s\|KiB/s" tty.log &&
		grep -q "ETA" tty.log &&
		grep -q "$(printf "\033")\[[0-9]*A$(printf "\033")\[J" tty.log &&
		same_file out/$A web/files/$A
	'
fi
test_expect_success 'not a terminal: no escape codes on stderr' '
	rm -rf cache out &&
	faults web "$slow" &&
	run -r m.txt -d out >o 2>e &&
	! grep -q "$(printf "\033")" e &&
	! grep -q "$(printf "\033")" o &&
	grep -q "^saved out/$A" o
'
test_expect_success '-q prints nothing on success' '
	rm -rf cache out &&
	run -q -r m.txt -d out >o 2>e &&
	test ! -s o && test ! -s e
'
test_expect_success '--json: stdout is only the document, no progress' '
	rm -rf cache out &&
	faults web "$slow" &&
	run --json -r m.txt -d out >o 2>e &&
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" o &&
	test ! -s e
'
test_done
