#!/bin/bash
# A stop from the list that cannot finish: the row stays selected and says
# Stop failed, and x retries.  The command's keeper is stopped (SIGSTOP) so
# that its scope cannot be confirmed empty: a real failure, not a knob.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=6
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys 'sleep 300' Enter
tui_wait "ctrl+b to leave it running" >/dev/null
tui_keys C-b
tui_wait "1 command" >/dev/null
pid=$(tui_crucible_pid)
keeper=$(newest_child "$pid")
if [ -z "$keeper" ]; then
  for i in $(seq 1 $N); do skip "stop failed $i" "the command's keeper was not found"; done
  exit 0
fi
kill -STOP "$keeper"
tui_keys C-b
tui_wait "Still running" >/dev/null
tui_keys x
tui_wait "Stop failed" 12
ok $? "a stop that cannot finish says Stop failed"
like "$(tui_block "Still running" 3 | sed -n 3p)" "^› 1\. Bash\(sleep 300\) " \
  "the row stays, selected"
is "$(tui_block "Still running" 4 | sed -n 4p)" "  Stop failed" \
  "Stop failed is said under the selected row"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle) · 1 command" \
  "the command still holds its slot and is counted"
kill -CONT "$keeper"
tui_keys x
tui_gone "Still running" 10
ok $? "x retries, and the list closes with its last row"
is "$(tui_row "$TUI_ROWS")" "  ask mode on (shift+tab to cycle)" \
  "the command is gone from the count"
