#!/bin/bash
# A current directory crucible's user cannot read is refused with its name.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 2
new_workspace
if ! can_drop_privileges; then
  skip "an unreadable current directory is named" "needs root to take an unprivileged identity" unprivileged
  skip "and nothing ran" "needs root to take an unprivileged identity" unprivileged
  exit 0
fi
mkdir -m 0711 locked
chmod 0311 locked
out=$(cd locked && as_nobody env HOME="$HOME" "$CRUCIBLE" run -- 'touch /tmp/crucible-should-not-run' 2>&1); rc=$?
is "$rc|$out" "125|crucible: the current directory $WS/locked cannot be read: Permission denied" \
  "an unreadable current directory is named"
ok "$([ ! -e /tmp/crucible-should-not-run ] && echo 0 || echo 1)" "and nothing ran"
