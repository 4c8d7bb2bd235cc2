#!/bin/bash
# The transcript scrolls back with PgUp/PgDn and the mouse wheel, and what
# arrives does not pull a person reading back down until they come back.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=5
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_ROWS=12

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
for i in 1 2 3 4; do
  tui_keys "echo first-$i" Enter
  tui_wait "⎿  first-$i" >/dev/null
done
tui_gone "› echo first-1"
ok $? "the oldest lines have scrolled out of a 12-row window"

tui_keys PPage
tui_wait "› echo first-1"
ok $? "PgUp scrolls the transcript back"
tui_keys NPage
tui_wait "⎿  first-4"
tui_gone "› echo first-1"
ok $? "PgDn scrolls forward again"

# The wheel, as the terminal reports it (SGR mouse: button 64 up, 65 down).
tui_keys -l $'\e[<64;5;5M\e[<64;5;5M\e[<64;5;5M'
tui_wait "› echo first-1"
ok $? "the mouse wheel scrolls back"
tui_keys -l $'\e[<65;5;5M\e[<65;5;5M\e[<65;5;5M'
tui_gone "› echo first-1"
ok $? "and forward"
