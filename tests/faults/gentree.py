#!/usr/bin/env python3
"""gentree.py SEED LOWER UPPER: a random workspace (LOWER) and a random
overlay upper directory over it (UPPER), as overlayfs with userxattr
leaves one: modified and new files, new directories, deletions (0/0
character devices), replaced directories (user.overlay.opaque=y), links,
mode changes, a file replaced by a directory and the other way round.
Needs root (mknod).  Prints the number of changes made."""

import os
import random
import stat
import sys


def content(rng):
    n = rng.choice([0, 1, 7, 100, 5000, 70000])
    return bytes(rng.getrandbits(8) for _ in range(min(n, 200))) * max(1, n // 200)


def make_lower(rng, root, depth=0):
    paths = []
    for i in range(rng.randint(1, 5)):
        kind = rng.random()
        name = os.path.join(root, "%s%d" % ("d" if kind < 0.3 else "f", i))
        if kind < 0.3 and depth < 3:
            os.mkdir(name, rng.choice([0o755, 0o750, 0o700]))
            paths.append(name)
            paths += make_lower(rng, name, depth + 1)
        elif kind < 0.85:
            with open(name, "wb") as f:
                f.write(content(rng))
            os.chmod(name, rng.choice([0o644, 0o600, 0o755]))
            os.utime(name, (1e9 + rng.randint(0, 1e8),) * 2)
            paths.append(name)
        else:
            os.symlink(rng.choice(["f0", "../x", "/etc/passwd", "d0/f1"]), name)
            paths.append(name)
    return paths


def main():
    seed, lower, upper = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rng = random.Random(seed)
    os.makedirs(lower, exist_ok=True)
    os.makedirs(upper, exist_ok=True)
    paths = [os.path.relpath(p, lower) for p in make_lower(rng, lower)]
    claimed = []

    def free(rel):
        for c in claimed:
            if rel == c or rel.startswith(c + "/") or c.startswith(rel + "/"):
                return False
        return True

    def parents(rel):
        # Copy the directories above rel up into the upper, as overlayfs does.
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            up = os.path.join(upper, sub)
            if not os.path.isdir(up):
                os.mkdir(up)
                low = os.path.join(lower, sub)
                if os.path.isdir(low) and not os.path.islink(low):
                    os.chmod(up, stat.S_IMODE(os.lstat(low).st_mode))

    changes = 0
    for _ in range(rng.randint(1, 12)):
        op = rng.choice(["modify", "new", "newdir", "delete", "opaque",
                         "link", "chmod", "file2dir", "dir2file"])
        existing = [p for p in paths if free(p)]
        if op in ("new", "newdir"):
            dirs = [""] + [p for p in existing
                           if os.path.isdir(os.path.join(lower, p))
                           and not os.path.islink(os.path.join(lower, p))]
            base = rng.choice(dirs)
            rel = os.path.join(base, "n%d" % rng.randint(0, 10**6))
        elif existing:
            rel = rng.choice(existing)
        else:
            continue
        if not free(rel):
            continue
        low = os.path.join(lower, rel)
        up = os.path.join(upper, rel)
        is_dir = os.path.isdir(low) and not os.path.islink(low)
        is_file = os.path.isfile(low) and not os.path.islink(low)
        exists = os.path.lexists(low)
        fits = {"modify": is_file, "new": True, "newdir": True,
                "delete": exists, "opaque": is_dir,
                "link": exists and not is_dir, "chmod": is_file,
                "file2dir": is_file, "dir2file": is_dir}
        if not fits[op] or os.path.lexists(up):
            continue
        parents(rel)
        if op == "modify" and is_file:
            with open(up, "wb") as f:
                f.write(content(rng) + b"changed")
            os.chmod(up, stat.S_IMODE(os.lstat(low).st_mode))
        elif op == "new":
            with open(up, "wb") as f:
                f.write(content(rng))
        elif op == "newdir":
            os.mkdir(up, 0o755)
            with open(os.path.join(up, "inside"), "wb") as f:
                f.write(b"inside")
            os.mkdir(os.path.join(up, "empty"), 0o700)
        elif op == "delete" and os.path.lexists(low):
            os.mknod(up, stat.S_IFCHR | 0o000, os.makedev(0, 0))
        elif op == "opaque" and is_dir:
            os.mkdir(up, 0o755)
            os.setxattr(up, "user.overlay.opaque", b"y")
            with open(os.path.join(up, "fresh"), "wb") as f:
                f.write(content(rng))
        elif op == "link" and os.path.lexists(low) and not is_dir:
            os.symlink("target-%d" % rng.randint(0, 99), up)
        elif op == "chmod" and is_file:
            with open(low, "rb") as f:
                data = f.read()
            with open(up, "wb") as f:
                f.write(data)
            os.chmod(up, 0o700 if stat.S_IMODE(os.lstat(low).st_mode) != 0o700 else 0o644)
            st = os.lstat(low)
            os.utime(up, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif op == "file2dir" and is_file:
            os.mkdir(up, 0o755)
            with open(os.path.join(up, "was-a-file"), "wb") as f:
                f.write(b"x")
        elif op == "dir2file" and is_dir:
            with open(up, "wb") as f:
                f.write(b"was a directory")
        else:
            continue
        claimed.append(rel)
        changes += 1
    # With a fourth argument, that many files more, each modified in a
    # directory of their own: a plan of over 64 changes is synced with
    # syncfs and has its replaced files exchanged in (sandbox/publish.c).
    if len(sys.argv) > 4:
        bulk = "bulk-%d" % seed
        for top in (lower, upper):
            os.mkdir(os.path.join(top, bulk))
            os.chmod(os.path.join(top, bulk), 0o755)
        for k in range(int(sys.argv[4])):
            for top, word in ((lower, b"old"), (upper, b"new")):
                with open(os.path.join(top, bulk, "f%d" % k), "wb") as f:
                    f.write(word + b" %d\n" % k)
            changes += 1
    print(changes)


main()
