#!/usr/bin/env python3
"""torch_layout.py WHEELDIR ROOT - lays wheels out as the package index and
PyTorch's per-backend indexes serve them, for tests/mirror/server.py --root
ROOT: a wheel whose version has no local label goes to ROOT/files/ (the
default index, /simple/<project>/), one with the local label +<backend>
(cpu, cu126, cu130, ...) to ROOT/whl/<backend>/ (its own PEP 503 index,
/whl/<backend>/<project>/, the files beside the pages), as under PyTorch's
base URL. Files are hard-linked where the file system allows, else copied;
other files in WHEELDIR are left alone. Prints one line per index: its path
and how many files it holds. Standard library only.

    python3 tests/mirror/torch_layout.py WHEELS "$TRASH/web"
"""
import os
import shutil
import sys


def place(src, dst_dir):
    os.makedirs(dst_dir, exist_ok=True)
    dst = os.path.join(dst_dir, os.path.basename(src))
    if os.path.exists(dst):
        os.unlink(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: torch_layout.py WHEELDIR ROOT")
    wheels, root = sys.argv[1], sys.argv[2]
    counts = {}
    for name in sorted(os.listdir(wheels)):
        parts = name[:-4].split("-") if name.endswith(".whl") else []
        if len(parts) < 5:
            continue
        _, _, local = parts[1].partition("+")
        index = os.path.join("whl", local) if local else "files"
        if local and (local.startswith(".") or "/" in local):
            sys.exit("torch_layout: %s: not a backend: %r" % (name, local))
        place(os.path.join(wheels, name), os.path.join(root, index))
        counts[index] = counts.get(index, 0) + 1
    for index in sorted(counts):
        print("%s %d" % (index, counts[index]))


if __name__ == "__main__":
    main()
