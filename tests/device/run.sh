#!/bin/sh
# run.sh - the prepared real-GPU check: on a machine with NVIDIA GPUs and no
# network, compares what `mlsetup detect` says with nvidia-smi, runs verify's
# driver-level SAXPY kernel on every GPU, audits the machine's own CUDA
# libraries and any installed torch (detected GPUs, then --arch of them) and
# the fatbin fixtures, and writes ONE JSON result (schema
# mlsetup.device-check/1) with each step's command, exit code, seconds, key
# fields and pass/fail/skip with its reason. Exit 0 when every check passed.
# tests/device/README.md says how to run it and what each step checks.
#
#   sh tests/device/run.sh [RESULT.json]
#
# RESULT.json defaults to $OUT/device-result.json when $OUT is set, else
# tests/device/result-<UTC date>.json. Environment:
#   MLSETUP=PATH                 the mlsetup binary (default: build/mlsetup,
#                                else `make build/mlsetup`, else
#                                dist/mlsetup-<arch>-linux-gnu)
#   MLSETUP_DEVICE_PYTHON        the interpreter to look for torch with
#                                (default python3)
#   MLSETUP_DEVICE_CUDA_LIBS     space-separated paths to audit instead of the
#                                machine's CUDA libraries (set but empty: skip)
#   MLSETUP_DEVICE_VERIFY_ARGS   extra arguments for `mlsetup verify`
#   MLSETUP_DEVICE_BUDGET_S      seconds for the whole run (default 230);
#                                each step gets at most 120 and what is left
# PATH and LD_LIBRARY_PATH are used as given (the CLI test puts the fake
# driver there: tests/cli/t0960-device-script.sh). Needs python3 to judge
# the results; never needs the network.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
budget=${MLSETUP_DEVICE_BUDGET_S:-230}
t_start=$(date +%s)
stamp=$(date -u +%Y%m%dT%H%M%SZ)

if [ -n "${1:-}" ]; then
	result=$1
elif [ -n "${OUT:-}" ]; then
	result=$OUT/device-result.json
else
	result=$top/tests/device/result-$stamp.json
fi
case $result in /*) ;; *) result=$(pwd)/$result ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/mlsetup-device.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'rm -rf "$work"; exit 130' INT TERM

say() {
	printf 'device-check: %s\n' "$*" >&2
}

# Seconds left of the budget.
remaining() {
	echo $((budget - ($(date +%s) - t_start)))
}

# run_step NAME LIMIT CMD...: runs CMD under `timeout` (LIMIT seconds, or
# what is left of the budget) with stdin from /dev/null; keeps its argv,
# stdout, stderr, exit status and start/end times in $work/NAME.* for the
# judge. With less than 10 s left it only records why it did not run.
run_step() {
	name=$1 limit=$2
	shift 2
	echo "$name" >>"$work/order"
	: >"$work/$name.argv"
	for a in "$@"; do
		printf '%s\n' "$a" >>"$work/$name.argv"
	done
	left=$(($(remaining) - 5))
	[ "$left" -lt "$limit" ] && limit=$left
	if [ "$limit" -lt 10 ]; then
		echo "not run: the time budget of $budget s is spent" >"$work/$name.skip"
		say "$name: skipped (time budget spent)"
		return 0
	fi
	echo "$limit" >"$work/$name.limit"
	t0=$(date +%s.%N)
	timeout -k 5 "$limit" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
	rc=$?
	echo "$rc $t0 $(date +%s.%N)" >"$work/$name.rc"
	say "$name: exit $rc"
}

# skip_step NAME REASON / fail_step NAME REASON: a step that did not run.
skip_step() {
	echo "$1" >>"$work/order"
	echo "$2" >"$work/$1.skip"
	say "$1: skipped ($2)"
}
fail_step() {
	echo "$1" >>"$work/order"
	echo "$2" >"$work/$1.fail"
	say "$1: failed ($2)"
}

# runs BIN: true when BIN executes and answers --version.
runs() {
	[ -x "$1" ] && timeout 30 "$1" --version >/dev/null 2>&1
}

# Picks the mlsetup binary into $bin and says how into $how.
find_mlsetup() {
	bin="" how=""
	if [ -n "${MLSETUP:-}" ]; then
		case $MLSETUP in /*) bin=$MLSETUP ;; *) bin=$(pwd)/$MLSETUP ;; esac
		how="given: MLSETUP=$MLSETUP"
		runs "$bin" && return 0
		bin="" how="MLSETUP=$MLSETUP does not run (mlsetup --version failed)"
		return 1
	fi
	if runs "$top/build/mlsetup"; then
		bin=$top/build/mlsetup how="existing build/mlsetup"
		return 0
	fi
	if command -v make >/dev/null 2>&1; then
		jobs=$(nproc 2>/dev/null || echo 2)
		say "building: make -j$jobs build/mlsetup"
		printf '%s\n' make -C "$top" "-j$jobs" build/mlsetup >"$work/build.argv"
		t0=$(date +%s.%N)
		timeout -k 5 150 make -C "$top" "-j$jobs" build/mlsetup \
			>"$work/build.out" 2>"$work/build.err" </dev/null
		echo "$? $t0 $(date +%s.%N)" >"$work/build.rc"
		if runs "$top/build/mlsetup"; then
			bin=$top/build/mlsetup how="built now: make build/mlsetup"
			return 0
		fi
	fi
	rel=$top/dist/mlsetup-$(uname -m)-linux-gnu
	if runs "$rel"; then
		bin=$rel how="release binary dist/${rel##*/}"
		return 0
	fi
	return 1
}

if ! command -v python3 >/dev/null 2>&1; then
	mkdir -p "$(dirname "$result")"
	printf '{"schema": "mlsetup.device-check/1", "date": "%s", "ok": false, "reason": "python3 is needed to judge the results and is not on PATH", "steps": []}\n' \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$result"
	say "python3 is not on PATH: nothing checked; wrote $result"
	exit 1
fi

if find_mlsetup; then
	say "using $bin ($how)"
	timeout 30 "$bin" --version >"$work/version.out" 2>&1
else
	say "no mlsetup binary: ${how:-build/mlsetup does not run, make failed, no dist/ binary}"
fi

# json_get STEP EXPR: EXPR (Python, the step's stdout JSON as d), or nothing.
json_get() {
	python3 -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(eval(sys.argv[2]))
except Exception:
    pass' "$work/$1.out" "$2" 2>/dev/null
}

if [ -n "$bin" ]; then
	# 1. detect against nvidia-smi.
	if command -v nvidia-smi >/dev/null 2>&1; then
		run_step nvidia-smi 60 nvidia-smi \
			--query-gpu=index,name,driver_version,compute_cap,memory.total \
			--format=csv,noheader
	else
		fail_step nvidia-smi "nvidia-smi is not on PATH: nothing to compare detect with"
	fi
	run_step detect 120 "$bin" detect --json
	archs=$(json_get detect '",".join(dict.fromkeys(g["sm"] for g in d["gpus"] if g.get("sm")))')
	# The detected driver, so that the --arch audits judge PTX by the same
	# driver as the detected ones (without it, PTX would count wherever a
	# driver new enough could JIT it).
	driver=$(json_get detect 'd["driver"]["version"] or ""')
	drv_opt=${driver:+--driver}

	# 2. torch, if it imports: its site-packages are audited below, and verify
	# runs torch's checks with that interpreter after the SAXPY.
	py=${MLSETUP_DEVICE_PYTHON:-python3}
	run_step torch-import 90 "$py" -c 'import os, torch; print(torch.__version__); print(os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))))'
	site=""
	if [ "$(cut -d' ' -f1 "$work/torch-import.rc" 2>/dev/null)" = 0 ]; then
		site=$(tail -n 1 "$work/torch-import.out")
	fi

	# 3. The driver-level SAXPY on every GPU. No command runs the smoke test
	# alone: verify --python runs it, then torch's checks with that
	# interpreter; only its driver_smoke part is judged here.
	# shellcheck disable=SC2086 # MLSETUP_DEVICE_VERIFY_ARGS is a word list
	run_step saxpy 120 "$bin" verify --python "$py" --json --no-progress \
		${MLSETUP_DEVICE_VERIFY_ARGS:-}

	# 4. The machine's CUDA libraries (each real file or directory once).
	if [ -n "${MLSETUP_DEVICE_CUDA_LIBS+x}" ]; then
		cands=$MLSETUP_DEVICE_CUDA_LIBS
	else
		cands=$(echo /usr/local/cuda*/lib64 /usr/local/cuda*/lib \
			/usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib/aarch64-linux-gnu/libcuda.so* \
			/usr/lib64/libcuda.so* /usr/lib/wsl/lib/libcuda.so*)
	fi
	: >"$work/cuda.paths"
	for p in $cands; do
		[ -e "$p" ] || continue
		r=$(readlink -f "$p") || continue
		grep -qxF "$r" "$work/cuda.paths" || echo "$r" >>"$work/cuda.paths"
	done
	set --
	while IFS= read -r p; do
		set -- "$@" "$p"
	done <"$work/cuda.paths"
	if [ $# -eq 0 ]; then
		skip_step audit-cuda-libs "no CUDA libraries found (/usr/local/cuda*/lib64, libcuda.so*)"
		skip_step audit-cuda-libs-arch "no CUDA libraries found"
	else
		run_step audit-cuda-libs 120 "$bin" audit --json "$@"
		if [ -n "$archs" ]; then
			# shellcheck disable=SC2086 # drv_opt: empty or --driver
			run_step audit-cuda-libs-arch 120 "$bin" audit --json --arch "$archs" \
				$drv_opt ${driver:+"$driver"} "$@"
		else
			skip_step audit-cuda-libs-arch "detect found no GPU to name with --arch"
		fi
	fi

	# 5. torch's site-packages (torch and the CUDA libraries of its wheels).
	if [ -z "$site" ]; then
		why=$(tail -n 1 "$work/torch-import.err" 2>/dev/null)
		skip_step audit-torch "torch does not import with $py: ${why:-see torch-import}"
		skip_step audit-torch-arch "torch does not import with $py"
	else
		run_step audit-torch 120 "$bin" audit --json "$site"
		if [ -n "$archs" ]; then
			# shellcheck disable=SC2086 # drv_opt: empty or --driver
			run_step audit-torch-arch 120 "$bin" audit --json --arch "$archs" \
				$drv_opt ${driver:+"$driver"} "$site"
		else
			skip_step audit-torch-arch "detect found no GPU to name with --arch"
		fi
	fi

	# 6. The fatbin fixtures, answered for the detected GPUs as named with
	# --arch and no driver: the README's table is the audit's answer
	# without a driver (their PTX, ISA 9.0 from nvcc 13.0, counts on the
	# condition that the driver supports CUDA 13.0).
	if [ -n "$archs" ]; then
		run_step audit-fixtures 120 "$bin" audit --json --arch "$archs" \
			"$top"/tests/fixtures/fatbin/*.so
	else
		run_step audit-fixtures 120 "$bin" audit --json "$top"/tests/fixtures/fatbin/*.so
	fi

	# 7. The torch choice for these GPUs and this driver: plan a loose
	# `torch` against the synthetic builds of make_torch_layout.py, served
	# on loopback in PyTorch's index layout (a default index plus whl/cu126,
	# whl/cu128, whl/cu130, whl/cpu), as t0761 does with simulated GPUs.
	tl=$work/layout
	mkdir -p "$tl" "$work/proj"
	printf 'torch\n' >"$work/proj/requirements.txt"
	if python3 "$top/tests/fixtures/make_torch_layout.py" "$tl/wheels" >/dev/null 2>"$work/layout.err" &&
		python3 "$top/tests/mirror/torch_layout.py" "$tl/wheels" "$tl" >"$tl/layout.txt" 2>>"$work/layout.err"; then
		python3 "$top/tests/mirror/server.py" --root "$tl" --port-file "$tl/port" \
			2>"$tl/server.log" &
		spid=$!
		i=0
		while [ ! -s "$tl/port" ] && [ $i -lt 100 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		port=$(cat "$tl/port" 2>/dev/null)
		if [ -n "$port" ]; then
			# Hermetic: pip reads no configuration of this machine.
			PIP_CONFIG_FILE=/dev/null
			export PIP_CONFIG_FILE
			unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
			run_step torch-choice 120 "$bin" plan --json \
				--python 3.12 --manifest "$work/proj/requirements.txt" \
				--cache-dir "$work/cache" --index-url "http://127.0.0.1:$port/simple/" \
				--torch-index-url "http://127.0.0.1:$port/whl/"
		else
			fail_step torch-choice "the loopback index did not start: $(tail -n 1 "$tl/server.log")"
		fi
		kill "$spid" 2>/dev/null
	else
		fail_step torch-choice "the synthetic torch layout was not made: $(tail -n 1 "$work/layout.err")"
	fi
fi

# The judge: reads every step's files and writes the result.
DC_WORK=$work DC_RESULT=$result DC_BIN=$bin DC_HOW=$how DC_TOP=$top \
	DC_BUDGET=$budget DC_START=$t_start DC_ARCHS=${archs:-} DC_DRIVER=${driver:-} python3 - <<'EOF'
import csv
import datetime
import fnmatch
import json
import os
import platform
import time

W = os.environ["DC_WORK"]
TOP = os.environ["DC_TOP"]
ARCHS = [a for a in os.environ["DC_ARCHS"].split(",") if a]
REQUIRED = ["nvidia-smi", "detect", "saxpy", "audit-fixtures"]


def read(name, ext):
    try:
        with open(os.path.join(W, name + "." + ext), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def load_json(name):
    try:
        return json.loads(read(name, "out") or "")
    except ValueError:
        return None


def tail(text, n=800):
    text = (text or "").strip()
    return text[-n:]


def record(name):
    """A step's command, exit code and seconds as run_step left them."""
    s = {"name": name, "command": None, "exit_code": None, "seconds": None,
         "status": None, "reason": "", "fields": {}}
    argv = read(name, "argv")
    if argv is not None:
        s["command"] = argv.splitlines()
    rc = read(name, "rc")
    if rc:
        code, t0, t1 = rc.split()
        s["exit_code"] = int(code)
        s["seconds"] = round(float(t1) - float(t0), 3)
        s["timeout_s"] = int(read(name, "limit") or 0) or None
    return s


smi_gpus, smi_driver = [], None


def judge_smi(s):
    global smi_driver
    if s["exit_code"] != 0:
        return "fail", "nvidia-smi exited %s: %s" % (
            s["exit_code"], tail(read("nvidia-smi", "out") or read("nvidia-smi", "err"), 300))
    for row in csv.reader((read("nvidia-smi", "out") or "").splitlines(), skipinitialspace=True):
        if len(row) != 5:
            continue
        mem = row[4].split()[0] if row[4] else ""
        smi_gpus.append({"index": int(row[0]), "name": row[1], "driver_version": row[2],
                         "compute_cap": row[3],
                         "memory_mib": int(mem) if mem.isdigit() else row[4]})
    s["fields"] = {"gpus": smi_gpus}
    if not smi_gpus:
        return "fail", "nvidia-smi listed no GPU"
    smi_driver = smi_gpus[0]["driver_version"]
    return "pass", "%d GPU%s, driver %s" % (len(smi_gpus), "" if len(smi_gpus) == 1 else "s",
                                          smi_driver)


det_gpus = []


def judge_detect(s):
    d = load_json("detect")
    if s["exit_code"] != 0 or d is None:
        return "fail", "detect exited %s without JSON: %s" % (s["exit_code"],
                                                             tail(read("detect", "err"), 300))
    drv = d.get("driver") or {}
    for g in d.get("gpus") or []:
        det_gpus.append({k: g.get(k) for k in ("index", "name", "compute_capability", "sm",
                                               "architecture", "memory_mib", "source")})
    mine = {"driver_version": drv.get("version"), "cuda_version": drv.get("cuda_version"),
            "driver_source": drv.get("source"), "gpus": det_gpus,
            "probes": [{"source": p.get("source"), "status": p.get("status"),
                        "detail": p.get("detail")} for p in d.get("probes") or []]}
    s["fields"] = {"mlsetup": mine,
                   "nvidia_smi": {"driver_version": smi_driver, "gpus": smi_gpus}}
    if not smi_gpus:
        return "fail", "nvidia-smi gave nothing to compare with"
    problems = []
    agree = {"driver_version": drv.get("version") == smi_driver,
             "gpu_count": len(det_gpus) == len(smi_gpus)}
    if not agree["driver_version"]:
        problems.append("driver %s, nvidia-smi says %s" % (drv.get("version"), smi_driver))
    if not agree["gpu_count"]:
        problems.append("%d GPUs, nvidia-smi lists %d" % (len(det_gpus), len(smi_gpus)))
    by_index = {g["index"]: g for g in det_gpus}
    cc_ok = names_ok = mem_ok = True
    for g in smi_gpus:
        m = by_index.get(g["index"])
        if m is None:
            cc_ok = False
            problems.append("GPU %d (%s) missing" % (g["index"], g["name"]))
            continue
        if m["compute_capability"] != g["compute_cap"]:
            cc_ok = False
            problems.append("GPU %d compute capability %s, nvidia-smi says %s" % (
                g["index"], m["compute_capability"], g["compute_cap"]))
        names_ok = names_ok and m["name"] == g["name"]
        mem_ok = mem_ok and m["memory_mib"] == g["memory_mib"]
    agree.update(compute_capability=cc_ok, names=names_ok, memory_mib=mem_ok)
    s["fields"]["agree"] = agree
    if problems:
        return "fail", "detect disagrees with nvidia-smi: " + "; ".join(problems)
    return "pass", "driver %s and the compute capability of all %d GPUs agree (%s)" % (
        smi_driver, len(smi_gpus), ", ".join(g["compute_cap"] for g in smi_gpus))


torch_info = {}


def judge_torch(s):
    if s["exit_code"] != 0:
        err = (read("torch-import", "err") or "").strip().splitlines()
        return "skip", "torch does not import: %s" % (err[-1] if err else "exit %s" % s["exit_code"])
    lines = (read("torch-import", "out") or "").strip().splitlines()
    torch_info.update(version=lines[0] if lines else None,
                      site_packages=lines[-1] if lines else None)
    s["fields"] = dict(torch_info)
    return "pass", "torch %s in %s" % (torch_info["version"], torch_info["site_packages"])


def judge_saxpy(s):
    s["fields"]["note"] = ("mlsetup has no command that runs only the driver-level smoke "
                           "test: verify --python runs it on every GPU, then torch's checks "
                           "with that interpreter; only driver_smoke is judged here")
    d = load_json("saxpy")
    if d is None or "driver_smoke" not in d:
        return "fail", "verify exited %s without a driver_smoke result: %s" % (
            s["exit_code"], tail(read("saxpy", "err"), 300))
    ds = d["driver_smoke"]
    gpus = [{k: g.get(k) for k in ("index", "name", "cc", "status", "detail", "ptx_fallback",
                                    "kernel_ms", "gbps", "mismatches", "error")}
            for g in ds.get("gpus") or []]
    fw = d.get("framework") or {}
    vd = d.get("verdict") or {}
    s["fields"].update(
        library=ds.get("library"), kernel=ds.get("kernel"), cuda_version=ds.get("cuda_version"),
        status=ds.get("status"), detail=ds.get("detail"), error=ds.get("error"), gpus=gpus,
        framework={"class": fw.get("class"), "torch": fw.get("torch"),
                   "detail": fw.get("detail")} if fw else None,
        verdict={"status": vd.get("status"), "summary": vd.get("summary")} if vd else None)
    want = len(smi_gpus) if smi_gpus else len(det_gpus)
    passed = [g for g in gpus if g["status"] == "pass"]
    extra = "" if s["exit_code"] == 0 else "; verify exited %d: %s" % (
        s["exit_code"], vd.get("summary") or "")
    if ds.get("status") == "pass" and len(passed) == len(gpus) == want and want > 0:
        return "pass", "SAXPY exact on all %d GPUs%s" % (want, extra)
    failed = ["GPU %s (%s): %s" % (g["index"], g["name"], g["detail"] or g["status"])
              for g in gpus if g["status"] != "pass"]
    return "fail", "driver smoke %s: %d of %d GPUs passed (nvidia-smi lists %d)%s%s" % (
        ds.get("status"), len(passed), len(gpus), want,
        "; " + "; ".join(failed) if failed else "", extra)


def audit_fields(d, limit=30):
    files = d.get("files") or []
    cannot = {f["path"]: f.get("why") for f in files
              if any(v is False for v in (f.get("runs_on") or {}).values())}
    errors = {f["path"]: f["error"] for f in files if f.get("error")}
    return {"devices": d.get("devices"), "devices_from": d.get("devices_from"),
            "libraries_scanned": d.get("libraries_scanned"),
            "libraries_with_cuda": d.get("libraries_with_cuda"),
            "libraries_unverified": d.get("libraries_unverified"), "errors": d.get("errors"),
            "runs_on": d.get("runs_on"), "why": d.get("why"),
            "cannot_run": dict(list(cannot.items())[:limit]),
            "error_files": dict(list(errors.items())[:limit])}


def judge_audit(name, detected_run=None):
    def judge(s):
        d = load_json(name)
        if d is None:
            return "fail", "audit exited %s without JSON: %s" % (s["exit_code"],
                                                                tail(read(name, "err"), 300))
        s["fields"] = audit_fields(d)
        problems = []
        if s["exit_code"] not in (0, 5):
            problems.append("exit %s (a path could not be audited)" % s["exit_code"])
        if d.get("errors"):
            problems.append("%d malformed: %s" % (d["errors"], "; ".join(
                "%s: %s" % kv for kv in list(s["fields"]["error_files"].items())[:3])))
        if d.get("devices") != ARCHS:
            problems.append("asked about %s, detect found %s" % (d.get("devices"), ARCHS))
        want_from = "detected" if detected_run is None else "arch"
        if d.get("devices_from") != want_from:
            problems.append("devices from %s, not %s" % (d.get("devices_from"), want_from))
        if detected_run is not None:
            base = load_json(detected_run)
            if base is not None:
                mine = {f["path"]: f.get("runs_on") for f in d.get("files") or []}
                theirs = {f["path"]: f.get("runs_on") for f in base.get("files") or []}
                diff = sorted(p for p in set(mine) | set(theirs) if mine.get(p) != theirs.get(p))
                s["fields"]["differs_from_" + detected_run] = diff[:30]
                if diff:
                    problems.append("%d answers differ from the run without --arch" % len(diff))
        if problems:
            return "fail", "; ".join(problems)
        n_cannot = len([f for f in d.get("files") or []
                        if any(v is False for v in (f.get("runs_on") or {}).values())])
        return "pass", "%s libraries, %s with CUDA code, %s unverified; %s cannot run on %s" % (
            d.get("libraries_scanned"), d.get("libraries_with_cuda"),
            d.get("libraries_unverified"), n_cannot, ",".join(ARCHS))
    return judge


def readme_table():
    """The expected answers of tests/fixtures/fatbin/README.md: {(glob, cc): value}."""
    path = os.path.join(TOP, "tests/fixtures/fatbin/README.md")
    rows, ccs, inside = {}, None, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("## "):
                inside = line.startswith("## What the audit answers")
                continue
            if not inside or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if ccs is None:
                ccs = cells[1:]
                continue
            if set(cells[0]) <= set("-: "):
                continue
            for pat in (p.strip() for p in cells[0].split(",")):
                for cc, cell in zip(ccs, cells[1:]):
                    v = {"R": True, "-": False, "U": "unverified"}.get(cell[:1])
                    if v is not None:
                        rows[(pat, cc)] = v
    return rows, ccs or []


def judge_fixtures(s):
    d = load_json("audit-fixtures")
    if d is None:
        return "fail", "audit exited %s without JSON: %s" % (
            s["exit_code"], tail(read("audit-fixtures", "err"), 300))
    fixtures = sorted(p for p in os.listdir(os.path.join(TOP, "tests/fixtures/fatbin"))
                      if p.endswith(".so"))
    files = {os.path.basename(f["path"]): f.get("runs_on") or {} for f in d.get("files") or []}
    problems = []
    if s["exit_code"] not in (0, 1, 5):
        problems.append("exit %s" % s["exit_code"])
    if d.get("devices") != ARCHS or d.get("devices_from") not in ("arch", "detected"):
        problems.append("asked about %s (%s), detect found %s" % (
            d.get("devices"), d.get("devices_from"), ARCHS))
    if sorted(files) != fixtures:
        problems.append("%d files answered for %d fixtures" % (len(files), len(fixtures)))
    try:
        table, columns = readme_table()
    except OSError as e:
        table, columns = {}, []
        problems.append("cannot read the fixtures README: %s" % e)
    ccs = {a: "%d.%d" % (int(a[3:-1]), int(a[-1])) for a in ARCHS
           if a.startswith("sm_") and a[3:].isdigit()}
    checked, mismatches = 0, []
    for fname, runs_on in sorted(files.items()):
        for sm, cc in ccs.items():
            want = [v for (pat, c), v in table.items() if c == cc and fnmatch.fnmatch(fname, pat)]
            if not want:
                continue
            checked += 1
            if runs_on.get(sm) != want[0]:
                mismatches.append("%s on %s: %s, README says %s" % (fname, sm, runs_on.get(sm),
                                                                    want[0]))
    unexpected = sorted(set(ccs.values()) - set(columns))
    s["fields"] = {"devices": d.get("devices"), "devices_from": d.get("devices_from"),
                   "files": len(files), "errors": d.get("errors"),
                   "expected_from": "tests/fixtures/fatbin/README.md (What the audit answers)",
                   "answers_checked": checked, "ccs_without_expectations": unexpected,
                   "mismatches": mismatches, "runs_on": files}
    if mismatches:
        problems.append("%d answers differ from the README: %s" % (
            len(mismatches), "; ".join(mismatches[:3])))
    if problems:
        return "fail", "; ".join(problems)
    return "pass", "%d fixtures answered; %d answers match the README%s" % (
        len(files), checked, "; no expected answers for cc %s" % ", ".join(unexpected)
        if unexpected else "")


# The Linux builds of tests/fixtures/make_torch_layout.py: (version, index,
# CUDA, the SASS in its libtorch_cuda.so as cuobjdump -lelf lists it; no
# PTX). The minimum drivers are NVIDIA's (manifests/drivers.json): any
# 12.x build runs from 525.60.13 by minor-version compatibility when the
# GPU has SASS, a 13.x build needs the CUDA 13 floor 580.65.06.
LAYOUT = [("9.0.0", "default", "13.0", (75, 80, 86, 90, 100, 120)),
          ("8.5.0", "default", "12.8", (70, 75, 80, 86, 90, 100, 120)),
          ("9.0.0+cu126", "cu126", "12.6", (50, 60, 70, 75, 80, 86, 90)),
          ("8.5.0+cu126", "cu126", "12.6", (50, 60, 70, 75, 80, 86, 90)),
          ("9.0.0+cu130", "cu130", "13.0", (75, 80, 86, 90, 100, 120)),
          ("8.5.0+cu128", "cu128", "12.8", (70, 75, 80, 86, 90, 100, 120))]
FLOOR = {"12": (525, 60, 13), "13": (580, 65, 6)}


def driver_tuple(v):
    try:
        return tuple(int(x) for x in (v or "").split("."))
    except ValueError:
        return ()


def expected_choice(sms, driver):
    """The build the rule must pick, worked out here without mlsetup: the
    newest version with SASS for every GPU (same major, minor at most the
    GPU's) and a driver at the CUDA major's floor; the default index first,
    then the highest CUDA."""
    def runs(build):
        _, _, cuda, sass = build
        if driver_tuple(driver) < FLOOR[cuda.split(".")[0]]:
            return False
        return all(any(a // 10 == sm // 10 and a % 10 <= sm % 10 for a in sass) for sm in sms)
    ok = [b for b in LAYOUT if runs(b)]
    if not ok:
        return None
    key = lambda b: (tuple(int(x) for x in b[0].split("+")[0].split(".")),
                     b[1] == "default", tuple(int(x) for x in b[2].split(".")))
    return max(ok, key=key)


def judge_choice(s):
    d = load_json("torch-choice")
    if d is None or not d.get("torch_choice"):
        return "fail", "plan exited %s without a torch_choice: %s" % (
            s["exit_code"], tail(read("torch-choice", "err"), 300))
    tc = d["torch_choice"]
    sms = [int(a[3:]) for a in ARCHS if a.startswith("sm_") and a[3:].isdigit()]
    driver = smi_driver or os.environ.get("DC_DRIVER")
    want = expected_choice(sms, driver)
    s["fields"] = {k: tc.get(k) for k in ("version", "backend", "index_url", "reason",
                                          "rejected")}
    s["fields"]["expected"] = list(want[:3]) if want else None
    s["fields"]["expected_from"] = ("the layout's builds (make_torch_layout.py) and NVIDIA's "
                                    "driver floors, worked out by this judge")
    if want is None:
        return "skip", "no synthetic build runs on %s with driver %s: nothing to compare" % (
            ",".join(ARCHS), driver)
    problems = []
    if tc.get("version") != want[0]:
        problems.append("chose %s, the rule gives %s" % (tc.get("version"), want[0]))
    on_default = "/whl/" not in (tc.get("index_url") or "")
    if on_default != (want[1] == "default"):
        problems.append("from %s, the rule gives the %s index" % (tc.get("index_url"), want[1]))
    if s["exit_code"] != 0:
        problems.append("plan exited %s" % s["exit_code"])
    if problems:
        return "fail", "; ".join(problems)
    return "pass", "torch %s (%s) for %s with driver %s: %s" % (
        tc.get("version"), tc.get("backend"), ",".join(ARCHS), driver, tc.get("reason"))


JUDGES = {"torch-choice": judge_choice, "nvidia-smi": judge_smi, "detect": judge_detect, "torch-import": judge_torch,
          "saxpy": judge_saxpy, "audit-cuda-libs": judge_audit("audit-cuda-libs"),
          "audit-cuda-libs-arch": judge_audit("audit-cuda-libs-arch", "audit-cuda-libs"),
          "audit-torch": judge_audit("audit-torch"),
          "audit-torch-arch": judge_audit("audit-torch-arch", "audit-torch"),
          "audit-fixtures": judge_fixtures}

try:
    with open(os.path.join(W, "order")) as f:
        order = f.read().split()
except OSError:
    order = []

steps = []
for name in order:
    s = record(name)
    if read(name, "skip") is not None:
        s["status"], s["reason"] = "skip", read(name, "skip").strip()
    elif read(name, "fail") is not None:
        s["status"], s["reason"] = "fail", read(name, "fail").strip()
    elif s["exit_code"] in (124, 137):
        s["status"] = "fail"
        s["reason"] = "timed out after %s s" % s.get("timeout_s")
        if name == "nvidia-smi":
            judge_smi(s)
    else:
        s["status"], s["reason"] = JUDGES[name](s)
    if s["status"] == "fail" and s["exit_code"] is not None:
        s["stderr_tail"] = tail(read(name, "err"))
    steps.append(s)

bin_path = os.environ["DC_BIN"]
version = (read("version", "out") or "").strip()
mlsetup = {"path": bin_path or None, "how": os.environ["DC_HOW"] or None,
           "version": version.splitlines()[0] if version else None,
           "version_full": version or None}
build = record("build")
if build["command"]:
    build["stderr_tail"] = tail(read("build", "err"))
    mlsetup["build"] = {k: build[k] for k in ("command", "exit_code", "seconds", "stderr_tail")}

by_name = {s["name"]: s for s in steps}
problems = []
if not bin_path:
    problems.append("no mlsetup binary: %s" % (
        os.environ["DC_HOW"] or "build/mlsetup does not run, make failed, no dist/ binary"))
problems += ["%s: %s" % (s["name"], s["reason"]) for s in steps if s["status"] == "fail"]
problems += ["%s did not pass" % n for n in REQUIRED
             if bin_path and n in by_name and by_name[n]["status"] != "pass"]
problems += ["%s did not run" % n for n in REQUIRED if bin_path and n not in by_name]

os_name = None
try:
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
except OSError:
    pass
u = platform.uname()
doc = {
    "schema": "mlsetup.device-check/1",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "host": {"uname": "%s %s %s %s" % (u.system, u.release, u.version, u.machine),
             "os": os_name, "cpus": os.cpu_count(),
             "gpus": [g["name"] for g in smi_gpus] or [g["name"] for g in det_gpus],
             "driver_version": smi_driver or (by_name.get("detect", {}).get("fields", {})
                                               .get("mlsetup", {}).get("driver_version")),
             "torch": torch_info or None},
    "mlsetup": mlsetup,
    "budget_s": int(os.environ["DC_BUDGET"]),
    "seconds": round(time.time() - int(os.environ["DC_START"]), 1),
    "steps": steps,
    "ok": not problems,
    "problems": problems,
}
path = os.environ["DC_RESULT"]
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
with open(path, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
for s in steps:
    print("device-check: %-20s %-4s %s" % (s["name"], s["status"], s["reason"][:160]))
print("device-check: %s in %.0f s; result in %s" % ("ok" if doc["ok"] else "FAILED",
                                                    doc["seconds"], path))
raise SystemExit(0 if doc["ok"] else 1)
EOF
