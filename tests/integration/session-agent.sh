#!/bin/bash
# crucible session with an agent: calls answered, questions, bash_output,
# and protocol errors answered rather than crashing the session.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 24
new_workspace
one() { echo go; }
slow_input() { echo go; sleep 1.5; }

# A call answered, with its description, env and a failing second call.
agent_script <<EOF2
expect "type":"hello","protocol":1,
$HELLO
expect {"type":"prompt","text":"go"}
send {"type":"text","text":"two lines\nof text"}
send {"type":"bash","id":"c1","command":"echo hi; echo \$FOO","description":"saying hi","env":{"FOO":"bar"}}
expect {"type":"tool_result","id":"c1","text":"hi\nbar","is_error":false}
send {"type":"bash","id":"c2","command":"echo no; exit 2","timeout":5}
expect {"type":"tool_result","id":"c2","text":"no\n[exit status 2]","is_error":true}
send {"type":"end_turn"}
EOF2
session one --yes
agent_clean "the agent got hello, the prompt and both results"
is "$out|$rc" "› go
◆ two lines
  of text
? allow Bash(echo hi; echo \$FOO)
  allowed (--yes)
● Bash(echo hi; echo \$FOO)
  · saying hi
    hi
    bar
? allow Bash(echo no; exit 2)
  allowed (--yes)
● Bash(echo no; exit 2)
    no
    [exit status 2]|0" "the transcript"
like "$(agent_log)" '< EOF' "the agent's input is closed at the end"

# Without --yes and without a terminal, calls are refused, saying why.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"c1","command":"echo hi","background":true}
expect {"type":"tool_result","id":"c1","text":"[refused: the developer could not be asked: crucible session reads its prompts from a pipe, not a terminal, and was not started with --yes; nothing was run]","is_error":true}
send {"type":"end_turn"}
EOF2
session one
agent_clean "a call that cannot be asked about is refused, saying why"
is "$out" "› go
? allow Bash(echo hi)
  it will still be running after the turn ends
  refused: there is no terminal to ask on; start crucible session with --yes to allow the agent's calls
● Bash(echo hi)
    [refused: the developer could not be asked: crucible session reads its prompts from a pipe, not a terminal, and was not started with --yes; nothing was run]" \
  "the question says a background call outlives the turn, and the refusal"

# bash_output: running with output, running without, an unknown number.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"a","command":"echo ready; sleep 30","background":true}
expect left running as #1
send {"type":"bash","id":"b","command":"sleep 30","background":true}
expect left running as #2
send {"type":"bash_output","id":"o1","number":1}
expect {"type":"tool_result","id":"o1","text":"ready\n[#1 is still running]","is_error":false}
send {"type":"bash_output","id":"o2","number":2}
expect {"type":"tool_result","id":"o2","text":"[#2 is running and has printed nothing yet]","is_error":false}
send {"type":"bash_output","id":"o3","number":9}
expect {"type":"tool_result","id":"o3","text":"[no command is running as #9; running now: #1 Bash(echo ready; sleep 30), #2 Bash(sleep 30); a command that has ended leaves this list, and what it printed is handed over on its own]","is_error":false}
send {"type":"end_turn"}
EOF2
session one --yes
agent_clean "bash_output in its three cases"
is "$(count '? allow BashOutput' "$out")" "0" "bash_output is never asked about"
like "$out" $'● BashOutput\\(#1\\)\n    ready\n    \\[#1 is still running\\]' "bash_output in the transcript"

# Protocol errors: each answered with an error message, the session goes on.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {not json
expect {"type":"error","text":"not JSON (lexical error: invalid string in json text.)"}
send {"type":"dance"}
expect {"type":"error","text":"unknown message type \"dance\""}
send [1,2]
expect {"type":"error","text":"a message must be a JSON object"}
send {"text":"x"}
expect {"type":"error","text":"a message needs \"type\" as a string"}
send {"type":"bash","id":"m1"}
expect {"type":"error","text":"a bash message needs \"command\" as a non-empty string"}
expect {"type":"tool_result","id":"m1","text":"[refused: the call was malformed: a bash message needs \"command\" as a non-empty string; nothing was run]","is_error":true}
send {"type":"bash","id":"m2","command":"true","backgrund":true}
expect {"type":"error","text":"unknown field \"backgrund\" in a bash message"}
expect "id":"m2"
send {"type":"bash","id":"m3","command":"true","timeout":-1}
expect {"type":"error","text":"\"timeout\" must be a number of seconds above 0"}
expect "id":"m3"
send {"type":"bash_output","id":"m4","number":"1"}
expect {"type":"error","text":"a bash_output message needs \"number\" as an integer"}
expect "id":"m4"
send {"type":"bash","command":"true"}
expect {"type":"error","text":"a bash message needs \"id\" as a non-empty string"}
send {"type":"hello","protocol":1}
expect {"type":"error","text":"hello was already received"}
send {"type":"bash","id":"ok","command":"echo still here"}
expect {"type":"tool_result","id":"ok","text":"still here","is_error":false}
send {"type":"end_turn"}
send {"type":"end_turn"}
expect {"type":"error","text":"end_turn arrived outside a turn"}
send {"type":"text","text":"late"}
expect {"type":"error","text":"text arrived outside a turn"}
send {"type":"bash","id":"late","command":"true"}
expect {"type":"error","text":"bash arrived outside a turn"}
expect {"type":"tool_result","id":"late","text":"[refused: the call arrived outside a turn; nothing was run]","is_error":true}
EOF2
session slow_input --yes
agent_clean "every malformed message is answered with an error naming what was wrong"
is "$rc" "0" "and the session ends normally"
like "$out" '! the agent sent a message crucible could not use: not JSON \(lexical error: invalid string in json text.\)' \
  "the person is told too"
is "$(count '! the agent sent a message crucible could not use:' "$out")" "13" "once for each"
like "$out" $'● Bash\\(echo still here\\)\n    still here' "a good call after bad ones runs"

# An over-long message, then a good one.
long_input() { echo go; }
{
  cat <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"text","text":"$(head -c 1048600 /dev/zero | tr '\0' a)"}
expect {"type":"error","text":"a message is longer than 1048576 bytes"}
send {"type":"end_turn"}
EOF2
} | agent_script
session long_input
agent_clean "a message over 1 MiB is refused and the next one read"

# A message before hello, and a protocol version crucible does not speak.
agent_script <<EOF2
expect "type":"hello"
send {"type":"text","text":"hi"}
expect "type":"prompt"
expect {"type":"error","text":"the first message must be hello"}
send {"type":"hello","protocol":2}
expect {"type":"error","text":"protocol version 2 is not supported; crucible speaks 1"}
EOF2
session one
agent_clean "the first message must be hello; the version is checked"
like "$out" '! the agent sent a message crucible could not use: protocol version 2 is not supported; crucible speaks 1
! the agent was killed by signal 9; it will be started again for the next prompt' \
  "an agent speaking another version is stopped"
is "$rc" "0" "the session still ends normally"

# end_turn with a call unanswered: an error, the call's command stopped.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"slow","command":"sleep 30.$$"}
sleep 0.3
send {"type":"end_turn"}
expect {"type":"error","text":"end_turn arrived while call \"slow\" was unanswered; what it started was stopped and its result is not sent"}
EOF2
session slow_input --yes
agent_clean "end_turn with a call unanswered is an error"
like "$out" $'● Bash\\(sleep 30.[0-9]+\\)\n! the agent sent a message crucible could not use: end_turn arrived while call "slow" was unanswered; what it started was stopped and its result is not sent\n    \\(no output\\)\n    \\[the command was killed\\]' \
  "its command is stopped and its result shown, not sent"
is "$(grep -c '"id":"slow","text"' "$LOG")" "0" "the result is not sent"

# A duplicate id of an unanswered call.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"d","command":"sleep 0.5"}
send {"type":"bash","id":"d","command":"true"}
expect {"type":"error","text":"a call with id \"d\" is already unanswered"}
expect {"type":"tool_result","id":"d","text":"(no output)","is_error":false}
send {"type":"end_turn"}
EOF2
session one --yes
agent_clean "an id already unanswered is refused"

# On a terminal the next line answers the question.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"a","command":"echo allowed"}
expect {"type":"tool_result","id":"a","text":"allowed","is_error":false}
send {"type":"bash","id":"b","command":"echo declined"}
expect {"type":"tool_result","id":"b","text":"[refused: the developer declined to run it; nothing was run]","is_error":true}
send {"type":"end_turn"}
EOF2
if command -v script >/dev/null 2>&1; then
  rm -f "$LOG" "$LOG.lives"
  out=$( (echo go; sleep 0.5; echo y; sleep 0.5; echo n; sleep 0.5) |
    SCRIPTED_AGENT_LOG="$LOG" timeout 30 script -qec \
      "'$CRUCIBLE' session --agent '$AGENT $SCRIPT'" /dev/null | tr -d '\r')
  agent_clean "on a terminal: y allows, anything else declines"
  like "$out" '\? allow Bash\(echo declined\)
  allow it\? \[y/N\] n
● Bash\(echo declined\)
    \[refused: the developer declined to run it; nothing was run\]' "the question and the refusal"
else
  skip "on a terminal: y allows, anything else declines" "script(1) is not installed"
  skip "the question and the refusal" "script(1) is not installed"
fi

is "$(no_process "sleep 30.$$" && echo none)" "none" "no command is left after the sessions"
