#!/bin/bash
# The approval panel for an agent's call (through the scripted agent): what
# will run, where, confinement, and for a background call that it will
# still be running after the turn ends; allow once and deny.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=14
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_COLS=200

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"bash","id":"c1","command":"echo started && sleep 300","description":"starting the dev server","background":true}
expect "type":"tool_result","id":"c1","text":"started\n\n[left running as #1;
send {"type":"bash","id":"c2","command":"rm -rf build"}
expect {"type":"tool_result","id":"c2","text":"[refused:
send {"type":"bash","id":"c3","command":"printf made"}
expect {"type":"tool_result","id":"c3","text":"made","is_error":false}
send {"type":"bash","id":"c4","command":"printf made again"}
expect {"type":"tool_result","id":"c4","text":"made","is_error":false}
send {"type":"bash","id":"c5","command":"echo \"unclosed"}
expect {"type":"tool_result","id":"c5","text":"[refused:
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys go Enter
tui_wait "The agent wants to run a command"
ok $? "an agent's call is asked about"
expected="The agent wants to run a command
  starting the dev server
  Bash(echo started && sleep 300)
  runs: echo, sleep
  in: $WS
  confinement: off (it runs with your own access)
  it will still be running after the turn ends

› 1. Allow once
  2. Allow, and from now on allow Bash(echo started *), Bash(sleep *) in this workspace
  3. Deny
enter chooses · esc denies"
is "$(tui_block "The agent wants to run a command" 12)" "$expected" \
  "the panel: what runs, where, confinement, and that it outlives the turn"
tui_keys Enter
tui_wait "1 command"
ok $? "allowed once, the background command is left running and counted"

# The second call: denied with Esc.
tui_wait "  Bash(rm -rf build)"
ok $? "the next call is asked about"
tui_gone "it will still be running after the turn ends" 2
ok $? "a call in the foreground does not say it outlives the turn"
tui_keys Escape
tui_wait "[refused:"
ok $? "esc denies, and the refusal is the call's answer"

# Allow, and add the rule: written to the home configuration keyed by
# this workspace, and the next call it covers is not asked about.
tui_wait "  Bash(printf made)"
is "$(tui_block "  Bash(printf made)" 7 | sed -n 7p)" \
  "  2. Allow, and from now on allow Bash(printf made *) in this workspace" \
  "the rule the choice would add is shown"
tui_keys 2
tui_wait "Bash(printf made *) is allowed in this workspace from now on ($HOME/.crucible/config.json)"
ok $? "choosing it says which rule was added, and where"
like "$(tr -d ' \n' <"$HOME/.crucible/config.json")" \
  "^\{\"workspaces\":\{\"$WS\":\{\"allow\":\[\"Bash\(printfmade\*\)\"\]\}\}\}$" \
  "the home configuration holds the rule under this workspace"

# A line the reader cannot read: said so, and no rule is offered.
tui_wait "the line could not be read far enough to say which programs it runs"
ok $? "an unreadable line says its programs cannot be named"
is "$(tui_block "› 1. Allow once" 2 | sed -n 2p)" "  2. Deny" \
  "no rule is offered for a line that cannot be read"
tui_keys Escape
tui_gone "✳ running" 10
agent_clean "the agent got the answers it expected (the covered call was not asked about)"

# The rule holds in the next session, in this workspace only (crucible
# session without a terminal cannot ask: a call not covered is refused).
tmux -L "$TUI_SOCK" kill-server
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"c1","command":"printf made later"}
expect "type":"tool_result"
send {"type":"end_turn"}
EOF2
one() { echo go; }
session one
like "$(agent_log)" '"id":"c1","text":"made"' \
  "the rule holds in the next session in this workspace"
other=$(mktemp -d "$TEST_TMP/other.XXXXXX")
cd "$other"
session one
like "$(agent_log)" '"id":"c1","text":"\[refused: the developer could not be asked' \
  "another workspace is not covered by it"
