#!/bin/bash
# The approval panel in an 80-column window with a long workspace path:
# rows wider than the window wrap under their own text rather than being
# cut at the edge, so the rule a choice adds and where it applies are read
# whole.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=3
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
WS="$WS/a-workspace-with-a-name-long-enough-to-need-a-second-row-in-eighty-columns"
mkdir -p "$WS"
cd "$WS" || exit 1
TUI_COLS=80

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"bash","id":"c1","command":"echo started && sleep 300 && printf done","description":"starting the dev server","background":true}
expect "type":"tool_result","id":"c1","text":"[refused:
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
TUI_ENV="SCRIPTED_AGENT_LOG=$(printf '%q' "$LOG")"
tui_start --agent "$AGENT $SCRIPT"
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys go Enter
tui_wait "enter chooses · esc denies"
ok $? "an agent's call is asked about"
in_rows=$(printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' |
  sed -n '/^  in: /,/^  confinement: /p' | sed '$d' | sed 's/^    //' | tr -d '\n')
is "$in_rows" "  in: $WS" "the workspace wraps under itself, whole"
expected="  2. Allow, and from now on allow Bash(echo started *), Bash(sleep *),
     Bash(printf done *) in this workspace
  3. Deny"
is "$(tui_block "  2. Allow, and from now on" 3)" "$expected" \
  "the choice that adds rules wraps under its text"
tui_keys Escape
tui_gone "enter chooses" >/dev/null
tui_keys C-d
tui_exited 15 >/dev/null
