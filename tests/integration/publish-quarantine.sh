#!/bin/bash
# crucible sandbox quarantine: list (when, from which root, why), restore
# (only when every path is still as the transaction found or left it) and
# drop.  The entry is written here the way publication keeps one: its
# checksummed log (a begin and a staged record), its backup, a reason.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"

plan 12
export HOME="$TEST_TMP/home"
mkdir -p "$HOME"
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
crun sandbox quarantine list
if [ "$rc" -ne 0 ]; then
  for i in $(seq 12); do
    skip "quarantine $i" "the state directory cannot be used: $err"
  done
  exit 0
fi

# wal_record STEP PAYLOAD: one record of the log.
wal_record() {
  local sum
  sum=$(printf '%s %d\n%s' "$1" "${#2}" "$2" | sha256sum | cut -d' ' -f1)
  printf 'W %s %d %s\n%s\n' "$1" "${#2}" "$sum" "$2"
}

# make_entry ID ROOT: a quarantined publication that replaced ROOT/a
# ("before") with "after".
make_entry() {
  local q="$STATE/quarantine/$1" before after
  mkdir -p "$q/stage" "$q/backup"
  chmod 700 "$STATE/quarantine" "$q"
  printf 'before\n' >"$q/backup/0"
  printf 'after\n' >"$q/stage/0"
  chmod 644 "$q/backup/0"
  before=$(sha256sum <"$q/backup/0" | cut -d' ' -f1)
  after=$(sha256sum <"$q/stage/0" | cut -d' ' -f1)
  {
    wal_record begin "root =$2
call =test
time 1000000000
"
    wal_record staged "C 0 0 644 0 0 0 0 6 =$after 1 644 0 0 =$before =a = =
"
    wal_record apply 0
  } >"$q/wal"
  echo 'its rollback could not be proved' >"$q/reason"
}

id="test-$$-$RANDOM"
WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
printf 'after\n' >"$WS/a"
make_entry "$id" "$WS"

crun sandbox quarantine
like "$out" "$id  2001-09-09 01:46:40 UTC  from $WS  \(its rollback could not be proved\)" \
  "list names the entry, when, from which root, and why"
is "$rc" 0 "list exits 0"

# Restoring is refused while the path is neither as found nor as left.
printf 'someone else\n' >"$WS/a"
crun sandbox quarantine restore "$id"
is "$err" "crucible: a in $WS is neither as the transaction found it nor as it left it: something changed it since; compare it with the entry before restoring by hand" \
  "restore refuses a root changed since, naming the path"
is "$rc" 1 "... and exits 1"
is "$(cat "$WS/a")" "someone else" "... and touches nothing"

printf 'after\n' >"$WS/a"
crun sandbox quarantine restore "$id"
is "$out" "restored the root of $id as it was found; the entry is dropped" \
  "restore puts the root back"
is "$(cat "$WS/a")" before "... as the transaction found it"
[ ! -e "$STATE/quarantine/$id" ] && ok 0 "... and drops the entry" \
  || ok 1 "... and drops the entry"

make_entry "$id" "$WS"
crun sandbox quarantine drop "$id"
is "$out" "dropped $id" "drop says so"
[ ! -e "$STATE/quarantine/$id" ] && ok 0 "... and removes the entry" \
  || ok 1 "... and removes the entry"

crun sandbox quarantine drop "$id"
is "$err" "crucible: there is no quarantine entry '$id'" "an unknown entry is named"
crun sandbox quarantine restore ../x
is "$err" "crucible: '../x' is not a quarantine entry" "a path is not an entry"
