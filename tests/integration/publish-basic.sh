#!/bin/bash
# Publication of an ordinary exit: what a confined command wrote reaches
# the workspace when it ends (content, mode without setuid/setgid, mtime,
# links as links, empty directories, deletions, replaced directories, hard
# links as separate files); what cannot be published is left out and
# named; a copy-up without a change publishes nothing.  As root and as an
# unprivileged identity.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/publish-lib.sh"

pub_begin 19 "publication"

for who in $ids; do
  pub_become "$who"
  # The baseline the command starts from.
  echo old >"$WS/file"
  echo keep >"$WS/kept"
  mkdir -p "$WS/gone/sub" "$WS/replaced" "$WS/.git"
  echo x >"$WS/gone/sub/x"
  echo o1 >"$WS/replaced/o1"
  echo '[core]' >"$WS/.git/config"
  ln -s file "$WS/link"
  pub_owner
  sleep 0.05

  prun run -- 'echo printed
echo new >file
printf "fresh\n" >created
chmod 4755 created
touch -d "2001-02-03 04:05:06" created
rm -r gone
rm -r replaced; mkdir replaced; echo o2 >replaced/o2
mkdir -p empty/inner
ln -sfn /etc/passwd link
ln created hard
mkfifo pipe
exit 3'
  is "$out" 'printed
[exit status 3]
[not published: pipe (a fifo); everything else it wrote was published]' \
    "$who: a nonzero exit publishes, and the result names what was left out"
  is "$rc" 3 "$who: crucible run exits with the command's status"
  is "$(cat "$WS/file")" new "$who: a modified file is published"
  is "$(cat "$WS/created")" fresh "$who: a created file is published"
  is "$(stat -c %a "$WS/created")" 755 "$who: its mode, without setuid"
  is "$(stat -c %Y "$WS/created")" "$(date -d '2001-02-03 04:05:06' +%s)" \
    "$who: its mtime"
  [ ! -e "$WS/gone" ] && ok 0 "$who: a deleted directory is deleted" \
    || ok 1 "$who: a deleted directory is deleted"
  is "$(ls "$WS/replaced")" o2 "$who: a replaced directory holds only its new content"
  [ -d "$WS/empty/inner" ] && ok 0 "$who: empty directories are published" \
    || ok 1 "$who: empty directories are published"
  is "$(readlink "$WS/link")" /etc/passwd "$who: a symlink is published as a link"
  [ "$(stat -c %i "$WS/created")" != "$(stat -c %i "$WS/hard")" ] \
    && [ "$(cat "$WS/hard")" = fresh ] && ok 0 "$who: a hard link becomes a separate file" \
    || ok 1 "$who: a hard link becomes a separate file"
  [ ! -e "$WS/pipe" ] && ok 0 "$who: the fifo is left out" \
    || ok 1 "$who: the fifo is left out"
  is "$(cat "$WS/kept")" keep "$who: what the command did not touch stays"
  home=$PUB_HOME
  [ "$who" = root ] || [ "$who" = self ] || home=$PUB_UHOME
  fact=$(cat "$home"/.local/state/crucible/*.jsonl 2>/dev/null \
    | grep -o '"fact":"publication".*' | tail -n 1)
  like "$fact" '"outcome":"published","paths":9,"bytes":19' \
    "$who: the journal records the publication, its paths and bytes"

  # A read-write open copies the file up without changing it: nothing to
  # publish, and the file in the workspace is the same file.
  inode=$(stat -c %i "$WS/kept")
  prun run -- 'exec 3<>kept; cat kept >/dev/null; echo opened'
  is "$out" opened "$who: a read-write open without a write has no publication note"
  is "$(stat -c %i "$WS/kept")" "$inode" "$who: ... and the file was not replaced"

  # A file's user.* attributes are published; the user's own
  # user.overlay.* ones come back from their escaped names in the upper.
  if command -v python3 >/dev/null 2>&1; then
    prun run -- "python3 -c \"import os
open('attrs', 'w').write('x')
os.setxattr('attrs', 'user.mine', b'1')
os.setxattr('attrs', 'user.overlay.mine', b'2')\""
    got=$(python3 -c "import os, sys
p = sys.argv[1]
print(sorted((n, os.getxattr(p, n).decode()) for n in os.listxattr(p)))" "$WS/attrs" 2>&1)
    is "$got" "[('user.mine', '1'), ('user.overlay.mine', '2')]" \
      "$who: user extended attributes are published, user.overlay.* as the user set them"
  else
    skip "$who: user extended attributes are published" "python3 sets them"
  fi

  # Changes under .git are refused, the rest publishes.
  rm -rf "$WS/.git"
  prun run -- 'mkdir .git && echo evil >.git/config; echo ok >beside'
  is "$out" '(no output)
[not published: .git (under .git, which is protected); everything else it wrote was published]' \
    "$who: a change under .git is refused and named"
  [ ! -e "$WS/.git" ] && [ "$(cat "$WS/beside")" = ok ] \
    && ok 0 "$who: ... and the rest is published" \
    || ok 1 "$who: ... and the rest is published"
done
