# crucible mcp on a coprocess, for the tests that speak to it one line at
# a time (prepare-ahead.sh, tests/container/run-ahead.sh, run-mcp.sh).
# Source it after lib.sh (it uses $CRUCIBLE and $TEST_TMP).  start_mcp
# starts it and makes the handshake (mcp_pid, mcp_in, mcp_out); send
# writes one line; recv [SECONDS] reads one, or says TIMEOUT after SECONDS
# (MCP_RECV_SECONDS, else 60).

start_mcp() {
  coproc MCP { exec "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"; }
  mcp_pid=$MCP_PID
  mcp_in=${MCP[1]}
  mcp_out=${MCP[0]}
  send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
  recv >/dev/null
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
send() { printf '%s\n' "$1" >&"$mcp_in"; }
recv() {
  local line
  if IFS= read -r -t "${1:-${MCP_RECV_SECONDS:-60}}" line <&"$mcp_out"; then
    printf '%s' "$line"
  else
    printf TIMEOUT
  fi
}
