#!/bin/bash
# The whole process scope is stopped on timeout, on SIGINT/SIGTERM to
# crucible, when crucible exits, and when it dies; nothing is left behind,
# including a descendant that left the process group.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 15
new_workspace

# Start crucible run in the background; its pid is in $cpid.
crun_bg() {
  "$CRUCIBLE" run "$@" >"$TEST_TMP/bg.out" 2>&1 &
  cpid=$!
}

# Wait until a pidfile has been written; print the pid.
pidfile_wait() {
  local tries=100
  while [ ! -s "$1" ] && [ $tries -gt 0 ]; do sleep 0.05; tries=$((tries - 1)); done
  cat "$1"
}

start=$(date +%s%N)
crun run -- 'sleep 30 & echo $! >held.pid; echo up'
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
# Not a speed check: waiting for the pipe would take the descendant's
# 30 s, and half of that tells the two apart however loaded the machine.
ok $(( elapsed_ms < 15000 ? 0 : 1 )) "the result comes back while a descendant holds the pipe (${elapsed_ms} ms)"
wait_gone "$(cat held.pid)" 3; ok $? "that descendant is ended once crucible is done with the call"

# Positive control: unsupervised, an escaped descendant survives its shell.
sh -c 'setsid sh -c "echo \$\$ >control.pid; exec sleep 30" </dev/null >/dev/null 2>&1 &'
control=$(pidfile_wait control.pid)
kill -0 "$control" 2>/dev/null; ok $? "control: without crucible, a setsid descendant outlives its shell"
kill "$control" 2>/dev/null

crun run -- 'setsid sh -c "echo \$\$ >escaped.pid; exec sleep 30" </dev/null >/dev/null 2>&1 & sleep 0.3; echo done'
wait_gone "$(cat escaped.pid)" 3; ok $? "a descendant that left the process group is ended when the call ends"

crun run --timeout 0.5 -- 'setsid sh -c "echo \$\$ >t.pid; exec sleep 30" </dev/null >/dev/null 2>&1 & sleep 30'
is "$rc" 124 "the timeout stops the command"
wait_gone "$(cat t.pid)" 3; ok $? "the timeout stops the whole scope, escaped descendant included"

for sig in INT TERM; do
  rm -f s.pid
  crun_bg -- 'sleep 30 & echo $! >s.pid; wait'
  victim=$(pidfile_wait s.pid)
  kill -s "$sig" "$cpid"
  wait "$cpid"; status=$?
  if [ "$sig" = INT ]; then want=130; else want=143; fi
  gone=1; wait_gone "$victim" 3 && gone=0
  ok $(( status == want && gone == 0 ? 0 : 1 )) "SIG$sig to crucible stops the scope and exits $want (got $status)"
done

for sig in KILL SEGV ABRT; do
  rm -f s.pid
  crun_bg -- 'setsid sh -c "echo \$\$ >s.pid; exec sleep 30" </dev/null >/dev/null 2>&1 & sleep 30'
  victim=$(pidfile_wait s.pid)
  kill -s "$sig" "$cpid"
  wait "$cpid" 2>/dev/null
  wait_gone "$victim" 3; ok $? "crucible dying by SIG$sig still ends the scope"
done

# A scope keeper that stops answering cannot hold crucible forever: the
# wait is bounded, crucible says it could not confirm the cleanup, and the
# keeper still ends the scope once it runs again.
rm -f s.pid
crun_bg --timeout 2 -- 'echo $$ >s.pid; sleep 30'
victim=$(pidfile_wait s.pid)
keeper=$(pgrep -P "$cpid")
kill -STOP "$keeper"
wait "$cpid"; status=$?
is "$status|$(cat "$TEST_TMP/bg.out")" "125|crucible: could not confirm that every process the command started has ended" \
  "an unanswering scope is given up on, and said so"
kill -CONT "$keeper" 2>/dev/null
wait_gone "$victim" 3; ok $? "the keeper ends the scope when it runs again"

# Supervising a quiet command costs nothing while it waits: crucible and
# its scope keeper sleep in poll rather than spin (user+system time of
# crucible and everything it waited for, over a one-second sleep).
TIMEFORMAT='%U %S'
cpu=$( { time "$CRUCIBLE" run -- 'sleep 1' >/dev/null; } 2>&1 )
cpu_ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' <<<"$cpu")
ok $(( cpu_ms < 300 ? 0 : 1 )) "a one-second sleep costs little processor time (${cpu_ms} ms)"

# Peak memory stays fixed under a stream that never ends.
if [ -n "${CRUCIBLE_SANITIZED:-}" ]; then
  skip "peak memory under yes" "sanitizer builds inflate memory; measured in the plain build"
elif [ ! -x "$HELPERS/maxrss" ]; then
  skip "peak memory under yes" "the maxrss helper was not built"
else
  mkdir -p "$HOME/.crucible"
  printf '{"sandbox":{"limits":{"outputBytes":107374182400}}}' >"$HOME/.crucible/config.json"
  "$HELPERS/maxrss" -o "$TEST_TMP/rss" -- "$CRUCIBLE" run --timeout 3 -- yes >/dev/null
  kib=$(sed -n 's/^maxrss_kib=\([0-9]*\).*/\1/p' "$TEST_TMP/rss")
  ok $(( kib > 0 && kib < 16384 ? 0 : 1 )) "VmHWM under 3 s of yes stays under 16 MiB (${kib} KiB)"
fi
