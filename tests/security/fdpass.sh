#!/bin/bash
# An attacker's pass over publication with a Unix socket grant
# (sandbox.network.allowUnixSockets): the command passes descriptors of
# files of its overlay view (SCM_RIGHTS) to a peer outside the sandbox,
# listening on the granted socket as another uid (65533, which can write
# neither the workspace nor the state directory), and the peer writes
# through them at the worst moments.  The overlay stays alive while the
# peer holds them, and its writes land in the command's upper directory
# after the command ended, while publication reads it.  crucible run,
# as root and as the unprivileged identity.  TAP.
#
# - Control: while the command runs, the peer's write reaches the file
#   (the command reads it back).
# - Between the scan and the staging (the peer waits until publication
#   links a-big, sorted before, into its stage: the scan is over, and the
#   digest of a sparse 2 GiB file leaves it the time to write):
#   control, a plain file's new bytes are the peer's and are published;
#   a new repository's .git/config judged harmless by the scan and then
#   rewritten to name core.fsmonitor must not reach the workspace, and
#   git run there must not run the program.  It did (sandbox/pubplan.c
#   judged the bytes of the upper, sandbox/publish.c then linked whatever
#   the upper held by then); publication now stages a judged file by a
#   copy and refuses the plan when the copy is not the bytes judged.
# - Between the staging and the apply (the peer writes a file already
#   staged, once zz-big, sorted after it, is linked): the workspace holds
#   the command's bytes or nothing of the command, never the peer's, and
#   the result says which.
# - After the result: the peer's writes through every descriptor it holds
#   change nothing in the workspace, and the next command sees what was
#   published; through crucible mcp, the next call, in the sandbox kept
#   prepared meanwhile, does not see them either.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/publish-lib.sh"

# The system's programs, which every identity (and the sandbox) runs.
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

PER=18
pub_begin "$PER" "descriptors passed out over a granted socket"
if ! command -v python3 >/dev/null 2>&1; then
  for who in $ids; do
    for i in $(seq "$PER"); do skip "fdpass as $who ($i)" "no python3"; done
  done
  exit 0
fi

PEER_UID=65533
[ "$(id -u)" -eq 0 ] || PEER_UID=$(id -u)
SOCKDIR="$TEST_TMP/sock"
SOCK="$SOCKDIR/peer.sock"
mkdir -p "$SOCKDIR"
chmod 755 "$SOCKDIR"
[ "$(id -u)" -eq 0 ] && chown "$PEER_UID:$PEER_UID" "$SOCKDIR"

# The peer: one connection at a time; the first message names what to do
# with the descriptors it carries.  Its log says what it did.
cat >"$TEST_TMP/peer.py" <<'EOF'
import os, socket, sys, time
path, logpath, payload = sys.argv[1], sys.argv[2], sys.argv[3]
log = open(logpath, "a", buffering=1)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
held = []
dirs = []

def linked(fd):
    """Wait (up to 5 minutes) until publication links fd's file into its
    stage: its link count becomes 2."""
    end = time.monotonic() + 300
    while os.fstat(fd).st_nlink < 2:
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True

def evil(size):
    """A git configuration naming the payload, padded to size bytes."""
    text = b"[core]\n\tfsmonitor = " + payload.encode() + b"\n#"
    return text + b"x" * (size - len(text) - 1) + b"\n"

while True:
    c, _ = s.accept()
    msg, fds, _, _ = socket.recv_fds(c, 64, 8)
    mode = msg.decode()
    log.write(f"{mode}: {len(fds)} descriptors\n")
    if mode == "during":
        os.ftruncate(fds[0], 0)
        os.pwrite(fds[0], b"peer-during\n", 0)
        c.sendall(b"ok")
    elif mode in ("scanned", "staged"):
        c.sendall(b"ok")
        c.close()
        # fds[0] is linked into the stage before fds[1] ("scanned": the
        # scan is over, fds[1] not staged yet) or after it ("staged").
        if linked(fds[0]):
            size = os.fstat(fds[1]).st_size
            data = evil(size) if mode == "scanned" else b"PEER" * (size // 4)
            os.pwrite(fds[1], data, 0)
            log.write(f"{mode}: wrote after the link\n")
        else:
            log.write(f"{mode}: never linked\n")
    elif mode in ("peek", "repeek"):
        # Read notes and secret.txt through each directory held (this
        # message's too, which is kept).
        dirs += fds
        fds = []
        seen = []
        for d in dirs:
            for name in ("notes", "secret.txt"):
                try:
                    f = os.open(name, os.O_RDONLY, dir_fd=d)
                    seen.append(name + "=" + os.read(f, 64).decode().strip())
                    os.close(f)
                except OSError as e:
                    seen.append(name + "=errno" + str(e.errno))
        if mode == "repeek":
            for d in dirs:
                os.close(d)
            dirs = []
        c.sendall(" ".join(seen).encode())
    elif mode == "hold":
        held += fds
        fds = []
        c.sendall(b"ok")
    elif mode == "late":
        n = 0
        for fd in held:
            try:
                size = os.fstat(fd).st_size
                os.pwrite(fd, b"LATE" * max(1, size // 4), 0)
                n += 1
            except OSError as e:
                log.write(f"late: {e}\n")
        log.write(f"late: wrote through {n}\n")
        held = []
        c.sendall(b"done %d" % n)
    for fd in fds:
        os.close(fd)
    c.close()
EOF

# Inside: connect to the granted socket, send MODE and the descriptors of
# the files named (opened read-write; a directory read-only), print the
# answer.
SEND="python3 - $SOCK"' "$@" <<'"'PY'"'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
fds = [os.open(f, os.O_RDONLY | os.O_DIRECTORY) if os.path.isdir(f)
       else os.open(f, os.O_RDWR) for f in sys.argv[3:]]
socket.send_fds(s, [sys.argv[2].encode()], fds)
print(s.recv(256).decode())
PY'
# send MODE FILE...: the shell function the commands below call.
SENDFN="send() { $SEND
}"

PEERLOG="$SOCKDIR/peer.log"
if [ "$(id -u)" -eq 0 ]; then
  setpriv --reuid=$PEER_UID --regid=$PEER_UID --clear-groups -- \
    python3 "$TEST_TMP/peer.py" "$SOCK" "$PEERLOG" "$TEST_TMP/payload" &
else
  python3 "$TEST_TMP/peer.py" "$SOCK" "$PEERLOG" "$TEST_TMP/payload" &
fi
peer=$!
trap 'kill $peer 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done

# peer_log_has TEXT: wait (up to 60 s) for the peer to have logged TEXT.
peer_log_has() {
  local i
  for i in $(seq 1200); do
    grep -qF -- "$1" "$PEERLOG" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# late [MODE]: ask the peer, from the host, to write through all it holds
# (or to do MODE with what it holds); its answer.
late() {
  python3 - "$SOCK" "${1:-late}" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
socket.send_fds(s, [sys.argv[2].encode()], [])
print(s.recv(256).decode())
EOF
}

# The crucible mcp server in WS, as the identity.
fp_start() {
  coproc FP {
    cd "$WS" && exec "${PUB_AS[@]}" "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"
  }
  fp_pid=$FP_PID fp_in=${FP[1]} fp_out=${FP[0]}
  fp_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
  fp_recv >/dev/null
  fp_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
fp_send() { printf '%s\n' "$1" >&"$fp_in"; }
fp_recv() {
  local line
  if IFS= read -r -t 120 line <&"$fp_out"; then printf '%s' "$line"; else printf TIMEOUT; fi
}
fp_call() { # fp_call ID COMMAND: its reply
  local args
  args=$(python3 -c 'import json,sys; print(json.dumps({"command":sys.argv[1]}))' "$2")
  fp_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$args}}"
  fp_recv
}

# A server on an abstract Unix socket, and a client trying it N times
# (50 ms apart): "reached" or "errno E".
# (The command line puts them between double quotes: hence the doubled
# backslash, and single quotes only.)
ABSTRACT_SERVE=$(cat <<'EOF'
import socket
s = socket.socket(socket.AF_UNIX)
s.bind(b'\\0crucible-fdpass-left')
s.listen(8)
while True:
    s.accept()[0].close()
EOF
)
ABSTRACT_TRY=$(cat <<'EOF'
import socket, sys, time
for i in range(int(sys.argv[1])):
    try:
        socket.socket(socket.AF_UNIX).connect(b'\\0crucible-fdpass-left')
        print('reached')
        break
    except OSError as e:
        err = e.errno
        time.sleep(0.05)
else:
    print('errno', err)
EOF
)

# A harmless git configuration of 120 bytes at DIR/config; REPO makes DIR
# a new repository's shape too (git's, which the scan judges).
CONF='mkdir -p DIR && { printf "[core]\n\tbare = false\n#"; head -c 97 /dev/zero | tr "\0" y; echo; } >DIR/config'
REPO='mkdir -p DIR/objects DIR/refs/heads && echo "ref: refs/heads/main" >DIR/HEAD && '"$CONF"

for who in $ids; do
  pub_become "$who"
  pub_payload "$who"
  home=$PUB_HOME
  [ "$who" != root ] && [ "$who" != self ] && home=$PUB_UHOME
  printf '{"sandbox":{"enabled":true,"network":{"allowUnixSockets":["%s"]}},"permissions":{"mode":"fullAccess"}}\n' \
    "$SOCK" >"$home/.crucible/config.json"
  : >"$PEERLOG"

  # Control: while the command runs, the peer writes the file.
  prun run -- "$SENDFN
echo mine >f; send during f >/dev/null; cat f"
  is "$out" "peer-during" "control ($who): while the command runs, the peer's write through the passed descriptor reaches the file" ||
    diag "rc $rc" "$err" "$(cat "$PEERLOG")"

  # Between the scan and the staging: control, a plain file.
  prun run -- "$SENDFN
${CONF//DIR/plain}; truncate -s 2G a-big; send scanned a-big plain/config"
  peer_log_has "scanned: wrote after the link"
  ok $? "control ($who): the peer wrote plain/config once publication had begun staging" ||
    diag "rc $rc" "$out" "$(cat "$PEERLOG")"
  # The peer races the digest of a-big; should it lose (a machine loaded
  # enough that the digest of 2 GiB ends before its write), its write
  # fails the verification instead, and the window is not shown this time.
  if [ ! -e "$WS/plain/config" ] &&
    [ "$(tail -n 1 <<<"$out")" = "[published nothing: publication failed (the workspace does not hold what was published) and the workspace was left as it was]" ]; then
    skip "control ($who): ... and those bytes, not the command's, are what was published" \
      "the peer wrote after plain/config was staged (the verification refused it)"
  else
    grep -q fsmonitor "$WS/plain/config" 2>/dev/null
    ok $? "control ($who): ... and those bytes, not the command's, are what was published" ||
      diag "rc $rc" "$out" "$(cat "$WS/plain/config" 2>&1)"
  fi
  rm -rf "$WS/plain" "$WS/a-big"
  : >"$PEERLOG"

  # The same, on a new repository's configuration, which the scan judged.
  prun run -- "$SENDFN
${REPO//DIR/clone/.git}; truncate -s 2G a-big; send scanned a-big clone/.git/config"
  peer_log_has "scanned: wrote after the link"
  ok $? "($who): the peer wrote clone/.git/config once publication had begun staging" ||
    diag "rc $rc" "$out" "$(cat "$PEERLOG")"
  ok "$(! grep -q fsmonitor "$WS/clone/.git/config" 2>/dev/null && echo 0 || echo 1)" \
    "($who): ... the configuration it rewrote to name core.fsmonitor is not published" ||
    diag "rc $rc" "$out" "$(cat "$WS/clone/.git/config" 2>&1)"
  [ -d "$WS/clone" ] && (cd "$WS/clone" && env HOME="$TEST_TMP" GIT_CONFIG_NOSYSTEM=1 \
    git -c safe.directory='*' status) >/dev/null 2>&1
  ok "$([ ! -e "$RAN" ] && echo 0 || echo 1)" "($who): ... and git run there next runs nothing"
  changed="[published nothing: publication failed (clone/.git/config was changed after the command ended) and the workspace was left as it was]"
  if [ "$(tail -n 1 <<<"$out")" != "$changed" ] && [ -f "$WS/clone/.git/config" ] &&
    ! grep -q fsmonitor "$WS/clone/.git/config"; then
    skip "($who): ... the result says the judged file changed after the command ended" \
      "the peer wrote after the configuration was staged (its own copy was published)"
  else
    is "$(tail -n 1 <<<"$out")" "$changed" \
      "($who): ... the result says the judged file changed after the command ended"
  fi
  rm -rf "$WS/clone" "$WS/a-big"
  : >"$PEERLOG"

  # Between the staging and the apply.
  prun run -- "$SENDFN
echo mine >victim; truncate -s 2G zz-big; send staged zz-big victim"
  peer_log_has "staged: wrote after the link"
  v=$(cat "$WS/victim" 2>/dev/null || echo absent)
  note=$(tail -n 1 <<<"$out")
  case "$v|$note" in
    "mine|"*) res=0 ;; # the peer wrote after the copy: what was published is the command's
    "absent|[published nothing: publication failed (the workspace does not hold what was published) and the workspace was left as it was]") res=0 ;;
    *) res=1 ;;
  esac
  ok "$res" "($who): a write to a staged file between staging and apply is never what the workspace holds (it holds: $v)" ||
    diag "rc $rc" "$out" "$(cat "$PEERLOG")"
  rm -rf "$WS/victim" "$WS/zz-big"

  # After the result: the peer keeps descriptors and writes through them.
  prun run -- "$SENDFN
mkdir -p kept && echo mine2 >kept/two && echo mine3 >three && send hold kept/two three"
  is "$(cat "$WS/kept/two" "$WS/three" 2>&1)" $'mine2\nmine3' \
    "($who): the command that passed its descriptors out is published" || diag "$out" "$err"
  is "$(late)" "done 2" "control ($who): after the result, the peer still writes through both descriptors"
  prun run -- 'cat kept/two three'
  is "$(cat "$WS/kept/two" "$WS/three" 2>&1)|$out" $'mine2\nmine3|mine2\nmine3' \
    "($who): ... which changes nothing in the workspace nor what the next command sees"

  # crucible mcp: the next call runs in the sandbox kept prepared.  The
  # first also leaves a server on an abstract Unix socket, in a new
  # session, which it reaches itself (the control).
  fp_start
  reply=$(fp_call 1 "$SENDFN
echo call1 >k; send hold k
(setsid python3 -c \"$ABSTRACT_SERVE\" </dev/null >/dev/null 2>&1 &)
python3 -c \"$ABSTRACT_TRY\" 400")
  like "$reply" '"text":"ok\\nreached' \
    "control ($who): the first call passes k's descriptor out and reaches the abstract socket it left a server on" ||
    diag "$reply"
  late >/dev/null
  reply=$(fp_call 2 "cat k; python3 -c \"$ABSTRACT_TRY\" 1")
  ok "$([[ $reply == *'"text":"call1\n'* ]] && [ "$(cat "$WS/k" 2>&1)" = call1 ] && echo 0 || echo 1)" \
    "($who): ... the peer's later write reaches neither the workspace nor the next call, in the kept sandbox" ||
    diag "$reply" "$(cat "$WS/k" 2>&1)" "$(cat "$PEERLOG")"
  like "$reply" 'call1\\nerrno 111' "($who): ... which does not reach the server the first call left" ||
    diag "$reply"
  exec {fp_in}>&-
  wait_gone "$fp_pid" 20
  wait "$fp_pid" 2>/dev/null

  # An unreadable pattern's cover is a mount over the projection, in the
  # command's mount namespace; the peer holds a directory of the overlay
  # itself.  The workspace is in a directory the peer cannot enter.
  priv=$(mktemp -d "$TEST_TMP/priv.XXXXXX")
  WS="$priv/ws"
  mkdir "$WS"
  echo notes >"$WS/notes"
  echo SECRET-VALUE >"$WS/secret.txt"
  chmod 644 "$WS/notes" "$WS/secret.txt"
  chmod 755 "$WS"
  chmod 700 "$priv"
  [ "$who" != root ] && [ "$who" != self ] && chown -R "$(stat -c %u:%g "$home")" "$priv"
  printf '{"sandbox":{"enabled":true,"filesystem":{"unreadable":["secret.txt"]},"network":{"allowUnixSockets":["%s"]}},"permissions":{"mode":"fullAccess"}}\n' \
    "$SOCK" >"$home/.crucible/config.json"
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=$PEER_UID --regid=$PEER_UID --clear-groups -- cat "$WS/secret.txt" >/dev/null 2>&1
    ok "$([ $? -ne 0 ] && echo 0 || echo 1)" "control ($who): the peer cannot read the workspace by its path"
  else
    skip "the peer cannot read the workspace by its path" "the peer is the suite's own user"
  fi
  prun run -- "$SENDFN
cat secret.txt 2>/dev/null || echo unreadable; send peek ."
  is "$out" "unreadable
notes=notes secret.txt=errno13" \
    "control ($who): the command cannot read secret.txt, nor can the peer through its directory while it runs" ||
    diag "$err"
  got=$(late repeek)
  is "${got%% *}" "notes=notes" \
    "control ($who): after the command ended, the peer still reads the workspace through that directory"
  # A hole left open (doc/linux-confinement.md, "Unix sockets"): once the
  # command's mount namespace is gone, so are the covers.  Until the relay
  # closes it, the check says so as a skip with the reason (CI counts an
  # expected failure as a failure); once closed, it passes.
  if [ "${got#* }" = "secret.txt=errno13" ]; then
    ok 0 "($who): ... but not secret.txt, which the unreadable pattern covered"
  else
    skip "($who): ... but not secret.txt, which the unreadable pattern covered" \
      "KNOWN OPEN HOLE: the covers are mounts, gone with the namespace, so the peer read it; only keeping descriptors off granted sockets (a relay) closes it"
  fi
  diag "$who: the peer, through the overlay's directory, after the command: $got"
done
