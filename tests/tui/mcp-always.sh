#!/bin/bash
# The approval panel for an agent's call of an MCP server's tool (issue 16):
# "allow, and from now on" proposes the rule that names the tool in full
# (mcp__<server>__<tool>), writes it to the home configuration under the
# workspace, and the next call of that tool is not asked about, while a
# call of another tool of the same server still is.  Unconfined (the rule
# is the panel's, whatever runs the server).  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=6
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_COLS=200
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":false},
 "mcpServers":{"t":{"command":"/usr/bin/python3","args":["%s","normal"]}}}\n' "$SERVER" \
  >"$HOME/.crucible/config.json"

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"tools"
expect {"type":"prompt","text":"go"}
send {"type":"tool","id":"m1","name":"mcp__t__echo","arguments":{"text":"one"}}
expect {"type":"tool_result","id":"m1","text":"one","is_error":false}
send {"type":"tool","id":"m2","name":"mcp__t__echo","arguments":{"text":"two"}}
expect {"type":"tool_result","id":"m2","text":"two","is_error":false}
send {"type":"tool","id":"m3","name":"mcp__t__secret","arguments":{}}
expect {"type":"tool_result","id":"m3","text":"[refused:
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys go Enter
tui_wait '  mcp__t__echo({"text":"one"})'
ok $? "a call of a server's tool no rule allows is asked about"
is "$(tui_block "› 1. Allow once" 2 | sed -n 2p)" \
  "  2. Allow, and from now on allow mcp__t__echo in this workspace" \
  "the rule proposed is the tool's full name"
tui_keys 2
tui_wait "mcp__t__echo is allowed in this workspace from now on ($HOME/.crucible/config.json)"
ok $? "choosing it says which rule was added, and where"
like "$(tr -d ' \n' <"$HOME/.crucible/config.json")" \
  "\"workspaces\":\{\"$WS\":\{\"allow\":\[\"mcp__t__echo\"\]\}\}" \
  "the home configuration holds the rule under this workspace"
# The second echo runs unasked; the other tool is asked about again.
tui_wait '  mcp__t__secret({})'
ok $? "another tool of the same server is still asked about"
tui_keys Escape
tui_gone "✳ running" 10
agent_clean "the agent got the answers it expected (the second echo was not asked about)"
