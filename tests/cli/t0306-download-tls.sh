#!/bin/sh
# TLS (docs/reliability.md "Network"): an index with certificates made here works
# with --cert or SSL_CERT_FILE; a certificate from an unknown authority, an
# expired one or one for another host is fatal at once (exit 4, exactly one
# handshake, no retry), for index pages and for files alike; an https ->
# http redirect is refused; plain http goes only to loopback or trusted
# hosts.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
unset SSL_CERT_FILE SSL_CERT_DIR

C="$TRASH/certs"
make_certs "$C"
mkdir -p "$TRASH/web/files"
for m in tls expired wronghost webx; do
	mkdir -p "$TRASH/$m" && ln -s "$TRASH/web/files" "$TRASH/$m/files"
done
mirror_start web
mirror_start tls --https --cert "$C/server.pem" --key "$C/server.key"
mirror_start expired --https --cert "$C/expired.pem" --key "$C/expired.key"
mirror_start wronghost --https --cert "$C/wronghost.pem" --key "$C/wronghost.key"
mirror_start webx --files-base "https://127.0.0.1:$tls_port/files/"
make_wheel web alpha 1.0 100000
A=$(wheel_file alpha 1.0)
F="$TRASH/web/files"
make_manifest "$TRASH/https.txt" "$tls_url" "$F" alpha
make_manifest "$TRASH/expired.txt" "$expired_url" "$F" alpha
make_manifest "$TRASH/wronghost.txt" "$wronghost_url" "$F" alpha
make_manifest "$TRASH/mixed.txt" "$webx_url" "$F" alpha

test_expect_success 'certificates were made' '
	test -s "$C/ca.pem" && test -s "$C/server.pem" && test -s "$C/expired.pem" &&
	test -s "$C/wronghost.pem" && test -s "$C/other-ca.pem"
'
test_expect_success 'https index trusted through --cert: downloads and verifies' '
	dl -r https.txt -d out --cert "$C/ca.pem" &&
	same_file out/$A web/files/$A &&
	no_parts
'
test_expect_success 'https index trusted through SSL_CERT_FILE' '
	rm -rf cache out &&
	SSL_CERT_FILE="$C/ca.pem" && export SSL_CERT_FILE &&
	dl -r https.txt -d out &&
	same_file out/$A web/files/$A
'
test_expect_success 'unknown certificate authority: exit 4, one handshake, hint' '
	rm -rf cache out &&
	faults tls "{}" &&
	expect_exit 4 dl -r https.txt -d out --cert "$C/other-ca.pem" 2>err &&
	grep -q "certificate of .https://127.0.0.1:$tls_port/simple/alpha/. was rejected" err &&
	grep -q "hint: .*--cert" err &&
	expect_eq 1 "$(requests tls /_tls_failed)" &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success 'files on an untrusted https host: exit 4, one handshake, no retry' '
	rm -rf cache out &&
	faults tls "{}" &&
	expect_exit 4 dl -r mixed.txt -d out 2>err &&
	grep -q "certificate of .https://127.0.0.1:$tls_port/files/$A. was rejected" err &&
	expect_eq 1 "$(requests tls /_tls_failed)" &&
	expect_eq 0 "$(requests tls /files/$A)" &&
	no_parts
'
test_expect_success 'the same files with the authority given: downloaded over https' '
	rm -rf cache out &&
	dl -r mixed.txt -d out --cert "$C/ca.pem" &&
	same_file out/$A web/files/$A
'
test_expect_success 'expired certificate: exit 4, one handshake' '
	rm -rf cache out &&
	faults expired "{}" &&
	expect_exit 4 dl -r expired.txt -d out --cert "$C/ca.pem" 2>err &&
	grep -q "was rejected" err &&
	expect_eq 1 "$(requests expired /_tls_failed)" &&
	no_parts
'
test_expect_success 'certificate for another host: exit 4, one handshake' '
	rm -rf cache out &&
	faults wronghost "{}" &&
	expect_exit 4 dl -r wronghost.txt -d out --cert "$C/ca.pem" 2>err &&
	grep -q "was rejected" err &&
	grep -q "host name" err &&
	# libcurl checks the name after the handshake: the server sees one
	# connection from mlsetup (and one from this query), no request
	expect_eq 2 "$(requests wronghost /_tls_connections)" &&
	expect_eq 0 "$(requests wronghost /simple/alpha/)" &&
	no_parts
'
test_expect_success 'https -> http redirect of a file is refused (exit 4)' '
	rm -rf cache out &&
	faults web "{}" &&
	faults tls "{\"$A\": \"redirect_http:http://127.0.0.1:$web_port/files/$A\"}" &&
	expect_exit 4 dl -r https.txt -d out --cert "$C/ca.pem" 2>err &&
	grep -q "refusing redirect from .https://127.0.0.1:$tls_port/files/$A. to plain http .http://127.0.0.1:$web_port/files/$A." err &&
	expect_eq 0 "$(requests web /files/$A)" &&
	expect_eq 1 "$(requests tls /files/$A)" &&
	test ! -e out/$A &&
	no_parts
'
test_expect_success 'an https -> https redirect (relative Location) is followed' '
	rm -rf cache out &&
	faults tls "{\"$A\": \"redirect:/files/${A}x1\"}" &&
	dl -r https.txt -d out --cert "$C/ca.pem" &&
	same_file out/$A web/files/$A &&
	expect_eq 2 "$(requests tls /files/$A)"
'
test_expect_success 'plain http to a host that is not loopback is refused before connecting' '
	rm -rf cache out &&
	make_manifest remote.txt "http://example.org/simple/" "$F" alpha &&
	expect_exit 4 dl -r remote.txt -d out 2>err &&
	grep -q "refusing plain http to .http://example.org/simple/alpha/." err &&
	grep -q "hint: .*--trusted-host example.org" err
'
test_expect_success 'credentials in index URLs are never shown' '
	make_manifest secret.txt "http://user:s3cret@127.0.0.1:9/simple/" "$F" alpha &&
	expect_exit 4 dl -r secret.txt -d out --retries 0 --json >j 2>err &&
	! grep -q s3cret err && ! grep -q s3cret j &&
	grep -q "\*\*\*@127.0.0.1:9" err
'
test_done
