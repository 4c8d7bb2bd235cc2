#!/bin/bash
# An ending of a command left running is told to the agent exactly once,
# by whichever route gets there first: between steps of a running turn,
# with the next prompt (typed or queued), or by starting a turn when
# nothing is running.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 14
new_workspace
BG='send {"type":"bash","id":"bg","command":"sleep 0.6; echo bye; exit 3","description":"a short server","background":true}'
NOTE='[#1 a short server ended on its own · exit status 3 · 1 line; what it printed:]\nbye\n[exit status 3]'
LINE='✗ a short server ended on its own · exit status 3 · 1 line'

# Between steps: the next tool result carries it, in an endings message.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
$BG
expect left running as #1
send {"type":"bash","id":"fg","command":"sleep 1.5 | cat; echo done"}
expect {"type":"endings","text":"$NOTE","starts_turn":false}
expect {"type":"tool_result","id":"fg","text":"done","is_error":false}
send {"type":"end_turn"}
EOF2
input() { echo go; sleep 2.5; }
session input --yes
agent_clean "between steps: an endings message right before the next result"
is "$(grep -c 'ended on its own' "$LOG")" "1" "told once"
is "$(count "$LINE" "$out")" "1" "the person's line, once"
like "$out" "● Bash\\(sleep 1.5 | cat; echo done\\)
$LINE
    done" "written the moment it happens, before the result it waited behind"

# With the next prompt: a prompt queued while the turn runs takes it.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"first"}
$BG
expect left running as #1
sleep 1.5
send {"type":"end_turn"}
expect {"type":"prompt","text":"second","endings":"$NOTE"}
send {"type":"end_turn"}
EOF2
input() { echo first; sleep 0.3; echo second; }
session input --yes
agent_clean "with the next prompt: the queued prompt carries it"
is "$(grep -c 'ended on its own' "$LOG")" "1" "told once"
like "$out" "$LINE
› second" "the person's line comes when it happens, the queued prompt after the turn"

# With a prompt typed while nothing runs, after the ending... which then
# has already started a turn: the box-idle route.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect {"type":"prompt","text":"first"}
$BG
expect left running as #1
send {"type":"end_turn"}
expect {"type":"endings","text":"$NOTE","starts_turn":true}
send {"type":"text","text":"the server fell over"}
send {"type":"end_turn"}
expect {"type":"prompt","text":"later"}
send {"type":"end_turn"}
EOF2
input() { echo first; sleep 2; echo later; sleep 0.5; }
session input --yes
agent_clean "nothing running: the ending starts a turn"
is "$(grep -c 'ended on its own' "$LOG")" "1" "told once, not again with the next prompt"
like "$out" "$LINE
› \\(a command left running ended; the agent is told\\)
◆ the server fell over
› later" "the person sees why the agent is talking"

# Two endings in one delivery, joined by a blank line, and none lost when
# the agent is slow.
agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"a","command":"sleep 0.5; exit 1","background":true}
expect left running as #1
send {"type":"bash","id":"b","command":"sleep 0.5; exit 2","background":true}
expect left running as #2
sleep 1.5
send {"type":"bash_output","id":"o","number":1}
expect "type":"endings"
expect "id":"o"
send {"type":"end_turn"}
EOF2
input() { echo go; sleep 2.5; }
session input --yes
agent_clean "two endings before one result"
like "$(grep '"type":"endings"' "$LOG")" 'ended on its own · exit status 1 · 0 lines; what it printed:\]\\n\(no output\)\\n\[exit status 1\]\\n\\n\[#2 ' \
  "both, in the order they happened, joined by a blank line"
is "$(grep -c 'ended on its own' "$LOG")" "1" "in one message"

# The built-in agent has no model to tell: the line only, no turn started.
out=$(timeout 30 "$CRUCIBLE" session < <(echo 'sleep 0.3; exit 4 &'; sleep 1.2))
is "$out" "› sleep 0.3; exit 4 &
● Bash(sleep 0.3; exit 4)
    [left running as #1; ask bash_output what it has printed so far, and its output is handed over when it ends; do not poll or wait for it]
✗ Bash(sleep 0.3; exit 4) ended on its own · exit status 4 · 0 lines" \
  "without an agent the ending is the person's line alone"
