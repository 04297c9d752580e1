#!/bin/sh
# lock-resolver.sh - a --resolver-python for `mlsetup lock` that resolves
# other CPUs correctly. pip's cross-platform resolution (--platform) still
# evaluates environment markers for the machine it runs on, so on x86_64
# torch's `platform_machine == "x86_64"` requirements (nvidia-*, triton)
# would be pulled into a linux-aarch64 closure. Run with --platform
# ..._aarch64 tags, this pip answers platform.machine() as aarch64 does.
#
#   mlsetup lock manifests/requirements.in -o manifests/requirements.txt \
#       --resolver-python manifests/lock-resolver.sh
#
# PYTHON (default python3) is the interpreter whose pip resolves; anything
# but `-m pip ARGS` runs it unchanged.
[ "${1:-}" = -m ] && [ "${2:-}" = pip ] || exec "${PYTHON:-python3}" "$@"
shift 2
exec "${PYTHON:-python3}" -c '
import platform, runpy, sys
if any(a.endswith("_aarch64") for a in sys.argv):
    platform.machine = lambda: "aarch64"
sys.argv = ["pip"] + sys.argv[1:]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
' "$@"
