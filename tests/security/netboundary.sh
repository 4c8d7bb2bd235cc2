#!/bin/bash
# The boundary of a confined command's network when its policy names
# domains (issue 13): the one way out is the broker's relay at port 3128
# on the command's own loopback, each connection arriving at the host as
# a descriptor (tests/helpers/sandbox_run --domain stands in for the
# proxy and answers "crucible-host NNN"); a direct connection to any
# other address, DNS, and the net channel itself stay out of reach.  The
# view's /etc/hosts resolves localhost.  bind(2) and listen(2) are refused
# unless allowLocalBinding.  Each escape has its positive control, run as
# root and as uid 65534.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=18
ids=$(sec_identities)
plan $(($(wc -w <<<"$ids") * PER_IDENTITY + 1))
sec_unprivileged_check
if ! sec_usable || ! command -v python3 >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || SEC_REASON="no python3"
  sec_skip_all $(($(wc -w <<<"$ids") * PER_IDENTITY))
  exit 0
fi

LISTENERS=()
cleanup_net() {
  local p
  for p in "${LISTENERS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TEST_TMP"
}
trap cleanup_net EXIT

# A TCP listener on every address of the host, for the direct attempts.
python3 - "$TEST_TMP/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    c.close()
PY
LISTENERS+=($!)
disown $!
for _ in $(seq 100); do [ -s "$TEST_TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$TEST_TMP/port")
HOSTADDR=$(python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("192.0.2.1", 9)); print(s.getsockname()[0])' 2>/dev/null)

connect_tcp() {
  echo "python3 -c 'import socket; socket.create_connection((\"$1\", $2), 2)'"
}
# Bind and listen on loopback at a free port: exits 0 when both worked.
LISTEN="python3 -c 'import socket
s = socket.socket()
s.bind((\"127.0.0.1\", 0))
s.listen(1)'"
# The relay: read what the host answers on each of the inside addresses.
RELAY="python3 -c 'import socket
for a in ((\"127.0.0.1\", 3128), (\"::1\", 3128), (\"localhost\", 3128)):
    s = socket.create_connection(a, 5)
    print(s.recv(64).decode().strip())'"
# The descriptors a process of the workload holds, by what they are
# (fds.py, written into each workspace).
FDS_PY='import os
for n in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        print(n, os.readlink("/proc/self/fd/" + n))
    except OSError:
        pass'

for who in $ids; do
  sec_become "$who"
  printf '%s\n' "$FDS_PY" >"$WS/fds.py"

  # /etc/hosts: localhost, and nothing of the host's.
  confined "cat /etc/hosts; getent ahostsv4 localhost | sed -n '1s/ .*//p'; getent ahostsv6 localhost | sed -n '1s/ .*//p'"
  is "$cout" $'127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\n::1' \
    "confined ($WHO): /etc/hosts is localhost alone, and localhost resolves to 127.0.0.1 and ::1"
  confined "getent ahostsv4 localhost | sed -n '1s/ .*//p'; getent ahostsv6 localhost | sed -n '1s/ .*//p'" \
    --domain example.com
  is "$cout" $'127.0.0.1\n::1' \
    "confined ($WHO): with domains too, localhost resolves"

  # Binding and listening: refused by default, with EACCES.
  attempt "binding and listening on loopback" "$LISTEN"
  confined "python3 -c 'import socket
try:
    socket.socket().bind((\"127.0.0.1\", 0))
except OSError as e:
    print(\"bind\", e.errno)
try:
    socket.socket().listen(1)
except OSError as e:
    print(\"listen\", e.errno)'"
  is "$cout" $'bind 13\nlisten 13' \
    "confined ($WHO): bind and listen are refused with EACCES"
  confined "$LISTEN && echo listening" --allow-local-binding
  is "$crc:$cout" "0:listening" \
    "confined ($WHO): with allowLocalBinding, binding and listening on loopback work"
  confined "$LISTEN && echo listening" --allow-local-binding --domain example.com
  is "$crc:$cout" "0:listening" \
    "confined ($WHO): with allowLocalBinding and domains, listening works beside the relay"

  # The relay: each connection to the inside port arrives at the host.
  confined "$RELAY" --domain example.com
  is "$crc:$cout|$(grep connections <<<"$cerr")" \
    $'0:crucible-host 001\ncrucible-host 002\ncrucible-host 003|sandbox_run: connections 3' \
    "confined ($WHO): 127.0.0.1:3128, [::1]:3128 and localhost:3128 each reach the host"
  # Many at once, more than the listen queue holds: the broker waits for
  # room on the channel and loses none.
  confined "python3 -c 'import socket
ss = [socket.create_connection((\"127.0.0.1\", 3128), 10) for i in range(300)]
print(sum(s.recv(64).startswith(b\"crucible-host\") for s in ss))'" --domain example.com
  is "$crc:$cout|$(grep connections <<<"$cerr")" "0:300|sandbox_run: connections 300" \
    "confined ($WHO): 300 connections held open at once all reach the host"
  # Its positive control the other way round: without domains there is
  # no relay, so the same connection is refused.
  confined "$(connect_tcp 127.0.0.1 3128)"
  like "$crc|$cout" '^1\|' \
    "confined ($WHO): without domains nothing listens at 3128"

  # Direct connections: the host's loopback and its address, with domains.
  attempt "a TCP connection to loopback, with domains" \
    "$(connect_tcp 127.0.0.1 "$PORT")" --domain example.com
  if [ -n "$HOSTADDR" ] && [ "$HOSTADDR" != 127.0.0.1 ]; then
    attempt "a TCP connection to the host's address, with domains" \
      "$(connect_tcp "$HOSTADDR" "$PORT")" --domain example.com
  else
    skip "control: a TCP connection to the host's address" "no address"
    skip "confined: a TCP connection to the host's address" "no address"
  fi

  # DNS: no resolver configuration and no server to reach; only the
  # proxy resolves names.  The control: the same lookup machinery does
  # resolve what /etc/hosts holds (above).
  confined "test -e /etc/resolv.conf && echo resolv.conf; getent hosts example.com || echo no-name" \
    --domain example.com
  is "$cout" no-name \
    "confined ($WHO): with domains, no resolv.conf and a name does not resolve inside"

  # The net channel and the listeners are the broker's alone.  The
  # control: the same listing shows a socket the process does hold.
  confined "python3 -c 'import socket; a, b = socket.socketpair(); exec(open(\"fds.py\").read())' | grep -c socket:" \
    --domain example.com
  is "$cout" 2 "control ($WHO): the listing sees the workload's own sockets"
  confined "python3 fds.py | grep -c socket: ; sh -c 'python3 fds.py' | grep -c socket:" \
    --domain example.com
  is "$cout" $'0\n0' \
    "confined ($WHO): with domains, the workload and its children hold no socket of the broker's"
  confined "ls /proc/1/fd/ >/dev/null 2>&1; for f in /proc/1/fd/*; do readlink \$f && echo LEAK; done 2>/dev/null; python3 -c 'import os
try:
    os.open(\"/proc/1/fd/10\", os.O_RDONLY); print(\"LEAK\")
except OSError as e:
    print(\"refused\", e.errno)'" --domain example.com
  is "$cout" "refused 13" \
    "confined ($WHO): the broker's descriptors cannot be read or opened through /proc/1/fd"
done
