#!/bin/bash
# An attacker's pass on the container backend, against both engines
# (tests/container/lib.sh starts dockerd and Podman's service once): the
# job runner's own seccomp filter refuses a new user namespace whatever
# the engine's profile is (Podman's lets `unshare -r` through), and the
# command cannot take over the runner, which is PID 1 with the same uid
# 65534: no ptrace attach, no opening /proc/1/mem for writing, no reading
# its descriptors, no signal that ends it, and no descriptor of the
# runner's own stdin or stdout inherited.  Each attempt has its control:
# the same attempt against a process of the command's own, in the same
# container, succeeds (and `unshare -r` as uid 65534 on the host).
#
# The second pass (doc/container-job.md, "What the changes stream
# publishes, leaves out and refuses"): what a command leaves in the
# workspace (links in and out, hard links, fifos, devices, sparse files,
# deep trees, odd and long names, modes, xattrs, kinds swapped, writers
# left running) is published exactly as allowed, or refused whole and
# named (escaped); nothing one container leaves in /dev/shm, /tmp, POSIX
# queues, SysV IPC or its processes reaches another session's container
# or the next one; bind, add_key and the host's abstract sockets are out
# of reach; and a forged ending, change set or deadline written by the
# command arrives as its output, not believed.  Controls: the allowed
# form in the same container, or the same act by uid 65534 on the host.

. "$(dirname "$0")/../container/lib.sh"

PER_ENGINE=33
plan $((2 * PER_ENGINE))

container_home

# A static ptrace(PTRACE_ATTACH) of one pid, carried in with the workspace
# (the image has busybox only): exit 0 when attached.  Once attached it
# waits for the tracee's first stop and detaches, giving that stop's signal
# back as none: a tracer that leaves without detaching leaves the signal
# the tracee stopped on to be delivered, and when the attach lands while
# the control's `sleep` is still in its execve, that is the exec's SIGTRAP,
# which kills it (so that `kill -9` then found no such process under load).
HELPER_C="$TEST_TMP/ptattach.c"
PROBE_C="$TEST_TMP/probe.c"
cat >"$HELPER_C" <<'C'
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
int main (int argc, char **argv)
{
  pid_t pid = argc == 2 ? (pid_t) atoi (argv[1]) : 0;
  int status;
  if (pid <= 0 || ptrace (PTRACE_ATTACH, pid, 0, 0) != 0)
    return 1;
  if (waitpid (pid, &status, __WALL) == pid && WIFSTOPPED (status))
    ptrace (PTRACE_DETACH, pid, 0, 0);
  return 0;
}
C

# uid 65534 on the host makes a user namespace (the control for the filter).
HOST_USERNS=1
setpriv --reuid 65534 --regid 65534 --clear-groups busybox unshare -r true 2>/dev/null && HOST_USERNS=0

gcc -static -O -o "$TEST_TMP/ptattach" "$HELPER_C" || exit 1
cat >"$PROBE_C" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#define KEY 0x63727571
static int fail (const char *what) { printf ("%s: %s\n", what, strerror (errno)); return 1; }
/* One frame as the runner writes it: type, 4-byte big-endian length.  */
static void frame (char *b, size_t *n, char t, const char *p)
{
  size_t l = strlen (p);
  b[(*n)++] = t; b[(*n)++] = 0; b[(*n)++] = 0;
  b[(*n)++] = (char) (l >> 8); b[(*n)++] = (char) l;
  memcpy (b + *n, p, l); *n += l;
}
static int un (int abstract, const char *name, int do_bind)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return fail ("socket");
  strncpy (a.sun_path + abstract, name, sizeof a.sun_path - 2);
  socklen_t len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + abstract + strlen (name));
  if (!do_bind) return connect (fd, (struct sockaddr *) &a, len) < 0 ? fail ("connect") : 0;
  if (bind (fd, (struct sockaddr *) &a, len) < 0) return fail ("bind");
  if (listen (fd, 1) < 0) return fail ("listen");
  printf ("LISTENING\n"); fflush (stdout);
  if (abstract) sleep (120);
  return 0;
}
int main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "", *a = argc > 2 ? argv[2] : "";
  if (!strcmp (c, "forge"))
    { /* what the runner would say after an ordinary exit 0 with no
         changes, and a deadline, written to a (or "-": stdout) */
      char b[256]; size_t n = 0;
      frame (b, &n, 'X', "exit=0"); frame (b, &n, 'Z', "changes=0 bytes=0");
      frame (b, &n, 'X', "exit=0 deadline=1");
      int fd = strcmp (a, "-") ? open (a, O_WRONLY | O_NOCTTY) : 1;
      if (fd < 0) return fail ("open");
      return write (fd, b, n) == (ssize_t) n ? 0 : fail ("write");
    }
  if (!strcmp (c, "mq-make"))
    return mq_open ("/crq", O_CREAT | O_RDWR, 0666, NULL) < 0 ? fail ("mq_open") : 0;
  if (!strcmp (c, "mq-has"))
    return mq_open ("/crq", O_RDWR) < 0 ? fail ("mq_open") : 0;
  if (!strcmp (c, "sysv-make"))
    return shmget (KEY, 4096, IPC_CREAT | 0666) < 0 || msgget (KEY, IPC_CREAT | 0666) < 0
           || semget (KEY, 1, IPC_CREAT | 0666) < 0 ? fail ("ipc") : 0;
  if (!strcmp (c, "sysv-has")) /* 0 when any of the three is there */
    return shmget (KEY, 0, 0) >= 0 || msgget (KEY, 0) >= 0 || semget (KEY, 0, 0) >= 0 ? 0 : fail ("ipc");
  if (!strcmp (c, "abs-listen")) return un (1, a, 1);
  if (!strcmp (c, "abs-connect")) return un (1, a, 0);
  if (!strcmp (c, "unix-bind")) return un (0, a, 1);
  if (!strcmp (c, "tcp-bind"))
    {
      struct sockaddr_in s = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      int fd = socket (AF_INET, SOCK_STREAM, 0);
      if (fd < 0) return fail ("socket");
      return bind (fd, (struct sockaddr *) &s, sizeof s) < 0 ? fail ("bind") : 0;
    }
  if (!strcmp (c, "hold")) /* until the host ends it (a bound: 300 s) */
    return sleep (300) == 0 ? 0 : 1;
  if (!strcmp (c, "key")) /* a key in the process keyring */
    return syscall (SYS_add_key, "user", "crq", "x", 1, -2) < 0 ? fail ("add_key") : 0;
  if (!strcmp (c, "xattr-set"))
    return setxattr (a, "user.crq", "x", 1, 0) < 0 ? fail ("setxattr") : 0;
  if (!strcmp (c, "xattr-has"))
    return getxattr (a, "user.crq", NULL, 0) < 0 ? fail ("getxattr") : 0;
  return 2;
}
C
gcc -static -O -o "$TEST_TMP/probe" "$PROBE_C" 2>/dev/null || exit 1
chmod 755 "$TEST_TMP/probe"

# The controls on the host: uid 65534 adds a key to its keyring, and an
# abstract socket listening in the host's network namespace is reached
# from the host.
HOST_KEY=1
setpriv --reuid 65534 --regid 65534 --clear-groups "$TEST_TMP/probe" key >/dev/null && HOST_KEY=0
"$TEST_TMP/probe" abs-listen crq-host >"$TEST_TMP/abs.out" &
ABS_PID=$!
# Until it listens (or has failed: then the control fails below).
for _ in $(seq 1200); do
  grep -q LISTENING "$TEST_TMP/abs.out" || ! kill -0 "$ABS_PID" 2>/dev/null && break
  sleep 0.1
done
HOST_ABS=1
"$TEST_TMP/probe" abs-connect crq-host >/dev/null && HOST_ABS=0
HOST_BIND=1
mkdir -m 777 "$TEST_TMP/binds"
setpriv --reuid 65534 --regid 65534 --clear-groups sh -c \
  "'$TEST_TMP/probe' tcp-bind && '$TEST_TMP/probe' unix-bind '$TEST_TMP/binds/sock'" >/dev/null && HOST_BIND=0

# engine_checks ENGINE: the attempts against one engine (engines_each runs
# the two engines' at the same time, each with a HOME of its own).
engine_checks() {
  local engine=$1
  engine_begin "$engine" "$PER_ENGINE" || return 0
  cp "$TEST_TMP/ptattach" "$TEST_TMP/probe" .

  # --- a new user namespace ---------------------------------------------------
  crun run 'busybox unshare -r id -u && echo MADE || echo REFUSED'
  if [ "$HOST_USERNS" -ne 0 ]; then
    ok 1 "$engine: unshare -r: the positive control failed on the host (uid 65534), so this proves nothing"
  else
    like "$rc|$out" "^0\\|.*REFUSED" "$engine: unshare -r is refused inside and succeeds for uid 65534 on the host"
  fi
  crun run 'busybox unshare -U true 2>/dev/null && echo MADE || echo REFUSED; busybox unshare -n true 2>/dev/null && echo MADE || echo REFUSED'
  is "$rc|$out" "0|REFUSED
REFUSED" "$engine: unshare -U and -n are refused inside too"
  grep -q '"filter":"crucible".*' "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)" \
    || grep -q 'filter=crucible' "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"
  ok $? "$engine: the run's facts say the runner's own filter was loaded"

  # --- the runner, PID 1 ------------------------------------------------------
  # The control each time: a process of the command's own (same uid, same
  # container) is reachable by the same attempt.
  crun run 'sleep 30 & c=$!; ./ptattach $c && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            ./ptattach 1 && echo ATTACHED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: ptrace attach to the runner fails; to the command's own process it succeeds"
  crun run 'sleep 30 & c=$!; (exec 3<>/proc/$c/mem) 2>/dev/null && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            (exec 3<>/proc/1/mem) 2>/dev/null && echo OPENED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: /proc/1/mem cannot be opened for writing; the command's own process's can"
  crun run 'sleep 30 & c=$!; ls /proc/$c/fd >/dev/null 2>&1 && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            ls /proc/1/fd >/dev/null 2>&1 && echo LISTED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: the runner's descriptors cannot be listed; the command's own process's can"
  # Every signal the command may send (it has no handler for any but
  # SIGCHLD, which it only reaps on): the run still ends with the
  # command's own answer and its changes.
  crun run 'sleep 30 & c=$!; kill -TERM $c; wait $c; echo CTL=$?
            for s in TERM INT HUP QUIT USR1 USR2 ALRM PIPE CHLD STOP KILL; do kill -$s 1 2>/dev/null; done
            sleep 0.5; echo alive >alive.txt; echo ALIVE; exit 7'
  like "$rc|$out|$(cat alive.txt 2>/dev/null)" "^7\\|(Terminated
)?CTL=143
ALIVE
\\[exit status 7\\]\\|alive$" "$engine: signals to PID 1 do not end the runner (the run answers and publishes); the command's own process ends on SIGTERM"
  rm -f alive.txt

  # --- descriptors --------------------------------------------------------------
  # The command's shell holds /dev/null as stdin and one pipe, the runner's
  # output pipe, as stdout and stderr; nothing else (the runner's stdin and
  # stdout, the attach, are neither).  The control: a descriptor the
  # command opens itself is seen by the same listing.
  crun run 'exec 5</dev/null; busybox ls -l /proc/$$/fd'
  fds=$(sed -n 's/.* \([0-9]*\) -> \(.*\)$/\1 \2/p' <<<"$out")
  like "$rc|$fds" "^0\\|0 /dev/null
1 pipe:\\[[0-9]+\\]
2 pipe:\\[[0-9]+\\]
5 /dev/null$" "$engine: the command holds /dev/null, one output pipe and its own descriptor, nothing else"
  one=$(sed -n 's/^1 //p' <<<"$fds")
  two=$(sed -n 's/^2 //p' <<<"$fds")
  [ -n "$one" ] && [ "$one" = "$two" ]
  ok $? "$engine: stdout and stderr are the same pipe ($one)"
  # The runner's stdout would carry raw bytes into the answer stream: a
  # line written to each descriptor arrives framed, as output.
  crun run 'echo to-one >&1; echo to-two >&2'
  is "$rc|$out" "0|to-one
to-two" "$engine: what the command writes to its descriptors arrives as its output, not in the runner's stream"

  # --- the changes stream: what is allowed arrives exactly -----------------
  # One run takes every attempt whose allowed form publishes (the controls
  # of the refusals below), and the attempts that must fail quietly inside:
  # a hard link to a file outside the workspace's tree (another mount), a
  # device node.  A fifo is never published; setuid, setgid and xattrs are
  # not carried; processes left behind are killed before the walk, so a
  # writer still running after the shell exits neither races it nor
  # publishes late.  The late writers wait for the shell to be gone (reaped
  # by the runner, which then kills what is left at once) and then 10 s
  # more: a runner that waited for them, or for the one in a session of its
  # own, would publish their files; one that kills them never lets them
  # write.  The shell leaves once the growing file has grown.
  new_workspace
  cp "$TEST_TMP/probe" .
  echo one >f1; mkdir d1; echo in >d1/x; echo plain >a.txt
  crun run 'ln -s a.txt in-link
    ln /etc/passwd hp 2>/dev/null && echo HARD-OUT || echo NO-HARD-OUT
    echo h >h1 && ln h1 h2 && echo HARD-IN
    mkfifo ff && echo FIFO
    mknod dev c 1 3 2>/dev/null && echo MKNOD || echo NO-MKNOD
    truncate -s 1M sparse && echo SPARSE
    d=t; for i in $(seq 199); do d=$d/t; done; mkdir -p $d && echo x >$d/leaf && echo DEEP200
    for n in "$(printf "nl\nx")" "$(printf "tab\tx")" "$(printf "ctl\001x")" "$(printf "bad\377x")" "$(printf "esc\033[2Jx")"; do echo n >"$n"; done
    echo l >"$(printf "%0255d" 0)"
    (for i in $(seq 14); do n=$(printf "%0250d" $i); mkdir $n; cd $n; done; echo far >f) && echo LONG
    mkdir g && chmod 2775 g && echo s >su && chmod 6755 su && echo MODES
    echo x >xa && ./probe xattr-set xa && ./probe xattr-has xa && echo XATTR
    rm f1 && mkdir f1 && echo c >f1/c && rm -r d1 && echo now >d1 && echo SWAPPED
    sh=$$
    (while kill -0 $sh 2>/dev/null; do sleep 0.05; done; sleep 10; echo late >late.txt) &
    setsid sh -c "while kill -0 $sh 2>/dev/null; do sleep 0.05; done; sleep 10; echo late >late2.txt" &
    (while :; do echo g >>grow.txt; done) &
    until [ -s grow.txt ]; do sleep 0.05; done; exit 3'
  is "$rc|$out" "3|NO-HARD-OUT
HARD-IN
FIFO
NO-MKNOD
SPARSE
DEEP200
LONG
MODES
XATTR
SWAPPED
[exit status 3]" "$engine: inside, a hard link out and mknod fail; the allowed forms (a hard link inside, a fifo, a sparse file, 200 levels, odd and long names, modes, an xattr, kinds swapped) are made"
  [ "$(readlink in-link)" = a.txt ]
  ok $? "$engine: a link inside the workspace is published as a link"
  is "$(cat h1 h2 2>&1)|$(stat -c %h h1 h2 2>&1 | tr '\n' ' ')|$([ -e hp ] && echo hp)" "h
h|1 1 |" "$engine: hard links inside arrive as separate files; the one out was never made"
  is "$([ -e ff ] || [ -L ff ] && echo ff)$([ -e dev ] && echo dev)|$(stat -c %s sparse 2>&1)" \
    "|1048576" "$engine: a fifo is not published (nor a device); a sparse file arrives counted by its size"
  is "$(cat "t$(printf '/t%.0s' $(seq 199))/leaf" 2>&1)" "x" "$engine: a tree 200 levels deep is published"
  is "$(cat $'nl\nx' $'tab\tx' $'ctl\001x' $'bad\377x' $'esc\033[2Jx' 2>&1 | tr '\n' ' ')" "n n n n n " \
    "$engine: names with a newline, a tab, control bytes and invalid UTF-8 are published exactly"
  far=.; for i in $(seq 14); do far=$far/$(printf "%0250d" "$i"); done
  is "$(cat "$(printf "%0255d" 0)" 2>&1)|$(cat "$far/f" 2>&1)" "l|far" \
    "$engine: a 255-byte name and a ${#far}-byte path are published"
  is "$(stat -c %a g su 2>&1 | tr '\n' ' ')" "775 755 " \
    "$engine: setgid on a new directory and setuid/setgid on a new file never reach the workspace"
  is "$(cat xa)|$(python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' xa 2>&1)" "x|[]" \
    "$engine: an xattr set inside is not carried out"
  is "$(cat f1/c 2>&1)|$(cat d1 2>&1)" "c|now" "$engine: a file made a directory, and a directory made a file, are published"
  is "$([ -e late.txt ] && echo late)$([ -e late2.txt ] && echo late2)|$([ -s grow.txt ] && echo grown)" "|grown" \
    "$engine: what was still writing when the shell exited is stopped before the walk: nothing late, the growing file published whole"

  # --- the changes stream: what is refused, refused whole and named --------
  # Each against the control above, where the same act is allowed.
  mkdir -p sub
  crun run 'cd sub && ln -s ../../../etc/shadow "$(printf "up\033[2J")"; cd ..; echo b >beside.txt'
  like "$out|$([ -e beside.txt ] && echo beside)" \
    "published nothing: the changes the container sent back were refused \\(sub/up\\\\x1b\\[2J: a link out of the workspace\\)\\]\\|$" \
    "$engine: a relative link climbing out refuses the set, named with its controls shown escaped"
  crun run 'chmod 755 a.txt; echo b >beside.txt'
  like "$out|$([ -e beside.txt ] && echo beside)|$(stat -c %a a.txt)" \
    "refused \\(a.txt: a change of mode of a path the workspace holds\\)\\]\\|\\|644$" \
    "$engine: a chmod of a path the workspace holds refuses the set, named (doc/container-job.md)"
  crun run 'truncate -s 1099511627776 huge; echo rc=$?; truncate -s 600M "$(printf "mid\033[2J")"; echo b >beside.txt'
  like "$out|$(ls | grep -c '^huge\|^mid')$([ -e beside.txt ] && echo beside)" \
    "^(.*
)?rc=(153|1)
.*refused \\(the job runner failed sending the changes: the changes are over the 268435456-byte bound at mid\\\\x1b\\[2J\\)\\]\\|0$" \
    "$engine: a 1 TB sparse file is refused inside (fsize); a 600 MB one refuses the set by its size, never read, named escaped"
  crun run 'd="$(printf "u\033")"; for i in $(seq 299); do d=$d/u; done; mkdir -p "$d"; echo b >beside.txt'
  like "$out|$([ -e beside.txt ] && echo beside)$(ls | grep -c '^u')" \
    "refused \\(the job runner failed sending the changes: the workspace's u\\\\x1b/u/u/u.* is deeper than 256 levels\\)\\]\\|0$" \
    "$engine: a tree deeper than the walk's bound refuses the set, named escaped"
  crun run '(for i in $(seq 17); do n=L$(printf "%0249d" $i); mkdir $n; cd $n; done; echo far >f) 2>/dev/null; echo b >beside.txt'
  like "$out|$([ -e beside.txt ] && echo beside)$(ls | grep -c '^L')" "refused \\(.*tar: the name L0+ is empty or too long\\)\\]\\|0$" \
    "$engine: a path over 4096 bytes refuses the set, named"

  # --- kernel objects: nothing of one container reaches another ------------
  # Session A leaves /dev/shm, /tmp, a POSIX queue, SysV IPC and a process
  # in another session, sees them itself (the control: once its process
  # has started), and holds them until session B has looked (the host
  # ends A's hold, a process of A's container it finds by its tag); then C
  # looks after A is gone.
  proc_has='for p in /proc/[0-9]*; do cat $p/cmdline; echo; done 2>/dev/null | tr "\0" " " | grep -q "^sleep 60"'
  probe_all='[ -e /dev/shm/crq ] && echo SHM; [ -e /tmp/crq ] && echo TMP
    ./probe mq-has >/dev/null && echo MQ; ./probe sysv-has >/dev/null && echo SYSV
    '"$proc_has"' && echo PROC
    echo LOOKED'
  local hold="crq-hold-$$-$engine"
  "$CRUCIBLE" run 'echo s >/dev/shm/crq; echo t >/tmp/crq; ./probe mq-make; ./probe sysv-make
    setsid sleep 60 &
    n=0; until '"$proc_has"' || [ $n -ge 600 ]; do sleep 0.05; n=$((n + 1)); done
    '"$probe_all"'; ./probe hold '"$hold"' || :' >"$TEST_TMP/a.out" 2>&1 &
  a_pid=$!
  for _ in $(seq 1200); do
    grep -q LOOKED "$TEST_TMP/a.out" || ! kill -0 "$a_pid" 2>/dev/null && break
    sleep 0.1
  done
  crun run "$probe_all"
  b_out=$out
  # B has looked: A's hold ends (it may not have begun yet).
  for _ in $(seq 1200); do
    pkill -TERM -x -f "./probe hold $hold" && break
    kill -0 "$a_pid" 2>/dev/null || break
    sleep 0.1
  done
  wait "$a_pid"
  is "$(head -6 "$TEST_TMP/a.out")" "SHM
TMP
MQ
SYSV
PROC
LOOKED" "$engine: control: a container sees its own /dev/shm, /tmp, queue, SysV IPC and process"
  is "$b_out" "LOOKED" "$engine: another session's container at the same time sees none of them"

  # --- sockets and keys -----------------------------------------------------
  # allowLocalBinding false (the default) refuses bind (tried in the
  # frames run below); the control is uid 65534 binding on the host, as
  # true is refused by this backend.  The host's abstract socket is out of
  # reach (network none); the key ring is refused by the runner's filter.
  [ "$HOST_KEY" -eq 0 ] && [ "$HOST_ABS" -eq 0 ] && [ "$HOST_BIND" -eq 0 ]
  ok $? "$engine: control: on the host uid 65534 binds (tcp and unix), adds a key and reaches the abstract socket"
  # allowLocalBinding true asks for a way out the container backend does
  # not mediate: refused by name, nothing run (so no socket is ever made
  # in a container's workspace).
  echo '{"sandbox": {"enabled": true, "backend": "container", "network": {"allowLocalBinding": true}}}' >"$HOME/.crucible/config.json"
  crun run 'echo s >s.txt'
  echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"
  is "$out|$([ -e s.txt ] && echo s)" "[refused: the policy requires network_allowlist, which the container backend does not enforce; nothing was run]|" \
    "$engine: allowLocalBinding true is refused by the container backend, nothing run"

  # --- frames after R -------------------------------------------------------
  # The command's own stdout is framed by the runner: a forged ending (an
  # exit 0, an empty change set, a deadline) written there arrives as
  # output (the control: the write succeeds).  The runner's own stream,
  # through /proc/1/fd, and the console are out of reach.
  crun run "$probe_all"'
    ./probe tcp-bind; ./probe unix-bind sock; ./probe key; ./probe abs-connect crq-host
    ./probe forge - && echo WROTE
    ./probe forge /proc/1/fd/1 >/dev/null || echo NO-PID1-OUT
    ./probe forge /proc/1/fd/0 >/dev/null || echo NO-PID1-IN
    ./probe forge /dev/console >/dev/null 2>&1 && echo CONSOLE || echo NO-CONSOLE
    echo after >after.txt; exit 3' 2>/dev/null
  # (This is also the container after session A's: it sees none of what
  # A left.)
  is "$(head -1 <<<"$out")" "LOOKED" "$engine: the next container sees none of them"
  like "$rc|$out|$(cat after.txt 2>&1)$([ -e sock ] && echo sock)" "^3\\|LOOKED
bind: Permission denied
bind: Permission denied
add_key: Operation not permitted
connect: Connection refused
X.?exit=0Z.?changes=0 bytes=0X.?exit=0 deadline=1WROTE
NO-PID1-OUT
NO-PID1-IN
NO-CONSOLE
\\[exit status 3\\]\\|after$" "$engine: refused inside: bind (tcp and unix), a key, the host's abstract socket; a forged ending, change set or deadline is not believed: the run ends 3 and publishes"
}
engines_start docker podman
engines_each engine_checks
# The listener may still be waiting (no connection reached it): its
# SIGTERM status is not the script's.
kill "$ABS_PID" 2>/dev/null
wait "$ABS_PID" 2>/dev/null || :
