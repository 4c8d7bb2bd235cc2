#!/bin/bash
# The running call: its five-line sample, the count row and the running
# row; a progress bar staying one row; the result cut down afterwards; a
# 10-row window; a resize.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=18
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

tui_start
tui_wait "ask mode on (shift+tab to cycle)"
ok $? "the session opens with the status row"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle)" \
  "the status row is the last row"

# A 100-line command that then waits: the last five lines, the count.
tui_keys 'seq 1 100; sleep 4' Enter
tui_wait "100 lines · 292 B"
ok $? "the count row counts every line and byte"
expected="● Bash(seq 1 100; sleep 4)
    96
    97
    98
    99
    100
    100 lines · 292 B · ctrl+b to leave it running"
block=$(tui_block "● Bash(seq 1 100; sleep 4)" 9)
is "$(printf '%s\n' "$block" | head -8)" "$expected" \
  "the call line, the last five lines, the count row and a blank row"
like "$(printf '%s\n' "$block" | sed -n 9p)" \
  "^✳ running \([0-9]+s · ↓ 292 · esc to interrupt\)$" \
  "the running row: how long, how much, esc"

# When it ends the sample is taken back and the result is cut to a few rows.
tui_wait "… +97 lines (ctrl+o to see all)" 10
ok $? "the finished result is cut down with a hint"
expected="● Bash(seq 1 100; sleep 4)
  ⎿  1
     2
     3
     … +97 lines (ctrl+o to see all)"
is "$(tui_block "● Bash(seq 1 100; sleep 4)" 5)" "$expected" \
  "the transcript keeps the result, not the sample"

# A progress bar writing over one line stays one row.
tui_keys 'for i in 1 2 3 4 5; do printf "\rprogress $i"; sleep 0.1; done; sleep 3' Enter
tui_wait "progress 5"
ok $? "the progress bar arrives"
expected="    progress 5
    1 line · 55 B · ctrl+b to leave it running"
is "$(tui_block "    progress 5" 2)" "$expected" "a progress bar stays one row"
tui_wait "1 line (ctrl+o to see all)" 10 >/dev/null || tui_gone "✳ running" 10

# Ctrl+O on a finished result that was cut shows all of it; Esc closes it.
tui_keys C-o
tui_wait "lines 1-28 of 100"
ok $? "ctrl+o shows the whole of the last cut result"
tui_keys Escape
tui_wait "ask mode on (shift+tab to cycle)"
ok $? "esc closes the full view"

# A resize: the box follows the new width.
tmux -L "$TUI_SOCK" resize-window -x 60 -y 20
tui_wait "$(printf '─%.0s' $(seq 1 60))"$'\n'"›"
ok $? "after a resize the box is as wide as the window"

# A 10-row window: the sample gives up rows first; the call line, the count
# row, the running row and the box keep theirs.
tmux -L "$TUI_SOCK" resize-window -x 60 -y 10
tui_keys 'seq 1 100; sleep 4' Enter
tui_wait "100 lines · 292 B"
expected="● Bash(seq 1 100; sleep 4)
    98
    99
    100
    100 lines · 292 B · ctrl+b to leave it running"
is "$(tui_block "● Bash(seq 1 100; sleep 4)" 6 | head -5)" "$expected" \
  "in 10 rows the sample has three rows left"
like "$(tui_block "● Bash(seq 1 100; sleep 4)" 6 | sed -n 6p)" "^✳ running " \
  "in 10 rows the running row keeps its place"
is "$(tui_row 10)" "  ask mode on (shift+tab to cycle)" \
  "in 10 rows the status row keeps its place"

# Shorter still: the count row goes before the call line and the running
# row do, and under four rows the box is the prompt alone.
tui_gone "✳ running" 10 >/dev/null
tui_keys 'seq 1 100; sleep 300' Enter
tui_wait "100 lines · 292 B" >/dev/null
tmux -L "$TUI_SOCK" resize-window -x 60 -y 7
tui_wait "     100 lines · 292 B · ctrl+b to leave it running"$'\n'"✳ running" >/dev/null
tmux -L "$TUI_SOCK" resize-window -x 60 -y 6
tui_wait "● Bash(seq 1 100; sleep 300)"$'\n'"✳ running"
ok $? "in 6 rows the call line and the running row keep theirs, the count row gone"
tui_keys 'abc'
tmux -L "$TUI_SOCK" resize-window -x 60 -y 3
tui_wait "› abc"$'\n'"  ask mode on"
like "$(tui_row 1)" "^✳ running \(" "in 3 rows the running row stays"
is "$(tui_row 2)" "› abc" "in 3 rows the box is the prompt alone, what is typed still seen"
tui_keys C-u Escape
tui_gone "✳ running" >/dev/null
