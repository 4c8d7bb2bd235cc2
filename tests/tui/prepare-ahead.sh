#!/bin/bash
# While the approval panel asks about an agent's confined call, its
# sandbox is prepared ahead (bwrap started, the broker waiting): allowed,
# the call runs in it with its baseline taken after the allowing key (a
# file written in the workspace while the panel was up is seen, and the
# command's change to it publishes); denied, what was prepared is
# disposed of and nothing is left.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=12
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for _ in $(seq $N); do skip "a sandbox prepared while the panel asks" "$why" bwrap; done
  exit 0
fi
TUI_COLS=160
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
journal() { cat "$HOME"/.local/state/crucible/*.jsonl 2>/dev/null; }
# prepared_id: the sandbox ID of the newest sandbox prepared for a call on
# the panel, other than $1; empty after 10 s.
prepared_id() { ahead_sandbox "$HOME/.local/state/crucible" approval "${1:-}"; }
# waiting PID: the pid of PID's bwrap child whose broker awaits GO.
waiting() {
  local p c
  for p in $(pgrep -P "$1"); do
    c=$(pgrep -P "$p" | head -1)
    [ -n "$c" ] && tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null | grep -q -- ' --await ' &&
      { printf '%s' "$p"; return; }
  done
}

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"bash","id":"c1","command":"cat late; echo inside >>late"}
expect "type":"tool_result","id":"c1","text":"outside","is_error":false
send {"type":"bash","id":"c2","command":"touch denied"}
expect "type":"tool_result","id":"c2","text":"[refused:
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
pid=$(tui_crucible_pid)
tui_keys go Enter
tui_wait "Bash(cat late; echo inside >>late)"
ok $? "the agent's confined call is asked about"
first=$(prepared_id)
ok "$([ -n "$first" ] && echo 0 || echo 1)" "while the panel asks, a sandbox is prepared for the call"
bwrap_pid=$(waiting "$pid")
ok "$([ -n "$bwrap_pid" ] && echo 0 || echo 1)" "its bwrap runs, the broker waiting for the allowing key"

# Written while the panel is up, after the sandbox was prepared.
printf 'outside\n' >late
tui_keys Enter
tui_wait "Bash(touch denied)"
ok $? "allowed, the call runs and the next one is asked about"
is "$(cat late)" $'outside\ninside' \
  "the command saw the file written while the panel was up, and its change to it is published"
started=$(journal | grep '"fact":"start"' | sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | head -1)
is "$started" "$first" "it ran in the sandbox prepared for it (same sandbox ID)"
ok "$(journal | grep '"fact":"publication"' | grep -q "\"sandbox\":\"$first\",\"outcome\":\"published\"" && echo 0 || echo 1)" \
  "its publication is journaled under that sandbox ID as published"

second=$(prepared_id "$first")
ok "$([ -n "$second" ] && echo 0 || echo 1)" "the next call gets a sandbox of its own prepared"
bwrap_pid=$(waiting "$pid")
tui_keys Escape
tui_wait "[refused:"
ok $? "esc denies it"
ok "$(journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$second\",\"unused\":\"refused\"" && echo 0 || echo 1)" \
  "what was prepared for the refused call is disposed of, by its sandbox ID"
ok "$([ -n "$bwrap_pid" ] && wait_gone "$bwrap_pid" 5 && [ ! -e denied ] &&
  ! ls -d "$STATE"/cmd-"$pid"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "nothing ran, and no process or layer pair of it is left"
tui_keys /quit Enter
tui_exited
is "$TUI_RC" 0 "the session ends normally"
