#!/bin/bash
# Esc (/cancel in the line front end) stops the turn and its own foreground
# command, never a command left running; ctrl+b (/detach) leaves the
# foreground command running; an agent that does not end a cancelled turn
# is stopped.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 12
new_workspace
FG="sleep 30.1$$"
BGC="sleep 30.2$$"

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"bash","id":"bg","command":"$BGC","background":true}
expect left running as #1
send {"type":"bash","id":"fg","command":"echo started; $FG"}
expect {"type":"cancel"}
expect {"type":"tool_result","id":"fg","text":"started\n[the command was killed]","is_error":true}
send {"type":"bash","id":"after","command":"echo nope"}
expect {"type":"tool_result","id":"after","text":"[refused: the developer pressed esc to stop this turn; nothing was run]","is_error":true}
send {"type":"end_turn"}
expect {"type":"prompt","text":"again"}
send {"type":"bash_output","id":"o","number":1}
expect {"type":"tool_result","id":"o","text":"[#1 is running and has printed nothing yet]","is_error":false}
send {"type":"end_turn"}
EOF2
input() { echo go; sleep 1; echo /cancel; sleep 1; echo again; sleep 0.5; }
session input --yes
agent_clean "cancel: the agent is told, the foreground call answered, later calls refused"
like "$out" $'● Bash\\(echo started; sleep 30.1[0-9]+\\)\n    started\n    \\[the command was killed\\]' \
  "the foreground command was stopped"
like "$out" '● BashOutput\(#1\)
    \[#1 is running and has printed nothing yet\]' "the command left running was not"
no_process "$BGC"
ok $? "and it is gone after crucible exits"

# /cancel with no turn running.
out=$(printf '/cancel\n' | timeout 30 "$CRUCIBLE" session)
is "$out" "! no turn is running" "/cancel with no turn"

# The built-in agent: cancel stops the typed command.
out=$( (echo "$FG"; sleep 0.5; echo /cancel) | timeout 30 "$CRUCIBLE" session)
is "$out" "› $FG
● Bash($FG)
    (no output)
    [the command was killed]" "cancel stops a typed command"

# /detach: the foreground command is left running, the call answered so.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"fg","command":"echo up; >u; until [ -e g ]; do sleep .1; done; echo late; rm u; exit 5"}
expect {"type":"tool_result","id":"fg","text":"up\n\n[left running as #1; the developer pressed ctrl+b to leave it running rather than keep waiting; carry on with what does not depend on it; ask bash_output what it has printed so far, and its output is handed over when it ends; do not poll or wait for it]","is_error":false}
send {"type":"end_turn"}
expect {"type":"endings","text":"[#1 Bash(echo up; >u; until [ -e g ]; do sleep .1; done; echo late; rm u; exit 5) ended on its own · exit status 5 · 2 lines; what it printed:]\nup\nlate\n[exit status 5]","starts_turn":true}
send {"type":"end_turn"}
EOF2
# until_file [!] PATH: wait (30 s at most) until PATH is there, or is not.
until_file() {
  local i
  for ((i = 0; i < 300; i++)); do
    if [ "$1" = ! ]; then [ -e "$2" ] || return 0; else [ -e "$2" ] && return 0; fi
    sleep 0.1
  done
  return 1
}
# The command waits for g, which the person's side makes once the detach
# is sent, so neither waits on a clock that load could outrun.
input() {
  echo go; until_file -e u; sleep 0.3; echo /detach; sleep 0.5; : >g
  until_file ! u; rm -f g; sleep 1
}
session input --yes
agent_clean "detach: answered as left running by the developer, its ending told later"
out=$(printf '/detach\n' | timeout 30 "$CRUCIBLE" session)
is "$out" "! no command of this turn is running" "/detach with nothing to leave"

# An agent that ignores cancel is stopped after 5 seconds.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"text","text":"thinking"}
expect {"type":"cancel"}
sleep 30
EOF2
input() { echo go; sleep 0.5; echo /cancel; sleep 6; }
session input
like "$out" '! the agent did not end its turn within 5 seconds of being cancelled; it was stopped
! the agent was killed by signal 9; it will be started again for the next prompt' \
  "an agent that does not end a cancelled turn is stopped"
pids=$(agent_pids)
gone_all $pids
ok $? "the agent is gone"
no_process "$FG"
ok $? "no foreground command is left"

# SIGTERM ends the session now: a prompt queued behind a turn whose agent
# ignores the cancel is dropped, not started once the agent is stopped.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"text","text":"thinking"}
expect {"type":"cancel"}
sleep 30
EOF2
input() {
  echo go; sleep 0.5; echo queued
  until_file -e "$LOG"; sleep 0.5
  # crucible is the child of session()'s timeout, which would take a
  # SIGTERM as its own and kill crucible 5 s later.
  local me="session --agent $AGENT $SCRIPT" i
  pkill -TERM -P "$(pgrep -o -f -- "timeout .*$me")" -f -- "$me"
  for ((i = 0; i < 200; i++)); do pgrep -f -- "$me" >/dev/null || break; sleep 0.1; done
}
session input
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && ! grep -q queued "$LOG" \
  && [ "$(agent_pids | wc -l)" -eq 1 ]
r=$?
ok $r "SIGTERM drops the queued prompt and ends the session"
[ $r -eq 0 ] || diag "status $rc; $(agent_log)"
