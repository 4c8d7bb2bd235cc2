#!/usr/bin/python3
# The kernel-surface probes of tests/security/kernel.sh, run inside the
# sandbox and unconfined as the same identity.  Standard library only: the
# sandbox sees /usr and nothing the test suite installs.
#
#   kernel_probe.py walk [--own] ROOT...
#       Try open(O_WRONLY) on every regular file under each ROOT, following
#       no symlink and writing nothing; print each path that opened, then
#       "walked N" and "writable M".  The processes of the caller's own pid
#       namespace (every pid directory but 1) and /proc/sys/net are left
#       out unless --own, which walks exactly what is named.  Bounded in
#       time: past the deadline it prints "timeout" and exits 2.
#   kernel_probe.py syscall NAME
#       Make one harmless form of a system call the workload's seccomp
#       filter refuses; exit 0 when it reached the kernel (it succeeded, or
#       the kernel itself judged its arguments), 1 when it was refused the
#       way the filter refuses (EPERM or ENOSYS), printing the errno.
import ctypes
import errno
import os
import stat
import sys
import time

DEADLINE_S = 60


def walk_skip(path, own):
    """Whether path is outside the question: the caller's own processes."""
    if own:
        return False
    if path == "/proc/sys/net":
        return True
    parts = path.split("/")
    # /proc/N for N other than 1; /proc/self and /proc/thread-self are
    # symlinks, never followed.
    return (len(parts) == 3 and parts[1] == "proc" and parts[2].isdigit()
            and parts[2] != "1")


def walk_autofs():
    """The autofs mount points: walking one would mount it (binfmt_misc)."""
    points = set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                sep = fields.index("-")
                if fields[sep + 1] == "autofs":
                    points.add(fields[4])
    except OSError:
        pass
    return points


def walk_try(path, found):
    """Open path for writing, write nothing, and note it when that worked."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags | os.O_CLOEXEC)
    except OSError:
        return
    os.close(fd)
    found.append(path)


def walk(roots, own):
    end = time.monotonic() + DEADLINE_S
    skip_mounts = walk_autofs()
    found, walked = [], 0
    stack = list(roots)
    while stack:
        if time.monotonic() > end:
            print("timeout")
            return 2
        path = stack.pop()
        if walk_skip(path, own) or path in skip_mounts:
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        walked += 1
        if stat.S_ISDIR(st.st_mode):
            try:
                names = os.listdir(path)
            except OSError:
                continue
            stack.extend(os.path.join(path, n) for n in names)
        elif stat.S_ISREG(st.st_mode):
            walk_try(path, found)
    for p in sorted(found):
        print(p)
    print("walked %d" % walked)
    print("writable %d" % len(found))
    return 0


LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long

# x86-64 numbers (the suite's machines); elsewhere the probe says so.
NR = {
    "keyctl": 250, "add_key": 248, "request_key": 249, "mount": 165,
    "umount2": 166, "open_tree": 428, "fsconfig": 431, "fsmount": 432,
    "mount_setattr": 442, "setns": 308, "unshare": 272, "clone": 56,
    "clone3": 435, "quotactl": 179, "clock_settime": 227,
    "clock_adjtime": 305, "perf_event_open": 298, "userfaultfd": 323,
    "name_to_handle_at": 303, "ioctl": 16, "bpf": 321,
}

CLONE_FS = 0x200
CLONE_NEWNS = 0x20000
CLONE_NEWUSER = 0x10000000
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
AT_FDCWD = -100
UFFD_USER_MODE_ONLY = 1
KEY_SPEC_SESSION = -3
KEY_SPEC_PROCESS = -2

# Each form reaches the kernel harmlessly: its arguments are judged (and
# refused: EFAULT, EBADF, EINVAL, ENODEV, ENOKEY) before any privilege,
# or it does something only the calling process sees.  None changes the
# machine, even as root.
FORMS = {
    "keyctl": ("keyctl", 0, KEY_SPEC_SESSION, 0),  # GET_KEYRING_ID
    "add_key": ("add_key", b"user", b"crucible-probe", b"x", 1,
                KEY_SPEC_PROCESS),
    "request_key": ("request_key", b"user", b"crucible-probe-absent", None,
                    0),
    "mount": ("mount", None, None, None, 0, None),  # EFAULT: no target
    "umount2": ("umount2", None, 0),  # EFAULT
    "open_tree": ("open_tree", AT_FDCWD, b"/", 0),  # an O_PATH open
    "fsconfig": ("fsconfig", -1, 0, None, None, 0),  # EBADF/EINVAL
    "fsmount": ("fsmount", -1, 0, 0),  # EBADF
    "mount_setattr": ("mount_setattr", -1, None, 0, None, 0),  # EINVAL
    "setns": ("setns", -1, 0),  # EBADF
    "unshare": ("unshare", 0),  # nothing to unshare: 0
    "clone_newuser": ("clone", CLONE_NEWUSER | CLONE_FS, 0, 0, 0, 0),
    "clone_newns": ("clone", CLONE_NEWNS | CLONE_FS, 0, 0, 0, 0),
    "clone3": ("clone3", None, 0),  # EINVAL: too small
    "quotactl": ("quotactl", 0, None, 0, None),  # ENODEV: no device
    "clock_settime": ("clock_settime", 0, None),  # EFAULT
    "clock_adjtime": ("clock_adjtime", 0, None),  # EFAULT
    "perf_event_open": ("perf_event_open", None, 0, -1, -1, 0),  # EFAULT
    "userfaultfd": ("userfaultfd", UFFD_USER_MODE_ONLY | os.O_CLOEXEC),
    "name_to_handle_at": ("name_to_handle_at", AT_FDCWD, b"/", None, None,
                          0),  # EFAULT
    "tiocsti": ("ioctl", -1, TIOCSTI, None),  # EBADF
    "tioclinux": ("ioctl", -1, TIOCLINUX, None),  # EBADF
}


def syscall(name):
    form = FORMS.get(name)
    if form is None or os.uname().machine != "x86_64":
        print("no form of %s here" % name)
        return 3
    args = [ctypes.c_long(a) if isinstance(a, int) else a for a in form[1:]]
    rc = LIBC.syscall(ctypes.c_long(NR[form[0]]), *args)
    code = ctypes.get_errno()
    if rc >= 0:
        print("%s: %d" % (name, rc))
        return 0
    print("%s: %s" % (name, errno.errorcode.get(code, code)))
    return 1 if code in (errno.EPERM, errno.ENOSYS) else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "walk":
        own = len(argv) > 2 and argv[2] == "--own"
        return walk(argv[3:] if own else argv[2:], own)
    if len(argv) == 3 and argv[1] == "syscall":
        return syscall(argv[2])
    print(__doc__ or "usage: kernel_probe.py walk|syscall ...")
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
