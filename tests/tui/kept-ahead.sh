#!/bin/bash
# The full-screen session with its built-in agent keeps one sandbox
# prepared for the next command the person types, also under a policy
# with network domains (which used never to be prepared ahead): the typed
# command runs in it (same sandbox ID), with its exact output and the
# proxy in its environment, and another is kept for the next one; after
# a configuration file changed, the kept one is disposed of as stale and
# the command runs in a fresh sandbox; at /quit the kept one is disposed
# of and no layer pair of the session is left.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=9
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
# crucible reads its configuration once: the session's policy names a
# domain from the start.
CONF='{"sandbox":{"enabled":true,"network":{"domains":["kept.test"]}}}'
printf '%s\n' "$CONF" >"$HOME/.crucible/config.json"
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
journal() { cat "$HOME"/.local/state/crucible/*.jsonl 2>/dev/null; }
# kept_id [PREV]: the newest kept sandbox's ID once one other than PREV is
# journaled as prepared; empty after 10 s.
kept_id() { ahead_sandbox "$HOME/.local/state/crucible" kept "${1:-}"; }
# started N: the sandbox ID of the Nth command started.
started() { started_sandbox "$HOME/.local/state/crucible" "$1"; }

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
pid=$(tui_crucible_pid)
first=$(kept_id)
ok "$([ -n "$first" ] && echo 0 || echo 1)" "a sandbox is kept prepared once the session starts, its policy naming a domain"

tui_keys 'echo "typed-one ${HTTPS_PROXY:+through-the-proxy}"' Enter
tui_wait "typed-one through-the-proxy"
ok $? "the typed command runs, its output shown, the proxy in its environment"
is "$(started 1)" "$first" "it ran in the kept sandbox (same sandbox ID)"
second=$(kept_id "$first")
ok "$([ -n "$second" ] && echo 0 || echo 1)" "another sandbox is kept for the next command"
tui_keys 'echo typed-two' Enter
tui_wait "typed-two"
is "$(started 2)" "$second" "the next typed command ran in that one"

# The configuration file replaced (same words, another file): the kept one
# was made before, so it is stale.
third=$(kept_id "$second")
printf '%s\n' "$CONF" >"$HOME/.crucible/config.json.new"
mv "$HOME/.crucible/config.json.new" "$HOME/.crucible/config.json"
tui_keys 'echo typed-three' Enter
tui_wait "typed-three"
ok "$([ -n "$third" ] && journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$third\",\"unused\":\"stale\"" && echo 0 || echo 1)" \
  "after the configuration file changed, the kept sandbox is disposed of as stale, by its sandbox ID"
ok "$(s=$(started 3); [ -n "$s" ] && [ "$s" != "$third" ] && echo 0 || echo 1)" \
  "and the command ran in a fresh sandbox"
fourth=$(kept_id "$third")

tui_keys /quit Enter
tui_exited
is "$TUI_RC" 0 "the session ends normally"
ok "$(journal | grep '"fact":"cleanup"' | grep "\"sandbox\":\"$fourth\"" | grep -q '"unused":"exit"' &&
  ! ls -d "$STATE"/cmd-"$pid"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "at the end the kept sandbox is disposed of, and no layer pair of the session is left"
