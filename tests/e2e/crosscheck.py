#!/usr/bin/env python3
"""crosscheck.py - compares what `mlsetup audit` lists as executable CUDA
code (files[].sass / files[].ptx: the `.nv_fatbin` containers the CUDA
runtime loads) with an independent oracle, `cuobjdump --list-elf --list-ptx`
(whose default is exactly those containers), for every library of a set of
wheels, and writes a Markdown table (library, mlsetup, cuobjdump, verdict,
and what mlsetup sees besides: embedded and relocatable containers,
kernel-less architectures). Part of `make e2e` (tests/e2e/run.sh).

  crosscheck.py --mlsetup build/mlsetup --cuobjdump DIR/cuobjdump \\
      --title "torch 2.6.0 stack" --out tests/e2e/crosscheck-torch26.md W.whl...

Each wheel is audited in place (`audit --json --all`); each library member
is extracted to a temporary file, one at a time, for cuobjdump. Exit status
0 when every library agrees, 1 when one differs, 2 on a tool failure.
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


def arch_key(name):
    """Sort key for sm_90 / sm_90a / compute_100f names."""
    m = re.match(r"^(sm|compute)_(\d+)([a-z]?)$", name)
    if not m:
        return (999999, name)
    return (int(m.group(2)), {"": 0, "a": 1, "f": 2}.get(m.group(3), 3))


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


def comparable(names):
    """cuobjdump names family code (sm_100f) without its `f`."""
    return sorted({n[:-1] if n.endswith("f") else n for n in names}, key=arch_key)


def show(sass, ptx):
    return "SASS %s; PTX %s" % (" ".join(sass) or "none", " ".join(ptx) or "none")


def dist_of(wheel):
    parts = os.path.basename(wheel).split("-")
    return "%s %s" % (parts[0], parts[1]) if len(parts) > 1 else parts[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsetup", required=True)
    ap.add_argument("--cuobjdump", required=True)
    ap.add_argument("--title", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("wheels", nargs="+")
    args = ap.parse_args()

    version = [line for line in subprocess.run([args.cuobjdump, "--version"],
                                               capture_output=True, text=True).stdout.splitlines()
               if "release" in line]
    rows, agree, scanned = [], 0, 0
    for wheel in sorted(args.wheels, key=lambda w: os.path.basename(w).lower()):
        p = subprocess.run([args.mlsetup, "audit", "--json", "--all", "--arch", "sm_90", wheel],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1, 5):
            print("mlsetup audit failed on %s: %s" % (wheel, p.stderr), file=sys.stderr)
            return 2
        files = {f["path"].split("!", 1)[1]: f for f in json.loads(p.stdout)["files"]}
        with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
            for member in sorted(files):
                f = files[member]
                scanned += 1
                target = os.path.join(tmp, os.path.basename(member))
                with z.open(member) as src, open(target, "wb") as dst:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        dst.write(chunk)
                c_sass, c_ptx, failure = cuobjdump_lists(args.cuobjdump, target)
                os.unlink(target)
                emb, rel = f["embedded"], f["relocatable"]
                seen = f["sass"] or f["ptx"] or emb["sass"] or emb["ptx"] or rel["sass"] \
                    or rel["ptx"] or c_sass or c_ptx
                if not seen:
                    continue
                same = comparable(f["sass"]) == c_sass and comparable(f["ptx"]) == c_ptx
                agree += same
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
                verdict = "same" if same else "DIFFERS"
                if failure:
                    verdict += " (as far as cuobjdump got: %s)" % failure
                rows.append((dist_of(wheel) + ": " + member, show(f["sass"], f["ptx"]),
                             show(c_sass, c_ptx), verdict,
                             "; ".join(besides)))
    with open(args.out, "w") as out:
        out.write("# cuobjdump cross-check: %s\n\n" % args.title)
        out.write("mlsetup: `audit --json` files[].sass / files[].ptx (executable `.nv_fatbin` "
                  "containers). cuobjdump: `--list-elf --list-ptx` (%s), PTX renamed "
                  "sm_XY.ptx -> compute_XY; family code sm_XYf, which cuobjdump names sm_XY, "
                  "compared as sm_XY. %d libraries scanned; %d with CUDA code on either "
                  "side; **%d of %d agree**.\n\n"
                  % (version[0].strip() if version else "cuobjdump", scanned, len(rows), agree,
                     len(rows)))
        out.write("| library | mlsetup | cuobjdump | verdict | mlsetup besides (not compared) |\n")
        out.write("|---|---|---|---|---|\n")
        for r in rows:
            out.write("| %s |\n" % " | ".join(r))
        if any("as far as cuobjdump got" in r[3] for r in rows):
            out.write("\n\"As far as cuobjdump got\": cuobjdump stopped with the error shown "
                      "before the end of the file; the verdict compares what it listed until "
                      "then with mlsetup's whole list.\n")
    print("%s: %d of %d libraries with CUDA code agree with cuobjdump" % (args.title, agree,
                                                                        len(rows)))
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
