#!/bin/bash
# crucible mcp against a hostile client (issue 19, F, H and I): ids echoed
# byte for byte, an id that is not UTF-8 answered with id null, a NUL in a
# command or an env name or value refused (and nothing run, with the same
# call without the NUL as the positive control), invalid UTF-8 never sent
# back, and the 30,000-encoded-byte cap held for the whole tool result.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 13
new_workspace
mkdir -p "$HOME/.crucible"
printf '{"permissions":{"mode":"fullAccess","deny":["rm *"]}}\n' \
  >"$HOME/.crucible/config.json"

# mcp LINE...: the server's answers to initialize and then each LINE.
mcp() {
  { printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}' "$@"
    sleep "${MCP_WAIT:-1}"; } |
    "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err" | tail -n +2
}
call() { # call ID ARGS-JSON
  printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"bash","arguments":%s}}' "$1" "$2"
}
NUL_REFUSAL='"error":{"code":-32602,"message":"invalid params: a string in the request holds a NUL character (\\u0000)"}'

is "$(mcp '{"jsonrpc":"2.0","id":"a\u0000b","method":"ping"}' '{"jsonrpc":"2.0","id":"\ud800","method":"ping"}' '{"jsonrpc":"2.0","id": 1.50 ,"method":"ping"}')" \
  '{"jsonrpc":"2.0","id":"a\u0000b","result":{}}
{"jsonrpc":"2.0","id":"\ud800","result":{}}
{"jsonrpc":"2.0","id":1.50,"result":{}}' "ids come back exactly as they were spelled"
is "$(mcp "$(printf '{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}')")" \
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id is not valid UTF-8"}}' \
  "an id that is not UTF-8 is answered with id null"

is "$(mcp "$(call 1 '{"command":"echo A\u0000; touch B"}')")" \
  "{\"jsonrpc\":\"2.0\",\"id\":1,$NUL_REFUSAL}" "a NUL in the command is refused"
ok "$([ ! -e B ] && echo 0 || echo 1)" "and nothing ran"
is "$(mcp "$(call 2 '{"command":"touch C","env":{"A\u0000LD_PRELOAD":"x"}}')")" \
  "{\"jsonrpc\":\"2.0\",\"id\":2,$NUL_REFUSAL}" "a NUL in an env name is refused"
is "$(mcp "$(call 3 '{"command":"touch C","env":{"A":"x\u0000y"}}')")" \
  "{\"jsonrpc\":\"2.0\",\"id\":3,$NUL_REFUSAL}" "a NUL in an env value is refused"
ok "$([ ! -e C ] && echo 0 || echo 1)" "and nothing ran"
is "$(mcp "$(call 4 '{"command":"printf %s \"$A\"; touch D","env":{"A":"xy"}}')")" \
  '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"xy"}],"isError":false}}' \
  "positive control: the same call without the NUL runs"

# Invalid UTF-8 from the client never goes back out raw.
reply=$(mcp "$(call 5 $'{"command":"rm x\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"}')")
like "$reply" 'the deny rules refuse it' "a denied line with invalid UTF-8 is refused"
ok "$(printf '%s' "$reply" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 && echo 0 || echo 1)" \
  "and the refusal quoting it is valid UTF-8"

# The cap holds for the whole result: four endings before a 100 KB result.
text_len() { python3 -c 'import json,sys
for l in sys.stdin:
  m=json.loads(l)
  if m.get("id")==sys.argv[1]: print(len(json.dumps(m["result"]["content"][0]["text"], ensure_ascii=False))-2)' "$1"; }
lines=()
for i in 1 2 3 4; do
  lines+=("$(call "\"b$i\"" "{\"command\":\"sleep 0.3; yes x | head -c 40000\",\"background\":true}")")
done
big=$(call '"f"' "{\"command\":\"yes y | head -c 100000\"}")
# sleep first is refused for a model; wait in the pipe instead.
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}' "${lines[@]:0:4}"; sleep 2; printf "%s\n" "$big"; sleep 1; } | "$CRUCIBLE" mcp 2>/dev/null)
n=$(printf '%s\n' "$out" | text_len f)
ok "$([ -n "$n" ] && [ "$n" -le 30000 ] && echo 0 || echo 1)" "four endings and a 100 KB result keep within 30,000 encoded bytes (got ${n:-none})"
ok "$(printf '%s\n' "$out" | grep '"id":"f"' | grep -q 'y\\ny' && printf '%s\n' "$out" | grep '"id":"f"' | grep -q 'ended on its own' && echo 0 || echo 1)" "and the endings and the result are both in it"

# bash_output of a noisy command: the note after it is inside the cap.
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}' \
  "$(call '"n"' "{\"command\":\"yes z | head -c 200000; sleep 5\",\"background\":true}")"; sleep 1.5
  printf '%s\n' '{"jsonrpc":"2.0","id":"o","method":"tools/call","params":{"name":"bash_output","arguments":{"number":1}}}'; sleep 0.5; } |
  "$CRUCIBLE" mcp 2>/dev/null)
n=$(printf '%s\n' "$out" | text_len o)
ok "$([ -n "$n" ] && [ "$n" -le 30000 ] && echo 0 || echo 1)" "bash_output of a noisy command keeps within 30,000 encoded bytes (got ${n:-none})"
