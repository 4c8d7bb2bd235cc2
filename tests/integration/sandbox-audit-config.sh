#!/bin/bash
# `crucible sandbox audit` audits the backend the configuration gets:
# sandbox.filesystem.unreadable and sandbox.network.allowUnixSockets reach
# the audited backend as they reach the one `crucible run` runs under.  A
# pattern naming the workspace itself, or a grant naming a file that is no
# socket, makes every preparation fail, so every row of the audit carries
# the same reason `crucible run` refuses with; the same configuration
# without them (the positive control) audits clean.

. "$(dirname "$0")/lib.sh"

plan 7

new_workspace
home_config() { mkdir -p "$HOME/.crucible" && printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }

crun sandbox audit --backend linux-bubblewrap
if [ "$rc" -eq 3 ]; then
  for d in "control: audits clean" "unreadable: run refuses, naming it" \
    "unreadable: every row of the audit --json says why" \
    "unreadable: every row of the audit says run's reason" \
    "socket: run refuses, naming it" "socket: every row of the audit --json says why" \
    "socket: every row of the audit says run's reason"; do
    skip "$d" "no usable bwrap backend: $err" bwrap
  done
  exit 0
fi

# The positive control: confinement on, a valid pattern, no grant.
home_config '{"sandbox":{"enabled":true,"filesystem":{"unreadable":["secret.txt"]}}}'
crun sandbox audit
is "$(sed -n 1p <<<"$out")|$rc" "sandbox audit of linux-bubblewrap|0" \
  "control: audits clean"

# count TEXT: how many times the last output says TEXT.
count() { grep -oF -- "$1" <<<"$out" | wc -l; }

# check NAME CONFIG WHY REDACTED: run refuses with WHY, and the audit of the
# same configuration gives it for every askable feature (in --json with its
# path redacted, REDACTED).
check() {
  local name=$1 why=$3 redacted=$4 n
  home_config "$2"
  crun run true
  is "$rc|$out" "125|[refused: $why; nothing was run]" \
    "$name: run refuses, naming it"
  crun sandbox audit --json
  n=$(count "\"reason\":\"$redacted\"")
  [ "$n" -ge 20 ]
  ok $? "$name: every row of the audit --json says why ($n rows)"
  [ "$n" -ge 20 ] || diag "$out"
  crun sandbox audit
  n=$(count "$why")
  [ "$n" -ge 20 ]
  ok $? "$name: every row of the audit says run's reason ($n rows)"
}

check unreadable "{\"sandbox\":{\"enabled\":true,\"filesystem\":{\"unreadable\":[\"$WS\"]}}}" \
  "sandbox.filesystem.unreadable: '$WS' is the workspace itself" \
  "sandbox.filesystem.unreadable: '<path>' is the workspace itself"
: >"$WS/plain"
check socket "{\"sandbox\":{\"enabled\":true,\"network\":{\"allowUnixSockets\":[\"$WS/plain\"]}}}" \
  "sandbox.network.allowUnixSockets: '$WS/plain' is not a Unix socket" \
  "sandbox.network.allowUnixSockets: '<path>' is not a Unix socket"
