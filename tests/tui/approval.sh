#!/bin/bash
# The approval panel for an agent's call (through the scripted agent): what
# will run, where, confinement, and for a background call that it will
# still be running after the turn ends; allow once and deny.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=7
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"bash","id":"c1","command":"echo started && sleep 300","description":"starting the dev server","background":true}
expect "type":"tool_result","id":"c1","text":"started\n\n[left running as #1;
send {"type":"bash","id":"c2","command":"rm -rf build"}
expect {"type":"tool_result","id":"c2","text":"[refused:
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
  2. Deny
enter chooses · esc denies"
is "$(tui_block "The agent wants to run a command" 11)" "$expected" \
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
tui_gone "✳ running" 10
agent_clean "the agent got the answers it expected"
