#!/bin/bash
# Credentials (sandbox.credentials, issue 14) through crucible run,
# unconfined and confined, as root and as uid 65534: a value is in the
# command's environment and masked wherever its exact bytes are printed
# (env, two writes with a pause between, cut by the ceiling, by a stop, and
# across the head/tail split, with the byte counts unchanged); it is in no
# /proc/*/cmdline, journal, state directory or inspection report; a call
# naming its variable, a group-readable or symlinked file, and a project
# adding one are refused; a "commands" limit and a project's
# withheldCredentials withhold it, and the result says so; a command left
# running shows it masked in its early answer, bash_output and ending note.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/security/lib.sh"

PER=18
modes=("unconfined root")
can_drop_privileges && modes+=("unconfined nobody")
confined_ok=1
sec_usable && confined_ok=0
for who in $(sec_identities); do
  [ "$who" = self ] && who=root
  modes+=("confined $who")
done
extra=0
can_drop_privileges || extra=1
plan $((${#modes[@]} * PER + 5 + extra))
[ "$extra" = 0 ] || skip "credentials as uid 65534" "needs root and setpriv" unprivileged

VAL_ENV=Zq9Kx7Wv3Lp2Mn8RtY   # 18 bytes, from crucible's environment
VAL_FILE=Hb4Gt6Rc1Xs5Jd0Pq   # 17 bytes, from a file (with a newline)
VAL_LIM=Lm3Nb5Vc7Xz9Qw1Er    # 17 bytes, limited by "commands"
PATTERNS="$TEST_TMP/patterns"
printf '%s\n' "$VAL_ENV" "$VAL_FILE" "$VAL_LIM" >"$PATTERNS"
sum() { printf %s "$1" | sha256sum | cut -c1-64; }

# setup MODE WHO: a HOME and workspace the identity owns, its config.
setup() {
  local enabled=false
  [ "$1" = confined ] && enabled=true
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  mkdir -p "$H/.crucible" "$H/keys"
  printf '%s\n' "$VAL_FILE" >"$H/keys/npm"
  printf '%s\n' "$VAL_LIM" >"$H/keys/lim"
  chmod 600 "$H/keys/npm" "$H/keys/lim"
  chmod 700 "$H/keys"
  CONFIG=$(printf '{"sandbox":{"enabled":%s,"limits":{"outputBytes":100000},"credentials":{"GH_TOKEN":{"env":"MYSECRET"},"NPM_TOKEN":{"file":"%s"},"LIM_TOKEN":{"file":"%s","commands":["Bash(printenv LIM_TOKEN)"]}}}}' \
    "$enabled" "$H/keys/npm" "$H/keys/lim")
  printf '%s\n' "$CONFIG" >"$H/.crucible/config.json"
  [ "$2" = nobody ] && chown -R 65534:65534 "$H" "$WS"
  chmod 755 "$H" "$WS"
}

# cr ARGS...: crucible as the identity in WS, with MYSECRET in its
# environment; $out, $err, $rc as crun sets them.
cr() {
  out=$(cd "$WS" && "${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$H" \
    MYSECRET="$VAL_ENV" "$CRUCIBLE" "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

# no_value TEXT: 0 when no value, nor the first 4 bytes of one, is in it.
no_value() {
  case "$1" in *Zq9K* | *Hb4G* | *Lm3N* | *"$VAL_ENV"* | *"$VAL_FILE"*) echo 1 ;; *) echo 0 ;; esac
}

# checks MODE WHO: the PER checks of one mode and identity.
checks() {
  local m="$1 as $2" stars18 stars17 files
  stars18=$(printf '%*s' 18 '' | tr ' ' '*')
  stars17=$(printf '%*s' 17 '' | tr ' ' '*')
  setup "$1" "$2"

  cr run -- 'echo "$(printf %s "$GH_TOKEN" | sha256sum | cut -c1-64) $(printf %s "$NPM_TOKEN" | sha256sum | cut -c1-64)"'
  is "$rc:$out" "0:$(sum "$VAL_ENV") $(sum "$VAL_FILE")
[credentials withheld: LIM_TOKEN (the line runs a program its \"commands\" do not list)]" \
    "$m: both values are in the command's environment, exactly (one newline removed from the file's)"

  cr run -- 'env | grep _TOKEN= | sort'
  is "$rc:$out" "0:GH_TOKEN=$stars18
NPM_TOKEN=$stars17
[credentials withheld: LIM_TOKEN (the line runs a program its \"commands\" do not list)]" \
    "$m: env shows each value as one * per byte"

  cr run -- 'printf %s "${GH_TOKEN%?????????}"; sleep 0.3; printf "%s\n" "${GH_TOKEN#?????????}"'
  is "$rc:${out%%$'\n'*}" "0:$stars18" "$m: a value printed in two writes with a pause between is masked"

  cr run -- 'head -c 99990 /dev/zero | tr "\0" a; printf %s "$GH_TOKEN"; sleep 5'
  # 99,990 bytes and the value's 18 arrive; the ceiling keeps 10 of its
  # bytes, shown as 10 *s, and the count is of the raw bytes.
  ok "$([ "$(no_value "$out")" = 0 ] &&
    [[ "$out" == *'**********'$'\n''[stopped: the command printed more than 100000 bytes, the output ceiling (sandbox.limits.outputBytes)]'$'\n''[credentials withheld: '* ]] &&
    [[ "$out" =~ \[process\ output\ was\ 100008\ bytes\;\ [0-9]+\ bytes\ omitted ]] &&
    echo 0 || echo 1)" \
    "$m: a value cut by the output ceiling shows none of its bytes, and the counts are the raw ones"

  cr run --timeout 1 -- 'printf %s "${NPM_TOKEN%??}"; sleep 10'
  is "$rc:$out" "124:${stars17%??}
[stopped: the command ran too long]
[credentials withheld: LIM_TOKEN (the line runs a program its \"commands\" do not list)]" \
    "$m: a value cut by a stop is masked up to the cut"

  cr run -- 'head -c 14868 /dev/zero | tr "\0" a; printf %s "$GH_TOKEN"; head -c 40000 /dev/zero | tr "\0" b'
  ok "$([ "$rc" = 0 ] && [ "$(no_value "$out")" = 0 ] &&
    [[ "$out" == *'aaaa****'$'\n''[process output was 54886 bytes; 25142 bytes omitted from the middle during capture]'$'\n''bbbb'* ]] &&
    echo 0 || echo 1)" "$m: a value straddling the head/tail split is masked, the counts unchanged"
  [ "$rc" = 0 ] || diag "rc $rc" "${out:14860:200}"

  # While a command holds both values, no process has one in its argv
  # (the patterns are read from a file, so grep's own argv has none).
  (cr run -- 'sleep 1.5') &
  local bg=$!
  sleep 0.8
  local found
  found=$(grep -l -a -F -f "$PATTERNS" /proc/[0-9]*/cmdline 2>/dev/null || true)
  wait "$bg"
  is "$found" "" "$m: no /proc/*/cmdline holds a value"

  # The journal (under HOME) and, confined, the backend's state directory
  # (sandbox/statedir.h: /var/tmp, per uid, shared with other sessions).
  local dirs=("$H/.local") uid=0
  [ "$2" = nobody ] && uid=65534
  [ "$1" = confined ] && dirs+=("/var/tmp/crucible-code-sandbox-$uid-v1")
  files=$(find "${dirs[@]}" -type f 2>/dev/null | wc -l)
  found=$(grep -r -l -a -F -e "$VAL_ENV" -e "$VAL_FILE" "${dirs[@]}" 2>/dev/null
    grep -r -l -a -E 'cred-[0-9a-f]{16}' "${dirs[@]}" 2>/dev/null)
  ok "$([ "$files" -gt 0 ] && [ -z "$found" ] && [ -d "${dirs[-1]}" ] && echo 0 || echo 1)" \
    "$m: the journal and the state directory ($files files) hold no value or handle"
  [ -z "$found" ] || diag "found in: $found"

  cr sandbox inspect
  ok "$([ "$(no_value "$out")" = 0 ] && [[ "$out" != *cred-* && "$out" == *$'\n''  credentials 3, masked in output'$'\n'* ]] && echo 0 || echo 1)" \
    "$m: inspect shows the count, never a value"
  cr sandbox inspect --json
  ok "$([ "$(no_value "$out")" = 0 ] && [[ "$out" != *cred-* && "$out" != *_TOKEN* && "$out" == *'"credentials":3,'* ]] && echo 0 || echo 1)" \
    "$m: inspect --json has the count, never a value or a name"

  cr run -- 'printenv LIM_TOKEN'
  is "$rc:$out" "0:$stars17" "$m: a rule-limited credential reaches a matching line"
  cr run -- 'echo x; printenv LIM_TOKEN'
  is "$rc:$out" '1:x
[exit status 1]
[credentials withheld: LIM_TOKEN (the line runs a program its "commands" do not list)]' \
    "$m: another line does not get it, and its result names it as withheld"

  cr run --env GH_TOKEN=mine -- 'echo ran'
  is "$rc:$out" "125:[refused: environment variable GH_TOKEN is a credential's (sandbox.credentials): the call may not set it; nothing was run]" \
    "$m: --env naming a credential's variable is refused"

  chmod 640 "$H/keys/npm"
  cr run -- 'echo ran'
  is "$rc:$out" "125:[refused: credential NPM_TOKEN: its file's mode is 0640, which lets others than you read or change it; chmod 600 it; nothing was run]" \
    "$m: a group-readable credential file is refused, saying which check failed"
  chmod 600 "$H/keys/npm"
  mv "$H/keys/npm" "$H/keys/npm.real"
  ln -s npm.real "$H/keys/npm"
  cr run -- 'echo ran'
  is "$rc:$out" "125:[refused: credential NPM_TOKEN: its file is a symbolic link, which is not followed; nothing was run]" \
    "$m: a symlinked credential file is refused"
  rm "$H/keys/npm"
  mv "$H/keys/npm.real" "$H/keys/npm"
  cr run -- 'echo ran'
  is "$rc:${out%%$'\n'*}" "0:ran" "$m: positive control: the same file, regular and 0600, is read"

  mkdir -p "$WS/.crucible"
  printf '{"sandbox":{"credentials":{"EVIL":{"env":"MYSECRET"}}}}\n' >"$WS/.crucible/config.json"
  cr run -- 'echo "$EVIL"'
  is "$rc:$out|$err" "125:|crucible: $WS/.crucible/config.json:1: sandbox.credentials: may only be set in the home configuration (~/.crucible/config.json), not in a project" \
    "$m: a project file cannot add a credential"
  printf '{"sandbox":{"withheldCredentials":["GH_TOKEN"]}}\n' >"$WS/.crucible/config.json"
  cr run -- 'echo "[$GH_TOKEN]"'
  is "$rc:$out" '0:[]
[credentials withheld: GH_TOKEN (sandbox.withheldCredentials names it); LIM_TOKEN (the line runs a program its "commands" do not list)]' \
    "$m: a project file can withhold one"
  rm -r "$WS/.crucible"
}

for mode in "${modes[@]}"; do
  set -- $mode
  if [ "$1" = confined ] && [ "$confined_ok" -ne 0 ]; then
    for ((i = 0; i < PER; i++)); do skip "confined credentials" "$SEC_REASON" bwrap; done
    continue
  fi
  sec_become "$2"
  checks "$1" "$2"
done

# The controls for the /proc and journal checks: the same greps find a
# value where one is.
AS=()
setup unconfined root
(exec -a "holder $VAL_ENV" sleep 1) &
sleep 0.3
found=$(grep -l -a -F -f "$PATTERNS" /proc/[0-9]*/cmdline 2>/dev/null || true)
wait
ok "$([ -n "$found" ] && echo 0 || echo 1)" "control: the /proc/*/cmdline search finds a value in an argv"

# A tool call's env naming a credential's variable is refused (MCP).
printf '{"sandbox":{"credentials":{"GH_TOKEN":{"env":"MYSECRET"}}},"permissions":{"mode":"fullAccess"}}\n' >"$H/.crucible/config.json"
mcp_out=$(cd "$WS" && { printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}' \
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo ran","env":{"GH_TOKEN":"mine"}}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \"$GH_TOKEN\"","env":{"OTHER":"x"}}}}'
  sleep 1.5; } | env -i PATH=/usr/bin:/bin HOME="$H" MYSECRET="$VAL_ENV" "$CRUCIBLE" mcp 2>/dev/null | tail -n +2)
is "$(sed -n 1p <<<"$mcp_out")" \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"[refused: environment variable GH_TOKEN is a credential's (sandbox.credentials): the call may not set it; nothing was run]\"}],\"isError\":true}}" \
  "a tool call's env naming a credential's variable is refused"
is "$(sed -n 2p <<<"$mcp_out")" \
  '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"******************"}],"isError":false}}' \
  "positive control: a tool call with another variable runs, the credential masked"

# A command left running: its early answer, bash_output and its ending
# note (told before a later result) all show the value masked.
req() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$@"; }
mcp_out=$(cd "$WS" && { printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}'
  req 1 bash '{"command":"printf \"%s\\n\" \"$GH_TOKEN\"; sleep 1; printf \"%s\\n\" \"$GH_TOKEN\"","background":true}'
  sleep 0.6; req 2 bash_output '{"number":1}'
  sleep 1.5; req 3 bash '{"command":"echo next"}'
  sleep 1; } | env -i PATH=/usr/bin:/bin HOME="$H" MYSECRET="$VAL_ENV" "$CRUCIBLE" mcp 2>/dev/null | tail -n +2)
ok "$(no_value "$mcp_out")" "a command left running: no reply or notification holds the value"
stars=$(printf '%*s' 18 '' | tr ' ' '*')
s1='"id":1,"result":{"content":[{"type":"text","text":"'"$stars"'\n\n[left running as #1;'
s2='"id":2,"result":{"content":[{"type":"text","text":"'"$stars"'\n[#1 is still running]"'
s3='what it printed:]\n'"$stars"'\n'"$stars"'\n\nnext"'
ok "$([[ "$mcp_out" == *"$s1"* && "$mcp_out" == *"$s2"* && "$mcp_out" == *"$s3"* ]] && echo 0 || echo 1)" \
  "its early answer, bash_output and its ending note show it masked"
