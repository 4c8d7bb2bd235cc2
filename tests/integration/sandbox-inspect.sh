#!/bin/bash
# `crucible sandbox inspect`, `crucible --sandbox` and `crucible sandbox
# enable|disable` through the installed binary: every report variant exits
# 0, the JSON line carries no path, inspecting starts nothing and writes
# nothing (under strace -f: one execve, no open for writing), and the
# setting commands write the home file and only its sandbox.enabled.  The
# exact layouts are pinned by tests/unit/test_inspect.c; the strings are in
# doc/strings.md, "The inspection report".

. "$(dirname "$0")/lib.sh"

plan 55

new_workspace
WS=$(pwd -P)
HOME_FILE="$HOME/.crucible/config.json"

# --- disabled (the default) ------------------------------------------------
crun sandbox inspect
is "$rc" 0 "disabled: exits 0"
is "$(sed -n 1p <<<"$out")" "sandbox disabled in $WS" \
  "disabled: the header names the workspace root"
like "$out" $'\n  mode      disabled by default\n' "disabled: mode says by default"
like "$out" $'\n  backend   compat, built in\n' "disabled: the compatibility backend"
like "$out" $'\n  isolation process\n' "disabled: the isolation a command would have (process)"
like "$out" $'\n  confined  false: confinement is disabled \\(sandbox.enabled is false\\)\n' \
  "disabled: confined false with the reason"
like "$out" $'\n  command_time_limit    enforced\n' "disabled: the compatibility matrix"
is "$(grep -c '^  [a-z_]* *\(enforced\|observed\|unsupported\)$' <<<"$out")" 26 \
  "disabled: every feature has a row"
is "$(grep -c "$WS" <<<"$out")" 1 "disabled: the root is the only path, printed once"
first=$out

crun --sandbox
is "$rc" 0 "--sandbox exits 0"
is "$out" "$first" "--sandbox prints the same report"

crun sandbox inspect
is "$out" "$first" "two reports over the same directory are the same"

crun sandbox inspect --json
is "$rc" 0 "--json: exits 0"
is "$(printf '%s\n' "$out" | wc -l)" 1 "--json: one line"
like "$out" '^\{"format_version":1,"kind":"sandbox-inspection","status":"ready",' \
  "--json: format_version, kind and status first"
like "$out" '"confined":false,"disabled_reason":"confinement is disabled' \
  "--json: confined false with disabled_reason"
[[ "$out" != */* ]]
ok $? "--json: no path at all"

# --- enabled by the project ------------------------------------------------
mkdir -p .crucible
printf '{"sandbox":{"enabled":true}}\n' >.crucible/config.json
crun sandbox inspect --json
json=$out
is "$rc" 0 "enabled: --json exits 0"
[[ "$json" != */* ]]
ok $? "enabled: --json carries no path"
status=$(sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' <<<"$json")
like "$status" '^(ready|refused|unavailable)$' "enabled: status is $status"
crun sandbox inspect
is "$rc" 0 "enabled ($status): exits 0"
like "$out" $'^sandbox enabled in [^\n]*\n  mode      required by project configuration\n' \
  "enabled: mode required by project configuration"
case $status in
  unavailable)
    like "$out" $'\n\nno sandbox backend was found:\n  [^\n]+\n' \
      "unavailable: no sandbox backend was found, with the reason"
    [[ "$out" != *"what this backend can hold"* ]]
    ok $? "unavailable: no matrix of claims belonging to nobody"
    ;;
  refused)
    like "$out" $'\nwhat this backend can hold:\n.*\nwhat was asked for:\n.*\nno command could be run here:\n  [^\n]+\n$' \
      "refused: matrix, what was asked for, then the reason"
    ok 0 "refused: (no second check)"
    ;;
  ready)
    like "$out" $'\n  version   unverified; reading it would start Bubblewrap, and inspecting starts nothing\n' \
      "ready: the version is unverified, with the reason"
    like "$out" $'\nnot checked, since checking would start something:\n' \
      "ready: the not-checked section"
    ;;
esac
is "$(grep -c "$WS" <<<"$out")" 1 "enabled: the root is the only path printed"

# --- inspecting starts nothing and writes nothing ---------------------------
if ! command -v strace >/dev/null 2>&1; then
  skip "strace: one execve" "strace is not installed (apt-get install strace)" strace
  skip "strace: no open for writing" "strace is not installed" strace
  skip "strace: no process started" "strace is not installed" strace
  skip "strace: nothing made, renamed or removed" "strace is not installed" strace
elif ! strace -f -o /dev/null true 2>/dev/null; then
  skip "strace: one execve" "strace cannot trace here (ptrace refused)" strace
  skip "strace: no open for writing" "strace cannot trace here" strace
  skip "strace: no process started" "strace cannot trace here" strace
  skip "strace: nothing made, renamed or removed" "strace cannot trace here" strace
else
  trace="$TEST_TMP/trace"
  # LeakSanitizer's check at exit (sanitizer builds) runs in a process of
  # its own; the other runs of this test keep it on.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -o "$trace" \
    -e trace=execve,execveat,open,openat,openat2,creat,fork,vfork,clone,clone3,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,truncate \
    "$CRUCIBLE" sandbox inspect >/dev/null 2>&1
  is "$(grep -c 'execve' "$trace")" 1 "strace: one execve (crucible itself)"
  writes=$(grep -E 'open(at2?)?\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)' "$trace")
  is "$writes" "" "strace: no open for writing"
  is "$(grep -cE '^[0-9]+ +(fork|vfork|clone3?)\(' "$trace")" 0 "strace: no process started"
  is "$(grep -cE '^[0-9]+ +(creat|mkdir|mkdirat|rename|renameat2?|unlink|unlinkat|truncate)\(' "$trace")" 0 \
    "strace: nothing made, renamed or removed"
fi

# --- disable ----------------------------------------------------------------
crun sandbox disable
is "$rc" 1 "disable under a project that requires it: exits 1"
like "$err" "^crucible: confinement stays enabled: this project's configuration requires it" \
  "disable under a project requirement: says why"
[ ! -e "$HOME_FILE" ]
ok $? "disable under a project requirement: nothing written"

rm -rf .crucible
mkdir -p "$HOME/.crucible"
cat >"$HOME_FILE" <<'EOF'
{"theme": "default", "sandbox": {"enabled": true, "limits": {"commandSeconds": 1.5}, "filesystem": {"unreadable": ["**/*.pem"]}}, "permissions": {"deny": ["git push --force", "caf\u00e9 \"x\""]}}
EOF
chmod 644 "$HOME_FILE"
crun sandbox disable
is "$rc" 0 "disable: exits 0"
is "$out" "sandbox disabled: $HOME_FILE sets sandbox.enabled to false" "disable: says what it wrote"
like "$(tr -d ' \n' <"$HOME_FILE")" '"sandbox":\{"enabled":false,' "disable: sandbox.enabled is false, in place"
like "$(tr -d ' \n' <"$HOME_FILE")" '"commandSeconds":1.5' "disable: a fractional number kept as written"
like "$(cat "$HOME_FILE")" 'café \\"x\\"' "disable: strings kept"
like "$(tr -d ' \n' <"$HOME_FILE")" '^\{"theme":"default","sandbox":\{.*\},"permissions":\{"deny":\["gitpush--force",' \
  "disable: every other key kept, in order"
is "$(stat -c %a "$HOME_FILE")" 600 "disable: the file is mode 0600"
crun sandbox inspect
like "$out" $'\n  mode      disabled by home configuration\n' "disable: the file loads, and the report follows it"
like "$out" $'\n    1.5s per command        enforced\n' "disable: the report shows the exact fractional deadline"
is "$(ls -A "$HOME/.crucible")" "config.json" "disable: no temporary file left behind"

# A symlinked home file is written at its target; the link stays.
mv "$HOME_FILE" "$HOME/real.json"
ln -s ../real.json "$HOME_FILE"
crun sandbox disable
is "$rc" 0 "disable through a symlink: exits 0"
[ -L "$HOME_FILE" ] && grep -q '"enabled": false' "$HOME/real.json"
ok $? "disable through a symlink: the link stays and its target is written"
rm -f "$HOME_FILE" "$HOME/real.json"

# --- enable -----------------------------------------------------------------
crun sandbox enable
if [ "$rc" -eq 0 ]; then
  like "$(tr -d ' \n' <"$HOME_FILE")" '"sandbox":\{"enabled":true\}' "enable: sandbox.enabled is true"
  ok 0 "enable: this machine can enforce, so it was written"
else
  is "$rc" 1 "enable on a machine that cannot enforce: exits 1"
  like "$err" "^crucible: confinement was not enabled: .*; nothing was changed$" \
    "enable: says why and that nothing changed"
fi

# --- failures and usage -----------------------------------------------------
mkdir -p "$HOME/.crucible"
printf '{"sandbox": {"enabled": "yes"}}\n' >"$HOME_FILE"
crun sandbox inspect --json
is "$rc" 1 "a configuration that fails to load: exits 1"
is "$out" '{"format_version":1,"kind":"sandbox-inspection","status":"failed","stage":"configuration"}' \
  "failed: the JSON line names the stage, and no path"
like "$err" "^crucible: $HOME_FILE:1: sandbox.enabled: " "failed: the error names the file on stderr"
rm -f "$HOME_FILE"

crun sandbox inspect --bogus
is "$rc" 2 "an unknown option: exits 2"
crun sandbox frobnicate
is "$rc" 2 "an unknown subcommand: exits 2"

# --- MCP servers --------------------------------------------------------------
# The configured servers, last, each with whether it would run confined:
# home's mcpServers, one optional, one the project disables.
mkdir -p "$HOME/.crucible" "$WS/.crucible"
printf '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}, "everything": {"command": "srv", "optional": true}, "old": {"command": "old"}}}\n' \
  >"$HOME_FILE"
printf '{"disabledMcpServers": ["old"]}\n' >"$WS/.crucible/config.json"
crun sandbox inspect
is "$rc:$(sed -n '/^MCP servers/,$p' <<<"$out")" "0:MCP servers (mcpServers), each run as a command here would be:
  files       not confined: confinement is disabled (sandbox.enabled is false)
  everything  not confined: confinement is disabled (sandbox.enabled is false), optional
  old         not started: disabledMcpServers names it" \
  "servers: each listed, unconfined while confinement is off, the disabled one not started"
crun sandbox inspect --json
like "$out" '"mcp_servers":\[\{"name":"files","optional":false,"runs":"unconfined","reason":"confinement is disabled \(sandbox.enabled is false\)"\},\{"name":"everything","optional":true,"runs":"unconfined",.*\{"name":"old","optional":false,"runs":"not_started","reason":"disabledMcpServers names it"\}\]\}$' \
  "servers: the JSON lists them too"
printf '{"sandbox": {"enabled": true}, "mcpServers": {"files": {"command": "npx"}}}\n' \
  >"$HOME_FILE"
crun sandbox inspect
if grep -q '^no sandbox backend was found:' <<<"$out"; then
  want="not started: no sandbox backend was found, and servers are never run unconfined while sandbox.enabled is true"
else
  want=confined
fi
is "$(sed -n '/^MCP servers/,$p' <<<"$out" | tail -n 1)" "  files  $want" \
  "servers: confined while a command would be (or, without a backend, not started)"
rm -f "$HOME_FILE" "$WS/.crucible/config.json"
crun sandbox inspect
is "$rc:$(grep -c 'MCP servers' <<<"$out")" "0:0" \
  "servers: none configured, no section"
