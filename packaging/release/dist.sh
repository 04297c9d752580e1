#!/bin/sh
# dist.sh URL TARGET... - fills dist/ from the release build:
# mlsetup-<target> for each target (copied from build/release/<target>/;
# mlsetup-<target>.exe from mlsetup.exe for a Windows target), install.sh
# and install.ps1 (packaging/install.sh and install.ps1 with URL written in
# as their default download location; none when URL is empty) and
# SHA256SUMS of all of them.
. "$(dirname "$0")/lib.sh"

url=$1
shift
dist=$REL_TOP/dist
rm -rf "$dist.new"
mkdir -p "$dist.new"
for t in "$@"; do
	case $t in *-windows-*) exe=.exe ;; *) exe= ;; esac
	[ -f "$REL_TOP/build/release/$t/mlsetup$exe" ] || rel_die "no build/release/$t/mlsetup$exe; run make release"
	cp "$REL_TOP/build/release/$t/mlsetup$exe" "$dist.new/mlsetup-$t$exe"
	chmod 755 "$dist.new/mlsetup-$t$exe"
done
sh "$REL_DIR/stamp-install-sh.sh" "$url" <"$REL_TOP/packaging/install.sh" >"$dist.new/install.sh"
chmod 755 "$dist.new/install.sh"
sh "$REL_DIR/stamp-install-ps1.sh" "$url" <"$REL_TOP/packaging/install.ps1" >"$dist.new/install.ps1"
chmod 644 "$dist.new/install.ps1"
(cd "$dist.new" && LC_ALL=C ls | grep -v '^SHA256SUMS$' | while read -r f; do
	printf '%s  %s\n' "$(rel_sha256 "$f")" "$f"
done) >"$dist.new/SHA256SUMS"
rm -rf "$dist"
mv "$dist.new" "$dist"
rel_log "dist/: $(cd "$dist" && LC_ALL=C ls | tr '\n' ' ')"
