#!/bin/bash
# Bad input to crucible run gets a clear message, exit 125, and runs nothing.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 18
new_workspace
usage='Usage: crucible run [--timeout S] [--env NAME=VALUE]... [--description TEXT] -- COMMAND
Run COMMAND through sh -c in the current directory, as one bash call,
and print exactly the result the model would get.'

crun run --frobnicate -- 'touch ran'
is "$rc|$err" "125|crucible: run: unknown option '--frobnicate'
$usage" "an unknown option is named"
ok "$([ ! -e ran ] && echo 0 || echo 1)" "and nothing ran"

for bad in abc 0 -1 inf 1e99 1e308 31536000.5; do
  crun run --timeout "$bad" -- 'touch ran'
  is "$rc|$(head -n 1 <<<"$err")" "125|crucible: run: --timeout takes a number of seconds greater than 0 and at most 31536000 (fractions allowed), not '$bad'" \
    "--timeout $bad is refused"
done

crun run --timeout
is "$rc|$(head -n 1 <<<"$err")" "125|crucible: run: --timeout needs a value" "a missing value is named"

crun run
is "$rc|$(head -n 1 <<<"$err")" "125|crucible: run: no command given: crucible run [OPTION]... -- COMMAND" \
  "a missing command is named"

crun run -- ''
is "$rc|$out" "125|[refused: the command is empty; nothing was run]" "an empty command is refused"

# A current directory that no longer exists.
mkdir gone && cd gone && rmdir ../gone
crun run -- 'echo hi'
is "$rc|$err" "125|crucible: finding the current directory: No such file or directory" \
  "a deleted current directory is named"
cd "$WS" || exit 1

# Confinement enabled with no enforcing backend refuses; it never runs
# unconfined.
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}' >"$HOME/.crucible/config.json"
out=$(without_bwrap "$CRUCIBLE" run -- 'touch ran' 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 2 ]; then
  skip "sandbox.enabled without a backend refuses the command" "needs root to hide bwrap in a private mount namespace"
else
  is "$rc|$out|$([ -e ran ] && echo ran)" "125|[refused: $NO_BWRAP_REFUSAL; nothing was run]|" \
    "sandbox.enabled without a backend refuses the command"
fi

# A result that cannot be written is said, not lost silently.
out=$("$CRUCIBLE" run -- 'echo hi' 2>&1 >/dev/full) && rc=0 || rc=$?
is "$rc|$out" "125|crucible: writing the result to standard output: No space left on device" \
  "a result that cannot be written is named"

# Deny rules hold in crucible run, also from the project's file, which may
# add them; the person typed the line, so nothing else stops it.
rm -f "$HOME/.crucible/config.json"
mkdir -p .crucible keep
printf '{"permissions":{"deny":["Bash(rm *)"]}}' >.crucible/config.json
crun run -- 'rm -rf keep'
is "$rc|$out" "125|[refused: the deny rules refuse it (\`rm -rf keep\` matches Bash(rm *)); nothing was run]" \
  "a project deny rule refuses the line in crucible run"
ok "$([ -d keep ] && echo 0 || echo 1)" "and nothing ran"
crun run -- 'sleep 0.1; echo slept'
is "$rc|$out" "0|slept" "a line the person typed that sleeps first still runs"
