#!/bin/bash
# Keys in the orders a person presses them: the full view of a command that
# ends while it is open from the list, the full view of a command that has
# printed nothing, and a full view opened on more output than one frame
# parses after the command has gone quiet; every line of a long output
# while it runs, the middle the capture does not keep too (its spool); a
# window of one or two columns while wide characters arrive.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=17
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null

# The list, Enter on its only row, and the command ends under the full
# view: Esc comes back to the box, not to an empty list.
tui_keys 'echo hi; sleep 2' Enter
tui_wait "1 line · 3 B · ctrl+b to leave it running" >/dev/null
tui_keys C-b
tui_wait "1 command" >/dev/null
tui_keys C-b
tui_wait "Still running" >/dev/null
tui_keys Enter
tui_wait "lines 1-1 of 1"
ok $? "enter in the list shows the command in the full view"
# The row goes when the command has ended; the full view stays open on
# what it printed.
sleep 3
tui_keys Escape
tui_wait "ask mode on (shift+tab to cycle)"
ok $? "esc closes the full view"
is "$(printf '%s\n' "$SCREEN" | grep -c -e "Still running" -e "x stops it")" 0 \
  "a list whose last row went under the full view is closed by then"
is "$(tui_block "ended on its own" 5 | tail -4)" \
  "$(printf '─%.0s' $(seq 1 "$TUI_COLS"))
›
$(printf '─%.0s' $(seq 1 "$TUI_COLS"))
  ask mode on (shift+tab to cycle)" \
  "esc comes back to the box and the status row"

# A command that has printed nothing: the full view says so rather than
# counting lines 0-0 of 0.
tui_keys 'sleep 300' Enter
tui_wait "ctrl+b to leave it running" >/dev/null
tui_keys C-o
tui_wait "nothing has been printed yet · esc to close"
ok $? "the full view of a command that printed nothing says so"
is "$(tui_row "$TUI_ROWS")" \
  "nothing has been printed yet · esc to close · pgup/pgdn/home/end to move · / to search" \
  "its key row"
tui_keys Escape
tui_wait "✳ running" >/dev/null
tui_keys Escape
tui_gone "✳ running" >/dev/null

# 3 MB printed at once, then quiet: the full view opened after
# reads what the capture holds to its end a frame's share at a time, with
# no more output arriving to ask for frames.
tui_keys 'yes | head -n 1500000; sleep 300' Enter
tui_wait "1500000 lines · 3.0 MB" 20 >/dev/null
tui_keys C-o
tui_wait "lines 1-$((TUI_ROWS - 2)) of " 5 >/dev/null
# A frame parses for a bounded time, not a bounded number of bytes: a key
# is answered within a second while the rest is still being read (a
# megabyte of short lines is seconds of libvterm).
tui_keys Down
tui_wait "lines 2-$((TUI_ROWS - 1)) of " 1
ok $? "a key moves the full view while it is still reading the output"
tui_wait "lines 2-$((TUI_ROWS - 1)) of 1500000 ·" 120
ok $? "the full view reaches the end of output larger than one frame's share"
tui_keys End
tui_wait "lines $((1500000 - TUI_ROWS + 3))-1500000 of 1500000"
ok $? "end goes to its last line"
tui_keys Escape
tui_wait "✳ running" >/dev/null
tui_keys Escape
tui_gone "✳ running" >/dev/null

# The full view has every line that arrived, not only the head and tail
# the capture keeps for the result: 4000 lines of 50 bytes (200 kB, far
# more than the capture's 30 kB) are all there, in order, with no row
# for a middle not kept and nothing said to be incomplete.
tui_keys "seq -f '%049g' 1 4000; sleep 300" Enter
tui_wait "4000 lines · 200 kB" 20 >/dev/null
# What the capture does not keep is in a spool: an unlinked regular file
# in TMPDIR, the only deleted one among the session's descriptors (a
# memfd aside).  Without it the view could only be the head and tail.
spools=$(for fd in "/proc/$(tui_crucible_pid)/fd/"*; do
  link=$(readlink "$fd") || continue
  [ -f "$fd" ] && [[ $link == *" (deleted)" && $link != /memfd:* ]] && printf '%s\n' "$link"
done)
is "$(printf '%s' "$spools" | grep -c .)" 1 "the session spools the running command's output"
tui_keys C-o
tui_wait "lines 1-$((TUI_ROWS - 2)) of 4000 · esc to close"
ok $? "the full view of a running command's long output counts every line and is not incomplete"
tui_keys / 0002000 Enter
tui_wait "lines $((2000 - (TUI_ROWS - 2) / 2))-" >/dev/null
is "$(tui_block "$(printf '%049d' 1999)" 3)" "$(printf '%049d\n' 1999 2000 2001)" \
  "a line from the middle the capture does not keep is in the full view, between its neighbours"
# Page through it all: every line 1..4000 is on some page, once.
tui_keys Home
body=$((TUI_ROWS - 2)) seen=$TEST_TMP/seen
: >"$seen"
for ((first = 1; first <= 4000; first += body)); do
  last=$((first + body - 1 < 4000 ? first + body - 1 : 4000))
  if [ "$last" = 4000 ]; then first=$((4000 - body + 1)); fi
  tui_wait "lines $first-$last of 4000" 5 >/dev/null || break
  printf '%s\n' "$SCREEN" | grep -E '^[0-9]{49} *$' >>"$seen"
  [ "$last" = 4000 ] && break
  tui_keys NPage
done
is "$(sed 's/ *$//' "$seen" | sort -u | awk '{ print $1 + 0 }' | sort -n | tr '\n' ' ')" \
  "$(seq 1 4000 | tr '\n' ' ')" "every line 1..4000 is reachable in the full view"
tui_keys Escape
tui_wait "✳ running" >/dev/null
tui_keys Escape
tui_gone "✳ running" >/dev/null

# The selection follows its command: a row above it going (a command
# ending on its own) does not slide another command under it for x.  The
# first command ends when the file "go" appears, once the selection is on
# the third row (a fixed sleep could end before the keys arrive).
tui_keys 'until [ -e go ]; do sleep 0.1; done &' Enter
tui_wait "1 command" >/dev/null
tui_keys 'sleep 300 &' Enter
tui_wait "2 commands" >/dev/null
tui_keys 'sleep 301 &' Enter
tui_wait "3 commands" >/dev/null
tui_keys 'sleep 302 &' Enter
tui_wait "4 commands" >/dev/null
tui_keys C-b
tui_wait "Still running" >/dev/null
tui_keys Down Down
tui_wait_match $'\n''› [0-9]+\. Bash\(sleep 301\) ' >/dev/null
touch "$WS/go"
tui_wait "ended on its own" 10 >/dev/null
tui_gone ". Bash(until [ -e go ]" 5
like "$(tui_block "Still running" 4 | sed -n 4p)" "^› [0-9]+\. Bash\(sleep 301\) " \
  "a row going above the selection leaves it on its command"
tui_keys x
tui_gone ". Bash(sleep 301)      " 10
is "$(tui_block "Still running" 4 | sed -n '3,4p' | sed -E 's/^(.) [0-9]+\. (Bash\([a-z0-9 ]*\)).*/\1 \2/')" \
  "  Bash(sleep 300)
› Bash(sleep 302)" \
  "x stopped the selected command, not the one that slid under it"
tui_keys Escape
tui_gone "Still running" >/dev/null

# Wide characters arriving while the window is two columns wide: the
# session draws what fits and is whole again when the window is.
tui_keys 'while :; do printf "红色 wide\n"; sleep 0.02; done' Enter
tui_wait "红色 wide" >/dev/null
tmux -L "$TUI_SOCK" resize-window -x 2 -y 10
sleep 1
tmux -L "$TUI_SOCK" resize-window -x 1 -y 1
sleep 1
tmux -L "$TUI_SOCK" resize-window -x "$TUI_COLS" -y "$TUI_ROWS"
tui_wait "    红色 wide"$'\n'"    红色 wide"
ok $? "a window two columns wide during wide output: the sample is back after"
[ ! -s "$TEST_TMP/tui-exit" ]
ok $? "the session is still running ($(cat "$TEST_TMP/tui-exit" 2>/dev/null))"
tui_keys Escape
tui_gone "✳ running" >/dev/null

tui_keys C-d
tui_exited 15 >/dev/null
