#!/bin/bash
# The MCP client (core/mcpclient.c) through the test-only driver
# tests/helpers/mcp_drive, against tests/helpers/mcp_test_server.py: the
# paths a real server cannot be made to take.  Each case starts the server
# as the driver's child and asserts on what the driver prints.
. "$(dirname "$0")/lib.sh"

DRIVE="$HELPERS/mcp_drive"
SERVER="${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/helpers/mcp_test_server.py"

plan 18

if [ ! -x "$DRIVE" ] || ! command -v python3 >/dev/null 2>&1; then
  for i in $(seq 18); do skip "mcp client case $i" "no mcp_drive or python3"; done
  exit 0
fi

# drive ARGS... -- MODE [ARG]: run the driver over the test server, its
# output in $out and its status in $rc.  The driver's own deadlines are
# 60 s unless a case sets them: python starts slowly on a loaded machine.
drive() {
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  out=$(timeout 120 "$DRIVE" --root "$TEST_TMP/my ws" "${opts[@]}" -- \
        python3 "$SERVER" "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
}

# A handshake that never ends fails at its deadline, naming the method.
start=$(date +%s%N)
drive --handshake-ms 300 -- hang-handshake
end=$(date +%s%N)
like "$out" "failed: MCP server \`test\`: initialize: no answer within 0.3 s" \
  "a server that hangs in the handshake fails it at the deadline"
ok $(( (end - start) / 1000000 < 20000 ? 0 : 1 )) \
  "and the driver is not held by it ($(( (end - start) / 1000000 )) ms)"

# Garbage on standard output: the connection is not trusted on.
drive -- garbage
like "$out" 'failed: MCP server `test`: initialize: the server wrote a line that is not a JSON-RPC message on its standard output: "Server listening on stdio"' \
  "garbage on standard output fails the handshake, quoting it"

# A frame past the bound (here 64 KiB; the default is 4 MiB).
drive --frame-max 65536 -- oversized 100000
like "$out" 'failed: MCP server `test`: initialize: the server wrote a message longer than 65536 bytes' \
  "an oversized frame fails the connection"
drive -- oversized 5000000
like "$out" 'longer than 4194304 bytes' "the default frame bound is 4 MiB"

# Versions: 2025-03-26 and 2024-11-05 are taken, anything else refused.
drive -- version 2025-03-26
like "$out" $'protocol 2025-03-26\ntool echo' "a server answering 2025-03-26 is taken"
drive -- version 2024-11-05
like "$out" 'protocol 2024-11-05' "a server answering 2024-11-05 is taken"
drive -- version 2099-01-01
like "$out" 'failed: MCP server `test`: initialize: the server speaks protocol version "2099-01-01"; crucible speaks 2025-06-18, 2025-03-26 and 2024-11-05' \
  "a version crucible does not speak is refused, saying which"

# Exits mid-call: the call is told, then the connection fails.
drive --call echo '{"text":"x"}' -- exit-mid-call
like "$out" 'call echo error: MCP server `test`: tools/call `echo`: reading its output: the server closed its standard output' \
  "a server that exits mid-call fails the call, naming server, method and tool"
like "$out" 'exit 3' "and its exit status is the server's own"

# list_changed: re-listed, and the new tool named.
drive --wait-changed --call grow '{}' -- list-changed
like "$out" 'added grown' "list_changed re-lists and names the tool that is new"

# Pages: every page is followed.
drive -- paged
like "$out" $'tool page1\ntool page2\ntool page3' "tools/list follows nextCursor through every page"

# A credential value is hidden in the reply's words, also where the server
# escaped it; an error's code is kept as sent.
export MCP_TEST_SECRET='s3cr3t-VALUE'
drive --hide 's3cr3t-VALUE' --call secret '{}' --call secret '{"fail":true}' -- normal
like "$out" $'call secret ok\nplain \\*{12} escaped \\*{12}\nend' \
  "a value is hidden in a reply's words, escaped or not"
like "$out" 'call secret error: MCP server `test`: tools/call `secret`: the server answered with error -32603: bad token \*{12}' \
  "and in an error's message, whose code is kept"
case "$out" in *s3cr3t*) ok 1 "the value appears nowhere";; *) ok 0 "the value appears nowhere";; esac
unset MCP_TEST_SECRET

# The server's requests: roots/list, sampling refused, elicitation
# answered through the callback, ping.
drive --elicit decline --call ask '{}' -- asks
like "$out" '"elicitation": \{"action": "decline"\}, "ping": \{\}, "roots": \[\{"name": "my ws", "uri": "file://[^"]*/my%20ws"\}\], "sampling": -32601' \
  "roots/list is the workspace as a file:// URI, sampling is refused, elicitation and ping answered"

# A call past its deadline is failed and cancelled at the server.
drive --call-ms 300 --call echo '{}' -- slow 5
like "$out" 'call echo error: MCP server `test`: tools/call `echo`: no answer within 0.3 s' \
  "a call past its deadline fails"
like "$(cat "$TEST_TMP/stderr")" 'cancelled crucible-[0-9]+ timed out' \
  "and the server is sent notifications/cancelled for it"
