#!/bin/bash
# The session's other texts (doc/strings.md, "The full-screen session"):
# hints, slash commands, the full view's title, key row and search, the
# terminal curses does not know, and every theme error.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=20
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace

out=$("$CRUCIBLE" "$WS" "$WS" 2>&1 >/dev/null) && rc=0 || rc=$?
is "$(printf '%s\n' "$out" | head -1)" "crucible: one directory at most, not also '$WS'" \
  "a second directory is refused"
out=$("$CRUCIBLE" --agent 2>&1 >/dev/null) && rc=0 || rc=$?
is "$(printf '%s\n' "$out" | head -1)" "crucible: --agent needs a value" \
  "--agent without a value"

TUI_TERM=no-such-terminal tui_start
tui_exited 10
is "$TUI_RC" 1 "an unknown terminal: exit 1"
tui_wait "crucible: the terminal 'no-such-terminal' is not known"
ok $? "an unknown terminal is named"
tmux -L "$TUI_SOCK" kill-server

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys C-b
tui_wait "  nothing is running"
ok $? "ctrl+b with nothing running says so"
tui_keys C-o
tui_wait "  there is nothing to show in full yet"
ok $? "ctrl+o with nothing to show says so"
tui_keys /help Enter
tui_wait "/sandbox [enable|disable] · /clear · /help · /quit · ctrl+b leaves a"
ok $? "/help lists the commands and keys"
tui_keys '/frobnicate now' Enter
tui_wait "unknown command /frobnicate (try /help)"
ok $? "an unknown slash command is named"
tui_keys '/sandbox sideways' Enter
tui_wait "usage: /sandbox [enable|disable]"
ok $? "/sandbox with another word says how to use it"

# The full view of a cut result: title, key row, search.
tui_keys 'seq 1 60' Enter
tui_wait "+57 lines (ctrl+o to see all)" >/dev/null
tui_keys C-o
tui_wait "lines 1-28 of 60 · esc to close · pgup/pgdn/home/end to move · / to search"
ok $? "the full view's key row"
is "$(tui_row 1)" "the last result" "the full view of a result is titled so"
tui_keys / 4 2 Enter
tui_wait "lines 28-55 of 60"
ok $? "/ searches and moves to the match"
tui_keys / z z z Enter
tui_wait "not found: zzz"
ok $? "a search that finds nothing says so"
tui_keys End
tui_wait "lines 33-60 of 60"
ok $? "End goes to the end"
tui_keys Escape
tmux -L "$TUI_SOCK" kill-server

# Theme files that cannot be used: each error names the file and line.
TD="$TEST_TMP/themes"
mkdir -p "$TD"
good=$(cat "$CRUCIBLE_SRCDIR/themes/dark.theme")
printf '%s\ntext 1 2\n' "$good" >"$TD/short.theme"
printf '%s\nsparkle 1 2 3 -\n' "$good" >"$TD/role.theme"
printf '%s\naccent 1 2 mauve -\n' "$good" >"$TD/colour.theme"
printf '%s\naccent 1 2 3 blink\n' "$good" >"$TD/attrs.theme"
grep -v '^prompt' "$CRUCIBLE_SRCDIR/themes/dark.theme" >"$TD/missing.theme"
lines=$(( $(printf '%s\n' "$good" | wc -l) + 1 ))
theme_error() {
  TUI_ENV="CRUCIBLE_THEME_DIR=$TD" tui_start --theme "$1"
  tui_wait "ask mode on" >/dev/null
  tui_capture
  printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' | grep -F "theme" | head -1
  tmux -L "$TUI_SOCK" kill-server
}
TUI_COLS=160
is "$(theme_error short)" "theme $TD/short.theme: line $lines: expected a role, three colours and attributes" \
  "a theme line that is not five fields"
is "$(theme_error role)" "theme $TD/role.theme: line $lines: unknown role 'sparkle'" \
  "an unknown role"
is "$(theme_error colour)" "theme $TD/colour.theme: line $lines: 'mauve' is not a colour" \
  "a bad colour"
is "$(theme_error attrs)" "theme $TD/attrs.theme: line $lines: 'blink' is not a list of attributes" \
  "bad attributes"
is "$(theme_error missing)" "theme $TD/missing.theme: the role 'prompt' is missing" \
  "a missing role"
is "$(theme_error ../x)" "theme '../x': not a theme name" "a theme name that is a path"
