#!/bin/bash
# crucible mcp: JSON-RPC 2.0 over stdio, the tools bash and bash_output,
# approval, endings told once, and the end of every command with the input.
# The client is this script: one line out, one line in, compared exactly.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 32
new_workspace

# start_mcp: a fresh server with the current HOME; its pid is $mcp_pid.
start_mcp() {
  coproc MCP { exec "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"; }
  mcp_pid=$MCP_PID
  mcp_in=${MCP[1]}
  mcp_out=${MCP[0]}
}
send() { printf '%s\n' "$1" >&"$mcp_in"; }
# recv [SECONDS]: the next line from the server, or TIMEOUT.
recv() {
  local line
  if IFS= read -r -t "${1:-10}" line <&"$mcp_out"; then printf '%s' "$line"; else printf TIMEOUT; fi
}
# stop_mcp: close the server's input and wait for it to leave.
stop_mcp() {
  exec {mcp_in}>&-
  wait "$mcp_pid" 2>/dev/null
}
call() { # call ID TOOL ARGS-JSON
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}
text_result() { # text_result ID TEXT-AS-JSON-STRING-CONTENT [isError]
  printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}],"isError":%s}}' "$1" "$2" "${3:-false}"
}
initialize() { # initialize [CAPABILITIES-JSON]
  send "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":${1:-{\}},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}"
  init_reply=$(recv)
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
left_running_note='[left running as #%s; ask bash_output what it has printed so far, and its output is handed over when it ends; do not poll or wait for it]'

# --- without approval rights: asked through nothing, refused -------------
start_mcp
send '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
is "$(recv)" '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"the session is not initialized: send initialize first"}}' \
  "tools before initialize are refused"
initialize
is "$init_reply" '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"crucible","version":"'"$("$CRUCIBLE" --version | cut -d' ' -f2)"'"}}}' \
  "initialize says the version, tools and logging"
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
reply=$(recv)
like "$reply" '"name":"bash","description":"Run a shell command.*"name":"bash_output"' "tools/list has bash and bash_output"
like "$reply" '"required":\["command"\]' "bash's schema requires command"
call 3 bash '{"command":"touch ran"}'
is "$(recv)" "$(text_result 3 '[refused: this command needs approval, and this MCP client cannot be asked (it did not declare the elicitation capability); allow it in ~/.crucible/config.json (permissions.allow, or permissions.mode fullAccess); nothing was run]' true)" \
  "a call that cannot be asked about is refused"
ok "$([ ! -e ran ] && echo 0 || echo 1)" "and nothing ran"
send 'not json'
is "$(recv)" '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not JSON"}}' "malformed JSON is a parse error"
send '{"id":4,"method":"ping"}'
is "$(recv)" '{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: a JSON-RPC 2.0 object was expected"}}' "a message without jsonrpc 2.0 is an invalid request"
send '{"jsonrpc":"2.0","id":5,"method":"resources/list"}'
is "$(recv)" '{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found"}}' "an unknown method is not found"
call 6 bash '{"cmd":"ls"}'
is "$(recv)" '{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown argument (bash takes command, description, timeout, background, env)"}}' \
  "bad arguments are invalid params"
call 7 frobnicate '{}'
is "$(recv)" '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool (crucible has bash and bash_output)"}}' "an unknown tool is invalid params"
send '{"jsonrpc":"2.0","id":"p","method":"ping"}'
is "$(recv)" '{"jsonrpc":"2.0","id":"p","result":{}}' "ping, with a string id"
stop_mcp

# --- asked through elicitation ---------------------------------------------
start_mcp
initialize '{"elicitation":{}}'
call 1 bash '{"command":"echo allowed"}'
is "$(recv)" '{"jsonrpc":"2.0","id":"crucible-ask-1","method":"elicitation/create","params":{"message":"Allow this command to run?\n\necho allowed","requestedSchema":{"type":"object","properties":{"allow":{"type":"boolean","title":"Allow"}},"required":["allow"]}}}' \
  "the person is asked through elicitation"
send '{"jsonrpc":"2.0","id":"crucible-ask-1","result":{"action":"accept","content":{"allow":true}}}'
is "$(recv)" "$(text_result 1 'allowed')" "allowed, it runs"
call 2 bash '{"command":"npm run dev","background":true}'
like "$(recv)" 'Allow this command to run\?\\n\\nnpm run dev\\n\\nThe command will still be running after the turn ends\."' \
  "asking about a background call says it will still be running after the turn"
send '{"jsonrpc":"2.0","id":"crucible-ask-2","result":{"action":"decline"}}'
is "$(recv)" "$(text_result 2 '[refused: the developer declined to run it; nothing was run]' true)" "declined, it is refused"
stop_mcp

# --- the rules: allow runs unasked, deny refuses, sleeping first refuses ---
mkdir -p "$HOME/.crucible"
printf '{"permissions":{"allow":["Bash(echo *)"],"deny":["Bash(rm *)"]}}' >"$HOME/.crucible/config.json"
start_mcp
initialize
call 1 bash '{"command":"echo by rule"}'
is "$(recv)" "$(text_result 1 'by rule')" "an allow rule runs a call unasked"
call 2 bash '{"command":"echo x && rm -rf ."}'
is "$(recv)" "$(text_result 2 '[refused: the deny rules refuse it (`rm -rf .` matches Bash(rm *)); nothing was run]' true)" \
  "a deny rule refuses a call, naming the command and the rule"
call 3 bash '{"command":"sleep 15 && echo checks"}'
is "$(recv)" "$(text_result 3 '[refused: the command begins by sleeping to wait for a later one, which is a wait written as a command; send the same line with background: true, which costs the turn nothing and comes back with what it printed; nothing was run]' true)" \
  "a call that sleeps to wait for a later command is refused, naming background: true"
call 4 bash '{"command":"sleep 0.1"}'
is "$(recv)" "$(text_result 4 '[refused: this command needs approval, and this MCP client cannot be asked (it did not declare the elicitation capability); allow it in ~/.crucible/config.json (permissions.allow, or permissions.mode fullAccess); nothing was run]' true)" \
  "a bare sleep is not refused as a wait (it is asked about like any other)"
stop_mcp

# --- fullAccess: commands left running, endings, bash_output ---------------
mkdir -p "$HOME/.crucible"
printf '{"permissions":{"mode":"fullAccess"}}' >"$HOME/.crucible/config.json"
start_mcp
initialize
call 1 bash '{"command":"echo hi"}'
is "$(recv)" "$(text_result 1 hi)" "fullAccess runs a call unasked"
call 2 bash '{"command":"npm-not-here run dev","background":true}'
is "$(recv)" "$(text_result 2 'sh: 1: npm-not-here: not found\n[exit status 127]')" \
  "a background call that fails at once comes back as an ordinary result"
call 3 bash '{"command":"echo ready; sleep 1; echo bye; exit 1","description":"starting the dev server","background":true}'
is "$(recv)" "$(text_result 3 "ready\\n\\n$(printf "$left_running_note" 1)")" "background: true is left running after 200 ms"
call 4 bash_output '{"number":1}'
is "$(recv)" "$(text_result 4 'ready\n[#1 is still running]')" "bash_output says what it printed so far"
call 5 bash_output '{"number":9}'
is "$(recv)" "$(text_result 5 '[no command is running as #9; running now: #1 starting the dev server; a command that has ended leaves this list, and what it printed is handed over on its own]')" \
  "bash_output for a number nothing answers to names what is running"
is "$(recv 5)" '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"crucible","data":"✗ starting the dev server ended on its own · exit status 1 · 2 lines"}}' \
  "the ending goes out as a notification the moment it happens"
call 6 bash '{"command":"echo next"}'
is "$(recv)" "$(text_result 6 '[#1 starting the dev server ended on its own · exit status 1 · 2 lines; what it printed:]\nready\nbye\n[exit status 1]\n\nnext')" \
  "the ending is put before the next tool result"
call 7 bash '{"command":"echo again"}'
is "$(recv)" "$(text_result 7 again)" "and told only once"
call 8 bash '{"command":"sleep 5","background":true,"timeout":3}'
is "$(recv)" "$(text_result 8 '[refused: timeout and background were both sent, and a command left running has no deadline; send one or the other; nothing was run]' true)" \
  "timeout with background is refused"
for i in 1 2 3 4; do call "1$i" bash '{"command":"sleep 30.25","background":true}'; recv >/dev/null; done
call 15 bash '{"command":"echo fifth"}'
is "$(recv)" "$(text_result 15 '[refused: 4 commands are already running: #2 Bash(sleep 30.25), #3 Bash(sleep 30.25), #4 Bash(sleep 30.25), #5 Bash(sleep 30.25); that is the most allowed at once (sandbox.limits.concurrency); nothing was run]' true)" \
  "a fifth command is refused, naming the four in the way"
stop_mcp
ok "$(pgrep -f '^sleep 30.25$' >/dev/null && echo 1 || echo 0)" "closing the input ends every command"

# --- crucible mcp dying still ends its commands ----------------------------
start_mcp
initialize
call 1 bash '{"command":"setsid sh -c \"echo \\$\\$ >dying.pid; exec sleep 30\" </dev/null >/dev/null 2>&1 & sleep 30","background":true}'
recv >/dev/null
for _ in $(seq 50); do [ -s dying.pid ] && break; sleep 0.05; done
kill -SEGV "$mcp_pid"
wait "$mcp_pid" 2>/dev/null
wait_gone "$(cat dying.pid)" 3; ok $? "a crash of crucible mcp still ends what its commands started"
