#!/bin/sh
# check.sh TARGET... - what `make release-check` proves about dist/:
#   1. each binary needs only glibc's own libraries (NEEDED) and no symbol
#      version newer than GLIBC_2.17, holds no path of the build machine,
#      and says which build it is;
#   2. the binary for this machine passes the whole test suite
#      (tests/run-tests.sh, the install.sh tests included and required);
#   3. the aarch64 binary runs --version, detect and plan --offline under
#      qemu-user (qemu-aarch64 -L /usr/aarch64-linux-gnu), the Windows one
#      (mlsetup-x86_64-windows-gnu.exe: a PE executable importing only
#      Windows' own DLLs, without build paths) under wine when wine is installed (else that part is skipped
#      and says so);
#   4. a pinned source version that has left Debian stops the build with
#      the version to pin instead.
. "$(dirname "$0")/lib.sh"

set +e # every check runs and reports; the exit status sums them up
GLIBC_MAX=2.17
# glibc's libraries: anything else in NEEDED was meant to be linked in.
GLIBC_LIBS="libc.so.6 libdl.so.2 libpthread.so.0 libm.so.6 librt.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1"
failed=0
bad() {
	printf 'release-check: FAIL %s\n' "$*" >&2
	failed=$((failed + 1))
}
ok() { printf 'release-check: ok   %s\n' "$*" >&2; }

command -v readelf >/dev/null 2>&1 || rel_die "readelf is needed (binutils); run packaging/release-deps.sh"

leaks() {
	leaked=
	for p in "$REL_CACHE" "$REL_TOP" "$HOME"; do
		[ -n "$p" ] && [ "$p" != / ] && grep -q -a -F "$p/" "$1" && leaked="$leaked $p"
	done
	printf '%s' "$leaked"
}

for t in "$@"; do
	case $t in
	*-windows-*)
		bin=$REL_TOP/dist/mlsetup-$t.exe
		[ -f "$bin" ] || {
			bad "no dist/mlsetup-$t.exe"
			continue
		}
		if [ "$(head -c 2 "$bin")" = MZ ]; then ok "$t: a PE executable, $(wc -c <"$bin" | tr -d ' ') bytes"; else bad "$t: not a PE executable"; fi
		# Linked static: only Windows' own DLLs (the UCRT's api-ms-win-crt-*).
		dlls=$(python3 "$REL_DIR/pe-imports.py" "$bin" 2>&1)
		extra=
		for d in $dlls; do
			case $(printf '%s' "$d" | tr 'A-Z' 'a-z') in
			api-ms-win-*.dll | kernel32.dll | ntdll.dll | advapi32.dll | bcrypt.dll | crypt32.dll | \
				secur32.dll | ws2_32.dll | winhttp.dll | ole32.dll | oleaut32.dll | rpcrt4.dll | \
				shell32.dll | user32.dll | setupapi.dll | cfgmgr32.dll | iphlpapi.dll | userenv.dll | \
				normaliz.dll | wldap32.dll | ucrtbase.dll) ;;
			*) extra="$extra $d" ;;
			esac
		done
		if [ -n "$extra" ]; then bad "$t: imports DLLs that are not Windows':$extra"; else ok "$t: imports $dlls"; fi
		leaked=$(leaks "$bin")
		if [ -n "$leaked" ]; then bad "$t: the binary holds build paths:$leaked"; else ok "$t: no build path inside"; fi
		continue
		;;
	esac
	bin=$REL_TOP/dist/mlsetup-$t
	[ -x "$bin" ] || {
		bad "no dist/mlsetup-$t"
		continue
	}
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	extra=
	for lib in $needed; do
		case " $GLIBC_LIBS " in *" $lib "*) ;; *) extra="$extra $lib" ;; esac
	done
	if [ -n "$extra" ]; then bad "$t: NEEDED lists more than glibc:$extra"; else ok "$t: NEEDED $needed"; fi
	# The newest GLIBC_x.y version any dynamic symbol needs.
	newest=$(readelf -W -V "$bin" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\).*/\1/p' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
	if [ -z "$newest" ]; then
		bad "$t: no GLIBC symbol versions found (not a dynamic glibc binary?)"
	elif [ "$(printf '%s\n%s\n' "$newest" "$GLIBC_MAX" | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)" != "$GLIBC_MAX" ]; then
		bad "$t: needs GLIBC_$newest > $GLIBC_MAX: $(readelf -W --dyn-syms "$bin" | grep -o '[^ ]*@GLIBC_[0-9.]*' |
			awk -F@GLIBC_ -v max="$GLIBC_MAX" '{ split($2, a, "."); split(max, m, "."); if (a[1] > m[1] || (a[1] == m[1] && a[2] > m[2])) print }' | tr '\n' ' ')"
	else
		ok "$t: newest glibc symbol version GLIBC_$newest (<= $GLIBC_MAX)"
	fi
	# Reproducible means no path of the build machine inside.
	leaked=$(leaks "$bin")
	if [ -n "$leaked" ]; then bad "$t: the binary holds build paths:$leaked"; else ok "$t: no build path inside"; fi
	interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
	ok "$t: interpreter $interp, $(wc -c <"$bin" | tr -d ' ') bytes"
done

# A pinned source version that has left the archive stops the build and
# names the version to pin (here: curl pinned to a version that never was).
lock=$REL_TOP/build/release/gone.lock
curl_now=$(rel_entries | awk '$1 == "curl" { print $3 }')
mkdir -p "$REL_TOP/build/release"
sed "s/^\(curl  *curl  *\)[^ ]*/\17.0.0-0gone/" "$REL_LOCK" >"$lock"
out=$(MLSETUP_RELEASE_LOCK=$lock sh "$REL_DIR/sources.sh" fetch 2>&1)
if [ $? -ne 0 ] && printf '%s\n' "$out" | grep -qF "pin curl $curl_now instead"; then
	ok "a pinned version that left Debian stops the build and names $curl_now"
else
	bad "a pinned version that left Debian: $out"
fi
rm -f "$lock"

host=$(uname -m)-linux-gnu
for t in "$@"; do
	bin=$REL_TOP/dist/mlsetup-$t
	baseline="glibc >= $GLIBC_MAX"
	case $t in *-windows-*)
		bin=$bin.exe
		baseline="Windows 10 or later"
		;;
	esac
	[ -f "$bin" ] || continue
	if [ "$t" = "$host" ]; then
		run=
	elif [ "$t" = x86_64-windows-gnu ]; then
		command -v wine >/dev/null 2>&1 || {
			ok "$t: skipped running it: no wine on this machine"
			continue
		}
		# A prefix of its own, so the check neither needs nor changes ~/.wine.
		prefix=$REL_TOP/build/release/$t/wineprefix
		if [ ! -d "$prefix/drive_c/windows/system32" ]; then
			# made first, so wine's "configuration updated" note is not
			# taken for the program's output
			WINEPREFIX=$prefix WINEDEBUG=-all wineboot -i >/dev/null 2>&1
			WINEPREFIX=$prefix wineserver -w
		fi
		run="env WINEPREFIX=$prefix WINEDEBUG=-all wine"
	elif [ "$t" = aarch64-linux-gnu ]; then
		command -v qemu-aarch64 >/dev/null 2>&1 && [ -d /usr/aarch64-linux-gnu ] || {
			bad "$t: qemu-aarch64 or /usr/aarch64-linux-gnu missing; run packaging/release-deps.sh"
			continue
		}
		run="qemu-aarch64 -L /usr/aarch64-linux-gnu"
	else
		bad "$t: cannot run it on $host"
		continue
	fi
	out=$($run "$bin" --version 2>&1) &&
		printf '%s\n' "$out" | grep -q "build      release $t ($baseline" &&
		ok "$t: --version: $(printf '%s\n' "$out" | sed -n 2p | sed 's/^ *//')" ||
		bad "$t: --version does not name the release build: $out"
	$run "$bin" detect --json >"$REL_TOP/build/release/$t/detect.json" 2>&1 &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"].startswith("mlsetup.detect/")' \
			"$REL_TOP/build/release/$t/detect.json" &&
		ok "$t: detect --json" || bad "$t: detect failed: $(head -c 400 "$REL_TOP/build/release/$t/detect.json")"
	# plan may find no manifest for this machine (exit 6, with the reason);
	# it must not fail any other way.
	$run "$bin" plan --offline >"$REL_TOP/build/release/$t/plan.txt" 2>&1
	rc=$?
	if [ $rc -eq 0 ] || [ $rc -eq 6 ]; then
		ok "$t: plan --offline (exit $rc)"
	else
		bad "$t: plan --offline exit $rc: $(head -c 400 "$REL_TOP/build/release/$t/plan.txt")"
	fi
done

# The whole suite against the binary for this machine: the same tests as
# `make check` (run-tests.sh, CLI tests with MLSETUP_BUILD), and the
# install.sh tests may not skip.
if [ -x "$REL_TOP/dist/mlsetup-$host" ]; then
	suite=$REL_TOP/build/release-check/$host
	rm -rf "$suite"
	mkdir -p "$suite"
	cp "$REL_TOP/dist/mlsetup-$host" "$suite/mlsetup"
	rel_log "the test suite against dist/mlsetup-$host"
	if (cd "$REL_TOP" && MLSETUP_RELEASE_CHECK=1 sh tests/run-tests.sh "build/release-check/$host"); then
		ok "$host: test suite"
	else
		bad "$host: test suite"
	fi
fi

if [ "$failed" -ne 0 ]; then
	echo "release-check: $failed check(s) failed" >&2
	exit 1
fi
echo "release-check: all checks passed" >&2
