#!/bin/bash
# crucible-sandbox-broker as the keeper of a process scope, outside any
# namespace (it is a child subreaper there), driven through its status
# channel by tests/helpers/broker_peer.  TAP.
#
# Needs: CRUCIBLE_BIN_DIR (the broker) and CRUCIBLE_HELPER_DIR (broker_peer;
# defaults to $CRUCIBLE_BUILDDIR/tests/helpers).
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
plan 64

BROKER="$CRUCIBLE_BIN_DIR/crucible-sandbox-broker"
PEER="${CRUCIBLE_HELPER_DIR:-${CRUCIBLE_BUILDDIR:-.}/tests/helpers}/broker_peer"
if [ ! -x "$BROKER" ] || [ ! -x "$PEER" ]; then
  echo "Bail out! need $BROKER and $PEER (CRUCIBLE_BIN_DIR, CRUCIBLE_HELPER_DIR)"
  exit 1
fi

TMP=$TEST_TMP
STRAYS=()
# Kill whatever a failed test left running, then remove the scratch space.
cleanup() {
  local pid
  for pid in "${STRAYS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

# check DESCRIPTION CMD...: pass when CMD succeeds; on failure show the
# peer's report, the workload's output and stderr.
check() {
  local name=$1 rc f
  shift
  "$@"
  rc=$?
  ok "$rc" "$name"
  [ "$rc" = 0 ] && return
  for f in report out err; do
    [ -f "$TMP/$f" ] && sed "s/^/#   $f: /" "$TMP/$f"
  done
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

# The report without the pids, for comparing sequences.
events() {
  grep -v '^broker [0-9]' "$TMP/report" \
    | sed 's/^started [0-9][0-9]*$/started/'
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
  for _ in $(seq 200); do
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
  events_are started "exited status=exit 3" "done" eof "broker exit 0"
check "started carries the workload's own pid" started_is_workload

run -- /bin/sh -c 'kill -TERM $$'
check "a workload killed by SIGTERM is reported as signal 15" \
  events_are started "exited status=signal 15" "done" eof "broker exit 0"

run -- /nonexistent/program
check "exec failure reports failed stage=exec errno=ENOENT, then exit 127" \
  events_are started "failed stage=3 errno=2" "exited status=exit 127" "done" \
  eof "broker exit 0"

# --- what the workload is given ----------------------------------------------

# shellcheck disable=SC2016 # the workload expands it
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
  # Only signals 1-31 are compared: glibc reserves 32 and 33 for itself and
  # will not let any program reset them, so whatever ran the test decides.
  ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$TMP/out")
  blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' "$TMP/out")
  check "the workload has default signal handling and an empty mask" \
    test "$(( (16#${ign:-1} & 0x7fffffff) | 16#${blk:-1} ))" = 0
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

# --- ending the scope --------------------------------------------------------

# After EXITED the broker keeps what is left: the late writer finishes on its
# own, and DONE follows only then, with no STOP.
run -- /bin/sh -c "(sleep 0.3; echo late > '$TMP/late') & exit 0"
check "a descendant outliving the workload is kept until it ends, then done" \
  events_are started "exited status=exit 0" "done" eof "broker exit 0"
check "the kept descendant ran to completion" test -s "$TMP/late"

# Positive control: without the broker, the escaped descendant outlives its
# shell, so the tests below can fail.
rm -f "$TMP/pid"
sh -c "$(escaper "$TMP/pid")" </dev/null >/dev/null 2>&1
control=$(cat "$TMP/pid")
STRAYS+=("$control")
check "control: unsupervised, the escaped descendant survives its shell" \
  kill -0 "$control"
kill -KILL "$control" 2>/dev/null

rm -f "$TMP/pid"
run --stop 9 --on exited --after 200 -- /bin/sh -c "$(escaper "$TMP/pid")"
check "STOP after the workload exits ends the scope and says done" \
  events_are started "exited status=exit 0" "stop 9" "done" eof \
  "broker exit 0"
check "a descendant that left the process group is ended by STOP" \
  pidfile_gone "$TMP/pid"

rm -f "$TMP/pid"
run --close --on exited --after 200 -- /bin/sh -c "$(escaper "$TMP/pid")"
check "closing the channel makes the broker end the scope and exit 0" \
  events_are started "exited status=exit 0" closed "broker exit 0"
check "a descendant that left the process group is ended on close" \
  pidfile_gone "$TMP/pid"

run --stop 15 --on started --after 100 -- /bin/sleep 100
check "STOP with SIGTERM reaches the running workload" \
  events_are started "stop 15" "exited status=signal 15" "done" eof \
  "broker exit 0"

start=$(date +%s%N)
run --stop 15 --on started --after 100 -- \
  /bin/sh -c 'trap "" TERM; exec sleep 100'
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "a workload ignoring SIGTERM is killed after the grace period" \
  events_are started "stop 15" "exited status=signal 9" "done" eof \
  "broker exit 0"
check "the grace period is about a second (took ${elapsed_ms} ms)" \
  test "$elapsed_ms" -ge 900 -a "$elapsed_ms" -lt 5000

run --stop 0 --on started --after 100 -- /bin/sleep 100
check "a STOP with no valid signal ends the scope with SIGKILL" \
  events_are started "stop 0" "exited status=signal 9" "done" eof \
  "broker exit 0"

rm -f "$TMP/report" "$TMP/pid"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 -- /bin/sh -c \
  "$(escaper "$TMP/pid")" >"$TMP/out" 2>"$TMP/err" &
peer_pid=$!
STRAYS+=("$peer_pid")
if wait_for_line '^exited '; then
  kill -TERM "$(sed -n 's/^broker \([0-9][0-9]*\)$/\1/p' "$TMP/report")" \
    2>/dev/null
fi
wait "$peer_pid"
check "SIGTERM to the broker ends the scope like a STOP" \
  events_are started "exited status=exit 0" "done" eof "broker exit 0"
check "a descendant that left the process group is ended on SIGTERM" \
  pidfile_gone "$TMP/pid"

# --- the command line --------------------------------------------------------

# Run the broker directly with the arguments after the first; it must exit
# 125 with a message holding the first, and a usage line, and run nothing
# ($TMP/ran stays absent).
rejects() {
  local says=$1 rc
  shift
  rm -f "$TMP/ran"
  "$BROKER" "$@" 2>"$TMP/err"
  rc=$?
  [ "$rc" = 125 ] && grep -q "^crucible-sandbox-broker: .*$says" "$TMP/err" \
    && grep -q '^usage: ' "$TMP/err" && [ ! -e "$TMP/ran" ]
}
RAN=(/usr/bin/touch "$TMP/ran")

rm -f "$TMP/report" "$TMP/out"
check "no arguments: 125" rejects "missing '--'"
check "no --status-fd: 125" rejects "--status-fd is required" -- "${RAN[@]}"
check "no '--': 125" \
  rejects "the program goes after '--'" --status-fd 3 "${RAN[@]}"
check "nothing after '--': 125" rejects "no program" --status-fd 3 --
check "a relative program: 125" \
  rejects "absolute path, not 'touch'" --status-fd 3 -- touch "$TMP/ran"
check "an unknown option: 125" \
  rejects "unknown option '--verbose'" --status-fd 3 --verbose -- "${RAN[@]}"
check "--status-fd=3 spelling: 125" \
  rejects "unknown option '--status-fd=3'" --status-fd=3 -- "${RAN[@]}"
check "a non-numeric descriptor: 125" \
  rejects "'3x' is not a descriptor" --status-fd 3x -- "${RAN[@]}"
check "a signed descriptor: 125" \
  rejects "'+3' is not a descriptor" --status-fd +3 -- "${RAN[@]}"
check "a descriptor below 3: 125" \
  rejects "3 or above, not 2" --status-fd 2 -- "${RAN[@]}"
check "--status-fd twice: 125" \
  rejects "given twice" --status-fd 3 --status-fd 3 -- "${RAN[@]}"
check "--status-fd without a value: 125" rejects "needs a value" --status-fd
check "a relative --cwd: 125" \
  rejects "--cwd must be an absolute path" \
  --status-fd 3 --cwd tmp -- "${RAN[@]}"
check "a closed status descriptor: 125" \
  rejects "--status-fd 7: Bad file descriptor" --status-fd 7 -- "${RAN[@]}" 7>&-
check "a status descriptor that is not a socket: 125" \
  rejects "not a Unix SOCK_SEQPACKET socket" --status-fd 7 -- "${RAN[@]}" \
  7</dev/null
check "a closed stdin: 125" \
  rejects "descriptor 0 is not open" --status-fd 7 -- "${RAN[@]}" \
  7</dev/null 0<&-

check "--protect without --confine: 125" \
  rejects "need --confine" --status-fd 3 --protect .git -- "${RAN[@]}"
check "--lower without the rest of the overlay: 125" \
  rejects "go together" --status-fd 3 --confine --lower /a -- "${RAN[@]}"
check "a --protect name that is not plain: 125" \
  rejects "'..' is not a plain relative path" --status-fd 3 --confine --lower /a \
  --upper /b --work /c --root /d --protect .. -- "${RAN[@]}"
OVL=(--confine --lower /a --upper /b --work /c --root /d)
check "--unreadable without the overlay: 125" \
  rejects "need the overlay (--root) and a --hide directory" --status-fd 3 \
  --confine --unreadable '*.pem' -- "${RAN[@]}"
check "a pattern outside the grammar: 125" \
  rejects "--unreadable: 'a/\*\*/b/\*\*' has more than one '\*\*'" \
  --status-fd 3 "${OVL[@]}" --hide /h --unreadable 'a/**/b/**' -- "${RAN[@]}"
check "--socket without --hide-sockets: 125" \
  rejects "--socket needs --hide-sockets" --status-fd 3 "${OVL[@]}" --hide /h \
  --socket a.sock -- "${RAN[@]}"
check "a --socket name that is not plain: 125" \
  rejects "--socket: '../a.sock' is not a plain relative path" --status-fd 3 \
  "${OVL[@]}" --hide /h --hide-sockets --socket ../a.sock -- "${RAN[@]}"
check "--hide-sockets twice: 125" \
  rejects "--hide-sockets given twice" --status-fd 3 "${OVL[@]}" --hide /h \
  --hide-sockets --hide-sockets -- "${RAN[@]}"
check "a zero --address-space: 125" \
  rejects "--address-space: '0' is not a number from 1 to" --status-fd 3 \
  --address-space 0 -- "${RAN[@]}"
check "an overlay path holding a comma: 125" \
  rejects "holds ','" --status-fd 3 --confine --lower /a,b --upper /b \
  --work /c --root /d -- "${RAN[@]}"
check "a zero --cpu-seconds: 125" \
  rejects "'0' is not a number from 1" --status-fd 3 --cpu-seconds 0 \
  -- "${RAN[@]}"
check "--env-fd equal to --status-fd: 125" \
  rejects "--env-fd: '3'" --status-fd 3 --env-fd 3 -- "${RAN[@]}"

check "--seccomp-fd equal to --status-fd: 125" \
  rejects "--seccomp-fd: '3' is not a descriptor number" --status-fd 3 \
  --seccomp-fd 3 -- "${RAN[@]}"
check "--net-fd equal to --status-fd: 125" \
  rejects "--net-fd: '3' is not a descriptor number of 3 or above, apart from the others" \
  --status-fd 3 --confine --net-fd 3 -- "${RAN[@]}"
check "--net-fd without --confine: 125" \
  rejects "--net-fd needs --confine" --status-fd 3 --net-fd 5 -- "${RAN[@]}"
check "--port without --net-fd: 125" \
  rejects "--port needs --net-fd" --status-fd 3 --confine --port 5173 -- "${RAN[@]}"
check "a --port below 1024: 125" \
  rejects "--port: '1023' is not a port from 1024 to 65535 other than 3128" \
  --status-fd 3 --confine --net-fd 5 --port 1023 -- "${RAN[@]}"
check "--port 3128, the proxy's own: 125" \
  rejects "--port: '3128' is not a port from 1024 to 65535 other than 3128" \
  --status-fd 3 --confine --net-fd 5 --port 3128 -- "${RAN[@]}"
# A net channel that is not a SOCK_SEQPACKET Unix socket (a file here)
# refuses the launch before anything runs.
rm -f "$TMP/ran"
echo plain >"$TMP/plain"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --confine --net-fd 5 \
  -- "${RAN[@]}" >/dev/null 2>"$TMP/err" 5<"$TMP/plain"
check "--net-fd that is not a SOCK_SEQPACKET socket: 125, nothing runs" \
  sh -c "grep -q 'net-fd 5 is not a Unix SOCK_SEQPACKET socket' '$TMP/err' \
    && [ ! -e '$TMP/ran' ]"

# The workload's filter from --seccomp-fd, loaded last: a one-instruction
# program (return ALLOW) binds the workload (Seccomp: 2, filter mode); a
# program that is not whole instructions refuses the launch, naming the
# step, and runs nothing.
printf '\006\000\000\000\000\000\377\177' >"$TMP/allow.bpf"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --seccomp-fd 5 \
  -- /bin/grep '^Seccomp:' /proc/self/status >"$TMP/out" 2>"$TMP/err" \
  5<"$TMP/allow.bpf"
check "--seccomp-fd: the workload runs under the filter" \
  grep -q 'Seccomp:[[:space:]]*2' "$TMP/out"
printf '\006\000\000' >"$TMP/short.bpf"
rm -f "$TMP/ran"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --seccomp-fd 5 \
  -- "${RAN[@]}" >/dev/null 2>"$TMP/err" 5<"$TMP/short.bpf"
check "--seccomp-fd: a partial instruction refuses the launch" \
  sh -c "grep -q \"reading the workload's seccomp filter: Invalid argument\" \
    '$TMP/err' && [ ! -e '$TMP/ran' ]"

# The workload's environment from --env-fd, NUL-separated, values with
# spaces intact; nothing of the broker's own.
printf 'A=1\0B=two words\0' >"$TMP/envblock"
rm -f "$TMP/report"
BROKER_OWN=leak "$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 \
  --env-fd 5 -- /usr/bin/env >"$TMP/out" 2>"$TMP/err" 5<"$TMP/envblock"
check "--env-fd gives the workload exactly that environment" \
  test "$(cat "$TMP/out")" = $'A=1\nB=two words'

# --output-fd: the workload's stdout and stderr, apart from the broker's.
rm -f "$TMP/report"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 --output-fd 5 -- \
  /bin/sh -c 'echo out; echo err >&2' >"$TMP/out" 2>"$TMP/err" \
  5>"$TMP/workload-out"
check "--output-fd carries the workload's stdout and stderr" \
  test "$(cat "$TMP/workload-out")" = $'out\nerr' -a ! -s "$TMP/out"

# Positive control for the rejections: a good command line does run it.
rm -f "$TMP/ran"
"$PEER" -o "$TMP/report" -- "$BROKER" --status-fd 3 -- "${RAN[@]}" \
  >"$TMP/out" 2>"$TMP/err"
check "control: a good command line runs the program" test -e "$TMP/ran"

