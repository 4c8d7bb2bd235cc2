#!/bin/bash
# A turn's MCP servers that cannot be had, in the full-screen session
# (issue 16; the spec's "Lifecycle and inspection"), as crucible mcp ends
# the connection (tests/integration/mcp-life.sh):
# - a required (not optional) server whose handshake fails (the own test
#   server tests/mcp-servers/life_server.py in its garbage mode) ends the
#   turn saying which server and why; the agent is not sent the prompt;
# - a server whose cleanup is never confirmed (its compatibility keeper
#   stopped with SIGSTOP from outside) blocks another preparation across
#   the session's turns: the next turn prepares no server and ends, saying
#   so, while the session is still the same sandbox service.
# Control: the turn between the two, with the server able to start, is
# sent its tools and its prompt.  Unconfined (the compatibility backend:
# the keeper is the scope's owner that can be stopped from outside).  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=10
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_COLS=200
TUI_ROWS=50
LIFE="$CRUCIBLE_SRCDIR/tests/mcp-servers/life_server.py"
FLAG="$TEST_TMP/broken"
GO="$TEST_TMP/go"
MARK="required-tui-$$"
# b: broken (garbage on stdout before any answer) while FLAG exists.
B_LINE="if [ -e $FLAG ]; then exec /usr/bin/python3 $LIFE garbage; else exec /usr/bin/python3 $LIFE normal $MARK; fi"
mkdir -p "$HOME/.crucible"
python3 - "$HOME/.crucible/config.json" "$B_LINE" "$LIFE" <<'PY'
import json, sys
json.dump({"sandbox": {"enabled": False},
           "permissions": {"allow": ["mcp__b", "mcp__q"]},
           "mcpServers": {"b": {"command": "/bin/sh", "args": ["-c", sys.argv[2]]},
                          "q": {"command": "/usr/bin/python3", "args": [sys.argv[3], "normal"]}}},
          open(sys.argv[1], "w"))
PY
touch "$FLAG"

# The agent is never sent "one" nor "three".
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"tools"
expect {"type":"prompt","text":"two"}
send {"type":"tool","id":"w","name":"mcp__q__sh","arguments":{"line":"while [ ! -e $GO ]; do sleep 0.1; done; echo went"}}
expect {"type":"tool_result","id":"w","text":"went
send {"type":"tool","id":"g","name":"mcp__b__garbage","arguments":{}}
expect {"type":"tool_result","id":"g"
send {"type":"tool","id":"w2","name":"mcp__q__sh","arguments":{"line":"while [ ! -e $GO.2 ]; do sleep 0.1; done; echo went"}}
expect {"type":"tools","tools":[{"name":"mcp__q__echo"
expect {"type":"tool_result","id":"w2","text":"went
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null

# 1. The required server does not start: the turn ends, saying why.
tui_keys one Enter
tui_wait 'MCP server `b` did not start (' 20
ok $? "a required server whose handshake fails is named, with its reason"
like "$(tr -s ' \n' '  ' <<<"$SCREEN")" 'MCP server `b` did not start \(MCP server `b`: initialize: [^)]+\); it is not optional, so the run stops' \
  "the message says the server is not optional and the run (the turn) stops"
tui_gone "✳ running" 20
ok $? "the turn ends there, not waiting for the agent"
if grep -q '"text":"one"' "$LOG" 2>/dev/null; then
  ok 1 "the agent is not sent the turn's prompt"
  diag "$(agent_log)"
else
  ok 0 "the agent is not sent the turn's prompt"
fi

# 2. Control: the server can start; its keeper is stopped, then it is made
# to end (garbage), which can never be confirmed.
rm -f "$FLAG"
tui_keys two Enter
server=""
for _ in $(seq 1 200); do
  server=$(pgrep -f -- "$MARK" | head -1)
  [ -n "$server" ] && grep -q '"text":"two"' "$LOG" 2>/dev/null && break
  sleep 0.05
done
keeper=$(ps -o ppid= -p "${server:-0}" 2>/dev/null | tr -d ' ')
crucible_pid=$(tui_crucible_pid)
if [ -n "$keeper" ] && [ "$keeper" != "$crucible_pid" ] && [ "$keeper" != 1 ]; then
  # Whatever happens, the keeper runs again before the test's files go.
  trap 'kill -CONT "$keeper" 2>/dev/null; for s in $TUI_SOCKS; do tmux -L "$s" kill-server 2>/dev/null; done; rm -rf "$TEST_TMP"' EXIT
  kill -STOP "$keeper"
  ok 0 "control: with the server able to start, the agent is sent the prompt (its keeper $keeper is stopped)"
else
  ok 1 "control: with the server able to start, the agent is sent the prompt (its keeper $keeper is stopped)"
  diag "server '$server' keeper '$keeper' crucible '$crucible_pid'" "$(agent_log)"
fi
touch "$GO"
tui_wait 'MCP server `b`: its process scope has not been confirmed empty' 20
ok $? "the stop whose cleanup is not confirmed is said while the turn goes on"
touch "$GO.2"
tui_gone "✳ running" 30
tui_wait 'MCP server `b`: disposing of it failed: its process scope has not been confirmed empty' 10
ok $? "the turn's end is a disposal failure"

# 3. The next turn: no server is prepared; the turn ends saying so.
tui_keys three Enter
tui_wait "an MCP server's earlier process scope has not been confirmed empty, so no MCP server is prepared" 20
ok $? "across turns, the unconfirmed cleanup blocks another preparation, saying so"
tui_gone "✳ running" 20
if [ $? -eq 0 ] && ! grep -q '"text":"three"' "$LOG" 2>/dev/null; then
  ok 0 "and that turn ends with its prompt unsent"
else
  ok 1 "and that turn ends with its prompt unsent"
  diag "$(agent_log)"
fi
[ -n "$keeper" ] && kill -CONT "$keeper" 2>/dev/null
tui_keys C-d
tui_exited 20 || diag "the session did not exit"
tmux -L "$TUI_SOCK" kill-server 2>/dev/null
agent_clean "the agent met its script: the prompts of the failed turns never reached it"
