#!/bin/bash
# crucible mcp against a hostile or broken client (issue 19): deep nesting,
# replayed elicitation answers, a quadratic environment, notifications with
# an id, a logging level outside the enumeration, a closed standard input,
# and what a command stopped because the input closed is called.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 19
new_workspace

peer_checks <<'EOF'
import os, time
from peer import *

# --- A: nesting deeper than the bound is refused, not a crash ------------
def section_0():
    ask_mode()
    m = Mcp()
    m.initialize()
    deep = b"[" * 260000 + b"]" * 260000
    m.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + deep + b"}\n")
    reply = m.recv()
    check(reply == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700,
          "message": "parse error: nested deeper than 64 levels"}},
          "260,000 nested arrays are a parse error naming the bound", reply)
    m.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    check(m.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}},
          "and the server still answers")
    nested = {"a": 1}
    for _ in range(62):  # in the message object: 64 levels in all
        nested = [nested]
    m.send({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": nested})
    check(m.recv() == {"jsonrpc": "2.0", "id": 3, "result": {}},
          "64 levels, the bound, are read")
    m.send_raw(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":"' + b"[" * 1000 + b'"}\n')
    check(m.recv() == {"jsonrpc": "2.0", "id": 4, "result": {}},
          "brackets inside a string are not nesting")
    rc = m.close()
    check(rc == 0, "the server leaves with status 0, not a signal", rc)

section(section_0)

# --- B: an elicitation answer is taken once --------------------------------
def section_1():
    m = Mcp()
    m.initialize({"elicitation": {}})
    m.call(1, "bash", {"command": "echo ran >> count.txt; echo once"})
    ask = m.recv()
    check(ask is not None and ask.get("id") == "crucible-ask-1",
          "the call is asked about", ask)
    for _ in range(3):
        m.send({"jsonrpc": "2.0", "id": "crucible-ask-1",
                "result": {"action": "accept", "content": {"allow": True}}})
    reply = m.recv()
    check(tool_text(reply) == "once", "accepted, it runs", reply)
    m.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    extra = m.recv()
    check(extra == {"jsonrpc": "2.0", "id": 9, "result": {}},
          "the replayed answers are not answered", extra)
    with open("count.txt") as f:
        n = len(f.read().splitlines())
    check(n == 1, "three accepts ran the command once", "ran %d times" % n)
    m.call(2, "bash", {"command": "echo second"})
    ask = m.recv()
    m.send({"jsonrpc": "2.0", "id": "crucible-ask-2",
            "result": {"action": "accept", "content": {"allow": True}}})
    m.send({"jsonrpc": "2.0", "id": "crucible-ask-2",
            "result": {"action": "decline"}})
    reply = m.recv()
    check(tool_text(reply) == "second" and reply["result"]["isError"] is False,
          "accept then decline: the command's result, not a refusal", reply)
    m.send({"jsonrpc": "2.0", "id": "crucible-ask-77",
            "result": {"action": "accept", "content": {"allow": True}}})
    m.send({"jsonrpc": "2.0", "id": 10, "method": "ping"})
    check(m.recv() == {"jsonrpc": "2.0", "id": 10, "result": {}},
          "an answer to a question never asked is ignored")
    m.close()
    ignored = [(f["reason"]) for f in journal_facts("peer")
               if f.get("event") == "answer_ignored"]
    check(ignored == ["duplicate", "duplicate", "duplicate", "unknown"],
          "each ignored answer is in the journal, as duplicate or unknown",
          ignored)

section(section_1)

# --- E: the environment's bound comes before any per-name work ------------
def section_2():
    full_access()
    if SANITIZED:
        skip("150,000 names are refused by the bound", SANITIZED_WHY)
        skip("within 5 seconds (linear)", SANITIZED_WHY)
        return
    m = Mcp()
    m.initialize()
    env = {"V%d" % i: "x" for i in range(150000)}
    start = time.monotonic()
    m.call(1, "bash", {"command": "echo no", "env": env})
    reply = m.recv(30)
    took = time.monotonic() - start
    check(reply is not None and "more than 64 environment variables"
          in (tool_text(reply) or ""), "150,000 names are refused by the bound",
          reply)
    check(took < 5, "within 5 seconds (linear)", "took %.1f s" % took)
    m.close()

section(section_2)

# --- a notification sent with an id; logging/setLevel's enumeration -------
def section_3():
    m = Mcp()
    m.initialize()
    m.send({"jsonrpc": "2.0", "id": 2, "method": "notifications/cancelled",
            "params": {"requestId": 1}})
    check(m.recv(5) == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600,
          "message": "invalid request: a notification is sent without an id"}},
          "notifications/cancelled with an id is answered as invalid")
    m.send({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
            "params": {"level": "loud"}})
    check(m.recv(5) == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
          "message": "logging/setLevel takes a level: debug, info, notice, "
          "warning, error, critical, alert or emergency"}},
          "logging/setLevel refuses a level outside the enumeration")
    m.send({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel",
            "params": {"level": "warning"}})
    check(m.recv(5) == {"jsonrpc": "2.0", "id": 4, "result": {}},
          "and takes one inside it")

section(section_3)

# --- a command stopped because the input closed says so -------------------
def section_4():
    m = Mcp()
    m.initialize()
    m.call(5, "bash", {"command": "sleep 30", "background": True,
                       "description": "the long one"})
    m.recv()
    m.p.stdin.close()
    note = m.recv(15)
    data = (note or {}).get("params", {}).get("data", "")
    check(data.startswith("\u2717 the long one was stopped because crucible is "
          "exiting \u00b7 "), "a command stopped as the input closed is not "
          "said to have ended on its own", note)
    m.close()

section(section_4)

# --- a closed standard input ends the server ------------------------------
def section_5():
    closed_stdin_leaves("mcp")

section(section_5)
EOF
