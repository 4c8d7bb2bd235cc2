#!/bin/bash
# The remembered probe (doc/linux-confinement.md, "The remembered probe"): a
# passed probe is remembered in the user's state directory under the digest
# of everything it depended on, and anything that changes makes the next
# preparation probe afresh: a replaced, touched or different bwrap, another
# broker or crucible build, a record that someone else could have written.
# A candidate that starts failing after it passed is probed afresh at its
# first failed launch and passed over for the next, as without the record.
# Whether a probe ran is read from strace: bwrap started with --help.  The
# candidates are tests/helpers/fake_bwrap stand-ins (so this needs root);
# crucible runs from a root-owned copy of the installed binaries, which the
# test may touch and replace.
. "$(dirname "$0")/lib.sh"

plan 22

new_workspace
if ! command -v strace >/dev/null 2>&1; then
  for ((i = 0; i < 22; i++)); do skip "probe record" "no strace to see the probes" bwrap; done
  exit 0
fi
fake_bwrap_standins 22 pass flaky
STRACE=$(command -v strace)
STATEDIR=/var/tmp/crucible-code-sandbox-0-v1

# A private, root-owned copy of crucible and the broker beside it.
BIN=$STANDIN/bin
mkdir -m 755 "$BIN"
install -m 755 -o root -g root "$CRUCIBLE" "$BIN/crucible"
install -m 755 -o root -g root "$CRUCIBLE_BIN_DIR/crucible-sandbox-broker" \
  "$BIN/crucible-sandbox-broker"
mkdir -p "$HOME/.crucible"
printf '{"sandbox":{"enabled":true}}\n' >"$HOME/.crucible/config.json"

# run CANDIDATE_DIR: crucible run -- 'echo ran' with CANDIDATE_DIR first on
# PATH, traced; sets out, rc, probes (how many times bwrap --help ran),
# written (the records it wrote) and dropped (the records it removed), by
# name, read from the trace: other tests may write records meanwhile.
run() {
  # (LeakSanitizer cannot run under ptrace; the untraced tests look for
  # leaks.)
  out=$(PATH="$1:/usr/bin:/bin" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$STRACE" -f -qq \
    -e trace=execve,execveat,renameat,renameat2,rename,unlinkat \
    -o "$TEST_TMP/trace" "$BIN/crucible" run -- 'echo ran' 2>&1) && rc=0 || rc=$?
  probes=$(grep -c '"--help"' "$TEST_TMP/trace" || true)
  written=$(grep -E '^[0-9]+ +rename' "$TEST_TMP/trace" |
    grep -oE '"probe-[0-9a-f]{64}"' | tr -d '"' | sort -u)
  dropped=$(grep -E '^[0-9]+ +unlinkat' "$TEST_TMP/trace" |
    grep -oE '"probe-[0-9a-f]{64}"' | tr -d '"' | sort -u)
}

# Replace FILE with a copy of itself (another inode), root-owned.
replace() {
  cp -p "$1" "$1.new" && mv -f "$1.new" "$1"
}

run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "the first preparation probes, and the command runs"
is "$(wc -w <<<"$written")" 1 "a passed probe leaves one record"
record=$STATEDIR/$written
like "$(stat -c '%U %a' "$record" 2>&1):$(cat "$record" 2>&1)" \
  "^root 600:crucible probe record v2: passed
key [0-9a-f]{64}
version bubblewrap 0.8.0\$" \
  "the record says only that the probe passed (for which whole key, and the version it read), and only its owner may write it"

run "$STANDIN/pass"
is "$rc:$out:$probes" "0:ran:0" "the next preparation starts no probe"

# The record is found by the key without the broker's digest, which is
# computed beside the preparation; the whole key it holds is compared
# before bwrap starts.  A record whose whole key is another (as for a
# broker whose bytes changed with nothing else of its file) is not
# believed: the candidates are probed afresh and the record written anew.
whole=$(sed -n 's/^key //p' "$record")
sed -i "s/^key .*/key $(printf '%064d' 0)/" "$record"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0)):$written:$(sed -n 's/^key //p' "$record")" \
  "0:ran:1:${record##*/}:$whole" \
  "a record whose whole key differs (the broker's digest) is probed afresh, and written again with the whole key"

replace "$STANDIN/pass/bwrap"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a replaced candidate (same bytes, another file) is probed afresh"

touch -d '1 hour ago' "$STANDIN/pass/bwrap"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a candidate whose mtime changed is probed afresh"

{ cat "$HELPERS/fake_bwrap"; printf '\0'; } >"$STANDIN/pass/bwrap.new"
chmod 755 "$STANDIN/pass/bwrap.new"
mv -f "$STANDIN/pass/bwrap.new" "$STANDIN/pass/bwrap"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a candidate with another digest is probed afresh"
run "$STANDIN/pass"
is "$rc:$out:$probes" "0:ran:0" "and is remembered in its turn"

{ cat "$CRUCIBLE_BIN_DIR/crucible-sandbox-broker"; printf '\0'; } >"$BIN/broker.new"
chmod 755 "$BIN/broker.new"
mv -f "$BIN/broker.new" "$BIN/crucible-sandbox-broker"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "another broker is probed afresh"

touch -d '1 hour ago' "$BIN/crucible"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a changed crucible build is probed afresh"

# The record of the key now in use, the one a fresh probe writes.
replace "$STANDIN/pass/bwrap"
run "$STANDIN/pass"
record=$STATEDIR/$written

chmod 666 "$record"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0)):$(stat -c %a "$record")" "0:ran:1:600" \
  "a record others can write is not believed: probed afresh, and written anew"

chown 65534:65534 "$record"
run "$STANDIN/pass"
is "$rc:$out:$((probes > 0)):$(stat -c %U "$record")" "0:ran:1:root" \
  "a record another uid owns is not believed: probed afresh"

# Root over a workspace another user owns runs the sandbox as them, in
# their state directory, which they can write: root's record is never read
# from there.
theirs=$(mktemp -d "$TEST_TMP/theirs.XXXXXX")
chown 65534:65534 "$theirs"
(cd "$theirs" && run "$STANDIN/pass" && echo "$rc:$out:$probes") >"$TEST_TMP/theirs.out"
is "$(cat "$TEST_TMP/theirs.out")" "0:ran:0" \
  "root over another user's workspace still uses root's own record"
their_dir=/var/tmp/crucible-code-sandbox-65534-v1
if [ -d "$their_dir" ]; then
  cp "$record" "$their_dir/${record##*/}"
  chown 65534:65534 "$their_dir/${record##*/}"
  rm -f "$record"
  (cd "$theirs" && run "$STANDIN/pass" && echo "$rc:$out:$((probes > 0))") >"$TEST_TMP/theirs.out"
  rm -f "$their_dir/${record##*/}"
  is "$(cat "$TEST_TMP/theirs.out")" "0:ran:1" \
    "a record in the workspace owner's directory, which they can write, is not believed by root"
else
  ok 1 "running as the workspace's owner made their state directory"
fi

# A candidate that passed, then cannot make namespaces any more (the same
# file: its key is unchanged).
run "$STANDIN/flaky"
is "$rc:$out:$((probes > 0))" "0:ran:1" "a candidate that passes is remembered"
flaky=$written
echo no-namespaces >"$STANDIN/flaky/mode"
run "$STANDIN/flaky"
is "$rc:$out" "0:ran" "when it starts failing, the command still runs, on the next candidate"
like "$(grep -c '"--help"' "$TEST_TMP/trace")" '^[2-9]' \
  "its failed launch probed every candidate afresh"
like "$(grep -F '"--unshare-all"' "$TEST_TMP/trace" | grep -c 'execveat')" '^[3-9]' \
  "the stand-in's launch and probe failed, then the next candidate ran the command"
is "$dropped:$([ -e "$STATEDIR/$flaky" ] && echo kept || echo gone)" "$flaky:gone" \
  "the failing candidate's record is dropped"
run "$STANDIN/flaky"
is "$rc:$out:$((probes > 0))" "0:ran:1" \
  "the failing candidate is probed again next time and passed over for the next, as without the record"

# A candidate remembered, which then cannot make namespaces, and whose
# record's whole key differs: the launch waits for the broker's digest and
# probes afresh before bwrap starts, so the failing candidate is never
# launched (one launch, on the next candidate), and its record is gone.
echo pass >"$STANDIN/flaky/mode"
run "$STANDIN/flaky"
only=$written
echo no-namespaces >"$STANDIN/flaky/mode"
sed -i "s/^key .*/key $(printf '%064d' 0)/" "$STATEDIR/$only"
run "$STANDIN/flaky"
# bwrap with --unshare-all: the two probes' and the one launch's (a launch
# of the failing candidate, as in the relaunch above, would be a fourth).
starts=$(grep -F '"--unshare-all"' "$TEST_TMP/trace" | grep -c execveat || true)
is "$rc:$out:$((probes > 0)):$([ -e "$STATEDIR/$only" ] && echo kept || echo gone):$starts" \
  "0:ran:1:gone:3" \
  "a record whose whole key differs, for a candidate that now fails: both candidates probed afresh before any launch, which is on the next one; the record gone"
