#!/bin/bash
# The "Still running" list drawn as the spec draws it: a rule, the title,
# a row each with the counts in one column, the keys; the counts stay in
# that column in a wide window, and in a narrow one the labels give up
# columns first.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=8
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

# npm and cargo stand-ins printing what the spec's rows count, then
# running on: 84 lines of 76 bytes (6.4 kB), 512 lines of 94 (48 kB).
mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/npm" <<'SH'
#!/bin/sh
for i in $(seq 1 84); do printf '%075d\n' "$i"; done
exec sleep 300
SH
cat >"$TEST_TMP/bin/cargo" <<'SH'
#!/bin/sh
for i in $(seq 1 512); do printf '%093d\n' "$i"; done
exec sleep 300
SH
chmod +x "$TEST_TMP/bin/npm" "$TEST_TMP/bin/cargo"

TUI_COLS=78 TUI_ENV="PATH=$(printf '%q' "$TEST_TMP/bin:$PATH")"
tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys 'npm run dev &' Enter
tui_wait "1 command" >/dev/null
tui_keys 'cargo watch -x test &' Enter
tui_wait "2 commands" >/dev/null
tui_keys C-b
tui_wait "Still running"
ok $? "ctrl+b at the prompt lists the two commands"

# How long each has run is the one thing that differs from the spec's
# picture; it is taken out before comparing.
list=$(tui_block "$(printf '─%.0s' $(seq 1 78))" 8 |
  sed -E 's/  [0-9]+(m [0-9]{2})?s · /  TIME · /')
rule=$(printf '─%.0s' $(seq 1 78))
is "$list" "$rule

Still running

› 1. Bash(npm run dev)                       TIME · 84 lines · 6.4 kB
  2. Bash(cargo watch -x test)               TIME · 512 lines · 48 kB

esc to close · enter shows it · x stops it" "the list as the spec draws it"
like "$(tui_block "Still running" 3 | sed -n 3p)" \
  "^› 1\. Bash\(npm run dev\) {23}[0-9]+s · 84 lines · 6\.4 kB$" \
  "the counts begin in the spec's column"

# A wide window: the counts stay in their column.
tmux -L "$TUI_SOCK" resize-window -x 200 -y 30
tui_wait "$(printf '─%.0s' $(seq 1 200))"
like "$(tui_block "Still running" 4 | sed -n 4p)" \
  "^  2\. Bash\(cargo watch -x test\) {15}[0-9]+s · 512 lines · 48 kB$" \
  "in 200 columns the counts stay in their column"

# A narrow window: the labels give up columns, the counts stay whole.
tmux -L "$TUI_SOCK" resize-window -x 40 -y 30
# The window's old rows are reflowed at once; the list is drawn again
# when crucible has the new size.
for _ in $(seq 1 100); do
  tui_capture
  [[ "$SCREEN" == *"› 1. Bash(npm r"*"…"*"84 lines"* ]] && break
  sleep 0.05
done
row1=$(tui_block "Still running" 4 | sed -n 3p)
row2=$(tui_block "Still running" 4 | sed -n 4p)
like "$row1" "^› 1\. Bash\(npm r[a-z ]*… +[0-9]+s · 84 lines · 6\.4 kB$" \
  "in 40 columns the label is cut and the counts kept"
is "$(printf '%s' "${row1%%…*}" | LC_ALL=C.UTF-8 wc -m)" \
  "$(printf '%s' "${row2%%…*}" | LC_ALL=C.UTF-8 wc -m)" \
  "in 40 columns both labels are cut at the same column"
like "$row2" "^  2\. Bash\(cargo[a-z ]*… +[0-9]+s · 512 lines · 48 kB$" \
  "in 40 columns each label is cut"

tui_keys Escape
tui_gone "Still running" >/dev/null

# Four commands in a 10-row window: the list gives up a blank row rather
# than its rule or title.
tmux -L "$TUI_SOCK" resize-window -x 78 -y 10
tui_keys 'sleep 301 &' Enter
tui_wait "3 commands" >/dev/null
tui_keys 'sleep 302 &' Enter
tui_wait "4 commands" >/dev/null
tui_keys C-b
tui_wait "  4. Bash(sleep 302)"
list=$(printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' |
  sed -E 's/  [0-9]+(m [0-9]{2})?s · /  TIME · /')
is "$list" "$rule

Still running

› 1. Bash(npm run dev)                       TIME · 84 lines · 6.4 kB
  2. Bash(cargo watch -x test)               TIME · 512 lines · 48 kB
  3. Bash(sleep 301)                         TIME · 0 lines · 0 B
  4. Bash(sleep 302)                         TIME · 0 lines · 0 B
esc to close · enter shows it · x stops it
  ask mode on (shift+tab to cycle) · 4 commands" \
  "in 10 rows the list of four gives up a blank row and keeps the rest"
tui_keys Escape
tui_gone "Still running" >/dev/null
tui_keys C-d
tui_exited 15 >/dev/null
