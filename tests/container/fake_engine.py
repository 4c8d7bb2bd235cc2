#!/usr/bin/env python3
"""A fake container engine for tests/container/fake-engine.sh: the Docker
Engine API on a Unix socket, enough of it for crucible's container backend
(sandbox/container/engine.c, backend.c) to run a command, with faults a
real engine will not make on demand.

crucible talks to it exactly as to dockerd: nothing in crucible knows it
is there.  It answers /_ping, /version, /info, /images/NAME/json, and
containers create, json (inspect), attach (the connection hijacked, the
stream multiplexed as dockerd's is without a TTY), start, kill and delete.
Its "containers" run no process: the job runner's part is played here,
reading crucible's job frames (sandbox/container/jobproto.h) from the
attached stream and answering with frames of its own.

The fault is read from the file FAULT_FILE (argv[2]) at each point it
matters, so one engine serves a whole test:
  ok         a command runs: 'R' with facts that hold, its output, exit 0
  filter     'R' says the runner's own seccomp filter is "none"
  userns     'R' says a new user namespace is "allowed" inside
  dumpable   'R' says the runner is dumpable ("1")
  failed     'F' before 'R': the runner failed a step
  noending   'R', output, then the stream ends without 'X'
  readback   the container's description says NetworkMode "bridge"
  label      the image's runner label differs from this build's
  nolabel    the image has no runner label
  noimage    the image is not on the engine (404); an image of another
             name never is
  notjson    /info answers something that is not JSON
  bigping    /_ping answers more than crucible reads of it
  gonetake   a kept container (started, waiting for its job) ends when
             crucible looks its image up again at the take, with words on
             its stderr; the answer waits a second, so the end is seen
  nodeletekept  a container never given a job (a kept one) cannot be
             removed: its removal fails and it stays, also after the fault
             is changed
  nodelete   a container given a job is never removed though the engine
             says it is: its removal answers 204, and it stays listed and
             described (latched, also after the fault is changed)
Every request line is appended to LOG_FILE (argv[3]).
"""

import json
import os
import socket
import struct
import sys
import threading
import time

SOCK, FAULT_FILE, LOG_FILE, RUNNER_SHA = sys.argv[1:5]
IMAGE_ID = "sha256:" + "ab" * 32
LOCK = threading.Lock()
CONTAINERS = {}  # id -> dict
SEQ = [0]


def fault():
    try:
        with open(FAULT_FILE) as f:
            return f.read().strip()
    except OSError:
        return "ok"


def log(line):
    with LOCK, open(LOG_FILE, "a") as f:
        f.write(line + "\n")


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode("latin-1")

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def some(self):
        if not self.buf:
            self.fill()
        data, self.buf = self.buf, b""
        return data


def answer(c, status, body, ctype="application/json", headers=()):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    words = {101: "UPGRADED", 200: "OK", 201: "Created", 204: "No Content",
             404: "Not Found", 409: "Conflict", 500: "Internal Server Error"}
    head = "HTTP/1.1 %d %s\r\nApi-Version: 1.41\r\nContent-Type: %s\r\n" % (
        status, words.get(status, "X"), ctype)
    for h in headers:
        head += h + "\r\n"
    head += "Content-Length: %d\r\n\r\n" % len(body)
    c.sock.sendall(head.encode() + body)


def read_request(c):
    request = c.line()
    headers = {}
    while True:
        h = c.line()
        if h == "":
            break
        k, _, v = h.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("expect", "").lower() == "100-continue":
        c.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = b""
    if "content-length" in headers:
        body = c.take(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            n = int(c.line().split(";")[0], 16)
            if n == 0:
                c.line()
                break
            body += c.take(n)
            c.line()
    method, target, _ = request.split(" ", 2)
    return method, target, headers, body


def api_path(target):
    path, _, query = target.partition("?")
    if path.startswith("/v1."):
        path = "/" + path.split("/", 2)[2]
    return path, query


def container_json(ct):
    hc = dict(ct["create"].get("HostConfig", {}))
    if ct["fault"] == "readback":
        hc["NetworkMode"] = "bridge"
    cfg = {k: ct["create"].get(k) for k in
           ("User", "Env", "OpenStdin", "StdinOnce", "Labels", "Image")}
    return {"Id": ct["id"], "Image": IMAGE_ID, "HostConfig": hc,
            "Config": cfg, "Mounts": [],
            "State": {"Status": ct["state"], "Running": ct["state"] == "running"}}


def facts(ct):
    hc = ct["create"].get("HostConfig", {})
    zero = ",".join(["0000000000000000"] * 4)
    f = {"uid": "65534", "gid": "65534", "groups": "65534",
         "no_new_privs": "1", "caps": zero, "seccomp": "2", "root_ro": "1",
         "workspace_mount": "tmpfs,rw,nosuid,nodev,size=1073741824",
         "tmp_mount": "tmpfs,rw,nosuid,nodev,size=268435456", "net": "",
         "memory_max": str(hc.get("Memory")),
         "memsw_max": str(hc.get("MemorySwap")),
         "pids_max": str(hc.get("PidsLimit")),
         "rlimits": "1,2,3,4,5", "filter": "crucible", "userns": "refused",
         "dumpable": "0"}
    lie = {"filter": ("filter", "none"), "userns": ("userns", "allowed"),
           "dumpable": ("dumpable", "1")}.get(ct["fault"])
    if lie:
        f[lie[0]] = lie[1]
    return "".join("%s=%s\n" % kv for kv in f.items()).encode()


def out(ct, stream, data):
    try:
        ct["conn"].sock.sendall(struct.pack(">BxxxI", stream, len(data)) + data)
    except OSError:
        pass


def frame(ct, kind, payload):
    out(ct, 1, kind.encode() + struct.pack(">I", len(payload)) + payload)


def stuck(ct):
    """Whether ct can no longer be removed (latched)."""
    if fault() == "nodeletekept" and not ct["job"]:
        ct["stuck"] = True
    return ct.get("stuck", False)


def ghost(ct):
    """Whether ct stays on the engine though its removal succeeds
    (latched)."""
    if fault() == "nodelete" and ct["job"]:
        ct["ghost"] = True
    return ct.get("ghost", False)


def end(ct):
    """The container's process ended: its stream closes, and AutoRemove
    takes it unless removals fail."""
    with LOCK:
        if ct["state"] == "exited":
            return
        ct["state"] = "exited"
        if not stuck(ct) and not ghost(ct) and ct["create"].get("HostConfig", {}).get("AutoRemove"):
            CONTAINERS.pop(ct["id"], None)
    try:
        ct["conn"].sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def runner(ct):
    """The job runner's part: read the job, answer as the fault says."""
    c = ct["conn"]
    pending = b""
    try:
        while True:
            while len(pending) < 5:
                pending += c.some()
            ct["job"] = True
            kind = chr(pending[0])
            n = struct.unpack(">I", pending[1:5])[0]
            while len(pending) < 5 + n:
                pending += c.some()
            pending = pending[5 + n:]
            if kind == "G":
                break
    except (EOFError, OSError):
        end(ct)  # the dead-man switch: crucible's stream ended
        return
    ct["fault"] = fault()
    if ct["fault"] == "failed":
        frame(ct, "F", b"fake-runner: the workspace did not fit")
    elif ct["fault"] == "noending":
        frame(ct, "R", facts(ct))
        frame(ct, "O", b"fake output\n")
        out(ct, 2, b"fake-runner: crashed")
    else:
        frame(ct, "R", facts(ct))
        frame(ct, "O", b"fake output\n")
        frame(ct, "X", b"exit=0")
        frame(ct, "Z", b"changes=0 bytes=0")
    time.sleep(0.05)
    end(ct)


def container_of(path):
    parts = path.split("/")
    with LOCK:
        return CONTAINERS.get(parts[2]) if len(parts) > 2 else None


def image_json(name):
    f = fault()
    if name not in ("crucible-sandbox:latest", IMAGE_ID):
        return 404, {"message": "No such image: " + name}
    if f == "noimage":
        return 404, {"message": "No such image: crucible-sandbox:latest"}
    labels = {"org.crucible.runner.sha256": RUNNER_SHA}
    if f == "label":
        labels["org.crucible.runner.sha256"] = "0" * 64
    elif f == "nolabel":
        labels = {}
    return 200, {"Id": IMAGE_ID, "Config": {"Labels": labels}}


def serve(sock):
    c = Conn(sock)
    try:
        while True:
            method, target, headers, body = read_request(c)
            path, query = api_path(target)
            log("%s %s" % (method, path))
            if path == "/_ping":
                if fault() == "bigping":
                    answer(c, 200, b"OK" * 4000, "text/plain")
                else:
                    answer(c, 200, b"OK", "text/plain")
            elif path == "/version":
                answer(c, 200, {"Version": "20.10.24-fake", "ApiVersion": "1.41",
                                "MinAPIVersion": "1.12", "Components": []})
            elif path == "/info":
                if fault() == "notjson":
                    answer(c, 200, b"this is no JSON", "text/plain")
                else:
                    answer(c, 200, {
                        "OperatingSystem": "fake", "KernelVersion": "6.1.0",
                        "DefaultRuntime": "runc", "CgroupVersion": "2",
                        "CgroupDriver": "cgroupfs", "MemoryLimit": True,
                        "SwapLimit": True, "PidsLimit": True,
                        "CpuCfsQuota": True,
                        "SecurityOptions": ["name=seccomp,profile=default"]})
            elif path.startswith("/images/") and path.endswith("/json"):
                with LOCK:
                    waiting = [ct for ct in CONTAINERS.values()
                               if ct["state"] == "running" and not ct["job"]]
                if fault() == "gonetake" and waiting:
                    for ct in waiting:
                        out(ct, 2, b"fake-runner: ended while it waited")
                        end(ct)
                    time.sleep(1)
                answer(c, *image_json(path[len("/images/"):-len("/json")]))
            elif path == "/containers/create":
                SEQ[0] += 1
                cid = ("%02x" % SEQ[0]) * 32
                ct = {"id": cid, "create": json.loads(body), "state": "created",
                      "conn": None, "job": False, "fault": fault()}
                with LOCK:
                    CONTAINERS[cid] = ct
                answer(c, 201, {"Id": cid, "Warnings": []})
            elif path == "/containers/json":
                with LOCK:
                    listed = [{"Id": ct["id"], "Labels": ct["create"].get("Labels", {}),
                               "State": ct["state"]} for ct in CONTAINERS.values()]
                answer(c, 200, listed)
            elif path.startswith("/containers/"):
                ct = container_of(path)
                verb = path.split("/")[3] if path.count("/") >= 3 else ""
                if ct is None:
                    answer(c, 404, {"message": "No such container"})
                elif method == "DELETE":
                    if stuck(ct):
                        answer(c, 500, {"message": "fake: the removal failed"})
                    else:
                        end(ct)
                        if not ghost(ct):
                            with LOCK:
                                CONTAINERS.pop(ct["id"], None)
                        answer(c, 204, b"")
                elif verb == "json":
                    answer(c, 200, container_json(ct))
                elif verb == "attach":
                    sock.sendall(b"HTTP/1.1 101 UPGRADED\r\nContent-Type: "
                                 b"application/vnd.docker.raw-stream\r\n"
                                 b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
                    ct["conn"] = c
                    return  # the connection is the stream now
                elif verb == "start":
                    ct["state"] = "running"
                    answer(c, 204, b"")
                    threading.Thread(target=run_started, args=(ct,),
                                     daemon=True).start()
                elif verb == "kill":
                    end(ct)
                    answer(c, 204, b"")
                else:
                    answer(c, 404, {"message": "not faked: " + path})
            else:
                answer(c, 404, {"message": "not faked: " + path})
    except (EOFError, OSError, ValueError):
        pass
    try:
        sock.close()
    except OSError:
        pass


def run_started(ct):
    for _ in range(100):
        if ct["conn"] is not None:
            break
        time.sleep(0.01)
    if ct["conn"] is None:
        return
    ct["job"] = False
    watch = threading.Thread(target=runner, args=(ct,), daemon=True)
    watch.start()


def main():
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(SOCK)
    srv.listen(16)
    while True:
        s, _ = srv.accept()
        threading.Thread(target=serve, args=(s,), daemon=True).start()


main()
