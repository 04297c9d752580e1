"""mlsetup framework-level smoke test: does torch really compute here?

Run by mlsetup (src/verify/framework.c) with the environment's own
interpreter as `python -c <this file> --size N --alloc-mib M`; the source of
truth is src/verify/torch_smoke.py, embedded into the binary byte for byte
at build time. It reports what torch says about itself and the GPUs
(version, torch.version.cuda, is_available, devices, capabilities,
get_arch_list), then computes:

  on the CPU        a small matmul against a pure-Python reference (always,
                    so a machine without a GPU still proves torch works) and
                    a timed N x N matmul;
  on every GPU      fp32, fp16 and bf16 (compute capability 8.0+) N x N
                    matmuls against CPU references, an elementwise kernel
                    and an allocation of M MiB, each timed: after one
                    warm-up run and a synchronize, a batch of runs between
                    two CUDA events (the GPU's clock), so a matmul's speed,
                    2 N^3 / seconds per run / 10^12, is reported in TFLOP/s
                    per dtype.

It never lets an exception escape: every error is caught and reported with
its type and message, and mlsetup classifies the messages ("no kernel image
is available for execution on the device", "The NVIDIA driver on your
system is too old", ...). The one result is printed as a single line
"MLSETUP-TORCH-SMOKE-JSON: {...}" on standard output, after whatever torch
itself printed. With `--import NAME` (repeated) it then imports those
modules: the import check's share that needs torch first (torch's
libraries, seconds to load, are loaded once), then, with
`--import-claims DIR`, those it claims before the import check's other
interpreters do (a file of the module's name created in DIR), and answers each on a line of its own,
"MLSETUP-TORCH-SMOKE-IMPORT: {"module": NAME, "ok": true}" or with "ok":
false and "error": "Type: message"; a watchdog ends the process after
`--import-timeout S` seconds (default 1800), answering for the module it
was in. While it runs, each step is announced on standard output as
it begins and ends ("MLSETUP-TORCH-SMOKE-STEP: begin fp16 matmul on GPU 0",
"... end pass fp16 matmul on GPU 0"), flushed at once: mlsetup reads them as
they come to show what runs now. Only the API a stub can provide is used
(see tests/fixtures/stub_torch): keep the two in step.
"""
import json
import os
import platform
import sys
import time
import warnings

MARKER = "MLSETUP-TORCH-SMOKE-JSON: "
STEP = "MLSETUP-TORCH-SMOKE-STEP: "
IMPORT = "MLSETUP-TORCH-SMOKE-IMPORT: "
CPU_CHECK_SIZE = 64  # the pure-Python reference costs size**3 steps


def step_line(text):
    sys.stdout.write(STEP + text + "\n")
    sys.stdout.flush()


def step(name, fn, *args):
    """Runs fn(*args), which returns a check, as the step `name`: announces
    it before and reports its outcome after."""
    step_line("begin " + name)
    check = fn(*args)
    if check["skipped"]:
        status = "skip"
    else:
        status = "pass" if check["ok"] else "fail"
    step_line("end %s %s" % (status, name))
    return check


def error_text(exc):
    """'Type: message' of an exception, for classification by mlsetup."""
    return "%s: %s" % (type(exc).__name__, str(exc).strip())


def new_check(name):
    return {
        "name": name,
        "ok": None,
        "skipped": False,
        "reason": "",
        "ms": None,
        "n": None,
        "reps": None,
        "gflops": None,
        "tflops": None,
        "gbps": None,
        "max_abs_error": None,
        "tolerance": None,
        "error_type": None,
        "error": None,
    }


def fail_check(check, exc):
    check["ok"] = False
    check["error_type"] = type(exc).__name__
    check["error"] = str(exc).strip()
    return check


def parse_args(argv):
    opts = {"size": 2048, "alloc_mib": 256, "imports": [], "import_claims": "",
            "import_timeout": 1800}
    i = 0
    while i < len(argv):
        if argv[i] == "--size" and i + 1 < len(argv):
            opts["size"] = max(2, int(argv[i + 1]))
            i += 2
        elif argv[i] == "--alloc-mib" and i + 1 < len(argv):
            opts["alloc_mib"] = max(1, int(argv[i + 1]))
            i += 2
        elif argv[i] == "--import" and i + 1 < len(argv):
            opts["imports"].append(argv[i + 1])
            i += 2
        elif argv[i] == "--import-claims" and i + 1 < len(argv):
            opts["import_claims"] = argv[i + 1]
            i += 2
        elif argv[i] == "--import-timeout" and i + 1 < len(argv):
            opts["import_timeout"] = max(1, int(argv[i + 1]))
            i += 2
        else:
            i += 1
    return opts


def max_error(torch, got, want):
    """Largest absolute difference and largest |want|, both on the CPU."""
    got = got.cpu().to(torch.float32)
    want = want.to(torch.float32)
    return (got - want).abs().max().item(), want.abs().max().item()


def cpu_checks(torch, n):
    """A matmul against a pure-Python reference, then a timed n x n one."""
    check = new_check("cpu_matmul")
    try:
        m = min(CPU_CHECK_SIZE, n)
        a = torch.randn(m, m)
        b = torch.randn(m, m)
        got = torch.matmul(a, b).tolist()
        la, lb = a.tolist(), b.tolist()
        err, scale = 0.0, 0.0
        for i in range(m):
            row = la[i]
            for j in range(m):
                want = 0.0
                for k in range(m):
                    want += row[k] * lb[k][j]
                err = max(err, abs(got[i][j] - want))
                scale = max(scale, abs(want))
        tol = 1e-4 * max(scale, 1.0)
        check["max_abs_error"] = err
        check["tolerance"] = tol
        a = torch.randn(n, n)
        b = torch.randn(n, n)
        t0 = time.perf_counter()
        torch.matmul(a, b)
        dt = time.perf_counter() - t0
        check["ms"] = dt * 1e3
        check["gflops"] = 2.0 * n ** 3 / dt / 1e9 if dt > 0 else None
        check["ok"] = err <= tol
    except Exception as exc:  # noqa: BLE001 - report, never raise
        fail_check(check, exc)
    return check


# How long the timed batch of a GPU check should run, and its bounds.
BATCH_SECONDS = 0.02
MAX_REPS = 200


def gpu_seconds(torch, index, fn, reps):
    """Seconds one run of fn takes on GPU index: `reps` runs back to back
    between two CUDA events on the device's current stream (the GPU's own
    clock, no host overhead), divided by reps. Falls back to the host clock
    around a synchronized batch when torch has no CUDA events."""
    if hasattr(torch.cuda, "Event") and hasattr(torch.cuda, "current_stream"):
        stream = torch.cuda.current_stream(index)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(reps):
            fn()
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / reps  # elapsed_time: ms
    torch.cuda.synchronize(index)
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize(index)
    return (time.perf_counter() - t0) / reps


def timed(torch, index, fn):
    """Runs fn once to warm up - the first call pays for cuBLAS handles,
    kernel selection and lazy module loading - and synchronizes; then times
    one run to size a batch of about BATCH_SECONDS (1 .. MAX_REPS runs) and
    times that batch. Returns (the warm-up's result, seconds per run, runs
    in the batch)."""
    out = fn()
    torch.cuda.synchronize(index)
    one = gpu_seconds(torch, index, fn, 1)
    reps = MAX_REPS if one <= 0 else max(1, min(MAX_REPS, int(BATCH_SECONDS / one)))
    return out, gpu_seconds(torch, index, fn, reps), reps


def matmul_check(torch, index, name, dtype, rel_tol, a, b, refs):
    """An n x n matmul in dtype on GPU index against the CPU fp32 matmul of
    the same (dtype-rounded) inputs, computed once for all GPUs and kept in
    refs; the bound is rel_tol * max |ref|."""
    check = new_check(name)
    try:
        n = a.shape[0]
        if name not in refs:
            ra = a.to(dtype).to(torch.float32)
            rb = b.to(dtype).to(torch.float32)
            refs[name] = torch.matmul(ra, rb)
        ref = refs[name]
        dev = "cuda:%d" % index
        da = a.to(dtype).to(dev)
        db = b.to(dtype).to(dev)
        out, dt, reps = timed(torch, index, lambda: torch.matmul(da, db))
        err, scale = max_error(torch, out, ref)
        tol = rel_tol * max(scale, 1.0)
        check["n"] = n
        check["reps"] = reps
        check["ms"] = dt * 1e3
        # An n x n matmul is n^3 multiply-adds: 2 n^3 floating-point operations.
        check["gflops"] = 2.0 * n ** 3 / dt / 1e9 if dt > 0 else None
        check["tflops"] = 2.0 * n ** 3 / dt / 1e12 if dt > 0 else None
        check["max_abs_error"] = err
        check["tolerance"] = tol
        check["ok"] = err <= tol
    except Exception as exc:  # noqa: BLE001
        fail_check(check, exc)
    return check


def elementwise_check(torch, index, a):
    """y = x * 2 + 1 over n*n floats on the GPU against the CPU."""
    check = new_check("elementwise")
    try:
        ref = a * 2.0 + 1.0
        dx = a.to("cuda:%d" % index)
        out, dt, reps = timed(torch, index, lambda: dx * 2.0 + 1.0)
        err, scale = max_error(torch, out, ref)
        tol = 1e-6 * max(scale, 1.0)
        elements = a.shape[0] * a.shape[1]
        check["reps"] = reps
        check["ms"] = dt * 1e3
        check["gbps"] = 16.0 * elements / dt / 1e9 if dt > 0 else None
        check["max_abs_error"] = err
        check["tolerance"] = tol
        check["ok"] = err <= tol
    except Exception as exc:  # noqa: BLE001
        fail_check(check, exc)
    return check


def alloc_check(torch, index, mib):
    """Allocates mib MiB on the GPU, fills it and reads it back."""
    check = new_check("alloc")
    try:
        nbytes = mib * 1024 * 1024
        t0 = time.perf_counter()
        buf = torch.empty(nbytes, dtype=torch.uint8, device="cuda:%d" % index)
        buf.fill_(7)
        torch.cuda.synchronize(index)
        dt = time.perf_counter() - t0
        total = buf.sum().item()
        del buf
        torch.cuda.empty_cache()
        check["ms"] = dt * 1e3
        check["gbps"] = nbytes / dt / 1e9 if dt > 0 else None
        check["max_abs_error"] = float(abs(total - 7 * nbytes))
        check["tolerance"] = 0.0
        check["ok"] = total == 7 * nbytes
    except Exception as exc:  # noqa: BLE001
        fail_check(check, exc)
    return check


def messages(caught):
    """The distinct messages of recorded warnings, in order."""
    out = []
    for w in caught:
        text = str(w.message).strip()
        if text not in out:
            out.append(text)
    return out


def skipped(name, reason):
    check = new_check(name)
    check["skipped"] = True
    check["reason"] = reason
    return check


def gpu_checks(torch, index, opts, a, b, refs):
    gpu = {"index": index, "name": None, "capability": None, "checks": [], "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            gpu["name"] = str(torch.cuda.get_device_name(index))
            major, minor = torch.cuda.get_device_capability(index)
            gpu["capability"] = [int(major), int(minor)]
        except Exception as exc:  # noqa: BLE001
            gpu["error"] = error_text(exc)
        checks = gpu["checks"]
        on = " on GPU %d" % index
        checks.append(step("fp32 matmul" + on, matmul_check, torch, index, "fp32_matmul",
                           torch.float32, 5e-3, a, b, refs))
        checks.append(step("fp16 matmul" + on, matmul_check, torch, index, "fp16_matmul",
                           torch.float16, 1e-2, a, b, refs))
        if gpu["capability"] and gpu["capability"][0] >= 8:
            checks.append(step("bf16 matmul" + on, matmul_check, torch, index, "bf16_matmul",
                               torch.bfloat16, 3e-2, a, b, refs))
        else:
            checks.append(step("bf16 matmul" + on, skipped, "bf16_matmul",
                               "bf16 needs compute capability 8.0 or newer"))
        checks.append(step("elementwise" + on, elementwise_check, torch, index, a))
        checks.append(step("allocation" + on, alloc_check, torch, index, opts["alloc_mib"]))
    gpu["warnings"] = messages(caught)
    return gpu


def run(out, opts):
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # never import a torch/ directory from the cwd
    check = new_check("import")
    t0 = time.perf_counter()
    step_line("begin importing torch")
    try:
        import torch
    except BaseException as exc:  # noqa: BLE001 - ImportError, OSError, SystemExit
        step_line("end fail importing torch")
        out["import_error"] = error_text(exc)
        out["checks"].append(fail_check(check, exc))
        out["gpu_checks_skipped"] = True
        out["skip_reason"] = "torch does not import"
        return
    step_line("end pass importing torch")
    check["ok"] = True
    check["ms"] = (time.perf_counter() - t0) * 1e3
    out["checks"].append(check)
    out["torch"] = str(getattr(torch, "__version__", ""))
    out["torch_path"] = str(getattr(torch, "__file__", ""))
    cuda = getattr(getattr(torch, "version", None), "cuda", None)
    out["torch_cuda"] = str(cuda) if cuda else None
    torch.manual_seed(0)
    out["checks"].append(step("CPU matmul", cpu_checks, torch, opts["size"]))

    step_line("begin checking CUDA")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out["cuda_available"] = bool(torch.cuda.is_available())
            out["device_count"] = int(torch.cuda.device_count())
            out["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
        except Exception as exc:  # noqa: BLE001
            out["cuda_available"] = False
            out["cuda_error"] = error_text(exc)
        if not out["cuda_available"] and out["cuda_error"] is None:
            try:
                torch.cuda.init()  # raises the reason CUDA is unusable
            except BaseException as exc:  # noqa: BLE001 - AssertionError for CPU builds
                out["cuda_error"] = error_text(exc)
    out["cuda_warnings"] = messages(caught)
    usable = out["cuda_available"] and out["device_count"] > 0
    step_line("end %s checking CUDA" % ("pass" if usable else "skip"))

    if not usable:
        out["gpu_checks_skipped"] = True
        if not out["torch_cuda"]:
            out["skip_reason"] = "torch %s is a CPU-only build" % out["torch"]
        else:
            out["skip_reason"] = "torch.cuda.is_available() is False"
        return
    n = opts["size"]
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    refs = {}
    for index in range(out["device_count"]):
        out["gpus"].append(gpu_checks(torch, index, opts, a, b, refs))


def finite(doc):
    """Replaces NaN and infinities (invalid in JSON) by None, recursively."""
    if isinstance(doc, float) and (doc != doc or doc in (float("inf"), float("-inf"))):
        return None
    if isinstance(doc, dict):
        return {k: finite(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [finite(v) for v in doc]
    return doc


def answer(module, error):
    """One import's answer line, written in one call so that the watchdog's
    and the main thread's never mix."""
    doc = {"module": module, "ok": error is None}
    if error is not None:
        doc["error"] = error
    sys.stdout.flush()
    os.write(1, ("\n" + IMPORT + json.dumps(doc) + "\n").encode("utf-8", "replace"))


def claimed(claims, name):
    """True when this interpreter is the first to claim the module: the
    import check's other interpreters work through the same modules, and
    whoever creates the module's file in the claims directory imports it."""
    if not claims:
        return True
    try:
        os.close(os.open(os.path.join(claims, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:
        pass
    return True


def import_modules(names, claims, limit):
    """Imports each module it claims, after the checks, and answers for it."""
    import importlib
    import threading

    current = [None]

    def expire():
        answer(current[0] or "", "TimeoutError: the import did not finish within %d s" % limit)
        os._exit(0)

    watchdog = threading.Timer(limit, expire)
    watchdog.daemon = True
    watchdog.start()
    for name in names:
        if not claimed(claims, name):
            continue
        current[0] = name
        try:
            importlib.import_module(name)
            error = None
        except BaseException as exc:  # noqa: BLE001 - every failure is an answer
            error = error_text(exc)
        answer(name, error)
    watchdog.cancel()


def main(argv):
    opts = parse_args(argv)
    out = {
        "schema": "mlsetup.torch_smoke/1",
        "python": platform.python_version(),
        "executable": sys.executable,
        "size": opts["size"],
        "alloc_mib": opts["alloc_mib"],
        "torch": None,
        "torch_path": None,
        "torch_cuda": None,
        "import_error": None,
        "cuda_available": False,
        "cuda_error": None,
        "cuda_warnings": [],
        "device_count": 0,
        "arch_list": [],
        "gpu_checks_skipped": False,
        "skip_reason": "",
        "checks": [],
        "gpus": [],
        "fatal": None,
    }
    try:
        run(out, opts)
    except BaseException as exc:  # noqa: BLE001 - the JSON line must come out
        out["fatal"] = error_text(exc)
    sys.stdout.flush()
    line = json.dumps(finite(out), allow_nan=False, default=str)
    sys.stdout.write("\n" + MARKER + line + "\n")
    sys.stdout.flush()
    if opts["imports"]:
        import_modules(opts["imports"], opts["import_claims"], opts["import_timeout"])


if __name__ == "__main__":
    main(sys.argv[1:])
