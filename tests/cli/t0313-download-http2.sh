#!/bin/sh
# HTTP/2: where the file server offers h2 (ALPN), the transfers share one
# connection as multiplexed streams. Needs nghttpd (Debian: nghttp2-server);
# skipped without it.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

if ! command -v nghttpd >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
	test_skip_all "nghttpd (nghttp2-server) or openssl not installed"
fi

C="$TRASH/certs"
make_certs "$C"
mkdir -p "$TRASH/web/files"
for d in a1 a2 a3 a4 a5 a6; do
	make_wheel web $d 1.0 500000
done
H2PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nghttpd -v -a 127.0.0.1 -d "$TRASH/web/files" "$H2PORT" "$C/server.key" "$C/server.pem" \
	>"$TRASH/h2.log" 2>&1 &
MIRROR_PIDS="$MIRROR_PIDS $!"
mkdir -p "$TRASH/idx" && ln -s "$TRASH/web/files" "$TRASH/idx/files"
mirror_start idx --files-base "https://127.0.0.1:$H2PORT/"
make_manifest "$TRASH/m.txt" "$idx_url" "$TRASH/web/files" a1 a2 a3 a4 a5 a6
i=0
while ! grep -q "listen 127.0.0.1" "$TRASH/h2.log" && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done

test_expect_success 'files over h2: all downloaded and verified' '
	dl -r m.txt -d out --cert "$C/ca.pem" --json >j &&
	for d in a1 a2 a3 a4 a5 a6; do
		same_file out/$(wheel_file $d 1.0) web/files/$(wheel_file $d 1.0) || return 1
	done &&
	json j "d[\"files\"][0][\"url\"]" | grep -q "^https://127.0.0.1:$H2PORT/"
'
test_expect_success 'they shared one connection as multiplexed streams' '
	grep -q "h2" h2.log &&
	expect_eq 1 "$(grep -o "\[id=[0-9]*\]" h2.log | sort -u | wc -l | tr -d " ")" &&
	expect_eq 6 "$(grep -o "recv HEADERS frame <length=[0-9]*, flags=0x[0-9a-f]*, stream_id=[0-9]*>" h2.log | sort -u | wc -l | tr -d " ")"
'
test_done
