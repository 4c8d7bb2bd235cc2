#!/bin/bash
# crucible session against a hostile agent (issue 19, F and H): the
# transcript carries no control sequence of the agent's (ESC, BEL, C1 are
# shown as \xHH; invalid UTF-8 as U+FFFD), and a NUL in a command, an env
# name or an id is refused rather than cut at, with nothing run (the same
# call without the NUL is the positive control).
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 7
new_workspace
one() { echo go; }
NUL_ERROR='a string in the message holds a NUL character (\\u0000)'

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"text","text":"title\u001b]0;owned\u0007clear\u001b[2J c1\u009b raw\u00ff"}
send {"type":"bash","id":"c1","command":"echo ok","description":"desc\u001b[31mred"}
expect {"type":"tool_result","id":"c1","text":"ok","is_error":false}
send {"type":"end_turn"}
EOF2
session one --yes
agent_clean "the agent's text and description are taken"
ok "$(printf '%s' "$out" | grep -q $'[\x07\x1b]\|\xc2\x9b' && echo 1 || echo 0)" \
  "no ESC, BEL or C1 of the agent's reaches the terminal"
like "$out" '◆ title\\x1b\]0;owned\\x07clear\\x1b\[2J c1\\xc2\\x9b raw' "they are shown as \\xHH"
like "$out" '  · desc\\x1b\[31mred' "in a description too"

agent_script <<EOF2
expect "type":"hello"
$HELLO
expect "type":"prompt"
send {"type":"bash","id":"n1","command":"echo A\u0000; touch B"}
expect {"type":"error","text":"$NUL_ERROR"}
expect {"type":"tool_result","id":"n1"
send {"type":"bash","id":"n2","command":"touch C","env":{"A\u0000LD_PRELOAD":"x"}}
expect {"type":"error","text":"$NUL_ERROR"}
expect {"type":"tool_result","id":"n2"
send {"type":"bash","id":"n3","command":"touch C","env":{"A":"x\u0000y"}}
expect {"type":"error","text":"$NUL_ERROR"}
expect {"type":"tool_result","id":"n3"
send {"type":"bash","id":"n4","command":"printf %s \"\$A\"; touch D","env":{"A":"xy"}}
expect {"type":"tool_result","id":"n4","text":"xy","is_error":false}
send {"type":"end_turn"}
EOF2
session one --yes
agent_clean "a NUL in a command, an env name or a value is refused, the call answered"
ok "$([ ! -e B ] && [ ! -e C ] && echo 0 || echo 1)" "and nothing of them ran"
ok "$([ -e D ] && echo 0 || echo 1)" "positive control: the same call without the NUL ran"
