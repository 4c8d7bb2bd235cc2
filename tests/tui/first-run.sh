#!/bin/bash
# A newcomer's first run: a fresh clone of this tree, README's first
# command (./build.sh, which opens the session), and the first screen holds
# no error; the build's own noise stays in build/build.log; README's other
# command; and that build installed to a prefix of its own finds its
# themes, its translations and its broker there.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=10
plan $N
skip_rest() {
  local i
  for i in $(seq "$1" $N); do skip "first run $i" "$2" "${3:-}"; done
  exit 0
}
# What it tests is a fresh clone's own plain build, not the build running
# the suite: under the sanitizers it would build and test the same again.
[ -z "${CRUCIBLE_SANITIZED:-}" ] ||
  skip_rest 1 "a sanitizer build: the fresh clone's plain build is what this tests, and the plain stage runs it"
git -C "$CRUCIBLE_SRCDIR" rev-parse --git-dir >/dev/null 2>&1 ||
  skip_rest 1 "the source tree is not a git checkout, so there is nothing to clone"
tui_have_tmux || skip_rest 1 "tmux is not installed" tmux

CLONE=$TEST_TMP/clone
git clone -q "$CRUCIBLE_SRCDIR" "$CLONE" 2>"$TEST_TMP/clone.err" ||
  skip_rest 1 "git clone of the source tree failed: $(head -n 1 "$TEST_TMP/clone.err")"
# The working tree as it is, uncommitted changes too: the test is of this
# tree, not of its last commit.
(cd "$CRUCIBLE_SRCDIR" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$CRUCIBLE_SRCDIR" && xargs -0 cp --parents -t "$CLONE" 2>/dev/null)

# README's second command builds first; everything it shows is crucible's.
out=$(cd "$CLONE" && ./build.sh run -- echo hello 2>&1)
rc=$?
is "$rc|$out" "0|hello" "./build.sh run -- echo hello prints the tool result and nothing else"
[ -s "$CLONE/build/build.log" ]
ok $? "what the build printed is kept in build/build.log"
if grep -E "cannot remove 'core'|modifier ignored" "$CLONE/build/build.log" >"$TEST_TMP/noise"; then
  ok 1 "the build prints none of configure's or ar's noise: $(head -n 1 "$TEST_TMP/noise")"
else
  ok 0 "the build prints none of configure's or ar's noise"
fi

# README's first command: the session, opened in the current directory.
WS=$TEST_TMP/project
mkdir -p "$WS" "$HOME"
CRUCIBLE=$CLONE/build.sh
tui_start
tui_wait "ask mode on (shift+tab to cycle)" 60
ok $? "./build.sh opens the session"
if grep -Ei "error|theme|no such file|cannot" <<<"$SCREEN" >"$TEST_TMP/bad"; then
  ok 1 "the first screen holds no error: $(head -n 1 "$TEST_TMP/bad")"
else
  ok 0 "the first screen holds no error"
fi
ESC=$'\e'
row=$(tmux -L "$TUI_SOCK" capture-pane -e -p | grep -F "ask mode on" | tail -1)
like "$row" "${ESC}\[[0-9;]*38;5;" "the build tree's binary draws in its theme's colours"
tui_keys C-d
tui_exited 10
tmux -L "$TUI_SOCK" kill-server 2>/dev/null

# Installed to a prefix of its own: what it needs is found beside it.  The
# prefix is root-owned and writable by no one else, as the broker's trust
# checks require; only root can make one.
if [ "$(id -u)" -ne 0 ]; then
  skip_rest 7 "not root: a trusted prefix cannot be made" unprivileged
fi
PREFIX=$(mktemp -d /opt/crucible-first-run.XXXXXX)
chmod 0755 "$PREFIX"
trap 'for s in $TUI_SOCKS; do tmux -L "$s" kill-server 2>/dev/null; done; rm -rf "$PREFIX" "$TEST_TMP"' EXIT
make -C "$CLONE/build" -s install prefix="$PREFIX" >"$TEST_TMP/install.log" 2>&1
ok $? "make install to a prefix"
CHOME=$TEST_TMP/home-confined
mkdir -p "$CHOME/.crucible"
echo '{"sandbox": {"enabled": true}}' >"$CHOME/.crucible/config.json"
out=$(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$CHOME" LANG=C.UTF-8 \
  "$PREFIX/bin/crucible" run -- cat /proc/1/comm 2>&1)
like "$out" "^broker$" \
  "the installed crucible runs a confined command: its broker, found beside it, is PID 1"
CRUCIBLE=$PREFIX/bin/crucible
if LOC=$TEST_TMP/locale && mkdir -p "$LOC" &&
  localedef -i fr_FR -f UTF-8 "$LOC/fr_FR.UTF-8" >/dev/null 2>&1; then
  TUI_LANG=fr_FR.UTF-8 TUI_ENV="LOCPATH=$LOC LANGUAGE=fr"
  tui_start
  tui_wait "mode ask actif (maj+tab pour changer)" 20
  ok $? "the installed crucible finds its translations"
  ok "$(grep -qi "th[eè]me" <<<"$SCREEN"; [ $? -eq 1 ]; echo $?)" \
    "the installed crucible finds its themes: no word of a theme on its first screen"
else
  skip "the installed crucible finds its translations" "the fr_FR.UTF-8 locale cannot be made (localedef; the locales package)" locale
  skip "the installed crucible finds its themes" "the fr_FR.UTF-8 locale cannot be made" locale
fi
