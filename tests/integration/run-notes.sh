#!/bin/bash
# crucible run prints exactly the result the model gets: every note pinned.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 13
new_workspace

crun run -- 'echo "   Compiling api v0.3.1"; echo "    Finished \`dev\` profile in 4.21s"'
is "$out" "$(printf '   Compiling api v0.3.1\n    Finished `dev` profile in 4.21s')" \
  "success is the output alone"

crun run -- 'echo out; echo err >&2; exit 1'
is "$out" "$(printf 'out\nerr\n[exit status 1]')" \
  "stdout and stderr joined, then [exit status 1]"

crun run -- 'no-such-program-here'
is "$out|$rc" "sh: 1: no-such-program-here: not found
[exit status 127]|127" "a program that is not there is the shell's own answer, as it comes"

crun run -- 'true'
is "$out" "(no output)" "nothing printed answers (no output)"

crun run -- 'exit 7'
is "$out" "$(printf '(no output)\n[exit status 7]')" "(no output) then the exit status"

crun run -- 'printf partial; kill -KILL $$'
is "$out" "$(printf 'partial\n[the command was killed]')" "killed by a signal"

crun run --timeout 0.3 -- 'echo started; sleep 10'
is "$out" "$(printf 'started\n[stopped: the command ran too long]')" "timeout note"

crun run -- 'sleep 5 & echo up'
is "$out" "$(printf 'up\n[output was still arriving: something the command left running holds it open]')" \
  "a descendant holding the pipe is said"

crun run -- 'sleep 5 & echo up; exit 2'
is "$out" "$(printf 'up\n[output was still arriving: something the command left running holds it open]\n[exit status 2]')" \
  "still-arriving comes before the exit status"

# The spec's example: 41200 bytes, 11456 omitted from the middle.
crun run -- 'head -c 41200 /dev/zero | tr "\0" a; exit 1'
like "$out" $'^a+\n\\[process output was 41200 bytes; 11456 bytes omitted from the middle during capture\\]\na+\n\\[exit status 1\\]$' \
  "the capture note, at the cut"
head_len=$(printf '%s' "$out" | head -n 1 | tr -d '\n' | wc -c)
tail_len=$(printf '%s' "$out" | sed -n 3p | tr -d '\n' | wc -c)
is "$((head_len + tail_len))" "29744" "the retained head and tail are 29,744 bytes"

# Escape-heavy output: tabs cost two encoded bytes each.
crun run -- 'head -c 29000 /dev/zero | tr "\0" "\t"'
like "$out" $'\\[encoded output was 58000 bytes; [0-9]+ encoded bytes omitted from the middle\\]' \
  "the encoded-size note when escaping costs more"

mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"limits":{"outputBytes":1000}}}' >"$HOME/.crucible/config.json"
crun run -- 'yes'
like "$out" $'\ny\n\\[stopped: the command printed more than 1000 bytes, the output ceiling \\(sandbox.limits.outputBytes\\)\\]$' \
  "the output-ceiling note"
