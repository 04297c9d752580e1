#!/bin/sh
# A fleet installing from a bundle that nginx serves: `mlsetup bundle`
# from the loopback index, which is then stopped; nginx (the distribution's
# package, packaging/deps.sh installs it) serves the bundle directory on
# loopback with a configuration of the test's own; fleet machines (each
# with its own cache and interpreter directory, as separate machines have)
# fetch the bundle's manifest and interpreter pins from it and run
# `mlsetup install --index-url URL/simple/ --python-mirror URL/python`.
# Both install at once and succeed, every byte came from nginx (its access
# log: each wheel and the interpreter archive once per machine, answered
# 200), and a byte flipped in the served wheel is refused.
#
# nginx runs as the test's user (no root needed; as root its workers run
# as root too, so they can read $TRASH), on a free port above 1024, with
# -p PREFIX -c CONF -e ERRORLOG, its pid file, logs and temporary
# directories in $TRASH: nothing is written under /var or /etc. The EXIT
# trap stops it.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || test_skip_all "nginx is not installed (packaging/deps.sh installs it)"

install_setup
wheel_manifest "$TRASH/m1.txt" purepkg-1.0-py3-none-any.whl "$PLATWHL"
wheel_manifest "$TRASH/m2.txt" purepkg-1.0-py3-none-any.whl datapkg-0.5-py3-none-any.whl
web_pid=${MIRROR_PIDS##* }
ARCH=$(cd "$TRASH/web/files" && ls cpython-*)
# Bundled here, outside the blocks, so nginx can start on it here (and the
# EXIT trap know its pid); the first block fails when either did not work.
(cd "$TRASH" && bundle_web --manifest m1.txt --manifest m2.txt -o B) >"$TRASH/bundle.out" 2>&1
kill "$web_pid"

# nginx_start ROOT: nginx serving ROOT (a bundle: ready once it answers
# /simple/) on a free loopback port; sets NGX_PORT, NGX_URL and NGX_PID
# (stopped by the EXIT trap). A port another process took between finding
# it and binding it is tried again.
NGX="$TRASH/nginx"
mkdir -p "$NGX/tmp"
nginx_start() {
	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		NGX_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$NGX/nginx.conf" <<-EOF
		daemon off;
		master_process on;
		worker_processes 2;
		user $(id -un) $(id -gn);
		pid $NGX/nginx.pid;
		error_log $NGX/error.log info;
		events { worker_connections 64; }
		http {
		    types { text/html html; application/json json; }
		    default_type application/octet-stream;
		    access_log $NGX/access.log;
		    client_body_temp_path $NGX/tmp/body;
		    proxy_temp_path $NGX/tmp/proxy;
		    fastcgi_temp_path $NGX/tmp/fastcgi;
		    uwsgi_temp_path $NGX/tmp/uwsgi;
		    scgi_temp_path $NGX/tmp/scgi;
		    sendfile on;
		    server {
		        listen 127.0.0.1:$NGX_PORT;
		        root $1;
		        index index.html;
		    }
		}
		EOF
		: >"$NGX/error.log"
		"$NGINX" -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log" &
		NGX_PID=$!
		NGX_URL="http://127.0.0.1:$NGX_PORT"
		i=0
		while [ $i -lt 100 ]; do
			curl -sf -o /dev/null "$NGX_URL/simple/" && return 0
			kill -0 $NGX_PID 2>/dev/null || break
			sleep 0.05
			i=$((i + 1))
		done
		kill $NGX_PID 2>/dev/null
		wait $NGX_PID 2>/dev/null
		grep -q "Address already in use" "$NGX/error.log" || break
	done
	echo "nginx did not start:" >&2
	cat "$NGX/error.log" >&2
	return 1
}
NGX_PID=""
nginx_start "$TRASH/B" 2>"$TRASH/nginx.err" &&
	EXIT_HOOKS="$EXIT_HOOKS; kill $NGX_PID 2>/dev/null; wait $NGX_PID 2>/dev/null"
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# machine N: the files one fleet machine starts from, fetched from nginx
# into machine-N/ (its manifest and the interpreter pins), and its own
# cache, interpreter directory and target there.
machine() {
	mkdir -p "machine-$1" &&
	curl -sf -o "machine-$1/m1.txt" "$NGX_URL/manifests/m1.txt" &&
	curl -sf -o "machine-$1/pins.json" "$NGX_URL/python/pins.json"
}

# fleet_install N ARGS...: machine N installs from the bundle nginx serves.
fleet_install() {
	n=$1
	shift
	XDG_DATA_HOME="$TRASH/machine-$n/data" "$MLSETUP" install --sysroot "$SYSROOTS/empty" \
		--cache-dir "$TRASH/machine-$n/cache" --no-progress --retries 1 --connect-timeout 2 \
		--low-speed-time 2 --index-url "$NGX_URL/simple/" --python-mirror "$NGX_URL/python" \
		--python-pins "machine-$n/pins.json" --manifest "machine-$n/m1.txt" \
		--target "$TRASH/machine-$n/env" "$@"
}

# served PATH: how many requests nginx answered 200 for PATH.
served() {
	awk -v p="$1" '$7 == p && $9 == 200' "$NGX/access.log" | wc -l | tr -d " "
}

test_expect_success 'nginx serves the bundle: its index pages and its files' '
	{ test -x B/install.sh || { cat bundle.out; false; }; } &&
	{ test -n "$NGX_PID" || { cat nginx.err; false; }; } &&
	expect_eq nginx "$(curl -sI "$NGX_URL/simple/" | sed -n "s/^Server: \([a-z]*\).*/\1/p")" &&
	! curl -s -o /dev/null "$web_url" &&
	curl -sf "$NGX_URL/simple/purepkg/" | grep -q "purepkg-1.0-py3-none-any.whl#sha256=" &&
	curl -sf -o got.whl "$NGX_URL/files/purepkg-1.0-py3-none-any.whl" &&
	same_file B/files/purepkg-1.0-py3-none-any.whl got.whl
'
test_expect_success 'two fleet machines install from it at once' '
	machine 1 && machine 2 && : >"$NGX/access.log" &&
	{ { fleet_install 1 >out1 2>err1; echo $? >rc1; } & } &&
	{ { fleet_install 2 >out2 2>err2; echo $? >rc2; } & } &&
	wait &&
	for n in 1 2; do
		expect_eq 0 "$(cat rc$n)" || { cat out$n err$n; return 1; }
		env_works "$TRASH/machine-$n/env" &&
		record_ok "$TRASH/machine-$n/env" &&
		r="$TRASH/machine-$n/env/mlsetup-report.json" &&
		expect_eq ok "$(json "$r" "d[\"status\"]")" &&
		expect_eq 3 "$(json "$r" "d[\"counters\"][\"downloaded_files\"]")" || return 1
		case "$("$TRASH/machine-$n/env/bin/python" -c "import sys; print(sys.base_prefix)")" in
		"$TRASH/machine-$n/data/mlsetup/pythons/"*) ;; *) return 1 ;; esac
	done
'
test_expect_success 'every byte came from nginx: each file once per machine' '
	cat "$NGX/access.log" &&
	for f in files/purepkg-1.0-py3-none-any.whl "files/$PLATWHL" "python/$ARCH"; do
		expect_eq 2 "$(served "/$f")" || { echo "/$f"; return 1; }
	done &&
	expect_eq 0 "$(served /files/datapkg-0.5-py3-none-any.whl)" &&
	test "$(served /simple/purepkg/)" -ge 2 &&
	if grep -q "\[error\]\|\[crit\]\|\[emerg\]" "$NGX/error.log"; then cat "$NGX/error.log"; false; fi
'
test_expect_success 'a fleet machine refuses a byte flipped on the server (exit 3)' '
	machine 3 &&
	# The bundled file may be a hard link to a read-only cache blob: it is
	# replaced by a new file (and put back the same way), never written.
	f=B/files/purepkg-1.0-py3-none-any.whl &&
	cp "$f" purepkg.orig && cp "$f" flipped && chmod u+w flipped &&
	python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,\"rb\").read()); b[len(b)//2]^=1; open(p,\"wb\").write(b)" flipped &&
	mv -f flipped "$f" &&
	test_when_finished "mv -f purepkg.orig $f" &&
	expect_exit 3 fleet_install 3 >out 2>err &&
	grep -q "purepkg-1.0-py3-none-any.whl" err &&
	test ! -e "$TRASH/machine-3/env"
'
test_done
