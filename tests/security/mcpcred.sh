#!/bin/bash
# An MCP server crucible starts unconfined (sandbox.enabled false) reading
# crucible's own environment.  A credential from "env" is a variable of
# crucible's, in its /proc/PID/environ, which a process of the same user
# (the server is crucible's descendant: Yama's ptrace_scope 1 allows it)
# reads while crucible is dumpable.  crucible made itself undumpable when a
# command's credentials were resolved, and a server whose entry names no
# credential was started before any: it read the value.  As uid 65534 only
# (root reads any process's environment, so there is nothing to hold).
#
# - control: with no credential configured, the server reads crucible's
#   environment (the walk finds the variable's value);
# - with a credential from that variable configured (the server's entry
#   naming none), the server reads nothing of crucible's environment.
# The server is crucible's own test server (tests/helpers/mcp_test_server.py
# "host": its tool sh runs a line), spoken to through crucible mcp by the
# official SDK client, as tests/integration/mcp-host.sh does.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER=2
sec_begin "$PER"

MODULES="${CRUCIBLE_MCP_SERVERS:-$CRUCIBLE_SRCDIR/tests/mcp-servers}/node_modules"
CLIENT="$CRUCIBLE_SRCDIR/tests/helpers/mcp_sdk_client.cjs"
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
VAL=Qm7Rt2Wx9Kp4Zb6Nc
REV=$(rev <<<"$VAL")

if ! command -v node >/dev/null 2>&1 || [ ! -f "$MODULES/@modelcontextprotocol/sdk/package.json" ]; then
  for who in $ids; do
    for ((i = 0; i < PER; i++)); do
      skip "an unconfined MCP server and crucible's environment" "no node or no SDK in $MODULES (run tools/deps.sh mcp_test_servers)" mcp-servers
    done
  done
  exit 0
fi

# Every process named crucible: its environment's CRSRC, reversed so that
# no masker could be what hides it.
WALK='for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = crucible ] && tr "\0" "\n" <"$p/environ" 2>/dev/null; done | grep "^CRSRC=" | rev'
ARGS=$(python3 -c 'import json,sys; print(json.dumps({"line": sys.argv[1]}))' "$WALK")

# server_walk CONFIG: crucible mcp with home configuration CONFIG, its
# server t running the walk; the client's lines in $out.
server_walk() {
  printf '%s\n' "$1" >"$H/.crucible/config.json"
  chown -R 65534:65534 "$H"
  out=$(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$H" CRSRC="$VAL" NODE_PATH="$MODULES" \
    setpriv --reuid=65534 --regid=65534 --clear-groups -- \
    timeout 120 node "$CLIENT" "$CRUCIBLE" list call mcp__t__sh "$ARGS" 2>&1)
}

for who in $ids; do
  sec_become "$who"
  if [ "$who" != nobody ]; then
    skip "control: an unconfined server reads crucible's environment" "root reads any process's"
    skip "with a credential configured, an unconfined server does not" "root reads any process's"
    continue
  fi
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  cp "$SERVER" "$WS/mcp_test_server.py"
  chmod 755 "$H" "$TEST_TMP"
  servers='"permissions":{"allow":["mcp__t"]},"mcpServers":{"t":{"command":"/usr/bin/python3","args":["'"$WS"'/mcp_test_server.py","host"]}}'
  server_walk '{"sandbox":{"enabled":false},'"$servers"'}'
  like "$out" "$REV" "control ($WHO): with no credential configured, an unconfined server reads crucible's environment"
  server_walk '{"sandbox":{"enabled":false,"credentials":{"TOKEN":{"env":"CRSRC"}}},'"$servers"'}'
  ok "$([[ "$out" != *"$REV"* ]] && [[ "$out" == *"call mcp__t__sh ok"* ]] && echo 0 || echo 1)" \
    "($WHO): with a credential configured, an unconfined server whose entry names none reads nothing of crucible's environment" ||
    diag "$out"
done
