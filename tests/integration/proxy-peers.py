#!/usr/bin/env python3
"""Hostile and slow peers of the proxy, for tests/integration/proxy.sh.

    proxy-peers.py MODE PORT USER PASSWORD

malformed: connection A sends half a good request head and waits; B sends
           a malformed request; prints B's status, then A finishes its head
           and prints its status ("B 400", "A 200").
huge:      a head of 80 KiB of headers; prints the status ("huge 431").
slow:      A sends a head one byte every 0.2 s (a slowloris); meanwhile B
           makes a whole request; prints "B STATUS SECONDS".
upgrade:   an absolute-form WebSocket Upgrade; prints "upgrade 101" and
           the origin's echo of "ping".
halfclose: a CONNECT tunnel half-closed by the client after its request;
           prints "halfclose N", N the body bytes that arrived.
headtimeout: a head trickling forever; prints "closed SECONDS" when the
           proxy closes it.
rst:       peers that reset mid-head and mid-tunnel, then a request;
           prints "after STATUS".
"""
import base64
import socket
import sys
import threading
import time

MODE, PORT, USER, PW = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
AUTH = "Proxy-Authorization: Basic %s\r\n" % base64.b64encode(
    ("%s:%s" % (USER, PW)).encode()).decode()


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    return s


def status_of(s):
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    line = data.split(b"\r\n")[0].decode(errors="replace")
    parts = line.split()
    return parts[1] if len(parts) > 1 else "none(%r)" % line


def good_head():
    return ("GET http://allowed.test/hello HTTP/1.1\r\nHost: allowed.test\r\n"
            + AUTH + "Connection: close\r\n\r\n")


def malformed():
    a = connect()
    head = good_head()
    a.sendall(head[:40].encode())
    b = connect()
    b.sendall(b"GET http://allowed.test/ HTTP/1.1\r\nHost allowed.test\r\n"
              b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n")
    print("B", status_of(b))
    rest = b.recv(65536)
    while rest:
        rest = b.recv(65536)
    a.sendall(head[40:].encode())
    print("A", status_of(a))


def huge():
    s = connect()
    head = "GET http://allowed.test/hello HTTP/1.1\r\nHost: allowed.test\r\n"
    head += "".join("X-Filler-%d: %s\r\n" % (i, "y" * 900) for i in range(90))
    try:
        s.sendall((head + AUTH + "\r\n").encode())
    except OSError:
        pass
    print("huge", status_of(s))


def slow():
    a = connect()
    head = good_head().encode()
    stop = threading.Event()

    def dribble():
        for i in range(len(head)):
            if stop.is_set():
                return
            try:
                a.send(head[i:i + 1])
            except OSError:
                return
            time.sleep(0.2)

    t = threading.Thread(target=dribble, daemon=True)
    t.start()
    time.sleep(0.5)
    start = time.monotonic()
    b = connect()
    b.sendall(good_head().encode())
    st = status_of(b)
    print("B", st, "%.2f" % (time.monotonic() - start))
    stop.set()


def upgrade():
    s = connect()
    s.sendall(("GET http://allowed.test/ws HTTP/1.1\r\nHost: allowed.test\r\n"
               + AUTH + "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
              .encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print("upgrade", data.split(b"\r\n")[0].decode().split()[1])
    s.sendall(b"ping")
    print(s.recv(4096).decode())


def halfclose():
    """A tunnel whose client half-closes after its request: the answer
    still arrives whole, and the end is passed on."""
    s = connect()
    s.sendall(("CONNECT allowed.test:80 HTTP/1.1\r\nHost: allowed.test:80\r\n"
               + AUTH + "\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    s.sendall(b"GET /big/100000 HTTP/1.1\r\nHost: allowed.test\r\n"
              b"Connection: close\r\n\r\n")
    s.shutdown(socket.SHUT_WR)
    data = data.split(b"\r\n\r\n", 1)[1]
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    print("halfclose", len(body))


def rst():
    """Peers that reset mid-head and mid-tunnel; then a request works."""
    import struct
    linger = struct.pack("ii", 1, 0)
    a = connect()
    a.sendall(b"GET http://allowed.test/hello HTTP/1.1\r\nHo")
    a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    a.close()
    b = connect()
    b.sendall(("CONNECT allowed.test:80 HTTP/1.1\r\n" + AUTH + "\r\n").encode())
    b.recv(4096)
    b.sendall(b"GET /big/10000000 HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
    b.recv(1000)
    b.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    b.close()
    time.sleep(0.3)
    c = connect()
    c.sendall(good_head().encode())
    print("after", status_of(c))


def headtimeout():
    """A head that keeps trickling (one header every 5 s) but never ends:
    the proxy closes it when the head's time is up, however busy it
    looks."""
    s = connect()
    s.settimeout(5)
    start = time.monotonic()
    s.sendall(b"GET http://allowed.test/hello HTTP/1.1\r\n")
    while time.monotonic() - start < 120:
        try:
            if s.recv(4096) == b"":
                break
        except socket.timeout:
            try:
                s.sendall(b"X-Trickle: 1\r\n")
            except OSError:
                break
        except OSError:
            break
    print("closed %d" % int(time.monotonic() - start))


{"headtimeout": headtimeout, "malformed": malformed, "huge": huge, "slow": slow, "upgrade": upgrade,
 "halfclose": halfclose, "rst": rst}[MODE]()
