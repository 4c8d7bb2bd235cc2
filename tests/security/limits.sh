#!/bin/bash
# The ceilings the bwrap backend claims: CPU time, open files, and (where
# RLIMIT_NPROC binds, that is not as root) processes.  TAP; each with its
# unconfined control.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=9
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"

  # CPU: a busy loop past a one-second ceiling is killed by the kernel.
  unconfined "timeout 3 sh -c 'while :; do :; done'"
  is "$urc" 124 "control ($WHO): unconfined, a busy loop runs past 3 s"
  start=$(date +%s)
  confined "while :; do :; done" --cpu-seconds 1
  took=$(($(date +%s) - start))
  [ "$crc" -eq 137 ] || [ "$crc" -eq 152 ]
  ok $? "confined ($WHO): the busy loop is killed at its cpu ceiling (status $crc)"
  [ "$took" -lt 10 ]
  ok $? "confined ($WHO): within seconds (${took}s)"

  # Open files: the ceiling holds and cannot be raised.
  attempt "raising the open-file ceiling to 100" "ulimit -n 100" \
    --open-files 64
  confined "ulimit -n; ulimit -H -n"
  is "$cout" $'4096\n4096' "confined ($WHO): 4096 open files by default"

  # Processes: a fork bomb stops at the cap where RLIMIT_NPROC binds.
  bomb="sh -c 'i=0; while :; do sleep 5 & i=\$((i+1)); echo \$i > /tmp/count; done' 2>/dev/null; read n < /tmp/count; echo \$n; [ \$n -gt 1100 ]"
  claim=$("$SANDBOX_RUN" --claims | sed -n 's/^process_limit *//p')
  if [ "$who" = nobody ] || [ "$(id -u)" -ne 0 ]; then
    unconfined "sh -c 'i=0; while [ \$i -lt 1200 ]; do sleep 5 & i=\$((i+1)); done; echo \$i > $OUT/count'; read n < $OUT/count; [ \$n -ge 1200 ]"
    ok "$urc" "control ($WHO): unconfined, 1200 processes start"
    confined "$bomb"
    n=${cout##*$'\n'}
    [ "$crc" -ne 0 ] && [ "$crc" -ne 125 ] && [ "${n:-0}" -gt 900 ] && [ "${n:-0}" -le 1024 ]
    ok $? "confined ($WHO): a fork bomb stops at the 1024 cap (got ${n:-none})"
    is "$(sec_claim_as_identity)" enforced "process_limit is claimed as $WHO"
  else
    skip "control ($WHO): unconfined, 1200 processes start" \
      "RLIMIT_NPROC does not bind uid 0"
    skip "confined ($WHO): a fork bomb stops at the cap" \
      "RLIMIT_NPROC does not bind uid 0"
    is "$claim" unsupported "process_limit is not claimed as root"
  fi
done
