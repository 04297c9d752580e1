#!/bin/sh
# A git project's clone follows the rules every HTTP request of mlsetup
# follows: credentials from ~/.netrc (or $NETRC) when the URL has none;
# the proxy of https_proxy / http_proxy / ALL_PROXY, never for loopback or
# no_proxy hosts; the CA bundle of --cert. The repository is served by
# git's smart HTTP on loopback, also over TLS with a certificate for
# git.invalid from a test CA; a forward proxy (tests/mirror/http_proxy.py)
# reaches it under that name, which resolves nowhere, so only a clone
# through the proxy gets there. (libgit2 1.5 sends plain-http requests
# for a proxy to the server itself, so the proxied clone is https.)
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"
. "$(dirname "$0")/projectlib.sh"

project_require
command -v openssl >/dev/null || test_skip_all "openssl is missing (the test CA)"
project_setup
git_http_start "$TRASH/repos"
unset http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY NETRC
unset SSL_CERT_FILE SSL_CERT_DIR

# git over TLS as git.invalid, its certificate from the test CA
make_certs "$TRASH/certs"
(
	cd "$TRASH/certs" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout git.key \
		-out git.csr -subj /CN=git.invalid &&
	printf "subjectAltName=DNS:git.invalid\n" >git.ext &&
	openssl x509 -req -in git.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out git.pem \
		-days 2 -extfile git.ext
) >/dev/null 2>&1 || exit 1
python3 "$top/tests/mirror/git_http.py" --root "$TRASH/repos" --port-file "$TRASH/gits.port" \
	--https --cert "$TRASH/certs/git.pem" --key "$TRASH/certs/git.key" 2>"$TRASH/gits.log" &
MIRROR_PIDS="$MIRROR_PIDS $!"
GITS=$(port_of "$TRASH/gits.port")

python3 "$top/tests/mirror/http_proxy.py" --port-file "$TRASH/proxy.port" \
	--log "$TRASH/proxy.log" --map git.invalid=127.0.0.1 2>"$TRASH/proxy.err" &
MIRROR_PIDS="$MIRROR_PIDS $!"
PX=$(port_of "$TRASH/proxy.port")
: >"$TRASH/proxy.log"

pl() {
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --python-pins "$TRASH/pins.json" \
		--python "$SYSPY" "$@"
}
chosen() { json "$1" 'd["manifest"]["name"]'; }
PRIVATE="http://127.0.0.1:$GITPORT/private/thesis.git@$C1"

test_expect_success 'a clone takes its credentials from ~/.netrc when the URL has none' '
	expect_exit 4 pl --cache-dir "$TRASH/c-none" --project "$PRIVATE" >out 2>err &&
	grep -q "cannot clone .http://127.0.0.1:$GITPORT/private/thesis.git" err &&
	test_when_finished "rm -f \"$TRASH/.netrc\"" &&
	printf "machine 127.0.0.1\n  login tester\n  password s3cret-token\n" >"$TRASH/.netrc" &&
	with_gpus rtx3090-550.json pl --cache-dir "$TRASH/c-home" --project "$PRIVATE" \
		--json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	! grep -r s3cret out.json err "$TRASH/c-home/projects"
'
test_expect_success '... or from the file $NETRC names' '
	printf "machine 127.0.0.1 login tester password s3cret-token\n" >"$TRASH/other-netrc" &&
	NETRC="$TRASH/other-netrc" with_gpus rtx3090-550.json pl --cache-dir "$TRASH/c-env" \
		--project "$PRIVATE" --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	! grep -r s3cret out.json err "$TRASH/c-env/projects"
'
GIT_TLS="https://git.invalid:$GITS/thesis.git@v1"
test_expect_success 'a clone goes through https_proxy and trusts --cert, as every request does' '
	: >"$TRASH/proxy.log" &&
	https_proxy="http://127.0.0.1:$PX" with_gpus rtx5090.json pl --cache-dir "$TRASH/c-proxy" \
		--cert "$TRASH/certs/ca.pem" --project "$GIT_TLS" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	grep -q "^CONNECT git.invalid:$GITS\$" "$TRASH/proxy.log"
'
# libgit2 1.5 leaks its copy of the proxy URL when a fetch through a proxy
# fails (git_remote_download returns before disposing of its connect
# options): the sanitizer's leak check is off for that one run.
test_expect_success 'without --cert the test CA is not trusted; a no_proxy host is not proxied' '
	: >"$TRASH/proxy.log" &&
	expect_exit 4 env ASAN_OPTIONS=detect_leaks=0 https_proxy="http://127.0.0.1:$PX" \
		"$MLSETUP" plan \
		--sysroot "$SYSROOTS/empty" --python-pins "$TRASH/pins.json" --python "$SYSPY" \
		--cache-dir "$TRASH/c-nocert" --project "$GIT_TLS" >out 2>err &&
	grep -q "cannot clone .https://git.invalid:$GITS/thesis.git" err &&
	grep -q "^CONNECT git.invalid:$GITS\$" "$TRASH/proxy.log" &&
	: >"$TRASH/proxy.log" &&
	expect_exit 4 env https_proxy="http://127.0.0.1:$PX" no_proxy=.invalid "$MLSETUP" plan \
		--sysroot "$SYSROOTS/empty" --python-pins "$TRASH/pins.json" --python "$SYSPY" \
		--cache-dir "$TRASH/c-noproxy" --cert "$TRASH/certs/ca.pem" \
		--project "$GIT_TLS" >out 2>err &&
	! grep -q CONNECT "$TRASH/proxy.log"
'
test_expect_success 'loopback never goes through the proxy' '
	: >"$TRASH/proxy.log" &&
	http_proxy="http://127.0.0.1:$PX" https_proxy="http://127.0.0.1:$PX" \
		with_gpus rtx5090.json pl --cache-dir "$TRASH/c-loop" \
		--project "http://127.0.0.1:$GITPORT/thesis.git@v1" --json >out.json 2>err &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	! grep -q "thesis.git" "$TRASH/proxy.log" &&
	# nor do size requests (pip, asked to resolve, may use the proxy)
	! grep -q "^HEAD" "$TRASH/proxy.log"
'
test_done
