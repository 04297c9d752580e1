#!/usr/bin/env python3
"""http_proxy.py --port-file FILE --log FILE [--map HOST=ADDR] - a forward
HTTP proxy on loopback, for tests of the proxy rules.

CONNECT host:port (how clients reach https servers through a proxy) opens
a tunnel to host:port; requests in absolute form (GET http://host:port/path
HTTP/1.1, how clients send plain-http requests to a proxy) are sent on to
host:port and the answer relayed (request bodies with a Content-Length or
chunked). HOST is mapped to ADDR by --map, so a name that resolves nowhere
reaches a loopback server only through this proxy. Every request's
"CONNECT host:port" or "METHOD host:port/path" is appended to the log
file, so a test knows what went through the proxy. Writes the port it
listens on to FILE (atomically). Python 3 standard library only; binds
127.0.0.1.
"""
import argparse
import http.client
import http.server
import os
import select
import socket
import sys
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization",
              "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"}
LOCK = threading.Lock()
ARGS = None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def log(self, line):
        with LOCK, open(ARGS.log, "a") as f:
            f.write(line + "\n")

    def target(self, host):
        return dict(m.split("=", 1) for m in ARGS.map).get(host, host)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass  # trailers
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def relay(self):
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or not url.hostname:
            self.send_error(400, "not an absolute http URL")
            return
        host, port = url.hostname, url.port or 80
        self.log("%s %s:%d%s" % (self.command, host, port, url.path))
        target = self.target(host)
        body = self.read_body()
        path = url.path + ("?" + url.query if url.query else "")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(target, port, timeout=60)
        try:
            conn.request(self.command, path, body=body if body or self.command == "POST" else None,
                         headers=headers)
            r = conn.getresponse()
            data = r.read()
        except OSError as e:
            self.send_error(502, str(e))
            return
        finally:
            conn.close()
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            # a HEAD answer's Content-Length is the file's: kept as sent
            if k.lower() not in HOP_BY_HOP and (k.lower() != "content-length"
                                                or self.command == "HEAD"):
                self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_HEAD = relay

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        self.log("CONNECT %s:%s" % (host, port))
        try:
            upstream = socket.create_connection((self.target(host.strip("[]")), int(port)), 30)
        except (OSError, ValueError) as e:
            self.send_error(502, str(e))
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        ends = [self.connection, upstream]
        try:
            while True:
                ready, _, _ = select.select(ends, [], [], 60)
                if not ready:
                    break
                for r in ready:
                    data = r.recv(65536)
                    if not data:
                        return
                    (upstream if r is self.connection else self.connection).sendall(data)
        except OSError:
            pass
        finally:
            upstream.close()
            self.close_connection = True


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--map", action="append", default=[], help="HOST=ADDR")
    ARGS = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(tmp, ARGS.port_file)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
