#!/bin/bash
# Escape attempts against process isolation, descriptors and the
# environment: seeing, signalling and tracing a host process, a descriptor
# beyond 0-2, a crucible variable, a value in an argument list.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=15
sec_begin "$PER_IDENTITY"

HOSTPIDS=()
cleanup_hosts() {
  local p
  for p in "${HOSTPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TEST_TMP"
}
trap cleanup_hosts EXIT

for who in $ids; do
  sec_become "$who"
  # A host process of the same identity, so only the boundary stands in
  # the way.
  (sec_exec sleep 300) &
  victim=$!
  HOSTPIDS+=("$victim")
  disown "$victim"
  sleep 0.1

  attempt "seeing a host process in /proc" \
    "grep -q sleep /proc/$victim/cmdline"
  attempt "signalling a host process (signal 0)" "kill -0 $victim"
  if command -v strace >/dev/null 2>&1; then
    attempt "tracing a host process" \
      "timeout 2 strace -p $victim -e trace=none 2>&1 | grep -q attached"
  else
    skip "control: tracing a host process" "no strace"
    skip "confined: tracing a host process" "no strace"
  fi
  kill -0 "$victim" 2>/dev/null
  ok $? "the host process survived every attempt ($WHO)"

  # A secret open on descriptor 9 of the process that starts the command.
  echo fd-secret >"$OUT/fd-secret"
  exec 9<"$OUT/fd-secret"
  attempt "reading an inherited descriptor 9" "grep -q fd-secret <&9"
  exec 9<&-

  # A crucible variable in the environment crucible runs in.
  export CRUCIBLE_SESSION_TOKEN=tok-in-env
  attempt "reading a crucible variable" \
    "env | grep -q CRUCIBLE_SESSION_TOKEN"
  unset CRUCIBLE_SESSION_TOKEN

  # SIGKILL to the process that started the command ends all of it, even
  # a descendant in a session of its own.  Control: unsupervised, that
  # descendant outlives its shell.
  tag=$((RANDOM + 20000))
  (cd "$WS" && sec_exec sh -c "setsid sleep $tag & exec sleep 300") &
  starter=$!
  sleep 0.3
  kill -KILL "$starter"
  sleep 0.3
  pgrep -f "^sleep $tag\$" >/dev/null
  ok $? "control ($WHO): unsupervised, a setsid descendant outlives SIGKILL"
  pkill -KILL -f "^sleep $tag\$"
  tag=$((tag + 1))
  (cd "$WS" && sec_exec "$SANDBOX_RUN" -- "setsid sleep $tag & exec sleep 300" \
    >/dev/null 2>&1) &
  starter=$!
  for _ in $(seq 100); do
    pgrep -f "^sleep $tag\$" >/dev/null && break
    sleep 0.05
  done
  kill -KILL "$starter"
  gone=1
  for _ in $(seq 40); do
    pgrep -f "^sleep $tag\$" >/dev/null || { gone=0; break; }
    sleep 0.05
  done
  ok $gone "confined ($WHO): SIGKILL to the starter ends the whole workload"
  pkill -KILL -f "^sleep $tag\$"

  # A value given to the command reaches it by its environment only: no
  # argument list in the namespace (the broker's, PID 1) holds it.
  confined 'echo "$GIVEN"; cat /proc/1/cmdline | tr "\0" " "' \
    --env GIVEN=value-not-in-argv
  like "$cout" "^value-not-in-argv" "confined ($WHO): a given variable arrives"
  [[ "$cout" != *"value-not-in-argv"*"value-not-in-argv"* ]] \
    && [[ "$cout" == *"--env-fd"* ]]
  ok $? "confined ($WHO): no argument list inside holds its value"
done
