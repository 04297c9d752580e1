#!/bin/sh
# stamp-install-ps1.sh URL < packaging/install.ps1 > install.ps1 - writes
# the release URL into install.ps1 as the default for MLSETUP_DOWNLOAD_URL
# (an empty URL leaves the variable required), as stamp-install-sh.sh does
# for install.sh. The URL may not hold quotes, backslashes, spaces or
# control characters (it goes into a PowerShell single-quoted string).
set -eu
url=${1:-}
case $url in
*[!A-Za-z0-9._~:/?#@!\$\&\(\)*+,\;=%-]*)
	echo "stamp-install-ps1.sh: error: RELEASE_URL '$url' holds characters a URL in install.ps1 may not" >&2
	exit 1
	;;
esac
case $url in
'' | http://* | https://* | file://*) ;;
*)
	echo "stamp-install-ps1.sh: error: RELEASE_URL '$url' is not an http, https or file URL" >&2
	exit 1
	;;
esac
awk -v url="$url" '
	$0 == "\t$release = '"''"'" && !done { print "\t$release = '"'"'" url "'"'"'"; done = 1; next }
	{ print }
	END { if (!done) { print "stamp-install-ps1.sh: error: no release URL line in install.ps1" > "/dev/stderr"; exit 1 } }'
