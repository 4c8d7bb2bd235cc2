#!/bin/bash
# A reviewer's pass over the policy digest (the "policy" of every run's
# facts, the key a sandbox prepared ahead is checked against): two home
# configurations that differ only in sandbox.network.allowPrivateAddresses
# gave the same digest, so the facts said the same policy for a proxy
# that reaches private addresses and one that refuses them.  The control:
# the same configuration twice gives the same digest, and another domain
# list another digest.  No sandbox runs (crucible sandbox inspect).  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

plan 3
new_workspace
mkdir -p "$HOME/.crucible"
# digest CONFIG: the effective policy digest inspect reports for CONFIG.
digest() {
  printf '%s\n' "$1" >"$HOME/.crucible/config.json"
  "$CRUCIBLE" sandbox inspect 2>/dev/null | sed -n 's/^  policy  *\(sha256:[0-9a-f]*\)$/\1/p' | head -1
}
base='{"sandbox":{"enabled":true,"network":{"domains":["example.com"]}}}'
a=$(digest "$base")
b=$(digest "$base")
c=$(digest '{"sandbox":{"enabled":true,"network":{"domains":["example.org"]}}}')
p=$(digest '{"sandbox":{"enabled":true,"network":{"domains":["example.com"],"allowPrivateAddresses":true}}}')
diag "digests: $a $b $c $p"
ok "$([ -n "$a" ] && [ "$a" = "$b" ] && echo 0 || echo 1)" "control: the same configuration gives the same digest"
ok "$([ -n "$c" ] && [ "$a" != "$c" ] && echo 0 || echo 1)" "control: another domain list gives another digest"
ok "$([ -n "$p" ] && [ "$a" != "$p" ] && echo 0 || echo 1)" "allowPrivateAddresses gives another digest"
