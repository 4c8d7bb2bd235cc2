#!/bin/bash
# crucible with no command: --help, --version, and the error without a
# terminal (no tmux needed).
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"

plan 8
new_workspace

crun --help
is "$rc" 0 "--help exits 0"
like "$out" "Usage: crucible \[--agent CMD\] \[--theme NAME\] \[DIR\]" \
  "--help shows how to open the session"

crun --version
is "$out" "crucible 0.1.0" "--version names the version"

out=$("$CRUCIBLE" </dev/null 2>&1 >/dev/null) && rc=0 || rc=$?
is "$rc" 1 "no terminal: exit 1"
is "$out" "crucible: the session needs a terminal, and standard input is not one; for a session over pipes use crucible session, for one command crucible run" \
  "no terminal on standard input: says which and what to use instead"

out=$("$CRUCIBLE" "$WS" 2>&1 >/dev/null </dev/null) && rc=0 || rc=$?
like "$out" "standard input is not one" "a directory argument still needs a terminal"

out=$("$CRUCIBLE" --bogus 2>&1 >/dev/null) && rc=0 || rc=$?
is "$(printf '%s\n' "$out" | head -1)" "crucible: unknown option '--bogus'" \
  "an unknown option is named"
is "$rc" 2 "a usage error exits 2"
