#!/bin/bash
# A configured MCP server through the container backend, against both
# engines (tests/container/lib.sh starts dockerd and Podman's service
# once): `crucible mcp` offers the server's tools, and each call goes to
# the server running in a hardened container of its own, over the job
# protocol's standard-stream frames ('I' and 'N' in, 'O' and 'Y' out:
# sandbox/container/jobproto.h).  It runs with the run's policy (uid 65534,
# no network), its stderr reaches crucible's apart from its answers, and
# its writes are published when it exits at the end of the connection, as
# a command's are.  The server is tests/container/mcp-sh-server.sh, in
# busybox sh: the image holds no node for the repository's own server.

. "$(dirname "$0")/lib.sh"

PER_ENGINE=6
plan $((2 * PER_ENGINE))

HERE=$(cd "$(dirname "$0")" && pwd)
new_workspace
mkdir -p "$HOME/.crucible"
cp "$HERE/mcp-sh-server.sh" "$WS/mcp-sh-server.sh" || exit 1
echo '{"sandbox": {"enabled": true, "backend": "container"}, "permissions": {"allow": ["mcp__t"]},
 "mcpServers": {"t": {"command": "/bin/sh", "args": ["mcp-sh-server.sh"]}}}' >"$HOME/.crucible/config.json"
engines_start docker podman

# journal: the facts of the newest session.
journal() { cat "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"; }
containers() {
  engine_api "$1" GET "/v1.41/containers/json?all=1" | grep -o '"Id":"' | wc -l
}

. "$CRUCIBLE_SRCDIR/tests/integration/mcpcoproc.sh"
call() { # call ID TOOL
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":{}}}"
}
text_result() { # text_result ID TEXT
  printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}' "$1" "$2"
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
  rm -f "$WS/made-by-server.txt"

  start_mcp
  send '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  like "$(recv)" '"name":"mcp__t__whoami".*"name":"mcp__t__write"' \
    "$engine: crucible mcp offers the tools of the server running in a container"
  call 2 mcp__t__whoami
  is "$(recv)" "$(text_result 2 'uid 65534 net lo')" \
    "$engine: the server runs with the run's policy: uid 65534, no interface but lo"
  call 3 mcp__t__write
  reply=$(recv)
  is "$reply|$(cat "$WS/made-by-server.txt" 2>/dev/null || echo absent)" "$(text_result 3 wrote)|absent" \
    "$engine: its write is answered and held while it runs"
  exec {mcp_in}>&-
  wait "$mcp_pid"
  mrc=$?
  is "$mrc|$(cat "$WS/made-by-server.txt" 2>/dev/null)|$(containers "$engine")" "0|written-inside|0" \
    "$engine: at the end of the connection it exits, its write is published and its container is gone"
  facts=$(journal | grep '"identity":"mcp:t"')
  like "$(cat "$TEST_TMP/mcp.err")|$(grep -c '"fact":"start","sandbox":"[0-9a-f]*","identity":"mcp:t","backend":"container"' <<<"$facts")|$(grep -c '"fact":"publication",.*"outcome":"published","paths":1,' <<<"$facts")" \
    'mcp:t: sh-server: wrote made-by-server.txt.*\|1\|1$' \
    "$engine: its stderr reached crucible's apart from its answers; its start and publication facts say the container backend and one path published"
  # Its lifecycle facts say how strongly it was contained, as a command's
  # do: the start fact's isolation, the finish fact's readback from the
  # engine and facts from inside.
  like "$(grep -c '"fact":"start",.*"backend":"container","restart":0,"isolation":"container"' <<<"$facts")|$(grep '"fact":"finish"' <<<"$facts")" \
    '^1\|.*"outcome":"exited","status":0,"container":"[0-9a-f]{12}","image":"sha256:[0-9a-f]{64}","read_back":"NetworkMode none, ReadonlyRootfs, .*","inside":"uid=65534 caps=0 no_new_privs=1 seccomp=[0-9] filter=crucible userns=refused dumpable=0 ' \
    "$engine: its start fact says isolation container; its finish fact carries the container, the image ID, the hardening read back and the facts from inside"
  unset DOCKER_HOST
done
