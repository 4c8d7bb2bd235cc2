#!/bin/bash
# Escape attempts against the terminal: pushing input into the controlling
# terminal with ioctl(TIOCSTI), which the shell that started crucible would
# read as typed commands once the sandbox exits.  The control runs under a
# pty from util-linux script(1), so there is a terminal to push into; the
# confined run is started under one too, so the terminal is there to reach
# and only the boundary (--new-session, stdin /dev/null, the output a pipe)
# stands in the way.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=2
sec_begin "$PER_IDENTITY"
trap 'rm -rf "$TEST_TMP"' EXIT

# Why the control cannot succeed on this machine, if it cannot: no pty
# maker, or Linux 6.2+ with dev.tty.legacy_tiocsti=0, where TIOCSTI is
# refused to everyone without CAP_SYS_ADMIN, confined or not.
tiocsti_unavailable() {
  local legacy=/proc/sys/dev/tty/legacy_tiocsti
  if ! command -v script >/dev/null 2>&1; then
    echo "no script(1) from util-linux to make a pty"
  elif ! command -v perl >/dev/null 2>&1; then
    echo "no perl"
  elif [ -r "$legacy" ] && [ "$(cat "$legacy")" = 0 ]; then
    echo "dev.tty.legacy_tiocsti=0: TIOCSTI fails even unconfined"
  fi
}

# The attempt, as a perl program in the workspace (perl-base is essential
# on Debian; no helper binary to build): TIOCSTI on 0, 1, 2 and
# /dev/tty, exit 0 when any is accepted.  0x5412 where the headers were
# not converted (it is TIOCSTI on x86, arm and the asm-generic ABIs).
write_tiocsti() {
  cat >"$1" <<'PERL'
eval { require "sys/ioctl.ph" };
my $req = defined &TIOCSTI ? &TIOCSTI() : 0x5412;
my @fh = (\*STDIN, \*STDOUT, \*STDERR);
open(my $tty, "<", "/dev/tty") and push @fh, $tty;
for my $fh (@fh) { my $c = "#"; exit 0 if ioctl($fh, $req, $c) }
print "tiocsti refused: $!\n";
exit 1;
PERL
  chmod 644 "$1"
}

# in_pty CMD...: run CMD (one shell line) under a fresh pty as the
# identity; its status is CMD's.  $pout: what the pty showed.
in_pty() {
  local id=()
  [ "$WHO" = nobody ] && id=(setpriv --reuid=65534 --regid=65534 \
    --clear-groups --)
  (cd "$WS" && script -qec "$(printf '%q ' "${id[@]}" "$@")" /dev/null \
    </dev/null >"$TEST_TMP/pty" 2>&1) && prc=0 || prc=$?
  pout=$(tr -d '\r' <"$TEST_TMP/pty")
}

why=$(tiocsti_unavailable)
for who in $ids; do
  sec_become "$who"
  if [ -n "$why" ]; then
    skip "control ($WHO): unconfined, TIOCSTI into the terminal" "$why"
    skip "confined ($WHO): TIOCSTI into the terminal is refused" "$why"
    continue
  fi
  write_tiocsti "$WS/tiocsti.pl"
  in_pty perl "$WS/tiocsti.pl"
  ok "$prc" "control ($WHO): unconfined, TIOCSTI into the terminal succeeds"
  [ "$prc" -eq 0 ] || diag "status $prc" "output: $pout"
  in_pty "$SANDBOX_RUN" --timeout 30 -- "echo ran; perl ./tiocsti.pl"
  if [ "${pout%%$'\n'*}" = ran ] && [ "$prc" -ne 0 ] && [ "$prc" -ne 125 ]; then
    ok 0 "confined ($WHO): TIOCSTI into the terminal is refused"
  else
    ok 1 "confined ($WHO): TIOCSTI into the terminal is refused"
    diag "status $prc" "output: $pout"
  fi
done
