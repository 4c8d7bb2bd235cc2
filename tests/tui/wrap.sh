#!/bin/bash
# The transcript wraps a row at a space where that leaves the row at least
# half full, so a note is not cut mid-word; a word longer than that is cut
# where the row ends.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=2
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

TUI_COLS=60 TUI_ROWS=20
tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys 'sleep 300 &' Enter
tui_wait "1 command" >/dev/null
is "$(tui_block "● Bash(sleep 300)" 4)" "● Bash(sleep 300)
  ⎿  [left running as #1; ask bash_output what it has
     printed so far, and its output is handed over when it
     ends; do not poll or wait for it]" "a note wraps at spaces"

long=$(printf 'a%.0s' $(seq 1 80))
tui_keys "echo $long; echo a b" Enter
tui_wait "     a b" >/dev/null
is "$(tui_block "  ⎿  aaaa" 3)" "  ⎿  $(printf 'a%.0s' $(seq 1 55))
     $(printf 'a%.0s' $(seq 1 25))
     a b" "a word longer than the row is cut where the row ends"
tui_keys C-d
tui_exited 15 >/dev/null
