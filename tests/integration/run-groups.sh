#!/bin/bash
# A workspace path carrying a group the sandbox does not map (a team's
# group, a supplementary group): overlayfs cannot copy it up inside the
# namespace, so changing it confined fails with EOVERFLOW where the same
# command unconfined succeeds.  crucible says so in the first command's
# result, naming the path and the remedy; a path of the user's own group
# is not named, nor one behind a symbolic link.  As root over its own
# workspace, and as root over a workspace another user owns (the sandbox
# then runs as that user).
#
# Where crucible can make the user namespaces itself (sandbox/userns.h),
# the user's groups are mapped and such a file is changed: as root holding
# a supplementary group (root's groups are the ones its process holds; a
# group it does not hold stays unmapped and named), and as uid 65534
# holding one that /etc/subgid gives it (newgidmap's rule; the line is
# added for the test and /etc/subgid restored exactly).  The mapped groups
# give nothing the user does not have: setgroups is refused inside, a
# setgid file means nothing, no user namespace can be made, and a file
# that denies the user's group stays unreadable.
. "$(dirname "$0")/lib.sh"

plan 22
# The first part is about root holding no group but its own.
if [ "$(id -u)" -eq 0 ] && [ "$(id -G)" != 0 ] && [ -z "${GROUPS_REEXEC:-}" ]; then
  GROUPS_REEXEC=1 exec setpriv --groups 0 -- "$0" "$@"
fi
new_workspace
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for i in $(seq 22); do skip "groups under confinement" "$why" bwrap; done
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  for i in $(seq 22); do
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

# --- root holding a supplementary group: it is mapped -----------------------
new_workspace
mkdir -p "$HOME/.crucible"
echo '{"sandbox": {"enabled": true}}' >"$HOME/.crucible/config.json"
held=$(getent group "$other" | cut -d: -f3)
# A group root does not hold: the first of these that exists and is neither
# root's nor the held one.
for g in staff adm daemon bin sys; do
  unheld=$(getent group "$g" | cut -d: -f3)
  [ -n "$unheld" ] && [ "$unheld" != 0 ] && [ "$unheld" != "$held" ] && break
  unheld=
done
unheld_name=$(getent group "$unheld" | cut -d: -f1)

# run_held GROUPS LINE: crucible run LINE in $WS as root holding GROUPS.
run_held() {
  out=$(cd "$WS" && setpriv --groups "$1" -- "$CRUCIBLE" run -- "$2" 2>&1) && rc=0 || rc=$?
}

echo one >team.txt
chgrp "$other" team.txt
chmod 664 team.txt
echo one >other.txt
chgrp "$unheld" other.txt
chmod 664 other.txt
run_held "0,$held" 'echo more >>team.txt; echo more >>other.txt; cat team.txt; id -G; cat /proc/self/setgroups'
like "$out" $'(^|\n)one\nmore\n0 ' "root holding $other: its file of that group is changed confined"
like "$out" $'\n0 '"$held"$'\ndeny\n' "inside, the held group is itself (not the overflow group) and setgroups is refused"
like "$out" "cannot create other\.txt: Value too large for defined data type.*\[confined, 1 path in the workspace cannot be changed: it carries a group the sandbox does not map \(first: other\.txt, group $unheld_name\)" \
  "a file of a group root does not hold still fails, and only it is named"
is "$(cat team.txt; stat -c %G team.txt)" "one
more
$other" "the change is published and the file keeps its group"

# A setgid file of a group root does not hold: outside, running it gives
# that group (control); inside, nothing (no-new-privileges, nosuid, and
# the group is not even mapped).
cp /usr/bin/id idg
chgrp "$unheld" idg
chmod 2755 idg
control=$(cd "$WS" && setpriv --groups "0,$held" -- ./idg -g)
run_held "0,$held" './idg -g; unshare -U true 2>/dev/null && echo made-a-user-namespace; true'
is "$control|$(head -n 1 <<<"$out")" "$unheld|0" \
  "a setgid file gives its group unconfined (control), and nothing confined"
ctl_ns=$(cd "$WS" && setpriv --groups "0,$held" -- unshare -U true 2>&1 && echo made)
ok "$([ "$ctl_ns" = made ] && ! grep -q made-a-user-namespace <<<"$out"; echo $?)" \
  "a user namespace is made unconfined (control), never inside"

# joined_attempt CMD...: start "sleep 8.25" confined with CMD (a crucible
# run prefix), join its workload's user namespace from the host (so
# without the workload's seccomp filter) and try to make a user namespace
# there; $joined says what came of it, "none" when no workload was found.
joined_attempt() {
  local pid= i
  (cd "$WS" && "$@" run -- 'sleep 8.25' >/dev/null 2>&1 &)
  for i in $(seq 100); do
    pid=$(pgrep -n -f '^sleep 8\.25$') &&
      [ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] && break
    pid=
    sleep 0.1
  done
  joined=none
  [ -n "$pid" ] || return 0
  joined=$(nsenter -t "$pid" --user --preserve-credentials unshare -U true 2>&1 && echo made)
  kill "$pid" 2>/dev/null
  sleep 0.5
}

# The limit itself: a process of the host's joined to the workload's user
# namespace cannot make one either.
joined_attempt setpriv --groups "0,$held" -- "$CRUCIBLE"
like "$joined" 'No space left on device$' \
  "joined from the host, the workload's user namespace makes no other (the outer limit)"

# --- uid 65534 holding a supplementary group ------------------------------
# newgidmap maps a group beside the user's own only where /etc/subgid gives
# it; the test adds such a line and puts the file back exactly.
SUBGID=/etc/subgid
subgid_saved=
restore_subgid() {
  [ -n "$subgid_saved" ] || return 0
  if [ "$subgid_saved" = absent ]; then rm -f "$SUBGID"; else cat "$TEST_TMP/subgid" >"$SUBGID"; fi
  subgid_saved=
}
trap 'restore_subgid; rm -rf "$TEST_TMP"' EXIT
user_why=
[ -u /usr/bin/newgidmap ] && [ -u /usr/bin/newuidmap ] || user_why="no setuid newuidmap/newgidmap (package uidmap, tools/deps.sh)"
getent passwd 65534 >/dev/null || user_why="no password entry for uid 65534"
[ "$(getent passwd 65534 | cut -d: -f4)" = 65534 ] || user_why="uid 65534's primary group is not 65534"
if [ -z "$user_why" ] && grep -Eq "^(nobody|65534):" "$SUBGID" 2>/dev/null; then
  user_why="$SUBGID already has lines for uid 65534"
fi
if [ -n "$user_why" ]; then
  for i in $(seq 7); do skip "uid 65534's groups under confinement" "$user_why" unprivileged; done
  exit 0
fi
WS=$(mktemp -d "$TEST_TMP/ws-nobody.XXXXXX")
H="$TEST_TMP/home-nobody"
mkdir -p "$H/.crucible"
echo '{"sandbox": {"enabled": true}}' >"$H/.crucible/config.json"
echo one >"$WS/team.txt"
echo one >"$WS/other.txt"
echo secret >"$WS/deny.txt"
chown -R 65534:65534 "$WS" "$H"
chgrp "$other" "$WS/team.txt"
chgrp "$unheld" "$WS/other.txt"
chmod 664 "$WS/team.txt" "$WS/other.txt"
# Readable by anyone but the group: holding it denies.
chown root:"$other" "$WS/deny.txt"
chmod 0604 "$WS/deny.txt"

# run_user GROUPS LINE: crucible run LINE in $WS as 65534 holding GROUPS.
run_user() {
  out=$(cd "$WS" && HOME="$H" setpriv --reuid=65534 --regid=65534 --groups "$1" -- \
    "$CRUCIBLE" run -- "$2" 2>&1) && rc=0 || rc=$?
}

run_user "65534,$held" 'echo more >>team.txt'
like "$out" "cannot create team\.txt: Value too large for defined data type.*\(first: (team|other)\.txt, group ($other|$unheld_name)\)" \
  "uid 65534, no $SUBGID line: the change fails and the note names the path"

if [ -e "$SUBGID" ]; then cp -p "$SUBGID" "$TEST_TMP/subgid"; subgid_saved=present; else subgid_saved=absent; fi
echo "nobody:$held:1" >>"$SUBGID"
run_user "65534,$held,$unheld" 'echo more >>team.txt; echo more >>other.txt; cat team.txt; id -G; cat /proc/self/setgroups'
like "$out" $'(^|\n)one\nmore\n65534 '"$held"$'( 65534)?\ndeny\n' \
  "with \"nobody:$held:1\" in $SUBGID: changed, the group mapped as itself, setgroups refused"
like "$out" "cannot create other\.txt: Value too large for defined data type.*\(first: other\.txt, group $unheld_name\)" \
  "a group it holds that $SUBGID does not give stays unmapped, and is named"
is "$(cat "$WS/team.txt"; stat -c %G "$WS/team.txt")" "one
more
$other" "published as 65534, the file keeps its group"

# The file denying the group: without the group it is readable (control);
# holding it, unreadable unconfined and confined alike (no group dropped).
control=$(cd "$WS" && setpriv --reuid=65534 --regid=65534 --groups 65534 -- cat deny.txt 2>&1)
held_out=$(cd "$WS" && setpriv --reuid=65534 --regid=65534 --groups "65534,$held" -- cat deny.txt 2>&1)
run_user "65534,$held" 'cat deny.txt 2>/dev/null || echo refused; setpriv --clear-groups cat deny.txt 2>/dev/null || echo still-refused'
is "$control|${held_out##*: }|$(head -n 2 <<<"$out")" "secret|Permission denied|refused
still-refused" "a file denying a held group stays unreadable inside: no group can be dropped"

HOME="$H" joined_attempt setpriv --reuid=65534 --regid=65534 --groups "65534,$held" -- "$CRUCIBLE"
like "$joined" 'No space left on device$' \
  "uid 65534: joined from the host, its workload's user namespace makes no other"

restore_subgid
ok "$(if [ -e "$TEST_TMP/subgid" ]; then cmp -s "$TEST_TMP/subgid" "$SUBGID"; else [ ! -e "$SUBGID" ]; fi; echo $?)" \
  "$SUBGID is put back exactly"
