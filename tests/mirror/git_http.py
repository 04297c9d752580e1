#!/usr/bin/env python3
"""git_http.py --root DIR --port-file FILE [--https --cert C --key K] - git's
smart HTTP on loopback.

Serves the repositories under DIR (bare or not) with `git http-backend`,
run as a CGI program for each request (git's own server side: the same
protocol a hosting service speaks). A request whose path starts with
/private/ needs HTTP basic authentication as user "tester" with password
"s3cret-token" (401 otherwise), so tests can check that credentials work
and are never shown. With --https it speaks TLS with that PEM certificate
and key (the handshake in the request's thread). Writes the port it listens
on to FILE. Loopback only.
"""
import argparse
import base64
import http.server
import os
import ssl
import subprocess
import sys

BACKEND = None
ROOT = None
TLS = None
AUTH = "Basic " + base64.b64encode(b"tester:s3cret-token").decode()


def find_backend():
    out = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "git-http-backend")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        sys.stderr.write("git-http: " + fmt % args + "\n")

    def setup(self):
        if TLS is not None:
            self.request.settimeout(10)
            self.request = TLS.wrap_socket(self.request, server_side=True)
        super().setup()

    def run_backend(self):
        path, _, query = self.path.partition("?")
        if path.startswith("/private/"):
            if self.headers.get("Authorization") != AUTH:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = path[len("/private"):]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run([BACKEND], input=body, capture_output=True, env=env).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = run_backend
    do_POST = run_backend


def main():
    global BACKEND, ROOT, TLS
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--https", action="store_true")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    a = ap.parse_args()
    if a.https:
        TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        TLS.load_cert_chain(a.cert, a.key)
    ROOT = os.path.abspath(a.root)
    BACKEND = find_backend()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
