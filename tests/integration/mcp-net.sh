#!/bin/bash
# What a confined MCP server lacked (issue 16): the network its policy
# allows, and the person for its own elicitation/create.  Through crucible
# mcp, in the test network of netlib.sh (no packet leaves its two
# namespaces), confined as root and as uid 65534:
#   - a server's tool reaches allowed.test over HTTP and HTTPS through the
#     host-owned proxy (HTTP(S)_PROXY in its environment, its own proxy
#     credential hidden in the reply's words), and a name its policy does
#     not allow gets the proxy's 403; the journal has the server's network
#     facts under mcp:<server>;
#   - a server's elicitation/create reaches an MCP client that declared
#     elicitation (the official SDK client, which accepts it), and the
#     answer goes back to the server; a client without the capability has
#     it refused.
# Controls: unconfined, the same curl reaches other.test; the one who is
# refused is refused by crucible's proxy (its 403 text), not by a network
# that is not there.  One connection each of the SDK client and of a
# plain client per identity.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/netlib.sh"
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

MODULES="${CRUCIBLE_MCP_SERVERS:-$CRUCIBLE_SRCDIR/tests/mcp-servers}/node_modules"
CLIENT="$CRUCIBLE_SRCDIR/tests/helpers/mcp_sdk_client.cjs"
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
PER_IDENTITY=13
ids=root
can_drop_privileges && ids="root nobody"
N=$((2 * PER_IDENTITY + 2))
plan $N

trap 'net_teardown; rm -rf "$TEST_TMP"' EXIT
skip_rest() {
  local i
  for ((i = tap_n; i < N; i++)); do skip "$1" "$2" "$3"; done
  exit 0
}
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  skip_rest "a confined MCP server's network" \
    "bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")" bwrap
fi
if ! command -v node >/dev/null 2>&1 || [ ! -f "$MODULES/@modelcontextprotocol/sdk/package.json" ]; then
  skip_rest "a confined MCP server's network" \
    "no node or no SDK in $MODULES (run tools/deps.sh mcp_test_servers)" mcp-servers
fi
t0=$EPOCHREALTIME
net_setup || skip_rest "the test network" "$NET_WHY" network
diag "the test network: $(echo "$EPOCHREALTIME - $t0" | bc) s"
ok 0 "the test network is built"

REFUSAL="crucible refused the connection to other\.test: it is not among the domains"
ASKED='The MCP server `a` asks: \|  \| Pick one'

# The plain client: no elicitation capability; one call of each tool.
cat >"$TEST_TMP/plain.py" <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def until(i):
    while True:
        line = p.stdout.readline()
        if not line:
            return None
        m = json.loads(line)
        if m.get("id") == i and "method" not in m:
            return m
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "plain", "version": "1"}}})
until(0)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
calls = [("mcp__t__sh", {"line": sys.argv[2]}), ("mcp__a__ask", {})]
for i, (name, args) in enumerate(calls, 1):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
          "params": {"name": name, "arguments": args}})
    m = until(i) or {}
    text = "".join(c.get("text", "") for c in m.get("result", {}).get("content", []))
    print("call %s\n%s\nend" % (name, text or json.dumps(m)), flush=True)
p.stdin.close()
print("exit %d" % p.wait(60))
PY

# become WHO: AS, a workspace WS (the test server and the CA inside, since
# a confined server sees only the workspace) and a home H it owns, whose
# configuration allows allowed.test and names the two servers.
become() {
  WHO=$1
  AS=()
  [ "$WHO" = nobody ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible" "$WS/.srv"
  cp "$SERVER" "$WS/.srv/srv.py"
  cp "$NET_CA" "$WS/.srv/ca.pem"
  printf '{"sandbox":{"enabled":true,"network":{"domains":["allowed.test"]}},
 "permissions":{"allow":["mcp__t","mcp__a"]},
 "mcpServers":{"t":{"command":"/usr/bin/python3","args":["%s","host"]},
  "a":{"command":"/usr/bin/python3","args":["%s","asks"]}}}\n' \
    "$WS/.srv/srv.py" "$WS/.srv/srv.py" >"$H/.crucible/config.json"
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS" "$H"
  chmod 755 "$WS" "$H" "$TEST_TMP"
}

# in_net CMD...: CMD in the inner namespace, in WS, as the identity.
in_net() {
  (cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
    NODE_PATH="$MODULES" "${AS[@]}" "$@")
}

CURL_OK="curl -sS --max-time 30 http://allowed.test/hello.txt; \
curl -sS --max-time 30 --cacert .srv/ca.pem https://allowed.test/hello.txt; \
echo \"proxy=\$HTTPS_PROXY\""
CURL_NO="curl -sS --max-time 30 -w '\n%{http_code}\n' http://other.test/hello.txt"

for who in $ids; do
  become "$who"
  ctl=$(in_net sh -c "$CURL_NO" 2>&1)
  like "$ctl" "^$NET_HELLO"$'\n+200' "control ($WHO): unconfined, curl reaches other.test"

  # The SDK client accepts every elicitation: the server's own is
  # forwarded to it.
  t0=$EPOCHREALTIME
  out=$(in_net timeout 120 node "$CLIENT" "$CRUCIBLE" --elicit accept list \
    call mcp__t__sh "$(python3 -c 'import json,sys; print(json.dumps({"line": sys.argv[1]}))' "$CURL_OK")" \
    call mcp__a__ask '{}' 2>&1)
  diag "($WHO) the SDK client's connection: $(echo "$EPOCHREALTIME - $t0" | bc) s"
  like "$out" $'call mcp__t__sh ok\n'"$NET_HELLO"$'\n'"$NET_HELLO"$'\n' \
    "($WHO) a confined server's tool reaches an allowed name over HTTP and HTTPS"
  like "$out" 'proxy=http://crucible:\*{32}@127\.0\.0\.1:3128' \
    "($WHO) its environment names the proxy, its credential hidden in the reply"
  [[ $out =~ proxy=http://crucible:[0-9a-f]{32}@ ]]
  ok $((!$?)) "($WHO) the proxy credential itself never reaches the client"
  like "$out" "elicited $ASKED" \
    "($WHO) the server's elicitation/create is put to the MCP client, saying which server asks"
  like "$out" $'call mcp__a__ask ok\n.*"elicitation": \\{"action": "accept", "content": \\{"allow": true\\}\\}' \
    "($WHO) the client's answer (accept, its content) goes back to the server"
  like "$out" '"sampling": -32601' "($WHO) sampling is still refused"
  like "$out" $'\nexit 0' "($WHO) crucible mcp ends with the connection"

  j=$(ls -t "$H"/.local/state/crucible/*.jsonl 2>/dev/null | head -1)
  facts=$(python3 - "$j" <<'EOF'
import json, sys
for l in open(sys.argv[1]).read().splitlines():
    f = json.loads(l)
    if f.get("fact") == "network" and f.get("identity", "").startswith("mcp:"):
        print(f["identity"], f.get("event"), f.get("allowed", "-"), f.get("refused", "-"), "sandbox" in f)
EOF
)
  like "$facts" 'mcp:t ended 2 0 True' \
    "($WHO) the journal counts the server's connections under mcp:t with its sandbox ID"

  t0=$EPOCHREALTIME
  out=$(in_net timeout 120 python3 "$TEST_TMP/plain.py" "$CRUCIBLE" "$CURL_NO" 2>&1)
  diag "($WHO) the plain client's connection: $(echo "$EPOCHREALTIME - $t0" | bc) s"
  like "$out" "$REFUSAL.*"$'\n403\n' \
    "($WHO) a name the server's policy does not allow gets the proxy's 403"
  like "$out" '"elicitation": \{"code": -32601, "message": "elicitation is not offered' \
    "($WHO) a client without the elicitation capability: the server's question is refused"
  like "$out" $'\nexit 0' "($WHO) crucible mcp (the plain client) ends with the connection"
  facts=$(python3 - "$(ls -t "$H"/.local/state/crucible/*.jsonl | head -1)" <<'EOF'
import json, sys
for l in open(sys.argv[1]).read().splitlines():
    f = json.loads(l)
    if f.get("fact") == "network" and f.get("identity") == "mcp:t":
        print(f.get("event"), f.get("class", "-"))
EOF
)
  like "$facts" 'refused name' "($WHO) the refusal is a network fact of mcp:t, by its class only"
done
if [ "$ids" = root ]; then
  for ((i = 0; i < PER_IDENTITY; i++)); do
    skip "as uid 65534" "cannot take uid 65534 (needs root and setpriv)" unprivileged
  done
fi

net_teardown
ok $? "net_teardown leaves no process of the test network"
