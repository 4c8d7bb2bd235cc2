#!/bin/bash
# An MCP server's own elicitation/create in the full-screen session (issue
# 16): put to the person in a panel saying which server asks and its
# message; "Accept" sends the server {"action":"accept","content":{}} (its
# schema requires nothing), Esc cancels.  Before, the session refused it
# (-32601, "elicitation is not offered").  Unconfined (the question is the
# session's, whatever runs the server).  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=5
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_COLS=200
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":false},"permissions":{"allow":["mcp__a"]},
 "mcpServers":{"a":{"command":"/usr/bin/python3","args":["%s","asks"]}}}\n' "$SERVER" \
  >"$HOME/.crucible/config.json"

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"tools"
expect {"type":"prompt","text":"go"}
send {"type":"tool","id":"e1","name":"mcp__a__ask","arguments":{}}
expect {"type":"tool_result","id":"e1","text":"{\"elicitation\": {\"action\": \"accept\", \"content\": {}}, \"ping\"
send {"type":"tool","id":"e2","name":"mcp__a__ask","arguments":{}}
expect {"type":"tool_result","id":"e2","text":"{\"elicitation\": {\"action\": \"cancel\"}, \"ping\"
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys go Enter
tui_wait 'The MCP server `a` asks'
ok $? "a server's elicitation/create is put to the person in a panel"
expected='The MCP server `a` asks
  Pick one

› 1. Accept
  2. Decline
enter chooses · esc cancels'
is "$(tui_block 'The MCP server `a` asks' 6)" "$expected" \
  "the panel: which server asks, its message, accept and decline"
tui_keys 1
tui_wait 'The MCP server `a` asks'
ok $? "accepted, the server's next question is asked again"
tui_keys Escape
tui_gone 'The MCP server `a` asks' 10
ok $? "esc closes the panel"
tui_gone "✳ running" 10
agent_clean "the server got accept with {} and then cancel (the agent saw both in its results)"
