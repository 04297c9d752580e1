#!/usr/bin/env python3
"""crosscheck.py - compares what `mlsetup audit` lists as executable CUDA
code (files[].sass / files[].ptx: the `.nv_fatbin` containers the CUDA
runtime loads) with an independent oracle, `cuobjdump --list-elf --list-ptx`
(whose default is exactly those containers), for every library of a set of
wheels, and writes a Markdown table (library, mlsetup, cuobjdump, verdict,
and what mlsetup sees besides: embedded and relocatable containers,
kernel-less architectures). Libraries where cuobjdump itself fails (it
stops with an error such as "Invalid ELF") get a list of their own: what
mlsetup reads there, and what cuobjdump listed before it stopped; they are
neither agreements nor disagreements. Part of `make e2e` (tests/e2e/run.sh)
and of `make e2e-matrix` (tests/e2e/matrix.py, which imports the functions
below).

  crosscheck.py --mlsetup build/mlsetup --cuobjdump DIR/cuobjdump \\
      --title "torch 2.6.0 stack" --out tests/e2e/crosscheck-torch26.md W.whl...

Each wheel is audited in place (`audit --json --all`); each library member
is extracted to a temporary file, one at a time, for cuobjdump. Members
that look like shared libraries (`*.so`, `*.so.N`) but that mlsetup does not
list are given to cuobjdump too. Exit status 0 when every library that
cuobjdump reads agrees, 1 when one differs, 2 on a tool failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

CUOBJDUMP_LINE = re.compile(r"^(ELF|PTX) file\s+\d+:\s+\S*\.(sm_\d+[a-z]?)\.(cubin|ptx)\s*$")
SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$")


def arch_key(name):
    """Sort key for sm_90 / sm_90a / compute_100f names."""
    m = re.match(r"^(sm|compute)_(\d+)([a-z]?)$", name)
    if not m:
        return (999999, name)
    return (int(m.group(2)), {"": 0, "a": 1, "f": 2}.get(m.group(3), 3))


def cuobjdump_version(tool):
    """The "Cuda compilation tools, release ..." line of `cuobjdump --version`."""
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    lines = [line.strip() for line in out.splitlines() if "release" in line]
    return lines[0] if lines else "cuobjdump"


def cuobjdump_lists(tool, path):
    """(sass, ptx, failure) as mlsetup names them, from cuobjdump's default
    listings; failure is "" or what cuobjdump said when it stopped early."""
    sass, ptx, failures = set(), set(), []
    for flag in ("--list-elf", "--list-ptx"):
        p = subprocess.run([tool, flag, path], capture_output=True, text=True)
        if p.returncode != 0 and "does not contain device code" not in p.stderr:
            said = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no message"
            said = re.sub(r"^cuobjdump\s+\w+\s*:\s*", "", said)
            failures.append("%s stopped after %d entries: %s" % (
                flag, len(p.stdout.splitlines()), said.replace(path, os.path.basename(path))))
        for line in p.stdout.splitlines():
            m = CUOBJDUMP_LINE.match(line.strip())
            if not m:
                continue
            arch = m.group(2)
            if m.group(1) == "ELF":
                sass.add(arch)
            else:
                ptx.add("compute_" + arch[3:])
    return sorted(sass, key=arch_key), sorted(ptx, key=arch_key), "; ".join(failures)


class Lister:
    """cuobjdump's listing of one wheel member, extracted to a temporary
    file for the call and deleted after. `cache` (a dict, optional) keeps
    the answers by wheel file name and member, so a caller that audits
    several stacks sharing wheels asks cuobjdump once per library."""

    def __init__(self, tool, cache=None):
        self.tool = tool
        self.version = cuobjdump_version(tool)
        self.cache = cache if cache is not None else {}

    def lists(self, zf, wheel, member):
        """(sass, ptx, failure) of member of the open ZipFile zf (of wheel)."""
        key = "%s|%s|%s" % (self.version, os.path.basename(wheel), member)
        hit = self.cache.get(key)
        if hit is not None:
            return hit[0], hit[1], hit[2]
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, os.path.basename(member))
            with zf.open(member) as src, open(target, "wb") as dst:
                while True:
                    chunk = src.read(1 << 20)
                    if not chunk:
                        break
                    dst.write(chunk)
            got = cuobjdump_lists(self.tool, target)
        self.cache[key] = list(got)
        return got


def comparable(names):
    """cuobjdump names family code (sm_100f) without its `f`."""
    return sorted({n[:-1] if n.endswith("f") else n for n in names}, key=arch_key)


def show(sass, ptx):
    return "SASS %s; PTX %s" % (" ".join(sass) or "none", " ".join(ptx) or "none")


def dist_of(wheel):
    parts = os.path.basename(wheel).split("-")
    return "%s %s" % (parts[0], parts[1]) if len(parts) > 1 else parts[0]


def audit_files(mlsetup, wheel):
    """member -> files[] entry of `mlsetup audit --json --all` on one wheel,
    or None when mlsetup fails."""
    p = subprocess.run([mlsetup, "audit", "--json", "--all", "--arch", "sm_90", wheel],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1, 5):
        print("mlsetup audit failed on %s: %s" % (wheel, p.stderr), file=sys.stderr)
        return None
    return {f["path"].split("!", 1)[1]: f for f in json.loads(p.stdout)["files"]}


def compare_wheel(wheel, files, lister):
    """(rows, scanned): one row per library of wheel with CUDA code on either
    side. files: member -> mlsetup's files[] entry for that wheel. A row is a
    dict: library, mlsetup, cuobjdump (shown lists), verdict ("same",
    "DIFFERS" or "cuobjdump fails"), failure (what cuobjdump said, or ""),
    besides (what mlsetup sees that is not compared)."""
    rows, scanned = [], 0
    with zipfile.ZipFile(wheel) as z:
        unlisted = sorted(m for m in z.namelist()
                          if SHARED_LIBRARY.search(m) and m not in files)
        for member in sorted(files) + unlisted:
            f = files.get(member)
            scanned += 1
            c_sass, c_ptx, failure = lister.lists(z, wheel, member)
            if f is None:
                f = {"sass": [], "ptx": [], "embedded": {"sass": [], "ptx": []},
                     "relocatable": {"sass": [], "ptx": []}, "error": "not listed by mlsetup",
                     "kernelless": [], "runs_on": {}}
            emb, rel = f["embedded"], f["relocatable"]
            seen = f["sass"] or f["ptx"] or emb["sass"] or emb["ptx"] or rel["sass"] \
                or rel["ptx"] or c_sass or c_ptx or failure
            if not seen:
                continue
            same = comparable(f["sass"]) == c_sass and comparable(f["ptx"]) == c_ptx
            besides = []
            if emb["sass"] or emb["ptx"]:
                besides.append("embedded: " + show(emb["sass"], emb["ptx"]))
            if rel["sass"] or rel["ptx"]:
                besides.append("relocatable: " + show(rel["sass"], rel["ptx"]))
            if f["error"]:
                besides.append("error: " + f["error"])
            if f["kernelless"]:
                besides.append("kernel-less: " + " ".join(f["kernelless"]))
            runs = sorted(set(str(v).lower() for v in f["runs_on"].values()))
            if runs == ["unverified"]:
                besides.append("unverified")
            if failure:
                verdict = "cuobjdump fails"
            else:
                verdict = "same" if same else "DIFFERS"
            rows.append({"library": dist_of(wheel) + ": " + member,
                         "mlsetup": show(f["sass"], f["ptx"]),
                         "cuobjdump": show(c_sass, c_ptx), "verdict": verdict,
                         "failure": failure, "besides": "; ".join(besides),
                         "partial_within": set(c_sass) <= set(comparable(f["sass"]))
                         and set(c_ptx) <= set(comparable(f["ptx"]))})
    return rows, scanned


def counts(rows):
    """(agree, differ, cuobjdump fails) among rows."""
    return (sum(r["verdict"] == "same" for r in rows),
            sum(r["verdict"] == "DIFFERS" for r in rows),
            sum(r["verdict"] == "cuobjdump fails" for r in rows))


def write_table(path, title, version, rows, scanned):
    """The Markdown cross-check of rows (compare_wheel's) into path."""
    agree, differ, fails = counts(rows)
    read = agree + differ
    with open(path, "w") as out:
        out.write("# cuobjdump cross-check: %s\n\n" % title)
        out.write("mlsetup: `audit --json` files[].sass / files[].ptx (executable `.nv_fatbin` "
                  "containers). cuobjdump: `--list-elf --list-ptx` (%s), PTX renamed "
                  "sm_XY.ptx -> compute_XY; family code sm_XYf, which cuobjdump names sm_XY, "
                  "compared as sm_XY. %d libraries scanned; %d with CUDA code on either "
                  "side; **%d of %d agree** where cuobjdump reads the library; cuobjdump "
                  "fails on %d.\n\n"
                  % (version, scanned, len(rows), agree, read, fails))
        out.write("| library | mlsetup | cuobjdump | verdict | mlsetup besides (not compared) |\n")
        out.write("|---|---|---|---|---|\n")
        for r in rows:
            if r["verdict"] != "cuobjdump fails":
                out.write("| %s |\n" % " | ".join((r["library"], r["mlsetup"], r["cuobjdump"],
                                                    r["verdict"], r["besides"])))
        if fails:
            out.write("\n## Where cuobjdump fails\n\n"
                      "cuobjdump stopped with the error shown; these are not disagreements. "
                      "\"Listed before it stopped\" is what it printed until then; "
                      "\"within mlsetup's\" says whether all of that is in mlsetup's list.\n\n")
            out.write("| library | mlsetup reads | cuobjdump said | listed before it stopped | "
                      "within mlsetup's |\n|---|---|---|---|---|\n")
            for r in rows:
                if r["verdict"] == "cuobjdump fails":
                    out.write("| %s | %s | %s | %s | %s |\n" % (
                        r["library"], r["mlsetup"], r["failure"], r["cuobjdump"],
                        "yes" if r["partial_within"] else "NO"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsetup", required=True)
    ap.add_argument("--cuobjdump", required=True)
    ap.add_argument("--title", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("wheels", nargs="+")
    args = ap.parse_args()

    lister = Lister(args.cuobjdump)
    rows, scanned = [], 0
    for wheel in sorted(args.wheels, key=lambda w: os.path.basename(w).lower()):
        files = audit_files(args.mlsetup, wheel)
        if files is None:
            return 2
        r, s = compare_wheel(wheel, files, lister)
        rows += r
        scanned += s
    write_table(args.out, args.title, lister.version, rows, scanned)
    agree, differ, fails = counts(rows)
    print("%s: %d of %d libraries with CUDA code agree with cuobjdump; cuobjdump fails on %d"
          % (args.title, agree, agree + differ, fails))
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
