# Hostile and broken peers for crucible's protocol readers, in Python so
# that a test can write megabytes, stop reading, or time a deadline.  Each
# check prints one line, "0 DESCRIPTION" or "1 DESCRIPTION" (and "# ..."
# diagnostics), which tests/integration/lib.sh's peer_checks turns into
# TAP.  Import it from a test's inline script.
import json
import os
import select
import signal
import subprocess
import sys
import time

CRUCIBLE = os.path.join(os.environ["CRUCIBLE_BIN_DIR"], "crucible")


# A sanitizer build (CRUCIBLE_SANITIZED): memory and speed are measured in
# the plain build, since ASan inflates the one and its realloc, which
# always copies, makes yajl's member-by-member tree growth quadratic.
SANITIZED = bool(os.environ.get("CRUCIBLE_SANITIZED"))
SANITIZED_WHY = "a sanitizer build inflates memory and time; measured in the plain build"


def skip(what, why):
    print("S %s # %s" % (what, why), flush=True)


def check_bound(passed, what, *diag):
    """A check of memory or speed: skipped in a sanitizer build."""
    if SANITIZED:
        skip(what, SANITIZED_WHY)
    else:
        check(passed, what, *diag)


def closed_stdin_leaves(subcommand):
    """Check that `crucible SUBCOMMAND <&-` ends on its own, with 0."""
    p = subprocess.Popen([CRUCIBLE, subcommand], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL,
                         preexec_fn=lambda: os.close(0))
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = None
    check(rc == 0, "crucible %s <&- leaves" % subcommand, "status %r" % rc)


def check(passed, what, *diag):
    print(("0 " if passed else "1 ") + what, flush=True)
    if not passed:
        for d in diag:
            for line in str(d).splitlines() or [""]:
                print("# " + line, flush=True)


def vm_rss_kib(pid):
    """VmRSS of pid in KiB, or 0 when it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def wait_gone(pid, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


def pids_matching(marker):
    """Processes whose command line contains marker."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(d))
        except OSError:
            pass
    return [p for p in found if p != os.getpid() and alive(p)]


def journal_facts(fact):
    """Every fact named fact in the journals under $HOME."""
    out = []
    base = os.path.join(os.environ["HOME"], ".local/state/crucible")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        with open(os.path.join(base, name)) as f:
            for line in f:
                v = json.loads(line)
                if v.get("fact") == fact:
                    out.append(v)
    return out


class Mcp:
    """crucible mcp with pipes on its standard streams."""

    def __init__(self, stdin=subprocess.PIPE):
        self.err = open(os.path.join(os.environ["TEST_TMP"], "mcp.err"), "wb")
        self.p = subprocess.Popen([CRUCIBLE, "mcp"], stdin=stdin,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def recv(self, timeout=10):
        """The next line as JSON, or None on timeout or end."""
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

    def initialize(self, capabilities=None):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18",
                              "capabilities": capabilities or {},
                              "clientInfo": {"name": "peer", "version": "1"}}})
        reply = self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, id, tool, args):
        self.send({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})

    def close(self, timeout=15):
        """Close the input; the exit status, or None if it did not leave."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None


def tool_text(reply):
    try:
        return reply["result"]["content"][0]["text"]
    except (TypeError, KeyError, IndexError):
        return None


def full_access():
    d = os.path.join(os.environ["HOME"], ".crucible")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write('{"permissions":{"mode":"fullAccess"}}')


def ask_mode():
    try:
        os.unlink(os.path.join(os.environ["HOME"], ".crucible/config.json"))
    except OSError:
        pass


def section(fn):
    """Run one part of a test; one that raises is a failure, and the next
    part still runs."""
    try:
        fn()
    except Exception as e:
        check(False, "%s ran to its end" % fn.__name__, repr(e))
