#!/bin/bash
# crucible session with an agent and configured MCP servers (core/mcphost.c
# through core/session.c): a turn is a run of the servers, their tools are
# offered to the agent in a "tools" message before the turn's prompt,
# called as mcp__<server>__<tool> (decided by the rules for tools) and shown
# like a command call; the server is disposed of at the end of the turn and
# prepared anew, with a new sandbox ID, for the next one.  Unconfined (the
# compatibility backend); the confined lifecycle is mcp-host.sh's.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 12
new_workspace
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
two() { echo first; sleep 4; echo second; }
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":false},"permissions":{"allow":["mcp__t__echo"],"deny":["mcp__t__ask"]},
 "mcpServers":{"t":{"command":"/usr/bin/python3","args":["%s","normal"]}}}\n' "$SERVER" \
  >"$HOME/.crucible/config.json"

agent_script <<EOF2
expect "type":"hello","protocol":1,
$HELLO
expect {"type":"tools","tools":[{"name":"mcp__t__echo","inputSchema":{"type":"object"}},
expect {"type":"prompt","text":"first"}
send {"type":"tool","id":"m1","name":"mcp__t__echo","arguments":{"text":"hi from the server"}}
expect {"type":"tool_result","id":"m1","text":"hi from the server","is_error":false}
send {"type":"tool","id":"m2","name":"mcp__t__ask"}
expect {"type":"tool_result","id":"m2","text":"[refused: a deny rule in your configuration forbids it (mcp__t__ask); nothing was run]","is_error":true}
send {"type":"tool","id":"m3","name":"mcp__t__nope","arguments":{}}
expect {"type":"tool_result","id":"m3","text":"[refused: no MCP server offers the tool \`mcp__t__nope\` now; nothing was run]","is_error":true}
send {"type":"tool","id":"m4","name":"mcp__t__secret","arguments":{}}
expect {"type":"tool_result","id":"m4","text":"[refused: the developer could not be asked: crucible session reads its prompts from a pipe
send {"type":"end_turn"}
expect {"type":"tools","tools":[{"name":"mcp__t__echo"
expect {"type":"prompt","text":"second"}
send {"type":"end_turn"}
EOF2
session two
agent_clean "the agent was offered the server's tools before each prompt, and its calls were answered"
like "$out" $'● mcp__t__echo\\(\\{"text":"hi from the server"\\}\\)\n    hi from the server' "the call is shown like a command call, with its answer"
like "$out" $'● mcp__t__ask\\(\\{\\}\\)\n    \\[refused: a deny rule' "a denied call is shown with its refusal"
like "$out" $'\\? allow mcp__t__secret\\(\\{\\}\\)' "a call no rule allows is asked about"
is "$rc" 0 "the session ends cleanly"
J=$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)
ids=$(grep '"fact":"policy"' "$J" | grep '"identity":"mcp:t"' | sed 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/')
is "$(sort -u <<<"$ids" | wc -l)" 2 "each turn prepared the server anew, with its own sandbox ID"
first=$(head -1 <<<"$ids")
second=$(tail -1 <<<"$ids")
ok "$(awk -v a="$first" -v b="$second" '/"identity":"mcp:t"/ && /"fact":"cleanup"/ && index($0, a) { seen = 1 }
  /"fact":"policy"/ && index($0, b) { exit !seen }' "$J" && echo 0 || echo 1)" \
  "the first turn's server was cleaned up before the second turn's was prepared"
like "$(grep '"identity":"mcp:t"' "$J" | grep -c '"run":"turn-')" '^[1-9]' "its facts name the turn they belong to"
ok "$(grep '"fact":"cleanup"' "$J" | grep -q "$second" && echo 0 || echo 1)" "the last turn's server was disposed of"

# A prompt that comes after the turn has ended, while its server is still
# being disposed of (this one takes 3 s to go once its input is closed),
# waits for it and then starts the next turn with the server prepared
# anew; it was once started at once, and refused as "the MCP servers' run
# is already on", its prompt never sent.
printf '{"sandbox":{"enabled":false},"permissions":{"allow":["mcp__t__echo"]},
 "mcpServers":{"t":{"command":"/usr/bin/python3","args":["%s","normal"],"env":{"MCP_TEST_LINGER":"3"}}}}\n' \
  "$SERVER" >"$HOME/.crucible/config.json"
agent_script <<EOF2
expect "type":"hello","protocol":1,
$HELLO
expect {"type":"tools","tools":[{"name":"mcp__t__echo"
expect {"type":"prompt","text":"first"}
send {"type":"end_turn"}
expect {"type":"tools","tools":[{"name":"mcp__t__echo"
expect {"type":"prompt","text":"second"}
send {"type":"tool","id":"l1","name":"mcp__t__echo","arguments":{"text":"after the linger"}}
expect {"type":"tool_result","id":"l1","text":"after the linger","is_error":false}
send {"type":"end_turn"}
EOF2
# first; second once the agent has ended the first turn and the session
# has had a moment to take that in (well inside the server's 3 s).
after_turn() {
  local i
  echo first
  for ((i = 0; i < 400; i++)); do
    grep -qF '> {"type":"end_turn"}' "$LOG" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.5
  echo second
}
session after_turn
agent_clean "a prompt typed while the last turn's server is still going waits for it, then gets its turn"
ok "$(grep -qF "already on" <<<"$out$err" && echo 1 || echo 0)" "and is not refused because the last run is still on"
is "$rc" 0 "and the session ends cleanly"
