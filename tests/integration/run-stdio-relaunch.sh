#!/bin/bash
# A workload with standard streams of its own (sandbox_command.stdio)
# whose launch fails as a probe would have, after a remembered probe
# passed (doc/linux-confinement.md, "The remembered probe"): it is
# launched again on the candidate a fresh probe passes, with the same
# streams, environment and line (its GO sent again), so it runs as if
# every candidate had been probed first; the record is dropped.  The
# candidate is a tests/helpers/fake_bwrap stand-in (so this needs root)
# first on PATH, before the system's bwrap.  TAP.
. "$(dirname "$0")/lib.sh"

plan 3

new_workspace
fake_bwrap_standins 3 flaky
run_stdio() {
  out=$(printf 'hello\n' | PATH="$STANDIN/flaky:/usr/bin:/bin" "$SANDBOX_RUN" \
    --timeout 20 --stdio -- 'read x; echo got $x; echo err >&2' \
    2>"$TEST_TMP/err") && rc=0 || rc=$?
  err=$(grep -vx 'sandbox_run: .*' "$TEST_TMP/err")
}

run_stdio
is "$rc:$out:$err" "0:got hello:err" \
  "the stand-in passes its probe (remembered) and runs the workload"
echo no-namespaces >"$STANDIN/flaky/mode"
run_stdio
is "$rc:$out:$err" "0:got hello:err" \
  "when it starts failing, the workload still runs, on the next candidate, with its input and its streams apart"
run_stdio
is "$rc:$out:$err" "0:got hello:err" \
  "and the next start passes the failing candidate over"
