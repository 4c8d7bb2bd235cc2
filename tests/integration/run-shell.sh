#!/bin/bash
# A machine with no POSIX shell says so and runs nothing; a shell that will
# not start is reported, not mistaken for the command's own failure.  The
# shell is hidden in a private mount namespace, which needs root.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 3
new_workspace

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  for d in "no shell is named" "a broken shell is named" "control: the same namespace with the shell runs"; do
    skip "$d" "needs root and unshare to hide /bin/sh in a private mount namespace"
  done
  exit 0
fi

# in_ns SETUP: run crucible in a mount namespace after SETUP (as sh).
in_ns() {
  out=$(unshare -m --propagation private sh -c "$1"' && exec "$0" run -- "echo ran"' "$CRUCIBLE" 2>&1) && rc=0 || rc=$?
}

# Where sh really is (on merged /usr, /bin/sh and /usr/bin/sh are one file).
hide_sh='for s in /bin/sh /usr/bin/sh; do [ -e "$s" ] && mount --bind '

in_ns "${hide_sh}/dev/null \"\$s\"; done; true"
is "$rc|$out" "125|[refused: this machine has no POSIX shell (looked for /bin/sh and /usr/bin/sh); nothing was run]" \
  "no shell is named"

printf 'not an executable\n' >"$TEST_TMP/fake-sh"
chmod 755 "$TEST_TMP/fake-sh"
in_ns "${hide_sh}$TEST_TMP/fake-sh \"\$s\"; done; true"
is "$rc|$out" "125|[refused: starting the shell: Exec format error; nothing was run]" \
  "a broken shell is named"

in_ns "true"
is "$rc|$out" "0|ran" "control: the same namespace with the shell runs"
