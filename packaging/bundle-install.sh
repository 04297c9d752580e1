#!/bin/sh
# install.sh - installs an environment from this mlsetup bundle, offline:
# the bundled mlsetup, with the bundle's wheels (files/), interpreter
# archive (python/) and manifests (manifests/), and nothing from a network.
#
#   DIR/install.sh [mlsetup install options]
#   DIR/install.sh --target /opt/ml/venv --require-gpu
#   DIR/install.sh --python /usr/bin/python3.11 --target ./venv
#
# Written by `mlsetup bundle` from packaging/bundle-install.sh. Before it
# runs anything it checks the sha256 of the bundled mlsetup, manifests and
# interpreter pins (listed below); mlsetup then checks every wheel and the
# interpreter archive against those. The options given here come after the
# bundle's own, so they win: --python PATH uses an interpreter of this
# machine instead of the bundled archive, --manifest DIR/manifests/NAME
# another bundled manifest (instead of the bundle's own, which are
# candidates: the first that fits this machine is installed).
#
# Every line of code is inside a function, and the only command is the call
# on the last line, which begins with a marker that mlsetup_bundle_install
# checks: a copy cut short anywhere defines some functions, or fails to
# parse, and runs nothing.

# "sha256  path" of each bundled file this script checks, relative to the
# bundle.
mb_sums() {
	cat <<'MLSETUP_BUNDLE_SUMS'
@SUMS@
MLSETUP_BUNDLE_SUMS
}

# The manifests install chooses among, in preference order (the first that
# fits this machine), when the bundle was made from --manifest files or a
# --project: names of letters, digits, '.', '_' and '-' in manifests/
# (empty: the bundled mlsetup chooses among its shipped manifests).
mb_manifests() {
	printf '%s' '@MANIFESTS@'
}

# The CPython X.Y the bundle's wheels are for first, and every X.Y whose
# interpreter archive is bundled.
mb_python() {
	printf '%s' '@PYTHON@'
}
mb_archives() {
	printf '%s' '@ARCHIVES@'
}

mb_fail() {
	printf 'install.sh: error: %s\n' "$*" >&2
	exit 1
}

mb_have() {
	command -v "$1" >/dev/null 2>&1
}

# Prints the sha256 of FILE with whichever tool this system has.
mb_sha256() {
	if mb_have sha256sum; then
		sha256sum "$1" | cut -d ' ' -f 1
	elif mb_have shasum; then
		shasum -a 256 "$1" | cut -d ' ' -f 1
	elif mb_have openssl; then
		openssl dgst -sha256 <"$1" | sed 's/^.*= *//'
	else
		mb_fail "no sha256sum, shasum or openssl here to check the bundle with"
	fi
}

# The file:// URL of an absolute path (RFC 8089; '%', ' ', '#', '?' encoded).
mb_file_url() {
	printf 'file://%s' "$(printf '%s' "$1" | sed -e 's/%/%25/g' -e 's/ /%20/g' \
		-e 's/#/%23/g' -e 's/?/%3F/g')"
}

# Checks every file mb_sums lists under the bundle directory $1.
mb_check() {
	mb_sums | while read -r mb_sum mb_path; do
		[ -n "$mb_sum" ] || continue
		[ -f "$1/$mb_path" ] ||
			mb_fail "'$1/$mb_path' is missing: the bundle is incomplete; copy it again"
		mb_got=$(mb_sha256 "$1/$mb_path") || exit 1
		[ "$mb_got" = "$mb_sum" ] ||
			mb_fail "'$1/$mb_path' does not match the bundle (sha256 $mb_got, expected $mb_sum): the bundle is damaged; copy it again"
	done
}

mlsetup_bundle_install() {
	[ "${1:-}" = mlsetup-bundle-install-sh-complete ] ||
		mb_fail "this copy of install.sh is incomplete; copy the bundle again"
	shift
	mb_dir=$(cd "$(dirname "$0")" && pwd -P) || mb_fail "cannot find the bundle's directory"
	mb_check "$mb_dir" || exit 1
	mb_own_python=no
	mb_own_manifest=no
	for mb_a in "$@"; do
		case $mb_a in
		--python | --python=*) mb_own_python=yes ;;
		--manifest | --manifest=* | --project | --project=*) mb_own_manifest=yes ;;
		esac
	done
	if [ "$mb_own_python" = no ]; then
		case " $(mb_archives) " in
		*" $(mb_python) "*) ;;
		*) mb_fail "this bundle holds no interpreter archive for CPython $(mb_python): name a CPython $(mb_python) of this machine with --python PATH (e.g. --python /usr/bin/python$(mb_python))" ;;
		esac
	fi
	# the bundle's manifests unless the caller names one (the caller's
	# --manifest options would be candidates among them): appended, then
	# the caller's arguments rotated behind them
	if [ "$mb_own_manifest" = no ]; then
		mb_n=$#
		for mb_name in $(mb_manifests); do
			set -- "$@" --manifest "$mb_dir/manifests/$mb_name"
		done
		while [ "$mb_n" -gt 0 ]; do
			set -- "$@" "$1"
			shift
			mb_n=$((mb_n - 1))
		done
	fi
	set -- install --offline --find-links "$mb_dir/files/index.html" \
		--python "$(mb_python)" --python-pins "$mb_dir/python/pins.json" \
		--python-mirror "$(mb_file_url "$mb_dir/python")" "$@"
	exec "$mb_dir/mlsetup" "$@"
}

mlsetup_bundle_install mlsetup-bundle-install-sh-complete "$@"
