#!/bin/bash
# Escape attempts against the broker, PID 1 of the sandbox and the keeper
# of the command's process scope, from the workload it supervises (issue
# 11, finding 2).  The broker holds the host's trust: its end of the status
# channel (fd 3, a SOCK_SEQPACKET socket of struct broker_msg records,
# broker/status.h) is what the host believes about the command's ending,
# and its stderr (fd 2, a pipe) is what the host quotes as the launcher's
# refusal.  After setup it runs as the workload's uid with no capabilities;
# while it stays dumpable, the workload reaches it with ptrace, /proc/1/*,
# pidfd_getfd and process_vm_readv.  Each attempt has its positive control:
# the same technique on a target the workload legitimately owns, its own
# child inside the sandbox, which must keep working (strace and gdb of
# one's own children).  Then the three consequences, through the real
# crucible run: a forged DONE, a forged refusal, and a broker kept alive
# past kill -9 of crucible.  As root and as uid 65534.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/publish-lib.sh"

PER_IDENTITY=31
sec_begin "$PER_IDENTITY"
# The attacker speaks x86_64: its syscall numbers, its registers, the
# two bytes of `syscall`.
why=
command -v python3 >/dev/null 2>&1 || why="no python3"
[ "$(uname -m)" = x86_64 ] || why="the attacks are written for x86_64, not $(uname -m)"
if [ -n "$why" ]; then
  for _ in $(seq $(($(wc -w <<<"$ids") * PER_IDENTITY))); do
    skip "attempt against the broker" "$why" bwrap
  done
  exit 0
fi

# Every process these tests start carries TAG (or is the sandbox that runs
# a command line holding it): what is left at the end is killed by it.
TAG=$$
cleanup_broker() {
  pkill -KILL -f "600[78]\\.$TAG" 2>/dev/null || true
  rm -rf "$TEST_TMP"
}
trap cleanup_broker EXIT

# The attacker, who has read broker/broker.c and broker/status.h.
REACH="$TEST_TMP/reach.py"
cat >"$REACH" <<'PY'
# reach.py TECHNIQUE 1|child: try TECHNIQUE on PID 1 (the broker) or on a
# `sleep` child of its own; reach.py forge-done | fake-refusal |
# clear-pdeathsig SECONDS: the three consequences of finding 2.
import ctypes, os, signal, struct, subprocess, sys, time

# Exit codes: 0 the technique worked, 10 it was refused, 3 the script
# itself failed (a broken attack must not read as a refusal).
WORKED, REFUSED, BROKEN = 0, 10, 3
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                        ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long
PTRACE_PEEKTEXT, PTRACE_CONT, PTRACE_SINGLESTEP = 1, 7, 9
PTRACE_GETREGS, PTRACE_SETREGS, PTRACE_ATTACH, PTRACE_DETACH = 12, 13, 16, 17
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
NR_PRCTL, NR_PVREADV, NR_PIDFD_OPEN, NR_PIDFD_GETFD = 157, 310, 434, 438
PR_SET_PDEATHSIG = 1
WALL = 0x40000000
MAGIC = 0x43525342
EXITED, DONE, FAILED, STAGE_SETUP = 2, 3, 4, 1
RESTARTS = (-512, -513, -514, -516)  # ERESTARTSYS ... ERESTART_RESTARTBLOCK


class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax "
        "rip cs eflags rsp ss fs_base gs_base ds es fs gs").split()]


def fail(what):
    e = ctypes.get_errno()
    raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def pt(req, pid, addr=0, data=0):
    ctypes.set_errno(0)
    r = libc.ptrace(req, pid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if r == -1 and ctypes.get_errno() != 0:
        fail("ptrace(%d, %d)" % (req, pid))
    return r


def wait_stop(pid, seconds=3.0):
    end = time.time() + seconds
    while time.time() < end:
        p, status = os.waitpid(pid, os.WNOHANG | WALL)
        if p == pid:
            if os.WIFSTOPPED(status):
                return os.WSTOPSIG(status)
            raise RuntimeError("tracee %d ended: status %#x" % (pid, status))
        time.sleep(0.01)
    raise RuntimeError("tracee %d did not stop within %.0f s" % (pid, seconds))


def state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def first_readable(pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            span, perms = line.split()[:2]
            if perms.startswith("r"):
                return int(span.split("-")[0], 16)
    raise RuntimeError("no readable mapping")


def stolen_fd(pid):  # PID 1's status channel; fd 2 of a child
    return 3 if pid == 1 else 2


def t_attach(pid):
    pt(PTRACE_ATTACH, pid)
    wait_stop(pid)
    pt(PTRACE_DETACH, pid)


def t_seize(pid):
    pt(PTRACE_SEIZE, pid)
    pt(PTRACE_INTERRUPT, pid)
    wait_stop(pid)
    pt(PTRACE_DETACH, pid)


def t_fd(pid):
    names = os.listdir("/proc/%d/fd" % pid)
    fd = os.open("/proc/%d/fd/2" % pid, os.O_WRONLY)
    os.close(fd)
    print("fds of %d: %s" % (pid, " ".join(sorted(names))))


def t_mem(pid):
    # The open is where the kernel checks (mm_access): an open that works
    # is the breach, whatever can be read through it.
    with open("/proc/%d/mem" % pid, "rb", 0) as f:
        try:
            addr = first_readable(pid)
        except OSError as e:
            print("/proc/%d/mem opened; its maps refused (%s)" % (pid, e))
            return
        f.seek(addr)
        if len(f.read(16)) != 16:
            raise RuntimeError("short read")


def t_environ(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        print("environ of %d: %d bytes" % (pid, len(f.read())))


def steal(pid, target_fd):
    pidfd = libc.syscall(NR_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        fail("pidfd_open(%d)" % pid)
    fd = libc.syscall(NR_PIDFD_GETFD, pidfd, target_fd, 0)
    if fd < 0:
        fail("pidfd_getfd(%d, %d)" % (pid, target_fd))
    os.close(pidfd)
    return fd


def t_getfd(pid):
    os.close(steal(pid, stolen_fd(pid)))


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def t_vmread(pid):
    try:
        addr = first_readable(pid)
    except OSError:
        addr = 0x400000  # maps refused: the read is refused before any page
    buf = ctypes.create_string_buffer(16)
    local, remote = Iovec(ctypes.addressof(buf), 16), Iovec(addr, 16)
    n = libc.syscall(NR_PVREADV, pid, ctypes.byref(local), 1,
                     ctypes.byref(remote), 1, 0)
    if n != 16:
        fail("process_vm_readv(%d)" % pid)


def signalled(pid, sig):
    """Send sig; whether it took effect (stopped, or ended) on pid."""
    os.kill(pid, sig)
    for _ in range(50):
        time.sleep(0.02)
        if pid != 1:
            p, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
            if p == pid:
                return True
        elif state(1) in "TtZX":
            return True
    return False


def t_signal(sig):
    def run(pid):
        if not signalled(pid, sig):
            raise OSError(0, "signal %d had no effect on %d (state %s)"
                          % (sig, pid, state(pid)))
        if pid != 1 and sig == signal.SIGSTOP:
            os.kill(pid, signal.SIGKILL)
    return run


def syscall_at(pid, regs):
    """The address of the syscall instruction the tracee just left, or None."""
    word = pt(PTRACE_PEEKTEXT, pid, regs.rip - 2)
    return regs.rip - 2 if word & 0xffff == 0x050f else None


def inject(pid, nr, *args):
    """Run syscall nr(args) in the stopped tracee; leave its registers as
    they were, with an interrupted syscall set to be issued again."""
    saved = Regs()
    for _ in range(100):
        pt(PTRACE_GETREGS, pid, 0, ctypes.addressof(saved))
        at = syscall_at(pid, saved)
        if at is not None:
            break
        pt(PTRACE_CONT, pid)
        time.sleep(0.02)
        pt(PTRACE_INTERRUPT, pid)
        wait_stop(pid)
    else:
        raise RuntimeError("tracee %d never stopped at a syscall" % pid)
    regs = Regs.from_buffer_copy(saved)
    regs.rip, regs.rax, regs.orig_rax = at, nr, (1 << 64) - 1
    for name, value in zip(("rdi", "rsi", "rdx", "r10", "r8", "r9"),
                           args + (0,) * 6):
        setattr(regs, name, value)
    pt(PTRACE_SETREGS, pid, 0, ctypes.addressof(regs))
    pt(PTRACE_SINGLESTEP, pid)
    wait_stop(pid)
    pt(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
    result = ctypes.c_longlong(regs.rax).value
    back = Regs.from_buffer_copy(saved)
    if saved.orig_rax < 1 << 63 and ctypes.c_longlong(saved.rax).value in RESTARTS:
        back.rip, back.rax, back.orig_rax = at, saved.orig_rax, (1 << 64) - 1
    pt(PTRACE_SETREGS, pid, 0, ctypes.addressof(back))
    return result


def seize_and_clear(pid):
    pt(PTRACE_SEIZE, pid)
    pt(PTRACE_INTERRUPT, pid)
    wait_stop(pid)
    r = inject(pid, NR_PRCTL, PR_SET_PDEATHSIG, 0)
    if r != 0:
        raise RuntimeError("injected prctl returned %d" % r)


def t_inject(pid):
    seize_and_clear(pid)
    pt(PTRACE_DETACH, pid)
    time.sleep(0.2)
    if state(pid) in "TtZX":
        raise RuntimeError("%d did not come back (state %s)" % (pid, state(pid)))


def record(kind, value=0, stage=0):
    return struct.pack("<IIiI", MAGIC, kind, value, stage)


def forge_done():
    """EXITED(0) and DONE on the broker's own end of the status channel."""
    fd = steal(1, 3)
    os.write(fd, record(EXITED, 0))
    os.write(fd, record(DONE))
    print("forged EXITED(0) and DONE", file=sys.stderr)


def fake_refusal():
    """A launcher's refusal in the broker's stderr, then FAILED(setup)."""
    err = os.open("/proc/1/fd/2", os.O_WRONLY)
    os.write(err, b"bwrap: Creating new namespace failed: forged by the workload\n")
    fd = steal(1, 3)
    os.write(fd, record(FAILED, 1, STAGE_SETUP))
    print("forged a refusal", file=sys.stderr)


def clear_pdeathsig(hold):
    """Clear PID 1's parent-death signal and hold it stopped for hold s."""
    seize_and_clear(1)
    print("held", file=sys.stderr, flush=True)
    time.sleep(float(hold))
    pt(PTRACE_DETACH, 1)


TECHNIQUES = {"attach": t_attach, "seize": t_seize, "inject": t_inject,
              "fd": t_fd, "mem": t_mem, "environ": t_environ,
              "getfd": t_getfd, "vmread": t_vmread,
              "sigstop": t_signal(signal.SIGSTOP),
              "sigterm": t_signal(signal.SIGTERM),
              "sigkill": t_signal(signal.SIGKILL)}


def main(argv):
    if argv[0] == "forge-done":
        return forge_done()
    if argv[0] == "fake-refusal":
        return fake_refusal()
    if argv[0] == "clear-pdeathsig":
        return clear_pdeathsig(argv[1])
    technique = TECHNIQUES[argv[0]]
    if argv[1] == "1":
        return technique(1)
    # The workload's own child, a target it legitimately owns.
    child = subprocess.Popen(["sleep", "30"])
    time.sleep(0.1)
    try:
        technique(child.pid)
    finally:
        try:
            child.kill()
            child.wait(1)
        except Exception:
            pass


try:
    main(sys.argv[1:])
    print("worked: %s" % " ".join(sys.argv[1:]))
    sys.exit(WORKED)
except OSError as e:
    print("refused: %s: %s" % (" ".join(sys.argv[1:]), e))
    sys.exit(REFUSED)
except Exception as e:
    print("broken: %s: %r" % (" ".join(sys.argv[1:]), e))
    sys.exit(BROKEN)
PY
chmod 644 "$REACH"

# Whether the confined run ran the workload (its first line is "ran") and
# was not a launch that failed (125).
ran_inside() { [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -ne 125 ]; }

# inside_exits STATUS DESCRIPTION SNIPPET: SNIPPET, confined, ran and
# ended with STATUS.
inside_exits() {
  confined "echo ran; $3"
  if ran_inside && [ "$crc" -eq "$1" ]; then
    ok 0 "$2"
  else
    ok 1 "$2"
    diag "status $crc" "output: $cout" "helper: $cerr"
  fi
}

# reach NAME TECHNIQUE: reach.py TECHNIQUE (exit 0 when it worked, 10 when
# refused, 3 when the attack itself broke).  On the workload's own child
# it must work: that is the control, and it pins that strace- and
# gdb-style tracing of one's own children works inside.  On PID 1 it must
# be refused, and the command must then still come to its own end: the
# broker relays the script's 10 as the status.
reach() {
  local name=$1 technique=$2
  inside_exits 0 "control ($WHO): inside, $name of the workload's own child works" \
    "python3 ./reach.py $technique child"
  inside_exits 10 "confined ($WHO): $name of the broker (PID 1) is refused" \
    "python3 ./reach.py $technique 1"
}

# The broker's process and descriptors, every way the workload could
# reach them: ptrace (PTRACE_ATTACH; PTRACE_SEIZE with PTRACE_INTERRUPT;
# syscall injection, the step finding 2(c) needs), /proc/1/fd (listing it
# and opening fd 2, the pipe the host quotes as a refusal), /proc/1/mem,
# /proc/1/environ, pidfd_getfd (pidfd_open(1)) of fd 3, the status
# channel, process_vm_readv.  Then signals: as PID 1 of its namespace the
# broker has no handler the kernel honours for a sender inside, and reads
# its stop signals from a signalfd only from outside (broker_read_signals):
# SIGSTOP must not stop it, SIGTERM and SIGKILL must not end it.  The
# controls stop, end and kill the workload's own child.  strace is the
# tracer a person uses: of its own children it works, of PID 1 not.
check_reach() {
  reach "PTRACE_ATTACH" attach
  reach "PTRACE_SEIZE and PTRACE_INTERRUPT" seize
  reach "a syscall injected through ptrace (prctl PR_SET_PDEATHSIG 0)" inject
  reach "opening /proc/PID/fd and /proc/PID/fd/2" fd
  reach "reading /proc/PID/mem" mem
  reach "reading /proc/PID/environ" environ
  reach "pidfd_getfd of pidfd_open(PID)" getfd
  reach "process_vm_readv" vmread
  reach "SIGSTOP (stopping it)" sigstop
  reach "SIGTERM (ending it)" sigterm
  reach "SIGKILL (ending it)" sigkill
  if [ -x /usr/bin/strace ]; then
    inside_exits 0 "control ($WHO): inside, strace -f of the workload's own command works" \
      "strace -f -o /dev/null sh -c 'sleep 0.1 & wait'"
    inside_exits 10 "confined ($WHO): strace -p 1 (the broker) is refused" \
      "if timeout 3 strace -e trace=none -p 1 2>&1 | grep -q attached; then exit 0; else exit 10; fi"
  else
    skip "control ($WHO): strace of the workload's own command" "no /usr/bin/strace"
    skip "confined ($WHO): strace -p 1" "no /usr/bin/strace"
  fi
}

# crun_in LINE: crucible run -- LINE in WS as the identity, confined by the
# home configuration, within 60 s; $out, $err, $rc.
crun_in() {
  out=$(cd "$WS" && timeout -s KILL 60 "${PUB_AS[@]}" "$CRUCIBLE" run -- "$1" \
    2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

# published FILE...: the contents of each FILE in the workspace, one line
# each, "-" for a file that is not there.
published() {
  local f
  for f in "$@"; do
    if [ -f "$WS/$f" ]; then cat "$WS/$f"; else echo -; fi
  done | tr '\n' ' '
}

# Finding 2(a).  The workload takes the broker's end of the status channel
# (pidfd_getfd of PID 1's fd 3) and sends EXITED(0) and DONE on it while
# its shell goes on: it sleeps 1 s, writes late and exits 7.  The host
# believed the records, reported exit 0 and published early at once, while
# the shell was still to write; then disposing of the session ended the
# shell, so late never existed.  The host must report the shell's own 7,
# and publish only once nothing of the command runs: late is published.
# The control is the same command without the forgery.
check_forged_done() {
  local line='echo early >early; sleep 1; echo late >late; exit 7'
  crun_in "$line"
  is "$rc $(published early late)" "7 early late " \
    "control ($WHO): crucible run reports exit 7 and publishes early and late"
  rm -f "$WS/early" "$WS/late"
  crun_in "echo early >early; python3 ./reach.py forge-done; sleep 1; echo late >late; exit 7"
  is "$rc|${out##*$'\n'}" "7|[exit status 7]" \
    "confined ($WHO): a forged EXITED(0) and DONE do not replace the shell's status 7"
  diag "output: $out" "stderr: $err"
  is "$(published early late)" "early late " \
    "confined ($WHO): nothing is published while the shell still runs (late, written after the forgery, is published)"
  rm -f "$WS/early" "$WS/late"
}

# Finding 2(b).  The workload prints, writes a launcher's refusal
# ("bwrap: ...") into the broker's stderr pipe through /proc/1/fd/2, sends
# FAILED(setup) on the stolen channel, then prints again and exits 0.  The
# host quoted the pipe and said "[refused: setting up the command:
# \"bwrap: ...\"; nothing was run]" (status 125) of a command that ran.
# The result must not say "nothing was run", and must carry what the
# command printed, to its end.
check_fake_refusal() {
  crun_in "echo printed-before; python3 ./reach.py fake-refusal; echo printed-after"
  [[ "$out" != *"nothing was run"* ]] && [ "$rc" -ne 125 ]
  ok $? "confined ($WHO): a refusal forged from inside is not reported as 'nothing was run'"
  [[ "$out" == *printed-before*printed-after* ]] && [ "$rc" -eq 0 ]
  ok $? "confined ($WHO): the command that ran is reported with its output and its status 0"
  diag "status $rc" "output: $out" "stderr: $err"
}

# start_bg LINE STAMP: crucible run -- LINE in the background as the
# identity; $cpid is crucible itself (every step of the prefix execs), and
# $spid the workload's `sleep STAMP` once it runs (empty when it never
# did within 10 s).
start_bg() {
  (cd "$WS" && exec "${PUB_AS[@]}" "$CRUCIBLE" run -- "$1" \
    >"$TEST_TMP/bg.out" 2>&1) &
  cpid=$!
  spid=
  for _ in $(seq 200); do
    spid=$(pgrep -f "^sleep $2\$") && break
    sleep 0.05
  done
}

# gone_after_kill PATTERN: kill -9 crucible ($cpid); whether no process
# matching PATTERN (on the host) is left 5 s later.  $left lists them.
gone_after_kill() {
  kill -KILL "$cpid" 2>/dev/null
  wait "$cpid" 2>/dev/null
  sleep 5
  left=$(pgrep -af "$1")
  [ -z "$left" ]
}

# The spec's promise, without an attack: kill -9 of crucible during a
# confined `sleep` ends the whole workload (bwrap --die-with-parent, the
# broker's parent-death signal, and the broker ending the scope when the
# channel closes).  Nothing of it may exist 5 s later.
check_kill_plain() {
  local stamp="6008.$TAG"
  start_bg "sleep $stamp" "$stamp"
  if [ -z "$spid" ]; then
    ok 1 "confined ($WHO): kill -9 of crucible leaves nothing of a confined sleep 5 s later"
    diag "the confined sleep never ran" "$(cat "$TEST_TMP/bg.out")"
    return
  fi
  gone_after_kill "6008\\.$TAG"
  ok $? "confined ($WHO): kill -9 of crucible leaves nothing of a confined sleep 5 s later"
  [ -z "$left" ] || diag "left: $left"
  pkill -KILL -f "6008\\.$TAG" || true
}

# Finding 2(c).  The workload seizes PID 1, which sits in poll() (so rip-2
# is a `syscall` instruction on x86_64), injects prctl(PR_SET_PDEATHSIG,
# 0) there, restores the registers and holds the broker in its ptrace
# stop, next to a `sleep` named by a unique argument.  Then kill -9 of
# crucible: bwrap dies with its parent, but the broker no longer dies
# with bwrap, cannot see the channel close while it is stopped, and lives
# on with the shell and the sleep, reparented to the host's init.  No
# process of the scope (all of them carry the stamp in their arguments)
# may exist 5 s later.
check_pdeathsig() {
  local stamp="6007.$TAG" bpid shpid tracer=0
  start_bg "python3 ./reach.py clear-pdeathsig 30 $stamp & sleep $stamp; wait" \
    "$stamp"
  if [ -z "$spid" ]; then
    ok 1 "confined ($WHO): kill -9 of crucible leaves nothing of the scope 5 s later, whatever its workload did to the broker"
    diag "the confined sleep never ran" "$(cat "$TEST_TMP/bg.out")"
    return
  fi
  # The broker is the sleep's grandparent: the shell runs under it.
  shpid=$(ps -o ppid= -p "$spid" | tr -d ' ')
  bpid=$(ps -o ppid= -p "$shpid" | tr -d ' ')
  # Until the attack has the broker stopped, or the attacker gave up.
  for _ in $(seq 100); do
    tracer=$(awk '/^TracerPid:/ {print $2}' "/proc/$bpid/status" 2>/dev/null)
    [ "${tracer:-0}" != 0 ] && break
    pgrep -f "reach.py clear-pdeathsig 30 $stamp" >/dev/null || break
    sleep 0.05
  done
  diag "broker $bpid: TracerPid ${tracer:-gone}, state $(awk '/^State:/ {print $2}' "/proc/$bpid/status" 2>/dev/null)"
  gone_after_kill "6007\\.$TAG"
  ok $? "confined ($WHO): kill -9 of crucible leaves nothing of the scope 5 s later, whatever its workload did to the broker"
  [ -z "$left" ] || diag "left: $left"
  pkill -KILL -f "6007\\.$TAG" || true
}

pub_setup
for who in $ids; do
  sec_become "$who"
  cp "$REACH" "$WS/reach.py"
  check_reach
  pub_become "$who"
  cp "$REACH" "$WS/reach.py"
  pub_owner
  check_forged_done
  check_fake_refusal
  check_kill_plain
  check_pdeathsig
done
