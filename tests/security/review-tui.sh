#!/bin/bash
# A reviewer's pass over an MCP server's questions in the full-screen
# session (issue 16): while its question is open, a server sends 30 more
# in the same call.  Each is cancelled (one question at a time), and the
# person was told so once per question: 30 notices, which a server could
# send by the thousand to push everything else out of the transcript (it
# keeps 20,000 lines).  Now one notice says it while the panel is open.
# The control: the first cancelled question is told.  Unconfined (the
# question is the session's, whatever runs the server).  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=4
tui_have_tmux || tui_skip_all $N "tmux is not installed"
command -v python3 >/dev/null 2>&1 || tui_skip_all $N "python3 is not installed"
plan $N
new_workspace
TUI_COLS=200
TUI_ROWS=50
cat >"$TEST_TMP/server.py" <<'PY'
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    mid, method = m.get("id"), m.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "f", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "flood", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        qids = ["q%d" % i for i in range(31)]
        for q in qids:
            send({"jsonrpc": "2.0", "id": q, "method": "elicitation/create",
                  "params": {"message": "question " + q, "requestedSchema":
                             {"type": "object", "properties": {}}}})
        got = set()
        while len(got) < len(qids):
            a = json.loads(sys.stdin.readline())
            if a.get("id") in qids:
                got.add(a["id"])
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
            {"type": "text", "text": "answered %d" % len(got)}]}})
PY
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":false},"permissions":{"allow":["mcp__a"]},
 "mcpServers":{"a":{"command":"/usr/bin/python3","args":["%s"]}}}\n' "$TEST_TMP/server.py" \
  >"$HOME/.crucible/config.json"

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"tools"
expect {"type":"prompt","text":"go"}
send {"type":"tool","id":"e1","name":"mcp__a__flood","arguments":{}}
expect {"type":"tool_result","id":"e1","text":"answered 31"
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys go Enter
tui_wait 'question q0'
ok $? "the first question is put to the person"
tui_wait 'was cancelled: another question was open'
ok $? "control: the person is told a question was cancelled"
sleep 1
tui_capture
told=$(grep -c 'was cancelled: another question was open' <<<"$SCREEN")
is "$told" 1 "30 questions cancelled behind the open one are told once, not once each"
tui_keys Escape
tui_gone 'question q0' 10
tui_gone "✳ running" 10
agent_clean "the server's call ended once the open question was answered"
