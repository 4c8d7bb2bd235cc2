#!/bin/bash
# sandbox.backend (home-only): an unknown name is a configuration error
# naming the file, the line and the known names (crucible run exits 125);
# "compat" with confinement enabled refuses every command, saying the
# compatibility backend confines nothing (never a silent downgrade), and
# inspection and the audit say there is no backend; a project file may
# not set it.  The positive controls: the same configurations without the
# key (or with confinement disabled) run the command.

. "$(dirname "$0")/lib.sh"

plan 12

new_workspace
home_config() { mkdir -p "$HOME/.crucible" && printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }
HOME_FILE="$HOME/.crucible/config.json"
CONFINES_NOTHING='sandbox.backend is "compat", and the compatibility backend confines nothing'

# --- an unknown name --------------------------------------------------------
home_config $'{"sandbox": {\n  "backend": "containr"}}'
crun run echo hi
is "$rc|$err" "125|crucible: $HOME_FILE:2: sandbox.backend: is not a known backend (known: linux-bubblewrap, compat, container)" \
  "unknown: run exits 125 naming the file, line and the known names"
crun sandbox inspect
like "$rc|$err" "^[1-9][0-9]*\\|crucible: $HOME_FILE:2: sandbox.backend: is not a known backend" \
  "unknown: inspect fails naming it"

# --- compat, confinement disabled: the command runs (control) ----------------
home_config '{"sandbox": {"backend": "compat"}}'
crun run echo hi
is "$rc|$out" "0|hi" "compat, disabled: the command runs"
home_config '{}'
crun run echo hi
is "$rc|$out" "0|hi" "no key, disabled: the command runs"

# --- compat, confinement enabled: every command refused ----------------------
home_config '{"sandbox": {"enabled": true, "backend": "compat"}}'
rm -f "$WS/ran"
crun run touch "$WS/ran"
is "$rc|$out" "125|[refused: confinement is enabled (sandbox.enabled), but the sandbox backend cannot be used here: $CONFINES_NOTHING; commands are never run unconfined while it is enabled; nothing was run]" \
  "compat, enabled: run refused (125), saying compat confines nothing"
[ ! -e "$WS/ran" ]
ok $? "compat, enabled: nothing ran"
crun sandbox inspect --json
like "$rc|$out" "^0\\|\\{\"format_version\":1,\"kind\":\"sandbox-inspection\",\"status\":\"unavailable\",.*\"reason\":\"sandbox.backend is \\\\\"compat\\\\\", and the compatibility backend confines nothing\"\\}$" \
  "compat, enabled: inspect --json unavailable, with the reason"
crun sandbox inspect
like "$out" $'\n\nno sandbox backend was found:\n  sandbox.backend is "compat", and the compatibility backend confines nothing\n' \
  "compat, enabled: inspect says no backend, with the reason"
crun sandbox audit
is "$rc|$err" "3|crucible: sandbox audit: no backend to audit: $CONFINES_NOTHING" \
  "compat, enabled: the audit has no backend (3)"
crun sandbox audit --backend compat
is "$rc|$(sed -n 1p <<<"$out")" "0|sandbox audit of compat" \
  "compat, enabled: --backend compat still audits compat itself"

# --- linux-bubblewrap named: as if absent ----------------------------------
home_config '{"sandbox": {"backend": "linux-bubblewrap"}}'
crun run echo hi
is "$rc|$out" "0|hi" "linux-bubblewrap, disabled: the command runs"

# --- a project may not set it -------------------------------------------------
home_config '{}'
mkdir -p .crucible
printf '{"sandbox": {"backend": "compat"}}\n' >.crucible/config.json
crun run echo hi
like "$rc|$err" "^125\\|crucible: .*\\.crucible/config\\.json:1: sandbox\\.backend: may only be set in the home configuration" \
  "project: refused, home-only"
rm -rf .crucible
