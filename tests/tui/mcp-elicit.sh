#!/bin/bash
# An MCP server's own elicitation/create in the full-screen session (issue
# 16): put to the person in a panel saying which server asks and its
# message; "Accept" sends the server {"action":"accept","content":{}} (its
# schema requires nothing), Esc cancels.  Before, the session refused it
# (-32601, "elicitation is not offered").  Then a form (MCP 2025-06-18's
# flat schema of primitives): each property is a field, required ones say
# so, Accept with a value refused says why on the field (required, too
# short, not an email address, above the maximum) and sends nothing; the
# person types, erases, toggles a boolean, picks an enum by its enumNames,
# and the server gets the values typed (numbers as numbers, the enum's
# value).  A nested schema can only be declined (saying so).  A question
# asked while another is open (a command's approval) is cancelled, saying
# so.  Unconfined (the question is the session's, whatever runs the
# server).  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=16
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
send {"type":"tool","id":"e3","name":"mcp__a__ask","arguments":{"message":"Fill in the form","schema":{"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":2,"maxLength":10},"email":{"type":"string","title":"Email","format":"email"},"age":{"type":"integer","title":"Age","minimum":0,"maximum":150},"ratio":{"type":"number","title":"Ratio"},"subscribe":{"type":"boolean","title":"Subscribe"},"colour":{"type":"string","title":"Colour","enum":["r","g","b"],"enumNames":["Red","Green","Blue"]}},"required":["name","age","colour"]}}}
expect {"type":"tool_result","id":"e3","text":"{\"elicitation\": {\"action\": \"accept\", \"content\": {\"age\": 36, \"colour\": \"g\", \"email\": \"ada@example.org\", \"name\": \"Ada\", \"ratio\": 0.5, \"subscribe\": true}}, \"ping\"
send {"type":"tool","id":"e4","name":"mcp__a__ask","arguments":{"message":"Where?","schema":{"type":"object","properties":{"address":{"type":"object","properties":{"street":{"type":"string"}}}}}}}
expect {"type":"tool_result","id":"e4","text":"{\"elicitation\": {\"action\": \"decline\"}, \"ping\"
send {"type":"bash","id":"c1","command":"printf asked"}
send {"type":"tool","id":"e5","name":"mcp__a__ask","arguments":{}}
expect {"type":"tool_result","id":"e5","text":"{\"elicitation\": {\"action\": \"cancel\"}, \"ping\"
expect {"type":"tool_result","id":"c1","text":"[refused:
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
tui_gone 'Pick one' 10
ok $? "esc closes the panel"
tui_wait 'Fill in the form' >/dev/null

# The form: a field for each property, the required ones said.
expected='The MCP server `a` asks
  Fill in the form

› Name (required):
    2 to 10 characters
  Email:
  Age (required):
  Ratio:
  Subscribe: [ ]
  Colour (required): ‹ none chosen ›

  1. Accept
  2. Decline
type to fill in · ↑↓ moves · esc cancels'
is "$(tui_block 'The MCP server `a` asks' 14)" "$expected" \
  "the form: a row for each field, the required ones said, what the selected one takes"
# Accept with the required fields empty: refused on each, nothing sent.
tui_keys Down Down Down Down Down Down Enter
tui_wait '✗ it is required' >/dev/null
is "$(grep -c '✗ it is required' <<<"$SCREEN")" 3 \
  "accepting with three required fields empty says so under each of them"
tui_keys A
tui_wait '✗ it needs at least 2 characters'
ok $? "a name too short is refused, saying why, as it is typed"
tui_keys da Down bad
tui_wait '✗ it is not an email address'
ok $? "an email address that is none is refused, saying why"
tui_keys BSpace BSpace BSpace ada@example.org Down 200 Down Down Space Down Right Right Down Enter
tui_wait '✗ it is more than 150'
ok $? "a number above the maximum is refused at Accept, and nothing is sent"
is "$(tui_block '› Age (required): 200' 1)" "› Age (required): 200" \
  "the refused field is selected"
tui_keys BSpace BSpace BSpace 36 Down 0.5
tui_wait 'Ratio: 0.5' >/dev/null
tui_capture
like "$SCREEN" 'Subscribe: \[x\]' "space toggled the boolean"
like "$SCREEN" 'Colour \(required\): ‹ Green ›' "right picked the enum by its enumNames"
tui_keys Down Down Down Enter
# A nested schema: only Decline.
tui_wait 'it asks for fields this panel cannot fill in; it can only be declined'
ok $? "a nested schema is said to be one the panel cannot fill in"
is "$(tui_block 'it asks for fields this panel cannot fill in' 3 | sed -n 3p)" "› 1. Decline" \
  "and it can only be declined"
tui_keys 1
# A question while a command's approval is open: cancelled, saying so.
tui_wait 'the question of MCP server `a` was cancelled: another question was open'
ok $? "a server's question while another is open is cancelled, saying so"
tui_wait '› 1. Allow once' >/dev/null
tui_keys Escape
tui_gone "✳ running" 10
agent_clean "the server got accept with {}, cancel, the form's typed values, decline, cancel (the agent saw each in its results)"
