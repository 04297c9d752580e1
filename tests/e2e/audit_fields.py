#!/usr/bin/env python3
"""audit_fields.py JSON... - prints, one line per library, what an
`mlsetup audit --json` document says about where its CUDA code lies and
whether it runs (sass/ptx: executable; embedded; relocatable; kernel-less;
runs_on). For the e2e transcripts (tests/e2e/run.sh)."""
import json
import sys

for path in sys.argv[1:]:
    doc = json.load(open(path))
    for f in doc["files"]:
        name = f["path"].split("!", 1)[-1]
        print("%s: sass %s; ptx %s; embedded %s; relocatable %s; kernelless %s; runs_on %s"
              % (name, f["sass"], f["ptx"], f["embedded"], f["relocatable"], f["kernelless"],
                 json.dumps(f["runs_on"])))
    print("  libraries_unverified %d; overall runs_on %s" % (doc["libraries_unverified"],
                                                          json.dumps(doc["runs_on"])))
