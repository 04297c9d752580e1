#!/bin/sh
# stamp-install-sh.sh URL < packaging/install.sh > install.sh - writes the
# release URL into install.sh as the default for MLSETUP_DOWNLOAD_URL (an
# empty URL leaves the variable required). The URL may not hold quotes,
# backslashes, spaces or control characters.
set -eu
url=${1:-}
case $url in
*[!A-Za-z0-9._~:/?#@!\$\&\(\)*+,\;=%-]*)
	echo "stamp-install-sh.sh: error: RELEASE_URL '$url' holds characters a URL in install.sh may not" >&2
	exit 1
	;;
esac
case $url in
'' | http://* | https://* | file://*) ;;
*)
	echo "stamp-install-sh.sh: error: RELEASE_URL '$url' is not an http, https or file URL" >&2
	exit 1
	;;
esac
awk -v url="$url" '
	$0 == "\tprintf '"'"'%s'"'"' '"''"'" && !done { print "\tprintf '"'"'%s'"'"' '"'"'" url "'"'"'"; done = 1; next }
	{ print }
	END { if (!done) { print "stamp-install-sh.sh: error: no release URL line in install.sh" > "/dev/stderr"; exit 1 } }'
