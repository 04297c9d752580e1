#!/usr/bin/env python3
"""Loopback package index for mlsetup's tests, with fault injection.

Serves every file under ROOT/files/ as a PEP 503 (HTML) and PEP 691 (JSON)
"simple" index at /simple/, and the files themselves at /files/<name>
(HEAD, single Range, ETag / Last-Modified with If-None-Match /
If-Modified-Since / If-Range). Each directory ROOT/whl/<backend>/ is served
the way PyTorch's per-backend indexes are: an index at /whl/<backend>/
whose project pages (/whl/<backend>/<project>/) link the files beside them
(/whl/<backend>/<name>); a backend without a directory is 404. Binds
127.0.0.1 only. Python 3 standard library only. Faults come from
ROOT/faults.json, read on every request, so a test can change them while
the server runs. See tests/mirror/README.md.

    python3 tests/mirror/server.py --root DIR [--port 0] [--port-file F]
                                   [--https --cert C --key K] [--hold-file F] [-v]
"""

import argparse
import email.utils
import fcntl
import hashlib
import html
import json
import os
import re
import signal
import socket
import ssl
import struct
import sys
import termios
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_V1 = "application/vnd.pypi.simple.v1+json"
HTML_V1 = "application/vnd.pypi.simple.v1+html"
TEXT_HTML = "text/html"
API_VERSION = "1.1"
SIDECARS = (".requires-python", ".yanked", ".metadata")
ENDLESS_LIMIT_S = 300  # "endless" bodies stop after 5 minutes whatever happens
SDIST_RE = re.compile(r"^(?P<name>.+?)-(?P<version>[0-9][^-]*)\.(tar\.gz|tgz|zip|tar\.bz2|tar\.xz|tar)$")

STOP = threading.Event()


def normalize(name):
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(filename):
    """(normalized project name, version) of a wheel or sdist file name."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) >= 5:
            return normalize(parts[0]), parts[1]
        return None, None
    m = SDIST_RE.match(filename)
    if m:
        return normalize(m.group("name")), m.group("version")
    return None, None


class FileInfo:
    """What the index says about one file, cached by (size, mtime)."""

    _cache = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, path):
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with cls._lock:
            info = cls._cache.get(key)
        if info is None:
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            info = {"sha256": h.hexdigest(), "size": st.st_size, "mtime": st.st_mtime}
            with cls._lock:
                cls._cache[key] = info
        return info


def read_sidecar(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def parse_accept(header):
    """[(media type, q)] from an Accept header, highest q first, in order."""
    out = []
    for i, part in enumerate((header or "").split(",")):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        out.append((fields[0].lower(), q, i))
    out.sort(key=lambda t: (-t[1], t[2]))
    return [(m, q) for m, q, _ in out]


def negotiate(header):
    """PEP 691 content negotiation: the content type to answer with, or None
    (406). No Accept header means text/html, as on the public index."""
    if not header:
        return TEXT_HTML
    aliases = {
        JSON_V1: JSON_V1,
        "application/vnd.pypi.simple.latest+json": JSON_V1,
        HTML_V1: HTML_V1,
        "application/vnd.pypi.simple.latest+html": HTML_V1,
        TEXT_HTML: TEXT_HTML,
        "text/*": TEXT_HTML,
        "*/*": TEXT_HTML,
    }
    for media, q in parse_accept(header):
        if q > 0 and media in aliases:
            return aliases[media]
    return None


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.fault_uses = {}

    def hit(self, path):
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1

    def use_fault(self, key):
        """Returns how many times this fault fired before, and counts one more."""
        with self.lock:
            n = self.fault_uses.get(key, 0)
            self.fault_uses[key] = n + 1
            return n

    def snapshot(self):
        with self.lock:
            return dict(self.counts)

    def reset(self):
        with self.lock:
            self.counts.clear()
            self.fault_uses.clear()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mlsetup-mirror/1"
    # Headers and body go out in separate writes. With Nagle's algorithm the
    # body of a small response then waits for the client's (delayed) ACK of
    # the headers: 40 ms per request on a reused connection, which is what
    # the benchmarks measured instead of the clients. Real servers and CDNs
    # send with TCP_NODELAY.
    disable_nagle_algorithm = True

    def version_string(self):
        return self.server_version

    # --- plumbing -------------------------------------------------------

    def setup(self):
        self.server.stats.hit("/_connections")
        if self.server.tls is not None:
            self.server.stats.hit("/_tls_connections")
            self.request.settimeout(10)
            try:
                conn = self.server.tls.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                # the client refused the certificate (or went away)
                self.server.stats.hit("/_tls_failed")
                raise
            self.request = conn
        super().setup()

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def root(self):
        return self.server.root

    def send_page(self, body, ctype):
        """An index page with a strong ETag (hash of the body, so it differs
        per content type) and conditional GET: If-None-Match -> 304."""
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:32]
        inm = self.headers.get("If-None-Match")
        if inm is not None and (etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"):
            self.server.stats.hit(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                                  + " 304")
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Vary", "Accept")
            self.end_headers()
            return
        self.send_body(200, body, ctype, {"Vary": "Accept", "ETag": etag})

    def send_body(self, status, body, ctype, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_status(self, status, text=None):
        body = ((text or self.responses.get(status, ("",))[0]) + "\n").encode()
        self.send_body(status, body, "text/plain; charset=utf-8")

    def abort_connection(self):
        """Close abruptly: RST instead of FIN, so the client sees a reset.
        Waits (at most 2 s) until the client has acknowledged everything
        sent, so the reset lands exactly at the fault's offset instead of
        throwing away whatever still sat in the send buffer."""
        try:
            self.wfile.flush()
        except OSError:
            pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                unacked = struct.unpack("i", fcntl.ioctl(self.connection.fileno(),
                                                         termios.TIOCOUTQ, b"\0" * 4))[0]
            except (OSError, ValueError):
                break
            if unacked == 0:
                break
            time.sleep(0.005)
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    # --- faults ---------------------------------------------------------

    def faults_for(self, key):
        """Faults configured for a file name or a request path, as a list of
        strings. A fault written with a trailing "xN" ("reset_at:50%x1",
        "stall_after_headers:5x2") applies to the first N requests that see
        it and then no more; `status:CODExN` keeps its own meaning, counted
        in status_fault()."""
        try:
            with open(os.path.join(self.root(), "faults.json"), encoding="utf-8") as f:
                table = json.load(f)
        except (OSError, ValueError):
            return []
        val = table.get(key)
        if val is None:
            return []
        out = []
        for fault in ([val] if isinstance(val, str) else list(val)):
            m = re.fullmatch(r"(.+?)x(\d+)", fault)
            if m and not fault.startswith("status:"):
                if self.server.stats.use_fault((key, fault)) >= int(m.group(2)):
                    continue
                fault = m.group(1)
            out.append(fault)
        return out

    def status_fault(self, key, faults):
        """Handles "status:CODE" and "status:CODExN"; True when it answered."""
        for fault in faults:
            m = re.fullmatch(r"status:(\d{3})(?:x(\d+))?", fault)
            if not m:
                continue
            code, times = int(m.group(1)), m.group(2)
            if times is not None and self.server.stats.use_fault((key, fault)) >= int(times):
                continue
            retry_after = self.fault_arg(faults, "retry_after")
            if retry_after is not None:
                body = (self.responses.get(code, ("",))[0] + "\n").encode()
                self.send_body(code, body, "text/plain; charset=utf-8",
                               {"Retry-After": retry_after})
            else:
                self.send_status(code)
            return True
        return False

    def method_fault(self, faults):
        """head_status:CODE answers HEAD requests (only) with CODE, as a server
        that serves GET only does (405, 501); range_status:CODE answers GET
        requests carrying Range with CODE. True when it answered."""
        for name, applies in (("head_status", self.command == "HEAD"),
                              ("range_status", self.headers.get("Range") is not None)):
            code = self.fault_arg(faults, name)
            if applies and code:
                self.send_status(int(code))
                return True
        return False

    def redirect_fault(self, faults):
        for fault in faults:
            for prefix in ("redirect_http:", "redirect:"):
                if fault.startswith(prefix):
                    target = fault[len(prefix):]
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return True
        return False

    @staticmethod
    def fault_arg(faults, name):
        for fault in faults:
            if fault == name:
                return ""
            if fault.startswith(name + ":"):
                return fault[len(name) + 1:]
        return None

    # --- routes ---------------------------------------------------------

    def do_GET(self):
        self.route()

    def do_HEAD(self):
        self.route()

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/_reset":
            self.server.stats.reset()
            self.send_body(200, b"{}\n", "application/json")
        else:
            self.send_status(405)

    def route(self):
        split = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(split.path)
        if path == "/_stats":
            body = json.dumps(self.server.stats.snapshot(), sort_keys=True).encode() + b"\n"
            self.send_body(200, body, "application/json")
            return
        self.server.stats.hit(path)
        for header in ("Range", "If-Range"):
            if self.headers.get(header) is not None:
                self.server.stats.hit("%s %s" % (path, header.lower()))
        try:
            if path.startswith("/files/"):
                self.serve_file(path[len("/files/"):], path)
            elif path == "/simple" or path.startswith("/simple/"):
                self.serve_simple(path)
            elif path.startswith("/whl/"):
                self.serve_variant(path)
            else:
                self.send_status(404)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True

    # --- the index ------------------------------------------------------

    def projects(self, files_dir=None):
        """{normalized name: [file names]} from ROOT/files/ (or files_dir)."""
        files_dir = files_dir or os.path.join(self.root(), "files")
        out = {}
        try:
            names = sorted(os.listdir(files_dir))
        except OSError:
            names = []
        for n in names:
            if n.endswith(SIDECARS) or not os.path.isfile(os.path.join(files_dir, n)):
                continue
            proj, _ = project_of(n)
            if proj:
                out.setdefault(proj, []).append(n)
        return out

    def serve_simple(self, path, prefix="/simple/", files_dir=None, base=None):
        """An index at prefix: the project list, and the project pages that
        link the files of files_dir (default ROOT/files/) as base + name."""
        faults = self.faults_for(path) + self.faults_for("*")
        if self.status_fault(path, faults) or self.redirect_fault(faults):
            return
        if path == prefix[:-1]:
            return self.redirect(prefix)
        ctype = negotiate(self.headers.get("Accept"))
        if ctype is not None and self.fault_arg(faults, "html_only") is not None:
            ctype = TEXT_HTML  # a PEP 503 index that knows no JSON
        if ctype is None:
            return self.send_status(406, "none of the offered content types is acceptable")
        rest = path[len(prefix):]
        projects = self.projects(files_dir)
        if rest == "":
            return self.send_root(projects, ctype)
        name = rest[:-1] if rest.endswith("/") else rest
        if "/" in name:
            return self.send_status(404)
        norm = normalize(name)
        if norm not in projects:
            return self.send_status(404)
        if name != norm or not rest.endswith("/"):
            return self.redirect("%s%s/" % (prefix, norm))
        self.send_project(norm, projects[norm], ctype, files_dir, base)

    def serve_variant(self, path):
        """/whl/<backend>/...: ROOT/whl/<backend>/ as one of PyTorch's
        per-backend indexes - its project list, project pages linking
        ../<name>, and its files at /whl/<backend>/<name>."""
        backend, _, rest = path[len("/whl/"):].partition("/")
        files_dir = os.path.join(self.root(), "whl", backend)
        if (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", backend)
                or not os.path.isdir(files_dir)):
            return self.send_status(404)  # no builds for this backend
        prefix = "/whl/%s/" % backend
        if rest and "/" not in rest and os.path.isfile(os.path.join(files_dir, rest)):
            return self.serve_file(rest, path, files_dir)
        self.serve_simple(path, prefix, files_dir, "../")

    def redirect(self, location):
        self.send_response(301)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_root(self, projects, ctype):
        if ctype == JSON_V1:
            doc = {"meta": {"api-version": API_VERSION},
                   "projects": [{"name": n} for n in sorted(projects)]}
            body = json.dumps(doc, indent=1).encode()
        else:
            links = "\n".join('    <a href="%s/">%s</a><br/>' % (n, html.escape(n))
                              for n in sorted(projects))
            body = ("<!DOCTYPE html>\n<html>\n  <head>\n"
                    '    <meta name="pypi:repository-version" content="%s">\n'
                    "    <title>Simple index</title>\n  </head>\n  <body>\n%s\n"
                    "  </body>\n</html>\n" % (API_VERSION, links)).encode()
        self.send_body(200, body, ctype, {"Vary": "Accept"})

    def file_entry(self, n, files_dir=None, base=None):
        files_dir = files_dir or os.path.join(self.root(), "files")
        path = os.path.join(files_dir, n)
        info = FileInfo.get(path)
        base = base or self.server.files_base or "../../files/"
        entry = {
            "filename": n,
            "url": base + urllib.parse.quote(n),
            "hashes": {"sha256": info["sha256"]},
            "size": info["size"],
        }
        rp = read_sidecar(path + ".requires-python")
        if rp:
            entry["requires-python"] = rp
        yanked = read_sidecar(path + ".yanked")
        if yanked is not None:
            entry["yanked"] = yanked if yanked else True
        if os.path.isfile(path + ".metadata"):
            entry["core-metadata"] = {"sha256": FileInfo.get(path + ".metadata")["sha256"]}
        return entry

    def send_project(self, norm, names, ctype, files_dir=None, base=None):
        entries = [self.file_entry(n, files_dir, base) for n in names]
        if ctype == JSON_V1:
            versions = sorted({project_of(n)[1] for n in names})
            doc = {"meta": {"api-version": API_VERSION}, "name": norm,
                   "versions": versions, "files": entries}
            body = json.dumps(doc, indent=1).encode()
        else:
            rows = []
            for e in entries:
                attrs = ""
                if "requires-python" in e:
                    attrs += ' data-requires-python="%s"' % html.escape(e["requires-python"])
                if "yanked" in e:
                    reason = e["yanked"] if isinstance(e["yanked"], str) else ""
                    attrs += ' data-yanked="%s"' % html.escape(reason)
                if "core-metadata" in e:
                    attrs += ' data-core-metadata="sha256=%s"' % e["core-metadata"]["sha256"]
                rows.append('    <a href="%s#sha256=%s"%s>%s</a><br/>' % (
                    html.escape(e["url"]), e["hashes"]["sha256"], attrs,
                    html.escape(e["filename"])))
            body = ("<!DOCTYPE html>\n<html>\n  <head>\n"
                    '    <meta name="pypi:repository-version" content="%s">\n'
                    "    <title>Links for %s</title>\n  </head>\n  <body>\n"
                    "    <h1>Links for %s</h1>\n%s\n  </body>\n</html>\n"
                    % (API_VERSION, norm, norm, "\n".join(rows))).encode()
        self.send_page(body, ctype)

    # --- files ----------------------------------------------------------

    def hold(self, name):
        """--hold-file F: a request for a file waits until F exists; while
        one waits, F.waiting exists and names the first file held (written
        atomically), so a test knows the client is at that point."""
        hold = self.server.hold_file
        if not hold or os.path.exists(hold):
            return
        waiting = hold + ".waiting"
        if not os.path.exists(waiting):
            write_atomic(waiting, name + "\n")
        while not os.path.exists(hold) and not STOP.wait(0.02):
            pass

    def wait_for(self, faults):
        """wait_for:NAME: nothing is sent until ROOT/NAME exists (at most
        ENDLESS_LIMIT_S), so a test holds one file while others go through."""
        name = self.fault_arg(faults, "wait_for")
        if not name:
            return
        flag = os.path.join(self.root(), os.path.basename(name))
        deadline = time.monotonic() + ENDLESS_LIMIT_S
        while not os.path.exists(flag) and time.monotonic() < deadline and not STOP.wait(0.02):
            pass

    def serve_file(self, name, path, files_dir=None):
        files_dir = files_dir or os.path.join(self.root(), "files")
        if not name or "/" in name or name.startswith("."):
            return self.send_status(404)
        fpath = os.path.join(files_dir, name)
        if not os.path.isfile(fpath):
            return self.send_status(404)
        self.hold(name)
        faults = self.faults_for(name) + self.faults_for(path) + self.faults_for("*")
        delay = self.fault_arg(faults, "delay")
        if delay is not None and STOP.wait(float(delay or "0")):
            return
        if self.status_fault(name, faults) or self.redirect_fault(faults):
            return
        if self.method_fault(faults):
            return
        self.wait_for(faults)
        info = FileInfo.get(fpath)
        if faults:
            with open(fpath, "rb") as f:
                data = self.tamper(f.read(), faults)
            size = len(data)
        else:
            # no fault to apply: the bytes go from the file to the socket
            # (sendfile), not through a copy of the whole file in memory,
            # so the benchmarks time the clients rather than this server
            data = None
            size = info["size"]
        etag = '"%s"' % info["sha256"]
        last_modified = email.utils.formatdate(info["mtime"], usegmt=True)
        validators = {"ETag": etag, "Last-Modified": last_modified}

        if self.not_modified(etag, info["mtime"]):
            self.send_response(304)
            for k, v in validators.items():
                self.send_header(k, v)
            self.end_headers()
            return

        rng = None
        if self.fault_arg(faults, "ignore_range") is None and self.if_range_ok(etag, info["mtime"]):
            rng = self.parse_range(self.headers.get("Range"), size)
            if rng == "unsatisfiable":
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return

        status, start, end = 200, 0, size  # end exclusive
        headers = dict(validators)
        headers["Accept-Ranges"] = "bytes"
        if rng is not None:
            status, (start, end) = 206, rng
            self.server.stats.hit("%s from %d" % (path, start))
            if self.fault_arg(faults, "wrong_content_range") is not None:
                # a consistent but different range than the one asked for
                start = start + 7 if start + 7 < size else 0
                end = max(end, start + 1)
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, end - 1, size)
        if data is None:
            return self.send_file_range(status, headers, fpath, start, end)
        body = data[start:end]
        self.send_file_body(status, headers, body, start, size, faults)

    def send_file_head(self, status, headers, length):
        """Status and headers of a file response; length None: no
        Content-Length, the connection closes after the body. Returns
        whether a body follows (not for HEAD), with the headers flushed."""
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        for k, v in headers.items():
            self.send_header(k, v)
        if length is None:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return False
        self.wfile.flush()
        return True

    def send_file_range(self, status, headers, fpath, start, end):
        """Bytes [start, end) of an untampered file, with sendfile(2) where
        the socket allows (socket.sendfile falls back to send for TLS)."""
        if self.send_file_head(status, headers, end - start) and end > start:
            with open(fpath, "rb") as f:
                self.request.sendfile(f, start, end - start)

    def tamper(self, data, faults):
        """The bytes a lying server sends while its index lists the real
        file: flip_byte[:OFFSET], append:N (junk), shorten:N."""
        flip = self.fault_arg(faults, "flip_byte")
        if flip is not None and data:
            at = int(flip) if flip else len(data) // 2
            at = min(max(at, 0), len(data) - 1)
            data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
        add = self.fault_arg(faults, "append")
        if add is not None:
            data = data + (b"junk" * (int(add or "1") // 4 + 1))[:int(add or "1")]
        cut = self.fault_arg(faults, "shorten")
        if cut is not None:
            data = data[:max(0, len(data) - int(cut or "1"))]
        return data

    def not_modified(self, etag, mtime):
        inm = self.headers.get("If-None-Match")
        if inm is not None:
            tags = [t.strip() for t in inm.split(",")]
            return "*" in tags or etag in tags or ("W/" + etag) in tags
        ims = self.headers.get("If-Modified-Since")
        if ims:
            try:
                when = email.utils.parsedate_to_datetime(ims).timestamp()
            except (TypeError, ValueError):
                return False
            return int(mtime) <= when
        return False

    def if_range_ok(self, etag, mtime):
        ir = self.headers.get("If-Range")
        if ir is None:
            return True
        ir = ir.strip()
        if ir.startswith('"') or ir.startswith("W/"):
            return ir == etag
        try:
            return int(mtime) <= email.utils.parsedate_to_datetime(ir).timestamp()
        except (TypeError, ValueError):
            return False

    @staticmethod
    def parse_range(header, size):
        """(start, end exclusive) for a single byte range, "unsatisfiable",
        or None (no Range, several ranges, or malformed: serve it all)."""
        if not header:
            return None
        m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
        if not m or (m.group(1) == "" and m.group(2) == ""):
            return None
        first, last = m.group(1), m.group(2)
        if first == "":
            n = int(last)
            if n == 0:
                return "unsatisfiable"
            return (max(0, size - n), size)
        start = int(first)
        end = size if last == "" else min(int(last) + 1, size)
        if start >= size or (last != "" and int(last) < start):
            return "unsatisfiable"
        return (start, end)

    def send_file_body(self, status, headers, body, start, size, faults):
        reset_at = self.fault_arg(faults, "reset_at")
        truncate = self.fault_arg(faults, "truncate") is not None
        truncate_no_length = self.fault_arg(faults, "truncate_no_length") is not None
        no_length = self.fault_arg(faults, "no_length") is not None
        stall = self.fault_arg(faults, "stall_after_headers")
        slow = self.fault_arg(faults, "slow")
        endless = self.fault_arg(faults, "endless")
        endless_junk = self.fault_arg(faults, "endless_junk")

        no_length = (no_length or truncate_no_length or endless is not None
                     or endless_junk is not None)
        if not self.send_file_head(status, headers, None if no_length else len(body)):
            return

        if stall is not None:
            if STOP.wait(float(stall or "0")):
                return

        if endless is not None or endless_junk is not None:
            return self.send_endless(b"" if endless_junk is not None else body)

        rate = float(slow) if slow else None
        reset_after = self.fault_arg(faults, "reset_after")
        late = self.fault_arg(faults, "reset_after_from")
        if late is not None:
            # reset_after_from:START:N[:RATE]: a response whose bytes start
            # at or after START (bytes, or START% of the file) breaks after
            # N bytes, paced at RATE bytes/s when given
            frm, n, *late_rate = late.split(":")
            frm = int(size * float(frm[:-1]) / 100) if frm.endswith("%") else int(frm)
            if start >= frm:
                reset_after = n
                rate = float(late_rate[0]) if late_rate else rate
        if reset_after is not None and int(reset_after) < len(body):
            # this response breaks after N bytes, wherever it started
            self.write_paced(body[:int(reset_after)], rate)
            self.abort_connection()
            return
        if reset_at is not None:
            # the connection breaks when the body reaches this offset of the
            # file; a Range request starting at or after it is served whole
            at = int(size * float(reset_at[:-1]) / 100) if reset_at.endswith("%") else int(reset_at)
            if start < at < start + len(body):
                self.write_paced(body[:at - start], rate)
                self.abort_connection()
                return
        if truncate or truncate_no_length:
            # half the body, then an orderly close (FIN): only the declared
            # length (truncate) or the expected size and hash can tell
            self.write_paced(body[:len(body) // 2], rate)
            self.close_connection = True
            return
        self.write_paced(body, rate)

    def write_paced(self, data, rate):
        if not rate:
            self.wfile.write(data)
            return
        if rate >= 10:
            chunk = max(1, int(rate / 10))
            delay = chunk / rate
        else:
            chunk, delay = 1, 1.0 / rate
        for i in range(0, len(data), chunk):
            self.wfile.write(data[i:i + chunk])
            self.wfile.flush()
            if STOP.wait(delay):
                return

    def send_endless(self, prefix):
        deadline = time.monotonic() + ENDLESS_LIMIT_S
        self.wfile.write(prefix)
        junk = b"mlsetup-mirror endless body " * 2048
        while not STOP.is_set() and time.monotonic() < deadline:
            self.wfile.write(junk)
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops the SYNs of a client that
    # opens many connections at once, which then wait a second to retry
    request_queue_size = 128

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_port_file(path, port):
    write_atomic(path, "%d\n" % port)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True, help="directory holding files/ and faults.json")
    ap.add_argument("--port", type=int, default=0, help="port to bind (0: any free one)")
    ap.add_argument("--port-file", help="write the bound port here (atomically)")
    ap.add_argument("--https", action="store_true", help="serve TLS")
    ap.add_argument("--cert", help="PEM certificate (with --https)")
    ap.add_argument("--key", help="PEM private key (with --https)")
    ap.add_argument("--files-base", help="absolute URL prefix for file links (another mirror "
                    "serving the same root), instead of ../../files/")
    ap.add_argument("--hold-file", help="requests for files wait until this file exists; "
                    "FILE.waiting appears when the first one waits")
    ap.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    args = ap.parse_args()

    server = Server(("127.0.0.1", args.port), Handler)
    server.root = os.path.abspath(args.root)
    server.verbose = args.verbose
    server.files_base = args.files_base
    server.hold_file = os.path.abspath(args.hold_file) if args.hold_file else None
    server.stats = Stats()
    server.tls = None
    if args.https:
        if not args.cert or not args.key:
            ap.error("--https needs --cert and --key")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        server.tls = ctx

    def on_term(signum, frame):
        STOP.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    port = server.server_address[1]
    if args.port_file:
        write_port_file(args.port_file, port)
    if args.verbose:
        sys.stderr.write("serving %s on 127.0.0.1:%d\n" % (server.root, port))
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
