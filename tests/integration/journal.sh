#!/bin/bash
# Lifecycle facts: written as JSON lines under $XDG_STATE_HOME/crucible (or
# ~/.local/state/crucible), carrying no command line and no environment.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 12
new_workspace

crun run --env API_TOKEN=sekrit-env -- 'echo sekrit-line; exit 3'
files=("$HOME"/.local/state/crucible/*.jsonl)
ok "$([ -f "${files[0]}" ] && [ "$(stat -c %a "${files[0]}")" = 600 ] && [ "$(stat -c %a "$HOME/.local/state/crucible")" = 700 ] && echo 0 || echo 1)" \
  "one file for the session, 0600 in a 0700 directory"
facts=$(sed 's/.*"fact":"\([a-z_]*\)".*/\1/' "${files[0]}" | tr '\n' ' ')
is "$facts" "policy capabilities start finish cleanup usage " \
  "policy, capabilities, start, finish, cleanup and usage, in that order"
# Every fact about the command names its sandbox, the same ID throughout.
ids=$(sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' "${files[0]}" | sort -u)
is "$(wc -l <"${files[0]}"):$(wc -l <<<"$ids"):${#ids}" "6:1:16" \
  "each of the six facts carries the one sandbox ID (16 hex digits)"
like "$(grep '"fact":"policy"' "${files[0]}")" \
  '"sandbox":"[0-9a-f]{16}","backend":"compat","mode":"unconfined","policy":"sha256:[0-9a-f]{64}","degraded":false}$' \
  "the policy fact: backend, mode, effective policy digest"
like "$(grep '"fact":"capabilities"' "${files[0]}")" \
  '"sandbox":"[0-9a-f]{16}","backend":"compat","required":3,"outcome":"accepted"}$' \
  "the capability negotiation: what was required, and that it was met"
like "$(grep '"fact":"finish"' "${files[0]}")" '"ending":"exited","exit_status":3,"signal":0,"still_arriving":false,"bytes":12,"lines":1}$' \
  "finish says how it ended and how much it printed"
ok "$(grep -q sekrit "${files[0]}" && echo 1 || echo 0)" "no command line or environment value is written"

# A limit the command hits is a violation fact, with the ceiling it had.
rm -rf "$HOME/.local/state/crucible"
crun run --timeout 0.3 -- 'sleep 5'
like "$(cat "$HOME"/.local/state/crucible/*.jsonl)" \
  '"fact":"violation","command":1,"sandbox":"[0-9a-f]{16}","limit":"time","value":300}' \
  "a deadline is a violation: time, 300 ms"
rm -rf "$HOME/.local/state/crucible"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"limits":{"outputBytes":1000}}}\n' >"$HOME/.crucible/config.json"
crun run -- 'yes | head -c 100000'
like "$(cat "$HOME"/.local/state/crucible/*.jsonl)" \
  '"fact":"violation","command":1,"sandbox":"[0-9a-f]{16}","limit":"output","value":1000}' \
  "an output ceiling is a violation: output, 1000 bytes"
rm -f "$HOME/.crucible/config.json"

export XDG_STATE_HOME="$TEST_TMP/state"
crun run -- 'true'
ok "$(ls "$XDG_STATE_HOME"/crucible/*.jsonl >/dev/null 2>&1 && echo 0 || echo 1)" "XDG_STATE_HOME is honoured"

# A journal that cannot be written is said once and the command still runs.
export XDG_STATE_HOME="$TEST_TMP/file"
: >"$XDG_STATE_HOME"
crun run -- 'echo ran'
like "$out|$err" '^ran\|crucible: this session.s lifecycle facts are not recorded: ' "an unwritable journal is said, and the command runs"

# The person's answer is a fact too (through crucible session, which asks
# about an agent's call and, with --yes, allows it).
unset XDG_STATE_HOME
rm -rf "$HOME/.local/state/crucible"
printf '%s\n' '== life 1 ==' 'expect "type":"hello"' 'send {"type":"hello","protocol":1,"name":"scripted"}' \
  'expect "type":"prompt"' 'send {"type":"bash","id":"c1","command":"true"}' 'expect "type":"tool_result"' \
  'send {"type":"end_turn"}' >"$TEST_TMP/approve.script"
echo go | "$CRUCIBLE" session --yes --agent "$CRUCIBLE_SRCDIR/tests/agents/scripted-agent $TEST_TMP/approve.script" >/dev/null 2>&1
like "$(cat "$HOME"/.local/state/crucible/*.jsonl)" '"fact":"approval","call":"c1","allowed":true' "an approval is recorded with its call"
