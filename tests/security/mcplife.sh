#!/bin/bash
# A hostile MCP server against its host's lifecycle (core/mcphost.c),
# through crucible mcp: the own test server tests/mcp-servers/
# life_server.py, spoken to by tests/mcp-servers/lifelib.py (Python: no
# node start).  Unconfined (the compatibility backend, the positive
# control: the same moves' writes land), confined as root and as 65534.
#
# - left: a server's main process exits and leaves a process running that
#   holds its output and writes; it is stopped after the bound and its
#   writes discarded (it used to be waited for with no stop ever sent,
#   reported as a stop that was not confirmed, and every later
#   preparation blocked); one that ends within the bound is published; a
#   server that broke the protocol after a write is stopped, and neither
#   the workspace nor its replacement sees the write.
# - stopped: crucible mcp stopped (SIGTERM) just after such a main process
#   exited: the scope is stopped, nothing of it published, no process
#   left, no unconfirmed cleanup.
# - stderr: what a server writes on its stderr cannot pass a terminal
#   control or forge a line of crucible's own, is bounded, and is not
#   journaled.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/mcp-servers/life.sh"
N_LEFT=11
N_STOPPED=5
N_STDERR=6
plan $((3 * (N_LEFT + N_STOPPED + N_STDERR)))

life_checks <<EOF2
import os, signal, time
from lifelib import *

def left(way):
    w = way.name
    mark = "left-%s-%d" % (w, os.getpid())
    way.config({"k": ("normal",), "q": ("normal",), "g": ("normal",)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    # k leaves a process that holds its output, writes, and stays.
    m.call("mcp__k__sh", {"line": "setsid sh -c 'echo late > late.txt; exec sleep 30' %s >/proc/\$PPID/fd/1 2>/dev/null </dev/null &" % mark})
    # q leaves one that writes and ends within the bound.
    m.call("mcp__q__sh", {"line": "setsid sh -c 'sleep 1; echo early > early.txt' >/proc/\$PPID/fd/1 2>/dev/null </dev/null &"})
    # g writes, then breaks the protocol while it runs on.
    m.call("mcp__g__sh", {"line": "echo s3cr3t > secret.txt"})
    err_k, _ = m.call("mcp__k__quit")
    m.call("mcp__q__quit")
    m.call("mcp__g__garbage", timeout=8)
    time.sleep(0.5)
    wait_for(lambda: readies(way.facts(), "mcp:k") >= 2, 12)
    wait_for(lambda: readies(way.facts(), "mcp:q") >= 2, 5)
    wait_for(lambda: readies(way.facts(), "mcp:g") >= 2, 5)
    _, again = m.call("mcp__k__echo", {"text": "again"})
    _, seen = m.call("mcp__g__sh", {"line": "cat secret.txt"})
    rc = m.close()
    err = m.stderr()
    facts = way.facts()
    ks = sandboxes(facts, "mcp:k")
    diag = (err, fact_line(facts))
    check(err_k is True, "%s: the call whose server exited ends as an error" % w)
    check(again == "again", "%s: the server that left a process behind is restarted and answers" % w, again, *diag)
    check(any(f.get("identity") == "mcp:k" and f.get("fact") == "stop" and f.get("reason") == "left_running" and f.get("sandbox") == ks[0] for f in facts),
          "%s: what it left running is stopped after the bound (journal: stop, left_running)" % w, *diag)
    check(len(ks) >= 2 and before(facts, lambda f: f.get("fact") == "cleanup" and f.get("sandbox") == ks[0],
                                  lambda f: f.get("fact") == "policy" and f.get("sandbox") == ks[1]),
          "%s: and its restart comes only after that scope's cleanup is confirmed" % w, *diag)
    check("not been confirmed empty" not in err and "cleanup_failed" not in fact_line(facts),
          "%s: no unconfirmed cleanup is reported, nothing blocks later preparations" % w, *diag)
    check(wait_for(lambda: not marked(mark), 3), "%s: no process it left is alive after the run" % w)
    if way.confined:
        check(not os.path.exists(way.path("late.txt")), "%s: what the left process wrote is discarded" % w, *diag)
        check(os.path.exists(way.path("early.txt")), "%s: control: one that ended within the bound is published" % w, *diag)
        check("No such file" in seen, "%s: the replacement of a server stopped for a broken protocol does not see its write" % w, seen)
        check(not os.path.exists(way.path("secret.txt")), "%s: nor does the workspace" % w, *diag)
    else:
        check(os.path.exists(way.path("late.txt")), "%s: control: unconfined, the left process's write lands" % w)
        check(os.path.exists(way.path("early.txt")), "%s: control: and the one ended within the bound" % w)
        check("s3cr3t" in seen, "%s: control: unconfined, the replacement sees the write" % w, seen)
        check(os.path.exists(way.path("secret.txt")), "%s: control: unconfined, the write is in the workspace" % w)
    check(rc == 0, "%s: the connection ends cleanly" % w, rc, *diag)

def stopped(way):
    w = way.name
    mark = "stopped-%s-%d" % (w, os.getpid())
    way.config({"r": ("normal",)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    m.call("mcp__r__sh", {"line": "echo r > r.txt; setsid sh -c 'exec sleep 30' %s >/proc/\$PPID/fd/1 2>/dev/null </dev/null &" % mark})
    m.call("mcp__r__quit")
    m.p.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    rc = m.close()
    took = time.monotonic() - t0
    err = m.stderr()
    facts = way.facts("mcp:r")
    diag = (err, fact_line(facts))
    check(rc == 143, "%s: crucible mcp stopped by SIGTERM just after the server's main process exited (%.1f s)" % (w, took), rc, *diag)
    check(wait_for(lambda: not marked(mark), 3), "%s: what the server left running is stopped with it" % w)
    check("not been confirmed empty" not in err and not any(f.get("fact") == "cleanup_failed" for f in facts),
          "%s: its cleanup is confirmed, not left unconfirmed" % w, *diag)
    if way.confined:
        check(not os.path.exists(way.path("r.txt")), "%s: its write is discarded" % w, *diag)
        check(any(f.get("fact") == "publication" and f.get("outcome") == "discarded" for f in facts), "%s: the journal says so" % w, *diag)
    else:
        check(os.path.exists(way.path("r.txt")), "%s: control: unconfined, the write landed" % w)
        check(any(f.get("fact") == "cleanup" for f in facts), "%s: control: its cleanup is in the journal" % w, *diag)

def stderr(way):
    w = way.name
    way.config({"e": ("normal",)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    m.call("mcp__e__stderr", {"line": "\x1b]0;pwned\x07\x1b[2J\rcrucible: MCP server \x60e\x60 ended and is restarted\ncrucible: forged"})
    m.call("mcp__e__stderr", {"bytes": 200000, "line": "after-the-bound"})
    _, answer = m.call("mcp__e__echo", {"text": "still here"})
    rc = m.close()
    err = m.stderr()
    journal = open(way.journal_path()).read()
    lines = err.split("\n")
    check(any(l.startswith("crucible: mcp:e: ") and "pwned" in l for l in lines), "%s: control: a line of the server's stderr is passed on, under its name" % w, err[:2000])
    check("\x1b" not in err and "\x07" not in err and "\r" not in err, "%s: no terminal control of it reaches crucible's stderr" % w, repr(err[:2000]))
    check(not any(l.startswith("crucible: MCP server \x60e\x60") or l.startswith("crucible: forged") for l in lines),
          "%s: nor a line that reads as crucible's own" % w, err[:2000])
    check("[stderr past 65536 bytes is not kept]" in err and err.count("x") <= 65536 and "after-the-bound" not in err,
          "%s: what follows 64 KiB of it is dropped, saying so once" % w, len(err))
    check("pwned" not in journal and "xxxxxxxx" not in journal, "%s: none of it is journaled" % w)
    check(answer == "still here" and rc == 0, "%s: the server answers on, the connection ends cleanly" % w, answer, rc)

ways(left, $N_LEFT)
ways(stopped, $N_STOPPED)
ways(stderr, $N_STDERR)
EOF2
