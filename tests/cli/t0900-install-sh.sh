#!/bin/sh
# install.sh (packaging/install.sh), served from the loopback mirror the way
# a release serves it: under dash, bash, zsh and busybox sh it installs a
# working mlsetup; cut short at any line boundary (and a sample of other
# byte offsets) it installs nothing and runs no command; a binary that does
# not match SHA256SUMS is refused with nothing installed; a missing
# download tool, an unwritable install directory and an unsupported
# platform each give a clear message and a non-zero exit.
#
# Any mlsetup binary will do (the one under test is served), so this runs
# in `make check` whenever dash, zsh, busybox and wget are installed
# (packaging/release-deps.sh installs them) and is skipped otherwise;
# `make release-check` sets MLSETUP_RELEASE_CHECK=1, which makes missing
# tools a failure.
. "$(dirname "$0")/lib.sh"

SHELLS="dash bash zsh busybox"
missing=""
for t in $SHELLS curl wget python3; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
	if [ -n "${MLSETUP_RELEASE_CHECK:-}" ]; then
		echo "not ok 1 - install.sh tests need$missing (run packaging/release-deps.sh)"
		echo "1..1"
		exit 1
	fi
	test_skip_all "needs$missing (packaging/release-deps.sh installs them)"
fi
. "$top/tests/mirror/testlib.sh"

# What is under test is install.sh, not the binary it installs (here the
# sanitizer build): LeakSanitizer's stop-the-world at exit deadlocks now and
# then (7 of 300 runs here) when zsh signals a pipeline's first process as
# `mlsetup --version | head -n 1` ends, which hung a CI run for 86 minutes.
# Leak checking of mlsetup itself is every other test's job.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 # the last setting wins
export ASAN_OPTIONS

case $(uname -m) in
x86_64) target=x86_64-linux-gnu ;;
aarch64) target=aarch64-linux-gnu ;;
*) test_skip_all "no release binary for $(uname -m)" ;;
esac
bin=mlsetup-$target

# A release on the mirror: install.sh, the binary under test, SHA256SUMS.
mirror_start rel
files=$TRASH/rel/files
base="http://127.0.0.1:$rel_port/files"
cp "$top/packaging/install.sh" "$files/install.sh"
cp "$MLSETUP" "$files/$bin"
(cd "$files" && sha256sum "$bin" install.sh >SHA256SUMS)
cp "$files/SHA256SUMS" "$TRASH/SHA256SUMS.good"

# Everything install.sh may run, as links in one directory, so a test can
# take one away (tools DIR EXCLUDED...) or put a fake in its place.
TOOLS="uname getconf ldd mkdir mktemp rm mv chmod awk cut sed head grep sha256sum cat curl wget"
tools() {
	d=$1
	shift
	mkdir -p "$d"
	for t in $TOOLS; do
		case " $* " in *" $t "*) continue ;; esac
		ln -sf "$(command -v "$t")" "$d/$t"
	done
}
tools "$TRASH/all"
tools "$TRASH/nocurl" curl
tools "$TRASH/none" curl wget
# Logging stand-ins: each records its name in $TRASH/ran before running.
mkdir -p "$TRASH/logged"
for t in $TOOLS; do
	printf '#!/bin/sh\necho %s >>"%s/ran"\nexec "%s" "$@"\n' "$t" "$TRASH" "$(command -v "$t")" \
		>"$TRASH/logged/$t"
	chmod +x "$TRASH/logged/$t"
done
# A fake uname / getconf / ldd: fake DIR NAME OUTPUT [STATUS]
fake() {
	rm -f "$1/$2"
	printf '#!/bin/sh\nprintf "%%s\\n" "%s"\nexit %s\n' "$3" "${4:-0}" >"$1/$2"
	chmod +x "$1/$2"
}
tools "$TRASH/darwin" uname
fake "$TRASH/darwin" uname Darwin
tools "$TRASH/i686" uname
printf '#!/bin/sh\ncase "$1" in -s) echo Linux ;; *) echo i686 ;; esac\n' >"$TRASH/i686/uname"
chmod +x "$TRASH/i686/uname"
tools "$TRASH/musl" getconf ldd
fake "$TRASH/musl" getconf "getconf: GNU_LIBC_VERSION: unknown variable" 1
fake "$TRASH/musl" ldd "musl libc (x86_64)" 1
tools "$TRASH/oldglibc" getconf
fake "$TRASH/oldglibc" getconf "glibc 2.12"

# The shells by absolute path (a test's PATH may hold none of them).
DASH=$(command -v dash)
shell_cmd() {
	case $1 in
	busybox) echo "$(command -v busybox) sh" ;;
	*) command -v "$1" ;;
	esac
}

# run_install SHELL DIR [ARGS...]: pipes install.sh from the mirror into
# SHELL (a word list: "busybox sh") with the release URL and DIR.
run_install() {
	sh_=$1 dir_=$2
	shift 2
	curl -sSf "$base/install.sh" |
		MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$dir_" $sh_ -s -- "$@"
}

# only_mlsetup DIR: DIR holds mlsetup and nothing else (no temporary file).
only_mlsetup() {
	expect_eq mlsetup "$(ls -A "$1")"
}

# nothing_in DIR: DIR is missing or holds nothing (no temporary file).
nothing_in() {
	[ ! -e "$1" ] || expect_eq "" "$(ls -A "$1")"
}

for n in $SHELLS; do
	s=$(shell_cmd "$n")
	test_expect_success "curl | $n installs a working mlsetup" '
		curl -sSf "$base/install.sh" |
			MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/bin-$n" $s >out 2>err &&
		"$TRASH/bin-$n/mlsetup" --version >version &&
		grep -q "^mlsetup [0-9]" version &&
		cmp "$TRASH/bin-$n/mlsetup" "$MLSETUP" &&
		only_mlsetup "$TRASH/bin-$n" &&
		grep -q "installed $TRASH/bin-$n/mlsetup" err
	'
done

test_expect_success 'wget -qO- | sh installs with wget where there is no curl' '
	wget -qO- "$base/install.sh" |
		PATH="$TRASH/nocurl" MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/bin-wget" \
		"$DASH" >out 2>err &&
	"$TRASH/bin-wget/mlsetup" --version | grep -q "^mlsetup [0-9]" &&
	only_mlsetup "$TRASH/bin-wget"
'

test_expect_success 'sh -s -- ARGS runs mlsetup ARGS right after installing' '
	run_install sh "$TRASH/bin-args" --version >out 2>err &&
	grep -q "^mlsetup [0-9]" out &&
	grep -q "installed" err &&
	[ -x "$TRASH/bin-args/mlsetup" ]
'

test_expect_success 'the exit code of mlsetup ARGS is the script'\''s' '
	expect_exit 2 run_install sh "$TRASH/bin-args2" no-such-command >out 2>err &&
	[ -x "$TRASH/bin-args2/mlsetup" ]
'

test_expect_success 'an install directory not on PATH is named with the line to add' '
	run_install sh "$TRASH/bin-path" >out 2>err &&
	grep -q "not on your PATH" err &&
	grep -qF "export PATH=\"$TRASH/bin-path:\$PATH\"" err
'

test_expect_success 'without MLSETUP_INSTALL_DIR it installs into ~/.local/bin' '
	curl -sSf "$base/install.sh" | HOME="$TRASH/home" MLSETUP_DOWNLOAD_URL="$base" sh 2>err &&
	"$TRASH/home/.local/bin/mlsetup" --version >/dev/null
'

test_expect_success 'without MLSETUP_DOWNLOAD_URL or a release URL it says the variable is required' '
	! curl -sSf "$base/install.sh" |
		env -u MLSETUP_DOWNLOAD_URL MLSETUP_INSTALL_DIR="$TRASH/bin-nourl" sh 2>err &&
	grep -q "MLSETUP_DOWNLOAD_URL is not set" err &&
	nothing_in "$TRASH/bin-nourl"
'

test_expect_success 'the release URL make release writes in is the default' '
	sh "$top/packaging/release/stamp-install-sh.sh" "$base/" <"$files/install.sh" >stamped.sh &&
	env -u MLSETUP_DOWNLOAD_URL MLSETUP_INSTALL_DIR="$TRASH/bin-stamped" sh stamped.sh 2>err &&
	"$TRASH/bin-stamped/mlsetup" --version >/dev/null &&
	! sh "$top/packaging/release/stamp-install-sh.sh" "https://x/a'\''b" <"$files/install.sh" >/dev/null 2>&1
'

# Cut short: every line boundary, every 53rd byte and each of the last 64
# bytes, under every shell, with arguments for mlsetup (and, in the last
# line, where the call is, without). The logging stand-ins prove no
# command ran; nothing may be installed.
size=$(wc -c <"$files/install.sh")
LC_ALL=C awk '{ o += length($0) + 1; print o }' "$files/install.sh" >"$TRASH/offsets"
i=0
while [ "$i" -lt "$size" ]; do
	echo "$i" >>"$TRASH/offsets"
	i=$((i + 53))
done
i=$((size - 64))
while [ "$i" -lt "$size" ]; do
	echo "$i" >>"$TRASH/offsets"
	i=$((i + 1))
done
# The whole script less its final newline is the whole script.
sort -n -u "$TRASH/offsets" | awk -v max=$((size - 1)) '$1 < max' >"$TRASH/cuts"

for n in $SHELLS; do
	s=$(shell_cmd "$n")
	test_expect_success "$n: install.sh cut at any of $(wc -l <"$TRASH/cuts") offsets installs and runs nothing" '
		faults rel "{}" &&
		while read -r cut; do
			head -c "$cut" "$files/install.sh" >cut.sh &&
			PATH="$TRASH/logged" MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/cutbin" \
				$s -s -- --version <cut.sh >out 2>&1
			[ "$cut" -lt $((size - 64)) ] ||
				PATH="$TRASH/logged" MLSETUP_DOWNLOAD_URL="$base" \
					MLSETUP_INSTALL_DIR="$TRASH/cutbin" $s <cut.sh >>out 2>&1
			if [ -e "$TRASH/ran" ] || [ -e "$TRASH/cutbin" ] || grep -q "^mlsetup [0-9]" out; then
				echo "cut at byte $cut of $size:" && cat out && cat "$TRASH/ran" 2>/dev/null
				exit 1
			fi
		done <"$TRASH/cuts" &&
		expect_eq 0 "$(requests rel /files/$bin)"
	'
done

test_expect_success 'the complete script does run with the logging stand-ins' '
	PATH="$TRASH/logged" MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/logbin" \
		"$DASH" <"$files/install.sh" 2>err &&
	grep -q uname "$TRASH/ran" && [ -x "$TRASH/logbin/mlsetup" ] &&
	rm -f "$TRASH/ran"
'

test_expect_success 'a binary that does not match SHA256SUMS is refused, nothing installed' '
	test_when_finished "cp \"$TRASH/SHA256SUMS.good\" \"$files/SHA256SUMS\"" &&
	mkdir -p bin-bad && echo old >bin-bad/mlsetup &&
	printf "%064d  %s\n" 0 "$bin" >"$files/SHA256SUMS" &&
	test_must_fail run_install sh "$TRASH/bin-bad" --version >out 2>err &&
	grep -q "does not match SHA256SUMS" err && grep -q "nothing was installed" err &&
	! grep -q "^mlsetup [0-9]" out &&
	expect_eq old "$(cat bin-bad/mlsetup)" && only_mlsetup bin-bad
'

for fault in shorten:4096 flip_byte append:10; do
	test_expect_success "a download the server alters ($fault) is refused" '
		test_when_finished "faults rel {}" &&
		faults rel "{\"$bin\": \"$fault\"}" &&
		test_must_fail run_install sh "$TRASH/bin-$fault" >out 2>err &&
		grep -q "does not match SHA256SUMS" err &&
		nothing_in "$TRASH/bin-$fault"
	'
done

test_expect_success 'a download cut off mid-transfer is refused' '
	test_when_finished "faults rel {}" &&
	faults rel "{\"$bin\": \"truncate\"}" &&
	test_must_fail run_install sh "$TRASH/bin-trunc" >out 2>err &&
	grep -q "error:" err &&
	nothing_in "$TRASH/bin-trunc"
'

test_expect_success 'a SHA256SUMS without this target is refused' '
	test_when_finished "cp \"$TRASH/SHA256SUMS.good\" \"$files/SHA256SUMS\"" &&
	grep -v " $bin\$" "$TRASH/SHA256SUMS.good" >"$files/SHA256SUMS" &&
	test_must_fail run_install sh "$TRASH/bin-nosum" >out 2>err &&
	grep -q "has no sha256 for $bin" err &&
	nothing_in "$TRASH/bin-nosum"
'

test_expect_success 'no curl and no wget: a clear message and a non-zero exit' '
	test_must_fail env PATH="$TRASH/none" MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/bin-none" \
		"$DASH" <"$files/install.sh" 2>err &&
	grep -q "neither curl nor wget is installed" err &&
	nothing_in "$TRASH/bin-none"
'

test_expect_success 'an install directory it cannot write to: a clear message and a non-zero exit' '
	mkdir -p ro && chmod 555 ro &&
	test_when_finished "chmod 755 \"$TRASH/ro\"" &&
	dir=$TRASH/ro &&
	if touch ro/probe 2>/dev/null; then
		rm -f ro/probe
		dir=/proc # root writes anywhere but here
	fi &&
	test_must_fail run_install sh "$dir" >out 2>err &&
	grep -q "cannot write to the install directory $dir" err &&
	! ls -A "$dir" | grep -q "^\.mlsetup\."
'

test_expect_success 'an install directory that cannot be made: a clear message' '
	echo file >afile &&
	test_must_fail run_install sh "$TRASH/afile/bin" >out 2>err &&
	grep -q "cannot create the install directory $TRASH/afile/bin" err
'

for plat in "darwin:macOS is not supported" "i686:32-bit systems (i686) are not supported" \
	"musl:musl libc (Alpine and similar) is not supported" "oldglibc:glibc 2.12 is too old"; do
	test_expect_success "unsupported platform (${plat%%:*}): a clear refusal, nothing fetched" '
		faults rel "{}" &&
		test_must_fail env PATH="$TRASH/${plat%%:*}" MLSETUP_DOWNLOAD_URL="$base" MLSETUP_INSTALL_DIR="$TRASH/bin-${plat%%:*}" \
			"$DASH" <"$files/install.sh" 2>err &&
		grep -qF "${plat#*:}" err &&
		nothing_in "$TRASH/bin-${plat%%:*}" &&
		expect_eq 0 "$(requests rel /files/$bin)"
	'
done

test_done
