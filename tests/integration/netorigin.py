#!/usr/bin/env python3
"""The origins of the test network (tests/integration/netlib.sh).

    netorigin.py ROOT CERT KEY READY

Serves the directory ROOT over plain HTTP on port 80 and over HTTPS (CERT,
KEY) on ports 443 and 8443, on every address of the origin namespace, IPv4
and IPv6; answers DNS queries on UDP port 53 with one A record (192.0.2.10),
so that a query that reaches it is seen to get an answer.  Writes READY
when every socket listens.

Paths:
  /big?bytes=N   N zero bytes, with a Content-Length (the benchmark)
  /npm/NAME      a package document, served as application/json
  anything else  the file under ROOT
"""
import http.server
import socket
import socketserver
import ssl
import struct
import sys
import threading
import urllib.parse

ROOT, CERT, KEY, READY = sys.argv[1:5]


class Handler(http.server.SimpleHTTPRequestHandler):
    """Files under ROOT, with the content types the registries need."""

    protocol_version = "HTTP/1.1"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def log_message(self, fmt, *args):
        pass

    def guess_type(self, path):
        if "/npm/" in path and not path.endswith(".tgz"):
            return "application/json"
        if path.endswith(".tgz") or path.endswith(".whl"):
            return "application/octet-stream"
        return super().guess_type(path)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/big":
            self.send_big(int(urllib.parse.parse_qs(url.query)["bytes"][0]))
            return
        super().do_GET()

    def send_big(self, n):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        block = bytes(1 << 20)
        view = memoryview(block)
        while n > 0:
            k = min(n, len(block))
            self.wfile.write(view[:k])
            n -= k


class Server4(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Server6(Server4):
    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        super().server_bind()


def tls(server):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    # The handshake happens in the handler's thread, so a client that stalls
    # in it holds up only its own connection.
    server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                    do_handshake_on_connect=False)
    return server


def dns():
    """Answer every query with one A record for 192.0.2.10."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))
    while True:
        q, peer = s.recvfrom(512)
        if len(q) < 12:
            continue
        head = q[:2] + b"\x81\x80" + q[4:6] + b"\x00\x01\x00\x00\x00\x00"
        answer = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) \
            + socket.inet_aton("192.0.2.10")
        s.sendto(head + q[12:] + answer, peer)


servers = [Server4(("0.0.0.0", 80), Handler), Server6(("::", 80), Handler)]
for port in (443, 8443):
    servers.append(tls(Server4(("0.0.0.0", port), Handler)))
    servers.append(tls(Server6(("::", port), Handler)))
threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
threads.append(threading.Thread(target=dns, daemon=True))
for t in threads:
    t.start()
with open(READY, "w") as f:
    f.write("ready\n")
threading.Event().wait()
