#!/bin/bash
# CRUCIBLE_ALLOW_PROCESS_ISOLATION, with the container backend selected
# and no engine reachable (no engine is started): unset, every command is
# refused and nothing runs; "true" in exactly those words with
# confinement enabled by the home configuration, commands run as plain
# child processes, each result warns that it was not contained, stderr
# says so and the start fact says "isolation":"process"; any other value
# is ignored with a warning (still refused); a project that requires
# confinement is never downgraded.  And the isolation stamp of the other
# backends: "process" for compat (confinement disabled), "namespaces" for
# bwrap where it can run.

. "$(dirname "$0")/../integration/lib.sh"

plan 13

new_workspace
mkdir -p "$HOME/.crucible"
home_config() { printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }
home_config '{"sandbox": {"enabled": true, "backend": "container"}}'
export DOCKER_HOST="unix://$TEST_TMP/no-engine.sock"
unset CRUCIBLE_ALLOW_PROCESS_ISOLATION
WARNING='[warning: not contained: no container engine was reachable and CRUCIBLE_ALLOW_PROCESS_ISOLATION=true ran this command as a plain child process, with no kernel boundary, no filesystem it cannot read and no network policy]'
REFUSED='\[refused: confinement is enabled \(sandbox.enabled\), but the sandbox backend cannot be used here: the container engine cannot be used: engine unix://[^ ]*: GET /_ping: cannot connect to its socket: .*; commands are never run unconfined while it is enabled; nothing was run\]$'

# journal: the facts of the newest session.
journal() { cat "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"; }

# --- off ------------------------------------------------------------------------
crun run 'echo ran >ran.txt; echo ran'
like "$rc|$out" "^125\\|$REFUSED" "unset: the command is refused, naming the unreachable engine"
[ ! -e ran.txt ]
ok $? "unset: nothing ran"

# --- on -------------------------------------------------------------------------
CRUCIBLE_ALLOW_PROCESS_ISOLATION=true crun run 'echo ran >ran.txt; echo ran'
is "$rc|$out" "0|ran
$WARNING" "true: the command runs, and its result warns that it was not contained"
like "$err" "^crucible: warning: no container engine is reachable \\(.*\\); CRUCIBLE_ALLOW_PROCESS_ISOLATION=true: commands run as plain child processes, not contained$" \
  "true: stderr says so before anything runs"
like "$(journal | grep '"fact":"start"')" '"backend":"compat","background":false,"isolation":"process"' \
  "true: the start fact stamps isolation process"
[ -e ran.txt ]
ok $? "true: it ran in the workspace itself (no boundary)"
rm -f ran.txt

# --- misspelt -------------------------------------------------------------------
for v in TRUE yes; do
  CRUCIBLE_ALLOW_PROCESS_ISOLATION=$v crun run 'echo ran >ran.txt'
  like "$rc|$err|$out" "^125\\|crucible: CRUCIBLE_ALLOW_PROCESS_ISOLATION is \"$v\", not \"true\": ignored\\|$REFUSED" \
    "$v: ignored with a warning, and the command refused"
done
[ ! -e ran.txt ]
ok $? "misspelt: nothing ran"

# --- a project that requires confinement ------------------------------------------
home_config '{"sandbox": {"backend": "container"}}'
mkdir -p .crucible
echo '{"sandbox": {"enabled": true}}' >.crucible/config.json
CRUCIBLE_ALLOW_PROCESS_ISOLATION=true crun run 'echo ran >ran.txt'
like "$rc|$err|$out" "^125\\|crucible: CRUCIBLE_ALLOW_PROCESS_ISOLATION=true is ignored: the project configuration requires confinement\\|$REFUSED" \
  "required by the project: never downgraded, the switch ignored with a warning"
[ ! -e ran.txt ]
ok $? "required by the project: nothing ran"
rm -rf .crucible

# --- the other backends' stamps -----------------------------------------------------
home_config '{"sandbox": {"enabled": false}}'
crun run 'true'
like "$(journal | grep '"fact":"start"')" '"backend":"compat","background":false,"isolation":"process"' \
  "confinement disabled: compat's start fact stamps isolation process"
home_config '{"sandbox": {"enabled": true}}'
crun run 'true'
if [ "$rc" -eq 0 ]; then
  like "$(journal | grep '"fact":"start"')" '"backend":"linux-bubblewrap","background":false,"isolation":"namespaces"' \
    "bwrap's start fact stamps isolation namespaces"
else
  skip "bwrap's start fact stamps isolation namespaces" "bwrap cannot run here: $out" bwrap
fi
