#!/usr/bin/env python3
"""Origins for tests/integration/proxy.sh, run in the origin namespace.

    proxy-origin.py LOGFILE CERT KEY

Plain HTTP on 0.0.0.0:80 and HTTPS on 0.0.0.0:443 (CERT/KEY), HTTP/1.1
with keep-alive:
  GET  /hello  -> "hello from HOST\n" (HOST the Host header)
  GET  /big/N  -> N bytes, 0..255 repeated
  GET  /ws with Upgrade: websocket -> 101, then every read echoed as
                  "echo:" + bytes
  POST /echo   -> "got N bytes sha256 HEX\n" of the body, Content-Length or
                  chunked; Expect: 100-continue answered by http.server
Every request is logged to LOGFILE as "METHOD PATH host=HOST te=TE
expect=EXPECT" so the test can see what arrived.
"""
import hashlib
import http.server
import ssl
import sys
import threading

LOG = open(sys.argv[1], "a", buffering=1)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self):
        LOG.write("%s %s host=%s te=%s expect=%s\n" % (
            self.command, self.path, self.headers.get("Host"),
            self.headers.get("Transfer-Encoding"),
            self.headers.get("Expect")))

    def reply(self, body):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.note()
        if self.path.startswith("/big/"):
            return self.big(int(self.path[5:]))
        if self.path == "/ws" and self.headers.get("Upgrade") == "websocket":
            return self.upgrade()
        self.reply("hello from %s\n" % self.headers.get("Host"))

    def big(self, n):
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        block = bytes(range(256)) * 256
        while n > 0:
            self.wfile.write(block[:min(n, len(block))])
            n -= min(n, len(block))

    def upgrade(self):
        self.send_response(101)
        self.send_header("Connection", "Upgrade")
        self.send_header("Upgrade", "websocket")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        while True:
            data = self.connection.recv(65536)
            if not data:
                return
            self.connection.sendall(b"echo:" + data)

    def read_chunked(self):
        body = b""
        while True:
            line = self.rfile.readline()
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def do_POST(self):
        self.note()
        if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
            body = self.read_chunked()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply("got %d bytes sha256 %s\n"
                   % (len(body), hashlib.sha256(body).hexdigest()))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    plain = Server(("0.0.0.0", 80), Handler)
    tls = Server(("0.0.0.0", 443), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[2], sys.argv[3])
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    threading.Thread(target=tls.serve_forever, daemon=True).start()
    LOG.write("ready\n")
    plain.serve_forever()


main()
