#!/bin/bash
# The MCP client (core/mcpclient.c) against real MCP servers from the npm
# registry that nobody here wrote, pinned by tests/mcp-servers/package-lock.json
# and installed there by `npm ci` (tools/deps.sh mcp_test_servers, which
# .ci/run calls): @modelcontextprotocol/server-everything and
# @modelcontextprotocol/server-filesystem, spoken to through the test-only
# driver tests/helpers/mcp_drive.  Unconfined: the lifecycle that runs a
# server behind the boundary is not wired yet (issue 16).
. "$(dirname "$0")/lib.sh"

DRIVE="$HELPERS/mcp_drive"
MODULES="${CRUCIBLE_MCP_SERVERS:-${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/mcp-servers}/node_modules"
EVERYTHING="$MODULES/.bin/mcp-server-everything"
FILESYSTEM="$MODULES/.bin/mcp-server-filesystem"
N=16

plan $N

if [ ! -x "$DRIVE" ] || ! command -v node >/dev/null 2>&1 \
   || [ ! -x "$EVERYTHING" ] || [ ! -x "$FILESYSTEM" ]; then
  for i in $(seq $N); do
    skip "real MCP server case $i" \
      "no node, mcp_drive or servers in $MODULES (run tools/deps.sh mcp_test_servers)" \
      mcp-servers
  done
  exit 0
fi

WS="$TEST_TMP/my ws"
mkdir -p "$WS"
# Node starts slowly on a loaded machine: generous deadlines.
LONG=(--handshake-ms 60000 --call-ms 60000)

# drive ARGS... -- COMMAND...: the driver with a small, known environment
# (MCP_CRED holds the credential), its output in $out.
drive() {
  out=$(env -i PATH=/usr/bin:/bin HOME="$TEST_TMP" MCP_CRED=xyz-secret-123 \
        timeout 120 "$DRIVE" --root "$WS" "$@" 2>"$TEST_TMP/stderr") \
    && rc=0 || rc=$?
}

# --- server-everything ----------------------------------------------------
drive "${LONG[@]}" --hide xyz-secret-123 --elicit decline \
  --call echo '{"message":"hello through crucible"}' \
  --call get-sum '{"a":2,"b":3}' \
  --call get-env '{}' \
  --call get-roots-list '{}' \
  --call trigger-elicitation-request '{}' \
  -- "$EVERYTHING" stdio
like "$out" 'protocol 2025-06-18' "server-everything: the handshake agrees on 2025-06-18"
like "$out" $'\ntool echo\n' "its tools are listed (echo)"
like "$out" $'\ntool get-sum\n' "its tools are listed (get-sum)"
case "$out" in *"tool trigger-sampling-request"*) ok 1 "sampling is not offered, so its sampling tool is not";;
  *) ok 0 "sampling is not offered, so its sampling tool is not";; esac
like "$out" $'call echo ok\nEcho: hello through crucible\nend' "tools/call echo answers"
like "$out" 'The sum of 2 and 3 is 5' "tools/call get-sum answers"
like "$out" '"MCP_CRED": "\*{14}"' "a credential in a reply's words is hidden"
case "$out" in *xyz-secret-123*) ok 1 "the value appears nowhere in what is kept";;
  *) ok 0 "the value appears nowhere in what is kept";; esac
like "$out" 'URI: file://[^ ]*/my%20ws' "the server received the workspace from roots/list"
like "$out" 'elicited ' "its elicitation reached the client's callback"
like "$out" 'User declined' "and the person's answer reached the server"

# A call given up at its deadline.
drive --handshake-ms 60000 --call-ms 1000 \
  --call trigger-long-running-operation '{"duration":30,"steps":3}' \
  -- "$EVERYTHING" stdio
like "$out" 'call trigger-long-running-operation error: MCP server `test`: tools/call `trigger-long-running-operation`: no answer within 1 s' \
  "a long call past its deadline fails (and is cancelled)"

# --- server-filesystem ----------------------------------------------------
# Started on the workspace (the roots crucible answers with name the same
# directory; the server replaces its list with them after the handshake,
# racing the first call, so a different directory would be flaky).
drive "${LONG[@]}" \
  --call write_file "{\"path\":\"$WS/a.txt\",\"content\":\"hello from fs\"}" \
  --call read_text_file "{\"path\":\"$WS/a.txt\"}" \
  --call read_text_file '{"path":"/etc/passwd"}' \
  -- "$FILESYSTEM" "$WS"
like "$out" $'\ntool write_file\n' "server-filesystem: its tools are listed"
is "$(cat "$WS/a.txt" 2>/dev/null)" "hello from fs" \
  "write_file wrote into the workspace"
like "$out" $'call read_text_file ok\nhello from fs\nend' "read_text_file reads it back"
like "$out" $'call read_text_file is_error\nAccess denied' \
  "a path outside the roots is the tool's own error (isError)"
