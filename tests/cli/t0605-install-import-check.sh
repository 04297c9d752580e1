#!/bin/sh
# install's import check (src/verify/imports.c): every top-level module of
# every installed distribution is imported by the environment's own
# interpreter, in several interpreters at once (one per core, or
# MLSETUP_IMPORT_JOBS), each importing the modules it claims first; torch
# and what requires it in the GPU checks' interpreter, after its checks.
# An interpreter that dies leaves its modules to one more. Whatever the
# number of interpreters, the
# answers are the same: a requested package that does not import fails
# the install (exit 1) naming the module and its distribution, a
# dependency that does not import is only said, and every module is in the
# report once.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
"$SYSPY" -c 'import pip' 2>/dev/null || test_skip_all "the test CPython $SYSPY has no pip (its pip resolves)"
PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_CACHE_DIR PIP_NO_INPUT PIP_DISABLE_PIP_VERSION_CHECK
install_setup

# code_wheel DIST CODE [REQUIREMENT]: a wheel (version 1.0, or 9.0.0 for
# torch) whose module is CODE.
code_wheel() {
	v=1.0
	[ "$1" = torch ] && v=9.0.0
	dep_wheel web "$1" "$v" ${3:+"$3"} &&
		python3 - "$TRASH/web/files/$1-$v-py3-none-any.whl" "$1" "$2" "$v" <<-'EOF'
	import base64, hashlib, sys, zipfile
	path, dist, code, v = sys.argv[1:5]
	src = zipfile.ZipFile(path)
	items = {n: src.read(n) for n in src.namelist()}
	src.close()
	items[dist + "/__init__.py"] = code.encode()
	di = "%s-%s.dist-info" % (dist, v)
	rows = []
	for n, data in items.items():
	    if n != di + "/RECORD":
	        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
	        rows.append("%s,sha256=%s,%d" % (n, h, len(data)))
	rows.append(di + "/RECORD,,")
	items[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()
	with zipfile.ZipFile(path, "w") as z:
	    for n, data in items.items():
	        z.writestr(zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0)), data)
	EOF
}
# torch (a stand-in: no code of the real one) and a package that requires
# it, five plain packages, a requested package that does not import and a
# dependency that does not import. Each importable module writes its name
# and its interpreter's pid to $IMPORT_LOG.
logcode='import os
if os.environ.get("IMPORT_LOG"):
    open(os.environ["IMPORT_LOG"], "a").write("%s %d\n" % (__name__, os.getpid()))
'
code_wheel torch "$logcode"
code_wheel usestorch "$logcode" "torch>=9"
for p in pa pb pc pd pe; do
	code_wheel "$p" "$logcode"
done
code_wheel brokenreq 'raise ImportError("brokenreq is broken")'
# slowimp: with SLOW_IMPORT=FILE its import creates FILE, then waits until
# its parent (mlsetup) is gone, at most 20 s
code_wheel slowimp 'import os, time
if os.environ.get("SLOW_IMPORT"):
    open(os.environ["SLOW_IMPORT"], "w").close()
    p, t = os.getppid(), time.time()
    while os.getppid() == p and time.time() - t < 20:
        time.sleep(0.05)
'
code_wheel brokendep 'raise ImportError("brokendep is broken")'
dep_wheel web needsbroken 1.0 brokendep

# imports_with JOBS REQUIREMENT... : install them with JOBS interpreters
# into $TRASH/e-JOBS-<first>; prints the report's modules and answers.
imports_with() {
	j=$1
	shift
	printf -- "--index-url %s\n" "$web_url" >"req-$j.txt" &&
		printf "%s\n" "$@" >>"req-$j.txt" &&
		MLSETUP_IMPORT_JOBS=$j inst --python "$SYSPY" --manifest "req-$j.txt" \
			--target "$TRASH/e-$j-$1" >"out-$j" 2>"err-$j"
	rc=$?
	[ -f "$TRASH/e-$j-$1/mlsetup-report.json" ] &&
		json "$TRASH/e-$j-$1/mlsetup-report.json" \
			"\" \".join(sorted(\"%s:%s:%s\" % (m[\"distribution\"], m[\"module\"], m[\"ok\"]) for m in d[\"verification\"][\"imports\"]))"
	return $rc
}

test_expect_success 'one interpreter or four: every module imports once, the same answers' '
	imports_with 1 usestorch pa pb pc pd pe needsbroken >one &&
	imports_with 4 usestorch pa pb pc pd pe needsbroken >four &&
	expect_eq "$(cat one)" "$(cat four)" &&
	expect_eq "brokendep:brokendep:False needsbroken:needsbroken:True pa:pa:True pb:pb:True pc:pc:True pd:pd:True pe:pe:True torch:torch:True usestorch:usestorch:True" "$(cat four)" &&
	test_must_fail grep -q "brokendep is broken" err-4 &&
	expect_eq 1 "$(json "$TRASH/e-4-usestorch/mlsetup-report.json" "d[\"verification\"][\"failed_other\"]")"
'

test_expect_success 'a requested package that does not import fails the install, named with its module' '
	expect_exit 1 imports_with 3 brokenreq pa pb >three &&
	grep -q "warning: .import brokenreq. (brokenreq) failed: ImportError: brokenreq is broken" err-3 &&
	grep -q "brokenreq:brokenreq:False" three &&
	grep -q "pa:pa:True" three
'

# The GPU checks' interpreter (the torch smoke test) imports torch's share
# after its checks: torch and usestorch in it, torch loaded once. Every
# interpreter then claims what it imports (a file per module, in a
# directory under $TMPDIR that is gone afterwards), so every module is
# imported once, whichever interpreter gets to it (which one does depends
# on timing: on a loaded machine the GPU checks' interpreter may claim
# them all before a worker has started).
test_expect_success 'torch and what requires it share the GPU checks'"'"' interpreter; every module is imported once' '
	mkdir "$TRASH/tmp" &&
	TMPDIR="$TRASH/tmp" IMPORT_LOG="$TRASH/log" MLSETUP_IMPORT_JOBS=3 inst --python "$SYSPY" \
		--manifest req-4.txt --target "$TRASH/e-tr" >out 2>err &&
	tp=$(sed -n "s/^usestorch //p" log) &&
	grep -q "^torch $tp$" log &&
	for p in torch usestorch pa pb pc pd pe; do
		expect_eq 1 "$(grep -c "^$p " log)" || exit 1
	done &&
	expect_eq "" "$(ls "$TRASH/tmp")"
'

# manymods requires torch and has 900 top-level modules: more names than
# the GPU checks' command line takes (8 KiB of them), so nothing is handed
# to it and the import check's own interpreters import everything, torch's
# share in one of them (torch loads twice then: there and in the GPU checks).
python3 - "$TRASH/web/files" "$logcode" <<'EOF'
import base64, hashlib, os, sys, zipfile
out, code = sys.argv[1:3]
di = "manymods-1.0.dist-info"
rows, items = [], {}
for i in range(900):
    items["manymodule_%03d.py" % i] = code.encode()
items[di + "/METADATA"] = b"Metadata-Version: 2.1\nName: manymods\nVersion: 1.0\nRequires-Dist: torch>=9\n"
items[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: mlsetup-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
for n, data in items.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append("%s,sha256=%s,%d" % (n, h, len(data)))
items[di + "/RECORD"] = ("\n".join(rows + [di + "/RECORD,,"]) + "\n").encode()
with zipfile.ZipFile(os.path.join(out, "manymods-1.0-py3-none-any.whl"), "w") as z:
    for n, data in items.items():
        z.writestr(zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0)), data)
EOF
test_expect_success 'too many names for the GPU checks'"'"' command line: the import check imports them all' '
	printf -- "--index-url %s\nmanymods\npa\n" "$web_url" >req-many.txt &&
	IMPORT_LOG="$TRASH/log-many" MLSETUP_IMPORT_JOBS=2 inst --python "$SYSPY" \
		--manifest req-many.txt --target "$TRASH/e-many" >out 2>err &&
	expect_eq 901 "$(grep -vc "^torch " log-many)" &&
	expect_eq 901 "$(grep -v "^torch " log-many | cut -d" " -f1 | sort -u | wc -l)" &&
	expect_eq 2 "$(grep -c "^torch " log-many)" &&
	tp=$(sed -n "s/^manymodule_000 //p" log-many) &&
	grep -q "^torch $tp$" log-many &&
	expect_eq 0 "$(json "$TRASH/e-many/mlsetup-report.json" "d[\"verification\"][\"failed_other\"] + d[\"verification\"][\"failed_requested\"]")"
'

# usestorch ends the first interpreter that imports it (the GPU checks',
# after their result is out): its answer, and any other the GPU checks'
# interpreter did not give, comes from one more interpreter; the GPU checks
# keep their verdict and the install succeeds.
code_wheel usestorch 'import os
if not os.path.exists(os.environ["CRASH_ONCE"]):
    open(os.environ["CRASH_ONCE"], "w").close()
    os._exit(9)
if os.environ.get("IMPORT_LOG"):
    open(os.environ["IMPORT_LOG"], "a").write("%s %d\n" % (__name__, os.getpid()))
' "torch>=9"
test_expect_success 'an interpreter that dies in an import: what it left is imported again' '
	IMPORT_LOG="$TRASH/log2" CRASH_ONCE="$TRASH/crashed" inst --python "$SYSPY" \
		--manifest req-4.txt --target "$TRASH/e-crash" >out 2>err &&
	test -f "$TRASH/crashed" &&
	expect_eq 1 "$(grep -c "^usestorch " log2)" &&
	json "$TRASH/e-crash/mlsetup-report.json" \
		"[m[\"ok\"] for m in d[\"verification\"][\"imports\"] if m[\"module\"] == \"usestorch\"]" >ok &&
	expect_eq "[true]" "$(cat ok)" &&
	expect_eq pass "$(json "$TRASH/e-crash/mlsetup-report.json" "d[\"gpu_verification\"][\"verdict\"][\"status\"]")"
'

test_expect_success 'a run killed while it verifies leaves an "unverified" report; the next install completes it' '
	printf -- "--index-url %s\nslowimp\n" "$web_url" >req-slow.txt &&
	{
		(
			SLOW_IMPORT="$TRASH/slow-started" && export SLOW_IMPORT &&
			inst_exec --python "$SYSPY" --manifest req-slow.txt --target "$TRASH/e-slow" >out-s 2>err-s
		) &
		pid=$!
	} &&
	n=0 &&
	while [ ! -e "$TRASH/slow-started" ] && [ $n -lt 600 ]; do
		sleep 0.1 && n=$((n + 1))
	done &&
	test -e "$TRASH/slow-started" &&
	kill -9 $pid &&
	{ wait $pid || true; } &&
	test -f "$TRASH/e-slow/.mlsetup-complete" &&
	expect_eq unverified "$(json "$TRASH/e-slow/mlsetup-report.json" "d[\"status\"]")" &&
	inst --python "$SYSPY" --manifest req-slow.txt --target "$TRASH/e-slow" >out 2>err &&
	expect_eq ok "$(json "$TRASH/e-slow/mlsetup-report.json" "d[\"status\"]")"
'

test_done
