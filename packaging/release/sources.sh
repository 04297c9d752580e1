#!/bin/sh
# sources.sh - the Debian source packages the release links, pinned in
# packaging/release/deps.lock.
#
#   sources.sh fetch            every locked package into the release cache
#   sources.sh extract NAME DIR unpacks NAME's package into DIR (Debian's
#                               patches applied by dpkg-source)
#   sources.sh pin SOURCE       prints the lock line for SOURCE's current
#                               version in the suite
#
# Downloads go through a private apt configuration under the release cache
# (its own sources list with deb-src lines, its own state and cache
# directories), so nothing needs root and the machine's apt set-up is left
# alone. The mirror is the one the machine's own apt sources name for the
# locked suite. A package counts as fetched once its .dsc matches the
# sha256 in the lock and every file the .dsc lists matches the .dsc.
. "$(dirname "$0")/lib.sh"

APT_DIR=$REL_CACHE/apt
SUITE=$(rel_suite)
[ -n "$SUITE" ] || rel_die "no '# suite: NAME' line in $REL_LOCK"

# The machine's apt source entries (one-line .list files and deb822
# .sources files) for $SUITE, rewritten as deb-src lines for the main
# component. Security suites are skipped: their source packages are not
# served everywhere, and the lock pins the main suite.
machine_mirrors() {
	list=/etc/apt/sources.list parts=/etc/apt/sources.list.d
	if command -v apt-config >/dev/null 2>&1; then
		eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"
	fi
	parts=${parts%/}
	{
		[ -f "$list" ] && cat "$list"
		for f in "$parts"/*.list; do [ -f "$f" ] && cat "$f"; done
	} | awk -v suite="$SUITE" '
		$1 == "deb" {
			i = 2; opts = ""
			if ($i ~ /^\[/) {
				while (i <= NF) { opts = opts " " $i; if ($i ~ /\]$/) break; i++ }
				i++
			}
			if ($(i + 1) != suite) next
			sb = ""
			if (match(opts, /signed-by=[^] ]+/))
				sb = "[" substr(opts, RSTART, RLENGTH) "] "
			print "deb-src " sb $i " " suite " main"
		}'
	for f in "$parts"/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$SUITE" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " suite " ")) {
					n = split(uris, u, " ")
					for (k = 1; k <= n; k++)
						print "deb-src " (signedby ~ /^\// ? "[signed-by=" signedby "] " : "") u[k] " " suite " main"
				}
				types = uris = suites = signedby = ""; enabled = "yes"
			}
			BEGIN { enabled = "yes" }
			/^#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			/^[ \t]/ { next }
			{
				key = tolower($1); sub(/:$/, "", key)
				val = $0; sub(/^[^:]*:[ \t]*/, "", val); sub(/[ \t]+$/, "", val)
				if (key == "types") types = val
				else if (key == "uris") uris = val
				else if (key == "suites") suites = val
				else if (key == "signed-by") signedby = val
				else if (key == "enabled") enabled = tolower(val)
			}
			END { flush() }' "$f"
	done
}

apt_setup() {
	mkdir -p "$APT_DIR/etc/sources.list.d" "$APT_DIR/etc/preferences.d" \
		"$APT_DIR/state/lists/partial" "$APT_DIR/cache/archives/partial"
	: >"$APT_DIR/state/status"
	lines=$(machine_mirrors | awk '!seen[$0]++')
	[ -n "$lines" ] || rel_die "the machine's apt sources name no mirror for Debian '$SUITE' (the suite deps.lock pins); add one to /etc/apt/sources.list.d"
	printf '%s\n' "$lines" >"$APT_DIR/etc/sources.list"
}

# apt-get / apt-cache with the private configuration. Two of these may run
# at once (make -j2 fetches the Windows shims' cJSON beside the release
# libraries), and apt fails rather than waits when the other holds its
# lock: every call waits its turn on a lock of ours (flock(1), util-linux).
papt() {
	tool=$1
	shift
	mkdir -p "$APT_DIR"
	(
		if command -v flock >/dev/null 2>&1; then flock 9; fi
		"$tool" -q -o Dir::Etc::SourceList="$APT_DIR/etc/sources.list" \
			-o Dir::Etc::SourceParts="$APT_DIR/etc/sources.list.d" \
			-o Dir::Etc::Preferences=/dev/null \
			-o Dir::Etc::PreferencesParts="$APT_DIR/etc/preferences.d" \
			-o Dir::State="$APT_DIR/state" -o Dir::State::status="$APT_DIR/state/status" \
			-o Dir::Cache="$APT_DIR/cache" -o Acquire::Languages=none \
			-o APT::Get::Only-Source=true -o APT::Sandbox::User="$(id -un)" "$@"
	) 9>"$APT_DIR/.papt.lock"
}

apt_update() {
	[ -n "${updated:-}" ] && return 0
	command -v apt-get >/dev/null 2>&1 || rel_die "apt-get is needed to fetch Debian source packages"
	apt_setup
	rel_log "reading the source index of Debian $SUITE"
	papt apt-get update >"$APT_DIR/update.log" 2>&1 || {
		cat "$APT_DIR/update.log" >&2
		rel_die "apt-get update with the private configuration failed"
	}
	updated=1
}

# Prints "version dsc-sha256 dsc-name" for every version of source package
# $1 in the suite's index.
available() {
	papt apt-cache showsrc "$1" 2>/dev/null | awk -v src="$1" '
		/^Package:/ { pkg = $2 }
		/^Version:/ { ver = $2 }
		/^Checksums-Sha256:/ { insum = 1; next }
		/^[^ ]/ { insum = 0 }
		insum && $3 ~ /\.dsc$/ && pkg == src { print ver, $1, $3 }'
}

# Checks the files of the .dsc $1 (in its directory) against its
# Checksums-Sha256 field; prints the file names it lists.
check_dsc_files() {
	cdir=$(dirname "$1")
	awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on && NF == 3 { print $1, $3 }' "$1" |
		while read -r sum name; do
			[ -f "$cdir/$name" ] || {
				echo "missing $name" >&2
				exit 1
			}
			got=$(rel_sha256 "$cdir/$name")
			[ "$got" = "$sum" ] || {
				echo "$name: sha256 $got, the .dsc says $sum" >&2
				exit 1
			}
			echo "$name"
		done
}

fetch_one() { # source version dsc-sha256
	src=$1 ver=$2 want=$3
	dir=$(rel_source_dir "$src" "$ver")
	[ -f "$dir/.verified" ] && [ "$(cat "$dir/.verified")" = "$want" ] && return 0
	apt_update
	# One fetch of a package at a time (make -j2 may ask for cJSON twice at
	# once): the second waits, then finds it verified.
	mkdir -p "$REL_CACHE/sources"
	(
		if command -v flock >/dev/null 2>&1; then flock 8; fi
		fetch_locked
	) 8>"$REL_CACHE/sources/.$src.lock" || exit 1
}

fetch_locked() { # $src $ver $want $dir of fetch_one
	[ -f "$dir/.verified" ] && [ "$(cat "$dir/.verified")" = "$want" ] && return 0
	avail=$(available "$src")
	if ! printf '%s\n' "$avail" | awk -v v="$ver" '$1 == v { f = 1 } END { exit !f }'; then
		now=$(printf '%s\n' "$avail" | sort -V -k1,1 | tail -n 1)
		[ -n "$now" ] || rel_die "Debian $SUITE has no source package '$src'"
		set -- $now
		rel_die "the pinned $src $ver has left Debian $SUITE (a point release replaced it); pin $src $1 instead: in packaging/release/deps.lock set version '$1' and .dsc sha256 '$2'"
	fi
	rel_log "fetching $src $ver"
	mkdir -p "$REL_CACHE/sources"
	tmp=$(mktemp -d "$REL_CACHE/sources/.fetch.XXXXXX")
	(cd "$tmp" && papt apt-get source --download-only "$src=$ver") >"$tmp.log" 2>&1 || {
		cat "$tmp.log" >&2
		rm -rf "$tmp" "$tmp.log"
		rel_die "apt-get source $src=$ver failed"
	}
	rm -f "$tmp.log"
	dsc=$tmp/${src}_$(printf '%s' "$ver" | sed 's/^[0-9]*://').dsc
	[ -f "$dsc" ] || rel_die "apt-get source gave no $(basename "$dsc")"
	got=$(rel_sha256 "$dsc")
	[ "$got" = "$want" ] || {
		rm -rf "$tmp"
		rel_die "$(basename "$dsc") has sha256 $got, deps.lock pins $want: refusing it"
	}
	check_dsc_files "$dsc" >/dev/null || {
		rm -rf "$tmp"
		rel_die "a file of $(basename "$dsc") does not match its checksum: refusing it"
	}
	printf '%s\n' "$want" >"$tmp/.verified"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

cmd_fetch() {
	rel_entries | while read -r name src ver sum; do
		fetch_one "$src" "$ver" "$sum"
	done
}

cmd_extract() { # name dest
	line=$(rel_entries | awk -v n="$1" '$1 == n')
	[ -n "$line" ] || rel_die "no library '$1' in deps.lock"
	set -- $line "$2"
	fetch_one "$2" "$3" "$4"
	dir=$(rel_source_dir "$2" "$3")
	dsc=$dir/${2}_$(printf '%s' "$3" | sed 's/^[0-9]*://').dsc
	check_dsc_files "$dsc" >/dev/null || rel_die "the cached $2 $3 was modified; remove $dir"
	rm -rf "$5"
	mkdir -p "$(dirname "$5")"
	# dpkg-source checks the files against the .dsc again and applies
	# debian/patches; the .dsc signature cannot be checked without
	# Debian's keyrings, which the sha256 pin replaces.
	dpkg-source -x "$dsc" "$5" >"$5.log" 2>&1 || {
		cat "$5.log" >&2
		rel_die "dpkg-source -x $(basename "$dsc") failed"
	}
	rm -f "$5.log"
}

cmd_pin() {
	apt_update
	now=$(available "$1" | sort -V -k1,1 | tail -n 1)
	[ -n "$now" ] || rel_die "Debian $SUITE has no source package '$1'"
	set -- "$1" $now
	printf '%-13s %-13s %-24s %s\n' NAME "$1" "$2" "$3"
}

case ${1:-} in
fetch) cmd_fetch ;;
extract) [ $# -eq 3 ] || rel_die "usage: sources.sh extract NAME DIR"; cmd_extract "$2" "$3" ;;
pin) [ $# -eq 2 ] || rel_die "usage: sources.sh pin SOURCE"; cmd_pin "$2" ;;
*) rel_die "usage: sources.sh fetch | extract NAME DIR | pin SOURCE" ;;
esac
