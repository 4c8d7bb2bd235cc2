#!/bin/bash
# The second attacker's battery (issue 11, "re-run the whole battery as an
# attacker would after the fixes"): what the publication guard assumes and
# an attacker tried.  Each attempt as crucible run with sandbox.enabled, as
# root and as uid 65534, with its positive control (the same commands run
# unconfined make the person's next git command run the payload).  TAP.
#
# - The workspace root itself made a git directory: HEAD, objects/, refs/
#   and a config with core.worktree = . and core.fsmonitor at the top of
#   a workspace that has no .git.  git, run there next, takes the
#   workspace for a repository whose work tree is itself and runs the
#   fsmonitor.  The guard looked for git directories among the entries of
#   a directory, never at the root it scans.
# - The hooks directory the repository's own configuration names
#   (core.hooksPath = .husky, as husky sets it): a pre-commit written
#   there runs at the person's next git commit.  The guard knew hooks only
#   as .git/hooks.
# - A new nested repository (what git clone makes) whose config has an
#   alias without '!': "st = -c core.fsmonitor=PAYLOAD status" (or
#   "difftool -x PAYLOAD", "rebase --exec PAYLOAD") runs a program at the
#   person's next "git st" there just as "!PAYLOAD" would; the repository's
#   alias overrides the person's own of that name.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/publish-lib.sh"

PER_IDENTITY=13

# atk_git DIR ARGS...: git in DIR on the host, as the person would run it
# next, with no system or global configuration of the test machine.
atk_git() {
  local dir=$1
  shift
  (cd "$dir" && env HOME="$TEST_TMP" GIT_CONFIG_NOSYSTEM=1 \
    git -c safe.directory='*' -c user.name=t -c user.email=t@t "$@") \
    >/dev/null 2>&1
}

# atk_control SNIPPET: SNIPPET run unconfined as the identity in a fresh
# copy of WS (ACTL), which the caller then checks.
atk_control() {
  ACTL=$(mktemp -d "$TEST_TMP/ctl.XXXXXX")
  cp -a "$WS/." "$ACTL/"
  chmod 755 "$ACTL"
  chown -R "$(stat -c %u:%g "$WS")" "$ACTL"
  (cd "$ACTL" && "${PUB_AS[@]}" /bin/sh -c "$1") >/dev/null 2>&1
}

pub_begin "$PER_IDENTITY" "attack2"

for who in $ids; do
  pub_become "$who"
  pub_payload "$who"

  # The workspace root made a git directory with a worktree and an
  # fsmonitor, in a workspace that is no repository.
  bare="mkdir -p objects refs/heads && echo 'ref: refs/heads/main' >HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = $TEST_TMP/payload\n' >config
echo plain >plain"
  echo tracked >"$WS/tracked"
  pub_owner
  atk_control "$bare"
  atk_git "$ACTL" status
  [ -e "$RAN" ]
  ok $? "$who: control: unconfined, the workspace made a git directory runs its fsmonitor at git status"
  rm -rf "$RAN" "$ACTL"
  prun run -- "$bare"
  [ -f "$WS/plain" ]
  ok $? "$who: the command's plain file is published (rc $rc)" \
    || diag "$out" "$err"
  atk_git "$WS" status
  [ ! -e "$RAN" ]
  ok $? "$who: confined, the workspace made a git directory runs nothing at git status"
  [ ! -f "$WS/config" ] || ! grep -qi fsmonitor "$WS/config"
  ok $? "$who: ... its config naming a program is not published"
  [[ "$out" == *'[not published: '*'config (a git configuration naming a program: core.'* ]]
  ok $? "$who: ... and the result names it" || diag "$out"
  rm -f "$RAN"

  # core.hooksPath naming a directory of the work tree (husky).
  rm -rf "$WS"/* "$WS"/.[!.]*
  atk_git "$WS" init -q .
  atk_git "$WS" config core.hooksPath .husky
  mkdir -p "$WS/.husky" "$WS/plainhooks"
  echo tracked >"$WS/tracked"
  atk_git "$WS" add tracked
  atk_git "$WS" commit -q -m base
  pub_owner
  husky="printf '#!/bin/sh\n$TEST_TMP/payload\n' >.husky/pre-commit 2>/dev/null && chmod +x .husky/pre-commit && echo wrote
printf '#!/bin/sh\n$TEST_TMP/payload\n' >plainhooks/pre-commit"
  atk_control "$husky"
  atk_git "$ACTL" commit -q --allow-empty -m next
  [ -e "$RAN" ]
  ok $? "$who: control: unconfined, a hook in core.hooksPath runs at git commit"
  rm -rf "$RAN" "$ACTL"
  prun run -- "$husky"
  [ -f "$WS/plainhooks/pre-commit" ]
  ok $? "$who: the same file elsewhere is published (rc $rc)" || diag "$out" "$err"
  atk_git "$WS" commit -q --allow-empty -m next
  [ ! -e "$RAN" ]
  ok $? "$who: confined, a hook written into core.hooksPath runs nothing at git commit"
  [ ! -e "$WS/.husky/pre-commit" ]
  ok $? "$who: ... it is not published"
  [[ "$out" != *wrote* ]]
  ok $? "$who: ... and the hooks directory is read-only inside (output: ${out%%$'\n'*})"
  rm -f "$RAN"

  # A new nested repository whose alias takes -c.
  alias="mkdir -p clone/.git/objects clone/.git/refs/heads && echo 'ref: refs/heads/main' >clone/.git/HEAD
printf '[core]\n\trepositoryformatversion = 0\n[alias]\n\tst = -c core.fsmonitor=$TEST_TMP/payload status\n' >clone/.git/config
echo file >clone/file"
  atk_control "$alias"
  atk_git "$ACTL/clone" st
  [ -e "$RAN" ]
  ok $? "$who: control: unconfined, a new repository's alias with -c runs a program at git st"
  rm -rf "$RAN" "$ACTL"
  prun run -- "$alias"
  [ -f "$WS/clone/file" ]
  ok $? "$who: the new repository's work tree is published (rc $rc)" \
    || diag "$out" "$err"
  atk_git "$WS/clone" st
  [ ! -e "$RAN" ]
  ok $? "$who: confined, its alias runs nothing at git st" || diag "$out"
  rm -f "$RAN"
done
