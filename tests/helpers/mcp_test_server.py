#!/usr/bin/env python3
"""An MCP server (stdio, one JSON-RPC message a line) for the paths real
servers cannot be made to take, for tests/integration/mcp-client.sh.

    mcp_test_server.py MODE [ARG]

MODE:
  normal          tools "echo" (text back) and "secret" (a reply whose
                  words hold $MCP_TEST_SECRET, once escaped as \\uXXXX,
                  and an error whose message holds it too)
  hang-handshake  reads, never answers
  garbage         writes a log line on standard output before anything
  oversized       answers initialize with a line of ARG bytes
  exit-mid-call   exits (status 3) when a tool is called, answering nothing
  version V       answers initialize with protocol version V
  list-changed    calling "grow" adds the tool "grown" and says so
                  (notifications/tools/list_changed) before answering
  paged           lists its tools over three pages (cursors "2", "3")
  asks            calling "ask" sends roots/list, sampling/createMessage,
                  elicitation/create and ping to the client and answers
                  with what came back (the elicitation's message and
                  requestedSchema are the call's "message" and "schema"
                  when it has them)
  slow            "echo" answers after ARG seconds; a cancellation for
                  it is written to standard error
  host            as normal, with "grow" as in list-changed, a tool
                  "sh" that runs {"line": ...} with /bin/sh and answers
                  with its output and status, and a tool "quit" that
                  exits (status 0) answering nothing (for tests/
                  integration/mcp-host.sh: writes, escape attempts, an
                  exit of its own)

With MCP_TEST_LINGER set to seconds, the server waits that long after
its input ends before it exits (a server slow to go).

With MCP_TEST_STDERR_SECRET set, the server first writes a line holding
$MCP_TEST_SECRET to its standard error.
"""
import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else None
TOOLS = [{"name": n, "inputSchema": {"type": "object"}}
         for n in ("echo", "secret", "grow", "ask")]
if MODE == "host":
    TOOLS.append({"name": "sh", "inputSchema": {"type": "object"}})
    TOOLS.append({"name": "quit", "inputSchema": {"type": "object"}})
asked = {}  # our request ids -> the answer (or None while waiting)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(mid, res):
    send({"jsonrpc": "2.0", "id": mid, "result": res})


def text(mid, s, is_error=False):
    result(mid, {"content": [{"type": "text", "text": s}], "isError": is_error})


def read():
    line = sys.stdin.readline()
    if not line:
        time.sleep(float(os.environ.get("MCP_TEST_LINGER", "0")))
        sys.exit(0)
    return json.loads(line)


def ask(method, params):
    """Send a request to the client and wait for its answer."""
    mid = "srv-%d" % (len(asked) + 1)
    asked[mid] = None
    send({"jsonrpc": "2.0", "id": mid, "method": method, "params": params})
    while True:
        msg = read()
        if msg.get("id") == mid and "method" not in msg:
            return msg
        handle(msg)


def initialize(mid, params):
    version = ARG if MODE == "version" else "2025-06-18"
    if MODE == "oversized":
        send({"jsonrpc": "2.0", "id": mid,
              "result": {"protocolVersion": version, "capabilities": {},
                         "pad": "x" * int(ARG)}})
        return
    result(mid, {"protocolVersion": version,
                 "capabilities": {"tools": {"listChanged": True}},
                 "serverInfo": {"name": "mcp_test_server", "version": "1"}})


def tools_list(mid, params):
    if MODE == "paged":
        page = (params or {}).get("cursor", "1")
        res = {"tools": [{"name": "page%s" % page,
                          "inputSchema": {"type": "object"}}]}
        if page != "3":
            res["nextCursor"] = str(int(page) + 1)
        result(mid, res)
        return
    result(mid, {"tools": TOOLS})


def secret_reply(mid):
    value = __import__("os").environ.get("MCP_TEST_SECRET", "")
    escaped = "".join("\\u%04x" % ord(c) for c in value)
    line = ('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text",'
            '"text":"plain %s escaped %s"}]}}' % (json.dumps(mid), value,
                                                  escaped))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def call(mid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if MODE == "exit-mid-call":
        sys.exit(3)
    if name == "echo" and MODE == "slow":
        deadline = time.time() + float(ARG)
        while time.time() < deadline:
            import select
            if select.select([sys.stdin], [], [], 0.05)[0]:
                msg = read()
                if msg.get("method") == "notifications/cancelled":
                    sys.stderr.write("cancelled %s %s\n" % (
                        msg["params"]["requestId"],
                        msg["params"].get("reason")))
                    sys.stderr.flush()
                    return
        text(mid, "late")
    elif name == "echo":
        text(mid, args.get("text", ""))
    elif name == "secret" and args.get("fail"):
        value = __import__("os").environ.get("MCP_TEST_SECRET", "")
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32603, "message": "bad token " + value}})
    elif name == "secret":
        secret_reply(mid)
    elif name == "quit" and MODE == "host":
        sys.exit(0)
    elif name == "sh" and MODE == "host":
        p = subprocess.run(["/bin/sh", "-c", args.get("line", "")],
                           stdin=subprocess.DEVNULL, capture_output=True)
        text(mid, "%s%s[status %d]" % (p.stdout.decode(errors="replace"),
                                       p.stderr.decode(errors="replace"),
                                       p.returncode))
    elif name == "grow" and MODE in ("list-changed", "host"):
        TOOLS.append({"name": "grown", "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text(mid, "grew")
    elif name == "ask" and MODE == "asks":
        roots = ask("roots/list", {})
        sampling = ask("sampling/createMessage",
                       {"messages": [], "maxTokens": 1})
        elicit = ask("elicitation/create",
                     {"message": args.get("message", "Pick one"),
                      "requestedSchema": args.get(
                          "schema", {"type": "object", "properties": {}})})
        ping = ask("ping", {})
        text(mid, json.dumps({
            "roots": roots.get("result", {}).get("roots"),
            "sampling": sampling.get("error", {}).get("code"),
            "elicitation": elicit.get("result", elicit.get("error")),
            "ping": ping.get("result")}, sort_keys=True))
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32602, "message": "unknown tool"}})


def handle(msg):
    method = msg.get("method")
    mid = msg.get("id")
    if method is None or mid is None:
        return  # an answer we did not wait for, or a notification
    if MODE == "hang-handshake":
        return
    if method == "initialize":
        initialize(mid, msg.get("params"))
    elif method == "tools/list":
        tools_list(mid, msg.get("params"))
    elif method == "tools/call":
        call(mid, msg.get("params") or {})
    elif method == "ping":
        result(mid, {})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "method not found"}})


def main():
    if os.environ.get("MCP_TEST_STDERR_SECRET"):
        sys.stderr.write("starting with token %s\n"
                         % os.environ.get("MCP_TEST_SECRET", ""))
        sys.stderr.flush()
    if MODE == "garbage":
        sys.stdout.write("Server listening on stdio\n")
        sys.stdout.flush()
    while True:
        handle(read())


main()
