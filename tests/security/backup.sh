#!/bin/bash
# Publication's hard-linked backups (sandbox/publish.c) against a process
# of the same user racing the rollback on the host: a file with one name
# is backed up as a link, so the backup is the file's old inode, which a
# process that had the file open before the publication can still write.
# In a --enable-fault-injection build (publish_run): the publication is
# killed once every change is applied (CRUCIBLE_FAULT=applied), and the
# recovery rolls it back from the backups.  As root and as uid 65534 over
# a root that identity owns.  TAP.
#
# - control: a write through a descriptor opened before the publication
#   lands in the backup (the link is the old inode);
# - the rollback does not restore such a write (the backup's digest);
# - control: with the recovery slowed (strace delays its second unlinkat,
#   which removes the file at the path before the old content is copied
#   back), and no racer, the rollback restores the old content exactly;
# - the same with a racer writing the old inode at that moment: the
#   rollback restores the old content or nothing, never the racer's.  The
#   digest was checked on a read before the copy, and the copy itself was
#   not proved, so the racer's bytes were restored.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

H="${CRUCIBLE_HELPER_DIR:-}/publish_run"
PER=4
ids=(root)
can_drop_privileges && ids+=(nobody)
plan $((${#ids[@]} * PER))

why="" need=""
if [ ! -x "$H" ]; then
  why="the publish_run helper was not built"
elif ! "$H" faults; then
  # As tests/faults/publish-crash.sh: test.sh runs it again over a build
  # that has fault points.
  why="this build has no fault points (configure --enable-fault-injection)"
elif ! command -v strace >/dev/null; then
  why="no strace (tools/deps.sh)" need=strace
fi
if [ -n "$why" ]; then
  for ((i = 0; i < ${#ids[@]} * PER; i++)); do skip "hard-linked backups against a racer" "$why" $need; done
  exit 0
fi
EVIL='EVIL!!' # as long as "before": a size check alone would not see it

# fresh WHO: a root holding f = "before", an upper changing it to "after",
# an empty state directory, all the identity's; AS runs as it.
fresh() {
  D=$(mktemp -d "$TEST_TMP/pub.XXXXXX")
  mkdir -m 700 "$D/state"
  mkdir "$D/R" "$D/U"
  echo before >"$D/R/f"
  echo after >"$D/U/f"
  AS=()
  if [ "$1" = nobody ]; then
    chown -R 65534:65534 "$D"
    AS=(as_nobody)
  fi
  chmod 755 "$D"
}

# crash: publish, killed once every change is applied.
crash() {
  { (CRUCIBLE_FAULT=applied "${AS[@]}" "$H" publish "$D/state" "$D/R" "$D/U") >/dev/null 2>&1; } 2>/dev/null
}

# slow_recover: the recovery, its second unlinkat held 1.5 s after it.
slow_recover() {
  "${AS[@]}" strace -f -o /dev/null -e trace=unlinkat \
    -e inject=unlinkat:delay_exit=1500000:when=2 "$H" recover "$D/state" >/dev/null 2>&1
}

# racer: as the identity, open f before the publication; once $D/go
# exists, wait for f to leave its path, then write over the old inode.
racer() {
  "${AS[@]}" /bin/sh -c '
    exec 7<>"$1/R/f"
    n=0; while [ ! -e "$1/go" ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done
    n=0; while [ -e "$1/R/f" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n+1)); done
    printf "%s\n" "$2" >&7' sh "$D" "$EVIL" &
  racer_pid=$!
  sleep 0.2
}

for who in "${ids[@]}"; do
  # Control: the old inode is the backup, and a held descriptor writes it.
  fresh "$who"
  exec 7<>"$D/R/f"
  crash
  printf '%s\n' "$EVIL" >&7
  exec 7>&-
  backup=$(find "$D/state" -path '*/backup/0' -type f | head -1)
  is "$(cat "$backup" 2>/dev/null)" "$EVIL" \
    "control ($who): after the crash, a descriptor opened before the publication writes the backup"
  "${AS[@]}" "$H" recover "$D/state" >/dev/null 2>&1
  ok "$([ "$(cat "$D/R/f" 2>/dev/null)" != "$EVIL" ] && echo 0 || echo 1)" \
    "($who): the rollback does not restore a backup written after it was made"

  # Control: the slowed recovery, no racer, restores exactly.
  fresh "$who"
  crash
  slow_recover
  is "$(cat "$D/R/f" 2>/dev/null)" before "control ($who): the slowed rollback restores the old content"

  # The racer writes the old inode between the check and the copy.
  fresh "$who"
  racer
  crash
  touch "$D/go"
  slow_recover
  wait "$racer_pid"
  got=$(cat "$D/R/f" 2>/dev/null)
  ok "$([ "$got" != "$EVIL" ] && echo 0 || echo 1)" \
    "($who): a racer writing the backup while it is restored: its bytes are not (got: ${got:-nothing})"
done
