#!/bin/bash
# Themes: dark (the default), light and high-contrast chosen by the theme
# key; a readable mapping on 256, 16 and 8 colours; NO_COLOR honoured; a
# theme that cannot be read falls back to the default, saying why.  The
# status row's count is in the accent, fullAccess in the warning colour.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=9
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_ROWS=12 TUI_COLS=80

# status_row: start crucible (TUI_TERM, TUI_ENV, the home config as set),
# leave one command running, and put the status row with its colours in
# $ROW; then quit.
status_row() {
  tui_start "$@"
  tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
  tui_keys 'sleep 300 &' Enter
  tui_wait "1 command" >/dev/null
  ROW=$(tmux -L "$TUI_SOCK" capture-pane -e -p | grep -F "1 command" | tail -1)
  tui_keys BTab
  tui_wait "fullAccess mode on" >/dev/null
  FULL=$(tmux -L "$TUI_SOCK" capture-pane -e -p | grep -F "fullAccess mode on" | tail -1)
  tui_keys C-d
  tui_exited 10
  tmux -L "$TUI_SOCK" kill-server 2>/dev/null
}

ESC=$'\e'
status_row
like "$ROW" "${ESC}\[[0-9;]*38;5;75m(${ESC}\[[0-9;]*m)*1 command" \
  "dark on 256 colours: the count in the accent (75)"
like "$FULL" "${ESC}\[[0-9;]*38;5;214m(${ESC}\[[0-9;]*m)*fullAccess mode on" \
  "fullAccess is drawn in the warning colour"

mkdir -p "$HOME/.crucible"
echo '{"theme": "light"}' >"$HOME/.crucible/config.json"
status_row
like "$ROW" "${ESC}\[[0-9;]*38;5;25m(${ESC}\[[0-9;]*m)*1 command" \
  "the theme key chooses light: its accent (25)"

echo '{"theme": "high-contrast"}' >"$HOME/.crucible/config.json"
status_row
like "$ROW" "${ESC}\[[0-9;]*38;5;51m(${ESC}\[[0-9;]*m)*1 command" \
  "high-contrast: its accent (51)"
rm -f "$HOME/.crucible/config.json"

TUI_TERM=screen status_row
like "$ROW" "${ESC}\[[0-9;]*36m(${ESC}\[[0-9;]*m)*1 command" \
  "8 colours: the accent is cyan"

# A 16-colour terminal: this machine's terminfo may have none, so one is
# made from xterm-256color with 16 colours.
if infocmp xterm-256color >"$TEST_TMP/t.src" 2>/dev/null; then
  sed -i 's/^xterm-256color|[^,]*,/crucible-16color|16 colours,/;
          s/colors#256/colors#16/; s/colors#0x100/colors#16/;
          s/pairs#[0-9x]*/pairs#256/' "$TEST_TMP/t.src"
  mkdir -p "$TEST_TMP/terminfo"
  tic -x -o "$TEST_TMP/terminfo" "$TEST_TMP/t.src" 2>/dev/null
  TUI_TERM=crucible-16color TUI_ENV="TERMINFO=$TEST_TMP/terminfo" status_row
  like "$ROW" "${ESC}\[[0-9;]*94m(${ESC}\[[0-9;]*m)*1 command" \
    "16 colours: the accent is bright blue (12)"
else
  skip "16 colours: the accent is bright blue (12)" "no xterm-256color terminfo to make one from"
fi

TUI_ENV="NO_COLOR=1" status_row
ok "$([[ "$ROW" != *"38;5;"* && ! "$ROW" =~ ${ESC}\[[0-9\;]*3[0-7]m ]]; echo $?)" \
  "NO_COLOR: no colour at all"
like "$ROW" "${ESC}\[[0-9;]*1m(${ESC}\[[0-9;]*m)*1 command" \
  "NO_COLOR: the count still stands out (bold)"

tui_start --theme nonesuch
tui_wait "reading theme"
# The message may wrap (at a space): its rows are read joined.
like "$(printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' | tr '\n' ' ' | tr -s ' ')" \
  "reading theme [^ ]*/nonesuch\.theme: No such file or directory" \
  "a theme that cannot be read is named, and the default is used"
