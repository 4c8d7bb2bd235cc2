#!/bin/bash
# The MCP client (core/mcpclient.c) against a hostile server, through the
# test-only driver tests/helpers/mcp_drive: what a server could send to be
# believed.  The positive control is the same server behaving, whose call
# is answered; each attack must leave the client answering with the real
# result, or failing the connection with a bounded message, never taking
# the forged one, and never hanging.  TAP; no sandbox, no identity (the
# client runs in crucible, whatever the server does is on a pipe).
#
# - spoof: answers with an id never asked, with the initialize's id again,
#   and with the call's id but as a string; then its own request using the
#   call's id; then the real answer.
# - flood: 20,000 elicitation/create requests in front of the answer (no
#   one to ask here: each is refused), then the answer.
# - tools: 5,000 tools in one page (the bound is 1024).
# - names: tool names that cannot be <tool> of mcp__<server>__<tool> ("..",
#   spaces, a slash, 65 characters, UTF-8, empty) are left out by name,
#   the others kept.
# - deep: a result nested 200,000 levels deep.
# - pages: a nextCursor that never ends.
# - burst: a result answered twice (the second for an id then forgotten).
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

DRIVE="$HELPERS/mcp_drive"
N=12
plan $N
if [ ! -x "$DRIVE" ] || ! command -v python3 >/dev/null 2>&1; then
  for i in $(seq $N); do skip "mcp client against a hostile server" "no mcp_drive or python3"; done
  exit 0
fi

cat >"$TEST_TMP/hostile.py" <<'EOF'
import json, sys
MODE = sys.argv[1]

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def raw(b):
    sys.stdout.write(b)
    sys.stdout.flush()

def text(mid, s):
    send({"jsonrpc": "2.0", "id": mid,
          "result": {"content": [{"type": "text", "text": s}], "isError": False}})

init_id = None
for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if method == "initialize":
        init_id = mid
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}}})
    elif method == "tools/list":
        if MODE == "tools":
            tools = [{"name": "t%d" % i} for i in range(5000)]
        elif MODE == "names":
            tools = [{"name": n} for n in ("..", "a b", "x/y", "z" * 65, "\u00e9t\u00e9", "",
                                           "ok-1", "mcp__a__b", "_lead", "z" * 64)]
        else:
            tools = [{"name": "echo"}]
        res = {"tools": tools}
        if MODE == "pages":
            res["nextCursor"] = "again"
        send({"jsonrpc": "2.0", "id": mid, "result": res})
    elif method == "tools/call":
        if MODE == "spoof":
            text(mid + 1000 if isinstance(mid, int) else "never-asked", "FORGED-unknown")
            text(init_id, "FORGED-init")
            text(str(mid) if not isinstance(mid, str) else mid + "x", "FORGED-type")
            send({"jsonrpc": "2.0", "id": mid, "method": "ping"})
        elif MODE == "flood":
            for i in range(20000):
                send({"jsonrpc": "2.0", "id": "e%d" % i, "method": "elicitation/create",
                      "params": {"message": "q%d" % i, "requestedSchema": {"type": "object"}}})
        elif MODE == "deep":
            raw('{"jsonrpc":"2.0","id":%s,"result":%s%s}\n'
                % (json.dumps(mid), "[" * 200000, "]" * 200000))
            continue
        elif MODE == "burst":
            text(mid, "real")
            text(mid, "FORGED-again")
            continue
        text(mid, "real")
EOF

# drive MODE: the driver calling echo over the hostile server in MODE; its
# output in $out, how long it took (ms) in $ms.
drive() {
  local start end
  start=$(date +%s%N)
  out=$(timeout 60 "$DRIVE" --call-ms 20000 --handshake-ms 20000 \
    --call echo '{}' -- python3 "$TEST_TMP/hostile.py" "$1" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  end=$(date +%s%N)
  ms=$(((end - start) / 1000000))
}

drive normal
like "$out" $'call echo ok\nreal\nend' "control: the server behaving, its call is answered"

drive spoof
ok "$([[ "$out" == *$'call echo ok\nreal\nend'* ]] && [[ "$out" != *FORGED* ]] && echo 0 || echo 1)" \
  "answers for an id never asked, for the initialize's, for the call's as a string, and a request of the server's under the call's id: none taken, the real answer is" ||
  diag "$out"

drive flood
ok "$([[ "$out" == *$'call echo ok\nreal\nend'* ]] && [ "$ms" -lt 30000 ] && echo 0 || echo 1)" \
  "20,000 questions in front of the answer are refused, the answer comes ($ms ms)" || diag "rc $rc" "$out"
ok "$([[ "$out" != *elicited* ]] && echo 0 || echo 1)" "and none reached anyone"

drive tools
like "$out" 'failed: MCP server `test`: tools/list: more than 1024 tools' "5,000 tools: the listing fails at the bound" ||
  diag "$out"
ok "$([ "$rc" -lt 128 ] && echo 0 || echo 1)" "and the driver ended by itself (status $rc)"

drive names
ok "$(grep -c '^skipped ' <<<"$out" | grep -qx 6 && echo 0 || echo 1)" \
  "six names that cannot be mcp__<server>__<tool>'s last part are left out, each named" || diag "$out"
ok "$(grep '^tool ' <<<"$out" | sort | tr '\n' ' ' | grep -qx "tool _lead tool mcp__a__b tool ok-1 tool $(printf 'z%.0s' $(seq 64)) " && echo 0 || echo 1)" \
  "the four that can are kept" || diag "$out"

drive deep
ok "$([[ "$out" == *'call echo error: '* ]] && [[ "$out" != *FORGED* ]] && [ "$rc" -lt 128 ] && echo 0 || echo 1)" \
  "a result nested 200,000 deep fails the call, no crash" || diag "rc $rc" "$out"

drive pages
like "$out" 'failed: MCP server `test`: tools/list: more than 64 pages' "a nextCursor that never ends fails at the page bound" ||
  diag "$out"

drive burst
ok "$([[ "$out" == *$'call echo ok\nreal\nend'* ]] && [[ "$out" != *FORGED* ]] && echo 0 || echo 1)" \
  "a second answer under the same id is not taken" || diag "$out"
ok "$([ "$ms" -lt 30000 ] && echo 0 || echo 1)" "and nothing hangs on it ($ms ms)"
