#!/usr/bin/env python3
"""Key-to-screen latency of the full-screen session (bench/ui runs this).

    ui-keys.py CRUCIBLE HOME CWD KEYS FLOOD_S

Starts crucible on a pseudo-terminal of 100 x 30 and reads everything it
draws.  A key is one capital letter the screen shows nowhere else (the
flood is `y`, the rest of the screen has no Q, X, Z, J, V or W); its
latency is the time from writing it to the terminal to reading it back in
what crucible draws.  KEYS keys, at typing pace, first with `yes` flooding
/dev/null beside the idle session, then while the session shows
`timeout FLOOD_S yes`.  Prints the two medians in microseconds:
"FLOOD_US QUIET_US".  No terminal multiplexer is in the way, so the figure
is crucible's own: reading the key, drawing, writing the frame.
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
            data = os.read(self.fd, 65536)
            if not data:
                raise SystemExit("ui-keys: crucible closed its terminal")
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
                os.read(self.fd, 65536)

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


def main():
    crucible, home, cwd, keys, flood_s = sys.argv[1:6]
    keys, flood_s = int(keys), int(flood_s)
    s = Session(crucible, home, cwd)
    try:
        s.read_until(b"ask mode on")
        s.drain(0.5)
        # yes itself, not under timeout: killing timeout would leave it.
        flood = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
        try:
            quiet = latencies(s, keys)
        finally:
            flood.kill()
            flood.wait()
        s.drain(0.2)
        s.write(b"timeout %d yes\r" % flood_s)
        s.read_until(b"to leave it running")
        shown = latencies(s, keys)
        s.read_until(b"exit status 124", flood_s + 30)
    finally:
        s.close()
    print(int(statistics.median(shown)), int(statistics.median(quiet)))


if __name__ == "__main__":
    main()
