#!/bin/bash
# Every trusted bwrap candidate is probed until one passes, and a launch the
# system bwrap refuses is refused quoting bwrap's own message.  The
# candidates are tests/helpers/fake_bwrap, installed root-owned in a
# root-owned directory put first on PATH (so this needs root), which either
# fails its --help probe or refuses every launch and otherwise runs
# /usr/bin/bwrap.
. "$(dirname "$0")/lib.sh"

plan 5

new_workspace
fake_bwrap_standins 5 no-options refuse

out=$(PATH="$STANDIN/no-options:/usr/bin:/bin" "$SANDBOX_RUN" --probe 2>&1)
is "$(head -n 1 <<<"$out")" "usable yes" \
  "a trusted bwrap that fails its probe is passed over for the next"
out=$(PATH="$STANDIN/no-options:/usr/bin:/bin" "$SANDBOX_RUN" -- 'echo ran' 2>/dev/null)
is "$out" ran "the next candidate runs the command"

out=$(PATH="$STANDIN/refuse:/usr/bin:/bin" "$SANDBOX_RUN" -- 'echo ran' 2>&1) && rc=0 || rc=$?
is "$rc" 125 "a refused launch runs nothing"
like "$out" "failed stage=1 errno=0: bwrap: Can't mount tmpfs on /newroot/tmp: fake refusal" \
  "the refusal carries bwrap's own message"

mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"
out=$(PATH="$STANDIN/refuse:/usr/bin:/bin" "$CRUCIBLE" run -- 'echo ran' 2>&1) && rc=0 || rc=$?
is "$rc:$out" \
  "125:[refused: setting up the command: \"bwrap: Can't mount tmpfs on /newroot/tmp: fake refusal\"; nothing was run]" \
  "crucible run quotes bwrap's message in the refusal"
