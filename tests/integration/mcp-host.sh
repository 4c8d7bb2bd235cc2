#!/bin/bash
# The MCP servers' lifecycle (core/mcphost.c) through `crucible mcp`, spoken
# to by the official MCP SDK client (tests/helpers/mcp_sdk_client.cjs over
# @modelcontextprotocol/sdk, pinned in tests/mcp-servers with the servers):
# crucible's own test server (tests/helpers/mcp_test_server.py) for the
# paths real servers cannot be made to take, and server-filesystem and
# server-everything from the npm registry.  Three ways: unconfined (the
# compatibility backend, which is also the positive control of the escape
# attempt), confined as root and confined as uid 65534.
#
# Each way starts crucible mcp four times (two only unconfined): the own
# servers, the real servers, a stop, and a root changed under a server.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"

MODULES="${CRUCIBLE_MCP_SERVERS:-$CRUCIBLE_SRCDIR/tests/mcp-servers}/node_modules"
CLIENT="$CRUCIBLE_SRCDIR/tests/helpers/mcp_sdk_client.cjs"
SERVER="$CRUCIBLE_SRCDIR/tests/helpers/mcp_test_server.py"
SECRET=tok-mcp-7f3a9c
N_OWN=26
N_REAL=9
N_CONFINED=11
N_WAY=$((N_OWN + N_REAL + N_CONFINED))
plan $((3 * N_WAY))

# skip_way N WHY [REQUIREMENT]: skip N checks, saying why.
skip_way() {
  for ((i = 0; i < $1; i++)); do skip "mcp host ($way) case" "$2" "${3:-}"; done
}

# The confined ways need a usable bwrap that gives a workload its own
# standard streams; sandbox_run --probe says whether bwrap is usable.
confined_reason() {
  local probe run="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
  [ -x "$run" ] || { echo "no $run (make check installs it)"; return; }
  probe=$(PATH=/usr/bin:/bin "$run" --probe 2>&1) ||
    echo "bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
}

# Set up a way: HOMEDIR, WS (with the own server and the real servers'
# modules inside it, since a confined server sees only the workspace),
# OUTSIDE (a file outside every root), AS (the identity prefix).
setup_way() {
  way=$1
  AS=()
  HOMEDIR="$TEST_TMP/home-$way"
  WS="$TEST_TMP/ws-$way"
  OUTSIDE="$TEST_TMP/outside-$way.txt"
  mkdir -p "$HOMEDIR/.crucible" "$WS/.srv"
  cp "$SERVER" "$WS/.srv/mcp_test_server.py"
  cp -r --no-preserve=ownership "$MODULES" "$WS/.srv/node_modules"
  echo "outside-content-$way" >"$OUTSIDE"
  if [ "$way" = nobody ]; then
    AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    chown -R 65534:65534 "$HOMEDIR" "$WS"
    chmod 755 "$TEST_TMP"
  fi
  chmod 755 "$WS"
}

# config JSON: the home configuration of the way.
config() {
  printf '%s\n' "$1" >"$HOMEDIR/.crucible/config.json"
  [ "$way" = nobody ] && chown 65534:65534 "$HOMEDIR/.crucible/config.json"
  return 0
}

# client STEPS...: crucible mcp through the SDK client as the identity;
# its lines in $out, the newest journal's facts of MCP servers in $facts.
client() {
  local t0=$EPOCHREALTIME
  out=$(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" \
    MYSECRET="$SECRET" CRUCIBLE_MCP_HANDSHAKE_MS="${HANDSHAKE_MS:-60000}" \
    NODE_PATH="$MODULES" \
    "${AS[@]}" timeout 150 node "$CLIENT" "$CRUCIBLE" "$@" 2>&1)
  [ -n "${MCP_HOST_DEBUG:-}" ] && diag "client $way: $(echo "$EPOCHREALTIME - $t0" | bc) s"
  local j
  j=$(ls -t "$HOMEDIR"/.local/state/crucible/*.jsonl 2>/dev/null | head -1)
  journal=$(cat "$j" 2>/dev/null)
  facts=$(python3 - "$j" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for l in lines:
    f = json.loads(l)
    if "identity" not in f:
        continue
    rest = " ".join("%s=%s" % (k, f[k]) for k in ("event", "outcome", "status", "reason") if k in f)
    print(f["identity"], f["fact"], f.get("sandbox", "-"), rest)
EOF
)
}

# sandboxes IDENTITY: the sandbox IDs of a server's policy facts, in order.
sandboxes() { awk -v id="$1" '$1 == id && $2 == "policy" { print $3 }' <<<"$facts"; }

# cleaned_before_next IDENTITY: whether the first sandbox's cleanup fact
# comes before the second sandbox's policy fact.
cleaned_before_next() {
  local ids first second
  ids=($(sandboxes "$1"))
  [ "${#ids[@]}" -ge 2 ] || return 1
  first=${ids[0]} second=${ids[1]}
  awk -v id="$1" -v a="$first" -v b="$second" '
    $1 == id && $2 == "cleanup" && $3 == a { seen = 1 }
    $1 == id && $2 == "policy" && $3 == b { exit !seen }' <<<"$facts"
}

# --- the own test server ----------------------------------------------
own_cases() {
  # The killed server is found by a mark in its arguments, spelt in the
  # pattern so that it does not match the step that holds the pattern.
  local enabled=$1 srv="$WS/.srv/mcp_test_server.py" mark="k-$way-$$"
  config "$(printf '{"sandbox":{"enabled":%s,"credentials":{"MCP_TEST_SECRET":{"env":"MYSECRET"}}},
 "permissions":{"allow":["mcp__t","mcp__k","mcp__crash"],"deny":["mcp__t__ask"]},
 "mcpServers":{
  "t":{"command":"/usr/bin/python3","args":["%s","host"],"env":{"MCP_TEST_STDERR_SECRET":"1"},"credentials":["MCP_TEST_SECRET"]},
  "k":{"command":"/usr/bin/python3","args":["%s","normal","%s"]},
  "crash":{"command":"/usr/bin/python3","args":["%s","exit-mid-call"]},
  "bad":{"command":"/usr/bin/python3","args":["%s","garbage"],"optional":true},
  "hang":{"command":"/usr/bin/python3","args":["%s","hang-handshake"],"optional":true},
  "big":{"command":"/usr/bin/python3","args":["%s","oversized","4300000"],"optional":true}}}' \
    "$enabled" "$srv" "$srv" "$mark" "$srv" "$srv" "$srv" "$srv")"
  # The hanging server's handshake is bounded shorter than usual.
  HANDSHAKE_MS=10000 client list \
    call mcp__t__echo '{"text":"hi from t"}' \
    call mcp__t__secret '{}' \
    call mcp__t__ask '{}' \
    call mcp__t__sh "{\"line\":\"echo made > made.txt; cat $OUTSIDE\"}" \
    exec "cat '$WS/made.txt' 2>/dev/null || echo absent" \
    call mcp__t__grow '{}' wait-changed \
    call mcp__t__grown '{}' \
    call mcp__crash__echo '{"text":"x"}' sleep 1000 list \
    exec "k=\$(pgrep -f '^/usr/bin/python3 .*[k]-$way-$$'); kill -9 \$k && echo killed; for i in \$(seq 300); do n=\$(pgrep -f '^/usr/bin/python3 .*[k]-$way-$$'); [ -n \"\$n\" ] && [ \"\$n\" != \"\$k\" ] && break; sleep 0.1; done" \
    wait-tool mcp__k__echo \
    call mcp__k__echo '{"text":"after the kill"}'
  local listed=$(grep -c '^tool mcp__t__echo$' <<<"$out")
  like "$out" $'\ntool mcp__t__echo\n(.*\n)?tool mcp__t__sh\n' "$way: the own server's tools are listed as mcp__t__<tool> to the SDK client"
  like "$out" $'call mcp__t__echo ok\nhi from t\nend' "$way: a call of mcp__t__echo answers through crucible"
  like "$out" 'call mcp__t__secret ok'$'\n''plain \*{14} escaped \*{14}' "$way: a credential in a reply's words is hidden, escaped or not"
  like "$out" 'stderr: crucible: mcp:t: starting with token \*{14}' "$way: a credential in the server's stderr is masked"
  ok "$([[ "$out$journal" != *"$SECRET"* ]] && echo 0 || echo 1)" "$way: the value appears nowhere in what the client, crucible's stderr or the journal got"
  like "$out" 'call mcp__t__ask is_error'$'\n''\[refused: a deny rule in your configuration forbids it \(mcp__t__ask\)' "$way: a deny rule refuses a tool"
  like "$out" $'list_changed\n(.*\n)*elicited Allow this MCP tool call\\? \\|  \\| mcp__t__grown \\{\\} \\|  \\| The server added this tool after its first listing\\.' "$way: list_changed is forwarded and the new tool is asked about though mcp__t allows the first listing"
  like "$out" 'call mcp__t__grown is_error'$'\n''\[refused: the developer declined' "$way: declined, the new tool is not called"
  like "$out" 'call mcp__crash__echo is_error'$'\n''MCP server `crash`' "$way: a server exiting mid-call fails the call"
  ok "$([ "$(sandboxes mcp:crash | sort -u | wc -l)" -ge 2 ] && echo 0 || echo 1)" "$way: the server that exited is restarted with a new sandbox ID"
  ok "$(cleaned_before_next mcp:crash && echo 0 || echo 1)" "$way: its restart comes after its cleanup was confirmed"
  like "$out" 'exec: killed' "$way: a server is killed from outside"
  like "$out" $'call mcp__k__echo ok\nafter the kill\nend' "$way: the server killed from outside answers again after its restart"
  ok "$(cleaned_before_next mcp:k && echo 0 || echo 1)" "$way: and the restart came after the killed scope's cleanup was confirmed"
  like "$facts" 'mcp:k finish [0-9a-f]{16} outcome=signaled status=9' "$way: the kill is in the journal"
  like "$out" 'stderr: crucible: MCP server `bad` is skipped: its start failed \(it is optional\)' "$way: an optional server whose handshake fails (garbage) is skipped"
  like "$out" 'stderr: crucible: MCP server `hang` is skipped' "$way: one whose handshake hangs is skipped after the bound"
  like "$out" 'stderr: crucible: MCP server `big`: .*longer than' "$way: one whose answer is an oversized frame fails"
  ok "$(for s in bad hang big; do id=$(sandboxes mcp:$s | head -1); grep -q "^mcp:$s cleanup $id" <<<"$facts" || exit 1; done && echo 0 || echo 1)" \
    "$way: each failed handshake's scope is cleaned up (journal)"
  ok "$([[ "$out" != *"tool mcp__bad__"* && "$out" != *"tool mcp__hang__"* && "$out" != *"tool mcp__big__"* ]] && echo 0 || echo 1)" "$way: skipped servers offer no tools"
  ok "$(awk 'NF < 3 || length($3) != 16 || $3 ~ /[^0-9a-f]/ { bad = 1 } END { exit bad }' <<<"$facts" && [ -n "$facts" ] && echo 0 || echo 1)" \
    "$way: every fact of a server carries mcp:<server> and its sandbox ID"
  [ -n "${MCP_HOST_DEBUG:-}" ] && diag "$facts"
  like "$out" $'\nexit 0$' "$way: the connection ends cleanly"
  if [ "$enabled" = true ]; then
    like "$out" 'exec: absent' "$way: a server's write is invisible in the workspace while it runs"
    is "$(cat "$WS/made.txt" 2>/dev/null)" made "$way: and published when it exits at the end of the run"
    like "$out" "outside-$way.txt: No such file" "$way: confined, the server cannot read a file outside the workspace (an escape attempt fails as from a command)"
    like "$journal" '"fact":"policy","sandbox":"[0-9a-f]+","identity":"mcp:t","backend":"linux-bubblewrap","mode":"confined"' "$way: the journal says the server ran confined"
  else
    like "$out" 'exec: made' "$way: unconfined, a server's write is in place at once"
    like "$out" "outside-content-$way" "$way: unconfined, the server reads a file outside the workspace (the escape attempt's positive control)"
    ok "$([[ "$out" != *"No such file"* ]] && echo 0 || echo 1)" "$way: and nothing it asked for was missing"
    like "$journal" '"fact":"policy","sandbox":"[0-9a-f]+","identity":"mcp:t","backend":"compat","mode":"unconfined"' "$way: the journal says the server ran unconfined"
  fi
}

# --- server-filesystem and server-everything --------------------------
real_cases() {
  local enabled=$1 m="$WS/.srv/node_modules/@modelcontextprotocol"
  config "$(printf '{"sandbox":{"enabled":%s,"credentials":{"MCP_TEST_SECRET":{"env":"MYSECRET"}}},
 "permissions":{"allow":["mcp__fs","mcp__every"]},
 "mcpServers":{
  "fs":{"command":"/usr/bin/node","args":["%s/server-filesystem/dist/index.js","%s"]},
  "every":{"command":"/usr/bin/node","args":["%s/server-everything/dist/index.js","stdio"],"credentials":["MCP_TEST_SECRET"]}}}' \
    "$enabled" "$m" "$WS" "$m")"
  client list \
    call mcp__every__echo '{"message":"hello real"}' \
    call mcp__every__get-env '{}' \
    call mcp__fs__write_file "{\"path\":\"$WS/fs.txt\",\"content\":\"from fs\"}" \
    exec "cat '$WS/fs.txt' 2>/dev/null || echo absent" \
    call mcp__fs__read_text_file "{\"path\":\"$OUTSIDE\"}"
  like "$out" $'\ntool mcp__fs__write_file\n' "$way: server-filesystem's tools are listed"
  like "$out" $'\ntool mcp__every__echo\n' "$way: server-everything's tools are listed"
  like "$out" $'call mcp__every__echo ok\nEcho: hello real' "$way: server-everything answers a call"
  like "$out" '"MCP_TEST_SECRET": "\*{14}"' "$way: its reply's credential is hidden"
  like "$out" 'call mcp__fs__write_file ok' "$way: server-filesystem writes a file"
  like "$out" 'call mcp__fs__read_text_file is_error' "$way: a path outside its roots is refused by the server itself"
  like "$out" $'\nexit 0$' "$way: the connection ends cleanly"
  is "$(cat "$WS/fs.txt" 2>/dev/null)" "from fs" "$way: the write is in the workspace after the run"
  if [ "$enabled" = true ]; then
    like "$out" 'exec: absent' "$way: invisible while the server ran"
  else
    like "$out" 'exec: from fs' "$way: unconfined, in place at once"
  fi
}

# --- confined only: a stop discards, a changed root fails the disposal ---
confined_cases() {
  client call mcp__fs__write_file "{\"path\":\"$WS/stop.txt\",\"content\":\"x\"}" kill
  like "$out" $'\nexit 143$' "$way: crucible mcp stopped by SIGTERM"
  ok "$([ ! -e "$WS/stop.txt" ] && echo 0 || echo 1)" "$way: a stop discards the server's write"
  like "$facts" 'mcp:fs publication [0-9a-f]{16} outcome=discarded' "$way: the journal says it was discarded"

  client call mcp__fs__write_file "{\"path\":\"$WS/r1.txt\",\"content\":\"x\"}" \
    exec "echo other > '$WS/r2.txt' && echo changed"
  like "$out" 'stderr: crucible: MCP server `fs`: disposing of it failed: \[published nothing' "$way: a root changed while the server ran fails its disposal with the reason"
  like "$out" $'\nexit 1$' "$way: and crucible mcp's exit says so"
  ok "$([ ! -e "$WS/r1.txt" ] && echo 0 || echo 1)" "$way: nothing of it was published"
  like "$facts" 'mcp:fs publication [0-9a-f]{16} outcome=refused' "$way: the journal says it was refused"

  # A server that exits on its own after writing into a root that changed
  # meanwhile: its restart fails with the reason, and no replacement runs.
  config "$(printf '{"sandbox":{"enabled":true},"permissions":{"allow":["mcp__t"]},
 "mcpServers":{"t":{"command":"/usr/bin/python3","args":["%s","host"]}}}' "$WS/.srv/mcp_test_server.py")"
  client call mcp__t__sh '{"line":"echo q > q.txt"}'     exec "echo other > '$WS/r3.txt' && echo changed"     call mcp__t__quit '{}' sleep 1000 list
  like "$out" 'stderr: crucible: MCP server `t`: restarting it failed: \[published nothing' "$way: a root changed under a server that exited fails its restart with the reason"
  ok "$([[ "$out" != *"tool mcp__t__"* ]] && echo 0 || echo 1)" "$way: no replacement is started behind it (its tools are gone)"
  is "$(sandboxes mcp:t | wc -l)" 1 "$way: and the journal has one preparation of it"
  ok "$([ ! -e "$WS/q.txt" ] && echo 0 || echo 1)" "$way: nothing of it was published"
}

if ! command -v node >/dev/null 2>&1 || [ ! -f "$MODULES/@modelcontextprotocol/sdk/package.json" ] \
   || [ ! -f "$MODULES/@modelcontextprotocol/server-filesystem/package.json" ]; then
  way=all
  skip_way $((3 * N_WAY)) "no node or no SDK and servers in $MODULES (run tools/deps.sh mcp_test_servers)" mcp-servers
  exit 0
fi

setup_way unconfined
own_cases false
real_cases false
skip_way $N_CONFINED "a stop and a changed root are about confined writes"

why=$(confined_reason)
for w in root nobody; do
  if [ -n "$why" ]; then
    way=$w
    skip_way $N_WAY "$why" bwrap
    continue
  fi
  if [ "$w" = nobody ] && ! can_drop_privileges; then
    way=$w
    skip_way $N_WAY "cannot take uid 65534 (needs root and setpriv)" unprivileged
    continue
  fi
  setup_way $w
  own_cases true
  real_cases true
  confined_cases
done
