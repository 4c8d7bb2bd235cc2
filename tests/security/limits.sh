#!/bin/bash
# The ceilings the bwrap backend claims: CPU time, open files, address
# space, and processes (a pids cgroup where crucible can make one, which
# binds root too; RLIMIT_NPROC otherwise, which does not bind uid 0).
# TAP; each with its unconfined control.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=20
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

  # Address space (memory_limit): an allocation over the ceiling fails
  # inside, one under it works, and the ceiling cannot be raised.
  alloc="python3 -c 'import sys; b = bytearray(int(sys.argv[1]) << 20); print(len(b) >> 20)'"
  if command -v python3 >/dev/null 2>&1; then
    unconfined "$alloc 400"
    is "$urc:$uout" "0:400" "control ($WHO): unconfined, 400 MiB can be allocated"
    confined "$alloc 400 2>&1 | tail -1" --memory-bytes 268435456
    is "$cout" MemoryError \
      "confined ($WHO): 400 MiB over a 256 MiB address-space ceiling fails"
    confined "$alloc 64" --memory-bytes 268435456
    is "$cout" 64 "confined ($WHO): 64 MiB under it works"
    # The same ceiling stated by the policy rather than the backend.
    confined "$alloc 400 2>&1 | tail -1" --policy-memory-bytes 268435456
    is "$cout" MemoryError \
      "confined ($WHO): a policy's 256 MiB address-space ceiling holds"
  else
    for i in 1 2 3 4; do
      skip "memory_limit ($WHO)" "no python3 to allocate with"
    done
  fi
  attempt "raising the address-space ceiling" "ulimit -v unlimited" \
    --memory-bytes 268435456
  is "$(sec_claim_row memory_limit)" enforced "memory_limit is claimed as $WHO"

  # Processes: a fork bomb stops at the 1024 cap wherever the row is
  # claimed, and the cap ends nothing outside the namespace.  Once counted,
  # the bomb's sleeps are ended by the shell's builtin kill, by the process
  # IDs the bomb noted (no fork, which the cap refuses; nothing it did not
  # start), rather than left running until the 30 s timeout.
  bomb=": > /tmp/pids; sh -c 'i=0; while :; do sleep 60 & echo \$! >> /tmp/pids; i=\$((i+1)); echo \$i > /tmp/count; done' 2>/dev/null; read n < /tmp/count; echo \$n; while read p; do kill -9 \$p; done < /tmp/pids 2>/dev/null; [ \$n -gt 1100 ]"
  claim=$(sec_claim_row process_limit)
  if [ "$claim" = enforced ]; then
    # The control's processes are ended before the bomb: RLIMIT_NPROC
    # counts every process of the uid, so 1200 sleeps still alive would
    # leave the confined bomb no fork at all.
    unconfined "sh -c 'i=0; while [ \$i -lt 1200 ]; do sleep 5 & i=\$((i+1)); done; echo \$i > $OUT/count; kill \$(jobs -p) 2>/dev/null; wait'; read n < $OUT/count; [ \$n -ge 1200 ]"
    ok "$urc" "control ($WHO): unconfined, 1200 processes start"
    sleep 60 &
    bystander=$!
    confined "$bomb"
    n=${cout##*$'\n'}
    [ "$crc" -ne 0 ] && [ "$crc" -ne 125 ] && [ "${n:-0}" -gt 900 ] && [ "${n:-0}" -le 1024 ]
    ok $? "confined ($WHO): a fork bomb stops at the 1024 cap (got ${n:-none})"
    kill -0 "$bystander" 2>/dev/null
    ok $? "confined ($WHO): the cap ended nothing outside the sandbox"
    kill "$bystander" 2>/dev/null
    wait "$bystander" 2>/dev/null
    # A policy may state fewer: the broker takes the lower of the two.
    confined "$bomb" --policy-processes 100
    n=${cout##*$'\n'}
    [ "$crc" -ne 0 ] && [ "$crc" -ne 125 ] && [ "${n:-0}" -gt 50 ] && [ "${n:-0}" -le 100 ]
    ok $? "confined ($WHO): a policy's cap of 100 holds (got ${n:-none})"
  else
    why="as root without a pids cgroup crucible can make (RLIMIT_NPROC does not bind uid 0)"
    skip "control ($WHO): unconfined, 1200 processes start" "$why"
    skip "confined ($WHO): a fork bomb stops at the cap" "$why"
    skip "confined ($WHO): the cap ended nothing outside the sandbox" "$why"
    skip "confined ($WHO): a policy's cap of 100 holds" "$why"
  fi
  if [ "$who" = root ] && [ "$(id -u)" -eq 0 ]; then
    if [ -n "$(sec_pids_cgroup)" ]; then want=enforced; else want=unsupported; fi
    is "$claim" "$want" "process_limit as root: $want, as the pids cgroup allows"
  else
    is "$claim" enforced "process_limit is claimed as $WHO"
  fi
  confined "echo ran" --processes 1025
  is "$crc:$cerr" \
    "125:sandbox_run: process_limit: 1025 processes is more than the 1024 a sandbox allows" \
    "confined ($WHO): a cap over 1024 is refused"
  confined "echo ran" --policy-processes 1025
  is "$crc:$cerr" \
    "125:sandbox_run: process_limit: 1025 processes is more than the 1024 a sandbox allows" \
    "confined ($WHO): a policy stating more than 1024 is refused"
done
