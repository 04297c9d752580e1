#!/bin/sh
# Planning for Windows (plan --platform windows-x86_64; on Windows itself
# detect says so): the manifests of manifests/windows/, named as on Linux,
# chosen from their headers alone, offline, with the Windows driver
# minimums; they pin no hashes, so plan says they are resolved and locked
# at first install, and once a first install kept its lock, later plans
# (and installs) take every file from it instead of resolving again.
. "$(dirname "$0")/lib.sh"
E="$SYSROOTS/empty"
W="--platform windows-x86_64"

test_expect_success 'RTX 5090 on 572.83: the Windows CUDA 12.8 manifest, offline, exit 0' '
	with_gpus rtx5090-572.json "$MLSETUP" plan --offline --json --sysroot "$E" $W >j &&
	expect_eq requirements_blackwell.txt "$(json j "d[\"manifest\"][\"name\"]")" &&
	expect_eq windows/requirements_blackwell.txt "$(json j "d[\"manifest\"][\"embedded_as\"]")" &&
	expect_eq 12.8 "$(json j "d[\"manifest\"][\"cuda\"]")" &&
	expect_eq windows-x86_64 "$(json j "d[\"machine\"][\"platform\"]")" &&
	expect_eq true "$(json j "d[\"needs_resolution\"]")" &&
	json j "d[\"resolution\"]" | grep -q "at first install" &&
	expect_eq 0 "$(json j "len(d[\"files\"])")"
'
test_expect_success 'RTX 3090 on 551.61: the Windows CUDA 12.4 manifest' '
	with_gpus rtx3090-551.json "$MLSETUP" plan --offline --json --sysroot "$E" $W --python 3.11 >j &&
	expect_eq requirements.txt "$(json j "d[\"manifest\"][\"name\"]")" &&
	expect_eq windows/requirements.txt "$(json j "d[\"manifest\"][\"embedded_as\"]")" &&
	expect_eq 12.4 "$(json j "d[\"manifest\"][\"cuda\"]")" &&
	json j "d[\"python\"][\"name\"]" | grep -q "^cpython-3.11.*-windows-x86_64"
'
test_expect_success 'the same GPU and driver on Linux get the Linux manifest, hashed' '
	with_gpus rtx5090-572.json "$MLSETUP" plan --offline --json --sysroot "$E" >j &&
	expect_eq requirements_blackwell.txt "$(json j "d[\"manifest\"][\"embedded_as\"]")" &&
	expect_eq false "$(json j "d[\"needs_resolution\"]")"
'
test_expect_success 'human plan says the files are resolved and locked at first install' '
	with_gpus rtx3090-551.json "$MLSETUP" plan --offline --sysroot "$E" $W >out &&
	grep -q "^machine   windows-x86_64, driver 551.61" out &&
	grep -q "^manifest  requirements.txt - .*(Windows)" out &&
	grep -q "resolved at first install: the shipped manifest .requirements.txt. (windows/requirements.txt) pins versions without hashes" out &&
	grep -q "trust on first use" out && grep -q "pylock.toml" out
'
test_expect_success 'a driver below the CUDA 12 floor gets the Windows minimum as advice' '
	with_gpus rtx3090-527.json expect_exit 6 "$MLSETUP" plan --offline --sysroot "$E" $W >out 2>err &&
	grep -q "hint: upgrade the NVIDIA driver to 551.61 or newer" err
'
test_expect_success '--manifest NAME on Windows means the Windows manifest' '
	with_gpus rtx5090-572.json "$MLSETUP" plan --offline --json --sysroot "$E" $W \
		--manifest requirements >j &&
	expect_eq windows/requirements.txt "$(json j "d[\"manifest\"][\"embedded_as\"]")"
'
test_expect_success '--require-hashes refuses the Windows manifests and says what to do' '
	with_gpus rtx5090-572.json expect_exit 1 "$MLSETUP" plan --offline --sysroot "$E" $W \
		--require-hashes 2>err &&
	grep -q "windows/requirements.txt.* pins versions without hashes" err &&
	grep -q "pylock.toml" err
'
test_expect_success 'a platform plan cannot name is a usage error naming it' '
	expect_exit 2 "$MLSETUP" plan --offline --sysroot "$E" --platform beos-m68k 2>err &&
	grep -q "beos-m68k" err
'
PY=$(sh "$top/tests/fixtures/find_python.sh" 2>/dev/null) || PY=""
PYXY=""
[ -n "$PY" ] && PYXY=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case $PYXY in
3.11 | 3.12) ;;
*) test_skip "needs a CPython 3.11 or 3.12 (the Windows manifests' versions) to probe" ;;
esac
test_expect_success 'the lock a first install kept is what later plans take, asking pip nothing' '
	tag=cp$(echo "$PYXY" | tr -d .) &&
	lock=$("$PY" - "$top" "$PY" "$tag" <<-\EOF
	import hashlib, os, sys
	top, py, tag = sys.argv[1:4]
	text = open(top + "/manifests/windows/requirements.txt", "rb").read()
	key = "embedded:windows/requirements.txt:%s\n%s\nwindows-x86_64" % (
	    hashlib.sha256(text).hexdigest(), os.path.realpath(py))
	path = "cache/resolved/requirements.txt-%s.pylock.toml" % hashlib.sha256(key.encode()).hexdigest()[:12]
	os.makedirs("cache/resolved")
	out = ["lock-version = \"1.0\"", "created-by = \"mlsetup\"", ""]
	for i, (n, v, f) in enumerate([
	        ("torch", "2.6.0+cu124", "torch-2.6.0+cu124-%s-%s-win_amd64.whl" % (tag, tag)),
	        ("colorama", "0.4.6", "colorama-0.4.6-py2.py3-none-any.whl")]):
	    out += ["[[packages]]", "name = \"%s\"" % n, "version = \"%s\"" % v,
	            "wheels = [{name = \"%s\", url = \"file:///nonexistent/%s\", size = %d, "
	            "hashes = {sha256 = \"%064x\"}}]" % (f, f, 1000 + i, i + 1), ""]
	out += ["[tool.mlsetup]", "requested = [\"torch\"]"]
	open(path, "w").write("\n".join(out) + "\n")
	print(path)
	EOF
	) &&
	with_gpus rtx3090-551.json "$MLSETUP" plan --sysroot "$E" $W --python "$PY" \
		--cache-dir cache >out 2>&1 &&
	grep -q "the lock of its first install, $lock, pins every file" out &&
	grep -q "^lock      $lock (the lock of .requirements.txt. on this machine" out &&
	with_gpus rtx3090-551.json "$MLSETUP" plan --sysroot "$E" $W --python "$PY" \
		--cache-dir cache --json >j &&
	expect_eq false "$(json j "d[\"needs_resolution\"]")" &&
	expect_eq "torch-2.6.0+cu124-$tag-$tag-win_amd64.whl colorama-0.4.6-py2.py3-none-any.whl" \
		"$(json j "\" \".join(f[\"filename\"] for f in d[\"files\"])")" &&
	expect_eq "1000 1001" "$(json j "\" \".join(str(f[\"size\"]) for f in d[\"files\"])")" &&
	expect_eq "True False" "$(json j "\" \".join(str(f[\"requested\"]) for f in d[\"files\"])")"
'
test_done
