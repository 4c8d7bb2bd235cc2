#!/bin/bash
# The job runner's standard streams of the command's own (stdio=1:
# sandbox/container/jobproto.h's 'I', 'N' and 'Y'), the runner as a plain
# process, no engine: 2 MiB given as 'I' frames come back through `cat`
# as 'O' whole and in order (the runner writes the input without blocking
# while it relays the output), the command's stderr comes back apart as
# 'Y', 'N' closes its stdin so that it ends, and the ending is its own.
# The control: the same job without stdio=1 gives the command /dev/null
# and refuses the first 'I' frame, so nothing of the input comes back.
. "${CRUCIBLE_SRCDIR:-.}/tests/integration/lib.sh"

RUNNER="$CRUCIBLE_BIN_DIR/../libexec/crucible/crucible-job-runner"
plan 3
if [ ! -x "$RUNNER" ] || ! command -v python3 >/dev/null; then
  for i in 1 2 3; do skip "job runner" "no $RUNNER or python3 (make check builds it)"; done
  exit 0
fi

# drive STDIO LINE: run one job of LINE; prints "O=<bytes of O equal to
# the input: yes/no/count> Y=<stderr> X=<ending>".
drive() {
  local scratch
  scratch=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  chmod 777 "$scratch"
  python3 - "$RUNNER" "$scratch" "$1" "$2" <<'PY'
import os, struct, subprocess, sys, threading
runner, ws, stdio = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
line = sys.argv[4].encode()
p = subprocess.Popen([runner, "--workspace", ws], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
def frame(t, data=b""):
    return t.encode() + struct.pack(">I", len(data)) + data
data = bytes((i * 7 + (i >> 10)) & 0xff for i in range(2 << 20))
got = {"O": bytearray(), "Y": bytearray(), "X": b""}
def read():
    f = p.stdout
    while True:
        h = f.read(5)
        if len(h) < 5:
            return
        t, n = chr(h[0]), struct.unpack(">I", h[1:])[0]
        body = f.read(n)
        if t in ("O", "Y"):
            got[t] += body
        elif t == "X":
            got["X"] = body
reader = threading.Thread(target=read)
reader.start()
limits = b"deadline_ms=60000\n" + (b"stdio=1\n" if stdio else b"")
job = frame("V", b"crucible-job 1") + frame("L", limits) + \
    frame("C", line) + frame("W", b"\0" * 1024) + frame("G")
try:
    p.stdin.write(job)
    for i in range(0, len(data), 65536):
        p.stdin.write(frame("I", data[i:i + 65536]))
    p.stdin.write(frame("N"))
    p.stdin.flush()
except BrokenPipeError:
    pass
reader.join(60)
try:
    p.stdin.close()
except BrokenPipeError:
    pass
p.wait(10)
o = "whole" if bytes(got["O"]) == data else "%d bytes" % len(got["O"])
print("O=%s Y=%s X=%s" % (o, got["Y"].decode().strip(), got["X"].decode()))
PY
}

out=$(drive 1 'cat; echo to-err >&2; exit 3')
like "$out" '^O=whole ' "stdio=1: 2 MiB given as 'I' frames came back through cat as 'O', whole and in order"
like "$out" ' Y=to-err X=exit=3$' "stdio=1: the stderr came back apart as 'Y'; 'N' closed the stdin and the ending is the command's"
# The control's command outlives the frames that follow G: without the
# sleep, cat's /dev/null ends it at once, and under a slow build (ASan) it
# could print and exit before the runner reads the first 'I' (CI, 2026-12-03:
# "O=7 bytes Y= X=exit=3"), which would be its own ending, not the refusal.
out=$(drive 0 'cat; sleep 20; echo to-err >&2; exit 3')
like "$out" '^O=0 bytes Y= X=$' "the control: without stdio=1 the command reads /dev/null and the first 'I' ends the job"
