#!/usr/bin/env python3
"""matrix.py - the GPU truth matrix (`make e2e-matrix`; not part of `make check`):
for every torch release the package index serves from 2.6.0 to the newest
(Linux x86_64, the default build, CPython 3.11), does `mlsetup audit` say the
right thing about each GPU class, sm_70 to sm_121?

For each release: `pip download torch==X` (its whole stack of wheels; no
install, the audit reads wheels in place), the build's CUDA from
torch/version.py in the wheel, a typical driver for that CUDA (DRIVERS
below), then

- mlsetup: `audit --json --all --arch <every class> --driver <driver>` over
  the stack's wheels (an mlsetup without --driver is run without it, and the
  output says so);
- the oracle, independent of mlsetup's tables: `cuobjdump --list-elf` /
  `--list-ptx` of every torch/lib/*.so in the torch wheel that carries device
  code, judged here under NVIDIA's rules (runs_here below). A GPU class is
  supported iff every one of those libraries has code that runs there;
- torch's own release table PYTORCH_RELEASES_CODE_CC (torch/cuda/__init__.py,
  in recent releases only), its row for the build's CUDA and x86_64 against
  libtorch_cuda.so's SASS;
- the cuobjdump cross-check of every library of the stack (crosscheck.py's
  functions), one Markdown file per stack.

A cell (release x GPU) the oracle supports must come out "runs" from
mlsetup (overall runs_on true, no file in state "fails"), else it is a FALSE
ALARM; a cell the oracle does not support must come out false with the
lacking torch libraries among the failing files, else it is MISSED. Writes
matrix.md, matrix.json and crosscheck/torch-X.md into --out-dir, prints
"N cells, F false alarms, M missed" and exits 1 when F or M is not 0 (2 on a
tool failure).

  matrix.py [--store DIR] [--only 2.15.0,...] [--mlsetup PATH] [--cuobjdump PATH]
            [--out-dir DIR] [--min-free-gb N]

--store DIR keeps the wheels, one directory of wheels by file name shared by
all stacks, with the list of each stack's files (DIR/stacks/torch-X.txt) and
cuobjdump's answers (DIR/cuobjdump-cache.json), so a re-run downloads and
lists nothing again; without it each stack goes to a temporary directory
that is deleted after use. When the disk's free space falls under
--min-free-gb (default 15), the store keeps only the wheels that carry CUDA
code (torch, nvidia-*, triton, cuda-*) and then deletes each stack after use.
The index is pip's own configuration; cuobjdump, unless --cuobjdump names
one, comes from the nvidia-cuda-cuobjdump wheel fetched with pip, as
tests/e2e/run.sh does. Python 3 standard library plus pip.
"""
import argparse
import ast
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck  # noqa: E402

GPUS = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110",
        "sm_120", "sm_121"]
# A typical Linux driver for each CUDA release a torch build uses: a real
# published version of the branch that CUDA release shipped with.
DRIVERS = {"12.4": "550.54.15", "12.6": "560.35.03", "12.8": "570.172.08",
           "13.0": "580.95.05", "13.2": "595.45.04"}
MIN_VERSION = (2, 6, 0)
TORCH_LIB = re.compile(r"^torch/lib/[^/]+\.so(\.\d+)*$")
CUDA_WHEEL = re.compile(r"^(torch|nvidia_|nvidia-|triton|cuda_|cuda-)", re.I)
RULES = ("NVIDIA's rules, applied here to cuobjdump's listings: SASS sm_XY runs on compute "
         "capability X.Z with Z >= Y (same major); sm_XYa only on exactly X.Y; sm_XYf on its "
         "family (same major, minor >= Y), which `cuobjdump --list-elf` names without the "
         "`f` (sm_120), so its names are taken as plain sm_XY, which gives the same answer; "
         "PTX compute_XY is JIT-compiled for any X.Y or newer (the driver used is one of the "
         "build's own CUDA release, which can JIT that release's PTX). torch's libraries "
         "carry no PTX in these stacks.")


def log(msg):
    print("matrix: " + msg, file=sys.stderr, flush=True)


def cc_of(name):
    """'sm_121' / 'sm_90a' / 'compute_100f' -> (major, minor, suffix)."""
    m = re.match(r"^(?:sm|compute)_(\d+)(\d)([a-z]?)$", name)
    if not m:
        raise ValueError("not an architecture name: " + name)
    return int(m.group(1)), int(m.group(2)), m.group(3)


def runs_here(sass, ptx, gpu):
    """The entry of sass/ptx (cuobjdump's names) that runs on gpu (sm_XY),
    or None: the rules in RULES."""
    gmaj, gmin, _ = cc_of(gpu)
    for s in sass:
        maj, mn, suffix = cc_of(s)
        if suffix == "a":
            if (maj, mn) == (gmaj, gmin):
                return s
        elif maj == gmaj and gmin >= mn:
            return s
    for p in ptx:
        maj, mn, suffix = cc_of(p)
        if suffix == "a":
            ok = (maj, mn) == (gmaj, gmin)
        elif suffix == "f":
            ok = maj == gmaj and gmin >= mn
        else:
            ok = (gmaj, gmin) >= (maj, mn)
        if ok:
            return p
    return None


def vkey(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def pip_cmd(python):
    return [python, "-m", "pip"]


def torch_versions(python):
    """Every torch release from 2.6.0 on that pip sees for this interpreter."""
    p = subprocess.run(pip_cmd(python) + ["index", "versions", "torch"], capture_output=True,
                       text=True)
    m = re.search(r"^Available versions:\s*(.+)$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        sys.exit("matrix: `pip index versions torch` failed: %s" % (p.stderr.strip()
                                                                   or p.stdout.strip()))
    vs = [v.strip() for v in m.group(1).split(",")]
    vs = [v for v in vs if re.fullmatch(r"\d+\.\d+\.\d+", v) and vkey(v) >= MIN_VERSION]
    return sorted(vs, key=vkey)


def fetch_cuobjdump(where, python):
    """cuobjdump from the nvidia-cuda-cuobjdump wheel (as tests/e2e/run.sh)."""
    tool = os.path.join(where, "nvidia", "cu13", "bin", "cuobjdump")
    if os.access(tool, os.X_OK):
        return tool
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    p = subprocess.run(pip_cmd(python) + [
        "download", "--no-deps", "--only-binary", ":all:", "--python-version", "3.11",
        "--platform", "manylinux2014_x86_64", "-d", where, "nvidia-cuda-cuobjdump"],
        capture_output=True, text=True)
    wheels = [f for f in os.listdir(where) if f.endswith(".whl")]
    if p.returncode != 0 or not wheels:
        sys.exit("matrix: cannot fetch nvidia-cuda-cuobjdump: " + p.stderr.strip())
    with zipfile.ZipFile(os.path.join(where, wheels[0])) as z:
        z.extractall(where)
    os.chmod(tool, 0o755)
    return tool


def free_gb(path):
    return shutil.disk_usage(path).free / 1e9


def download_stack(version, store, python):
    """(wheel paths of torch==version's stack in store, seconds, downloaded?).
    With a list from an earlier run whose files are all there, no pip at all."""
    listing = os.path.join(store, "stacks", "torch-%s.txt" % version)
    if os.path.exists(listing):
        names = [n.strip() for n in open(listing) if n.strip()]
        paths = [os.path.join(store, n) for n in names]
        if names and all(os.path.exists(p) for p in paths):
            return paths, 0.0, False
    t0 = time.time()
    p = subprocess.run(pip_cmd(python) + ["download", "--progress-bar", "off", "-d", store,
                                          "torch==" + version], capture_output=True, text=True)
    secs = time.time() - t0
    if p.returncode != 0:
        sys.exit("matrix: pip download torch==%s failed:\n%s" % (version, p.stderr[-3000:]))
    names = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(?:Saved|File was already downloaded)\s+(.+\.whl)\s*$", line)
        if m and os.path.basename(m.group(1)) not in names:
            names.append(os.path.basename(m.group(1)))
    got = re.search(r"^Successfully downloaded (.+)$", p.stdout, re.M)
    if not got or len(got.group(1).split()) != len(names) \
            or not any(n.startswith("torch-") for n in names):
        sys.exit("matrix: cannot tell the files of torch==%s from pip's output:\n%s"
                 % (version, p.stdout[-3000:]))
    os.makedirs(os.path.dirname(listing), exist_ok=True)
    with open(listing, "w") as fh:
        fh.write("".join(n + "\n" for n in sorted(names)))
    return [os.path.join(store, n) for n in sorted(names)], secs, True


def prune_store(store):
    """Deletes the wheels without CUDA code from store; returns bytes freed."""
    freed = 0
    for n in os.listdir(store):
        if n.endswith(".whl") and not CUDA_WHEEL.match(n):
            p = os.path.join(store, n)
            freed += os.path.getsize(p)
            os.unlink(p)
    return freed


def torch_cuda(zf):
    """The CUDA version in torch/version.py, or ""."""
    text = zf.read("torch/version.py").decode("utf-8", "replace")
    m = re.search(r"^cuda\s*(?::[^=\n]*)?=\s*['\"]([^'\"]*)['\"]", text, re.M)
    return m.group(1) if m else ""


def release_table(zf):
    """PYTORCH_RELEASES_CODE_CC from torch/cuda/__init__.py, or None."""
    try:
        tree = ast.parse(zf.read("torch/cuda/__init__.py").decode("utf-8", "replace"))
    except (KeyError, SyntaxError):
        return None
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else \
            node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "PYTORCH_RELEASES_CODE_CC" for t in targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def judge_table(table, cuda, sass):
    """torch's release table row for cuda/x86_64 against libtorch_cuda.so's SASS."""
    if table is None:
        return {"present": False, "agrees": None,
                "text": "absent (no PYTORCH_RELEASES_CODE_CC in this release)"}
    row, flat = table.get(cuda), False
    if isinstance(row, dict):
        row = row.get("x86_64")
    elif row is not None:
        flat = True  # older releases: one set per CUDA version, every host
    if row is None:
        return {"present": True, "row": None, "agrees": None,
                "text": "no row for CUDA %s (rows: %s)" % (cuda, ", ".join(sorted(table)))}
    row = sorted(row)
    by_table = {g: runs_here(["sm_%d" % c for c in row], [], g) is not None for g in GPUS}
    by_sass = {g: runs_here(sass, [], g) is not None for g in GPUS}
    base = sorted({cc_of(s)[0] * 10 + cc_of(s)[1] for s in sass})
    extra = [s for s in sass if s[-1] in "af" or (cc_of(s)[0] * 10 + cc_of(s)[1]) not in row]
    missing = [c for c in row if c not in base]
    agrees = by_table == by_sass
    text = "{%s}%s: %s" % (", ".join(str(c) for c in row),
                           " (not keyed by host: one set for x86_64 and aarch64)" if flat else "",
                         "agrees" if agrees else "DIFFERS on " +
                         ", ".join(g for g in GPUS if by_table[g] != by_sass[g]))
    if extra:
        text += "; SASS also has " + " ".join(extra)
    if missing:
        text += "; no SASS for " + ", ".join(str(c) for c in missing)
    return {"present": True, "row": row, "by_host": not flat, "agrees": agrees, "text": text,
            "gpus_by_table": [g for g in GPUS if by_table[g]],
            "gpus_by_sass": [g for g in GPUS if by_sass[g]]}


def run_audit(mlsetup, wheels, driver):
    """(audit JSON, driver passed?) of `mlsetup audit` over the stack."""
    base = [mlsetup, "audit", "--json", "--all", "--arch", ",".join(GPUS)]
    for with_driver in (True, False):
        cmd = base + (["--driver", driver] if with_driver else []) + wheels
        p = subprocess.run(cmd, capture_output=True, text=True)
        if with_driver and p.returncode == 2 and "--driver" in p.stderr:
            log("this mlsetup has no --driver; auditing without it")
            continue
        if p.returncode not in (0, 5):
            sys.exit("matrix: mlsetup audit failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
        return json.loads(p.stdout), with_driver, p.returncode
    raise AssertionError("unreachable")


def file_state(f, gpu):
    """A file's state for gpu: the new `state`, else from runs_on; None for
    a file without CUDA code (no answer for gpu)."""
    st = (f.get("state") or {}).get(gpu)
    if st:
        return st
    v = (f.get("runs_on") or {}).get(gpu)
    if v is None:
        return None
    return "runs" if v is True else "fails" if v is False else str(v)


def member_of(path):
    return path.split("!", 1)[1] if "!" in path else path


def short(path):
    return os.path.basename(member_of(path))


def judge_cells(audit, torch_wheel, oracle_libs):
    """{gpu: cell} from mlsetup's audit and the oracle's torch libraries."""
    files = audit.get("files", [])
    by_path = {f["path"]: f for f in files}
    cells = {}
    for g in GPUS:
        lacking = sorted(m for m, lib in oracle_libs.items() if lib["runs_by"][g] is None)
        unknown = sorted(m for m, lib in oracle_libs.items() if lib["failure"])
        failing = (audit.get("failing") or {}).get(g)
        if failing is None:
            failing = [f["path"] for f in files if file_state(f, g) == "fails"]
        unverified = sum(file_state(f, g) == "unverified" for f in files)
        runs = (audit.get("runs_on") or {}).get(g) is True
        torch_failing = sorted(member_of(p) for p in failing
                               if os.path.basename(p.split("!", 1)[0]) == torch_wheel
                               and TORCH_LIB.match(member_of(p)))
        mine = {member_of(f["path"]): f for f in files
                if os.path.basename(f["path"].split("!", 1)[0]) == torch_wheel}
        runs_by = {m: {"oracle": lib["runs_by"][g],
                       "mlsetup": (mine.get(m, {}).get("runs_by") or {}).get(g)}
                   for m, lib in oracle_libs.items()}
        cell = {"oracle": "unknown" if unknown else "supported" if not lacking else "not",
                "lacking": lacking, "torch_runs_by": runs_by,
                "mlsetup_runs_on": runs, "failing": failing,
                "unverified": unverified,
                "why": (audit.get("why") or {}).get(g, ""),
                "failing_why": {p: (by_path.get(p, {}).get("why") or {}).get(g, "")
                                for p in failing}}
        if unknown:
            cell["verdict"], cell["text"] = "UNKNOWN", "cuobjdump fails on " + ", ".join(
                os.path.basename(m) for m in unknown)
        elif not lacking:
            if runs and not failing:
                cell["verdict"] = "runs"
                cell["text"] = "runs" + (" (%d unverified)" % unverified if unverified else "")
            else:
                cell["verdict"] = "FALSE ALARM"
                names = [short(p) for p in failing] or ["(no failing file named)"]
                cell["text"] = "FALSE ALARM: " + ", ".join(names[:2]) + \
                    (" (+%d)" % (len(names) - 2) if len(names) > 2 else "")
        else:
            missed = [m for m in lacking if m not in torch_failing]
            names = [os.path.basename(m) for m in lacking]
            if not runs and not missed:
                cell["verdict"] = "NOT"
                cell["text"] = "NOT: " + names[0] + \
                    (" (+%d)" % (len(names) - 1) if len(names) > 1 else "")
            else:
                cell["verdict"] = "MISSED"
                cell["missed"] = missed
                cell["text"] = "MISSED: " + ", ".join(os.path.basename(m) for m in missed)
        cells[g] = cell
    return cells


def oracle(zf, torch_whl, lister):
    """{member: {sass, ptx, failure, runs_by}} for torch/lib/*.so with device code."""
    libs = {}
    for member in sorted(zf.namelist()):
        if not TORCH_LIB.match(member):
            continue
        sass, ptx, failure = lister.lists(zf, torch_whl, member)
        if not (sass or ptx or failure):
            continue
        libs[member] = {"sass": sass, "ptx": ptx, "failure": failure,
                        "runs_by": {g: runs_here(sass, ptx, g) for g in GPUS}}
    return libs


def machine():
    u = platform.uname()
    return "%s %s %s, %d cores" % (u.system, u.release, u.machine, os.cpu_count() or 0)


def first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
    except OSError:
        return "?"
    return out.splitlines()[0].strip() if out.strip() else "?"


def write_markdown(path, res):
    with open(path, "w") as out:
        out.write("# GPU truth matrix: torch releases x GPU classes\n\n")
        out.write("Generated by `make e2e-matrix` (tests/e2e/matrix.py) on %s (%s), %s.  \n"
                  % (res["machine"], res["python"], res["date"]))
        out.write("mlsetup: %s.  \ncuobjdump: %s.  \n" % (res["mlsetup"], res["cuobjdump"]))
        out.write("Stacks: `pip download torch==X` (Linux x86_64, default build, CPython 3.11), "
                  "audited in place with `mlsetup audit --json --all --arch <each class>"
                  " --driver <driver>`%s.\n\n"
                  % ("" if res["driver_passed"] else
                     " (this mlsetup has no --driver: audited without it)"))
        s = res["summary"]
        out.write("**%d cells, %d false alarms, %d missed**%s%s.\n\n" % (
            s["cells"], s["false_alarms"], s["missed"],
            ", %d unknown" % s["unknown"] if s["unknown"] else "",
            "" if res["complete"] else " (run not finished: the stacks so far)"))
        out.write("Oracle: `cuobjdump --list-elf` / `--list-ptx` of every torch/lib/*.so in the "
                  "torch wheel that carries device code; a class is supported iff each of them "
                  "has code that runs there. " + RULES + "\n\n")
        out.write("Cells: `runs` (mlsetup: runs, N files unverified), `NOT: lib` (the oracle "
                  "and mlsetup agree that torch's lib has no code for it: a true finding), "
                  "`FALSE ALARM: lib` (the oracle says it runs, mlsetup names lib as failing), "
                  "`MISSED: lib` (torch's lib has no code there, mlsetup does not say so).\n\n")
        out.write("| torch | CUDA | driver | %s | torch's release table (x86_64) |\n"
                  % " | ".join(GPUS))
        out.write("|---|---|---|%s---|\n" % ("---|" * len(GPUS)))
        for st in res["stacks"]:
            label = st["version"] + (" (build %s)" % st["build_tag"] if st["build_tag"] else "")
            out.write("| %s | %s | %s | %s | %s |\n" % (
                label, st["cuda"], st["driver"],
                " | ".join(st["cells"][g]["text"] for g in GPUS), st["release_table"]["text"]))
        out.write("\n## Torch's CUDA libraries (cuobjdump)\n\n| torch | library | SASS | PTX |\n"
                  "|---|---|---|---|\n")
        for st in res["stacks"]:
            for m, lib in st["oracle"].items():
                out.write("| %s | %s | %s | %s |\n" % (
                    st["version"], m, " ".join(lib["sass"]) or "none",
                    " ".join(lib["ptx"]) or "none" + (" (cuobjdump: %s)" % lib["failure"]
                                                      if lib["failure"] else "")))
        bad = [(st, g) for st in res["stacks"] for g in GPUS
               if st["cells"][g]["verdict"] not in ("runs", "NOT")]
        if bad:
            out.write("\n## False alarms, missed and unknown cells\n\n"
                      "| torch | GPU | verdict | failing (mlsetup's why) |\n|---|---|---|---|\n")
            for st, g in bad:
                c = st["cells"][g]
                detail = "; ".join("%s: %s" % (member_of(p), c["failing_why"].get(p, ""))
                                   for p in c["failing"]) or c["why"]
                out.write("| %s | %s | %s | %s |\n" % (st["version"], g, c["text"],
                                                       detail.replace("|", "\\|")))
        out.write("\n## cuobjdump cross-check of every library\n\n"
                  "| torch | libraries with CUDA code | agree | DIFFER | cuobjdump fails |\n"
                  "|---|---|---|---|---|\n")
        for st in res["stacks"]:
            x = st["crosscheck"]
            out.write("| %s | %d | %d | %s | %s |\n" % (
                st["version"], x["with_cuda"], x["agree"],
                ", ".join(x["differs"]) or "0", ", ".join(x["fails"]) or "0"))
        out.write("\nOne table per stack: crosscheck/torch-X.md. Where cuobjdump fails "
                  "(e.g. \"Invalid ELF\"), those files say what mlsetup reads instead.\n")
        out.write("\n## Time\n\n| torch | download s | audit s | cuobjdump s |\n"
                  "|---|---|---|---|\n")
        for st in res["stacks"]:
            t = st["seconds"]
            out.write("| %s | %.0f | %.0f | %.0f |\n" % (st["version"], t["download"],
                                                         t["audit"], t["cuobjdump"]))
        out.write("\nTotal: %.0f s.\n" % res["seconds"])


def write_outputs(out_dir, res, t_start, complete):
    """matrix.json and matrix.md from res, with its summary; complete=False
    after each stack, so that a run cut short leaves what it found."""
    cells = [c for st in res["stacks"] for c in st["cells"].values()]
    res["summary"] = {"cells": len(cells),
                      "false_alarms": sum(c["verdict"] == "FALSE ALARM" for c in cells),
                      "missed": sum(c["verdict"] == "MISSED" for c in cells),
                      "unknown": sum(c["verdict"] == "UNKNOWN" for c in cells),
                      "crosscheck_differs": sum(len(st["crosscheck"]["differs"])
                                                for st in res["stacks"])}
    res["complete"] = complete
    res["seconds"] = time.time() - t_start
    with open(os.path.join(out_dir, "matrix.json"), "w") as fh:
        json.dump(res, fh, indent=1)
        fh.write("\n")
    write_markdown(os.path.join(out_dir, "matrix.md"), res)


def self_test():
    """The rules and the verdicts on made-up audits; no network, no tools."""
    assert runs_here(["sm_90a"], [], "sm_90") == "sm_90a"
    assert runs_here(["sm_90a"], [], "sm_100") is None
    assert runs_here(["sm_100a"], [], "sm_103") is None
    assert runs_here(["sm_80"], [], "sm_89") == "sm_80"
    assert runs_here(["sm_80"], [], "sm_90") is None
    assert runs_here(["sm_120"], [], "sm_121") == "sm_120"
    assert runs_here(["sm_121"], [], "sm_120") is None
    assert runs_here(["sm_100f"], [], "sm_103") == "sm_100f"
    assert runs_here([], ["compute_90"], "sm_120") == "compute_90"
    assert runs_here([], ["compute_100f"], "sm_120") is None
    assert runs_here([], ["compute_90a"], "sm_90") == "compute_90a"
    lib = lambda sass: {"sass": sass, "ptx": [], "failure": "",  # noqa: E731
                        "runs_by": {g: runs_here(sass, [], g) for g in GPUS}}
    libs = {"torch/lib/libtorch_cuda.so": lib(["sm_75", "sm_80"]),
            "torch/lib/libtorch_cuda_linalg.so": lib(["sm_80"])}
    linalg = "/s/torch-x.whl!torch/lib/libtorch_cuda_linalg.so"
    other = "/s/nvidia_x.whl!nvidia/lib/libx.so"

    def cells(files, runs_on, **extra):
        return judge_cells(dict(files=files, runs_on=runs_on, **extra), "torch-x.whl", libs)
    # The oracle says sm_75 lacks linalg: mlsetup must name it.
    c = cells([{"path": linalg, "runs_on": {"sm_75": False, "sm_80": True}}],
              {"sm_75": False, "sm_80": True})
    assert c["sm_75"]["verdict"] == "NOT" and c["sm_80"]["text"] == "runs", c
    c = cells([{"path": linalg, "runs_on": {"sm_75": True}}], {"sm_75": True})
    assert c["sm_75"]["verdict"] == "MISSED", c
    c = cells([{"path": other, "runs_on": {"sm_75": False}}], {"sm_75": False})
    assert c["sm_75"]["text"] == "MISSED: libtorch_cuda_linalg.so", c
    c = cells([{"path": linalg, "runs_on": {"sm_75": False}}], {"sm_75": True})
    assert c["sm_75"]["verdict"] == "MISSED", c  # named, yet "runs" overall
    # The oracle says sm_80 runs: a failing file is a false alarm; files
    # not for this GPU and unverified ones are not.
    c = cells([{"path": other, "runs_on": {"sm_80": False}}], {"sm_80": False})
    assert c["sm_80"]["text"] == "FALSE ALARM: libx.so", c
    c = cells([{"path": other, "runs_on": {"sm_80": False}, "state": {"sm_80": "not_for_this_gpu"}},
               {"path": linalg, "runs_on": {"sm_80": "unverified"}}],
              {"sm_80": True}, failing={"sm_80": []})
    assert c["sm_80"]["text"] == "runs (1 unverified)", c
    c = cells([{"path": other, "runs_on": {"sm_80": True}, "state": {"sm_80": "fails"}}],
              {"sm_80": True})
    assert c["sm_80"]["verdict"] == "FALSE ALARM", c
    t = judge_table({"13.0": {"x86_64": {75, 80}}}, "13.0", ["sm_75", "sm_80", "sm_90a"])
    assert t["agrees"] is False and "sm_90" in t["text"], t
    t = judge_table({"13.0": {75, 80, 110}}, "13.0", ["sm_75", "sm_80"])
    assert not t["by_host"] and "DIFFERS on sm_110" in t["text"], t
    print("matrix.py self-test: ok")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", help="keep the wheels here (shared by all stacks)")
    ap.add_argument("--only", help="comma-separated torch versions (default: every one)")
    ap.add_argument("--mlsetup", default="build/mlsetup")
    ap.add_argument("--cuobjdump", help="cuobjdump to use (default: fetched with pip)")
    ap.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter whose pip downloads (must be CPython 3.11)")
    ap.add_argument("--min-free-gb", type=float, default=15.0)
    ap.add_argument("--self-test", action="store_true",
                    help="check the rules and verdicts on made-up audits, and exit")
    args = ap.parse_args()
    if args.self_test:
        return self_test()

    t_start = time.time()
    pyver = subprocess.run([args.python, "-c", "import sys, platform; print('%d.%d' % "
                            "sys.version_info[:2], platform.machine())"],
                           capture_output=True, text=True).stdout.split()
    if pyver[:1] != ["3.11"] or pyver[1:] != ["x86_64"] or sys.platform != "linux":
        sys.exit("matrix: --python must be CPython 3.11 on Linux x86_64 (pip downloads for "
                 "it); got %s" % " ".join(pyver))
    mlsetup = os.path.abspath(args.mlsetup)
    work = tempfile.mkdtemp(prefix="mlsetup-matrix.")
    store = os.path.abspath(args.store) if args.store else None
    cache_path = os.path.join(store, "cuobjdump-cache.json") if store else None
    cache = {}
    if store:
        os.makedirs(store, exist_ok=True)
        if os.path.exists(cache_path):
            with open(cache_path) as fh:
                cache = json.load(fh)
    tool = args.cuobjdump or fetch_cuobjdump(os.path.join(store or work, "cuobjdump"),
                                             args.python)
    lister = crosscheck.Lister(tool, cache)
    versions = torch_versions(args.python)
    if args.only:
        want = [v.strip() for v in args.only.split(",") if v.strip()]
        unknown = [v for v in want if v not in versions]
        if unknown:
            sys.exit("matrix: the index has no torch %s (it has %s)"
                     % (", ".join(unknown), " ".join(versions)))
        versions = [v for v in versions if v in want]
    log("torch %s" % " ".join(versions))
    xdir = os.path.join(args.out_dir, "crosscheck")
    os.makedirs(xdir, exist_ok=True)
    res = {"schema": "mlsetup.e2e-matrix/1", "machine": machine(),
           "python": "Python %s" % platform.python_version(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "mlsetup": first_line([mlsetup, "--version"]), "cuobjdump": lister.version,
           "gpus": GPUS, "drivers": DRIVERS, "rules": RULES, "driver_passed": True,
           "stacks": []}
    tight = False
    try:
        for v in versions:
            if store and not tight and free_gb(store) < args.min_free_gb + 5:
                freed = prune_store(store)
                log("disk short: kept only wheels with CUDA code (%.1f GB freed)" % (freed / 1e9))
                tight = free_gb(store) < args.min_free_gb + 5
            where = store or os.path.join(work, "stack")
            os.makedirs(where, exist_ok=True)
            log("torch %s: downloading" % v)
            wheels, t_dl, _ = download_stack(v, where, args.python)
            torch_whl = next(w for w in wheels if os.path.basename(w).startswith("torch-"))
            tname = os.path.basename(torch_whl)
            m = re.match(r"^torch-[^-]+-(\d[^-]*)-cp", tname)
            with zipfile.ZipFile(torch_whl) as zf:
                cuda = torch_cuda(zf)
                table = release_table(zf)
                driver = DRIVERS.get(cuda)
                if driver is None:
                    newer = [c for c in DRIVERS if vkey(c) >= vkey(cuda or "0")]
                    driver = DRIVERS[min(newer, key=vkey) if newer else max(DRIVERS, key=vkey)]
                    log("torch %s: CUDA %s not in the driver table; using %s" % (v, cuda, driver))
                log("torch %s: CUDA %s, driver %s: auditing %d wheels" % (v, cuda, driver,
                                                                          len(wheels)))
                t0 = time.time()
                audit, passed, rc = run_audit(mlsetup, wheels, driver)
                t_audit = time.time() - t0
                res["driver_passed"] = res["driver_passed"] and passed
                t0 = time.time()
                libs = oracle(zf, torch_whl, lister)
            cells = judge_cells(audit, tname, libs)
            core = libs.get("torch/lib/libtorch_cuda.so", {"sass": []})
            log("torch %s: cuobjdump cross-check" % v)
            rows, scanned = [], 0
            for w in wheels:
                files = {member_of(f["path"]): f for f in audit["files"]
                         if f["path"].split("!", 1)[0] == w}
                r, s = crosscheck.compare_wheel(w, files, lister)
                rows += r
                scanned += s
            t_cuobj = time.time() - t0
            crosscheck.write_table(os.path.join(xdir, "torch-%s.md" % v),
                                   "torch %s stack (CUDA %s, %s)" % (v, cuda, tname),
                                   lister.version, rows, scanned)
            agree, differ, fails = crosscheck.counts(rows)
            if cache_path:
                with open(cache_path + ".tmp", "w") as fh:
                    json.dump(cache, fh)
                os.replace(cache_path + ".tmp", cache_path)
            st = {"version": v, "torch_wheel": tname, "build_tag": m.group(1) if m else "",
                  "cuda": cuda, "driver": driver, "driver_passed": passed, "audit_exit": rc,
                  "wheels": [os.path.basename(w) for w in wheels],
                  "oracle": libs, "release_table": judge_table(table, cuda, core["sass"]),
                  "mlsetup": {k: audit.get(k) for k in ("runs_on", "why", "failing", "driver",
                                                        "unverified")},
                  "cells": cells,
                  "crosscheck": {"scanned": scanned, "with_cuda": len(rows), "agree": agree,
                                 "differs": [r["library"] for r in rows
                                             if r["verdict"] == "DIFFERS"],
                                 "fails": [r["library"] for r in rows
                                           if r["verdict"] == "cuobjdump fails"],
                                 "details": [r for r in rows if r["verdict"] != "same"]},
                  "seconds": {"download": t_dl, "audit": t_audit, "cuobjdump": t_cuobj}}
            # Paths by wheel file name, not where this machine keeps it.
            st = json.loads(json.dumps(st).replace(json.dumps(where + "/")[1:-1], ""))
            res["stacks"].append(st)
            write_outputs(args.out_dir, res, t_start, complete=False)
            log("torch %s: %s" % (v, ", ".join("%s %s" % (g, cells[g]["text"]) for g in GPUS)))
            log("torch %s: %.0f s download, %.0f s audit, %.0f s cuobjdump" % (
                v, t_dl, t_audit, t_cuobj))
            if not store:
                shutil.rmtree(where)
            elif tight and free_gb(store) < args.min_free_gb:
                log("disk short: deleting the wheels of torch %s" % v)
                for w in wheels:
                    if os.path.exists(w):
                        os.unlink(w)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_outputs(args.out_dir, res, t_start, complete=True)
    s = res["summary"]
    print("%d cells, %d false alarms, %d missed%s; cross-check: %d libraries differ from "
          "cuobjdump (%.0f s)" % (s["cells"], s["false_alarms"], s["missed"],
                                  ", %d unknown" % s["unknown"] if s["unknown"] else "",
                                  s["crosscheck_differs"], res["seconds"]))
    return 1 if s["false_alarms"] or s["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
