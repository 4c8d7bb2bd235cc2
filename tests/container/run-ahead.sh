#!/bin/bash
# Containers prepared ahead (sandbox/container/backend.c, prepare_ahead),
# against both engines (tests/container/lib.sh starts dockerd and Podman's
# service once): `crucible mcp` keeps one container made, started and
# attached before any call; a call runs in it (its sandbox ID is the
# command's) and its writes are published; a new one is kept after it; one
# gone stale (the configuration changed) is removed, not used; the one kept
# is removed when the connection ends; and a SIGKILLed crucible that keeps
# one leaves no container within 5 s (the runner's dead-man switch holds
# while it waits for its job).

. "$(dirname "$0")/lib.sh"

PER_ENGINE=8
plan $((2 * PER_ENGINE))

new_workspace
mkdir -p "$HOME/.crucible"
CONFIG='{"sandbox": {"enabled": true, "backend": "container"}, "permissions": {"allow": ["Bash(*)"]}}'
echo "$CONFIG" >"$HOME/.crucible/config.json"
engines_start docker podman

# journal: the facts of the newest session.
journal() { cat "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"; }

# kept NAME: the sandbox IDs of NAME's containers crucible made, of any
# state, one a line.
kept() {
  engine_api "$1" GET "/v1.41/containers/json?all=1" \
    | grep -o '"org.crucible.sandbox":"[0-9a-f]*"' | sed 's/.*:"\(.*\)"/\1/'
}
# running NAME: the sandbox IDs of the containers running on engine NAME.
running() {
  engine_api "$1" GET "/v1.41/containers/json" \
    | grep -o '"org.crucible.sandbox":"[0-9a-f]*"' | sed 's/.*:"\(.*\)"/\1/'
}
# await_kept NAME [NOT]: wait up to 120 s for one kept container (other
# than the sandbox NOT) to be running, as a kept one is once made,
# attached and started; its sandbox ID.  (Between the engine's create and
# start a container has no runner, so no dead-man switch: see
# doc/container-backend.md.)
await_kept() {
  local ids
  for _ in $(seq 1200); do
    ids=$(running "$1" | grep -vxF "${2:-none}")
    [ "$(wc -w <<<"$ids")" -eq 1 ] && break
    sleep 0.1
  done
  echo "$ids"
}
# await_none NAME SECONDS: wait for NAME to have no container; how many
# are left.
await_none() {
  local left
  for _ in $(seq $(($2 * 10))); do
    left=$(kept "$1" | wc -l)
    [ "$left" -eq 0 ] && break
    sleep 0.1
  done
  echo "$left"
}

. "$CRUCIBLE_SRCDIR/tests/integration/mcpcoproc.sh"
call() { # call ID COMMAND-AS-JSON-STRING
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":{\"command\":\"$2\"}}}"
}

for engine in docker podman; do
  if ! engine_up "$engine"; then
    engine_skip "$PER_ENGINE" "$engine"
    continue
  fi
  export DOCKER_HOST
  DOCKER_HOST=$(engine_host "$engine")
  crun sandbox image build
  if [ "$rc" -ne 0 ]; then
    diag "$out"
    ENGINE_WHY="the image could not be built" engine_skip "$PER_ENGINE" "$engine"
    continue
  fi
  rm -f "$WS/made"

  # --- kept, used, kept again ---------------------------------------------
  start_mcp
  first=$(await_kept "$engine")
  like "$first" '^[0-9a-f]{16}$' "$engine: crucible mcp keeps a container ready before any call"
  call 1 'echo ran > made; echo ran'
  reply=$(recv)
  used=$(journal | grep '"fact":"start"' | sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | tail -1)
  is "$reply|$used|$(cat "$WS/made" 2>/dev/null)" \
    '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ran"}],"isError":false}}|'"$first|ran" \
    "$engine: the call ran in the kept container, and its write was published"
  second=$(await_kept "$engine" "$first")
  is "$(kept "$engine" | grep -cxF "$first")|$(grep -c . <<<"$second")" "0|1" \
    "$engine: its container is gone, and another is kept for the next call"

  # --- stale: the configuration changed -----------------------------------
  sleep 0.05
  echo "$CONFIG" >"$HOME/.crucible/config.json"
  call 2 'echo again'
  reply=$(recv)
  stale=$(journal | grep '"fact":"cleanup"' | grep -c "\"sandbox\":\"$second\",\"unused\":\"stale\"")
  left=$(kept "$engine" | grep -cxF "$second")
  is "$reply|$stale|$left" \
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"again"}],"isError":false}}|1|0' \
    "$engine: a kept container gone stale (the configuration changed) is removed, not used"

  # --- broken: the kept container was killed while it waited -------------
  third=$(await_kept "$engine" "$second")
  cid=$(engine_api "$engine" GET "/v1.41/containers/json?all=1" \
    | grep -o '"Id":"[0-9a-f]*"' | head -1 | cut -d'"' -f4)
  engine_api "$engine" POST "/v1.41/containers/$cid/kill?signal=KILL" >/dev/null
  sleep 1
  call 3 'echo after'
  reply=$(recv)
  stale=$(journal | grep '"fact":"cleanup"' | grep -c "\"sandbox\":\"$third\",\"unused\":\"stale\"")
  is "$reply|$stale" \
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"after"}],"isError":false}}|1' \
    "$engine: a kept container that ended while it waited is not used; the call runs in a new one"

  # --- the end of the connection ------------------------------------------
  third=$(await_kept "$engine" "$third")
  exec {mcp_in}>&-
  wait "$mcp_pid" 2>/dev/null
  mrc=$?
  is "$mrc|$(kept "$engine" | wc -l)|$(journal | grep -c "\"sandbox\":\"$third\",\"unused\":\"exit\"")" "0|0|1" \
    "$engine: the kept container is removed when the connection ends, before crucible leaves"

  # --- SIGKILL while one is kept ------------------------------------------
  start_mcp
  kept_id=$(await_kept "$engine")
  like "$kept_id" '^[0-9a-f]{16}$' "$engine: a new connection keeps a container again"
  kill -KILL "$mcp_pid"
  wait "$mcp_pid" 2>/dev/null
  is "$(await_none "$engine" 5)" 0 \
    "$engine: a SIGKILLed crucible that keeps a container leaves none within 5 s"
  unset DOCKER_HOST
done
