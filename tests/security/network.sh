#!/bin/bash
# Escape attempts against the closed network and the kernel surface: a TCP
# connection to loopback and to an address of the host, a Unix socket in a
# granted directory, io_uring; and what allowUnixSockets grants: the named
# sockets and nothing else.  TAP.  The listeners and clients are
# python3, which the read-only runtime (/usr) carries in.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=21
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

# A TCP listener on every address; its port goes to $1.
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
# An address of this host other than loopback, if it has one.
HOSTADDR=$(python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("192.0.2.1", 9)); print(s.getsockname()[0])' 2>/dev/null)

connect_tcp() {
  echo "python3 -c 'import socket; socket.create_connection((\"$1\", $PORT), 2)'"
}

for who in $ids; do
  sec_become "$who"
  attempt "a TCP connection to loopback" "$(connect_tcp 127.0.0.1)"
  if [ -n "$HOSTADDR" ] && [ "$HOSTADDR" != 127.0.0.1 ]; then
    attempt "a TCP connection to the host's address" "$(connect_tcp "$HOSTADDR")"
  else
    skip "control: a TCP connection to the host's address" "no address"
    skip "confined: a TCP connection to the host's address" "no address"
  fi

  # A host Unix socket inside the granted workspace itself.
  rm -f "$OUT/unix-ready"
  cat >"$OUT/unix-listener.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(16)
open(sys.argv[2], "w").write("1")
while True:
    c, _ = s.accept()
    c.close()
PY
  (sec_exec python3 "$OUT/unix-listener.py" "$WS/agent.sock" \
    "$OUT/unix-ready") &
  LISTENERS+=($!)
  disown $!
  for _ in $(seq 100); do [ -s "$OUT/unix-ready" ] && break; sleep 0.05; done
  attempt "connecting to a host Unix socket in the workspace" \
    "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"agent.sock\")'"
  # allowUnixSockets: a host socket outside the workspace, in a directory
  # of the identity's own, and a second one beside it.
  mkdir -p "$OUT/sockets"
  [ "$who" = nobody ] && chown 65534:65534 "$OUT/sockets"
  for name in granted other; do
    rm -f "$OUT/unix-ready"
    (sec_exec python3 "$OUT/unix-listener.py" "$OUT/sockets/$name.sock" \
      "$OUT/unix-ready") &
    LISTENERS+=($!)
    disown $!
    for _ in $(seq 100); do [ -s "$OUT/unix-ready" ] && break; sleep 0.05; done
  done
  reach="python3 -c 'import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p)
        print(\"reached\")
    except OSError as e:
        print(e.errno)'"
  attempt "connecting to a host Unix socket outside the workspace" \
    "$reach $OUT/sockets/granted.sock | grep -qx reached"
  confined "$reach $OUT/sockets/granted.sock" \
    --allow-socket "$OUT/sockets/granted.sock"
  is "$cout" reached \
    "confined ($WHO): a socket allowUnixSockets names is reached"
  # Named: only that one; its neighbour is not even there (ENOENT), the
  # unnamed socket in the workspace is covered (EACCES).
  confined "$reach $OUT/sockets/other.sock $OUT/sockets/granted.sock agent.sock" \
    --allow-socket "$OUT/sockets/other.sock"
  is "${cout%%$'\n'*}" reached \
    "control ($WHO): with another socket granted, that one is reached"
  is "${cout#*$'\n'}" $'2\n13' \
    "confined ($WHO): with another socket granted, neither the unnamed one beside it nor the workspace's is reached"
  confined "$reach agent.sock" --allow-socket "$WS/agent.sock"
  is "$cout" reached \
    "confined ($WHO): a granted socket inside the workspace is reached"
  # A name that is not a socket refuses the launch, saying so.
  ln -sf "$OUT/sockets/granted.sock" "$OUT/link.sock"
  confined "echo ran" --allow-socket "$OUT/link.sock"
  is "$crc:$cerr" \
    "125:sandbox_run: sandbox.network.allowUnixSockets: '$OUT/link.sock' is not a Unix socket" \
    "confined ($WHO): a symlink named as a socket refuses the launch"
  # A name the identity cannot open (below a directory only root may
  # enter) refuses the launch with the reason; root can open any.
  if [ "$who" = nobody ]; then
    mkdir -p "$TEST_TMP/private" && chmod 700 "$TEST_TMP/private"
    confined "echo ran" --allow-socket "$TEST_TMP/private/x.sock"
    is "$crc:$cerr" \
      "125:sandbox_run: sandbox.network.allowUnixSockets: '$TEST_TMP/private/x.sock': Permission denied" \
      "confined ($WHO): a socket path that cannot be opened refuses the launch"
  else
    skip "confined ($WHO): a socket path that cannot be opened refuses the launch" \
      "root can open any path"
  fi
  many=()
  for i in $(seq 65); do many+=(--allow-socket "$OUT/sockets/s$i.sock"); done
  confined "echo ran" "${many[@]}"
  is "$crc:$cerr" \
    "125:sandbox_run: sandbox.network.allowUnixSockets: more than 64 sockets" \
    "confined ($WHO): more than 64 granted sockets refuse the command"
  confined "python3 -c 'import socket
a, b = socket.socketpair()
s = socket.socket(socket.AF_UNIX)
s.bind(\"/tmp/own.sock\")
s.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect(\"/tmp/own.sock\")
print(\"own\")'" --allow-socket "$OUT/sockets/granted.sock"
  is "$cout" own \
    "confined ($WHO): with a grant, the command's own sockets work"

  confined "python3 -c 'import socket
try:
    socket.socket(socket.AF_UNIX)
except OSError as e:
    print(e.errno)'"
  is "$cout" 13 "confined ($WHO): socket(AF_UNIX) is refused with EACCES"
  confined "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"
  is "$cout" "b'x'" "confined ($WHO): socketpair still works"

  # io_uring_setup(2): a second system-call path.  The control needs a
  # kernel that allows it at all.
  uring="python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
sys.exit(0 if libc.syscall(425, 4, params) >= 0 else 1)'"
  if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] \
     && [ "$(uname -m)" = x86_64 ]; then
    attempt "setting up an io_uring" "$uring"
  else
    skip "control: setting up an io_uring" "io_uring disabled or not x86_64"
    skip "confined: setting up an io_uring" "io_uring disabled or not x86_64"
  fi
  confined "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"
  is "$cout" lo "confined ($WHO): the only interface is lo"
done
