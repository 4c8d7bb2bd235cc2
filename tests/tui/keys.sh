#!/bin/bash
# The keys: Ctrl+B leaving a call running and the status row counting it,
# the "Still running" list with Enter and x, Ctrl+O live and Esc, an ending
# line between turns with half-typed text kept, Esc interrupting a turn,
# /clear leaving commands running, shift+tab, quitting saying how many.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=25
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null

# Ctrl+B while a call runs: the call is answered, the command goes on.
tui_keys 'printf "a\nb\n"; sleep 300' Enter
tui_wait "2 lines · 4 B · ctrl+b to leave it running"
ok $? "the count row names ctrl+b while the call runs"
tui_keys C-b
tui_wait "[left running as #1; the developer pressed ctrl+b"
ok $? "ctrl+b answers the call, saying the developer pressed it"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle) · 1 command" \
  "the status row counts the command left running"

# Ctrl+B at the prompt: the list where the box was.
tui_keys C-b
tui_wait "Still running"
ok $? "ctrl+b at the prompt opens the list"
like "$(tui_block "Still running" 3 | sed -n 3p)" \
  "^› 1\. Bash\(printf \"a\\\\nb\\\\n\"; sleep 300\) +[0-9]+s · 2 lines · 4 B$" \
  "a row: number, label, how long, how many lines, how much"
is "$(tui_row $((TUI_ROWS - 1)))" "esc to close · enter shows it · x stops it" \
  "the list's keys"

# Enter shows what it printed in the full view; Esc comes back to the list.
tui_keys Enter
tui_wait "lines 1-2 of 2"
ok $? "enter shows it in the full view"
is "$(tui_row 2)" "a" "the full view shows what it printed"
is "$(tui_row 1)" 'Bash(printf "a\nb\n"; sleep 300)' "the full view's title is the call"
tui_keys Escape
tui_wait "Still running"
ok $? "esc closes the full view and the list is back"

# x stops it: the row goes, and the list closes with its last row.
tui_keys x
tui_gone "Still running"
ok $? "x stops it and the list closes with its last row"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle)" \
  "the status row no longer counts it"

# Ctrl+O while a command runs: the whole of it, live; Esc while it goes on.
tui_keys 'seq 1 40; sleep 300' Enter
tui_wait "40 lines · 111 B"
tui_keys C-o
tui_wait "lines 1-28 of 40"
ok $? "ctrl+o shows the whole of the running command"
tui_keys Escape
tui_wait "40 lines · 111 B · ctrl+b to leave it running"
ok $? "esc closes the full view while the command carries on"

# The full view is live: what arrives while it is open is added.
tui_keys Escape
tui_gone "✳ running"
tui_keys 'seq 1 3; sleep 1; seq 4 6; sleep 300' Enter
tui_wait "3 lines · 6 B"
tui_keys C-o
tui_wait "lines 1-3 of 3"
tui_wait "lines 1-6 of 6"
ok $? "the full view grows while it is open"
tui_keys Escape
tui_wait "6 lines · 12 B · ctrl+b to leave it running"

# Esc interrupts the turn: its own command is stopped.
tui_keys Escape
tui_gone "✳ running"
ok $? "esc interrupts the turn"
tui_capture
is "$(printf '%s\n' "$SCREEN" | grep -c '^interrupted$')" 2 \
  "the transcript says each turn was interrupted"

# An ending between turns: said at once, the half-typed text kept.
tui_keys 'sh -c "sleep 1; exit 3" &' Enter
tui_wait "[left running as #"
tui_keys 'half typed'
tui_wait '✗ Bash(sh -c "sleep 1; exit 3") ended on its own · exit status 3 · 0 lines'
ok $? "the ending line arrives between turns"
is "$(tui_block "✗ Bash" 3 | sed -n 3p)" "› half typed" \
  "what was half-typed in the box is still there"
tui_keys C-u

# /clear clears the transcript and leaves commands running.
tui_keys 'sleep 300 &' Enter
tui_wait "1 command"
tui_keys '/clear' Enter
tui_gone "[left running"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle) · 1 command" \
  "/clear leaves the command running"

# A control sequence with an intermediate byte before a cursor key's final
# (ESC [ , D) crashed libtermkey 0.22; a terminal or a paste can send
# one.  The session goes on, no key is made up from it, and what follows
# is typed as it was.
tmux -L "$TUI_SOCK" send-keys -H 1b 5b 2c 44 1b 5b 31 3b 20 41
tui_keys 'after'
tui_wait "› after"
ok $? "a control sequence with an intermediate byte is dropped, and typing goes on"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle) · 1 command" \
  "no key was made up from it"
tui_keys C-u

# shift+tab cycles the mode.
tui_keys BTab
tui_wait "fullAccess mode on (shift+tab to cycle)"
ok $? "shift+tab cycles to fullAccess"
tui_keys BTab

# Quitting ends every process group, saying how many.
tui_keys C-d
tui_exited 15
is "$TUI_RC" 0 "ctrl+d on an empty box quits"
tui_wait "crucible: stopped 1 command that was still running"
ok $? "quitting says how many commands it stopped"
