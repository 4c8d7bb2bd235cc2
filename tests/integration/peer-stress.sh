#!/bin/bash
# The two stalls of issue 19, bounded in time (under a minute): a peer that
# stops reading while commands with 1 s deadlines run.  The deadlines fire
# on time (with generous slack), signals are handled, crucible's VmRSS stays
# bounded, and a client that lets more than the bound wait is ended with
# the reason in the journal.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 10
new_workspace

peer_checks <<'EOF'
import os, signal, subprocess, threading, time
from peer import *

TMP = os.environ["TEST_TMP"]
RSS_BOUND = 64 * 1024  # KiB
SLACK = 3.0            # seconds past a 1 s deadline still called on time

def flood(m, n):
    """Write n tools/list requests from a thread: a server that blocks must
    not block the test with it."""
    data = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n'
                    % (1000 + i) for i in range(n))
    def run():
        try:
            m.send_raw(data)
        except OSError:
            pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t

def lifetimes(marker, n, limit):
    """Wait up to limit seconds for n processes with marker to appear and go;
    the longest one's life in seconds (None when one outlived limit), and
    crucible's peak VmRSS meanwhile through the sampler."""
    seen = {}
    end = time.monotonic() + limit
    while time.monotonic() < end:
        now = time.monotonic()
        live = set(pids_matching(marker))
        for p in live:
            seen.setdefault(p, [now, None])
        for p, life in seen.items():
            if p not in live and life[1] is None:
                life[1] = now
        if len(seen) >= n and all(l[1] is not None for l in seen.values()):
            return max(l[1] - l[0] for l in seen.values())
        time.sleep(0.02)
    return None

class Sampler:
    """Peak VmRSS of a process, sampled from a thread."""
    def __init__(self, pid):
        self.pid, self.peak, self.on = pid, 0, True
        threading.Thread(target=self.run, daemon=True).start()
    def run(self):
        while self.on:
            self.peak = max(self.peak, vm_rss_kib(self.pid))
            time.sleep(0.02)
    def stop(self):
        self.on = False
        return self.peak

full_access()

# --- an MCP client that stops reading while deadlines run ----------------
def section_0():
    m = Mcp()
    rss = Sampler(m.p.pid)
    m.initialize()
    for i in range(3):
        m.call(i + 1, "bash", {"command": "tail -f /dev/null; : stress-mcp-%d" % i,
                               "timeout": 1})
    end = time.monotonic() + 10
    while len(pids_matching("stress-mcp-")) < 3 and time.monotonic() < end:
        time.sleep(0.02)
    # 4,000 answers of about 1.4 KB: far past the pipe, inside the bound.
    flood(m, 4000)
    life = lifetimes("stress-mcp-", 3, 1 + SLACK + 5)
    check(life is not None and life < 1 + SLACK,
          "the 1 s deadlines fire on time while the client does not read",
          "longest life %s s" % life)
    start = time.monotonic()
    m.p.send_signal(signal.SIGTERM)
    try:
        rc = m.p.wait(10)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - start
    check(rc == 128 + signal.SIGTERM and took < 8,
          "SIGTERM is handled while the client does not read",
          "status %r after %.1f s" % (rc, took))
    peak = rss.stop()
    check_bound(peak < RSS_BOUND, "crucible stays under 64 MB", "%d KiB" % peak)
    if rc is None:
        m.p.kill()
        m.p.wait()

# --- one that lets more than the bound wait is ended ---------------------
def section_1():
    m = Mcp()
    rss = Sampler(m.p.pid)
    m.initialize()
    m.call(1, "bash", {"command": "tail -f /dev/null; : stress-end", "timeout": 20})
    end = time.monotonic() + 10
    while not pids_matching("stress-end") and time.monotonic() < end:
        time.sleep(0.02)
    flood(m, 20000)
    try:
        rc = m.p.wait(20)
    except subprocess.TimeoutExpired:
        rc = None
    peak = rss.stop()
    check(rc == 1, "a client 8 MiB behind is ended", "status %r" % rc)
    check(not pids_matching("stress-end"), "and its commands are stopped")
    err = open(os.path.join(TMP, "mcp.err")).read()
    check("crucible: the MCP client did not read its output (more than "
          "8388608 bytes waited); every command was stopped and the server "
          "ends" in err, "the person is told why", err)
    facts = [(f["peer"], f["event"], f["reason"]) for f in journal_facts("peer")]
    check(("mcp_client", "ended", "unread_output") in facts,
          "and the journal says why", facts)
    check_bound(peak < RSS_BOUND, "crucible stays under 64 MB", "%d KiB" % peak)
    if rc is None:
        m.p.kill()
        m.p.wait()

# --- an agent that stops reading while deadlines run ---------------------
def section_2():
    path = os.path.join(TMP, "deaf-agent.py")
    with open(path, "w") as f:
        f.write("import json, sys, time\n"
                "inp, out = sys.stdin.buffer, sys.stdout.buffer\n"
                "def send(o):\n"
                "    out.write(json.dumps(o).encode() + b'\\n'); out.flush()\n"
                "inp.readline()\n"
                "send({'type': 'hello', 'protocol': 1})\n"
                "inp.readline()\n"
                "for i in range(3):\n"
                "    send({'type': 'bash', 'id': 'c' + str(i), 'timeout': 1,\n"
                "          'command': 'tail -f /dev/null; : stress-agent-' + str(i)})\n"
                "out.write(b'not json\\n' * 30000); out.flush()\n"
                "time.sleep(%r)\n"
                "send({'type': 'end_turn'})\n"
                "for line in inp: pass\n" % (1 + SLACK + 1))
    p = subprocess.Popen([CRUCIBLE, "session", "--yes", "--agent",
                          "python3 " + path], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rss = Sampler(p.pid)
    p.stdin.write(b"go\n")
    p.stdin.close()
    life = lifetimes("stress-agent-", 3, 10 + SLACK)
    check(life is not None and life < 1 + SLACK,
          "the 1 s deadlines fire on time while the agent does not read",
          "longest life %s s" % life)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    peak = rss.stop()
    check_bound(peak < RSS_BOUND, "crucible stays under 64 MB", "%d KiB" % peak)

start = time.monotonic()
for s in (section_0, section_1, section_2):
    section(s)
took = time.monotonic() - start
if took > 60:
    check(False, "the stress test is bounded in time", "%.1f s" % took)
EOF
