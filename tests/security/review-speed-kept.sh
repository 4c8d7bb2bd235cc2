#!/bin/bash
# An attacker's pass over the sandbox crucible mcp keeps prepared ahead
# (issue 17): its bwrap bound the workspace when it was made, so a
# workspace moved aside and replaced by another directory at the same
# path while it waited must not be what the next call runs on (it would
# read the old tree, while publication writes the new one).  The kept
# sandbox compares the workspace's device and inode when it is taken
# (sandbox/bwrap_launch.c, bwrap_ahead_current): the call runs in a fresh
# sandbox on the new directory and the kept one is disposed of as stale.
# The control: with the workspace left as it is, the call runs in the
# kept sandbox and sees what the last call wrote.  As root and as uid
# 65534.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER=6
sec_begin "$PER"

rk_start() {
  coproc RK {
    cd "$WS" && sec_exec env -i PATH="$PATH" HOME="$H" "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"
  }
  rk_pid=$RK_PID rk_in=${RK[1]} rk_out=${RK[0]}
  rk_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
  rk_recv >/dev/null
  rk_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
rk_send() { printf '%s\n' "$1" >&"$rk_in"; }
rk_recv() {
  local line
  if IFS= read -r -t 60 line <&"$rk_out"; then printf '%s' "$line"; else printf TIMEOUT; fi
}
rk_call() { # rk_call ID COMMAND: its reply
  local args
  args=$(python3 -c 'import json,sys; print(json.dumps({"command":sys.argv[1]}))' "$2")
  rk_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$args}}"
  rk_recv
}
rk_journal() { cat "$H"/.local/state/crucible/*.jsonl 2>/dev/null; }
# rk_kept: the newest kept sandbox's ID other than $kept; empty after 10 s.
rk_kept() { ahead_sandbox "$H/.local/state/crucible" kept "${kept:-}"; }
rk_started_in() { started_sandbox "$H/.local/state/crucible" "$1"; }

for who in $ids; do
  sec_become "$who"
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '{"sandbox":{"enabled":true},"permissions":{"mode":"fullAccess"}}\n' >"$H/.crucible/config.json"
  [ "$who" = nobody ] && chown -R 65534:65534 "$H"
  chmod 755 "$H"
  rk_start
  kept=
  kept=$(rk_kept)

  # Control: the call runs in the kept sandbox, and the next kept one
  # sees what it wrote.
  reply=$(rk_call 1 'echo one >a; echo wrote')
  ok "$([[ $reply == *wrote* ]] && [ -n "$kept" ] && [ "$(rk_started_in 1)" = "$kept" ] &&
    [ "$(cat "$WS/a" 2>/dev/null)" = one ] && echo 0 || echo 1)" \
    "control ($WHO): the call runs in the kept sandbox and its write is published" || diag "$reply"
  kept=$(rk_kept)
  reply=$(rk_call 2 'cat a')
  ok "$([[ $reply == *'"text":"one'* ]] && [ "$(rk_started_in 2)" = "$kept" ] && echo 0 || echo 1)" \
    "control ($WHO): the next call, in the next kept sandbox, reads the workspace it was made on" || diag "$reply"

  # The workspace moved aside and another directory put at its path
  # while the next kept sandbox waits.
  kept=$(rk_kept)
  mv "$WS" "$WS.old"
  mkdir "$WS"
  [ "$who" = nobody ] && chown 65534:65534 "$WS"
  chmod 755 "$WS"
  reply=$(rk_call 3 'cat a 2>/dev/null || echo none; echo two >b')
  like "$reply" '"text":"none' "($WHO): after the workspace was replaced, the call reads the new directory, not the old tree" ||
    diag "$reply"
  ok "$([ "$(cat "$WS/b" 2>/dev/null)" = two ] && [ ! -e "$WS.old/b" ] && echo 0 || echo 1)" \
    "($WHO): ... and its write is published into the new directory only"
  ok "$([ -n "$kept" ] && [ "$(rk_started_in 3)" != "$kept" ] && echo 0 || echo 1)" \
    "($WHO): ... in a fresh sandbox, not the one kept on the old workspace"
  ok "$(rk_journal | grep '"fact":"cleanup"' | grep -q "\"sandbox\":\"$kept\",\"unused\":\"stale\"" && echo 0 || echo 1)" \
    "($WHO): the kept sandbox made on the old workspace is disposed of as stale"

  exec {rk_in}>&-
  wait_gone "$rk_pid" 10
  wait "$rk_pid" 2>/dev/null
done
