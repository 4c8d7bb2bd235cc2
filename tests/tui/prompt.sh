#!/bin/bash
# The box: line editing, UTF-8 input, bracketed paste, a prompt typed during
# a turn queued for the next, history kept across sessions, Ctrl+C, Ctrl+Z.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=18
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

box() { tui_capture; printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' | grep '^›' | tail -1; }
# box_is TEXT: wait (bounded) until the box row is exactly TEXT.
box_is() {
  local i
  for i in $(seq 1 200); do
    [ "$(box)" = "$1" ] && return 0
    sleep 0.05
  done
  return 1
}

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null

# Line editing.
tui_keys 'hello big world'
tui_wait "› hello big world" >/dev/null
tui_keys C-w
box_is "› hello big"
is "$(box)" "› hello big" "ctrl+w deletes the word before the cursor"
tui_keys C-a X
box_is "› Xhello big"
is "$(box)" "› Xhello big" "ctrl+a goes to the start"
tui_keys Right Right C-k
box_is "› Xhe"
is "$(box)" "› Xhe" "ctrl+k deletes to the end"
tui_keys C-e Y
box_is "› XheY"
tui_keys C-u
box_is "›"
is "$(box)" "›" "ctrl+e goes to the end, ctrl+u deletes to the start"

# UTF-8 typed into the box and through a command.
tui_keys 'echo "héllo ✓ 漢字"' Enter
tui_wait "⎿  héllo ✓ 漢字"
ok $? "UTF-8 input reaches the command and comes back"

# A bracketed paste goes into the box whole: its newline does not submit.
tmux -L "$TUI_SOCK" set-buffer -b p "$(printf 'echo pasted-1\necho pasted-2')"
tmux -L "$TUI_SOCK" paste-buffer -p -b p
tui_wait "› echo pasted-1 echo pasted-2"
ok $? "a paste with a newline stays in the box"
tui_keys Enter
tui_wait "⎿  pasted-1"
is "$(tui_block "⎿  pasted-1" 2)" "  ⎿  pasted-1
     pasted-2" "the pasted lines run as one call"

# A prompt typed during a turn is queued for the next.
tui_keys 'sleep 1; echo first' Enter
tui_wait "✳ running" >/dev/null
tui_keys 'echo second' Enter
tui_wait "queued for when this turn ends"
ok $? "a prompt typed during a turn is queued"
tui_wait "⎿  second"
ok $? "the queued prompt runs when the turn ends"

# Ctrl+C clears the box; twice on an empty box quits.
tui_keys 'half'
tui_wait "› half" >/dev/null
tui_keys C-c
tui_gone "› half"
ok $? "ctrl+c clears the box"

tui_keys C-c
tui_wait "press ctrl+c again to quit"
ok $? "ctrl+c on an empty box says how to quit"
tui_keys C-c
tui_exited 10
is "$TUI_RC" 0 "a second ctrl+c quits"

# History: kept across sessions in a file only its owner can read.
is "$(stat -c %a "$TEST_TMP/history")" 600 "the history file is private (0600)"
tmux -L "$TUI_SOCK" kill-server
tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys Up
tui_wait "› echo second" >/dev/null
is "$(box)" "› echo second" "up recalls the last line of the previous session"
tui_keys Up Up Down
tui_wait "› sleep 1; echo first"
is "$(box)" "› sleep 1; echo first" "up and down walk the history"

# Ctrl+Z: from a shell with job control, crucible stops and gives the
# terminal back; fg brings it back drawn again.  (A process group with no
# shell to resume it is orphaned, and the kernel does not stop it.)
tmux -L "$TUI_SOCK" kill-server
tui_new_sock
tmux -L "$TUI_SOCK" -f /dev/null new-session -d -x "$TUI_COLS" -y "$TUI_ROWS" \
  -c "$WS" "env -i PATH=/usr/bin:/bin LANG=C.UTF-8 TERM=screen-256color HOME=$HOME PS1='shell\$ ' bash --norc --noprofile -i"
tui_wait 'shell$'
ok $? "a shell with job control starts"
tui_keys "CRUCIBLE_HISTORY=$TEST_TMP/history $CRUCIBLE" Enter
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys 'kept'
tui_wait "› kept" >/dev/null
tui_keys C-z
tui_wait "Stopped"
ok $? "ctrl+z stops crucible and the shell has the terminal"
tui_keys fg Enter
tui_wait "› kept"
ok $? "fg draws the session again, the box as it was"
