#!/bin/bash
# `crucible sandbox inspect` with no trusted broker: finding and trusting
# crucible-sandbox-broker is a look at files, not a start, so inspection
# does it.  A copy of crucible in a directory without the broker (nor one
# above it) reports status unavailable, and why, naming each place it
# looked, in text and in --json (the JSON still carrying no path); the
# same copy's `crucible run` is refused (exit 125) naming the broker.  The
# positive control: the installed crucible, its broker beside it, reports
# a backend where a trusted bwrap is found.

. "$(dirname "$0")/lib.sh"

plan 9

new_workspace
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"

# The control: the installed crucible finds its broker.
crun sandbox inspect --json
like "$out" '"status":"(ready|refused)"' "control: the installed crucible finds a backend"

# A copy in a directory of its own, nothing above it but the test's tree.
LONE="$TEST_TMP/lone/bin"
mkdir -p "$LONE"
cp "$CRUCIBLE" "$LONE/crucible"
chmod 755 "$TEST_TMP/lone" "$LONE"
if [ -e "$TEST_TMP/crucible-sandbox-broker" ] || [ -e "$TEST_TMP/lone/crucible-sandbox-broker" ]; then
  echo "Bail out! a broker is where the copy should find none"
  exit 1
fi
out=$("$LONE/crucible" sandbox inspect 2>"$TEST_TMP/e") && rc=0 || rc=$?
is "$rc" 0 "text: exits 0"
like "$out" $'\n\nno sandbox backend was found:\n  no trusted crucible-sandbox-broker was found: ' \
  "text: unavailable, the broker named"
like "$out" 'beside the program, <path>: [^;]+; in the directory above it, <path>: ' \
  "text: each place looked, and what turned it down"
[[ "$out" != *"confined  yes"* ]]
ok $? "text: not confined yes"

out=$("$LONE/crucible" sandbox inspect --json 2>"$TEST_TMP/e") && rc=0 || rc=$?
like "$rc|$out" '^0\|\{"format_version":1,"kind":"sandbox-inspection","status":"unavailable",' \
  "--json: status unavailable"
like "$out" '"reason":"no trusted crucible-sandbox-broker was found: beside the program, <path>: [^;"]+; in the directory above it, <path>: [^"]+"' \
  "--json: the reason names each place looked"
[[ "$out" != */* ]]
ok $? "--json: no path at all"

out=$("$LONE/crucible" run true 2>&1) && rc=0 || rc=$?
like "$rc|$out" '^125\|.*crucible-sandbox-broker' "run: refused (125), naming the broker"
