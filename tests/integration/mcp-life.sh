#!/bin/bash
# The MCP servers' lifecycle paths (core/mcphost.c) no other test takes,
# through crucible mcp and the own test server tests/mcp-servers/
# life_server.py, spoken to by tests/mcp-servers/lifelib.py (Python: no
# node start).  Unconfined (the compatibility backend), confined as root
# and as 65534.
#
# - required: a required (not optional) server whose handshake fails
#   stops the run with its reason, after its explicit cleanup; the facts
#   of the disposal are in the journal.
# - audit: the journal refuses a fact (its file at RLIMIT_FSIZE): the run
#   ends, and the failure that happened with it is still reported.
# - blocked: a scope whose cleanup is never confirmed (its broker, or
#   compat's keeper, stopped with SIGSTOP from outside) blocks every later
#   preparation and fails the disposal at the run's end.
# - calls: a cancellation from the MCP client reaches the server and ends
#   the call; a fact of a server's end is in the journal before the result
#   it causes; a server killed from outside is restarted only after its
#   cleanup is confirmed; after the run every scope's cleanup is recorded.
# - grants: the allow rule mcp__g covers the tools of the listing crucible
#   first saw with it, across runs: run 1 lists {echo, ...} and records
#   them (0600, in this uid's 0700 state directory); run 2's server also
#   offers b, which is asked about while echo is not; a corrupt record
#   makes every tool asked about, with a warning naming it.  Unconfined
#   and as 65534 (the record is the host's, not the sandbox's).
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/mcp-servers/life.sh"
N_REQUIRED=5
N_AUDIT=4
N_BLOCKED=5
N_CALLS=7
N_GRANTS=6
plan $((3 * (N_REQUIRED + N_AUDIT + N_BLOCKED + N_CALLS) + 2 * N_GRANTS))

life_checks <<EOF2
import hashlib, os, resource, signal, stat, time
from lifelib import *

def required(way):
    w = way.name
    way.config({"bad": ("garbage",), "ok": ("normal",)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    ended = until_eof(m, 20)
    rc = m.close()
    err = m.stderr()
    facts = way.facts()
    bad = sandboxes(facts, "mcp:bad")
    diag = (err, fact_line(facts))
    check(ended and rc == 1, "%s: a required server whose handshake fails ends the connection (the run), status 1" % w, rc, *diag)
    check("MCP server \x60bad\x60 did not start (" in err and "it is not optional, so the run stops" in err,
          "%s: with its reason" % w, *diag)
    check(bool(bad) and any(f.get("fact") == "cleanup" and f.get("sandbox") == bad[0] for f in facts),
          "%s: after its explicit cleanup (journal)" % w, *diag)
    check(bool(bad) and before(facts, lambda f: f.get("fact") == "peer" and f.get("event") == "handshake_failed" and f.get("sandbox") == bad[0],
                               lambda f: f.get("fact") == "cleanup" and f.get("sandbox") == bad[0]),
          "%s: the failed handshake is recorded before that cleanup" % w, *diag)
    check(not cleaned(facts), "%s: every server prepared (the other one too) has its cleanup in the journal after the disposal" % w, *diag)

def audit(way):
    w = way.name
    mark = "audit-%s-%d" % (w, os.getpid())
    way.config({"hang": ("hang", mark), "ok": ("normal", mark)})
    m = Mcp(way, handshake_ms=2500, ignore_xfsz=True)
    m.initialize()
    wait_for(lambda: readies(way.facts(), "mcp:ok") >= 1, 10)
    # From now on every write to the journal's file fails (EFBIG).
    size = os.path.getsize(way.journal_path())
    # As the identity crucible runs as, which may lower its own limits.
    child = os.fork()
    if child == 0:
        try:
            if way.uid is not None:
                os.setgroups([])
                os.setgid(way.uid)
                os.setuid(way.uid)
            resource.prlimit(m.p.pid, resource.RLIMIT_FSIZE, (size, size))
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, st = os.waitpid(child, 0)
    if st != 0:
        note("the journal's file limit could not be set")
    ended = until_eof(m, 20)
    rc = m.close()
    err = m.stderr()
    diag = (err, fact_line(way.facts()))
    check(ended and rc == 1, "%s: a fact the journal refuses ends the connection (the run), status 1" % w, rc, *diag)
    check("recording the lifecycle of MCP server \x60hang\x60" in err and "the connection ends" in err,
          "%s: saying which fact and why" % w, *diag)
    check("MCP server \x60hang\x60 did not start (" in err, "%s: and the failure that came with it is not hidden (the required server's failed handshake)" % w, *diag)
    check(wait_for(lambda: not marked(mark), 5), "%s: both servers are gone after it" % w)

def blocked(way):
    w = way.name
    mark = "blocked-%s-%d" % (w, os.getpid())
    way.config({"b": ("normal", mark), "q": ("normal",)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    server = pids(mark)
    keeper = parent(server[0]) if server else None
    held = keeper is not None and keeper != m.p.pid and keeper != 1
    if held:
        os.kill(keeper, signal.SIGSTOP)
    try:
        m.call("mcp__b__garbage", timeout=3)
        wait_for(lambda: any(f.get("fact") == "cleanup_failed" for f in way.facts("mcp:b")), 9)
        m.call("mcp__q__quit")
        time.sleep(1)
        listed = m.tools() or []
        rc = m.close()
    finally:
        if held:
            os.kill(keeper, signal.SIGCONT)
    err = m.stderr()
    facts = way.facts()
    bs = sandboxes(facts, "mcp:b")
    diag = (err, fact_line(facts))
    check(held and "MCP server \x60b\x60: its process scope has not been confirmed empty" in err,
          "%s: a stop whose cleanup is not confirmed is reported while the run goes on" % w, keeper, *diag)
    check(len(sandboxes(facts, "mcp:q")) == 1 and not any(t.startswith("mcp__q__") for t in listed),
          "%s: it blocks another preparation: the server that exited is not restarted" % w, listed, *diag)
    check(rc == 1 and "MCP server \x60b\x60: disposing of it failed: its process scope has not been confirmed empty" in err,
          "%s: and at the run's end it is still a disposal failure (status 1)" % w, rc, *diag)
    check(bool(bs) and any(f.get("fact") == "cleanup_failed" and f.get("sandbox") == bs[0] for f in facts)
          and not any(f.get("fact") == "cleanup" and f.get("sandbox") == bs[0] for f in facts),
          "%s: the journal has its cleanup_failed and no cleanup invented for it" % w, *diag)
    gone = wait_for(lambda: not marked(mark), 5)
    if not gone:
        for p in pids(mark):
            os.kill(p, signal.SIGKILL)
    check(gone, "%s: once its keeper runs again, the abandoned scope ends" % w)

def calls(way):
    w = way.name
    mark = "calls-%s-%d" % (w, os.getpid())
    way.config({"s": ("normal",), "k": ("normal", mark)})
    m = Mcp(way)
    m.initialize()
    m.tools()
    m.send({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call",
            "params": {"name": "mcp__s__slow", "arguments": {"seconds": 30}}})
    time.sleep(0.5)
    m.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "slow-1", "reason": "changed my mind"}})
    t0 = time.monotonic()
    _, after = m.call("mcp__s__echo", {"text": "after"}, timeout=10)
    took = time.monotonic() - t0
    check(wait_for(lambda: "crucible: mcp:s: cancelled " in m.stderr(), 3),
          "%s: a cancellation from the MCP client reaches the server" % w, m.stderr())
    check(after == "after" and took < 5, "%s: the call ends there: the server answers the next one at once (%.1f s)" % (w, took), after)
    first = sandboxes(way.facts(), "mcp:k")
    is_err, _ = m.call("mcp__k__quit")
    then = way.facts("mcp:k")
    check(is_err is True and any(f.get("fact") in ("peer", "finish") and f.get("sandbox") == first[0] for f in then),
          "%s: when the result of a call whose server exited arrives, a fact of that end is in the journal" % w, fact_line(then))
    wait_for(lambda: readies(way.facts(), "mcp:k") >= 2, 8)
    victim = pids(mark)
    for p in victim:
        os.kill(p, signal.SIGKILL)
    wait_for(lambda: readies(way.facts(), "mcp:k") >= 3, 8)
    _, again = m.call("mcp__k__echo", {"text": "again"})
    rc = m.close()
    facts = way.facts()
    ks = sandboxes(facts, "mcp:k")
    diag = (m.stderr(), fact_line(facts))
    check(bool(victim) and again == "again", "%s: a server killed from outside is restarted and answers" % w, again, *diag)
    check(len(ks) >= 3 and before(facts, lambda f: f.get("fact") == "cleanup" and f.get("sandbox") == ks[1],
                                  lambda f: f.get("fact") == "policy" and f.get("sandbox") == ks[2]),
          "%s: only after the killed scope's cleanup is confirmed" % w, *diag)
    check(not any(o.get("id") == "slow-1" for o in m.others + m.notes), "%s: the cancelled call is never answered" % w, m.others)
    check(rc == 0 and not cleaned(facts), "%s: after the run every scope's cleanup is in the journal" % w, rc, *diag)

def read_record(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None

def grants(way):
    w = way.name
    uid = way.uid if way.uid is not None else os.getuid()
    home_file = os.path.join(way.home, ".crucible", "config.json")
    key = b"\0".join(s.encode() for s in ("crucible mcp grant record v1", home_file, "g", "mcp__g"))
    statedir = "/var/tmp/crucible-code-sandbox-%d-v1" % uid
    record = os.path.join(statedir, "mcpgrant-" + hashlib.sha256(key).hexdigest())
    if os.path.lexists(record):
        os.unlink(record)
    way.config({"g": ("normal", "-")})
    m = Mcp(way)
    m.initialize()
    first = m.tools() or []
    e1, t1 = m.call("mcp__g__echo", {"text": "one"})
    rc1 = m.close()
    st = os.lstat(record) if os.path.lexists(record) else None
    dst = os.lstat(statedir)
    text = read_record(record)
    check(rc1 == 0 and e1 is False and t1 == "one" and st is not None and stat.S_ISREG(st.st_mode)
          and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == uid and dst.st_uid == uid
          and stat.S_IMODE(dst.st_mode) == 0o700 and "\ntool echo\n" in (text or "") and "tool b\n" not in text,
          "%s: run 1 (tools {echo, ...}): echo is allowed by mcp__g, and the listing is recorded 0600 in this uid's state directory" % w,
          rc1, e1, t1, st, text, first, m.stderr())
    way.config({"g": ("normal", "-", "b")})
    m = Mcp(way)
    m.initialize()
    second = m.tools() or []
    e2, t2 = m.call("mcp__g__b")
    e3, t3 = m.call("mcp__g__echo", {"text": "two"})
    rc2 = m.close()
    check("mcp__g__b" in second and e2 is True and "[refused: the developer declined" in t2,
          "%s: run 2: b, which the server offers now, is asked about (declined, not run)" % w, second, e2, t2, m.stderr())
    check(e3 is False and t3 == "two" and rc2 == 0,
          "%s: run 2: echo, in the recorded listing, is still allowed unasked" % w, e3, t3, rc2, m.stderr())
    check(text is not None and read_record(record) == text, "%s: run 2 keeps the record as it was written" % w)
    # Its owner and mode are kept: only its words are wrong.
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"not a record\n")
    os.close(fd)
    m = Mcp(way)
    m.initialize()
    m.tools()
    e4, t4 = m.call("mcp__g__echo", {"text": "three"})
    m.close()
    err = m.stderr()
    check(e4 is True and "[refused: the developer declined" in t4,
          "%s: a corrupt record: echo too is asked about (declined, not run)" % w, e4, t4, err)
    check("MCP server \x60g\x60: the record of the tools your allow rule mcp__g covers, %s, cannot be used (" % record in err
          and "every tool of the server is asked about until it is removed" in err,
          "%s: with a warning naming the record" % w, err)
    os.unlink(record)

ways(required, $N_REQUIRED)
ways(audit, $N_AUDIT)
ways(blocked, $N_BLOCKED)
ways(calls, $N_CALLS)
ways(grants, $N_GRANTS, ("unconfined", "nobody"))
EOF2
