#!/bin/bash
# An attacker's pass over the remembered probe's record by its shape
# (doc/linux-confinement.md, "The remembered probe"; the owner, the mode,
# another uid and a record planted through the workspace are
# tests/integration/probe-cache.sh's and review-speed-statedir.sh's).  A
# record is believed only when it is a regular file with one name
# (sandbox/statedir.c, statedir_probe_trusted, opened O_NOFOLLOW): one
# put at the record's name as a symlink to a file saying the same, as a
# second hard link of such a file, or as a fifo (which would hold an
# open or a read that waits) is not believed, and crucible probes afresh
# and still runs the command.  The control: the very record, left as it
# was written, is believed (no probe).  Root only (the candidate is a
# root-owned stand-in, tests/helpers/fake_bwrap); whether a probe ran is
# read from strace (bwrap started with --help).  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

plan 8

new_workspace
if ! command -v strace >/dev/null 2>&1; then
  for ((i = 0; i < 8; i++)); do skip "probe record shapes" "no strace to see the probes" bwrap; done
  exit 0
fi
fake_bwrap_standins 8 pass
STATEDIR=/var/tmp/crucible-code-sandbox-0-v1

# A private, root-owned copy of crucible and the broker: a key of its own.
BIN=$STANDIN/bin
mkdir -m 755 "$BIN"
install -m 755 -o root -g root "$CRUCIBLE" "$BIN/crucible"
install -m 755 -o root -g root "$CRUCIBLE_BIN_DIR/crucible-sandbox-broker" \
  "$BIN/crucible-sandbox-broker"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"

# run: crucible run -- 'echo ran', traced; out, rc, probes (bwrap --help
# runs) and written (the records renamed into place).
run() {
  out=$(PATH="$STANDIN/pass:/usr/bin:/bin" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 120 strace -f -qq -e trace=execve,execveat,renameat,renameat2,rename \
    -o "$TEST_TMP/trace" "$BIN/crucible" run -- 'echo ran' 2>&1) && rc=0 || rc=$?
  probes=$(grep -c '"--help"' "$TEST_TMP/trace" || true)
  written=$(grep -E '^[0-9]+ +rename' "$TEST_TMP/trace" |
    grep -oE '"probe-[0-9a-f]{64}"' | tr -d '"' | sort -u)
}

run
is "$rc:$out:$((probes > 0)):$(wc -w <<<"$written")" "0:ran:1:1" \
  "the first preparation probes and writes one record"
record=$STATEDIR/$written
aside=$TEST_TMP/record # the same bytes, root's, 0600, outside the directory
cp -p "$record" "$aside"
trap 'rm -rf "$STANDIN" "$TEST_TMP"; rm -f "$record.alias"' EXIT

run
is "$rc:$out:$probes" "0:ran:0" "control: the record as written is believed (no probe)"

# A symlink at the record's name, to a file saying the same thing.
cp -p "$aside" "$STATEDIR/${written}.target"
ln -sfn "${written}.target" "$record"
run
rm -f "$STATEDIR/${written}.target"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a symlink at the record's name is not believed: probed afresh"
is "$(stat -c '%F %h' "$record" 2>&1)" "regular file 1" "... and the record is written anew over it, a file"

run
is "$rc:$out:$probes" "0:ran:0" "control: that record is believed again"

# A second name for the record.
ln "$record" "$record.alias"
run
rm -f "$record.alias"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a record with a second hard link is not believed: probed afresh"

# A fifo at the record's name: neither believed nor waited on.
rm -f "$record"
mkfifo -m 600 "$record"
run
is "$rc:$out:$((probes > 0))" "0:ran:1" "a fifo at the record's name is not believed, and the command runs (nothing waits on it)"
is "$(stat -c %F "$record" 2>&1)" "regular file" "... and the record is written anew over it"
