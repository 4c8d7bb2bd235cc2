#!/bin/bash
# The full-screen session with its built-in agent keeps one sandbox
# prepared for the next command the person types: the typed command runs
# in it (same sandbox ID) with its exact output, and another is kept for
# the next one; after the configuration changed, the kept one is disposed
# of as stale and the command runs in a fresh sandbox; a policy with
# network domains is kept prepared too, and its command runs in it; at
# /quit the kept one is disposed of and no process or layer pair of it is
# left.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=10
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for _ in $(seq $N); do skip "a sandbox kept for typed commands" "$why" bwrap; done
  exit 0
fi
TUI_COLS=160
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
journal() { cat "$HOME"/.local/state/crucible/*.jsonl 2>/dev/null; }
# kept_id [PREV]: the newest kept sandbox's ID once one other than PREV is
# journaled as prepared; empty after 10 s.
kept_id() {
  local id
  for _ in $(seq 200); do
    id=$(journal | grep '"fact":"policy"' | grep '"ahead":"kept"' |
      sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | tail -1)
    [ -n "$id" ] && [ "$id" != "${1:-}" ] && { printf '%s' "$id"; return; }
    sleep 0.05
  done
}
# started N: the sandbox ID of the Nth command started.
started() {
  journal | grep '"fact":"start"' | sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' |
    sed -n "${1}p"
}

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
pid=$(tui_crucible_pid)
first=$(kept_id)
ok "$([ -n "$first" ] && echo 0 || echo 1)" "a sandbox is kept prepared once the session starts"

tui_keys 'echo typed-one' Enter
tui_wait "typed-one"
ok $? "the typed command runs and its output is shown"
is "$(started 1)" "$first" "it ran in the kept sandbox (same sandbox ID)"
second=$(kept_id "$first")
ok "$([ -n "$second" ] && echo 0 || echo 1)" "another sandbox is kept for the next command"

# Another configuration: a domain the command may reach.  The kept one was
# made from the old one, so it is stale.
printf '{"sandbox":{"enabled":true,"network":{"domains":["kept.test"]}}}\n' \
  >"$HOME/.crucible/config.json"
tui_keys 'echo typed-two' Enter
tui_wait "typed-two"
ok "$(journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$second\",\"unused\":\"stale\"" && echo 0 || echo 1)" \
  "after the configuration changed, the kept sandbox is disposed of as stale, by its sandbox ID"
ok "$(s=$(started 2); [ -n "$s" ] && [ "$s" != "$second" ] && echo 0 || echo 1)" \
  "and the command ran in a fresh sandbox"

third=$(kept_id "$second")
ok "$([ -n "$third" ] && echo 0 || echo 1)" "a policy with network domains is kept prepared too"
tui_keys 'echo typed-three' Enter
tui_wait "typed-three"
is "$(started 3)" "$third" "the command with domains ran in it (same sandbox ID)"

tui_keys /quit Enter
tui_exited
is "$TUI_RC" 0 "the session ends normally"
ok "$(journal | grep '"fact":"cleanup"' | grep "\"sandbox\":\"$(kept_id "$third")\"" | grep -q '"unused":"exit"' &&
  ! ls -d "$STATE"/cmd-"$pid"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "at the end the kept sandbox is disposed of, and no layer pair of the session is left"
