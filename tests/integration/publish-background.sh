#!/bin/bash
# Publication of a command left running (crucible mcp, background: true):
# its writes land when it ends, and when another command published into
# the root meanwhile, the note about its ending says it published nothing.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/publish-lib.sh"

plan 6
pub_setup
if ! pub_usable; then
  for i in $(seq 6); do
    skip "publication of a command left running ($i)" "$PUB_REASON" bwrap
  done
  exit 0
fi
printf '{"sandbox":{"enabled":true},"permissions":{"mode":"fullAccess"}}\n' \
  >"$PUB_HOME/.crucible/config.json"
pub_become root
export HOME=$PUB_HOME
cd "$WS" || exit 1

coproc MCP { exec "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"; }
mcp_pid=$MCP_PID
send() { printf '%s\n' "$1" >&"${MCP[1]}"; }
recv() {
  local line
  if IFS= read -r -t "${1:-10}" line <&"${MCP[0]}"; then printf '%s' "$line"; else printf TIMEOUT; fi
}
call() {
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$2}}"
}
send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
recv >/dev/null
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'

# Left running, it publishes when it ends.
call 1 '{"command":"sleep 1; echo one >one","description":"first","background":true}'
like "$(recv)" 'left running as #1' "the first command is left running"
[ ! -e "$WS/one" ] && ok 0 "nothing it wrote is in the workspace while it runs" \
  || ok 1 "nothing it wrote is in the workspace while it runs"
like "$(recv 10)" 'first ended on its own' "its ending is told"
is "$(cat "$WS/one" 2>/dev/null)" one "its writes were published when it ended"

# Another command publishes into the root while the second runs.
call 2 '{"command":"sleep 2; echo two >two","description":"second","background":true}'
recv >/dev/null
call 3 '{"command":"echo three >three; echo done"}'
recv >/dev/null
recv 10 >/dev/null # the notification of the second's ending
call 4 '{"command":"true"}'
is "$(recv)" '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"[#2 second ended on its own · exit status 0 · 0 lines; what it printed:]\n(no output)\n[published nothing: another command published into the workspace after this one started, so what this command wrote was discarded rather than merged]\n\n(no output)"}],"isError":false}}' \
  "the note about its ending says it published nothing, and why"
[ ! -e "$WS/two" ] && ok 0 "and nothing of it reached the workspace" \
  || ok 1 "and nothing of it reached the workspace"

mcp_in=${MCP[1]}
exec {mcp_in}>&-
wait "$mcp_pid" 2>/dev/null
