#!/bin/bash
# Crash and fault injection over publication (a --enable-fault-injection
# build): over random trees, a SIGKILL at every step of the write-ahead
# log (the log's own list of steps is the list of fault points), then the
# recovery a next preparation runs, leaves the root exactly as it was
# before or exactly as the overlay showed it after — never a mix; so does
# a crash during that recovery; ENOSPC while staging and while applying
# rolls back; a second writer during the run is refused.  The test fails
# if any fault point is never hit.
#
# CRUCIBLE_FAULT_TREES  how many random trees (default 4; more by hand)
# CRUCIBLE_FAULT_SEED   the first tree's seed (default: from the date)
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"

H="${CRUCIBLE_HELPER_DIR:-}/publish_run"
TREES=${CRUCIBLE_FAULT_TREES:-4}
SEED=${CRUCIBLE_FAULT_SEED:-$(date +%s)}
GEN="$CRUCIBLE_SRCDIR/tests/faults/gentree.py"
PER_TREE=14

why="" need=faults
if [ ! -x "$H" ]; then
  why="the publish_run helper was not built"
elif ! "$H" faults; then
  # A build without fault points is not a missing requirement: test.sh
  # runs this script again over a build that has them.
  why="this build has no fault points (configure --enable-fault-injection)"
  need=""
elif [ "$(id -u)" -ne 0 ]; then
  why="making whiteouts (mknod) and mounting the reference overlay need root"
elif ! command -v python3 >/dev/null; then
  why="python3 generates the random trees"
fi
if [ -n "$why" ]; then
  plan 1
  skip "publication faults" "$why" $need
  exit 0
fi
plan $((TREES * PER_TREE + 3))

diag "seeds $SEED..$((SEED + TREES - 1)); CRUCIBLE_FAULT_SEED repeats them"
export CRUCIBLE_FAULT_LOG="$TEST_TMP/hits"
: >"$CRUCIBLE_FAULT_LOG"
STATE="$TEST_TMP/state"
mkdir -m 700 "$STATE"

# snap DIR: the tree's listing (types, modes, sizes, link targets, file
# mtimes and digests; directory mtimes aside).
snap() {
  (cd "$1" && find . -mindepth 1 \( -type d -printf '%p %y %m\n' \) -o \
    -printf '%p %y %m %s %l %T@\n' | LC_ALL=C sort \
    && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
}

# fresh: the root R as the tree's lower, and no transaction left over.
fresh() {
  rm -rf "$R" "$STATE/txn" "$STATE/quarantine"
  cp -a "$L" "$R"
}

# is_before_or_after NAME WANT: the root is exactly WANT ("before",
# "after") — or either, when WANT is "either".
state_is() {
  local now
  now=$(snap "$R")
  case $1 in
    before) [ "$now" == "$BEFORE" ] ;;
    after) [ "$now" == "$AFTER" ] ;;
    either) [ "$now" == "$BEFORE" ] || [ "$now" == "$AFTER" ] ;;
  esac
}

# clean: no transaction left and nothing quarantined.
clean() {
  [ -z "$(ls -A "$STATE/txn" 2>/dev/null)" ] \
    && [ -z "$(ls -A "$STATE/quarantine" 2>/dev/null)" ]
}

steps=$("$H" steps)
for t in $(seq 0 $((TREES - 1))); do
  seed=$((SEED + t))
  W="$TEST_TMP/t$t"
  L="$W/lower" U="$W/upper" R="$W/root" M="$W/merged"
  mkdir -p "$W" "$M"
  # The first tree has 70 modified files more: a plan synced with syncfs.
  bulk=""
  [ "$t" -eq 0 ] && bulk=70
  n=$(python3 "$GEN" "$seed" "$L" "$U" $bulk) || n=0
  BEFORE=$(snap "$L")
  # The reference after-state is the overlay itself, read-only.
  mount -t overlay overlay -o "lowerdir=$U:$L,userxattr" "$M"
  AFTER=$(snap "$M")
  umount "$M"

  fresh
  got=$("$H" publish "$STATE" "$R" "$U" 2>&1)
  state_is after && clean
  ok $? "tree $seed ($n changes): a clean run publishes exactly what the overlay showed"
  [ "$n" -gt 0 ] || diag "tree $seed changed nothing: $got"

  # A crash at every step, then recovery: before until the commit, after
  # from it on.
  for step in $steps; do
    case $step in
      rollback | rolledback) continue ;; # hit by the recoveries below
    esac
    point=$step
    [ "$step" = apply ] && point="apply:$((RANDOM % (n > 0 ? n : 1) + 1))"
    fresh
    CRUCIBLE_FAULT=$point "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
    crc=$?
    "$H" recover "$STATE" 2>/dev/null
    want=before
    [ "$step" = commit ] && want=after
    if [ "$n" -eq 0 ]; then
      want=either
    fi
    state_is $want && clean
    ok $? "tree $seed: killed at $point (status $crc), recovered: exactly $want"
  done

  # A crash during recovery's own rollback, then recovery again.
  for rpoint in rollback rolledback; do
    fresh
    CRUCIBLE_FAULT=applied "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
    CRUCIBLE_FAULT=$rpoint "$H" recover "$STATE" 2>/dev/null
    "$H" recover "$STATE" 2>/dev/null
    state_is before && clean
    ok $? "tree $seed: killed at $rpoint while recovering, recovered again: exactly before"
  done

  # A damaged log is ambiguous: quarantined, the root not touched again.
  fresh
  CRUCIBLE_FAULT=apply:1 "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
  partial=$(snap "$R")
  for txn in "$STATE"/txn/*; do
    [ -f "$txn/wal" ] && sed -i '0,/^W staged/s//W staGed/' "$txn/wal"
  done
  "$H" recover "$STATE" 2>/dev/null
  [ "$(snap "$R")" == "$partial" ] && [ -n "$("$H" quarantine "$STATE")" ] \
    || [ "$n" -eq 0 ]
  ok $? "tree $seed: a damaged log is quarantined and the root left alone"

  # A rollback that cannot be proved (its backup was damaged) keeps the
  # transaction in quarantine rather than deleting the evidence.
  fresh
  CRUCIBLE_FAULT=applied "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
  damaged=0
  # (A file's backup, in backup/ or a group of it: backup/dK/N.  A file
  # inside a directory's backup, a copy nothing else holds, is not.)
  while IFS= read -r -d '' b; do
    echo damage >>"$b" && damaged=1
  done < <(find "$STATE"/txn/*/backup -maxdepth 2 -type f -regextype egrep \
    -regex '.*/backup/(d[0-9]+/)?[0-9]+' -print0 2>/dev/null)
  "$H" recover "$STATE" 2>/dev/null
  if [ "$damaged" -eq 1 ]; then
    [ -n "$("$H" quarantine "$STATE")" ] \
      && [ -z "$(ls -A "$STATE/txn" 2>/dev/null)" ] \
      && grep -qx 'its rollback could not be proved' "$STATE"/quarantine/*/reason \
      && ! grep -rq damage "$R"
  else
    # Nothing was backed up as a file: the rollback is proved.
    state_is before && clean
  fi
  ok $? "tree $seed: an unprovable rollback is quarantined (damaged backups: $damaged)"

  # ENOSPC while staging and while applying: rolled back.
  for phase in stage apply; do
    word=staging
    [ "$phase" = apply ] && word=applying
    fresh
    res=$(CRUCIBLE_FAULT_ENOSPC=$phase:2 "$H" publish "$STATE" "$R" "$U" 2>&1)
    if [[ "$res" == published* ]] || [ "$n" -eq 0 ]; then
      # Fewer than two writes in that phase: nothing to inject into.
      state_is after && clean
    else
      # The note of doc/strings.md, "publication failed … left as it was".
      note_re='^rolled-back.\[published nothing: publication failed \((staging|publishing) .+: No space left on device\) and the workspace was left as it was\]$'
      state_is before && clean && [[ "$res" =~ $note_re ]]
    fi
    ok $? "tree $seed: ENOSPC while $word: ${res%%$'\n'*}"
  done

  if [ "$t" -eq 0 ]; then
    # A plan of more than 64 changes keeps the names of all but its first
    # 64 in stage/ and backup/ under a directory for each 64
    # (sandbox/publish.c, PUBLISH_SLOT_GROUP), so no directory there holds
    # more than 64 names of changes.
    fresh
    CRUCIBLE_FAULT=applied "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
    b=$(echo "$STATE"/txn/*/backup) s=$(echo "$STATE"/txn/*/stage)
    over=$(find "$b" "$s" -mindepth 1 -maxdepth 1 -regex '.*/[0-9]+' \
      -printf '%f\n' | awk '$1 >= 64' | head -1)
    biggest=$(for d in "$b" "$b"/d* "$s" "$s"/d*; do
      ls -A "$d" | grep -cx '[0-9][0-9]*'
    done | sort -n | tail -1)
    grouped=false
    [ -d "$b/d1" ] && [ -d "$s/d1" ] && grouped=true
    "$H" recover "$STATE" 2>/dev/null
    [ "$n" -gt 64 ] && $grouped && [ -z "$over" ] \
      && [ "$biggest" -le 64 ] && state_is before && clean
    ok $? "tree $seed ($n changes): the backups and staged files are kept 64 to a directory (at most $biggest names in one), and rolled back from there"

    # A transaction a build before those groups left, every name in the
    # top directory, is still rolled back from it.
    fresh
    CRUCIBLE_FAULT=applied "$H" publish "$STATE" "$R" "$U" >/dev/null 2>&1
    for d in "$STATE"/txn/*/backup/d* "$STATE"/txn/*/stage/d*; do
      [ -d "$d" ] && mv "$d"/* "$d/.." && rmdir "$d"
    done
    flat=$(find "$STATE"/txn/*/backup -maxdepth 1 -type f -regex '.*/[0-9]+' \
      -printf '%f\n' | awk '$1 >= 64' | wc -l)
    "$H" recover "$STATE" 2>/dev/null
    [ "$flat" -gt 0 ] && state_is before && clean
    ok $? "tree $seed: a transaction with every backup in one directory (an earlier build's; $flat past the 64th) is rolled back"
  fi

  # A second writer changes the root between baseline and publication.
  fresh
  res=$(PUBLISH_RUN_TOUCH=zz-outside "$H" publish "$STATE" "$R" "$U" 2>&1)
  rm -f "$R/zz-outside"
  if [ "$n" -gt 0 ]; then
    [[ "$res" == refused-changed* ]] && state_is before
  else
    state_is before
  fi
  ok $? "tree $seed: a root changed mid-run by a second writer is refused: ${res%%$'\n'*}"
done

# Every fault point the log lists was hit.
missing=""
for step in $steps; do
  grep -qx "$step" "$CRUCIBLE_FAULT_LOG" || missing="$missing $step"
done
is "$missing" "" "every fault point of the write-ahead log was hit"
