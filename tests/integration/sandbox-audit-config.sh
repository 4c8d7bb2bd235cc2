#!/bin/bash
# `crucible sandbox audit` audits the backend the configuration gets:
# sandbox.filesystem.unreadable (and, beside it, a socket grant) reach the
# audited backend as they reach the one `crucible run` runs under.  A
# pattern with a '..' component makes every preparation fail, so every row
# of the audit carries the same reason `crucible run` refuses with; the
# same configuration with a valid pattern (the positive control) audits
# clean.  That the socket grants reach the backend too (they are resolved
# at start, which an audit never reaches) is pinned by
# tests/unit/test_registry.c.

. "$(dirname "$0")/lib.sh"

plan 9

new_workspace
home_config() { mkdir -p "$HOME/.crucible" && printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }

crun sandbox audit --backend linux-bubblewrap
if [ "$rc" -eq 3 ]; then
  for d in "control: audits clean" "unreadable: run refuses, naming it" \
    "unreadable: every row of the audit --json says why" \
    "unreadable: every row of the audit says run's reason" \
    "unreadable and a socket grant: run refuses, naming it" \
    "unreadable and a socket grant: every row of the audit --json says why" \
    "unreadable and a socket grant: every row of the audit says run's reason" \
    "domains: network_allowlist is claimed and the policy naming domains accepted" \
    "domains: the audit finds no fault"; do
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
# same configuration gives it for every feature the backend claims, each
# then unreached (in --json with any path redacted, REDACTED).
check() {
  local name=$1 why=$3 redacted=$4 n
  home_config "$2"
  crun run true
  is "$rc|$out" "125|[refused: $why; nothing was run]" \
    "$name: run refuses, naming it"
  crun sandbox audit --json
  n=$(count "\"reason\":\"$redacted\"")
  # Every feature the backend claims is unreached, for that reason.
  [ "$n" -ge 10 ] && [ "$(count "\"unreached\":$n}")" -eq 1 ]
  ok $? "$name: every row of the audit --json says why ($n rows)"
  [ "$n" -ge 10 ] || diag "$out"
  local json_n=$n
  crun sandbox audit
  n=$(count "$why")
  [ "$n" -ge 10 ] && [ "$n" -eq "$json_n" ]
  ok $? "$name: every row of the audit says run's reason ($n rows, $json_n in --json)"
}

check unreadable "{\"sandbox\":{\"enabled\":true,\"filesystem\":{\"unreadable\":[\"a/../b\"]}}}" \
  "sandbox.filesystem.unreadable: 'a/../b' has a '.' or '..' component" \
  "sandbox.filesystem.unreadable: 'a/../b' has a '.' or '..' component"
# With a socket grant beside it, the pattern still reaches the audit.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$WS/granted.sock"
check "unreadable and a socket grant" "{\"sandbox\":{\"enabled\":true,\"filesystem\":{\"unreadable\":[\"a/../b\"]},\"network\":{\"allowUnixSockets\":[\"$WS/granted.sock\"]}}}" \
  "sandbox.filesystem.unreadable: 'a/../b' has a '.' or '..' component" \
  "sandbox.filesystem.unreadable: 'a/../b' has a '.' or '..' component"

# A configuration naming domains: the audit offers network_allowlist a
# policy that names one, and the backend, which claims it, takes it.  A
# backend that disclaimed it would read "unsupported  refused" here (as
# compat does), one that claimed it and refused would be a fault.
home_config '{"sandbox":{"enabled":true,"network":{"domains":["example.com","*.example.org"]}}}'
crun sandbox audit
like "$out" $'\n  network_allowlist +enforced +accepted\n' \
  "domains: network_allowlist is claimed and the policy naming domains accepted"
like "$rc|$out" $'^0\\|.*\n  network +holds\n.*\nfaults: none' \
  "domains: the audit finds no fault"
