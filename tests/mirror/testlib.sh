# testlib.sh - helpers for CLI tests that talk to the loopback mirror
# (tests/cli/t03*.sh). Source it after tests/cli/lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$top/tests/mirror/testlib.sh"
#   mirror_start web                  # serves $TRASH/web/files on $web_port
#   make_wheel web alpha 1.0 20000    # a small wheel file in web/files
#   make_manifest m.txt "http://127.0.0.1:$web_port/simple/" alpha
#   test_expect_success '...' 'dl -r m.txt -d out'
#
# Servers are started outside test blocks (so their pids are known here)
# and killed by the EXIT trap, which also removes $TRASH (after running
# $EXIT_HOOKS).

MIRROR="$top/tests/mirror/server.py"
# Hermetic: no index, certificate or find-links settings from the caller.
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX PIP_TRUSTED_HOST \
	PIP_CERT MLSETUP_INDEX_URL MLSETUP_EXTRA_INDEX_URL MLSETUP_CACHE_DIR
PIP_CONFIG_FILE=/dev/null
export PIP_CONFIG_FILE
MIRROR_PIDS=""
# EXIT_HOOKS: shell code a test appends ("$EXIT_HOOKS; umount ...") that
# the EXIT trap runs first, before it stops the servers and removes $TRASH:
# unmounting a file system in $TRASH, stopping a server of its own.
EXIT_HOOKS=":"
trap 'eval "$EXIT_HOOKS"; for p in $MIRROR_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TRASH"' EXIT

# port_of FILE: the port a server just started writes into FILE, once it
# is there (waits up to 5 s).
port_of() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	cat "$1"
}

# git_http_start ROOT: git's smart HTTP on loopback (git_http.py) serving
# the repositories under ROOT; sets GITPORT. Killed with the mirrors.
git_http_start() {
	rm -f "$TRASH/git.port"
	python3 "$top/tests/mirror/git_http.py" --root "$1" --port-file "$TRASH/git.port" \
		2>"$TRASH/git_http.log" &
	MIRROR_PIDS="$MIRROR_PIDS $!"
	GITPORT=$(port_of "$TRASH/git.port")
}

# mirror_start NAME [server options...]: starts a mirror serving
# $TRASH/NAME/files; sets ${NAME}_port and ${NAME}_url (its /simple/ URL).
mirror_start() {
	name=$1
	shift
	mkdir -p "$TRASH/$name/files"
	rm -f "$TRASH/$name/port"
	python3 "$MIRROR" --root "$TRASH/$name" --port-file "$TRASH/$name/port" "$@" \
		2>"$TRASH/$name/server.log" &
	MIRROR_PIDS="$MIRROR_PIDS $!"
	port=$(port_of "$TRASH/$name/port")
	scheme=http
	case " $* " in *" --https "*) scheme=https ;; esac
	[ "$scheme" = https ] && : >"$TRASH/$name/https"
	eval "${name}_port=$port"
	eval "${name}_url=$scheme://127.0.0.1:$port/simple/"
}

# torch_layout NAME [server options...]: the synthetic torch builds of
# tests/fixtures/make_torch_layout.py laid out as PyTorch's indexes are
# (tests/mirror/torch_layout.py): the package index's builds in
# $TRASH/NAME/files (pages at /simple/<project>/), each +<backend> build in
# $TRASH/NAME/whl/<backend>/ (pages at /whl/<backend>/<project>/); then
# starts the mirror NAME (mirror_start) and sets ${NAME}_torch_url, the base
# of the variant indexes (http://127.0.0.1:PORT/whl/). The generated wheels
# stay in $TRASH/NAME/wheels. Outside test blocks, as mirror_start.
torch_layout() {
	tl_name=$1
	shift
	python3 "$top/tests/fixtures/make_torch_layout.py" "$TRASH/$tl_name/wheels" &&
		python3 "$top/tests/mirror/torch_layout.py" "$TRASH/$tl_name/wheels" \
			"$TRASH/$tl_name" >"$TRASH/$tl_name/layout.txt" || return 1
	mirror_start "$tl_name" "$@"
	tl_scheme=http
	[ -f "$TRASH/$tl_name/https" ] && tl_scheme=https
	eval "${tl_name}_torch_url=$tl_scheme://127.0.0.1:\${${tl_name}_port}/whl/"
}

# make_wheel NAME DIST VERSION SIZE: writes a wheel of about SIZE bytes
# (a zip with a minimal dist-info, enough for pip; download never parses
# it) into $TRASH/NAME/files. Deterministic for a given DIST, VERSION, SIZE.
make_wheel() {
	python3 - "$TRASH/$1/files" "$2" "$3" "$4" <<'EOF'
import random, sys, zipfile
d, dist, ver, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rnd = random.Random(dist + ver + str(size))
fn = "%s/%s-%s-py3-none-any.whl" % (d, dist, ver)
info = "%s-%s.dist-info" % (dist, ver)
with zipfile.ZipFile(fn, "w", zipfile.ZIP_STORED) as z:
    z.writestr("%s/data.bin" % dist, rnd.randbytes(size))
    z.writestr(info + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, ver))
    z.writestr(info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: mlsetup-tests\n"
               "Root-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr(info + "/RECORD", "")
EOF
}

# wheel_file DIST VERSION: the file name make_wheel uses.
wheel_file() {
	echo "$1-$2-py3-none-any.whl"
}

# make_manifest OUT INDEX_URL DIR DIST... : a hashed manifest pinning each
# DIST's wheel in DIR (version 1.0), with `# mlsetup-file:` lines and the
# given --index-url ("-" for none).
make_manifest() {
	out=$1 url=$2 dir=$3
	shift 3
	{
		echo "# mlsetup: python = 3.12"
		echo "# mlsetup: platforms = linux-x86_64"
		[ "$url" = "-" ] || echo "--index-url $url"
		for dist in "$@"; do
			f="$dir/$(wheel_file "$dist" 1.0)"
			echo "$dist==1.0 --hash=sha256:$(sha256sum "$f" | cut -d" " -f1)"
		done
		for dist in "$@"; do
			f="$dir/$(wheel_file "$dist" 1.0)"
			echo "# mlsetup-file: $(sha256sum "$f" | cut -d" " -f1) $(wc -c <"$f" | tr -d " ") $(wheel_file "$dist" 1.0)"
		done
	} >"$out"
}

# faults NAME JSON: sets the mirror's faults and resets its counters.
faults() {
	printf '%s\n' "$2" >"$TRASH/$1/faults.json"
	eval "p=\${$1_port}"
	scheme=http
	[ -f "$TRASH/$1/https" ] && scheme=https
	curl -s -k -X POST "$scheme://127.0.0.1:$p/_reset" >/dev/null
}

# requests NAME PATH: how many requests the mirror saw for PATH (0 if none).
requests() {
	eval "p=\${$1_port}"
	scheme=http
	[ -f "$TRASH/$1/https" ] && scheme=https
	curl -s -k "$scheme://127.0.0.1:$p/_stats" |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$2"
}

# dl ARGS...: mlsetup download with the test defaults (fixture machine,
# Python 3.12, the test's cache, 2 retries, short timeouts, no progress).
dl() {
	"$MLSETUP" download --sysroot "$SYSROOTS/empty" --python 3.12 \
		--cache-dir "$TRASH/cache" --retries 2 --connect-timeout 2 --low-speed-time 1 \
		--no-progress "$@"
}

# no_parts: fails when a .part file is left in the test cache.
no_parts() {
	left=$(find "$TRASH/cache" -name '*.part' 2>/dev/null)
	if [ -n "$left" ]; then
		echo "partial files left behind: $left" >&2
		return 1
	fi
}

# same_file A B: fails unless the two files have the same bytes.
same_file() {
	cmp -s "$1" "$2" || {
		echo "files differ: $1 $2" >&2
		return 1
	}
}

# make_certs DIR: a test CA and a server certificate for 127.0.0.1 signed by
# it (DIR/ca.pem, DIR/server.pem, DIR/server.key), plus DIR/other-ca.pem (a
# CA that signed nothing), DIR/expired.pem (127.0.0.1, expired) and
# DIR/wronghost.pem (for example.org only), keys alongside. EC keys: fast.
make_certs() {
	d=$1
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
		openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=mlsetup-test-ca &&
			openssl req -x509 $ec -keyout other-ca.key -out other-ca.pem -days 2 \
				-subj /CN=mlsetup-other-ca &&
			for c in server:IP:127.0.0.1:2 expired:IP:127.0.0.1:-1 wronghost:DNS:example.org:2; do
				n=${c%%:*} rest=${c#*:}
				san=${rest%:*} days=${rest##*:}
				openssl req $ec -keyout "$n.key" -out "$n.csr" -subj "/CN=$n" &&
					printf 'subjectAltName=%s\n' "$san" >"$n.ext" &&
					openssl x509 -req -in "$n.csr" -CA ca.pem -CAkey ca.key \
						-CAcreateserial -out "$n.pem" -days "$days" -extfile "$n.ext" ||
					exit 1
			done
	) >/dev/null 2>&1
}
