#!/bin/bash
# A workspace path carrying a group the sandbox does not map (a team's
# group, a supplementary group): overlayfs cannot copy it up inside the
# namespace, so changing it confined fails with EOVERFLOW where the same
# command unconfined succeeds.  crucible says so in the first command's
# result, naming the path and the remedy; a path of the user's own group
# is not named, nor one behind a symbolic link.  As root over its own
# workspace, and as root over a workspace another user owns (the sandbox
# then runs as that user).
. "$(dirname "$0")/lib.sh"

plan 8
new_workspace
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for i in $(seq 8); do skip "groups under confinement" "$why" bwrap; done
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  for i in $(seq 8); do
    skip "groups under confinement" "not root: no file can be given a group this user is not in"
  done
  exit 0
fi
other=$(getent group users | cut -d: -f1)
[ -n "$other" ] || other=$(getent group 100 | cut -d: -f1)
mkdir -p "$HOME/.crucible"
echo '{"sandbox": {"enabled": true}}' >"$HOME/.crucible/config.json"

echo one >team.txt
chgrp "$other" team.txt
chmod 664 team.txt
echo mine >own.txt
ln -s team.txt link-to-team
mkdir shared
chgrp "$other" shared
chmod 775 shared

# Positive control: unconfined, the same change succeeds.
(cd "$WS" && sh -c 'echo more >>team.txt') && ok 0 "unconfined, a file of another group is changed (control)" ||
  ok 1 "unconfined, a file of another group is changed (control)"
echo one >team.txt

crun run -- 'echo more >>team.txt; echo mine >>own.txt; cat team.txt own.txt'
like "$out" "cannot create team\.txt: Value too large for defined data type" \
  "confined, the same change fails with EOVERFLOW"
like "$out" "\[confined, 2 paths in the workspace cannot be changed: they carry a group the sandbox does not map \(first: (team\.txt|shared), group $other\), so writing to them fails with \"Value too large for defined data type\"; give them your own group \(chgrp root on each\), or run the command with confinement off\]" \
  "the result names a path, its group and the remedy"
like "$out" $'one\nmine\nmine' "a path of the user's own group is changed as usual"
ok "$(grep -q 'link-to-team\|own\.txt' <<<"$(grep '^\[confined' <<<"$out")"; [ $? -eq 1 ]; echo $?)" \
  "neither the own-group file nor the link is named"

rm -rf shared
crun run -- 'true'
is "$out" "(no output)
[confined, 1 path in the workspace cannot be changed: it carries a group the sandbox does not map (first: team.txt, group $other), so writing to it fails with \"Value too large for defined data type\"; give it your own group (chgrp root -- team.txt), or run the command with confinement off]" \
  "one path: named with the command that gives it the user's group"
chgrp root team.txt
crun run -- 'echo more >>team.txt; cat team.txt'
is "$out" $'one\nmore' "once it carries the user's group, nothing is said and the change is made"

# Root over a workspace another user owns: their group is the one mapped.
if id crucibletest >/dev/null 2>&1; then
  chown -R crucibletest:crucibletest "$WS"
  chgrp "$other" team.txt
  chmod 755 "$TEST_TMP"
  crun run -- 'echo more >>team.txt'
  like "$out" "\(first: team\.txt, group $other\).*\(chgrp crucibletest -- team\.txt\)" \
    "root over another user's workspace: the owner's group, and the remedy in it"
else
  skip "root over another user's workspace" "no user crucibletest (test.sh makes one)" unprivileged
fi
