#!/usr/bin/env python3
# pe-imports.py EXE - prints the DLLs a PE executable imports (its import
# directory), one line, space-separated: what check.sh compares with the
# Windows system DLLs, as NEEDED is for the Linux binaries.
import struct, sys
def imports(path):
    b = open(path, "rb").read()
    pe = struct.unpack_from("<I", b, 0x3c)[0]
    assert b[pe:pe + 4] == b"PE\0\0", "not a PE file"
    nsec, = struct.unpack_from("<H", b, pe + 6)
    optsz, = struct.unpack_from("<H", b, pe + 20)
    opt = pe + 24
    magic, = struct.unpack_from("<H", b, opt)
    dd = opt + (112 if magic == 0x20b else 96)
    imp_rva, imp_size = struct.unpack_from("<II", b, dd + 8)
    secs = []
    for i in range(nsec):
        s = opt + optsz + 40 * i
        vsize, va, rsize, raw = struct.unpack_from("<IIII", b, s + 8)
        secs.append((va, max(vsize, rsize), raw))
    def off(rva):
        for va, size, raw in secs:
            if va <= rva < va + size:
                return rva - va + raw
        raise ValueError("rva %x outside sections" % rva)
    names = []
    d = off(imp_rva)
    while True:
        desc = struct.unpack_from("<IIIII", b, d)
        if not any(desc):
            break
        n = off(desc[3])
        names.append(b[n:b.index(b"\0", n)].decode())
        d += 20
    return names
print(" ".join(imports(sys.argv[1])))
