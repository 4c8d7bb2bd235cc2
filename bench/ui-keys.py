#!/usr/bin/env python3
"""Key-to-screen latency of the full-screen session (bench/ui runs this).

    ui-keys.py CRUCIBLE HOME CWD ROUNDS KEYS FLOOD_S

Starts crucible on a pseudo-terminal of 100 x 30 and reads everything it
draws.  A key is one capital letter the screen shows nowhere else (the
flood is `y`, the rest of the screen has no Q, X, Z, J, V or W); its
latency is the time from writing it to the terminal to reading it back in
what crucible draws.  ROUNDS rounds, each of KEYS keys at typing pace
with `yes` flooding /dev/null beside the idle session (quiet) and KEYS
keys while the session shows `timeout FLOOD_S yes` (flood; the command
ends with an exit status of the round's own), the two in turn and the
first of them alternating from round to round, so that a change in the
machine's load falls on both.  No terminal multiplexer is
in the way, so the figure is crucible's own: reading the key, drawing,
writing the frame, and the machine's scheduling: unlike bench/ui's CPU
part, nothing is pinned to a CPU, since a key waiting behind another
engineer's work on a pinned CPU showed more of that than of crucible.
BENCH_UI_RAW=1 prints every latency to standard error.

Prints one line of key=value pairs, microseconds: the median and the
quartiles of every flood key (flood, flood_q1, flood_q3) and of every
quiet key (quiet, quiet_q1, quiet_q3), and the smallest, the quartiles
and the largest of the rounds' ratios (each round's flood median over
its quiet median, in hundredths: ratio_min, ratio_q1, ratio_q3,
ratio_max).
"""

import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import time

import fcntl
import termios

LETTERS = b"QXZJVW"


class Session:
    """crucible on a pseudo-terminal, its output read as it comes."""

    def __init__(self, crucible, home, cwd):
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
            os.chdir(cwd)
            env = dict(os.environ, HOME=home, TERM="screen-256color",
                       LANG="C.UTF-8", LC_ALL="C.UTF-8",
                       CRUCIBLE_HISTORY="/dev/null")
            os.execve(crucible, [crucible], env)
        self.pid, self.fd = pid, fd
        self.seen = b""

    def _read(self):
        data = os.read(self.fd, 65536)
        if not data:
            raise SystemExit("ui-keys: crucible closed its terminal")
        return data

    def read_until(self, want, timeout=30.0):
        """Read until want appears in what arrives from now on; the time
        it was read, or an exception when it never came."""
        self.seen = b""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit("ui-keys: the screen never showed %r" % want)
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            data = self._read()
            now = time.monotonic()
            # Keep a tail long enough for the pattern to span two reads.
            self.seen = self.seen[-256:] + data
            if want in self.seen:
                return now

    def drain(self, seconds):
        """Read (and drop) what arrives for a while."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.01)
            if ready:
                self._read()

    def write(self, data):
        os.write(self.fd, data)

    def close(self):
        os.close(self.fd)
        try:
            os.kill(self.pid, signal.SIGHUP)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)


def latencies(s, keys):
    """Type keys letters at typing pace; each one's latency in us."""
    out = []
    for i in range(keys):
        s.drain(0.05)
        k = LETTERS[i % len(LETTERS):i % len(LETTERS) + 1]
        t0 = time.monotonic()
        s.write(k)
        t1 = s.read_until(k)
        out.append(int((t1 - t0) * 1e6))
    s.write(b"\x15")  # Ctrl+U: the box is empty again
    return out


def quiet_round(s, keys):
    """keys latencies with yes flooding /dev/null beside the idle session."""
    # yes itself, not under timeout: killing timeout would leave it.
    flood = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
    try:
        return latencies(s, keys)
    finally:
        flood.kill()
        flood.wait()
        s.drain(0.2)


def flood_round(s, keys, flood_s, status):
    """keys latencies while the session shows timeout FLOOD_S yes.  Every
    key must be in before the flood can have ended, or some of the figures
    would be quiet ones: timeout starts after the line is sent, so its
    flood lasts at least until FLOOD_S seconds after that."""
    sent = time.monotonic()
    # Each round's own exit status, so that an earlier round's result
    # drawn again is not taken for this one's.
    s.write(b"timeout %d yes; exit %d\r" % (flood_s, status))
    s.read_until(b"to leave it running")
    shown = latencies(s, keys)
    if time.monotonic() >= sent + flood_s:
        raise SystemExit("ui-keys: %d keys took longer than the flood of "
                         "%d s" % (keys, flood_s))
    s.read_until(b"[exit status %d]" % status, flood_s + 30)
    s.drain(0.2)
    return shown


def quartiles(values):
    """The first quartile, the median and the third quartile."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def main():
    crucible, home, cwd, rounds, keys, flood_s = sys.argv[1:7]
    rounds, keys, flood_s = int(rounds), int(keys), int(flood_s)
    s = Session(crucible, home, cwd)
    floods, quiets, ratios = [], [], []
    try:
        s.read_until(b"ask mode on")
        s.drain(0.5)
        for r in range(rounds):
            if r % 2 == 0:
                quiet = quiet_round(s, keys)
                shown = flood_round(s, keys, flood_s, 100 + r)
            else:
                shown = flood_round(s, keys, flood_s, 100 + r)
                quiet = quiet_round(s, keys)
            floods += shown
            quiets += quiet
            ratios.append(100 * statistics.median(shown)
                          / statistics.median(quiet))
    finally:
        s.close()
    if os.environ.get("BENCH_UI_RAW"):
        print("flood keys (us):", *sorted(floods), file=sys.stderr)
        print("quiet keys (us):", *sorted(quiets), file=sys.stderr)
    f1, f2, f3 = quartiles(floods)
    q1, q2, q3 = quartiles(quiets)
    r1, _, r3 = quartiles(ratios)
    print("flood=%d flood_q1=%d flood_q3=%d quiet=%d quiet_q1=%d quiet_q3=%d "
          "ratio_min=%d ratio_q1=%d ratio_q3=%d ratio_max=%d"
          % (f2, f1, f3, q2, q1, q3, min(ratios), r1, r3, max(ratios)))


if __name__ == "__main__":
    main()
