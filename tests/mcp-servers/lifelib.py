"""What the lifecycle tests (tests/integration/mcp-life*.sh,
tests/security/mcp*.sh) share: a way to run (unconfined, confined as root,
confined as uid 65534), crucible mcp spoken to over pipes as that
identity, the journal's facts of a server, and TAP lines ("0 WHAT" /
"1 WHAT" / "# ...") for the shell's runner to pass on.

Environment: CRUCIBLE (the binary), TEST_TMP, LIFE_SERVER (life_server.py).
"""
import json
import os
import select
import shutil
import signal
import subprocess
import time

CRUCIBLE = os.environ["CRUCIBLE"]
TMP = os.environ["TEST_TMP"]
SERVER = os.environ["LIFE_SERVER"]


def check(passed, what, *diag):
    print("%d %s" % (0 if passed else 1, what), flush=True)
    if not passed:
        for d in diag:
            for line in str(d).splitlines()[-40:]:
                print("# " + line, flush=True)
    return passed


def note(msg):
    print("# " + msg, flush=True)


class Way:
    """One way of running: its home, its workspace (owned by its
    identity, holding the server), its uid."""

    def __init__(self, name, tag=""):
        self.name = name
        self.confined = name != "unconfined"
        self.uid = 65534 if name == "nobody" else None
        self.home = os.path.join(TMP, "home-%s%s" % (name, tag))
        self.ws = os.path.join(TMP, "ws-%s%s" % (name, tag))
        os.makedirs(os.path.join(self.home, ".crucible"), exist_ok=True)
        os.makedirs(os.path.join(self.ws, ".srv"), exist_ok=True)
        self.server = os.path.join(self.ws, ".srv", "life_server.py")
        shutil.copy(SERVER, self.server)
        os.chmod(self.ws, 0o755)
        self.chown()

    def chown(self):
        if self.uid is None:
            return
        for top in (self.home, self.ws):
            for d, dirs, files in os.walk(top):
                os.chown(d, self.uid, self.uid)
                for f in files:
                    os.chown(os.path.join(d, f), self.uid, self.uid)

    def config(self, servers, allow=None, extra=None):
        """The home configuration: servers is {name: (mode, args...)} or
        {name: dict} for an entry as it is."""
        entries = {}
        for name, spec in servers.items():
            if isinstance(spec, dict):
                entries[name] = spec
                continue
            entries[name] = {"command": "/usr/bin/python3",
                             "args": [self.server] + list(spec)}
        cfg = {"sandbox": {"enabled": self.confined},
               "permissions": {"allow": allow if allow is not None else
                               ["mcp__" + n for n in servers] + ["bash"]},
               "mcpServers": entries}
        cfg.update(extra or {})
        path = os.path.join(self.home, ".crucible", "config.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        self.chown()

    def path(self, name):
        return os.path.join(self.ws, name)

    def facts(self, identity=None):
        """The newest journal's facts (of identity, when given)."""
        d = os.path.join(self.home, ".local", "state", "crucible")
        try:
            js = sorted((os.path.join(d, n) for n in os.listdir(d)
                         if n.endswith(".jsonl")), key=os.path.getmtime)
        except OSError:
            return []
        if not js:
            return []
        out = []
        with open(js[-1]) as f:
            for line in f:
                try:
                    fact = json.loads(line)
                except ValueError:
                    continue
                if identity is None or fact.get("identity") == identity:
                    out.append(fact)
        return out

    def journal_path(self):
        d = os.path.join(self.home, ".local", "state", "crucible")
        js = sorted((os.path.join(d, n) for n in os.listdir(d)
                     if n.endswith(".jsonl")), key=os.path.getmtime)
        return js[-1]


def sandboxes(facts, identity):
    """The sandbox IDs of a server's policy facts, in order."""
    return [f.get("sandbox") for f in facts
            if f.get("identity") == identity and f.get("fact") == "policy"]


def fact_line(facts):
    return "\n".join("%s %s %s %s" % (f.get("identity"), f.get("fact"),
                                      f.get("sandbox"),
                                      " ".join("%s=%s" % (k, f[k]) for k in
                                               ("event", "outcome", "status",
                                                "reason") if k in f))
                     for f in facts if "identity" in f)


def pids(mark):
    """The processes whose command line holds mark."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if mark.encode() in cmd and b"life_server" in cmd:
            found.append(int(p))
    return found


def parent(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


class Mcp:
    """crucible mcp in way's workspace, as its identity, over pipes."""

    def __init__(self, way, handshake_ms=None, ignore_xfsz=False):
        self.way = way
        self.errpath = os.path.join(TMP, "mcp-%s.err" % way.name)
        self.errf = open(self.errpath, "wb")
        env = {"PATH": "/usr/bin:/bin", "HOME": way.home}
        if handshake_ms is not None:
            env["CRUCIBLE_MCP_HANDSHAKE_MS"] = str(handshake_ms)
        uid = way.uid

        def become():
            if ignore_xfsz:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)

        self.p = subprocess.Popen([CRUCIBLE, "mcp"], cwd=way.ws, env=env,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf,
                                  preexec_fn=become)
        self.buf = b""
        self.next_id = 1
        self.notes = []  # notifications seen
        self.others = []  # answers to requests no one waited for

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj).encode() + b"\n")
        self.p.stdin.flush()

    def recv(self, timeout=20):
        end = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None, timeout=20):
        """Send a request; its answer (notifications kept in notes, a
        question of crucible's declined), or None."""
        mid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": mid, "method": method,
                   "params": params or {}})
        return self.wait(mid, timeout)

    def wait(self, mid, timeout=20):
        end = time.monotonic() + timeout
        while True:
            msg = self.recv(max(0.01, end - time.monotonic()))
            if msg is None:
                return None
            if msg.get("id") == mid and "method" not in msg:
                return msg
            if "method" not in msg:
                self.others.append(msg)
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"],
                           "result": {"action": "decline"}})
            elif "method" in msg:
                self.notes.append(msg)

    def initialize(self):
        r = self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "lifelib", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def tools(self, timeout=30):
        r = self.request("tools/list", timeout=timeout)
        if r is None or "result" not in r:
            return None
        return [t["name"] for t in r["result"]["tools"]]

    def call(self, tool, args=None, timeout=20):
        """(is_error, text) of a call, or (None, the answer) when it is
        not a result."""
        r = self.request("tools/call", {"name": tool,
                                        "arguments": args or {}}, timeout)
        if r is None or "result" not in r:
            return None, r
        content = r["result"].get("content") or [{}]
        return r["result"].get("isError"), content[0].get("text", "")

    def close(self, timeout=30):
        """Close its input; its exit status (-1: it had to be killed)."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = -1
        self.errf.close()
        return rc

    def stderr(self):
        if not self.errf.closed:
            self.errf.flush()
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


CHECKS = [0]
_check = check


def check(passed, what, *diag):  # noqa: F811 (counted)
    CHECKS[0] += 1
    return _check(passed, what, *diag)


def ways(fn, n, names=("unconfined", "root", "nobody")):
    """Run fn(Way) for each way that can run here, n checks each; a way
    that cannot is n skips with the reason (LIFE_SKIP_<way>, set by the
    shell), and one whose checks stopped early is failed for the rest."""
    for name in names:
        why = os.environ.get("LIFE_SKIP_" + name, "")
        if why:
            req, _, reason = why.partition(":")
            for _ in range(n):
                print("S %s: %s|%s|%s" % (name, fn.__name__, reason, req),
                      flush=True)
            continue
        before = CHECKS[0]
        try:
            fn(Way(name, "-" + fn.__name__))
        except Exception as e:  # a check that could not run fails
            import traceback
            note("%s (%s): %r" % (fn.__name__, name, e))
            for line in traceback.format_exc().splitlines():
                note(line)
        for _ in range(n - (CHECKS[0] - before)):
            check(False, "%s (%s): a check that did not run" % (fn.__name__,
                                                               name))


def marked(mark):
    """Whether a process whose command line holds mark is alive."""
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if mark.encode() in f.read():
                    with open("/proc/%s/stat" % p) as s:
                        if s.read().rsplit(")", 1)[1].split()[0] != "Z":
                            return True
        except OSError:
            continue
    return False


def before(facts, first, second):
    """Whether a fact matching first comes before one matching second
    (each a predicate); False when either is missing."""
    i = next((n for n, f in enumerate(facts) if first(f)), None)
    j = next((n for n, f in enumerate(facts) if second(f)), None)
    return i is not None and j is not None and i < j


def readies(facts, identity):
    """How many starts of a server became ready."""
    return sum(1 for f in facts if f.get("identity") == identity
               and f.get("fact") == "start" and f.get("event") == "ready")


def cleaned(facts):
    """Whether every sandbox prepared for a server has its cleanup fact
    (or its cleanup_failed); the ones that have not, otherwise."""
    prepared = [f["sandbox"] for f in facts if f.get("fact") == "policy"
                and "identity" in f]
    done = {f.get("sandbox") for f in facts
            if f.get("fact") in ("cleanup", "cleanup_failed")}
    return [p for p in prepared if p not in done]


def until_eof(m, seconds):
    """Read what crucible mcp sends until it closes its output; whether it
    did within seconds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        msg = m.recv(max(0.01, end - time.monotonic()))
        if msg is None:
            return m.p.poll() is not None or wait_for(
                lambda: m.p.poll() is not None, 5)
        if "method" in msg and "id" in msg:
            m.send({"jsonrpc": "2.0", "id": msg["id"],
                    "result": {"action": "decline"}})
    return False
