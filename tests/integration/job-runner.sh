#!/bin/bash
# The container job runner (crucible-job-runner) as a plain process, no
# engine: tests/helpers/job_drive sends it a job made from a scratch root
# (or a raw archive), it runs the command on a scratch workspace given
# with --workspace (refused as a container's PID 1), and what it sends
# back is checked and published into the root (sandbox/container/job.h).
# Hostile archives in, hostile workspaces out, each with its positive
# control: the same attempt without the runner or its checks succeeds.
. "${CRUCIBLE_SRCDIR:-.}/tests/integration/lib.sh"

RUNNER="$CRUCIBLE_BIN_DIR/../libexec/crucible/crucible-job-runner"
DRIVE="$HELPERS/job_drive"
plan 58
if [ ! -x "$RUNNER" ] || [ ! -x "$DRIVE" ] || ! command -v python3 >/dev/null; then
  for i in $(seq 58); do
    skip "job runner" "no $RUNNER, $DRIVE or python3 (make check builds them)"
  done
  exit 0
fi

# fresh: a root holding a.txt, sub/b.txt, link -> a.txt and key.pem; an
# empty scratch workspace; a state directory.  Owned by $1 (default
# root).
fresh() {
  local owner=${1:-0}
  CASE=$(mktemp -d "$TEST_TMP/case.XXXXXX")
  ROOT=$CASE/root SCRATCH=$CASE/scratch STATE=$CASE/state
  mkdir -p "$ROOT/sub" "$SCRATCH" "$STATE"
  echo hello >"$ROOT/a.txt"
  echo old >"$ROOT/sub/b.txt"
  ln -s a.txt "$ROOT/link"
  echo secret >"$ROOT/key.pem"
  chmod 700 "$STATE"
  chown -R "$owner:$owner" "$CASE"
}

# drive [OPTIONS] -- LINE: run the job; stdout in $out, stderr in $err.
drive() {
  out=$("$DRIVE" --runner "$RUNNER" --scratch "$SCRATCH" --root "$ROOT" \
    --statedir "$STATE" --leave-out '*.pem' "$@" 2>"$CASE/err") && rc=0 || rc=$?
  err=$(cat "$CASE/err")
}

# A line of $err that starts with TAG, without the tag.
field() { sed -n "s/^$1: //p" <<<"$err" | head -1; }

# --- the runner itself --------------------------------------------------

readelf -l "$RUNNER" 2>/dev/null | grep -q 'Requesting program interpreter'
ok $((!$?)) "the runner is linked statically (no program interpreter)"

# --workspace is refused to a PID 1 (in a container it could only point
# the runner elsewhere in its own container); as a plain process it is
# taken (the runner then waits for a job, and /dev/null ends it).
if [ "$(id -u)" -eq 0 ] && unshare --pid --fork true 2>/dev/null; then
  fresh
  got=$(unshare --pid --fork "$RUNNER" --workspace "$SCRATCH" </dev/null | tr -d '\0' | tr -c '[:print:]' ' ')
  like "$got" "usage: crucible-job-runner" "as PID 1, --workspace is refused"
  got=$("$RUNNER" --workspace "$SCRATCH" </dev/null | tr -d '\0')
  is "$got" "" "as a plain process, --workspace is taken (the control)"
else
  skip "--workspace refused as PID 1" "needs root and unshare --pid"
  skip "--workspace taken as a plain process" "needs root and unshare --pid"
fi

# --- a job and its changes ----------------------------------------------

fresh
drive -- 'cat a.txt; echo new >c.txt; rm sub/b.txt; echo more >>a.txt; mkdir -p d/e; echo x >d/e/y; echo to-stderr >&2'
is "$out" "hello
to-stderr" "the command's output (stdout and stderr on one pipe) is relayed"
is "$(field X)" "exit=0" "the ending is an ordinary exit"
is "$(field publish)" "published paths=7" "its changes are published (sub, whose entry went, among them)"
is "$(cat "$ROOT/a.txt" "$ROOT/c.txt" "$ROOT/d/e/y"; test -e "$ROOT/sub/b.txt" && echo still)" \
  "hello
more
new
x" "new, changed and deleted paths reach the root"

fresh
drive -- 'echo n >n; exit 3'
is "$(field X) $(field publish)" "exit=3 published paths=1" "a nonzero exit publishes too"

fresh
drive --env FOO=bar --env 'SPACE=a b' -- 'env | sort'
like "$out" "FOO=bar" "the job's environment reaches the command"
[ -n "${HOME:-}" ] && ! grep -q '^HOME=' <<<"$out"
ok $? "and nothing of the runner's own (HOME is set out here, not in there)"

fresh
drive -- 'cat key.pem; ls'
like "$out" "key.pem: No such file" "an unreadable pattern's match is not in the workspace"
like "$(field left-out)" "key.pem \\(it is unreadable\\)" "and is named as left out"
fresh
drive -- 'echo mine >key.pem'
like "$(field note)" "key.pem: it was left out of the workspace" \
  "a write over a left-out path is refused"
is "$(cat "$ROOT/key.pem")" "secret" "and the root's file is as it was"

fresh
drive --touch a.txt -- 'sleep 0.3; echo x >>a.txt; echo x >new'
like "$(field note)" "a.txt in the workspace was changed by something outside the sandbox" \
  "a root changed while the command ran publishes nothing"
[ ! -e "$ROOT/new" ] && ! grep -q x "$ROOT/a.txt"
ok $? "nothing of it reached the root"

# --- limits, stops and the dead-man switch -------------------------------

fresh
drive --fsize 1000 -- 'head -c 5000 /dev/zero >big; echo rc=$?'
like "$out" "rc=1[0-9][0-9]" "RLIMIT_FSIZE from the job binds the command"
like "$(field R)" "rlimits=[^ ]*,[^ ]*,1000," "and the 'R' facts read it back"
fresh
drive -- 'head -c 5000 /dev/zero >big; echo rc=$?'
like "$out" "rc=0" "without it the same write succeeds (the control)"

fresh
start=$(date +%s%N)
drive --deadline-ms 300 --grace-ms 200 -- 'echo before; sleep 5; echo late >late'
ms=$((($(date +%s%N) - start) / 1000000))
is "$out" "before" "a command past its deadline still reports what it printed"
like "$(field X)" "deadline=1" "the runner stopped it itself at its deadline"
is "$(field publish)" "discarded" "and its changes are discarded"
# The command alone would take 5 s.
[ "$ms" -lt 4500 ]
ok $? "within the deadline and its grace (${ms} ms)"

fresh
drive --stop-ms 200 -- 'echo started; sleep 5; echo x >x'
like "$(field X)" "signal=15 stopped=1" "'K' stops the command"
[ ! -e "$ROOT/x" ] && [ "$(field publish)" = discarded ]
ok $? "and a stopped command's changes are not sent"

fresh
drive --close-ms 300 -- 'sleep 30 & echo $! >bgpid; sleep 30'
bg=$(cat "$SCRATCH/bgpid" 2>/dev/null)
[ -n "$bg" ]
ok $? "the command started a background process (the control)"
ms=$(field runner | sed -n 's/.* ms=//p')
[ "${ms:-99999}" -lt 2000 ]
ok $? "the end of the input ends the runner at once (${ms} ms after it)"
[ -z "$(field X)" ] && [ -n "$bg" ] && wait_gone "$bg" 2
ok $? "and everything of the command with it, sending nothing"

# --- hostile archives in -------------------------------------------------

# make_archives DIR: hostile tars as a broken or hostile host could send
# them, made by python's tarfile: DIR/KIND.tar, each aiming at
# DIR/outside-KIND where it aims outside.
make_archives() {
  python3 - "$1" <<'EOF'
import io, sys, tarfile
d = sys.argv[1]
def archive(kind, entries):
    t = tarfile.open('%s/%s.tar' % (d, kind), 'w', format=tarfile.GNU_FORMAT)
    for name, type, link, mode, data in [('ok.txt', tarfile.REGTYPE, '', 0o644, b'ok\n')] + entries:
        ti = tarfile.TarInfo(name); ti.type = type; ti.mode = mode
        ti.linkname = link
        if type == tarfile.CHRTYPE: ti.devmajor, ti.devminor = 1, 3
        ti.size = len(data) if type == tarfile.REGTYPE else 0
        t.addfile(ti, io.BytesIO(data) if type == tarfile.REGTYPE else None)
    t.close()
out = lambda kind: '%s/outside-%s' % (d, kind)
R = tarfile.REGTYPE
archive('dotdot', [('../' * 12 + out('dotdot').lstrip('/'), R, '', 0o644, b'pwned\n')])
archive('absolute', [(out('absolute'), R, '', 0o644, b'pwned\n')])
archive('through', [('l', tarfile.SYMTYPE, d, 0o777, b''),
                    ('l/outside-through', R, '', 0o644, b'pwned\n')])
archive('device', [('dev', tarfile.CHRTYPE, '', 0o644, b'')])
archive('setuid', [('s', R, '', 0o4755, b'x')])
archive('twice', [('ok.txt', R, '', 0o644, b'again\n')])
EOF
}

# unpack_unchecked DIR KIND...: what an extraction without checks does
# with each DIR/KIND.tar, into DIR/control-KIND.
unpack_unchecked() {
  python3 - "$@" 2>/dev/null <<'EOF'
import os, sys, tarfile
d = sys.argv[1]
for kind in sys.argv[2:]:
    os.mkdir('%s/control-%s' % (d, kind))
    try:
        tarfile.open('%s/%s.tar' % (d, kind)).extractall('%s/control-%s' % (d, kind), filter='fully_trusted')
    except Exception as e:
        print(kind, e, file=sys.stderr)
EOF
}

ARCH=$(mktemp -d "$TEST_TMP/archives.XXXXXX")
make_archives "$ARCH"
for kind in dotdot absolute through; do
  fresh
  drive --archive "$ARCH/$kind.tar" -- 'echo ran'
  [ -n "$(field F)" ] && [ -z "$(field X)" ] && [ ! -e "$ARCH/outside-$kind" ] && [ -z "$out" ]
  ok $? "a $kind archive entry: the runner fails the job before running it, writing nothing outside"
done
fresh
drive --archive "$ARCH/twice.tar" -- 'echo ran'
like "$(field F)" "File exists" "a name given twice fails the job"
if [ "$(id -u)" -eq 0 ]; then
  fresh
  drive --archive "$ARCH/device.tar" -- 'echo ran'
  like "$(field F)" "neither a file, a directory nor a symbolic link" "a device in the archive fails the job"
  fresh
  drive --archive "$ARCH/setuid.tar" -- 'stat -c %a s'
  is "$out" "755" "a setuid bit in the archive is not made"
else
  skip "a device in the archive" "needs root (the control makes one)"
  skip "a setuid bit in the archive" "needs root (the control makes one)"
fi
# The controls, after the runner's runs: a write outside left by one
# could not then be blamed on the runner.
unpack_unchecked "$ARCH" dotdot absolute through device setuid
for kind in dotdot absolute through; do
  [ -e "$ARCH/outside-$kind" ]
  ok $? "unpacked without the checks, the $kind archive writes outside (the control)"
done
if [ "$(id -u)" -eq 0 ]; then
  [ -c "$ARCH/control-device/dev" ]
  ok $? "unpacked without the checks by root, the device is made (the control)"
  [ -u "$ARCH/control-setuid/s" ]
  ok $? "unpacked without the checks by root, the file is setuid (the control)"
else
  skip "the device control" "needs root"
  skip "the setuid control" "needs root"
fi

# --- hostile workspaces out ----------------------------------------------

fresh
drive -- 'ln -s /etc/passwd pw; echo ok >good'
like "$(field note)" "pw: a link out of the workspace" "a link out made by the command is refused"
[ ! -e "$ROOT/good" ] && [ ! -L "$ROOT/pw" ]
ok $? "and nothing of that change set is published"
[ -L "$SCRATCH/pw" ]
ok $? "the command did make the link (the control)"

fresh
drive -- 'ln -s sub/../.. up; ln -s ../a.txt sub/fine'
like "$(field note)" "up: a link out of the workspace" "a link that climbs through a name is refused too"

fresh
drive -- 'echo x >s; chmod 4755 s; echo y >g; chmod 2755 g'
is "$(field publish)" "published paths=2" "setuid and setgid files publish"
is "$(stat -c %a "$ROOT/s" "$ROOT/g" | tr '\n' ' ')" "755 755 " "without their setuid and setgid bits"
[ -u "$SCRATCH/s" ] && [ -g "$SCRATCH/g" ]
ok $? "which the command had set (the control)"

if [ "$(id -u)" -eq 0 ]; then
  fresh
  drive -- 'mknod dev c 1 3; mkfifo fifo; echo ok >good'
  is "$(field publish)" "published paths=1" "devices and fifos the command made are not sent, the rest publishes"
  [ ! -e "$ROOT/dev" ] && [ ! -e "$ROOT/fifo" ] && [ -c "$SCRATCH/dev" ] && [ -p "$SCRATCH/fifo" ]
  ok $? "the command made them (the control), the root has neither"
else
  skip "devices the command made" "needs root (mknod)"
  skip "devices the command made: the control" "needs root (mknod)"
fi

fresh
drive --changes-max 4000 -- 'head -c 5000 /dev/zero >big'
like "$(field F)" "the changes are over the 4000-byte bound" "changes over changes_max are not sent"
[ ! -e "$ROOT/big" ] && [ "$(field publish)" != "published paths=1" ]
ok $? "and nothing is published"
fresh
drive --changes-max 6000 -- 'head -c 5000 /dev/zero >big'
is "$(field publish)" "published paths=1" "under the bound the same file publishes (the control)"

fresh
drive --entries-max 20 -- 'for i in $(seq 30); do echo >f$i; done'
like "$(field note)" "more entries than the changes' bound" "more entries than the bound are refused"
fresh
drive --entries-max 40 -- 'for i in $(seq 30); do echo >f$i; done'
is "$(field publish)" "published paths=30" "within the bound they publish (the control)"

fresh
drive --workspace-max 5 -- 'echo ran'
like "$(field send)" "more than 5 bytes, the bound of a container's workspace" \
  "a workspace over its bound is not sent at all"
[ -z "$out" ] && [ -z "$(field X)" ]
ok $? "and the command never runs on part of it"

# --- as uid 65534 ----------------------------------------------------------

if can_drop_privileges; then
  fresh 65534
  out=$(as_nobody "$DRIVE" --runner "$RUNNER" --scratch "$SCRATCH" --root "$ROOT" \
    --statedir "$STATE" -- 'id -u; echo n >n' 2>"$CASE/err")
  err=$(cat "$CASE/err")
  is "$out $(field publish)" "65534 published paths=1" "as uid 65534: the command runs and publishes"
  fresh 65534
  rm -f "$ARCH/outside-dotdot"
  chmod 777 "$ARCH"
  as_nobody "$DRIVE" --runner "$RUNNER" --scratch "$SCRATCH" --root "$ROOT" \
    --statedir "$STATE" --archive "$ARCH/dotdot.tar" -- 'echo ran' >/dev/null 2>"$CASE/err"
  err=$(cat "$CASE/err")
  [ -n "$(field F)" ] && [ ! -e "$ARCH/outside-dotdot" ]
  ok $? "as uid 65534: a .. entry fails the job, writing nothing outside"
  fresh 65534
  as_nobody "$DRIVE" --runner "$RUNNER" --scratch "$SCRATCH" --root "$ROOT" \
    --statedir "$STATE" -- 'ln -s /etc x' >/dev/null 2>"$CASE/err"
  err=$(cat "$CASE/err")
  like "$(field note)" "x: a link out of the workspace" "as uid 65534: a link out is refused"
else
  for i in 1 2 3; do skip "as uid 65534" "needs root and setpriv" unprivileged; done
fi
