/* sandbox_run: run one command through the bwrap backend, for the shell
 * tests, before crucible run is wired to it.
 *
 *   sandbox_run [--probe] [--claims] [--cwd DIR] [--env NAME=VALUE]...
 *               [--require FEATURE]... [--cpu-seconds N] [--open-files N]
 *               [--processes N] [--memory-bytes N] [--policy-processes N]
 *               [--policy-memory-bytes N] [--unreadable PATTERN]...
 *               [--allow-socket PATH]... [--domain NAME]...
 *               [--allow-local-binding] [--timeout SECONDS] [--stdio]
 *               -- COMMAND-LINE
 *
 * The command's output goes to stdout as it comes.  On stderr, at the end:
 * "sandbox_run: exit N" or "signal N" or "failed stage=S errno=E", then
 * "sandbox_run: usage known=0|1".  Exits with the command's status, 128+N
 * for a signal, 125 when it could not be run.  --probe prints the probe;
 * --claims the capability matrix.  The environment given is PATH, LANG=C
 * and the --env variables; HOME and TMPDIR are the backend's.
 *
 * With --stdio the command has standard streams of its own
 * (sandbox_command.stdio): its stdin is this helper's stdin, its stdout
 * goes to stdout and its stderr, through a pipe of its own, to stderr, as
 * they come.  Without it its stdin is /dev/null and its stdout and
 * stderr share the one pipe to stdout.
 *
 * With --domain the command gets a net channel: every connection it makes
 * to 127.0.0.1:3128 or [::1]:3128 arrives here (sandbox_network_take) and
 * is answered "crucible-host NNN" (its number from 1) and closed, standing
 * in for the proxy; at the end stderr says "sandbox_run: connections N".
 * A record the channel refuses is "sandbox_run: net: MESSAGE".  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/backend.h"
#include "sandbox/bwrap.h"
#include "sandbox/netchan.h"

#define RUN_MAX_ENV 32
#define RUN_MAX_LIST 80

struct run_args
{
  bool probe, claims, stdio;
  const char *cwd;
  char *env[RUN_MAX_ENV + 3];
  int n_env;
  struct sandbox_policy policy;
  struct bwrap_options opt;
  const char *unreadable[RUN_MAX_LIST];
  const char *sockets[RUN_MAX_LIST];
  const char *domains[RUN_MAX_LIST];
  double timeout;
  const char *line;
};

static int
run_usage (const char *why)
{
  fprintf (stderr, "sandbox_run: %s\n", why);
  return 125;
}

/* The feature named name, or -1.  */
static int
run_feature (const char *name)
{
  for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
    if (strcmp (sandbox_feature_name ((enum sandbox_feature) f), name) == 0)
      return f;
  return -1;
}

static int
run_parse (int argc, char **argv, struct run_args *a)
{
  int i;

  a->env[a->n_env++] = (char *) "PATH=/usr/local/bin:/usr/bin:/bin";
  a->env[a->n_env++] = (char *) "LANG=C";
  for (i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    {
      const char *o = argv[i];
      const char *v = i + 1 < argc ? argv[i + 1] : NULL;
      if (strcmp (o, "--probe") == 0)
        a->probe = true;
      else if (strcmp (o, "--claims") == 0)
        a->claims = true;
      else if (strcmp (o, "--stdio") == 0)
        a->stdio = true;
      else if (v == NULL)
        return run_usage ("an option needs a value");
      else if (strcmp (o, "--cwd") == 0)
        a->cwd = argv[++i];
      else if (strcmp (o, "--env") == 0 && a->n_env < RUN_MAX_ENV)
        a->env[a->n_env++] = argv[++i];
      else if (strcmp (o, "--require") == 0 && run_feature (v) >= 0)
        a->policy.requires[run_feature (argv[++i])] = true;
      else if (strcmp (o, "--cpu-seconds") == 0)
        a->opt.cpu_seconds = strtoul (argv[++i], NULL, 10);
      else if (strcmp (o, "--open-files") == 0)
        a->opt.open_files = strtoul (argv[++i], NULL, 10);
      else if (strcmp (o, "--processes") == 0)
        a->opt.processes = strtoul (argv[++i], NULL, 10);
      else if (strcmp (o, "--memory-bytes") == 0)
        a->opt.memory_bytes = strtoull (argv[++i], NULL, 10);
      else if (strcmp (o, "--policy-processes") == 0)
        a->policy.processes = strtoull (argv[++i], NULL, 10);
      else if (strcmp (o, "--policy-memory-bytes") == 0)
        a->policy.memory_bytes = strtoull (argv[++i], NULL, 10);
      else if (strcmp (o, "--unreadable") == 0
               && a->opt.n_unreadable < RUN_MAX_LIST)
        a->unreadable[a->opt.n_unreadable++] = argv[++i];
      else if (strcmp (o, "--allow-socket") == 0
               && a->opt.n_unix_sockets < RUN_MAX_LIST)
        a->sockets[a->opt.n_unix_sockets++] = argv[++i];
      else if (strcmp (o, "--domain") == 0
               && a->policy.n_domains < RUN_MAX_LIST)
        a->domains[a->policy.n_domains++] = argv[++i];
      else if (strcmp (o, "--allow-local-binding") == 0)
        a->policy.allow_local_binding = true;
      else if (strcmp (o, "--timeout") == 0)
        a->timeout = strtod (argv[++i], NULL);
      else
        return run_usage ("unknown option");
    }
  a->opt.unreadable = a->unreadable;
  a->opt.unix_sockets = a->sockets;
  a->policy.domains = a->domains;
  if (i + 1 < argc)
    a->line = argv[i + 1];
  return a->probe || a->claims || a->line != NULL
             ? 0
             : run_usage ("no command after --");
}

static double
run_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Copy what the pipe holds to to; false at its end.  *got tells
 * whether anything came.  */
static bool
run_copy_to (int fd, FILE *to, bool *got)
{
  char chunk[65536];
  ssize_t n = read (fd, chunk, sizeof chunk);
  *got = n > 0;
  if (n < 0)
    return errno == EAGAIN || errno == EINTR;
  if (n == 0)
    return false;
  fwrite (chunk, 1, (size_t) n, to);
  fflush (to);
  return true;
}

/* Copy what the output pipe holds to stdout (run_copy_to).  */
static bool
run_copy (int fd, bool *got)
{
  return run_copy_to (fd, stdout, got);
}

/* Take what the net channel holds: answer each connection with its
 * number and close it.  */
static void
run_net (struct sandbox_session *s, unsigned *connections)
{
  struct cr_error *err = NULL;
  int fd, r;

  while ((r = sandbox_network_take (s, &fd, &err)) != NETCHAN_NONE)
    {
      if (r < 0)
        {
          fprintf (stderr, "sandbox_run: net: %s\n", err->msg);
          cr_error_clear (&err);
          continue;
        }
      if (r == NETCHAN_ENDED)
        return;
      char line[64];
      int n = snprintf (line, sizeof line, "crucible-host %03u\n",
                        ++*connections);
      struct pollfd w = { .fd = fd, .events = POLLOUT };
      poll (&w, 1, 1000);
      if (write (fd, line, (size_t) n) != n)
        fprintf (stderr, "sandbox_run: net: answering: %s\n", strerror (errno));
      close (fd);
    }
}

/* Drive one started session to DONE, copying out to stdout and, when
 * not -1, errp (the workload's own stderr) to stderr.  Returns the exit
 * status to use.  */
static int
run_drive (struct sandbox_session *s, int out, int errp, double timeout)
{
  int status = -1, rc = 125;
  bool out_open = true, err_open = errp >= 0, stopped = false;
  double deadline = timeout > 0 ? run_now () + timeout : 0;
  struct cr_error *err = NULL;
  unsigned connections = 0;

  for (;;)
    {
      struct pollfd p[4] = { { .fd = sandbox_status_fd (s), .events = POLLIN },
                             { .fd = out_open ? out : -1, .events = POLLIN },
                             { .fd = sandbox_network_fd (s), .events = POLLIN },
                             { .fd = err_open ? errp : -1, .events = POLLIN } };
      poll (p, 4, 50);
      bool got;
      if (p[2].revents)
        run_net (s, &connections);
      if (p[1].revents)
        out_open = run_copy (out, &got);
      if (p[3].revents)
        err_open = run_copy_to (errp, stderr, &got);
      if (deadline > 0 && !stopped && run_now () > deadline)
        {
          stopped = true;
          sandbox_stop (s, SIGKILL, &err);
          fprintf (stderr, "sandbox_run: timed out\n");
        }
      struct sandbox_event ev;
      if (sandbox_next_event (s, &ev, &err) < 0)
        {
          fprintf (stderr, "sandbox_run: %s\n", err->msg);
          return 125;
        }
      if (ev.kind == SANDBOX_EVENT_EXITED)
        {
          status = ev.wait_status;
          if (WIFEXITED (status))
            rc = WEXITSTATUS (status);
          else if (WIFSIGNALED (status))
            rc = 128 + WTERMSIG (status);
        }
      else if (ev.kind == SANDBOX_EVENT_FAILED)
        {
          const char *said = ev.message;
          /* As the broker numbers its stages: 3 exec, 1 setup.  */
          fprintf (stderr, "sandbox_run: failed stage=%d errno=%d%s%s\n",
                   ev.failure == SANDBOX_FAILED_EXEC ? 3 : 1, ev.error,
                   said ? ": " : "", said ? said : "");
        }
      else if (ev.kind == SANDBOX_EVENT_DONE)
        break;
    }
  /* Every writer is gone once DONE has come: the rest is in the pipe.  */
  for (bool got = true; out_open && got;)
    out_open = run_copy (out, &got);
  for (bool got = true; err_open && got;)
    err_open = run_copy_to (errp, stderr, &got);
  if (sandbox_network_fd (s) >= 0)
    fprintf (stderr, "sandbox_run: connections %u\n", connections);
  if (status >= 0 && WIFEXITED (status))
    fprintf (stderr, "sandbox_run: exit %d\n", WEXITSTATUS (status));
  else if (status >= 0 && WIFSIGNALED (status))
    fprintf (stderr, "sandbox_run: signal %d\n", WTERMSIG (status));
  return rc;
}

/* Print the probe and the claims, as asked.  */
static int
run_report (struct sandbox_backend *b, const struct run_args *a)
{
  struct sandbox_probe p = { 0 };
  struct cr_error *err = NULL;

  if (a->claims)
    {
      struct sandbox_claims c;
      sandbox_claims (b, &c);
      for (int f = 0; f < SANDBOX_FEATURE_COUNT; f++)
        printf ("%-21s %s\n", sandbox_feature_name ((enum sandbox_feature) f),
                sandbox_support_name (c.support[f]));
    }
  if (a->probe)
    {
      sandbox_probe (b, &p, &err);
      printf ("usable %s\nversion %s\nreason %s\n", p.usable ? "yes" : "no",
              p.version ? p.version : "-", p.reason ? p.reason : "-");
      sandbox_probe_clear (&p);
      cr_error_free (err);
      return p.usable ? 0 : 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  struct run_args a = { 0 };
  struct cr_error *err = NULL;
  struct sandbox_session *s = NULL;
  struct sandbox_usage usage = { 0 };
  char cwd[4096];
  int fds[2], errp[2] = { -1, -1 };

  signal (SIGPIPE, SIG_IGN);
  if (run_parse (argc, argv, &a) != 0)
    return 125;
  struct sandbox_backend *b = bwrap_backend_new (&a.opt);
  if (a.probe || a.claims)
    {
      int rc = run_report (b, &a);
      sandbox_backend_free (b);
      return rc;
    }
  if (a.cwd == NULL)
    a.cwd = getcwd (cwd, sizeof cwd);
  a.policy.enabled = true;
  if (sandbox_prepare (b, &a.policy, &s, &err) < 0)
    {
      fprintf (stderr, "sandbox_run: %s\n", err->msg);
      cr_error_free (err);
      sandbox_backend_free (b);
      return 125;
    }
  if (pipe2 (fds, O_CLOEXEC) < 0 || fcntl (fds[0], F_SETFL, O_NONBLOCK) < 0)
    return 125;
  if (a.stdio
      && (pipe2 (errp, O_CLOEXEC) < 0
          || fcntl (errp[0], F_SETFL, O_NONBLOCK) < 0))
    return 125;
  struct sandbox_command cmd = { .shell = "/bin/sh",
                                 .line = a.line,
                                 .cwd = a.cwd,
                                 .envp = a.env,
                                 .output_fd = fds[1],
                                 .stdio = a.stdio,
                                 .input_fd = a.stdio ? 0 : -1,
                                 .error_fd = errp[1] };
  if (sandbox_start (s, &cmd, &err) < 0)
    {
      fprintf (stderr, "sandbox_run: %s\n", err->msg);
      cr_error_clear (&err);
      close (fds[0]);
      close (fds[1]);
      sandbox_dispose (s, NULL, &err);
      cr_error_free (err);
      sandbox_backend_free (b);
      return 125;
    }
  close (fds[1]);
  if (errp[1] >= 0)
    close (errp[1]);
  int rc = run_drive (s, fds[0], errp[0], a.timeout);
  if (sandbox_dispose (s, &usage, &err) < 0)
    {
      fprintf (stderr, "sandbox_run: %s\n", err->msg);
      return 125;
    }
  fprintf (stderr, "sandbox_run: usage known=%d\n", usage.known ? 1 : 0);
  sandbox_backend_free (b);
  return rc;
}
