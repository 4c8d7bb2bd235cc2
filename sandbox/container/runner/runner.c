/* crucible-job-runner's main: read the job, run the command, answer
 * (runner.h, sandbox/container/jobproto.h).  */
#include <config.h>

#include "sandbox/container/runner/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/container/jobproto.h"

/* Defaults of the 'L' keys not given.  */
#define RUNNER_GRACE_MS 1000
#define RUNNER_CHANGES_MAX (UINT64_C (256) << 20)

/* After the command ended, how long what it left holding the output pipe
 * may keep it open before the runner stops reading it.  */
#define RUNNER_DRAIN_MS 2000

/* What the job asked for.  */
struct runner_job
{
  char **envp;
  size_t n_env;
  char *line;
  uint64_t cpu, as, fsize, nproc, nofile, deadline_ms, grace_ms, changes_max;
  bool stdio;    /* "stdio=1": standard streams of its own (jobproto.h) */
  uint64_t bind; /* allowLocalBinding: bind(2) and listen(2) allowed */
};

/* Where the job's reading is.  */
enum runner_phase
{
  RUNNER_WANT_VERSION,
  RUNNER_WANT_LIMITS,
  RUNNER_WANT_ENV,  /* E..., then C */
  RUNNER_WANT_WORK, /* W..., then G */
  RUNNER_RUNNING
};

struct runner
{
  const char *ws;
  int wsfd;
  bool pid1; /* the container's init: everything but itself is the job's */
  struct jobproto_reader in;
  enum runner_phase phase;
  struct runner_job job;
  struct runner_unpack unpack;
  pid_t child;
  int status;
  bool exited, stopped, deadline_hit, input_gone;
  int64_t deadline_at, kill_at; /* monotonic ms; 0: none */
  /* With stdio: the command's stdin (our write end, nonblocking), what
   * 'I' gave that it has not read, whether 'N' came; its stderr (our
   * read end); and the child's ends, before the fork.  -1: none.  */
  int in_fd, err_fd, child_in, child_err;
  struct buf input;
  bool input_end;
};

/* Monotonic milliseconds.  */
static int64_t
runner_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Say why the runner fails ('F') and leave, killing what it started.  */
static void __attribute__ ((noreturn))
runner_fail (struct runner *r, const char *why)
{
  struct cr_error *ignored = NULL;
  if (r->child > 0 && !r->exited)
    kill (-r->child, SIGKILL);
  jobproto_write (STDOUT_FILENO, ANS_FAILED, why, strlen (why), &ignored);
  cr_error_free (ignored);
  _exit (1);
}

/* Kill every process of the job with signo: as PID 1 of the container,
 * every process there but the runner (whatever group or session it
 * made); as a plain process (tests), the command's process group.  */
static void
runner_kill_all (struct runner *r, int signo)
{
  if (r->pid1)
    kill (-1, signo);
  else if (r->child > 0)
    kill (-r->child, signo);
}

/* The dead-man switch: crucible's stream ended (or broke), so nothing
 * may go on; no changes are sent.  */
static void __attribute__ ((noreturn)) runner_dead_man (struct runner *r)
{
  runner_kill_all (r, SIGKILL);
  _exit (0);
}

/* A decimal 'L' value, or fail.  */
static uint64_t
runner_limit (struct runner *r, const uint8_t *p, size_t len, const char *key)
{
  cleanup_free char *v = jobproto_kv (p, len, key);
  char *end;
  if (v == NULL)
    return 0;
  errno = 0;
  unsigned long long n = strtoull (v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || v[0] == '-')
    runner_fail (r, "the job's limits are malformed");
  return n;
}

/* Take the 'L' frame.  */
static void
runner_take_limits (struct runner *r, const uint8_t *p, size_t len)
{
  struct runner_job *j = &r->job;
  if (memchr (p, '\0', len) != NULL)
    runner_fail (r, "the job's limits are malformed");
  j->cpu = runner_limit (r, p, len, JOBPROTO_LIMIT_CPU);
  j->as = runner_limit (r, p, len, JOBPROTO_LIMIT_AS);
  j->fsize = runner_limit (r, p, len, JOBPROTO_LIMIT_FSIZE);
  j->nproc = runner_limit (r, p, len, JOBPROTO_LIMIT_NPROC);
  j->nofile = runner_limit (r, p, len, JOBPROTO_LIMIT_NOFILE);
  j->deadline_ms = runner_limit (r, p, len, JOBPROTO_LIMIT_DEADLINE_MS);
  j->grace_ms = runner_limit (r, p, len, JOBPROTO_LIMIT_GRACE_MS);
  j->changes_max = runner_limit (r, p, len, JOBPROTO_LIMIT_CHANGES_MAX);
  j->stdio = runner_limit (r, p, len, JOBPROTO_LIMIT_STDIO) != 0;
  j->bind = runner_limit (r, p, len, JOBPROTO_LIMIT_BIND);
  if (j->grace_ms == 0)
    j->grace_ms = RUNNER_GRACE_MS;
  if (j->changes_max == 0)
    j->changes_max = RUNNER_CHANGES_MAX;
}

/* A payload as a string, refused when it holds a NUL.  */
static char *
runner_string (struct runner *r, const uint8_t *p, size_t len)
{
  if (memchr (p, '\0', len) != NULL)
    runner_fail (r, "the job holds a NUL byte where text goes");
  return xstrndup ((const char *) p, len);
}

/* Take an 'E' frame.  */
static void
runner_take_env (struct runner *r, const uint8_t *p, size_t len)
{
  char *e = runner_string (r, p, len);
  if (strchr (e, '=') == NULL || e[0] == '=')
    runner_fail (r, "the job's environment entry is not NAME=VALUE");
  r->job.envp = xrealloc (r->job.envp, (r->job.n_env + 2) * sizeof (char *));
  r->job.envp[r->job.n_env++] = e;
  r->job.envp[r->job.n_env] = NULL;
}

/* One frame of the job, in its order; 1 at 'G'.  */
static int
runner_job_frame (void *data, enum jobproto_type type, const uint8_t *p,
                  size_t len, struct cr_error **err)
{
  struct runner *r = data;
  if (type == JOB_VERSION && r->phase == RUNNER_WANT_VERSION)
    {
      if (len != strlen (JOBPROTO_VERSION)
          || memcmp (p, JOBPROTO_VERSION, len) != 0)
        runner_fail (r,
                     "the job speaks another protocol than " JOBPROTO_VERSION);
      r->phase = RUNNER_WANT_LIMITS;
    }
  else if (type == JOB_LIMITS && r->phase == RUNNER_WANT_LIMITS)
    {
      runner_take_limits (r, p, len);
      r->phase = RUNNER_WANT_ENV;
    }
  else if (type == JOB_ENV && r->phase == RUNNER_WANT_ENV)
    runner_take_env (r, p, len);
  else if (type == JOB_COMMAND && r->phase == RUNNER_WANT_ENV)
    {
      r->job.line = runner_string (r, p, len);
      r->phase = RUNNER_WANT_WORK;
    }
  else if (type == JOB_WORKSPACE && r->phase == RUNNER_WANT_WORK)
    return runner_unpack_feed (&r->unpack, p, len, err);
  else if (type == JOB_GO && r->phase == RUNNER_WANT_WORK)
    {
      r->phase = RUNNER_RUNNING;
      return 1;
    }
  else if (type == JOB_STOP)
    runner_fail (r, "stopped before the command started");
  else
    return cr_error_set (err, 0, "the job's '%c' frame is out of order",
                         (char) type);
  return 0;
}

/* Read the job from standard input up to 'G'.  */
static void
runner_read_job (struct runner *r)
{
  char chunk[65536];
  while (r->phase != RUNNER_RUNNING)
    {
      struct cr_error *err = NULL;
      ssize_t n = read (STDIN_FILENO, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        runner_dead_man (r);
      if (jobproto_reader_feed (&r->in, chunk, (size_t) n, runner_job_frame, r,
                                &err)
          < 0)
        runner_fail (r, err->msg);
    }
}

/* The command's process, after fork: its group, streams and descriptors,
 * then wait for the runner to have set its limits, then the shell.  */
static void __attribute__ ((noreturn))
runner_child (struct runner *r, int out, int sync)
{
  char go;
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  setpgid (0, 0);
  int devnull
      = r->job.stdio ? r->child_in : open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int err = r->job.stdio ? r->child_err : out;
  if (devnull < 0 || dup2 (devnull, STDIN_FILENO) < 0
      || dup2 (out, STDOUT_FILENO) < 0 || dup2 (err, STDERR_FILENO) < 0)
    _exit (127);
  /* Nothing of the runner's (the job's stream, the workspace handle)
   * reaches the command: every other descriptor goes.  */
  if (dup2 (sync, 3) < 0)
    _exit (127);
  if (close_range (4, ~0U, 0) < 0)
    for (int fd = 4; fd < 65536; fd++)
      close (fd);
  while (read (3, &go, 1) < 0 && errno == EINTR)
    ;
  close (3);
  if (chdir (r->ws) < 0)
    _exit (127);
  char *argv[] = { (char *) "sh", (char *) "-c", r->job.line, NULL };
  static char *empty[] = { NULL };
  execve ("/bin/sh", argv, r->job.envp ? r->job.envp : empty);
  _exit (127);
}

/* Set one rlimit of the command, soft and hard, when the job gives it.  */
static void
runner_set_rlimit (struct runner *r, int resource, uint64_t value,
                   const char *what)
{
  struct rlimit lim = { (rlim_t) value, (rlim_t) value };
  char why[128];
  if (value == 0)
    return;
  if (prlimit (r->child, (enum __rlimit_resource) resource, &lim, NULL) < 0)
    {
      snprintf (why, sizeof why, "setting the command's %s rlimit: %s", what,
                strerror (errno));
      runner_fail (r, why);
    }
}

static void runner_stdio_pipes (struct runner *r);
static void runner_stdio_forked (struct runner *r);

/* Start the command: fork, limits, 'R', then let it exec.  Returns the
 * read end of its output pipe.  */
static int
runner_start (struct runner *r)
{
  int out[2], sync[2];
  struct cr_error *err = NULL;
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (sync, O_CLOEXEC) < 0)
    runner_fail (r, "making the command's pipes");
  if (r->job.stdio)
    runner_stdio_pipes (r);
  r->child = fork ();
  if (r->child < 0)
    runner_fail (r, "starting the command");
  if (r->child == 0)
    runner_child (r, out[1], sync[0]);
  close (out[1]);
  close (sync[0]);
  runner_stdio_forked (r);
  setpgid (r->child, r->child);
  runner_set_rlimit (r, RLIMIT_CPU, r->job.cpu, JOBPROTO_LIMIT_CPU);
  runner_set_rlimit (r, RLIMIT_AS, r->job.as, JOBPROTO_LIMIT_AS);
  runner_set_rlimit (r, RLIMIT_FSIZE, r->job.fsize, JOBPROTO_LIMIT_FSIZE);
  runner_set_rlimit (r, RLIMIT_NPROC, r->job.nproc, JOBPROTO_LIMIT_NPROC);
  runner_set_rlimit (r, RLIMIT_NOFILE, r->job.nofile, JOBPROTO_LIMIT_NOFILE);
  size_t len;
  cleanup_free char *facts = runner_facts (r->ws, r->child, &len);
  if (jobproto_write (STDOUT_FILENO, ANS_READY, facts, len, &err) < 0)
    runner_dead_man (r);
  if (r->job.deadline_ms)
    r->deadline_at = runner_now () + (int64_t) r->job.deadline_ms;
  if (write (sync[1], "g", 1) != 1)
    runner_fail (r, "letting the command start");
  close (sync[1]);
  return out[0];
}

/* --- standard streams of the command's own (stdio=1, jobproto.h) ----- */

/* The command's stdin and stderr pipes, before the fork.  */
static void
runner_stdio_pipes (struct runner *r)
{
  int in[2], errp[2];
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    runner_fail (r, "making the command's standard stream pipes");
  r->child_in = in[0];
  r->in_fd = in[1];
  r->err_fd = errp[0];
  r->child_err = errp[1];
  /* The command may not read: writing its input never blocks the
   * runner, which keeps relaying its output meanwhile.  */
  fcntl (r->in_fd, F_SETFL, O_NONBLOCK);
}

/* After the fork: the child's ends are the child's.  */
static void
runner_stdio_forked (struct runner *r)
{
  if (r->child_in >= 0)
    close (r->child_in);
  if (r->child_err >= 0)
    close (r->child_err);
  r->child_in = r->child_err = -1;
}

/* 'I' or 'N' while the command runs.  */
static int
runner_stdio_frame (struct runner *r, enum jobproto_type type, const uint8_t *p,
                    size_t len, struct cr_error **err)
{
  (void) err;
  if (type == JOB_INPUT_END)
    r->input_end = true;
  else if (r->in_fd >= 0 && !r->input_end)
    buf_append (&r->input, p, len);
  return 0;
}

/* Close the command's stdin.  */
static void
runner_stdio_close_input (struct runner *r)
{
  if (r->in_fd >= 0)
    close (r->in_fd);
  r->in_fd = -1;
  r->input.len = 0;
}

/* Write what waits for the command's stdin, as much as it takes; close it
 * after 'N' once all is written, or when the command stopped reading.  */
static void
runner_stdio_flush (struct runner *r)
{
  while (r->in_fd >= 0 && r->input.len > 0)
    {
      ssize_t n = write (r->in_fd, r->input.data, r->input.len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        {
          runner_stdio_close_input (r);
          return;
        }
      memmove (r->input.data, r->input.data + n, r->input.len - (size_t) n);
      r->input.len -= (size_t) n;
    }
  if (r->input_end && r->input.len == 0)
    runner_stdio_close_input (r);
}

/* Relay what the command wrote to its stderr as 'Y'; false at the pipe's
 * end.  */
static bool
runner_stdio_relay_err (struct runner *r)
{
  char chunk[65536];
  struct cr_error *err = NULL;
  ssize_t n = read (r->err_fd, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR)
    return true;
  if (n <= 0)
    return false;
  if (jobproto_write (STDOUT_FILENO, ANS_ERROR_OUTPUT, chunk, (size_t) n, &err)
      < 0)
    runner_dead_man (r);
  return true;
}

/* A frame on the input while the command runs: only 'K' (and, with
 * stdio, 'I' and 'N').  */
static int
runner_run_frame (void *data, enum jobproto_type type, const uint8_t *p,
                  size_t len, struct cr_error **err)
{
  struct runner *r = data;
  char text[16];
  if (r->job.stdio && (type == JOB_INPUT || type == JOB_INPUT_END))
    return runner_stdio_frame (r, type, p, len, err);
  if (type != JOB_STOP || len == 0 || len >= sizeof text)
    return cr_error_set (err, 0, "a frame other than 'K' after 'G'");
  memcpy (text, p, len);
  text[len] = '\0';
  char *end;
  long signo = strtol (text, &end, 10);
  if (end == text || *end != '\0' || signo <= 0 || signo >= NSIG)
    return cr_error_set (err, 0, "'K' names no signal");
  if (!r->exited)
    {
      runner_kill_all (r, (int) signo);
      r->stopped = true;
      if (r->kill_at == 0)
        r->kill_at = runner_now () + (int64_t) r->job.grace_ms;
    }
  return 0;
}

/* Read crucible's stream while the command runs: 'K', or its end.  */
static void
runner_read_input (struct runner *r)
{
  char chunk[4096];
  struct cr_error *err = NULL;
  ssize_t n = read (STDIN_FILENO, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR)
    return;
  if (n <= 0
      || jobproto_reader_feed (&r->in, chunk, (size_t) n, runner_run_frame, r,
                               &err)
             < 0)
    {
      cr_error_free (err);
      runner_dead_man (r);
    }
}

/* Relay what the command wrote as 'O'; false at the pipe's end.  */
static bool
runner_relay (struct runner *r, int out)
{
  char chunk[65536];
  struct cr_error *err = NULL;
  ssize_t n = read (out, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR)
    return true;
  if (n <= 0)
    return false;
  if (jobproto_write (STDOUT_FILENO, ANS_OUTPUT, chunk, (size_t) n, &err) < 0)
    runner_dead_man (r);
  return true;
}

/* Reap whatever ended (as PID 1, orphans too); note the command's end.  */
static void
runner_reap (struct runner *r)
{
  int status;
  pid_t pid;
  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    if (pid == r->child)
      {
        r->status = status;
        r->exited = true;
      }
}

/* The deadline and the kill after a stop's grace, when they come.  */
static void
runner_timers (struct runner *r)
{
  int64_t now = runner_now ();
  if (r->deadline_at && now >= r->deadline_at && !r->exited)
    {
      r->deadline_at = 0;
      r->deadline_hit = true;
      runner_kill_all (r, SIGTERM);
      if (r->kill_at == 0)
        r->kill_at = now + (int64_t) r->job.grace_ms;
    }
  if (r->kill_at && now >= r->kill_at)
    {
      r->kill_at = 0;
      runner_kill_all (r, SIGKILL);
    }
}

/* How long poll may wait for the next timer, in ms (-1: none).  */
static int
runner_wait_ms (const struct runner *r, int64_t drain_end)
{
  int64_t next = 0, now = runner_now ();
  const int64_t t[] = { r->deadline_at, r->kill_at, drain_end };
  for (size_t i = 0; i < 3; i++)
    if (t[i] && (next == 0 || t[i] < next))
      next = t[i];
  if (next == 0)
    return -1;
  return next <= now ? 0 : (int) (next - now);
}

/* Run until the command ended and its output is relayed.  */
static void
runner_loop (struct runner *r, int out, int sigfd)
{
  int64_t drain_end = 0;
  while (out >= 0 || r->err_fd >= 0 || !r->exited)
    {
      /* Input the command has not read is bounded: crucible's stream is
       * not read past it (and 'K' waits behind it, as the end does).  */
      bool room = r->input.len < JOBPROTO_INPUT_MAX;
      struct pollfd p[5] = { { room ? STDIN_FILENO : -1, POLLIN, 0 },
                             { sigfd, POLLIN, 0 },
                             { out, POLLIN, 0 },
                             { r->err_fd, POLLIN, 0 },
                             { r->input.len > 0 ? r->in_fd : -1, POLLOUT, 0 } };
      int n = poll (p, 5, runner_wait_ms (r, drain_end));
      if (n < 0 && errno != EINTR)
        runner_fail (r, "waiting for the command");
      if (p[0].revents)
        runner_read_input (r);
      if (r->in_fd >= 0)
        runner_stdio_flush (r);
      if (r->err_fd >= 0 && p[3].revents && !runner_stdio_relay_err (r))
        close (r->err_fd), r->err_fd = -1;
      if (p[1].revents)
        {
          struct signalfd_siginfo si;
          if (read (sigfd, &si, sizeof si) < 0 && errno != EAGAIN)
            runner_fail (r, "reading the runner's signals");
          runner_reap (r);
        }
      if (out >= 0 && p[2].revents && !runner_relay (r, out))
        close (out), out = -1;
      runner_timers (r);
      if (r->exited && drain_end == 0)
        {
          /* What the command left behind goes with it.  */
          runner_kill_all (r, SIGKILL);
          drain_end = runner_now () + RUNNER_DRAIN_MS;
          runner_stdio_close_input (r);
        }
      if (out >= 0 && drain_end && runner_now () >= drain_end)
        close (out), out = -1;
      if (r->err_fd >= 0 && drain_end && runner_now () >= drain_end)
        close (r->err_fd), r->err_fd = -1;
    }
}

/* The 'X' payload.  */
static void
runner_send_exit (struct runner *r)
{
  char text[64];
  struct cr_error *err = NULL;
  int n
      = WIFSIGNALED (r->status)
            ? snprintf (text, sizeof text, "signal=%d", WTERMSIG (r->status))
            : snprintf (text, sizeof text, "exit=%d", WEXITSTATUS (r->status));
  if (r->deadline_hit)
    n += snprintf (text + n, sizeof text - (size_t) n, " deadline=1");
  else if (r->stopped)
    n += snprintf (text + n, sizeof text - (size_t) n, " stopped=1");
  if (jobproto_write (STDOUT_FILENO, ANS_EXIT, text, (size_t) n, &err) < 0)
    runner_dead_man (r);
}

/* As PID 1, wait until nothing else is left (what the kill reached
 * dies; a zombie is reaped), so that the walk reads a still workspace.  */
static void
runner_settle (struct runner *r)
{
  if (!r->pid1)
    return;
  runner_kill_all (r, SIGKILL);
  while (waitpid (-1, NULL, 0) > 0 || errno == EINTR)
    ;
}

/* Whether dir is an empty directory (the workspace must be).  */
static bool
runner_empty (int fd)
{
  int d = dup (fd);
  DIR *dir = d < 0 ? NULL : fdopendir (d);
  struct dirent *de;
  bool empty = dir != NULL;
  if (dir != NULL)
    rewinddir (dir);
  while (dir != NULL && (de = readdir (dir)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      empty = false;
  if (dir != NULL)
    closedir (dir);
  return empty;
}

/* The workspace: RUNNER_WORKSPACE, or for tests (never as a container's
 * PID 1, where it could only point the runner elsewhere in its own
 * container) the empty directory given with --workspace.  */
static const char *
runner_args (struct runner *r, int argc, char **argv)
{
  if (argc == 1)
    return RUNNER_WORKSPACE;
  if (argc == 3 && strcmp (argv[1], "--workspace") == 0 && !r->pid1)
    return argv[2];
  runner_fail (r, "usage: crucible-job-runner (with --workspace DIR only "
                  "outside a container, for tests)");
}

int
main (int argc, char **argv)
{
  struct runner r = { .pid1 = getpid () == 1,
                      .in_fd = -1,
                      .err_fd = -1,
                      .child_in = -1,
                      .child_err = -1 };
  struct cr_error *err = NULL;
  sigset_t chld;

  /* The command runs as the runner's own uid: dumpable, the runner would
   * be its to ptrace, to write through /proc/1/mem, and to open through
   * /proc/1/fd (its answer stream, where forged frames would go, and the
   * job's).  Undumpable, none of that is allowed without CAP_SYS_PTRACE;
   * the command's exec makes the command dumpable again, for its own
   * debuggers.  */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    runner_fail (&r, "making the runner undumpable");

  /* A write to a crucible that went away fails with EPIPE, which is the
   * dead-man switch, instead of killing the runner before it kills the
   * command.  */
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, NULL);
  int sigfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  r.ws = runner_args (&r, argc, argv);
  r.wsfd = open (r.ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sigfd < 0 || r.wsfd < 0 || !runner_empty (r.wsfd))
    runner_fail (&r, "the workspace is not an empty directory");
  jobproto_reader_init (&r.in);
  runner_unpack_init (&r.unpack, r.wsfd);
  runner_read_job (&r);
  struct runner_baseline base;
  if (runner_unpack_finish (&r.unpack, &err) < 0
      || runner_baseline_take (r.wsfd, &base, &err) < 0)
    runner_fail (&r, err->msg);
  /* The kernel's surface, whatever the engine's profile is: crucible's
   * own refusals on the runner and on all it forks (runner_filter.c).  */
  runner_filter_state
      = runner_filter_load (r.job.bind != 0) == 0 ? "crucible" : "none";
  int out = runner_start (&r);
  /* 'K' frames that came with 'G'.  */
  if (jobproto_reader_feed (&r.in, "", 0, runner_run_frame, &r, &err) < 0)
    runner_dead_man (&r);
  runner_loop (&r, out, sigfd);
  runner_send_exit (&r);
  if (r.stopped || r.deadline_hit)
    return 0;
  runner_settle (&r);
  if (runner_changes_send (r.wsfd, &base, r.job.changes_max, STDOUT_FILENO,
                           &err)
      < 0)
    runner_fail (&r, err->msg);
  return 0;
}
