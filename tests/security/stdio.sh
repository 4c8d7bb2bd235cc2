#!/bin/bash
# Descriptor isolation for a workload with standard streams of its own
# (sandbox_command.stdio, as an MCP server is started): its stdin, stdout
# and stderr are the three descriptors it was given, three different
# pipes, and nothing else of the process that started it reaches it.
# Control: the same listing unconfined sees the starter's descriptor 9.
# TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=4
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"
  # A secret open on descriptor 9 of the process that starts the server.
  echo fd-secret >"$OUT/fd-secret"
  chmod 644 "$OUT/fd-secret"
  exec 9<"$OUT/fd-secret"
  attempt "holding a descriptor beyond its three streams" \
    'ls /proc/$$/fd | grep -qvx "[012]"' --stdio </dev/null

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
done
