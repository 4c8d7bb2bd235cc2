# Driving the full-screen session in tmux, its screen read with
# capture-pane (LANG=C.UTF-8, so that what is drawn is UTF-8).
# Source after tests/integration/lib.sh.  Each test gets its own tmux
# server on a unique socket (-L), started with no configuration and killed
# at exit whatever happens; every wait is a bounded poll of the screen.
#
# tui_start [ARG]...  start crucible ARG... in $WS in a TUI_COLS x TUI_ROWS
#                     window (100 x 30 unless set); its exit status lands in
#                     $TEST_TMP/tui-exit
# tui_wait TEXT [S]   wait at most S seconds (10) until the screen holds
#                     TEXT; the screen is left in $SCREEN either way
# tui_gone TEXT [S]   wait until the screen no longer holds TEXT
# tui_keys KEY...     tmux send-keys
# tui_row N           row N of $SCREEN (1-based), trailing blanks removed
# tui_exited [S]      wait until crucible has exited; its status in $TUI_RC

TUI_COLS=${TUI_COLS:-100}
TUI_ROWS=${TUI_ROWS:-30}
SCREEN=

# Each start gets a socket of its own (a server being killed may still
# answer on the old one), and every server goes with the test, and the
# test's files after them.  (BASHPID: a part of the test run beside the
# rest, tap_part, names its sockets apart from the script's.)
TUI_SOCKS=
tui_new_sock() {
  TUI_SOCK="crucible-tui-$BASHPID-$RANDOM$RANDOM"
  TUI_SOCKS="$TUI_SOCKS $TUI_SOCK"
}
tui_new_sock
trap 'for s in $TUI_SOCKS; do tmux -L "$s" kill-server 2>/dev/null; done; rm -rf "$TEST_TMP"' EXIT

# Whether tmux can be used; when not, every test is a skip (or a failure
# where CRUCIBLE_TEST_REQUIRE lists tmux).
tui_have_tmux() {
  command -v tmux >/dev/null 2>&1
}

# skip_all N REASON: plan N tests and skip each.
tui_skip_all() {
  plan "$1"
  local i
  for i in $(seq 1 "$1"); do
    skip "full-screen test $i" "$2" tmux
  done
  exit 0
}

tui_start() {
  local args="" a
  for a in "$@"; do
    args="$args $(printf '%q' "$a")"
  done
  rm -f "$TEST_TMP/tui-exit"
  tui_new_sock
  tmux -L "$TUI_SOCK" -f /dev/null new-session -d -x "$TUI_COLS" \
    -y "$TUI_ROWS" -c "$WS" \
    "env LANG=\${TUI_LANG:-C.UTF-8} LC_ALL=\${TUI_LANG:-C.UTF-8} \
NCURSES_NO_UTF8_ACS=1 TERM=${TUI_TERM:-screen-256color} ${TUI_ENV:-} HOME=$(printf '%q' "$HOME") \
CRUCIBLE_HISTORY=$(printf '%q' "$TEST_TMP/history") \
$(printf '%q' "$CRUCIBLE")$args; echo \$? >$(printf '%q' "$TEST_TMP/tui-exit"); sleep 600"
  tmux -L "$TUI_SOCK" set-option -g remain-on-exit on >/dev/null 2>&1
}

tui_capture() {
  SCREEN=$(tmux -L "$TUI_SOCK" capture-pane -p 2>/dev/null)
}

# tui_until SECONDS DIAG TEST...: capture the screen until TEST (which
# reads $SCREEN) succeeds; after SECONDS, DIAG and the screen as diagnostics.
tui_until() {
  local tries=$(($1 * 20)) what=$2
  shift 2
  while [ "$tries" -gt 0 ]; do
    tui_capture
    "$@" && return 0
    sleep 0.05
    tries=$((tries - 1))
  done
  diag "$what" "screen:" "$SCREEN"
  return 1
}

tui_shows() { [[ "$SCREEN" == *"$1"* ]]; }
tui_lacks() { [[ "$SCREEN" != *"$1"* ]]; }
tui_matches() { [[ "$SCREEN" =~ $1 ]]; }

# tui_wait TEXT [SECONDS], tui_gone TEXT [SECONDS], tui_wait_match REGEX
# [SECONDS]: until the screen holds TEXT, no longer holds it, or matches
# the extended regular expression REGEX (default 10 s).
tui_wait() { tui_until "${2:-10}" "waited for: $1" tui_shows "$1"; }
tui_gone() { tui_until "${2:-10}" "waited for this to go: $1" tui_lacks "$1"; }
tui_wait_match() { tui_until "${2:-10}" "waited for a match of: $1" tui_matches "$1"; }

tui_keys() {
  tmux -L "$TUI_SOCK" send-keys "$@"
}

tui_row() {
  printf '%s\n' "$SCREEN" | sed -n "${1}p" | sed 's/[[:space:]]*$//'
}

# The rows of $SCREEN from the one holding FIRST for N rows, trailing blanks
# removed.
tui_block() {
  printf '%s\n' "$SCREEN" | sed 's/[[:space:]]*$//' |
    grep -A "$(($2 - 1))" -F -- "$1" | head -n "$2"
}

tui_exited() {
  local tries=$(( ${1:-15} * 20 ))
  while [ "$tries" -gt 0 ]; do
    if [ -s "$TEST_TMP/tui-exit" ]; then
      TUI_RC=$(cat "$TEST_TMP/tui-exit")
      return 0
    fi
    sleep 0.05
    tries=$((tries - 1))
  done
  TUI_RC=
  return 1
}

# The process id of crucible inside the pane (the pane's shell runs it).
tui_crucible_pid() {
  local pane
  pane=$(tmux -L "$TUI_SOCK" display-message -p '#{pane_pid}')
  pgrep -P "$pane" -x crucible | head -1
}

# The newest child of process $1.
newest_child() {
  tr ' ' '\n' <"/proc/$1/task/$1/children" | grep . | sort -n | tail -1
}

# tui_net_session: sessions run as an identity inside the test network
# (tests/integration/netlib.sh, sourced first): defines tmx (the
# identity's tmux, on its socket directory $D/tmux), tui_capture and
# tui_keys through it, net_tui_start (the scripted agent's session, $SCRIPT,
# in $WS with home $H, its tmux server started inside the inner namespace
# as the identity $AS) and result ID [S] (the agent's tool result of call
# ID, in $RESULT).  The caller's become sets WHO, AS, WS, H and D.
tui_net_session() {
  # The tmux of the identity, on its own socket directory.
  tmx() { "${AS[@]}" env TMUX_TMPDIR="$D/tmux" tmux -L "$TUI_SOCK" "$@"; }
  tui_capture() { SCREEN=$(tmx capture-pane -p 2>/dev/null); }
  tui_keys() { tmx send-keys "$@"; }

  # net_tui_start: the session (scripted agent, $SCRIPT) in WS, its tmux
  # server started inside the inner namespace as the identity.
  net_tui_start() {
    tui_new_sock
    cp "$SCRIPT" "$D/script.txt"
    rm -f "$D/tui-exit" "$D/agent.log" "$D/agent.log.lives"
    [ "$WHO" = nobody ] && chown 65534:65534 "$D/script.txt"
    (cd "$WS" && net_run "${AS[@]}" env -i PATH=/usr/bin:/bin SHELL=/bin/sh TMUX_TMPDIR="$D/tmux" \
      tmux -L "$TUI_SOCK" -f /dev/null new-session -d -x "$TUI_COLS" -y "$TUI_ROWS" -c "$WS" \
      "env -i PATH=/usr/bin:/bin LANG=C.UTF-8 LC_ALL=C.UTF-8 NCURSES_NO_UTF8_ACS=1 \
TERM=screen-256color HOME=$(printf '%q' "$H") CRUCIBLE_HISTORY=$(printf '%q' "$D/history") \
SCRIPTED_AGENT_LOG=$(printf '%q' "$D/agent.log") \
$(printf '%q' "$CRUCIBLE") --agent $(printf '%q' "$AGENT $D/script.txt"); \
echo \$? >$(printf '%q' "$D/tui-exit"); sleep 600")
    tmx set-option -g remain-on-exit on >/dev/null 2>&1
  }

  # result ID [S]: wait at most S seconds (20) for the agent to have the
  # tool result of call ID; its message in $RESULT (empty when none came).
  result() {
    local tries=$(( ${2:-20} * 20 ))
    RESULT=
    while [ "$tries" -gt 0 ]; do
      RESULT=$(grep -F "\"type\":\"tool_result\",\"id\":\"$1\"" "$D/agent.log" 2>/dev/null)
      [ -n "$RESULT" ] && return 0
      sleep 0.05
      tries=$((tries - 1))
    done
    diag "no tool result for $1" "agent log: $(tail -n 5 "$D/agent.log" 2>/dev/null)"
    return 1
  }
}
