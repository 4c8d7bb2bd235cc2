#!/bin/bash
# Descriptor isolation for a workload with standard streams of its own
# (sandbox_command.stdio, as an MCP server is started): its stdin, stdout
# and stderr are the three descriptors it was given, three different
# pipes, and nothing else of the process that started it reaches it.
# Control: the same listing unconfined sees the starter's descriptor 9.
# A terminal as its input is refused before anything starts (control:
# unconfined, the same shell is on a terminal).  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=6
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"
  # A secret open on descriptor 9 of the process that starts the server.
  echo fd-secret >"$OUT/fd-secret"
  chmod 644 "$OUT/fd-secret"
  exec 9<"$OUT/fd-secret"
  # Tested by the shell's builtins alone: a pipeline or a redirection
  # would have the shell itself hold a descriptor while it runs.
  attempt "holding a descriptor beyond its three streams" \
    'n=3; while [ $n -lt 4096 ]; do [ -e /proc/$$/fd/$n ] && exit 0; n=$((n + 1)); done; exit 1' \
    --stdio </dev/null

  # Exactly 0, 1 and 2, in the shell and in a process it starts.
  confined 'ls /proc/$$/fd; sh -c "ls /proc/\$\$/fd"' --stdio </dev/null
  is "$crc:$cout" $'0:0\n1\n2\n0\n1\n2' \
    "confined ($WHO): its only descriptors are 0, 1 and 2, and its child's too"
  exec 9<&-

  # Three pipes of their own: input, output and error apart, and none of
  # them the /dev/null or the shared pipe a plain command gets.
  confined 'for n in 0 1 2; do readlink /proc/$$/fd/$n; done' \
    --stdio < <(true)
  like "$crc:$(sort -u <<<"$cout" | grep -c '^pipe:\[')" '^0:3$' \
    "confined ($WHO): stdin, stdout and stderr are three different pipes"

  # A terminal as its stdin: the shell would be on the person's terminal.
  on_tty() {
    python3 -c 'import os, pty, subprocess, sys
m, s = pty.openpty()
r = subprocess.run(sys.argv[1:], stdin=s, capture_output=True, text=True)
print(r.returncode); print(r.stdout.strip()); print(r.stderr.strip())' "$@"
  }
  as=()
  [ "$WHO" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  got=$(cd "$WS" && on_tty "${as[@]}" /bin/sh -c '[ -t 0 ] && echo on-a-terminal')
  is "$(sed -n 2p <<<"$got")" on-a-terminal \
    "control ($WHO): unconfined, the shell's stdin is the terminal"
  got=$(cd "$WS" && on_tty "${as[@]}" "$SANDBOX_RUN" --timeout 30 --stdio -- \
    'echo ran; [ -t 0 ] && echo on-a-terminal')
  is "$(sed -n 1p <<<"$got"):$(sed -n 2p <<<"$got"):$(sed -n 3p <<<"$got")" \
    "125::sandbox_run: starting a workload with its own streams: a terminal cannot be one of them" \
    "confined ($WHO): a terminal as its stdin is refused, and nothing runs"
done
