#!/bin/bash
# The installed tree: both binaries side by side, --help and --version.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 6
ok "$([ -x "$CRUCIBLE_BIN_DIR/crucible" ] && echo 0 || echo 1)" "crucible is installed"
ok "$([ -x "$CRUCIBLE_BIN_DIR/crucible-sandbox-broker" ] && echo 0 || echo 1)" "the broker is installed beside it"
crun --version
like "$rc|$out" '^0\|crucible [0-9]+\.[0-9]+\.[0-9]+$' "--version"
crun --help
like "$rc|$out" $'^0\\|Usage: crucible COMMAND' "--help"
crun frobnicate
is "$rc|$(head -n 1 <<<"$err")" "2|crucible: unknown command 'frobnicate'" "an unknown command is named"
crun run --help
like "$rc|$out" $'^0\\|Usage: crucible run' "run --help"
