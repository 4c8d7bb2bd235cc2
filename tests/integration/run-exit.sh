#!/bin/bash
# crucible run's exit status: the command's own, 124, 128+N, 125, 153.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 8
new_workspace

crun run -- 'exit 0'; is "$rc" 0 "exit 0 passes through"
crun run -- 'exit 42'; is "$rc" 42 "exit 42 passes through"
crun run -- 'kill -TERM $$'; is "$rc" 143 "killed by SIGTERM is 128+15"
crun run -- 'kill -KILL $$'; is "$rc" 137 "killed by SIGKILL is 128+9"
crun run --timeout 0.2 -- 'sleep 5'; is "$rc" 124 "ran too long is 124"
crun run --timeout abc -- 'true'; is "$rc" 125 "refused before starting is 125"

mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"limits":{"outputBytes":4096}}}' >"$HOME/.crucible/config.json"
crun run -- 'yes'; is "$rc" 153 "stopped at the output ceiling is 153 (128+SIGXFSZ)"

# A fractional timeout is honoured, not rounded to whole seconds.
start=$(date +%s%N)
crun run --timeout 0.4 -- 'sleep 3'
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
ok $(( elapsed_ms >= 350 && elapsed_ms < 2500 ? 0 : 1 )) "--timeout 0.4 stops it after about 0.4 s (took ${elapsed_ms} ms)"
