#!/bin/bash
# Configuration errors through the installed binary: `crucible run` refuses
# a configuration that fails to load with "crucible: <file>:<line>: <key>:
# <what>" on stderr, exits 125 and runs nothing.  The exact texts are in
# doc/strings.md ("Configuration errors") and pinned by test_config.c; this
# test checks they reach the person, and that a refusal really refuses
# (the last case is the positive control: the same command, with a valid
# configuration, does run).
#
# Self-contained TAP, so it depends on nothing but CRUCIBLE_BIN_DIR.

set -u

n=0
# ok STATUS DESC: "ok" when STATUS is 0 (pass the $? of a test).
ok() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
  fi
}

# diag TEXT...: TAP diagnostics.
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

if [ -z "${CRUCIBLE_BIN_DIR:-}" ] || [ ! -x "$CRUCIBLE_BIN_DIR/crucible" ]; then
  echo "Bail out! no crucible binary in CRUCIBLE_BIN_DIR (${CRUCIBLE_BIN_DIR:-unset})"
  exit 1
fi
CRUCIBLE="$CRUCIBLE_BIN_DIR/crucible"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/crucible-config.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P) # messages name physical paths
export HOME="$TMP/home"
WS="$TMP/ws"
HOME_FILE="$HOME/.crucible/config.json"
PROJECT_FILE="$WS/.crucible/config.json"

# reset: an empty home and workspace, each with its .crucible directory.
reset() {
  rm -rf "$HOME" "$WS"
  mkdir -p "$HOME/.crucible" "$WS/.crucible"
}

# run_touch: `crucible run -- touch marker` in the workspace; sets rc and
# err (stderr).
run_touch() {
  rc=0
  err=$(cd "$WS" && "$CRUCIBLE" run -- touch marker 2>&1 >/dev/null) || rc=$?
}

# refused DESC EXPECTED: the last run exited 125, printed EXPECTED as a
# whole line of stderr, and ran nothing.
refused() {
  [ "$rc" -eq 125 ]
  ok $? "$1: exits 125"
  [ "$rc" -eq 125 ] || diag "exit status $rc"
  grep -qxF -- "$2" <<<"$err"
  ok $? "$1: names file, line and key"
  grep -qxF -- "$2" <<<"$err" || diag "expected: $2" "stderr:" "$err"
  [ ! -e "$WS/marker" ]
  ok $? "$1: the command did not run"
}

echo "1..44"

# 1. A syntax error in the home file.
reset
printf '{\n  "sandbox": {\n    "enabled": tru\n  }\n}\n' >"$HOME_FILE"
run_touch
refused "syntax error" \
  "crucible: $HOME_FILE:3: lexical error: invalid string in json text."

# 2. An unknown key, three objects deep, in the project file.
reset
printf '{\n  "sandbox": {\n    "limits": {\n      "memory": 1\n    }\n  }\n}\n' \
  >"$PROJECT_FILE"
run_touch
refused "unknown key" \
  "crucible: $PROJECT_FILE:4: sandbox.limits.memory: unknown key"

# 3. A home-only key in the project file.
reset
printf '{\n  "agent": {\n    "command": "/bin/sh"\n  }\n}\n' >"$PROJECT_FILE"
run_touch
refused "home-only key in a project" \
  "crucible: $PROJECT_FILE:3: agent.command: may only be set in the home configuration (~/.crucible/config.json), not in a project"

# 4. A project disabling confinement, even when home leaves it off.
reset
printf '{\n  "sandbox": {\n    "enabled": false\n  }\n}\n' >"$PROJECT_FILE"
run_touch
refused "project disables confinement" \
  "crucible: $PROJECT_FILE:3: sandbox.enabled: only the home configuration may disable confinement"

# 5. A wrong type in the home file.
reset
printf '{"sandbox": {"limits": {"concurrency": "4"}}}\n' >"$HOME_FILE"
run_touch
refused "wrong type" \
  "crucible: $HOME_FILE:1: sandbox.limits.concurrency: expected a whole number"

# 6. A project file that cannot be read (a directory: root reads mode 000).
reset
mkdir "$PROJECT_FILE"
run_touch
refused "unreadable project file" \
  "crucible: cannot read $PROJECT_FILE: Is a directory"

# 6a. A deny rule holding a terminal's control sequences (ESC ] 0 ; BEL
# ESC [ 2 J): named by file and line, shown escaped, never raw; and the
# same refusal from sandbox inspect, which fails on it.
reset
printf '{\n  "permissions": {\n    "deny": ["rm \\u001b]0;owned\\u0007\\u001b[2J"]\n  }\n}\n' \
  >"$PROJECT_FILE"
run_touch
refused "a rule with control characters" \
  "crucible: $PROJECT_FILE:3: permissions.deny[0]: holds a control character"
! grep -q $'[\x07\x1b]' <<<"$err"
ok $? "a rule with control characters: nothing of it reaches stderr raw"
rc=0
ierr=$(cd "$WS" && "$CRUCIBLE" sandbox inspect 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -qxF -- "crucible: $PROJECT_FILE:3: permissions.deny[0]: holds a control character" <<<"$ierr"
ok $? "sandbox inspect fails on the same file, naming it"
[ "$rc" -ne 0 ] || diag "sandbox inspect exited $rc" "$ierr"
# 6b. Every other way a rule cannot be read, in the home file.
reset
printf '{"permissions": {"allow": ["Read(x)"]}}\n' >"$HOME_FILE"
run_touch
refused "a rule for another tool" \
  "crucible: $HOME_FILE:1: permissions.allow[0]: is not a command rule; write Bash(command)"
# 6c. The same workspace twice under workspaces (spelled alike once
# normalised).
reset
printf '{"workspaces": {\n "/a": {"allow": ["ls"]},\n "/a/": {"allow": ["ls"]}}}\n' \
  >"$HOME_FILE"
run_touch
refused "a workspace given twice" \
  "crucible: $HOME_FILE:3: workspaces./a/: duplicate key"
# 6d. Overlong UTF-8 (C0 AF for "/"), a surrogate and a code point past
# U+10FFFF, which yajl lets through.
for bytes in '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80'; do
  reset
  printf '{"theme": "a'"$bytes"'"}\n' >"$PROJECT_FILE"
  run_touch
  refused "invalid UTF-8 ($bytes)" \
    "crucible: $PROJECT_FILE:1: theme: must be valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF)"
done
# 6e. An MCP server asking for a credential sandbox.credentials does not
# give (checked once the home file is read); the control gives it.
reset
printf '{"mcpServers": {"files": {"command": "srv", "credentials": ["TOKEN"]}}}\n' \
  >"$HOME_FILE"
run_touch
refused "a server's credential nobody gives" \
  "crucible: $HOME_FILE: mcpServers.files.credentials[0]: names TOKEN, which sandbox.credentials does not give"
reset
printf '{"sandbox": {"credentials": {"TOKEN": {"env": "TOKEN"}}},\n "mcpServers": {"files": {"command": "srv", "credentials": ["TOKEN"]}}}\n' \
  >"$HOME_FILE"
TOKEN=value run_touch
[ "$rc" -eq 0 ] && [ -e "$WS/marker" ]
ok $? "a server's credential that is given: the command runs"
[ "$rc" -eq 0 ] || diag "exit status $rc" "stderr:" "$err"
# 7. Positive control: a valid home and project, and the command runs.
reset
printf '{"sandbox": {"limits": {"concurrency": 8}}}\n' >"$HOME_FILE"
printf '{"sandbox": {"limits": {"concurrency": 2}},\n "permissions": {"deny": []}}\n' \
  >"$PROJECT_FILE"
run_touch
[ "$rc" -eq 0 ]
ok $? "valid configuration: the command runs and exits 0"
[ "$rc" -eq 0 ] || diag "exit status $rc" "stderr:" "$err"
[ -e "$WS/marker" ]
ok $? "valid configuration: the command did run"
