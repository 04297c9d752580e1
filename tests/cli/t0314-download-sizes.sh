#!/bin/sh
# Sizes a PEP 503 page does not give (a hashed requirements file without
# `# mlsetup-file:` lines names files by hash only): asked of the file
# server under the same transport policy as every request - a HEAD first;
# a server that answers HEAD with 501 or 405 is asked for one byte (GET,
# Range: bytes=0-0) and the size read from its Content-Range; where that
# tells nothing either, the download learns the size, and the file is
# still proven by its hash before it is kept. Size requests run at once,
# not one after another, and honour --connect-timeout.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

mirror_start web
for d in alpha beta gamma delta eps zeta eta theta; do
	make_wheel web "$d" 1.0 30000
done
A=$(wheel_file alpha 1.0)
SIZE=$(wc -c <"$TRASH/web/files/$A" | tr -d " ")
sha() { sha256sum "$TRASH/web/files/$1" | cut -d" " -f1; }

# page BASE DIST...: a static PEP 503 page per DIST under static/simple/,
# its link BASE<file>#sha256=<hex> (no size: PEP 503 HTML has none).
page() {
	base=$1
	shift
	for d in "$@"; do
		w=$(wheel_file "$d" 1.0)
		mkdir -p "$TRASH/static/simple/$d" &&
		echo "<a href=\"$base$w#sha256=$(sha "$w")\">$w</a>" \
			>"$TRASH/static/simple/$d/index.html" || return 1
	done
}
# hashed OUT DIST...: a hashed requirements file without mlsetup lines.
hashed() {
	hashed_out=$1
	shift
	{
		echo "--index-url file://$TRASH/static/simple/"
		for d in "$@"; do
			echo "$d==1.0 --hash=sha256:$(sha "$(wheel_file "$d" 1.0)")"
		done
	} >"$hashed_out"
}
page "http://127.0.0.1:$web_port/files/" alpha beta gamma delta eps zeta eta theta
hashed "$TRASH/one.txt" alpha

test_expect_success 'a size the page leaves out is asked of the file server (HEAD)' '
	faults web "{}" &&
	dl -r one.txt -d out --json >out.json 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq "$SIZE" "$(json out.json "d[\"files\"][0][\"size\"]")" &&
	expect_eq 0 "$(requests web "/files/$A range")" &&
	no_parts
'
for code in 501 405; do
	test_expect_success "HEAD answered $code: the size comes from a one-byte ranged GET" '
		rm -rf cache out &&
		faults web "{\"$A\": \"head_status:'$code'\"}" &&
		dl -r one.txt -d out --json >out.json 2>err &&
		same_file out/$A web/files/$A &&
		expect_eq "$SIZE" "$(json out.json "d[\"files\"][0][\"size\"]")" &&
		expect_eq 1 "$(requests web "/files/$A range")" &&
		expect_eq 3 "$(requests web /files/$A)" &&
		no_parts
	'
done
test_expect_success 'HEAD 405 and ranged GET refused: the download learns the size' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"head_status:405\", \"range_status:501\"]}" &&
	dl -r one.txt -d out --json >out.json 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq "$SIZE" "$(json out.json "d[\"files\"][0][\"size\"]")" &&
	no_parts &&
	# again, from the cache: proven by its hash, its size from the blob
	dl -r one.txt -d out2 --json >out.json 2>err &&
	expect_eq true "$(json out.json "d[\"files\"][0][\"from_cache\"]")" &&
	expect_eq "$SIZE" "$(json out.json "d[\"files\"][0][\"size\"]")" &&
	expect_eq "$SIZE" "$(json out.json "d[\"totals\"][\"bytes\"]")"
'
test_expect_success 'no length anywhere (HEAD 501, Range ignored, no Content-Length): the hash decides' '
	rm -rf cache out &&
	faults web "{\"$A\": [\"head_status:501\", \"ignore_range\", \"no_length\"]}" &&
	dl -r one.txt -d out --json >out.json 2>err &&
	same_file out/$A web/files/$A &&
	expect_eq "$SIZE" "$(json out.json "d[\"files\"][0][\"size\"]")" &&
	rm -rf cache out &&
	faults web "{\"$A\": [\"head_status:501\", \"ignore_range\", \"no_length\", \"flip_byte\"]}" &&
	expect_exit 3 dl -r one.txt -d out 2>err &&
	grep -q "hash mismatch for .$A." err &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success 'size requests run at once, not one after another' '
	rm -rf cache out &&
	hashed all.txt alpha beta gamma delta eps zeta eta theta &&
	f="{" &&
	for d in alpha beta gamma delta eps zeta eta theta; do
		f="$f\"$(wheel_file $d 1.0)\": \"delay:1x1\", "
	done &&
	faults web "${f%, }}" &&
	t0=$(date +%s%N) &&
	dl -r all.txt -d out --low-speed-time 10 2>err &&
	t1=$(date +%s%N) &&
	ls out/*.whl >list && expect_eq 8 "$(wc -l <list | tr -d " ")" &&
	# one after another, the 8 HEAD requests alone would take 8 s
	ms=$(( (t1 - t0) / 1000000 )) &&
	echo "took $ms ms" &&
	test "$ms" -lt 4000
'

# A port that accepts no connection: its listen queue is full, so the
# kernel drops every further SYN and a connect waits until it times out.
cat >"$TRASH/blackhole.py" <<'EOF'
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(0)
held = []
for _ in range(3):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(s.getsockname())
    except BlockingIOError:
        pass
    held.append(c)
time.sleep(0.2)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
EOF
python3 "$TRASH/blackhole.py" "$TRASH/bh.port" &
MIRROR_PIDS="$MIRROR_PIDS $!"
BH=$(port_of "$TRASH/bh.port")
mv "$TRASH/static" "$TRASH/static.web"
page "http://127.0.0.1:$BH/files/" alpha

test_expect_success '--connect-timeout reaches size requests (2 s, not 10)' '
	rm -rf cache out &&
	t0=$(date +%s%N) &&
	expect_exit 4 "$MLSETUP" download --sysroot "$SYSROOTS/empty" --python 3.12 \
		--cache-dir "$TRASH/cache" --connect-timeout 2 --no-progress \
		-r one.txt -d out 2>err &&
	t1=$(date +%s%N) &&
	grep -q "127.0.0.1:$BH/files/$A" err &&
	ms=$(( (t1 - t0) / 1000000 )) &&
	echo "took $ms ms" &&
	test "$ms" -ge 1900 && test "$ms" -lt 6000
'
test_done
