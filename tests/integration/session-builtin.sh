#!/bin/bash
# crucible session without an agent: the built-in shell agent runs each
# prompt line as one bash call, never asking; a trailing " &" leaves it
# running; EOF ends the session, stopping every command.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
plan 15
new_workspace
MARK="sleep 30.$$"

shell_session() {
  out=$(timeout 60 "$CRUCIBLE" session "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

shell_session < <(printf 'echo hello\nfalse\n')
is "$out|$rc" "› echo hello
● Bash(echo hello)
    hello
› false
● Bash(false)
    (no output)
    [exit status 1]|0" "each line is one call, answered, with no question; EOF exits 0"

shell_session < <(printf 'sleep 0.6; echo bye; exit 3 &\nsleep 1.5\n')
is "$out" "› sleep 0.6; echo bye; exit 3 &
● Bash(sleep 0.6; echo bye; exit 3)
    [left running as #1; ask bash_output what it has printed so far, and its output is handed over when it ends; do not poll or wait for it]
› sleep 1.5
● Bash(sleep 1.5)
✗ Bash(sleep 0.6; echo bye; exit 3) ended on its own · exit status 3 · 1 line
    (no output)" "a trailing & leaves it running; its ending is written as it happens"

shell_session < <(printf 'true && echo a&&b\necho x&\n')
like "$out" $'● Bash\\(true && echo a&&b\\)\n.*● Bash\\(echo x&\\)' "&& and a & with no blank before it are the shell's own"

shell_session < <(echo "$MARK &"; sleep 0.5)
like "$out" 'left running as #1' "a command left running"
no_process "$MARK"
ok $? "EOF stops every command: nothing is left after crucible exits"
is "$(count '✗' "$out")" "0" "a command stopped because crucible exits is not said to end on its own"

shell_session < <(printf '   \n\n')
is "$out|$rc" "|0" "blank lines are not prompts"

shell_session --help </dev/null
like "$out" '^Usage: crucible session \[--agent CMD\] \[--yes\] \[DIR\]' "--help prints the usage"

shell_session --bogus </dev/null
is "$rc|$(echo "$err" | head -n 1)" "125|crucible: session: unknown option '--bogus'" "an unknown option"

shell_session /no/such/dir </dev/null
like "$rc|$err" '^125\|crucible: session: finding the directory /no/such/dir: No such file or directory$' "a directory that is not there"

mkdir -p "$WS/sub"
shell_session "$WS/sub" < <(echo pwd)
is "$(echo "$out" | sed -n 3p)" "    $WS/sub" "commands run in DIR"

shell_session --agent </dev/null
is "$rc|$(echo "$err" | head -n 1)" "125|crucible: session: --agent needs a value" "--agent without its value"
shell_session --agent= </dev/null
is "$rc|$(echo "$err" | head -n 1)" "125|crucible: session: --agent needs a command" "--agent with an empty command"
shell_session "$WS" "$WS" </dev/null
is "$rc|$(echo "$err" | head -n 1)" "125|crucible: session: one directory at most, not also '$WS'" "two directories"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}' >"$HOME/.crucible/config.json"
out=$(echo 'touch ran' | without_bwrap "$CRUCIBLE" session 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 2 ]; then
  skip "confinement enabled with no usable backend runs nothing" "needs root to hide bwrap in a private mount namespace"
else
  is "$rc|$out|$([ -e ran ] && echo ran)" "125|crucible: session: $NO_BWRAP_REFUSAL|" \
    "confinement enabled with no usable backend runs nothing"
fi
rm -f "$HOME/.crucible/config.json"
