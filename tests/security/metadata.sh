#!/bin/bash
# Repository metadata and agent configuration, whatever their shape, and
# the configured protected and readOnly roots: what a confined command
# (crucible run, sandbox.enabled) writes there is read-only inside or left
# out of the publication and named, so nothing it plants runs at the
# person's next git command or when an editor or agent opens the folder.
# Each finding of issue 11 as it was found, each with its positive
# control (the same change, somewhere unprotected, publishes).  As root and
# as uid 65534.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/publish-lib.sh"

PER_IDENTITY=35
AGENT_NAMES=".crucible .claude .codex .gemini .cursor .vscode .idea"

# The identities: root, and 65534 itself when the suite runs as root.
meta_identities() {
  if [ "$(id -u)" -ne 0 ]; then
    echo self
  else
    echo root
    can_drop_privileges && echo nobody
  fi
}

# meta_home JSON: the identity's home configuration's sandbox block.
meta_home() {
  local home=$PUB_HOME
  [ "$PUB_WHO" = nobody ] && home=$PUB_UHOME
  printf '{"sandbox":{"enabled":true%s}}\n' "$1" >"$home/.crucible/config.json"
}

# meta_git ARGS...: git on the host, as the person would run it next, with
# a program it must never run ($RAN records that it did).
meta_git() {
  (cd "$WS" && env HOME="$TEST_TMP" GIT_CONFIG_NOSYSTEM=1 \
    git -c safe.directory='*' "$@") >/dev/null 2>&1
}

# meta_repo DIR: a git directory at DIR (HEAD, objects, refs, config), the
# shape git recognises.
meta_repo() {
  mkdir -p "$1/objects" "$1/refs/heads" "$1/hooks"
  echo 'ref: refs/heads/main' >"$1/HEAD"
  printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n' >"$1/config"
}

ids=$(meta_identities)
plan $(($(wc -w <<<"$ids") * PER_IDENTITY + 1))
if [ "$(id -u)" -eq 0 ] && ! can_drop_privileges; then
  skip "metadata tests as uid 65534" "setpriv is missing" unprivileged
else
  ok 0 "metadata tests run as every identity here: $(echo $ids)"
fi
pub_setup
if ! pub_usable; then
  for i in $(seq $(($(wc -w <<<"$ids") * PER_IDENTITY))); do
    skip "metadata ($i)" "$PUB_REASON" bwrap
  done
  exit 0
fi

for who in $ids; do
  pub_become "$who"
  pub_payload "$who"

  # (4a) .git -> .realgit: a hook written into the symlink's target.
  meta_repo "$WS/.realgit"
  ln -s .realgit "$WS/.git"
  mkdir -p "$WS/plain/hooks"
  pub_owner
  prun run -- "printf '#!/bin/sh\n$TEST_TMP/payload\n' >.realgit/hooks/pre-commit 2>/dev/null && chmod +x .realgit/hooks/pre-commit && echo wrote; cp .realgit/hooks/pre-commit plain/hooks/ 2>/dev/null || echo hook >plain/hooks/pre-commit"
  [ ! -e "$WS/.realgit/hooks/pre-commit" ]
  ok $? "$who: a hook written under a symlinked .git's target is not published"
  [[ "$out" != *wrote* ]]
  ok $? "$who: ... and the target is read-only inside (output: ${out%%$'\n'*})"
  [ -e "$WS/plain/hooks/pre-commit" ]
  ok $? "$who: control: the same file in a plain directory is published"
  rm -rf "$WS/.realgit" "$WS/.git" "$WS/plain"

  # (4b) a nested repository whose sub/.git is rewritten to point at a
  # directory the command makes, with core.fsmonitor in its config.
  mkdir -p "$WS/sub"
  meta_repo "$WS/sub/.git"
  echo tracked >"$WS/sub/file"
  pub_owner
  prun run -- "rm -rf sub/.git && echo 'gitdir: ../.evil' >sub/.git
mkdir -p .evil/objects .evil/refs && echo 'ref: refs/heads/main' >.evil/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = $TEST_TMP/payload\n' >.evil/config
mkdir -p notgit && cp .evil/config notgit/config"
  [ -d "$WS/sub/.git" ] && [ -f "$WS/sub/.git/HEAD" ]
  ok $? "$who: a nested .git rewritten to a gitdir: file is not published"
  [ ! -e "$WS/.evil/config" ]
  ok $? "$who: ... nor the config with core.fsmonitor it points at"
  [[ "$out" == *'[not published: '*'sub/.git (under sub/.git, which is protected)'* ]]
  ok $? "$who: ... and the result names them" || diag "$out"
  rm -f "$RAN"
  meta_git -C sub status
  [ ! -e "$RAN" ]
  ok $? "$who: the person's next git status runs nothing"
  [ -f "$WS/notgit/config" ]
  ok $? "$who: control: the same config outside a git directory is published"
  rm -rf "$WS/sub" "$WS/.evil" "$WS/notgit"

  # An existing nested repository: its hooks and config are left alone.
  mkdir -p "$WS/nested"
  meta_repo "$WS/nested/.git"
  pub_owner
  prun run -- 'echo evil >nested/.git/hooks/post-checkout; echo "[alias] x = !sh" >>nested/.git/config; echo ok >nested/file'
  [ ! -e "$WS/nested/.git/hooks/post-checkout" ] \
    && ! grep -q alias "$WS/nested/.git/config" && [ -f "$WS/nested/file" ]
  ok $? "$who: changes under an existing nested .git are refused; its worktree publishes"
  rm -rf "$WS/nested"

  # (5) configured protected and readOnly roots hold.
  meta_home ',"filesystem":{"protected":["secret.txt"],"readOnly":["ro"]}'
  echo original >"$WS/secret.txt"
  mkdir -p "$WS/ro"
  echo original >"$WS/ro/f"
  echo original >"$WS/free.txt"
  pub_owner
  prun run -- 'echo changed >secret.txt 2>/dev/null && echo wrote-secret; echo changed >ro/f 2>/dev/null && echo wrote-ro; echo new >ro/g 2>/dev/null && echo made-ro; echo changed >free.txt; true'
  [ "$(cat "$WS/secret.txt")" = original ]
  ok $? "$who: a configured protected file is not published"
  [ "$(cat "$WS/ro/f")" = original ] && [ ! -e "$WS/ro/g" ]
  ok $? "$who: a configured readOnly directory is not published"
  [[ "$out" != *wrote-secret* ]] && [[ "$out" != *wrote-ro* ]] && [[ "$out" != *made-ro* ]]
  ok $? "$who: ... and both are read-only inside" || diag "$out"
  [ "$(cat "$WS/free.txt")" = changed ]
  ok $? "$who: control: an unlisted file beside them is published"
  # Made anew by the command where nothing was there: refused at publication.
  rm -rf "$WS/ro"
  prun run -- 'mkdir ro && echo new >ro/g; echo ok >beside'
  [ ! -e "$WS/ro" ] && [ -f "$WS/beside" ]
  ok $? "$who: a readOnly root the command creates is not published"
  [[ "$out" == *'ro (under ro, which is read-only)'* ]]
  ok $? "$who: ... and the result names it" || diag "$out"
  prun sandbox inspect
  [[ "$out" == *'read_only   configuration'* ]] && [[ "$out" == *'protected   configuration'* ]] \
    && [[ "$out" == *'confined  yes'* ]]
  ok $? "$who: inspection names the configured roots that hold" || diag "$out"
  # A root outside the workspace is refused by name, never ignored.
  meta_home ",\"filesystem\":{\"writable\":[\"$TEST_TMP/elsewhere\"]}"
  prun run -- 'echo ran'
  [ "$rc" -eq 125 ] && [[ "$out" == *"sandbox.filesystem.writable: '$TEST_TMP/elsewhere' is outside the workspace"* ]] \
    && [[ "$out" != *ran* ]]
  ok $? "$who: a writable root outside the workspace refuses the command" || diag "$rc $out"
  prun sandbox inspect
  [[ "$out" == *'no command could be run here:'* ]] && [[ "$out" != *'confined  yes'* ]]
  ok $? "$who: ... and inspection says no command could run" || diag "$out"
  meta_home ',"filesystem":{"readOnly":["/etc"]}'
  prun run -- 'echo ran'
  [ "$rc" -eq 125 ] && [[ "$out" == *"sandbox.filesystem.readOnly: '/etc' is outside the workspace"* ]]
  ok $? "$who: a readOnly root outside the workspace refuses the command" || diag "$rc $out"
  meta_home ''
  rm -rf "$WS/ro" "$WS/secret.txt" "$WS/free.txt" "$WS/beside"

  # (4) a new nested repository: git clone works, the clone's files are
  # published, but not a planted hook nor a config naming a program.
  meta_repo "$WS/origin.git"
  rm -rf "$WS/origin.git/hooks"
  pub_owner
  prun run -- "git init -q src && cd src && echo hello >file && git add file && git -c user.name=t -c user.email=t@t commit -qm one && cd .. && git clone -q --no-hardlinks src clone && printf '#!/bin/sh\n$TEST_TMP/payload\n' >clone/.git/hooks/post-checkout && chmod +x clone/.git/hooks/post-checkout && echo ok"
  [ "$(cat "$WS/clone/file" 2>/dev/null)" = hello ] && [ -f "$WS/clone/.git/HEAD" ]
  ok $? "$who: a new clone's files and git directory are published" || diag "$out"
  [ ! -e "$WS/clone/.git/hooks/post-checkout" ]
  ok $? "$who: ... but not a hook planted in it"
  ls "$WS"/clone/.git/hooks/*.sample >/dev/null 2>&1
  ok $? "$who: ... while git's own sample hooks are"
  [ -f "$WS/clone/.git/config" ] && grep -q origin "$WS/clone/.git/config"
  ok $? "$who: ... and its config, which names no program, is"
  [[ "$out" == *'clone/.git/hooks/post-checkout (a git hook)'* ]]
  ok $? "$who: ... and the result names the hook" || diag "$out"
  rm -f "$RAN"
  meta_git -C clone checkout -q -- file
  [ ! -e "$RAN" ]
  ok $? "$who: the person's next checkout in the clone runs nothing"
  rm -rf "$WS/clone"
  pub_owner
  prun run -- "git clone -q --no-hardlinks src clone && git -C clone config core.fsmonitor $TEST_TMP/payload && mkdir -p copy && cp clone/.git/config copy/config"
  [ -f "$WS/clone/file" ] && [ ! -e "$WS/clone/.git/config" ]
  ok $? "$who: a new clone with core.fsmonitor publishes its files, not that config" || diag "$out"
  [[ "$out" == *'clone/.git/config (a git configuration naming a program: core.fsmonitor)'* ]]
  ok $? "$who: ... and the result names the key" || diag "$out"
  rm -f "$RAN"
  meta_git -C clone status
  [ ! -e "$RAN" ]
  ok $? "$who: the person's next git status in the clone runs nothing"
  [ -f "$WS/copy/config" ]
  ok $? "$who: control: the same config outside a git directory is published"
  # A bare repository the command makes by hand: git finds it by its shape.
  rm -rf "$WS/clone" "$WS/copy"
  prun run -- "mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' >bare/HEAD && printf '[core]\n\tfsmonitor = $TEST_TMP/payload\n' >bare/config"
  [ -f "$WS/bare/HEAD" ] && [ ! -e "$WS/bare/config" ]
  ok $? "$who: a new bare repository's config naming a program is not published"
  # A .git file pointing elsewhere, made in a new directory.
  prun run -- 'mkdir newdir && echo "gitdir: ../bare" >newdir/.git && echo x >newdir/x'
  [ ! -e "$WS/newdir/.git" ] && [ -f "$WS/newdir/x" ]
  ok $? "$who: a new .git file (gitdir:) is not published; the files beside it are"
  rm -rf "$WS/bare" "$WS/newdir" "$WS/src" "$WS/origin.git"

  # (6) agent configuration, at the root and deeper down, and .envrc.
  mkdir -p "$WS/.vscode"
  echo '{}' >"$WS/.vscode/tasks.json"
  pub_owner
  prun run -- 'echo "{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}" >.vscode/tasks.json 2>/dev/null && echo wrote; true'
  [ "$(cat "$WS/.vscode/tasks.json")" = '{}' ] && [[ "$out" != *wrote* ]]
  ok $? "$who: an existing .vscode/tasks.json is read-only inside and not published" || diag "$out"
  snippet=
  for n in $AGENT_NAMES; do
    snippet+="mkdir -p $n deep/$n && echo x >$n/f && echo x >deep/$n/f; "
  done
  snippet+='echo x >.envrc; echo x >deep/.envrc; mkdir -p vscode && echo x >vscode/tasks.json; echo x >deep/.envrc.example'
  rm -rf "$WS/.vscode"
  prun run -- "$snippet"
  left=
  for n in $AGENT_NAMES .envrc; do
    [ -e "$WS/$n" ] && left+=" $n"
    [ -e "$WS/deep/$n" ] && left+=" deep/$n"
  done
  [ -z "$left" ]
  ok $? "$who: no agent configuration is published, at the root or deeper (published:$left)"
  [[ "$out" == *'.claude (under .claude, which is protected)'* ]] \
    && [[ "$out" == *'deep/.envrc (under deep/.envrc, which is protected)'* ]]
  ok $? "$who: ... and the result names them" || diag "$out"
  [ -f "$WS/vscode/tasks.json" ] && [ -f "$WS/deep/.envrc.example" ]
  ok $? "$who: control: the same files under other names are published"
done
