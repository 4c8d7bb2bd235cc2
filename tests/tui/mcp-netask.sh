#!/bin/bash
# A confined MCP server's network question (issue 16): a connection the
# server makes to a name its policy does not allow is asked about as a
# command's is, and the question names the server, not "a command".
# - In the full-screen session: "MCP server `n` wants to reach other.test,
#   which is not allowed", "Allow other.test for this server"; allowed,
#   the connection reaches the origin (200) and the server's next one does
#   too, unasked (the grant is its start's); the next turn's start is
#   asked again, and refused gets the proxy's 403.
# - Through crucible mcp, to a client that declared elicitation: the
#   elicitation's message names the server; accepted, 200.
# The own test server tests/mcp-servers/life_server.py (its tool "sh"),
# confined, as root and as uid 65534, in the test network of netlib.sh.
# Control: unconfined, the same curl reaches other.test.  TAP.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/netlib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

PER_IDENTITY=10
ids=root
can_drop_privileges && ids="root nobody"
n_ids=$(wc -w <<<"$ids")
N=$((n_ids * PER_IDENTITY + 3))
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N

trap 'net_teardown; rm -rf "$TEST_TMP"' EXIT
skip_rest() {
  local i
  for ((i = tap_n; i < N; i++)); do skip "$1" "$2" "$3"; done
  exit 0
}
if [ "$(id -u)" -ne 0 ] || ! can_drop_privileges; then
  skip "a server's network question as root and as uid 65534" \
    "the suite does not run as root with setpriv" unprivileged
else
  ok 0 "a server's network question is tested as root and as uid 65534"
fi
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  skip_rest "a server's network question" \
    "bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")" bwrap
fi
net_setup || skip_rest "the test network" "$NET_WHY" network
ok 0 "the test network is built"

TUI_COLS=160
TUI_ROWS=40
LIFE="$CRUCIBLE_SRCDIR/tests/mcp-servers/life_server.py"
QUESTION='MCP server `n` wants to reach other.test, which is not allowed'
MESSAGE='MCP server `n` wants to reach other.test, which its configuration does not allow (sandbox.network.domains). Allow it for this server only?'
CURL="curl -sS --max-time 90 -o /dev/null -w code=%{http_code} http://other.test/hello.txt"

# become WHO: AS, a workspace WS (the server inside it) and a home H it
# owns whose configuration allows allowed.test and names the server n,
# and D, a directory of its own for tmux and the pane's files.
become() {
  WHO=$1
  AS=()
  [ "$WHO" = nobody ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  D=$(mktemp -d "$TEST_TMP/tui.XXXXXX")
  mkdir -p "$H/.crucible" "$D/tmux" "$WS/.srv"
  chmod 700 "$D/tmux"
  cp "$LIFE" "$WS/.srv/life.py"
  printf '{"sandbox":{"enabled":true,"network":{"domains":["allowed.test"]}},
 "permissions":{"allow":["mcp__n"]},
 "mcpServers":{"n":{"command":"/usr/bin/python3","args":["%s","normal"]}}}\n' \
    "$WS/.srv/life.py" >"$H/.crucible/config.json"
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS" "$H" "$D"
  chmod 755 "$WS" "$H" "$D" "$TEST_TMP"
}

# The session as the identity, in the test network (tests/tui/lib.sh).
tui_net_session

# The crucible mcp client: declares elicitation, calls n's sh with the
# curl, answers the network question with allow true; prints the
# question's message and the call's text.
cat >"$TEST_TMP/client.py" <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def recv():
    line = p.stdout.readline()
    return json.loads(line) if line else None
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "asked", "version": "1"}}})
while (recv() or {"id": 0}).get("id") != 0:
    pass
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "mcp__n__sh", "arguments": {"line": sys.argv[2]}}})
while True:
    m = recv()
    if m is None:
        print("end of output"); break
    if m.get("method") == "elicitation/create":
        print("asked " + m["params"]["message"], flush=True)
        send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "action": "accept", "content": {"allow": True}}})
    elif m.get("id") == 1:
        print("result " + "".join(c.get("text", "") for c in m.get("result", {}).get("content", [])))
        break
p.stdin.close()
print("exit %d" % p.wait(60))
PY

for who in $ids; do
  become "$who"
  ctl=$(cd "$WS" && net_run "${AS[@]}" env -i PATH=/usr/bin:/bin sh -c "$CURL" 2>&1)
  is "$ctl" "code=200" "control ($WHO): unconfined, curl reaches other.test"

  cat >"$SCRIPT" <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"tools"
expect {"type":"prompt","text":"go"}
send {"type":"tool","id":"n1","name":"mcp__n__sh","arguments":{"line":"$CURL"}}
expect {"type":"tool_result","id":"n1"
send {"type":"tool","id":"n2","name":"mcp__n__sh","arguments":{"line":"$CURL"}}
expect {"type":"tool_result","id":"n2"
send {"type":"end_turn"}
expect {"type":"tools"
expect {"type":"prompt","text":"again"}
send {"type":"tool","id":"n3","name":"mcp__n__sh","arguments":{"line":"$CURL"}}
expect {"type":"tool_result","id":"n3"
send {"type":"end_turn"}
EOF2
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter
  tui_wait "$QUESTION" 30
  ok $? "session ($WHO): a confined server's connection to a name not allowed is asked about, naming the server"
  is "$(tui_block "$QUESTION" 7 | sed 's/refused in [0-9]* s/refused in N s/')" "$QUESTION
  its connection waits; refused in N s without an answer

› 1. Allow other.test for this server
  2. Allow other.test always in this workspace
  3. Refuse
enter chooses · esc refuses" "session ($WHO): the panel offers the name for this server"
  tui_keys 1
  result n1 30
  like "$RESULT" 'code=200' "session ($WHO): allowed for this server, its connection reaches the origin (200)"
  result n2 30
  like "$RESULT" 'code=200' "session ($WHO): and its next connection to it, unasked (the grant is this start's)"
  tui_gone "✳ running" 20 >/dev/null
  tui_keys again Enter
  tui_wait "$QUESTION" 30
  ok $? "session ($WHO): the next turn's start of the server is asked again"
  tui_keys Escape
  result n3 30
  like "$RESULT" 'code=403' \
    "session ($WHO): refused, its connection gets the proxy's 403"
  tui_gone "✳ running" 20 >/dev/null
  tui_keys C-d
  for ((i = 0; i < 300; i++)); do [ -s "$D/tui-exit" ] && break; sleep 0.05; done
  if grep -q '^!' "$D/agent.log" 2>/dev/null; then
    ok 1 "session ($WHO): the agent met its script"
    diag "$(cat "$D/agent.log")"
  else
    ok 0 "session ($WHO): the agent met its script"
  fi

  out=$(cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "${AS[@]}" \
    timeout 120 /usr/bin/python3 "$TEST_TMP/client.py" "$CRUCIBLE" "$CURL" 2>&1)
  is "$(sed -n 's/^asked //p' <<<"$out")" "$MESSAGE" \
    "crucible mcp ($WHO): the server's question, put to the client, names the server"
  like "$out" $'\nresult [^\n]*code=200' "crucible mcp ($WHO): accepted, the server's connection reaches the origin (200)"
done

net_teardown
ok $? "net_teardown leaves no process of the test network (the tmux servers included)"
