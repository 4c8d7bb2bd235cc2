#!/usr/bin/env python3
"""An MCP server (stdio, one JSON-RPC message a line) for the lifecycle
tests (tests/integration/mcp-life*.sh, tests/security/mcp*.sh): the
paths of a server's life that real servers cannot be made to take, and
the moves of a hostile one.  Python, so that a start costs tens of
milliseconds, not a node's second.

    life_server.py MODE [MARK [EXTRA...]]

MARK is only there for the tests to find the process by its arguments.
Each EXTRA is the name of one more tool, which answers "extra NAME".

MODE:
  normal   answers; its tools are below
  garbage  writes a line that is not JSON on standard output first
  hang     reads, never answers

Tools (arguments in brackets):
  echo {text}      answers with text
  sh {line}        runs line with /bin/sh (input from /dev/null) and
                   answers with its output and "[status N]"
  quit             exits with status 0, answering nothing
  garbage          writes a line that is not JSON on standard output and
                   reads on (a broken protocol, not an exit)
  slow {seconds}   answers "late" after seconds; a notifications/cancelled
                   for it is written to standard error as
                   "cancelled ID REASON" and the call is not answered
  stderr {bytes, line}  writes bytes of "x" to standard error with no
                   newline, then line and a newline, then answers "wrote"
"""
import json
import os
import select
import subprocess
import sys

MODE = sys.argv[1]
TOOLS = [{"name": n, "inputSchema": {"type": "object"}}
         for n in ("echo", "sh", "quit", "garbage", "slow", "stderr")]
EXTRA = sys.argv[3:]
TOOLS += [{"name": n, "inputSchema": {"type": "object"}} for n in EXTRA]
pending = []  # messages read while a slow call waited


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def text(mid, s):
    send({"jsonrpc": "2.0", "id": mid,
          "result": {"content": [{"type": "text", "text": s}],
                     "isError": False}})


def read():
    if pending:
        return pending.pop(0)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def slow(mid, seconds):
    """Wait, watching for a cancellation of mid."""
    import time
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not select.select([sys.stdin], [], [], 0.05)[0]:
            continue
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        msg = json.loads(line)
        if (msg.get("method") == "notifications/cancelled"
                and msg.get("params", {}).get("requestId") == mid):
            sys.stderr.write("cancelled %s %s\n" % (
                mid, msg["params"].get("reason")))
            sys.stderr.flush()
            return
        pending.append(msg)
    text(mid, "late")


def call(mid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        text(mid, args.get("text", ""))
    elif name == "sh":
        p = subprocess.run(["/bin/sh", "-c", args.get("line", "")],
                           stdin=subprocess.DEVNULL, capture_output=True)
        text(mid, "%s%s[status %d]" % (p.stdout.decode(errors="replace"),
                                       p.stderr.decode(errors="replace"),
                                       p.returncode))
    elif name == "quit":
        sys.exit(0)
    elif name == "garbage":
        sys.stdout.write("this is not JSON-RPC\n")
        sys.stdout.flush()
    elif name == "slow":
        slow(mid, float(args.get("seconds", 30)))
    elif name == "stderr":
        sys.stderr.write("x" * int(args.get("bytes", 0)))
        sys.stderr.write(args.get("line", "") + "\n")
        sys.stderr.flush()
        text(mid, "wrote")
    elif name in EXTRA:
        text(mid, "extra " + name)
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32602, "message": "unknown tool"}})


def handle(msg):
    method, mid = msg.get("method"), msg.get("id")
    if method is None or mid is None or MODE == "hang":
        return
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "life_server", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        call(mid, msg.get("params") or {})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "method not found"}})


if MODE == "garbage":
    sys.stdout.write("Server listening on stdio\n")
    sys.stdout.flush()
while True:
    handle(read())
