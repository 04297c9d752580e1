#!/bin/sh
# mlsetup lock against the loopback index: pip's resolver walks the
# fixture wheels' Requires-Dist, and the manifest written pins every
# package of the closure with ==, hashes exactly the served wheels that fit
# the target, carries the input's `# mlsetup:` header over, and is accepted
# by pip itself in --require-hashes mode; an input pip cannot resolve fails
# naming the packages and writes nothing. Needs pip (>= 22.2, for
# --report); skipped without it.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

# pip resolves for lock and checks its output: python3's (lock's default),
# else that of the CPython the install tests use.
RESOLVER=""
for py in python3 "$(sh "$top/tests/fixtures/find_python.sh" 2>/dev/null)"; do
	[ -n "$py" ] || continue
	if "$py" -c 'import sys
from pip import __version__ as v
sys.exit(tuple(int(x) for x in v.split(".")[:2]) < (22, 2))' 2>/dev/null; then
		RESOLVER=$py
		break
	fi
done
[ -n "$RESOLVER" ] || test_skip_all "no pip >= 22.2 (python3 -m pip) to resolve with"
# Hermetic pip: no cache, no questions, no version check.
PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_CACHE_DIR PIP_NO_INPUT PIP_DISABLE_PIP_VERSION_CHECK

# dep_wheel DIST VERSION TAG [REQUIREMENT...]: a wheel in web/files whose
# METADATA declares each REQUIREMENT as Requires-Dist (PEP 427 RECORD).
dep_wheel() {
	python3 - "$TRASH/web/files" "$@" <<-'EOF'
	import base64, hashlib, os, sys, zipfile
	out, dist, ver, tag = sys.argv[1:5]
	di = "%s-%s.dist-info" % (dist, ver)
	rows = []
	def add(z, arc, data):
	    z.writestr(zipfile.ZipInfo(arc, (2024, 1, 1, 0, 0, 0)), data)
	    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
	    rows.append("%s,sha256=%s,%d" % (arc, h, len(data)))
	with zipfile.ZipFile(os.path.join(out, "%s-%s-%s.whl" % (dist, ver, tag)), "w") as z:
	    add(z, dist + "/__init__.py", ("VERSION = %r\n" % ver).encode())
	    md = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, ver)
	    md += "".join("Requires-Dist: %s\n" % r for r in sys.argv[5:])
	    add(z, di + "/METADATA", md.encode())
	    add(z, di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: mlsetup-tests\n"
	                           "Root-Is-Purelib: true\nTag: %s\n" % tag).encode())
	    rows.append(di + "/RECORD,,")
	    z.writestr(zipfile.ZipInfo(di + "/RECORD", (2024, 1, 1, 0, 0, 0)), "\n".join(rows) + "\n")
	EOF
}

mirror_start web
# alpha needs beta >= 2.0, which needs gamma; beta 1.0 is on the index but
# outside the closure; gamma also has a Windows-only wheel, which no
# linux-x86_64 target can install.
dep_wheel alpha 1.0 py3-none-any "beta>=2.0"
dep_wheel beta 1.0 py3-none-any
dep_wheel beta 2.0 py3-none-any gamma
dep_wheel gamma 1.0 py3-none-any
dep_wheel gamma 1.0 py3-none-win_amd64
cat >"$TRASH/in.in" <<EOF
# mlsetup: summary = the lock test closure
# mlsetup: cuda = 12.4
alpha
EOF

# lk ARGS...: mlsetup lock against the loopback index for one target.
lk() {
	[ "$RESOLVER" = python3 ] || set -- --resolver-python "$RESOLVER" "$@"
	"$MLSETUP" lock --index-url "$web_url" --python 3.12 --platform linux-x86_64 "$@"
}

# pins FILE: the requirement lines of a manifest, continuations joined,
# one "name==version hash,hash..." per line, sorted.
pins() {
	python3 - "$1" <<-'EOF'
	import re, sys
	text = open(sys.argv[1]).read().replace("\\\n", " ")
	out = []
	for line in text.splitlines():
	    line = line.strip()
	    if not line or line.startswith("#") or line.startswith("-"):
	        continue
	    req, *opts = line.split()
	    hashes = sorted(o[len("--hash=sha256:"):] for o in opts if o.startswith("--hash=sha256:"))
	    out.append("%s %s" % (req, ",".join(hashes)))
	print("\n".join(sorted(out)))
	EOF
}

# sha FILE: the sha256 of a served file.
sha() {
	sha256sum "$TRASH/web/files/$1" | cut -d" " -f1
}

test_expect_success 'lock resolves the closure with pip and writes a manifest' '
	lk in.in -o out.txt >log 2>&1 &&
	test -s out.txt
'
test_expect_success 'every package of the closure is pinned with ==, and only those' '
	pins out.txt | cut -d" " -f1 >got &&
	printf "alpha==1.0\nbeta==2.0\ngamma==1.0\n" >want &&
	cmp want got
'
test_expect_success 'every hash is the sha256 of the served wheel that fits the target' '
	pins out.txt >got &&
	{
		echo "alpha==1.0 $(sha alpha-1.0-py3-none-any.whl)" &&
		echo "beta==2.0 $(sha beta-2.0-py3-none-any.whl)" &&
		echo "gamma==1.0 $(sha gamma-1.0-py3-none-any.whl)"
	} >want &&
	cmp want got &&
	! grep -q "$(sha gamma-1.0-py3-none-win_amd64.whl)" out.txt &&
	! grep -q "$(sha beta-1.0-py3-none-any.whl)" out.txt
'
test_expect_success 'each wheel is listed with its sha256 and size for plan' '
	for w in alpha-1.0-py3-none-any.whl beta-2.0-py3-none-any.whl gamma-1.0-py3-none-any.whl; do
		size=$(wc -c <"$TRASH/web/files/$w" | tr -d " ") &&
		grep -qx "# mlsetup-file: $(sha $w) $size $w" out.txt || exit 1
	done &&
	expect_eq 3 "$(grep -c "^# mlsetup-file:" out.txt)"
'
test_expect_success 'the input header is carried over, with what was requested' '
	grep -qx "# mlsetup: summary = the lock test closure" out.txt &&
	grep -qx "# mlsetup: cuda = 12.4" out.txt &&
	grep -qx "# mlsetup: requested = alpha" out.txt
'
test_expect_success 'pip accepts the manifest with --require-hashes and downloads each wheel' '
	"$RESOLVER" -m pip download --no-deps --require-hashes -r out.txt -d dl \
		--index-url "$web_url" >pip.log 2>&1 &&
	ls dl >got &&
	printf "alpha-1.0-py3-none-any.whl\nbeta-2.0-py3-none-any.whl\ngamma-1.0-py3-none-any.whl\n" >want &&
	cmp want got
'
test_expect_success 'and pip refuses it once a hash is changed (the check above has teeth)' '
	h=$(sha beta-2.0-py3-none-any.whl) &&
	sed "s/$h/$(echo "$h" | tr 0-9a-f 1-9a-f0)/" out.txt >tampered.txt &&
	! "$RESOLVER" -m pip download --no-deps --require-hashes -r tampered.txt -d dl2 \
		--index-url "$web_url" >pip.log 2>&1 &&
	grep -q "DO NOT MATCH THE HASHES" pip.log
'
# A project's requirements file often includes a shared one (-r): pip
# follows it, and so must lock, for the index options written there.
test_expect_success 'an input with -r: the included requirements and index options count' '
	printf -- "--index-url %s\nalpha\n" "$web_url" >base.in &&
	printf -- "-r base.in\ngamma\n" >top.in &&
	set -- --python 3.12 --platform linux-x86_64 top.in -o top.txt &&
	if [ "$RESOLVER" != python3 ]; then set -- --resolver-python "$RESOLVER" "$@"; fi &&
	"$MLSETUP" lock "$@" >log 2>&1 &&
	pins top.txt | cut -d" " -f1 >got &&
	printf "alpha==1.0\nbeta==2.0\ngamma==1.0\n" >want &&
	cmp want got &&
	grep -qx -- "--index-url $web_url" top.txt &&
	grep -qx "# mlsetup: requested = alpha gamma" top.txt &&
	grep -q "^# Generated by .mlsetup lock top.in -o top.txt --python 3.12 --platform linux-x86_64.\.$" top.txt
'
# pip names the conflicting requirement and the input line that asked for
# alpha ("Cannot install -r conflict.in (line 1) and beta<2.0") and, in
# its "The conflict is caused by" lines, the package behind it.
test_expect_success 'conflicting requirements fail, naming the packages, and write nothing' '
	printf "alpha\nbeta<2.0\n" >conflict.in &&
	if lk conflict.in -o conflict.txt >out 2>err; then
		echo "lock succeeded on a conflict"; exit 1
	fi &&
	! grep -q Sanitizer err &&
	grep -q "conflicting dependencies" err &&
	grep -q "beta<2.0" err &&
	grep -q "conflict.in (line 1)" err &&
	grep -q "alpha 1.0 depends on beta>=2.0" err &&
	test -z "$(ls | grep "^conflict.txt")"
'
test_done
