#!/bin/bash
# Escape attempts against the filesystem view: files outside every root,
# writes outside the workspace, the workspace's real files, .git, the
# state directory, what unreadable patterns hide.  TAP; each attempt has its unconfined control.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=33
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"
  # The invoking user's ~/.ssh, planted outside every root.
  SSH="$OUT/home/.ssh"
  mkdir -p "$SSH" && echo 'PRIVATE KEY' >"$SSH/id_ed25519"
  [ "$who" = nobody ] && chown -R 65534:65534 "$OUT/home"
  chmod 700 "$SSH"

  attempt "reading ~/.ssh outside every root" \
    "grep -q 'PRIVATE KEY' '$SSH/id_ed25519'"

  attempt_effect "writing outside the workspace" \
    "echo pwned > '$OUT/planted'" \
    "test -e '$OUT/planted'" "rm -f '$OUT/planted'"

  attempt_effect "changing the workspace's real files" \
    "echo changed > tracked" \
    "grep -q changed '$WS/tracked'" "echo original > '$WS/tracked'"

  attempt "writing .git/hooks" \
    "echo 'echo owned' > .git/hooks/pre-commit"

  attempt_effect "writing .git/config through the merged view" \
    "echo '[core] hooksPath=/x' >> .git/config" \
    "grep -q hooksPath '$WS/.git/config'" \
    "echo '[core]' > '$WS/.git/config'"

  # State directories of every user live here, and the view has no /var.
  attempt "listing the sandbox state directory" \
    "ls -d /var/tmp/crucible-code-sandbox-*-v1"

  # What the command may do: write its workspace (into its projection).
  confined "echo new > made && cat made && cat tracked"
  is "$cout" $'new\noriginal' \
    "confined ($WHO): the command writes and reads its own workspace"

  # sandbox.filesystem.unreadable: what a pattern names cannot be read,
  # through any name; what it does not name can.
  mkdir -p "$WS/secrets" "$WS/deep/a/b"
  echo 'SECRET' >"$WS/secrets/token"
  echo 'KEY' >"$WS/deep/a/b/server.pem"
  echo 'TOP' >"$WS/top.pem"
  echo 'notes' >"$WS/notes.txt"
  ln "$WS/deep/a/b/server.pem" "$WS/alias"
  [ "$who" = nobody ] && chown -R 65534:65534 "$WS"
  attempt "reading a file '**/*.pem' names, deep down" \
    "grep -q KEY deep/a/b/server.pem" --unreadable '**/*.pem'
  attempt "reading a file '**/*.pem' names, at the top" \
    "grep -q TOP top.pem" --unreadable '**/*.pem'
  attempt "reading it through another hard link" \
    "grep -q KEY alias" --unreadable '**/*.pem'
  attempt "reading inside a directory a pattern names" \
    "grep -q SECRET secrets/token" --unreadable 'secr*'
  attempt "removing or replacing a hidden file" \
    "rm -f top.pem && echo mine > top.pem && grep -q mine top.pem" \
    --unreadable '*.pem'
  echo 'TOP' >"$WS/top.pem" # the control replaced it
  [ "$who" = nobody ] && chown 65534:65534 "$WS/top.pem"
  confined "cat notes.txt deep/a/b/../../a/b/server.pem 2>/dev/null; echo \$?" \
    --unreadable "$WS/deep/a/b/server.pem"
  is "$cout" $'notes\n1' \
    "confined ($WHO): an absolute path inside the workspace is hidden; the rest reads"
  confined "cat top.pem notes.txt" --unreadable 'deep/**/*.pem'
  is "$cout" $'TOP\nnotes' \
    "confined ($WHO): a pattern hides only what it names (positive control)"
  confined "echo ran" --unreadable 'a/**/b/**'
  is "$crc:$cerr" \
    "125:sandbox_run: sandbox.filesystem.unreadable: 'a/**/b/**' has more than one '**'" \
    "confined ($WHO): a pattern outside the grammar refuses the command"

  # The layer paths the broker hid: the raw lower and the upper.
  confined "ls -A /.crucible-sandbox 2>&1; echo status \$?"
  like "$cout" "status [12]" \
    "confined ($WHO): the hidden layer directory cannot be listed"

  # .git as a "gitdir: PATH" file (a worktree, a submodule): a target
  # inside the workspace is kept read-only like .git, whether named
  # relatively (through "..") or absolutely.
  rm -rf "$WS/.git"
  mkdir -p "$WS/.repo/wt/hooks" "$WS/sub"
  echo 'gitdir: sub/../.repo/wt' >"$WS/.git"
  [ "$who" = nobody ] && chown -R 65534:65534 "$WS"
  attempt "writing hooks of a relative gitdir: inside the workspace" \
    "echo 'echo owned' > .repo/wt/hooks/pre-commit && rm .repo/wt/hooks/pre-commit"
  echo "gitdir: $WS/.repo/wt" >"$WS/.git"
  attempt "writing hooks of an absolute gitdir: inside the workspace" \
    "echo 'echo owned' > .repo/wt/hooks/pre-commit && rm .repo/wt/hooks/pre-commit"
  # A target outside is not mounted at all: not even visible.
  mkdir -p "$OUT/gitdir/hooks"
  [ "$who" = nobody ] && chown -R 65534:65534 "$OUT/gitdir"
  echo "gitdir: $OUT/gitdir" >"$WS/.git"
  attempt "seeing a gitdir: outside the workspace" "test -d '$OUT/gitdir'"
done
