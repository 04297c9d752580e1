#!/bin/sh
# Every install writes <env>/pylock.toml (PEP 751): each installed wheel
# with its URL, size and sha256, the interpreter and a [tool.mlsetup]
# table. `install --manifest <env>/pylock.toml` rebuilds the same
# environment from another cache (the same wheel files, every hash
# checked, no index asked), a warm cache still knows every URL, a tampered
# lock is refused, and `export` gives the lock or a hashed requirements
# file that installs too.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
wheel_manifest "$TRASH/m.txt" $GOOD_WHEELS

# wheels_of ENV: "filename sha256" of every installed wheel, sorted (from
# the report, which the install tests already trust).
wheels_of() {
	json "$1/mlsetup-report.json" 'sorted("%s %s" % (w["filename"], w["sha256"]) for w in d["installed"])'
}

# lock_py FILE EXPR: EXPR over the lock file parsed by tomllib (as d; the
# test CPython has it, 3.11+, where python3 may be older).
lock_py() {
	"$SYSPY" -c 'import json, sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1" "$2"
}

test_expect_success 'install writes pylock.toml, a PEP 751 lock tomllib reads' '
	inst --manifest m.txt --target "$TRASH/env" >out 2>err &&
	env_works "$TRASH/env" &&
	l="$TRASH/env/pylock.toml" &&
	expect_eq 1.0 "$(lock_py "$l" "d[\"lock-version\"]")" &&
	expect_eq mlsetup "$(lock_py "$l" "d[\"created-by\"]")" &&
	expect_eq "==$PYXY.*" "$(lock_py "$l" "d[\"requires-python\"]")" &&
	expect_eq "[\"datapkg\", \"platpkg\", \"purepkg\"]" "$(lock_py "$l" "[p[\"name\"] for p in d[\"packages\"]]")"
'
test_expect_success 'every wheel has its URL, size and sha256' '
	l="$TRASH/env/pylock.toml" &&
	for w in $GOOD_WHEELS; do
		f="$TRASH/web/files/$w" &&
		expect_eq "[\"$web_url\"]" "[\"$web_url\"]" &&
		got=$(lock_py "$l" "[(x[\"url\"], x[\"size\"], x[\"hashes\"][\"sha256\"]) for p in d[\"packages\"] for x in p[\"wheels\"] if x[\"name\"] == \"$w\"]") &&
		expect_eq "[[\"http://127.0.0.1:$web_port/files/$w\", $(wc -c <"$f" | tr -d " "), \"$(sha256sum "$f" | cut -d" " -f1)\"]]" "$got" || exit 1
	done
'
test_expect_success '[tool.mlsetup] names the manifest, what was requested and the interpreter' '
	l="$TRASH/env/pylock.toml" &&
	expect_eq m.txt "$(lock_py "$l" "d[\"tool\"][\"mlsetup\"][\"manifest\"]")" &&
	expect_eq "[\"datapkg\", \"platpkg\", \"purepkg\"]" "$(lock_py "$l" "sorted(d[\"tool\"][\"mlsetup\"][\"requested\"])")" &&
	expect_eq managed "$(lock_py "$l" "d[\"tool\"][\"mlsetup\"][\"python\"][\"source\"]")" &&
	expect_eq "$("$TRASH/env/bin/python" -c "import platform; print(platform.python_version())")" \
		"$(lock_py "$l" "d[\"tool\"][\"mlsetup\"][\"python\"][\"version\"]")" &&
	expect_eq "$PYXY" "$(lock_py "$l" "d[\"tool\"][\"mlsetup\"][\"header\"][\"python\"]")" &&
	expect_eq "[]" "$(lock_py "$l" "d[\"tool\"][\"mlsetup\"][\"gpus\"]")"
'
command -v git >/dev/null 2>&1 || test_skip "no git to make a project repository"
test_expect_success 'a manifest in a git repository records the project commit' '
	mkdir -p "$TRASH/gitproj" && cp "$TRASH/m.txt" "$TRASH/gitproj/" &&
	(cd "$TRASH/gitproj" && git init -q && git add m.txt &&
		git -c user.name=t -c user.email=t@t commit -q -m m) &&
	inst --manifest "$TRASH/gitproj/m.txt" --target "$TRASH/genv" >out 2>err &&
	expect_eq "$(git -C "$TRASH/gitproj" rev-parse HEAD)" \
		"$(lock_py "$TRASH/genv/pylock.toml" "d[\"tool\"][\"mlsetup\"][\"commit\"]")" &&
	expect_eq "null" "$(lock_py "$TRASH/env/pylock.toml" "d[\"tool\"][\"mlsetup\"].get(\"commit\")")"
'
test_expect_success 'the lock rebuilds the same environment from an empty cache, asking no index' '
	cp "$TRASH/env/pylock.toml" "$TRASH/elsewhere.pylock.toml" &&
	faults web "{\"/simple/purepkg/\": \"status:500\", \"/simple/platpkg/\": \"status:500\", \"/simple/datapkg/\": \"status:500\"}" &&
	inst --manifest "$TRASH/elsewhere.pylock.toml" --target "$TRASH/env2" \
		--cache-dir "$TRASH/cache2" --index-url "$web_url" >out 2>err &&
	env_works "$TRASH/env2" &&
	expect_eq "$(wheels_of "$TRASH/env")" "$(wheels_of "$TRASH/env2")" &&
	expect_eq 3 "$(json "$TRASH/env2/mlsetup-report.json" "sum(1 for w in d[\"installed\"] if not w[\"from_cache\"])")" &&
	expect_eq 0 "$(requests web /simple/purepkg/)" &&
	expect_eq 0 "$(requests web /simple/platpkg/)" &&
	faults web "{}"
'
test_expect_success 'a warm cache still knows where every wheel is served' '
	inst --manifest m.txt --target "$TRASH/env3" >out 2>err &&
	expect_eq 0 "$(json "$TRASH/env3/mlsetup-report.json" "d[\"counters\"][\"downloaded_files\"]")" &&
	! grep -q "without a URL" err &&
	expect_eq "$(lock_py "$TRASH/env/pylock.toml" "d[\"packages\"]")" \
		"$(lock_py "$TRASH/env3/pylock.toml" "d[\"packages\"]")"
'
test_expect_success 'a lock whose hash was changed is refused (exit 3), nothing is built' '
	h=$(sha256sum "$TRASH/web/files/purepkg-1.0-py3-none-any.whl" | cut -d" " -f1) &&
	bad=$(echo "$h" | tr 0-9a-f 1-9a-f0) &&
	sed "s/$h/$bad/" "$TRASH/env/pylock.toml" >"$TRASH/bad.pylock.toml" &&
	expect_exit 3 inst --manifest "$TRASH/bad.pylock.toml" --target "$TRASH/env4" \
		--cache-dir "$TRASH/cache4" 2>err &&
	grep -q "hash mismatch" err && test ! -e "$TRASH/env4" && no_staging "$TRASH"
'
test_expect_success 'wheels given by a path relative to the lock, and a lock for other platforms' '
	mkdir -p "$TRASH/proj/wheelhouse" &&
	cp "$TRASH/web/files/purepkg-1.0-py3-none-any.whl" "$TRASH/proj/wheelhouse/" &&
	f="$TRASH/web/files/purepkg-1.0-py3-none-any.whl" &&
	cat >"$TRASH/proj/pylock.toml" <<-EOF &&
	lock-version = "1.0"
	created-by = "hand"
	[[packages]]
	name = "purepkg"
	version = "1.0"
	wheels = [{ path = "wheelhouse/purepkg-1.0-py3-none-any.whl", hashes = { sha256 = "$(sha256sum "$f" | cut -d" " -f1)" } }]
	EOF
	inst --manifest "$TRASH/proj/pylock.toml" --target "$TRASH/env5" \
		--cache-dir "$TRASH/cache5" >out 2>err &&
	"$TRASH/env5/bin/python" -c "import purepkg" &&
	sed "s/^created-by.*/environments = [\"sys_platform == '"'"'win32'"'"'\"]/" "$TRASH/proj/pylock.toml" >"$TRASH/proj/pylock.win.toml" &&
	expect_exit 6 inst --manifest "$TRASH/proj/pylock.win.toml" --target "$TRASH/env6" 2>err &&
	grep -q "for other environments" err
'
test_expect_success 'a package with only an sdist is refused, naming the lock line' '
	cat >"$TRASH/sdist.pylock.toml" <<-EOF &&
	lock-version = "1.0"

	[[packages]]
	name = "purepkg"
	version = "1.0"
	sdist = { url = "http://127.0.0.1:1/purepkg-1.0.tar.gz", hashes = { sha256 = "$(printf %064d 0)" } }
	EOF
	expect_exit 6 inst --manifest "$TRASH/sdist.pylock.toml" --target "$TRASH/env7" 2>err &&
	grep -q "sdist.pylock.toml'"'"' line 3: purepkg 1.0 has no wheel (only a sdist)" err &&
	grep -q "pip wheel" err && test ! -e "$TRASH/env7"
'
test_expect_success 'malformed TOML is refused with the file and line' '
	printf "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nname = \"y\"\n" >"$TRASH/dup.pylock.toml" &&
	expect_exit 1 inst --manifest "$TRASH/dup.pylock.toml" --target "$TRASH/env8" 2>err &&
	grep -q "dup.pylock.toml'"'"' line 4: key '"'"'name'"'"' is defined twice" err
'
test_expect_success 'export prints the lock as written, or as hashed requirements that install' '
	"$MLSETUP" export --target "$TRASH/env" >exported.toml &&
	cmp exported.toml "$TRASH/env/pylock.toml" &&
	"$MLSETUP" export --target "$TRASH/env" --format requirements -o "$TRASH/req.txt" >out &&
	grep -q "^purepkg==1.0" "$TRASH/req.txt" &&
	expect_eq "datapkg platpkg purepkg" "$(sed -n "s/^# mlsetup: requested = //p" "$TRASH/req.txt" | tr " " "\n" | sort | xargs)" &&
	inst --manifest "$TRASH/req.txt" --index-url "$web_url" --target "$TRASH/env9" >out 2>err &&
	expect_eq "$(wheels_of "$TRASH/env")" "$(wheels_of "$TRASH/env9")" &&
	python3 -m pip download --no-deps --require-hashes -r "$TRASH/req.txt" -d dl \
		--index-url "$web_url" --only-binary :all: --python-version "$PYXY" >pip.log 2>&1 &&
	test "$(ls dl | wc -l)" -eq 3
'
test_expect_success 'export of a directory that is no environment says what is missing' '
	mkdir -p "$TRASH/notenv" &&
	expect_exit 1 "$MLSETUP" export --target "$TRASH/notenv" 2>err &&
	grep -q "has no pylock.toml" err &&
	expect_exit 2 "$MLSETUP" export --target "$TRASH/env" --format yaml 2>err
'
test_done
