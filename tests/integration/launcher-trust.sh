#!/bin/bash
# The host believes only what it can prove about a confined command's
# scope, not what the status channel says: a launcher that reports EXITED
# and DONE but lives on publishes nothing, and a refusal written after the
# workload started is never quoted as "nothing was run".  The launcher is
# tests/helpers/fake_bwrap, installed root-owned in a root-owned directory
# put first on PATH (so this needs root), playing a broker the workload
# has taken over; the controls run the same command through the real bwrap.
. "$(dirname "$0")/lib.sh"

plan 6

new_workspace
fake_bwrap_standins 6 liar-done liar-refusal
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"

# Control: through the real bwrap, what the command writes is published.
out=$(cd "$WS" && PATH=/usr/bin:/bin "$CRUCIBLE" run -- 'echo forged >forged' 2>&1)
is "$(cat "$WS/forged" 2>/dev/null)" "forged" \
  "control: a confined command's write is published"
rm -f "$WS/forged"

# A launcher that says EXITED 0 and DONE and lives on: it is killed at the
# end of its wait, and nothing it wrote into the upper is published.
out=$(cd "$WS" && PATH="$STANDIN/liar-done:/usr/bin:/bin" "$CRUCIBLE" run -- 'true' 2>&1)
[ ! -e "$WS/forged" ]
ok $? "a DONE from a launcher that has not exited publishes nothing"
[ -e "$WS/forged" ] && diag "published: $(cat "$WS/forged")" "result: $out"
[[ "$out" == *"[published nothing: publication could not be attempted (the command's process scope has not been confirmed empty)]"* ]]
ok $? "the result says why nothing was published"

# Control: a refusal before the workload starts is quoted (bwrap-candidates.sh
# pins its exact text); here the real bwrap runs the command.
out=$(cd "$WS" && PATH=/usr/bin:/bin "$CRUCIBLE" run -- 'echo ran' 2>&1) && rc=0 || rc=$?
is "$rc:$out" "0:ran" "control: the same command through the real bwrap runs"

# A refusal on the broker's stderr after STARTED: the command may have
# run, so the result is a kill, not "nothing was run".
out=$(cd "$WS" && PATH="$STANDIN/liar-refusal:/usr/bin:/bin" "$CRUCIBLE" run -- 'echo ran' 2>&1) && rc=0 || rc=$?
[[ "$out" != *"nothing was run"* ]]
ok $? "a refusal written after the workload started is not quoted as nothing run"
[[ "$out" == *"nothing was run"* ]] && diag "result: $out"
is "$rc" 137 "its ending reads as a kill (128+9)"
