#!/usr/bin/env python3
"""make_torch_builds.py - regenerates manifests/torch-builds.json (`make torch-builds`).

For every torch build the package index serves for the chosen platforms
(default: Linux x86_64) from --min-version (default 2.6) to the newest, one
entry: version, local label, build tag, platform, the CUDA toolkit and the
SASS/PTX of torch's own CUDA library, and the sha256 of every wheel file of
that build as the index lists them (the Python versions of one build share
its CUDA code, so one wheel per build is downloaded, audited with
`mlsetup audit --json` and deleted). A build already in the output file
whose audited wheel is still listed is kept as it is, without a download,
unless --full is given. Minimum drivers are not written: mlsetup looks them
up in manifests/drivers.json.

A build whose file names carry a PEP 427 build tag (torch-2.10.0-3-cp311-...)
is a second set of files the index serves for a version it already has;
its entry gets a `note` saying what the set replaced: the upload dates of
both sets (PEP 691 JSON, api-version 1.1), and which files inside the
wheels differ, from the RECORD of the audited wheel and of its counterpart
in the set before (read over HTTP byte ranges: the central directory and
RECORD only, not the whole wheel; from --local when the wheel is there).
A kept entry keeps its note.

--check downloads nothing: it reads the index's project page and lists the
builds (and the wheel files of known builds) the table lacks; exit status 1
when something is missing, 0 when the table is current.

The index comes from --index-url, MLSETUP_INDEX_URL, PIP_INDEX_URL, pip's
configuration (`pip config list`), or pip's own default; its project page
is read as PEP 691 JSON (PEP 503 HTML as a fallback). No URL is written to
the table: file names and hashes only. Standard library plus pip.

Each entry names its build as (version, backend, platform) on an index:
`backend` is the build's flavour (cpu, cu126, cu130, ...; from the local
label, else from the CUDA version: a default-index CUDA 13.0 build is
cu130), `index` is `default` for the builds above and `variant` for the
builds of PyTorch's per-backend indexes (local label +<backend>), and
`source` says where the facts come from: "audited <file> <sha256>" for the
builds above. The variant builds are derived, not audited, for every
release the audited builds cover (--no-variants leaves them out): from
the release's own arch table, PYTORCH_RELEASES_CODE_CC in
torch/cuda/__init__.py (every wheel from 2.11 on carries it: per CUDA
version, keyed by host arch from 2.13 on), read from an audited wheel of
that release in a --local directory, else from any wheel named for that
release there, else by byte ranges from the index; for a release whose
wheel has no table (2.6 - 2.10), from PyTorch's release notes
(RELEASE_NOTES_* below); a release whose wheel cannot be read keeps the
derived entries the table had. A derived entry's SASS is the table's
compute capabilities as plain sm_XY, or null where the source names none.

--offline reads no index: the audited entries of the table (-o) are kept
as they are and the derived ones made again from --local wheels, so `make
torch-builds TORCH_BUILDS_FLAGS="--offline --local DIR"` regenerates the
file without the network when DIR holds one wheel per release.
"""
import argparse
import ast
import difflib
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile

ACCEPT = ("application/vnd.pypi.simple.v1+json, "
          "application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01")
WHEEL_RE = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-(?P<build>\d[^-]*))?"
                      r"-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def log(msg):
    print("make_torch_builds: " + msg, file=sys.stderr, flush=True)


def parse_version(v):
    """A comparable key for a PEP 440 version (packaging's, else a fallback)."""
    try:
        from packaging.version import Version
    except ImportError:
        try:
            from pip._vendor.packaging.version import Version
        except ImportError:
            Version = None
    if Version is not None:
        return Version(v)
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.+]", v))


def index_url(arg):
    """The index: the flag, the environment, pip's configuration, pip's default."""
    for v in (arg, os.environ.get("MLSETUP_INDEX_URL"), os.environ.get("PIP_INDEX_URL")):
        if v:
            return v
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                             capture_output=True, text=True, timeout=60).stdout
        for line in out.splitlines():
            key, _, val = line.partition("=")
            if key.strip().endswith(".index-url") and val.strip():
                return val.strip().strip("'\"")
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        from pip._internal.models.index import PyPI
        return PyPI.simple_url
    except ImportError:
        sys.exit("make_torch_builds: no index: pass --index-url or set PIP_INDEX_URL")


class Anchors(html.parser.HTMLParser):
    """PEP 503: <a href="...#sha256=..." data-yanked=...>file</a>."""

    def __init__(self):
        super().__init__()
        self.files = []

    def handle_starttag(self, tag, attrs):
        if tag != "a":
            return
        a = dict(attrs)
        href = a.get("href") or ""
        url, _, frag = href.partition("#")
        algo, _, digest = frag.partition("=")
        name = urllib.parse.unquote(url.rstrip("/").rsplit("/", 1)[-1])
        self.files.append({"filename": name, "url": url,
                           "hashes": {algo: digest} if algo else {},
                           "yanked": "data-yanked" in a})


def project_files(index, project):
    """Every file the index lists for project: dicts with filename, url, sha256."""
    page = index.rstrip("/") + "/" + project + "/"
    req = urllib.request.Request(page, headers={"Accept": ACCEPT})
    with urllib.request.urlopen(req, timeout=300) as r:
        ctype = r.headers.get("Content-Type", "")
        body = r.read()
        page = r.geturl()
    if "json" in ctype:
        files = json.loads(body)["files"]
    else:
        p = Anchors()
        p.feed(body.decode("utf-8", "replace"))
        files = p.files
    out = []
    for f in files:
        sha = (f.get("hashes") or {}).get("sha256", "").lower()
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            log("%s: no sha256 on the index page, left out" % f["filename"])
            continue
        out.append({"filename": f["filename"], "sha256": sha,
                    "url": urllib.parse.urljoin(page, f["url"]),
                    "yanked": bool(f.get("yanked")),
                    "upload_time": f.get("upload-time") or ""})
    return out


def platform_of(tag):
    """'manylinux_2_28_x86_64.manylinux2014_x86_64' -> 'linux-x86_64' (as mlsetup)."""
    first = tag.split(".")[0]
    if "linux" in first:
        os_name = "linux"
    elif first.startswith("win"):
        os_name = "windows"
    elif first.startswith("macosx"):
        os_name = "darwin"
    else:
        return "any" if first == "any" else ""
    for suffix, arch in (("x86_64", "x86_64"), ("amd64", "x86_64"),
                         ("aarch64", "aarch64"), ("arm64", "aarch64")):
        if first.endswith(suffix):
            return os_name + "-" + arch
    return ""


def group_builds(files, min_version, platforms):
    """(version, local, build tag, platform) -> the wheel files of that build."""
    groups = {}
    for f in files:
        m = WHEEL_RE.match(f["filename"])
        if not m:
            continue
        version, _, local = m.group("version").partition("+")
        try:
            if parse_version(version) < parse_version(min_version):
                continue
        except Exception:  # not PEP 440: not a release we know
            continue
        plat = platform_of(m.group("plat"))
        if plat not in platforms:
            continue
        key = (version, local, m.group("build") or "", plat)
        groups.setdefault(key, []).append(dict(f, py=m.group("py"), abi=m.group("abi")))
    return groups


def pick(files):
    """The wheel to audit: CPython 3.11, then 3.12, then any; not free-threaded."""
    for py in ("cp311", "cp312"):
        for f in files:
            if f["py"] == py and f["abi"] == py:
                return f
    return sorted(files, key=lambda f: f["filename"])[0]


def fetch(f, work, local_dirs):
    """A verified local copy of f: from a --local directory, else downloaded."""
    for d in local_dirs:
        p = os.path.join(d, f["filename"])
        if os.path.isfile(p) and sha256_file(p) == f["sha256"]:
            return p, False
    out = os.path.join(work, f["filename"])
    h = hashlib.sha256()
    with urllib.request.urlopen(f["url"], timeout=600) as r, open(out + ".part", "wb") as o:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            h.update(b)
            o.write(b)
    if h.hexdigest() != f["sha256"]:
        os.unlink(out + ".part")
        sys.exit("make_torch_builds: %s: sha256 mismatch (index says %s, got %s)"
                 % (f["filename"], f["sha256"], h.hexdigest()))
    os.rename(out + ".part", out)
    return out, True


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


class RangeFile(io.RawIOBase):
    """A remote file read with HTTP byte-range requests, for zipfile: a
    wheel's central directory and one member without the whole wheel."""

    def __init__(self, url):
        super().__init__()
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"),
                                    timeout=120) as r:
            self.size = int(r.headers["Content-Length"])
            self.url = r.geturl()
        self.pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos

    def readinto(self, b):
        n = min(len(b), self.size - self.pos)
        if n <= 0:
            return 0
        req = urllib.request.Request(self.url, headers={
            "Range": "bytes=%d-%d" % (self.pos, self.pos + n - 1)})
        with urllib.request.urlopen(req, timeout=300) as r:
            if r.status != 206:
                raise OSError("the server does not serve byte ranges")
            data = r.read(n)
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)


def open_wheel(f, local_dirs):
    """A ZipFile of f: a verified --local copy, else read remotely by ranges."""
    for d in local_dirs:
        p = os.path.join(d, f["filename"])
        if os.path.isfile(p) and sha256_file(p) == f["sha256"]:
            return zipfile.ZipFile(p)
    return zipfile.ZipFile(io.BufferedReader(RangeFile(f["url"]), 1 << 16))


def wheel_record(z):
    """{path: hash} from a wheel's .dist-info/RECORD."""
    name = next(n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n))
    rec = {}
    for line in z.read(name).decode("utf-8", "replace").splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3:
            rec[parts[0]] = parts[1]
    return rec


def day(t):
    return t[:10] if t else "an unknown date"


def first_comment(lines):
    """The first sentence of the first block of # comment lines, or ""."""
    block, started = [], False
    for x in lines:
        if x.startswith("#"):
            block.append(x.lstrip("# "))
            started = True
        elif started:
            break
    text = " ".join(block)
    end = text.find(". ")
    return (text[:end + 1] if end >= 0 else text)[:300]


def build_tag_note(key, groups, local_dirs):
    """What a build-tagged set of files replaced: upload dates, and which
    files inside the wheels differ from the set before (RECORD)."""
    version, local, build_tag, plat = key
    before = sorted((k for k in groups if k[:2] == (version, local) and k[3] == plat
                     and int(k[2] or 0) < int(build_tag)), key=lambda k: int(k[2] or 0))
    new = groups[key]
    label = lambda k: "build tag %s" % k[2] if k[2] else "untagged"  # noqa: E731
    when = lambda fs: day(min((f["upload_time"] for f in fs if f["upload_time"]),  # noqa: E731
                              default=""))
    if not before:
        return ("the index serves these %s files with build tag %s (uploaded %s) and no "
                "earlier set" % (version, build_tag, when(new)))
    prev = before[-1]
    old = groups[prev]
    note = ("the index serves %d sets of %s files for %s: %s, uploaded %s, and build tag %s, "
            "uploaded %s, which replaced it (the build tag breaks the tie between otherwise "
            "equal file names, PEP 427: pip takes the highest)"
            % (len(before) + 1, version, plat, label(prev), when(old), build_tag, when(new)))
    same_hash = {f["sha256"] for f in new} & {f["sha256"] for f in old}
    note += "; %s" % ("some files are the same bytes" if same_hash
                      else "every file has a new sha256")
    a = pick(new)
    b = next((f for f in old if (f["py"], f["abi"]) == (a["py"], a["abi"])), None)
    if b is None:
        return note
    try:
        with open_wheel(b, local_dirs) as zb, open_wheel(a, local_dirs) as za:
            rb, ra = wheel_record(zb), wheel_record(za)
            changed = sorted(p for p in set(ra) | set(rb)
                             if ra.get(p) != rb.get(p) and not p.endswith(".dist-info/RECORD"))
            libs = [p for p in changed if re.search(r"\.(so(\.\d+)*|dll)$", p)]
            what = []
            for p in changed:
                desc = p
                if p.endswith(".py") and p in ra and p in rb:
                    la = za.read(p).decode("utf-8", "replace").splitlines()
                    lb = zb.read(p).decode("utf-8", "replace").splitlines()
                    added = [x[1:].strip() for x in difflib.unified_diff(lb, la, n=0)
                             if x.startswith("+") and not x.startswith("+++")]
                    removed = [x for x in difflib.unified_diff(lb, la, n=0)
                               if x.startswith("-") and not x.startswith("---")]
                    desc += " (+%d -%d lines" % (len(added), len(removed))
                    comment = first_comment(added)
                    desc += ': "%s")' % comment if comment else ")"
                what.append(desc)
    except (OSError, KeyError, StopIteration, zipfile.BadZipFile) as e:
        return note + "; the wheels' contents were not compared (%s)" % e
    note += "; in the %s wheels %d of %d files differ: %s" % (
        a["py"], len(changed), len(ra), ", ".join(what) or "none")
    note += "; %s" % ("libraries changed: " + ", ".join(libs) if libs else
                      "every library is byte-identical, so the CUDA code is the same")
    return note


def check(old_builds, groups):
    """Lines naming what the index serves and the table lacks."""
    have = {(b["version"], b["local"], b["build_tag"], b["platform"]): b for b in old_builds
            if b.get("index", "default") == "default"}
    out = []
    for key in sorted(groups, key=lambda k: (parse_version(k[0]), k[1], int(k[2] or 0), k[3])):
        name = "-".join(x for x in key[:3] if x) + " " + key[3]
        b = have.get(key)
        if b is None:
            out.append("missing build: torch %s (%d wheel files, e.g. %s)"
                       % (name, len(groups[key]), pick(groups[key])["filename"]))
            continue
        known = {f["sha256"] for f in b["files"]}
        for f in sorted(groups[key], key=lambda f: f["filename"]):
            if f["sha256"] not in known:
                out.append("missing file of torch %s: %s" % (name, f["filename"]))
    return out


# --- the variant indexes' builds, derived ------------------------------------

# PyTorch's release RFCs (release notes): the CUDA backends of the variant
# indexes per release, for releases whose wheels carry no arch table of their
# own (2.6 - 2.10), and to compare with the tables of the later ones. Every
# release also has a CPU build on the `cpu` index.
RELEASE_NOTES_BACKENDS = {
    "2.6": ("cu118", "cu124", "cu126"),
    "2.7": ("cu118", "cu126", "cu128"),
    "2.8": ("cu126", "cu128", "cu129"),
    "2.9": ("cu126", "cu128", "cu129", "cu130"),
    "2.10": ("cu126", "cu128", "cu130"),
    "2.11": ("cu126", "cu128", "cu130"),
    "2.12": ("cu126", "cu130", "cu132"),
    "2.13": ("cu126", "cu130", "cu132"),
    "2.14": ("cu126", "cu130", "cu132"),
    "2.15": ("cu126", "cu130", "cu132", "cu134"),
}
# Backends the release notes name without confirming them.
RELEASE_NOTES_UNCONFIRMED = {("2.15", "cu134")}
# The compute capabilities the release notes give for a backend's Linux
# x86_64 builds, from the first release (minor) each holds for; the lists are
# the notes' ranges as the release tables spell them out (sm_50 ... sm_90:
# 50 60 70 75 80 86 90). A backend not here (cu118, cu124, cu129, and cu128
# before 2.8) gets no code: its wheel must be audited.
RELEASE_NOTES_CODE = {
    "cu126": ("2.6", (50, 60, 70, 75, 80, 86, 90)),
    "cu128": ("2.8", (70, 75, 80, 86, 90, 100, 120)),
    "cu130": ("2.9", (75, 80, 86, 90, 100, 120)),
}
TABLE_NAME = "PYTORCH_RELEASES_CODE_CC"
HOST_PLATFORM = {"x86_64": "linux-x86_64", "aarch64": "linux-aarch64"}
PLATFORM_ORDER = ("linux-x86_64", "linux-aarch64", "windows-x86_64")


def minor_of(version):
    """'2.15.0' -> '2.15'."""
    return ".".join(version.split(".")[:2])


def backend_of(local, cuda):
    """The build's flavour: its local label when that names one (cpu, cu126,
    rocm6.2.4, xpu), else from its CUDA version ("13.0" -> cu130, none ->
    cpu); "" when the CUDA version has no minor. As src/plan/torch.c."""
    if re.fullmatch(r"cpu|xpu|cu\d+|rocm[0-9.]+", local or ""):
        return local
    if not cuda:
        return "cpu"
    m = re.fullmatch(r"(\d+)\.(\d+)(\.\d+)*", cuda)
    return "cu%s%s" % (m.group(1), m.group(2)) if m else ""


def cuda_of_backend(backend):
    """'cu126' -> '12.6', 'cu130' -> '13.0'."""
    digits = backend[2:]
    return "%s.%s" % (digits[:-1], digits[-1])


def backend_key(backend):
    """Sort key: cpu first, then CUDA backends by their number."""
    return (0, 0) if backend == "cpu" else (1, int(backend[2:]))


def release_table(z):
    """PYTORCH_RELEASES_CODE_CC of a torch wheel's torch/cuda/__init__.py, or None."""
    try:
        tree = ast.parse(z.read("torch/cuda/__init__.py").decode("utf-8", "replace"))
    except (KeyError, SyntaxError):
        return None
    for node in tree.body:
        targets = ([node.target] if isinstance(node, ast.AnnAssign) else
                   node.targets if isinstance(node, ast.Assign) else [])
        if any(isinstance(t, ast.Name) and t.id == TABLE_NAME for t in targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def sm_names(ccs):
    return ["sm_%d" % c for c in sorted(ccs)]


def variant_entry(version, backend, platform, cuda, sass, source, note=None):
    b = {"version": version, "local": backend, "build_tag": "", "platform": platform,
         "backend": backend, "index": "variant", "source": source, "cuda": cuda,
         "sass": sass, "ptx": [] if sass is not None else None, "files": []}
    if note:
        b["note"] = note
    return ordered(b)


def from_release_table(version, table):
    """The variant builds a release's own arch table names: one per CUDA
    version and host arch (one per CUDA version for linux-x86_64 where the
    table is not keyed by host arch)."""
    source = "release table torch %s torch/cuda/__init__.py %s" % (version, TABLE_NAME)
    notes = RELEASE_NOTES_BACKENDS.get(minor_of(version))
    out = []
    for cuda, row in table.items():
        backend = backend_of("", cuda)
        if not backend:
            continue
        note = None
        if notes is not None and backend not in notes:
            note = ("the release table lists CUDA %s; the release notes name no %s build of "
                    "%s" % (cuda, backend, minor_of(version)))
        elif (minor_of(version), backend) in RELEASE_NOTES_UNCONFIRMED:
            note = ("the release table lists CUDA %s; the release notes name the %s build "
                    "unconfirmed" % (cuda, backend))
        if isinstance(row, dict):
            for host, ccs in row.items():
                if HOST_PLATFORM.get(host) and ccs:
                    out.append(variant_entry(version, backend, HOST_PLATFORM[host], cuda,
                                             sm_names(ccs), source, note))
        else:
            flat = ("the table of this release is not keyed by host arch: one set for its "
                    "x86_64 and aarch64 builds together")
            out.append(variant_entry(version, backend, "linux-x86_64", cuda, sm_names(row),
                                     source, note + "; " + flat if note else flat))
    return out


def from_release_notes(version):
    """The variant builds the release notes name for a release without a table."""
    minor = minor_of(version)
    out = []
    for backend in RELEASE_NOTES_BACKENDS.get(minor, ()):
        code = RELEASE_NOTES_CODE.get(backend)
        sass = (sm_names(code[1]) if code and parse_version(minor) >= parse_version(code[0])
                else None)
        note = None
        if sass is None:
            note = "the release notes name no compute capabilities for this build"
        if (minor, backend) in RELEASE_NOTES_UNCONFIRMED:
            note = "the release notes name this build unconfirmed"
        out.append(variant_entry(version, backend, "linux-x86_64", cuda_of_backend(backend),
                                 sass, "release notes", note))
    return out


def cpu_entry(version):
    """The release's CPU build, where the release notes cover the release."""
    if minor_of(version) not in RELEASE_NOTES_BACKENDS:
        return []
    return [variant_entry(version, "cpu", "linux-x86_64", None, [], "release notes")]


def release_wheel(version, builds, local_dirs, online):
    """A ZipFile of a torch wheel of version: an audited file of one of its
    builds in a --local directory (name and sha256), else any wheel named
    for that version there, else (online) the audited file read remotely
    by byte ranges. None when there is none."""
    audited = [b["audited"] for b in builds if b.get("audited")]
    for a in audited:
        for d in local_dirs:
            p = os.path.join(d, a["filename"])
            if os.path.isfile(p) and sha256_file(p) == a["sha256"]:
                return zipfile.ZipFile(p)
    pattern = re.compile(r"^torch-%s(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$" % re.escape(version))
    for d in local_dirs:
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if pattern.match(name):
                log("%s: its release table read from %s (not an audited file)" % (version, name))
                return zipfile.ZipFile(os.path.join(d, name))
    for a in audited:
        if online and a.get("url"):
            try:
                return zipfile.ZipFile(io.BufferedReader(RangeFile(a["url"]), 1 << 16))
            except (OSError, zipfile.BadZipFile) as e:
                log("%s: %s not read (%s)" % (version, a["filename"], e))
    return None


def variant_builds(audited, old_builds, local_dirs, urls):
    """The variant indexes' builds of every release the audited builds cover:
    from each release's own arch table where its wheel carries one, else
    from the release notes; a release whose wheel cannot be read keeps the
    derived entries it had."""
    by_version = {}
    for b in audited:
        by_version.setdefault(b["version"], []).append(
            dict(b, audited=dict(b["audited"], url=urls.get(b["audited"]["sha256"]))))
    old = {}
    for b in old_builds:
        if b.get("index") == "variant":
            old.setdefault(b["version"], []).append(b)
    out = []
    for version in sorted(by_version, key=parse_version):
        z = release_wheel(version, by_version[version], local_dirs, bool(urls))
        if z is None:
            if version in old:
                log("%s: no wheel to read: its derived entries kept" % version)
                out.extend(old[version])
            else:
                log("%s: no wheel to read and no derived entries before: the release notes"
                    % version)
                out.extend(from_release_notes(version) + cpu_entry(version))
            continue
        with z:
            table = release_table(z)
        derived = from_release_table(version, table) if table else from_release_notes(version)
        out.extend(derived + cpu_entry(version))
    return out


def sort_key(b):
    """Builds by version; the default index's first (as before: local label,
    build tag, platform), then the variant indexes' by platform and backend."""
    if b.get("index", "default") == "default":
        return (parse_version(b["version"]), 0, b["local"], int(b["build_tag"] or 0),
                b["platform"])
    plat = PLATFORM_ORDER.index(b["platform"]) if b["platform"] in PLATFORM_ORDER else 9
    return (parse_version(b["version"]), 1, (plat, b["platform"]), backend_key(b["backend"]), 0,
            "")


def with_model(b):
    """An audited (default index) entry with its backend, index and source."""
    b = dict(b)
    b["backend"] = b.get("backend") or backend_of(b["local"], b["cuda"])
    b["index"] = "default"
    b["source"] = "audited %s %s" % (b["audited"]["filename"], b["audited"]["sha256"])
    return ordered(b)


ORDER = ("version", "local", "build_tag", "note", "platform", "backend", "index", "source",
         "cuda", "torch_version", "library", "sass", "ptx", "partial", "audited", "files")


def ordered(b):
    """b with its keys in the table's order (unknown keys before files)."""
    out = {k: b[k] for k in ORDER if k in b and k != "files"}
    out.update({k: v for k, v in b.items() if k not in ORDER})
    out["files"] = b["files"]
    return out


def audit(mlsetup, path):
    """The torch_wheels[0] object of `mlsetup audit --json` on one wheel."""
    p = subprocess.run([mlsetup, "audit", "--json", "--arch", "9.0", path],
                       capture_output=True, text=True)
    if p.returncode not in (0, 5):
        sys.exit("make_torch_builds: mlsetup audit %s failed (%d): %s"
                 % (os.path.basename(path), p.returncode, p.stderr.strip()))
    wheels = json.loads(p.stdout).get("torch_wheels") or []
    if len(wheels) != 1:
        sys.exit("make_torch_builds: %s: mlsetup does not see a torch wheel"
                 % os.path.basename(path))
    return wheels[0]


def entry(key, files, audited_file, w):
    version, local, build_tag, plat = key
    b = w["torch_build"]
    if (b["version"], b["local"], b["build_tag"]) != (version, local, build_tag):
        sys.exit("make_torch_builds: %s: the wheel says %s+%s build %r, its name %s+%s build %r"
                 % (audited_file["filename"], b["version"], b["local"], b["build_tag"],
                    version, local, build_tag))
    return {
        "version": version, "local": local, "build_tag": build_tag, "platform": plat,
        "cuda": b["cuda"], "torch_version": w["torch_version"], "library": w["library"],
        "sass": b["sass"], "ptx": b["ptx"],
        "partial": [{"library": g["library"], "missing": g["missing"]} for g in w["gaps"]],
        "audited": {"filename": audited_file["filename"], "sha256": audited_file["sha256"]},
        "files": sorted(({"filename": f["filename"], "sha256": f["sha256"]} for f in files),
                        key=lambda f: f["filename"]),
    }


def render(builds, platforms, min_version):
    """The table, one build per block and one file per line, for readable diffs."""
    head = {
        "schema": "mlsetup.torch-builds/2",
        "comment": ("Generated by `make torch-builds` (manifests/make_torch_builds.py); do not "
                    "edit. A torch build is (version, backend, platform) on an index: "
                    "`backend` is its flavour (cpu, cu126, cu130, ...: a default-index CUDA "
                    "13.0 build is cu130), `index` is `default` (the package index; no local "
                    "label) or `variant` (PyTorch's per-backend indexes; local label "
                    "+<backend>), `cuda` its CUDA toolkit (null: CPU-only), `sass`/`ptx` the "
                    "code of torch's own CUDA library (%s) and `source` where those facts "
                    "come from. Audited entries (source \"audited <file> <sha256>\"): every "
                    "build the package index serves for %s from %s on, read by `mlsetup "
                    "audit` from one wheel per build (`audited`); their SASS is the "
                    "library's real SASS, `a`/`f` variants included; `partial` names torch "
                    "libraries that miss some of those GPUs; `files` are the sha256 of every "
                    "wheel file of the build, which share its CUDA code; `note` on a "
                    "build-tagged set says what that set of files replaced. Derived entries "
                    "(not audited, `files` empty): the variant indexes' builds of the same "
                    "releases, from each release's own arch table (source \"release table "
                    "torch X torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC\") or, for a "
                    "release without one, from PyTorch's release notes (source \"release "
                    "notes\"); a derived entry lists the table's compute capabilities as "
                    "plain sm_XY (no a/f variants, no PTX), or null where its source names "
                    "none (audit the wheel); its `note` says where a source is partial or "
                    "disagrees with the other. Minimum drivers come from drivers.json. Read "
                    "by src/plan/torch.c."
                    % ("libtorch_cuda.so, what torch.cuda.get_arch_list() reports",
                       ", ".join(platforms), min_version)),
    }
    lines = ["{"]
    for k, v in head.items():
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(v)))
    lines.append('  "builds": [')
    for i, b in enumerate(builds):
        lines.append("    {")
        keys = [k for k in b if k != "files"]
        for k in keys:
            lines.append("      %s: %s," % (json.dumps(k), json.dumps(b[k])))
        if not b["files"]:
            lines.append('      "files": []')
        else:
            lines.append('      "files": [')
            for j, f in enumerate(b["files"]):
                lines.append("        %s%s" % (json.dumps(f),
                                               "," if j + 1 < len(b["files"]) else ""))
            lines.append("      ]")
        lines.append("    }%s" % ("," if i + 1 < len(builds) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default="manifests/torch-builds.json")
    ap.add_argument("--mlsetup", default="build/mlsetup", help="the mlsetup that audits")
    ap.add_argument("--index-url", help="PEP 503/691 index (default: pip's)")
    ap.add_argument("--project", default="torch")
    ap.add_argument("--min-version", default="2.6")
    ap.add_argument("--platform", action="append",
                    help="os-arch to include, repeatable (default: linux-x86_64)")
    ap.add_argument("--full", action="store_true", help="audit every build again")
    ap.add_argument("--local", action="append", default=[],
                    help="directory holding wheels to use instead of downloading (by name, "
                         "checked against the index's sha256), and whose release tables "
                         "the derived entries are read from")
    ap.add_argument("--offline", action="store_true",
                    help="read no index: keep the audited entries of the table (-o) as they "
                         "are and derive the variant builds again from --local wheels")
    ap.add_argument("--no-variants", action="store_true",
                    help="audited entries only: no derived variant-index builds")
    ap.add_argument("--work-dir", help="where downloads go (default: a temporary directory)")
    ap.add_argument("--check", action="store_true",
                    help="download nothing, change nothing: list the builds and wheel files "
                         "the index serves that the table (-o) lacks; exit 1 if any")
    args = ap.parse_args()
    platforms = args.platform or ["linux-x86_64"]

    old, old_builds = {}, []
    if os.path.exists(args.output):
        with open(args.output) as fh:
            old_builds = json.load(fh).get("builds", [])
        for b in old_builds:
            if "audited" in b and (args.check or not args.full):
                old[b["audited"]["sha256"]] = b
    if args.offline:
        if args.check or args.full:
            sys.exit("make_torch_builds: --offline reads no index: no --check, no --full")
        builds = [with_model(b) for b in old_builds if b.get("index", "default") == "default"]
        if not builds:
            sys.exit("make_torch_builds: --offline: %s has no audited builds to keep"
                     % args.output)
        urls, downloaded, kept = {}, 0, len(builds)
    else:
        files = project_files(index_url(args.index_url), args.project)
        groups = group_builds(files, args.min_version, platforms)
        if not groups:
            sys.exit("make_torch_builds: the index lists no %s wheel for %s from %s on"
                     % (args.project, ", ".join(platforms), args.min_version))
        if args.check:
            missing = check(old_builds, groups)
            for line in missing:
                print(line)
            log("%s: %s" % (args.output, "%d missing" % len(missing) if missing else
                            "current: every %s build the index serves for %s from %s on is "
                            "in it (%d builds)" % (args.project, ", ".join(platforms),
                                                   args.min_version, len(groups))))
            sys.exit(1 if missing else 0)
        urls = {f["sha256"]: f["url"] for f in files}
        builds, downloaded, kept = audited_builds(args, groups, old)
    derived = [] if args.no_variants else variant_builds(builds, old_builds, args.local, urls)
    builds = sorted(builds + derived, key=sort_key)
    text = render(builds, platforms, args.min_version)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, args.output)
    n = len(builds) - len(derived)
    log("%d builds (%d audited now, %d downloaded, %d kept) and %d derived variant builds -> %s"
        % (n, n - kept, downloaded, kept, len(derived), args.output))


def audited_builds(args, groups, old):
    """The default index's builds: kept from the table when one of their
    files is known, else one wheel each downloaded and audited."""
    work = args.work_dir or tempfile.mkdtemp(prefix="torch-builds.")
    os.makedirs(work, exist_ok=True)
    builds, downloaded, kept = [], 0, 0
    try:
        for key in sorted(groups, key=lambda k: (parse_version(k[0]), k[1], int(k[2] or 0), k[3])):
            fs = groups[key]
            hashes = {f["sha256"] for f in fs}
            prev = next((old[h] for h in hashes if h in old), None)
            if prev is not None:
                b = dict(prev)
                b["files"] = sorted(({"filename": f["filename"], "sha256": f["sha256"]}
                                     for f in fs), key=lambda f: f["filename"])
                if key[2] and not b.get("note"):
                    b["note"] = build_tag_note(key, groups, args.local)
                builds.append(with_model(b))
                kept += 1
                continue
            f = pick(fs)
            log("%s: auditing %s" % ("-".join(x for x in key if x), f["filename"]))
            path, fresh = fetch(f, work, args.local)
            try:
                b = entry(key, fs, f, audit(args.mlsetup, path))
                if key[2]:
                    b["note"] = build_tag_note(key, groups, args.local + [work])
                builds.append(with_model(b))
            finally:
                if fresh:
                    os.unlink(path)
            downloaded += fresh
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    return builds, downloaded, kept


if __name__ == "__main__":
    main()
