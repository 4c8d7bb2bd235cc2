/* Compatibility execution: a forked scope keeper per command.  */
#include <config.h>

#include "sandbox/compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Send one message on the channel; a gone host is not an error here.  */
static void
compat_send (int fd, enum broker_msg_type type, int value, int stage)
{
  struct broker_msg msg = { .magic = BROKER_STATUS_MAGIC,
                            .type = (uint32_t) type,
                            .value = value,
                            .stage = (uint32_t) stage };
  ssize_t n = send (fd, &msg, sizeof msg, MSG_NOSIGNAL);
  (void) n;
}

/* The parent pid of pid, from /proc, or -1.  */
static pid_t
compat_parent_of (const char *pid)
{
  char path[64], buf[512];
  cleanup_close int fd = -1;

  snprintf (path, sizeof path, "/proc/%s/stat", pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* The name in parentheses may hold anything, so parse after the last ')'.  */
  char *close_paren = strrchr (buf, ')');
  /* After the name: " S PPID ..." (one state letter, then the parent).  */
  if (close_paren == NULL || strlen (close_paren) < 5 || close_paren[1] != ' '
      || close_paren[3] != ' ')
    return -1;
  char *end;
  long ppid = strtol (close_paren + 4, &end, 10);
  if (end == close_paren + 4 || *end != ' ' || ppid < 0 || ppid > INT_MAX)
    return -1;
  return (pid_t) ppid;
}

/* Send sig to every process whose parent is the keeper.  Orphans of the
 * scope are reparented here because the keeper is a child subreaper, so
 * this finds a descendant that left the workload's process group.  */
static void
compat_signal_children (int sig)
{
  cleanup_closedir DIR *proc = opendir ("/proc");
  struct dirent *de;
  pid_t self = getpid ();

  if (proc == NULL)
    return;
  while ((de = readdir (proc)) != NULL)
    {
      char *end;
      long pid = strtol (de->d_name, &end, 10);
      if (end != de->d_name && *end == '\0' && pid > 0 && pid <= INT_MAX
          && compat_parent_of (de->d_name) == self)
        kill ((pid_t) pid, sig);
    }
}

/* Reap every child that has ended; report the workload's own status.
 * Returns false once the keeper has no children left.  */
static bool
compat_reap (pid_t workload, int channel)
{
  for (;;)
    {
      int status;
      pid_t pid = waitpid (-1, &status, WNOHANG);
      if (pid < 0)
        return errno != ECHILD;
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
compat_end_scope (pid_t workload, int channel, int sig)
{
  struct timespec pause = { 0, 10L * 1000 * 1000 };
  int waited_ms = 0;

  for (;;)
    {
      if (sig != SIGKILL && waited_ms >= COMPAT_GRACE_MS)
        sig = SIGKILL;
      kill (-workload, sig);
      compat_signal_children (sig);
      if (!compat_reap (workload, channel))
        return;
      nanosleep (&pause, NULL);
      waited_ms += 10;
    }
}

/* The workload, in the forked child: its own process group, default signal
 * handling, then sh -c.  Exec failure is reported on the channel.  */
static void __attribute__ ((noreturn))
compat_exec_workload (const struct sandbox_command *cmd)
{
  sigset_t none;

  setpgid (0, 0);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (chdir (cmd->cwd) < 0)
    {
      compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, errno,
                   BROKER_STAGE_SETUP);
      _exit (127);
    }
  char *const argv[]
      = { (char *) "sh", (char *) "-c", (char *) cmd->line, NULL };
  execve (cmd->shell, argv, cmd->envp);
  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, errno, BROKER_STAGE_EXEC);
  _exit (127);
}

/* Start the workload with vfork: it shares the keeper's memory until its
 * execve or _exit, so nothing of the keeper (a copy of crucible) is copied
 * a second time, and neither side takes a copy-on-write fault for each
 * page it writes afterwards, the larger part of an unconfined start where
 * each fault flushes a virtual machine's TLB.  The child makes only system
 * calls (compat_exec_workload) and never returns here; the keeper's
 * handlers are all SIG_DFL by now, so no handler can run on the shared
 * stack.  */
static pid_t
compat_spawn_workload (const struct sandbox_command *cmd)
{
  /* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.vfork) */
  pid_t pid = vfork ();

  if (pid == 0)
    compat_exec_workload (cmd); /* NOLINT(clang-analyzer-unix.Vfork) */
  return pid;
}

/* Put the keeper's descriptors in place: /dev/null, the output pipe twice,
 * the channel (or, for a workload with its own streams, its input, output
 * and error as given); close everything else crucible had open, so no
 * other command's pipe or channel is held by this scope.  */
static int
compat_keeper_fds (const struct sandbox_command *cmd, int devnull, int channel)
{
  int in = fcntl (cmd->stdio ? cmd->input_fd : devnull, F_DUPFD_CLOEXEC, 10);
  int out = fcntl (cmd->output_fd, F_DUPFD_CLOEXEC, 10);
  int errfd = fcntl (cmd->stdio ? cmd->error_fd : cmd->output_fd,
                     F_DUPFD_CLOEXEC, 10);
  int chan = fcntl (channel, F_DUPFD_CLOEXEC, 10);

  if (in < 0 || out < 0 || errfd < 0 || chan < 0 || dup2 (in, 0) < 0
      || dup2 (out, 1) < 0 || dup2 (errfd, 2) < 0
      || dup2 (chan, COMPAT_CHANNEL_FD) < 0)
    return -1;
  /* The workload must not inherit the channel: it closes on exec.  */
  if (fcntl (COMPAT_CHANNEL_FD, F_SETFD, FD_CLOEXEC) < 0)
    return -1;
  return (int) syscall (SYS_close_range, COMPAT_CHANNEL_FD + 1, ~0U, 0);
}

/* Reset what the keeper inherited from crucible's loop: handlers and mask.
 * SIGCHLD and the polite ending signals stay blocked and are read from a
 * signalfd: SIGTERM, SIGINT or SIGHUP to the keeper (the last one comes
 * from the kernel when crucible dies while the keeper is stopped) end the
 * scope rather than leave it behind.  */
static int
compat_keeper_signals (void)
{
  sigset_t set;

  for (int s = 1; s < NSIG; s++)
    signal (s, SIG_DFL);
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGHUP);
  if (sigprocmask (SIG_SETMASK, &set, NULL) < 0)
    return -1;
  return signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Confirm the scope empty, then stay until the host closes the channel:
 * exiting at once would reset the channel under a STOP the host may be
 * sending at the same moment, and a reset loses the DONE still unread.  */
static void __attribute__ ((noreturn)) compat_keeper_done (void)
{
  struct broker_msg msg;

  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_DONE, 0, 0);
  shutdown (COMPAT_CHANNEL_FD, SHUT_WR);
  while (recv (COMPAT_CHANNEL_FD, &msg, sizeof msg, 0) > 0 || errno == EINTR)
    ;
  _exit (0);
}

/* Serve the channel until told to stop or until the host is gone.  */
static void __attribute__ ((noreturn))
compat_keeper_serve (pid_t workload, int sigfd)
{
  struct pollfd pfd[2] = { { .fd = COMPAT_CHANNEL_FD, .events = POLLIN },
                           { .fd = sigfd, .events = POLLIN } };
  for (;;)
    {
      if (poll (pfd, 2, -1) < 0 && errno != EINTR)
        break;
      if (pfd[1].revents & (POLLNVAL | POLLERR))
        break; /* cannot see the scope any more: end it */
      if (pfd[1].revents)
        {
          struct signalfd_siginfo si;
          bool ending = false;
          while (read (sigfd, &si, sizeof si) == (ssize_t) sizeof si)
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
          ssize_t n = recv (COMPAT_CHANNEL_FD, &msg, sizeof msg, 0);
          if (n == (ssize_t) sizeof msg && msg.magic == BROKER_STATUS_MAGIC
              && msg.type == BROKER_MSG_STOP)
            {
              compat_end_scope (workload, COMPAT_CHANNEL_FD, msg.value);
              compat_keeper_done ();
            }
          if (n <= 0 && !(n < 0 && errno == EINTR))
            break; /* the host is gone: nobody will read this scope */
        }
    }
  compat_end_scope (workload, COMPAT_CHANNEL_FD, SIGKILL);
  _exit (0);
}

/* The keeper: a child subreaper in its own process group, so a Ctrl+C at
 * crucible's terminal reaches crucible, which decides, and not the scope.  */
static void __attribute__ ((noreturn))
compat_keeper_main (const struct sandbox_command *cmd, int devnull, int channel)
{
  int sigfd = -1;

  setpgid (0, 0);
  /* Descriptors first: the signalfd must come after the sweep that closes
   * everything the keeper inherited, or the sweep closes it too.  */
  if (compat_keeper_fds (cmd, devnull, channel) < 0
      || (sigfd = compat_keeper_signals ()) < 0
      || prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    {
      compat_send (channel, BROKER_MSG_FAILED, errno, BROKER_STAGE_SETUP);
      _exit (125);
    }
  pid_t workload = compat_spawn_workload (cmd);
  if (workload < 0)
    {
      compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_FAILED, errno,
                   BROKER_STAGE_FORK);
      _exit (125);
    }
  /* Also from here, so that a stop arriving at once finds the group.  */
  setpgid (workload, workload);
  /* The keeper must not hold the output pipe, or its end would never be
   * seen, nor a workload's own input or error: its own standard streams
   * become /dev/null.  */
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (nul >= 0)
    {
      dup2 (nul, 0);
      dup2 (nul, 1);
      dup2 (nul, 2);
      close (nul);
    }
  else
    for (int fd = 0; fd <= 2; fd++)
      close (fd);
  compat_send (COMPAT_CHANNEL_FD, BROKER_MSG_STARTED, workload, 0);
  compat_keeper_serve (workload, sigfd);
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
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (pair[0]);
      close (pair[1]);
      return cr_error_set (err, errno, "starting the command's process scope");
    }
  if (pid == 0)
    {
      close (pair[0]);
      compat_keeper_main (cmd, devnull, pair[1]);
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
