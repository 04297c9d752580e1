# installlib.sh - setup shared by the install CLI tests (t06*.sh): a
# loopback index serving fixture wheels and an interpreter archive built
# from a CPython on this machine, interpreter pins pointing at it through
# --python-mirror, and helpers to write manifests and run install.
# Source after lib.sh and tests/mirror/testlib.sh, then skip visibly when
# there is no interpreter:
#
#   have_syspy || test_skip_all "$SYSPY_MISSING"

# The interpreter: any CPython >= 3.11 with its own prefix
# (tests/fixtures/find_python.sh; MLSETUP_TEST_PYTHON chooses one). PYXY is
# its "X.Y", which every manifest, pin and wheel tag below follows.
SYSPY=$(sh "$top/tests/fixtures/find_python.sh" 2>"$TRASH/.find_python") || SYSPY=""
SYSPY_MISSING=$(cat "$TRASH/.find_python")
PYXY=""
[ -n "$SYSPY" ] && PYXY=$("$SYSPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PYTAG=cp$(echo "$PYXY" | tr -d .)
have_syspy() { [ -n "$SYSPY" ] && [ -n "$PYXY" ]; }

# A private interpreter directory, so every test file unpacks its own.
XDG_DATA_HOME="$TRASH/data"
export XDG_DATA_HOME

# install_setup: starts the mirror "web", writes the fixture wheels into
# $TRASH/wheels and copies the good ones to the index, builds the
# interpreter archive and $TRASH/pins.json.
install_setup() {
	mirror_start web
	python3 "$top/tests/fixtures/make_wheels.py" "$TRASH/wheels" --python "$PYXY" >/dev/null
	for w in $GOOD_WHEELS; do
		cp "$TRASH/wheels/$w" "$TRASH/web/files/"
	done
	arch="cpython-$PYXY-mlsetup-test-x86_64-unknown-linux-gnu-install_only.tar.gz"
	set -- $(sh "$top/tests/fixtures/make_python_archive.sh" "$TRASH/web/files/$arch" "$SYSPY")
	pyver=$("$SYSPY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	cat >"$TRASH/pins.json" <<-EOF
	{"schema": "mlsetup.python/1", "default": "$PYXY", "pythons": [
	 {"name": "cpython-$pyver-linux-x86_64-gnu-test", "version": "$pyver", "os": "linux",
	  "arch": "x86_64", "libc": "gnu", "sha256": "$1", "size": $2,
	  "url": "https://example.org/python-build-standalone/releases/download/$arch"}]}
	EOF
}

# wheel_manifest OUT WHEEL...: a hashed manifest for the given wheel files
# of $TRASH/web/files (all requested), for CPython $PYXY on linux-x86_64.
wheel_manifest() {
	out=$1
	shift
	{
		echo "# mlsetup: python = $PYXY"
		echo "# mlsetup: platforms = linux-x86_64"
		printf "# mlsetup: requested ="
		for w in "$@"; do printf " %s" "$(echo "$w" | cut -d- -f1)"; done
		echo
		echo "--index-url $web_url"
		for w in "$@"; do
			f="$TRASH/web/files/$w"
			echo "$(echo "$w" | cut -d- -f1)==$(echo "$w" | cut -d- -f2) --hash=sha256:$(sha256sum "$f" | cut -d" " -f1)"
		done
		for w in "$@"; do
			f="$TRASH/web/files/$w"
			echo "# mlsetup-file: $(sha256sum "$f" | cut -d" " -f1) $(wc -c <"$f" | tr -d " ") $w"
		done
	} >"$out"
}

# The platform wheel, built for $PYXY, and the good wheels with it.
PLATWHL=platpkg-2.0-$PYTAG-$PYTAG-linux_x86_64.whl
GOOD_WHEELS="purepkg-1.0-py3-none-any.whl $PLATWHL datapkg-0.5-py3-none-any.whl"

# inst ARGS...: mlsetup install with the test defaults.
inst() {
	inst_run_ "" "$@"
}

# inst_exec ARGS...: inst that replaces the shell running it. A test that
# kills a run in the background starts it as `(inst_exec ARGS) &`, so $!
# is mlsetup's own pid: `inst ARGS &` is a subshell running a function,
# and SIGKILL to it leaves mlsetup running.
inst_exec() {
	inst_run_ exec "$@"
}

inst_run_() {
	how=$1
	shift
	$how "$MLSETUP" install --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$web_port/files" \
		--no-progress --retries 1 --connect-timeout 2 --low-speed-time 2 "$@"
}

# bundle_web ARGS...: mlsetup bundle for CPython $PYXY of the test machine
# from the loopback index, the interpreter archive from its files, cache
# $TRASH/bcache (a later --cache-dir wins).
bundle_web() {
	"$MLSETUP" bundle --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/bcache" \
		--python-pins "$TRASH/pins.json" --python-mirror "http://127.0.0.1:$web_port/files" \
		--python "$PYXY" --no-progress --retries 1 --connect-timeout 2 --low-speed-time 2 "$@"
}

# binst BUNDLE ARGS...: BUNDLE/install.sh with the test machine and a cache
# of its own, $TRASH/icache (a later --cache-dir wins), an index named in
# the environment that is not there.
binst() {
	b=$1
	shift
	MLSETUP_INDEX_URL="http://127.0.0.1:9/simple/" "$b/install.sh" \
		--sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/icache" --no-progress "$@"
}

# tree_hash DIR: one hash over every path, type, mode, link target and
# file content under DIR (what "byte-identical" means in these tests).
tree_hash() {
	python3 - "$1" <<-'EOF'
	import hashlib, os, stat, sys
	h = hashlib.sha256()
	root = sys.argv[1]
	for d, dirs, files in os.walk(root):
	    dirs.sort()
	    for n in sorted(dirs + files):
	        p = os.path.join(d, n)
	        st = os.lstat(p)
	        h.update(os.path.relpath(p, root).encode() + b"\0" + oct(st.st_mode).encode())
	        if stat.S_ISLNK(st.st_mode):
	            h.update(os.readlink(p).encode())
	        elif stat.S_ISREG(st.st_mode):
	            h.update(open(p, "rb").read())
	print(h.hexdigest())
	EOF
}

# no_staging DIR: fails when a staging or moved-aside directory is left
# beside the targets in DIR.
no_staging() {
	left=$(ls -a "$1" | grep -E '\.mlsetup-(stage|old)-' || true)
	if [ -n "$left" ]; then
		echo "left behind in $1: $left" >&2
		return 1
	fi
}

# env_works ENV: the environment's python is the environment and the
# fixture packages import.
env_works() {
	expect_eq "$1" "$("$1/bin/python" -c 'import sys; print(sys.prefix)')" &&
	"$1/bin/python" -c 'import purepkg, platpkg' &&
	test -f "$1/.mlsetup-complete"
}

# record_ok ENV: every file each RECORD in ENV's site-packages lists with a
# hash has that sha256 and size (PEP 376/627), and there is at least one
# RECORD; prints how many files it checked.
record_ok() {
	"$1/bin/python" - <<-'EOF'
	import base64, csv, glob, hashlib, os, sys, sysconfig
	site = sysconfig.get_paths()["purelib"]
	records = glob.glob(os.path.join(site, "*.dist-info", "RECORD"))
	if not records:
	    sys.exit("no RECORD under %s" % site)
	n = 0
	for rec in records:
	    for row in csv.reader(open(rec, newline="")):
	        if not row or not row[1]:
	            continue
	        path = os.path.normpath(os.path.join(site, row[0]))
	        algo, want = row[1].split("=", 1)
	        data = open(path, "rb").read()
	        got = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
	        if got != want or len(data) != int(row[2]):
	            sys.exit("%s does not match %s" % (path, rec))
	        n += 1
	print("%d files match their RECORD" % n)
	EOF
}

# wheel_from_dir DIST VERSION TAG SRCDIR OUTDIR: builds a valid wheel
# (PEP 427: dist-info with METADATA, WHEEL, RECORD with sha256 and sizes)
# holding every file under SRCDIR, named DIST-VERSION-TAG.whl in OUTDIR.
wheel_from_dir() {
	python3 - "$@" <<-'EOF'
	import base64, hashlib, os, sys, zipfile
	dist, ver, tag, src, out = sys.argv[1:6]
	name = "%s-%s-%s.whl" % (dist, ver, tag)
	di = "%s-%s.dist-info" % (dist, ver)
	rows = []
	def add(z, arc, data):
	    z.writestr(arc, data)
	    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
	    rows.append("%s,sha256=%s,%d" % (arc, h, len(data)))
	with zipfile.ZipFile(os.path.join(out, name), "w", zipfile.ZIP_DEFLATED) as z:
	    for d, dirs, files in sorted(os.walk(src)):
	        dirs.sort()
	        for f in sorted(files):
	            if f.endswith(".pyc"):
	                continue
	            p = os.path.join(d, f)
	            add(z, os.path.relpath(p, src), open(p, "rb").read())
	    add(z, di + "/METADATA", b"Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist.encode(), ver.encode()))
	    purelib = b"true" if tag.endswith("none-any") else b"false"
	    add(z, di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: mlsetup-tests\nRoot-Is-Purelib: " + purelib + b"\nTag: " + tag.encode() + b"\n")
	    rows.append(di + "/RECORD,,")
	    z.writestr(di + "/RECORD", "\n".join(rows) + "\n")
	EOF
}

# dep_wheel NAME DIST VERSION [REQUIREMENT...]: a pure wheel in NAME/files
# whose METADATA has each REQUIREMENT as Requires-Dist.
dep_wheel() {
	python3 - "$TRASH/$1/files" "$2" "$3" py3-none-any "$@" <<-'EOF'
	import base64, hashlib, os, sys, zipfile
	out, dist, ver, tag = sys.argv[1:5]
	reqs = sys.argv[8:]
	di = "%s-%s.dist-info" % (dist, ver)
	rows = []
	def add(z, arc, data):
	    z.writestr(zipfile.ZipInfo(arc, (2024, 1, 1, 0, 0, 0)), data)
	    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
	    rows.append("%s,sha256=%s,%d" % (arc, h, len(data)))
	with zipfile.ZipFile(os.path.join(out, "%s-%s-%s.whl" % (dist, ver, tag)), "w") as z:
	    add(z, dist + "/__init__.py", ("VERSION = %r\n" % ver).encode())
	    md = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, ver)
	    md += "".join("Requires-Dist: %s\n" % r for r in reqs)
	    add(z, di + "/METADATA", md.encode())
	    add(z, di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: mlsetup-tests\n"
	                           "Root-Is-Purelib: true\nTag: %s\n" % tag).encode())
	    rows.append(di + "/RECORD,,")
	    z.writestr(zipfile.ZipInfo(di + "/RECORD", (2024, 1, 1, 0, 0, 0)), "\n".join(rows) + "\n")
	EOF
}
