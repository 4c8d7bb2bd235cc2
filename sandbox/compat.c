/* Compatibility execution: a scope keeper per command.  */
#include <config.h>

#include "sandbox/compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/status.h"
#include "sandbox/channel.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* Descriptor numbers inside the keeper: 0-2 are the workload's standard
 * streams, 3 the status channel.  */
#define COMPAT_CHANNEL_FD 3

/* How long a signal other than SIGKILL is given before the sweep escalates.  */
#define COMPAT_GRACE_MS 1000

/* How the keeper is named in messages about its channel.  */
#define COMPAT_WHO "the command's process scope"

struct compat_session
{
  struct sandbox_session base;
  int channel;  /* host end of the status channel, or -1 */
  pid_t keeper; /* 0 until started; -1 once reaped */
  bool done;    /* the keeper confirmed the scope empty */
  void *map;    /* the keeper's stacks and arguments (compat_keeper_map) */
  size_t map_len;
};

/* What compatibility execution can hold: the ceilings the host itself
 * enforces, and two records it keeps as measurements: audit (every
 * lifecycle fact of the command journaled, which the spec keeps active
 * whether or not confinement is on) and usage (the scope's resource use,
 * from its keeper's rusage).  Observed, not enforced: a fact that cannot
 * be written leaves a gap in the journal's numbering and the command
 * goes on (doc/journal.md), so neither is a boundary.  */
static void
compat_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  memset (out, 0, sizeof *out);
  out->support[SANDBOX_COMMAND_TIME_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_OUTPUT_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_CONCURRENCY_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_AUDIT] = SANDBOX_OBSERVED;
  out->support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
}

/* Compatibility is always usable and never confined.  */
static int
compat_probe (struct sandbox_backend *b, struct sandbox_probe *out,
              struct cr_error **err)
{
  out->usable = true;
  out->confined = false;
  out->reason = xstrdup (COMPAT_DISABLED_REASON);
  out->version = xstrdup (PACKAGE_VERSION);
  return 0;
}

/* The keeper shares crucible's memory (CLONE_VM) where this file has a
 * raw system call for the architecture: it then costs no copy of crucible's
 * address space, which a fork makes and tears down again for each command
 * (on a virtual machine that shadows page tables, the larger part of an
 * unconfined start).  Sharing memory with a process that runs at the same
 * time means the keeper may touch nothing crucible's own code also writes:
 * no libc call (errno, locks and the allocator live in crucible's thread),
 * only the system calls below, which return -errno instead of setting it,
 * and its own stack and copy of the command in a mapping made for it.  Its
 * descriptor table, signal handlers, working directory and identity are
 * its own (no CLONE_FILES, CLONE_SIGHAND or CLONE_FS), so each change it
 * makes to them stays in the scope.  Elsewhere the keeper is forked, and
 * the same code runs there over libc's syscall().  */
#if defined(__x86_64__) || defined(__aarch64__)
#define COMPAT_SHARED 1
#else
#define COMPAT_SHARED 0
#endif

/* The keeper's stack and the workload's (used between vfork and execve).  */
#define COMPAT_KEEPER_STACK (64 * 1024)
#define COMPAT_WORKLOAD_STACK (16 * 1024)

/* What the keeper needs, copied into its own mapping before it starts, so
 * that nothing crucible frees or reuses afterwards is read by it.  */
struct compat_keeper_args
{
  char *shell, *cwd, *line;
  char **envp;
  int in, out, err, channel; /* descriptors as crucible has them */
  pid_t self;                /* the keeper's pid, once it runs */
};

/* The kernel's struct sigaction, for resetting a handler to SIG_DFL.  */
struct compat_ksigaction
{
  unsigned long handler, flags, restorer, mask;
};

#if COMPAT_SHARED && defined(__x86_64__)
/* One system call; the result, or -errno.  errno is not touched.  */
static long
compat_sys (long n, long a, long b, long c, long d, long e, long f)
{
  register long r10 __asm__ ("r10") = d;
  register long r8 __asm__ ("r8") = e;
  register long r9 __asm__ ("r9") = f;
  long ret;
  __asm__ volatile ("syscall"
                    : "=a"(ret)
                    : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
                      "r"(r9)
                    : "rcx", "r11", "memory");
  return ret;
}

/* clone with a stack of its own: the child calls fn (arg), which does not
 * return, and never runs on the caller's stack.  The child's pid, or
 * -errno.  */
static long
compat_clone (unsigned long flags, void *stack_top,
              void (*fn) (struct compat_keeper_args *),
              struct compat_keeper_args *arg)
{
  register long r12 __asm__ ("r12") = (long) fn;
  register long r13 __asm__ ("r13") = (long) arg;
  long ret;
  __asm__ volatile ("syscall\n\t"
                    "testq %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    "xorl %%ebp, %%ebp\n\t"
                    "movq %%r13, %%rdi\n\t"
                    "callq *%%r12\n\t"
                    "ud2\n"
                    "1:"
                    : "=a"(ret)
                    : "a"((long) SYS_clone), "D"(flags), "S"(stack_top),
                      "d"(0L), "r"(r12), "r"(r13)
                    : "rcx", "r11", "r10", "r8", "r9", "memory");
  return ret;
}
#elif COMPAT_SHARED && defined(__aarch64__)
static long
compat_sys (long n, long a, long b, long c, long d, long e, long f)
{
  register long x8 __asm__ ("x8") = n;
  register long x0 __asm__ ("x0") = a;
  register long x1 __asm__ ("x1") = b;
  register long x2 __asm__ ("x2") = c;
  register long x3 __asm__ ("x3") = d;
  register long x4 __asm__ ("x4") = e;
  register long x5 __asm__ ("x5") = f;
  __asm__ volatile ("svc 0"
                    : "+r"(x0)
                    : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                    : "memory");
  return x0;
}

static long
compat_clone (unsigned long flags, void *stack_top,
              void (*fn) (struct compat_keeper_args *),
              struct compat_keeper_args *arg)
{
  register long x8 __asm__ ("x8") = SYS_clone;
  register long x0 __asm__ ("x0") = (long) flags;
  register long x1 __asm__ ("x1") = (long) stack_top;
  register long x2 __asm__ ("x2") = 0;
  register long x3 __asm__ ("x3") = 0;
  register long x4 __asm__ ("x4") = 0;
  register long x19 __asm__ ("x19") = (long) fn;
  register long x20 __asm__ ("x20") = (long) arg;
  __asm__ volatile ("svc 0\n\t"
                    "cbnz x0, 1f\n\t"
                    "mov x29, xzr\n\t"
                    "mov x0, x20\n\t"
                    "blr x19\n\t"
                    "brk #0\n"
                    "1:"
                    : "+r"(x0)
                    : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x19),
                      "r"(x20)
                    : "x30", "memory");
  return x0;
}
#else
static long
compat_sys (long n, long a, long b, long c, long d, long e, long f)
{
  long r = syscall (n, a, b, c, d, e, f);
  return r < 0 ? -errno : r;
}
#endif

#define KSYS0(n) compat_sys ((n), 0, 0, 0, 0, 0, 0)
#define KSYS1(n, a) compat_sys ((n), (long) (a), 0, 0, 0, 0, 0)
#define KSYS2(n, a, b) compat_sys ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define KSYS3(n, a, b, c)                                                      \
  compat_sys ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define KSYS4(n, a, b, c, d)                                                   \
  compat_sys ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define KSYS6(n, a, b, c, d, e, f)                                             \
  compat_sys ((n), (long) (a), (long) (b), (long) (c), (long) (d),           \
              (long) (e), (long) (f))

/* A signal set of the kernel's size, with sig's bit set.  */
#define COMPAT_SIGBIT(sig) (1UL << ((sig) - 1))

/* Exit the keeper or the workload; never returns.  */
static void __attribute__ ((noreturn))
compat_exit (int status)
{
  for (;;)
    KSYS1 (SYS_exit_group, status);
}

/* Send one message on the channel; a gone host is not an error here.  */
static void
compat_send (int fd, enum broker_msg_type type, int value, int stage)
{
  struct broker_msg msg;
  msg.magic = BROKER_STATUS_MAGIC;
  msg.type = (uint32_t) type;
  msg.value = value;
  msg.stage = (uint32_t) stage;
  (void) KSYS6 (SYS_sendto, fd, &msg, sizeof msg, MSG_NOSIGNAL, 0, 0);
}

/* Write the decimal digits of v at p; returns the end.  */
static char *
compat_put_num (char *p, unsigned long v)
{
  char tmp[24];
  int n = 0;
  do
    tmp[n++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0)
    *p++ = tmp[--n];
  return p;
}

/* The parent pid of pid, from /proc, or -1.  */
static long
compat_parent_of (unsigned long pid)
{
  char path[48], buf[512];
  char *p = path;
  for (const char *s = "/proc/"; *s != '\0'; s++)
    *p++ = *s;
  p = compat_put_num (p, pid);
  for (const char *s = "/stat"; *s != '\0'; s++)
    *p++ = *s;
  *p = '\0';
  long fd = KSYS4 (SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  long n = KSYS3 (SYS_read, fd, buf, sizeof buf - 1);
  KSYS1 (SYS_close, fd);
  if (n <= 0)
    return -1;
  /* The name in parentheses may hold anything, so parse after the last
   * ')': " S PPID ..." (one state letter, then the parent).  */
  long close_paren = -1;
  for (long i = 0; i < n; i++)
    if (buf[i] == ')')
      close_paren = i;
  if (close_paren < 0 || close_paren + 4 >= n || buf[close_paren + 1] != ' '
      || buf[close_paren + 3] != ' ')
    return -1;
  long ppid = 0, i = close_paren + 4;
  if (buf[i] < '0' || buf[i] > '9')
    return -1;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
    {
      ppid = ppid * 10 + (buf[i] - '0');
      if (ppid > INT_MAX)
        return -1;
    }
  return i < n && buf[i] == ' ' ? ppid : -1;
}

/* The entry of a getdents64 buffer (struct linux_dirent64).  */
struct compat_dirent
{
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

/* Send sig to every process whose parent is the keeper.  Orphans of the
 * scope are reparented here because the keeper is a child subreaper, so
 * this finds a descendant that left the workload's process group.  */
static void
compat_signal_children (pid_t self, int sig)
{
  char buf[4096] __attribute__ ((aligned (8)));
  long dir = KSYS4 (SYS_openat, AT_FDCWD, "/proc",
                    O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0)
    return;
  long n;
  while ((n = KSYS3 (SYS_getdents64, dir, buf, sizeof buf)) > 0)
    for (long off = 0; off < n;)
      {
        struct compat_dirent *de = (struct compat_dirent *) (buf + off);
        unsigned long pid = 0;
        const char *c = de->name;
        for (; *c >= '0' && *c <= '9' && pid <= INT_MAX; c++)
          pid = pid * 10 + (unsigned long) (*c - '0');
        if (c != de->name && *c == '\0' && pid > 0 && pid <= INT_MAX
            && compat_parent_of (pid) == self)
          KSYS2 (SYS_kill, pid, sig);
        off += de->reclen;
      }
  KSYS1 (SYS_close, dir);
}

/* Reap every child that has ended; report the workload's own status.
 * Returns false once the keeper has no children left.  */
static bool
compat_reap (pid_t workload, int channel)
{
  for (;;)
    {
      int status = 0;
      long pid = KSYS4 (SYS_wait4, -1, &status, WNOHANG, 0);
      if (pid < 0)
        return pid != -ECHILD;
      if (pid == 0)
        return true;
      if (pid == workload)
        compat_send (channel, BROKER_MSG_EXITED, status, 0);
    }
}

/* End the whole scope: the workload's group, then every child of the keeper
 * round by round (each kill reparents grandchildren here) until none is
 * left.  A signal other than SIGKILL is escalated after a grace period.  */
static void
compat_end_scope (pid_t self, pid_t workload, int channel, int sig)
{
  struct timespec pause;
  int waited_ms = 0;

  pause.tv_sec = 0;
  pause.tv_nsec = 10L * 1000 * 1000;
  for (;;)
    {
      if (sig != SIGKILL && waited_ms >= COMPAT_GRACE_MS)
        sig = SIGKILL;
      KSYS2 (SYS_kill, -workload, sig);
      compat_signal_children (self, sig);
      if (!compat_reap (workload, channel))
        return;
      KSYS2 (SYS_nanosleep, &pause, 0);
      waited_ms += 10;
    }
}

/* The workload, in the vfork child: its own process group, no signal
 * blocked, then sh -c.  Exec failure is reported on the channel.  */
static void __attribute__ ((noreturn))
compat_exec_workload (struct compat_keeper_args *a)
{
  unsigned long none = 0;

  KSYS2 (SYS_setpgid, 0, 0);
  KSYS4 (SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, sizeof none);
  long r = KSYS1 (SYS_chdir, a->cwd);
  if (r < 0)
    {
      compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, (int) -r,
                   BROKER_STAGE_SETUP);
      compat_exit (127);
    }
  char *argv[] = { (char *) "sh", (char *) "-c", a->line, NULL };
  r = KSYS3 (SYS_execve, a->shell, argv, a->envp);
  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, (int) -r,
               BROKER_STAGE_EXEC);
  compat_exit (127);
}

/* Start the workload as vfork does: it shares the keeper's memory until its
 * execve or exit, on a stack of its own, and the keeper waits until then.
 * The keeper's handlers are all SIG_DFL by now, so none can run there.  */
static long
compat_spawn_workload (struct compat_keeper_args *a)
{
#if COMPAT_SHARED
  char *stack_top = (char *) a - COMPAT_KEEPER_STACK;
  return compat_clone (CLONE_VM | CLONE_VFORK | SIGCHLD, stack_top,
                       compat_exec_workload, a);
#else
  /* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.vfork) */
  pid_t pid = vfork ();
  if (pid == 0)
    compat_exec_workload (a); /* NOLINT(clang-analyzer-unix.Vfork) */
  return pid < 0 ? -errno : pid;
#endif
}

/* Put the keeper's descriptors in place: /dev/null or the given input, the
 * output pipe (twice, or output and error as given), the channel; close
 * everything else crucible had open, so no other command's pipe or channel
 * is held by this scope.  0, or -errno.  */
static long
compat_keeper_fds (const struct compat_keeper_args *a)
{
  long in = KSYS3 (SYS_fcntl, a->in, F_DUPFD_CLOEXEC, 10);
  long out = KSYS3 (SYS_fcntl, a->out, F_DUPFD_CLOEXEC, 10);
  long errfd = KSYS3 (SYS_fcntl, a->err, F_DUPFD_CLOEXEC, 10);
  long chan = KSYS3 (SYS_fcntl, a->channel, F_DUPFD_CLOEXEC, 10);
  long r;

  if (in < 0 || out < 0 || errfd < 0 || chan < 0)
    return in < 0 ? in : out < 0 ? out : errfd < 0 ? errfd : chan;
  /* dup3 rather than dup2, which not every architecture has; none of the
   * sources is below 10, so none equals its target.  */
  if ((r = KSYS3 (SYS_dup3, in, 0, 0)) < 0
      || (r = KSYS3 (SYS_dup3, out, 1, 0)) < 0
      || (r = KSYS3 (SYS_dup3, errfd, 2, 0)) < 0
      /* The workload must not inherit the channel: it closes on exec.  */
      || (r = KSYS3 (SYS_dup3, chan, COMPAT_CHANNEL_FD, O_CLOEXEC)) < 0)
    return r;
  r = KSYS3 (SYS_close_range, COMPAT_CHANNEL_FD + 1, ~0U, 0);
  return r < 0 ? r : 0;
}

/* Reset what the keeper inherited from crucible's loop: every handler and
 * ignored signal back to SIG_DFL (an ignored SIGPIPE would pass to the
 * workload through execve).  SIGCHLD and the polite ending signals stay
 * blocked and are read from a signalfd: SIGTERM, SIGINT or SIGHUP to the
 * keeper (the last one comes from the kernel when crucible dies while the
 * keeper is stopped) end the scope rather than leave it behind.  The
 * signalfd, or -errno.  */
static long
compat_keeper_signals (void)
{
  struct compat_ksigaction dfl = { 0, 0, 0, 0 };
  unsigned long set = COMPAT_SIGBIT (SIGCHLD) | COMPAT_SIGBIT (SIGTERM)
                      | COMPAT_SIGBIT (SIGINT) | COMPAT_SIGBIT (SIGHUP);

  for (int s = 1; s <= 64; s++)
    if (s != SIGKILL && s != SIGSTOP)
      KSYS4 (SYS_rt_sigaction, s, &dfl, 0, sizeof dfl.mask);
  long r = KSYS4 (SYS_rt_sigprocmask, SIG_SETMASK, &set, 0, sizeof set);
  if (r < 0)
    return r;
  return KSYS4 (SYS_signalfd4, -1, &set, sizeof set,
                SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Confirm the scope empty, then stay until the host closes the channel:
 * exiting at once would reset the channel under a STOP the host may be
 * sending at the same moment, and a reset loses the DONE still unread.  */
static void __attribute__ ((noreturn)) compat_keeper_done (void)
{
  struct broker_msg msg;
  long n;

  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_DONE, 0, 0);
  KSYS2 (SYS_shutdown, COMPAT_CHANNEL_FD, SHUT_WR);
  while ((n = KSYS6 (SYS_recvfrom, COMPAT_CHANNEL_FD, &msg, sizeof msg, 0, 0,
                     0))
             > 0
         || n == -EINTR)
    ;
  compat_exit (0);
}

/* Serve the channel until told to stop or until the host is gone.  */
static void __attribute__ ((noreturn))
compat_keeper_serve (pid_t self, pid_t workload, int sigfd)
{
  struct pollfd pfd[2];
  pfd[0].fd = COMPAT_CHANNEL_FD;
  pfd[0].events = POLLIN;
  pfd[1].fd = sigfd;
  pfd[1].events = POLLIN;
  for (;;)
    {
      pfd[0].revents = pfd[1].revents = 0;
      long r = KSYS6 (SYS_ppoll, pfd, 2, 0, 0, 0, 0);
      if (r < 0 && r != -EINTR)
        break;
      if (pfd[1].revents & (POLLNVAL | POLLERR))
        break; /* cannot see the scope any more: end it */
      if (pfd[1].revents)
        {
          struct signalfd_siginfo si;
          bool ending = false;
          while (KSYS3 (SYS_read, sigfd, &si, sizeof si) == (long) sizeof si)
            ending |= si.ssi_signo != SIGCHLD;
          if (ending)
            break;
          /* Nothing of the scope left once the workload has ended: say so
           * now, as the broker does, rather than waiting to be stopped.  */
          if (!compat_reap (workload, COMPAT_CHANNEL_FD))
            compat_keeper_done ();
        }
      if (pfd[0].revents)
        {
          struct broker_msg msg;
          long n = KSYS6 (SYS_recvfrom, COMPAT_CHANNEL_FD, &msg, sizeof msg,
                          0, 0, 0);
          if (n == (long) sizeof msg && msg.magic == BROKER_STATUS_MAGIC
              && msg.type == BROKER_MSG_STOP)
            {
              compat_end_scope (self, workload, COMPAT_CHANNEL_FD, msg.value);
              compat_keeper_done ();
            }
          if (n <= 0 && n != -EINTR)
            break; /* the host is gone: nobody will read this scope */
        }
    }
  compat_end_scope (self, workload, COMPAT_CHANNEL_FD, SIGKILL);
  compat_exit (0);
}

/* The keeper: a child subreaper in its own process group, so a Ctrl+C at
 * crucible's terminal reaches crucible, which decides, and not the scope.
 * It starts with every signal blocked (compat_start).  */
static void __attribute__ ((noreturn))
compat_keeper_main (struct compat_keeper_args *a)
{
  long r, sigfd = -1;

  a->self = (pid_t) KSYS0 (SYS_getpid);
  KSYS2 (SYS_setpgid, 0, 0);
  /* Descriptors first: the signalfd must come after the sweep that closes
   * everything the keeper inherited, or the sweep closes it too.  */
  r = compat_keeper_fds (a);
  if (r < 0)
    {
      /* Nothing is closed until the last step, so the channel is still
       * where crucible had it.  */
      compat_send (a->channel, BROKER_MSG_FAILED, (int) -r,
                   BROKER_STAGE_SETUP);
      compat_exit (125);
    }
  if ((r = sigfd = compat_keeper_signals ()) < 0
      || (r = KSYS2 (SYS_prctl, PR_SET_CHILD_SUBREAPER, 1)) < 0)
    {
      compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, (int) -r,
                   BROKER_STAGE_SETUP);
      compat_exit (125);
    }
  long workload = compat_spawn_workload (a);
  if (workload < 0)
    {
      compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, (int) -workload,
                   BROKER_STAGE_FORK);
      compat_exit (125);
    }
  /* Also from here, so that a stop arriving at once finds the group.  */
  KSYS2 (SYS_setpgid, workload, workload);
  /* The keeper must not hold the output pipe, or its end would never be
   * seen, nor a workload's own input or error: its own standard streams
   * become /dev/null.  */
  long nul = KSYS4 (SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC, 0);
  for (int fd = 0; fd <= 2; fd++)
    if (nul < 0 || KSYS3 (SYS_dup3, nul, fd, 0) < 0)
      KSYS1 (SYS_close, fd);
  if (nul >= 0)
    KSYS1 (SYS_close, nul);
  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_STARTED, (int) workload, 0);
  compat_keeper_serve (a->self, (pid_t) workload, (int) sigfd);
}

/* Where a string goes in the keeper's mapping; returns the copy.  */
static char *
compat_copy_str (char **at, const char *s)
{
  size_t n = strlen (s) + 1;
  char *copy = memcpy (*at, s, n);
  *at += n;
  return copy;
}

/* Make the keeper's mapping: its stack, the workload's, below them a guard
 * page, and above them the arguments with a copy of the command.  Returns
 * the arguments; *base and *len say what to unmap.  */
static struct compat_keeper_args *
compat_keeper_map (const struct sandbox_command *cmd, int devnull,
                   int channel, void **base, size_t *len)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t strings = strlen (cmd->shell) + strlen (cmd->cwd)
                   + strlen (cmd->line) + 3;
  size_t nenv = 0;
  for (; cmd->envp[nenv] != NULL; nenv++)
    strings += strlen (cmd->envp[nenv]) + 1;
  size_t head = page + COMPAT_WORKLOAD_STACK + COMPAT_KEEPER_STACK;
  size_t size = head + sizeof (struct compat_keeper_args)
                + (nenv + 1) * sizeof (char *) + strings;
  size = (size + page - 1) / page * page;

  char *map = mmap (NULL, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED)
    return NULL;
  /* A stack that overflows faults on the guard rather than writing over
   * whatever the kernel put below.  */
  if (mprotect (map, page, PROT_NONE) < 0)
    {
      munmap (map, size);
      return NULL;
    }
  struct compat_keeper_args *a = (struct compat_keeper_args *) (map + head);
  a->envp = (char **) (a + 1);
  char *at = (char *) (a->envp + nenv + 1);
  a->shell = compat_copy_str (&at, cmd->shell);
  a->cwd = compat_copy_str (&at, cmd->cwd);
  a->line = compat_copy_str (&at, cmd->line);
  for (size_t i = 0; i < nenv; i++)
    a->envp[i] = compat_copy_str (&at, cmd->envp[i]);
  a->envp[nenv] = NULL;
  a->in = cmd->stdio ? cmd->input_fd : devnull;
  a->out = cmd->output_fd;
  a->err = cmd->stdio ? cmd->error_fd : cmd->output_fd;
  a->channel = channel;
  *base = map;
  *len = size;
  return a;
}

#if COMPAT_SHARED
/* The keeper's entry on its own stack.  */
static int
compat_keeper_entry (void *arg)
{
  compat_keeper_main (arg);
}
#endif

/* Start the keeper on a, with every signal blocked until it has reset its
 * handlers: one of crucible's own handlers must never run in the keeper.
 * Its pid, or -1 with errno.  */
static pid_t
compat_keeper_start (struct compat_keeper_args *a)
{
  sigset_t all, old;
  pid_t pid;

  sigfillset (&all);
  sigprocmask (SIG_SETMASK, &all, &old);
#if COMPAT_SHARED
  pid = clone (compat_keeper_entry, a, CLONE_VM | SIGCHLD, a);
#else
  pid = fork ();
  if (pid == 0)
    compat_keeper_main (a);
#endif
  int saved = errno;
  sigprocmask (SIG_SETMASK, &old, NULL);
  errno = saved;
  return pid;
}

/* Start the keeper, which starts the workload.  */
static int
compat_start (struct sandbox_session *base, const struct sandbox_command *cmd,
              struct cr_error **err)
{
  struct compat_session *s = (struct compat_session *) base;
  cleanup_close int devnull = -1;
  int pair[2];

  devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0)
    return cr_error_set (err, errno,
                         "opening /dev/null for the command's input");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return cr_error_set (err, errno, "making the command's status channel");
  struct compat_keeper_args *a
      = compat_keeper_map (cmd, devnull, pair[1], &s->map, &s->map_len);
  pid_t pid = a == NULL ? -1 : compat_keeper_start (a);
  if (pid < 0)
    {
      int saved = errno;
      close (pair[0]);
      close (pair[1]);
      if (a != NULL)
        munmap (s->map, s->map_len);
      s->map = NULL;
      return cr_error_set (err, saved, "starting the command's process scope");
    }
  close (pair[1]);
  if (fcntl (pair[0], F_SETFL, O_NONBLOCK) < 0)
    {
      /* Closing the channel makes the keeper end the scope.  */
      close (pair[0]);
      return cr_error_set (err, errno,
                           "setting up the command's status channel");
    }
  s->channel = pair[0];
  s->keeper = pid;
  return 0;
}

static int
compat_status_fd (const struct sandbox_session *base)
{
  return ((const struct compat_session *) base)->channel;
}

/* Reap the keeper once it has said DONE and its channel is closed; it
 * exits right after.  Its resource usage covers every process of the scope,
 * since it reaped them all.  */
static void
compat_reap_keeper (struct compat_session *s, struct sandbox_usage *usage)
{
  int status;
  struct rusage ru;
  if (s->keeper <= 0 || wait4 (s->keeper, &status, 0, &ru) != s->keeper)
    return;
  s->keeper = -1;
  /* Only now, with the keeper gone, is its stack no longer in use.  */
  if (s->map != NULL)
    munmap (s->map, s->map_len);
  s->map = NULL;
  if (usage == NULL)
    return;
  usage->known = true;
  usage->cpu_user_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
  usage->cpu_system_ms = ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
  usage->max_rss_kib = ru.ru_maxrss;
}

/* Read the next message from the keeper.  */
static int
compat_next_event (struct sandbox_session *base, struct sandbox_event *ev,
                   struct cr_error **err)
{
  struct compat_session *s = (struct compat_session *) base;
  struct broker_msg msg;

  memset (ev, 0, sizeof *ev);
  for (;;)
    {
      int r = channel_read (s->channel, COMPAT_WHO, &msg, err);
      if (r < 0 || r == CHANNEL_NONE)
        return r;
      if (r == CHANNEL_ENDED)
        return cr_error_set (err, 0,
                             "the command's process scope ended without "
                             "confirming that nothing of it is left");
      r = channel_event (&msg, COMPAT_WHO, ev, err);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      s->done = ev->kind == SANDBOX_EVENT_DONE;
      return 0;
    }
}

/* Ask the keeper to end the scope; DONE follows on the channel.  */
static int
compat_stop (struct sandbox_session *base, int signo, struct cr_error **err)
{
  struct compat_session *s = (struct compat_session *) base;

  if (s->done)
    return 0;
  if (channel_send_stop (s->channel, signo) < 0)
    return cr_error_set (err, errno,
                         "asking the command's process scope to stop");
  return 0;
}

/* Release the session once the scope is confirmed empty.  */
static int
compat_dispose (struct sandbox_session *base, struct sandbox_usage *usage,
                struct cr_error **err)
{
  struct compat_session *s = (struct compat_session *) base;

  if (s->keeper > 0 && !s->done)
    return cr_error_set (
        err, 0, "the command's process scope has not been confirmed empty");
  /* Closing the channel lets the keeper, which has confirmed, exit.  */
  if (s->channel >= 0)
    close (s->channel);
  compat_reap_keeper (s, usage);
  free (s);
  return 0;
}

/* Close the channel without confirmation: the keeper sees the end of it
 * and ends the scope on its own.  The keeper is not waited for.  */
static void
compat_abandon (struct sandbox_session *base)
{
  struct compat_session *s = (struct compat_session *) base;
  if (s->channel >= 0)
    close (s->channel);
  free (s);
}

static int compat_prepare (struct sandbox_backend *b,
                           const struct sandbox_policy *policy,
                           struct sandbox_session **out, struct cr_error **err);

static void
compat_free (struct sandbox_backend *b)
{
  free (b);
}

static const struct sandbox_backend_ops compat_ops = {
  .id = "compat",
  .claims = compat_claims,
  .probe = compat_probe,
  .prepare = compat_prepare,
  .start = compat_start,
  .status_fd = compat_status_fd,
  .next_event = compat_next_event,
  .stop = compat_stop,
  .dispose = compat_dispose,
  .abandon = compat_abandon,
  .free = compat_free,
};

/* Prepare a session: refuse what compatibility cannot hold, by name.  */
static int
compat_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
                struct sandbox_session **out, struct cr_error **err)
{
  struct sandbox_claims claims;

  compat_claims (b, &claims);
  if (sandbox_check_policy (&claims, policy, compat_ops.id, err) < 0)
    return -1;
  struct compat_session *s = xcalloc (1, sizeof *s);
  s->base.ops = &compat_ops;
  s->channel = -1;
  *out = &s->base;
  return 0;
}

struct sandbox_backend *
compat_backend_new (void)
{
  struct sandbox_backend *b = xcalloc (1, sizeof *b);
  b->ops = &compat_ops;
  return b;
}
