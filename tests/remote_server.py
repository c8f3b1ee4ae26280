#!/usr/bin/env python3
"""remote_server.py - a misbehaving HTTP server for tests/cli/test_remote.sh.

Serves the files of ROOT on 127.0.0.1 at a free port (written to PORTFILE) and
logs one line per request to LOG ("MODE PATH RANGE auth=yes|no"). The first
part of the path picks how it misbehaves; the rest names the file:

  /ok/F        Range requests answered properly (206), ETag and Last-Modified
  /404/F /401/F /403/F /416/F   that status, always
  /norange/F   the Range header ignored: 200 and the whole file
  /badrange/F  206 with a Content-Range one byte off from the one asked for
  /short/F     206 promising the range, sending half of it, then hanging up
  /drop/F      the first answer for each file hangs up after 100000 bytes; later ones are good
  /droplong/F  the first answer of more than 8 MiB for each file (a read-ahead stream) hangs
               up after 5 MiB; later ones are good
  /stall/F     headers and 1000 bytes, then silence (for at most 30 s)
  /html/F      200 with an HTML error page
  /loop/F      302 to itself, forever
  /etag/F      the ETag changes after the first answer for each file
  /busy/F      the first answer for each file is 429 (Retry-After: 0); later ones are good
  /down/F      503, always
  /xhost/F     302 to the same server under another host name (localhost)
  /htmltype/F  as /ok/F, but every answer labelled Content-Type: text/html
  OWNER/REPO/resolve/REV/F   as /ok/F (the hub's layout, for hf:// URLs)

With a fifth argument CERT (a PEM file holding a certificate and its key), it
speaks TLS with that certificate.

Nothing it does loops without a bound: a stall ends after 30 s, a redirect
loop is the client's to stop.
"""
import http.server
import os
import socketserver
import sys
import threading
import time

ROOT, PORTFILE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}
lock = threading.Lock()


def first_time(key):
    with lock:
        n = seen.get(key, 0)
        seen[key] = n + 1
        return n == 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log(self, mode):
        with lock, open(LOG, "a") as f:
            f.write("%s %s %s auth=%s\n" % (mode, self.path, self.headers.get("Range", "-"),
                                            "yes" if self.headers.get("Authorization") else "no"))

    def simple(self, status, body=b"", ctype="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        parts = self.path.lstrip("/").split("/")
        if len(parts) >= 5 and parts[2] == "resolve":
            mode, name = "hub", "/".join(parts[4:])
        else:
            mode, name = parts[0], "/".join(parts[1:])
        self.log(mode)
        path = os.path.join(ROOT, name)
        if mode in ("404", "401", "403", "416"):
            body = b"<html><body>no</body></html>"
            extra = [("Content-Range", "bytes */100")] if mode == "416" else []
            return self.simple(int(mode), body, "text/html", extra)
        if mode == "down":
            return self.simple(503, b"down for now")
        if mode == "busy" and first_time(("busy", name)):
            return self.simple(429, b"slow down", extra=[("Retry-After", "0")])
        if mode == "html":
            return self.simple(200, b"<!DOCTYPE html>\n<html><head><title>Error</title></head></html>\n", "text/html")
        if mode == "loop":
            return self.simple(302, extra=[("Location", self.path)])
        if mode == "xhost":
            port = self.server.server_address[1]
            return self.simple(302, extra=[("Location", "http://localhost:%d/ok/%s" % (port, name))])
        try:
            size = os.path.getsize(path)
        except OSError:
            return self.simple(404, b"no such file")
        etag = '"v1-%d"' % size
        if mode == "etag" and not first_time(("etag", name)):
            etag = '"v2-%d"' % size
        rng = self.headers.get("Range")
        start, end = 0, size - 1
        if rng and rng.startswith("bytes=") and mode != "norange":
            a, _, b = rng[6:].partition("-")
            start = int(a)
            end = min(int(b), size - 1) if b else size - 1
            if start >= size:
                return self.simple(416, extra=[("Content-Range", "bytes */%d" % size)])
            status = 206
        else:
            status = 200
        with open(path, "rb") as f:   # only the bytes asked for: the files may be large
            f.seek(start)
            body = f.read(end + 1 - start)
        self.send_response(status)
        self.send_header("Content-Type", "text/html" if mode == "htmltype" else "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")
        if status == 206:
            shift = 1 if mode == "badrange" else 0
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start + shift, end + shift, size))
        long_drop = mode == "droplong" and len(body) > 8 << 20 and first_time(("droplong", name))
        if mode in ("short", "stall") or (mode == "drop" and first_time(("drop", name))) or long_drop:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            if mode == "short":
                self.wfile.write(body[:len(body) // 2])
                self.close_connection = True
            elif mode == "stall":
                self.wfile.write(body[:1000])
                self.wfile.flush()
                time.sleep(30)
                self.close_connection = True
            elif mode == "drop" and seen.get(("drop", name)) == 1 and len(body) > 100000:
                self.wfile.write(body[:100000])
                self.close_connection = True
            elif long_drop:
                self.wfile.write(body[:5 << 20])
                self.close_connection = True
            else:
                for i in range(0, len(body), 1 << 16):
                    self.wfile.write(body[i:i + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass   # a client hanging up mid-answer is what the tests do on purpose


srv = Server(("127.0.0.1", 0), Handler)
if len(sys.argv) > 4:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
