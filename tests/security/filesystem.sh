#!/bin/bash
# Escape attempts against the filesystem view: files outside every root,
# writes outside the workspace, the workspace's real files, .git, the
# state directory, what unreadable patterns hide.  TAP; each attempt has its unconfined control.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=40
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

  # crucible run by root over a workspace another user owns: the sandbox
  # is that user's, so their files are theirs inside (not 65534 and
  # read-only), and the host's still do not change.
  if [ "$who" = root ] && [ "$(id -u)" -eq 0 ]; then
    OWS=$(mktemp -d "$TEST_TMP/owned.XXXXXX")
    echo original >"$OWS/tracked"
    chown -R 65534:65534 "$OWS"
    chmod 755 "$OWS"
    oout=$(cd "$OWS" && "$SANDBOX_RUN" --timeout 30 -- \
      'id -u; echo more >> tracked && cat tracked' 2>/dev/null)
    is "$oout" $'65534\noriginal\nmore' \
      "confined (root): another user's workspace runs as its owner, who can write it"
    is "$(cat "$OWS/tracked")" original \
      "confined (root): and the host's file is unchanged"
    # The owner's state directory is judged as theirs: a name taken by a
    # symlink refuses their sandbox, saying whose it is meant to be.
    chown 65533:65533 "$OWS"
    ln -sfn /tmp /var/tmp/crucible-code-sandbox-65533-v1
    oout=$(cd "$OWS" && "$SANDBOX_RUN" --timeout 30 -- 'echo ran' 2>&1)
    rm -f /var/tmp/crucible-code-sandbox-65533-v1
    is "$oout" "sandbox_run: the workspace's owner's sandbox: the sandbox backend is unavailable: the sandbox state directory's name is taken by a symlink; removing it, which may need an administrator, lets the sandbox be used" \
      "confined (root): the owner's state directory is checked like their own"
  else
    skip "confined ($WHO): the owner's state directory is checked like their own" \
      "only root runs a sandbox for another user"
    skip "confined ($WHO): another user's workspace runs as its owner" \
      "only root runs a sandbox for another user"
    skip "confined ($WHO): and the host's file is unchanged" \
      "only root runs a sandbox for another user"
  fi

  # Layer pairs a crucible killed outright left in the state directory are
  # removed by the next preparation, but only where their maker is
  # provably gone: a pair of a live process stays, and so does a name
  # that does not say whose it is.
  uid=$([ "$who" = nobody ] && echo 65534 || id -u)
  SD=/var/tmp/crucible-code-sandbox-$uid-v1
  "${AS[@]}" sleep 60 &
  live=$!
  sleep 0.2
  start=$(sed 's/.*) //' "/proc/$live/stat" | cut -d' ' -f20)
  for name in "cmd-$live-$start-liveAA" "cmd-4194303-1-deadAA" \
      "cmd-$live-$((start + 1))-reusAA" "cmd-oldfmt"; do
    "${AS[@]}" mkdir -p "$SD/$name/upper/x" "$SD/$name/work/work"
    "${AS[@]}" chmod 000 "$SD/$name/work/work"
  done
  confined "echo ran"
  [ -d "$SD/cmd-$live-$start-liveAA" ]
  ok $? "confined ($WHO): a live crucible's layer pair is left alone"
  [ ! -e "$SD/cmd-4194303-1-deadAA" ]
  ok $? "confined ($WHO): a pair whose maker is gone is removed"
  [ ! -e "$SD/cmd-$live-$((start + 1))-reusAA" ]
  ok $? "confined ($WHO): a pair whose maker's pid now names another process is removed"
  [ -d "$SD/cmd-oldfmt" ]
  ok $? "confined ($WHO): a pair that does not say whose it is stays"
  kill "$live" 2>/dev/null
  wait "$live" 2>/dev/null
  for name in "cmd-$live-$start-liveAA" cmd-oldfmt; do
    chmod 700 "$SD/$name/work/work" 2>/dev/null
    rm -rf "${SD:?}/$name"
  done

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
