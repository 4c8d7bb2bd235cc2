#!/bin/bash
# An agent that dies mid-turn is reported, its turn ends, its foreground
# command is stopped, commands it left running go on, and the next prompt
# starts it again.  Nothing is left once crucible exits.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 10
new_workspace
BGC="sleep 30.3$$"
FG="sleep 30.4$$"

agent_script <<EOF2
== life 1 ==
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"first"}
send {"type":"bash","id":"bg","command":"$BGC","background":true}
expect left running as #1
send {"type":"bash","id":"fg","command":"$FG"}
sleep 0.5
exit 7
== life 2 ==
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"second"}
send {"type":"bash_output","id":"o","number":1}
expect {"type":"tool_result","id":"o","text":"[#1 is running and has printed nothing yet]","is_error":false}
send {"type":"end_turn"}
EOF2
# The second prompt once the foreground command is gone (started, then
# killed with its agent), so its ending is printed before the prompt: a
# fixed sleep was outrun by load.
input() {
  local i
  echo first
  for ((i = 0; i < 300; i++)); do pgrep -f "$FG" >/dev/null && break; sleep 0.1; done
  for ((i = 0; i < 300; i++)); do pgrep -f "$FG" >/dev/null || break; sleep 0.1; done
  sleep 0.5; echo second; sleep 0.5
}
session input --yes
agent_clean "the agent met its script in both lives"
like "$out" "● Bash\\($FG\\)
! the agent exited with status 7; it will be started again for the next prompt
    \\(no output\\)
    \\[the command was killed\\]
› second" "the death is reported, the foreground command stopped, the turn over"
like "$out" '● BashOutput\(#1\)
    \[#1 is running and has printed nothing yet\]' "the command left running survived the agent"
is "$(agent_pids | wc -l)" "2" "the agent was started again for the next prompt"
is "$rc" "0" "the session ends normally"
gone_all $(agent_pids)
ok $? "no agent process is left"
no_process "$BGC"
ok $? "no command left running is left"

# An agent command that cannot run.
agent_fail() { echo one; sleep 0.5; echo two; }
out=$(agent_fail | timeout 30 "$CRUCIBLE" session --agent "/nonexistent/agent" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
is "$out|$rc" "› one
! the agent exited with status 127; it will be started again for the next prompt
› two
! the agent exited with status 127; it will be started again for the next prompt|0" \
  "an agent that cannot start is reported at each prompt"
like "$(cat "$TEST_TMP/stderr")" 'nonexistent/agent: not found' "the shell's own message reaches standard error"

# The home configuration names the agent.
mkdir -p "$HOME/.crucible"
printf '{"agent":{"command":"%s %s"}}' "$AGENT" "$SCRIPT" >"$HOME/.crucible/config.json"
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"hi"}
send {"type":"text","text":"configured"}
send {"type":"end_turn"}
EOF2
rm -f "$LOG" "$LOG.lives"
out=$(echo hi | SCRIPTED_AGENT_LOG="$LOG" timeout 30 "$CRUCIBLE" session)
is "$out" "› hi
◆ configured" "agent.command from the home configuration"
