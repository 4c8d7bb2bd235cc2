#!/bin/bash
# crucible-sandbox-broker as the keeper of a process scope, outside any
# namespace (it is a child subreaper there), driven through its status
# channel by tests/helpers/broker_peer.  TAP.
#
# Needs: CRUCIBLE_BIN_DIR (the broker) and CRUCIBLE_HELPER_DIR (broker_peer;
# defaults to $CRUCIBLE_BUILDDIR/tests/helpers).
set -u

BROKER="${CRUCIBLE_BIN_DIR:-}/crucible-sandbox-broker"
HELPER_DIR="${CRUCIBLE_HELPER_DIR:-${CRUCIBLE_BUILDDIR:-.}/tests/helpers}"
PEER="$HELPER_DIR/broker_peer"

if [ -z "${CRUCIBLE_BIN_DIR:-}" ] || [ ! -x "$BROKER" ]; then
  echo "Bail out! no broker at '$BROKER' (set CRUCIBLE_BIN_DIR)"
  exit 1
fi
if [ ! -x "$PEER" ]; then
  echo "Bail out! no broker_peer at '$PEER' (set CRUCIBLE_HELPER_DIR)"
  exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/broker-test.XXXXXX") || exit 1
STRAYS=()
# Kill whatever a failed test left running, then remove the scratch space.
cleanup() {
  local pid
  for pid in "${STRAYS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

N=0
# Report one result; on failure show the peer's report and output.
check() {
  local name=$1
  shift
  N=$((N + 1))
  if "$@"; then
    echo "ok $N - $name"
  else
    echo "not ok $N - $name"
    [ -f "$TMP/report" ] && sed 's/^/#   report: /' "$TMP/report"
    [ -f "$TMP/out" ] && sed 's/^/#   output: /' "$TMP/out"
    [ -f "$TMP/err" ] && sed 's/^/#   stderr: /' "$TMP/err"
  fi
}

# Say SKIP with the reason.
skip() {
  N=$((N + 1))
  echo "ok $N - $1 # SKIP $2"
}

# Run the broker under the peer: peer options, then -- PROGRAM ARG...
# The report lands in $TMP/report, the workload's output in $TMP/out.
run() {
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  rm -f "$TMP/report" "$TMP/out" "$TMP/err"
  "$PEER" -o "$TMP/report" "${opts[@]}" -- \
    "$BROKER" --status-fd 3 -- "$@" >"$TMP/out" 2>"$TMP/err"
}

# The report without the lines that carry pids, for comparing sequences.
events() {
  grep -v -e '^broker [0-9]' -e '^started ' "$TMP/report"
}

# The report's events match the given lines exactly, in order.
events_are() {
  local want
  want=$(printf '%s\n' "$@")
  [ "$(events)" = "$want" ]
}

# The report holds a STARTED line with the pid the workload printed.
started_is_workload() {
  local pid
  pid=$(sed -n 's/^started //p' "$TMP/report")
  [ -n "$pid" ] && [ "$pid" = "$(head -n 1 "$TMP/out")" ]
}

# The process in pidfile has been started and is gone now.
pidfile_gone() {
  local pid
  pid=$(cat "$1" 2>/dev/null)
  [ -n "$pid" ] || return 1
  STRAYS+=("$pid")
  ! kill -0 "$pid" 2>/dev/null
}

# Wait up to 10 s for a line matching a pattern in the report.
wait_for_line() {
  local i
  for i in $(seq 200); do
    grep -q -e "$1" "$TMP/report" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# A workload that starts an escaped descendant (its own session, so outside
# the workload's process group), writes its pid to $1, then exits 0.
escaper() {
  echo "setsid sh -c 'echo \$\$ > $1; exec sleep 100' & \
while [ ! -s $1 ]; do sleep 0.01; done; exit 0"
}

# --- the workload's status ---------------------------------------------------

run -- /bin/sh -c 'echo $$; exit 3'
check "exit status 3 passes through, then done, then the broker exits 0" \
  events_are "exited status=exit 3" "done" "eof" "broker exit 0"
check "started carries the workload's own pid" started_is_workload

run -- /bin/sh -c 'kill -TERM $$'
check "a workload killed by SIGTERM is reported as signal 15" \
  events_are "exited status=signal 15" "done" "eof" "broker exit 0"

run -- /nonexistent/program
check "exec failure reports failed stage=exec errno=ENOENT, then exit 127" \
  events_are "failed stage=3 errno=2" "exited status=exit 127" "done" "eof" \
  "broker exit 0"

# --- what the workload is given ----------------------------------------------

CRUCIBLE_BROKER_TEST=handed-on run -- /bin/sh -c 'echo "$CRUCIBLE_BROKER_TEST"'
check "the broker's environment is the workload's" \
  test "$(cat "$TMP/out")" = handed-on

mkdir -p "$TMP/work dir"
rm -f "$TMP/report"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --cwd "$TMP/work dir" \
  -- /bin/pwd >"$TMP/out" 2>"$TMP/err"
check "--cwd sets the workload's working directory" \
  test "$(cat "$TMP/out")" = "$TMP/work dir"

rm -f "$TMP/report"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --cwd /nonexistent/dir \
  -- /bin/true >"$TMP/out" 2>"$TMP/err"
check "a --cwd that cannot be entered fails setup, runs nothing, exits 125" \
  events_are "failed stage=1 errno=2" "eof" "broker exit 125"

"$PEER" --leak-fds -- /bin/ls /proc/self/fd >"$TMP/control" 2>/dev/null
if grep -qx 9 "$TMP/control" && grep -qx 63 "$TMP/control"; then
  run --leak-fds -- /bin/ls /proc/self/fd
  # 3 is the directory ls itself opened to list them.
  check "no descriptor but 0-2 reaches the workload (control: 9, 63 leak)" \
    test "$(tr '\n' ' ' <"$TMP/out")" = "0 1 2 3 "
else
  skip "no descriptor but 0-2 reaches the workload" \
    "the control did not leak descriptors 9 and 63"
fi

# The peer ignores SIGPIPE, so anything it runs inherits that.
"$PEER" -- /bin/grep '^SigIgn' /proc/self/status >"$TMP/control" 2>/dev/null
if ! grep -q '0000000000000000$' "$TMP/control"; then
  run -- /bin/grep -e '^SigIgn' -e '^SigBlk' /proc/self/status
  check "the workload has default signal handling and an empty mask" \
    test "$(grep -c '0000000000000000$' "$TMP/out")" = 2
else
  skip "the workload has default signal handling" \
    "the control did not inherit an ignored signal"
fi

if [ "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status)" = 0 ]; then
  run -- /bin/grep '^NoNewPrivs' /proc/self/status
  check "the workload runs with no_new_privs" \
    grep -q '^NoNewPrivs:[[:space:]]*1$' "$TMP/out"
else
  skip "the workload runs with no_new_privs" "the test already runs with it"
fi

run -- /bin/sh -c 'ulimit -c; ulimit -H -c'
check "core dumps are off, hard limit too" \
  test "$(tr '\n' ' ' <"$TMP/out")" = "0 0 "

# --- ending the scope ----------------------------------------------------------

# After EXITED the broker keeps what is left: the late writer finishes on its
# own, and DONE follows only then, with no STOP.
run -- /bin/sh -c "(sleep 0.3; echo late > '$TMP/late') & exit 0"
check "a descendant outliving the workload is kept until it ends, then done" \
  events_are "exited status=exit 0" "done" "eof" "broker exit 0"
check "the kept descendant ran to completion" test -s "$TMP/late"

rm -f "$TMP/pid"
run --stop 9 --on exited --after 200 -- /bin/sh -c "$(escaper "$TMP/pid")"
check "STOP after the workload exits ends the scope and says done" \
  events_are "exited status=exit 0" "stop 9" "done" "eof" "broker exit 0"
check "a descendant that left the process group is ended by STOP" \
  pidfile_gone "$TMP/pid"

rm -f "$TMP/pid"
run --close --on exited --after 200 -- /bin/sh -c "$(escaper "$TMP/pid")"
check "closing the channel makes the broker end the scope and exit 0" \
  events_are "exited status=exit 0" "closed" "broker exit 0"
check "a descendant that left the process group is ended on close" \
  pidfile_gone "$TMP/pid"

run --stop 15 --on started --after 100 -- /bin/sleep 100
check "STOP with SIGTERM reaches the running workload" \
  events_are "stop 15" "exited status=signal 15" "done" "eof" "broker exit 0"

start=$(date +%s%N)
run --stop 15 --on started --after 100 -- /bin/sh -c 'trap "" TERM; exec sleep 100'
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "a workload ignoring SIGTERM is killed after the grace period" \
  events_are "stop 15" "exited status=signal 9" "done" "eof" "broker exit 0"
check "the grace period is about a second (took ${elapsed_ms} ms)" \
  test "$elapsed_ms" -ge 900 -a "$elapsed_ms" -lt 5000

run --stop 0 --on started --after 100 -- /bin/sleep 100
check "a STOP with no valid signal ends the scope with SIGKILL" \
  events_are "stop 0" "exited status=signal 9" "done" "eof" "broker exit 0"

rm -f "$TMP/report" "$TMP/pid"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 -- /bin/sh -c \
  "$(escaper "$TMP/pid"); " >"$TMP/out" 2>"$TMP/err" &
peer_pid=$!
STRAYS+=("$peer_pid")
if wait_for_line '^exited '; then
  kill -TERM "$(sed -n 's/^broker //p' "$TMP/report")"
fi
wait "$peer_pid"
check "SIGTERM to the broker ends the scope like a STOP" \
  events_are "exited status=exit 0" "done" "eof" "broker exit 0"
check "a descendant that left the process group is ended on SIGTERM" \
  pidfile_gone "$TMP/pid"

# --- the command line ----------------------------------------------------------

# Run the broker directly with the given arguments; it must exit 125 with a
# message and a usage line, and run nothing ($TMP/ran stays absent).
rejects() {
  local rc
  rm -f "$TMP/ran"
  "$BROKER" "$@" 2>"$TMP/err"
  rc=$?
  [ "$rc" = 125 ] && grep -q '^crucible-sandbox-broker: ' "$TMP/err" \
    && grep -q '^usage: ' "$TMP/err" && [ ! -e "$TMP/ran" ]
}
RAN=(/usr/bin/touch "$TMP/ran")

rm -f "$TMP/report" "$TMP/out"
check "no arguments: 125" rejects
check "no --status-fd: 125" rejects -- "${RAN[@]}"
check "no '--': 125" rejects --status-fd 3 "${RAN[@]}"
check "nothing after '--': 125" rejects --status-fd 3 --
check "a relative program: 125" rejects --status-fd 3 -- touch "$TMP/ran"
check "an unknown option: 125" rejects --status-fd 3 --verbose -- "${RAN[@]}"
check "--status-fd=3 spelling: 125" rejects --status-fd=3 -- "${RAN[@]}"
check "a non-numeric descriptor: 125" rejects --status-fd 3x -- "${RAN[@]}"
check "a signed descriptor: 125" rejects --status-fd +3 -- "${RAN[@]}"
check "a descriptor below 3: 125" rejects --status-fd 2 -- "${RAN[@]}"
check "--status-fd twice: 125" \
  rejects --status-fd 3 --status-fd 3 -- "${RAN[@]}"
check "--status-fd without a value: 125" rejects --status-fd
check "a relative --cwd: 125" \
  rejects --status-fd 3 --cwd tmp -- "${RAN[@]}"
check "a closed status descriptor: 125" \
  rejects --status-fd 7 -- "${RAN[@]}" 7>&-
check "a status descriptor that is not a socket: 125" \
  rejects --status-fd 7 -- "${RAN[@]}" 7</dev/null
check "a closed stdin: 125" \
  rejects --status-fd 7 -- "${RAN[@]}" 7</dev/null 0<&-

# Positive control for the rejections: a good command line does run it.
rm -f "$TMP/ran"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 -- "${RAN[@]}" \
  >"$TMP/out" 2>"$TMP/err"
check "control: a good command line runs the program" test -e "$TMP/ran"

echo "1..$N"
