#!/bin/bash
# crucible mcp keeps one sandbox prepared ahead of the next call: the call
# runs in it (its sandbox ID is the kept one's) with exact results, its
# baseline taken when it starts (a file changed in the workspace while it
# waited is the command's starting point, and its own change to that file
# publishes), its environment given only then; a kept sandbox that went
# stale (the git hooks directory it protects moved, the configuration
# changed) is disposed of and the call runs in a fresh one; nothing is
# left after the server exits or is killed.
. "$(dirname "$0")/lib.sh"

N=24
plan $N
new_workspace

# The broker's --await on its own (no bwrap needed): the host closing the
# channel before GO runs nothing; a record other than GO fails the setup
# step that waits for it, and runs nothing either.
BROKER="$CRUCIBLE_BIN_DIR/crucible-sandbox-broker"
PEER="${CRUCIBLE_HELPER_DIR:-${CRUCIBLE_BUILDDIR:-.}/tests/helpers}/broker_peer"
"$PEER" -o "$TEST_TMP/report" --close --after 200 -- "$BROKER" --status-fd 3 --await \
  -- /bin/sh -c "touch '$TEST_TMP/ran'" >/dev/null 2>"$TEST_TMP/broker.err"
is "$(grep -v '^broker [0-9]' "$TEST_TMP/report")" \
  $'closed\nbroker exit 0' "a broker awaiting GO leaves, exit 0, when the host closes the channel"
ok "$([ ! -e "$TEST_TMP/ran" ] && echo 0 || echo 1)" "and its program never ran"
"$PEER" -o "$TEST_TMP/report" --stop 15 --after 200 -- "$BROKER" --status-fd 3 --await \
  -- /bin/sh -c "touch '$TEST_TMP/ran'" >/dev/null 2>"$TEST_TMP/broker.err"
is "$(grep -v '^broker [0-9]' "$TEST_TMP/report")|$(cat "$TEST_TMP/broker.err")" \
  "stop 15
failed stage=1 errno=71
eof
broker exit 125|crucible-sandbox-broker: waiting for the command: Protocol error" \
  "a record other than GO fails setup at 'waiting for the command'"
ok "$([ ! -e "$TEST_TMP/ran" ] && echo 0 || echo 1)" "and nothing ran"
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for _ in $(seq $N); do skip "a kept sandbox in crucible mcp" "$why" bwrap; done
  exit 0
fi
command -v git >/dev/null || {
  for _ in $(seq $N); do skip "a kept sandbox in crucible mcp" "git is not installed"; done
  exit 0
}
git init -q .
mkdir -p "$HOME/.crucible" hooks
printf '{"sandbox":{"enabled":true},"permissions":{"mode":"fullAccess"}}\n' \
  >"$HOME/.crucible/config.json"
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
JOURNAL_DIR="$HOME/.local/state/crucible"

. "$CRUCIBLE_SRCDIR/tests/integration/mcpcoproc.sh"
MCP_RECV_SECONDS=20
call() { # call ID ARGS-JSON: the bash tool's answer
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$2}}"
  recv
}
text_result() { # text_result ID TEXT-AS-JSON-STRING-CONTENT
  printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}' "$1" "$2"
}
journal() { cat "$JOURNAL_DIR"/*.jsonl 2>/dev/null; }
# kept_id: the sandbox ID of the newest kept sandbox, once one is prepared
# (after the previous one, $kept, when set); empty after 10 s.
kept_id() { ahead_sandbox "$JOURNAL_DIR" kept "${kept:-}"; }
# started_in ID: the sandbox ID of command ID's start fact (the journal's
# command numbers count from 1 in each server).
started_in() { started_sandbox "$JOURNAL_DIR" "$1"; }
# waiting: the pid of the bwrap child of the server whose broker awaits
# GO, once it does (the journal's policy fact comes before the broker
# starts); empty after 10 s.
waiting() {
  local p
  for _ in $(seq 200); do
    for p in $(pgrep -P "$mcp_pid"); do
      pgrep -P "$p" >/dev/null || continue
      tr '\0' ' ' </proc/"$(pgrep -P "$p" | head -1)"/cmdline 2>/dev/null | grep -q -- ' --await ' &&
        { printf '%s' "$p"; return; }
    done
    sleep 0.05
  done
}

start_mcp
kept=$(kept_id)
ok "$([ -n "$kept" ] && echo 0 || echo 1)" "a sandbox is kept prepared once the server starts"
bwrap_pid=$(waiting)
ok "$([ -n "$bwrap_pid" ] && echo 0 || echo 1)" "its bwrap runs, its broker waiting for the command"

# Made after the sandbox was prepared: seen by the command, whose own
# change to it publishes (its baseline is taken when it starts, so the
# outside write is its starting point, not a change under it).
printf 'outside\n' >late
is "$(call 1 '{"command":"cat late; echo inside >>late; printf \"[%s]\" \"$GIVEN\"","env":{"GIVEN":"given-at-start"}}')" \
  "$(text_result 1 'outside\n[given-at-start]')" \
  "the kept sandbox runs the call: a file made while it waited is seen, the environment is the call's"
is "$(started_in 1)" "$kept" "the call's sandbox is the kept one (same sandbox ID)"
is "$(cat late)" $'outside\ninside' "its change to the file written meanwhile is published"
ok "$(journal | grep '"fact":"publication"' | grep -q "\"sandbox\":\"$kept\",\"outcome\":\"published\"" && echo 0 || echo 1)" \
  "the journal has its publication under the kept sandbox's ID"

# A second call: another kept sandbox, exact results again; a write into
# hooks/ is allowed while no hooks path names it (the positive control).
prev=$kept
kept=$(kept_id)
ok "$([ -n "$kept" ] && [ "$kept" != "$prev" ] && echo 0 || echo 1)" "a new sandbox is kept for the next call"
is "$(call 2 '{"command":"echo two; echo a >hooks/a && echo wrote"}')" \
  "$(text_result 2 'two\nwrote')" "the next call runs in it, exactly"
is "$(started_in 2):$(cat hooks/a)" "$kept:a" "in the kept sandbox, and hooks/a is published"

# Stale: core.hooksPath now names hooks/, which the kept sandbox (made
# before) does not protect; it is disposed of, and the call runs in a
# fresh sandbox that keeps hooks/ read-only.
kept=$(kept_id)
git config core.hooksPath hooks
reply=$(call 3 '{"command":"echo b >hooks/b || echo refused"}')
like "$reply" 'refused' "a hooks directory named after the sandbox was kept is protected all the same"
ok "$([ ! -e hooks/b ] && echo 0 || echo 1)" "and nothing was written there"
ok "$(journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$kept\",\"unused\":\"stale\"" && echo 0 || echo 1)" \
  "the stale kept sandbox is disposed of, by its sandbox ID"
ok "$(s=$(started_in 3); [ -n "$s" ] && [ "$s" != "$kept" ] && echo 0 || echo 1)" "the call ran in a fresh sandbox"
git config --unset core.hooksPath

# Stale: the home configuration file changed.
kept=$(kept_id)
printf '{"sandbox":{"enabled":true},"permissions":{"mode":"fullAccess"}}\n\n' \
  >"$HOME/.crucible/config.json"
is "$(call 4 '{"command":"echo four"}')" "$(text_result 4 'four')" "after a configuration change the call still runs"
ok "$(journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$kept\",\"unused\":\"stale\"" && echo 0 || echo 1)" \
  "the kept sandbox made under the old configuration is disposed of as stale"

# The server exits: the kept sandbox is disposed of, nothing is left.
kept=$(kept_id)
bwrap_pid=$(waiting)
exec {mcp_in}>&-
wait "$mcp_pid" 2>/dev/null
ok "$(journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$kept\",\"unused\":\"exit\"" && echo 0 || echo 1)" \
  "at exit the kept sandbox is disposed of, by its sandbox ID"
ok "$([ -n "$bwrap_pid" ] && ! kill -0 "$bwrap_pid" 2>/dev/null &&
  ! ls -d "$STATE"/cmd-"$mcp_pid"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "no process, no layer pair is left after the server exits"

# Killed outright: bwrap goes with its parent; the layers it leaves are
# recovered by the next preparation.
start_mcp
kept=""
kept=$(kept_id)
bwrap_pid=$(waiting)
killed=$mcp_pid
# Its layer pair, which a server killed outright cannot remove.  (Once it
# is killed, any crucible of this user preparing a sandbox may recover
# it, so it is looked for before.)
ok "$(ls -d "$STATE"/cmd-"$killed"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "the kept sandbox has its layer pair in the state directory"
kill -KILL "$mcp_pid"
wait "$mcp_pid" 2>/dev/null
ok "$([ -n "$bwrap_pid" ] && wait_gone "$bwrap_pid" 5 && echo 0 || echo 1)" \
  "killing the server ends the kept sandbox's bwrap and broker"
crun run -- true
ok "$([ "$rc" = 0 ] && ! ls -d "$STATE"/cmd-"$killed"-* >/dev/null 2>&1 && echo 0 || echo 1)" \
  "the next preparation recovers it: nothing of the killed server is left"
