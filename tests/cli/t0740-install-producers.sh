#!/bin/sh
# Files the real producers wrote (tests/fixtures/producers, made by its
# make.sh against a loopback index on port 8765) install as they are,
# every byte checked: pip lock's pylock.toml (no sizes: the file server
# is asked), uv export's pylock.toml (inline wheels, a marker),
# pip-compile's and uv pip compile's hashed requirements (no mlsetup
# lines, `# via` comments, markers). The same two wheels every time.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
PROD="$top/tests/fixtures/producers"
mirror_start prod
cp "$PROD"/files/*.whl "$TRASH/prod/files/"

# fixture NAME: the producer's file, pointing at this test's mirror.
fixture() {
	sed "s/127\.0\.0\.1:8765/127.0.0.1:$prod_port/g" "$PROD/$1" >"$TRASH/$1"
}
# installed ENV: "filename sha256" of each installed wheel, sorted.
installed() {
	json "$1/mlsetup-report.json" 'sorted("%s %s" % (w["filename"], w["sha256"]) for w in d["installed"])'
}
WANT=$(for w in datapkg-0.5-py3-none-any.whl purepkg-1.0-py3-none-any.whl; do
	echo "$w $(sha256sum "$PROD/files/$w" | cut -d" " -f1)"
done | python3 -c 'import json, sys; print(json.dumps(sorted(l.strip() for l in sys.stdin)))')

test_expect_success 'pip lock: a pylock.toml without sizes installs' '
	fixture pylock.pip.toml &&
	grep -q "^created-by = \"pip\"" pylock.pip.toml && ! grep -q "^size" pylock.pip.toml &&
	inst --manifest pylock.pip.toml --target "$TRASH/env1" >out 2>err &&
	"$TRASH/env1/bin/python" -c "import purepkg, datapkg" &&
	expect_eq "$WANT" "$(installed "$TRASH/env1")"
'
test_expect_success 'uv export: a pylock.toml with inline wheels and a marker installs' '
	fixture pylock.uv.toml &&
	grep -q "^marker = \"sys_platform == '"'"'linux'"'"'\"" pylock.uv.toml &&
	inst --manifest pylock.uv.toml --target "$TRASH/env2" >out 2>err &&
	expect_eq "$WANT" "$(installed "$TRASH/env2")"
'
test_expect_success 'pip-compile --generate-hashes output installs from the index' '
	fixture requirements.pip-compile.txt &&
	grep -q "# via -r requirements.in" requirements.pip-compile.txt &&
	inst --manifest requirements.pip-compile.txt --index-url "$prod_url" \
		--target "$TRASH/env3" >out 2>err &&
	expect_eq "$WANT" "$(installed "$TRASH/env3")"
'
test_expect_success 'uv pip compile --generate-hashes output installs from the index' '
	fixture requirements.uv.txt &&
	inst --manifest requirements.uv.txt --index-url "$prod_url" --target "$TRASH/env4" \
		>out 2>err &&
	expect_eq "$WANT" "$(installed "$TRASH/env4")"
'
test_expect_success 'the environments lock files name the same files as the producers did' '
	for e in env1 env2 env3 env4; do
		"$SYSPY" -c "import sys, tomllib
d = tomllib.load(open(sys.argv[1], \"rb\"))
print(sorted((w[\"url\"].rsplit(\"/\", 1)[1], w[\"hashes\"][\"sha256\"]) for p in d[\"packages\"] for w in p[\"wheels\"]))" \
			"$TRASH/$e/pylock.toml" >"$e.files" || exit 1
	done &&
	cmp env1.files env2.files && cmp env1.files env3.files && cmp env1.files env4.files
'
test_done
