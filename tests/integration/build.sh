#!/bin/bash
# The installed tree: both binaries side by side, --help and --version.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 7
ok "$([ -x "$CRUCIBLE_BIN_DIR/crucible" ] && echo 0 || echo 1)" "crucible is installed"
ok "$([ -x "$CRUCIBLE_BIN_DIR/crucible-sandbox-broker" ] && echo 0 || echo 1)" "the broker is installed beside it"
# The trusted prefix the tests run from: root-owned and writable by no one
# else, every directory of it (the trust rules of doc/linux-confinement.md,
# "Finding the parts").
bad=""
d=$CRUCIBLE_BIN_DIR
while [ "$d" != / ]; do
  perm=$(stat -c '%u %a' "$d")
  case "$perm" in 0\ [0-7][0145][0145]) ;; *) bad="$bad $d($perm)" ;; esac
  d=$(dirname "$d")
done
if [ "$(id -u)" -ne 0 ]; then
  skip "the binaries are installed under a trusted prefix" "not root: the prefix cannot be root-owned"
else
  is "$bad" "" "the binaries are installed under a root-owned prefix no one else can write"
fi
crun --version
like "$rc|$out" '^0\|crucible [0-9]+\.[0-9]+\.[0-9]+$' "--version"
crun --help
like "$rc|$out" $'^0\\|Usage: crucible \\[--agent CMD\\] \\[--theme NAME\\] \\[DIR\\]\n +crucible COMMAND' "--help"
crun frobnicate
is "$rc|$(head -n 1 <<<"$err")" "2|crucible: unknown command 'frobnicate'" "an unknown command is named"
crun run --help
like "$rc|$out" $'^0\\|Usage: crucible run' "run --help"
