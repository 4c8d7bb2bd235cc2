# Helpers for the crucible session tests: a scripted agent (tests/agents/
# scripted-agent) follows $SCRIPT and logs every message to $LOG.  Source
# after lib.sh.
AGENT="$CRUCIBLE_SRCDIR/tests/agents/scripted-agent"
SCRIPT="$TEST_TMP/script.txt"
LOG="$TEST_TMP/agent.log"

# agent_script: the agent's script, from standard input.
agent_script() { cat >"$SCRIPT"; }

# session INPUT [ARG]...: run `crucible session --agent ... ARG...` in the
# workspace with INPUT (a function) writing its standard input; stdout in
# $out, stderr in $err, the exit status in $rc.  The agent's log starts empty.
session() {
  local input=$1
  shift
  rm -f "$LOG" "$LOG.lives"
  out=$("$input" | SCRIPTED_AGENT_LOG="$LOG" timeout -k 5 60 "$CRUCIBLE" session \
    --agent "$AGENT $SCRIPT" "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

# count TEXT IN: how many lines of IN contain TEXT (a fixed string).
count() { printf '%s\n' "$2" | grep -cF -- "$1" || true; }

# agent_log: the agent's log.
agent_log() { cat "$LOG" 2>/dev/null; }

# agent_clean DESCRIPTION: pass when the agent met every expectation.
agent_clean() {
  if grep -q '^!' "$LOG" 2>/dev/null; then
    ok 1 "$1"
    diag "$(agent_log)"
  else
    ok 0 "$1"
  fi
}

# agent_pids: the process ids the agent logged, one per start.
agent_pids() { sed -n 's/^= pid \([0-9]*\) .*/\1/p' "$LOG"; }

# gone_all PID...: whether every PID has exited within 5 seconds.
gone_all() {
  local pid
  for pid in "$@"; do
    wait_gone "$pid" 5 || return 1
  done
}

# no_process PATTERN: pass when no process's command line contains PATTERN.
no_process() {
  local tries=100
  while [ "$tries" -gt 0 ]; do
    pgrep -f -- "$1" >/dev/null || return 0
    sleep 0.05
    tries=$((tries - 1))
  done
  return 1
}

HELLO='send {"type":"hello","protocol":1,"name":"scripted"}'
