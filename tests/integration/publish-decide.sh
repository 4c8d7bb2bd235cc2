#!/bin/bash
# How a command's ending decides its publication: a timeout, a signal or
# the output ceiling discards; a root changed by someone else or by
# another command's publication publishes nothing and the result says so;
# a root the command did not write into is not checked; a command that
# ends while another publication holds the lock waits for it.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/publish-lib.sh"

pub_begin 14 "publication decided"

REFUSED_OUTSIDE='[published nothing: a in the workspace was changed by something outside the sandbox after this command started, so what this command wrote was discarded rather than merged]'
REFUSED_COUNT='[published nothing: another command published into the workspace after this one started, so what this command wrote was discarded rather than merged]'

for who in $ids; do
  pub_become "$who"

  prun run --timeout 1 -- 'echo x >timed; sleep 5'
  is "$out" '(no output)
[stopped: the command ran too long]' "$who: a timeout's result has no publication note"
  [ ! -e "$WS/timed" ] && ok 0 "$who: ... and its writes are discarded" \
    || ok 1 "$who: ... and its writes are discarded"

  prun run -- 'echo x >killed; kill -9 $$'
  is "$out" '(no output)
[the command was killed]' "$who: a signal's result has no publication note"
  [ ! -e "$WS/killed" ] && ok 0 "$who: ... and its writes are discarded" \
    || ok 1 "$who: ... and its writes are discarded"

  # Someone outside the sandbox writes a file the command also writes.
  (prun run -- 'sleep 2; echo mine >a'; printf '%s\n' "$out" >"$TEST_TMP/bg.out") &
  wait_started
  (cd "$WS" && "${PUB_AS[@]}" sh -c 'echo outside >a')
  wait
  is "$(cat "$TEST_TMP/bg.out")" "(no output)
$REFUSED_OUTSIDE" "$who: a root changed outside the sandbox publishes nothing, and says so"
  is "$(cat "$WS/a")" outside "$who: ... and the outside write stands"

  # A command that wrote nothing into the changed root is not refused.
  (prun run -- 'sleep 2; echo looked'; printf '%s\n' "$out" >"$TEST_TMP/bg.out") &
  wait_started
  (cd "$WS" && "${PUB_AS[@]}" sh -c 'echo again >a')
  wait
  is "$(cat "$TEST_TMP/bg.out")" looked "$who: a root the command left unchanged is not checked"

  # Two commands write one root at once: the one that ends first
  # publishes; the other ran while it did, and publishes nothing.
  rm -f "$WS/a"
  pub_owner
  (prun run -- 'sleep 3; echo A >a'; printf '%s\n' "$out" >"$TEST_TMP/bg.out") &
  wait_started
  prun run -- 'echo B >b; echo second'
  wait
  is "$out" second "$who: the first to end publishes"
  is "$(cat "$WS/b")" B "$who: ... its writes"
  is "$(cat "$TEST_TMP/bg.out")" "(no output)
$REFUSED_COUNT" "$who: the other publishes nothing, and says another command published"
  [ ! -e "$WS/a" ] && ok 0 "$who: ... and nothing of it reaches the workspace" \
    || ok 1 "$who: ... and nothing of it reaches the workspace"

  # Another holder of the per-user lock: the command ends while it is
  # held, waits for it, then publishes.  Root's lock is shared with every
  # other test running as root at the same time, which this would hold up,
  # so it is held only for another identity.
  if [ "$who" = root ]; then
    for what in "still publishes" "... its writes" "... after the holder let go"; do
      skip "$who: a command that ends while the lock is held: $what" \
        "root's lock is shared with the tests running beside this one; checked as the other identity"
    done
    continue
  fi
  uid=$(cd "$WS" && "${PUB_AS[@]}" id -u)
  lock="/var/tmp/crucible-code-sandbox-$uid-v1/publish.lock"
  (prun run -- 'sleep 1; echo waited >w; echo done'
    printf '%s\n' "$out" >"$TEST_TMP/bg.out"
    date +%s%N >"$TEST_TMP/bg.end") &
  wait_started
  start=$(date +%s%N)
  "${PUB_AS[@]}" flock "$lock" sleep 2.5
  wait
  end=$(cat "$TEST_TMP/bg.end")
  is "$(cat "$TEST_TMP/bg.out")" done "$who: a command that ends while the lock is held still publishes"
  is "$(cat "$WS/w" 2>/dev/null)" waited "$who: ... its writes"
  [ $(((end - start) / 1000000)) -ge 2400 ] \
    && ok 0 "$who: ... after the holder let go" \
    || ok 1 "$who: ... after the holder let go ($(((end - start) / 1000000)) ms)"
done
